"""`make bench` (reference part): the ONNX reference analysis of DenseNet-121, all planners included.

DenseNet-121 is the largest of the onnx wheel's light models: 1,746 nodes (668 compute ops after
constant folding, 1,078 constant nodes), 669 activations. The analysis runs everything
`logscope reference` does: safe load, shape inference, costs, lifetimes, the no-reuse / lower-bound /
greedy-by-size / first-fit planners, fusion candidates, the RKNN emulation and all frames.

Baseline, measured in the same process on the same file: `onnx.load` + `onnx.shape_inference.infer_shapes`
(data_prop=True), the floor any ONNX-based analysis pays before doing anything of its own. Each figure is
the best of N runs, the two interleaved. Nothing is asserted on timings: the figures are printed and
written to benchmarks/out/reference_results.json; a missed target prints MISSED and the exit status
stays 0 (1 only if the analysis itself fails).
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
import traceback
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run as `python benchmarks/reference_bench.py`
    sys.path.insert(0, str(ROOT))

import onnx  # noqa: E402

from logscope.reference import ReferenceOptions, analyze_model  # noqa: E402

OUT = ROOT / "benchmarks" / "out"
LIGHT = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light"
TARGET_SECONDS = 10.0  # "seconds, not minutes" for DenseNet-121 with every planner


def baseline(path: Path) -> None:
    model = onnx.load(path)
    onnx.shape_inference.infer_shapes(model, check_type=False, strict_mode=False, data_prop=True)


def timed(fn: Any) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def phases(path: Path, clock: Any = time.perf_counter) -> dict[str, float]:
    """Seconds per stage of one analysis (for the breakdown only; the headline is end to end), by
    `clock` (wall time; `time.process_time` for CPU time)."""
    from logscope.reference.analyzer import _frames
    from logscope.reference.costs import activation_bytes, op_costs
    from logscope.reference.fusion import find_fusions
    from logscope.reference.graph import build_graph
    from logscope.reference.lifetimes import tensor_lifetimes
    from logscope.reference.loader import load_model
    from logscope.reference.planners import lower_bound, plan_first_fit, plan_greedy_by_size, plan_naive
    from logscope.reference.rknn import RknnOptions, emulate_rknn

    out: dict[str, float] = {}
    t = clock()
    model = load_model(path)
    out["load (safe)"] = clock() - t
    t = clock()
    graph = build_graph(model)
    out["classify + shape inference"] = clock() - t
    t = clock()
    costs = op_costs(graph, "fp32")
    lifetimes = tensor_lifetimes(graph, lambda x: activation_bytes(x, "fp32"))
    out["costs + lifetimes"] = clock() - t
    recs = lifetimes.records
    t = clock()
    plans = {
        "naive": plan_naive(recs),
        "greedy_by_size": plan_greedy_by_size(recs),
        "first_fit": plan_first_fit(recs),
    }
    lower_bound(recs)
    out["planners (naive, lower bound, greedy, first fit)"] = clock() - t
    t = clock()
    fusions = find_fusions(graph)
    rknn = emulate_rknn(graph, fusions, RknnOptions())
    out["fusions + RKNN emulation"] = clock() - t
    t = clock()
    _frames(graph, costs, fusions, lifetimes, plans, rknn, ReferenceOptions(dtype="fp32"))
    out["frames"] = clock() - t
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    path = LIGHT / "light_densenet121.onnx"
    options = ReferenceOptions(dtype="fp32")
    try:
        analyze_model(path, options)  # warm-up: imports, onnx's C++ schemas
        baseline(path)
        base_runs, ref_runs = [], []
        for _ in range(args.runs):
            base_runs.append(timed(lambda: baseline(path)))
            ref_runs.append(timed(lambda: analyze_model(path, options)))
        result = analyze_model(path, options)
        breakdown = phases(path)
        light = {}
        for model in sorted(LIGHT.glob("light_*.onnx")):
            light[model.stem] = round(timed(lambda m=model: analyze_model(m, options)), 4)
    except Exception:
        traceback.print_exc()
        return 1
    best_ref, best_base = min(ref_runs), min(base_runs)
    t = result.totals
    figures = {
        "model": path.name,
        "nodes": t["compute_ops"] + t["constant_nodes"],
        "compute_ops": t["compute_ops"],
        "activations": t["activation_tensors"],
        "analysis_seconds_best": round(best_ref, 4),
        "baseline_seconds_best": round(best_base, 4),
        "ratio_to_baseline": round(best_ref / best_base, 2),
        "runs": args.runs,
        "breakdown_seconds": {k: round(v, 4) for k, v in breakdown.items()},
        "all_nine_light_models_seconds": light,
        "lower_bound_bytes": t["lower_bound_bytes"],
        "greedy_bytes": t["greedy_bytes"],
        "python": platform.python_version(),
        "onnx": onnx.__version__,
        "machine": platform.machine(),
    }
    status = "ok" if best_ref <= TARGET_SECONDS else "MISSED"
    print(
        f"reference analysis of {path.name}: {figures['nodes']} nodes, {figures['activations']} activations"
    )
    print(f"  logscope reference (all planners)  {best_ref:8.3f} s   best of {args.runs}")
    print(f"  baseline onnx.load + infer_shapes  {best_base:8.3f} s")
    ratio = best_ref / best_base
    print(
        f"  ratio                              {ratio:8.2f} x   (target: < {TARGET_SECONDS:.0f} s: {status})"
    )
    for stage, seconds in breakdown.items():
        print(f"    {stage:<48} {seconds:8.4f} s")
    print(f"  nine light models, one run each: {sum(light.values()):.3f} s")
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "reference_results.json").write_text(json.dumps(figures, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
