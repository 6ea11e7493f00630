"""Generate a large per-operator heap trace (`Op[i] NAME: delta=…, total=…`) for `make bench`.

The trace is what a UART capture of a long soak test looks like: `runs` inferences of the same network
of `ops_per_run` operators, each inference opening with a `heap baseline:` line and closing with the
application's own result print, plus an application print between ops every ~`print_every` lines
(logscope counts those as unparsed). Op names are TFLite builtin ops; each op's delta is drawn from a
seeded RNG (allocations for conv-like ops, frees for pools and reshapes, zero for in-place ops) and
the total is the running sum, so the peak of every run is known exactly and written to the metadata.
One run in ten prints KiB with two decimals instead of bytes (logscope's unit handling is timed too;
those runs' peaks are recorded in bytes as logscope computes them: round(KiB * 1024)).

Usage: python benchmarks/mcu_generate.py OUT.txt [--ops 1000000] [--ops-per-run 2000] [--seed 0]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path
from typing import Any

GENERATOR_VERSION = 1
OPS = (
    ("CONV_2D", 1.0),
    ("DEPTHWISE_CONV_2D", 1.0),
    ("ADD", 0.3),
    ("AVERAGE_POOL_2D", -1.0),
    ("MAX_POOL_2D", -1.0),
    ("RESHAPE", 0.0),
    ("FULLY_CONNECTED", 0.5),
    ("SOFTMAX", 0.1),
    ("CONCATENATION", 0.6),
    ("QUANTIZE", 0.0),
)


def _kib(value: int, signed: bool = False) -> str:
    text = f"{abs(value) / 1024:.2f}KiB"
    if not signed:
        return text
    return ("+" if value > 0 else "-" if value < 0 else "") + text


def generate_trace(
    path: Path, ops: int = 1_000_000, ops_per_run: int = 2000, seed: int = 0, print_every: int = 97
) -> dict[str, Any]:
    """Write the trace; return its statistics (including the expected peak of every run)."""
    rng = random.Random(seed)
    network = [OPS[rng.randrange(len(OPS))] for _ in range(ops_per_run)]
    runs = -(-ops // ops_per_run)
    peaks: list[int] = []
    lines_written = prints = 0
    with path.open("w", encoding="utf-8", newline="\n") as fh:
        fh.write("STM32H743 soak test, build 2024-03-14, heap trace on\n")
        fh.write("RAM budget: 262144 B\n")
        lines_written = 2
        emitted = 0
        for run in range(runs):
            kib = run % 10 == 9
            baseline = 40_000 + rng.randrange(0, 4096)
            total = baseline
            fh.write(f"heap baseline: {_kib(baseline) if kib else f'{baseline} B'}\n")
            lines_written += 1
            peak = -1
            count = min(ops_per_run, ops - emitted)
            for index in range(count):
                name, bias = network[index]
                if bias > 0:
                    delta = int(rng.randrange(0, 24_000) * bias)
                elif bias < 0:
                    delta = -min(total - 20_000, rng.randrange(0, 24_000)) if total > 20_000 else 0
                else:
                    delta = 0
                if total + delta > 250_000:  # the app frees intermediate buffers before the next op
                    delta = -(total - baseline) // 2
                total += delta
                if kib:
                    shown = round(round(total / 1024, 2) * 1024)
                    fh.write(f"Op[{index}] {name}: delta={_kib(delta, True)}, total={_kib(total)}\n")
                else:
                    shown = total
                    sign = "+" if delta > 0 else ""
                    fh.write(f"Op[{index}] {name}: delta={sign}{delta}, total={total}\n")
                peak = max(peak, shown)
                lines_written += 1
                if lines_written % print_every == 0:
                    fh.write(f"[app] watchdog kick {lines_written}\n")
                    lines_written += 1
                    prints += 1
            emitted += count
            peaks.append(peak)
            fh.write(f"[app] inference {run} done: class={rng.randrange(10)}\n")
            lines_written += 1
            prints += 1
    return {
        "bytes": path.stat().st_size,
        "lines": lines_written,
        "ops": emitted,
        "runs": runs,
        "ops_per_run": ops_per_run,
        "app_prints": prints + 1,  # and the banner line
        "peaks": peaks,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--ops", type=int, default=1_000_000)
    ap.add_argument("--ops-per-run", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    stats = generate_trace(args.out, args.ops, args.ops_per_run, args.seed)
    stats.pop("peaks")
    json.dump(stats, sys.stdout, indent=2)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
