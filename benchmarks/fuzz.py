"""`make fuzz`: mutated fixtures and models through the logscope CLI, every outcome counted.

    python benchmarks/fuzz.py                       # 10,000 cases per family, CLI sample 1 in 500
    python benchmarks/fuzz.py --cases 300 --families rknn mcu
    python benchmarks/fuzz.py --jobs 2              # families in parallel, one process each
    python benchmarks/fuzz.py --replay rknn 4711    # one case again, its files kept in ./fuzz-case/

The harness (tests/fuzz/harness.py) states the outcomes, the limits and the memory bound. Exit code 1
when any case ends in a traceback, a limit breach, a timeout or a crash, or when the harness could not
write a case (`mutation-timeout`, `mutation-error`: counted apart, never as logscope's outcomes).
"""

from __future__ import annotations

import argparse
import pickle
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "fuzz"))

import harness


def _parallel(args: argparse.Namespace) -> list[harness.Summary]:
    """One child process per family, `args.jobs` at a time; their summaries come back pickled."""
    with tempfile.TemporaryDirectory(prefix="logscope-fuzz-run-") as tmp:
        pending = list(args.families)
        running: list[tuple[str, subprocess.Popen[bytes], Path]] = []
        while pending or running:
            while pending and len(running) < args.jobs and not harness.STOP["now"]:
                family = pending.pop(0)
                out = Path(tmp) / f"{family}.pickle"
                command = [sys.executable, __file__, "--families", family, "--summary-out", str(out)]
                command += ["--cases", str(args.cases), "--seed", str(args.seed), "--start", str(args.start)]
                command += ["--cli-every", str(args.cli_every)]
                if args.commands:
                    command += ["--commands", *args.commands]
                if args.minutes:
                    command += ["--minutes", str(args.minutes)]
                child = subprocess.Popen(command, stdout=subprocess.DEVNULL)
                _CHILDREN.append(child)
                running.append((family, child, out))
            time.sleep(1)
            for item in list(running):
                if item[1].poll() is not None:
                    running.remove(item)
        summaries = []
        for family in args.families:
            out = Path(tmp) / f"{family}.pickle"
            if not out.exists():
                print(f"the {family} run ended without a summary", file=sys.stderr)
                continue
            summaries.append(pickle.loads(out.read_bytes()))
        return summaries


def _stop(signum: int, frame: object) -> None:
    """SIGTERM: every family ends after its current case and reports what ran (children told too)."""
    harness.STOP["now"] = True
    for child in _CHILDREN:
        if child.poll() is None:
            child.terminate()


_CHILDREN: list[subprocess.Popen[bytes]] = []


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--cases", type=int, default=10_000, help="cases per family")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--start", type=int, default=0, help="index of the first case")
    parser.add_argument("--families", nargs="+", default=list(harness.FAMILIES), choices=harness.FAMILIES)
    parser.add_argument("--jobs", type=int, default=1, help="families run in parallel")
    parser.add_argument(
        "--cli-every",
        type=int,
        default=500,
        help="every N-th case also through `python -m logscope` (0: none)",
    )
    parser.add_argument(
        "--commands",
        nargs="+",
        default=[],
        help="only these commands (e.g. audit; default: the standard rotation)",
    )
    parser.add_argument("--minutes", type=float, help="stop each family after this many minutes (wall)")
    parser.add_argument("--replay", nargs=2, metavar=("FAMILY", "INDEX"))
    parser.add_argument("--summary-out", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.replay:
        family, index = args.replay[0], int(args.replay[1])
        folder = Path("fuzz-case")
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir()
        harness._import_before_fork()
        result = harness.run_case(family, args.seed, index, folder, tuple(args.commands))
        print(
            f"{family}/{index}: {result.outcome} {result.command} exit {result.exit_code} "
            f"{result.mutations} {result.detail} (peak {result.peak_bytes:,} B, "
            f"input {result.input_bytes:,} B; files in {folder}/)"
        )
        return 0 if result.outcome in ("ok", "refused") else 1
    signal.signal(signal.SIGTERM, _stop)
    if args.jobs > 1 and len(args.families) > 1:
        summaries = _parallel(args)
    else:
        summaries = []

        def checkpoint(summary: harness.Summary) -> None:
            if args.summary_out:  # what ran so far survives a kill
                args.summary_out.write_bytes(pickle.dumps(summary))

        for family in args.families:
            deadline = time.monotonic() + args.minutes * 60 if args.minutes else None
            summaries.append(
                harness.run_family(
                    family,
                    args.cases,
                    args.seed,
                    args.cli_every,
                    sys.stderr,
                    deadline,
                    args.start,
                    tuple(args.commands),
                    checkpoint,
                )
            )
    if args.summary_out:
        args.summary_out.write_bytes(pickle.dumps(summaries[0]))
        return 0
    print(f"seed {args.seed}, cases {args.start}..{args.start + args.cases - 1} per family")
    print(harness.format_summary(summaries))
    return 1 if any(s.bad or s.harness_defects for s in summaries) else 0


if __name__ == "__main__":
    sys.exit(main())
