"""logscope's own exceptions.

Everything a user can cause (a bad file, a bad option) surfaces as a subclass of
:class:`LogscopeError`, so the CLI can turn it into a one-line message and exit code 2
instead of a traceback.
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import linecache
import numbers
from pathlib import Path
from types import FrameType
from typing import Any


class LogscopeError(Exception):
    """Base class of every error logscope raises on purpose."""


class InputError(LogscopeError):
    """The input cannot be read as a log: missing, binary, corrupt archive, too large."""


class ConfigError(LogscopeError):
    """A configuration value or command-line option is invalid."""


class OutputError(LogscopeError):
    """An output that must not be written: one of the command's own inputs, or an existing file
    without `--force`."""


def note_where(
    exc: BaseException, *, line: int | None = None, rule: str | None = None, source: str | None = None
) -> None:
    """Record on an unexpected exception where logscope was when it happened: the input line being read
    or the row being worked on (and the file it is from, when the error's input may be another), the
    rule being run. The innermost record wins (a parser notes the line before any caller could). The
    CLI's internal-error line names them (`x.log:12`); `--debug` shows them as notes under the traceback.
    Never raises: it runs while another exception is propagating."""
    try:
        where: dict[str, object] = exc.__dict__.setdefault("logscope_where", {})
        if line is not None and "line" in where:
            source = None  # the line noted first keeps its own file
        for key, value in (("line", line), ("rule", rule), ("source", source)):
            if value is not None and key not in where:
                where[key] = value
                if key != "source":
                    exc.add_note(
                        f"logscope: while at input {key} {value}"
                        if key == "line"
                        else f"logscope: in rule {value}"
                    )
    except (AttributeError, TypeError):  # an exception type without a __dict__
        pass


_PACKAGE = str(Path(__file__).resolve().parent)


def note_row(exc: BaseException) -> None:
    """Note the line of the frame row logscope was working on when `exc` was raised, outside the parsers'
    line loop (deriving figures, running a rule, rendering): `row_where(exc)`. Nothing is paid until an
    exception happens: the loops keep no record, the traceback's frames are read afterwards."""
    try:
        found = row_where(exc)
    except Exception:  # never hide the real exception behind one of this lookup
        found = None
    if found is not None:
        note_where(exc, line=found[0], source=found[1])


def row_where(exc: BaseException) -> tuple[int, str | None] | None:
    """(line, file) of the row the innermost loop of logscope's code on `exc`'s traceback was at: the
    loop variable of a `for` or a comprehension whose body was running, holding a row that carries its
    line (`itertuples()`, a `to_dict("records")` record, a `Finding`). The file is that of the parsed
    log in scope (a local with `source` and `frames`) from that frame outwards, None when none is or
    when two logs are (a diff's rows). None when no loop over such rows was running: a value left in a
    loop variable after its loop ended is not read."""
    frames: list[tuple[FrameType, int]] = []
    tb = exc.__traceback__
    while tb is not None:
        frames.append((tb.tb_frame, tb.tb_lineno))
        tb = tb.tb_next
    for depth in range(len(frames) - 1, -1, -1):
        frame, lineno = frames[depth]
        filename = frame.f_code.co_filename
        if not filename.startswith(_PACKAGE):
            continue
        for name in _loop_targets(filename, lineno):
            line = _row_line(frame.f_locals.get(name))
            if line is not None:
                return line, _log_source(frame for frame, _ in reversed(frames[: depth + 1]))
    return None


def _row_line(value: object) -> int | None:
    """The line a row carries, if `value` is a row: a named tuple or a dataclass with a `line` field, or
    a dict with a `line` key; a missing line (None, NA, NaN) is none."""
    if isinstance(value, tuple) and "line" in getattr(value, "_fields", ()):
        line: Any = value.line  # type: ignore[attr-defined]
    elif isinstance(value, dict):
        line = value.get("line")
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        line = getattr(value, "line", None) if "line" in {f.name for f in dataclasses.fields(value)} else None
    else:
        return None
    if isinstance(line, numbers.Integral) and not isinstance(line, bool) and int(line) > 0:
        return int(line)
    if isinstance(line, float) and line.is_integer() and line > 0:
        return int(line)
    return None


def _log_source(frames: Any) -> str | None:
    """The source of the one parsed log the innermost of `frames` that holds any has in its locals."""
    for frame in frames:
        sources = {
            str(value.source)
            for value in frame.f_locals.values()
            if isinstance(getattr(value, "source", None), str)
            and isinstance(getattr(value, "frames", None), dict)
        }
        if sources:
            return sources.pop() if len(sources) == 1 else None
    return None


def _loop_targets(filename: str, lineno: int) -> list[str]:
    """The names bound by the loops whose body contains line `lineno` of `filename`, innermost first
    (a `for` statement's body, or a comprehension's element and conditions)."""
    loops = [span for span in _loops(filename) if span[0] <= lineno <= span[1]]
    loops.sort(key=lambda span: span[0], reverse=True)
    return [name for _, _, names in loops for name in names]


@functools.cache
def _loops(filename: str) -> list[tuple[int, int, tuple[str, ...]]]:
    """(first line of the body, last line, names bound) of every loop in `filename`."""
    try:
        tree = ast.parse("".join(linecache.getlines(filename)))
    except (SyntaxError, ValueError):
        return []
    spans: list[tuple[int, int, tuple[str, ...]]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.For | ast.AsyncFor) and node.body:
            names = tuple(n.id for n in ast.walk(node.target) if isinstance(n, ast.Name))
            last = node.body[-1]  # not the `else:` clause: the loop is over there
            spans.append((node.body[0].lineno, last.end_lineno or last.lineno, names))
        elif isinstance(node, ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp):
            names = tuple(
                n.id for g in node.generators for n in ast.walk(g.target) if isinstance(n, ast.Name)
            )
            spans.append((node.lineno, node.end_lineno or node.lineno, names))
    return spans


def where_of(exc: BaseException) -> dict[str, object]:
    """What `note_where` recorded on `exc` (empty when nothing was)."""
    where = getattr(exc, "logscope_where", None)
    return where if isinstance(where, dict) else {}
