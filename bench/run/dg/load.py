"""Load: ``driftgraph serve`` as a real process, N concurrent clients for D seconds, fake OpenAI model.

``python -m bench reliability load [--duration 60] [--clients 32]`` (part of ``python -m bench reliability``).
The server runs on operation-dulce with ``DRIFTGRAPH_API_KEY`` set and the default serve settings (question
gate ``serve.max_concurrency`` 8, page pool ``serve.max_page_concurrency`` 4, ``serve.max_body_bytes`` 1 MB);
the model is ``tests/support/fake_openai.py`` in this process, answering at once. Each client sends one request
of every kind, then loops without think time (a 429 is counted and the client moves on, Retry-After is not
waited out) over a seeded mix:
questions in every mode, retrieval pages (``/retrievals/{id}``, ``/v1/retrievals/{id}``) of questions
answered earlier, ``/readyz``, and the refusals: a body over ``serve.max_body_bytes`` (413), a body that is
not JSON (400), a wrong key (401), a foreign ``Host`` (421).

Reported: requests per status, per route template and overall; p50 / p99 latency per route (all answers, and
200s alone); and whether anything was lost: every answered question's retrieval read back from Neo4j (with
its mode), no 5xx, no transport error, every request's status one its kind expects, the server's own
``/metrics`` counting what the clients saw, no traceback in the server's log, a clean SIGTERM at the end.
"""

from __future__ import annotations

import json
import os
import platform
import random
import re
import signal
import threading
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.report.load import section

KEY = "sk-driftgraph-load-5c1e"
MODES = ("local", "basic", "global", "drift")
QUESTIONS = (
    "Who leads the team at Dulce base?",
    "What is Operation: Dulce?",
    "What did Alex Mercer find?",
    "Which organisations are involved at Dulce?",
    "What is the role of Taylor Cruz?",
    "What happened in the mainframe room?",
)
# what the DRIFT and global fakes of tests/test_faults.py expect: a small tree, level 1
DRIFT = {"max_depth": 1, "primer_folds": 2, "follow_ups_per_epoch": 2, "min_score_gain": 0}
FOREIGN_HOST = "attacker.example"


@dataclass(frozen=True)
class Kind:
    """One kind of request in the mix: its route template, method, weight and the statuses it may get."""

    name: str
    method: str
    route: str
    weight: int
    expected: frozenset[int]


BUSY = frozenset({200, 429})  # a question or page may be turned away by its gate; that is not a loss
KINDS = (
    *(Kind(f"question {m}", "POST", f"/v1/query/{m}", 3, BUSY) for m in MODES),
    Kind("page", "GET", "/retrievals/{retrieval_id}", 3, BUSY),
    Kind("retrieval json", "GET", "/v1/retrievals/{retrieval_id}", 3, BUSY),
    Kind("readyz", "GET", "/readyz", 2, frozenset({200})),
    Kind("oversize body", "POST", "/v1/query/local", 1, frozenset({413})),
    Kind("malformed body", "POST", "/v1/query/basic", 1, frozenset({400})),
    Kind("wrong key", "POST", "/v1/query/drift", 1, frozenset({401})),
    Kind("foreign host", "POST", "/v1/query/global", 1, frozenset({421})),
)


@dataclass
class Record:
    kind: str
    method: str
    route: str
    status: int | str  # an int, or "transport:<Error>" when no HTTP answer came
    ms: float
    retrieval_id: str | None = None
    body: str = ""  # the start of an unexpected answer
    answer: dict[str, Any] | None = None  # an answered question: what the stored retrieval must say


@dataclass
class Book:
    """What every client saw, appended from their threads."""

    records: list[Record] = field(default_factory=list)
    answered: list[dict[str, Any]] = field(default_factory=list)  # id, mode, question, cost of every 200 question
    lock: threading.Lock = field(default_factory=threading.Lock)

    def ids(self) -> list[str]:
        with self.lock:
            return [a["id"] for a in self.answered[-200:]]


def _question(mode: str, i: int, n: int) -> dict[str, Any]:
    body: dict[str, Any] = {"question": f"{QUESTIONS[(i + n) % len(QUESTIONS)]} (client {i}, {n})"}
    if mode == "global":
        body["level"] = 1
    return body


def _send(client: Any, kind: Kind, i: int, n: int, book: Book, rng: random.Random, oversize: bytes) -> Record:
    """One request of ``kind``; its record (the answer's status, latency, retrieval id)."""
    import httpx2 as httpx

    headers: dict[str, str] = {}
    content: bytes | None = None
    path = kind.route
    if "{retrieval_id}" in path:
        path = path.replace("{retrieval_id}", rng.choice(book.ids()))
    if kind.name.startswith("question") or kind.name in ("wrong key", "foreign host"):
        content = json.dumps(_question(path.rsplit("/", 1)[1], i, n)).encode()
    elif kind.name == "oversize body":
        content = oversize
    elif kind.name == "malformed body":
        content = b'{"question": "Who leads the team at Dulce base?", "budget": '
    if kind.name == "wrong key":
        headers["Authorization"] = f"Bearer {KEY}-wrong"
    if kind.name == "foreign host":
        headers["Host"] = FOREIGN_HOST
    if content is not None:
        headers["Content-Type"] = "application/json"
    t0 = time.perf_counter()
    try:
        res = client.request(kind.method, path, content=content, headers=headers)
        status: int | str = res.status_code
        text = res.text
    except httpx.TransportError as err:
        status, text = f"transport:{type(err).__name__}", str(err)
    ms = (time.perf_counter() - t0) * 1000
    rec = Record(kind.name, kind.method, kind.route, status, ms)
    if status == 200 and kind.name.startswith("question"):
        env = res.json()
        rec.retrieval_id = env.get("retrieval_id")
        mode = kind.route.rsplit("/", 1)[1]
        rec.answer = {"id": rec.retrieval_id, "mode": mode, "question": env.get("question"), "cost": env.get("cost")}
    if status not in kind.expected:
        rec.body = text[:300]
    return rec


def _client(url: str, i: int, stop_at: float, book: Book, oversize: bytes, seed: int) -> None:
    import httpx2 as httpx

    rng = random.Random(seed * 1000 + i)
    weights = [k.weight for k in KINDS]
    auth = {"Authorization": f"Bearer {KEY}"}
    # longer than serve.request_timeout_s (300 s): a slow question shows as the server's 504, not a client timeout
    with httpx.Client(base_url=url, headers=auth, timeout=330) as client:
        first = list(KINDS[i % len(KINDS) :] + KINDS[: i % len(KINDS)])  # one of each kind, whatever the time
        n = 0
        while first or time.monotonic() < stop_at:
            kind = first.pop(0) if first else rng.choices(KINDS, weights)[0]
            rec = _send(client, kind, i, n, book, rng, oversize)
            n += 1
            with book.lock:
                book.records.append(rec)
                if rec.answer is not None:
                    book.answered.append(rec.answer)


def _pct(values: list[float], p: float) -> float | None:
    from bench import metrics

    return round(metrics.percentile(values, p), 1) if values else None


def _routes(records: list[Record]) -> dict[str, Any]:
    """Per route template: requests per status, p50 / p99 of every answer and of the 200s alone."""
    by: dict[str, list[Record]] = defaultdict(list)
    for r in records:
        by[f"{r.method} {r.route}"].append(r)
    out: dict[str, Any] = {}
    for route in sorted(by):
        rs = by[route]
        ok = [r.ms for r in rs if r.status == 200]
        statuses = sorted({str(r.status) for r in rs})
        out[route] = {
            "requests": len(rs),
            "statuses": dict(sorted(Counter(str(r.status) for r in rs).items())),
            "p50_ms": _pct([r.ms for r in rs], 50),
            "p99_ms": _pct([r.ms for r in rs], 99),
            "p50_ms_200": _pct(ok, 50),
            "p99_ms_200": _pct(ok, 99),
            "p50_p99_ms_by_status": {
                s: [_pct(ms, 50), _pct(ms, 99)] for s in statuses for ms in [[r.ms for r in rs if str(r.status) == s]]
            },
        }
    return out


def _kinds(records: list[Record]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for kind in KINDS:
        rs = [r for r in records if r.kind == kind.name]
        out[kind.name] = {
            "route": f"{kind.method} {kind.route}",
            "expected": sorted(kind.expected),
            "statuses": dict(sorted(Counter(str(r.status) for r in rs).items())),
        }
    return out


def _retrievals(neo4j: dict[str, str], ids: list[str] | None = None) -> tuple[int, dict[str, dict[str, Any]]]:
    """How many retrievals Neo4j holds, and the mode, question and cost of each of ``ids`` found there."""
    from driftgraph.store.db import Store
    from tests.conftest import make_config
    from tests.support.cypher import q

    with Store(make_config(neo4j).neo4j) as store:
        total = q(store, "MATCH (r:Retrieval) RETURN count(r) AS n")[0]["n"]
        text = (
            "UNWIND $ids AS id MATCH (r:Retrieval {id: id}) "
            "RETURN r.id AS id, r.mode AS mode, r.query AS question, r.cost AS cost"
        )
        rows = q(store, text, ids=ids) if ids else []
    return int(total), {r["id"]: r for r in rows}


COST_KEYS = ("llm_calls", "prompt_tokens", "completion_tokens", "embedding_calls", "embedding_tokens")


def _differs(answer: dict[str, Any], row: dict[str, Any]) -> list[str]:
    """Where the stored retrieval says something else than the answer did: mode, question, cost totals (two
    questions running at once never mix their ledgers or texts)."""
    stored_cost = json.loads(row["cost"]) if isinstance(row["cost"], str) else row["cost"] or {}
    out = [k for k in ("mode", "question") if row[k] != answer[k]]
    return out + [f"cost.{k}" for k in COST_KEYS if stored_cost.get(k) != (answer["cost"] or {}).get(k)]


def _stored(neo4j: dict[str, str], answered: list[dict[str, Any]], before: int) -> dict[str, Any]:
    """Each answered question's retrieval read back from Neo4j, compared with the answer (mode, question, cost);
    and how many retrievals the run stored (a question turned away, 429 or a refusal, stores none)."""
    ids = [a["id"] for a in answered]
    total, found = _retrievals(neo4j, ids)
    missing = [rid for rid in ids if rid not in found]
    differ = {a["id"]: d for a in answered if a["id"] in found for d in [_differs(a, found[a["id"]])] if d}
    return {
        "answered": len(ids),
        "distinct_ids": len(set(ids)),
        "found": len(found),
        "missing": missing[:20],
        "missing_count": len(missing),
        "differ": dict(list(differ.items())[:20]),
        "differ_count": len(differ),
        "stored_during_run": total - before,
    }


def _metric_delta(before: dict[Any, float], after: dict[Any, float]) -> Counter[tuple[str, str, str]]:
    out: Counter[tuple[str, str, str]] = Counter()
    for (name, labels), value in after.items():
        if name != "driftgraph_http_requests_total":
            continue
        lab = dict(labels)
        if lab["route"] == "/metrics":
            continue
        delta = value - before.get((name, labels), 0.0)
        if delta:
            out[(lab["method"], lab["route"], lab["status"])] = int(delta)
    return out


def _server_log(text: str) -> dict[str, Any]:
    """Tracebacks, ERROR lines and driftgraph's WARNING lines in the server's log (uvicorn's access lines
    aside); the first few of each."""
    lines = text.splitlines()
    tracebacks = [i for i, line in enumerate(lines) if line.startswith("Traceback")]
    errors = [line for line in lines if re.search(r"\bERROR\b|Exception in ASGI", line)]
    warnings = [line for line in lines if "WARNING" in line]
    return {
        "lines": len(lines),
        "tracebacks": len(tracebacks),
        "first_traceback": "\n".join(lines[tracebacks[0] : tracebacks[0] + 40]) if tracebacks else None,
        "error_lines": len(errors),
        "first_errors": errors[:5],
        "warning_lines": len(warnings),
        "first_warnings": warnings[:5],
    }


def _rss_mb(pid: int) -> float | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return round(int(line.split()[1]) / 1024, 1)
    except OSError:
        pass
    return None


def _refusals(records: list[Record]) -> dict[str, Any]:
    """How fast the server says no: p50 / p99 of every 4xx, per status, across routes."""
    out: dict[str, Any] = {}
    for status in sorted({r.status for r in records if isinstance(r.status, int) and 400 <= r.status < 500}):
        ms = [r.ms for r in records if r.status == status]
        out[str(status)] = {"requests": len(ms), "p50_ms": _pct(ms, 50), "p99_ms": _pct(ms, 99)}
    return out


def _settings(cwd: Path) -> Path:
    import yaml

    path = cwd / "driftgraph.yaml"
    data = {"embeddings": {"threads": 1}, "drift": DRIFT, "serve": {}}
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


def run(neo4j: dict[str, str], duration_s: float, clients: int, workdir: Path, seed: int = 0) -> dict[str, Any]:
    """The load against a server started here on the database ``neo4j`` (operation-dulce imported); the report."""
    import httpx2 as httpx

    from driftgraph.config import ServeConfig
    from tests.support.fake_openai import FakeOpenAI
    from tests.support.serve import Server, metric_samples, serve_env
    from tests.test_faults import answer_responder

    serve_cfg = ServeConfig()
    fake = FakeOpenAI(answer_responder).start()
    chat_calls = 0
    _settings(workdir)
    stored_before, _ = _retrievals(neo4j)
    server = Server(workdir, serve_env(neo4j, fake, api_key=KEY)).wait_ready(180)
    auth = {"Authorization": f"Bearer {KEY}"}
    book = Book()
    try:
        ready = httpx.get(f"{server.url}/readyz", timeout=60)
        if ready.status_code != 200:
            raise RuntimeError(f"/readyz {ready.status_code}: {ready.text[:300]}")
        with httpx.Client(base_url=server.url, headers=auth, timeout=330) as c:
            for i, mode in enumerate(MODES):  # warm-up, and the first ids the page requests read
                res = c.post(f"/v1/query/{mode}", json=_question(mode, -1, i))
                if res.status_code != 200:
                    raise RuntimeError(f"warm-up {mode}: {res.status_code} {res.text[:300]}")
                env = res.json()
                book.answered.append(
                    {"id": env["retrieval_id"], "mode": mode, "question": env["question"], "cost": env["cost"]}
                )
        warm = len(book.answered)
        rss = [_rss_mb(server.proc.pid)]
        before = metric_samples(server.url, auth)
        oversize = json.dumps({"question": "x" * serve_cfg.max_body_bytes}).encode()
        t0 = time.monotonic()
        stop_at = t0 + duration_s
        threads = [
            threading.Thread(target=_client, args=(server.url, i, stop_at, book, oversize, seed), daemon=True)
            for i in range(clients)
        ]
        for t in threads:
            t.start()
        while any(t.is_alive() for t in threads):
            time.sleep(0.5)
            rss.append(_rss_mb(server.proc.pid))
            chat_calls += len(fake.chat_requests())
            fake.requests.clear()  # the fake keeps every request body: not for a minute of load
        wall = time.monotonic() - t0
        after = metric_samples(server.url, auth)
        load_end = " ".join(f"{x:.1f}" for x in os.getloadavg())
    finally:
        chat_calls += len(fake.chat_requests())
        exit_code = server.stop(serve_cfg.shutdown_grace_s + 30)
        log = server.output()
        fake.stop()
    records = book.records
    answered = book.answered[warm:]
    stored = _stored(neo4j, book.answered, stored_before)
    seen: Counter[tuple[str, str, str]] = Counter(
        (r.method, r.route, str(r.status)) for r in records if isinstance(r.status, int)
    )
    served = _metric_delta(before, after)
    mismatch = {
        " ".join(k): {"clients": seen[k], "server": served[k]} for k in sorted(seen | served) if seen[k] != served[k]
    }
    unexpected = [r for r in records if r.status not in next(k.expected for k in KINDS if k.name == r.kind)]
    five = [r for r in records if isinstance(r.status, int) and r.status >= 500]
    transport = [r for r in records if isinstance(r.status, str)]
    server_log = _server_log(log)
    # uvicorn re-raises the SIGTERM it handled once shut down: -15 after "Application shutdown complete" is clean
    clean = exit_code in (0, -signal.SIGTERM) and "Application shutdown complete" in log
    lost = {
        "missing_retrievals": stored["missing_count"],
        "retrievals_differing": stored["differ_count"],
        "retrievals_not_answered": stored["stored_during_run"] - stored["distinct_ids"],
        "unexpected_5xx": len(five),
        "transport_errors": len(transport),
        "unexpected_status": len(unexpected),
        "server_metrics_disagree": len(mismatch),
        "server_tracebacks": server_log["tracebacks"],
        "unclean_shutdown": 0 if clean else 1,
    }
    statuses = Counter(str(r.status) for r in records)
    return {
        "duration_s": duration_s,
        "clients": clients,
        "seed": seed,
        "wall_s": round(wall, 1),
        "model": "tests/support/fake_openai.py (in the bench process, answers at once)",
        "data": "operation-dulce",
        "settings": {
            "serve.max_concurrency": serve_cfg.max_concurrency,
            "serve.max_page_concurrency": serve_cfg.max_page_concurrency,
            "serve.max_body_bytes": serve_cfg.max_body_bytes,
            "serve.request_timeout_s": serve_cfg.request_timeout_s,
            "drift": DRIFT,
            "global.level": 1,
            "api_key": "set (DRIFTGRAPH_API_KEY)",
        },
        "mix": {k.name: k.weight for k in KINDS},
        "requests": len(records),
        "requests_per_s": round(len(records) / wall, 1) if wall else None,
        "questions_answered": len(answered),
        "questions_answered_per_s": round(len(answered) / wall, 2) if wall else None,
        "llm_chat_calls": chat_calls,
        "by_status": dict(sorted(statuses.items())),
        "by_route": _routes(records),
        "by_kind": _kinds(records),
        "refusals": _refusals(records),
        "server_rss_mb": {
            "before": rss[0],
            "peak": max((x for x in rss if x is not None), default=None),
            "end": rss[-1],
        },
        "load_end": load_end,
        "retrievals": stored,
        "unexpected": [vars(r) for r in unexpected[:20]],
        "transport_errors": [vars(r) for r in transport[:10]],
        "server_metrics_mismatch": mismatch,
        "server_log": server_log,
        "lost": lost,
        "server_exit_code": exit_code,
        "nothing_lost": not any(lost.values()),
    }


def machine_facts(argv: list[str]) -> dict[str, Any]:
    from bench.run import machine

    return {
        **machine.describe(),
        "cores": os.cpu_count(),
        "python_impl": platform.python_implementation(),
        "command": "python -m bench reliability " + " ".join(argv),
    }


def write_section(d: dict[str, Any], latest: Path) -> None:
    """Put the Load section right after "7. Reliability" (replacing an earlier one), else at the end."""
    text = latest.read_text(encoding="utf-8")
    block = "\n".join(section(d))
    own = re.compile(r"^## 7b\. Load.*?(?=^## |\Z)", re.S | re.M)
    if own.search(text):
        text = own.sub(lambda _m: block, text)
    else:
        rel = re.compile(r"^## 7\. Reliability.*?(?=^## |\Z)", re.S | re.M)
        m = rel.search(text)
        cut = m.end() if m else len(text)
        text = text[:cut].rstrip("\n") + "\n\n" + block + "\n" + text[cut:]
    latest.write_text(text.rstrip() + "\n", encoding="utf-8")
