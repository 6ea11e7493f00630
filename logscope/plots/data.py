"""The series each plot draws, derived from the frames; the report's tables and JSON use the same ones.

Every derivation is stated here and in docs/report.md; every series keeps the log lines it came from.

RKNN feature memory over layer order (`feature_curve`)
    The pool of one build from `logscope.analysis.pool`, which defines every figure (pool-resident
    rows, span, printed total, tensor lifetimes from the consuming-op IDs, and per step the occupancy,
    the high-water and the live lower bound); MEM001, MEM002 and MEM006 read the same pool. Drawn per
    layer: `occupied_bytes` (the union of the address ranges of the tensors live at that layer, what
    the log's own plan holds), `high_water_bytes` (max(End) - pool start over them; its maximum is the
    span, 1,756,160 B = `Total Internal Memory Size` in [09]) and, where it differs from the
    occupancy, `lower_bound_bytes` (each tensor once, aliased ranges once: what any allocation needs).
    The gap between high-water and occupancy is address space the allocator left unused at that layer.
    On every real fixture occupancy and bound coincide: 1,204,224 B at layer 3 in [09].

MCU memory over ops (`mcu_curves`)
    The `curve` frame of `logscope.analysis.mcu` (heap trace totals, live planned buffers, per-layer
    working sets or the alloc/free replay: its `derivation` says which), the peak of `mcu_memory`,
    and the budget the log states (`mcu_runs.budget_bytes`) or the one given by the caller (`--sram`).

Tensor address map (`address_layout`)
    RKNN: one rectangle per pool tensor (a name at an address), x from its first live layer to its
    last (lifetimes as in `logscope.analysis.pool`), y from Start to End relative to the pool start;
    rows outside the pool are drawn apart. TFLM memory plans: one rectangle per planned
    buffer, x from `first_op` to `last_op`, y from its offset to offset + size.

Fragmentation (`fragmentation_series`)
    Replays an alloc/free trace with addresses (ESP-IDF host heap log, Mbed trace), as
    `analysis.mcu.replay_events` does (a free of an unknown address changes nothing; an address
    allocated again without a free replaces its block). Span = [lowest allocated address, highest
    allocated end) over the run. After each event: `free_bytes` = span - live bytes,
    `largest_free_bytes` = the largest gap between live blocks inside the span (the span's ends count
    as boundaries). Requested sizes are what the trace prints, so allocator headers and alignment
    count as free: the figure is an upper bound of usable free space. Without a trace, the heap
    snapshot rows of `arena` (`heap_caps_print_heap_info`: free and largest free block per region).
"""

from __future__ import annotations

import bisect
import heapq
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from logscope.analysis import pool as analysis_pool
from logscope.analysis.pool import FeaturePool
from logscope.figures import figure
from logscope.plots._common import LogLike, as_int, as_str, frame_of, frames_of, line_range

# --------------------------------------------------------------------------- RKNN feature pool

POOL_SPAN = figure("feature_pool_bytes")  # the label and definition every output uses


@dataclass(frozen=True)
class FeatureCurve:
    """Feature memory over layer order: one row per layer id (see `logscope.analysis.pool`)."""

    pool: FeaturePool
    frame: pd.DataFrame  # layer, occupied_bytes, lower_bound_bytes, high_water_bytes, tensors, op_type, line
    peak_bytes: int  # the occupancy peak (= the lower bound on every real fixture)
    peak_layer: int
    peak_tensors: tuple[str, ...]  # every tensor live at the peak layer
    peak_op_type: str | None
    peak_line: int | None

    @property
    def build_index(self) -> int | None:
        return self.pool.build_index


def feature_builds(log: LogLike) -> list[int]:
    """Build indexes whose feature-tensor table has rows with Start, End and Size."""
    return analysis_pool.feature_builds(frames_of(log))


def feature_pool(log: LogLike, build: int | None = None) -> FeaturePool | None:
    """The pool of `build` (default: the last build with a feature table), or None without one."""
    frames = frames_of(log)
    if build is None:
        builds = analysis_pool.feature_builds(frames)
        if not builds:
            return None
        build = builds[-1]
    return analysis_pool.feature_pool(frames, build)


def feature_curve(log: LogLike, build: int | None = None) -> FeatureCurve | None:
    """Occupancy, lower bound and high-water per layer of the feature pool; None without a feature table."""
    pool = feature_pool(log, build)
    if pool is None or pool.steps.empty or pool.occupied_peak_step is None:
        return None
    steps = pool.steps
    op_types, op_lines = _layer_names(frames_of(log), pool.build_index, pool.tensors)
    layers = [int(j) for j in steps["step"]]
    frame = pd.DataFrame(
        {
            "layer": steps["step"].array,
            "occupied_bytes": steps["occupied_bytes"].array,
            "lower_bound_bytes": steps["lower_bound_bytes"].array,
            "high_water_bytes": steps["high_water_bytes"].array,
            "tensors": steps["tensors"].array,
            "op_type": pd.array([op_types.get(j) for j in layers], dtype="string"),
            "line": pd.array([op_lines.get(j) for j in layers], dtype="Int64"),
        }
    )
    peak_layer = pool.occupied_peak_step
    return FeatureCurve(
        pool=pool,
        frame=frame,
        peak_bytes=pool.occupied_peak_bytes or 0,
        peak_layer=peak_layer,
        peak_tensors=tuple(str(n) for n in pool.live_tensors(peak_layer)["name"]),
        peak_op_type=op_types.get(peak_layer),
        peak_line=op_lines.get(peak_layer),
    )


def _layer_names(
    frames: Any, build: int | None, tensors: pd.DataFrame
) -> tuple[dict[int, str], dict[int, int]]:
    """Op type and log line per layer id: the layer table when the log has one, else the tensor table."""
    types: dict[int, str] = {}
    lines: dict[int, int] = {}
    layers = frame_of(frames, "layers")
    layers = layers[(layers["build_index"] == build) & layers["layer_id"].notna()]
    for layer_id, op_type, line in zip(layers["layer_id"], layers["op_type"], layers["line"], strict=True):
        key = as_int(layer_id)
        if key is None:
            continue
        if as_str(op_type) is not None:
            types.setdefault(key, str(op_type))
        if as_int(line) is not None:
            lines.setdefault(key, int(line))
    for op_id, user_op, line in zip(tensors["op_id"], tensors["user_op"], tensors["line"], strict=True):
        key = as_int(op_id)
        if key is None:
            continue
        if as_str(user_op) is not None:
            types.setdefault(key, str(user_op))
        if as_int(line) is not None:
            lines.setdefault(key, int(line))
    return types, lines


# --------------------------------------------------------------------------- MCU curves


@dataclass(frozen=True)
class McuCurve:
    """Memory over ops of one MCU run (`curve` frame) with its peak and budget."""

    run_index: int
    frame: pd.DataFrame  # step, op_index, op_name, op_type, live_bytes, line
    derivation: str | None
    peak_bytes: int | None
    peak_step: int | None
    peak_label: str | None
    peak_line: int | None
    budget_bytes: int | None
    budget_line: int | None
    budget_source: str | None  # "log" or "option"
    baseline_bytes: int | None


def mcu_curves(log: LogLike, budget_bytes: int | None = None) -> list[McuCurve]:
    """One curve per MCU run that has one; `budget_bytes` (`--sram`) applies where the log states none."""
    frames = frames_of(log)
    curve = frames.get("curve")
    if curve is None or curve.empty:
        return []
    memory = (
        frame_of(frames, "mcu_memory").set_index("run_index") if len(frame_of(frames, "mcu_memory")) else None
    )
    runs = frame_of(frames, "mcu_runs").set_index("run_index") if len(frame_of(frames, "mcu_runs")) else None
    out: list[McuCurve] = []
    for run_index, rows in curve.groupby("run_index", sort=True):
        rows = rows.sort_values("step").reset_index(drop=True)
        live = rows["live_bytes"].fillna(-1).to_numpy(dtype=np.int64)
        position = int(np.argmax(live))
        peak_row = rows.iloc[position]
        mem = memory.loc[run_index] if memory is not None and run_index in memory.index else None
        run = runs.loc[run_index] if runs is not None and run_index in runs.index else None
        budget = as_int(mem["budget_bytes"]) if mem is not None else None
        budget_line = as_int(run["budget_line"]) if run is not None else None
        budget_source = "log" if budget is not None else None
        if budget is None and budget_bytes is not None:
            budget, budget_line, budget_source = budget_bytes, None, "option"
        out.append(
            McuCurve(
                run_index=as_int(run_index) or 0,
                frame=rows,
                derivation=as_str(mem["derivation"]) if mem is not None else None,
                peak_bytes=int(live[position]) if live[position] >= 0 else None,
                peak_step=as_int(peak_row["step"]),
                peak_label=step_label(peak_row["op_index"], peak_row["op_name"]),
                peak_line=as_int(peak_row["line"]),
                budget_bytes=budget,
                budget_line=budget_line,
                budget_source=budget_source,
                baseline_bytes=as_int(mem["baseline_bytes"]) if mem is not None else None,
            )
        )
    return out


def step_label(index: Any, name: Any) -> str:
    parts = [f"op {as_int(index)}" if as_int(index) is not None else "", as_str(name) or ""]
    return " ".join(p for p in parts if p) or "step"


# --------------------------------------------------------------------------- address maps


@dataclass(frozen=True)
class AddressMap:
    """Rectangles (x0, x1, y0, y1 in layer/op units and bytes from the pool start) and the pool span."""

    title: str
    x_label: str
    rects: pd.DataFrame  # x0, x1, y0, y1, name, dtype, size_bytes, inside, line
    span_bytes: int
    span_label: str  # what the span is, with the log line it matches
    lines: tuple[int, int] | None


def address_layout(log: LogLike, build: int | None = None, run: int | None = None) -> AddressMap | None:
    """The RKNN feature pool of a build, else the first TFLM memory plan with offsets; None without either."""
    pool = feature_pool(log, build)
    if pool is not None:
        return _rknn_map(pool)
    return _buffer_map(frames_of(log), run)


def _rknn_map(pool: FeaturePool) -> AddressMap:
    parts = []
    for frame, inside in ((pool.tensors, True), (pool.outside_tensors, False)):
        if frame.empty:
            continue
        # A row whose consumer id is unknown is drawn at the layer axis origin, one layer wide.
        first = frame["op_first"].fillna(0).astype("int64")
        last = frame["op_last"].fillna(first).astype("int64")
        parts.append(
            pd.DataFrame(
                {
                    "x0": first.to_numpy() - 0.4,
                    "x1": last.to_numpy() + 0.4,
                    "y0": (frame["start_offset"] - pool.start_offset).to_numpy(dtype=np.int64),
                    "y1": (frame["end_offset"] - pool.start_offset).to_numpy(dtype=np.int64),
                    "name": frame["name"].astype("string").to_numpy(),
                    "dtype": frame["dtype"].astype("string").to_numpy(),
                    "size_bytes": frame["size_bytes"].to_numpy(dtype=np.int64),
                    "inside": inside,
                    "line": frame["line"].to_numpy(dtype=np.int64),
                }
            )
        )
    rects = pd.concat(parts, ignore_index=True)
    if pool.internal_bytes is not None:
        equal = "=" if pool.matches_total else "≠"
        where = f" (line {pool.internal_line})" if pool.internal_line is not None else ""
        span_label = f"{POOL_SPAN.label} {{span}} {equal} Total Internal Memory Size{where}"
    else:
        span_label = f"{POOL_SPAN.label} {{span}} = {POOL_SPAN.formula}"
    return AddressMap(
        title=f"feature tensor address map, build {pool.build_index}",
        x_label="layer (operator id; a tensor lives from the layer before its consumer to its last consumer)",
        rects=rects,
        span_bytes=pool.span_bytes,
        span_label=span_label,
        lines=pool.table_lines,
    )


def _buffer_map(frames: Any, run: int | None) -> AddressMap | None:
    buffers = frame_of(frames, "buffers")
    placed = buffers[
        buffers["offset_bytes"].notna()
        & buffers["size_bytes"].notna()
        & buffers["first_op"].notna()
        & buffers["last_op"].notna()
    ]
    if placed.empty:
        return None
    run_index = int(placed["run_index"].min()) if run is None else run
    placed = placed[placed["run_index"] == run_index]
    if placed.empty:
        return None
    offset = placed["offset_bytes"].to_numpy(dtype=np.int64)
    size = placed["size_bytes"].to_numpy(dtype=np.int64)
    names = [
        as_str(n) or f"buffer {as_int(b)}" for n, b in zip(placed["name"], placed["buffer_id"], strict=True)
    ]
    rects = pd.DataFrame(
        {
            "x0": placed["first_op"].to_numpy(dtype=np.int64) - 0.4,
            "x1": placed["last_op"].to_numpy(dtype=np.int64) + 0.4,
            "y0": offset,
            "y1": offset + size,
            "name": names,
            "dtype": "buffer",
            "size_bytes": size,
            "inside": True,
            "line": placed["line"].to_numpy(dtype=np.int64),
        }
    )
    span = int((offset + size).max())
    return AddressMap(
        title=f"planned buffers, run {run_index}",
        x_label="operator index (a buffer lives from first_op to last_op)",
        rects=rects,
        span_bytes=span,
        span_label="planned arena span {span} = max(offset + size)",
        lines=line_range(placed["line"]),
    )


# --------------------------------------------------------------------------- breakdown


@dataclass(frozen=True)
class BreakdownBar:
    label: str
    segments: Sequence[tuple[str, int, int | None]]  # (category, bytes, line)
    total: tuple[int, int | None] | None = None  # a total the log prints, drawn as a marker
    is_total: bool = False  # an MCU row that is itself a total (drawn hatched)


_RKNN_CATEGORIES = (
    ("weights", "weight_bytes", "weight_line"),
    ("feature maps", "internal_bytes", "internal_line"),
    ("scratch", "scratch_bytes", "scratch_line"),
    ("other", "other_bytes", None),
)


BREAKDOWN_BARS = 24  # bars one breakdown plot draws; the plot names how many it left out


def breakdown_bars(log: LogLike, limit: int | None = BREAKDOWN_BARS) -> list[BreakdownBar]:
    """Bars per build and source (RKNN memory rows), or per reported figure (MCU `arena` rows); the
    first `limit` (None: all)."""
    frames = frames_of(log)
    bars: list[BreakdownBar] = []
    for row in frame_of(frames, "memory").to_dict("records"):
        label = f"build {as_int(row['build_index'])} · {row['source']}"
        segments: list[tuple[str, int, int | None]] = []
        for category, column, line_column in _RKNN_CATEGORIES:
            value = as_int(row[column])
            if column == "internal_bytes" and value is None:
                value, line_column = as_int(row["activation_bytes"]), "activation_line"
            if value is not None:
                segments.append((category, value, as_int(row[line_column]) if line_column else None))
        total = as_int(row["total_bytes"])
        system_max, npu_max = as_int(row.get("system_max_bytes")), as_int(row.get("npu_max_bytes"))
        if system_max is not None or npu_max is not None:  # toolkit 1 eval_memory: pools, not categories
            peak = as_int(row.get("max_total_bytes"))
            pools = [(c, v, None) for c, v in (("system", system_max), ("npu", npu_max)) if v is not None]
            bars.append(BreakdownBar(f"{label} · maximum allocation", pools, (peak, None) if peak else None))
            system_total, npu_total = (
                as_int(row.get("system_total_bytes")),
                as_int(row.get("npu_total_bytes")),
            )
            pools = [(c, v, None) for c, v in (("system", system_total), ("npu", npu_total)) if v is not None]
            line = as_int(row["total_line"])
            bars.append(BreakdownBar(f"{label} · total allocation", pools, (total, line) if total else None))
            continue
        if segments or total is not None:
            bars.append(
                BreakdownBar(
                    label, segments, (total, as_int(row["total_line"])) if total is not None else None
                )
            )
        if not segments and row["source"] == "derived":  # tables without the log's totals: their spans
            spans = [
                (category, value, None)
                for category, value in (
                    ("weights", as_int(row["const_span_bytes"])),
                    ("feature maps", as_int(row["feature_pool_bytes"])),
                )
                if value is not None
            ]
            if spans:
                bars.append(BreakdownBar(f"build {as_int(row['build_index'])} · tables (spans)", spans))
    arena = frame_of(frames, "arena")
    if len(arena):
        used = arena[arena["used_bytes"].notna() & (arena["used_bytes"] > 0)]
        ranked = used.sort_values("used_bytes", ascending=False)
        for row in (ranked if limit is None else ranked.head(limit)).to_dict("records"):
            category = as_str(row["category"]) or "figure"
            region = as_str(row["region"])
            name = f"{region}: {category}" if region and region not in category else category
            label = f"run {as_int(row['run_index'])} · {row['source']} · {name}"
            bars.append(
                BreakdownBar(
                    label,
                    [(as_str(row["source"]) or "figure", int(row["used_bytes"]), as_int(row["line"]))],
                    is_total="total" in category.lower(),
                )
            )
    return bars if limit is None else bars[:limit]


# --------------------------------------------------------------------------- fragmentation


@dataclass(frozen=True)
class Fragmentation:
    run_index: int
    frame: pd.DataFrame  # seq, time_s, action, live_bytes, free_bytes, largest_free_bytes, line
    span_start: int
    span_bytes: int
    worst_seq: int | None  # the event with the highest 1 - largest/free
    lines: tuple[int, int] | None


@dataclass(frozen=True)
class HeapSnapshot:
    rows: pd.DataFrame  # region, capacity_bytes, free_bytes, largest_free_bytes, line
    lines: tuple[int, int] | None


def fragmentation_series(log: LogLike, run: int | None = None) -> Fragmentation | None:
    """Free bytes and largest free block after each event of an alloc/free trace with addresses."""
    events = frame_of(frames_of(log), "events")
    if events.empty:
        return None
    usable = events[events["action"].isin(["alloc", "free"]) & events["address"].notna()]
    usable = usable[usable["freed"].isna()]  # ESP-IDF dump records: no free times, so no timeline
    if usable.empty:
        return None
    runs = sorted({int(v) for v in usable["run_index"].dropna()})
    run_index = runs[0] if run is None else run
    rows = usable[usable["run_index"] == run_index]
    if not (rows["action"] == "free").any():
        return None
    records = []
    for row in rows.itertuples(index=False):
        address = _address(row.address)
        size = as_int(row.size_bytes)
        if address is None or (size is not None and not 0 <= address + size < ADDRESS_LIMIT):
            continue
        records.append((row.action, address, size, row))
    allocs = [(a, s) for action, a, s, _ in records if action == "alloc" and s]
    if not allocs:
        return None
    span_start = min(a for a, _ in allocs)
    span_end = max(a + s for a, s in allocs)
    tracker = _GapTracker(span_start, span_end)
    out = []
    for action, address, size, row in records:
        if action == "alloc" and size:
            tracker.allocate(address, size)
        elif action == "free":
            tracker.free(address)
        else:
            continue
        out.append(
            {
                "seq": as_int(row.seq),
                "time_s": row.time_s,
                "action": action,
                "live_bytes": tracker.live,
                "free_bytes": tracker.span - tracker.live,
                "largest_free_bytes": tracker.largest(),
                "line": as_int(row.line),
            }
        )
    frame = pd.DataFrame(out)
    if frame.empty:
        return None
    frame["time_s"] = frame["time_s"].astype("Float64")
    free = frame["free_bytes"].to_numpy(dtype=float)
    ratio = 1 - frame["largest_free_bytes"].to_numpy(dtype=float) / np.where(free > 0, free, np.nan)
    worst = None if np.isnan(ratio).all() else as_int(frame["seq"].iloc[int(np.nanargmax(ratio))])
    return Fragmentation(
        run_index=run_index,
        frame=frame,
        span_start=span_start,
        span_bytes=span_end - span_start,
        worst_seq=worst,
        lines=line_range(frame["line"]),
    )


def heap_snapshot(log: LogLike) -> HeapSnapshot | None:
    """Per-region free and largest free block from heap info tables (`arena` rows that carry both)."""
    arena = frame_of(frames_of(log), "arena")
    rows = arena[arena["free_bytes"].notna() & arena["largest_free_bytes"].notna() & arena["region"].notna()]
    if rows.empty:
        return None
    out = rows[["region", "capacity_bytes", "free_bytes", "largest_free_bytes", "line"]].reset_index(
        drop=True
    )
    return HeapSnapshot(out, line_range(out["line"]))


def _address(value: Any) -> int | None:
    text = as_str(value)
    if text is None:
        return None
    try:
        address = int(text, 16) if text.lower().startswith("0x") else int(text)
    except ValueError:
        return None
    return address if 0 <= address < ADDRESS_LIMIT else None


# Heap traces come from 32-bit MCUs and 64-bit user space: an address at or over 2**63 (a cut or spliced
# hex number) is no heap address, and spans and free bytes computed from it must fit int64.
ADDRESS_LIMIT = 2**63


@dataclass
class _GapTracker:
    """Live blocks inside a fixed span, with the largest free gap in O(log n) per event (lazy max-heap)."""

    start: int
    end: int
    live: int = 0
    blocks: dict[int, int] = field(default_factory=dict)  # address -> size
    starts: list[int] = field(default_factory=list)  # sorted addresses of live blocks
    gaps: Counter[tuple[int, int]] = field(default_factory=Counter)
    heap: list[tuple[int, int, int]] = field(default_factory=list)  # (-length, lo, hi)

    def __post_init__(self) -> None:
        self._add_gap(self.start, self.end)

    @property
    def span(self) -> int:
        return self.end - self.start

    def allocate(self, address: int, size: int) -> None:
        if address in self.blocks:  # allocated again without a free: the trace missed the free
            self.free(address)
        i = bisect.bisect_left(self.starts, address)
        lo = self._end_of(i - 1) if i > 0 else self.start
        hi = self.starts[i] if i < len(self.starts) else self.end
        self._remove_gap(lo, hi)
        self._add_gap(lo, address)
        self._add_gap(address + size, hi)
        self.starts.insert(i, address)
        self.blocks[address] = size
        self.live += size

    def free(self, address: int) -> None:
        size = self.blocks.pop(address, None)
        if size is None:
            return
        i = bisect.bisect_left(self.starts, address)
        del self.starts[i]
        lo = self._end_of(i - 1) if i > 0 else self.start
        hi = self.starts[i] if i < len(self.starts) else self.end
        self._remove_gap(lo, address)
        self._remove_gap(address + size, hi)
        self._add_gap(lo, hi)
        self.live -= size

    def largest(self) -> int:
        while self.heap:
            length, lo, hi = self.heap[0]
            if self.gaps.get((lo, hi), 0) > 0:
                return -length
            heapq.heappop(self.heap)
        return 0

    def _end_of(self, i: int) -> int:
        address = self.starts[i]
        return address + self.blocks[address]

    def _add_gap(self, lo: int, hi: int) -> None:
        self.gaps[(lo, hi)] += 1
        heapq.heappush(self.heap, (-max(hi - lo, 0), lo, hi))

    def _remove_gap(self, lo: int, hi: int) -> None:
        if self.gaps.get((lo, hi), 0) > 0:
            self.gaps[(lo, hi)] -= 1
            if not self.gaps[(lo, hi)]:
                del self.gaps[(lo, hi)]


# --------------------------------------------------------------------------- per-layer time


@dataclass(frozen=True)
class PerfTable:
    """Layers (or MCU ops) with time and read/write volume, sorted by the ranking measure."""

    frame: pd.DataFrame  # label, layer, op_type, name, time_us, rw_kb, line
    ranked_by: str  # "time_us" or "rw_kb"
    layers: int  # all layers with a figure, before top-N
    total_time_us: float | None
    total_rw_kb: float | None
    source: str  # "RKNN layer table" / "MCU ops" / ...
    lines: tuple[int, int] | None


def perf_table(log: LogLike, build: int | None = None) -> PerfTable | None:
    """Per-layer time and RW: the RKNN layer table, else MCU ops or per-layer reports with a time."""
    frames = frames_of(log)
    # Board-side eval_perf rows (`perf`) carry real times; the build-time layer table only RW (and
    # cycles; its Time(us) is 0 on a simulator build).
    for name, source in (("perf", "eval_perf table"), ("layers", "RKNN layer table")):
        layers = frame_of(frames, name)
        if not len(layers):
            continue
        builds = sorted({int(v) for v in layers["build_index"].dropna()})
        chosen = builds[-1] if build is None and builds else build
        rows = layers[layers["build_index"] == chosen] if chosen is not None else layers
        table = pd.DataFrame(
            {
                "layer": rows["layer_id"].array,
                "op_type": rows["op_type"].array,
                "name": rows["full_name"].array,
                "time_us": rows["time_us"].astype("Float64").array,
                "rw_kb": rows["rw_kb"].astype("Float64").array,
                "line": rows["line"].array,
            }
        )
        made = _ranked(table, source)
        if made is not None:
            return made
    ops = frame_of(frames, "ops")
    timed = ops[ops["time_us"].notna() | ops["ticks"].notna()]
    if len(timed):
        time = timed["time_us"].astype("Float64")
        source = "MCU ops (time_us)"
        if time.isna().all():
            time, source = timed["ticks"].astype("Float64"), "MCU ops (ticks)"
        table = pd.DataFrame(
            {
                "layer": timed["op_index"].array,
                "op_type": pd.array([None] * len(timed), dtype="string"),
                "name": timed["op_name"].array,
                "time_us": time.array,
                "rw_kb": pd.array([None] * len(timed), dtype="Float64"),
                "line": timed["line"].array,
            }
        )
        made = _ranked(table, source)
        if made is not None:
            return made
    mcu_layers = frame_of(frames, "mcu_layers")
    timed = mcu_layers[mcu_layers["time_us"].notna()]
    if len(timed):
        table = pd.DataFrame(
            {
                "layer": timed["layer_index"].array,
                "op_type": timed["op_type"].array,
                "name": timed["name"].array,
                "time_us": timed["time_us"].astype("Float64").array,
                "rw_kb": pd.array([None] * len(timed), dtype="Float64"),
                "line": timed["line"].array,
            }
        )
        return _ranked(table, "MCU per-layer report")
    return None


def _finite_sum(column: pd.Series) -> float:
    """The sum of a column's finite cells: a cell printed `nan` or `inf` is no figure to add."""
    values = pd.to_numeric(column, errors="coerce").astype("float64").to_numpy(na_value=np.nan)
    return float(values[np.isfinite(values)].sum())


def _ranked(table: pd.DataFrame, source: str) -> PerfTable | None:
    has_time = bool((table["time_us"].fillna(0) > 0).any())
    has_rw = bool((table["rw_kb"].fillna(0) > 0).any())
    if not has_time and not has_rw:
        return None
    ranked_by = "time_us" if has_time else "rw_kb"
    table = table[table[ranked_by].notna()].copy()
    table["label"] = [
        " ".join(
            p
            for p in (f"#{as_int(i)}" if as_int(i) is not None else "", as_str(t) or "", as_str(n) or "")
            if p
        )
        for i, t, n in zip(table["layer"], table["op_type"], table["name"], strict=True)
    ]
    table = table.sort_values([ranked_by, "line"], ascending=[False, True], kind="stable").reset_index(
        drop=True
    )
    total_time = _finite_sum(table["time_us"]) if has_time else None
    total_rw = _finite_sum(table["rw_kb"]) if has_rw else None
    return PerfTable(
        frame=table,
        ranked_by=ranked_by,
        layers=len(table),
        total_time_us=total_time,
        total_rw_kb=total_rw,
        source=source,
        lines=line_range(table["line"]),
    )
