"""`driftgraph query drift QUESTION`: DRIFT search with its stop rule, seed and step tree."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from driftgraph import DriftQuery
from driftgraph.cli.common import JsonOpt, engine, exit_partial, field_help, print_json
from driftgraph.cli.query import query_app


@query_app.command("drift")
def query_drift(
    question: Annotated[str, typer.Argument(help=field_help(DriftQuery, "question"))],
    seed: Annotated[int | None, typer.Option("--seed", min=0, help=field_help(DriftQuery, "seed"))] = None,
    as_json: JsonOpt = False,
    no_reduce: Annotated[bool, typer.Option("--no-reduce", help="Return the step tree, no final answer.")] = False,
    max_llm_calls: Annotated[
        int | None, typer.Option("--max-llm-calls", min=1, help=field_help(DriftQuery, "max_llm_calls"))
    ] = None,
    max_depth: Annotated[
        int | None, typer.Option("--max-depth", min=0, help=field_help(DriftQuery, "max_depth"))
    ] = None,
    max_prompt_tokens: Annotated[
        int | None, typer.Option("--max-prompt-tokens", min=1, help=field_help(DriftQuery, "max_prompt_tokens"))
    ] = None,
    history: Annotated[
        Path | None, typer.Option("--history", help="JSON file: a list of {role, content} turns.")
    ] = None,
    stream: Annotated[bool, typer.Option("--stream", help="Show progress and print the answer as it comes.")] = False,
) -> None:
    """DRIFT: a primer over community reports, then epochs of local searches on de-duplicated follow-ups,
    until the budget, a sufficient score, a plateau, an empty queue or the depth limit stops it."""
    from driftgraph.api import load_history

    request = DriftQuery(
        question=question,
        history=tuple(load_history(history)) if history is not None else (),
        seed=seed,
        reduce=False if no_reduce else None,
        max_llm_calls=max_llm_calls,
        max_depth=max_depth,
        max_prompt_tokens=max_prompt_tokens,
    )
    on_token = on_event = None
    if stream and not as_json:
        on_token = _echo
        on_event = _progress()
    with engine() as eng:
        result = eng.query(request, on_token=on_token, on_event=on_event)
    if as_json:
        print_json(result.to_dict())
        exit_partial(result)
        return
    if result.answer is None:
        _print_tree(result.steps)
    elif on_token is not None:
        typer.echo("")
        _removed_citations(result)
    else:
        typer.echo(result.answer)
    _summary(result)
    exit_partial(result)


def _echo(text: str) -> None:
    typer.echo(text, nl=False)


def _progress() -> Any:
    from rich.console import Console

    err = Console(stderr=True)

    def on_event(kind: str, data: dict[str, Any]) -> None:
        if kind == "primer":
            err.print(f"[dim]primer: score {data['score']}, {data['follow_ups']} follow-ups queued[/]")
        elif kind == "epoch":
            failed = f", {data['failed']} failed" if data.get("failed") else ""
            check = data.get("sufficient") or {}
            verdict = f"; sufficient: {'yes' if check.get('met') else 'no'} ({check.get('note')})" if check else ""
            err.print(
                f"epoch {data['depth']}: {data['ran']} steps{failed}, best {data['best_score']}, "
                f"mean {data['mean_score']}{verdict}",
                highlight=False,
                markup=False,
                style="dim",
                soft_wrap=True,
            )
        elif kind == "hyde" and data.get("error"):
            err.print(f"hyde: {data['error']}", markup=False, highlight=False, style="dim")  # an error's text, as is

    return on_event


def _print_tree(steps: list[Any]) -> None:
    """The question -> answer tree, children under their parent, in step order."""
    children: dict[str | None, list[Any]] = {}
    for s in steps:
        children.setdefault(s.parent, []).append(s)

    def walk(parent: str | None, indent: int) -> None:
        for s in children.get(parent, []):
            pad = "  " * indent
            score = "-" if s.score is None else f"{s.score:g}"
            typer.echo(f"{pad}{s.id} [{s.status}, score {score}] {s.query}")
            if s.answer:
                for line in s.answer.strip().splitlines():
                    typer.echo(f"{pad}    {line}")
            elif s.error:
                typer.echo(f"{pad}    ({s.error})")
            walk(s.id, indent + 1)

    walk(None, 0)


def _removed_citations(result: Any) -> None:
    """Streamed text cannot be corrected afterwards: say which cited ids were not shown to the model."""
    reduce = result.trace.extra.get("reduce") or {}
    invalid = (reduce.get("citations") or {}).get("invalid") or {}
    if invalid:
        from rich.console import Console

        ids = "; ".join(f"{label} {', '.join(v)}" for label, v in invalid.items())
        Console(stderr=True).print(
            f"cited but never shown (removed from the stored answer): {ids}", markup=False, style="yellow"
        )


def _summary(result: Any) -> None:
    from rich.console import Console

    count = {k: sum(1 for s in result.steps if s.status == k) for k in ("done", "failed", "uncovered")}
    cost = result.cost
    from rich.markup import escape

    summary = str(result.stop.get("summary") or "")
    why = f" ({escape(summary)})" if result.stop_reason == "sufficient" or "not sufficient" in summary else ""
    Console(stderr=True).print(
        f"[dim]retrieval {result.retrieval_id or '(not stored)'} | seed {result.seed} | stop "
        f"{result.stop_reason}{why} | steps {count['done']} done, {count['failed']} failed, "
        f"{count['uncovered']} uncovered | {cost.llm_calls} chat calls, {cost.prompt_tokens} prompt tokens"
        f" | `driftgraph trace show {result.retrieval_id}`[/]",
        highlight=False,
        soft_wrap=True,
    )
