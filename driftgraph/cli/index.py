"""`driftgraph index DIR`: build or update the index from documents."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from driftgraph.cli import app
from driftgraph.cli.common import ConfigOpt, JsonOpt, console, engine, print_json, state, synonym_line

if TYPE_CHECKING:
    from driftgraph import IndexSummary

EXIT_FAILURES = 3  # finished, but some items failed: a distinct code scripts can test


@app.command("index")
def index(
    directory: Annotated[
        Path, typer.Argument(help="Folder (or one file) of .txt .md .csv .json .jsonl .pdf .docx .pptx .html.")
    ],
    as_json: JsonOpt = False,
    config: ConfigOpt = None,
    reset: Annotated[
        bool,
        typer.Option(
            "--reset",
            help="Replace the database's index with this folder's; the old one is deleted only once the "
            "extraction has succeeded. Stored retrievals are kept.",
        ),
    ] = False,
    reset_traces: Annotated[
        bool, typer.Option("--reset-traces", help="With --reset: also delete the stored retrievals.")
    ] = False,
    estimate: Annotated[
        bool, typer.Option("--estimate", help="Print calls, tokens and price per stage; make no chat call.")
    ] = False,
    confirm: Annotated[bool, typer.Option("--confirm", help="Show the estimate first and ask before running.")] = False,
    batch: Annotated[
        bool, typer.Option("--batch", help="All chat calls through the Batch API (half price, slower); resumable.")
    ] = False,
    allow_failures: Annotated[
        bool,
        typer.Option(
            "--allow-failures", help="Exit 0 even when chunks or reports failed or files were skipped (listed)."
        ),
    ] = False,
) -> None:
    """Index documents into Neo4j: extract, merge, cluster, report, embed. Re-runs resume and update.

    Exit codes: 0 complete; 3 finished with failures (chunks, reports or summaries that failed are listed in
    the summary, never cached, and retried by the next run) or with files skipped (each listed with its reason:
    empty, too large, encrypted, no text layer, corrupt, a format library missing); --allow-failures exits 0;
    1 an error stopped the run (one line on stderr, e.g. the LLM endpoint refused the key).
    """
    if config is not None:
        state.config_path = config
    if reset_traces and not reset:
        raise typer.BadParameter("--reset-traces only goes with --reset", param_hint="--reset-traces")
    with engine() as eng:
        if estimate or confirm:
            est = eng.estimate_index(directory, batch=batch)
            if as_json and estimate:
                print_json(est)
            else:
                render_estimate(est)
            if estimate:
                return
            if not typer.confirm("Run the index?", default=False, err=True):
                raise typer.Exit(1)
        summary: IndexSummary = eng.index(directory, reset=reset, reset_traces=reset_traces, progress=True, batch=batch)
    if as_json:
        print_json(summary.to_dict())
    else:
        render_summary(summary)
    failed, skipped = summary.failures.count, len(summary.load.skipped)
    if failed and not allow_failures:
        typer.echo(f"index finished with {failed} failures (listed above; the next run retries them): exit 3", err=True)
        raise typer.Exit(EXIT_FAILURES)
    if skipped and not allow_failures:  # a file of the folder is not in the index: as loud as a failed chunk
        typer.echo(f"index finished with {skipped} files skipped (listed above with their reasons): exit 3", err=True)
        raise typer.Exit(EXIT_FAILURES)


def render_summary(s: IndexSummary) -> None:
    """The index summary as `index` and `documents add|replace|delete` print it."""
    from rich.markup import escape  # file names, reasons and model errors are text, never markup

    out = console()
    d = s.documents
    out.print(
        f"documents {d.total} (added {d.added}, removed {d.removed}, "
        + (f"replaced {d.replaced}, " if d.replaced else "")
        + f"unchanged {d.unchanged}), "
        f"chunks {s.chunks}, entities {s.entities}, relationships {s.relationships}, "
        f"claims {s.claims}, communities {s.communities} on {s.levels} levels, reports {s.reports}"
    )
    r = s.redone
    out.print(
        f"LLM calls {s.llm_calls} (cache hits {s.cache_hits}), tokens {s.tokens.prompt} in / "
        f"{s.tokens.completion} out; reports generated {r.reports_generated}, reused {r.reports_reused}"
        + (
            f", none for {r.reports_skipped_small} communities under index.report_min_size"
            if r.reports_skipped_small
            else ""
        )
    )
    out.print(synonym_line(r.synonyms.to_dict()), style="yellow" if r.synonyms.too_many else None)
    f = s.failures
    if f.count:
        out.print(f"[yellow]failures: {f.count}[/] (chunks {len(f.chunks)}, reports {len(f.reports)})")
        for item in f.chunks[:10]:
            out.print(f"  chunk {item.chunk_id[:12]} of {escape(item.document)}: {escape('; '.join(item.errors))}")
    for skipped in s.load.skipped:
        out.print(f"[yellow]skipped[/] {escape(skipped['path'])}: {escape(skipped['reason'])}")
    for warned in s.load.warnings:
        out.print(f"[yellow]warning[/] {escape(warned['path'])}: {escape(warned['warning'])}")
    out.print("seconds: " + ", ".join(f"{k} {v}" for k, v in s.seconds.items()))


def render_estimate(e: dict[str, Any]) -> None:
    """The estimate as a table on stderr-free stdout: one row per stage, then the total; each with its bound
    (every reply and input at its cap) and its expected figure (typical replies: what to budget with)."""
    from rich.table import Table

    table = Table(
        title=f"index estimate: {e['documents']} documents, {e['chunks']} chunks, model {e['model']}",
        caption="≤: at most (every reply at its cap); ~: expected (typical replies, the graph they would make)",
    )
    cols = ("stage", "calls ≤", "~", "cached", "prompt ≤", "~", "completion ≤", "~", "USD ≤", "~", "basis")
    for col in cols:
        table.add_column(col, justify="left" if col in ("stage", "basis") else "right", no_wrap=col == "stage")

    def money(v: float | None) -> str:
        return "?" if v is None else f"{v:.4f}"

    def cells(r: dict[str, Any]) -> list[str]:
        return [
            str(r["calls"]),
            str(r["expected_calls"]),
            str(r["cached"]),
            str(r["prompt_tokens"]),
            str(r["expected_prompt_tokens"]),
            str(r["completion_tokens_max"]),
            str(r["expected_completion_tokens"]),
            money(r["price_usd"]),
            money(r["expected_price_usd"]),
        ]

    for r in e["stages"]:
        table.add_row(r["stage"], *cells(r), r["basis"])
    table.add_row("total", *cells(e["total"]), "")
    out = console()
    out.print(table)
    if e["note"]:
        out.print(f"[yellow]{e['note']}[/]")
