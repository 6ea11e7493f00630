"""The local audit pool's process context and its fork server, with nothing but the standard library.

`logscope audit --jobs N` spends about 0.6 s of CPU importing pandas, pyarrow and DuckDB before it can
plan, and the pool's fork server spends as much importing logscope for its workers (`logscope.audit.
_preload`). Started before the command's own imports, the server imports on the other core at the same
time, and the first workers fork from a server that is ready: this module must stay cheap to import.
"""

from __future__ import annotations

import contextlib
import multiprocessing
from typing import Any

PRELOAD = "logscope.audit._preload"


def pool_context() -> Any:
    """The fork server's context with logscope preloaded, or spawn where there is no fork server.

    Never a plain fork of the auditing process (its DuckDB connection and threads, the progress bar's,
    the native threads numpy and arrow start on import)."""
    try:
        forkserver = multiprocessing.get_context("forkserver")
    except ValueError:
        return multiprocessing.get_context("spawn")
    forkserver.set_forkserver_preload([PRELOAD])
    return forkserver


def start_pool_server() -> None:
    """Start the fork server now, without waiting for it; where there is none (spawn) do nothing. The
    server outlives one audit (later pools fork from it too), as it does when the first pool starts it."""
    if pool_context().get_start_method() != "forkserver":
        return
    from multiprocessing import forkserver

    with contextlib.suppress(OSError, ValueError):  # the pool reports a failure to start, not this
        forkserver.ensure_running()
