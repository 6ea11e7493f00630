"""Values inside RKNN lines: byte units, dtypes and shapes, mangled pass names, structured payloads."""

from __future__ import annotations

import functools
import re

from lark import Token, Tree
from lark.exceptions import LarkError

from logscope.parsers.grammar import load_value_parser

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


def _demangle(name: str) -> str:
    """`N4rknn21RKNNMemStatisticsPassE` (tk2 <= 1.5) and `rknn::RKNNMemStatisticsPass` -> the class name."""
    m = _MANGLED.match(name)
    if m:
        return m.group(1)
    return name.rsplit("::", 1)[-1]


def _to_bytes(value: str | None, unit: str | None) -> int | None:
    if value is None:
        return None
    return round(float(value) * _UNIT.get(unit, 1))


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
    return int(token) if token.isdigit() else None


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
    try:
        tree = load_value_parser().parse(body.strip(), start="start")
    except LarkError:
        return None
    payload = tree.children[0]
    return payload if isinstance(payload, Tree) and payload.data == expected else None


def _parse_nodes(body: str) -> tuple[list[str], list[str]] | None:
    """`remove node = [...], add node = [...]` or a bare `[...]` -> (removed, added); None if malformed."""
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
    settings = _parse_payload(body, "settings")
    if settings is None:
        return None
    out: dict[str, str] = {}
    for setting in settings.children:
        assert isinstance(setting, Tree)
        name, value = setting.children
        out[str(name)] = str(value).strip()
    return out
