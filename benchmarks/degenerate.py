"""`make bench`, degenerate input: throughput per byte on inputs built to be slow, against real logs.

Inputs (generated into benchmarks/out/, reused):
- real: the verbose RKNN build log fixtures/rknn/09-... repeated to ~8 MB (a real log's mix of tables,
  messages and noise) — the baseline, measured in the same run;
- one-word messages: 1,000,000 lines `I x` (4 MB): every line a message row, the least bytes per row;
- many ops: a per-op heap trace of 300,000 ops (17 MB) in one inference;
- one long line: a single 50 MB message line.

For each: `logscope.parse` CPU seconds (best of 2, `time.process_time`), MB/s, and the ratio real MB/s ÷
its MB/s (target: at most 3); then the peak RSS of the parse in a fresh child process (VmHWM minus the
RSS after imports) as a multiple of the file size. Figures go to benchmarks/out/degenerate-results.json.
Nothing is asserted on timings: a missed target prints MISSED.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "out"
REAL = ROOT / "fixtures" / "rknn" / "09-build-verbose-mobilenetv1-rv1106-tk2-1.5.2-simulator.log"
RATIO_TARGET = 3.0

_CHILD = r"""
import json, sys
def hwm():
    for line in open("/proc/self/status"):
        if line.startswith(("VmHWM", "VmRSS")):
            yield line.split()[0], int(line.split()[1])
import logscope.api
before = dict(hwm())["VmRSS:"]
logscope.api.parse(sys.argv[1])
print(json.dumps({"rss_before_kb": before, "rss_peak_kb": dict(hwm())["VmHWM:"]}))
"""


def inputs() -> dict[str, Path]:
    OUT.mkdir(parents=True, exist_ok=True)
    made = {
        "real (09 repeated)": OUT / "degenerate-real.log",
        "1,000,000 `I x` lines": OUT / "degenerate-one-word.log",
        "300,000-op heap trace": OUT / "degenerate-heap.txt",
        "one 50 MB line": OUT / "degenerate-long-line.log",
    }
    paths = list(made.values())
    if not paths[0].exists():
        text = REAL.read_text(encoding="utf-8")
        paths[0].write_text(text * (8_000_000 // len(text)), encoding="utf-8")
    if not paths[1].exists():
        paths[1].write_text("I x\n" * 1_000_000, encoding="utf-8")
    if not paths[2].exists():
        with paths[2].open("w", encoding="utf-8") as out:
            out.write("[    0.004] RAM budget: 65536 B\n[    0.120] heap baseline: 33000 B\n")
            total = 33000
            for i in range(300_000):
                delta = (1200, -1200, 0)[i % 3]
                total += delta
                out.write(f"[ {i / 1000:9.3f}] Op[{i}] Conv2D: delta={delta} B, total={total} B\n")
    if not paths[3].exists():
        paths[3].write_text("I " + "x" * 50_000_000 + "\n", encoding="utf-8")
    return made


def cpu_seconds(path: Path, repeat: int = 2) -> float:
    from logscope.api import parse

    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        parse(path)
        best = min(best, time.process_time() - start)
    return best


def peak(path: Path) -> dict[str, Any]:
    proc = subprocess.run(
        [sys.executable, "-c", _CHILD, str(path)], capture_output=True, text=True, check=False
    )
    if proc.returncode != 0:
        return {"error": proc.stderr.strip()[-2000:]}
    out: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    out["parse_rss_mb"] = round((out["rss_peak_kb"] - out["rss_before_kb"]) / 1024, 1)
    return out


def main() -> int:
    sys.path.insert(0, str(ROOT))
    results: dict[str, Any] = {}
    baseline = None
    print(f"{'input':<26} {'MB':>7} {'CPU s':>7} {'MB/s':>7} {'real/this':>10} {'peak MB':>8} {'x size':>7}")
    for label, path in inputs().items():
        mb = path.stat().st_size / 1e6
        seconds = cpu_seconds(path)
        rate = mb / seconds
        baseline = baseline or rate
        memory = peak(path)
        ratio = baseline / rate
        multiple = memory.get("parse_rss_mb", float("nan")) / mb
        verdict = "" if ratio <= RATIO_TARGET else "  MISSED (target <= 3)"
        print(
            f"{label:<26} {mb:>7.1f} {seconds:>7.2f} {rate:>7.2f} {ratio:>10.2f} "
            f"{memory.get('parse_rss_mb', float('nan')):>8.1f} {multiple:>7.1f}{verdict}"
        )
        results[label] = {
            "file": str(path.relative_to(ROOT)),
            "mb": round(mb, 2),
            "cpu_seconds": round(seconds, 3),
            "mb_per_s": round(rate, 3),
            "ratio_real_over_this": round(ratio, 2),
            "peak": memory,
            "peak_multiple_of_size": round(multiple, 2),
        }
    (OUT / "degenerate-results.json").write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
