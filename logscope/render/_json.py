"""`json.dumps(value, indent=2, ensure_ascii=False)`, the same text, with most of the work in C.

With `indent`, Python 3.11's json module runs its pure-Python encoder, one generator step per value
(0.11 s for the summary of a 528-build log, where the C encoder without indent takes half that).
Here the nesting is walked in Python, but every dict or list that holds only scalars (most of a
summary: a build's memory, counts, versions, each check, the line lists of the findings) is written
by the C encoder in one call, with the line break and indentation of its depth as the item separator;
a raw line break never occurs inside an encoded string (it is written `\\n`), so that separator
cannot be confused with data. Other scalars are written as the encoder writes them (`int.__repr__`,
`float.__repr__`, the C string escaper). A value of any other type (json cannot encode it, or a
subclass such as an IntEnum) sends the whole value to `json.dumps`, which does what it always did.
"""

from __future__ import annotations

import functools
import json
from typing import Any

_SCALAR_TYPES = frozenset({str, int, float, bool, type(None)})
_STR_ONLY = frozenset({str})


def dumps_indented(value: Any, indent: int = 2) -> str:
    """`json.dumps(value, indent=indent, ensure_ascii=False)`, character for character."""
    parts: list[str] = []
    try:
        _write(value, 0, indent, parts)
    except (_Unusual, RecursionError):  # json.dumps names the value, or the circular reference
        return json.dumps(value, indent=indent, ensure_ascii=False)
    return "".join(parts)


class _Unusual(Exception):
    """A value of a type the fast path does not write (json.dumps decides what happens to it)."""


@functools.cache
def _encoder(depth: int, indent: int) -> Any:
    """The C encoder of a flat container at `depth`: items separated by a line break and the
    indentation of `depth + 1`."""
    separator = ",\n" + " " * (indent * (depth + 1))
    return json.JSONEncoder(ensure_ascii=False, separators=(separator, ": ")).encode


_encode_string = json.encoder.encode_basestring  # the C function when the C accelerator is there
_INFINITY = float("inf")


def _scalar(value: Any, kind: type) -> str:
    """A scalar as json writes it (`int.__repr__`, `float.__repr__`, NaN and Infinity allowed)."""
    if kind is str:
        return str(_encode_string(value))
    if value is None:
        return "null"
    if kind is bool:
        return "true" if value else "false"
    if kind is int:
        return int.__repr__(value)
    if value != value:
        return "NaN"
    if value == _INFINITY:
        return "Infinity"
    if value == -_INFINITY:
        return "-Infinity"
    return float.__repr__(value)


def _write(value: Any, depth: int, indent: int, parts: list[str]) -> None:
    kind = type(value)
    if kind in _SCALAR_TYPES:
        parts.append(_scalar(value, kind))
        return
    if kind is dict:
        if not value:
            parts.append("{}")
            return
        if _SCALAR_TYPES.issuperset(map(type, value.values())) and _STR_ONLY.issuperset(map(type, value)):
            _flat(value, depth, indent, parts)
            return
        inner = "\n" + " " * (indent * (depth + 1))
        separator = "," + inner
        parts.append("{")
        first = True
        for key, item in value.items():
            if type(key) is not str:
                raise _Unusual
            parts.append(inner if first else separator)
            first = False
            parts.append(_encode_string(key))
            parts.append(": ")
            item_kind = type(item)
            if item_kind in _SCALAR_TYPES:
                parts.append(_scalar(item, item_kind))
            else:
                _write(item, depth + 1, indent, parts)
        parts.append("\n" + " " * (indent * depth) + "}")
        return
    if kind is list or kind is tuple:
        if not value:
            parts.append("[]")
            return
        if _SCALAR_TYPES.issuperset(map(type, value)):
            _flat(value, depth, indent, parts)
            return
        inner = "\n" + " " * (indent * (depth + 1))
        separator = "," + inner
        parts.append("[")
        first = True
        for item in value:
            parts.append(inner if first else separator)
            first = False
            _write(item, depth + 1, indent, parts)
        parts.append("\n" + " " * (indent * depth) + "]")
        return
    raise _Unusual


def _flat(value: Any, depth: int, indent: int, parts: list[str]) -> None:
    """A non-empty dict or list of scalars: the C encoder's text, with the opening and closing line
    breaks json.dumps puts inside the brackets."""
    text = _encoder(depth, indent)(value)
    inner, outer = " " * (indent * (depth + 1)), " " * (indent * depth)
    parts.append(f"{text[0]}\n{inner}{text[1:-1]}\n{outer}{text[-1]}")
