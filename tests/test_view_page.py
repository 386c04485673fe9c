"""The retrieval page (driftgraph/view): saved traces rendered and opened in headless Chromium, and the subgraph
read from a real Neo4j.

Chromium is Debian's ``chromium`` package (``apt-get install -y chromium``); missing, these tests skip on a dev
machine and FAIL under CI (env CI set), like the Neo4j fixtures. Screenshots are kept in
``.driftgraph/artifacts/view/`` (not committed) to look at after a run.
"""

from __future__ import annotations

import copy
import json
import os
import re
import shutil
import subprocess
import time
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from driftgraph.view import fetch_subgraph, render_page
from tests.conftest import make_config

ROOT = Path(__file__).resolve().parent.parent
TRACES = ROOT / "tests" / "data" / "traces"
ARTIFACTS = ROOT / ".driftgraph" / "artifacts" / "view"
FIXTURES = sorted(p.stem for p in TRACES.glob("*.json"))
PAGE_SIZE = 200


@pytest.fixture(scope="session")
def chromium() -> str:
    path = os.environ.get("DRIFTGRAPH_CHROMIUM") or next(
        (p for p in (shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome")) if p), None
    )
    if not path:
        message = "no headless browser: install Debian's chromium (apt-get install -y chromium)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return path


def _browser(chromium: str, tmp: Path, *args: str) -> subprocess.CompletedProcess:
    profile = tmp / f"profile-{time.monotonic_ns()}"
    cmd = [chromium, "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run", "--hide-scrollbars"]
    cmd += ["--disable-extensions", "--disable-background-networking", f"--user-data-dir={profile}", *args]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    shutil.rmtree(profile, ignore_errors=True)
    return res


def dump_dom(chromium: str, page: Path, fragment: str = "") -> str:
    """The DOM after the page's scripts ran."""
    res = _browser(chromium, page.parent, "--dump-dom", page.as_uri() + fragment)
    assert res.returncode == 0 and "<html" in res.stdout, res.stderr[-2000:]
    return res.stdout


def screenshot(chromium: str, page: Path, name: str) -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    out = ARTIFACTS / f"{name}.png"
    out.unlink(missing_ok=True)
    res = _browser(chromium, page.parent, f"--screenshot={out}", "--window-size=1400,2000", page.as_uri())
    assert res.returncode == 0 and out.is_file() and out.stat().st_size > 20_000, res.stderr[-2000:]
    return out


class Dom(HTMLParser):
    """Every element's tag and attributes, and whether it sits inside the graph's <svg>."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.elements: list[tuple[str, dict[str, str], bool]] = []
        self._stack: list[str] = []
        self._svg = 0
        self.feed(text)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if tag == "svg" and "graph" in a.get("class", "").split():
            self._svg += 1
        self.elements.append((tag, a, self._svg > 0))
        self._stack.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag in self._stack:
            while self._stack:
                top = self._stack.pop()
                if top == "svg" and self._svg and not any(t == "svg" for t in self._stack):
                    self._svg = 0
                if top == tag:
                    break

    def with_attr(self, name: str) -> list[tuple[str, dict[str, str], bool]]:
        return [e for e in self.elements if name in e[1]]

    def rows(self) -> list[dict[str, str]]:
        return [a for t, a, _ in self.elements if t == "tr" and "data-status" in a]


def load(name: str) -> dict[str, Any]:
    return json.loads((TRACES / f"{name}.json").read_text())


def write_page(tmp_path: Path, name: str, retrieval: dict[str, Any], graph: dict[str, Any]) -> Path:
    page = tmp_path / f"{name}.html"
    page.write_text(render_page(retrieval, graph), encoding="utf-8")
    return page


def items_of(retrieval: dict[str, Any]) -> list[dict[str, Any]]:
    return retrieval["retrieval"]["trace"]["items"]


def assert_graph_nodes(dom: Dom, graph: dict[str, Any]) -> None:
    """Exactly one element with data-node-id per subgraph node, each a <g> inside the graph's <svg>."""
    marked = dom.with_attr("data-node-id")
    ids = [a["data-node-id"] for _, a, _ in marked]
    assert sorted(ids) == sorted(str(n["id"]) for n in graph["nodes"])
    assert all(tag == "g" and in_svg for tag, _, in_svg in marked)


def test_fixtures_are_there() -> None:
    assert {"local", "basic", "drift", "global"} <= set(FIXTURES)


@pytest.mark.parametrize("name", FIXTURES)
def test_page_in_chromium(name: str, chromium: str, tmp_path: Path) -> None:
    fx = load(name)
    retrieval, graph = fx["retrieval"], fx["graph"]
    page = write_page(tmp_path, name, retrieval, graph)
    html = page.read_text()
    # self-contained: nothing to fetch
    assert not re.search(r"""(?:src|href)\s*=\s*["']?(?:https?:)?//|@import|url\(\s*["']?(?:https?:)?//""", html)
    dom = Dom(dump_dom(chromium, page))
    included = {str(i["id"]) for i in items_of(retrieval) if i["status"] == "included"}
    assert included, "a fixture without included items tests nothing"
    assert included <= {a["data-item-id"] for _, a, _ in dom.with_attr("data-item-id")}
    assert_graph_nodes(dom, graph)
    rows = dom.rows()
    assert len(rows) == min(PAGE_SIZE, len(items_of(retrieval)))
    mode = retrieval["retrieval"]["mode"]
    if mode == "drift":
        assert {s["id"] for s in graph["steps"]} == {a["data-step-id"] for _, a, _ in dom.with_attr("data-step-id")}
        uncovered = [s for s in graph["steps"] if s["status"] == "uncovered"]
        assert uncovered and any(a.get("id") == "uncovered" for _, a, _ in dom.elements)
        assert retrieval["retrieval"]["stop_reason"] in html
    if mode == "global":
        reports = retrieval["retrieval"]["trace"]["reports"]
        assert {r["id"] for r in reports} == {a["data-report-id"] for _, a, _ in dom.with_attr("data-report-id")}
    if mode == "local":
        entry = retrieval["retrieval"]["trace"]["entry"]
        assert {e["id"] for e in entry} == {a["data-entry-id"] for _, a, _ in dom.with_attr("data-entry-id")}
        assert "min_similarity 0.420" in html and "chunk_min_similarity" in html
    for phase in retrieval["retrieval"]["cost"].get("phases") or {}:
        assert any(a.get("data-phase") == phase for _, a, _ in dom.elements)
    screenshot(chromium, page, name)


def test_hash_filters_and_sorts_the_table(chromium: str, tmp_path: Path) -> None:
    fx = load("local")
    items = items_of(fx["retrieval"])
    page = write_page(tmp_path, "local", fx["retrieval"], fx["graph"])
    dropped = [i for i in items if i["status"] == "dropped"]
    assert 0 < len(dropped) < len(items)

    rows = Dom(dump_dom(chromium, page, "#filter=dropped")).rows()
    assert len(rows) == len(dropped) and {r["data-status"] for r in rows} == {"dropped"}

    dom = Dom(dump_dom(chromium, page, "#filter=included&source=entity&sort=tokens&dir=desc"))
    want = sorted(
        (i for i in items if i["status"] == "included" and i["source"] == "entity"), key=lambda i: -i["tokens"]
    )
    assert [r["data-item-id"] for r in dom.rows()] == [str(i["id"]) for i in want]

    target = dropped[-1]["id"]
    rows = Dom(dump_dom(chromium, page, f"#q={target}")).rows()
    assert [r["data-item-id"] for r in rows] == [target]


def big_trace(n_items: int = 5000, n_nodes: int = 300) -> tuple[dict[str, Any], dict[str, Any]]:
    """The local fixture blown up: thousands of items, a full-size subgraph."""
    fx = load("local")
    retrieval = copy.deepcopy(fx["retrieval"])
    sources = ["chunk", "entity", "relationship", "claim", "report"]
    items = []
    for k in range(n_items):
        status = "included" if k % 2 == 0 else "dropped"
        items.append(
            {
                "source": sources[k % 5],
                "id": f"item-{k:05d}",
                "tokens": 10 + k % 97,
                "status": status,
                "reason": None if status == "included" else "budget",
                "rank": k // 5 + 1,
                "hop": "entity",
                "score": round(1 - k / n_items, 4),
            }
        )
    retrieval["retrieval"]["trace"]["items"] = items
    kinds = ["entity", "chunk", "report", "claim"]
    nodes = [
        {"id": f"item-{k:05d}", "kind": kinds[k % 4], "label": f"node {k}", "text": f"text {k}", "status": "included"}
        for k in range(0, 2 * n_nodes, 2)
    ]
    links = [
        {"source": nodes[k]["id"], "target": nodes[(k * 7 + 3) % n_nodes]["id"], "type": "RELATED", "status": None}
        for k in range(n_nodes)
    ]
    return retrieval, {"nodes": nodes, "links": links, "total": 2500, "not_drawn": 2500 - n_nodes, "steps": []}


def test_thousands_of_items_paginate(chromium: str, tmp_path: Path) -> None:
    retrieval, graph = big_trace()
    started = time.perf_counter()
    html = render_page(retrieval, graph)
    assert time.perf_counter() - started < 10
    page = tmp_path / "big.html"
    page.write_text(html)
    dom = Dom(dump_dom(chromium, page))
    assert len(dom.rows()) == PAGE_SIZE
    included = {i["id"] for i in items_of(retrieval) if i["status"] == "included"}
    assert included <= {a["data-item-id"] for _, a, _ in dom.with_attr("data-item-id")}
    assert_graph_nodes(dom, graph)
    assert "2200</b> more not drawn" in html
    rows = Dom(dump_dom(chromium, page, "#page=3")).rows()
    assert [r["data-item-id"] for r in rows] == [f"item-{k:05d}" for k in range(400, 600)]
    rows = Dom(dump_dom(chromium, page, "#filter=dropped&page=13")).rows()  # 2500 dropped: the last page holds 100
    assert len(rows) == 100 and all(r["data-status"] == "dropped" for r in rows)
    assert [r["data-item-id"] for r in rows] == [f"item-{k:05d}" for k in range(4801, 5000, 2)]
    screenshot(chromium, page, "big")


EVIL = (
    '</script><script>document.body.setAttribute("data-pwned","1")</script>'
    "<img src=x onerror=\"document.body.setAttribute('data-pwned','2')\"><!-- &amp;\"'"
)


def evil_trace() -> tuple[dict[str, Any], dict[str, Any]]:
    fx = load("local")
    retrieval, graph = copy.deepcopy(fx["retrieval"]), copy.deepcopy(fx["graph"])
    retrieval["retrieval"]["query"] = EVIL
    retrieval["retrieval"]["trace"]["items"][0]["id"] = EVIL
    retrieval["retrieval"]["trace"]["items"][1]["reason"] = EVIL
    retrieval["retrieval"]["trace"]["entry"][0]["title"] = EVIL
    graph["nodes"][0]["text"] = EVIL
    graph["nodes"][1]["label"] = EVIL
    graph["nodes"][2]["id"] = EVIL
    for link in graph["links"]:
        for end in ("source", "target"):
            if link[end] == fx["graph"]["nodes"][2]["id"]:
                link[end] = EVIL
    return retrieval, graph


def test_database_text_is_escaped(chromium: str, tmp_path: Path) -> None:
    retrieval, graph = evil_trace()
    html = render_page(retrieval, graph)
    assert "<img" not in html and "<script>document" not in html
    blob = re.search(r'<script type="application/json" id="dg-data">(.*?)</script>', html, re.S)
    assert blob and EVIL in {row["id"] for row in json.loads(blob.group(1))["items"]}
    page = tmp_path / "evil.html"
    page.write_text(html)
    dom_text = dump_dom(chromium, page)
    dom = Dom(dom_text)
    assert not [t for t, _, _ in dom.elements if t == "img"]
    assert sum(1 for t, _, _ in dom.elements if t == "script") == 2
    assert not [a for _, a, _ in dom.elements if "data-pwned" in a]
    assert EVIL in {a["data-item-id"] for _, a, _ in dom.with_attr("data-item-id")}
    assert_graph_nodes(dom, graph)


def test_render_is_pure_and_deterministic() -> None:
    fx = load("drift")
    before = copy.deepcopy(fx)
    first = render_page(fx["retrieval"], fx["graph"])
    assert first == render_page(fx["retrieval"], fx["graph"]) and fx == before
    empty = render_page({"retrieval": {"id": "x", "mode": "local", "query": "q", "trace": {}}, "edges": []}, {})
    assert "Retrieval" in empty and "no subgraph" in empty


def test_fetch_subgraph_on_a_real_local_retrieval(dulce: dict) -> None:
    from driftgraph.api import open_engine
    from driftgraph.store.traces import read_retrieval

    cfg = make_config(dulce)
    with open_engine(cfg) as eng:
        res = eng.query_local("Who leads the team at Dulce base?", context_only=True, budget=1500)
        store = eng.store
        stored = read_retrieval(store, res.retrieval_id)
        started = time.perf_counter()
        graph = fetch_subgraph(store, res.retrieval_id)
        seconds = time.perf_counter() - started
        small = fetch_subgraph(store, res.retrieval_id, max_nodes=5)
    assert seconds < 5
    nodes = {n["id"]: n for n in graph["nodes"]}
    assert graph["not_drawn"] == 0 and graph["total"] == len(nodes) > 5 and graph["steps"] == []
    assert all(n["kind"] in ("entity", "chunk", "report", "claim") and n["text"].strip() for n in nodes.values())
    # a node's status is its own items' verdict (included wins); relationship endpoints follow the relationship
    own: dict[str, set[str]] = {}
    for e in stored["edges"]:
        if e["source"] != "relationship":
            own.setdefault(e["node_id"], set()).add(e["edge"])
    assert set(own) <= set(nodes)
    for nid, edges in own.items():
        assert nodes[nid]["status"] == ("included" if "INCLUDED" in edges else "dropped"), nid
        assert nodes[nid]["own"] is True
    items = stored["retrieval"]["trace"]["items"]
    for item in items:
        if item["source"] != "relationship" and item["status"] == "included":
            assert nodes[item["id"]]["status"] == "included"
    rel_items = {i["id"]: i["status"] for i in items if i["source"] == "relationship"}
    related = [lk for lk in graph["links"] if lk["type"] == "RELATED" and lk["id"] in rel_items]
    assert related and all(lk["status"] == rel_items[lk["id"]] for lk in related)
    assert all(lk["source"] in nodes and lk["target"] in nodes for lk in graph["links"])
    # bounded: the first five of the same order, included first, the rest counted
    assert [n["id"] for n in small["nodes"]] == [n["id"] for n in graph["nodes"][:5]]
    assert small["total"] == graph["total"] and small["not_drawn"] == graph["total"] - 5
    statuses = [n["status"] for n in graph["nodes"]]
    assert statuses == sorted(statuses, key=lambda s: s != "included")
    html = render_page(stored, graph)
    assert len(re.findall(r"<g [^>]*data-node-id=", html)) == len(nodes)
