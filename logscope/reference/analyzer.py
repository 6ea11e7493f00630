"""`analyze_model`: an ONNX model's reference memory figures, every planner reported on its own."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pandas as pd

from logscope.reference.costs import OpCost, activation_bytes, check_dtype, op_costs
from logscope.reference.errors import ReferenceOptionError
from logscope.reference.frames import build_reference_frame, frame_records
from logscope.reference.fusion import FusionChain, find_fusions
from logscope.reference.graph import ELEM_BYTES, RefGraph, build_graph
from logscope.reference.lifetimes import Lifetimes, tensor_lifetimes
from logscope.reference.loader import LoadLimits, load_model
from logscope.reference.planners import (
    Plan,
    high_water_curve,
    live_curve,
    lower_bound,
    plan_first_fit,
    plan_greedy_by_size,
    plan_naive,
)
from logscope.reference.rknn import (
    RknnOptions,
    RknnPlan,
    check_quirks,
    check_target,
    emulate_rknn,
    rknn_dtype,
)
from logscope.reference.rknn_profiles import version_key
from logscope.reference.rknn_rewrites import unmodelled_note
from logscope.reference.rknn_transformer_tables import table_note
from logscope.reference.rknn_weights import WeightPlan, plan_weights, weights_frame_rows, weights_notes
from logscope.reference.shapes import Shape

if TYPE_CHECKING:
    import onnx

SCHEMA_VERSION = 1


# Offsets aligned to more than 1 MiB are not an allocator's; a bigger value is a typo that would only
# inflate every figure.
MAX_ALIGNMENT = 1 << 20


@dataclass(frozen=True)
class ReferenceOptions:
    """What to assume about the deployment. Defaults: int8 on RK3588, no in-place, byte alignment."""

    dtype: str = "int8"
    target: str = "rk3588"
    input_shapes: Mapping[str | None, Shape] = field(default_factory=dict)
    in_place: bool = False
    alignment: int = 1  # offset alignment of the generic planners (the RKNN emulation uses its own, 64)
    quirks: frozenset[str] = frozenset()
    input_slot: bool = True
    limits: LoadLimits = field(default_factory=LoadLimits)
    learned: bool = True  # RKNN tensor sizes from the target's learned profile (reference/rknn_profiles.py)
    toolkit: str | None = None  # rknn-toolkit2 version the profile is for (None: the newest)

    def __post_init__(self) -> None:
        alignment = self.alignment
        if (
            isinstance(alignment, bool)
            or not isinstance(alignment, int)
            or not 1 <= alignment <= MAX_ALIGNMENT
        ):
            shown = str(alignment) if len(str(alignment)) <= 40 else f"a {len(str(alignment))}-digit number"
            raise ReferenceOptionError(
                f"--alignment: {shown} is out of range (accepted: 1 to {MAX_ALIGNMENT})"
            )

    def rknn(self) -> RknnOptions:
        if self.toolkit is not None and version_key(self.toolkit) is None:
            raise ReferenceOptionError(f"--toolkit {self.toolkit!r}: not a version (e.g. 2.3.2)")
        return RknnOptions(
            target=check_target(self.target),
            dtype=self.dtype,
            input_slot=self.input_slot,
            quirks=self.quirks,
            learned=self.learned,
            toolkit=self.toolkit,
        )


@dataclass
class ReferenceResult:
    source: str
    options: ReferenceOptions
    graph: RefGraph
    costs: list[OpCost]
    fusions: list[FusionChain]
    lifetimes: Lifetimes
    plans: dict[str, Plan]
    rknn: RknnPlan
    frames: dict[str, pd.DataFrame]
    totals: dict[str, Any]
    notes: list[str]
    weights: WeightPlan | None = None  # the RKNN const layout (rknn_weights); None: no learned layout

    def summary(self) -> dict[str, Any]:
        """The JSON contract (`schema_version` 1): keys are never renamed."""
        g = self.graph
        return {
            "schema_version": SCHEMA_VERSION,
            "source": self.source,
            "model": {
                "graph": g.name,
                "ir_version": g.ir_version,
                "opset": g.opset,
                "producer": g.producer or None,
                "inputs": {k: list(v) for k, v in g.inputs.items()},
                "outputs": list(g.outputs),
                "compute_ops": len(g.ops),
                "constant_nodes": g.const_node_count,
            },
            "options": {
                "dtype": self.options.dtype,
                "target": self.options.target,
                "in_place": self.options.in_place,
                "alignment": self.options.alignment,
                "quirks": sorted(self.options.quirks),
                "input_slot": self.options.input_slot,
                "input_shapes": {str(k): list(v) for k, v in self.options.input_shapes.items()},
            },
            "totals": dict(self.totals),
            "plans": frame_records(self.frames["ref_plans"]),
            "fusions": frame_records(self.frames["ref_fusions"]),
            "ops": frame_records(self.frames["ref_ops"]),
            "tensors": frame_records(self.frames["ref_tensors"]),
            "curves": {
                planner: [int(v) for v in rows["high_water_bytes"]]
                for planner, rows in self.frames["ref_curve"].groupby("planner", sort=False)
            },
            "notes": list(self.notes),
        }


def shape_text(shape: tuple[int, ...] | None) -> str | None:
    return None if shape is None else "(" + ",".join(str(d) for d in shape) + ")"


def analyze_model(
    model: str | os.PathLike[str] | onnx.ModelProto, options: ReferenceOptions | None = None
) -> ReferenceResult:
    """Load (safely), classify, infer shapes, cost, plan and emulate. Raises `LogscopeError`s only."""
    options = options or ReferenceOptions()
    check_dtype(options.dtype)
    check_target(options.target)
    check_quirks(options.quirks)
    if isinstance(model, (str, os.PathLike)):
        source = os.fspath(model)
        proto = load_model(model, options.limits)
    else:
        import onnx

        source = model.graph.name or "<model>"
        proto = onnx.ModelProto()
        proto.CopyFrom(model)
    graph = build_graph(proto, options.input_shapes)
    dtype = options.dtype
    costs = op_costs(graph, dtype)
    lifetimes = tensor_lifetimes(graph, lambda t: activation_bytes(t, dtype), in_place=options.in_place)
    records = lifetimes.records
    align = options.alignment
    plans = {
        "naive": plan_naive(records, align),
        "greedy_by_size": plan_greedy_by_size(records, align),
        "first_fit": plan_first_fit(records, align),
    }
    lb = lower_bound(records)
    fusions = find_fusions(graph)
    rknn = emulate_rknn(graph, fusions, options.rknn())
    weights = plan_weights(graph, rknn.options.target, dtype, options.toolkit)
    frames = _frames(graph, costs, fusions, lifetimes, plans, rknn, options)
    frames["ref_rknn_weights"] = build_reference_frame("ref_rknn_weights", weights_frame_rows(weights))
    live = live_curve(records, len(graph.ops))
    peak_step = live.index(lb) if lb and live else None
    aux = sum(
        (t.numel or 0) * ELEM_BYTES.get(t.elem_type, 0) for t in graph.tensors.values() if t.role == "aux"
    )
    params = sum(c.params for c in costs)
    bn = sum(c.bn_stat_params for c in costs)
    totals: dict[str, Any] = {
        "compute_ops": len(graph.ops),
        "constant_nodes": graph.const_node_count,
        "params": params,
        "bn_stat_params": bn,
        "params_without_bn_stats": params - bn,
        "weight_bytes": sum(c.weight_bytes for c in costs),
        "aux_constant_bytes": aux,
        "macs": sum(c.macs for c in costs),
        "activation_tensors": sum(1 for _ in lifetimes.buffer_of),
        "buffers": len(records),
        "naive_bytes": plans["naive"].total,
        "lower_bound_bytes": lb,
        "greedy_bytes": plans["greedy_by_size"].total,
        "first_fit_bytes": plans["first_fit"].total,
        "naive_to_lower_bound": _ratio(plans["naive"].total, lb),
        "greedy_to_lower_bound": _ratio(plans["greedy_by_size"].total, lb),
        "peak_step": peak_step,
        "peak_op": graph.ops[peak_step].name if peak_step is not None and graph.ops else None,
        "fusion_candidates": len(fusions),
        "rknn_ops": len(rknn.steps),
        "rknn_tensors": len(rknn.tensors),
        "rknn_bytes": rknn.total,
        "rknn_lower_bound_bytes": rknn.lower_bound,
        "rknn_greedy_bytes": rknn.greedy.total,
        "rknn_padding_bytes": sum(t.native_bytes - t.logical_bytes for t in rknn.tensors if not t.is_input),
        # The predicted `Total Weight Memory Size` (None where the target's block beyond the table or
        # an op's consts are not modelled) and the predicted const table alone (rows rounded to 64 B);
        # docs/reference.md "Weight memory".
        "rknn_weight_bytes": weights.total if weights is not None and weights.complete else None,
        "rknn_weight_table_bytes": weights.table_bytes if weights is not None else None,
    }
    notes = list(graph.notes)
    if dtype == "fp32":
        notes.append("RKNN's NPU has no fp32: the RKNN emulation uses fp16 sizes and C2")
    if options.in_place:
        notes.append("in-place aliasing on: single-reader elementwise outputs share their input's buffer")
    profile = rknn.options.profile
    if profile is not None:
        notes.append(
            f"RKNN sizes from the learned {rknn.options.target} profile "
            f"(toolkit {options.toolkit or 'newest'}): "
            f"conv outputs rounded to {profile.conv_bytes} B of channels, depthwise to {profile.dw_bytes} B, "
            f"planes to {profile.plane_align} elements"
            + (
                f"; depthwise outputs reading more than {profile.dw_split_input_bytes:,} B get a spare block"
                if profile.dw_split_input_bytes is not None
                else ""
            )
            + " (docs/reference.md)"
        )
    else:
        notes.append(
            f"RKNN sizes: plain NC1HWC2 (no learned profile for {rknn.options.target} / this toolkit)"
        )
    rewritten = sorted({s.op_type for s in rknn.steps if s.op_type in ("exLSTM", "exGRU")})
    if rewritten:
        notes.append(
            f"RKNN: the recurrent layer runs as {rewritten[0]}; its compute zone, exSecondary buffers and "
            "the MatMul head's Transpose/Conv/Reshape are sized by the compiler's rewrite rules "
            "(docs/reference.md)"
        )
    unmodelled = unmodelled_note(graph)
    if unmodelled:
        notes.append(unmodelled)
    if rknn.options.profile is not None and not rknn.options.quirks:
        transformer = table_note(graph, rknn.options.target, rknn_dtype(rknn.options.dtype), options.toolkit)
        if transformer:
            notes.append(transformer)
    notes.extend(weights_notes(weights, rknn.options.target, dtype))
    return ReferenceResult(
        source, options, graph, costs, fusions, lifetimes, plans, rknn, frames, totals, notes, weights
    )


def _ratio(a: int, b: int) -> float | None:
    return round(a / b, 4) if b else None


def _frames(
    graph: RefGraph,
    costs: list[OpCost],
    fusions: list[FusionChain],
    lifetimes: Lifetimes,
    plans: dict[str, Plan],
    rknn: RknnPlan,
    options: ReferenceOptions,
) -> dict[str, pd.DataFrame]:
    records = lifetimes.records
    n = len(graph.ops)
    live = live_curve(records, n)
    chain_of = {s: i for i, c in enumerate(fusions) for s in c.steps}
    rknn_step_of = {s: f.index for f in rknn.steps for s in f.ops}
    ops = [
        {
            "step": op.step,
            "name": op.name,
            "op_type": op.op_type,
            "output_shapes": ";".join(shape_text(graph.tensors[o].shape) or "?" for o in op.outputs if o),
            "weight_bytes": c.weight_bytes,
            "params": c.params,
            "bn_stat_params": c.bn_stat_params,
            "macs": c.macs,
            "output_bytes": c.output_bytes,
            "live_bytes": live[op.step] if op.step < len(live) else 0,
            "fusion_chain": chain_of.get(op.step),
            "rknn_step": rknn_step_of.get(op.step),
        }
        for op, c in zip(graph.ops, costs, strict=True)
    ]
    rknn_of = {t.name: (t, off) for t, off in zip(rknn.tensors, rknn.plan.offsets, strict=True)}
    tensors = []
    activations = [graph.tensors[name] for name in graph.inputs] + [
        graph.tensors[o] for op in graph.ops for o in op.outputs if o
    ]
    for t in activations:
        b = lifetimes.buffer_of.get(t.name)
        rec = records[b] if b is not None else None
        rt = rknn_of.get(t.name)
        tensors.append(
            {
                "name": t.name,
                "role": t.role,
                "dtype": t.dtype,
                "shape": shape_text(t.shape),
                "shape_source": t.shape_source,
                "numel": t.numel,
                "size_bytes": activation_bytes(t, options.dtype),
                "first_step": rec.first if rec else None,
                "last_step": rec.last if rec else None,
                "readers": len(set(t.consumers)),
                "is_output": t.is_output,
                "buffer": rec.name if rec else None,
                "offset_naive": plans["naive"].offsets[b] if b is not None else None,
                "offset_greedy": plans["greedy_by_size"].offsets[b] if b is not None else None,
                "offset_first_fit": plans["first_fit"].offsets[b] if b is not None else None,
                "rknn_first_step": rt[0].first if rt else None,
                "rknn_last_step": rt[0].last if rt else None,
                "native_shape": shape_text(rt[0].native_shape) if rt else None,
                "native_bytes": rt[0].native_bytes if rt else None,
                "rknn_offset": rt[1] if rt else None,
                "quirk": rt[0].quirk if rt else None,
            }
        )
    lb = lower_bound(records)
    plan_rows = [_plan_row("lower_bound", "onnx", "logical", 1, options.in_place, records, lb, lb, live)]
    for key, plan in plans.items():
        plan_rows.append(
            _plan_row(
                key,
                "onnx",
                "logical",
                options.alignment,
                options.in_place,
                records,
                plan.total,
                lb,
                high_water_curve(records, plan.offsets, n),
            )
        )
    m = len(rknn.steps)
    plan_rows.append(
        _plan_row(
            "rknn",
            "rknn-fused",
            "native",
            rknn.options.alignment,
            False,
            rknn.records,
            rknn.total,
            rknn.lower_bound,
            rknn.curve,
        )
    )
    plan_rows.append(
        _plan_row(
            "rknn_greedy_by_size",
            "rknn-fused",
            "native",
            rknn.options.alignment,
            False,
            rknn.records,
            rknn.greedy.total,
            rknn.lower_bound,
            high_water_curve(rknn.records, rknn.greedy.offsets, m),
        )
    )
    plan_rows.append(
        _plan_row(
            "rknn_lower_bound",
            "rknn-fused",
            "native",
            1,
            False,
            rknn.records,
            rknn.lower_bound,
            rknn.lower_bound,
            rknn.live,
        )
    )
    curve_rows: list[dict[str, Any]] = []
    onnx_curves = {key: high_water_curve(records, plan.offsets, n) for key, plan in plans.items()}
    onnx_curves["lower_bound"] = live
    for key, values in onnx_curves.items():
        for op in graph.ops:
            curve_rows.append(
                {
                    "planner": key,
                    "step": op.step,
                    "op_name": op.name,
                    "op_type": op.op_type,
                    "live_bytes": live[op.step],
                    "high_water_bytes": values[op.step],
                }
            )
    rknn_curves = {
        "rknn": rknn.curve,
        "rknn_greedy_by_size": high_water_curve(rknn.records, rknn.greedy.offsets, m),
        "rknn_lower_bound": rknn.live,
    }
    for key, values in rknn_curves.items():
        for s in rknn.steps:
            curve_rows.append(
                {
                    "planner": key,
                    "step": s.index,
                    "op_name": s.name,
                    "op_type": s.op_type,
                    "live_bytes": rknn.live[s.index],
                    "high_water_bytes": values[s.index],
                }
            )
    fusion_rows = []
    for i, c in enumerate(fusions):
        inter = [graph.ops[s].outputs[0] for s in c.steps[:-1]]
        fusion_rows.append(
            {
                "chain": i,
                "first_step": c.steps[0],
                "last_step": c.steps[-1],
                "pattern": c.pattern,
                "rknn_name": c.rknn_name,
                "ops": " + ".join(graph.ops[s].name for s in c.steps),
                "output": c.output,
                "output_shape": shape_text(graph.tensors[c.output].shape),
                "eliminated_bytes": sum(activation_bytes(graph.tensors[x], options.dtype) for x in inter),
            }
        )
    return {
        "ref_ops": build_reference_frame("ref_ops", ops),
        "ref_tensors": build_reference_frame("ref_tensors", tensors),
        "ref_plans": build_reference_frame("ref_plans", plan_rows),
        "ref_curve": build_reference_frame("ref_curve", curve_rows),
        "ref_fusions": build_reference_frame("ref_fusions", fusion_rows),
    }


def _plan_row(
    planner: str,
    graph: str,
    sizes: str,
    alignment: int,
    in_place: bool,
    records: Any,
    total: int,
    lb: int,
    curve: list[int],
) -> dict[str, Any]:
    peak = max(curve, default=0)
    return {
        "planner": planner,
        "graph": graph,
        "sizes": sizes,
        "alignment": alignment,
        "in_place": in_place,
        "buffers": sum(1 for r in records if r.size),
        "total_bytes": total,
        "lower_bound_bytes": lb,
        "ratio_to_lower_bound": _ratio(total, lb),
        "peak_step": curve.index(peak) if curve and peak else None,
    }
