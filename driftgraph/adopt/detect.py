"""Which tool built the graph in the database, from the labels and relationship types it writes.

- neo4j-graphrag's KG builder: every node it writes carries ``__KGBuilder__``; chunks point at their document
  with ``FROM_DOCUMENT`` and entities at their chunk with ``FROM_CHUNK``.
- LLM Graph Builder: ``(:Chunk)-[:PART_OF]->(:Document)``, ``(:Document)-[:FIRST_CHUNK]->(:Chunk)`` and
  ``(:Chunk)-[:HAS_ENTITY]->(:__Entity__)``.

A database that driftgraph indexed or imported itself is refused: adopting it would mean nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

from driftgraph.errors import AdoptError
from driftgraph.store.db import Store
from driftgraph.store.foreign import SOURCES, Source, signatures
from driftgraph.store.schema import read_meta

__all__ = ["SOURCES", "Detected", "Source", "choose", "detect", "signatures"]


@dataclass(frozen=True)
class Detected:
    source: Source
    counts: dict[str, int]


def choose(counts: dict[str, int], wanted: str, filled_by: str | None) -> Source:
    """The source to adopt: ``wanted`` checked against the graph, or the one shape found for ``auto``."""
    if filled_by in ("index", "import-graphrag"):
        raise AdoptError(
            f"this database holds driftgraph's own index (filled by `{filled_by}`), not another tool's graph: "
            "nothing to adopt"
        )
    found = signatures(counts)
    shape = ", ".join(f"{k}={v}" for k, v in counts.items())
    if wanted != "auto":
        if wanted not in SOURCES:
            raise AdoptError(f"--from must be auto, {' or '.join(SOURCES)}, not {wanted!r}")
        if not found[wanted]:
            raise AdoptError(f"no {wanted} graph in this database ({shape})")
        return wanted
    if filled_by and filled_by.startswith("adopt:") and filled_by[6:] in SOURCES:
        return filled_by[6:]  # type: ignore[return-value]
    hits = [s for s in SOURCES if found[s]]
    if not hits:
        raise AdoptError(f"no neo4j-graphrag or LLM Graph Builder graph in this database ({shape})")
    if len(hits) > 1:
        raise AdoptError("both a neo4j-graphrag and an LLM Graph Builder graph are here: choose one with --from")
    if not counts["chunks"]:
        raise AdoptError(f"the {hits[0]} graph has no Chunk nodes: driftgraph needs the text ({shape})")
    return hits[0]


def detect(store: Store, wanted: str = "auto") -> Detected:
    counts = {k: int(v) for k, v in store.read("adopt/detect")[0].items()}
    meta = read_meta(store)
    return Detected(choose(counts, wanted, meta.filled_by if meta else None), counts)
