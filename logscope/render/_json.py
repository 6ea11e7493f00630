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

Many values of one shape (a summary's builds and findings) can be written column by column instead
(`written_column`): each key's values over all of them at once, scalars in one encoder call, into a
template of the keys; the caller hands the texts back as `Written` values, which the writer copies.

`iter_indented` gives the same text in pieces of some tens of kilobytes, for a writer: the summary of a
100 MB log is 23 million characters, and as one string (UCS-2 when a message holds an en dash) it was
made, copied by every step after it (the final line break, the control-character escaping, the
encoding to UTF-8) and freed again, 150 MB of fresh pages each touched once.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, cast

_SCALAR_TYPES = frozenset({str, int, float, bool, type(None)})
_STR_ONLY = frozenset({str})


def dumps_indented(value: Any, indent: int = 2) -> str:
    """`json.dumps(value, indent=indent, ensure_ascii=False)`, character for character."""
    parts: list[str] = []
    try:
        _write(value, 0, indent, parts)
    except (_Unusual, RecursionError):  # json.dumps names the value, or the circular reference
        return json.dumps(value, indent=indent, ensure_ascii=False, default=_made)
    return "".join(parts)


# Parts (a few tens of characters each) gathered into one piece of `iter_indented`, and the depth
# down to which it walks containers item by item to end a piece between two items: a summary's builds
# and findings are the items at depth 2, each written whole.
_PIECE_PARTS = 2048
_PIECE_DEPTH = 2
# A `Written` item is one part of a thousand characters or more: a piece ends after this many parts
# when the last item was one (some sixteen builds or findings, tens of kilobytes).
_WRITTEN_PARTS = 32


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
        text = json.dumps(value, indent=indent, ensure_ascii=False, default=_made)
        parts.append(text.replace("\n", "\n" + " " * (indent * depth)))
    if len(parts) >= _PIECE_PARTS or (kind is Written and len(parts) >= _WRITTEN_PARTS):
        yield "".join(parts)
        parts.clear()


class Written:
    """A value given with its text: `text` is what the writer writes for `make()` at `depth` with
    `indent` (a caller that has the text cheaper than the value, e.g. the builds of a summary written
    column by column). At another depth, or when json.dumps writes the whole, `make()` is written."""

    __slots__ = ("depth", "indent", "make", "text")

    def __init__(self, text: str, depth: int, indent: int, make: Callable[[], Any]) -> None:
        self.text = text
        self.depth = depth
        self.indent = indent
        self.make = make


def _made(value: Any) -> Any:
    """json.dumps' `default`: a `Written` is its value; anything else is refused as json refuses it."""
    if type(value) is Written:
        return value.make()
    raise TypeError(f"Object of type {value.__class__.__name__} is not JSON serializable")


def written_at(value: Any, depth: int, indent: int = 2) -> str | None:
    """The text the writer writes for `value` at `depth`; None when json.dumps would have to write it
    (a value of another type, a circular reference)."""
    parts: list[str] = []
    try:
        _write(value, depth, indent, parts)
    except (_Unusual, RecursionError):
        return None
    return "".join(parts)


def encoded_scalars(values: list[Any]) -> list[str] | None:
    """Each value's text as json writes a scalar (`_scalar`), in one call of the C encoder: the values
    as one list, its items separated by a line break (a string never holds a raw one). None when a
    value is not of a plain scalar type."""
    if not _SCALAR_TYPES.issuperset(map(type, values)):
        return None
    if not values:
        return []
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:
        return [_scalar(value, type(value)) for value in values]
    text = "".join(_line_encoder(make)(values, 0))
    return text[1:-1].split("\n")


def written_column(column: list[Any], depth: int, indent: int = 2) -> list[str] | None:
    """`written_at` of each value of `column`, written together (see `written_dicts`); None when one
    is a value the writer hands to json.dumps."""
    try:
        return _column_texts(column, depth, indent)
    except RecursionError:
        return None


def written_dicts(values: list[dict[str, Any]], depth: int, indent: int = 2) -> list[str] | None:
    """`written_at` of each dict of `values` (all of type dict), written column by column: the dicts
    with the same keys in the same order share a template of their keys (`%s` for each value), and
    each key's values are written together: scalars in one call of the C encoder (`encoded_scalars`),
    dicts by this function one level deeper, lists of scalars or of dicts with their items gathered
    the same way. None when a key is not a str or a value is one the writer hands to json.dumps.

    Why: a summary's findings are thousands of dicts of a dozen keys, most values scalars or short
    lists; written one key at a time, a Python step each, they were most of a big log's JSON."""
    texts: list[str] = [""] * len(values)
    groups: dict[tuple[Any, ...], list[int]] = {}
    for position, value in enumerate(values):
        keys = tuple(value)
        members = groups.get(keys)
        if members is None:
            groups[keys] = [position]
        else:
            members.append(position)
    for keys, members in groups.items():
        if not keys:
            for position in members:
                texts[position] = "{}"
            continue
        if not _STR_ONLY.issuperset(map(type, keys)):
            return None
        rows = [values[position] for position in members]
        columns = []
        for key in keys:
            column = _column_texts([row[key] for row in rows], depth + 1, indent)
            if column is None:
                return None
            columns.append(column)
        template = _dict_template(keys, depth, indent)
        for position, cells in zip(members, zip(*columns, strict=True), strict=True):
            texts[position] = template % cells
    return texts


def _column_texts(column: list[Any], depth: int, indent: int) -> list[str] | None:
    """The writer's text of each value of `column` at `depth` (see `written_dicts`)."""
    encoded = encoded_scalars(column)
    if encoded is not None:
        return encoded
    kinds = set(map(type, column))
    if kinds == {dict}:
        return written_dicts(column, depth, indent)
    if kinds <= {list, tuple}:
        return _written_lists(column, depth, indent)
    texts = [written_at(value, depth, indent) for value in column]
    return None if None in texts else cast(list[str], texts)


def _written_lists(column: list[Any], depth: int, indent: int) -> list[str] | None:
    """The writer's text of each list (or tuple) of `column` at `depth`: every list's items gathered
    and written as one column one level deeper, then joined per list."""
    items = [item for value in column for item in value]
    written = _column_texts(items, depth + 1, indent) if items else []
    if written is None:
        return None
    inner = "\n" + " " * (indent * (depth + 1))
    outer = "\n" + " " * (indent * depth)
    separator = "," + inner
    texts = []
    at = 0
    for value in column:
        if value:
            texts.append(f"[{inner}{separator.join(written[at : at + len(value)])}{outer}]")
            at += len(value)
        else:
            texts.append("[]")
    return texts


@functools.cache
def _dict_template_cached(keys: tuple[str, ...], depth: int, indent: int) -> str:
    return dict_template(keys, depth, indent)


def _dict_template(keys: tuple[str, ...], depth: int, indent: int) -> str:
    """A non-empty dict's text at `depth` with `%s` for each value, kept for up to `_KEYS_KEPT` shapes."""
    if _dict_template_cached.cache_info().currsize < _KEYS_KEPT:
        return _dict_template_cached(keys, depth, indent)
    return dict_template(keys, depth, indent)


def dict_template(
    keys: Sequence[str], depth: int, indent: int = 2, values: Mapping[str, str] | None = None
) -> str:
    """A non-empty dict's text at `depth` as the writer writes it, with `%s` for each value, or for a key
    of `values` the template given there (a nested dict's or list's, itself with `%s` for its values)."""
    inner = "\n" + " " * (indent * (depth + 1))
    given = values or {}
    items = ",".join(
        inner + _encode_string(key).replace("%", "%%") + ": " + given.get(key, "%s") for key in keys
    )
    return "{" + items + "\n" + " " * (indent * depth) + "}"


@functools.cache
def _line_encoder(make: Any) -> Any:
    return make(None, _refuse, _encode_string, None, ": ", "\n", False, False, True)


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
    if kind is Written:
        if value.depth == depth and value.indent == indent:
            parts.append(value.text)
        else:
            _write(value.make(), depth, indent, parts)
        return
    if kind is dict:
        if not value:
            parts.append("{}")
            return
        if _SCALAR_TYPES.issuperset(map(type, value.values())) and _STR_ONLY.issuperset(map(type, value)):
            _flat(value, depth, indent, parts)
            return
        keyed = _keyed(depth, indent)
        append = parts.append
        append("{")
        first = True
        for key, item in value.items():
            if type(key) is not str:
                raise _Unusual
            text = keyed.get(key)
            if text is None:
                text = _key_text(keyed, key, depth, indent)
            if first:
                append(text[1:])  # (no comma before the first item)
                first = False
            else:
                append(text)
            # The usual scalars written here, without a call each: most values of a summary's dicts.
            item_kind = type(item)
            if item_kind is str:
                append(_encode_string(item))
            elif item_kind is int:
                append(int.__repr__(item))
            elif item is None:
                append("null")
            elif item_kind in _SCALAR_TYPES:
                append(_scalar(item, item_kind))
            else:
                _write(item, depth + 1, indent, parts)
        append("\n" + " " * (indent * depth) + "}")
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


@functools.cache
def _keyed(depth: int, indent: int) -> dict[str, str]:
    """The text before each key's value in a dict at `depth`: the separator, the line break and the
    indentation of the item, the encoded key and `": "`, made once per key (a summary repeats the same
    few dozen keys in every build and finding)."""
    return {}


# Keys kept per depth: a summary has a few dozen; a value with many distinct keys writes the rest as it goes.
_KEYS_KEPT = 4096


def _key_text(keyed: dict[str, str], key: str, depth: int, indent: int) -> str:
    text = ",\n" + " " * (indent * (depth + 1)) + _encode_string(key) + ": "
    if len(keyed) < _KEYS_KEPT:
        keyed[key] = text
    return text


def _flat(value: Any, depth: int, indent: int, parts: list[str]) -> None:
    """A non-empty dict or list of scalars: the C encoder's text, with the opening and closing line
    breaks json.dumps puts inside the brackets."""
    text = "".join(_encoder(depth, indent)(value, 0))
    inner, outer = " " * (indent * (depth + 1)), " " * (indent * depth)
    parts.append(f"{text[0]}\n{inner}{text[1:-1]}\n{outer}{text[-1]}")
