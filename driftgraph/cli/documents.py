"""`driftgraph documents add|replace|delete|list|show`: change the index one document at a time."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from driftgraph.cli import app
from driftgraph.cli.common import JsonOpt, console, engine, fail, print_json
from driftgraph.cli.index import EXIT_FAILURES, render_summary

if TYPE_CHECKING:
    from driftgraph import DocumentChange

documents_app = typer.Typer(
    no_args_is_help=True,
    help="Add, replace, delete, list and show documents one at a time (the index is updated as `index` would).",
)
app.add_typer(documents_app, name="documents")

TextOpt = Annotated[str | None, typer.Option("--text", help="The document's text, instead of a file.")]
TitleOpt = Annotated[str | None, typer.Option("--title", help="The document's title (default: its file name).")]
MetaOpt = Annotated[
    list[str] | None, typer.Option("--meta", help="Metadata KEY=VALUE, repeatable; kept on the Document node.")
]
AllowOpt = Annotated[
    bool, typer.Option("--allow-failures", help="Exit 0 even when chunks or reports failed or files were skipped.")
]


@documents_app.command("add")
def add(
    path: Annotated[Path | None, typer.Argument(help="A file or folder; or give --text.")] = None,
    text: TextOpt = None,
    title: TitleOpt = None,
    doc_id: Annotated[
        str | None, typer.Option("--id", help="The document's id (default: the sha256 of its text).")
    ] = None,
    meta: MetaOpt = None,
    as_json: JsonOpt = False,
    allow_failures: AllowOpt = False,
) -> None:
    """Add documents. Text already stored under its id is a no-op; other text under a stored id is refused.

    Exit codes: 0 done (or nothing to do); 3 finished with failed chunks or reports, or files skipped (listed);
    1 an error (one line on stderr) and nothing changed.
    """
    with engine() as eng:
        change = eng.documents.add(
            _source(path, text), text=text, title=title, id=doc_id, metadata=_meta(meta), progress=not as_json
        )
    _finish(change, as_json, allow_failures)


@documents_app.command("replace")
def replace(
    doc_id: Annotated[str, typer.Argument(metavar="ID", help="The stored document to replace; it keeps this id.")],
    path: Annotated[Path | None, typer.Argument(help="The new file; or give --text.")] = None,
    text: TextOpt = None,
    title: TitleOpt = None,
    meta: MetaOpt = None,
    as_json: JsonOpt = False,
    allow_failures: AllowOpt = False,
) -> None:
    """Replace a document's content; what only its old text contributed is removed. Exit codes as `add`."""
    with engine() as eng:
        change = eng.documents.replace(
            doc_id, _source(path, text), text=text, title=title, metadata=_meta(meta), progress=not as_json
        )
    _finish(change, as_json, allow_failures)


@documents_app.command("delete")
def delete(
    doc_ids: Annotated[list[str], typer.Argument(metavar="ID...", help="Stored documents to delete.")],
    as_json: JsonOpt = False,
    allow_failures: AllowOpt = False,
) -> None:
    """Delete documents and every chunk, entity, relationship and claim only they contributed; reports are
    regenerated only for communities whose members changed. An unknown id deletes nothing (exit 1)."""
    with engine() as eng:
        change = eng.documents.delete(*doc_ids, progress=not as_json)
    _finish(change, as_json, allow_failures)


@documents_app.command("list")
def list_(as_json: JsonOpt = False) -> None:
    """The stored documents: id, title, size and chunks."""
    from rich.markup import escape

    with engine() as eng:
        docs = eng.documents.list()
    if as_json:
        print_json([d.to_dict() for d in docs])
        return
    out = console()
    for d in docs:
        out.print(f"{d.id[:16]}  {d.chunks:>4} chunks  {d.characters:>8} chars  {escape(d.title)}")
    out.print(f"{len(docs)} documents")


@documents_app.command("show")
def show(
    doc_id: Annotated[str, typer.Argument(metavar="ID")],
    as_json: JsonOpt = False,
) -> None:
    """One document with its metadata and text."""
    with engine() as eng:
        doc = eng.documents.get(doc_id)
    if as_json:
        print_json(doc.to_dict())
        return
    typer.echo(f"id: {doc.id}\ntitle: {doc.title}\nchunks: {doc.chunks}\nmetadata: {doc.metadata}\n")
    typer.echo(doc.text or "")


def _source(path: Path | None, text: str | None) -> Path | None:
    if (path is None) == (text is None):
        fail("give a path or --text (one of them)")
    return path


def _meta(items: list[str] | None) -> dict[str, str] | None:
    if not items:
        return None
    out = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise typer.BadParameter(f"{item!r} is not KEY=VALUE", param_hint="--meta")
        out[key.strip()] = value
    return out


def _finish(change: DocumentChange, as_json: bool, allow_failures: bool) -> None:
    from rich.markup import escape

    if as_json:
        print_json(change.to_dict())
    else:
        out = console()
        verb = {"add": "added", "replace": "replaced", "delete": "deleted"}[change.action]
        ids = ", ".join(i[:16] for i in change.documents) or "none"
        out.print(f"{verb}: {escape(ids)}" + (f"; already stored: {len(change.unchanged)}" if change.unchanged else ""))
        if change.index is not None:
            render_summary(change.index)
        else:
            out.print("nothing to change: the index already holds these documents")
    summary = change.index
    failed = summary.failures.count if summary else 0
    skipped = len(change.skipped)
    if (failed or skipped) and not allow_failures:
        what = f"{failed} failures" if failed else f"{skipped} files skipped"
        typer.echo(f"documents {change.action} finished with {what} (listed above): exit {EXIT_FAILURES}", err=True)
        raise typer.Exit(EXIT_FAILURES)
