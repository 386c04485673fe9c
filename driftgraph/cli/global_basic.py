"""`driftgraph query global|basic`: GraphRAG's other two modes, on the same envelope and trace as local."""

from __future__ import annotations

from typing import Annotated

import typer

from driftgraph.cli.common import JsonOpt, engine
from driftgraph.cli.query import BudgetOpt, ContextOnlyOpt, StreamOpt, _printer, print_result, query_app


@query_app.command("global")
def query_global(
    question: Annotated[str, typer.Argument(help="The question.")],
    level: Annotated[
        int | None, typer.Option("--level", min=0, help="Community level to read (default: global.level).")
    ] = None,
    dynamic: Annotated[
        bool | None,
        typer.Option(
            "--dynamic/--no-dynamic",
            help="Start at the roots and descend only into reports rated relevant; --level then caps the depth "
            "(default: global.dynamic).",
        ),
    ] = None,
    as_json: JsonOpt = False,
    budget: BudgetOpt = None,
    seed: Annotated[int | None, typer.Option("--seed", min=0, help="Report order seed (default: global.seed).")] = None,
    stream: StreamOpt = False,
) -> None:
    """Global search: map the community reports in token-bounded batches, reduce the best key points."""
    on_token = _printer() if stream and not as_json else None
    with engine() as eng:
        result = eng.query_global(question, level=level, dynamic=dynamic, budget=budget, seed=seed, on_token=on_token)
    print_result(result, as_json=as_json, streamed=on_token is not None)
    if not as_json:
        _global_summary(result.trace)


@query_app.command("basic")
def query_basic(
    question: Annotated[str, typer.Argument(help="The question.")],
    context_only: ContextOnlyOpt = False,
    as_json: JsonOpt = False,
    budget: BudgetOpt = None,
    stream: StreamOpt = False,
) -> None:
    """Basic search: the nearest chunks until the budget is full, one answer (the baseline to compare)."""
    on_token = _printer() if stream and not as_json and not context_only else None
    with engine() as eng:
        result = eng.query_basic(question, context_only=context_only, budget=budget, on_token=on_token)
    print_result(result, as_json=as_json, streamed=on_token is not None, context_only=context_only)


def _global_summary(trace: dict) -> None:
    from rich.console import Console

    m, sel = trace.get("map") or {}, trace.get("selection") or {}
    Console(stderr=True).print(
        f"[dim]{sel.get('mode')} level {sel.get('level')}: {sel.get('visited')} reports visited, "
        f"{sel.get('rate_calls')} rating calls, {sel.get('selected')} mapped in {m.get('batches')} batches "
        f"({m.get('calls')} map calls, {m.get('malformed')} malformed, {m.get('repaired')} repaired), "
        f"{m.get('points')} points[/]",
        highlight=False,
        soft_wrap=True,
    )
