"""The reading stage alone: `LogStream` iterated without a parser, against Python's own line reading.

For each log: CPU microseconds per line of iterating `logscope.io.LogStream(path)` (read, hash, decode,
clean, split into lines and line numbers), of iterating `open(path)` line by line into a list (the
reading floor any line-oriented tool pays: text mode, UTF-8 with replacement, universal newlines), and
their ratio, best of N, the two alternated in one process. With `--ci FOLDER` also the CPU milliseconds
per file of family detection (`LogStream` plus `detect_blocks`) over the folder's `*/build.log`.

Usage: python benchmarks/read_stage.py LOG [LOG ...] [--repeat 3] [--ci benchmarks/out/ci-corpus]
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
from collections.abc import Callable
from pathlib import Path


def best_cpu(fn: Callable[[], object], repeat: int) -> float:
    """Fewest CPU seconds of `repeat` runs of `fn` (the collector off, as the parse runs)."""
    best = float("inf")
    for _ in range(repeat):
        gc.collect()
        gc.disable()
        try:
            start = time.process_time()
            fn()
            best = min(best, time.process_time() - start)
        finally:
            gc.enable()
    return best


def stream_lines(path: Path) -> int:
    from logscope.io import LogStream

    count = 0
    for lines, _numbers in LogStream(path):
        count += len(lines)
    return count


def python_lines(path: Path) -> int:
    with open(path, encoding="utf-8", errors="replace") as fh:
        return len(list(fh))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("logs", nargs="*", type=Path)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--ci", type=Path, default=None, help="folder of */build.log: detect ms per file")
    args = ap.parse_args(argv)
    import pandas  # noqa: F401 (imported as in every logscope process: it changes how memory is reused)

    for path in args.logs:
        lines = stream_lines(path)
        ours = theirs = float("inf")
        for _ in range(args.repeat):  # alternated, so load affects both alike
            ours = min(ours, best_cpu(lambda p=path: stream_lines(p), 1))
            theirs = min(theirs, best_cpu(lambda p=path: python_lines(p), 1))
        mb = path.stat().st_size / 1e6
        print(
            f"{path.name[:40]:40s} {lines:9d} lines {mb:7.1f} MB  LogStream {ours * 1e6 / lines:.3f} "
            f"us/line ({ours * 1e3 / mb:.2f} ms/MB)  open() {theirs * 1e6 / lines:.3f} us/line  "
            f"ratio {theirs / ours:.2f}"
        )
    if args.ci is not None:
        from logscope.detect import detect_blocks
        from logscope.io import LogStream

        paths = sorted(args.ci.glob("*/build.log"))
        if not paths:
            print(f"{args.ci}: no */build.log", file=sys.stderr)
            return 2

        def detect_all() -> None:
            for path in paths:
                detect_blocks(iter(LogStream(path)))

        def read_all() -> None:
            for path in paths:
                stream_lines(path)

        detect = best_cpu(detect_all, args.repeat)
        read = best_cpu(read_all, args.repeat)
        print(
            f"{len(paths)} CI logs: detect {detect * 1e3 / len(paths):.3f} ms/file, "
            f"LogStream alone {read * 1e3 / len(paths):.3f} ms/file"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
