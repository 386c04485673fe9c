"""`driftgraph import-graphrag DIR` and `driftgraph export-graphrag OUT`: Microsoft GraphRAG parquet <-> Neo4j."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from driftgraph.cli import app
from driftgraph.cli.common import JsonOpt, engine, print_json, synonym_line

if TYPE_CHECKING:
    from driftgraph import ExportSummary, ImportSummary


class _RichProgress:
    """One rich progress bar per table (on stderr, so `--json` output stays clean)."""

    def __init__(self, progress: Any) -> None:
        self._progress = progress

    def task(self, name: str, total: int | None) -> Callable[[int], None]:
        task_id = self._progress.add_task(name, total=total)
        return lambda n: self._progress.advance(task_id, n)


@contextmanager
def _progress() -> Iterator[_RichProgress]:
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    columns = (TextColumn("{task.description:<20}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=Console(stderr=True), transient=False) as progress:
        yield _RichProgress(progress)


@app.command("import-graphrag")
def import_graphrag(
    directory: Annotated[
        Path, typer.Argument(help="GraphRAG output folder (documents.parquet, entities.parquet, ...).")
    ],
    reset: Annotated[bool, typer.Option("--reset", help="Delete all driftgraph data and indexes first.")] = False,
    batch_size: Annotated[int | None, typer.Option("--batch-size", min=1, help="Rows per write transaction.")] = None,
    no_embed: Annotated[bool, typer.Option("--no-embed", help="Write the graph only; embed later.")] = False,
    as_json: JsonOpt = False,
) -> None:
    """Import a Microsoft GraphRAG index into Neo4j, keeping every GraphRAG id; safe to re-run."""
    with engine() as eng, _progress() as progress:
        summary: ImportSummary = eng.import_graphrag(
            directory, reset=reset, embed=False if no_embed else None, batch_size=batch_size, progress=progress
        )
    if as_json:
        print_json(summary.to_dict())
        return
    _print_summary(summary)


def _print_summary(summary: ImportSummary) -> None:
    counts = ", ".join(f"{k} {v}" for k, v in summary.counts.to_dict().items())
    typer.echo(f"imported {summary.source} in {summary.seconds} s: {counts}, RELATED {summary.relationships}")
    emb = summary.embedded
    if emb is None:
        typer.echo("embeddings: skipped (--no-embed)")
    else:
        kinds = [(k, emb.kinds[k]) for k in ("entity", "chunk", "community") if k in emb.kinds]
        parts = [f"{k} {e.embedded} embedded + {e.precomputed} precomputed" for k, e in kinds]
        typer.echo(f"embeddings ({emb.model}, {emb.dimensions}-d): " + ", ".join(parts))
        for k, e in kinds:
            if e.note:
                typer.echo(f"  {k}: {e.note}")
    typer.echo(synonym_line(summary.synonyms.to_dict()))
    for key, n in summary.warnings.items():
        example = (summary.warning_examples.get(key) or [""])[0]
        typer.echo(f"warning: {key}: {n} (e.g. {example})")


@app.command("export-graphrag")
def export_graphrag(
    out: Annotated[Path, typer.Argument(help="Folder to write the parquet tables to (created if missing).")],
    as_json: JsonOpt = False,
) -> None:
    """Write the graph back as GraphRAG parquet tables (documents, text_units, entities, ...)."""
    with engine() as eng, _progress() as progress:
        summary: ExportSummary = eng.export_graphrag(out, progress=progress)
    if as_json:
        print_json(summary.to_dict())
        return
    typer.echo(f"wrote {out}: " + ", ".join(f"{k} {v}" for k, v in summary.rows.items()))
