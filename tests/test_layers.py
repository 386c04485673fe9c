"""Which way imports flow: the layers, the shared rooms of ``query/`` that no mode owns, and no cycles.

Every import counts: at module level, inside functions (where a cycle can hide) and under ``TYPE_CHECKING``
(a cycle in the types is still two modules that know each other).
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT / "driftgraph"
MODES = ("driftgraph.query.local", "driftgraph.query.global_", "driftgraph.query.basic", "driftgraph.query.drift")
# lower layers and what they must never import (cli|serve -> api -> query|index|importers|adopt -> store|llm ->
# runtime/config)
ABOVE = {
    "driftgraph.config": ("driftgraph.runtime", "driftgraph.store", "driftgraph.llm", "driftgraph.query"),
    "driftgraph.store": ("driftgraph.query", "driftgraph.index", "driftgraph.importers", "driftgraph.adopt"),
    "driftgraph.llm": ("driftgraph.query", "driftgraph.index", "driftgraph.importers", "driftgraph.adopt"),
    "driftgraph.query": ("driftgraph.index", "driftgraph.importers", "driftgraph.adopt"),
}
TOP = ("driftgraph.api", "driftgraph.cli", "driftgraph.serve")


def module_name(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def graph(base: Path = PKG) -> dict[str, set[str]]:
    """Module -> the package modules it imports (``from a.b import c`` is ``a.b.c`` when that is a module)."""
    paths = sorted(base.rglob("*.py"))
    names = {module_name(p) for p in paths}
    out: dict[str, set[str]] = {}
    for path in paths:
        me = module_name(path)
        package = me if path.name == "__init__.py" else me.rpartition(".")[0]
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                found.update(a.name for a in node.names)
            elif isinstance(node, ast.ImportFrom):
                mod = node.module or ""
                if node.level:
                    anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                    mod = ".".join([*anchor, *([mod] if mod else [])])
                for a in node.names:
                    found.add(f"{mod}.{a.name}" if f"{mod}.{a.name}" in names else mod)
        out[me] = {m for m in found if m in names and m != me}
    return out


def _under(mod: str, prefixes: tuple[str, ...]) -> bool:
    return any(mod == p or mod.startswith(p + ".") for p in prefixes)


def test_lower_layers_import_nothing_above_them():
    for mod, deps in graph().items():
        for layer, forbidden in ABOVE.items():
            if _under(mod, (layer,)):
                bad = {d for d in deps if _under(d, forbidden + TOP)}
                assert not bad, f"{mod} imports {sorted(bad)} from a layer above it"


def test_shared_query_modules_import_no_mode():
    """What several modes share (budget, trace, result, citations, rewrite, rerank, route, finish ...) lives in
    query/ itself and never reaches into one mode's package."""
    for mod, deps in graph().items():
        if mod.startswith("driftgraph.query.") and mod.count(".") == 2 and not _under(mod, MODES):
            bad = {d for d in deps if _under(d, MODES)}
            assert not bad, f"shared {mod} imports mode modules {sorted(bad)}"


def cycles(g: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    counter = 0
    for root in sorted(g):
        if root in index:
            continue
        work = [(root, iter(sorted(g[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, it = work[-1]
            nxt = next(it, None)
            if nxt is not None:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter
                    counter += 1
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(g.get(nxt, ())))))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    top = stack.pop()
                    on_stack.discard(top)
                    comp.append(top)
                    if top == node:
                        break
                if len(comp) > 1:
                    found.append(sorted(comp))
    return found


def test_no_import_cycles():
    # a package's __init__ that re-exports its modules is not a cycle with them: leave out package -> child edges
    g = {mod: {d for d in deps if not d.startswith(mod + ".")} for mod, deps in graph().items()}
    assert cycles(g) == []


def test_the_cycle_finder_finds_a_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []
