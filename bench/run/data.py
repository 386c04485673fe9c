"""The shared data sets (``../shared/data``) as plain Python: questions, text units, texts to embed."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from bench.paths import SHARED

MUSIQUE = SHARED / "musique"
DULCE = SHARED / "operation-dulce"


@dataclass(frozen=True)
class Question:
    id: str
    question: str
    answer: str
    gold: tuple[str, ...]
    hops: int


def require(path: Path) -> Path:
    if not path.exists():
        raise SystemExit(f"bench needs {path} (the shared data sets, see ../shared/data/README.md)")
    return path


def questions(path: Path | None = None) -> list[Question]:
    path = require(path or MUSIQUE / "questions_dev.jsonl")
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            q = json.loads(line)
            out.append(Question(q["id"], q["question"], q["answer"], tuple(q["gold_text_unit_ids"]), int(q["hops"])))
    return out


def text_units(root: Path = MUSIQUE) -> dict[str, str]:
    import pyarrow.parquet as pq

    t = pq.read_table(require(root / "text_units.parquet"), columns=["id", "text"]).to_pydict()
    return dict(zip(t["id"], t["text"], strict=True))


def entity_texts(root: Path = MUSIQUE) -> dict[str, str]:
    """``title:description`` per entity: what GraphRAG and driftgraph both embed for entities."""
    import pyarrow.parquet as pq

    t = pq.read_table(require(root / "entities.parquet"), columns=["id", "title", "description"]).to_pydict()
    return {i: f"{ti}:{d or ''}" for i, ti, d in zip(t["id"], t["title"], t["description"], strict=True)}


def entity_titles(root: Path = MUSIQUE) -> dict[str, str]:
    """The title alone per entity: what driftgraph embeds for synonym edges (``store/synonyms.py``)."""
    import pyarrow.parquet as pq

    t = pq.read_table(require(root / "entities.parquet"), columns=["id", "title"]).to_pydict()
    return {i: ti for i, ti in zip(t["id"], t["title"], strict=True) if ti and ti.strip()}


def report_texts(root: Path = MUSIQUE) -> dict[str, str]:
    import pyarrow.parquet as pq

    t = pq.read_table(require(root / "community_reports.parquet"), columns=["id", "full_content"]).to_pydict()
    return dict(zip(t["id"], [c or "" for c in t["full_content"]], strict=True))
