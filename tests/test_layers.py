"""Which way imports flow: the layers, the shared rooms of ``query/`` that no mode owns, and no cycles.

Every import counts: at module level, inside functions (where a cycle can hide) and under ``TYPE_CHECKING``
(a cycle in the types is still two modules that know each other).
"""

from __future__ import annotations

from pathlib import Path

from tests.support.imports import cycles, import_graph

ROOT = Path(__file__).resolve().parents[1]
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


def graph() -> dict[str, set[str]]:
    return import_graph(ROOT, "driftgraph")


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


def test_no_import_cycles():
    # a package's __init__ that re-exports its modules is not a cycle with them: leave out package -> child edges
    g = {mod: {d for d in deps if not d.startswith(mod + ".")} for mod, deps in graph().items()}
    assert cycles(g) == []


def test_the_cycle_finder_finds_a_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []
