"""Seeded synthetic GraphRAG indexes (same tables, columns and Arrow types as a real GraphRAG 3.x output).

python -m bench synth --entities 100000 --out DIR [--seed 0]

Shape per N entities (close to the MuSiQue index's ratios): N/10 text units of ~250 words, 1.2 N
relationships between entities that share a text unit, a 3-level community hierarchy (~1,000 / ~100 / ~10
entities per community) with an extractive report each, one document per 10 text units, and 384-d unit
vectors for entities, text units and reports in GraphRAG's ``embeddings.*.parquet`` files (so neither
system embeds anything). Queries are vectors close to a random entity's vector.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

DIMS = 384
_SYL = ["ka", "lo", "mi", "ren", "tas", "vo", "zul", "qen", "dor", "fi", "nax", "pel", "sor", "tri", "um", "wex"]


def _vocab(rng: np.random.Generator, n: int) -> np.ndarray:
    parts = rng.integers(0, len(_SYL), size=(n, 3))
    return np.array(["".join(_SYL[j] for j in row) for row in parts], dtype=object)


def _unit(rng: np.random.Generator, n: int) -> np.ndarray:
    v = rng.standard_normal((n, DIMS), dtype=np.float32)
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    return v


def _schema(name: str):
    import pyarrow as pa

    s, i, f, ls, li = pa.large_string(), pa.int64(), pa.float64(), pa.list_(pa.string()), pa.list_(pa.int64())
    finding = pa.list_(pa.struct([("summary", pa.string()), ("explanation", pa.string())]))
    cols = {
        "entities": [
            ("id", s),
            ("human_readable_id", i),
            ("title", s),
            ("type", s),
            ("description", s),
            ("text_unit_ids", ls),
            ("frequency", i),
            ("degree", i),
        ],
        "relationships": [
            ("id", s),
            ("human_readable_id", i),
            ("source", s),
            ("target", s),
            ("description", s),
            ("weight", f),
            ("combined_degree", i),
            ("text_unit_ids", ls),
        ],
        "text_units": [
            ("id", s),
            ("human_readable_id", i),
            ("text", s),
            ("n_tokens", i),
            ("document_id", s),
            ("entity_ids", ls),
            ("relationship_ids", ls),
            ("covariate_ids", pa.list_(pa.null())),
        ],
        "communities": [
            ("id", s),
            ("human_readable_id", i),
            ("community", i),
            ("level", i),
            ("parent", i),
            ("children", li),
            ("title", s),
            ("entity_ids", ls),
            ("relationship_ids", ls),
            ("text_unit_ids", ls),
            ("period", s),
            ("size", i),
        ],
        "community_reports": [
            ("id", s),
            ("human_readable_id", i),
            ("community", i),
            ("level", i),
            ("parent", i),
            ("children", li),
            ("title", s),
            ("summary", s),
            ("full_content", s),
            ("rank", f),
            ("rating_explanation", s),
            ("findings", finding),
            ("full_content_json", s),
            ("period", s),
            ("size", i),
        ],
        "documents": [
            ("id", s),
            ("human_readable_id", i),
            ("title", s),
            ("text", s),
            ("text_unit_ids", ls),
            ("creation_date", s),
            ("metadata", pa.null()),
        ],
    }[name]
    return pa.schema(cols)


def _write(out: Path, name: str, data: dict) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.Table.from_pydict(data, schema=_schema(name)), out / f"{name}.parquet")


def _write_vectors(out: Path, name: str, ids: list[str], vecs: np.ndarray) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    flat = pa.array(vecs.reshape(-1), type=pa.float32())
    col = pa.ListArray.from_arrays(pa.array(np.arange(0, len(ids) * DIMS + 1, DIMS, dtype=np.int32)), flat)
    pq.write_table(pa.table({"id": pa.array(ids, pa.large_string()), "embedding": col}), out / name)


def generate(n: int, out: Path, seed: int = 0, n_queries: int = 20) -> dict:
    """Write the tables for ``n`` entities into ``out``; returns counts and the query vectors' file."""
    rng = np.random.default_rng(seed)
    out.mkdir(parents=True, exist_ok=True)
    words = _vocab(rng, 5000)
    n_chunks = max(20, n // 10)
    eid = [f"e{i:08d}" for i in range(n)]
    cid = [f"t{i:07d}" for i in range(n_chunks)]
    titles = [f"{w1.upper()} {w2.upper()} {i}" for i, (w1, w2) in enumerate(words[rng.integers(0, 5000, (n, 2))])]
    # entity -> 1..3 chunks; chunk -> its entities
    n_in = rng.integers(1, 4, n)
    ent_chunks = [sorted(set(rng.integers(0, n_chunks, k).tolist())) for k in n_in]
    chunk_ents: list[list[int]] = [[] for _ in range(n_chunks)]
    for e, cs in enumerate(ent_chunks):
        for c in cs:
            chunk_ents[c].append(e)
    # relationships between entities sharing a chunk
    n_rel = int(1.2 * n)
    rel_chunk = rng.integers(0, n_chunks, n_rel * 2)
    src, dst, rc = [], [], []
    for c in rel_chunk:
        ents = chunk_ents[c]
        if len(ents) < 2:
            continue
        a, b = rng.choice(len(ents), 2, replace=False)
        src.append(ents[a])
        dst.append(ents[b])
        rc.append(int(c))
        if len(src) == n_rel:
            break
    degree = np.bincount(np.array(src + dst, dtype=np.int64), minlength=n)
    rid = [f"r{i:08d}" for i in range(len(src))]
    chunk_rels: list[list[str]] = [[] for _ in range(n_chunks)]
    for r, c in zip(rid, rc, strict=True):
        chunk_rels[c].append(r)

    def sentence(k: int) -> str:
        return " ".join(words[rng.integers(0, 5000, k)])

    _write(
        out,
        "entities",
        {
            "id": eid,
            "human_readable_id": list(range(n)),
            "title": titles,
            "type": [["PERSON", "ORGANIZATION", "GEO", "EVENT"][i % 4] for i in range(n)],
            "description": [f"{titles[i]} {sentence(20)}." for i in range(n)],
            "text_unit_ids": [[cid[c] for c in cs] for cs in ent_chunks],
            "frequency": [len(cs) for cs in ent_chunks],
            "degree": degree.tolist(),
        },
    )
    _write(
        out,
        "relationships",
        {
            "id": rid,
            "human_readable_id": list(range(len(rid))),
            "source": [titles[s] for s in src],
            "target": [titles[t] for t in dst],
            "description": [f"{titles[s]} {sentence(8)} {titles[t]}." for s, t in zip(src, dst, strict=True)],
            "weight": rng.uniform(1, 10, len(rid)).round(2).tolist(),
            "combined_degree": [int(degree[s] + degree[t]) for s, t in zip(src, dst, strict=True)],
            "text_unit_ids": [[cid[c]] for c in rc],
        },
    )
    texts = []
    for c in range(n_chunks):
        names = ". ".join(titles[e] for e in chunk_ents[c][:12])
        texts.append(f"{names}. {sentence(max(20, 230 - 3 * min(12, len(chunk_ents[c]))))}.")
    n_docs = max(1, n_chunks // 10)
    did = [f"d{i:07d}" for i in range(n_docs)]
    _write(
        out,
        "text_units",
        {
            "id": cid,
            "human_readable_id": list(range(n_chunks)),
            "text": texts,
            "n_tokens": [int(len(t.split()) * 1.9) for t in texts],
            "document_id": [did[c % n_docs] for c in range(n_chunks)],
            "entity_ids": [[eid[e] for e in es] for es in chunk_ents],
            "relationship_ids": chunk_rels,
            "covariate_ids": [[] for _ in range(n_chunks)],
        },
    )
    _write(
        out,
        "documents",
        {
            "id": did,
            "human_readable_id": list(range(n_docs)),
            "title": [f"Document {i}" for i in range(n_docs)],
            "text": [f"Document {i}" for i in range(n_docs)],
            "text_unit_ids": [[cid[c] for c in range(i, n_chunks, n_docs)] for i in range(n_docs)],
            "creation_date": ["2024-05-23"] * n_docs,
            "metadata": [None] * n_docs,
        },
    )
    # communities: level 0 ~1000 entities, level 1 ~100, level 2 ~10 (contiguous blocks of a shuffled order)
    order = rng.permutation(n)
    rows: list[dict] = []

    def split(members: np.ndarray, level: int, parent: int) -> None:
        size = {0: 1000, 1: 100, 2: 10}[level]
        k = max(1, round(len(members) / size))
        for block in np.array_split(members, k):
            if len(block) == 0:
                continue
            me = len(rows)
            rows.append({"community": me, "level": level, "parent": parent, "members": block, "children": []})
            if parent >= 0:
                rows[parent]["children"].append(me)
            if level < 2 and len(block) > 10:
                split(block, level + 1, me)

    split(order, 0, -1)
    comm_ids = [f"c{i:07d}" for i in range(len(rows))]
    rep_ids = [f"p{i:07d}" for i in range(len(rows))]
    member_titles = [[titles[e] for e in r["members"][:5]] for r in rows]
    _write(
        out,
        "communities",
        {
            "id": comm_ids,
            "human_readable_id": [r["community"] for r in rows],
            "community": [r["community"] for r in rows],
            "level": [r["level"] for r in rows],
            "parent": [r["parent"] for r in rows],
            "children": [r["children"] for r in rows],
            "title": [f"Community {r['community']}" for r in rows],
            "entity_ids": [[eid[e] for e in r["members"]] for r in rows],
            "relationship_ids": [[] for _ in rows],
            "text_unit_ids": [sorted({cid[c] for e in r["members"][:50] for c in ent_chunks[e]}) for r in rows],
            "period": ["2024-05-23"] * len(rows),
            "size": [len(r["members"]) for r in rows],
        },
    )
    findings = [
        [{"summary": f"{t} {sentence(4)}", "explanation": f"{t} {sentence(25)}."} for t in mt[:3]]
        for mt in member_titles
    ]
    summaries = [
        f"This community links {len(r['members'])} entities, including {', '.join(mt)}. {sentence(30)}."
        for r, mt in zip(rows, member_titles, strict=True)
    ]
    full = [
        f"# Community around {', '.join(mt[:3])}\n\n{s}\n\n"
        + "\n\n".join(f"## {f['summary']}\n\n{f['explanation']}" for f in fs)
        for mt, s, fs in zip(member_titles, summaries, findings, strict=True)
    ]
    ranks = [round(min(10.0, 1 + np.log2(len(r["members"]))), 2) for r in rows]
    _write(
        out,
        "community_reports",
        {
            "id": rep_ids,
            "human_readable_id": [r["community"] for r in rows],
            "community": [r["community"] for r in rows],
            "level": [r["level"] for r in rows],
            "parent": [r["parent"] for r in rows],
            "children": [r["children"] for r in rows],
            "title": [f"Community around {', '.join(mt[:3])}" for mt in member_titles],
            "summary": summaries,
            "full_content": full,
            "rank": ranks,
            "rating_explanation": ["synthetic"] * len(rows),
            "findings": findings,
            "full_content_json": [
                json.dumps({"title": mt[0], "summary": s}) for mt, s in zip(member_titles, summaries, strict=True)
            ],
            "period": ["2024-05-23"] * len(rows),
            "size": [len(r["members"]) for r in rows],
        },
    )
    ev = _unit(rng, n)
    _write_vectors(out, "embeddings.entity_description.parquet", eid, ev)
    _write_vectors(out, "embeddings.text_unit_text.parquet", cid, _unit(rng, n_chunks))
    _write_vectors(out, "embeddings.community_full_content.parquet", rep_ids, _unit(rng, len(rows)))
    picks = rng.integers(0, n, n_queries)
    q = ev[picks] + 0.05 * rng.standard_normal((n_queries, DIMS), dtype=np.float32)
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    queries = [
        {"question": f"What is known about {titles[p]}?", "vector": v.tolist()} for p, v in zip(picks, q, strict=True)
    ]
    (out / "queries.json").write_text(json.dumps(queries))
    counts = {
        "entities": n,
        "relationships": len(rid),
        "text_units": n_chunks,
        "communities": len(rows),
        "documents": n_docs,
        "seed": seed,
    }
    (out / "DONE.json").write_text(json.dumps(counts))
    return counts


def ensure(n: int, root: Path, seed: int = 0) -> Path:
    out = root / f"synth-{n}-s{seed}"
    if not (out / "DONE.json").is_file():
        generate(n, out, seed)
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--entities", type=int, required=True)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args(argv)
    print(generate(a.entities, a.out, a.seed))
