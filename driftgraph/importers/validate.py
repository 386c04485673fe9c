"""The up-front pass over a GraphRAG folder: files, columns, ids and references, before anything is written.

Only id-like columns are read here (never descriptions or texts). What comes out is the small lookup state
the streaming writers need (entity title -> id, chunk positions) and the counted warnings.
Hard errors (the import stops, nothing written): a missing folder/table/column, a mistyped column, a null
or duplicate id, a duplicate entity title or community number. Warnings (the row is skipped or written
without the link): empty entity titles, relationship endpoints that are not entities, a parent community
that does not exist, reports of unknown communities, chunks of unknown documents, claims about unknown
entities or chunks, documents listing text units that do not exist.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from driftgraph.errors import GraphragFormatError
from driftgraph.importers.graphrag import (
    TABLES,
    TableFile,
    Warnings,
    find_table,
    open_table,
    read_column,
)


@dataclass
class Catalog:
    directory: Path
    files: dict[str, TableFile]
    entity_id_by_title: dict[str, str] = field(default_factory=dict)
    placeholder_ids: dict[str, str] = field(default_factory=dict)  # title -> id of an endpoint entities lack
    chunk_ids: set[str] = field(default_factory=set)
    document_ids: set[str] = field(default_factory=set)
    chunk_position: dict[str, int] = field(default_factory=dict)
    community_numbers: set[int] = field(default_factory=set)
    warnings: Warnings = field(default_factory=Warnings)


def _unique_ids(tf: TableFile, column: str = "id") -> list[Any]:
    values = read_column(tf, column)
    nulls = sum(1 for v in values if v is None or v == "")
    if nulls:
        raise GraphragFormatError(f"{tf.path}: {nulls} rows have no '{column}'")
    dupes = [v for v, n in Counter(values).items() if n > 1]
    if dupes:
        raise GraphragFormatError(
            f"{tf.path}: duplicate {column} {dupes[0]!r} ({len(dupes)} duplicated value(s)); ids must be unique"
        )
    return values


def open_folder(directory: str | Path) -> Catalog:
    """Find and check every table file, then every id and reference; raise on the first hard error."""
    directory = Path(directory)
    if not directory.is_dir():
        raise GraphragFormatError(f"{directory}: no such folder (expected a GraphRAG output folder of .parquet files)")
    files: dict[str, TableFile] = {}
    for table in TABLES:
        path = find_table(directory, table)
        if path is None:
            if table.required:
                raise GraphragFormatError(
                    f"{directory}: missing {table.name}.parquet (or create_final_{table.name}.parquet)"
                )
            continue
        files[table.name] = open_table(path, table)
    cat = Catalog(directory, files)
    _check_documents_and_chunks(cat)
    _check_entities(cat)
    _check_relationships(cat)
    _check_communities(cat)
    _check_claims(cat)
    return cat


def _check_documents_and_chunks(cat: Catalog) -> None:
    docs = cat.files["documents"]
    units = cat.files["text_units"]
    cat.document_ids = set(_unique_ids(docs))
    cat.chunk_ids = set(_unique_ids(units))
    for doc_id, unit_ids in zip(read_column(docs, "id"), read_column(docs, "text_unit_ids"), strict=True):
        unknown = [u for u in unit_ids or [] if u not in cat.chunk_ids]
        if unknown:  # chunk order then falls back to the order of text_units.parquet
            cat.warnings.add("documents_unknown_text_units", f"document {doc_id}: text unit {unknown[0]!r} is missing")
        for pos, chunk_id in enumerate(u for u in unit_ids or [] if u in cat.chunk_ids):
            cat.chunk_position.setdefault(chunk_id, pos)
    for chunk_id, doc in zip(read_column(units, "id"), document_of_rows(units), strict=True):
        if doc not in cat.document_ids:
            cat.warnings.add("chunks_unknown_document", f"text unit {chunk_id}: document {doc!r} not in documents")


def document_of_rows(units: TableFile) -> list[str | None]:
    """``document_id`` (GraphRAG 2.x+) or the first of ``document_ids`` (1.x)."""
    if units.has("document_id"):
        return read_column(units, "document_id")
    return [ids[0] if ids else None for ids in read_column(units, "document_ids")]


def _check_entities(cat: Catalog) -> None:
    ents = cat.files["entities"]
    ids = _unique_ids(ents)
    seen: dict[str, str] = {}
    for entity_id, title in zip(ids, read_column(ents, "title"), strict=True):
        if title is None or not str(title).strip():
            cat.warnings.add("entities_without_title", f"entity {entity_id} has no title (skipped)")
            continue
        if title in seen:
            raise GraphragFormatError(
                f"{ents.path}: duplicate title {title!r} (ids {seen[title]} and {entity_id}); relationships "
                "name their endpoints by title, so titles must be unique"
            )
        seen[title] = entity_id
    cat.entity_id_by_title = seen


def _check_relationships(cat: Catalog) -> None:
    rels = cat.files["relationships"]
    ids = _unique_ids(rels)
    titles = cat.entity_id_by_title
    for rel_id, src, dst in zip(ids, read_column(rels, "source"), read_column(rels, "target"), strict=True):
        missing = [t for t in (src, dst) if t not in titles]
        if missing:
            cat.warnings.add(
                "relationships_unknown_endpoint",
                f"relationship {rel_id}: {missing[0]!r} is no entity (kept, with a placeholder entity)",
            )
        for title in missing:
            if title is not None and title not in cat.placeholder_ids:
                cat.placeholder_ids[str(title)] = placeholder_id(str(title))


def placeholder_id(title: str) -> str:
    """A stable id for a placeholder entity: the same title gets the same id on every import."""
    import hashlib

    return "placeholder-" + hashlib.sha1(title.encode("utf-8")).hexdigest()[:16]


def _check_communities(cat: Catalog) -> None:
    comms = cat.files["communities"]
    _unique_ids(comms)
    numbers = _unique_ids(comms, "community")
    cat.community_numbers = set(numbers)
    for number, parent in zip(numbers, read_column(comms, "parent"), strict=True):
        if parent is not None and parent >= 0 and parent not in cat.community_numbers:
            cat.warnings.add("communities_missing_parent", f"community {number}: parent {parent} does not exist")
    if not comms.has("parent"):
        cat.warnings.add("communities_without_parent_column", f"{comms.path.name} has no 'parent': no hierarchy")
    reports = cat.files["community_reports"]
    if reports.has("id"):
        _unique_ids(reports)
    for number in _unique_ids(reports, "community"):
        if number not in cat.community_numbers:
            cat.warnings.add("reports_unknown_community", f"report of community {number}: no such community")


def _check_claims(cat: Catalog) -> None:
    claims = cat.files.get("covariates")
    if claims is None:
        return
    ids = _unique_ids(claims)
    for claim_id, subject, unit in zip(
        ids, read_column(claims, "subject_id"), read_column(claims, "text_unit_id"), strict=True
    ):
        if subject not in cat.entity_id_by_title:
            cat.warnings.add("claims_unknown_subject", f"claim {claim_id}: subject {subject!r} is no entity")
        if unit is not None and unit not in cat.chunk_ids:
            cat.warnings.add("claims_unknown_chunk", f"claim {claim_id}: text unit {unit!r} does not exist")


def count_rows(files: Iterable[TableFile]) -> dict[str, int]:
    return {tf.table.name: tf.rows for tf in files}
