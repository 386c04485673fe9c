"""The presentation order of local search's included chunks (``local.chunk_rank``, query/local/present.py):
deterministic behaviour, no database."""

from driftgraph.config import LocalConfig
from driftgraph.query import tables as render
from driftgraph.query.budget import Candidate
from driftgraph.query.local.present import present, presentation_score


def _chunk(cid: str, rank: int, score: float, sim: float, **signals: float) -> Candidate:
    payload = {"text": f"text of {cid}", "similarity": sim, "signals": signals}
    payload["row"] = render.row("chunk", rank, payload)
    return Candidate("chunk", cid, 5, score, rank=rank, hop="vector", payload=payload)


def _entity(eid: str, rank: int) -> Candidate:
    payload = {"title": eid.upper(), "description": "d", "degree": 1}
    return Candidate("entity", eid, 4, 0.5, rank=rank, payload={**payload, "row": render.row("entity", rank, payload)})


def _included() -> list[Candidate]:
    # selection order a, b, c (short ids 1, 2, 4: chunk 3 was dropped for budget), an entity in between
    return [
        _chunk("a", 1, 2.0, 0.30, mass=1.0),
        _entity("e", 1),
        _chunk("b", 2, 1.0, 0.50, entities=0.9),
        _chunk("c", 4, 0.9, 0.40, mass=0.2, seed=1.0),
    ]


def test_score_keeps_the_selection_order_untouched() -> None:
    inc = _included()
    assert present(inc, LocalConfig(chunk_rank="score")) == inc


def test_vector_orders_by_similarity_and_reuses_the_short_ids() -> None:
    shown = present(_included(), LocalConfig(chunk_rank="vector"))
    chunks = sorted((c for c in shown if c.source == "chunk"), key=lambda c: c.rank)
    assert [(c.id, c.rank) for c in chunks] == [("b", 1), ("c", 2), ("a", 4)]
    assert all(c.payload["row"].startswith(f"{c.rank}|text of {c.id}") for c in chunks)
    assert [c.id for c in shown] == ["a", "e", "b", "c"]  # same items, same places in the list
    assert (shown[1].id, shown[1].rank) == ("e", 1)


def test_graph_weighs_the_walk_the_entity_cover_and_the_seed() -> None:
    walk = LocalConfig(chunk_rank="graph", chunk_rank_weights={"ppr": 1.0, "entities": 0.0})
    cover = LocalConfig(chunk_rank="graph", chunk_rank_weights={"ppr": 0.0, "entities": 1.0})
    seed = LocalConfig(chunk_rank="graph", chunk_rank_weights={"ppr": 0.0, "entities": 0.0, "seed": 1.0})

    def order(s: LocalConfig) -> list[str]:
        return [c.id for c in sorted((c for c in present(_included(), s) if c.source == "chunk"), key=lambda c: c.rank)]

    assert order(walk) == ["a", "c", "b"]  # 1.30, 0.60, 0.50
    assert order(cover) == ["b", "c", "a"]  # 1.40, 0.40, 0.30
    assert order(seed) == ["c", "b", "a"]  # 1.40, 0.50, 0.30
    assert presentation_score(_included()[0], walk) == 1.3


def test_ties_go_to_the_selection_order() -> None:
    inc = [_chunk("x", 1, 1.0, 0.5), _chunk("y", 2, 0.9, 0.5)]
    shown = present(inc, LocalConfig(chunk_rank="vector"))
    assert [(c.id, c.rank) for c in shown] == [("x", 1), ("y", 2)]
    assert shown[0] is inc[0] and shown[1] is inc[1]  # unchanged candidates are not copied


def test_chain_puts_the_link_of_the_chunk_before_next() -> None:
    a = _chunk("a", 1, 2.0, 0.60)
    b = _chunk("b", 2, 1.0, 0.50)
    c = _chunk("c", 3, 0.9, 0.40)
    a.payload["links"] = {"c": 0.8}  # c shares a rare entity with a (the second hop's link)
    c.payload["links"] = {"a": 0.8}
    flat = LocalConfig(chunk_rank="graph", chunk_rank_weights={"ppr": 0.0, "entities": 0.0, "chain": 0.0})
    chained = LocalConfig(chunk_rank="graph", chunk_rank_weights={"ppr": 0.0, "entities": 0.0, "chain": 0.5})

    def order(s: LocalConfig) -> list[str]:
        return [x.id for x in sorted(present([a, b, c], s), key=lambda x: x.rank)]

    assert order(flat) == ["a", "b", "c"]
    assert order(chained) == ["a", "c", "b"]  # 0.40 + 0.5 x 0.8 = 0.80 > 0.50
    assert order(chained) == order(chained)  # deterministic
