"""`check` for MCU traces: a board's (or the TFLM Python interpreter's) output beside a .tflite model.

Compared, each with the log's line and a cause computed from the evidence:
- RecordingMicroAllocator figures (head, tail, total, each tail category and its count) against the
  TFLM arena prediction (`logscope.reference.tflm`). The counts are the strongest evidence that a trace
  and a model belong together: TFLM allocates one TfLiteEvalTensor per tensor of the model and one
  NodeAndRegistration per operator, whatever the board.
- A per-op heap trace (`Op[i] NAME: delta=…, total=…`) against the model's per-op change in live
  bytes (the op's outputs allocated, the inputs it reads last freed): an op whose delta the model does
  not explain is named with the difference.
- Profiler or op-list operator types against the model's operator list.
- The arena size the log states against what is needed.

The rows go into `check_summary` (the frame the RKNN check fills too) and reach the rules engine, where
REF004 judges a trace that does not match its model and REF005 a stated arena below the need.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from logscope.model import ParsedLog
from logscope.reference.errors import ReferenceOptionError
from logscope.reference.frames import build_reference_frame, frame_records
from logscope.reference.tflite_loader import TfliteModel
from logscope.reference.tflm import TAIL_PROFILES, TflmOptions, TflmPrediction, predict_arena
from logscope.reference.tflm_items import (
    CONSTANT_DATA,
    EVAL_COUNT,
    HEAD,
    NODE_COUNT,
    OP_DELTA_PREFIX,
    OP_LIST,
    PLAN_BUFFERS,
    PLAN_OFFSETS,
    STATED_ARENA,
    TAIL,
    TOTAL,
    TRACE_OP_TYPES,
    TRACE_OPS,
)

SCHEMA_VERSION = 1

# The TFLM benchmarking tool's `[[ Table ]]: Arena` / `Allocations` rows name what RecordingMicroAllocator
# prints under other names.
_CATEGORY_ALIASES = {
    "arena nonpersistent": "arena head",
    "arena persistent": "arena tail",
    "Eval tensor data": "TfLiteEvalTensor data",
    "Persistent tensor data": "Persistent TfLiteTensor data",
    "Persistent quantization data": "Persistent TfLiteTensor quantization data",
    "Node and registration array": "NodeAndRegistration struct",
}

TAIL_CATEGORIES = {
    "TfLiteEvalTensor data": ("TfLiteEvalTensor data",),
    "Persistent TfLiteTensor data": ("persistent TfLiteTensor data",),
    "Persistent TfLiteTensor quantization data": ("persistent TfLiteTensor quantization data",),
    "NodeAndRegistration struct": ("NodeAndRegistration structs",),
    "Persistent buffer data": ("kernel op data", "kernel per-channel arrays", "interpreter tensor arrays"),
}

# Profiler tags name kernels as TFLM registers them; op-list and heap traces often use Keras-style names.
_ALIASES = {
    "CONV2D": "CONV_2D",
    "DEPTHWISECONV2D": "DEPTHWISE_CONV_2D",
    "DENSE": "FULLY_CONNECTED",
    "MAXPOOL": "MAX_POOL_2D",
    "MAXPOOLING2D": "MAX_POOL_2D",
    "AVGPOOL": "AVERAGE_POOL_2D",
    "AVERAGEPOOLING2D": "AVERAGE_POOL_2D",
    "CONCAT": "CONCATENATION",
}


@dataclass
class McuCheckResult:
    """The rows of an MCU check (the `check_summary` schema), the prediction they compare with, and the
    trace's own memory curve (heap-trace totals per op) for the overlay plot."""

    log_source: str
    model_source: str
    prediction: TflmPrediction
    rows: list[dict[str, Any]]
    trace_curve: list[tuple[int, int]]
    notes: list[str] = field(default_factory=list)

    @property
    def frames(self) -> dict[str, pd.DataFrame]:
        curve = [
            {
                "source": "reference",
                "step": r["op_index"],
                "op": r["op"],
                "high_water_bytes": r["high_water_bytes"],
            }
            for r in self.prediction.op_rows
        ] + [{"source": "log", "step": s, "op": None, "high_water_bytes": v} for s, v in self.trace_curve]
        return {
            "check_summary": build_reference_frame("check_summary", self.rows),
            "check_curve": build_reference_frame("check_curve", curve),
        }

    def attach_to(self, log: ParsedLog) -> None:
        log.frames.update(self.frames)

    def summary(self) -> dict[str, Any]:
        return {
            "schema_version": SCHEMA_VERSION,
            "log": self.log_source,
            "model": self.model_source,
            "runtime": "tflm",
            "arch": self.prediction.options.arch,
            "kernels": self.prediction.options.kernels,
            "summary": frame_records(self.frames["check_summary"]),
            "prediction": {
                "tensor_arena_bytes": self.prediction.total,
                "head_bytes": self.prediction.head,
                "tail_bytes": self.prediction.tail,
                "peak_op": self.prediction.peak_op,
            },
            "curves": {
                "reference": [r["high_water_bytes"] for r in self.prediction.op_rows],
                "log": [v for _, v in self.trace_curve],
            },
            "notes": list(self.notes),
        }


def _row(item: str, log_value: int | None, ref: int | None, cause: str, line: int | None) -> dict[str, Any]:
    diff = None if log_value is None or ref is None else log_value - ref
    ratio = None if diff is None or not ref else round(log_value / ref, 4)  # type: ignore[operator]
    return {
        "item": item,
        "log_value": log_value,
        "reference_value": ref,
        "difference": diff,
        "ratio": ratio,
        "likely_cause": cause,
        "log_line": line,
    }


def _int(v: Any) -> int | None:
    return None if v is None or pd.isna(v) else int(v)


def infer_arch(log: ParsedLog) -> str | None:
    """x86_64 or arm32 from the printed TfLiteEvalTensor size (24 B or 12 B per allocation)."""
    arena = log.frames["arena"]
    rows = arena[arena["category"].isin(["TfLiteEvalTensor data", "Eval tensor data"])]
    for r in rows.itertuples(index=False):
        req, count = _int(r.requested_bytes), _int(r.count)
        if req and count:
            per = req // count
            for name, profile in TAIL_PROFILES.items():
                if profile.eval_tensor == per:
                    return name
    return None


def check_trace_against_tflite(
    log: ParsedLog, model: TfliteModel, options: TflmOptions | None = None, *, arch_given: bool = False
) -> McuCheckResult:
    """Predict `model`'s arena (arch from the trace's printed struct sizes unless `arch_given`) and compare
    every figure the trace holds. An RKNN log is refused (`ReferenceOptionError`, exit 2 in the CLI)."""
    if not log.kind.startswith("mcu"):
        raise ReferenceOptionError(
            f"{log.source} is a {log.kind} log: --model MODEL.tflite checks MCU traces (TFLM allocator "
            "printouts, per-op heap traces, profiler op lists); check an RKNN log with --onnx"
        )
    notes: list[str] = []
    options = options or TflmOptions()
    found = infer_arch(log)
    if not arch_given and found and found != options.arch:
        options = TflmOptions(arch=found, kernels=options.kernels, margin=options.margin)
    if found:
        notes.append(
            f"arch {options.arch}" + (" from the printed TfLiteEvalTensor size" if not arch_given else "")
        )
    pred = predict_arena(model, options)
    rows: list[dict[str, Any]] = []
    rows += _allocator_rows(log, pred, model)
    curve_rows, curve = _heap_trace_rows(log, pred, model)
    rows += curve_rows
    rows += _op_list_rows(log, model)
    rows += _memory_plan_rows(log, pred)
    rows += _stated_arena_rows(log, pred)
    if not rows:
        notes.append(
            "the log holds no allocator printout, heap trace, profiler op list or arena size: "
            "nothing to compare"
        )
    notes.extend(pred.notes)
    return McuCheckResult(log.source, model.source, pred, rows, curve, notes)


def _allocator_rows(log: ParsedLog, pred: TflmPrediction, model: TfliteModel) -> list[dict[str, Any]]:
    arena = log.frames["arena"]
    arena = arena[arena["source"].isin(["tflm-allocator", "tflm-benchmark"])]
    if arena.empty:
        return []
    run = arena["run_index"].iloc[-1]
    arena = arena[arena["run_index"] == run]
    by_cat = {
        _CATEGORY_ALIASES.get(str(r.category), str(r.category)): r for r in arena.itertuples(index=False)
    }
    rows = []
    data = by_cat.get("total data buffer size")
    if data is not None and model.file_bytes:
        # The benchmark tool's "Total data buffer size" sums every buffer of the file (metadata too).
        log_bytes = _int(data.used_bytes)
        diff = (log_bytes or 0) - model.buffer_bytes
        cause = (
            "matches"
            if diff == 0
            else f"{diff:+d} B: another model, or buffers (metadata) another converter writes"
        )
        rows.append(_row(CONSTANT_DATA, log_bytes, model.buffer_bytes, cause, _int(data.line)))
    n_tensors = sum(len(s.tensors) for s in model.subgraphs)
    n_ops = sum(len(s.operators) for s in model.subgraphs)
    counts_ok = True
    # TFLM allocates one eval tensor per tensor and one node struct per operator on every board.
    for category, item, expected, what in (
        ("TfLiteEvalTensor data", EVAL_COUNT, n_tensors, "tensor"),
        ("NodeAndRegistration struct", NODE_COUNT, n_ops, "operator"),
    ):
        r = by_cat.get(category)
        if r is None or _int(r.count) is None:
            continue
        ok = _int(r.count) == expected
        counts_ok &= ok
        cause = "matches" if ok else f"the trace was made with another model: TFLM allocates one per {what}"
        rows.append(_row(item, _int(r.count), expected, cause, _int(r.line)))
    head = by_cat.get("arena head")
    if head is not None:
        rows.append(
            _row(
                HEAD,
                _int(head.used_bytes),
                pred.head,
                _head_cause(_int(head.used_bytes), pred, model, counts_ok),
                _int(head.line),
            )
        )
    items = {i.component: i for i in pred.tail_items}
    for category, parts in TAIL_CATEGORIES.items():
        r = by_cat.get(category)
        if r is None:
            continue
        ref = sum(items[p].bytes for p in parts if p in items)
        used = _int(r.used_bytes)
        if used == ref:
            cause = "reproduced to the byte"
        elif not counts_ok:
            cause = "the tensor and operator counts differ too: another model"
        else:
            cause = _tail_cause(category, used, ref, pred)
        rows.append(_row(f"tail: {category}", used, ref, cause, _int(r.line)))
    tail = by_cat.get("arena tail")
    if tail is not None:
        used = _int(tail.used_bytes)
        cause = (
            "reproduced to the byte"
            if used == pred.tail
            else f"{(used or 0) - pred.tail:+d} B: see the tail rows; untracked parts (allocator objects "
            f"{items['allocator objects'].bytes} B, builtin option structs) are {pred.options.arch} figures"
        )
        rows.append(_row(TAIL, used, pred.tail, cause, _int(tail.line)))
    total = by_cat.get("arena total")
    if total is not None:
        used = _int(total.used_bytes)
        cause = "reproduced to the byte" if used == pred.total else "head and tail differences added"
        rows.append(_row(TOTAL, used, pred.total, cause, _int(total.line)))
    return rows


def _head_cause(log_head: int | None, pred: TflmPrediction, model: TfliteModel, counts_ok: bool) -> str:
    if log_head is None:
        return ""
    if log_head == pred.head:
        return "reproduced to the byte"
    if not counts_ok:
        return "the tensor and operator counts differ too: another model"
    if pred.options.kernels == "reference":
        alt = predict_arena(model, TflmOptions(pred.options.arch, "cmsis-nn", pred.options.margin))
        if alt.head == log_head:
            return "reproduced with CMSIS-NN scratch buffers (--kernels cmsis-nn)"
    diff = log_head - pred.head
    if diff > 0:
        return (
            f"{diff:+d} B: scratch buffers the kernels of this build request (CMSIS-NN or another optimized "
            "kernel set), or another input size"
        )
    return f"{diff:+d} B: the build planned less than this model needs: another input size or model"


def _tail_cause(category: str, used: int | None, ref: int, pred: TflmPrediction) -> str:
    if used is None:
        return ""
    if category == "Persistent buffer data":
        return (
            f"{used - ref:+d} B: kernel op data differs between kernel sets and builds "
            f"(the table is {pred.options.arch}, {pred.options.kernels} kernels)"
        )
    return f"{used - ref:+d} B: struct sizes of another build (the prediction uses {pred.options.arch})"


def _norm(name: str) -> str:
    key = "".join(ch for ch in name.upper() if ch.isalnum() or ch == "_")
    flat = key.replace("_", "")
    return _ALIASES.get(flat, key)


def _heap_trace_rows(
    log: ParsedLog, pred: TflmPrediction, model: TfliteModel
) -> tuple[list[dict[str, Any]], list[tuple[int, int]]]:
    ops = log.frames["ops"]
    ops = ops[ops["source"] == "heap-trace"]
    if ops.empty:
        return [], []
    run = ops["run_index"].iloc[0]
    ops = ops[ops["run_index"] == run].reset_index(drop=True)
    sg = model.main
    rows = []
    n_model = len(sg.operators)
    first_line = _int(ops["line"].iloc[0])
    rows.append(
        _row(
            TRACE_OPS,
            len(ops),
            n_model,
            "matches" if len(ops) == n_model else "the trace runs another number of operators: another model",
            first_line,
        )
    )
    # The model's change in live bytes per op: the op's outputs allocated, the tensors whose last reader
    # ran before it freed (no reuse: a tensor lives from its producer to its last reader).
    live = [_live_at(pred, 0)] + [_live_at(pred, i + 1) for i in range(n_model)]
    curve = [
        (int(i), int(t)) for i, t in zip(ops["op_index"], ops["total_bytes"], strict=True) if not pd.isna(t)
    ]
    if len(ops) != n_model:
        return rows, curve  # per-op deltas of another graph explain nothing
    # A trace op named as a TFLite builtin must be the model's op at that position (Keras-style names
    # are mapped; a name that is no builtin, e.g. a layer name, is not compared).
    builtins = _builtin_names()
    named = [(k, _norm(str(n))) for k, n in enumerate(ops["op_name"])]
    differ = [(k, n) for k, n in named if n in builtins and n != sg.operators[k].opcode]
    if differ:
        text = ", ".join(f"op {k} {n} vs {sg.operators[k].opcode}" for k, n in differ[:4])
        rows.append(
            _row(TRACE_OP_TYPES, len(ops) - len(differ), n_model, f"another graph: {text}", first_line)
        )
        return rows, curve
    expected = [live[k + 1] - live[k] for k in range(n_model)]
    excess = [
        None if d is None else d - e
        for d, e in zip((_int(v) for v in ops["delta_bytes"]), expected, strict=True)
    ]
    for k, r in enumerate(ops.itertuples(index=False)):
        extra = excess[k]
        if extra is None or extra == 0:
            continue
        delta = _int(r.delta_bytes)
        cause = _delta_cause(extra, excess[k + 1 :], excess[:k])
        name = f"{OP_DELTA_PREFIX}{k} {r.op_name} delta (model {sg.operators[k].opcode})"
        rows.append(_row(name, delta, expected[k], cause, _int(r.line)))
    return rows, curve


def _live_at(pred: TflmPrediction, scope: int) -> int:
    """Bytes of the model's tensors live in an allocation scope (0: the inputs before the first op;
    i + 1: op i, its inputs and outputs both present), at the sizes the tensors need."""
    return sum(b.bytes for b in pred.buffers if b.kind == "tensor" and b.first <= scope <= b.last)


def _builtin_names() -> frozenset[str]:
    from tflite.BuiltinOperator import BuiltinOperator

    return frozenset(k for k in vars(BuiltinOperator) if not k.startswith("_"))


def _delta_cause(extra: int, later: list[int | None], earlier: list[int | None]) -> str:
    """Why an op's delta exceeds (or falls short of) the model's, from the excesses around it."""
    given_back = (
        next((i for i, v in enumerate(later) if v is not None and v <= -extra), None) if extra > 0 else None
    )
    if extra > 0 and given_back == 0:
        return f"{extra:+d} B over the model, freed by the next op: a scratch buffer"
    if extra > 0 and given_back is None:
        return f"{extra:+d} B over the model, never given back: a leak or a copy kept alive"
    if extra > 0 and given_back is not None:
        return f"{extra:+d} B over the model, given back {given_back + 1} ops later: a copy held across ops"
    taken = next((j for j in range(len(earlier) - 1, -1, -1) if (earlier[j] or 0) >= -extra), None)
    if taken is not None:
        return f"{extra:+d} B under the model: gives back what op {taken} took over the model"
    return f"{extra:+d} B under the model: a buffer freed early or in place, or a smaller tensor"


def _op_list_rows(log: ParsedLog, model: TfliteModel) -> list[dict[str, Any]]:
    model_ops = Counter(op.opcode for op in model.main.operators)
    ops = log.frames["ops"]
    listed = ops[ops["source"] != "heap-trace"]
    profile = log.frames["profile"]
    if not listed.empty:
        listed = listed[listed["run_index"] == listed["run_index"].iloc[0]]
        names = [str(v) for v in listed["op_name"].dropna()]
        line = _int(listed["line"].iloc[0])
        trace = Counter(_norm(n) for n in names)
        mismatch = {
            k: (trace.get(k, 0), model_ops.get(k, 0))
            for k in set(trace) | set(model_ops)
            if trace.get(k, 0) != model_ops.get(k, 0)
        }
        cause = (
            "matches"
            if not mismatch
            else "differs: "
            + ", ".join(f"{k} {a} in the log, {b} in the model" for k, (a, b) in sorted(mismatch.items()))
        )
        if not mismatch:  # the same operators: in the same order?
            order = [op.opcode for op in model.main.operators]
            moved = [(k, _norm(n), order[k]) for k, n in enumerate(names) if _norm(n) != order[k]]
            if moved:
                cause = "the same operators in another order: " + ", ".join(
                    f"op {k} {a} vs {b}" for k, a, b in moved[:4]
                )
        return [_row(OP_LIST, len(names), sum(model_ops.values()), cause, line)]
    if not profile.empty:
        tags = profile[~profile["is_total"].fillna(False).astype(bool)]
        names = sorted({_norm(str(v)) for v in tags["tag"].dropna()})
        missing = sorted(set(names) - set(model_ops))
        absent = sorted(set(model_ops) - set(names))
        line = _int(tags["line"].iloc[0]) if len(tags) else None
        if not missing and not absent:
            cause = "the same operator types"
        else:
            cause = "; ".join(
                p
                for p in (
                    f"profiled but not in the model: {', '.join(missing)}" if missing else "",
                    f"in the model but not profiled: {', '.join(absent)}" if absent else "",
                )
                if p
            )
        return [_row(OP_LIST, len(names), len(model_ops), cause, line)]
    return []


def _memory_plan_rows(log: ParsedLog, pred: TflmPrediction) -> list[dict[str, Any]]:
    """`GreedyMemoryPlanner::PrintMemoryPlan` rows (size, offset, first/last use) against the predicted
    plan. Buffer ids follow the model's tensor order, so a row is matched by size and lifetime; TFLM
    before 2022 numbered scopes from the first op (0) where it now keeps 0 for the inputs, so both
    numberings are tried and the one matching more rows is kept."""
    frame = log.frames["buffers"]
    frame = frame[frame["source"] == "tflm-planner"]
    if frame.empty:
        return []
    frame = frame[frame["run_index"] == frame["run_index"].iloc[0]]
    rows = [
        (
            _int(r.buffer_id),
            _int(r.size_bytes),
            _int(r.offset_bytes),
            _int(r.first_op),
            _int(r.last_op),
            _int(r.line),
        )
        for r in frame.itertuples(index=False)
    ]
    best: tuple[int, list[tuple[Any, ...]]] | None = None
    for shift in (0, 1):
        planned: dict[tuple[int | None, ...], list[int]] = {}
        for b, off in zip(pred.buffers, pred.offsets, strict=True):
            planned.setdefault((b.size, max(b.first - shift, 0), b.last - shift), []).append(off)
        found = [(row, planned.get((row[1], row[3], row[4]))) for row in rows]
        hits = sum(1 for _, offs in found if offs)
        if best is None or hits > best[0]:
            best = (hits, found)
    assert best is not None
    hits, found = best
    line = rows[0][5]
    missing = [row for row, offs in found if not offs]
    cause = (
        "matches"
        if not missing
        else f"{len(missing)} buffer(s) of the log have no buffer of that size and lifetime in the model "
        f"(ids {', '.join(str(r[0]) for r in missing[:6])}): another model or input size"
    )
    out = [_row(PLAN_BUFFERS, len(rows), hits, cause, line)]
    compared = [(row, offs) for row, offs in found if offs]
    moved = [(row, offs) for row, offs in compared if row[2] not in offs]
    if compared:
        text = (
            f"all {len(compared)} at the predicted offsets"
            if not moved
            else f"{len(moved)} at other offsets: "
            + ", ".join(f"id {r[0]} at {r[2]} vs {offs[0]}" for r, offs in moved[:4])
        )
        out.append(_row(PLAN_OFFSETS, len(compared) - len(moved), len(compared), text, line))
    return out


def _stated_arena_rows(log: ParsedLog, pred: TflmPrediction) -> list[dict[str, Any]]:
    runs = log.frames["mcu_runs"]
    rows = []
    for r in runs.itertuples(index=False):
        budget = _int(r.budget_bytes)
        if budget is None:
            continue
        diff = budget - pred.total
        cause = (
            f"{diff} B of headroom"
            if diff >= 0
            else f"{-diff} B short: AllocateTensors() fails with this arena"
        )
        rows.append(_row(STATED_ARENA, budget, pred.total, cause, _int(r.budget_line)))
    return rows
