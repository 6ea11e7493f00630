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
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pandas as pd

from logscope.analysis import MAX_OP_INDEX

_STEP_COLUMNS = ("step", "occupied_bytes", "lower_bound_bytes", "high_water_bytes", "tensors")


@dataclass(frozen=True)
class FeaturePool:
    """The feature-map pool of one build (see the module docstring for every definition)."""

    build_index: int | None
    rows: pd.DataFrame  # pool-resident feature rows (the `tensors` frame's columns), line order
    outside: pd.DataFrame  # feature rows outside the pool, line order
    tensors: pd.DataFrame  # resident tensors: one per name at an address, + op_first, op_last, ops, lines
    outside_tensors: pd.DataFrame  # the same for the rows outside
    start_offset: int  # min(Start) over the resident rows: the pool start
    span_bytes: int  # max(End) - min(Start) over the resident rows
    sum_bytes: int  # sum(Size) over the resident tensors
    internal_bytes: int | None  # the log's `Total Internal Memory Size`, if printed
    internal_line: int | None
    matches_total: bool | None  # span == internal_bytes; None when no total is printed
    steps: pd.DataFrame  # step, occupied_bytes, lower_bound_bytes, high_water_bytes, tensors
    lower_bound_bytes: int | None  # None when no resident row has a consumer ID
    lower_bound_step: int | None
    lower_bound_tensors: tuple[str, ...]
    lower_bound_lines: tuple[int, ...]  # the rows of those tensors
    lower_bound_ops: tuple[int, ...]  # the operators consuming them (the IDs that make them live)
    occupied_peak_bytes: int | None
    occupied_peak_step: int | None

    @property
    def first_line(self) -> int:
        """First line of the resident rows."""
        return int(self.rows["line"].min())

    @property
    def last_line(self) -> int:
        """Last line of the resident rows."""
        return int(self.rows["line"].max())

    @property
    def table_lines(self) -> tuple[int, int]:
        """First and last line of the build's feature rows, outside ones included."""
        lines = pd.concat([self.rows["line"], self.outside["line"]])
        return int(lines.min()), int(lines.max())

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
    feature = usable_feature_rows(tensors)
    internals = printed_internals(memory)
    resident, extents = pool_extents(feature, internals)
    pools: dict[int | None, FeaturePool] = {}
    for build_index, rows in feature.groupby("build_index", sort=True, dropna=False):
        index = _int(build_index)
        internal, line = internals.get(index, (None, None))
        rows = rows.sort_values("line", kind="stable")
        extent = {str(k): v for k, v in extents.loc[build_index].items()}
        pools[index] = _pool(index, rows, resident[rows.index], extent, internal, line)
    _CACHE["last"] = (tensors, memory, pools)  # one log at a time: no growth over an audit
    return pools


_CACHE: dict[str, tuple[pd.DataFrame, pd.DataFrame | None, dict[int | None, FeaturePool]]] = {}


def feature_pool(frames: Mapping[str, pd.DataFrame], build_index: int | None) -> FeaturePool | None:
    """The pool of `build_index`, or None when that build has no usable feature rows."""
    return feature_pools(frames).get(build_index)


def feature_builds(frames: Mapping[str, pd.DataFrame]) -> list[int]:
    """Build indexes (not null) that have a pool, ascending."""
    return [b for b in feature_pools(frames) if b is not None]


# ----------------------------------------------------------------------------------------- building


def usable_feature_rows(tensors: pd.DataFrame) -> pd.DataFrame:
    """Feature rows with Start, End and Size known: the rows every pool figure is computed from."""
    return tensors[
        (tensors["table"] == "feature")
        & tensors["size_bytes"].notna()
        & tensors["start_offset"].notna()
        & tensors["end_offset"].notna()
    ]


EXTENT_COLUMNS = ("start_offset", "span_bytes", "sum_bytes", "table_span_bytes")


def pool_extents(
    feature: pd.DataFrame, internals: Mapping[int | None, tuple[int | None, int | None]]
) -> tuple[pd.Series, pd.DataFrame]:
    """Where the pool of every build lies, in one vectorised pass (no lifetimes, no steps).

    Returns the pool-resident flag of each usable feature row (`usable_feature_rows`) and, per build
    index (null included), `start_offset`, `span_bytes`, `sum_bytes` and `table_span_bytes`
    (max(End) - min(Start) over every row, rows outside the pool too); the module docstring defines
    them. `logscope.analysis.derived` fills the memory frame from this at parse time and
    `feature_pools` builds each `FeaturePool` on it: one definition.
    """
    builds = feature["build_index"]
    by_index = {k: v for k, (v, _) in internals.items() if k is not None and v is not None}
    internal = builds.map(by_index).astype("float64")
    if internals.get(None, (None, None))[0] is not None:
        internal = internal.where(builds.notna(), float(internals[None][0] or 0))
    groups = feature.groupby("build_index", dropna=False, sort=True)
    max_end = groups["end_offset"].transform("max").astype("float64")
    min_start = groups["start_offset"].transform("min").astype("float64")
    start = feature["start_offset"].astype("float64")
    cut = internal.notna() & (max_end - min_start > internal)
    resident = ~cut | (start >= max_end - internal)
    # A build that would keep no row keeps them all (and its span does not match the total).
    kept = resident.groupby(builds, dropna=False).transform("any").astype(bool)
    resident = (resident | ~kept).astype(bool)
    rows = feature[resident]
    # One tensor is one name at one address (listed once per consumer): counted once.
    unique = rows.assign(name=rows["name"].fillna("")).drop_duplicates(
        ["build_index", "name", "start_offset", "end_offset"]
    )
    table = groups.agg(start=("start_offset", "min"), end=("end_offset", "max"))
    pool_start = rows.groupby("build_index", dropna=False, sort=True)["start_offset"].min()
    sums = unique.groupby("build_index", dropna=False, sort=True)["size_bytes"].sum()
    extents = pd.DataFrame(
        {
            "start_offset": pool_start,
            "span_bytes": table["end"] - pool_start,
            "sum_bytes": sums,
            "table_span_bytes": table["end"] - table["start"],
        }
    )
    return resident, extents


def _pool(
    build_index: int | None,
    feature: pd.DataFrame,
    resident: pd.Series,
    extent: Mapping[str, Any],
    internal: int | None,
    internal_line: int | None,
) -> FeaturePool:
    rows, outside = feature[resident], feature[~resident]
    start, span = int(extent["start_offset"]), int(extent["span_bytes"])
    tensors = _tensors(rows)
    steps = _steps(tensors, start)
    bound = _bound(tensors, steps)
    occupied_peak: tuple[int | None, int | None] = (None, None)
    if len(steps):
        position = int(steps["occupied_bytes"].to_numpy().argmax())
        occupied_peak = (int(steps["occupied_bytes"].iloc[position]), int(steps["step"].iloc[position]))
    return FeaturePool(
        build_index=build_index,
        rows=rows,
        outside=outside,
        tensors=tensors,
        outside_tensors=_tensors(outside),
        start_offset=start,
        span_bytes=span,
        sum_bytes=int(extent["sum_bytes"]),
        internal_bytes=internal,
        internal_line=internal_line,
        matches_total=None if internal is None else span == internal,
        steps=steps,
        lower_bound_bytes=bound[0],
        lower_bound_step=bound[1],
        lower_bound_tensors=bound[2],
        lower_bound_lines=bound[3],
        lower_bound_ops=bound[4],
        occupied_peak_bytes=occupied_peak[0],
        occupied_peak_step=occupied_peak[1],
    )


def printed_internals(memory: pd.DataFrame | None) -> dict[int | None, tuple[int | None, int | None]]:
    """`Total Internal Memory Size` and its line per build: the build's first memory row that has it."""
    out: dict[int | None, tuple[int | None, int | None]] = {}
    if memory is None or memory.empty:
        return out
    for index, value, line in zip(
        memory["build_index"], memory["internal_bytes"], memory["internal_line"], strict=True
    ):
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


def _timed(tensors: pd.DataFrame) -> pd.DataFrame:
    """The rows the per-step sweep places: an op id over `MAX_OP_INDEX` (a spliced or cut line) would
    make the sweep run, and allocate, one step per id up to it, so such a row counts as untimed."""
    known = tensors["op_first"].notna() & tensors["op_last"].notna()
    return tensors[known & (tensors["op_last"] <= MAX_OP_INDEX) & (tensors["op_first"] >= -1)]


def _steps(tensors: pd.DataFrame, pool_start: int) -> pd.DataFrame:
    """The per-step frame: a sweep over steps that keeps the live set (see the module docstring)."""
    timed = _timed(tensors)
    if timed.empty:
        return pd.DataFrame({c: pd.array([], dtype="Int64") for c in _STEP_COLUMNS})
    first = [int(v) for v in timed["op_first"]]
    last = [int(v) for v in timed["op_last"]]
    start = [int(v) - pool_start for v in timed["start_offset"]]
    end = [int(v) - pool_start for v in timed["end_offset"]]
    names = _name_keys(timed)
    lo, hi = min(first), max(last)
    order = sorted(range(len(first)), key=lambda i: (first[i], i))
    columns: dict[str, list[int]] = {c: [] for c in _STEP_COLUMNS}
    active: list[int] = []
    cursor = 0
    for step in range(lo, hi + 1):
        while cursor < len(order) and first[order[cursor]] <= step:
            active.append(order[cursor])
            cursor += 1
        active = [i for i in active if last[i] >= step]
        occupied, high = _union(active, start, end)
        columns["step"].append(step)
        columns["occupied_bytes"].append(occupied)
        columns["lower_bound_bytes"].append(_disjoint_max(active, start, end, names)[0])
        columns["high_water_bytes"].append(high)
        columns["tensors"].append(len(active))
    return pd.DataFrame({c: pd.array(v, dtype="Int64") for c, v in columns.items()})


def _bound(
    tensors: pd.DataFrame, steps: pd.DataFrame
) -> tuple[int | None, int | None, tuple[str, ...], tuple[int, ...], tuple[int, ...]]:
    """(bytes, step, names, row lines, consuming ops) of the largest per-step lower bound."""
    if steps.empty:
        return None, None, (), (), ()
    position = int(steps["lower_bound_bytes"].to_numpy().argmax())
    step = int(steps["step"].iloc[position])
    timed = _timed(tensors)
    first = [int(v) for v in timed["op_first"]]
    last = [int(v) for v in timed["op_last"]]
    live = [i for i in range(len(timed)) if first[i] <= step <= last[i]]
    start = [int(v) for v in timed["start_offset"]]
    end = [int(v) for v in timed["end_offset"]]
    total, chosen = _disjoint_max(live, start, end, _name_keys(timed))
    row_line, row_name = list(timed["line"]), list(timed["name"])
    row_lines, row_ops = list(timed["lines"]), list(timed["ops"])
    chosen = sorted(chosen, key=lambda i: int(row_line[i]))
    names = tuple(str(row_name[i]) for i in chosen)
    lines = tuple(sorted({line for i in chosen for line in row_lines[i]}))
    ops = tuple(sorted({op for i in chosen for op in row_ops[i]}))
    return total, step, names, lines, ops


def _name_keys(tensors: pd.DataFrame) -> list[str]:
    """The identity of a tensor across addresses: its name; an unnamed row is its own tensor."""
    return [
        str(name) if name else f"\0line {int(line)}"
        for name, line in zip(tensors["name"], tensors["line"], strict=True)
    ]


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
    if value is None or value is pd.NA:
        return None
    try:
        if pd.isna(value):
            return None
    except (TypeError, ValueError):
        return None
    return int(value)
