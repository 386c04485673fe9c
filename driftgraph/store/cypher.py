"""Loads named statements from cypher/; the only way Python code gets Cypher text."""

from __future__ import annotations

import re
from functools import cache

from driftgraph.resources import data_dir

_SPLIT = re.compile(r";\s*(?:\n|$)")


@cache
def load(name: str) -> str:
    """``load("query/local_expand")`` -> the text of ``cypher/query/local_expand.cypher``."""
    path = data_dir("cypher") / f"{name}.cypher"
    if not path.is_file():
        raise FileNotFoundError(f"no Cypher statement named '{name}' ({path})")
    return path.read_text(encoding="utf-8").strip()


@cache
def statements(name: str) -> tuple[str, ...]:
    """A file of several statements, each ended by ';' at a line end (schema files)."""
    return tuple(s.strip() for s in _SPLIT.split(load(name)) if s.strip())
