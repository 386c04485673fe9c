"""bench/'s layout: no import cycles (imports inside functions included), the report half never imports the
measuring half, one entry point, and every part ``python -m bench --help`` lists resolves to a callable."""

from __future__ import annotations

import ast
import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

from bench import cli
from tests.support.imports import cycles, import_graph, module_names

ROOT = Path(__file__).resolve().parents[1]


def graph_of(root: Path, package: str) -> dict[str, set[str]]:
    return import_graph(root, package)


def test_the_cycle_finder_sees_a_cycle_hidden_inside_a_function(tmp_path: Path) -> None:
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from pkg import b\n")
    (pkg / "b.py").write_text("def f():\n    from pkg.a import x\n    return x\n")
    (pkg / "c.py").write_text("from . import b\n")
    assert cycles(graph_of(tmp_path, "pkg")) == [["pkg.a", "pkg.b"]]


def test_bench_has_no_import_cycle() -> None:
    graph = graph_of(ROOT, "bench")
    assert len(graph) > 50  # the walk found the package, subpackages included
    assert cycles(graph) == []


def test_the_report_half_imports_nothing_from_the_measuring_half() -> None:
    graph = graph_of(ROOT, "bench")
    leaks = {m: sorted(d for d in deps if d.startswith("bench.run")) for m, deps in graph.items()}
    assert {m: d for m, d in leaks.items() if m.startswith("bench.report") and d} == {}


def test_one_entry_point() -> None:
    mains = [
        str(p.relative_to(ROOT))
        for p in module_names(ROOT, "bench").values()
        if "__main__" in p.read_text(encoding="utf-8") and p.name != "__main__.py"
    ]
    assert mains == []


def _has_function(target: str) -> bool:
    module, _, name = target.partition(":")
    spec = importlib.util.find_spec(module)
    assert spec is not None and spec.origin, module
    tree = ast.parse(Path(spec.origin).read_text(encoding="utf-8"))
    return any(isinstance(n, ast.FunctionDef) and n.name == name for n in tree.body)


@pytest.mark.parametrize("name", sorted(cli.PARTS))
def test_every_listed_part_resolves_to_a_callable(name: str) -> None:
    part = cli.PARTS[name]
    if part.target.startswith("bench.run.gr.") and importlib.util.find_spec("graphrag") is None:
        # the GraphRAG side imports graphrag at module level: it runs in bench/.venv-graphrag, not here
        assert _has_function(part.target)
        return
    assert callable(part.resolve())


def test_help_lists_every_part_with_one_line() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "bench", "--help"], capture_output=True, text=True, check=True, cwd=ROOT
    ).stdout
    rows = [line.split()[0] for line in out.splitlines() if line.startswith("  ")]
    assert rows == list(cli.PARTS)


def test_an_unknown_part_is_refused() -> None:
    proc = subprocess.run([sys.executable, "-m", "bench", "no-such-part"], capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 2
    assert "unknown part 'no-such-part'" in proc.stderr
