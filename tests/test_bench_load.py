"""`python -m bench reliability load`, briefly: a real `driftgraph serve` on operation-dulce with the fake model,
a few clients for a few seconds over the whole mix (questions in every mode, retrieval pages, /readyz, an
oversize body, a malformed body, a wrong key, a foreign Host). The report has its shape and nothing is lost:
every answered question's retrieval is in Neo4j, no 5xx, no transport error, every status one its kind
expects, the server's /metrics agree with the clients. No timing is asserted."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.run.dg import load

pytestmark = pytest.mark.e2e


def test_a_short_load_run_reports_every_route_and_loses_nothing(dulce: dict[str, str], tmp_path: Path) -> None:
    report = load.run(dulce, duration_s=3, clients=3, workdir=tmp_path)

    assert report["clients"] == 3 and report["duration_s"] == 3
    assert sum(report["by_status"].values()) == report["requests"]
    assert set(report["by_route"]) == {f"{k.method} {k.route}" for k in load.KINDS}
    for route, row in report["by_route"].items():
        assert sum(row["statuses"].values()) == row["requests"], route
        assert row["p50_ms"] is not None and row["p99_ms"] is not None, route
    for kind in load.KINDS:  # every client sends one of each kind first, so each is seen
        statuses = report["by_kind"][kind.name]["statuses"]
        assert statuses, kind.name
        assert {int(s) for s in statuses} <= kind.expected, (kind.name, statuses)
    refusals = {"oversize body": "413", "malformed body": "400", "wrong key": "401", "foreign host": "421"}
    for name, status in refusals.items():
        assert set(report["by_kind"][name]["statuses"]) == {status}, name

    stored = report["retrievals"]
    assert report["questions_answered"] > 0
    assert stored["found"] == stored["answered"] == stored["distinct_ids"] == report["questions_answered"] + 4
    assert stored["stored_during_run"] == stored["answered"], "a refused or turned-away question stores nothing"
    assert report["lost"] == dict.fromkeys(report["lost"], 0), report["lost"]
    assert report["nothing_lost"] is True
    assert report["server_metrics_mismatch"] == {} and report["unexpected"] == [] and stored["differ"] == {}
    assert report["server_log"]["tracebacks"] == 0, report["server_log"]["first_traceback"]

    lines = load.section({**report, "machine": load.machine_facts(["load", "--duration", "3", "--clients", "3"])})
    assert lines[0].startswith("## 7b. Load: 3 clients") and any("nothing lost" in line for line in lines)
