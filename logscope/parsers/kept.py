"""Facts proven about the grammars' regexes, kept on disk beside the compiled grammars.

The parse loop's fast paths rest on facts about the regex text of the grammar's terminals, proven from
sre's parse of that text: which leading blank runs can be possessive (`grammar.possessive_lead`), which
strings or characters every match needs (`grammar.required_substrings`, `grammar.requires_outside`,
`grammar.most_matched`), how a row matcher reads lines joined with newlines (`table_runs`). Every process
proved them again before its first line. On the 303-line fixture 09, ten alternated processes each on an
idle machine: a first parse took 57-85 ms proving them and 36-57 ms reading them (a second parse of the
same log 6-10 ms). They are pure functions of their arguments (regex text, names, character sets), so,
like the compiled programs of `logscope.parsers.compiled`, what they return is data, and one process can
keep it for the next.

- A function is kept with `@kept`; its module must be one of `SOURCES`. The file's name holds a hash
  of those modules' source, of Python's version and of `FORMAT`, so a change to any function proving a
  fact (or to sre's parser) misses the file and the facts are proven again.
- The file lies in the folder of the compiled grammars (`compiled.cache_root`: `$LOGSCOPE_CACHE_DIR`,
  `off` turning both off). A process reads it at its first kept call and, when it proved something the
  file lacks, writes it back at exit (to a temporary name, then renamed: a concurrent reader never sees
  half a file; of two writers the last one's facts are kept, and the other's are proven again later).
- A file that is missing, damaged (its CRC-32 is checked) or not of this format is ignored; a folder
  that cannot be written is only slower. Arguments and results are strings, numbers, booleans, None,
  tuples and frozensets of those.
"""

from __future__ import annotations

import atexit
import functools
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from logscope.parsers.compiled import cache_root, named_by, read_checked, source_of, write_checked

FORMAT = 1
_MAGIC_LINE = b"logscope-kept-facts"
# The modules whose functions are kept, relative to this package: their source is in the file's name.
SOURCES = ("grammar.py", "rknn/table_runs.py")
# Facts per function, in memory and on disk: the arguments come from the grammars, not from a log, but a
# caller passing log text would otherwise grow both without bound.
MAX_FACTS = 4096

F = TypeVar("F", bound=Callable[..., Any])


class _Facts:
    """What the file held, plus what this process proved since: {function: {encoded arguments: encoded
    result}}."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.tables: dict[str, dict[str, Any]] = _read(path) if path is not None else {}
        self.added = 0

    def add(self, function: str, key: str, value: Any) -> None:
        table = self.tables.setdefault(function, {})
        if len(table) >= MAX_FACTS:
            return
        table[key] = value
        if not self.added and self.path is not None:
            atexit.register(self.save)
        self.added += 1

    def save(self) -> None:
        """Write the file if this process proved anything new; a folder that cannot be written is left."""
        if not self.added or self.path is None:
            return
        body = json.dumps(self.tables, separators=(",", ":"), sort_keys=True).encode("utf-8")
        if write_checked(self.path, _MAGIC_LINE, FORMAT, body):
            self.added = 0


def _read(path: Path) -> dict[str, dict[str, Any]]:
    try:
        tables = json.loads(read_checked(path, _MAGIC_LINE, FORMAT))
    except (OSError, ValueError):  # (json's and int's errors are ValueErrors)
        return {}
    if not isinstance(tables, dict) or not all(isinstance(t, dict) for t in tables.values()):
        return {}
    return tables


def facts_file(root: Path | None = None) -> Path | None:
    """Where the facts are kept (None: the cache is off)."""
    root = cache_root() if root is None else root
    if root is None:
        return None
    here = Path(__file__).parent
    parts = (
        *(source_of(str(here / name)) for name in SOURCES),
        source_of(__file__),
        sys.version.encode(),
        str(FORMAT).encode(),
    )
    return named_by(root, "facts", parts)


_STORE: list[_Facts] = []  # the process's store, read at the first kept call


def _store() -> _Facts:
    if not _STORE:
        _STORE.append(_Facts(facts_file()))
    return _STORE[0]


def reset(path: Path | None = None) -> _Facts:
    """Forget the facts this process read or proved, and read them next from `path` (tests)."""
    _STORE[:] = [_Facts(path)]
    for clear in _MEMOS:
        clear()
    return _STORE[0]


_MEMOS: list[Callable[[], None]] = []


def kept(function: F) -> F:
    """`function`, its results remembered in this process and kept on disk for the next ones."""
    source = Path(sys.modules[function.__module__].__file__ or "")
    here = Path(__file__).parent
    if not any(source == here / name for name in SOURCES):
        raise ValueError(f"{function.__module__}: a kept function's module must be listed in kept.SOURCES")
    name = f"{function.__module__}.{function.__qualname__}"
    memo: dict[tuple[Any, ...], Any] = {}
    _MEMOS.append(memo.clear)

    @functools.wraps(function)
    def remembered(*args: Any) -> Any:
        try:
            return memo[args]
        except KeyError:
            pass
        store = _store()
        key = json.dumps(_encode(args), separators=(",", ":"))
        table = store.tables.get(name)
        stored = table.get(key, _MISSING) if table is not None else _MISSING
        if stored is not _MISSING:
            try:
                value = _decode(stored)
            except (TypeError, ValueError, KeyError):
                stored = _MISSING
        if stored is _MISSING:
            value = function(*args)
            store.add(name, key, _encode(value))
        if len(memo) < MAX_FACTS:
            memo[args] = value
        return value

    return remembered  # type: ignore[return-value]


_MISSING = object()


def _encode(value: Any) -> Any:
    """JSON for a fact's arguments or result: tuples and frozensets tagged, the rest as JSON has it."""
    if isinstance(value, tuple):
        return {"t": [_encode(v) for v in value]}
    if isinstance(value, frozenset):
        return {"f": sorted((_encode(v) for v in value), key=repr)}
    if value is None or isinstance(value, (str, bool, int, float)):
        return value
    raise TypeError(f"a kept fact cannot hold {type(value).__name__}")


def _decode(value: Any) -> Any:
    if isinstance(value, dict):
        if "t" in value:
            return tuple(_decode(v) for v in value["t"])
        return frozenset(_decode(v) for v in value["f"])
    if isinstance(value, list):
        raise ValueError("a kept fact is never a bare list")
    return value
