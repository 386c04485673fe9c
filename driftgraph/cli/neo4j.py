"""`driftgraph neo4j start|stop|status`: the embedded launcher for machines without Docker."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from driftgraph.cli import app
from driftgraph.cli.common import JsonOpt, console, print_json, state

neo4j_app = typer.Typer(no_args_is_help=True, help="Run the embedded Neo4j launcher (no Docker needed).")
app.add_typer(neo4j_app, name="neo4j")


def _launcher_cfg(port: int | None, data_dir: Path | None, http_port: int | None = None) -> Any:
    """The configuration with only an explicit password (NEO4J_PASSWORD, ``neo4j.password``): the stored one
    of the configured data dir must not be carried over to the one ``--data-dir`` names."""
    from driftgraph.config import load_config

    cfg = load_config(state.config_path, launcher_password=False)
    updates: dict[str, Any] = {}
    if port is not None:
        updates["port"] = port
    if http_port is not None:
        updates["http_port"] = http_port
    if data_dir is not None:
        updates["data_dir"] = str(data_dir)
    return cfg, cfg.neo4j.launcher.model_copy(update=updates)


PortOpt = Annotated[int | None, typer.Option("--port", min=1, max=65535, help="Bolt port on 127.0.0.1.")]
HttpPortOpt = Annotated[
    int | None,
    typer.Option(
        "--http-port",
        min=0,
        max=65535,
        help="HTTP port on 127.0.0.1 for Neo4j Browser (default: neo4j.launcher.http_port, 7474); 0: no HTTP.",
    ),
]
DataDirOpt = Annotated[Path | None, typer.Option("--data-dir", help="Where the database files live.")]


def _password_note(st: Any) -> str:
    """Where the password is: the path of its file, never the password."""
    if st.password_file:
        return f"password in {st.password_file}"
    if st.running:
        return "password not stored: the NEO4J_PASSWORD or neo4j.password it was started with"
    return "no password stored yet: a start without NEO4J_PASSWORD generates one"


def _describe(st: Any) -> str:
    browser = f", Browser {st.browser_url}" if st.browser_url else ", Browser off"
    java = f", {st.java}" if st.java else ""
    return f"{st.uri} (pid {st.pid}{browser}{java}, data {st.data_dir}, log {st.log}; {_password_note(st)})"


@neo4j_app.command("start")
def neo4j_start(port: PortOpt = None, http_port: HttpPortOpt = None, data_dir: DataDirOpt = None) -> None:
    """Build the launcher (once), start Neo4j in the background, wait for Bolt and Browser."""
    from driftgraph import launcher

    cfg, lcfg = _launcher_cfg(port, data_dir, http_port)
    with console().status("starting Neo4j (the first start builds the launcher with Maven)..."):
        st = launcher.start(lcfg, cfg.neo4j.password or None, strict_http=http_port is not None)
    if st.warning:
        typer.echo(f"warning: {st.warning}", err=True)
    typer.echo(f"Neo4j running: {_describe(st)}")
    if st.password_created:
        typer.echo(
            f"generated a password for user neo4j (first start of this data directory), kept in "
            f"{st.password_file} (readable by you only); driftgraph reads it from there while NEO4J_PASSWORD is unset"
        )


@neo4j_app.command("stop")
def neo4j_stop(port: PortOpt = None, data_dir: DataDirOpt = None) -> None:
    """Stop the launcher started from this data directory."""
    from driftgraph import launcher

    _, lcfg = _launcher_cfg(port, data_dir)
    typer.echo("Neo4j stopped" if launcher.stop(lcfg) else "Neo4j was not running")


@neo4j_app.command("status")
def neo4j_status(port: PortOpt = None, data_dir: DataDirOpt = None, as_json: JsonOpt = False) -> None:
    """Whether the launcher runs, with its pid, URI, data directory and where its password is kept."""
    from dataclasses import asdict

    from driftgraph import launcher

    _, lcfg = _launcher_cfg(port, data_dir)
    st = launcher.status(lcfg)
    if as_json:
        print_json(asdict(st))
    else:
        typer.echo(f"running: {_describe(st)}" if st.running else f"not running ({st.data_dir}; {_password_note(st)})")
    if not st.running:
        raise typer.Exit(3)
