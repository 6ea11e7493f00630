"""Which files an audit reads: named files, folders walked recursively, and globs."""

from __future__ import annotations

import fnmatch
import glob
import os
from collections.abc import Iterable, Sequence

from logscope.errors import InputError

# Names taken from a folder (files named on the command line are always taken). Compressed logs are read
# by content (gzip, xz, bz2), so any name with these suffixes is taken too.
DEFAULT_PATTERNS = ("*.log", "*.txt", "*.out", "*.log.*", "*.gz", "*.xz", "*.bz2")


def discover(paths: Sequence[str], patterns: Iterable[str] = DEFAULT_PATTERNS) -> list[str]:
    """Absolute paths of the files to audit, sorted within each argument, without duplicates.

    A folder is walked recursively (hidden files and folders are skipped) and keeps the names matching
    `patterns`; a glob (`logs/**/*.log.gz`) is expanded with `**` spanning folders; a file is taken as
    it is. An argument that names nothing, or a glob that matches nothing, is an `InputError`.
    """
    pats = tuple(patterns)
    seen: dict[str, None] = {}
    for arg in paths:
        text = os.fspath(arg)
        if glob.has_magic(text):
            matches = sorted(glob.glob(text, recursive=True))
            if not matches:
                raise InputError(f"{text}: matched no file")
            for match in matches:
                for found in _expand(match, pats):
                    seen.setdefault(found, None)
            continue
        if not os.path.exists(text):
            raise InputError(f"{text}: no such file or folder")
        for found in _expand(text, pats):
            seen.setdefault(found, None)
    return list(seen)


def _expand(path: str, patterns: tuple[str, ...]) -> list[str]:
    if not os.path.isdir(path):
        return [os.path.abspath(path)]
    out = []
    for root, dirs, files in os.walk(path):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(files):
            if name.startswith("."):
                continue
            if any(fnmatch.fnmatch(name, pat) for pat in patterns):
                out.append(os.path.abspath(os.path.join(root, name)))
    return out
