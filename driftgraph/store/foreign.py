"""Whose graph is in the database: driftgraph's own, or one another tool built (adopted or not yet).

Writers that delete or overwrite (``import-graphrag`` with or without ``--reset``, ``index``) refuse a foreign
graph: it shares driftgraph's labels (``Document``, ``Chunk``, ``__Entity__``), so a reset would delete it and
an import would write into it. The tools are told apart by the labels and relationship types they write.
"""

from __future__ import annotations

from typing import Literal

from driftgraph.errors import InputError
from driftgraph.store.db import Store
from driftgraph.store.schema import read_meta

Source = Literal["neo4j-graphrag", "llm-graph-builder"]
SOURCES: tuple[Source, ...] = ("neo4j-graphrag", "llm-graph-builder")


def signatures(counts: dict[str, int]) -> dict[Source, bool]:
    """Whether each tool's shape is present (both can be), from ``adopt/detect``'s counts."""
    return {
        "neo4j-graphrag": bool(counts["kg_builder"] or counts["from_chunk"] or counts["from_document"]),
        "llm-graph-builder": bool(counts["first_chunk"] or (counts["part_of"] and counts["has_entity"])),
    }


def foreign_graph(store: Store) -> str | None:
    """What foreign graph the database holds, said for a user ("a graph that X built and driftgraph adopted"),
    or None when every node with driftgraph's labels is driftgraph's own."""
    meta = read_meta(store)
    filled_by = (meta.filled_by if meta else None) or ""
    if filled_by.startswith("adopt:"):
        return f"a graph that {filled_by[6:]} built and driftgraph adopted"
    counts = {k: int(v) for k, v in store.read("adopt/detect")[0].items()}
    if (
        meta is not None
    ):  # driftgraph's own PART_OF / HAS_ENTITY look like LLM Graph Builder's: only what it never writes
        counts = {**counts, "part_of": 0, "has_entity": 0}
    tools = [s for s, found in signatures(counts).items() if found]
    if tools:
        return f"a graph that {' and '.join(tools)} built"
    if meta is None and counts["documents"] + counts["chunks"] + counts["entities"]:
        return (
            f"nodes labelled Document, Chunk or __Entity__ ({counts['documents']}, {counts['chunks']}, "
            f"{counts['entities']}) that driftgraph did not write"
        )
    return None


def refuse_foreign(store: Store, command: str, reset: bool) -> None:
    """Stop ``command`` before it touches another tool's graph, with one line saying what to do."""
    found = foreign_graph(store)
    if found is None:
        return
    harm = "delete it (--reset removes every Document, Chunk and __Entity__)" if reset else "write into it"
    raise InputError(
        f"this database holds {found}, which `{command}` would {harm}: use another database "
        "(NEO4J_DATABASE), or `driftgraph adopt` to query that graph where it is"
    )
