"""Memory over operators, and the peak, derived from the MCU frames.

For each run the `curve` frame gets one row per step (an op, a layer, or a heap event), built from the
first of these sources that the run has:

1. `heap-trace`: the per-op heap trace's `total=` after each op (`ops.total_bytes`). The baseline is the
   trace's baseline line, else the first op's total minus its delta.
2. `live buffers`: TFLM `PrintMemoryPlan` buffers and ST C-arrays (placed on C-layers by the parser):
   live(t) = sum of size_bytes over buffers with first_op <= t <= last_op, for every t from the smallest
   first_op to the largest last_op. Op names come from the run's profiler events or op list (TFLM) or
   its C-layers (ST), by index.
3. `per-layer working set`: NNoM in + out + buf per layer of the compile table; Vela `SRAM Usage` per
   scheduled op; ST C-layer I/O/scratch sum (only when no C-arrays placed it).
4. `event replay`: ESP-IDF host log and Mbed trace events in order; an allocation adds its size, a free
   removes the size of the block allocated at that address (a free of an address the trace never saw
   allocated is counted in `unmatched_frees` and changes nothing). The steps are named after the last
   application phase marker, if any.

`peak_bytes` is the curve's maximum and the first step that reaches it is the peak op; a run without a
curve takes the tool's own headline figure (`mcu_runs.reported_*`: arena total, `ram (total)`, `Total
SRAM used`, `PEAK_MEM`, ...) and says so in `derivation`. `over_budget_bytes` = peak − budget when the
log states a budget (else the shortfall an allocation error printed), `headroom_bytes` = budget − peak.

Event statistics are filled for every run with events: for ESP-IDF `heap_trace_dump` records (free
times are not logged, so there is no curve) freed records count as freed; the leak is what remains, to
compare with the leak report the trace printed (`reported_leak_*`). The peak of a dump is a lower
bound, max(bytes never freed, largest record), and says so in `derivation`.
"""

from __future__ import annotations

from typing import Any, cast

import numpy as np
import pandas as pd

from logscope.frames import build_frame
from logscope.model import ParsedLog

_CURVE_COLUMNS = ("run_index", "step", "op_index", "op_name", "op_type", "live_bytes", "line")


def add_mcu_memory(log: ParsedLog) -> None:
    """Fill `curve`, `mcu_memory` and the replay columns of `events` for an MCU log."""
    frames = log.frames
    runs = frames["mcu_runs"]
    events, event_stats = replay_events(frames["events"])
    frames["events"] = events
    ops = frames["ops"]
    heap_mask = (ops["source"] == "heap-trace") & ops["total_bytes"].notna()
    heap_curve, heap_summary = _heap_curves(ops[heap_mask], runs)
    curves: list[pd.DataFrame] = [heap_curve]
    other_ops = ops[~heap_mask]
    by_run = {
        name: {key: group for key, group in frame.groupby("run_index", sort=False)}
        for name, frame in (
            ("ops", other_ops),
            ("buffers", frames["buffers"]),
            ("layers", frames["mcu_layers"]),
            ("events", events),
        )
    }
    memory: list[dict[str, Any]] = []
    for run in cast(list[dict[str, Any]], runs.to_dict("records")):
        index = run["run_index"]
        row: dict[str, Any] = {"run_index": index}
        if index in heap_summary:
            row |= heap_summary[index]
        else:
            parts = {name: groups.get(index) for name, groups in by_run.items()}
            curve, derivation = _curve(index, parts)
            if curve is not None and len(curve):
                curves.append(curve)
                row |= _peak(curve) | {
                    "derivation": derivation,
                    "final_bytes": _int(curve["live_bytes"].iloc[-1]),
                    "curve_steps": len(curve),
                }
        if row.get("peak_bytes") is None and by_run["events"].get(index) is not None:
            row |= _dump_peak(by_run["events"][index])
        if row.get("peak_bytes") is None and _present(run.get("reported_bytes")):
            row |= {
                "derivation": f"reported: {run['reported_label']}",
                "peak_bytes": _int(run["reported_bytes"]),
                "peak_line": _int(run["reported_line"]),
            }
        if _present(run.get("baseline_bytes")):
            row["baseline_bytes"] = _int(run["baseline_bytes"])
        row |= event_stats.get(index, {})
        _budget(row, run)
        memory.append(row)
    filled = [curve for curve in curves if len(curve)]
    frames["curve"] = pd.concat(filled, ignore_index=True) if len(filled) > 1 else (filled or curves)[0]
    frames["mcu_memory"] = build_frame("mcu_memory", memory)


# ---------------------------------------------------------------------------------- heap trace
def _heap_curves(heap: pd.DataFrame, runs: pd.DataFrame) -> tuple[pd.DataFrame, dict[Any, dict[str, Any]]]:
    """Curves and summaries of every per-op heap trace run at once (a trace can hold a million ops)."""
    if not len(heap):
        return build_frame("curve", []), {}
    curve = pd.DataFrame(
        {
            "run_index": heap["run_index"].array,
            "step": pd.array(heap.groupby("run_index", sort=False).cumcount().to_numpy(), dtype="Int64"),
            "op_index": heap["op_index"].array,
            "op_name": heap["op_name"].array,
            "op_type": pd.array([None] * len(heap), dtype="string"),
            "live_bytes": heap["total_bytes"].array,
            "line": heap["line"].array,
        }
    ).reset_index(drop=True)
    groups = curve.groupby("run_index", sort=False)
    peaks = curve.loc[groups["live_bytes"].idxmax()]
    firsts = heap.groupby("run_index", sort=False).head(1).set_index("run_index")
    lasts = groups.tail(1).set_index("run_index")
    steps = groups.size()
    stated = runs.set_index("run_index")["baseline_bytes"] if len(runs) else pd.Series(dtype="Int64")
    summary: dict[Any, dict[str, Any]] = {}
    for peak in peaks.to_dict("records"):
        index = peak["run_index"]
        first = firsts.loc[index]
        baseline = _int(stated.get(index)) if index in stated.index else None
        derivation = "heap trace: total after each op"
        if baseline is None and _present(first["delta_bytes"]):
            baseline = _int(first["total_bytes"] - first["delta_bytes"])
            derivation += "; baseline = first total - first delta"
        row: dict[str, Any] = {
            "derivation": derivation,
            "peak_bytes": _int(peak["live_bytes"]),
            "peak_op_index": _int(peak["op_index"]),
            "peak_op_name": _str(peak["op_name"]),
            "peak_line": _int(peak["line"]),
            "baseline_bytes": baseline,
            "final_bytes": _int(lasts.loc[index, "live_bytes"]),
            "curve_steps": int(steps.loc[index]),
        }
        if baseline is not None and row["peak_bytes"] is not None and baseline > row["peak_bytes"]:
            row.update(peak_bytes=baseline, peak_op_index=None, peak_op_name=None, peak_line=None)
            row["derivation"] += "; no op exceeds the baseline"
        summary[index] = row
    return curve, summary


# ---------------------------------------------------------------------------------- other curves
def _curve(index: Any, parts: dict[str, pd.DataFrame | None]) -> tuple[pd.DataFrame | None, str | None]:
    buffers, layers, events = parts["buffers"], parts["layers"], parts["events"]
    if buffers is not None:
        placed = buffers[buffers["first_op"].notna() & buffers["last_op"].notna()]
        if len(placed):
            return _buffer_curve(
                index, placed, parts["ops"], layers
            ), "live buffers: sum of size over first_op..last_op"
    if layers is not None:
        sized = layers[layers["working_set_bytes"].notna()]
        if len(sized):
            source = str(sized["source"].iloc[0])
            sized = sized[sized["source"] == source]
            how = {
                "nnom-compile": "per-layer working set: in + out + buf (NNoM compile table)",
                "vela-per-layer": "per-op SRAM Usage (Vela per-layer table)",
                "st-c-layer": "per-layer working set: activations-domain I/O and scratch (ST C-layers)",
            }.get(source, f"per-layer working set ({source})")
            return _table_curve(
                index,
                sized["layer_index"],
                sized["name"],
                sized["op_type"],
                sized["working_set_bytes"],
                sized["line"],
            ), how
    if events is not None:
        replayed = events[events["live_bytes"].notna()]
        if len(replayed):
            return _table_curve(
                index,
                pd.Series([None] * len(replayed), dtype="Int64"),
                replayed["phase"],
                None,
                replayed["live_bytes"],
                replayed["line"],
            ), "event replay: alloc adds, free removes"
    return None, None


def _buffer_curve(
    index: Any, buffers: pd.DataFrame, ops: pd.DataFrame | None, layers: pd.DataFrame | None
) -> pd.DataFrame:
    first = buffers["first_op"].to_numpy(dtype=np.int64)
    last = buffers["last_op"].to_numpy(dtype=np.int64)
    size = buffers["size_bytes"].fillna(0).to_numpy(dtype=np.int64)
    lo, hi = int(first.min()), int(max(last.max(), first.max()))
    diff = np.zeros(hi - lo + 2, dtype=np.int64)
    np.add.at(diff, first - lo, size)
    np.add.at(diff, last - lo + 1, -size)
    live = np.cumsum(diff)[:-1]
    steps = np.arange(lo, hi + 1)
    names: dict[int, tuple[Any, Any, Any]] = {}  # op index -> (name, type, line)
    if ops is not None and len(ops):
        for row in ops.dropna(subset=["op_index"]).itertuples(index=False):
            names.setdefault(_key(row.op_index), (row.op_name, None, row.line))
    if layers is not None and len(layers):
        for row in layers[layers["source"] == "st-c-layer"].itertuples(index=False):
            if _present(row.layer_index):
                names.setdefault(_key(row.layer_index), (row.name, row.op_type, row.line))
    # Without a name, a step points at the largest buffer first used there (the allocation it makes).
    starts = buffers.sort_values("size_bytes", ascending=False).drop_duplicates("first_op")
    start_line = {_key(r.first_op): r.line for r in starts.itertuples(index=False)}
    rows = [
        {
            "run_index": index,
            "step": int(step - lo),
            "op_index": int(step),
            "op_name": names.get(int(step), (None, None, None))[0],
            "op_type": names.get(int(step), (None, None, None))[1],
            "live_bytes": int(value),
            "line": names.get(int(step), (None, None, start_line.get(int(step))))[2],
        }
        for step, value in zip(steps, live, strict=True)
    ]
    return build_frame("curve", rows)


def _table_curve(
    index: Any,
    op_index: pd.Series,
    names: pd.Series,
    types: pd.Series | None,
    live: pd.Series,
    line: pd.Series,
) -> pd.DataFrame:
    count = len(live)
    rows = [
        {
            "run_index": index,
            "step": i,
            "op_index": _int(op_index.iloc[i]),
            "op_name": _str(names.iloc[i]),
            "op_type": _str(types.iloc[i]) if types is not None else None,
            "live_bytes": _int(live.iloc[i]),
            "line": _int(line.iloc[i]),
        }
        for i in range(count)
    ]
    return build_frame("curve", rows)


def _peak(curve: pd.DataFrame) -> dict[str, Any]:
    position = int(np.argmax(curve["live_bytes"].fillna(-1).to_numpy(dtype=np.int64)))
    peak = curve.iloc[position]
    return {
        "peak_bytes": _int(peak["live_bytes"]),
        "peak_op_index": _int(peak["op_index"]),
        "peak_op_name": _str(peak["op_name"]),
        "peak_op_type": _str(peak["op_type"]),
        "peak_line": _int(peak["line"]),
    }


# ---------------------------------------------------------------------------------- events
def _dump_peak(events: pd.DataFrame) -> dict[str, Any]:
    """A lower bound of the peak from a `heap_trace_dump` (records carry no free times, so no curve).

    The blocks never freed were all live at the end, and the largest record was live when allocated:
    peak >= max(sum of unfreed records, largest record). All records at once is the upper bound.
    """
    dump = events[(events["source"] == "esp-idf-heap-trace-dump") & events["size_bytes"].notna()]
    if not len(dump):
        return {}
    sizes = dump["size_bytes"].astype("int64")
    alive = int(sizes[~dump["freed"].fillna(False).astype(bool)].sum())
    largest = int(sizes.max())
    position = int(np.argmax(sizes.to_numpy()))
    line = _int(dump["line"].iloc[-1] if alive >= largest else dump["line"].iloc[position])
    return {
        "derivation": f"heap trace dump, no free times: lower bound = max(bytes never freed {alive}, largest "
        f"record {largest}); upper bound {int(sizes.sum())} (every record live at once)",
        "peak_bytes": max(alive, largest),
        "peak_line": line,
    }


def replay_events(events: pd.DataFrame) -> tuple[pd.DataFrame, dict[Any, dict[str, Any]]]:
    """Replay alloc/free events per run: `freed_bytes` per free, `live_bytes` after each event, and totals.

    `leaked` rows (a leak report's listing of blocks still allocated) are not events and are skipped.
    ESP-IDF dump records carry `freed` instead of a free event: they give totals but no live curve.
    """
    if not len(events):
        return events, {}
    records = cast(list[dict[str, Any]], events.to_dict("records"))
    stats: dict[Any, dict[str, Any]] = {}
    live: dict[Any, int] = {}
    blocks: dict[Any, dict[str, int]] = {}  # run -> address -> size of the block allocated there
    dumped: dict[Any, list[int]] = {}  # run -> sizes of dump records not freed
    for event in records:
        index = event["run_index"]
        s = stats.setdefault(
            index,
            {"alloc_count": 0, "free_count": 0, "alloc_bytes": 0, "free_bytes": 0, "unmatched_frees": 0},
        )
        action, address, size = event["action"], event["address"], _int(event["size_bytes"])
        freed = event.get("freed")
        if action == "alloc" and size is not None:
            s["alloc_count"] += 1
            s["alloc_bytes"] += size
            if _present(freed):  # a dump record: freed (or not) at a time the dump does not give
                if bool(freed):
                    s["free_count"] += 1
                    s["free_bytes"] += size
                else:
                    dumped.setdefault(index, []).append(size)
                continue
            run_blocks = blocks.setdefault(index, {})
            # An address allocated twice without a free in between: the trace missed the free.
            live[index] = live.get(index, 0) - run_blocks.get(address, 0) + size
            run_blocks[address] = size
            event["live_bytes"] = live[index]
        elif action == "free":
            released = blocks.setdefault(index, {}).pop(address, None)
            if released is None:
                s["unmatched_frees"] += 1
            else:
                s["free_count"] += 1
                s["free_bytes"] += released
                live[index] = live.get(index, 0) - released
                event["freed_bytes"] = released
            event["live_bytes"] = live.get(index, 0)
    for index, s in stats.items():
        kept = list(blocks.get(index, {}).values()) + dumped.get(index, [])
        s["leak_bytes"] = sum(kept)
        s["leak_blocks"] = len(kept)
    return build_frame("events", records), stats


# ---------------------------------------------------------------------------------- helpers
def _budget(row: dict[str, Any], run: dict[str, Any]) -> None:
    budget = _int(run.get("budget_bytes")) if _present(run.get("budget_bytes")) else None
    peak = row.get("peak_bytes")
    row["budget_bytes"] = budget
    if budget is not None and peak is not None:
        row["over_budget_bytes"] = max(0, peak - budget)
        row["headroom_bytes"] = max(0, budget - peak)
    elif _present(run.get("over_budget_bytes")):
        row["over_budget_bytes"] = _int(run["over_budget_bytes"])


def _present(value: Any) -> bool:
    return value is not None and value is not pd.NA and not (isinstance(value, float) and np.isnan(value))


def _key(value: Any) -> int:
    return int(value)


def _int(value: Any) -> int | None:
    return int(value) if _present(value) else None


def _str(value: Any) -> str | None:
    return str(value) if _present(value) else None
