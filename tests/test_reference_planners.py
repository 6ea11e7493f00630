"""Planners on usage records: published fixtures, then properties every plan must have."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from logscope.reference.planners import (
    Record,
    high_water_curve,
    live_curve,
    lower_bound,
    overlapping_pairs,
    plan_first_fit,
    plan_greedy_by_size,
    plan_naive,
)


def records(rows: list[tuple[int, int, int]]) -> list[Record]:
    """(size, first, last) rows, as in tensorflow/lite/delegates/gpu/common/memory_management_test.cc."""
    return [Record(str(i), size, first, last) for i, (size, first, last) in enumerate(rows)]


CHAIN = records([(16, 0, 1), (8, 1, 2), (64, 2, 3), (32, 3, 4), (8, 4, 5)])
COMPLEX = records(
    [(32, 0, 1), (32, 1, 4), (8, 2, 5), (16, 3, 5), (8, 4, 5), (64, 5, 7), (8, 6, 8), (8, 7, 8), (16, 8, 9)]
)
# Pisarchyk & Lee's worked example as used by nncv's MemSolver tests: (first, last, size).
PAPER = [
    Record(str(i), size, first, last)
    for i, (first, last, size) in enumerate(
        [(0, 1, 32), (1, 4, 28), (2, 5, 36), (3, 5, 16), (4, 5, 8), (5, 7, 64), (6, 8, 10), (7, 8, 40)]
    )
]


def test_tflite_chain_records():
    plan = plan_greedy_by_size(CHAIN)
    assert plan.total == 96 == lower_bound(CHAIN)
    assert plan.offsets == (0, 64, 0, 64, 0)


def test_tflite_complex_records():
    plan = plan_greedy_by_size(COMPLEX)
    assert plan.total == 96 == lower_bound(COMPLEX)
    assert plan.offsets == (0, 32, 80, 64, 88, 0, 64, 72, 0)
    assert plan_naive(COMPLEX).total == 192


def test_paper_example():
    plan = plan_greedy_by_size(PAPER)
    assert plan.total == 124 == lower_bound(PAPER)
    assert plan.offsets == (0, 32, 64, 100, 116, 0, 104, 64)
    assert plan_naive(PAPER).total == 234
    assert live_curve(PAPER)[5] == 124


def test_first_fit_is_online_and_can_lose():
    # Execution order with no look-ahead: the 64-byte record cannot reuse the two 32s' holes.
    assert plan_first_fit(COMPLEX).total == 96
    assert plan_first_fit(PAPER).total == 160
    assert plan_first_fit(CHAIN).total == 120  # above the bound of 96


def test_alignment_and_curve():
    recs = [Record("a", 10, 0, 1), Record("b", 10, 1, 2), Record("c", 10, 2, 2)]
    plan = plan_first_fit(recs, alignment=64)
    assert plan.offsets == (0, 64, 0)
    assert high_water_curve(recs, plan.offsets) == [10, 74, 74]
    assert plan_greedy_by_size(recs, alignment=64).offsets[1] % 64 == 0


def test_zero_size_records_cost_nothing():
    recs = [Record("a", 0, 0, 3), Record("b", 8, 0, 1)]
    assert plan_greedy_by_size(recs).total == 8 == lower_bound(recs)
    assert plan_first_fit(recs).total == 8


record_lists = st.lists(
    st.tuples(st.integers(0, 4096), st.integers(0, 30), st.integers(0, 10)).map(
        lambda t: (t[0], t[1], t[1] + t[2])
    ),
    min_size=0,
    max_size=40,
)


@settings(max_examples=150, deadline=None)
@given(record_lists, st.sampled_from([1, 16, 64]))
def test_every_plan_is_valid_and_bounded(rows, alignment):
    recs = records(rows)
    lb = lower_bound(recs)
    naive = plan_naive(recs, alignment)
    for plan in (plan_greedy_by_size(recs, alignment), plan_first_fit(recs, alignment), naive):
        assert overlapping_pairs(recs, plan.offsets) == []
        assert plan.total >= lb
        assert all(o % alignment == 0 for o in plan.offsets)
    if alignment == 1:  # with alignment, padding can make a packed plan exceed the running sum
        assert plan_greedy_by_size(recs).total <= naive.total == sum(r.size for r in recs)
