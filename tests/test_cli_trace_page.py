"""`driftgraph trace html|open|show` on a real retrieval: the CLI writes the page, headless Chromium loads it.

The retrieval is a context-only local search on operation-dulce made through the CLI; the page must carry
every included item and draw one SVG node per node of the subgraph that Neo4j returns for it.
"""

from __future__ import annotations

import json
import stat
from html.parser import HTMLParser
from pathlib import Path

import pytest

from tests.conftest import make_config
from tests.support.browser import dump_dom, find_chromium, screenshot
from tests.support.cli import run_cli

ROOT = Path(__file__).resolve().parent.parent
ARTIFACTS = ROOT / ".driftgraph" / "artifacts" / "view"
QUESTION = "Who leads the team at Dulce base?"


class Marks(HTMLParser):
    """data-item-id values anywhere, and data-node-id values on <g> elements."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.items: set[str] = set()
        self.nodes: list[str] = []
        self.feed(text)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if "data-item-id" in a:
            self.items.add(a["data-item-id"])
        if tag == "g" and "data-node-id" in a:
            self.nodes.append(a["data-node-id"])


@pytest.fixture(scope="module")
def asked(dulce: dict, tmp_path_factory: pytest.TempPathFactory) -> dict:
    """One local search through the CLI; its envelope (retrieval_id, trace) and the neo4j settings."""
    from tests.support.fake_openai import FakeOpenAI

    fake = FakeOpenAI().start()
    try:
        cwd = tmp_path_factory.mktemp("asked")
        res = run_cli(["query", "local", QUESTION, "--context-only", "--budget", "1500", "--json"], dulce, fake, cwd)
        assert res.returncode == 0, res.stderr
        envelope = json.loads(res.stdout)
    finally:
        fake.stop()
    return {"neo4j": dulce, "envelope": envelope}


def _graph_node_ids(neo4j: dict, retrieval_id: str) -> list[str]:
    from driftgraph.api import open_engine
    from driftgraph.view import fetch_subgraph

    with open_engine(make_config(neo4j)) as eng:
        return [str(n["id"]) for n in fetch_subgraph(eng.store, retrieval_id)["nodes"]]


def test_trace_html_renders_a_real_retrieval_in_chromium(asked: dict, fake_llm, tmp_path: Path) -> None:
    chromium = find_chromium()
    rid = asked["envelope"]["retrieval_id"]
    out = tmp_path / "page" / "r.html"
    res = run_cli(["trace", "html", rid, "-o", str(out)], asked["neo4j"], fake_llm, tmp_path)
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == str(out.resolve()) and out.is_file()
    html = out.read_text(encoding="utf-8")
    assert QUESTION in html and "http://" not in html.replace("http://www.w3.org/2000/svg", "")

    dom = Marks(dump_dom(chromium, out))
    included = {str(i["id"]) for i in asked["envelope"]["trace"]["items"] if i["status"] == "included"}
    assert included and included <= dom.items
    nodes = _graph_node_ids(asked["neo4j"], rid)
    assert nodes and sorted(dom.nodes) == sorted(nodes)
    screenshot(chromium, out.as_uri(), ARTIFACTS / "cli-local.png", tmp_path)


def test_trace_html_default_path_and_unknown_id(asked: dict, fake_llm, tmp_path: Path) -> None:
    rid = asked["envelope"]["retrieval_id"]
    res = run_cli(["trace", "html", rid], asked["neo4j"], fake_llm, tmp_path)
    want = tmp_path / ".driftgraph" / "retrievals" / f"{rid}.html"
    assert res.returncode == 0 and res.stdout.strip() == str(want.resolve()) and want.is_file(), res.stderr

    res = run_cli(["trace", "html", "no-such-retrieval"], asked["neo4j"], fake_llm, tmp_path)
    assert res.returncode == 1 and "no retrieval with id 'no-such-retrieval'" in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1 and "Traceback" not in res.stderr


def test_trace_open_without_a_desktop_browser_prints_the_path(
    asked: dict, fake_llm, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for var in ("DISPLAY", "WAYLAND_DISPLAY", "BROWSER"):
        monkeypatch.delenv(var, raising=False)
    rid = asked["envelope"]["retrieval_id"]
    res = run_cli(["trace", "open", rid], asked["neo4j"], fake_llm, tmp_path)
    page = (tmp_path / ".driftgraph" / "retrievals" / f"{rid}.html").resolve()
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == f"no desktop browser here; the page is {page}" and page.is_file()


def test_trace_open_hands_the_page_to_the_browser(
    asked: dict, fake_llm, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen = tmp_path / "opened.txt"
    browser = tmp_path / "fake-browser"
    browser.write_text(f'#!/bin/sh\nprintf "%s" "$1" > "{seen}"\n')
    browser.chmod(browser.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("BROWSER", str(browser))
    rid = asked["envelope"]["retrieval_id"]
    out = tmp_path / "x.html"
    res = run_cli(["trace", "open", rid, "--out", str(out)], asked["neo4j"], fake_llm, tmp_path)
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == f"opened {out.resolve()}"
    assert seen.read_text() == out.resolve().as_uri() and out.is_file()


def test_trace_show_prints_the_cost_ledger_as_a_table(
    asked: dict, fake_llm, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    rid = asked["envelope"]["retrieval_id"]
    res = run_cli(["trace", "show", rid], asked["neo4j"], fake_llm, tmp_path)
    assert res.returncode == 0, res.stderr
    assert "'llm_calls'" not in res.stdout and "'phases'" not in res.stdout  # no raw dict any more
    cost = asked["envelope"]["cost"]
    lines = res.stdout.splitlines()
    header = next(ln for ln in lines if "phase" in ln and "llm calls" in ln)
    assert "embedding tokens" in header
    for phase in [p for p in cost["phases"] if p != "total"] + ["total"]:
        row = next(ln for ln in lines if ln.strip("│┃ ").startswith(phase + " "))
        values = [c.strip() for c in row.strip("│┃ ").split("│")]
        want = cost if phase == "total" else cost["phases"][phase]
        assert values[1:3] == [str(want["llm_calls"]), str(want["prompt_tokens"])], row
        assert values[5] == str(want["embedding_tokens"]), row


def test_trace_show_prints_the_route_and_its_floors_readably(asked: dict, fake_llm, tmp_path: Path) -> None:
    from driftgraph.cli.trace import route_line

    route = {"shape": "fact", "order": ["entity", "chunk"], "floors": {"chunk": 3, "entity": 2}, "reason": "a name",
             "router": "rule"}  # fmt: skip
    assert route_line(route) == (
        "route: fact (by rule: a name); order entity > chunk; always room for at least 3 chunks, 2 entities"
    )
    assert route_line({**route, "floors": {}}).endswith("; no floors")
    rid = asked["envelope"]["retrieval_id"]
    res = run_cli(["trace", "show", rid], asked["neo4j"], fake_llm, tmp_path)
    assert res.returncode == 0, res.stderr
    stored = asked["envelope"]["trace"]["route"]
    line = next(ln for ln in res.stdout.splitlines() if ln.startswith("route: "))
    assert line == route_line(stored) and "{" not in line and "[" not in line
    assert "always room for at least" in line  # the stored route has floors (local.chunk_floor is 3)


MARKUP_Q = "what is [/] and [bold]x[/bold]?"


def test_trace_show_prints_a_question_holding_rich_markup_as_typed(dulce: dict, fake_llm, tmp_path: Path) -> None:
    ask = run_cli(
        ["query", "local", MARKUP_Q, "--context-only", "--budget", "1500", "--json"], dulce, fake_llm, tmp_path
    )
    assert ask.returncode == 0, ask.stderr
    rid = json.loads(ask.stdout)["retrieval_id"]
    res = run_cli(["trace", "show", rid], dulce, fake_llm, tmp_path)
    assert res.returncode == 0, res.stderr  # "[/]" used to be a MarkupError: closing tag with nothing to close
    assert f"query: {MARKUP_Q}" in res.stdout.splitlines()
    listed = run_cli(["trace", "list", "-n", "50"], dulce, fake_llm, tmp_path)
    assert any(ln.startswith(rid) and ln.endswith(MARKUP_Q) for ln in listed.stdout.splitlines())
