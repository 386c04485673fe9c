"""Budget arithmetic and the item-level fill: invariants checked with hypothesis."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from driftgraph.query.budget import BudgetError, Candidate, Demand, derive_budget, fill

SOURCES = ["report", "entity", "relationship", "chunk", "claim"]


def test_derived_budget_arithmetic_and_cap():
    b = derive_budget(Demand(window=16000, answer_reserve=1000, prompt=300, question=20, history=500, cap=8000))
    assert b.derived == 16000 - 1000 - 300 - 20 - 500
    assert b.context == 8000 and not b.fixed
    small = derive_budget(Demand(window=4096, answer_reserve=1000, prompt=300, question=20, history=0, cap=8000))
    assert small.context == small.derived == 2776


def test_override_keeps_the_derived_arithmetic():
    b = derive_budget(Demand(window=16000, answer_reserve=1000, prompt=300, question=20, history=0, cap=8000), 2000)
    assert b.context == 2000 and b.fixed and b.derived == 14680


def test_question_longer_than_window_is_an_error():
    with pytest.raises(BudgetError, match="exceed the model window"):
        derive_budget(Demand(window=4096, answer_reserve=1000, prompt=300, question=5000, history=0, cap=8000))
    with pytest.raises(BudgetError, match="no room for context"):
        derive_budget(Demand(window=4096, answer_reserve=1000, prompt=300, question=2000, history=796, cap=8000))


def test_floors_first_then_priority_with_carry_over():
    cands = {
        "chunk": [Candidate("chunk", f"c{i}", 10, 1.0, rank=i + 1) for i in range(5)],
        "entity": [Candidate("entity", f"e{i}", 5, 1.0, rank=i + 1) for i in range(5)],
    }
    res = fill(cands, order=["chunk", "entity"], floors={"entity": 2}, budget=50)
    ids = [c.id for c in res.included]
    assert "e0" in ids and "e1" in ids  # the floor, although entities come second
    assert sum(1 for c in res.included if c.source == "chunk") == 4  # chunks get what is left
    assert res.used == 50
    # nothing of the first source unused: carry-over to entities when chunks run out
    res2 = fill({"chunk": cands["chunk"][:1], "entity": cands["entity"]}, ["chunk", "entity"], {}, 40)
    assert [c.id for c in res2.included] == ["c0", "e0", "e1", "e2", "e3", "e4"]


def test_headers_are_charged_once_per_opened_section():
    cands = {"chunk": [Candidate("chunk", f"c{i}", 10, 1.0, rank=i + 1) for i in range(3)]}
    res = fill(cands, ["chunk"], {}, 100, header_tokens={"chunk": 7})
    assert res.used == 37 and res.opened == ["chunk"]


def test_unrouted_sources_are_dropped_with_reason():
    res = fill({"claim": [Candidate("claim", "k", 1, 1.0)]}, ["chunk"], {}, 100)
    assert res.dropped[0][1] == "not_routed" and not res.included


candidate_lists = st.dictionaries(
    st.sampled_from(SOURCES),
    st.lists(st.integers(min_value=1, max_value=400), min_size=0, max_size=25),
    max_size=5,
)


@settings(max_examples=300, deadline=None)
@given(
    sizes=candidate_lists,
    budget=st.integers(min_value=0, max_value=5000),
    order=st.permutations(SOURCES),
    floors=st.dictionaries(st.sampled_from(SOURCES), st.integers(min_value=0, max_value=10), max_size=5),
    headers=st.dictionaries(st.sampled_from(SOURCES), st.integers(min_value=0, max_value=30), max_size=5),
)
def test_fill_invariants(sizes, budget, order, floors, headers):
    cands = {
        src: [Candidate(src, f"{src}{i}", t, 1.0, rank=i + 1) for i, t in enumerate(ts)] for src, ts in sizes.items()
    }
    res = fill(cands, list(order), floors, budget, header_tokens=headers)
    # never over budget, and the accounting matches the items and headers actually taken
    assert res.used <= budget
    assert res.used == sum(c.tokens for c in res.included) + sum(headers.get(s, 0) for s in res.opened)
    # every candidate is accounted for exactly once
    seen = [(c.source, c.id) for c in res.included] + [(c.source, c.id) for c, _ in res.dropped]
    assert sorted(seen) == sorted((c.source, c.id) for v in cands.values() for c in v)
    # an item dropped for budget does not fit in what is left unused (its table header included when
    # its table never opened)
    for c, reason in res.dropped:
        assert reason == "budget"
        assert c.tokens + (0 if c.source in res.opened else headers.get(c.source, 0)) > res.unused


def _report(i: int, full: int, short: int | None) -> Candidate:
    c = Candidate("report", f"r{i}", full, 1.0, rank=i + 1)
    if short is not None:
        c.short = Candidate("report", f"r{i}", short, 1.0, rank=i + 1, form="summary")
    return c


def test_a_report_that_does_not_fit_enters_as_its_summary_and_says_why():
    cands = {"report": [_report(0, 600, 80), _report(1, 600, 90)]}
    res = fill(cands, ["report"], {}, 800)
    assert [(c.id, c.form) for c in res.included] == [("r0", None), ("r1", "summary")]
    assert res.used == 690 and not res.dropped
    assert "600 tokens" in (res.included[1].why or "") and "200 left" in (res.included[1].why or "")
    # without a short form the second report is simply dropped for budget
    plain = fill({"report": [_report(0, 600, None), _report(1, 600, None)]}, ["report"], {}, 800)
    assert [c.id for c in plain.included] == ["r0"] and plain.dropped[0][1] == "budget"


def test_a_summary_is_upgraded_when_room_remains_after_every_source_had_its_turn():
    # the cap lets the report in only as its summary; nothing else wants the room, so it becomes full again
    cands = {"report": [_report(0, 600, 80)], "chunk": [Candidate("chunk", "c0", 100, 1.0, rank=1)]}
    res = fill(cands, ["report", "chunk"], {}, 1000, caps={"report": 500})
    assert {(c.id, c.form) for c in res.included} == {("r0", None), ("c0", None)} and res.used == 700
    # when the room is taken by the other source, the summary stays
    big = {
        "report": [_report(0, 600, 80)],
        "chunk": [Candidate("chunk", f"c{i}", 300, 1.0, rank=i + 1) for i in range(3)],
    }
    res2 = fill(big, ["report", "chunk"], {}, 1000, caps={"report": 500})
    assert [(c.id, c.form) for c in res2.included] == [("r0", "summary"), ("c0", None), ("c1", None), ("c2", None)]


def test_a_cap_keeps_the_lead_source_from_starving_the_next_and_room_still_flows_back():
    cands = {
        "relationship": [Candidate("relationship", f"r{i}", 100, 1.0, rank=i + 1) for i in range(10)],
        "chunk": [Candidate("chunk", f"c{i}", 200, 1.0, rank=i + 1) for i in range(2)],
    }
    uncapped = fill(cands, ["relationship", "chunk"], {}, 1000)
    assert {c.source for c in uncapped.included} == {"relationship"}  # the lead source took everything
    capped = fill(cands, ["relationship", "chunk"], {}, 1000, caps={"relationship": 500})
    assert sum(c.source == "chunk" for c in capped.included) == 2
    assert sum(c.source == "relationship" for c in capped.included) == 6  # 5 within the cap, 1 from the rest
    assert capped.used == 1000
    reasons = {c.id: r for c, r in capped.dropped}
    # held back by the cap while the budget had room: the reason says so
    assert reasons == {"r6": "source_cap", "r7": "source_cap", "r8": "source_cap", "r9": "source_cap"}


@settings(max_examples=300, deadline=None)
@given(
    sizes=candidate_lists,
    budget=st.integers(min_value=0, max_value=5000),
    order=st.permutations(SOURCES),
    floors=st.dictionaries(st.sampled_from(SOURCES), st.integers(min_value=0, max_value=10), max_size=5),
    headers=st.dictionaries(st.sampled_from(SOURCES), st.integers(min_value=0, max_value=30), max_size=5),
    caps=st.dictionaries(st.sampled_from(SOURCES), st.integers(min_value=0, max_value=3000), max_size=5),
    shorts=st.lists(st.integers(min_value=1, max_value=100), max_size=25),
)
def test_fill_invariants_with_caps_and_short_forms(sizes, budget, order, floors, headers, caps, shorts):
    cands = {
        src: [Candidate(src, f"{src}{i}", t, 1.0, rank=i + 1) for i, t in enumerate(ts)] for src, ts in sizes.items()
    }
    for c, n in zip(cands.get("report", []), shorts, strict=False):
        c.short = Candidate("report", c.id, min(n, c.tokens), 1.0, rank=c.rank, form="summary")
    res = fill(cands, list(order), floors, budget, header_tokens=headers, caps=caps)
    assert res.used <= budget
    assert res.used == sum(c.tokens for c in res.included) + sum(headers.get(s, 0) for s in res.opened)
    assert res.used_by == {
        s: sum(c.tokens for c in res.included if c.source == s) + headers.get(s, 0) for s in res.opened
    }
    seen = [(c.source, c.id) for c in res.included] + [(c.source, c.id) for c, _ in res.dropped]
    assert sorted(seen) == sorted((c.source, c.id) for v in cands.values() for c in v)
    for c, reason in res.dropped:
        assert reason in ("budget", "source_cap")
        smallest = min(c.tokens, c.short.tokens) if c.short is not None else c.tokens
        assert smallest + (0 if c.source in res.opened else headers.get(c.source, 0)) > res.unused
    # a short form that stayed short could not have been upgraded with the room left
    for c in res.included:
        if c.form == "summary":
            full = next(x for x in cands["report"] if x.id == c.id)
            assert full.tokens - c.tokens > res.unused
