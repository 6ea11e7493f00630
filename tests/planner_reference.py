"""The greedy-by-size planner as it was before its interval index: every placed record is checked for
a time conflict (O(n²)). The brute-force reference of tests/test_planner_index.py and the baseline of
benchmarks/planner_bench.py."""

from __future__ import annotations

import bisect
from collections.abc import Sequence

from logscope.reference.planners import Plan, Record, place_record


def greedy_all_pairs(records: Sequence[Record], alignment: int = 1) -> Plan:
    order = sorted(range(len(records)), key=lambda i: (-records[i].size, records[i].first, i))
    offsets = [0] * len(records)
    placed: list[tuple[int, int, Record]] = []  # (offset, index, record), sorted by offset
    for i in order:
        r = records[i]
        if r.size == 0:
            continue
        off = place_record(r, placed, alignment, best_fit=True)
        offsets[i] = off
        bisect.insort(placed, (off, i, r))
    total = max((o + r.size for r, o in zip(records, offsets, strict=True) if r.size), default=0)
    return Plan("greedy_by_size", tuple(offsets), total)
