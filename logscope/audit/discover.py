"""Which files an audit reads: named files, folders walked recursively, and globs.

Folders and `**` globs are walked by one walker that follows symbolic links to folders but enters each
real folder (device and inode) once per walk, so a link loop (`a/loop -> ..`) ends instead of
spinning until the path length limit, and every file is listed under its real path: a file reached
through several links is one file, audited and stored once. File names are taken as the operating
system gives them (a name that is not UTF-8 stays in its surrogate-escaped form); nothing here opens
a file, so a FIFO or a device found in a folder is listed and left to the runner, which only reads
regular files.
"""

from __future__ import annotations

import fnmatch
import glob
import os
import stat
from collections.abc import Iterable, Sequence

from logscope.errors import InputError
from logscope.io import display_path

from .remote import discover_url, file_url_path, is_url

# Names taken from a folder (files named on the command line are always taken). Compressed logs are read
# by content (gzip, xz, bz2), so any name with these suffixes is taken too.
DEFAULT_PATTERNS = ("*.log", "*.txt", "*.out", "*.log.*", "*.gz", "*.xz", "*.bz2")


def discover(paths: Sequence[str], patterns: Iterable[str] = DEFAULT_PATTERNS) -> list[str]:
    """Real absolute paths of the files to audit, sorted within each argument, without duplicates.

    A folder is walked recursively (hidden files and folders are skipped) and keeps the names matching
    `patterns`; a glob (`logs/**/*.log.gz`) is expanded with `**` spanning folders; a file is taken as
    it is. Symbolic links are resolved (`os.path.realpath`), so each real file is listed once. An
    argument that names nothing, or a glob that matches nothing, is an `InputError`. A URL
    (`s3://bucket/ci/**/*.log`) lists objects (`remote.discover_url`); a `file://` URL is a local path.
    """
    pats = tuple(patterns)
    seen: dict[str, None] = {}
    for arg in paths:
        text = os.fspath(arg)
        if is_url(text):
            for found in discover_url(text, pats):
                seen.setdefault(found, None)
            continue
        text = file_url_path(text) or text
        if glob.has_magic(text):
            matches = _glob(text)
            if not matches:
                raise InputError(f"{display_path(text)}: matched no file")
            for match in matches:
                for found in _expand(match, pats):
                    seen.setdefault(found, None)
            continue
        if not os.path.lexists(text):
            raise InputError(f"{display_path(text)}: no such file or folder")
        for found in _expand(text, pats):
            seen.setdefault(found, None)
    return list(seen)


def _real(path: str) -> str:
    """The real path of a regular file. Anything else keeps its own absolute path, which the runner
    then reports with the name the user knows: a dangling link or a link loop as unreadable, a link
    to `/dev/zero` or to a FIFO as skipped."""
    absolute = os.path.abspath(path)
    try:
        real = os.path.realpath(absolute, strict=True)
        return real if stat.S_ISREG(os.stat(real).st_mode) else absolute
    except OSError:
        return absolute


def _is_dir(path: str) -> bool:
    try:
        return os.path.isdir(path)
    except OSError:  # a name too long, a loop: not a folder we can walk
        return False


def _expand(path: str, patterns: tuple[str, ...]) -> list[str]:
    if not _is_dir(path):
        return [_real(path)]
    out = []
    for rel, is_dir in _walk(path):
        name = rel[-1]
        if not is_dir and any(fnmatch.fnmatch(name, pat) for pat in patterns):
            out.append(_real(os.path.join(path, *rel)))
    return out


def _walk(
    top: str, max_depth: int | None = None, *, hidden: bool = False
) -> list[tuple[tuple[str, ...], bool]]:
    """Every entry under `top` (hidden ones only with `hidden`) as (parts relative to `top`, is a
    folder), depth first in name order, following folder links but entering each real folder once
    (loops end here)."""
    out: list[tuple[tuple[str, ...], bool]] = []
    visited: set[tuple[int, int]] = set()
    stack: list[tuple[str, ...]] = [()]
    while stack:
        rel = stack.pop()
        folder = os.path.join(top, *rel)
        try:
            st = os.stat(folder)
        except OSError:
            continue
        key = (st.st_dev, st.st_ino)
        if key in visited:
            continue
        visited.add(key)
        try:
            with os.scandir(folder) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError:  # unreadable folder: its files cannot be listed, the others still are
            continue
        subfolders = []
        for entry in entries:
            if entry.name.startswith(".") and not hidden:
                continue
            try:
                is_dir = entry.is_dir()  # follows a link: a link to a folder is walked (once)
            except OSError:
                is_dir = False
            out.append(((*rel, entry.name), is_dir))
            if is_dir and (max_depth is None or len(rel) + 1 < max_depth):
                subfolders.append((*rel, entry.name))
        stack.extend(reversed(subfolders))
    return out


def _glob(pattern: str) -> list[str]:
    """`glob.glob(pattern, recursive=True)` without its unbounded walk through link loops: the literal
    leading folders are the base, the rest is matched part by part (`**` spans any number of folders,
    hidden names match only a pattern part that starts with a dot)."""
    parts = pattern.split(os.sep)
    literal = 0
    while literal < len(parts) - 1 and not glob.has_magic(parts[literal]):
        literal += 1
    base_parts, rest = parts[:literal], parts[literal:]
    base = os.sep.join(base_parts) if base_parts else os.curdir
    if base_parts == [""]:
        base = os.sep
    if not _is_dir(base):
        return []
    depth = None if "**" in rest else len(rest)
    matches = []
    hidden = any(part.startswith(".") for part in rest)
    for rel, _ in _walk(base, depth, hidden=hidden):
        if _match(rest, list(rel)):
            matches.append(os.path.join(base, *rel) if base_parts else os.path.join(*rel))
    return sorted(matches)


def _match(pattern: list[str], parts: list[str]) -> bool:
    if not pattern:
        return not parts
    head = pattern[0]
    if head == "**":
        if _match(pattern[1:], parts):
            return True
        return bool(parts) and not parts[0].startswith(".") and _match(pattern, parts[1:])
    if not parts:
        return False
    if parts[0].startswith(".") and not head.startswith("."):
        return False
    return fnmatch.fnmatchcase(parts[0], head) and _match(pattern[1:], parts[1:])
