"""The feature-map pool of an RKNN build, read from its feature-tensor table: the one definition.

MEM001 (reuse), MEM002 (peak layer), MEM006 (allocator slack), the memory plot, the address map and the
report all read these figures from `feature_pools(frames)`; nothing else derives them. Every figure
keeps the log lines it comes from. Numbers [NN] are fixtures/rknn/NN-*.log.

Rows
    `tensors[table == "feature"]` of one build with Start, End and Size known, in line order.
Pool-resident rows (`rows`) and rows outside (`outside`)
    All rows, unless the log prints `Total Internal Memory Size` (`internal_bytes`; `internal_line` is
    its line, from the build's first memory row that has it) and the rows span more than that. Then the
    pool is taken to end at max(End) and to start `internal` bytes lower, and rows starting below that
    are outside it: the runtime table of [29] lists the graph input and output (lines 7 and 37) in
    separate DMA buffers below the SRAM-backed pool. If no row would be left, all rows stay resident
    (and the span does not match the total).
Span, sum, printed total
    `span_bytes` = max(End) - min(Start) over the resident rows (`start_offset` = min(Start)).
    `sum_bytes` = sum of Size over the resident tensors (below: a tensor listed for each of its
    consumers is one buffer), what they would need without address reuse. `matches_total` = span ==
    `internal_bytes` (None when no total is printed); the rules only trust a pool that matches or has
    no printed total. [09]: 1,756,160 B, the total of line 279 to the byte.
Tensors and lifetimes (`tensors`, `outside_tensors`)
    The table's `ID` is the operator that *consumes* the tensor (row `1 ConvClip input` in [09] is the
    input of layer 1). One tensor is one name at one address: the rows listing it, one per consumer,
    are merged (`lines` and `ops` keep them all, `line` is the first). A tensor consumed by ops k1..kn
    was written before k1, so whatever the graph it is live at least from step k1 - 1 to step kn
    (`op_first`, `op_last`). Rows without an ID count in the span and the sum, in no step.
Per step (`steps`, j from min op_first to max op_last; live(j): tensors with op_first <= j <= op_last)
    `occupied_bytes`    bytes of the union of [Start, End) over live(j): what the log's own plan holds
                        while op j runs, ranges shared by live tensors counted once.
    `high_water_bytes`  max(End) - pool start over live(j): how high in the pool they sit.
    `lower_bound_bytes` the largest sum of (End - Start) over a subset of live(j) that holds each name
                        once and whose address ranges are pairwise disjoint in the log (a max-weight
                        set of disjoint intervals, by weighted interval scheduling).
    `tensors`           the number of tensors in live(j).
    `lower_bound_bytes` of the pool = the maximum over steps; `lower_bound_step` the first step that
    reaches it; `lower_bound_tensors` / `_lines` / `_ops` that subset's names (line order), the lines of
    its rows and the operators consuming it. `occupied_peak_bytes` / `_step`: the same for the
    occupancy. End - Start is the Size column on every fixture; address arithmetic keeps the
    invariants exact.

Why this lower bound
    Tensors live at the same step are held at the same time, so any allocation of them needs the sum of
    their sizes, provided they are distinct buffers. Two kinds of rows are not: the same tensor listed
    twice (one name at two addresses; the generated logs of benchmarks/generate.py list a tensor once
    per consumer, each time at a new address), counted once here, and rows that alias (an in-place op,
    Concat inputs written inside their output). The log's own plan shows the second kind: two tensors
    it keeps live at once in overlapping bytes share storage, or the lifetime read from the IDs is
    longer than the real one; either way no allocation has to give both their own bytes. Tensors with
    different names that it keeps live at once in disjoint ranges are distinct buffers, so the
    heaviest such set is a bound on any allocation that gives distinct tensors distinct bytes, in this
    operator order. It is never above what the log's allocator achieved:
    lower_bound(j) <= occupied(j) <= high_water(j) <= span at every step (tests/test_pool.py checks
    this on every fixture and on generated logs).

    The plain sum of Size over the live tensors is not a bound. On `generate_log(path, builds=3,
    seed=3)` (benchmarks/generate.py) the rules' former figure, the tensors consumed by op j or j+1 by
    name, claimed 14,745,600 B at step 20 of build 0, whose pool the log fits in 12,288,000 B; summing
    live(j) claims 4,816,896 B (4.59 MiB) at step 7 of build 2, a 3,211,264 B (3.06 MiB) pool. The
    bound here is 12,288,000 B (build 0, step 19) and 3,211,264 B (build 2, step 5): the generator
    places tensors by a ping-pong between two addresses, whatever their lifetimes, so tensors read as
    live together overlap and only the heaviest disjoint subset counts. The union (`occupied_bytes`)
    is this plan's occupancy, not a bound: it counts a tensor listed at two addresses twice and partly
    overlapping ranges at their union, choices of this allocator that another need not make. It is
    what the memory plot draws under the high-water (the gap between them is address space the
    allocator left unused); the bound is what MEM001 and MEM006 compare the span with.

    On a chain without aliasing, every real fixture, the two coincide at every step: [09] 1,204,224 B
    at step 3 (Relu6__7:0 + Relu6__9:0, lines 179-180), [29] 1,605,632 B at step 3 (output4 + output6,
    lines 9-10; reference-anchors A9), [01] 880 B at step 1.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import compress, groupby
from operator import itemgetter, not_
from typing import Any, NamedTuple, cast

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
from pandas.api.extensions import ExtensionArray

from logscope.analysis import MAX_OP_INDEX
from logscope.frames import column_array

_STEP_COLUMNS = ("step", "occupied_bytes", "lower_bound_bytes", "high_water_bytes", "tensors")


class FeaturePool:
    """The feature-map pool of one build (see the module docstring for every definition).

    The figures are computed from plain lists and int64 arrays when the pool is built; the frames
    (`rows`, `outside`, `tensors`, `outside_tensors`, `steps`) are built on first use, from the same
    rows: the rules read the figures of every build, the plots and the report the frames of one. The
    per-step sweep too waits for `steps` or `occupied_peak_*`: the lower bound's step is found without
    it (`_peak_bound_step`), its figures equal to the sweep's (tests/test_pool.py checks both on random
    tables). Every CI log and every build of a 500-build log pays this, so no pandas call is made per
    build and no Python object per tensor is built unless a frame or a finding needs it.
    """

    __slots__ = (
        "_frames",
        "_group",
        "_in_order",
        "_made",
        "_made_timeline",
        "_outside",
        "_positions",
        "_source",
        "_steps",
        "build_index",
        "first_line",
        "internal_bytes",
        "internal_line",
        "last_line",
        "lower_bound_bytes",
        "lower_bound_lines",
        "lower_bound_ops",
        "lower_bound_step",
        "lower_bound_tensors",
        "matches_total",
        "outside_lines",
        "row_count",
        "span_bytes",
        "start_offset",
        "sum_bytes",
    )

    build_index: int | None
    start_offset: int  # min(Start) over the resident rows: the pool start
    span_bytes: int  # max(End) - min(Start) over the resident rows
    sum_bytes: int  # sum(Size) over the resident tensors
    internal_bytes: int | None  # the log's `Total Internal Memory Size`, if printed
    internal_line: int | None
    matches_total: bool | None  # span == internal_bytes; None when no total is printed
    lower_bound_bytes: int | None  # None when no resident row has a consumer ID
    lower_bound_step: int | None
    lower_bound_tensors: tuple[str, ...]
    lower_bound_lines: tuple[int, ...]  # the rows of those tensors
    lower_bound_ops: tuple[int, ...]  # the operators consuming them (the IDs that make them live)
    row_count: int  # resident rows (`len(rows)`)
    first_line: int  # first line of the resident rows
    last_line: int  # last line of the resident rows
    outside_lines: tuple[int, ...]  # lines of the rows outside the pool, line order

    def __init__(
        self,
        build_index: int | None,
        rows: _Rows,
        source: pd.DataFrame,
        extent: _Extent,
        internal: int | None,
        internal_line: int | None,
    ) -> None:
        if rows.all_resident:
            resident, outside = rows.order, []
        else:
            resident = list(compress(rows.order, map(rows.resident.__getitem__, rows.order)))
            outside = [i for i in rows.order if not rows.resident[i]]
        # Every row resident, in line order: `resident == list(range(len(rows.line)))`, from the flags.
        in_order = rows.all_resident and rows.in_line_order
        start, span = extent.start_offset, extent.span_bytes
        timeline = _timeline(_TensorTable(rows, resident, in_order=in_order))
        bound = _bound(timeline, _peak_bound_step(timeline, start))
        lines = rows.line if in_order else list(map(rows.line.__getitem__, resident))
        self.build_index = build_index
        self.start_offset = start
        self.span_bytes = span
        self.sum_bytes = extent.sum_bytes
        self.internal_bytes = internal
        self.internal_line = internal_line
        self.matches_total = None if internal is None else span == internal
        (
            self.lower_bound_bytes,
            self.lower_bound_step,
            self.lower_bound_tensors,
            self.lower_bound_lines,
            self.lower_bound_ops,
        ) = bound
        self.row_count = len(resident)
        # (lines in order: the first and the last are the extremes)
        self.first_line, self.last_line = (lines[0], lines[-1]) if in_order else (min(lines), max(lines))
        self.outside_lines = tuple(rows.line[i] for i in outside)
        self._source = source
        self._positions: list[int] | None = (
            rows.position if in_order else list(map(rows.position.__getitem__, resident))
        )
        self._outside = [rows.position[i] for i in outside]
        self._group: tuple[_Grouped, int] | None = None
        self._made: tuple[_Rows, list[int]] | None = (rows, resident)
        self._in_order = in_order
        self._made_timeline: _Timeline | None = timeline
        self._steps: dict[str, list[int]] | None = None
        self._frames: dict[str, pd.DataFrame] = {}

    @classmethod
    def _batched(
        cls,
        build_index: int | None,
        grouped: _Grouped,
        group: int,
        extent: _Extent,
        internal: int | None,
        internal_line: int | None,
        found: _BatchedBound,
    ) -> FeaturePool:
        """The pool of a build whose bound `_batch_bounds` found with every other build's: each of its
        rows resident, in line order, its own tensor and timed. Its rows' lists and its timeline are
        made only when a frame, the sweep or a reader of the rows asks for them (`_lists`)."""
        pool = cls.__new__(cls)
        pool.build_index = build_index
        pool.start_offset = extent.start_offset
        pool.span_bytes = extent.span_bytes
        pool.sum_bytes = extent.sum_bytes
        pool.internal_bytes = internal
        pool.internal_line = internal_line
        pool.matches_total = None if internal is None else extent.span_bytes == internal
        (
            pool.lower_bound_bytes,
            pool.lower_bound_step,
            pool.lower_bound_tensors,
            pool.lower_bound_lines,
            pool.lower_bound_ops,
        ) = found.bound
        pool.row_count = found.row_count
        pool.first_line, pool.last_line = found.first_line, found.last_line
        pool.outside_lines = ()
        pool._source = grouped._source
        pool._positions = None
        pool._outside = []
        pool._group = (grouped, group)
        pool._made = None
        pool._in_order = True
        pool._made_timeline = None
        pool._steps = None
        pool._frames = {}
        return pool

    def _lists(self) -> tuple[_Rows, list[int]]:
        """(the build's rows, the resident ones' indexes in line order)."""
        if self._made is None:
            grouped, group = cast(tuple[_Grouped, int], self._group)
            rows = grouped.rows(group)
            self._made = (rows, rows.order)
        return self._made

    def _timed(self) -> _Timeline:
        if self._made_timeline is None:
            rows, resident = self._lists()
            self._made_timeline = _timeline(_TensorTable(rows, resident, in_order=self._in_order))
        return self._made_timeline

    def _resident(self) -> list[int]:
        if self._positions is None:
            self._positions = self._lists()[0].position
        return self._positions

    def _frame(self, name: str) -> pd.DataFrame:
        frame = self._frames.get(name)
        if frame is None:
            if name == "rows":
                frame = self._source.iloc[self._resident()]
            elif name == "outside":
                frame = self._source.iloc[self._outside]
            elif name == "tensors":
                frame = _tensors(self.rows)
            elif name == "outside_tensors":
                frame = _tensors(self.outside)
            else:
                frame = pd.DataFrame({c: pd.array(v, dtype="Int64") for c, v in self._step_columns().items()})
            self._frames[name] = frame
        return frame

    def _step_columns(self) -> dict[str, list[int]]:
        """The per-step columns (`steps`), swept on first use: the rules need only the busiest step."""
        if self._steps is None:
            self._steps = _step_lists(self._timed().tensors(), self.start_offset)
        return self._steps

    @property
    def occupied_peak_bytes(self) -> int | None:
        """The largest `occupied_bytes` over the steps (None without steps)."""
        return self._occupied_peak()[0]

    @property
    def occupied_peak_step(self) -> int | None:
        """The first step that reaches `occupied_peak_bytes`."""
        return self._occupied_peak()[1]

    def _occupied_peak(self) -> tuple[int | None, int | None]:
        steps = self._step_columns()
        if not steps["step"]:
            return None, None
        occupied = steps["occupied_bytes"]
        position = occupied.index(max(occupied))
        return occupied[position], steps["step"][position]

    def resident_rows(self) -> ResidentRows:
        """The resident rows' cells as plain lists, line order: what `rows` holds (name "" when
        missing), without building the frame (a rule that reads every build's rows pays no pandas).
        The lists may be the pool's own: read them, never change them."""
        rows, members = self._lists()
        if self._in_order:  # every row resident, frame order is line order
            return ResidentRows(rows.position, rows.name, rows.start, rows.end, rows.size, rows.line)
        ints = (rows.position, rows.start, rows.end, rows.size, rows.line)
        position, start, end, size, line = (list(map(column.__getitem__, members)) for column in ints)
        return ResidentRows(position, list(map(rows.name.__getitem__, members)), start, end, size, line)

    def resident_arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """(`row_positions`, the rows' lines) as int64 arrays, line order. Read them, never change them."""
        if self._made is None:  # a batched pool: the build's slice of the grouped rows, no lists made
            grouped, group = cast(tuple[_Grouped, int], self._group)
            at = grouped.positions[grouped.order[grouped.bounds[group] : grouped.bounds[group + 1]]]
            return at, grouped.arrays.line.values[at]
        rows, members = self._lists()
        if self._in_order:
            return rows.position_array, rows.line_array
        return rows.position_array[members], rows.line_array[members]

    def resident_name_codes(self) -> np.ndarray:
        """A code per resident row (line order, as `resident_rows`), equal for equal names, a missing
        name coded as "" (`ResidentRows.name`): what the extent's sum grouped the names by. Read it,
        never change it."""
        rows, members = self._lists()
        if self._in_order:
            return rows.name_code
        return rows.name_code[members]

    @property
    def row_positions(self) -> list[int]:
        """Positions of the resident rows in the `tensors` frame the pool was read from, line order."""
        return list(self._resident())

    @property
    def rows(self) -> pd.DataFrame:
        """Pool-resident feature rows (the `tensors` frame's columns), line order."""
        return self._frame("rows")

    @property
    def outside(self) -> pd.DataFrame:
        """Feature rows outside the pool, line order."""
        return self._frame("outside")

    @property
    def tensors(self) -> pd.DataFrame:
        """Resident tensors: one per name at an address, + op_first, op_last, ops, lines."""
        return self._frame("tensors")

    @property
    def outside_tensors(self) -> pd.DataFrame:
        """The same for the rows outside."""
        return self._frame("outside_tensors")

    @property
    def steps(self) -> pd.DataFrame:
        """step, occupied_bytes, lower_bound_bytes, high_water_bytes, tensors."""
        return self._frame("steps")

    @property
    def table_lines(self) -> tuple[int, int]:
        """First and last line of the build's feature rows, outside ones included."""
        lines = (self.first_line, self.last_line, *self.outside_lines)
        return min(lines), max(lines)

    def live_tensors(self, step: int) -> pd.DataFrame:
        """The resident tensors live at `step` (op_first <= step <= op_last), line order."""
        t = self.tensors
        live = ((t["op_first"] <= step) & (t["op_last"] >= step)).fillna(False).astype(bool)
        return t[live]


def feature_pools(frames: Mapping[str, pd.DataFrame]) -> dict[int | None, FeaturePool]:
    """The pool of every build with usable feature rows, keyed by build index.

    `frames` is a parsed log's frames (`log.frames`); `tensors` is needed, `memory` read when present.
    The result of the last call is kept while the same frame objects are passed again: the rules, the
    plots and the report of one log ask for it many times, a new or replaced frame is a new entry.
    """
    tensors = frames.get("tensors")
    memory = frames.get("memory")
    if tensors is None or tensors.empty:
        return {}
    cached = _CACHE.get("last")
    if cached is not None and cached[0] is tensors and cached[1] is memory:
        return cached[2]
    internals = printed_internals(memory)
    pools: dict[int | None, FeaturePool] = {}
    grouped = _grouped(tensors, internals, None)  # (what `build_extents` iterates)
    if grouped is not None:
        batched = _batch_bounds(grouped) if len(grouped.indexes) >= BATCH_GROUPS else {}
        for group, (index, extent) in enumerate(zip(grouped.indexes, grouped.extents, strict=True)):
            internal, line = internals.get(index, (None, None))
            found = batched.get(group)
            if found is None:
                pools[index] = FeaturePool(index, grouped.rows(group), tensors, extent, internal, line)
            else:
                pools[index] = FeaturePool._batched(index, grouped, group, extent, internal, line, found)
    _CACHE["last"] = (tensors, memory, pools)  # one log at a time: no growth over an audit
    return pools


# From this many builds (groups) `feature_pools` finds the bounds of the plain builds all at once; a CI
# log's one build takes the loop, whose array calls cost less than the batch's for a single build.
BATCH_GROUPS = 4
# A build is batched only while its steps are at most this many per row (plus a constant): the batch
# holds every batched build's steps at once, and an ID near `MAX_OP_INDEX` would make them millions.
_STEPS_PER_ROW = 4
_STEPS_SLACK = 64


class _BatchedBound(NamedTuple):
    """What `_batch_bounds` found for one build: the `_bound` tuple, the rows' count and line extremes."""

    bound: tuple[int | None, int | None, tuple[str, ...], tuple[int, ...], tuple[int, ...]]
    row_count: int
    first_line: int
    last_line: int


def _batch_bounds(grouped: _Grouped) -> dict[int, _BatchedBound]:
    """The lower bound of every plain build at once, keyed by group: what `FeaturePool` finds build by
    build (`_peak_bound_step`, then `_bound`), with one array pass over all their rows.

    A build is plain when each of its rows is resident, lines strictly rise in frame order, each row
    is its own tensor (`tensor_counts`), has a consumer ID in [0, MAX_OP_INDEX] and End >= Start, and
    its steps are few (`_STEPS_PER_ROW`): then tensor i is row i, live from op_id - 1 to op_id, and the
    plain live sums of every step of every build are one difference array (the builds' blocks side by
    side; each block's differences add up to 0, so one cumulative sum gives each block's own sums). The
    first step with the largest sum is the answer when its live tensors have distinct non-empty names
    and pairwise disjoint ranges: their bound is then that sum, which caps every step's bound, and a
    later step with an equal sum does not replace an earlier one. A build where this does not hold, or
    any other build, is left out (the loop computes it); tests/test_pool.py compares the two on
    fixtures and random tables."""
    arrays, sizes_list = grouped.arrays, np.diff(np.asarray(grouped.bounds))
    own_tensors = np.asarray(grouped.tensor_counts) == sizes_list
    if not own_tensors.any():  # (a log that lists tensors once per consumer: no array is read)
        return {}
    heads = np.asarray(grouped.bounds[:-1], dtype=np.int64)
    at = grouped.positions[grouped.order]
    op, known = arrays.op_id.values[at], arrays.op_id.known[at]
    start, end, line = arrays.start.values[at], arrays.end.values[at], arrays.line.values[at]
    weight = end - start
    if len(weight) and float(np.abs(weight.astype("float64")).max()) * len(weight) >= _EXACT_SUM:
        return {}  # (sums that could pass int64: the loop's Python integers decide)
    plain = grouped.resident & known & (op >= 0) & (op <= MAX_OP_INDEX) & (weight >= 0)
    plain[1:] &= line[1:] > line[:-1]
    plain[heads] = grouped.resident[heads] & known[heads] & (op[heads] >= 0) & (op[heads] <= MAX_OP_INDEX)
    plain[heads] &= weight[heads] >= 0
    steps = np.maximum.reduceat(op, heads) - np.minimum.reduceat(op, heads) + 2
    fast = np.flatnonzero(
        np.logical_and.reduceat(plain, heads)
        & own_tensors
        & (steps <= _STEPS_PER_ROW * sizes_list + _STEPS_SLACK)
    )
    if not len(fast):
        return {}
    sizes = sizes_list[fast]
    rows = np.zeros(len(at), dtype=bool)
    rows[np.repeat(heads[fast], sizes) + _ranges(sizes)] = True
    first, last, w = op[rows] - 1, op[rows], weight[rows]
    row_heads = np.concatenate(([0], np.cumsum(sizes)[:-1])).astype(np.int64)
    lo = np.minimum.reduceat(first, row_heads)
    block = np.maximum.reduceat(last, row_heads) - lo + 2  # the steps, and a slot past the last
    offset = np.concatenate(([0], np.cumsum(block)[:-1])).astype(np.int64)
    owner = np.repeat(np.arange(len(fast)), sizes)
    base = offset[owner] - lo[owner]
    delta = np.zeros(int(block.sum()), dtype=np.int64)
    np.add.at(delta, base + first, w)
    np.add.at(delta, base + last + 1, -w)
    sums = np.cumsum(delta)
    peak = np.maximum.reduceat(sums, offset)
    slots = np.arange(len(sums))
    top = np.minimum.reduceat(np.where(sums == np.repeat(peak, block), slots, len(sums)), offset) - offset
    top_step = lo + top
    at_top = top_step[owner]
    live = np.flatnonzero((first <= at_top) & (at_top <= last))
    picked = at[rows][live]
    names = _text_cells(column_array(grouped._source, "name"), picked)
    cells = zip(
        owner[live].tolist(),
        names,
        start[rows][live].tolist(),
        end[rows][live].tolist(),
        line[rows][live].tolist(),
        last[live].tolist(),
        strict=True,
    )
    found: dict[int, _BatchedBound] = {}
    fast_groups, top_steps, peaks = fast.tolist(), top_step.tolist(), peak.tolist()
    line_heads, line_tails = line[heads[fast]].tolist(), line[heads[fast] + sizes - 1].tolist()
    counts = sizes.tolist()
    for k, members in groupby(cells, key=itemgetter(0)):
        tensors = list(members)  # (row order: line order)
        if len({t[1] for t in tensors}) < len(tensors) or not all(t[1] for t in tensors):
            continue
        reach = None
        for _, _, s, e, _, _ in sorted(tensors, key=itemgetter(2, 3)):
            if reach is not None and s < reach:
                break
            reach = e
        else:
            total = sum(t[3] - t[2] for t in tensors)
            if total != peaks[k]:
                continue
            bound = (
                total,
                top_steps[k],
                tuple(t[1] for t in tensors),
                tuple(t[4] for t in tensors),
                tuple(sorted({t[5] for t in tensors})),
            )
            found[fast_groups[k]] = _BatchedBound(bound, counts[k], line_heads[k], line_tails[k])
    return found


def _ranges(sizes: np.ndarray) -> np.ndarray:
    """0..n-1 for each n of `sizes`, one after the other."""
    total = int(sizes.sum())
    starts = np.repeat(np.cumsum(sizes) - sizes, sizes)
    return np.arange(total, dtype=np.int64) - starts


_CACHE: dict[str, tuple[pd.DataFrame, pd.DataFrame | None, dict[int | None, FeaturePool]]] = {}


def feature_rows(tensors: pd.DataFrame) -> np.ndarray:
    """Per row of a `tensors` frame, whether its table is "feature" (a missing table is not): the flags
    the extents were read with when they are kept for this frame (the parse's derived figures read
    them), else compared afresh."""
    cached = _EXTENTS.get("last")
    if cached is not None and cached[0] is tensors and cached[2] is not None:
        return cached[2].arrays.feature
    return _equals(column_array(tensors, "table"), "feature")


def feature_pool(frames: Mapping[str, pd.DataFrame], build_index: int | None) -> FeaturePool | None:
    """The pool of `build_index`, or None when that build has no usable feature rows."""
    return feature_pools(frames).get(build_index)


def feature_builds(frames: Mapping[str, pd.DataFrame]) -> list[int]:
    """Build indexes (not null) that have a pool, ascending."""
    return [b for b in feature_pools(frames) if b is not None]


# ----------------------------------------------------------------------------------------- building


def _equals(column: Any, text: str) -> np.ndarray:
    """Which cells of a text column (a Series or its array) are `text` (a missing cell is not), compared
    in Arrow when the column is Arrow-backed: no Python string per cell."""
    if isinstance(column.dtype, pd.StringDtype) and column.dtype.storage == "pyarrow":
        equal = pc.fill_null(
            pc.equal(pa.array(column if isinstance(column, ExtensionArray) else column.array), text), False
        )
        return np.asarray(equal.to_numpy(zero_copy_only=False), dtype=bool)
    return (pd.Series(column, copy=False) == text).to_numpy(dtype=bool, na_value=False)


class _IntColumn(NamedTuple):
    values: np.ndarray  # int64, 0 where missing
    known: np.ndarray  # bool


def _int_column(tensors: pd.DataFrame, name: str) -> _IntColumn:
    array = column_array(tensors, name)  # (the frame's own array: `tensors[name]` built a Series)
    parts = masked_parts(array)
    known = ~parts[1] if parts is not None else ~np.asarray(array.isna(), dtype=bool)
    return _IntColumn(int_values(array), known)


def int_values(array: Any, missing: int = 0) -> np.ndarray:
    """An integer column as int64 numpy values, `missing` where a cell is missing: an Int64 column from
    its values and mask, any other through `to_numpy` (and its warning filters, 10 us a call)."""
    parts = masked_parts(array)
    if parts is not None and parts[0].dtype == np.int64:
        return np.where(parts[1], missing, parts[0])
    return np.asarray(array.to_numpy(dtype="int64", na_value=missing), dtype=np.int64)


def column_cells(frame: pd.DataFrame, name: str) -> list[Any]:
    """`frame[name].tolist()`: the cells as Python values, <NA> where missing. A masked column (Int64,
    Float64, boolean) is read from its values and mask, where `tolist` went through `to_numpy` and its
    warning filters (10 us a column, and the derived figures read 20 columns of every log)."""
    array = column_array(frame, name)
    parts = masked_parts(array)
    if parts is None:
        return array.tolist()
    na = pd.NA
    return [
        na if missing else value for value, missing in zip(parts[0].tolist(), parts[1].tolist(), strict=True)
    ]


def masked_parts(array: Any) -> tuple[np.ndarray, np.ndarray] | None:
    """The values and the mask of a pandas masked array (its private `_data` and `_mask`, checked to be
    1-D numpy arrays of its length, numeric and bool); None for another array or another pandas, whose
    readers then take the public path (tests/test_pool.py checks both read alike)."""
    if not isinstance(array, _MASKED) or not _MASKED_PARTS:
        return None
    data, mask = getattr(array, "_data", None), getattr(array, "_mask", None)
    if (
        not isinstance(data, np.ndarray)
        or not isinstance(mask, np.ndarray)
        or mask.dtype != np.bool_
        or data.dtype.kind not in "iufb"
        or data.shape != (len(array),)
        or mask.shape != data.shape
    ):
        return None
    return data, mask


_MASKED = (pd.arrays.IntegerArray, pd.arrays.FloatingArray, pd.arrays.BooleanArray)
_MASKED_PARTS = True  # (tests turn the private path off to check the public one)


class TensorArrays(NamedTuple):
    """The columns of a `tensors` frame the pool and the derived figures read, as numpy arrays.

    Read once per frame by whoever computes from it (`logscope.analysis.derived` passes them on to
    `build_extents`): each column is looked up and converted once per log, where the figures used to
    look up and convert a column for every test on it (40 lookups and conversions a log)."""

    build: _IntColumn
    start: _IntColumn
    end: _IntColumn
    size: _IntColumn
    line: _IntColumn
    op_id: _IntColumn
    padding: _IntColumn
    logical: _IntColumn
    feature: np.ndarray  # table == "feature"
    const: np.ndarray  # table == "const"
    usable: np.ndarray  # feature rows with Start, End and Size known: every pool figure's rows


def tensor_arrays(tensors: pd.DataFrame) -> TensorArrays:
    """The `TensorArrays` of `tensors` (a frame with the `tensors` schema's columns)."""
    start, end, size = (_int_column(tensors, c) for c in ("start_offset", "end_offset", "size_bytes"))
    table = column_array(tensors, "table")
    feature = _equals(table, "feature")
    return TensorArrays(
        build=_int_column(tensors, "build_index"),
        start=start,
        end=end,
        size=size,
        line=_int_column(tensors, "line"),
        op_id=_int_column(tensors, "op_id"),
        padding=_int_column(tensors, "padding_bytes"),
        logical=_int_column(tensors, "logical_bytes"),
        feature=feature,
        const=_equals(table, "const"),
        usable=feature & size.known & start.known & end.known,
    )


@dataclass(frozen=True)
class _Extent:
    """Where one build's pool lies (`EXTENT_COLUMNS`, defined in the module docstring)."""

    start_offset: int
    span_bytes: int
    sum_bytes: int
    table_span_bytes: int


@dataclass(frozen=True)
class _Rows:
    """One build's usable feature rows as plain lists, in the tensors frame's row order."""

    position: list[int]  # row position in the tensors frame
    order: list[int]  # indexes into these lists, line order (stable)
    resident: list[bool]
    all_resident: bool  # every row is resident
    in_line_order: bool  # frame order is line order (`order` is every index ascending)
    name: list[str]  # "" for a missing name
    start: list[int]
    end: list[int]
    size: list[int]
    line: list[int]
    op_id: list[int | None]
    # The same as int64 arrays, for the per-tensor arithmetic: ID (0 where missing) and whether known.
    start_array: np.ndarray
    end_array: np.ndarray
    op_array: np.ndarray
    op_known: np.ndarray
    position_array: np.ndarray
    line_array: np.ndarray
    # How many distinct (name, Start, End) the resident rows hold (one tensor per key), counted with
    # the build's `sum_bytes`: when it is the row count no tensor is listed twice.
    tensor_count: int
    # Each row's key's first resident row (an index into these lists), -1 for a row outside the pool.
    first_of: np.ndarray
    # A code per resident row, equal for equal names (a missing name coded as ""), -1 outside the pool.
    name_code: np.ndarray


class ResidentRows(NamedTuple):
    """A pool's resident rows as plain lists, line order (`FeaturePool.resident_rows`)."""

    position: list[int]  # row position in the tensors frame
    name: list[str]  # "" for a missing name
    start: list[int]
    end: list[int]
    size: list[int]
    line: list[int]


EXTENT_COLUMNS = ("start_offset", "span_bytes", "sum_bytes", "table_span_bytes")


def build_extents(
    tensors: pd.DataFrame,
    internals: Mapping[int | None, tuple[int | None, int | None]],
    with_null_build: bool = True,
    arrays: TensorArrays | None = None,
) -> Iterator[tuple[int | None, _Rows, _Extent]]:
    """Where the pool of every build lies (no lifetimes, no steps): its usable feature rows (Start, End
    and Size known: `TensorArrays.usable`) with the pool-resident flag of each, and `start_offset`,
    `span_bytes`, `sum_bytes` and `table_span_bytes` (max(End) - min(Start) over every row, rows outside
    the pool too); the module docstring defines them. Builds ascending, rows outside any build last (left
    out with `with_null_build=False`). `feature_pools` builds each `FeaturePool` on it, and
    `pool_extents` (what `logscope.analysis.derived` fills the memory frame from) reads the same
    extents: one definition. `arrays` are the frame's `tensor_arrays` when the caller has read them.

    The extents of every build are computed at once (`_grouped_extents`); a build's rows as plain lists
    are made when first asked for, here, and kept with the extents: the derived figures of a log with
    hundreds of builds need no list per build, the rules read every build's rows.
    """
    grouped = _grouped(tensors, internals, arrays)
    if grouped is None:
        return
    for group, (index, extent) in enumerate(zip(grouped.indexes, grouped.extents, strict=True)):
        if with_null_build or index is not None:
            yield index, grouped.rows(group), extent


def pool_extents(
    tensors: pd.DataFrame,
    internals: Mapping[int | None, tuple[int | None, int | None]],
    arrays: TensorArrays | None = None,
) -> list[tuple[int, _Extent, int]]:
    """(build index, extent, first line of its usable rows) of every build with usable feature rows,
    builds ascending, rows outside any build left out: `build_extents` without the rows' lists."""
    grouped = _grouped(tensors, internals, arrays)
    if grouped is None:
        return []
    return [
        (index, extent, line)
        for index, extent, line in zip(grouped.indexes, grouped.extents, grouped.first_lines, strict=True)
        if index is not None
    ]


def _grouped(
    tensors: pd.DataFrame,
    internals: Mapping[int | None, tuple[int | None, int | None]],
    arrays: TensorArrays | None,
) -> _Grouped | None:
    """`_grouped_extents`, kept while the same frame object and the same printed totals are passed again
    (the derived figures at parse time, then the rules' pools): nothing in it changes once made."""
    cached = _EXTENTS.get("last")
    if cached is not None and cached[0] is tensors and cached[1] == internals:
        return cached[2]
    grouped = _grouped_extents(tensors, internals, arrays or tensor_arrays(tensors))
    _EXTENTS["last"] = (tensors, dict(internals), grouped)  # one log at a time
    return grouped


_EXTENTS: dict[str, tuple[pd.DataFrame, dict[int | None, Any], _Grouped | None]] = {}
# Sums of sizes are exact in int64 when every |Size| times the row count stays below this.
_EXACT_SUM = 2**62


class _Grouped:
    """The usable feature rows of every build of a frame, grouped, with each build's extent.

    `order[bounds[g]:bounds[g + 1]]` are the positions (into `positions`, the usable rows) of group g,
    in frame order; `resident` flags them, in the same order. Groups are builds ascending, then each
    row outside any build alone, as `np.split` on the sorted build keys always made them (the key of a
    row without a build is inf, and inf - inf is not 0)."""

    __slots__ = (
        "_names",
        "_rows",
        "_source",
        "arrays",
        "bounds",
        "extents",
        "first_lines",
        "first_rows",
        "indexes",
        "name_codes",
        "order",
        "positions",
        "resident",
        "tensor_counts",
    )

    def __init__(self, source: pd.DataFrame, arrays: TensorArrays, positions: np.ndarray) -> None:
        self._source = source
        self.arrays = arrays
        self.positions = positions
        self._names: list[str] | None = None
        self._rows: dict[int, _Rows] = {}
        self.order: np.ndarray = np.empty(0, dtype=np.int64)
        self.bounds: list[int] = []
        self.resident: np.ndarray = np.empty(0, dtype=bool)
        self.indexes: list[int | None] = []
        self.extents: list[_Extent] = []
        self.first_lines: list[int] = []
        self.tensor_counts: list[int] = []  # distinct (name, Start, End) among each group's resident rows
        # Per row (`order`'s order), its key's first resident row in the group's order, -1 outside.
        self.first_rows: np.ndarray = np.empty(0, dtype=np.int64)
        self.name_codes: np.ndarray = np.empty(0, dtype=np.int64)  # per row (`order`), -1 outside

    def rows(self, group: int) -> _Rows:
        """Group `group`'s rows as plain lists and arrays (made on first use, then kept)."""
        made = self._rows.get(group)
        if made is None:
            made = self._rows[group] = self._make_rows(group)
        return made

    def _make_rows(self, group: int) -> _Rows:
        arrays, positions = self.arrays, self.positions
        low, high = self.bounds[group], self.bounds[group + 1]
        members = self.order[low:high]
        first_of = self.first_rows[low:high]
        at = positions[members]
        if len(self.indexes) == 1:  # one build (a CI log): its names are all the names read
            g_names = _text_cells(column_array(self._source, "name"), at)
        else:
            if self._names is None:  # the usable rows' names, read once for every build
                self._names = _text_cells(column_array(self._source, "name"), positions)
            g_names = list(map(self._names.__getitem__, members.tolist()))
        g_start, g_end = arrays.start.values[at], arrays.end.values[at]
        starts, ends, sizes = g_start.tolist(), g_end.tolist(), arrays.size.values[at].tolist()
        resident = self.resident[low:high]
        all_resident = bool(resident.all())
        flags = [True] * len(resident) if all_resident else resident.tolist()
        g_line = arrays.line.values[at]
        # (rows in frame order are in line order on every log read: no sort, the order it would give)
        in_order = len(g_line) < 2 or bool((g_line[1:] >= g_line[:-1]).all())
        g_known = arrays.op_id.known[at]
        g_op_array = arrays.op_id.values[at]
        g_op = g_op_array.tolist()
        if not g_known.all():
            g_op = [op if k else None for op, k in zip(g_op, g_known.tolist(), strict=True)]
        return _Rows(
            position=at.tolist(),
            order=list(range(len(g_line))) if in_order else np.argsort(g_line, kind="stable").tolist(),
            resident=flags,
            all_resident=all_resident,
            in_line_order=in_order,
            name=g_names,
            start=starts,
            end=ends,
            size=sizes,
            line=g_line.tolist(),
            op_id=g_op,
            start_array=g_start,
            end_array=g_end,
            op_array=g_op_array,
            op_known=g_known,
            position_array=at,
            line_array=g_line,
            tensor_count=self.tensor_counts[group],
            first_of=np.where(first_of >= 0, first_of - low, -1),
            name_code=self.name_codes[low:high],
        )


def _grouped_extents(
    tensors: pd.DataFrame,
    internals: Mapping[int | None, tuple[int | None, int | None]],
    arrays: TensorArrays,
) -> _Grouped | None:
    """The extents of every build at once, with numpy reductions over the rows sorted by build (no
    call per build but a dict lookup of its printed total): a log with 500 builds paid 60 us a build
    for a loop of array calls per build. Each figure is the one the module docstring defines, computed
    as the loop computed it: min and max in int64, the resident test in float64, spans as int64
    differences, the sum of the first row's Size of each (name, Start, End) among the resident rows (in
    int64 when it cannot overflow, else in Python integers). None when no row is usable."""
    positions = np.flatnonzero(arrays.usable)
    if not len(positions):
        return None
    grouped = _Grouped(tensors, arrays, positions)
    build = arrays.build
    null = ~build.known[positions]
    keys = np.where(null, np.inf, build.values[positions].astype("float64"))
    order = np.argsort(keys, kind="stable")
    sorted_keys = keys[order]
    with np.errstate(invalid="ignore"):  # (inf - inf: rows without a build)
        heads = np.concatenate(([0], np.flatnonzero(np.diff(sorted_keys)) + 1))
    count = len(heads)
    bounds = [*heads.tolist(), len(order)]
    sizes_per_group = np.diff(np.asarray(bounds))
    at = positions[order]
    start, end, size = arrays.start.values[at], arrays.end.values[at], arrays.size.values[at]
    max_end = np.maximum.reduceat(end, heads)
    min_start = np.minimum.reduceat(start, heads)
    indexes: list[int | None] = [None if k == np.inf else int(k) for k in sorted_keys[heads].tolist()]
    # The resident test where the log prints the build's total and the rows span more than it.
    totals = [internals.get(index, (None, None))[0] for index in indexes]
    threshold = np.full(count, -np.inf)
    for group, internal in enumerate(totals):
        if internal is not None and float(max_end[group]) - float(min_start[group]) > float(internal):
            threshold[group] = float(max_end[group]) - float(internal)
    resident = start.astype("float64") >= np.repeat(threshold, sizes_per_group)
    kept = np.logical_or.reduceat(resident, heads)
    if not kept.all():  # a build that would keep no row keeps them all
        resident |= np.repeat(~kept, sizes_per_group)
    group_of = np.repeat(np.arange(count), sizes_per_group)
    pool_start = np.minimum.reduceat(np.where(resident, start, np.iinfo(np.int64).max), heads)
    sums, tensor_counts, first_rows, name_codes = _first_sizes(
        tensors, positions, order, resident, group_of, start, end, size, count
    )
    spans = (max_end - pool_start).tolist()
    table_spans = (max_end - min_start).tolist()
    grouped.order = order
    grouped.bounds = bounds
    grouped.resident = resident
    grouped.tensor_counts = tensor_counts
    grouped.first_rows = first_rows
    grouped.name_codes = name_codes
    grouped.indexes = indexes
    grouped.extents = [
        _Extent(start_offset=s, span_bytes=p, sum_bytes=t, table_span_bytes=w)
        for s, p, t, w in zip(pool_start.tolist(), spans, sums, table_spans, strict=True)
    ]
    grouped.first_lines = np.minimum.reduceat(arrays.line.values[at], heads).tolist()
    return grouped


def _first_sizes(
    tensors: pd.DataFrame,
    positions: np.ndarray,
    order: np.ndarray,
    resident: np.ndarray,
    group_of: np.ndarray,
    start: np.ndarray,
    end: np.ndarray,
    size: np.ndarray,
    count: int,
) -> tuple[list[int], list[int], np.ndarray, np.ndarray]:
    """Per group, the sum of Size over its resident tensors and their number: the first resident row
    (frame order) of each (name, Start, End), a missing name being "" (`text_cells`). Rows are sorted by
    (group, name, Start, End, frame order) and the first of each run of equal keys is kept. Also, per row
    (in `order`), the position in `order` of its key's first resident row and its name's code (-1 for
    a row outside)."""
    where = np.flatnonzero(resident)
    codes = _name_codes(column_array(tensors, "name"), positions[order[where]])
    sort = np.lexsort((where, end[where], start[where], codes, group_of[where]))
    g, c, s, e = group_of[where][sort], codes[sort], start[where][sort], end[where][sort]
    first = np.ones(len(sort), dtype=bool)
    first[1:] = (g[1:] != g[:-1]) | (c[1:] != c[:-1]) | (s[1:] != s[:-1]) | (e[1:] != e[:-1])
    kept_sizes, kept_groups = size[where][sort][first], g[first]
    heads = np.concatenate(([0], np.flatnonzero(np.diff(kept_groups)) + 1))
    if len(kept_sizes) and float(np.abs(kept_sizes.astype("float64")).max()) * len(kept_sizes) < _EXACT_SUM:
        sums: list[int] = np.add.reduceat(kept_sizes, heads).tolist()
    else:  # a Size near the int64 limit (only a cut or spliced line prints one): Python integers
        values = kept_sizes.tolist()
        ends = [*heads.tolist()[1:], len(values)]
        sums = [sum(values[a:b]) for a, b in zip(heads.tolist(), ends, strict=True)]
    if len(sums) != count:  # every group keeps a resident row, so a tensor
        raise AssertionError("a build without a resident tensor")
    first_rows = np.full(len(order), -1, dtype=np.int64)
    ranked = where[sort]
    first_rows[ranked] = ranked[first][np.cumsum(first) - 1]
    name_codes = np.full(len(order), -1, dtype=np.int64)
    name_codes[where] = codes
    return sums, np.diff(np.append(heads, len(kept_groups))).tolist(), first_rows, name_codes


def _name_codes(column: Any, positions: np.ndarray) -> np.ndarray:
    """One int64 code per cell at `positions` of the name column (the frame's array), equal for equal
    names, a missing name coded as "" (as `text_cells` reads it): dictionary-encoded in Arrow when the
    column is Arrow-backed, else factorised from `text_cells`."""
    if isinstance(column.dtype, pd.StringDtype) and column.dtype.storage == "pyarrow":
        cells = pc.fill_null(pa.array(column).take(pa.array(positions)), "")
        encoded = pc.dictionary_encode(cells)
        if isinstance(encoded, pa.ChunkedArray):
            encoded = encoded.combine_chunks()
        return np.asarray(encoded.indices.to_numpy(zero_copy_only=False), dtype=np.int64)
    return factorised_codes(text_cells(pd.Series(column, copy=False), positions))


def factorised_codes(names: list[str]) -> np.ndarray:
    """A code per name, equal for equal names, numbered in order of first appearance: `_name_codes` of
    names already read as str (and MEM007's codes of names it made itself)."""
    codes: dict[str, int] = {}
    return np.fromiter(
        (codes.setdefault(name, len(codes)) for name in names), dtype=np.int64, count=len(names)
    )


def text_cells(column: pd.Series, positions: np.ndarray | list[int]) -> list[str]:
    """The text cells at `positions` as str ("" when missing), read through Arrow when the column is
    Arrow-backed: only the rows asked for become Python strings."""
    return _text_cells(column.array, positions)


def _text_cells(array: Any, positions: np.ndarray | list[int]) -> list[str]:
    """`text_cells` of the column's array (`column_array`: no Series is made). Arrow's cells are str or
    None, so with no missing cell among them they are returned as they are."""
    if isinstance(array.dtype, pd.StringDtype) and array.dtype.storage == "pyarrow":
        taken = pa.array(array).take(pa.array(positions))
        cells = taken.to_pylist()
        if not taken.null_count:
            return cells
    else:
        cells = pd.Series(array, copy=False).to_numpy(dtype=object)[positions].tolist()
    return [c if type(c) is str else ("" if c is None or c is pd.NA or c != c else str(c)) for c in cells]


def printed_internals(
    memory: pd.DataFrame | Sequence[Mapping[str, Any]] | None,
) -> dict[int | None, tuple[int | None, int | None]]:
    """`Total Internal Memory Size` and its line per build: the build's first memory row that has it.
    `memory` is the frame, or its rows before it is built (dicts, a column not there being missing)."""
    out: dict[int | None, tuple[int | None, int | None]] = {}
    if memory is None or len(memory) == 0:
        return out
    names = ("build_index", "internal_bytes", "internal_line")
    if isinstance(memory, pd.DataFrame):
        cells: Iterable[tuple[Any, ...]] = zip(*(column_cells(memory, c) for c in names), strict=True)
    else:
        cells = ((row.get(names[0]), row.get(names[1]), row.get(names[2])) for row in memory)
    for index, value, line in cells:
        key = _int(index)
        if key not in out and _int(value) is not None:
            out[key] = (_int(value), _int(line))
    return out


def _tensors(rows: pd.DataFrame) -> pd.DataFrame:
    """One row per tensor (a name at an address), live from its first consumer - 1 to its last consumer."""
    rows = rows.reset_index(drop=True)
    groups: dict[tuple[str, int, int], list[int]] = {}
    names = rows["name"].fillna("").astype(str).tolist()
    for i, key in enumerate(
        zip(names, rows["start_offset"].tolist(), rows["end_offset"].tolist(), strict=True)
    ):
        groups.setdefault(key, []).append(i)
    op_ids = [_int(v) for v in rows["op_id"]]
    row_lines = [int(v) for v in rows["line"]]
    firsts = [members[0] for members in groups.values()]
    ops = [tuple(sorted({op for i in m if (op := op_ids[i]) is not None})) for m in groups.values()]
    out = rows.iloc[firsts].assign(name=[names[i] for i in firsts]).reset_index(drop=True)
    out["op_first"] = pd.array([o[0] - 1 if o else None for o in ops], dtype="Int64")
    out["op_last"] = pd.array([o[-1] if o else None for o in ops], dtype="Int64")
    out["ops"] = pd.Series(ops, dtype=object)
    out["lines"] = pd.Series([tuple(row_lines[i] for i in m) for m in groups.values()], dtype=object)
    return out.sort_values("line", kind="stable").reset_index(drop=True)


class _Tensor(NamedTuple):
    """One resident tensor of `_tensors` as plain values: what the step sweep and the bound read (a tuple:
    a log has a thousand of them, built on every parse that runs the rules)."""

    name: str
    start: int
    end: int
    line: int  # its first row's line
    ops: tuple[int, ...]
    lines: tuple[int, ...]


# Up to this many tensors are built from `_TensorTable._first_of` one by one before `later` is listed.
_FEW_LOOKUPS = 16


class _TensorTable:
    """The resident tensors of `_tensors` as the rows' columns: tensor i is the row `firsts[i]` (its
    first row, line order), with the rows `later[firsts[i]]` when the table lists it again. `[i]` builds
    its `_Tensor`; the pool builds only the few it reports (the step sweep, on first use, all of them).

    When every row is resident and in line order (every CI log), the rows' tensors are read from
    `_Rows.first_of` (each row's key's first row, found with the build's `sum_bytes` by sorting codes):
    no (name, Start, End) is hashed, and `later` is listed only when a tensor is built. Otherwise, or
    with `hashed`, each row's key is hashed (`tests/test_pool.py` compares the two)."""

    __slots__ = (
        "_first_of",
        "_later",
        "_lookups",
        "_members",
        "_rows",
        "end",
        "firsts",
        "line",
        "name",
        "op_id",
        "start",
    )

    def __init__(
        self, rows: _Rows, members: list[int], hashed: bool = False, in_order: bool | None = None
    ) -> None:
        self._rows = rows
        self._members: np.ndarray | None = None  # None: the rows in their own order
        if in_order is None:  # (`in_order`: the caller knows whether `members` is every row in order)
            in_order = members == list(range(len(rows.name)))
        if in_order:
            self.name, self.start, self.end = rows.name, rows.start, rows.end
            self.line, self.op_id = rows.line, rows.op_id
        else:
            self._members = np.array(members, dtype=np.int64)
            self.name = list(map(rows.name.__getitem__, members))
            self.start = list(map(rows.start.__getitem__, members))
            self.end = list(map(rows.end.__getitem__, members))
            self.line = list(map(rows.line.__getitem__, members))
            self.op_id = list(map(rows.op_id.__getitem__, members))
        self._later: dict[int, list[int]] | None = {}
        self._first_of: np.ndarray | None = None
        self._lookups = 0  # tensors built before `later` was listed
        self.firsts: Sequence[int] = range(len(self.name))
        if self._members is None and rows.tensor_count == len(self.name):
            return  # every row resident, in line order, each its own tensor (no key to hash)
        if self._members is None and not hashed:
            first_of = rows.first_of
            self.firsts = np.flatnonzero(first_of == np.arange(len(first_of))).tolist()
            self._first_of, self._later = first_of, None
            return
        keys = list(zip(self.name, self.start, self.end, strict=True))
        # Each key's first row (a dict built backwards keeps the first): one hashing pass.
        first_row = dict(zip(reversed(keys), reversed(range(len(keys))), strict=True))
        if len(first_row) < len(keys):  # some rows repeat a tensor: first rows ascending, then the rest
            self.firsts = sorted(first_row.values())
            is_first = [False] * len(keys)
            for i in self.firsts:
                is_first[i] = True
            later: dict[int, list[int]] = {}
            for i in compress(range(len(keys)), map(not_, is_first)):
                later.setdefault(first_row[keys[i]], []).append(i)
            self._later = later

    @property
    def later(self) -> dict[int, list[int]]:
        """The rows after the first of each tensor listed again, keyed by its first row (ascending)."""
        if self._later is None:
            first_of = cast(np.ndarray, self._first_of)
            again = np.flatnonzero(first_of != np.arange(len(first_of)))
            later: dict[int, list[int]] = {}
            for i, r in zip(again.tolist(), first_of[again].tolist(), strict=True):
                rest = later.get(r)
                if rest is None:
                    later[r] = [i]
                else:
                    rest.append(i)
            self._later = later
        return self._later

    def __len__(self) -> int:
        return len(self.firsts)

    def __getitem__(self, i: int) -> _Tensor:
        r = self.firsts[i]
        if self._later is None and self._lookups < _FEW_LOOKUPS:  # the bound's few tensors: no dict
            self._lookups += 1
            rows = np.flatnonzero(cast(np.ndarray, self._first_of) == r).tolist()  # [r, *later rows]
            rest = rows[1:] or None
        else:
            rest = self.later.get(r)
        if rest is None:
            op = self.op_id[r]
            return _Tensor(
                self.name[r],
                self.start[r],
                self.end[r],
                self.line[r],
                () if op is None else (op,),
                (self.line[r],),
            )
        m = [r, *rest]
        ops = tuple(sorted({op for k in m if (op := self.op_id[k]) is not None}))
        return _Tensor(
            self.name[r], self.start[r], self.end[r], self.line[r], ops, tuple(self.line[k] for k in m)
        )

    def columns(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Per tensor, int64 arrays: (min and max consumer ID, whether it has one, Start, End)."""
        rows = self._rows
        if self._first_of is not None:  # every row resident in line order, some listed again
            return self._grouped_columns(rows, self._first_of)
        at = self._members
        if self.later:
            firsts = np.array(self.firsts, dtype=np.int64)
            at = firsts if at is None else at[firsts]
        low, known, start, end = (
            a if at is None else a[at]
            for a in (rows.op_array, rows.op_known, rows.start_array, rows.end_array)
        )
        high = low
        if self.later:  # a tensor listed again: its IDs over all its rows
            low, high, known = low.copy(), low.copy(), known.copy()
            for r, rest in self.later.items():
                ops = [op for k in (r, *rest) if (op := self.op_id[k]) is not None]
                if ops:
                    j = bisect.bisect_left(self.firsts, r)
                    low[j], high[j], known[j] = min(ops), max(ops), True
        return low, high, known, start, end

    def _grouped_columns(
        self, rows: _Rows, first_of: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """`columns` over every row at once: each row's tensor is the index of its first row in
        `firsts`; a tensor's IDs are the min and max over its rows with an ID (`minimum.at`, exact in
        int64), its first row's cell (0, unknown) when none has one."""
        firsts = np.array(self.firsts, dtype=np.int64)
        tensor_of = np.searchsorted(firsts, first_of)
        with_id = rows.op_known
        ids, owners = rows.op_array[with_id], tensor_of[with_id]
        known = np.bincount(owners, minlength=len(firsts)) > 0
        low = np.full(len(firsts), np.iinfo(np.int64).max, dtype=np.int64)
        high = np.full(len(firsts), np.iinfo(np.int64).min, dtype=np.int64)
        np.minimum.at(low, owners, ids)
        np.maximum.at(high, owners, ids)
        first_ids = rows.op_array[firsts]
        low, high = np.where(known, low, first_ids), np.where(known, high, first_ids)
        return low, high, known, rows.start_array[firsts], rows.end_array[firsts]


def _timed(tensors: list[_Tensor]) -> list[_Tensor]:
    """The tensors the per-step sweep places: an op id over `MAX_OP_INDEX` (a spliced or cut line) would
    make the sweep run, and allocate, one step per id up to it, so such a tensor counts as untimed
    (as one without a consumer ID). A tensor lives from op_first = min(ops) - 1 to op_last = max(ops)."""
    return [t for t in tensors if t.ops and t.ops[-1] <= MAX_OP_INDEX and t.ops[0] - 1 >= -1]


class _Timeline(NamedTuple):
    """The timed tensors (`_timed`: `table[tensor_at[i]]` is the i-th) with their lifetimes and absolute
    ranges as int64 arrays, read from the table's columns (no Python step per tensor)."""

    table: _TensorTable
    tensor_at: Sequence[int]  # (a range when every tensor is timed)
    first: np.ndarray  # op_first = min(ops) - 1
    last: np.ndarray  # op_last = max(ops)
    start: np.ndarray
    end: np.ndarray

    def tensor(self, i: int) -> _Tensor:
        return self.table[self.tensor_at[i]]

    def tensors(self) -> list[_Tensor]:
        return [self.table[i] for i in self.tensor_at]


def _timeline(table: _TensorTable) -> _Timeline:
    """The timed tensors of `table` (those `_timed` keeps), in table order."""
    low, high, known, start, end = table.columns()
    timed = known & (high <= MAX_OP_INDEX) & (low >= 0)
    if timed.all():  # (every tensor: no list of their indexes, no copies)
        return _Timeline(table, range(len(timed)), low - 1, high, start, end)
    keep = np.flatnonzero(timed)
    return _Timeline(table, keep.tolist(), low[keep] - 1, high[keep], start[keep], end[keep])


class _NameKeys:
    """`_name_keys` of the timed tensors, computed for the indexes asked (the steps judged are few)."""

    __slots__ = ("_timeline",)

    def __init__(self, timeline: _Timeline) -> None:
        self._timeline = timeline

    def __getitem__(self, i: int) -> str:
        table = self._timeline.table
        r = table.firsts[self._timeline.tensor_at[i]]
        name = table.name[r]
        return name if name else f"\0line {table.line[r]}"


def _peak_bound_step(timeline: _Timeline, pool_start: int) -> int | None:
    """The first step whose lower bound is the largest (the `lower_bound_step`), without sweeping
    every step: the plain sum of Size over live(j) (a difference array) caps the bound at j when every
    range has End >= Start (the bound takes a subset of live(j)), so the steps are judged by that sum,
    largest first, and the judging stops at the first sum below the best bound found. On a chain
    without aliasing the busiest step's sum is its bound and one step is judged; the full sweep (the
    `steps` frame) waits for a plot or the report. None when no tensor is timed."""
    first, last = timeline.first, timeline.last
    if not timeline.tensor_at:
        return None
    weight = timeline.end - timeline.start
    if (weight < 0).any():  # a negative Size: no cap, every step
        steps = _step_lists(timeline.tensors(), pool_start)
        bounds = steps["lower_bound_bytes"]
        return steps["step"][bounds.index(max(bounds))]
    # The bound is the same at any origin (differences and comparisons of offsets): absolute offsets.
    start, end = timeline.start.tolist(), timeline.end.tolist()
    names = cast(list[str], _NameKeys(timeline))
    lo = int(first.min())
    count = int(last.max()) - lo + 1
    delta = np.zeros(count + 1, dtype=np.int64)
    np.add.at(delta, first - lo, weight)
    np.add.at(delta, last - lo + 1, -weight)
    sums = np.cumsum(delta[:-1])
    # The busiest sum first; then every step whose sum reaches the best bound found, largest sum first
    # (equal sums in step order), until a sum falls below it.
    top = int(sums.argmax())
    best_step = lo + top
    best = _step_figures(_live(timeline, best_step), start, end, names, True)[2]
    judged = np.flatnonzero(sums >= best)
    for k in judged[np.argsort(-sums[judged], kind="stable")].tolist():
        if sums[k] < best:
            break
        if k == top:
            continue
        step = lo + k
        bound = _step_figures(_live(timeline, step), start, end, names, True)[2]
        if bound > best or (bound == best and step < best_step):
            best, best_step = bound, step
    return best_step


def _live(timeline: _Timeline, step: int) -> list[int]:
    """live(step): the indexes of the tensors with op_first <= step <= op_last, ascending."""
    return np.flatnonzero((timeline.first <= step) & (timeline.last >= step)).tolist()


def _step_lists(tensors: list[_Tensor], pool_start: int) -> dict[str, list[int]]:
    """The per-step columns: a sweep over steps that keeps the live set (see the module docstring)."""
    columns: dict[str, list[int]] = {c: [] for c in _STEP_COLUMNS}
    timed = _timed(tensors)
    if not timed:
        return columns
    first = [t.ops[0] - 1 for t in timed]
    last = [t.ops[-1] for t in timed]
    start = [t.start - pool_start for t in timed]
    end = [t.end - pool_start for t in timed]
    names = _name_keys(timed)
    ordered = all(e >= s for s, e in zip(start, end, strict=True))
    lo, hi = min(first), max(last)
    order = sorted(range(len(first)), key=lambda i: (first[i], i))
    active: list[int] = []
    cursor = 0
    for step in range(lo, hi + 1):
        while cursor < len(order) and first[order[cursor]] <= step:
            active.append(order[cursor])
            cursor += 1
        active = [i for i in active if last[i] >= step]
        occupied, high, bound = _step_figures(active, start, end, names, ordered)
        columns["step"].append(step)
        columns["occupied_bytes"].append(occupied)
        columns["lower_bound_bytes"].append(bound)
        columns["high_water_bytes"].append(high)
        columns["tensors"].append(len(active))
    return columns


def _step_figures(
    active: list[int], start: list[int], end: list[int], names: list[str], ordered: bool
) -> tuple[int, int, int]:
    """(occupied, high-water, lower bound) of one step: `_union` and `_disjoint_max` in one pass over
    the live ranges when every range has End >= Start, its names are distinct and the ranges pairwise
    disjoint (every real fixture: then the union and the bound are both the plain sum)."""
    if not active:
        return 0, 0, 0
    if ordered and len({names[i] for i in active}) == len(active):
        total, reach, high = 0, None, None
        disjoint = True
        for i in sorted(active, key=lambda i: (start[i], end[i])):
            s, e = start[i], end[i]
            if reach is None or s >= reach:
                total += e - s
                reach = e
            else:
                disjoint = False
                if e > reach:
                    total += e - reach
                    reach = e
            high = e if high is None or e > high else high
        if disjoint:
            return total, int(high or 0), total
    occupied, high = _union(active, start, end)
    return occupied, high, _disjoint_max(active, start, end, names)[0]


def _bound(
    timeline: _Timeline, step: int | None
) -> tuple[int | None, int | None, tuple[str, ...], tuple[int, ...], tuple[int, ...]]:
    """(bytes, step, names, row lines, consuming ops) of the lower bound at `step` (the busiest)."""
    if step is None:
        return None, None, (), (), ()
    live = _live(timeline, step)
    names = cast(list[str], _NameKeys(timeline))
    total, chosen = _disjoint_max(live, timeline.start.tolist(), timeline.end.tolist(), names)
    tensors = sorted((timeline.tensor(i) for i in chosen), key=lambda t: t.line)
    names_out = tuple(t.name for t in tensors)
    lines = tuple(sorted({line for t in tensors for line in t.lines}))
    ops = tuple(sorted({op for t in tensors for op in t.ops}))
    return total, step, names_out, lines, ops


def _name_keys(tensors: list[_Tensor]) -> list[str]:
    """The identity of a tensor across addresses: its name; an unnamed row is its own tensor."""
    return [t.name if t.name else f"\0line {t.line}" for t in tensors]


def _union(active: list[int], start: list[int], end: list[int]) -> tuple[int, int]:
    """(bytes of the union of the ranges, max end) over `active`; (0, 0) when nothing is live."""
    if not active:
        return 0, 0
    total, reach = 0, None
    for i in sorted(active, key=lambda i: start[i]):
        s, e = start[i], end[i]
        if reach is None or s >= reach:
            total += e - s
            reach = e
        elif e > reach:
            total += e - reach
            reach = e
    return total, max(end[i] for i in active)


def _disjoint_max(
    active: list[int], start: list[int], end: list[int], names: list[str]
) -> tuple[int, list[int]]:
    """The heaviest subset of `active` with one tensor per name and pairwise disjoint [start, end).

    A name listed at several addresses keeps its smallest range (then its first row). Weighted
    interval scheduling: sort by end; best[k] = max(best[k-1], weight_k + best[p(k)]), p(k) = how many
    earlier ranges end at or before range k starts.
    """
    one: dict[str, int] = {}
    for i in active:
        kept = one.get(names[i])
        if kept is None or (end[i] - start[i], i) < (end[kept] - start[kept], kept):
            one[names[i]] = i
    candidates = sorted(one.values(), key=lambda i: (end[i], start[i], i))
    if _pairwise_disjoint(candidates, start, end):  # every real fixture: the bound is the plain sum
        return sum(end[i] - start[i] for i in candidates), candidates
    ends = [end[i] for i in candidates]
    best = [0] * (len(candidates) + 1)
    back: list[int | None] = [None] * (len(candidates) + 1)
    for k, i in enumerate(candidates, start=1):
        p = bisect.bisect_right(ends, start[i], 0, k - 1)
        take = end[i] - start[i] + best[p]
        if take > best[k - 1]:
            best[k], back[k] = take, p
        else:
            best[k] = best[k - 1]
    chosen: list[int] = []
    k = len(candidates)
    while k > 0:
        previous = back[k]
        if previous is None:
            k -= 1
        else:
            chosen.append(candidates[k - 1])
            k = previous
    return best[-1], chosen


def _pairwise_disjoint(indexes: list[int], start: list[int], end: list[int]) -> bool:
    reach: int | None = None
    for i in sorted(indexes, key=lambda i: (start[i], end[i])):
        if reach is not None and start[i] < reach:
            return False
        reach = end[i] if reach is None else max(reach, end[i])
    return True


def _int(value: Any) -> int | None:
    if type(value) is int:  # (most cells: no `pd.isna`)
        return value
    if value is None or value is pd.NA:
        return None
    try:
        if pd.isna(value):
            return None
    except (TypeError, ValueError):
        return None
    return int(value)
