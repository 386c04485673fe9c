"""`driftgraph query global|basic`: GraphRAG's other two modes, on the same envelope and trace as local."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from driftgraph import BasicQuery, GlobalQuery
from driftgraph.cli.common import JsonOpt, engine, exit_partial, field_help
from driftgraph.cli.query import BudgetOpt, ContextOnlyOpt, StreamOpt, print_result, printer, query_app


@query_app.command("global")
def query_global(
    question: Annotated[str, typer.Argument(help=field_help(GlobalQuery, "question"))],
    level: Annotated[int | None, typer.Option("--level", min=0, help=field_help(GlobalQuery, "level"))] = None,
    dynamic: Annotated[
        bool | None,
        typer.Option(
            "--dynamic/--no-dynamic",
            help=field_help(GlobalQuery, "dynamic") + " --level then caps the depth.",
        ),
    ] = None,
    as_json: JsonOpt = False,
    budget: Annotated[int | None, typer.Option("--budget", min=1, help=field_help(GlobalQuery, "budget"))] = None,
    seed: Annotated[int | None, typer.Option("--seed", min=0, help=field_help(GlobalQuery, "seed"))] = None,
    max_llm_calls: Annotated[
        int | None, typer.Option("--max-llm-calls", min=1, help=field_help(GlobalQuery, "max_llm_calls"))
    ] = None,
    max_prompt_tokens: Annotated[
        int | None, typer.Option("--max-prompt-tokens", min=1, help=field_help(GlobalQuery, "max_prompt_tokens"))
    ] = None,
    history: Annotated[
        Path | None, typer.Option("--history", help="JSON file: a list of {role, content} turns.")
    ] = None,
    stream: StreamOpt = False,
) -> None:
    """Global search: map the community reports in token-bounded batches, reduce the best key points.

    Exit 3: a partial answer (some map batches gave no usable reply; the answer opens by saying so). Exit 1
    when no batch was usable (map_failed) or the answer failed its check twice (bad_answer)."""
    from driftgraph.api import load_history

    request = GlobalQuery(
        question=question,
        history=tuple(load_history(history)) if history is not None else (),
        level=level,
        dynamic=dynamic,
        budget=budget,
        seed=seed,
        max_llm_calls=max_llm_calls,
        max_prompt_tokens=max_prompt_tokens,
    )
    on_token = printer() if stream and not as_json else None
    with engine() as eng:
        result = eng.query(request, on_token=on_token)
    print_result(result, as_json=as_json, streamed=on_token is not None)
    if not as_json:
        _global_summary(result)
    exit_partial(result)  # some map batches gave no usable reply: the answer says so, exit 3


@query_app.command("basic")
def query_basic(
    question: Annotated[str, typer.Argument(help=field_help(BasicQuery, "question"))],
    context_only: ContextOnlyOpt = False,
    as_json: JsonOpt = False,
    budget: BudgetOpt = None,
    stream: StreamOpt = False,
) -> None:
    """Basic search: the nearest chunks until the budget is full, one answer (the baseline to compare)."""
    request = BasicQuery(question=question, context_only=context_only, budget=budget)
    on_token = printer() if stream and not as_json and not context_only else None
    with engine() as eng:
        result = eng.query(request, on_token=on_token)
    print_result(result, as_json=as_json, streamed=on_token is not None, context_only=context_only)
    exit_partial(result)


def _global_summary(result: Any) -> None:
    from rich.console import Console

    sel, batches = result.selection, result.batches
    Console(stderr=True).print(
        f"[dim]{sel.mode} level {sel.level}: {len(sel.states)} reports visited, "
        f"{sel.rate_calls} rating calls, {len(sel.selected)} mapped in {len(batches)} batches "
        f"({sum(b.calls for b in batches)} map calls, {sum(int(b.malformed) for b in batches)} malformed, "
        f"{sum(int(b.repaired) for b in batches)} repaired), {sum(len(b.points) for b in batches)} points[/]",
        highlight=False,
        soft_wrap=True,
    )
