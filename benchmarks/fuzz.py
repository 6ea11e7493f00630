"""`make fuzz`: mutated fixtures and ONNX models through logscope, every outcome counted.

    python benchmarks/fuzz.py                       # 10,000 cases per family, CLI sample 1 in 200
    python benchmarks/fuzz.py --cases 300 --families rknn mcu
    python benchmarks/fuzz.py --replay rknn 4711    # one case again, its file kept in ./fuzz-case/

The harness (tests/fuzz/harness.py) states the outcomes and the limits. Exit code 1 when any case ends
in a traceback, a limit breach, a timeout or a crash.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "fuzz"))

import harness


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--cases", type=int, default=10_000, help="cases per family")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--families", nargs="+", default=list(harness.FAMILIES), choices=harness.FAMILIES)
    parser.add_argument(
        "--cli-every", type=int, default=200, help="every N-th case also through the CLI (0: none)"
    )
    parser.add_argument(
        "--draw-every", type=int, default=25, help="every N-th case renders PNGs, HTML and CSV"
    )
    parser.add_argument("--minutes", type=float, help="stop each family after this many minutes (wall)")
    parser.add_argument("--replay", nargs=2, metavar=("FAMILY", "INDEX"))
    args = parser.parse_args()
    if args.replay:
        family, index = args.replay[0], int(args.replay[1])
        folder = Path("fuzz-case")
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir()
        result = harness.run_case(family, args.seed, index, folder, draw=True)
        print(f"{family}/{index}: {result.outcome} {result.mutations} {result.detail} (files in {folder}/)")
        return 0 if result.outcome in ("ok", "refused") else 1
    summaries = []
    for family in args.families:
        deadline = time.monotonic() + args.minutes * 60 if args.minutes else None
        summaries.append(
            harness.run_family(
                family, args.cases, args.seed, args.cli_every, args.draw_every, sys.stderr, deadline
            )
        )
    print(harness.format_summary(summaries))
    return 1 if any(s.bad for s in summaries) else 0


if __name__ == "__main__":
    sys.exit(main())
