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

`iter_indented` gives the same text in pieces of some tens of kilobytes, for a writer: the summary of a
100 MB log is 23 million characters, and as one string (UCS-2 when a message holds an en dash) it was
made, copied by every step after it (the final line break, the control-character escaping, the
encoding to UTF-8) and freed again, 150 MB of fresh pages each touched once.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterator
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


# Parts (a few tens of characters each) gathered into one piece of `iter_indented`, and the depth
# down to which it walks containers item by item to end a piece between two items: a summary's builds
# and findings are the items at depth 2, each written whole.
_PIECE_PARTS = 2048
_PIECE_DEPTH = 2


def iter_indented(value: Any, indent: int = 2) -> Iterator[str]:
    """The text of `dumps_indented(value, indent)` in pieces (joined, the same characters).

    A value the fast writer cannot write is written by `json.dumps` on its own and indented to its
    depth, which is what `json.dumps` of the whole writes for it (a raw line break occurs only as an
    indentation). If json refuses a value, the exception comes after the pieces before it."""
    parts: list[str] = []
    yield from _pieces(value, 0, indent, parts)
    if parts:
        yield "".join(parts)


def _pieces(value: Any, depth: int, indent: int, parts: list[str]) -> Iterator[str]:
    kind = type(value)
    is_dict = kind is dict and depth < _PIECE_DEPTH and _STR_ONLY.issuperset(map(type, value))
    if depth < _PIECE_DEPTH and value and (is_dict or kind is list or kind is tuple):
        inner = "\n" + " " * (indent * (depth + 1))
        separator = "," + inner
        parts.append("{" if is_dict else "[")
        for n, (key, item) in enumerate(value.items() if is_dict else enumerate(value)):
            parts.append(separator if n else inner)
            if is_dict:
                parts.append(_encode_string(key))
                parts.append(": ")
            yield from _pieces(item, depth + 1, indent, parts)
        parts.append("\n" + " " * (indent * depth) + ("}" if is_dict else "]"))
        return
    mark = len(parts)
    try:
        _write(value, depth, indent, parts)
    except (_Unusual, RecursionError):
        del parts[mark:]
        text = json.dumps(value, indent=indent, ensure_ascii=False)
        parts.append(text.replace("\n", "\n" + " " * (indent * depth)))
    if len(parts) >= _PIECE_PARTS:
        yield "".join(parts)
        parts.clear()


class _Unusual(Exception):
    """A value of a type the fast path does not write (json.dumps decides what happens to it)."""


@functools.cache
def _encoder(depth: int, indent: int) -> Any:
    """The C encoder of a flat container at `depth`: items separated by a line break and the
    indentation of `depth + 1`; called with the value and 0, it returns the text as strings to join.

    Made once per depth, as `JSONEncoder.encode` makes it on every call (`iterencode`): with no
    circular-reference bookkeeping, which a container of scalars cannot need; half the cost of a
    call for the small containers of a summary."""
    separator = ",\n" + " " * (indent * (depth + 1))
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:  # no C accelerator: the encoder json.dumps itself would use
        encode = json.JSONEncoder(ensure_ascii=False, separators=(separator, ": ")).encode
        return lambda value, _level: [encode(value)]
    return make(None, _refuse, _encode_string, None, ": ", separator, False, False, True)


def _refuse(value: Any) -> Any:
    """The C encoder's `default`, never reached: it is only given containers of the scalar types."""
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


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
    text = "".join(_encoder(depth, indent)(value, 0))
    inner, outer = " " * (indent * (depth + 1)), " " * (indent * depth)
    parts.append(f"{text[0]}\n{inner}{text[1:-1]}\n{outer}{text[-1]}")
