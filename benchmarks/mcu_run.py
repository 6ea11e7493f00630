"""`make bench`, MCU part: logscope on a 1,000,000-op per-operator heap trace against a plain regex scanner.

1. Generates (or reuses, from benchmarks/out/) the trace (benchmarks/mcu_generate.py): 500 inferences of
   a 2,000-op network, a baseline line per inference, application prints between ops.
2. Throughput, in this one process: the per-line regex scanner (benchmarks/mcu_baseline.py `scan`) and
   `logscope.parse`, interleaved, best of N each; MB/s of both and their ratio. For reference also
   `scan_peaks` (the scanner plus int conversion and a per-run peak: what a user's script computes).
3. Agreement: op rows (generated / scanner / logscope), and every run's peak (generator / scan_peaks /
   logscope's `mcu_memory.peak_bytes`).
4. Peak memory of `logscope.parse` and of the scanner, each in a fresh child process (VmHWM).

Figures are printed and written to benchmarks/out/mcu-results.json. Nothing is asserted on timings; the
exit status is 1 only if logscope failed or disagreed with the generator.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import traceback
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run as `python benchmarks/mcu_run.py`
    sys.path.insert(0, str(ROOT))

from benchmarks.mcu_baseline import scan, scan_peaks  # noqa: E402
from benchmarks.mcu_generate import GENERATOR_VERSION, generate_trace  # noqa: E402
from benchmarks.run import interleaved, machine, run_child  # noqa: E402

OUT = ROOT / "benchmarks" / "out"
WARM_UP = ROOT / "fixtures" / "synthetic" / "heap-trace-issue-example.txt"

_CHILD = r"""
import gc, json, sys, time
def hwm_kb():
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return -1
path, which, warm = sys.argv[1], sys.argv[2], sys.argv[3]
if which == "logscope":
    import logscope
    fn = logscope.parse
else:
    from benchmarks.mcu_baseline import scan as fn
fn(warm)
gc.collect()
before = hwm_kb()
t0 = time.perf_counter()
fn(path)
seconds = time.perf_counter() - t0
print(json.dumps({"rss_before_kb": before, "rss_peak_kb": hwm_kb(), "seconds": seconds}))
"""


def cached_trace(ops: int, ops_per_run: int, seed: int) -> tuple[Path, dict[str, Any]]:
    name = f"mcu-heap-{ops}ops-{ops_per_run}per-run-seed{seed}"
    path, meta_path = OUT / f"{name}.txt", OUT / f"{name}.meta.json"
    key = {"generator_version": GENERATOR_VERSION, "ops": ops, "ops_per_run": ops_per_run, "seed": seed}
    if path.is_file() and meta_path.is_file():
        meta = json.loads(meta_path.read_text())
        if meta.get("key") == key and path.stat().st_size == meta["stats"]["bytes"]:
            return path, meta["stats"]
    print(f"generating {path.relative_to(ROOT)} ...", flush=True)
    t0 = time.perf_counter()
    stats = generate_trace(path, ops, ops_per_run, seed)
    stats["generate_seconds"] = round(time.perf_counter() - t0, 2)
    meta_path.write_text(json.dumps({"key": key, "stats": stats}))
    return path, stats


def child_peak(path: Path, which: str) -> dict[str, Any]:
    return run_child(_CHILD, [str(path), which, str(WARM_UP)])


def throughput(path: Path, stats: dict[str, Any], repeat: int) -> dict[str, Any]:
    mb = stats["bytes"] / 1e6
    res: dict[str, Any] = {"file": str(path.relative_to(ROOT)), "mb": round(mb, 2)}
    import logscope

    logscope.parse(WARM_UP)  # imports pandas, compiles the grammars: outside the timed runs
    runs = interleaved(
        {
            "baseline": lambda: scan(path),
            "baseline_peaks": lambda: scan_peaks(path),
            "logscope": lambda: logscope.parse(path),
        },
        repeat,
    )
    for name, (times, _) in runs.items():
        res[name] = {"best_s": min(times), "runs_s": times, "mb_per_s": mb / min(times)}
    counts = runs["baseline"][1]
    peaks_scanned = runs["baseline_peaks"][1]
    log = runs["logscope"][1]
    res["ratio"] = res["logscope"]["mb_per_s"] / res["baseline"]["mb_per_s"]
    res["ratio_vs_baseline_peaks"] = res["logscope"]["mb_per_s"] / res["baseline_peaks"]["mb_per_s"]
    memory = log.frames["mcu_memory"]
    logscope_peaks = [int(v) for v in memory["peak_bytes"]]
    res["rows"] = {
        "ops": {"generated": stats["ops"], "baseline": counts["op"], "logscope": len(log.frames["ops"])},
        "runs": {"generated": stats["runs"], "baseline": counts["baseline"], "logscope": len(memory)},
        "unparsed": {"generated": stats["app_prints"], "logscope": log.line_counts["unparsed"]},
    }
    res["peaks_agree"] = {
        "generator_vs_logscope": stats["peaks"] == logscope_peaks,
        "generator_vs_scan_peaks": stats["peaks"] == peaks_scanned,
        "max_peak_bytes": max(stats["peaks"]),
    }
    res["logscope"]["line_counts"] = dict(log.line_counts)
    res["logscope"]["frames"] = {k: len(v) for k, v in log.frames.items() if len(v)}
    return res


def report(results: dict[str, Any]) -> None:
    m, t, s = results["machine"], results["throughput"], results["input"]
    print()
    print(f"logscope MCU benchmark  {m['date']}  {m['cpu']}  nproc={m['nproc']}  Python {m['python']}")
    print(f"input  {t['file']}: {t['mb']:.2f} MB, {s['lines']:,} lines, {s['ops']:,} ops in {s['runs']} runs")
    print()
    print(f"  {'':30}{'best s':>9}{'MB/s':>9}   runs (s)")
    for name, label in (
        ("baseline", "regex scan (groupdict)"),
        ("baseline_peaks", "regex scan + int + peaks"),
        ("logscope", "logscope.parse"),
    ):
        r = t[name]
        print(
            f"  {label:30}{r['best_s']:9.3f}{r['mb_per_s']:9.1f}   "
            + ", ".join(f"{x:.3f}" for x in r["runs_s"])
        )
    print(f"  ratio logscope / regex scan            = {t['ratio']:.2f}")
    print(f"  ratio logscope / regex scan + peaks    = {t['ratio_vs_baseline_peaks']:.2f}")
    print()
    for name, row in t["rows"].items():
        print(f"  {name:10} " + "  ".join(f"{k} {v:,}" for k, v in row.items()))
    print(f"  peaks agree: {t['peaks_agree']}")
    mem = results.get("memory")
    if mem:
        for which in ("logscope", "baseline"):
            e = mem[which]
            if "error" in e:
                print(f"  {which}: peak memory ERROR")
            else:
                print(
                    f"  {which:10} peak RSS {e['rss_peak_kb'] / 1024:8.1f} MB, "
                    f"parse RSS {e['parse_rss_kb'] / 1024:8.1f} MB"
                )
    print(f"\nresults: {results['results_file']}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="logscope MCU heap-trace benchmark (make bench)")
    ap.add_argument("--ops", type=int, default=1_000_000)
    ap.add_argument("--ops-per-run", type=int, default=2000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-memory", action="store_true")
    args = ap.parse_args(argv)
    OUT.mkdir(parents=True, exist_ok=True)
    t_start = time.perf_counter()
    path, stats = cached_trace(args.ops, args.ops_per_run, args.seed)
    results: dict[str, Any] = {
        "machine": machine(),
        "input": {k: v for k, v in stats.items() if k != "peaks"},
    }
    failed = False
    try:
        results["throughput"] = throughput(path, stats, args.repeat)
        agree = results["throughput"]["peaks_agree"]
        failed = not agree["generator_vs_logscope"]
    except Exception:
        results["throughput"] = {"error": traceback.format_exc()}
        print(results["throughput"]["error"])
        failed = True
    if not args.no_memory:
        results["memory"] = {
            "logscope": child_peak(path, "logscope"),
            "baseline": child_peak(path, "baseline"),
        }
    results["settings"] = {"repeat": args.repeat}
    results["wall_seconds"] = round(time.perf_counter() - t_start, 1)
    results["machine"]["loadavg_at_end"] = os.getloadavg() if hasattr(os, "getloadavg") else None
    results_file = OUT / "mcu-results.json"
    results["results_file"] = str(results_file.relative_to(ROOT))
    results_file.write_text(json.dumps(results, indent=2, default=str))
    if "error" not in results["throughput"]:
        report(results)
    print(f"total wall time {results['wall_seconds']} s")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
