"""The `driftgraph` command: parses, calls driftgraph.api, renders. Heavy imports stay inside commands."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from driftgraph.cli.common import ConfigOpt, JsonOpt, console, engine, fail, load, print_json, state

app = typer.Typer(no_args_is_help=True, add_completion=False, help="GraphRAG on Neo4j with a control plane.")
config_app = typer.Typer(no_args_is_help=True, help="Inspect the configuration.")
app.add_typer(config_app, name="config")


@app.callback()
def _root(
    config: ConfigOpt = None,
    debug: Annotated[
        bool, typer.Option("--debug", help="On an error, show the full traceback instead of one line.")
    ] = False,
) -> None:
    state.config_path = config
    state.debug = debug


# -- init / config --------------------------------------------------------------------------------------
@app.command()
def init(directory: Annotated[Path, typer.Argument()] = Path("."), force: bool = False) -> None:
    """Write driftgraph.yaml with every default and copy prompts/ for editing."""
    import shutil

    import yaml

    from driftgraph.config import CONFIG_FILE, Config
    from driftgraph.resources import data_dir

    directory.mkdir(parents=True, exist_ok=True)
    target = directory / CONFIG_FILE
    if target.exists() and not force:
        fail(f"{target} exists (use --force to overwrite)")
    data = Config().to_dict()
    data["prompts"]["dir"] = "prompts"
    header = "# driftgraph configuration: every key with its default. Env NEO4J_* / OPENAI_* override.\n"
    target.write_text(header + yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    prompts = directory / "prompts"
    prompts.mkdir(exist_ok=True)
    copied = 0
    for src in sorted(data_dir("prompts").glob("*.txt")):
        if not (prompts / src.name).exists() or force:
            shutil.copyfile(src, prompts / src.name)
            copied += 1
    typer.echo(f"wrote {target} and {copied} prompt files to {prompts}/")


@config_app.command("show")
def config_show(as_json: JsonOpt = False) -> None:
    """Print the effective configuration (file + environment + defaults); secrets masked."""
    from driftgraph.config.secrets import mask

    data = mask(load().to_dict())
    if as_json:
        print_json(data)
    else:
        import yaml

        typer.echo(yaml.safe_dump(data, sort_keys=False))


# -- doctor ---------------------------------------------------------------------------------------------
@app.command()
def doctor(as_json: JsonOpt = False) -> None:
    """Check Neo4j, schema, embedder, tokenizer and the LLM endpoint.

    Exit codes: 0 every part ok (an empty database is a state, not a failure); 1 any part FAILs (printed, and
    named in one line on stderr), so scripts and health checks can gate on it.
    """
    from rich.markup import escape

    with engine() as eng:
        report = eng.doctor()
    if as_json:
        print_json(report.to_dict())
    else:
        for part, check in report.parts():
            state_ = check.state or ("ok" if check.ok else "fail")
            label, color = {"ok": ("ok", "green"), "empty": ("empty", "yellow")}.get(state_, ("FAIL", "red"))
            plain = ", ".join(f"{k}={v}" for k, v in check.details.items() if not isinstance(v, list | dict))
            detail = check.error or check.note or plain
            console().print(f"[{color}]{label:>5}[/] {part:<10} {escape(str(detail))}")
    failed = [part for part, check in report.parts() if not check.ok]
    if failed:
        what = ", ".join(failed)
        typer.echo(f"doctor: {what} failed (each part's error says why; fix it and run doctor again): exit 1", err=True)
        raise typer.Exit(1)


def _register() -> None:
    """Command groups live in their own modules; importing them attaches them to ``app``."""
    from driftgraph.cli import (  # noqa: F401
        adopt,
        documents,
        drift,
        global_basic,
        graphrag,
        index,
        neo4j,
        query,
        serve,
        trace,
    )


_register()


def main() -> None:
    """Console entry point: every error becomes one line on stderr and exit 1; ``--debug`` shows the traceback."""
    from driftgraph.cli.argv import hoist_config
    from driftgraph.errors import DriftgraphError

    sys.argv[1:] = hoist_config(sys.argv[1:])  # --config/-c also after the subcommand

    debug = "--debug" in sys.argv[1:]
    if not debug:  # the driver's retry warnings ("... will be retried in 16s") are not the one line
        import logging

        logging.getLogger("neo4j").addHandler(logging.NullHandler())
    try:
        app(standalone_mode=True)
    except DriftgraphError as err:
        if debug:
            raise
        typer.echo(f"error: {_one_line(str(err))}", err=True)
        sys.exit(1)
    except Exception as err:  # a bug or an unexpected library error: still one line, the traceback on request
        if debug:
            raise
        typer.echo(
            f"error: unexpected {type(err).__name__}: {_one_line(str(err))} (run with --debug for the traceback)",
            err=True,
        )
        sys.exit(1)


def _one_line(text: str) -> str:
    return " ".join(text.split())[:600]
