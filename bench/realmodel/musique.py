"""``python -m bench real-model-musique``: the MuSiQue dev passages indexed by a real small model (issue 37, item 7).

The triples-built MuSiQue index (``../shared/data/musique``) was written from GPT-3.5's published extraction;
this builds the same kind of index with driftgraph's own pipeline and the pinned 1.5B model, so the recall
lost from one index to the other can be measured and shrunk.

- ``corpus``: the passages to index, chosen once and committed (``musique_corpus.json``): every dev question's
  gold passages, plus its two best non-gold passages by the offline embedder's cosine to the question (ties
  by id) — hard distractors, the ones a retriever would confuse with the evidence.
- ``build``: writes each passage as one document (its text unit text, so a passage is one chunk and evidence
  recall can find it verbatim), starts the model server and runs ``index`` over them. Every chat call goes
  through the call cache in ``cache/musique-<model>/`` (committed): a build stopped by ``--hours``, a kill or
  the end of a session resumes where it stopped and never pays for a call twice. The build is hours of CPU on
  this machine's two cores: run it alone (llama.cpp slows more than tenfold under contention).
- ``export``: once a build is complete, the index as GraphRAG parquet under ``results/musique_real_<model>/``,
  with the dev questions' gold passages numbered as that index numbers them (``musique_subset.questions_by_text``;
  also the step ``questions --index DIR``).
- ``subset --out DIR``: the triples-built index cut to the same passages (``musique_subset.py``), the fair
  partner of the real-model index: the same questions against the same distractors.
- ``recall --index DIR --cut DIR``: evidence recall of driftgraph local and basic, vector-only chunks and
  GraphRAG 3.2.0's local search on both, and the loss from one to the other per question
  (``musique_recall.py``; raw file ``results/raw/real_model_musique_recall.json``).

The settings beyond the README's "Local model servers" section are in ``SETTINGS`` and recorded in the raw
file: no gleaning round (it doubles the calls; the triples-built index had none either), one call at a time
(the server answers one at a time, and its prompt cache reuses the shared prefix of consecutive calls), and no
report for a community of fewer than 8 entities: 128 of the 164 communities of the extracted graph hold fewer,
and their reports would mostly restate a few descriptions at 35-60 s each; with the rule the build makes 36
report calls (the extraction took about two and a half hours). ``subset`` applies the same rule to the triples cut.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench import paths
from bench.realmodel import musique_recall, musique_subset, server, weights
from bench.realmodel.run import config_extra
from bench.run import data, machine, neo4j

HERE = Path(__file__).resolve().parent
CORPUS = HERE / "musique_corpus.json"
DISTRACTORS = 2
_STOP_ALSO: list[int] = []  # processes that are not our children but live only for the build
SETTINGS: dict[str, Any] = {
    "index": {"max_gleanings": 0, "concurrency": 1, "report_min_size": 8},
    "llm": {"timeout_s": 1800},
}


def cache_dir(model: str) -> Path:
    return HERE / "cache" / f"musique-{model}"


def choose_corpus(log=print) -> dict[str, Any]:
    """Gold passages of every dev question plus its ``DISTRACTORS`` most similar non-gold passages."""
    import numpy as np

    from bench.run.dg.common import CachedEmbedder, config

    questions = data.questions()
    units = data.text_units()
    ids = sorted(units)
    emb = CachedEmbedder(config("bolt://127.0.0.1:1", "unused", None).embeddings)
    log(f"embedding {len(ids)} passages and {len(questions)} questions (offline embedder, shared cache)")
    uvec = np.asarray(emb.embed([units[i] for i in ids]))
    qvec = np.asarray(emb.embed([q.question for q in questions]))
    per_question: dict[str, dict[str, list[str]]] = {}
    for q, v in zip(questions, qvec, strict=True):
        scores = uvec @ v
        order = sorted(range(len(ids)), key=lambda i: (-float(scores[i]), ids[i]))
        distract = [ids[i] for i in order if ids[i] not in q.gold][:DISTRACTORS]
        per_question[q.id] = {"gold": list(q.gold), "distractors": distract}
    chosen = sorted({u for row in per_question.values() for u in (*row["gold"], *row["distractors"])})
    return {
        "source": "../shared/data/musique (text_units.parquet), questions_dev.jsonl",
        "rule": f"gold passages + the {DISTRACTORS} best non-gold passages by offline-embedder cosine (ties by id)",
        "passages": chosen,
        "questions": per_question,
    }


def write_documents(corpus: dict[str, Any], folder: Path) -> int:
    """One ``<text unit id>.txt`` per passage, holding the text unit's text unchanged."""
    units = data.text_units()
    missing = [u for u in corpus["passages"] if u not in units]
    if missing:
        raise SystemExit(
            f"real-model-musique: {len(missing)} corpus passages are not in the MuSiQue data, e.g. {missing[0]}"
        )
    folder.mkdir(parents=True, exist_ok=True)
    for u in corpus["passages"]:
        (folder / f"{u}.txt").write_text(units[u], encoding="utf-8")
    return len(corpus["passages"])


def build(a: argparse.Namespace, log) -> dict[str, Any]:
    from bench.run.dg import common

    corpus = json.loads(CORPUS.read_text(encoding="utf-8"))
    cache = paths.CACHE / "realmodel"
    model = weights.ensure(weights.MODELS[a.model], cache, log)
    python = server.ensure_venv(cache / "venv", log)
    calls_dir = cache_dir(a.model)
    before = _cached_calls(calls_dir)
    log(f"{len(corpus['passages'])} passages; {before} calls already cached in {calls_dir}")
    with tempfile.TemporaryDirectory() as tmp:
        docs = Path(tmp) / "docs"
        write_documents(corpus, docs)
        with server.running(python, model, threads=a.threads, ctx=a.ctx, log_dir=cache / "logs") as srv:
            extra = config_extra(srv.base_url, f"qwen2.5-coder-{a.model}-instruct-q4_k_m", a.ctx, calls_dir)
            for section, values in SETTINGS.items():
                extra.setdefault(section, {}).update(values)
            with neo4j.database(a.neo4j_uri, a.neo4j_port, "2g", "1g", log) as db:
                if db.pid:
                    _STOP_ALSO.append(db.pid)
                eng = common.engine(db.uri, db.password, cached=False, extra=extra)
                t0 = time.perf_counter()
                try:
                    summary = eng.index(docs, reset=True, progress=True).to_dict()
                    if a.export:
                        eng.export_graphrag(a.export)
                        musique_subset.questions_by_text(a.export, data.MUSIQUE, corpus)
                finally:
                    eng.close()
    return {
        "machine": machine.describe(),
        "command": "python -m bench real-model-musique build " + " ".join(a.argv),
        "model": {"weights": a.model, "sha256": weights.MODELS[a.model].sha256, "threads": a.threads, "ctx": a.ctx},
        "settings": SETTINGS,
        "passages": len(corpus["passages"]),
        "calls_cached_before": before,
        "calls_cached_after": _cached_calls(calls_dir),
        "seconds": round(time.perf_counter() - t0, 1),
        "summary": summary,
    }


def _stop_now(log, why: str, code: int) -> None:
    """Stop at once: unwinding would not, since the pipeline's call pool waits for the call in flight and then
    runs every queued one. The model server (our child) gets SIGKILL: on SIGTERM it waits for the generation in
    flight, which can take many minutes, and it holds nothing to save. The Neo4j launcher gets SIGTERM. Every
    call already answered is in the cache (each written atomically), so a re-run resumes from there."""
    log(f"{why}: stopping the model server and Neo4j; re-run to resume from the call cache")
    subprocess.run(["pkill", "-KILL", "-P", str(os.getpid())], check=False)
    for pid in _STOP_ALSO:  # the launcher's JVM runs in a session of its own
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGTERM)
    os._exit(code)


def _recall(a: argparse.Namespace, ap: argparse.ArgumentParser, log) -> int:
    if a.index is None or a.cut is None:
        ap.error("recall needs --index DIR (the exported real-model index) and --cut DIR (from `subset`)")
    budgets = tuple(int(b) for b in a.budgets.split(",") if b)
    with neo4j.database(a.neo4j_uri, a.neo4j_port, "2g", "1g", log) as db:
        payload = musique_recall.run(a.index, a.cut, db.uri, db.password, budgets, log)
    payload = {
        "machine": machine.describe(),
        "command": "python -m bench real-model-musique " + " ".join(a.argv),
        **payload,
    }
    out = paths.RAW / "real_model_musique_recall.json"
    out.write_text(json.dumps(payload, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(musique_recall.table(payload))
    log(f"wrote {out}")
    return 0


def _cached_calls(folder: Path) -> int:
    return sum(1 for _ in folder.glob("chat/*/*.json")) if folder.exists() else 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench real-model-musique", description=__doc__.splitlines()[0])
    ap.add_argument(
        "step",
        choices=("corpus", "build", "subset", "questions", "recall"),
        help="corpus: choose the passages; build: index them; subset: the triples index cut to them (--out); "
        "questions: an exported index's dev questions (--index); recall: every retriever on the exported index "
        "(--index) beside the cut (--cut)",
    )
    ap.add_argument("--out", type=Path, default=None, help="subset: where to write the cut triples index")
    ap.add_argument("--index", type=Path, default=None, help="questions, recall: an exported real-model index")
    ap.add_argument("--cut", type=Path, default=None, help="recall: the triples index cut by `subset`")
    ap.add_argument(
        "--budgets",
        default=",".join(map(str, musique_recall.BUDGETS)),
        help="recall: context budgets in tokens (default: %(default)s)",
    )
    ap.add_argument("--model", choices=sorted(weights.MODELS), default="1.5b", help="pinned weights (default 1.5b)")
    ap.add_argument("--threads", type=int, default=2, help="llama.cpp threads (default: 2)")
    ap.add_argument("--ctx", type=int, default=8192, help="the server's context size")
    ap.add_argument("--hours", type=float, default=None, help="stop after this long; a re-run resumes from the cache")
    ap.add_argument("--export", type=Path, default=None, help="after a complete build, write GraphRAG parquet here")
    ap.add_argument("--neo4j-uri", default=None, help="use this Neo4j (password NEO4J_PASSWORD); REPLACES its data")
    ap.add_argument("--neo4j-port", type=int, default=neo4j.DEFAULT_PORT, help="port of the bench's launcher")
    a = ap.parse_args(argv)
    a.argv = list(sys.argv[2:] if argv is None else argv)
    log = lambda msg: print(msg, file=sys.stderr, flush=True)  # noqa: E731
    if a.step == "corpus":
        if CORPUS.exists():
            raise SystemExit(f"real-model-musique: {CORPUS} exists; the corpus is chosen once (delete it to re-choose)")
        corpus = choose_corpus(log)
        CORPUS.write_text(json.dumps(corpus, indent=1) + "\n", encoding="utf-8")
        log(f"wrote {CORPUS}: {len(corpus['passages'])} passages")
        return 0
    if a.step in ("subset", "questions"):
        corpus = json.loads(CORPUS.read_text(encoding="utf-8"))
        if a.step == "subset":
            if a.out is None:
                ap.error("subset needs --out DIR")
            min_size = SETTINGS["index"]["report_min_size"]
            counts = musique_subset.subset(data.MUSIQUE, corpus, a.out, report_min_size=min_size)
            log(f"wrote {a.out}: " + ", ".join(f"{n} {k}" for k, n in counts.items()))
        else:
            if a.index is None:
                ap.error("questions needs --index DIR (an exported real-model index)")
            n = musique_subset.questions_by_text(a.index, data.MUSIQUE, corpus)
            log(f"wrote {a.index / 'questions_dev.jsonl'}: {n} questions")
        return 0
    if a.step == "recall":
        return _recall(a, ap, log)
    signal.signal(signal.SIGTERM, lambda signum, frame: _stop_now(log, "stopped by SIGTERM", 128 + signum))
    if a.hours:
        signal.signal(signal.SIGALRM, lambda signum, frame: _stop_now(log, f"stopped after {a.hours} h", 2))
        signal.alarm(max(1, int(a.hours * 3600)))
    payload = build(a, log)
    out = paths.RAW / f"real_model_musique_{a.model}.json"
    out.write_text(json.dumps(payload, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    log(f"wrote {out}")
    return 0
