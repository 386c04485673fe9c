"""`driftgraph query local ...`: the query command group. Other modes attach to ``query_app`` from their own
modules (``from driftgraph.cli.query import query_app, print_result``)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from driftgraph.cli import app
from driftgraph.cli.common import JsonOpt, engine, fail, print_json

query_app = typer.Typer(no_args_is_help=True, help="Ask questions: local (more modes attach here).")
app.add_typer(query_app, name="query")

BudgetOpt = Annotated[
    int | None, typer.Option("--budget", min=1, help="Fix the context budget in tokens (else derived).")
]
ContextOnlyOpt = Annotated[bool, typer.Option("--context-only", help="Assemble the context; no answer call.")]
StreamOpt = Annotated[bool, typer.Option("--stream", help="Print the answer as it is generated.")]


@query_app.command("local")
def query_local(
    question: Annotated[str, typer.Argument(help="The question.")],
    context_only: ContextOnlyOpt = False,
    as_json: JsonOpt = False,
    budget: BudgetOpt = None,
    history: Annotated[
        Path | None, typer.Option("--history", help="JSON file: a list of {role, content} turns.")
    ] = None,
    exclude_entity: Annotated[
        list[str] | None, typer.Option("--exclude-entity", help="Entity title or id never to use (repeatable).")
    ] = None,
    route: Annotated[
        str | None, typer.Option("--route", help="auto | fact | relational | thematic (default: config).")
    ] = None,
    stream: StreamOpt = False,
) -> None:
    """Local search: entry entities and chunks, one expansion query, a budgeted context, a cited answer."""
    from driftgraph.query.history import load_history

    if route is not None and route not in ("auto", "fact", "relational", "thematic"):
        fail(f"--route must be auto, fact, relational or thematic, not '{route}'")
    turns = load_history(history) if history is not None else None
    on_token = _printer() if stream and not as_json and not context_only else None
    with engine() as eng:
        result = eng.query_local(
            question,
            context_only=context_only,
            budget=budget,
            history=turns,
            exclude=exclude_entity or (),
            route=route,
            on_token=on_token,
        )
    print_result(result, as_json=as_json, streamed=on_token is not None, context_only=context_only)


def _printer() -> Any:
    def on_token(text: str) -> None:
        typer.echo(text, nl=False)

    return on_token


def print_result(result: Any, *, as_json: bool, streamed: bool = False, context_only: bool = False) -> None:
    """The shared rendering of a ``SearchResult``: JSON envelope, or answer + a one-line trace summary."""
    if as_json:
        print_json(result.to_dict())
        return
    if context_only:
        typer.echo(result.context.text)
    elif streamed:
        typer.echo("")
    else:
        typer.echo(result.answer or "")
    trace = result.trace
    b = trace.get("budget") or {}
    included = sum(1 for i in trace.get("items", []) if i["status"] == "included")
    dropped = sum(1 for i in trace.get("items", []) if i["status"] == "dropped")
    route = (trace.get("route") or {}).get("shape", "-")
    from rich.console import Console

    Console(stderr=True).print(
        f"[dim]retrieval {result.retrieval_id or '(not stored)'} | route {route} | context "
        f"{result.context.tokens}/{b.get('context', result.context.budget)} tokens | {included} items in, "
        f"{dropped} dropped | {trace.get('round_trips')} round trips | `driftgraph trace show "
        f"{result.retrieval_id}`[/]",
        highlight=False,
        soft_wrap=True,
    )
