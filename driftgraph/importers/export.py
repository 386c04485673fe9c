"""Neo4j -> GraphRAG parquet tables (the 2.x/3.x schema), paged by id so nothing large sits in memory.

Writes documents, text_units, entities, relationships, communities, community_reports and (when claims
exist) covariates. Ids, human-readable ids and texts are the stored ones, so an imported GraphRAG index
comes back with the same rows; link columns (``entity_ids``, ``children``, ...) are rebuilt from the graph.
Embeddings are not exported.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from driftgraph.importers.summary import ExportSummary

if TYPE_CHECKING:
    import pyarrow as pa

    from driftgraph.runtime import Runtime
    from driftgraph.store.db import Store

Row = dict[str, Any]


def _schemas() -> dict[str, pa.Schema]:
    import pyarrow as pa

    s, i, f, ls, li = pa.string(), pa.int64(), pa.float64(), pa.list_(pa.string()), pa.list_(pa.int64())
    findings = pa.list_(pa.struct([("summary", s), ("explanation", s)]))
    community_head = [
        ("id", s),
        ("human_readable_id", i),
        ("community", i),
        ("level", i),
        ("parent", i),
        ("children", li),
    ]
    return {
        "documents": pa.schema(
            [
                ("id", s),
                ("human_readable_id", i),
                ("title", s),
                ("text", s),
                ("text_unit_ids", ls),
                ("creation_date", s),
                ("metadata", s),
            ]
        ),
        "text_units": pa.schema(
            [
                ("id", s),
                ("human_readable_id", i),
                ("text", s),
                ("n_tokens", i),
                ("document_id", s),
                ("entity_ids", ls),
                ("relationship_ids", ls),
                ("covariate_ids", ls),
            ]
        ),
        "entities": pa.schema(
            [
                ("id", s),
                ("human_readable_id", i),
                ("title", s),
                ("type", s),
                ("description", s),
                ("text_unit_ids", ls),
                ("frequency", i),
                ("degree", i),
            ]
        ),
        "relationships": pa.schema(
            [
                ("id", s),
                ("human_readable_id", i),
                ("source", s),
                ("target", s),
                ("description", s),
                ("weight", f),
                ("combined_degree", i),
                ("text_unit_ids", ls),
            ]
        ),
        "communities": pa.schema(
            [
                *community_head,
                ("title", s),
                ("entity_ids", ls),
                ("relationship_ids", ls),
                ("text_unit_ids", ls),
                ("period", s),
                ("size", i),
            ]
        ),
        "community_reports": pa.schema(
            [
                *community_head,
                ("title", s),
                ("summary", s),
                ("full_content", s),
                ("rank", f),
                ("rating_explanation", s),
                ("findings", findings),
                ("full_content_json", s),
                ("period", s),
                ("size", i),
            ]
        ),
        "covariates": pa.schema(
            [
                ("id", s),
                ("human_readable_id", i),
                ("covariate_type", s),
                ("type", s),
                ("description", s),
                ("subject_id", s),
                ("object_id", s),
                ("status", s),
                ("start_date", s),
                ("end_date", s),
                ("source_text", s),
                ("text_unit_id", s),
            ]
        ),
    }


class _TableWriter:
    """A parquet file written page by page (created on the first page, so empty tables leave no file)."""

    def __init__(self, path: Path, schema: pa.Schema) -> None:
        self.path, self.schema, self.rows = path, schema, 0
        self._writer: Any = None

    def write(self, rows: list[Row]) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        if not rows:
            return
        if self._writer is None:
            self._writer = pq.ParquetWriter(self.path, self.schema)
        self._writer.write_table(pa.Table.from_pylist(rows, schema=self.schema))
        self.rows += len(rows)

    def close(self) -> None:
        if self._writer is not None:
            self._writer.close()


def _pages(store: Store, name: str, page_size: int) -> Iterator[list[Row]]:
    after = ""
    while True:
        page = store.read(f"export/{name}", after=after, limit=page_size)
        if not page:
            return
        yield page
        after = page[-1]["id"]


def _findings(value: Any) -> list[Row] | None:
    if value is None:
        return None
    items = json.loads(value) if isinstance(value, str) else value
    return [{"summary": f.get("summary"), "explanation": f.get("explanation")} for f in items]


def unique_titles(rows: list[Row]) -> dict[str, str]:
    """Entity id -> exported title, unique across the table. Entities merged by title *and* type can share a
    title (``CULTURE`` an event and an organization); GraphRAG's relationships name endpoints by title, so the
    most connected one (then the smallest id) keeps it and the others become ``TITLE (type)``, or
    ``TITLE (id prefix)`` should that be taken too."""
    by_title: dict[str, list[Row]] = {}
    for r in rows:
        by_title.setdefault(r["title"], []).append(r)
    out = {r["id"]: r["title"] for r in rows}
    taken = set(by_title)
    for title, group in sorted(by_title.items()):
        for r in sorted(group, key=lambda r: (-int(r["degree"] or 0), r["id"]))[1:]:
            name = f"{title} ({r['type']})" if r["type"] else ""
            if not name or name in taken:
                name = f"{title} ({r['id'][:8]})"
            taken.add(name)
            out[r["id"]] = name
    return out


def run_export(rt: Runtime, out: str | Path, progress: Any = None) -> ExportSummary:
    """Write every table to ``out``; returns the folder and the rows written per table."""
    store, page_size = rt.store, rt.config.import_.batch_size
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    schemas = _schemas()
    writers = {name: _TableWriter(out / f"{name}.parquet", schema) for name, schema in schemas.items()}

    def tick(name: str) -> Callable[[int], None]:
        return progress.task(f"export {name}", None) if progress is not None else (lambda n: None)

    titles = unique_titles(store.read("export/entity_titles"))
    try:
        advance = tick("documents")
        for page in _pages(store, "documents", page_size):
            writers["documents"].write(page)
            advance(len(page))
        advance = tick("entities")
        for page in _pages(store, "entities", page_size):
            writers["entities"].write([{**e, "title": titles.get(e["id"], e["title"])} for e in page])
            advance(len(page))
        rels_of_chunk: dict[str, list[str]] = {}
        advance = tick("relationships")
        for page in _pages(store, "relationships", page_size):
            for r in page:
                for chunk_id in r["text_unit_ids"]:
                    rels_of_chunk.setdefault(chunk_id, []).append(r["id"])
                r["source"] = titles.get(r["source_id"], r["source"])
                r["target"] = titles.get(r["target_id"], r["target"])
            writers["relationships"].write(page)
            advance(len(page))
        advance = tick("text_units")
        for page in _pages(store, "text_units", page_size):
            writers["text_units"].write([{**r, "relationship_ids": rels_of_chunk.get(r["id"], [])} for r in page])
            advance(len(page))
        advance = tick("communities")
        for page in _pages(store, "communities", page_size):
            writers["communities"].write(page)
            writers["community_reports"].write([_report(r) for r in page if r["full_content"] is not None])
            advance(len(page))
        advance = tick("covariates")
        for page in _pages(store, "claims", page_size):
            writers["covariates"].write(page)
            advance(len(page))
    finally:
        for w in writers.values():
            w.close()
    return ExportSummary(out=str(out), rows={name: w.rows for name, w in writers.items()})


def _report(r: Row) -> Row:
    return {
        "id": r["report_id"],
        "human_readable_id": r["report_human_readable_id"],
        "community": r["community"],
        "level": r["level"],
        "parent": r["parent"],
        "children": r["children"],
        "title": r["report_title"],
        "summary": r["summary"],
        "full_content": r["full_content"],
        "rank": r["rank"],
        "rating_explanation": r["rating_explanation"],
        "findings": _findings(r["findings"]),
        "full_content_json": r["full_content_json"],
        "period": r["period"],
        "size": r["size"],
    }
