"""Values inside RKNN lines: byte units, dtypes and shapes, mangled pass names, structured payloads."""

from __future__ import annotations

import functools
import math
import re
from typing import TYPE_CHECKING

from logscope.parsers.grammar import load_value_parser

if TYPE_CHECKING:  # Lark is imported only when a payload falls back to the grammar (rare in real logs)
    from lark import Token, Tree

_DTYPE_BYTES = {
    "INT4": 0.5,
    "UINT4": 0.5,
    "INT8": 1,
    "UINT8": 1,
    "BOOL": 1,
    "INT16": 2,
    "UINT16": 2,
    "FLOAT16": 2,
    "BFLOAT16": 2,
    "INT32": 4,
    "UINT32": 4,
    "FLOAT": 4,
    "FLOAT32": 4,
    "INT64": 8,
    "UINT64": 8,
    "FLOAT64": 8,
}


_UNIT = {
    None: 1,
    "": 1,
    "B": 1,
    "bytes": 1,
    "KB": 1024,
    "KiB": 1024,
    "MB": 1024**2,
    "MiB": 1024**2,
    "GB": 1024**3,
    "GiB": 1024**3,
}


_MANGLED = re.compile(r"^N4rknn\d+(\w+?)E$")


@functools.lru_cache(maxsize=4096)  # a build runs the same few dozen passes; bounded whatever the log says
def _demangle(name: str) -> str:
    """`N4rknn21RKNNMemStatisticsPassE` (tk2 <= 1.5) and `rknn::RKNNMemStatisticsPass` -> the class name."""
    m = _MANGLED.match(name)
    if m:
        return m.group(1)
    return name.rsplit("::", 1)[-1]


def _to_bytes(value: str | None, unit: str | None) -> int | None:
    """`12.5` MB -> bytes. A figure that overflows to infinity (a 400-digit number) or past int64 is no
    byte count logscope can hold: it is missing (None), never a traceback."""
    if value is None:
        return None
    number = float(value) * _UNIT.get(unit, 1)
    return round(number) if math.isfinite(number) and abs(number) < 2**63 else None


@functools.lru_cache(maxsize=8192)
def _shape_bytes(shape: str | None, dtype: str) -> int | None:
    if not shape or dtype not in _DTYPE_BYTES:
        return None
    inner = shape.strip("()")
    count = 1
    for dim in inner.split(","):
        if dim == "":
            continue
        count *= int(dim)
    return int(count * _DTYPE_BYTES[dtype])


def _int_or_none(token: str) -> int | None:
    return int(token) if token.isdecimal() else None


def _float_or_none(token: str) -> float | None:
    try:
        return float(token)
    except ValueError:
        return None


def _string_value(token: Token) -> str:
    raw = str(token)[1:-1]
    return re.sub(r"\\(.)", r"\1", raw)


def _parse_payload(body: str, expected: str) -> Tree | None:
    """Parse a payload with grammars/values.lark; None unless it is well formed and of the `expected` kind."""
    from lark import Tree
    from lark.exceptions import LarkError

    try:
        tree = load_value_parser().parse(body.strip(), start="start")
    except LarkError:
        return None
    payload = tree.children[0]
    return payload if isinstance(payload, Tree) and payload.data == expected else None


# The payloads of grammars/values.lark as whole-payload regexes: a payload they match is read without
# Lark (the LALR parse cost ~0.5 ms a line, a third of a verbose build log's parse); anything they do
# not match goes to Lark, which decides (and says "malformed"). They accept only what the grammar
# accepts and read the same values: tokens are told apart by their first character ('"[],= or a name),
# blanks between tokens are the grammar's %ignore (spaces and tabs), and KEY outranks NAME at the
# start exactly as Lark's priority does (a `remove node`/`add node` start is never a setting).
# tests/test_grammars.py checks both readings agree on every fixture payload and on mangled ones.
_WS = r"[ \t]*+"
# The grammar's STRING, unrolled (`[^'\\]*+(?:\\.[^'\\]*+)*+` reads the same as `(?:[^'\\]|\\.)*`, a run at
# a time instead of an alternation per character: 3x faster on long node lists).
_STRING = r"'[^'\\]*+(?:\\.[^'\\]*+)*+'|" + r'"[^"\\]*+(?:\\.[^"\\]*+)*+"'
_NODE_LIST = rf"\[{_WS}(?:(?:{_STRING}){_WS}(?:,{_WS}(?:{_STRING}){_WS})*+)?,?{_WS}\]"
_CLAUSE = rf"(?:(?P<key>remove node|add node){_WS}={_WS})?(?P<list>{_NODE_LIST})"
_SETTING = r"(?P<name>[A-Za-z_][A-Za-z0-9_\-]*+)[ \t]*+=[ \t]*+(?P<value>[^,\s][^,]*+)"


def _whole(item: str) -> re.Pattern[str]:
    """`item ("," item)* ","?` with the grammar's blanks, as a regex without groups (for fullmatch)."""
    plain = re.sub(r"\?P<\w+>", "?:", item)
    return re.compile(rf"{plain}(?:{_WS},{_WS}{plain})*+{_WS},?")


_NODE_CLAUSES, _CLAUSE_ITER, _STRING_ITER = _whole(_CLAUSE), re.compile(_CLAUSE), re.compile(_STRING)
_SETTINGS, _SETTING_ITER = _whole(_SETTING), re.compile(_SETTING)
_ESCAPED = re.compile(r"\\(.)")


def _unquote(token: str) -> str:
    return _ESCAPED.sub(r"\1", token[1:-1]) if "\\" in token else token[1:-1]


def _read_nodes(body: str) -> tuple[list[str], list[str]] | None:
    """The node clauses of `body` read by regex, or None when the regex does not take them whole."""
    if _NODE_CLAUSES.fullmatch(body) is None:
        return None
    removed: list[str] = []
    added: list[str] = []
    for clause in _CLAUSE_ITER.finditer(body):
        tokens = _STRING_ITER.findall(clause["list"])  # (no groups: each whole string token)
        names = [_unquote(t) for t in tokens] if "\\" in clause["list"] else [t[1:-1] for t in tokens]
        (added if clause["key"] == "add node" else removed).extend(names)
    return removed, added


def _read_settings(body: str) -> dict[str, str] | None:
    """The settings of `body` read by regex, or None when the regex does not take them whole."""
    if _SETTINGS.fullmatch(body) is None:
        return None
    return {m["name"]: m["value"].strip() for m in _SETTING_ITER.finditer(body)}


def _parse_nodes(body: str) -> tuple[list[str], list[str]] | None:
    """`remove node = [...], add node = [...]` or a bare `[...]` -> (removed, added); None if malformed."""
    return _read_nodes(body.strip()) or _lark_nodes(body)


def _lark_nodes(body: str) -> tuple[list[str], list[str]] | None:
    """`_parse_nodes` by the grammar alone (the reference the regex reading is tested against)."""
    from lark import Token, Tree

    clauses = _parse_payload(body, "node_clauses")
    if clauses is None:
        return None
    removed: list[str] = []
    added: list[str] = []
    for clause in clauses.children:
        assert isinstance(clause, Tree)
        if clause.data == "keyed":
            key, node_list = clause.children
            names = [_string_value(t) for t in node_list.children if isinstance(t, Token)]
            (added if str(key) == "add node" else removed).extend(names)
        else:
            node_list = clause.children[0]
            removed.extend(_string_value(t) for t in node_list.children if isinstance(t, Token))
    return removed, added


def _parse_settings(body: str) -> dict[str, str] | None:
    """`compress = 0, ..., output_optimize = 1,enable_argb_group=0` -> {name: value}; None if malformed."""
    fast = _read_settings(body.strip())
    return fast if fast is not None else _lark_settings(body)


def _lark_settings(body: str) -> dict[str, str] | None:
    """`_parse_settings` by the grammar alone (the reference the regex reading is tested against)."""
    from lark import Tree

    settings = _parse_payload(body, "settings")
    if settings is None:
        return None
    out: dict[str, str] = {}
    for setting in settings.children:
        assert isinstance(setting, Tree)
        name, value = setting.children
        out[str(name)] = str(value).strip()
    return out
