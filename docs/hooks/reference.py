"""mkdocs hook: writes the configuration and CLI reference pages at build time, so they cannot drift.

The configuration reference walks driftgraph's ``Config`` model (every key path, its type, allowed range,
default and ``Field`` description). The CLI reference walks the typer app and prints each command's own
``--help``. A page asks for one with a marker line (``<!-- generated: config -->``, ``<!-- generated: cli -->``);
nothing generated is committed. ``tests/test_docs.py`` calls the same two functions.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import types
import typing
from pathlib import Path
from typing import Any

MARKERS = {
    "<!-- generated: config -->": "config",
    "<!-- generated: cli -->": "cli",
    "<!-- generated: public -->": "public",
}
# The stable modules the API reference renders whole; names of ``driftgraph.__all__`` defined elsewhere are
# rendered on their own under the package.
API_MODULES = (
    "driftgraph.api",
    "driftgraph.errors",
    "driftgraph.query.requests",
    "driftgraph.query.result",
)
HELP_WIDTH = 100


# -- configuration ------------------------------------------------------------------------------------------
def _type_name(annotation: Any) -> str:
    """A short, readable type: ``int``, ``str | None``, ``"auto" | "fact"``, ``list[str]``."""
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is typing.Literal:
        return " | ".join(json.dumps(a) for a in args)
    if origin in (typing.Union, types.UnionType):
        return " | ".join(_type_name(a) for a in args)
    if origin is not None:
        name = getattr(origin, "__name__", str(origin))
        return f"{name}[{', '.join(_type_name(a) for a in args)}]"
    if annotation is type(None):
        return "None"
    return getattr(annotation, "__name__", str(annotation))


def _constraints(field: Any) -> str:
    """The field's validation bounds (``ge``/``gt``/``le``/``lt``, ``pattern``) as ``>= 1, <= 64``."""
    words = {"ge": ">=", "gt": ">", "le": "<=", "lt": "<"}
    out: list[str] = []
    for meta in field.metadata:
        for attr, sign in words.items():
            value = getattr(meta, attr, None)
            if value is not None:
                out.append(f"{sign} {value}")
        pattern = getattr(meta, "pattern", None)
        if pattern:
            out.append(f"matches {pattern}")
    return ", ".join(out)


def _default(field: Any) -> Any:
    if field.default_factory is not None:
        return field.default_factory()
    return field.default


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _code(value: Any) -> str:
    from pydantic import BaseModel

    if isinstance(value, BaseModel):
        value = value.model_dump(mode="json")
    text = json.dumps(value, default=str) if not isinstance(value, str) else json.dumps(value)
    return "`" + _cell(text) + "`"


def config_rows(model: Any = None, prefix: str = "") -> list[tuple[str, str, str, str, str, Any]]:
    """Every leaf key of ``Config``: (section path, key path, type, bounds, description, default)."""
    from pydantic import BaseModel

    from driftgraph.config import Config

    model = Config if model is None else model
    rows: list[tuple[str, str, str, str, str, Any]] = []
    nested: list[tuple[str, Any]] = []  # a section's own keys first, then its subsections, so each is one table
    for name, field in model.model_fields.items():
        key = prefix + (field.alias or name)
        annotation = field.annotation
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            nested.append((key, annotation))
        else:
            section = prefix[:-1]
            rows.append((section, key, _type_name(annotation), _constraints(field), field.description or "",
                         _default(field)))  # fmt: skip
    for key, annotation in nested:
        rows += config_rows(annotation, key + ".")
    return rows


def _section_doc(path: str) -> str:
    """The docstring of the section model at ``path`` (its first paragraph), if it has its own."""
    from driftgraph.config import Config

    model: Any = Config
    for part in path.split("."):
        field = next(f for n, f in model.model_fields.items() if part in (n, f.alias))
        model = field.annotation
    doc = model.__dict__.get("__doc__") or ""
    return " ".join(doc.strip().split("\n\n")[0].split())


def config_reference() -> str:
    """The configuration reference as Markdown: environment overrides, then one table per section."""
    from driftgraph.config import ENV_KEYS

    lines = ["## Environment variables", "", "| variable | overrides |", "|---|---|"]
    lines += [f"| `{var}` | `{section}.{key}` |" for var, (section, key) in ENV_KEYS.items()]
    lines += ["", "`DRIFTGRAPH_API_KEY` is read by `driftgraph serve` from the environment only (never from the file).",
              ""]  # fmt: skip
    current = None
    for section, key, type_, bounds, description, default in config_rows():
        if section != current:
            current = section
            heading = "##" if "." not in section else "###"
            lines += ["", f"{heading} {section}", ""]
            doc = _section_doc(section)
            if doc:
                lines += [_rst_to_md(doc), ""]
            lines += ["| key | type | default | description |", "|---|---|---|---|"]
        shown_type = f"`{_cell(type_)}`" + (f" (`{_cell(bounds)}`)" if bounds else "")
        lines.append(f"| `{key}` | {shown_type} | {_code(default)} | {_cell(description)} |")
    return "\n".join(lines) + "\n"


def _rst_to_md(text: str) -> str:
    return text.replace("``", "`")


# -- CLI ------------------------------------------------------------------------------------------------------
def _walk_cli() -> list[dict[str, Any]]:
    """Every visible command with its help, walking the typer app's click tree (each command's own
    ``context_class``, so no click import: typer >= 0.16 vendors it). Runs in the child interpreter
    ``cli_commands`` starts."""
    import typer

    from driftgraph.cli import app

    out: list[dict[str, Any]] = []

    def walk(cmd: Any, ctx: Any, path: list[str]) -> None:
        out.append({"path": path, "help": cmd.get_help(ctx)})
        if hasattr(cmd, "list_commands"):
            for name in cmd.list_commands(ctx):
                sub = cmd.get_command(ctx, name)
                if not getattr(sub, "hidden", False):
                    child = sub.context_class(sub, info_name=name, parent=ctx, terminal_width=HELP_WIDTH,
                                              max_content_width=HELP_WIDTH)  # fmt: skip
                    walk(sub, child, [*path, name])

    root = typer.main.get_command(app)
    top = root.context_class(root, info_name="driftgraph", terminal_width=HELP_WIDTH, max_content_width=HELP_WIDTH)
    walk(root, top, ["driftgraph"])
    return out


def cli_commands() -> list[dict[str, Any]]:
    """Every command and subcommand with its plain-text ``--help`` (rich formatting off, fixed width).

    Runs in a fresh interpreter: typer decides at import time whether to format help with rich."""
    root = str(Path(__file__).resolve().parents[2])  # the checkout, for a package that is not installed
    path = os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH", "")) if p)
    env = dict(os.environ, TYPER_USE_RICH="0", COLUMNS=str(HELP_WIDTH), NO_COLOR="1", PYTHONPATH=path)
    done = subprocess.run([sys.executable, __file__, "--cli-json"], capture_output=True, text=True, env=env,
                          check=False)  # fmt: skip
    if done.returncode != 0:
        raise RuntimeError(f"could not read the CLI's help: {done.stderr.strip()}")
    commands: list[dict[str, Any]] = json.loads(done.stdout)
    return commands


def cli_reference() -> str:
    """The CLI reference as Markdown: one section per command, its ``--help`` verbatim."""
    lines: list[str] = []
    for command in cli_commands():
        path = command["path"]
        depth = min(len(path), 3) + 1
        lines += ["", "#" * depth + f" {' '.join(path)}", "", "```text", command["help"].rstrip(), "```"]
    return "\n".join(lines) + "\n"


# -- the public surface ---------------------------------------------------------------------------------------
def public_surface() -> str:
    """Markdown for ``driftgraph.__all__``: a table naming where each name is documented, then a mkdocstrings
    block for each name defined outside ``API_MODULES`` (the table follows ``__all__`` as it changes)."""
    import driftgraph

    rows = ["| name | documented in |", "|---|---|"]
    blocks: list[str] = []
    for name in sorted(driftgraph.__all__):
        module = getattr(getattr(driftgraph, name), "__module__", "driftgraph")
        if name == "Config":
            rows.append(f"| `{name}` | [the configuration reference](configuration.md) |")
        elif module in API_MODULES:
            rows.append(f"| `{name}` | [`{module}`][{module}.{name}] |")
        else:
            rows.append(f"| `{name}` | [below][driftgraph.{name}] |")
            blocks += ["", f"::: driftgraph.{name}", "    options:", "      heading_level: 3"]
    return "\n".join(rows + blocks) + "\n"


# -- mkdocs ---------------------------------------------------------------------------------------------------
_cache: dict[str, str] = {}


def _generated(kind: str) -> str:
    if kind not in _cache:
        _cache[kind] = {"config": config_reference, "cli": cli_reference, "public": public_surface}[kind]()
    return _cache[kind]


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    """Replace each marker line with the page it stands for."""
    for marker, kind in MARKERS.items():
        if marker in markdown:
            markdown = markdown.replace(marker, _generated(kind))
    return markdown


def on_startup(command: str, dirty: bool) -> None:
    """``mkdocs serve`` rebuilds on change: read the model and the CLI again on each build."""
    _cache.clear()


def on_pre_build(config: Any) -> None:
    _cache.clear()
    root = str(Path(config["config_file_path"]).resolve().parent)
    if root not in sys.path:  # a checkout whose package is not installed still builds
        sys.path.insert(0, root)


if __name__ == "__main__" and sys.argv[1:] == ["--cli-json"]:
    print(json.dumps(_walk_cli()))
