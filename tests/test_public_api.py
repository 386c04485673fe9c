"""The shape of the package: its public surface, which way imports flow, and that every Cypher file is used
with exactly the parameters its statements take. These guard the layout docs/reference/api.md describes."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from pydantic import ValidationError

import driftgraph
from driftgraph import BasicQuery, DriftgraphError, DriftQuery, GlobalQuery, LocalQuery, RequestError
from driftgraph.errors import QuestionError

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT / "driftgraph"
STORE_CALLS = {"read", "run", "run_auto", "load", "statements", "q"}


def _modules(base: Path) -> dict[str, ast.Module]:
    hidden = lambda p: any(part.startswith(".") for part in p.relative_to(ROOT).parts)  # noqa: E731 (.venv*)
    paths = [p for p in sorted(base.rglob("*.py")) if not hidden(p)]
    return {str(p.relative_to(ROOT)): ast.parse(p.read_text(encoding="utf-8")) for p in paths}


def _imports(tree: ast.Module) -> set[str]:
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            out.add(node.module)
            out.update(f"{node.module}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
    return out


def test_public_surface_is_what_we_mean_to_export():
    assert driftgraph.__all__ == sorted(driftgraph.__all__)
    assert {
        "open_engine",
        "Engine",
        "Config",
        "LocalQuery",
        "DriftQuery",
        "GlobalQuery",
        "BasicQuery",
        "SearchResult",
        "LocalResult",
        "DriftResult",
        "GlobalResult",
        "BasicResult",
        "Trace",
        "Cost",
        "DriftgraphError",
        "IndexSummary",
        "ImportSummary",
        "ExportSummary",
        "AdoptSummary",
        "DoctorReport",
    } <= set(driftgraph.__all__)
    for name in driftgraph.__all__:
        assert getattr(driftgraph, name) is not None
    assert (PKG / "py.typed").is_file()


def test_nothing_below_cli_and_serve_imports_the_api():
    for path, tree in _modules(PKG).items():
        if path.startswith(("driftgraph/cli/", "driftgraph/serve/")) or path == "driftgraph/__init__.py":
            continue
        if path == "driftgraph/api.py":
            continue
        assert not {m for m in _imports(tree) if m == "driftgraph.api" or m.startswith("driftgraph.api.")}, path


def test_cli_reaches_the_rest_only_through_the_api_and_public_types():
    allowed = ("driftgraph.cli", "driftgraph.api", "driftgraph.config", "driftgraph.errors", "driftgraph.resources")
    # the embedded Neo4j is a tool of its own, not part of the Engine; serve/ is cli's peer at the top layer
    launcher = ("driftgraph.launcher", "driftgraph.serve")
    for path, tree in _modules(PKG / "cli").items():
        for mod in _imports(tree):
            if not mod.startswith("driftgraph") or mod in driftgraph.__all__:
                continue
            if mod == "driftgraph" or mod.split(".")[1] in driftgraph.__all__:
                continue
            assert mod.startswith(allowed + launcher), f"{path} imports {mod}"


def test_requests_are_frozen_validated_once_and_name_the_field():
    req = LocalQuery(question="  Who?  ", budget=100)
    assert req.question == "Who?"
    with pytest.raises(ValidationError, match="frozen"):
        req.budget = 5  # type: ignore[misc]
    with pytest.raises(QuestionError, match="empty") as empty:
        LocalQuery(question="   ")
    assert empty.value.field == "question"
    with pytest.raises(RequestError) as bad:
        GlobalQuery(question="q", level=-1)
    assert bad.value.field == "level" and isinstance(bad.value, DriftgraphError)
    with pytest.raises(RequestError, match="unknown field") as extra:
        BasicQuery.parse({"question": "q", "budgett": 3})
    assert extra.value.field == "budgett"
    # every field has a description: --help (so the generated CLI reference) and the HTTP schema read it
    for model in (LocalQuery, DriftQuery, GlobalQuery, BasicQuery):
        for name, field in model.model_fields.items():
            assert field.description, f"{model.__name__}.{name} has no description"


def test_per_call_overrides_resolve_one_way():
    from driftgraph import Config

    cfg = Config()
    assert DriftQuery(question="q", max_depth=1, seed=4).settings(cfg).max_depth == 1
    assert DriftQuery(question="q").settings(cfg) is cfg.drift
    assert GlobalQuery(question="q", level=1, dynamic=True).settings(cfg).dynamic is True
    assert LocalQuery(question="q", route="fact").settings(cfg).route == "fact"


# -- the Cypher catalogue ---------------------------------------------------------------------------------
_LITERAL = re.compile(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"|//[^\n]*|/\*.*?\*/", re.S)
_PARAM = re.compile(r"\$(\w+)")


def cypher_params(name: str) -> set[str]:
    text = (ROOT / "cypher" / f"{name}.cypher").read_text(encoding="utf-8")
    return set(_PARAM.findall(_LITERAL.sub("", text)))


def _call_sites() -> list[tuple[str, str, str, set[str] | None]]:
    """(file, method, statement name, keyword names or None when ``**kwargs`` hides them)."""
    out = []
    for base in (PKG, ROOT / "tests", ROOT / "bench"):
        for path, tree in _modules(base).items():
            for node in ast.walk(tree):
                if not isinstance(node, ast.Call) or not node.args:
                    continue
                func = node.func
                method = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
                first = node.args[0]
                if method in STORE_CALLS and isinstance(first, ast.JoinedStr) and first.values:
                    head = first.values[0]  # f"export/{name}": a family of files under one prefix
                    if isinstance(head, ast.Constant) and "/" in str(head.value):
                        out.append((path, method, f"{head.value}*", None))
                    continue
                if method not in STORE_CALLS or not isinstance(first, ast.Constant) or not isinstance(first.value, str):
                    continue
                if not re.fullmatch(r"[a-z_]+/[a-z0-9_]+", first.value):
                    continue
                keys: set[str] | None = {k.arg for k in node.keywords if k.arg is not None}
                if any(k.arg is None for k in node.keywords) or len(node.args) > 1:
                    keys = None
                out.append((path, method, first.value, keys))
    return out


def test_every_cypher_file_is_used_and_every_parameter_passed():
    files = {str(p.relative_to(ROOT / "cypher").with_suffix("")) for p in (ROOT / "cypher").rglob("*.cypher")}
    sites = _call_sites()
    literal = {name for _, _, name, _ in sites if not name.endswith("*")}
    families = tuple(name[:-1] for _, _, name, _ in sites if name.endswith("*"))
    # names kept in mappings and handed over as variables (e.g. ``_DELETE`` in store/index_state.py)
    source = "\n".join(p.read_text(encoding="utf-8") for p in PKG.rglob("*.py"))
    quoted = {name for name in files if f'"{name}"' in source}
    used = literal | quoted | {name for name in files if name.startswith(families)}
    jvm = "\n".join(p.read_text(encoding="utf-8") for p in (ROOT / "jvm" / "client" / "src").rglob("*.java"))
    used |= {name for name in files if f'"{name}"' in jvm}
    assert files - used == set(), "Cypher files nothing runs"
    assert literal - files == set(), "statements that have no file"
    for path, method, name, keys in sites:
        if keys is None or method in ("load", "statements"):
            continue
        given = keys
        wanted = cypher_params(name)
        assert wanted <= given, f"{path}: {name} needs ${sorted(wanted - given)}"
        assert given <= wanted, f"{path}: {name} does not take {sorted(given - wanted)}"


def test_reset_names_the_same_labels_in_both_of_its_statements():
    """admin/reset spells driftgraph's labels twice: as a list for the relationships' ends and as label
    predicates (which can use the label scans) for the nodes. A label added to one only would leave its
    relationships or its nodes behind."""
    text = (ROOT / "cypher" / "admin" / "reset.cypher").read_text(encoding="utf-8")
    rels, nodes = [s for s in text.split(";") if "MATCH" in s]
    listed = set(re.findall(r"'([A-Za-z_]+)'", rels))
    predicated = set(re.findall(r"\bn:([A-Za-z_]+)", nodes))
    assert listed == predicated
    assert {"Document", "Chunk", "__Entity__", "__Community__", "Retrieval", "DriftgraphMeta"} <= listed
