"""The `logscope` console script's first step, with nothing but the standard library.

`logscope audit --jobs N` (N > 1, the local engine) forks its workers from a fork server that spends
about 0.6 s of CPU importing logscope for them. Started here, before typer, click's parsing and the
command's own imports (0.15-0.2 s of CPU before the command could start it), the server imports on the
other core from the first moment, and the first workers fork from a server that is ready. The command
still starts it itself (a no-op when it runs), so a command line read wrongly here costs only that
head start, never a result.
"""

from __future__ import annotations

import sys


def main() -> None:
    if _audit_pool_wanted(sys.argv[1:]):
        from logscope.pool_start import start_pool_server

        start_pool_server()
    from logscope.cli import main as cli_main

    cli_main()


def _audit_pool_wanted(args: list[str]) -> bool:
    """Whether `args` ask for `audit` on the local engine with more than one job: the command name after
    the root's flags, `--jobs N`, `--jobs=N`, `-j N` or `-jN` with N > 1, and no `--engine dask`."""
    rest = list(args)
    while rest and rest[0].startswith("-"):  # the root's options are flags (--debug, --version)
        rest.pop(0)
    if not rest or rest[0] != "audit":
        return False
    jobs, engine = "1", "local"
    words = iter(rest[1:])
    for word in words:
        if word == "--":
            break
        if word in ("--jobs", "-j"):
            jobs = next(words, "1")
        elif word.startswith("--jobs="):
            jobs = word.partition("=")[2]
        elif word.startswith("-j") and len(word) > 2:
            jobs = word[2:]
        elif word == "--engine":
            engine = next(words, "local")
        elif word.startswith("--engine="):
            engine = word.partition("=")[2]
    return engine == "local" and jobs.isdigit() and int(jobs) > 1
