"""Text, JSON, frame files and plots of a reference analysis and of a log-vs-model cross-check."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from logscope.inert import csv_frame
from logscope.outputs import frame_file
from logscope.reference import CheckResult, ReferenceResult
from logscope.reference.frames import opt_int
from logscope.reference.rknn_weights import iter_components
from logscope.render.summary import _finding_counts, _finding_text, human_bytes
from logscope.rules import Finding

if TYPE_CHECKING:
    from matplotlib.figure import Figure

_PLANNER_LABELS = {
    "naive": "no reuse",
    "lower_bound": "lower bound (max live)",
    "greedy_by_size": "greedy by size (best fit)",
    "first_fit": "first fit, execution order",
    "rknn": "RKNN allocator emulation",
    "rknn_greedy_by_size": "greedy by size, RKNN tensors",
    "rknn_lower_bound": "lower bound, RKNN tensors",
}


def _shape(dims: Any) -> str:
    return "(" + ",".join(str(d) for d in dims) + ")"


def _millions(n: int | None) -> str:
    return "—" if n is None else f"{n:,} ({n / 1e6:.2f} M)"


def render_reference_text(result: ReferenceResult) -> str:
    s = result.summary()
    m, t, o = s["model"], s["totals"], s["options"]
    out = [
        f"{s['source']}  [onnx ir {m['ir_version']}, opset {m['opset']}]  {m['compute_ops']} compute ops, "
        f"{m['constant_nodes']} constant nodes folded",
        "  inputs "
        + ", ".join(f"{k} {_shape(v)}" for k, v in m["inputs"].items())
        + f"; dtype {o['dtype']}, target {o['target']} (C2={result.rknn.options.c2}), "
        + f"in-place {'on' if o['in_place'] else 'off'}"
        + (f", quirks {', '.join(o['quirks'])}" if o["quirks"] else ""),
        "",
        f"  {'params':<30} {_millions(t['params'])}  "
        f"[{t['params_without_bn_stats']:,} without BN running stats]",
        f"  {'weights':<30} {human_bytes(t['weight_bytes'])}  [{o['dtype']}"
        + (", int32 bias" if o["dtype"] == "int8" else "")
        + "]",
        *_rknn_weight_lines(result),
        f"  {'MACs (Conv/Gemm/MatMul)':<30} {t['macs']:,} ({t['macs'] / 1e9:.3f} G)",
        f"  {'activations':<30} {t['activation_tensors']} tensors in {t['buffers']} buffers",
        "",
        f"  {'planner':<30} {'total':<30} {'x lower bound':<14} sizes / ops",
    ]
    for row in s["plans"]:
        label = _PLANNER_LABELS.get(row["planner"], row["planner"])
        ratio = "—" if row["ratio_to_lower_bound"] is None else f"{row['ratio_to_lower_bound']:.3f}"
        graph = "one step per ONNX op" if row["graph"] == "onnx" else "RKNN fused ops"
        align = f", align {row['alignment']}" if row["alignment"] and row["alignment"] > 1 else ""
        out.append(
            f"  {label:<30} {human_bytes(row['total_bytes']):<30} {ratio:<14} {row['sizes']}, {graph}{align}"
        )
    if t["peak_step"] is not None:
        out.append(f"  lower-bound peak at step {t['peak_step']} ({t['peak_op']})")
    fusions = Counter(f["rknn_name"] for f in s["fusions"])
    out.append("")
    out.append(
        f"  fusion candidates: {t['fusion_candidates']}"
        + (" (" + ", ".join(f"{k} x{v}" for k, v in fusions.most_common()) + ")" if fusions else "")
    )
    tensors = result.frames["ref_tensors"]
    top = tensors.dropna(subset=["size_bytes"]).nlargest(3, "size_bytes")
    if len(top):
        out.append(
            "  largest activations: "
            + ", ".join(
                f"{r.name} {r.shape} {human_bytes(opt_int(r.size_bytes))}"
                for r in top.itertuples(index=False)
            )
        )
    for note in s["notes"]:
        out.append(f"  note: {note}")
    return "\n".join(out)


def _rknn_weight_lines(result: ReferenceResult) -> list[str]:
    """The predicted `Total Weight Memory Size` with its components (rknn_weights)."""
    plan = result.weights
    if plan is None:
        return []
    t = result.totals
    parts = ", ".join(f"{component} {size:,} B ({count})" for component, count, size in iter_components(plan))
    if t["rknn_weight_bytes"] is not None:
        head = human_bytes(t["rknn_weight_bytes"])
        block = f" + fixed block {plan.fixed_block:,} B" if plan.fixed_block else ""
    else:
        missing = "consts of unmodelled ops" if plan.skipped else "an unknown block"
        head = f"{human_bytes(t['rknn_weight_table_bytes'])} + {missing}"
        block = ""
    return [f"  {'RKNN weight memory':<30} {head}  [{len(plan.rows)} const rows at 64 B: {parts}{block}]"]


def render_reference_json(result: ReferenceResult) -> str:
    return json.dumps(result.summary(), indent=2, ensure_ascii=False)


def _value(v: Any) -> str:
    if v is None or v is pd.NA:
        return "—"
    return f"{int(v):,}"


def render_check_text(check: CheckResult, findings: Sequence[Finding] | None = None) -> str:
    """The side-by-side table, then (when the rules ran: `findings` is not None) the findings."""
    s = check.summary()
    out = [
        f"check {s['log']} "
        + (f"(build {s['build_index']}) " if s["build_index"] is not None else "(no build found) ")
        + f"against {s['model']}",
        f"  RKNN emulation: target {s['target']}, {s['dtype']}, quirks: {', '.join(s['quirks']) or 'none'}",
        "",
        f"  {'figure':<58} {'log':>12} {'reference':>12} {'difference':>12}  likely cause",
    ]
    for row in s["summary"]:
        diff = row["difference"]
        out.append(
            f"  {row['item']:<58} {_value(row['log_value']):>12} {_value(row['reference_value']):>12} "
            f"{('—' if diff is None else f'{diff:+,}'):>12}  {row['likely_cause'] or ''}"
            + (f" [line {row['log_line']}]" if row["log_line"] is not None else "")
        )
    tensors = s["tensors"]
    if tensors:
        by = Counter(r["matched_by"] for r in tensors if r["matched_by"])
        differing = [r for r in tensors if r["size_difference"]]
        out.append("")
        out.append(
            f"  tensors: {len(tensors)} log rows, {sum(by.values())} matched to the model "
            f"({', '.join(f'{v} by {k}' for k, v in by.items()) or 'none'}), "
            f"{len(differing)} sized differently"
        )
        for r in differing[:12]:
            out.append(
                f"    line {r['log_line']} {r['log_name']} {r['log_orig_shape']}: "
                f"log {r['log_size_bytes']:,} B, "
                f"reference {r['ref_native_bytes']:,} B — {r['likely_cause']}"
            )
        unmatched = [r for r in tensors if not r["matched_by"]]
        for r in unmatched[:6]:
            out.append(f"    line {r['log_line']} {r['log_name']}: {r['likely_cause']}")
    replay = s["replay"]
    if replay is not None:
        out.append("")
        out.append(
            f"  replay of the log's own table: {replay['reproduced']} of {replay['rows']} rows "
            f"at their logged offsets, total {replay['total_bytes']:,} B "
            f"(log {_value(replay['logged_total_bytes'])} B)"
        )
        for r in replay["differing_rows"][:8]:
            out.append(f"    line {r['line']} {r['name']} [{r['status']}]: {r['reason']}")
    missed = [f for f in s["fusions"] if f["fused_in_log"] is False]
    if missed:
        out.append("")
        out.append(f"  fusion candidates the log did not fuse: {len(missed)}")
        for f in missed[:8]:
            out.append(f"    {f['ops']} ({f['rknn_name']}): {f['note']}")
    cpu = [c for c in s["cpu_ops"] if not c["expected"]]
    if cpu:
        out.append("")
        out.append(
            "  ops the log runs on CPU: " + ", ".join(f"{c['op_type']} (line {c['line']})" for c in cpu[:10])
        )
    for note in s["notes"]:
        out.append(f"  note: {note}")
    if findings is not None:
        out.append(f"\nfindings: {_finding_counts(list(findings)) or 'none'}")
        out += [_finding_text(f) for f in findings]
    return "\n".join(out)


def render_check_json(check: CheckResult, findings: Sequence[Finding] | None = None) -> str:
    """The check's JSON contract; with `findings`, also a `findings` list as in `logscope parse`."""
    data = check.summary()
    if findings is not None:
        data["findings"] = [f.to_dict() for f in findings]
    return json.dumps(data, indent=2, ensure_ascii=False)


def write_reference_frames(frames: dict[str, pd.DataFrame], folder: Path, fmt: str) -> list[Path]:
    """Write each frame as `<name>.parquet` or `<name>.csv` into `folder`; returns the paths."""
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for name, frame in frames.items():
        path = frame_file(folder, name, fmt)
        if fmt == "csv":
            csv_frame(frame).to_csv(path, index=False)
        else:
            frame.to_parquet(path, index=False)
        written.append(path)
    return written


def reference_curves_figure(result: ReferenceResult) -> Figure:
    """Memory over ops of the planners (ONNX steps, top) and of the RKNN emulation (fused steps, bottom)."""
    from matplotlib.figure import Figure  # object API: no pyplot, no global backend switch

    curve = result.frames["ref_curve"]
    fig = Figure(figsize=(10, 7))
    top, bottom = fig.subplots(2, 1)
    for planner in ("first_fit", "greedy_by_size", "lower_bound"):  # no reuse would dwarf the others
        rows = curve[curve["planner"] == planner]
        top.step(rows["step"], rows["high_water_bytes"] / 2**20, where="mid", label=_PLANNER_LABELS[planner])
    top.set_ylabel("MiB")
    naive = result.totals["naive_bytes"] / 2**20
    top.set_title(
        f"{Path(result.source).name}: one step per ONNX op ({result.options.dtype}; no reuse {naive:.1f} MiB)"
    )
    top.legend(fontsize=8)
    for planner in ("rknn", "rknn_greedy_by_size", "rknn_lower_bound"):
        rows = curve[curve["planner"] == planner]
        bottom.step(
            rows["step"], rows["high_water_bytes"] / 2**20, where="mid", label=_PLANNER_LABELS[planner]
        )
    bottom.set_xlabel("step")
    bottom.set_ylabel("MiB")
    bottom.set_title(f"RKNN fused ops, native sizes ({result.rknn.options.target})")
    bottom.legend(fontsize=8)
    fig.tight_layout()
    return fig


def check_curves_figure(check: CheckResult) -> Figure:
    """Overlay of the log's memory over ops (its own offsets) and the reference emulation's."""
    from matplotlib.figure import Figure

    curve = check.frames["check_curve"]
    fig = Figure(figsize=(10, 4.5))
    ax = fig.subplots()
    for source, label in (("log", "log (logged offsets)"), ("reference", "reference RKNN emulation")):
        rows = curve[curve["source"] == source]
        if len(rows):
            ax.step(rows["step"], rows["high_water_bytes"] / 2**20, where="mid", label=label)
    lb = check.reference.rknn.live
    ax.step(
        range(len(lb)), [v / 2**20 for v in lb], where="mid", linestyle="--", label="reference lower bound"
    )
    ax.set_xlabel("op (execution order)")
    ax.set_ylabel("MiB high-water")
    ax.set_title(f"{Path(check.log_source).name} vs {Path(check.model_source).name}")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def plot_reference_curves(result: ReferenceResult, path: Path) -> Path:
    """`reference_curves_figure` written as a PNG."""
    reference_curves_figure(result).savefig(path, dpi=100)
    return path


def plot_check_curves(check: CheckResult, path: Path) -> Path:
    """`check_curves_figure` written as a PNG."""
    check_curves_figure(check).savefig(path, dpi=100)
    return path
