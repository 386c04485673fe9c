"""The documentation cannot drift: the generated references cover every config key and every command, the README
stays a short front door with the two commands intact, and its relative links resolve.

The references are produced by the same functions the mkdocs hook calls (``docs/hooks/reference.py``);
``scripts/test.sh`` builds the whole site with ``mkdocs build --strict``."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from types import ModuleType

import pytest

from driftgraph.config import Config, leaf_paths

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
TWO_COMMANDS = (
    "```bash\n"
    "./scripts/demo.sh     # set up, start the embedded Neo4j, load the sample data, answer a question\n"
    "./scripts/test.sh     # the whole test suite (what CI runs): installs, starts Neo4j, pytest, JVM tests\n"
    "```\n"
)


def _hook() -> ModuleType:
    spec = importlib.util.spec_from_file_location("docs_reference_hook", ROOT / "docs" / "hooks" / "reference.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def hook() -> ModuleType:
    return _hook()


def _yaml_path(path: str) -> str:
    """``leaf_paths`` names fields by attribute (``global_``); the file and the reference use the alias."""
    aliases = {name: (f.alias or name) for name, f in Config.model_fields.items()}
    head, _, rest = path.partition(".")
    return f"{aliases[head]}.{rest}" if rest else aliases[head]


def test_the_configuration_reference_lists_every_key_with_its_description(hook):
    page = hook.config_reference()
    paths = [_yaml_path(p) for p in leaf_paths()]
    assert len(paths) > 150
    missing = [p for p in paths if f"| `{p}` |" not in page]
    assert not missing, f"not in the generated configuration reference: {missing}"
    # each key's row carries the model's own description and default, so editing a Field changes the page
    row = next(line for line in page.splitlines() if line.startswith("| `local.context_cap` |"))
    assert Config.model_fields["local"].annotation.model_fields["context_cap"].description in row
    assert "`8000`" in row
    assert "| `NEO4J_URI` | `neo4j.uri` |" in page
    # the sections come out once each, not split around their subsections
    headings = re.findall(r"^#+ (\S+)$", page, flags=re.M)
    assert len(headings) == len(set(headings)), headings


def _click_commands() -> list[str]:
    """The app's command tree, walked here independently of the hook."""
    import typer

    from driftgraph.cli import app

    found: list[str] = []

    def walk(cmd, ctx, path):  # type: ignore[no-untyped-def]
        found.append(" ".join(path))
        if hasattr(cmd, "list_commands"):
            for name in cmd.list_commands(ctx):
                sub = cmd.get_command(ctx, name)
                if not getattr(sub, "hidden", False):
                    walk(sub, sub.context_class(sub, info_name=name, parent=ctx), [*path, name])

    root = typer.main.get_command(app)
    walk(root, root.context_class(root, info_name="driftgraph"), ["driftgraph"])
    return found


def test_the_cli_reference_has_every_command_and_its_own_help(hook):
    page = hook.cli_reference()
    commands = _click_commands()
    assert {"driftgraph query local", "driftgraph trace prune", "driftgraph neo4j start"} <= set(commands)
    missing = [c for c in commands if not re.search(rf"^#+ {re.escape(c)}$", page, flags=re.M)]
    assert not missing, f"not in the generated CLI reference: {missing}"
    # the help text is the command's own, options included (plain text, no rich boxes)
    assert "Usage: driftgraph query local [OPTIONS]" in page
    assert "--exclude-entity" in page and "--older-than" in page
    assert "╭" not in page


def test_the_readme_is_a_short_front_door_with_the_two_commands():
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 260
    assert TWO_COMMANDS in text


def test_every_relative_link_in_the_readme_resolves():
    text = README.read_text(encoding="utf-8")
    targets = re.findall(r"\]\(([^)\s]+)\)", text)
    relative = [t for t in targets if not re.match(r"^[a-z][a-z0-9+.-]*:", t) and not t.startswith("#")]
    assert len(relative) >= 10
    broken = [t for t in relative if not (ROOT / t.split("#", 1)[0]).exists()]
    assert not broken, f"README links to missing files: {broken}"


def test_the_hook_replaces_its_markers(hook):
    page = "# Configuration\n\n<!-- generated: config -->\n\n<!-- generated: cli -->\n"
    out = hook.on_page_markdown(page, None, None, None)
    assert "<!-- generated" not in out
    assert "`local.ppr.damping`" in out and "Usage: driftgraph trace show" in out


def test_the_api_reference_covers_the_public_surface(hook):
    import driftgraph

    page = hook.public_surface()
    missing = [name for name in driftgraph.__all__ if f"| `{name}` |" not in page]
    assert not missing, f"driftgraph.__all__ names missing from the API reference: {missing}"
    # a name defined outside the modules rendered whole gets its own block, so nothing public goes undocumented
    for name in driftgraph.__all__:
        module = getattr(driftgraph, name).__module__
        if name != "Config" and module not in hook.API_MODULES:
            assert f"::: driftgraph.{name}" in page, name
    text = (ROOT / "docs" / "reference" / "api.md").read_text(encoding="utf-8")
    assert all(f"::: {module}\n" in text for module in hook.API_MODULES)


STABLE_MODULES = {"driftgraph", "driftgraph.api", "driftgraph.errors", "driftgraph.query.requests",
                  "driftgraph.query.result"}  # fmt: skip


def test_the_api_reference_names_only_the_stable_surface(hook):
    """Internal modules move; a directive naming one would break the build when they do."""
    import driftgraph

    pages = [p.read_text(encoding="utf-8") for p in (ROOT / "docs").rglob("*.md")]
    pages.append(hook.public_surface())
    targets = [t for text in pages for t in re.findall(r"^::: (\S+)$", text, flags=re.M)]
    assert "driftgraph.api" in targets
    public = {f"driftgraph.{name}" for name in driftgraph.__all__}
    outside = [t for t in targets if t not in STABLE_MODULES | public]
    assert not outside, f"the API reference renders internal modules: {outside}"
    assert set(hook.API_MODULES) <= STABLE_MODULES


def test_every_raw_file_the_docs_link_is_published():
    """``docs/hooks/raw_files.py`` serves bench/results/raw/*.json under raw/; a link to a missing one is an error."""
    spec = importlib.util.spec_from_file_location("docs_raw_hook", ROOT / "docs" / "hooks" / "raw_files.py")
    assert spec is not None and spec.loader is not None
    raw_hook = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(raw_hook)
    published = {p.name for p in raw_hook.raw_files(ROOT)}
    assert {"quality.json", "speed_local.json", "synth_questions_seed3.json"} <= published
    text = (ROOT / "docs" / "benchmarks.md").read_text(encoding="utf-8")
    linked = re.findall(r"\]\(raw/([^)\s]+)\)", text)
    assert len(linked) >= 15
    missing = sorted(set(linked) - published)
    assert not missing, f"docs/benchmarks.md links raw files that do not exist: {missing}"
