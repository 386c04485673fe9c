"""`driftgraph trace show|cypher|html|open|list|prune`: look at stored retrievals, in the terminal, a web
page or Neo4j Browser."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from driftgraph.cli import app
from driftgraph.cli.common import JsonOpt, console, engine, print_json

trace_app = typer.Typer(no_args_is_help=True, help="Inspect and prune stored retrieval traces.")
app.add_typer(trace_app, name="trace")

IdArg = Annotated[str, typer.Argument(help="Retrieval id (printed by every query, and by `trace list`).")]


@trace_app.command("show")
def trace_show(retrieval_id: IdArg, as_json: JsonOpt = False) -> None:
    """Print a stored retrieval: budget arithmetic, route, entry points, included and dropped items."""
    with engine() as eng:
        data = eng.retrieval(retrieval_id)
    if as_json:
        print_json(data)
        return
    _render(data)


@trace_app.command("cypher")
def trace_cypher(retrieval_id: IdArg) -> None:
    """Print the Cypher that shows this retrieved subgraph in Neo4j Browser."""
    with engine() as eng:
        text = eng.retrieval_cypher(retrieval_id)  # fails clearly on an unknown id
    typer.echo(text)


PAGES_DIR = Path(".driftgraph") / "retrievals"
OutOpt = Annotated[
    Path | None, typer.Option("--out", "-o", help="Where to write it (default .driftgraph/retrievals/ID.html).")
]


def _write_page(retrieval_id: str, out: Path | None) -> Path:
    """Render the page through the API (fails clearly on an unknown id) and write it; returns the path."""
    with engine() as eng:
        html = eng.retrieval_page(retrieval_id)
    path = out if out is not None else PAGES_DIR / f"{_safe_name(retrieval_id)}.html"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(html, encoding="utf-8")
    return path.resolve()


def _safe_name(retrieval_id: str) -> str:
    """Ids are UUIDs; anything else still cannot climb out of the pages directory."""
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in retrieval_id).lstrip(".") or "retrieval"


@trace_app.command("html")
def trace_html(retrieval_id: IdArg, out: OutOpt = None) -> None:
    """Write a stored retrieval as one self-contained HTML page (budget, route, entry, items, subgraph, cost)."""
    typer.echo(str(_write_page(retrieval_id, out)))


@trace_app.command("open")
def trace_open(retrieval_id: IdArg, out: OutOpt = None) -> None:
    """Write the retrieval page and open it in the desktop browser; without one, print where it is."""
    path = _write_page(retrieval_id, out)
    if _has_desktop_browser():
        import webbrowser

        if webbrowser.open(path.as_uri()):
            typer.echo(f"opened {path}")
            return
    typer.echo(f"no desktop browser here; the page is {path}")


def _has_desktop_browser() -> bool:
    """A browser the user can see: macOS or Windows, a display on Linux, or one named in $BROWSER."""
    import os
    import sys

    if os.environ.get("BROWSER") or sys.platform in ("darwin", "win32"):
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


@trace_app.command("list")
def trace_list(
    limit: Annotated[int, typer.Option("--limit", "-n", min=1, help="How many, newest first.")] = 20,
    as_json: JsonOpt = False,
) -> None:
    """The most recent retrievals."""
    with engine() as eng:
        rows = eng.retrievals(limit)
    if as_json:
        print_json(rows)
        return
    for r in rows:
        typer.echo(f"{r['id']}  {r['created_at'][:19]}  {r['mode']:<7} {r['query'][:80]}")


@trace_app.command("prune")
def trace_prune(
    older_than: Annotated[str, typer.Option("--older-than", help="Age such as 30d, 12h, 2w.")],
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Only count.")] = False,
) -> None:
    """Delete retrievals (and their DRIFT steps) older than the given age."""
    from driftgraph.api import parse_age

    age = parse_age(older_than)
    with engine() as eng:
        n = eng.prune_retrievals(age, dry_run=dry_run)
    typer.echo(f"{'would delete' if dry_run else 'deleted'} {n} retrievals older than {older_than}")


def _render(data: dict[str, Any]) -> None:
    """Stored text (the question, titles, reasons, errors) is escaped or printed without markup: a question
    holding ``[/]`` or ``[bold]`` is shown as typed, never read as Rich markup."""
    from rich.table import Table

    ret = data["retrieval"]
    trace = ret.get("trace") or {}
    out = console()
    out.print(f"[bold]{_e(ret['id'])}[/]  mode={_e(ret.get('mode'))}  created={_e(ret.get('created_at'))}")
    plain = {"markup": False, "highlight": False, "soft_wrap": True}
    out.print(f"query: {ret.get('query')}", **plain)
    if trace.get("rewrite"):
        rw = trace["rewrite"]
        out.print(f"rewrite: {rw.get('rewritten')!r} ({rw.get('reason')})", **plain)
    if trace.get("budget"):
        b = trace["budget"]
        out.print(
            f"budget: window {b['window']} - answer {b['answer_reserve']} - prompt {b['prompt']} - question "
            f"{b['question']} - history {b['history']} = {b['derived']}; cap {b['cap']} -> context {b['context']}"
            + (" (fixed)" if b.get("fixed") else "")
        )
    if trace.get("route"):
        out.print(route_line(trace["route"]), **plain)  # one line, brackets as they are
    if trace.get("absent_sources"):
        out.print(f"absent sources: {', '.join(trace['absent_sources'])}", **plain)
    out.print(f"round trips: {trace.get('round_trips')}  stop: {ret.get('stop_reason')}", **plain)
    for note in trace.get("notes") or []:  # e.g. the answer check, a partial global map
        out.print(f"note: {note}", **plain)
    if trace.get("error"):
        out.print(f"error: {trace['error'].get('message')}", **plain)
    if ret.get("cost"):
        out.print(cost_table(ret["cost"]))
    if trace.get("entry"):
        t = Table("entry", "title", "score", "status", "reason", title="entry candidates")
        for e in trace["entry"]:
            t.add_row(
                _e(e.get("kind", "entity")),
                _e(str(e["title"])[:50]),
                f"{e['score']:.3f}",
                _e(e["status"]),
                _e(e.get("reason") or ""),
            )
        out.print(t)
    items = trace.get("items") or []
    t = Table("source", "rank", "id", "tokens", "status", "hop", "reason", title=f"items ({len(items)})")
    for i in items:
        t.add_row(
            _e(i["source"]),
            _e(i.get("rank", "")),
            _e(str(i["id"])[:24]),
            _e(i["tokens"]),
            _e(i["status"]),
            _e((i.get("hop") or "") + (f" via {i['via']}" if i.get("via") else "")),
            _e(i.get("reason") or ""),
        )
    out.print(t)
    if trace.get("citations"):
        out.print(f"citations: {trace['citations']}", **plain)


def _e(value: Any) -> str:
    """A stored value as literal text inside Rich markup (a table cell, a line that keeps its own markup)."""
    from rich.markup import escape

    return escape(str(value))


PLURAL = {"chunk": "chunks", "entity": "entities", "relationship": "relationships", "report": "reports"}


def route_line(route: dict[str, Any]) -> str:
    """The route as a sentence: ``route: fact (by rule: why); order chunk > entity ...; at least 3 chunks, ...``."""
    by = f"by {route['router']}: " if route.get("router") else ""
    order = " > ".join(str(o) for o in route.get("order") or []) or "none"
    floors = route.get("floors") or {}
    kept = ", ".join(f"{n} {PLURAL.get(str(k), str(k))}" for k, n in floors.items())
    room = f"always room for at least {kept}" if kept else "no floors"
    return f"route: {route.get('shape')} ({by}{route.get('reason', '')}); order {order}; {room}"


COST_COLUMNS = ("llm_calls", "prompt_tokens", "completion_tokens", "embedding_calls", "embedding_tokens", "cache_hits")


def cost_table(cost: dict[str, Any]) -> Any:
    """The cost ledger as one row per phase, then the total (the ledger's top level, else its ``total`` phase)."""
    from rich.table import Table

    phases = {k: v for k, v in (cost.get("phases") or {}).items() if isinstance(v, dict) and k != "total"}
    total = {k: cost[k] for k in COST_COLUMNS if k in cost} or (cost.get("phases") or {}).get("total") or {}
    table = Table("phase", *(c.replace("_", " ") for c in COST_COLUMNS), title="cost")
    for column in table.columns[1:]:
        column.justify = "right"
    for name, row in [*phases.items(), ("total", total)]:
        table.add_row(_e(name), *(_e(row.get(c, "")) for c in COST_COLUMNS), end_section=name == "total")
    extra = {k: v for k, v in cost.items() if k not in (*COST_COLUMNS, "phases")}
    if extra:
        table.caption = _e(", ".join(f"{k}={v}" for k, v in extra.items()))
    return table
