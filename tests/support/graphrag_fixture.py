"""A tiny, valid GraphRAG output folder written with pyarrow, with hooks to break it one way at a time."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.parquet as pq

if TYPE_CHECKING:
    from driftgraph import ImportSummary


def tables() -> dict[str, list[dict[str, Any]]]:
    """2 documents, 3 chunks, 4 entities, 3 relationships, 3 communities on 2 levels with reports, 1 claim."""
    return {
        "documents": [
            {
                "id": "d1",
                "human_readable_id": 0,
                "title": "one.txt",
                "text": "Ada met Bob. Bob built engines.",
                "text_unit_ids": ["t2", "t1"],
                "creation_date": "2024-01-01",
                "metadata": None,
            },
            {
                "id": "d2",
                "human_readable_id": 1,
                "title": "two.txt",
                "text": "Cy wrote about Ada.",
                "text_unit_ids": ["t3"],
                "creation_date": "2024-01-02",
                "metadata": None,
            },
        ],
        "text_units": [
            {
                "id": "t1",
                "human_readable_id": 0,
                "text": "Bob built engines.",
                "n_tokens": 4,
                "document_id": "d1",
                "entity_ids": ["e2", "e4"],
                "relationship_ids": ["r2"],
                "covariate_ids": [],
            },
            {
                "id": "t2",
                "human_readable_id": 1,
                "text": "Ada met Bob.",
                "n_tokens": 4,
                "document_id": "d1",
                "entity_ids": ["e1", "e2"],
                "relationship_ids": ["r1"],
                "covariate_ids": ["c1"],
            },
            {
                "id": "t3",
                "human_readable_id": 2,
                "text": "Cy wrote about Ada.",
                "n_tokens": 5,
                "document_id": "d2",
                "entity_ids": ["e1", "e3"],
                "relationship_ids": ["r3"],
                "covariate_ids": [],
            },
        ],
        "entities": [
            {
                "id": "e1",
                "human_readable_id": 0,
                "title": "ADA",
                "type": "PERSON",
                "description": "A mathematician",
                "text_unit_ids": ["t2", "t3"],
                "frequency": 2,
                "degree": 2,
            },
            {
                "id": "e2",
                "human_readable_id": 1,
                "title": "BOB",
                "type": "PERSON",
                "description": "An engineer",
                "text_unit_ids": ["t1", "t2"],
                "frequency": 2,
                "degree": 2,
            },
            {
                "id": "e3",
                "human_readable_id": 2,
                "title": "CY",
                "type": "PERSON",
                "description": "A writer",
                "text_unit_ids": ["t3"],
                "frequency": 1,
                "degree": 1,
            },
            {
                "id": "e4",
                "human_readable_id": 3,
                "title": "ENGINES",
                "type": "THING",
                "description": "Machines",
                "text_unit_ids": ["t1"],
                "frequency": 1,
                "degree": 1,
            },
        ],
        "relationships": [
            {
                "id": "r1",
                "human_readable_id": 0,
                "source": "ADA",
                "target": "BOB",
                "description": "Ada met Bob",
                "weight": 1.0,
                "combined_degree": 4,
                "text_unit_ids": ["t2"],
            },
            {
                "id": "r2",
                "human_readable_id": 1,
                "source": "BOB",
                "target": "ENGINES",
                "description": "Bob built",
                "weight": 2.0,
                "combined_degree": 3,
                "text_unit_ids": ["t1"],
            },
            {
                "id": "r3",
                "human_readable_id": 2,
                "source": "CY",
                "target": "ADA",
                "description": "Cy wrote on Ada",
                "weight": 1.0,
                "combined_degree": 3,
                "text_unit_ids": ["t3"],
            },
        ],
        "communities": [
            {
                "id": "k0",
                "human_readable_id": 0,
                "community": 0,
                "level": 0,
                "parent": -1,
                "children": [2],
                "title": "Community 0",
                "entity_ids": ["e1", "e2", "e4"],
                "relationship_ids": ["r1", "r2"],
                "text_unit_ids": ["t1", "t2"],
                "period": "2024-01-02",
                "size": 3,
            },
            {
                "id": "k1",
                "human_readable_id": 1,
                "community": 1,
                "level": 0,
                "parent": -1,
                "children": [],
                "title": "Community 1",
                "entity_ids": ["e3"],
                "relationship_ids": [],
                "text_unit_ids": ["t3"],
                "period": "2024-01-02",
                "size": 1,
            },
            {
                "id": "k2",
                "human_readable_id": 2,
                "community": 2,
                "level": 1,
                "parent": 0,
                "children": [],
                "title": "Community 2",
                "entity_ids": ["e2", "e4"],
                "relationship_ids": ["r2"],
                "text_unit_ids": ["t1"],
                "period": "2024-01-02",
                "size": 2,
            },
        ],
        "community_reports": [_report(n, f"rep{n}") for n in (0, 1, 2)],
        "covariates": [
            {
                "id": "c1",
                "human_readable_id": 0,
                "covariate_type": "claim",
                "type": "MEETING",
                "description": "Ada met Bob",
                "subject_id": "ADA",
                "object_id": "BOB",
                "status": "TRUE",
                "start_date": "NONE",
                "end_date": "NONE",
                "source_text": "Ada met Bob.",
                "text_unit_id": "t2",
            },
        ],
    }


def _report(community: int, rid: str) -> dict[str, Any]:
    return {
        "id": rid,
        "human_readable_id": community,
        "community": community,
        "level": 0 if community < 2 else 1,
        "parent": -1 if community < 2 else 0,
        "children": [2] if community == 0 else [],
        "title": f"Report {community}",
        "summary": f"Summary {community}",
        "full_content": f"# Report {community}\n\nAbout community {community}.",
        "rank": 5.0 + community,
        "rating_explanation": "test",
        "findings": [{"summary": f"F{community}", "explanation": "because"}],
        "full_content_json": "{}",
        "period": "2024-01-02",
        "size": 1,
    }


def write(directory: Path, data: dict[str, list[dict[str, Any]]] | None = None, prefix: str = "") -> Path:
    """Write every table of ``data`` (default: ``tables()``) as ``<prefix><name>.parquet``."""
    directory.mkdir(parents=True, exist_ok=True)
    for name, rows in (data if data is not None else tables()).items():
        write_table(directory / f"{prefix}{name}.parquet", rows)
    return directory


def write_table(path: Path, rows: list[dict[str, Any]], schema: pa.Schema | None = None) -> None:
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), path)


def import_chain(cfg: Any, folder: Path) -> Any:
    """This index (its chunks chain t3 -ADA- t2 -BOB- t1) written to ``folder`` and imported, with embeddings,
    into the empty database of ``cfg`` (reset and schema dropped first); returns ``cfg``."""
    import_fresh(cfg, folder)
    return cfg


def import_fresh(cfg: Any, folder: Path, data: dict[str, list[dict[str, Any]]] | None = None) -> ImportSummary:
    """``data`` (default: ``tables()``) written to ``folder`` and imported, with embeddings, into the empty
    database of ``cfg`` (reset and schema dropped first); returns the import summary."""
    from driftgraph.api import open_engine
    from driftgraph.store.db import Store

    with Store(cfg.neo4j) as store:
        store.run_auto("admin/reset")
        store.run_auto("admin/drop_schema")
    with open_engine(cfg) as eng:
        summary = eng.import_graphrag(write(folder, data), reset=True, embed=True)
    return summary


def synonym_tables() -> dict[str, list[dict[str, Any]]]:
    """``tables()`` with the chain's last link broken into two names: t2 names BOB, t1 names "Bob" (entity e5,
    as an extraction that kept the case apart would), so no entity is shared by t2 and t1 and only a synonym
    edge BOB ~ Bob bridges them."""
    data = tables()
    t1 = next(t for t in data["text_units"] if t["id"] == "t1")
    t1["entity_ids"] = ["e5", "e4"]
    bob = next(e for e in data["entities"] if e["id"] == "e2")
    bob.update(text_unit_ids=["t2"], frequency=1)
    data["entities"].append(
        {
            "id": "e5",
            "human_readable_id": 4,
            "title": "Bob",
            "type": "PERSON",
            "description": "Builds engines",
            "text_unit_ids": ["t1"],
            "frequency": 1,
            "degree": 1,
        }
    )
    r2 = next(r for r in data["relationships"] if r["id"] == "r2")
    r2["source"] = "Bob"
    for c in data["communities"]:
        if "e2" in c["entity_ids"]:
            c["entity_ids"] = [*c["entity_ids"], "e5"]
    return data
