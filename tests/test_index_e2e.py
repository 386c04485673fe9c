"""`driftgraph index` end to end: real Neo4j, the real openai client against the fake server, local embedder.

The fake server answers extraction requests with entities derived from the chunk text
(tests/support/index_responder.py), so every run of the same input is exactly reproducible.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from driftgraph.api import Engine
from tests.conftest import make_config
from tests.support.index_responder import responder

pytestmark = pytest.mark.e2e
EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "docs"
INDEX = {"chunk_size": 80, "chunk_overlap": 10, "claims": True, "description_max_tokens": 60, "concurrency": 3}


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    docs = tmp_path / "docs"
    shutil.copytree(EXAMPLES, docs)
    return docs


@pytest.fixture
def cfg(neo4j_cfg, neo4j_config, fake_llm, tmp_path):
    fake_llm.responder = responder
    return make_config(
        neo4j_config,
        llm={"base_url": fake_llm.base_url, "model": "fake-model", "backoff_base_s": 0.0},
        index={**INDEX, "cache_dir": str(tmp_path / "cache")},
    )


def _extract_texts(fake_llm, since: int = 0) -> list[str]:
    reqs = fake_llm.chat_requests()[since:]
    return [
        r["messages"][0]["content"]
        for r in reqs
        if (r.get("response_format") or {}).get("json_schema", {}).get("name") == "extract_graph"
        and len(r["messages"]) == 1  # not the gleaning round
    ]


def _model(store) -> dict:
    return store.read("tests/index_model")[0]


def _numbers(store) -> dict[str, dict[str, int]]:
    row = store.read("tests/human_readable_ids")[0]
    return {kind: dict(map(tuple, pairs)) for kind, pairs in row.items()}


def _snapshot(store) -> dict:
    snap = store.read("tests/index_snapshot")[0]
    return {k: sorted(map(str, v)) for k, v in snap.items()}


def test_cli_index_builds_the_graph_model_then_reruns_free(cfg, neo4j_config, fake_llm, corpus, tmp_path):
    conf = tmp_path / "driftgraph.yaml"
    conf.write_text(yaml.safe_dump({"llm": cfg.llm.model_dump(), "index": cfg.index.model_dump()}))
    env = {
        **os.environ,
        "NEO4J_URI": neo4j_config["uri"],
        "NEO4J_USERNAME": neo4j_config["username"],
        "NEO4J_PASSWORD": neo4j_config["password"],
        "NEO4J_DATABASE": neo4j_config["database"],
        "OPENAI_API_KEY": "",
        "OPENAI_BASE_URL": "",
    }
    cmd = [sys.executable, "-m", "driftgraph", "index", str(corpus), "--json", "--config", str(conf)]
    res = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    s = json.loads(res.stdout)
    assert s["documents"] == {"total": 4, "added": 4, "removed": 0, "replaced": 0, "unchanged": 0}
    assert s["chunks"] >= 8 and s["entities"] > 10 and s["relationships"] > 10 and s["claims"] > 0
    assert s["communities"] > 0 and s["reports"] == s["communities"]
    assert s["failures"]["count"] == 0
    assert s["llm_calls"] == len(fake_llm.chat_requests()) and s["cache_hits"] == 0
    assert s["redone"]["descriptions_summarized"] > 0, "descriptions over the token cap were summarised"
    assert set(s["seconds"]) >= {"load", "chunk", "extract", "merge", "write", "communities", "reports", "embed"}
    # stderr is a pipe here, not a terminal: progress comes as plain lines, not bars drawn only at the end
    said = [line for line in res.stderr.splitlines() if line.startswith("index: ")]
    n = s["chunks"]
    assert any(line.startswith(f"index: extract {n}/{n} (100%), ") for line in said), res.stderr
    assert any(line.startswith(f"index: reports {s['communities']}/{s['communities']} (100%)") for line in said)

    from driftgraph.store.db import Store

    with Store(cfg.neo4j) as store:
        m = _model(store)
        assert (m["documents"], m["chunks"], m["entities"]) == (4, s["chunks"], s["entities"])
        assert (m["relationships"], m["communities"], m["claims"]) == (
            s["relationships"],
            s["communities"],
            s["claims"],
        )
        assert m["chunk_vectors"] == m["chunks"] and m["entity_vectors"] == m["entities"]
        assert m["reports"] == m["communities"] == m["report_vectors"]
        assert m["entity_complete"] == m["entities"] and m["next_links"] == m["chunks"] - 4
        for bad in ("orphan_chunks", "bad_next", "unmentioned", "bad_degree", "bad_relationships",
                    "incomplete_reports", "bad_communities", "bad_parents", "unfound_claims"):  # fmt: skip
            assert m[bad] == 0, bad
        assert m["claims_about"] > 0
        indexes = {r["name"] for r in store.read("schema/list_indexes")}
        assert {"entity_embedding", "chunk_embedding", "community_embedding", "entity_fulltext"} <= indexes
        before = _snapshot(store)

    calls = len(fake_llm.chat_requests())
    res2 = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert res2.returncode == 0, res2.stderr
    s2 = json.loads(res2.stdout)
    assert s2["llm_calls"] == 0 and len(fake_llm.chat_requests()) == calls, "a re-run costs no LLM call"
    assert s2["documents"]["unchanged"] == 4 and s2["redone"]["reports_reused"] == s2["communities"]
    assert sum(s2["redone"]["embedded"].values()) == 0
    with Store(cfg.neo4j) as store:
        assert _snapshot(store) == before


def test_incremental_add_change_remove(cfg, fake_llm, corpus, store):
    eng = Engine(cfg)
    try:
        first = eng.index(corpus)
        base_reports = first.reports
        assert first.failures.count == 0
        before = _numbers(store)

        # one added file: only its chunks are extracted by the LLM; the rest comes from the cache
        (corpus / "ferry.txt").write_text(
            "The Kelmouth Ferry crosses to Selsey Point twice a day. Captain Ruth Amadi has run the Kelmouth "
            "Ferry since 2011 and buys her spare parts from Marrow Bay Shipyard.",
            encoding="utf-8",
        )
        n = len(fake_llm.chat_requests())
        added = eng.index(corpus)
        new_texts = _extract_texts(fake_llm, n)
        assert added.documents.to_dict() == {"total": 5, "added": 1, "removed": 0, "replaced": 0, "unchanged": 4}
        assert added.redone.documents_extracted == 1
        assert new_texts and all("Kelmouth Ferry" in t for t in new_texts)
        assert added.redone.chunks_extracted == len(new_texts)
        assert added.redone.extract_cache_hits > 0
        titles = store.read("tests/document_entities", title="ferry.txt")[0]["titles"]
        assert "CAPTAIN RUTH AMADI" in titles
        assert added.redone.reports_generated + added.redone.reports_reused == added.reports
        assert added.redone.reports_reused > 0, "communities whose membership is unchanged keep their report"
        assert added.redone.reports_generated < added.reports
        # human_readable_ids survive the run: an item written again keeps its number, a new one gets a fresh one
        after = _numbers(store)
        for kind, numbers in after.items():
            assert len(set(numbers.values())) == len(numbers), f"{kind}: a number given twice"
            kept = {i: n for i, n in before[kind].items() if i in numbers}
            assert kept and all(numbers[i] == n for i, n in kept.items()), f"{kind}: numbers moved"
            assert all(n > max(before[kind].values()) for i, n in numbers.items() if i not in before[kind]), kind
        assert set(after["documents"]) - set(before["documents"]), "the added document has a number"

        # one removed file: what only it contributed disappears
        (corpus / "ferry.txt").unlink()
        removed = eng.index(corpus)
        assert removed.documents.removed == 1 and removed.llm_calls == 0
        assert removed.redone.deleted["documents"] == 1
        assert store.read("tests/document_entities", title="ferry.txt")[0]["titles"] == []
        snap = _snapshot(store)
        assert not any("CAPTAIN RUTH AMADI" in e for e in snap["entities"])
        assert removed.entities == first.entities and removed.reports == base_reports

        # one changed file: old version out, new version extracted
        path = corpus / "lantern-festival.txt"
        path.write_text(path.read_text() + "\nIn 2023 the lantern was carried by Tomas Reyes.\n", encoding="utf-8")
        n = len(fake_llm.chat_requests())
        changed = eng.index(corpus)
        assert changed.documents.to_dict() == {"total": 4, "added": 1, "removed": 1, "replaced": 0, "unchanged": 3}
        assert all("lantern" in t.lower() for t in _extract_texts(fake_llm, n))
        assert "TOMAS REYES" in store.read("tests/document_entities", title="lantern-festival.txt")[0]["titles"]
        m = _model(store)
        assert m["documents"] == 4 and m["orphan_chunks"] == 0 and m["bad_degree"] == 0 and m["bad_parents"] == 0
        assert m["reports"] == m["communities"] == m["report_vectors"]
    finally:
        eng.close()


def test_two_runs_give_identical_ids_and_communities(cfg, corpus, store):
    with Engine(cfg) as eng:
        eng.index(corpus)
        first = _snapshot(store)
        store.run_auto("admin/reset")
        again = eng.index(corpus)
    assert again.llm_calls == 0 and again.documents.added == 4
    assert _snapshot(store) == first
    assert first["communities"]


def test_bad_chunks_are_listed_not_fatal_and_429_is_retried(cfg, fake_llm, corpus, store):
    def flaky(req):
        text = req["messages"][0]["content"]
        if "Corran Foundry casts a new iron lantern" in text and req["response_format"]["json_schema"]["name"] == (
            "extract_graph"
        ):
            return "I cannot help with that."  # and again after the repair prompt
        if len(req["messages"]) == 1 and "Vell Estuary" in text and "######## TEXT" in text:
            return "```json\n" + responder(req) + "\n```"  # fenced: parsed without a repair
        return responder(req)

    fake_llm.responder = flaky
    fake_llm.fail_next = [429, 503]
    with Engine(cfg) as eng:
        s = eng.index(corpus)
    failed = s.failures.chunks
    assert len(failed) == 1 and failed[0].document == "lantern-festival.txt"
    assert "after one repair retry" in failed[0].errors[0]
    assert s.failures.count == 1 and s.entities > 10 and s.reports == s.communities
    repairs = [r for r in fake_llm.chat_requests() if any("could not be used" in m["content"] for m in r["messages"])]
    assert len(repairs) == 1
    # The failed answers are not cached: once the model behaves, a re-run extracts that chunk (and only it).
    fake_llm.responder = responder
    with Engine(cfg) as eng:
        again = eng.index(corpus)
    assert again.failures.count == 0
    assert again.llm_calls >= 1 and again.redone.chunks_extracted == 1


def test_bad_input_is_a_clear_error(cfg, tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "blank.txt").write_text("")
    with Engine(cfg) as eng, pytest.raises(Exception, match=r"no documents to index .*blank.txt: empty file"):
        eng.index(empty)


def test_refused_endpoint_and_missing_endpoint_stop_with_one_error(cfg, fake_llm, corpus, store):
    from driftgraph.errors import DriftgraphError

    fake_llm.fail_next = [401] * 20
    with Engine(cfg) as eng, pytest.raises(DriftgraphError, match="answered 401: the API key was rejected"):
        eng.index(corpus)
    no_llm = cfg.model_copy(update={"llm": cfg.llm.model_copy(update={"base_url": None, "api_key": None})})
    with Engine(no_llm) as eng, pytest.raises(DriftgraphError, match="no LLM endpoint configured"):
        eng.index(corpus)


def test_reextraction_prunes_stale_mentions(cfg, fake_llm, corpus, store, tmp_path):
    with Engine(cfg) as eng:
        eng.index(corpus)

    def forgetful(req):
        if ((req.get("response_format") or {}).get("json_schema") or {}).get("name") != "extract_graph":
            return responder(req)
        answer = json.loads(responder(req))
        if "Vell Estuary" in req["messages"][0]["content"]:
            answer["entities"] = [e for e in answer["entities"] if e["title"] != "Kelmouth"]
            answer["relationships"] = [
                r for r in answer["relationships"] if "Kelmouth" not in (r["source"], r["target"])
            ]
        return json.dumps(answer)

    fake_llm.responder = forgetful
    fresh = cfg.model_copy(update={"index": cfg.index.model_copy(update={"cache_dir": str(tmp_path / "cache2")})})
    with Engine(fresh) as eng:
        s = eng.index(corpus)
    assert s.redone.deleted["mentions"] > 0 and s.failures.count == 0
    m = _model(store)
    assert m["bad_degree"] == 0 and m["unmentioned"] == 0 and m["bad_relationships"] == 0


def test_index_refuses_to_delete_an_imported_index_unless_reset(cfg, fake_llm, corpus, store):
    from driftgraph.index.load import InputError

    fake_llm.responder = responder
    sample = Path(__file__).resolve().parent.parent / "examples" / "sample-index"
    with Engine(cfg) as eng:
        eng.import_graphrag(sample, embed=False)
        before = store.read("admin/counts")[0]
        with pytest.raises(InputError, match="--reset"):
            eng.index(corpus)
        assert store.read("admin/counts")[0] == before  # nothing of the imported index was deleted
        s = eng.index(corpus, reset=True)
    assert s.documents.removed == 0 and s.documents.added == s.documents.total


def _reports(store) -> dict[str, dict]:
    return {r["id"]: r for r in store.read("tests/community_reports")}


def _report_calls(fake_llm, since: int) -> int:
    return sum(
        1
        for r in fake_llm.chat_requests()[since:]
        if (r.get("response_format") or {}).get("json_schema", {}).get("name") == "community_report"
    )


def test_a_document_touching_one_community_leaves_the_others_and_their_reports(cfg, fake_llm, corpus, store):
    with Engine(cfg) as eng:
        first = eng.index(corpus)
        before = _reports(store)
        assert first.failures.count == 0 and all(r["report_basis"] and r["graph_basis"] for r in before.values())
        snap = store.read("tests/index_snapshot")[0]
        ids = {e.split("|")[1]: e.split("|")[0] for e in snap["entities"]}
        of = lambda eid, rows: {r[0] for r in rows if eid in r[5:]}  # noqa: E731
        brandts = of(ids["OSKAR BRANDT"], snap["communities"])
        assert len(brandts) == 1 and len(before) > 2

        # Oskar Brandt gains a new neighbour: his community changes, the others keep ids, numbers, reports
        (corpus / "ferry.txt").write_text("Oskar Brandt sold a boat to Captain Ruth Amadi.", encoding="utf-8")
        n = len(fake_llm.chat_requests())
        added = eng.index(corpus)
        after = _reports(store)
        changed = set(after) - set(before)
        assert set(before) - set(after) == brandts, "only Oskar Brandt's community is replaced"
        assert changed and added.redone.communities.new == len(changed)
        kept = set(after) & set(before)
        assert all(after[i]["full_content"] == before[i]["full_content"] for i in kept), "kept reports untouched"
        assert all(after[i]["community"] == before[i]["community"] for i in kept), "kept numbers untouched"
        assert added.redone.reports_generated == len(changed) and added.redone.reports_outdated == 0
        assert _report_calls(fake_llm, n) <= len(changed)
        snap = store.read("tests/index_snapshot")[0]
        amadi = [e.split("|")[0] for e in snap["entities"] if e.split("|")[1] == "CAPTAIN RUTH AMADI"]
        assert len(amadi) == 1 and of(amadi[0], snap["communities"]) <= changed

        # a re-run is a no-op: no call, nothing regenerated, same communities
        snap = _snapshot(store)
        n = len(fake_llm.chat_requests())
        again = eng.index(corpus)
        assert again.llm_calls == 0 and len(fake_llm.chat_requests()) == n
        assert again.redone.reports_generated == 0 and again.redone.communities.new == 0
        assert _snapshot(store) == snap and _reports(store) == after

        # a sentence naming only Corran Foundry: no new edge, so its community keeps its id, but the
        # report reads the foundry's description, which changed: that one report is written again
        (corpus / "foundry.txt").write_text("Corran Foundry is older than the harbour.", encoding="utf-8")
        described = eng.index(corpus)
        latest = _reports(store)
        assert set(latest) == set(after), "no membership changed"
        assert described.redone.reports_outdated == described.redone.reports_generated == 1
        redone = [i for i in latest if latest[i]["full_content"] != after[i]["full_content"]]
        assert len(redone) <= 1 and all(latest[i]["report_basis"] != after[i]["report_basis"] for i in redone)
        assert sum(latest[i]["report_basis"] != after[i]["report_basis"] for i in latest) == 1


def test_communities_under_report_min_size_get_no_report_until_the_knob_is_lowered(cfg, fake_llm, corpus, store):
    """`index.report_min_size`: a small community costs no model call and has no report; lowering the knob writes
    the missing reports and reuses the others."""
    small = cfg.model_copy(update={"index": cfg.index.model_copy(update={"report_min_size": 3})})
    with Engine(small) as eng:
        n = len(fake_llm.chat_requests())
        first = eng.index(corpus)
        reports = _reports(store)
        under = {i for i, r in reports.items() if r["size"] < 3}
        assert under and len(under) < len(reports), "the sample must have communities on both sides of 3"
        assert all(reports[i]["full_content"] is None for i in under)
        assert all(r["full_content"] for i, r in reports.items() if i not in under)
        assert first.redone.reports_skipped_small == len(under) and first.reports == len(reports) - len(under)
        assert _report_calls(fake_llm, n) == len(reports) - len(under) and first.failures.count == 0
    with Engine(cfg) as eng:
        n = len(fake_llm.chat_requests())
        lowered = eng.index(corpus)
        after = _reports(store)
        assert set(after) == set(reports) and all(r["full_content"] for r in after.values())
        assert lowered.redone.reports_generated == len(under) == _report_calls(fake_llm, n)
        assert lowered.redone.reports_reused == len(reports) - len(under) and lowered.redone.reports_skipped_small == 0


def test_a_report_whose_regeneration_failed_is_tried_again_not_reused(cfg, fake_llm, corpus, store):
    """The stale report stays until a new one is written, but marked as computed from its old data: the next run
    regenerates it rather than taking it for current."""
    from tests.support import global_fake

    with Engine(cfg) as eng:
        eng.index(corpus)
        before = _reports(store)
        (corpus / "foundry.txt").write_text("Corran Foundry is older than the harbour.", encoding="utf-8")
        fake_llm.responder = lambda req: (
            "this is not JSON at all" if global_fake.schema_name(req) == "community_report" else responder(req)
        )
        failed = eng.index(corpus)
        assert len(failed.failures.reports) == 1 and failed.redone.reports_generated == 0
        stale = _reports(store)
        (cid,) = [i for i in stale if stale[i]["community"] == failed.failures.reports[0].community]
        assert stale[cid]["full_content"] == before[cid]["full_content"], "the old text is not lost"
        assert stale[cid]["report_basis"] == before[cid]["report_basis"], "still marked as computed from old data"
        fake_llm.responder = responder
        n = len(fake_llm.chat_requests())
        again = eng.index(corpus)
        assert again.failures.count == 0 and again.redone.reports_generated == 1 == _report_calls(fake_llm, n)
