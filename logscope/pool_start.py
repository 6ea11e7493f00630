"""The local audit pool's process context and its fork server, with nothing but the standard library.

`logscope audit --jobs N` spends about 0.6 s of CPU importing pandas, pyarrow and DuckDB before it can
plan, and the pool's fork server spends as much importing logscope for its workers (`logscope.audit.
_preload`). Started before the command's own imports, the server imports on the other core at the same
time, and the first workers fork from a server that is ready: this module must stay cheap to import.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import sys
from collections.abc import Iterator
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
    server outlives one audit (later pools fork from it too), as it does when the first pool starts it.
    It imports from where this process imports (`_server_environment`)."""
    if pool_context().get_start_method() != "forkserver":
        return
    from multiprocessing import forkserver

    with _server_environment(), contextlib.suppress(OSError, ValueError):  # the pool reports a failure
        forkserver.ensure_running()


@contextlib.contextmanager
def _server_environment() -> Iterator[None]:
    """The environment the fork server is started with: this process's import path as PYTHONPATH (the
    working directory, where it is on the path, as its absolute name), and PYTHONSAFEPATH set.

    The server runs `python -c ...`, which puts the server's working directory first on its path, and
    Python 3.11's fork server ignores the import path it is sent. So a `pandas.py` in the folder an
    audit is started from was imported by the server (its preload failed, and each worker imported
    logscope again: 2 CI logs took 1.8 s instead of 0.4), and a `logscope` folder there (a source
    checkout of another version) gave the workers that version's code. PYTHONSAFEPATH (Python 3.11)
    keeps the working directory off the server's path; PYTHONPATH gives it this process's path in
    this process's order, so both import the same modules."""
    saved = {name: os.environ.get(name) for name in ("PYTHONPATH", "PYTHONSAFEPATH")}
    # (an entry holding the separator cannot be spelled in PYTHONPATH: the server goes without it, and
    # a module only it holds is imported by each worker, from the path the pool sends it)
    path = [os.path.abspath(entry) for entry in sys.path]
    os.environ["PYTHONPATH"] = os.pathsep.join(entry for entry in path if os.pathsep not in entry)
    os.environ["PYTHONSAFEPATH"] = "1"
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
