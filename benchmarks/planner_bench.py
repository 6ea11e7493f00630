"""`make bench` (planner part): the reference planners and `logscope reference` on long chains.

A chain of N `Relu` ops (N activations of 1x64x8x8 fp32, each live for two steps) is the worst case
of the old greedy-by-size planner, which checked every placed record for a time conflict (O(N²):
10,000 ops took 13 s in `logscope reference`). The planner now asks an interval index for the
conflicting records only.

Baseline, measured in the same run on the same records: that all-pairs planner
(`tests/planner_reference.py`, identical offsets) at N = 5,000 and 10,000. Figures are CPU seconds
(`time.process_time`), best of `--runs`, the stage breakdown of the whole analysis too
(`benchmarks/reference_bench.phases` with that clock). Nothing is asserted on timings: figures are printed
and written to benchmarks/out/planner_results.json; a missed target prints MISSED, the exit status
stays 0 (1 only if a planner disagrees with the baseline or the analysis fails).
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run as `python benchmarks/planner_bench.py`
    sys.path.insert(0, str(ROOT))

import onnx  # noqa: E402
from onnx import TensorProto, helper  # noqa: E402

from benchmarks.reference_bench import phases  # noqa: E402
from logscope.reference import ReferenceOptions, analyze_model  # noqa: E402
from logscope.reference.planners import Record, plan_first_fit, plan_greedy_by_size  # noqa: E402
from tests.planner_reference import greedy_all_pairs  # noqa: E402

OUT = ROOT / "benchmarks" / "out"
TARGET_SECONDS = 5.0  # greedy-by-size (both runs `reference` makes) on a 200,000-op chain
BASELINE_SIZES = (5_000, 10_000)
SIZES = (10_000, 50_000, 200_000)


def chain_model(n: int, path: Path) -> Path:
    """An ONNX model of `n` Relu ops in a chain."""
    nodes, prev = [], "x"
    for i in range(n):
        out = f"t{i}" if i < n - 1 else "y"
        nodes.append(helper.make_node("Relu", [prev], [out], name=f"relu{i}"))
        prev = out
    shape = [1, 64, 8, 8]
    graph = helper.make_graph(
        nodes,
        "chain",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)],
    )
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)
    return path


def chain_records(n: int) -> list[Record]:
    """What `tensor_lifetimes` makes of the chain: tensor i produced at step i, read at step i + 1."""
    return [Record(f"t{i}", 16384, i, i + 1) for i in range(n)]


def cpu(fn: Callable[[], Any], runs: int) -> tuple[float, Any]:
    best, result = float("inf"), None
    for _ in range(runs):
        start = time.process_time()
        result = fn()
        best = min(best, time.process_time() - start)
    return best, result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=2)
    args = parser.parse_args()
    figures: dict[str, Any] = {"planners_cpu_seconds": {}, "baseline_all_pairs_cpu_seconds": {}}
    try:
        for n in BASELINE_SIZES:
            records = chain_records(n)
            old, old_plan = cpu(lambda r=records: greedy_all_pairs(r), 1)
            new, new_plan = cpu(lambda r=records: plan_greedy_by_size(r), args.runs)
            if old_plan != new_plan:
                print(f"greedy_by_size differs from the all-pairs planner at n={n}")
                return 1
            figures["baseline_all_pairs_cpu_seconds"][n] = round(old, 3)
            figures["planners_cpu_seconds"].setdefault(n, {})["greedy_by_size"] = round(new, 4)
            figures.setdefault("speedup_vs_all_pairs", {})[n] = round(old / new, 1)
        for n in SIZES:
            records = chain_records(n)
            row = figures["planners_cpu_seconds"].setdefault(n, {})
            row["greedy_by_size"] = round(cpu(lambda r=records: plan_greedy_by_size(r), args.runs)[0], 4)
            row["first_fit"] = round(cpu(lambda r=records: plan_first_fit(r), args.runs)[0], 4)
        with tempfile.TemporaryDirectory() as tmp:
            whole: dict[int, Any] = {}
            for n in (10_000, 200_000):
                model = chain_model(n, Path(tmp) / f"chain{n}.onnx")
                seconds, result = cpu(lambda m=model: analyze_model(m, ReferenceOptions(dtype="fp32")), 1)
                whole[n] = {
                    "reference_cpu_seconds": round(seconds, 2),
                    "greedy_bytes": result.totals["greedy_bytes"],
                    "stages_cpu_seconds": {
                        k: round(v, 3) for k, v in phases(model, time.process_time).items()
                    },
                }
            figures["reference_chain"] = whole
    except Exception:
        traceback.print_exc()
        return 1
    figures |= {"python": platform.python_version(), "machine": platform.machine()}
    greedy_200k = figures["planners_cpu_seconds"][200_000]["greedy_by_size"]
    status = "ok" if 2 * greedy_200k <= TARGET_SECONDS else "MISSED"
    print("greedy-by-size on a chain, CPU seconds (baseline: the all-pairs planner, same records)")
    for n in BASELINE_SIZES:
        base = figures["baseline_all_pairs_cpu_seconds"][n]
        new = figures["planners_cpu_seconds"][n]["greedy_by_size"]
        print(f"  n={n:>7,}  all-pairs {base:8.3f} s   interval index {new:8.4f} s   {base / new:7.1f} x")
    for n in SIZES:
        row = figures["planners_cpu_seconds"][n]
        print(f"  n={n:>7,}  greedy {row['greedy_by_size']:8.4f} s   first fit {row['first_fit']:8.4f} s")
    print(
        f"  reference runs greedy twice (generic + RKNN emulation): {2 * greedy_200k:.2f} s at 200,000 ops "
        f"(target <= {TARGET_SECONDS:.0f} s: {status})"
    )
    for n, row in figures["reference_chain"].items():
        print(f"  logscope reference, {n:,}-op chain: {row['reference_cpu_seconds']:.2f} s CPU")
        for stage, seconds in row["stages_cpu_seconds"].items():
            print(f"    {stage:<48} {seconds:8.3f} s")
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "planner_results.json").write_text(json.dumps(figures, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
