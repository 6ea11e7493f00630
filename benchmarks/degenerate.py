"""`make bench`, degenerate input: throughput per byte on inputs built to be slow, against real logs.

Inputs (generated into benchmarks/out/, reused; each starts with what makes it a log of its family, so
detection accepts it):
- real RKNN: the verbose RKNN build log fixtures/rknn/09-... repeated to ~8 MB (a real log's mix of
  tables, messages and noise), the baseline of the RKNN inputs, measured in the same run;
- real MCU: the TFLite Micro logs of fixtures/tflm-corpus/ (the real interpreter's output) one after
  the other, repeated to ~8 MB: the baseline of the MCU inputs (the MCU grammar is slower per byte on
  real logs: many of its terminals look for a word anywhere in the line);
- one-word messages: a toolkit banner, then 1,000,000 lines `I x` (4 MB): every line a message row, the
  fewest bytes per row; and 1,000,000 lines of distinct words under all four levels (`D w0`, `I w1`, ...),
  so nothing is the same from line to line; and 1,000,000 one-word lines after a heap trace's head (an
  MCU log: no terminal reads them, each is an unparsed row);
- many ops: a per-op heap trace of 1,000,000 ops (57 MB) in one inference;
- one long line: a toolkit banner, then a single 200 MB message line;
- blank runs: 256 lines of 16 KB (the longest line the lexer reads) shaped as the ones that made
  terminals backtrack, a blank run ending in a stray character, bare and behind each logger prefix;
  once after a toolkit banner (RKNN grammar), once after a heap trace's first lines (MCU grammar);
- blank runs at the bound: 4,096 lines each holding a run of `MAX_BLANK_RUN` blanks (the longest run
  the lexers read; a longer one leaves the line unparsed at once), same shapes, both grammars: what a
  line of blanks costs when every terminal still has to walk it;
- a 300 KB heap-trace line: a heap trace whose op line grew a 300 KB blank run before its name (a fuzz
  case that took 19 s when the HEAP_OP terminal backtracked), then 10,000 ordinary ops.

For each: `logscope.parse` CPU seconds (best of 2, of 5 for the real logs, one run for inputs over
100 MB, `time.process_time`), MB/s, the ratio real RKNN MB/s ÷ its MB/s, and the ratio of its own
family's real log (the target, at most 3: degenerate input must not read much slower than real input
of the same format); then the peak RSS of the parse in a fresh child process (VmHWM minus the RSS after
imports) as a multiple of the file size. Figures go to benchmarks/out/degenerate-results.json. Nothing
is asserted on timings: a missed target prints MISSED.

Usage: python benchmarks/degenerate.py [--only WORD]   (inputs whose label contains WORD)
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
REAL_MCU = ROOT / "fixtures" / "tflm-corpus"
RATIO_TARGET = 3.0
# logscope.parsers.grammar.MAX_BLANK_RUN, not imported: the inputs are made before logscope is loaded
MAX_BLANK_RUN = 1024

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


BANNER = "W __init__: rknn-toolkit2 version: 1.5.2+b642f30c\n"
HEAP_HEAD = "[    0.004] RAM budget: 65536 B\n[    0.120] heap baseline: 33000 B\n"
# Blank runs ending in a stray character, bare and behind the prefixes the grammars know (RKNN native
# and toolkit loggers, ESP-IDF), and after the starts of the terminals that backtracked on them.
_BLANK_RUN_STARTS = (
    "",
    "D RKNN: [15:13:15.953] ",
    "I ",
    "I (12) x: ",
    "    Total Memory: 11",
    "Op[1] ",
    "\t",
)


def _heap_ops(out: Any, count: int, start: int = 0) -> None:
    total = 33000
    for i in range(start, start + count):
        delta = (1200, -1200, 0)[i % 3]
        total += delta
        out.write(f"[ {i / 1000:9.3f}] Op[{i}] Conv2D: delta={delta} B, total={total} B\n")


def inputs() -> dict[str, tuple[Path, str]]:
    """{label: (file, family)}; the two real logs first, as each family's baseline."""
    OUT.mkdir(parents=True, exist_ok=True)
    made = {
        "real RKNN (09 repeated)": OUT / "degenerate-real.log",
        "real MCU (TFLM corpus)": OUT / "degenerate-real-mcu.txt",
        "1,000,000 `I x` lines": OUT / "degenerate-one-word-v2.log",
        "1,000,000 lines, distinct words": OUT / "degenerate-distinct-words.log",
        "1,000,000 one-word lines (MCU)": OUT / "degenerate-one-word-mcu.txt",
        "1,000,000-op heap trace": OUT / "degenerate-heap-1m.txt",
        "one 200 MB line": OUT / "degenerate-long-line-200mb.log",
        "256 blank-run lines (RKNN)": OUT / "degenerate-blank-runs.log",
        "256 blank-run lines (MCU)": OUT / "degenerate-blank-runs-mcu.txt",
        "4,096 lines, 1,024-blank run (RKNN)": OUT / "degenerate-blank-bound.log",
        "4,096 lines, 1,024-blank run (MCU)": OUT / "degenerate-blank-bound-mcu.txt",
        "300 KB heap-trace line": OUT / "degenerate-heap-long-line.txt",
    }
    (
        real,
        real_mcu,
        one_word,
        distinct,
        one_word_mcu,
        heap,
        long_line,
        blank_runs,
        blank_runs_mcu,
        bound,
        bound_mcu,
        heap_long,
    ) = made.values()
    if not real.exists():
        text = REAL.read_text(encoding="utf-8")
        real.write_text(text * (8_000_000 // len(text)), encoding="utf-8")
    if not real_mcu.exists():
        text = "".join(p.read_text(encoding="utf-8") for p in sorted(REAL_MCU.glob("*.txt")))
        real_mcu.write_text(text * max(1, 8_000_000 // len(text)), encoding="utf-8")
    if not one_word.exists():
        one_word.write_text(BANNER + "I x\n" * 1_000_000, encoding="utf-8")
    if not distinct.exists():
        levels = "DIWE"
        distinct.write_text(
            BANNER + "".join(f"{levels[i % 4]} w{i}\n" for i in range(1_000_000)), encoding="utf-8"
        )
    if not one_word_mcu.exists():
        one_word_mcu.write_text(
            HEAP_HEAD + "".join(f"w{i % 1000}\n" for i in range(1_000_000)), encoding="utf-8"
        )
    if not heap.exists():
        with heap.open("w", encoding="utf-8") as out:
            out.write(HEAP_HEAD)
            _heap_ops(out, 1_000_000)
    if not long_line.exists():
        with long_line.open("w", encoding="utf-8") as out:
            out.write(BANNER + "I ")
            for _ in range(200):
                out.write("x" * 1_000_000)
            out.write("\n")
    lines = [(start + " " * 16_384)[:16_383] + "x" for start in _BLANK_RUN_STARTS] * 37
    for path, head in ((blank_runs, BANNER), (blank_runs_mcu, HEAP_HEAD)):
        if not path.exists():
            path.write_text(head + "\n".join(lines[:256]) + "\n", encoding="utf-8")
    run = " " * MAX_BLANK_RUN
    at_bound = [start + run + "x" for start in _BLANK_RUN_STARTS] * 586
    for path, head in ((bound, BANNER), (bound_mcu, HEAP_HEAD)):
        if not path.exists():
            path.write_text(head + "\n".join(at_bound[:4096]) + "\n", encoding="utf-8")
    if not heap_long.exists():
        with heap_long.open("w", encoding="utf-8") as out:
            out.write(HEAP_HEAD)
            out.write("[    0.121] Op[0]" + " " * 300_000 + "Conv2D: delta=+ B, total=x\n")
            _heap_ops(out, 10_000, start=1)
    mcu = {"real MCU (TFLM corpus)", "1,000,000-op heap trace", "300 KB heap-trace line"}
    return {
        label: (path, "mcu" if label in mcu or "(MCU)" in label else "rknn") for label, path in made.items()
    }


def cpu_seconds(path: Path, repeat: int = 2) -> float:
    from logscope.api import parse

    if path.stat().st_size > 100_000_000:
        repeat = 1
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


def main(argv: list[str] | None = None) -> int:
    sys.path.insert(0, str(ROOT))
    args = sys.argv[1:] if argv is None else argv
    only = args[args.index("--only") + 1] if "--only" in args[:-1] else ""
    results: dict[str, Any] = {}
    baselines: dict[str, float] = {}
    print(
        f"{'input':<36} {'MB':>6} {'CPU s':>6} {'MB/s':>6} {'RKNN real/this':>14} {'family real/this':>16} "
        f"{'peak MB':>7} {'x size':>6}"
    )
    for label, (path, family) in inputs().items():
        real = label.startswith("real")
        if only and only not in label and not real:
            continue
        mb = path.stat().st_size / 1e6
        seconds = cpu_seconds(path, repeat=5 if real else 2)  # a baseline too slow flatters every ratio
        rate = mb / seconds
        if real:
            baselines[family] = rate
        memory = peak(path)
        ratio, own = baselines["rknn"] / rate, baselines[family] / rate
        multiple = memory.get("parse_rss_mb", float("nan")) / mb
        verdict = "" if own <= RATIO_TARGET else "  MISSED (target <= 3)"
        print(
            f"{label:<36} {mb:>6.1f} {seconds:>6.2f} {rate:>6.2f} {ratio:>14.2f} {own:>16.2f} "
            f"{memory.get('parse_rss_mb', float('nan')):>7.1f} {multiple:>6.1f}{verdict}"
        )
        results[label] = {
            "file": str(path.relative_to(ROOT)),
            "family": family,
            "mb": round(mb, 2),
            "cpu_seconds": round(seconds, 3),
            "mb_per_s": round(rate, 3),
            "ratio_rknn_real_over_this": round(ratio, 2),
            "ratio_family_real_over_this": round(own, 2),
            "peak": memory,
            "peak_multiple_of_size": round(multiple, 2),
        }
    (OUT / "degenerate-results.json").write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
