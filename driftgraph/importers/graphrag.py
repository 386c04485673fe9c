"""Reading and validating a Microsoft GraphRAG output folder (parquet, GraphRAG 1.x-3.x table names).

Everything here happens before the first write: the files are found, every column is checked by name and
Arrow type, and the id columns are scanned for duplicates, empty titles and dangling references. Rows are
then streamed one record batch at a time (``GraphragIndex.rows``) so a large index is never held in Python
as a whole.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from driftgraph.errors import GraphragFormatError

if TYPE_CHECKING:
    import pyarrow as pa

# Arrow kinds a column may have. "any" accepts every type (e.g. document metadata, often all-null).
STR, INT, FLOAT, STR_LIST, INT_LIST, FINDINGS, ANY = (
    "string",
    "int",
    "float",
    "list<string>",
    "list<int>",
    "findings",
    "any",
)

# Precomputed vectors GraphRAG writes next to the tables, and the node kind they belong to.
EMBEDDING_FILES = {
    "entity": "embeddings.entity_description.parquet",
    "chunk": "embeddings.text_unit_text.parquet",
    "community": "embeddings.community_full_content.parquet",
}


@dataclass(frozen=True)
class Col:
    name: str
    kind: str
    required: bool = False
    aliases: tuple[str, ...] = ()


@dataclass(frozen=True)
class Table:
    name: str
    columns: tuple[Col, ...]
    required: bool = True


TABLES: tuple[Table, ...] = (
    Table(
        "documents",
        (
            Col("id", STR, True),
            Col("human_readable_id", INT),
            Col("title", STR, True),
            Col("text", STR),
            Col("text_unit_ids", STR_LIST),
            Col("creation_date", STR),
            Col("metadata", ANY),
        ),
    ),
    Table(
        "text_units",
        (
            Col("id", STR, True),
            Col("human_readable_id", INT),
            Col("text", STR, True),
            Col("document_id", STR),
            Col("document_ids", STR_LIST),  # GraphRAG 1.x
        ),
    ),
    Table(
        "entities",
        (
            Col("id", STR, True),
            Col("human_readable_id", INT),
            Col("title", STR, True, aliases=("name",)),
            Col("type", STR),
            Col("description", STR),
            Col("text_unit_ids", STR_LIST),
            Col("frequency", INT),
            Col("degree", INT),
        ),
    ),
    Table(
        "relationships",
        (
            Col("id", STR, True),
            Col("human_readable_id", INT),
            Col("source", STR, True),
            Col("target", STR, True),
            Col("description", STR),
            Col("weight", FLOAT),
            Col("combined_degree", INT),
            Col("text_unit_ids", STR_LIST),
        ),
    ),
    Table(
        "communities",
        (
            Col("id", STR, True),
            Col("human_readable_id", INT),
            Col("community", INT, True),
            Col("level", INT, True),
            Col("parent", INT),
            Col("title", STR),
            Col("entity_ids", STR_LIST, True),
            Col("relationship_ids", STR_LIST),
            Col("text_unit_ids", STR_LIST),
            Col("period", STR),
            Col("size", INT),
        ),
    ),
    Table(
        "community_reports",
        (
            Col("id", STR),
            Col("human_readable_id", INT),
            Col("community", INT, True),
            Col("title", STR),
            Col("summary", STR),
            Col("full_content", STR, True),
            Col("rank", FLOAT),
            Col("rating_explanation", STR, aliases=("rank_explanation",)),
            Col("findings", FINDINGS),
            Col("full_content_json", STR),
        ),
    ),
    Table(
        "covariates",
        (
            Col("id", STR, True),
            Col("human_readable_id", INT),
            Col("covariate_type", STR),
            Col("type", STR),
            Col("description", STR),
            Col("subject_id", STR, True),
            Col("object_id", STR),
            Col("status", STR),
            Col("start_date", STR),
            Col("end_date", STR),
            Col("source_text", STR),
            Col("text_unit_id", STR),
        ),
        required=False,
    ),
)
TABLE_BY_NAME = {t.name: t for t in TABLES}


def _type_ok(kind: str, typ: pa.DataType) -> bool:
    import pyarrow as pa

    t = pa.types
    if kind == ANY or t.is_null(typ):
        return True
    if kind == STR:
        return bool(t.is_string(typ) or t.is_large_string(typ))
    if kind == INT:
        return bool(t.is_integer(typ))
    if kind == FLOAT:
        return bool(t.is_floating(typ) or t.is_integer(typ))
    if kind == FINDINGS:
        return bool(t.is_string(typ) or t.is_large_string(typ) or (_is_list(typ) and t.is_struct(typ.value_type)))
    if not _is_list(typ):
        return False
    inner = typ.value_type
    if t.is_null(inner):
        return True
    return bool((t.is_string(inner) or t.is_large_string(inner)) if kind == STR_LIST else t.is_integer(inner))


def _is_list(typ: pa.DataType) -> bool:
    import pyarrow as pa

    return bool(pa.types.is_list(typ) or pa.types.is_large_list(typ))


@dataclass
class TableFile:
    """One table's parquet file and which of its columns hold which spec column (aliases resolved)."""

    table: Table
    path: Path
    rows: int
    columns: dict[str, str]  # spec name -> column name in the file

    def has(self, name: str) -> bool:
        return name in self.columns


@dataclass
class Warnings:
    """Counted data problems that do not stop the import, with a few examples each for the summary."""

    counts: Counter[str] = field(default_factory=Counter)
    examples: dict[str, list[str]] = field(default_factory=dict)

    def add(self, key: str, example: str, n: int = 1) -> None:
        self.counts[key] += n
        ex = self.examples.setdefault(key, [])
        if len(ex) < 3:
            ex.append(example)


def find_table(directory: Path, table: Table) -> Path | None:
    for candidate in (f"{table.name}.parquet", f"create_final_{table.name}.parquet"):
        if (directory / candidate).is_file():
            return directory / candidate
    return None


def open_table(path: Path, table: Table) -> TableFile:
    """Check every column of ``table`` against the file's schema; names the file and column on failure."""
    import pyarrow.parquet as pq

    try:
        pf = pq.ParquetFile(path)
    except Exception as err:
        raise GraphragFormatError(f"{path}: not a readable parquet file ({err})") from None
    schema = pf.schema_arrow
    present: dict[str, str] = {}
    for col in table.columns:
        name = next((n for n in (col.name, *col.aliases) if n in schema.names), None)
        if name is None:
            if col.required:
                raise GraphragFormatError(f"{path}: missing column '{col.name}' (expected {col.kind})")
            continue
        typ = schema.field(name).type
        if not _type_ok(col.kind, typ):
            raise GraphragFormatError(f"{path}: column '{name}' has type {typ}, expected {col.kind}")
        present[col.name] = name
    if table.name == "text_units" and not ({"document_id", "document_ids"} & present.keys()):
        raise GraphragFormatError(f"{path}: missing column 'document_id' (or 'document_ids'), expected string")
    return TableFile(table, path, pf.metadata.num_rows, present)


def iter_rows(tf: TableFile, batch_size: int, columns: list[str] | None = None) -> Iterator[list[dict[str, Any]]]:
    """Record batches as lists of dicts keyed by spec names (aliases renamed), one batch in memory at a time."""
    import pyarrow.parquet as pq

    wanted = [c for c in (columns or list(tf.columns)) if c in tf.columns]
    file_cols = [tf.columns[c] for c in wanted]
    pf = pq.ParquetFile(tf.path)
    for batch in pf.iter_batches(batch_size=batch_size, columns=file_cols):
        rows = batch.to_pylist()
        if file_cols != wanted:
            rename = dict(zip(file_cols, wanted, strict=True))
            rows = [{rename[k]: v for k, v in r.items()} for r in rows]
        yield rows


def read_column(tf: TableFile, name: str) -> list[Any]:
    import pyarrow.parquet as pq

    if name not in tf.columns:
        return [None] * tf.rows
    values: list[Any] = pq.ParquetFile(tf.path).read(columns=[tf.columns[name]]).column(0).to_pylist()
    return values
