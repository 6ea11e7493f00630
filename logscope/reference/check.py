"""Cross-check: a parsed RKNN log side by side with the reference analysis of its ONNX model.

Every compared figure gets the log's value (with its line), the reference's, the difference, and the
likely cause — computed from the evidence at hand (the log's own rows, the emulation's tensors, the
known quirks), never a fixed text. The frames are declared in `logscope.reference.frames`.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Any

import pandas as pd

from logscope.model import ParsedLog
from logscope.reference.analyzer import ReferenceResult, shape_text
from logscope.reference.costs import element_bytes, is_bias
from logscope.reference.frames import build_reference_frame, frame_records, opt_int
from logscope.reference.rknn import (
    C2_TABLE,
    QUIRKS,
    Replay,
    RknnTensor,
    align_up,
    emulate_rknn,
    parse_shape,
    replay_log,
)
from logscope.reference.rknn_profiles import LEARNED_FROM, profile_applies
from logscope.reference.rknn_weights import CONST_ALIGN, WeightPlan

SCHEMA_VERSION = 1
IO_OPERATORS = ("InputOperator", "OutputOperator")


@dataclass
class CheckResult:
    log_source: str
    model_source: str
    build_index: int | None
    target: str
    dtype: str
    quirks: frozenset[str]
    reference: ReferenceResult
    replay: Replay | None
    frames: dict[str, pd.DataFrame]
    notes: list[str] = field(default_factory=list)

    def attach_to(self, log: ParsedLog) -> None:
        """Store the comparison frames on the parsed log (`log.frames["check_summary"]`, ...).

        This is how disagreements reach the rules engine: a rule that lists `check_summary` in its
        NEEDS runs only on a log that has been checked against its model.
        """
        log.frames.update(self.frames)

    def summary(self) -> dict[str, Any]:
        """The JSON contract (`schema_version` 1)."""
        return {
            "schema_version": SCHEMA_VERSION,
            "log": self.log_source,
            "model": self.model_source,
            "build_index": self.build_index,
            "target": self.target,
            "dtype": self.dtype,
            "quirks": sorted(self.quirks),
            "summary": frame_records(self.frames["check_summary"]),
            "tensors": frame_records(self.frames["check_tensors"]),
            "fusions": frame_records(self.frames["check_fusions"]),
            "cpu_ops": frame_records(self.frames["check_cpu_ops"]),
            "replay": {
                "rows": len(self.replay.frame),
                "reproduced": self.replay.reproduced,
                "total_bytes": self.replay.total,
                "logged_total_bytes": self.replay.logged_total,
                "pool_base": self.replay.base,
                "differing_rows": frame_records(
                    self.replay.frame[self.replay.frame["status"] != "reproduced"]
                ),
            }
            if self.replay is not None
            else None,
            "curves": {
                source: [int(v) for v in rows["high_water_bytes"]]
                for source, rows in self.frames["check_curve"].groupby("source", sort=False)
            },
            "reference_totals": dict(self.reference.totals),
            "notes": list(self.notes),
        }


def pick_build(log: ParsedLog, build_index: int | None = None) -> int | None:
    """The build to compare: the given one, else the last build that has a feature-tensor table."""
    builds = [int(b) for b in log.frames["builds"]["build_index"].dropna()]
    if build_index is not None:
        if build_index not in builds:
            from logscope.reference.errors import ReferenceOptionError

            raise ReferenceOptionError(f"--build {build_index}: the log has builds {builds}")
        return build_index
    tensors = log.frames["tensors"]
    with_table = sorted({int(b) for b in tensors.loc[tensors["table"] == "feature", "build_index"].dropna()})
    if with_table:
        return with_table[-1]
    return builds[-1] if builds else None


def log_toolkit(log: ParsedLog, build_index: int | None) -> str | None:
    """The build's rknn-toolkit version as printed, if any."""
    builds = log.frames["builds"]
    rows = builds[builds["build_index"] == build_index] if build_index is not None else builds
    for value in rows["toolkit_version"].dropna():
        return str(value)
    return None


def log_target(log: ParsedLog, build_index: int | None) -> str | None:
    """The build's target platform if the log names one logscope knows (`C2_TABLE`)."""
    builds = log.frames["builds"]
    rows = builds[builds["build_index"] == build_index] if build_index is not None else builds
    for value in rows["target_platform"].dropna():
        key = str(value).lower()
        if key in C2_TABLE:
            return key
    return None


def log_dtype(log: ParsedLog, build_index: int | None) -> str | None:
    """int8 / fp16 from the dtype most feature tensors of the build carry."""
    t = log.frames["tensors"]
    rows = t[(t["table"] == "feature") & (t["build_index"] == build_index)]
    counts = Counter(str(v).upper() for v in rows["dtype"].dropna())
    if not counts:
        return None
    top = counts.most_common(1)[0][0]
    return {"INT8": "int8", "UINT8": "int8", "FLOAT16": "fp16"}.get(top)


def cross_check(log: ParsedLog, ref: ReferenceResult, build_index: int | None = None) -> CheckResult:
    b = pick_build(log, build_index)
    notes: list[str] = []
    tensors = log.frames["tensors"]
    feature = tensors[(tensors["table"] == "feature") & (tensors["build_index"] == b)].reset_index(drop=True)
    const = tensors[(tensors["table"] == "const") & (tensors["build_index"] == b)].reset_index(drop=True)
    layers = log.frames["layers"]
    layers = layers[layers["build_index"] == b].reset_index(drop=True)
    memory = log.frames["memory"]
    mem_rows = memory[memory["build_index"] == b]
    mem = mem_rows.iloc[0] if len(mem_rows) else None
    internal = _int(mem["internal_bytes"]) if mem is not None else None
    replay = replay_log(feature, internal, layers=layers) if len(feature) else None
    if not len(feature):
        notes.append(
            "the log has no feature-tensor table for this build: no per-tensor comparison, no replay"
        )
    matched = _match_tensors(feature, ref.rknn.tensors)
    base = replay.base if replay is not None else None
    check_tensors = _tensor_rows(feature, matched, ref, base)
    fusion_rows = _fusion_rows(ref, layers)
    cpu_rows = [
        {
            "layer_id": r.layer_id,
            "op_type": r.op_type,
            "full_name": r.full_name,
            "expected": str(r.op_type) in IO_OPERATORS,
            "line": r.line,
        }
        for r in layers.itertuples(index=False)
        if str(r.target).upper() == "CPU"
    ]
    weight_rows = weight_row_matches(const, ref.weights)
    summary = _summary_rows(
        log, b, mem, feature, const, layers, ref, replay, check_tensors, fusion_rows, cpu_rows
    )
    summary.insert(1, _weight_layout_row(mem, const, ref, weight_rows))
    suggested = suggested_quirks(check_tensors) - ref.rknn.options.quirks
    if suggested:
        quirks = ref.rknn.options.quirks | suggested
        again = emulate_rknn(ref.graph, ref.fusions, replace(ref.rknn.options, quirks=quirks))
        flags = " ".join(f"--quirk {q}" for q in sorted(quirks))
        cause = (
            "reproduced to the byte"
            if internal == again.total
            else f"still {again.total - (internal or 0):+d} B off"
        )
        summary.insert(
            2,
            _row(
                "feature pool (RKNN emulation + suggested quirks)",
                internal,
                again.total,
                f"{flags}: {cause}",
                mem["internal_line"] if mem is not None else None,
            ),
        )
    curve_rows: list[dict[str, Any]] = []
    if replay is not None:
        for j, value in enumerate(replay.log_curve):
            curve_rows.append(
                {"source": "log", "step": j, "op": str(replay.steps[j]), "high_water_bytes": value}
            )
    for s in ref.rknn.steps:
        curve_rows.append(
            {
                "source": "reference",
                "step": s.index,
                "op": s.name,
                "high_water_bytes": ref.rknn.curve[s.index],
            }
        )
    frames = {
        "check_summary": build_reference_frame("check_summary", summary),
        "check_tensors": build_reference_frame("check_tensors", check_tensors),
        "check_fusions": build_reference_frame("check_fusions", fusion_rows),
        "check_cpu_ops": build_reference_frame("check_cpu_ops", cpu_rows),
        "check_curve": build_reference_frame("check_curve", curve_rows),
        "check_weights": build_reference_frame("check_weights", weight_rows),
    }
    if replay is not None:
        frames["replay"] = replay.frame
    opts = ref.rknn.options
    return CheckResult(
        log.source, ref.source, b, opts.target, opts.dtype, opts.quirks, ref, replay, frames, notes
    )


def suggested_quirks(tensor_rows: list[dict[str, Any]]) -> frozenset[str]:
    """Quirks whose padding explains a log tensor's size (their `likely_cause` says `rerun with --quirk`)."""
    out = set()
    for r in tensor_rows:
        cause = str(r.get("likely_cause") or "")
        if "rerun with --quirk " in cause:
            out.add(cause.rsplit("rerun with --quirk ", 1)[1].strip())
    return frozenset(q for q in out if q in QUIRKS)


def _int(value: Any) -> int | None:
    return opt_int(value)


def _offset(start: Any, base: int | None) -> int | None:
    value = opt_int(start)
    return None if value is None or base is None else value - base


def _norm_name(name: Any) -> str:
    text = str(name)
    return text[:-2] if text.endswith(":0") else text


def _squeeze(shape: tuple[int, ...] | None) -> tuple[int, ...] | None:
    if shape is None:
        return None
    out = tuple(shape)
    while len(out) > 1 and out[-1] == 1:
        out = out[:-1]
    return out


def _match_tensors(
    feature: pd.DataFrame, ref_tensors: list[RknnTensor]
) -> list[tuple[int | None, str | None]]:
    """For every log row: (index into ref_tensors, how matched). By name first, then in order by shape."""
    by_name = {_norm_name(t.name): i for i, t in enumerate(ref_tensors)}
    used: set[int] = set()
    out: list[tuple[int | None, str | None]] = [(None, None)] * len(feature)
    for k, r in enumerate(feature.itertuples(index=False)):
        i = by_name.get(_norm_name(r.name))
        if i is not None and i not in used:
            out[k] = (i, "name")
            used.add(i)
    pointer = 0
    for k, r in enumerate(feature.itertuples(index=False)):
        if out[k][0] is not None:
            pointer = max(pointer, out[k][0] + 1)  # type: ignore[operator]
            continue
        if "exSecondary" in str(r.name):
            continue  # a compiler-added buffer, never an ONNX tensor
        shape = parse_shape(r.orig_shape)
        for i in range(pointer, min(pointer + 8, len(ref_tensors))):
            if i not in used and ref_tensors[i].shape == shape:
                out[k] = (i, "order+shape")
                used.add(i)
                pointer = i + 1
                break
    return out


def _tensor_rows(
    feature: pd.DataFrame,
    matched: list[tuple[int | None, str | None]],
    ref: ReferenceResult,
    base: int | None,
) -> list[dict[str, Any]]:
    rknn = ref.rknn
    rows = []
    for (i, how), r in zip(matched, feature.itertuples(index=False), strict=True):
        t = rknn.tensors[i] if i is not None else None
        size = _int(r.size_bytes)
        diff = size - t.native_bytes if t is not None and size is not None else None
        rows.append(
            {
                "log_line": r.line,
                "log_op_id": r.op_id,
                "log_name": r.name,
                "log_dtype": r.dtype,
                "log_orig_shape": r.orig_shape,
                "log_native_shape": r.native_shape,
                "log_size_bytes": size,
                "log_offset": _offset(r.start_offset, base),
                "ref_name": t.name if t else None,
                "ref_shape": shape_text(t.shape) if t else None,
                "ref_native_shape": shape_text(t.native_shape) if t else None,
                "ref_native_bytes": t.native_bytes if t else None,
                "ref_offset": rknn.plan.offsets[i] if i is not None else None,
                "matched_by": how,
                "size_difference": diff,
                "likely_cause": _tensor_cause(r, t, diff, ref),
            }
        )
    return rows


def _tensor_cause(r: Any, t: RknnTensor | None, diff: int | None, ref: ReferenceResult) -> str:
    name, user = str(r.name), str(r.user_op)
    if t is None:
        if "exSecondary" in name:
            return f"compiler-added secondary buffer of {user}; no ONNX tensor"
        if user.startswith("ex") or "cvt" in name or "float16" in name.lower():
            return f"compiler-added {user} tensor ({r.dtype}); no ONNX tensor"
        return "no reference tensor of this shape at this point of the graph"
    if diff is None or diff == 0:
        return "" if diff == 0 else "the log prints no size"
    opts = ref.rknn.options
    c2 = opts.c2
    elt = opts.element_bytes
    shape = t.shape
    log_dtype = str(r.dtype).upper()
    if log_dtype == "FLOAT16" and elt == 1:
        return f"stored as FLOAT16 in the log, int8 in the reference (hybrid quantization): {diff:+d} B"
    if t.is_input:
        return f"input stored differently: {diff:+d} B"
    if shape is None or len(shape) != 4:
        return f"differs by {diff:+d} B"
    n, c, h, w = shape
    plane = h * w
    c1 = -(-c // c2)
    size = int(r.size_bytes)
    native = parse_shape(r.native_shape)
    candidates: list[tuple[str, int]] = []
    if c == 32:
        candidates.append(
            ("32 channels stored as 64 (quirk dw32-as-64)", n * (-(-64 // c2)) * plane * c2 * elt)
        )
    if plane > 1 and plane % 4:
        candidates.append(
            (
                f"H x W = {plane} padded to {align_up(plane, 4)} (quirk hw-align-4)",
                n * c1 * align_up(plane, 4) * c2 * elt,
            )
        )
    for text, value in candidates:
        if value == size:
            applied = [q for q in QUIRKS if q in text]
            if applied and applied[0] not in opts.quirks:
                return f"{text}: {diff:+d} B; rerun with --quirk {applied[0]}"
            return f"{text}: {diff:+d} B"
    if diff < 0 and t.quirk:
        return f"the reference applies quirk {t.quirk}; this log does not ({diff:+d} B)"
    if (
        native is not None
        and len(native) == 5
        and native[1] > c1
        and size == n * native[1] * plane * c2 * elt
    ):
        extra = native[1] - c1
        return (
            f"{extra} extra C1 block(s) of H x W x C2 = {plane * c2 * elt} B ({diff:+d} B): "
            "padding the emulation does not model "
            "(RV1106 toolkit 1.5.2 does this to some depthwise outputs in [09])"
        )
    if size % 1024 == 0 and align_up(t.native_bytes, 1024) == size:
        return f"rounded up to a multiple of 1 KiB ({diff:+d} B)"
    return f"differs by {diff:+d} B"


_PART = re.compile(r"[A-Z][a-z0-9]*")


def fuses_at_least(log_type: str | None, expected: str | None) -> bool:
    """True when the log's layer type names every part of the expected fused type, in any order:
    `ConvReluAdd` (fixture 11, YOLOv5's Conv → Relu → Add) covers `ConvRelu`, and `ConvAddRelu`."""
    if not log_type or not expected:
        return False
    return not Counter(_PART.findall(expected)) - Counter(_PART.findall(log_type))


def _fusion_rows(ref: ReferenceResult, layers: pd.DataFrame) -> list[dict[str, Any]]:
    graph = ref.graph
    frame = ref.frames["ref_fusions"]
    rows = []
    log_layers = list(layers.itertuples(index=False))
    used: set[int] = set()
    pointer = 0
    for c, fr in zip(ref.fusions, frame.itertuples(index=False), strict=True):
        out_shape = _squeeze(graph.tensors[c.output].shape)
        found = None
        partial = None
        for k in range(pointer, len(log_layers)):
            layer = log_layers[k]
            if k in used or _squeeze(parse_shape(layer.output_shape)) != out_shape:
                continue
            if str(layer.op_type) == c.rknn_name or fuses_at_least(str(layer.op_type), c.rknn_name):
                found = k  # `ConvReluAdd` [11] fuses a ConvRelu chain and more
                break
            if partial is None and str(layer.op_type).startswith(c.rknn_name[:4]):
                partial = k
        line = None
        if not log_layers:
            fused, layer_id, op_type, note = None, None, None, "the log has no layer table"
        elif found is not None:
            used.add(found)
            pointer = found + 1
            layer = log_layers[found]
            fused, layer_id, op_type, note = True, layer.layer_id, str(layer.op_type), ""
            line = log_layers[found].line
        elif partial is not None:
            used.add(partial)
            pointer = partial + 1
            layer = log_layers[partial]
            fused, layer_id, op_type, line = False, layer.layer_id, str(layer.op_type), layer.line
            note = f"the log runs {layer.op_type}, not {c.rknn_name}: part of the chain is a separate layer"
        else:
            fused, layer_id, op_type, note = None, None, None, "no log layer with this output shape"
        rows.append(
            {
                "chain": fr.chain,
                "rknn_name": c.rknn_name,
                "ops": fr.ops,
                "output_shape": fr.output_shape,
                "log_layer_id": layer_id,
                "log_op_type": op_type,
                "fused_in_log": fused,
                "note": note,
                "log_line": line,
            }
        )
    return rows


def _row(
    item: str,
    log_value: int | None,
    ref_value: int | None,
    cause: str,
    line: Any = None,
) -> dict[str, Any]:
    diff = log_value - ref_value if log_value is not None and ref_value is not None else None
    ratio = round(log_value / ref_value, 4) if log_value is not None and ref_value else None
    return {
        "item": item,
        "log_value": log_value,
        "reference_value": ref_value,
        "difference": diff,
        "ratio": ratio,
        "likely_cause": cause,
        "log_line": _int(line),
    }


def _pct(diff: int, base: int | None) -> str:
    return f"{diff / base * 100:+.1f}%" if base else ""


def _summary_rows(
    log: ParsedLog,
    b: int | None,
    mem: Any,
    feature: pd.DataFrame,
    const: pd.DataFrame,
    layers: pd.DataFrame,
    ref: ReferenceResult,
    replay: Replay | None,
    tensor_rows: list[dict[str, Any]],
    fusion_rows: list[dict[str, Any]],
    cpu_rows: list[dict[str, Any]],
) -> list[dict[str, Any]]:
    t = ref.totals
    rknn = ref.rknn
    rows: list[dict[str, Any]] = []
    weight = _int(mem["weight_bytes"]) if mem is not None else None
    rows.append(
        _row(
            "weight bytes",
            weight,
            t["weight_bytes"],
            _weight_cause(weight, t["weight_bytes"], const, ref),
            mem["weight_line"] if mem is not None else None,
        )
    )
    internal = _int(mem["internal_bytes"]) if mem is not None else None
    span = _int(mem["feature_table_span_bytes"]) if mem is not None else None
    line = mem["internal_line"] if mem is not None else None
    rows.append(
        _row(
            "feature pool (RKNN emulation)",
            internal,
            rknn.total,
            _pool_cause(internal, ref, tensor_rows, span),
            line,
        )
    )
    if internal is not None:
        over = internal - rknn.lower_bound
        rows.append(
            _row(
                "feature pool vs lower bound (native, fused)",
                internal,
                rknn.lower_bound,
                f"online first-fit fragmentation: {over} B ({_pct(over, rknn.lower_bound)}) above the bound"
                if over > 0
                else "at the lower bound",
                line,
            )
        )
        save = internal - rknn.greedy.total
        rows.append(
            _row(
                "feature pool vs greedy-by-size plan (native, fused)",
                internal,
                rknn.greedy.total,
                f"a greedy-by-size offset plan of the same tensors would save {save} B"
                if save > 0
                else "the compiler's plan is as small as greedy-by-size",
                line,
            )
        )
        rows.append(
            _row(
                f"feature pool vs lower bound ({ref.options.dtype} logical, unfused)",
                internal,
                t["lower_bound_bytes"],
                f"NC1HWC2 padding ({t['rknn_padding_bytes']} B over the reference's tensors), "
                "the input slot, fusion granularity and first-fit fragmentation",
                line,
            )
        )
    if replay is not None:
        inside = replay.frame[replay.frame["status"] != "outside-pool"]
        bad = replay.frame[~replay.frame["status"].isin(["reproduced", "outside-pool"])]
        cause = f"{replay.reproduced} of {len(inside)} pool rows at their logged offsets"
        outside = len(replay.frame) - len(inside)
        if outside:
            cause += f"; {outside} row(s) outside the pool"
        if len(bad):
            cause += f"; differing: {', '.join(str(n) for n in bad['name'].head(3))}"
        rows.append(_row("allocator replay of the log's own rows", internal, replay.total, cause, line))
    ref_count = len(rknn.tensors)
    unmatched = [r for r in tensor_rows if r["ref_name"] is None]
    rows.append(
        _row(
            "feature tensors",
            len(feature) if len(feature) else None,
            ref_count,
            _count_cause(len(feature), ref_count, unmatched),
        )
    )
    compute_layers = [r for r in layers.itertuples(index=False) if str(r.op_type) not in IO_OPERATORS]
    rows.append(
        _row(
            "layers (without input/output operators)",
            len(compute_layers) or None,
            len(rknn.steps),
            "the compiler splits or adds ops (dtype converts, reshapes)"
            if len(compute_layers) > len(rknn.steps)
            else (
                "the compiler removed or merged more ops"
                if compute_layers and len(compute_layers) < len(rknn.steps)
                else ""
            ),
        )
    )
    fused_log = sum(1 for r in fusion_rows if r["fused_in_log"] is True)
    missed = [r for r in fusion_rows if r["fused_in_log"] is False]
    absent = [r for r in fusion_rows if r["fused_in_log"] is None]
    causes = []
    if missed:
        causes.append(
            f"{len(missed)} candidate(s) not fused: " + ", ".join(str(r["ops"]) for r in missed[:3])
        )
    if absent and len(layers):
        causes.append(f"{len(absent)} with no log layer of their output shape (is this the log's model?)")
    rows.append(
        _row(
            "fusions (candidates fused in the log)",
            fused_log if len(layers) else None,
            len(fusion_rows),
            "; ".join(causes) if len(layers) else "the log has no layer table",
        )
    )
    padding = _int(mem["padding_bytes"]) if mem is not None else None
    rows.append(
        _row(
            "channel padding (native - logical)",
            padding,
            t["rknn_padding_bytes"],
            "sizes differ per tensor: see the tensor table"
            if padding is not None and padding != t["rknn_padding_bytes"]
            else "",
        )
    )
    cpu = [r for r in cpu_rows if not r["expected"]]
    rows.append(
        _row(
            "ops on CPU (besides input/output)",
            len(cpu) if len(layers) else None,
            0,
            ", ".join(f"{r['op_type']} (layer {r['layer_id']})" for r in cpu[:5]),
        )
    )
    return rows


def _weight_cause(log_value: int | None, ref_value: int, const: pd.DataFrame, ref: ReferenceResult) -> str:
    if log_value is None:
        return "the log prints no weight total"
    diff = log_value - ref_value
    if diff == 0:
        return ""
    parts = [f"{diff:+d} B ({_pct(diff, ref_value)})"]
    if len(const):
        pool: dict[int, list[tuple[int, str]]] = {}
        for numel, size, name in _reference_weights(ref):
            pool.setdefault(numel, []).append((size, name))
        added = bias_pad = layout_pad = aux = 0
        added_names: list[str] = []
        for r in const.itertuples(index=False):
            shape = parse_shape(r.orig_shape)
            count = math.prod(shape) if shape else None
            size = _int(r.size_bytes) or 0
            dtype = str(r.dtype).upper()
            if count is not None and pool.get(count):
                ref_size, _ = pool[count].pop(0)
                if dtype == "INT32":
                    bias_pad += size - ref_size
                else:
                    layout_pad += size - ref_size
            elif dtype in ("INT64",):
                aux += size
            else:
                added += size
                added_names.append(str(r.name))
        unlisted = [(size, name) for entries in pool.values() for size, name in entries]
        missing = sum(size for size, _ in unlisted)
        if added:
            parts.append(f"constants with no ONNX counterpart {added} B ({', '.join(added_names[:2])})")
        if bias_pad:
            parts.append(f"int32 bias rows {bias_pad:+d} B beyond 4 B/channel")
        if layout_pad:
            parts.append(f"kernel layout padding {layout_pad:+d} B")
        if aux:
            parts.append(f"int64 shape constants {aux} B (not weights in the reference)")
        if missing:
            names = ", ".join(name for _, name in unlisted[:2])
            parts.append(f"reference weights the log does not list -{missing} B ({names}: folded away)")
        rest = diff - (added + bias_pad + layout_pad + aux - missing)
        if rest:
            parts.append(f"unexplained {rest:+d} B")
    return "; ".join(parts)


WEIGHT_LAYOUT_ITEM = "weight memory (RKNN const layout)"
#: Bytes within which a printed KiB total (2.2.0: two decimals, 5.12 B a step) counts as reproduced.
PRINTED_ROUNDING = 6


def weight_row_matches(const: pd.DataFrame, plan: WeightPlan | None) -> list[dict[str, Any]]:
    """The log's const rows against the predicted ones: by name, else (a model whose names the converter
    changed, such as a TensorFlow export) by printed shape in table order, else an int64 row by any
    unmatched shape constant. A predicted row the log lacks gets a row with no line."""
    if plan is None:
        return []
    by_name = {r.name: r for r in plan.rows}
    used: set[str] = set()
    rows: list[dict[str, Any]] = []
    pending = []
    for r in const.itertuples(index=False):
        hit = by_name.get(str(r.name))
        if hit is not None and hit.name not in used:
            used.add(hit.name)
            rows.append(_weight_match(r, hit))
        else:
            pending.append(r)
    for r in pending:
        shape = parse_shape(r.orig_shape)
        hit = next((p for p in plan.rows if p.name not in used and p.shape == shape), None)
        if hit is None and str(r.dtype).upper() == "INT64":
            # the compiler renames (and may widen) reshape shapes by version: `c32` (3) of the model is
            # `Reshape33_o0_rs_i1_sw` (4) in a 2.5.0 transformer log; any unmatched shape row will do
            hit = next((p for p in plan.rows if p.name not in used and p.component == "shape constant"), None)
        if hit is not None:
            used.add(hit.name)
        rows.append(_weight_match(r, hit))
    for p in plan.rows:
        if p.name not in used:
            rows.append(
                {
                    "log_line": None,
                    "name": p.name,
                    "component": p.component,
                    "log_shape": None,
                    "log_size_bytes": None,
                    "ref_size_bytes": p.size_bytes,
                    "size_difference": None,
                    "rule": p.rule,
                }
            )
    return rows


def _weight_match(r: Any, hit: Any) -> dict[str, Any]:
    size = _int(r.size_bytes)
    return {
        "log_line": _int(r.line),
        "name": str(r.name),
        "component": hit.component if hit is not None else "not predicted",
        "log_shape": str(r.orig_shape),
        "log_size_bytes": size,
        "ref_size_bytes": hit.size_bytes if hit is not None else None,
        "size_difference": size - hit.size_bytes if hit is not None and size is not None else None,
        "rule": hit.rule if hit is not None else "",
    }


def _weight_layout_row(
    mem: Any, const: pd.DataFrame, ref: ReferenceResult, matches: list[dict[str, Any]]
) -> dict[str, Any]:
    """`Total Weight Memory Size` against the const layout emulation, itemised per component (each row
    rounded to its 64-B slot, as the table places it) with the remainder stated."""
    logged = _int(mem["weight_bytes"]) if mem is not None else None
    line = mem["weight_line"] if mem is not None else None
    plan = ref.weights
    if plan is None:
        return _row(WEIGHT_LAYOUT_ITEM, logged, None, ref.notes[-1] if ref.notes else "", line)
    predicted = plan.total if plan.complete else None
    logged_parts: dict[str, int] = {}
    predicted_parts: dict[str, int] = {}
    for m in matches:
        c = str(m["component"])
        if m["log_size_bytes"] is not None:
            logged_parts[c] = logged_parts.get(c, 0) + align_up(int(m["log_size_bytes"]), CONST_ALIGN)
        if m["ref_size_bytes"] is not None:
            predicted_parts[c] = predicted_parts.get(c, 0) + align_up(int(m["ref_size_bytes"]), CONST_ALIGN)
    parts = []
    if len(const):
        for c in dict.fromkeys([*predicted_parts, *logged_parts]):
            got, want = logged_parts.get(c, 0), predicted_parts.get(c, 0)
            parts.append(
                f"{c} {got:,} B logged / {want:,} predicted" + (f" ({got - want:+,})" if got != want else "")
            )
        missing = [str(m["name"]) for m in matches if m["log_line"] is None]
        extra = [str(m["name"]) for m in matches if m["component"] == "not predicted"]
        if missing:
            parts.append(f"predicted rows the log lacks: {', '.join(missing[:3])}")
        if extra:
            parts.append(f"log rows not predicted: {', '.join(extra[:3])}")
        table = sum(logged_parts.values())
    else:
        parts.append(
            "the log has no const table: " + ", ".join(f"{c} {v:,} B" for c, v in predicted_parts.items())
        )
        table = plan.table_bytes
    if logged is None:
        return _row(
            WEIGHT_LAYOUT_ITEM, None, predicted, "; ".join(["the log prints no weight total", *parts]), line
        )
    beyond = logged - table
    if not len(const):
        rest = logged - plan.total
        if plan.fixed_block is not None:
            parts.append(f"block beyond the table {plan.fixed_block:,} B predicted")
        if rest:
            parts.append(f"unexplained remainder {rest:+,} B (the log lists no const rows to compare)")
        return _row(WEIGHT_LAYOUT_ITEM, logged, predicted, "; ".join(parts), line)
    if plan.fixed_block is None:
        parts.append(
            f"unexplained remainder {beyond:+,} B: {ref.rknn.options.target}'s block beyond the "
            "table is not modelled"
        )
    else:
        parts.append(f"block beyond the table {beyond:,} B logged / {plan.fixed_block:,} predicted")
        rest = beyond - plan.fixed_block
        if abs(rest) <= PRINTED_ROUNDING:
            parts.append(f"remainder {rest:+d} B (the printed KiB rounding)")
        else:
            parts.append(f"unexplained remainder {rest:+,} B")
    return _row(WEIGHT_LAYOUT_ITEM, logged, predicted, "; ".join(parts), line)


def _reference_weights(ref: ReferenceResult) -> list[tuple[int, int, str]]:
    """(elements, bytes under the analysis dtype, name) of every weight the reference counts."""
    g = ref.graph
    out = []
    for t in g.tensors.values():
        if t.role != "weight" or not t.consumers or t.numel is None:
            continue
        bias = any(
            is_bias(g.ops[step], i)
            for step in set(t.consumers)
            for i, n in enumerate(g.ops[step].inputs)
            if n == t.name
        )
        out.append((t.numel, t.numel * element_bytes(t, ref.options.dtype, bias=bias), t.name))
    return out


def _pool_cause(
    internal: int | None, ref: ReferenceResult, tensor_rows: list[dict[str, Any]], span: int | None = None
) -> str:
    rknn = ref.rknn
    opts = rknn.options
    setting = f"{opts.target}, C2={opts.c2}, quirks: {', '.join(sorted(opts.quirks)) or 'none'}"
    if internal is None:
        return f"the log prints no internal total ({setting})"
    if internal == rknn.total:
        return f"reproduced to the byte by the emulation ({setting})"
    if span == rknn.total and abs(internal - span) <= 1:
        # 2.x prints the total in KiB with up to four decimals, which does not resolve every byte
        return (
            f"reproduced by the emulation: the feature table spans {span:,} B, and the printed total is "
            f"that span in KiB, rounded ({setting})"
        )
    hints = sorted(
        {r["likely_cause"].split("rerun with ")[-1] for r in tensor_rows if "rerun with" in r["likely_cause"]}
    )
    diff = internal - rknn.total
    text = f"the log holds {abs(diff)} B {'more' if diff > 0 else 'less'} than the emulation ({setting})"
    if hints:
        text += "; tensor sizes suggest: " + ", ".join(hints)
    return text


def _count_cause(log_count: int, ref_count: int, unmatched: list[dict[str, Any]]) -> str:
    if not log_count:
        return "the log has no feature-tensor table"
    if not unmatched:
        return "" if log_count == ref_count else "same tensors, different count"
    names = ", ".join(str(r["log_name"]) for r in unmatched[:3])
    return f"{len(unmatched)} log row(s) without a matching ONNX tensor ({names})"


def check_log_against_model(
    log: ParsedLog,
    model: Any,
    *,
    target: str | None = None,
    dtype: str | None = None,
    input_shapes: dict[str | None, tuple[int, ...]] | None = None,
    quirks: frozenset[str] = frozenset(),
    build_index: int | None = None,
    toolkit: str | None = None,
) -> CheckResult:
    """Analyse `model` with the log's target and dtype (unless given) and cross-check the two.

    Target: `target`, else the build's target platform, else rk3588 (noted). Dtype: `dtype`, else the
    dtype of most of the build's feature tensors, else int8 (noted).
    """
    from logscope.reference.analyzer import ReferenceOptions, analyze_model

    b = pick_build(log, build_index)
    notes: list[str] = []
    from_log = log_target(log, b)
    if target is None:
        target = from_log or "rk3588"
        notes.append(
            f"target {target} " + ("from the log" if from_log else "assumed: the log names none (--target)")
        )
    elif from_log and from_log != target.lower():
        notes.append(f"the log says target {from_log}; --target {target} used")
    if dtype is None:
        found = log_dtype(log, b)
        dtype = found or "int8"
        notes.append(f"dtype {dtype} " + ("from the log's feature tensors" if found else "assumed (--dtype)"))
    toolkit = toolkit or log_toolkit(log, b)
    if toolkit is not None and not profile_applies(toolkit):
        notes.append(
            f"toolkit {toolkit}: older than the learned size profiles ({', '.join(LEARNED_FROM)}); "
            "plain NC1HWC2 sizes used"
        )
    options = ReferenceOptions(
        dtype=dtype, target=target, input_shapes=input_shapes or {}, quirks=quirks, toolkit=toolkit
    )
    ref = analyze_model(model, options)
    result = cross_check(log, ref, b)
    if not from_log:
        notes.append(reproducing_targets(log, b, ref))
        weight_note = weight_reproducing_targets(log, b, ref)
        if weight_note:
            notes.append(weight_note)
    result.notes[:0] = notes
    result.notes.extend(ref.notes)
    return result


def reproducing_targets(log: ParsedLog, build_index: int | None, ref: ReferenceResult) -> str:
    """Which targets' learned profiles reproduce the build's internal total (for a log naming none)."""
    from logscope.reference.rknn import RknnOptions
    from logscope.reference.rknn_profiles import PROFILES

    memory = log.frames["memory"]
    rows = memory[memory["build_index"] == build_index]
    logged = _int(rows.iloc[0]["internal_bytes"]) if len(rows) else None
    if logged is None:
        return "no Total Internal Memory Size in the log: no target can be tested against it"
    opts = ref.rknn.options
    # A log that prints no toolkit version is tried with each learned version (2.5.0 rewrites some
    # graphs the older ones do not); a target reproduced by only some of them lists those.
    versions = (opts.toolkit,) if opts.toolkit else LEARNED_FROM
    hits = []
    for target in PROFILES:
        if rknn_dtype_known(target, opts.dtype):
            matching = [
                v
                for v in versions
                if _same_total(
                    emulate_rknn(
                        ref.graph, ref.fusions, RknnOptions(target=target, dtype=opts.dtype, toolkit=v)
                    ).total,
                    logged,
                )
            ]
            if matching:
                hits.append(target if len(matching) == len(versions) else f"{target} ({', '.join(matching)})")
    if not hits:
        return f"no target's learned profile reproduces the logged {logged:,} B ({opts.dtype})"
    return (
        f"targets whose learned profile reproduces the logged {logged:,} B ({opts.dtype}): {', '.join(hits)}"
    )


def weight_reproducing_targets(log: ParsedLog, build_index: int | None, ref: ReferenceResult) -> str:
    """Which targets' const layouts reproduce the build's `Total Weight Memory Size` (a log naming none)."""
    from logscope.reference.rknn_weights import LAYOUTS, plan_weights

    memory = log.frames["memory"]
    rows = memory[memory["build_index"] == build_index]
    logged = _int(rows.iloc[0]["weight_bytes"]) if len(rows) else None
    if logged is None:
        return ""
    dtype = "int8" if ref.rknn.options.dtype == "int8" else "fp16"
    hits = []
    for target, layout_dtype in LAYOUTS:
        if layout_dtype != dtype:
            continue
        plan = plan_weights(ref.graph, target, dtype, ref.rknn.options.toolkit)
        if plan is not None and plan.complete and _same_total(plan.total, logged):
            hits.append(target)
    if not hits:
        return f"the logged weight total {logged:,} B ({dtype}) matches no target's const layout"
    return f"the logged weight total {logged:,} B ({dtype}) matches the const layout of: " + ", ".join(hits)


def rknn_dtype_known(target: str, dtype: str) -> bool:
    return ("int8" if dtype == "int8" else "fp16") in C2_TABLE.get(target, {})


def _same_total(predicted: int, logged: int) -> bool:
    """Equal, or equal at the printed resolution: 2.5.0 prints KiB with three decimals (`150.688KB`)."""
    return predicted == logged or round(predicted / 1024, 3) == round(logged / 1024, 3)
