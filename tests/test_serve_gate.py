"""Questions during a document job read one whole graph (issue 38: "they never see a half-written document").

A job's change is written only after its last model call and only inside the gate's writing side
(``index.pipeline.sync_corpus``); a question holds the reading side for its whole run (``ServeState.query``,
the path every HTTP, OpenAI-compatible and MCP question takes). The first tests drive the gate with threads;
the last runs a real change (real Neo4j, the fake model through the real openai client) with questions asked
while it extracts and while it writes."""

from __future__ import annotations

import threading
import time
from contextlib import contextmanager

import pytest

from driftgraph.api import Engine
from driftgraph.config import ServeConfig
from driftgraph.deadline import Deadline
from driftgraph.errors import QuestionStopped
from driftgraph.query.requests import LocalQuery
from driftgraph.serve.gate import GraphGate
from driftgraph.serve.jobs import Jobs
from driftgraph.serve.runner import Runner
from driftgraph.serve.state import ServeState
from tests.test_documents_api import FERRY, _snapshot, cfg, corpus  # noqa: F401 (fixtures)

SETTLE_S = 0.3  # long enough for a thread that is not blocked to get through a gate


def _in_thread(fn) -> tuple[threading.Thread, list]:
    out: list = []
    t = threading.Thread(target=lambda: out.append(fn()), daemon=True)
    t.start()
    return t, out


def test_a_write_waits_for_running_questions_and_questions_wait_for_a_write():
    gate = GraphGate()
    reader_in, reader_go = threading.Event(), threading.Event()

    def question():
        with gate.reading():
            reader_in.set()
            reader_go.wait(5)
        return "read"

    q, _ = _in_thread(question)
    assert reader_in.wait(5)

    def write():
        with gate.writing():
            return time.monotonic()

    w, wrote = _in_thread(write)
    time.sleep(SETTLE_S)
    assert not wrote  # the running question is not interrupted

    def late_question():
        with gate.reading():
            return time.monotonic()

    late, late_out = _in_thread(late_question)
    time.sleep(SETTLE_S)
    assert not late_out  # a writer is waiting: a new question does not jump ahead of it
    reader_go.set()
    for t in (q, w, late):
        t.join(5)
    assert wrote and late_out and late_out[0] >= wrote[0]


def test_a_question_waiting_for_a_write_stops_at_its_own_deadline():
    gate = GraphGate()
    with gate.writing():
        started = time.monotonic()
        with pytest.raises(QuestionStopped), gate.reading(Deadline(0.3)):
            pass
        assert time.monotonic() - started < 5


def test_the_server_s_questions_and_jobs_share_one_gate(tmp_path):
    queue = Jobs(None, tmp_path)  # type: ignore[arg-type]  # no job runs: the engine is never reached
    state = ServeState(engine=None, runner=Runner(ServeConfig()), cfg=ServeConfig(), jobs=queue)  # type: ignore[arg-type]
    assert state.gate is queue.gate


@pytest.mark.e2e
def test_questions_during_a_document_job_see_the_graph_before_or_after_never_between(cfg, corpus):  # noqa: F811
    question = LocalQuery(question="Who runs the Kelmouth Ferry to Selsey Point?", context_only=True)
    with Engine(cfg) as eng:
        eng.index(corpus)
        state = ServeState(engine=eng, runner=Runner(ServeConfig()), cfg=ServeConfig())
        before = _snapshot(eng.store)
        seen: dict[str, object] = {}

        def ask() -> str:
            return state.query(question, "test").context.text

        def heard(stage: str, done: int, total: int | None) -> None:
            if stage == "extract" and "during_extract" not in seen:
                # the job is asking the model: a question runs at once and reads the graph as it was
                t, out = _in_thread(ask)
                t.join(60)
                seen["during_extract"] = out[0] if out else None
            if stage == "write" and "during_write" not in seen:
                seen["during_write"] = _in_thread(ask)
                time.sleep(SETTLE_S)
                seen["waited"] = not seen["during_write"][1]  # type: ignore[index]

        @contextmanager
        def writing():
            with state.gate.writing():
                seen["at_gate"] = _snapshot(eng.store)  # nothing of the change is written before the gate
                yield
                seen["in_gate_end"] = _snapshot(eng.store)

        change = eng.documents.add(text=FERRY, title="ferry.txt", on_stage=heard, writing=writing)
        thread, out = seen["during_write"]  # type: ignore[misc]
        thread.join(60)
        after = _snapshot(eng.store)

    assert change.documents and after != before
    assert seen["at_gate"] == before and seen["in_gate_end"] == after
    assert seen["during_extract"] is not None and "Ruth Amadi" not in seen["during_extract"]
    assert seen["waited"] is True  # asked while the change was written: it waited for the whole change
    assert out and "Ruth Amadi" in out[0]
