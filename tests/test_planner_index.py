"""The greedy-by-size planner with its interval index gives the offsets of the all-pairs scan it
replaced, on random interval sets (a property test against that brute-force reference)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from logscope.reference.planners import Record, _IntervalIndex, overlapping_pairs, plan_greedy_by_size
from tests.planner_reference import greedy_all_pairs


@st.composite
def record_sets(draw: st.DrawFn) -> list[Record]:
    steps = draw(st.integers(1, 60))
    n = draw(st.integers(0, 80))
    out = []
    for k in range(n):
        first = draw(st.integers(0, steps - 1))
        last = draw(st.integers(first, min(steps - 1, first + draw(st.sampled_from([0, 1, 3, 10, 60])))))
        size = draw(st.sampled_from([0, 1, 7, 16, 64, 100, 1000]))
        out.append(Record(f"t{k}", size, first, last))
    return out


@settings(max_examples=150, deadline=None)
@given(record_sets(), st.sampled_from([1, 4, 64]))
def test_greedy_by_size_matches_the_all_pairs_scan(records: list[Record], alignment: int) -> None:
    plan = plan_greedy_by_size(records, alignment)
    assert plan == greedy_all_pairs(records, alignment)
    assert overlapping_pairs(records, plan.offsets) == []


@settings(max_examples=100, deadline=None)
@given(record_sets(), st.integers(0, 59), st.integers(0, 59))
def test_interval_index_returns_exactly_the_overlapping_entries(
    records: list[Record], a: int, b: int
) -> None:
    first, last = min(a, b), max(a, b)
    index = _IntervalIndex(max((r.last for r in records), default=0) + 1)
    for k, r in enumerate(records):
        index.add(r.first, r.last, (0, k, r))
    found = sorted(k for _, k, _ in index.overlapping(first, last))
    expected = [k for k, r in enumerate(records) if r.first <= last and first <= r.last]
    assert found == expected
