"""`driftgraph index` on PDF, DOCX, PPTX and HTML end to end: real Neo4j, the real openai client against the fake
server. Chunks keep their page, slide or heading path on the Chunk node, the HTML page's navigation and footer
never reach a chunk, bad files are skipped one line each (exit 3), and a local answer's cited source resolves to
its page in the envelope, the stored trace and the retrieval page."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from driftgraph.api import Engine
from driftgraph.query.requests import BasicQuery, LocalQuery
from driftgraph.store.db import Store
from tests.conftest import make_config
from tests.support.cypher import q
from tests.support.documents import BOILERPLATE, encrypted_pdf, html_page, pdf_bytes, write_docx, write_pptx
from tests.support.index_responder import responder as index_responder

pytest.importorskip("pypdf")
pytest.importorskip("docx")
pytest.importorskip("pptx")
pytest.importorskip("trafilatura")
pytestmark = pytest.mark.e2e

INDEX = {"chunk_size": 60, "chunk_overlap": 8, "concurrency": 2, "max_file_bytes": 60_000}
PAGE_1 = [
    "The Ellis harbor opens at dawn every day of the year.",
    "Marta Quill runs the harbor cranes with the night crew.",
    "The crane crew unloads grain ships from Norland before noon.",
    "Harbor pilots guide each grain ship past the Ellis breakwater.",
    "The breakwater was rebuilt after the winter storm of 2019.",
]
PAGE_2 = [
    "Tidal energy powers the town through the Brightwater station.",
    "Engineers at Brightwater service the turbines every spring.",
    "The station keeps spare blades in the old Norland warehouse.",
    "Each blade is checked by the Brightwater crew after a storm.",
    "A second station near Norland has been planned since 2021.",
    "Its turbines will share the spare blades kept at Brightwater.",
    "The Brightwater turbine feeds the Ellis grid at every flood tide.",
]
KEY = "Brightwater turbine feeds the Ellis grid"
ANSWER = "The turbine feeds the grid [Data: Sources ({n})]."


def answer_responder(request: dict[str, Any]) -> str:
    """Index calls as the index responder answers them; a query's answer cites the row holding ``KEY``."""
    system = request["messages"][0]["content"]
    if request.get("response_format") or KEY not in system:
        return index_responder(request)
    at = system.index(KEY)
    rows = re.findall(r"(?:^|\n)(?:----- Source )?(\d+)(?:\||\s-----)", system[:at])
    return ANSWER.format(n=rows[-1])


def _folder(root: Path) -> Path:
    docs = root / "docs"
    docs.mkdir()
    (docs / "report.pdf").write_bytes(pdf_bytes([PAGE_1, PAGE_2]))
    write_docx(
        docs / "handbook.docx",
        [(1, "Operations"), (0, "Marta Quill schedules the Ellis crane shifts each week."),
         (2, "Storm recovery"), (0, "After a storm the Quill crew inspects every Ellis berth before dawn."),
         (1, "Staffing"), (0, "Twelve riggers from the Norland union staff the night shift.")],
    )  # fmt: skip
    write_pptx(
        docs / "deck.pptx",
        [("Tides", "Spring tides at Ellis Bay lift the Norland barges."),
         ("Turbines", "Brightwater turbines run at full output in March.")],
    )  # fmt: skip
    (docs / "port.html").write_text(
        html_page(
            [(1, "Port guide"), (0, "Visiting ships report to the Ellis harbor master on channel twelve."),
             (2, "Anchorage"), (0, "Ships wait at the Norland anchorage until a pilot boards them.")]
        ),
        encoding="utf-8",
    )  # fmt: skip
    (docs / "scan.pdf").write_bytes(pdf_bytes([["x"], ["y"]], image_only=True))
    (docs / "locked.pdf").write_bytes(encrypted_pdf([["Secret Ellis plans."]]))
    (docs / "broken.pdf").write_bytes(b"%PDF-1.4\n1 0 obj << /Type /Catalog >> truncated")
    (docs / "huge.pdf").write_bytes(
        pdf_bytes([[f"Line {i} of page {p} about Ellis." for i in range(45)] for p in range(30)])
    )
    assert (docs / "huge.pdf").stat().st_size > INDEX["max_file_bytes"]
    return docs


@pytest.fixture
def indexed(neo4j_cfg, neo4j_config, fake_llm, tmp_path) -> dict[str, Any]:
    """The folder indexed by the CLI (``--json``): its exit code, summary and stderr, and the config used."""
    fake_llm.responder = answer_responder
    cfg = make_config(
        neo4j_config,
        llm={"base_url": fake_llm.base_url, "model": "fake-model", "api_key": "test", "backoff_base_s": 0.0},
        index={**INDEX, "cache_dir": str(tmp_path / "cache")},
    )
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
    cmd = [sys.executable, "-m", "driftgraph", "index", str(_folder(tmp_path)), "--json", "--config", str(conf)]
    res = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600, cwd=tmp_path)
    return {"cfg": cfg, "code": res.returncode, "summary": json.loads(res.stdout), "stderr": res.stderr}


def test_chunks_keep_pages_slides_and_heading_paths_and_bad_files_exit_3(indexed):
    s = indexed["summary"]
    assert indexed["code"] == 3, indexed["stderr"]
    assert "index finished with 4 files skipped" in indexed["stderr"]
    reasons = {x["path"]: x["reason"] for x in s["load"]["skipped"]}
    assert set(reasons) == {"scan.pdf", "locked.pdf", "broken.pdf", "huge.pdf"}
    assert reasons["scan.pdf"].startswith("no text layer on any of its 2 pages")
    assert reasons["locked.pdf"] == "encrypted PDF (needs a password)"
    assert reasons["broken.pdf"].startswith("corrupt PDF: ")
    assert reasons["huge.pdf"].endswith(f"is over index.max_file_bytes={INDEX['max_file_bytes']}")
    assert s["documents"]["total"] == 4 and s["failures"]["count"] == 0

    with Store(indexed["cfg"].neo4j) as store:
        rows = q(store, "MATCH (c:Chunk)-[:PART_OF]->(d:Document) RETURN d.title AS doc, c.text AS text, "
                        "c.location AS location, c.position AS position ORDER BY doc, position")  # fmt: skip
    by_doc: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        by_doc.setdefault(r["doc"], []).append(r)
    assert set(by_doc) == {"report.pdf", "handbook.docx", "deck.pptx", "port.html"}
    pdf = by_doc["report.pdf"]
    assert len(pdf) >= 3
    for chunk in pdf:  # the pages a chunk names are exactly the pages its sentences come from
        on_1 = any(part in chunk["text"] for line in PAGE_1 for part in (line[:25], line[-25:]))
        on_2 = any(part in chunk["text"] for line in PAGE_2 for part in (line[:25], line[-25:]))
        pages = [p for p, on in ((1, on_1), (2, on_2)) if on]
        assert chunk["location"] == (f"page {pages[0]}" if len(pages) == 1 else "pages 1-2"), chunk
    assert [c["location"] for c in pdf][0] == "page 1" and pdf[-1]["location"] == "page 2"
    assert "pages 1-2" in {c["location"] for c in pdf}
    deck = " | ".join(f"{c['location']}: {c['text']}" for c in by_doc["deck.pptx"])
    assert {c["location"] for c in by_doc["deck.pptx"]} <= {"slide 1", "slides 1-2", "slide 2"}, deck
    assert any(c["location"] in ("slide 2", "slides 1-2") and "March" in c["text"] for c in by_doc["deck.pptx"])
    docx_paths = {p for c in by_doc["handbook.docx"] for p in (c["location"] or "").split("; ")}
    assert {"Operations", "Operations > Storm recovery", "Staffing"} <= docx_paths
    html_paths = {p for c in by_doc["port.html"] for p in (c["location"] or "").split("; ")}
    assert {"Port guide", "Port guide > Anchorage"} <= html_paths
    every_text = "\n".join(r["text"] for r in rows)
    for boilerplate in (*BOILERPLATE, "About us", "Privacy policy", "Cookie settings"):
        assert boilerplate not in every_text


def test_a_cited_source_resolves_to_its_page_in_the_envelope_the_stored_trace_and_the_page(indexed, fake_llm):
    with Engine(indexed["cfg"]) as eng:
        result = eng.query(LocalQuery(question="What does the Brightwater turbine feed in Ellis?"))
        envelope = result.to_dict()
        stored = eng.retrieval(envelope["retrieval_id"])["retrieval"]
        page = eng.retrieval_page(envelope["retrieval_id"])
        basic = eng.query(BasicQuery(question="What does the Brightwater turbine feed in Ellis?")).to_dict()
    ref = int(re.search(r"Sources \((\d+)\)", result.answer or "").group(1))  # type: ignore[union-attr]
    cited = envelope["trace"]["citations"]["cited_sources"]
    assert len(cited) == 1 and cited[0]["ref"] == ref
    with Store(indexed["cfg"].neo4j) as store:
        node = q(store, "MATCH (c:Chunk {id: $id})-[:PART_OF]->(d) RETURN c.text AS text, c.location AS location, "
                        "d.title AS doc", id=cited[0]["id"])[0]  # fmt: skip
    assert node["doc"] == "report.pdf" and KEY in node["text"]
    assert cited[0]["location"] == node["location"] == "page 2"
    item = next(i for i in envelope["trace"]["items"] if i["id"] == cited[0]["id"] and i["status"] == "included")
    assert item["location"] == "page 2"
    assert stored["trace"]["citations"]["cited_sources"] == cited
    assert next(i for i in stored["trace"]["items"] if i["id"] == cited[0]["id"])["location"] == "page 2"
    assert f'<span data-cited-id="{cited[0]["id"]}"><b>{ref}</b> page 2</span>' in page
    assert '"location":"page 2"' in page  # the items table's row for the chunk
    # basic search resolves its citations the same way
    basic_cited = basic["trace"]["citations"]["cited_sources"]
    assert [(c["id"], c["location"]) for c in basic_cited] == [(cited[0]["id"], "page 2")]
