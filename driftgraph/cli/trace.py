"""`driftgraph trace show|cypher|list|prune`: look at stored retrievals, in the terminal or Neo4j Browser."""

from __future__ import annotations

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
    from rich.table import Table

    ret = data["retrieval"]
    trace = ret.get("trace") or {}
    out = console()
    out.print(f"[bold]{ret['id']}[/]  mode={ret.get('mode')}  created={ret.get('created_at')}")
    out.print(f"query: {ret.get('query')}")
    if trace.get("rewrite"):
        rw = trace["rewrite"]
        out.print(f"rewrite: {rw.get('rewritten')!r} ({rw.get('reason')})")
    if trace.get("budget"):
        b = trace["budget"]
        out.print(
            f"budget: window {b['window']} - answer {b['answer_reserve']} - prompt {b['prompt']} - question "
            f"{b['question']} - history {b['history']} = {b['derived']}; cap {b['cap']} -> context {b['context']}"
            + (" (fixed)" if b.get("fixed") else "")
        )
    if trace.get("route"):
        r = trace["route"]
        out.print(f"route: {r.get('shape')} order={r.get('order')} floors={r.get('floors')} ({r.get('reason', '')})")
    if trace.get("absent_sources"):
        out.print(f"absent sources: {', '.join(trace['absent_sources'])}")
    out.print(f"round trips: {trace.get('round_trips')}  stop: {ret.get('stop_reason')}  cost: {ret.get('cost')}")
    if trace.get("entry"):
        t = Table("entry", "title", "score", "status", "reason", title="entry candidates")
        for e in trace["entry"]:
            t.add_row(
                e.get("kind", "entity"), str(e["title"])[:50], f"{e['score']:.3f}", e["status"], e.get("reason") or ""
            )
        out.print(t)
    items = trace.get("items") or []
    t = Table("source", "rank", "id", "tokens", "status", "hop", "reason", title=f"items ({len(items)})")
    for i in items:
        t.add_row(
            i["source"],
            str(i.get("rank", "")),
            str(i["id"])[:24],
            str(i["tokens"]),
            i["status"],
            (i.get("hop") or "") + (f" via {i['via']}" if i.get("via") else ""),
            i.get("reason") or "",
        )
    out.print(t)
    if trace.get("citations"):
        out.print(f"citations: {trace['citations']}")
