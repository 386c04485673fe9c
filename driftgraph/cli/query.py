"""`driftgraph query local|drift|global|basic`: parse the flags into the mode's request, run it, render the result.

Exit codes (``cli/common.py``): 0 an answer; 1 an error, including a question left without an answer
(``bad_answer``, ``map_failed``: one line naming what failed and what to do); 3 a partial answer.

Flag help comes from the request models' field descriptions (``driftgraph.LocalQuery`` ...), the same text the
docs' request tables and the HTTP schema show. Other modes attach to ``query_app`` from their own modules.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from driftgraph import LocalQuery
from driftgraph.cli import app
from driftgraph.cli.common import JsonOpt, engine, exit_partial, fail, field_help, print_json

query_app = typer.Typer(no_args_is_help=True, help="Ask questions: local, drift, global or basic search.")
app.add_typer(query_app, name="query")

BudgetOpt = Annotated[int | None, typer.Option("--budget", min=1, help=field_help(LocalQuery, "budget"))]
ContextOnlyOpt = Annotated[bool, typer.Option("--context-only", help=field_help(LocalQuery, "context_only"))]
StreamOpt = Annotated[bool, typer.Option("--stream", help="Print the answer as it is generated.")]
ROUTES = ("auto", "fact", "relational", "thematic")


@query_app.command("local")
def query_local(
    question: Annotated[str, typer.Argument(help=field_help(LocalQuery, "question"))],
    context_only: ContextOnlyOpt = False,
    as_json: JsonOpt = False,
    budget: BudgetOpt = None,
    history: Annotated[
        Path | None, typer.Option("--history", help="JSON file: a list of {role, content} turns.")
    ] = None,
    exclude_entity: Annotated[
        list[str] | None,
        typer.Option("--exclude-entity", help=field_help(LocalQuery, "exclude") + " (repeatable)"),
    ] = None,
    route: Annotated[str | None, typer.Option("--route", help=field_help(LocalQuery, "route"))] = None,
    stream: StreamOpt = False,
) -> None:
    """Local search: entry entities and chunks, one expansion query, a budgeted context, a cited answer."""
    from driftgraph.api import load_history

    if route is not None and route not in ROUTES:
        fail(f"--route must be {', '.join(ROUTES[:-1])} or {ROUTES[-1]}, not '{route}'")
    turns = load_history(history) if history is not None else []
    request = LocalQuery(
        question=question,
        context_only=context_only,
        budget=budget,
        history=turns,
        exclude=tuple(exclude_entity or ()),
        route=route,
    )
    on_token = printer() if stream and not as_json and not context_only else None
    with engine() as eng:
        result = eng.query(request, on_token=on_token)
    print_result(result, as_json=as_json, streamed=on_token is not None, context_only=context_only)
    exit_partial(result)


def printer() -> Any:
    """An ``on_token`` callback that prints streamed answer text as it arrives."""

    def on_token(text: str) -> None:
        typer.echo(text, nl=False)

    return on_token


def print_result(result: Any, *, as_json: bool, streamed: bool = False, context_only: bool = False) -> None:
    """The shared rendering of a result: JSON envelope, or answer + a one-line trace summary on stderr."""
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
    budget = trace.budget.context if trace.budget is not None else result.context.budget
    included, dropped = len(trace.included()), len(trace.dropped())
    route = trace.route.shape if trace.route is not None else "-"
    from rich.console import Console

    Console(stderr=True).print(
        f"[dim]retrieval {result.retrieval_id or '(not stored)'} | route {route} | context "
        f"{result.context.tokens}/{budget} tokens | {included} items in, "
        f"{dropped} dropped | {trace.round_trips} round trips | `driftgraph trace show "
        f"{result.retrieval_id}`[/]",
        highlight=False,
        soft_wrap=True,
    )
