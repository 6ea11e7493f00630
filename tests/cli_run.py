"""Run the real `logscope` command in a child process with a wall-clock timeout and an address-space
limit, so a hang or a read of gigabytes fails the test instead of stalling or swapping the machine."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

# 1 GiB of address space: logscope with DuckDB, pyarrow and pandas loaded runs in it, while reading a
# 2 GiB input up to the size cap (what an endless or binary input used to cost) cannot.
MEMORY_LIMIT = 1 << 30
TIMEOUT = 120


def _limits(memory: int) -> None:
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def run_cli(
    args: Sequence[str | bytes | os.PathLike[str]],
    *,
    cwd: Path | None = None,
    timeout: float = TIMEOUT,
    memory: int = MEMORY_LIMIT,
) -> subprocess.CompletedProcess[str]:
    """`python -m logscope ARGS` with the limits; stdout and stderr are text (undecodable bytes escaped)."""
    return subprocess.run(
        [sys.executable, "-m", "logscope", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        errors="backslashreplace",
        timeout=timeout,
        preexec_fn=lambda: _limits(memory),
        env={**os.environ, "COLUMNS": "200", "NO_COLOR": "1"},
        check=False,
    )
