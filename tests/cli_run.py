"""Run the real `logscope` command in a child process with a wall-clock timeout and memory limits, so a
hang or a read of gigabytes fails the test instead of stalling or swapping the machine.

Two limits: the child's peak resident memory (measured by the child itself at exit and checked here:
at most `MEMORY_LIMIT`), and an address-space cap (`RLIMIT_AS`, `ADDRESS_SPACE_LIMIT`) as the
backstop that stops a runaway child. The cap cannot be the measure itself: DuckDB, pyarrow and glibc
reserve address space they never touch (2.2 GB of it for an audit of a few files, 230 MB resident),
and how much varies with the machine's load.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

# 1 GiB resident: logscope with DuckDB, pyarrow and pandas loaded peaks at about 250 MB here, while
# reading a 2 GiB input up to the size cap (what endless or binary input used to cost) cannot fit.
MEMORY_LIMIT = 1 << 30
ADDRESS_SPACE_LIMIT = 6 << 30
TIMEOUT = 120

# `python -m logscope`, recording the peak resident size (VmHWM, KiB) when it exits. Not ru_maxrss: on
# Linux that survives exec, so a child forked from a big pytest process reports the parent's size.
_CHILD = (
    "import atexit, os, sys\n"
    "def _hwm():\n"
    "    with open('/proc/self/status') as fh:\n"
    "        return next(l.split()[1] for l in fh if l.startswith('VmHWM:'))\n"
    "atexit.register(lambda: open(os.environ['LOGSCOPE_TEST_RSS'], 'w').write(_hwm()))\n"
    "sys.argv[0] = 'logscope'\n"
    "from logscope.cli import main\n"
    "main()\n"
)


def _limits() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE_LIMIT, ADDRESS_SPACE_LIMIT))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def run_cli(
    args: Sequence[str | bytes | os.PathLike[str]],
    *,
    cwd: Path | None = None,
    timeout: float = TIMEOUT,
    memory: int = MEMORY_LIMIT,
) -> subprocess.CompletedProcess[str]:
    """`logscope ARGS` in a child with the limits; stdout and stderr are text (undecodable bytes
    escaped). Fails the calling test if the child's peak resident memory exceeded `memory`."""
    with tempfile.TemporaryDirectory() as tmp:
        rss_file = os.path.join(tmp, "rss")
        done = subprocess.run(
            [sys.executable, "-c", _CHILD, *args],
            cwd=cwd,
            capture_output=True,
            text=True,
            errors="backslashreplace",
            timeout=timeout,
            preexec_fn=_limits,
            env={**os.environ, "COLUMNS": "200", "NO_COLOR": "1", "LOGSCOPE_TEST_RSS": rss_file},
            check=False,
        )
        peak_kib = int(Path(rss_file).read_text()) if os.path.exists(rss_file) else None
    assert peak_kib is not None, f"the child died without reporting its memory: {done.stderr[-2000:]}"
    assert peak_kib * 1024 <= memory, f"peak resident memory {peak_kib} KiB is over {memory} bytes"
    return done
