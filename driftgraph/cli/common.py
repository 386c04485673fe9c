"""Helpers every command module shares: config loading, the engine, errors and output."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import typer

if TYPE_CHECKING:
    from driftgraph.config import Config

ConfigOpt = Annotated[Path | None, typer.Option("--config", "-c", help="driftgraph.yaml to use.")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON.")]


class _State:
    config_path: Path | None = None
    debug: bool = False


state = _State()


# `query` exit codes: 0 an answer (or a context); 1 an error, and a question without an answer is one (the
# endpoint failed: stop_reason error; the model's answer failed its check twice: bad_answer; no global map
# batch / rating was usable: map_failed, rate_failed); 3 a partial answer, printed, that says what it rests
# on (partial_map). 3 is also `index`'s "finished with failures" (cli/index.py EXIT_FAILURES): done, but not
# all of it.
EXIT_PARTIAL = 3


def exit_partial(result: Any) -> None:
    """After a result is printed: a partial answer (``SearchResult.partial``) says so on stderr and exits 3."""
    if not getattr(result, "partial", False):
        return
    rid = getattr(result, "retrieval_id", None)
    see = f"; `driftgraph trace show {rid}` lists what was lost" if rid else ""
    typer.echo(f"partial answer (stop_reason {result.stop_reason}){see}: exit {EXIT_PARTIAL}", err=True)
    raise typer.Exit(EXIT_PARTIAL)


def fail(message: str, code: int = 1) -> NoReturn:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code)


def load() -> Config:
    from driftgraph.config import load_config

    return load_config(state.config_path)


def engine() -> Any:
    from driftgraph.api import open_engine

    return open_engine(load())


def print_json(obj: Any) -> None:
    typer.echo(json.dumps(obj, indent=2, ensure_ascii=False, default=str))


def synonym_line(syn: dict[str, Any]) -> str:
    """One line for the synonym step of ``import-graphrag`` and ``index`` (its ``synonyms`` summary)."""
    if syn["skipped"]:
        return f"synonyms: skipped ({syn['skipped']})"
    rebuilt = ", rebuilt at a new threshold" if syn["rebuilt"] else ""
    return (
        f"synonyms: {syn['names_embedded']} names embedded, {syn['entities_linked']} entities compared, "
        f"SYN edges {syn['edges_total']}{rebuilt}"
    )


def console() -> Any:
    from rich.console import Console

    return Console()


def field_help(model: Any, name: str) -> str:
    """A request field's description: the one text ``--help``, the docs and the HTTP schema share."""
    return str(model.model_fields[name].description or "")
