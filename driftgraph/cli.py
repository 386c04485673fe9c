"""The `driftgraph` command: parses, calls driftgraph.api, renders. Heavy imports stay inside commands."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer

app = typer.Typer(no_args_is_help=True, add_completion=False, help="GraphRAG on Neo4j with a control plane.")
neo4j_app = typer.Typer(no_args_is_help=True, help="Run the embedded Neo4j launcher (no Docker needed).")
config_app = typer.Typer(no_args_is_help=True, help="Inspect the configuration.")
app.add_typer(neo4j_app, name="neo4j")
app.add_typer(config_app, name="config")

ConfigOpt = Annotated[Path | None, typer.Option("--config", "-c", help="driftgraph.yaml to use.")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON.")]


class _State:
    config_path: Path | None = None


state = _State()


@app.callback()
def _root(config: ConfigOpt = None) -> None:
    state.config_path = config


def fail(message: str, code: int = 1) -> NoReturn:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code)


def load() -> Any:
    from driftgraph.config import load_config

    return load_config(state.config_path)


def engine() -> Any:
    from driftgraph.api import open_engine

    return open_engine(load())


def print_json(obj: Any) -> None:
    typer.echo(json.dumps(obj, indent=2, ensure_ascii=False, default=str))


def console() -> Any:
    from rich.console import Console

    return Console()


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
    data = load().to_dict()
    for section, key in (("neo4j", "password"), ("llm", "api_key")):
        if data[section][key]:
            data[section][key] = "***"
    if as_json:
        print_json(data)
    else:
        import yaml

        typer.echo(yaml.safe_dump(data, sort_keys=False))


# -- neo4j launcher -------------------------------------------------------------------------------------
def _launcher_cfg(port: int | None, data_dir: Path | None) -> Any:
    cfg = load()
    updates: dict[str, Any] = {}
    if port is not None:
        updates["port"] = port
    if data_dir is not None:
        updates["data_dir"] = str(data_dir)
    return cfg, cfg.neo4j.launcher.model_copy(update=updates)


PortOpt = Annotated[int | None, typer.Option("--port", help="Bolt port on 127.0.0.1.")]
DataDirOpt = Annotated[Path | None, typer.Option("--data-dir", help="Where the database files live.")]


@neo4j_app.command("start")
def neo4j_start(port: PortOpt = None, data_dir: DataDirOpt = None) -> None:
    """Build the launcher (once), start Neo4j in the background, wait for Bolt."""
    from driftgraph import launcher

    cfg, lcfg = _launcher_cfg(port, data_dir)
    with console().status("starting Neo4j (the first start builds the launcher with Maven)..."):
        st = launcher.start(lcfg, cfg.neo4j.password)
    typer.echo(f"Neo4j running: {st.uri} (pid {st.pid}, data {st.data_dir}, log {st.log})")


@neo4j_app.command("stop")
def neo4j_stop(port: PortOpt = None, data_dir: DataDirOpt = None) -> None:
    """Stop the launcher started from this data directory."""
    from driftgraph import launcher

    _, lcfg = _launcher_cfg(port, data_dir)
    typer.echo("Neo4j stopped" if launcher.stop(lcfg) else "Neo4j was not running")


@neo4j_app.command("status")
def neo4j_status(port: PortOpt = None, data_dir: DataDirOpt = None, as_json: JsonOpt = False) -> None:
    """Whether the launcher runs, with its pid, URI and data directory."""
    from dataclasses import asdict

    from driftgraph import launcher

    _, lcfg = _launcher_cfg(port, data_dir)
    st = launcher.status(lcfg)
    if as_json:
        print_json(asdict(st))
    else:
        typer.echo(f"running: {st.uri} (pid {st.pid})" if st.running else f"not running ({st.data_dir})")
    if not st.running:
        raise typer.Exit(3)


# -- doctor ---------------------------------------------------------------------------------------------
@app.command()
def doctor(as_json: JsonOpt = False) -> None:
    """Check Neo4j, schema, embedder, tokenizer and the LLM endpoint."""
    with engine() as eng:
        report = eng.doctor()
    if as_json:
        print_json(report)
    else:
        for part, res in report.items():
            mark = "[green]ok[/]" if res["ok"] else "[red]FAIL[/]"
            detail = res.get("error") or ", ".join(
                f"{k}={v}" for k, v in res.items() if k not in ("ok", "seconds") and not isinstance(v, list | dict)
            )
            console().print(f"{mark:>16} {part:<10} {detail}")
    if not report["neo4j"]["ok"]:
        raise typer.Exit(1)


def main() -> None:
    """Console entry point: known errors become one line on stderr, not a traceback."""
    from driftgraph.errors import DriftgraphError

    try:
        app()
    except DriftgraphError as err:
        typer.echo(f"error: {err}", err=True)
        sys.exit(1)
