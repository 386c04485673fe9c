"""Synthetic multi-hop questions over the MuSiQue index: a second set to check that a change generalises.

python -m bench synth-questions --per-hops 60 --seed 0 --out bench/questions/musique_synth.jsonl
python -m bench synth-questions --per-hops 60 --seed 1 --exclude bench/questions/musique_synth.jsonl \
    --out bench/questions/musique_synth_seed1.jsonl   # a held-out set: other chains only
python -m bench synth-questions --per-hops 80 --seed 2 --exclude bench/questions/musique_synth.jsonl \
    --exclude bench/questions/musique_synth_seed1.jsonl --out bench/questions/musique_synth_seed2.jsonl
python -m bench synth-questions --per-hops 150 --seed 3 --hops 3,4 --coherent \
    --exclude bench/questions/musique_synth.jsonl --exclude bench/questions/musique_synth_seed1.jsonl \
    --exclude bench/questions/musique_synth_seed2.jsonl --out bench/questions/musique_synth_seed3.jsonl \
    --packets /tmp/seed3_packets.json   # named bridges only; the packets are what a reader words

The 50 dev questions hold 16 three-hop and 2 four-hop ones: too few to tell whether a multi-hop mechanism
helps beyond them. This builds questions the way MuSiQue itself was built, by composing single-hop facts:
a chain of extracted triples ``A -p1-> B1 -p2-> B2 ... -pk-> answer`` whose consecutive triples come from
different text units and meet at a rare bridge entity. The question names only the anchor ``A`` and the
predicates ("Brand written by; citizen of"), never a bridge or the answer; the gold units are the chain's
text units, and no unit after the first names the anchor, so each hop must be found through the one before.
The wording is mechanical (no model here), closer to the extraction than a person's question: a check on the
graph's hops, not a forecast of MuSiQue figures. Seed 0 (``musique_synth.jsonl``) was looked at when the walk's
settings were chosen; seed 1 with seed 0's chains excluded (``musique_synth_seed1.jsonl``) was held out for
that choice and then looked at when the walk took the RELATED edges among the entities it knows; seed 2 with
both sets' chains excluded (``musique_synth_seed2.jsonl``, 80 per hop count asked, since many chains repeat)
is held out from both; seed 3 (``--coherent``) and the questions a reader worded from the seed-2 and seed-3
chains (``musique_synth_worded.jsonl``, bench/README.md) came after every choice. Every random choice goes
through one ``numpy.random.Generator`` seeded by ``--seed``.
"""

from __future__ import annotations

import argparse
import json
import re
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from bench.run import data

WORD = re.compile(r"[A-Za-z]{3,}")


@dataclass(frozen=True)
class Triple:
    unit: str
    head: str  # the entity the sentence starts from (named first)
    tail: str
    predicate: str  # the description without either name


def triples(root: Path = data.MUSIQUE) -> list[Triple]:
    """One triple per (relationship, text unit) whose description names both ends, head first."""
    import pyarrow.parquet as pq

    cols = ["source", "target", "description", "text_unit_ids"]
    t = pq.read_table(data.require(root / "relationships.parquet"), columns=cols).to_pydict()
    out = []
    for s, o, d, units in zip(t["source"], t["target"], t["description"], t["text_unit_ids"], strict=True):
        d = (d or "").strip().rstrip(".")
        i, j = d.find(s), d.find(o)
        if i < 0 or j < 0 or s == o:
            continue
        head, tail = (s, o) if i <= j else (o, s)
        pred = " ".join(d.replace(head, " ", 1).replace(tail, " ", 1).split())
        if not WORD.search(pred):
            continue
        out.extend(Triple(u, head, tail, pred) for u in units or [])
    return out


def entity_units(root: Path = data.MUSIQUE) -> dict[str, set[str]]:
    import pyarrow.parquet as pq

    t = pq.read_table(data.require(root / "entities.parquet"), columns=["title", "text_unit_ids"]).to_pydict()
    return {ti: set(u or []) for ti, u in zip(t["title"], t["text_unit_ids"], strict=True)}


def chains(
    trs: list[Triple],
    units_of: dict[str, set[str]],
    hops: int,
    n: int,
    rng: np.random.Generator,
    max_df: int = 6,
    tries: int = 200_000,
    coherent: bool = False,
) -> list[list[Triple]]:
    """Up to ``n`` chains of ``hops`` triples: distinct units, rare bridges, the anchor only in the first unit.

    ``coherent``: every bridge is a name (a capitalised word, no digit): a year or a generic noun links facts
    that have nothing else to do with each other, and a reader wording the chains rejects nearly all of them."""
    by_end: dict[str, list[Triple]] = defaultdict(list)
    for tr in trs:
        by_end[tr.head].append(tr)
        by_end[tr.tail].append(tr)
    starts = [tr for tr in trs if 1 <= len(units_of.get(tr.head, ())) <= 3]
    found: list[list[Triple]] = []
    seen_units: set[tuple[str, ...]] = set()
    for _ in range(tries):
        if len(found) >= n or not starts:
            break
        first = starts[int(rng.integers(len(starts)))]
        anchor, chain, bridge = first.head, [first], first.tail
        names = {anchor, bridge}
        anchor_units = units_of.get(anchor, set())
        while len(chain) < hops:
            df = len(units_of.get(bridge, ()))
            if not 2 <= df <= max_df or (coherent and not _named(bridge)):
                break
            used = {tr.unit for tr in chain}
            nxt = [
                tr
                for tr in by_end[bridge]
                if tr.unit not in used
                and tr.unit not in anchor_units
                and (tr.tail if tr.head == bridge else tr.head) not in names
            ]
            if not nxt:
                break
            tr = nxt[int(rng.integers(len(nxt)))]
            chain.append(tr)
            bridge = tr.tail if tr.head == bridge else tr.head
            names.add(bridge)
        key = tuple(tr.unit for tr in chain)
        if len(chain) == hops and key not in seen_units and _clean(chain, anchor):
            seen_units.add(key)
            found.append(chain)
    return found


def _named(title: str) -> bool:
    """A proper name: a capitalised word of three letters or more, and no digit (not a year or an amount)."""
    return not any(ch.isdigit() for ch in title) and any(w[:1].isupper() for w in WORD.findall(title))


def _clean(chain: list[Triple], anchor: str) -> bool:
    """The question names no bridge and not the answer; the anchor has a word (not a bare number or date)."""
    text = question_text(chain).lower()
    hidden = _ends(chain) - {anchor}
    return bool(WORD.search(anchor)) and not any(h.lower() in text for h in hidden)


def _ends(chain: list[Triple]) -> set[str]:
    return {e for tr in chain for e in (tr.head, tr.tail)}


def answer_of(chain: list[Triple]) -> str:
    """The end of the last triple that the chain did not arrive by."""
    last = chain[-1]
    return last.tail if last.head in _ends(chain[:-1]) else last.head


def question_text(chain: list[Triple]) -> str:
    """The anchor with its predicate, then each later predicate: "Brand written by; citizen of?"."""
    first = chain[0]
    parts = [f"{first.head} {first.predicate}", *(tr.predicate for tr in chain[1:])]
    return "; ".join(parts) + "?"


def build(
    per_hops: int,
    seed: int,
    hop_counts=(2, 3, 4),
    root: Path = data.MUSIQUE,
    exclude: frozenset = frozenset(),
    coherent: bool = False,
    with_chains: bool = False,
) -> list[dict]:
    """Up to ``per_hops`` questions per hop count, leaving out chains whose gold units ``exclude`` holds;
    ``with_chains`` adds each chain's triples (``chain``: head, predicate, tail), for a person to word."""
    rng = np.random.default_rng(seed)
    trs = triples(root)
    units_of = entity_units(root)
    rows = []
    for hops in hop_counts:
        for i, chain in enumerate(chains(trs, units_of, hops, per_hops, rng, coherent=coherent)):
            if tuple(tr.unit for tr in chain) in exclude:
                continue
            answer = answer_of(chain)
            rows.append(
                {
                    "id": f"synth{hops}hop_{i:03d}",
                    "question": question_text(chain),
                    "answer": answer,
                    "gold_text_unit_ids": [tr.unit for tr in chain],
                    "hops": hops,
                }
            )
            if with_chains:
                rows[-1]["chain"] = [{"head": t.head, "predicate": t.predicate, "tail": t.tail} for t in chain]
    return rows


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--per-hops", type=int, default=60, help="questions per hop count (2, 3, 4)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=Path("bench/questions/musique_synth.jsonl"))
    ap.add_argument(
        "--exclude",
        type=Path,
        action="append",
        default=[],
        help="leave out the chains of this question file (a held-out set); repeat for several files",
    )
    ap.add_argument("--hops", default="2,3,4", help="hop counts, comma-separated")
    ap.add_argument(
        "--coherent", action="store_true", help="bridges are names only: no years, amounts or generic nouns"
    )
    ap.add_argument(
        "--packets",
        type=Path,
        help="also write, per question, its chain's triples and gold passages (JSON), for wording by a reader",
    )
    a = ap.parse_args(argv)
    exclude = frozenset(
        tuple(json.loads(line)["gold_text_unit_ids"])
        for path in a.exclude
        for line in path.read_text(encoding="utf-8").splitlines()
        if line.strip()
    )
    hop_counts = tuple(int(h) for h in a.hops.split(","))
    rows = build(a.per_hops, a.seed, hop_counts, exclude=exclude, coherent=a.coherent, with_chains=True)
    plain = [{k: v for k, v in r.items() if k != "chain"} for r in rows]
    a.out.write_text("".join(json.dumps(r) + "\n" for r in plain), encoding="utf-8")
    if a.packets:
        texts = data.text_units()
        packets = [{**r, "passages": [texts[u] for u in r["gold_text_unit_ids"]]} for r in rows]
        a.packets.write_text(json.dumps(packets, indent=1, ensure_ascii=False), encoding="utf-8")
    counts = {h: sum(r["hops"] == h for r in rows) for h in (2, 3, 4)}
    print(f"wrote {len(rows)} questions to {a.out} (per hop count: {counts})")
