"""The cells after OutputShape in layer and eval_perf rows, converted by the header's columns.

Used for rows whose token count matches their header (or a known layout), which is every row of a
well-formed table: a converter generated per header is the fast path (a 50 MB log has ~56,000 layer
rows), and a run of such rows is read column by column (`tail_columns`: no Python call per row). Rows
with empty cells or pasted spacing go through `logscope.parsers.table` instead.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence
from typing import Any

from logscope.parsers.rknn.values import _float_or_none
from logscope.parsers.table import Layout, identify, layout_from_header, read_row

_LAYOUTS_BY_COUNT: dict[int, tuple[str, ...]] = {
    # Number of tail tokens before FullName -> column names, for rows seen without their header.
    0: (),
    2: ("Cycles(DDR/NPU/Total)", "RW(KB)"),  # 2.x build [31]
    5: ("DDR Cycles", "NPU Cycles", "Total Cycles", "Task/Lut", "RW(KB)"),  # 1.6 build [33] (inferred)
    8: (
        "DDR Cycles",
        "NPU Cycles",
        "Total Cycles",
        "Time(us)",
        "MacUsage(%)",
        "Task Number",
        "Lut Number",
        "RW(KB)",
    ),  # 1.5 build [09]
}


# The layer-table tail columns, in the `layers` schema order, that _parse_layer_tail fills.
_TAIL_SLOTS = (
    "ddr_cycles",
    "npu_cycles",
    "total_cycles",
    "time_us",
    "mac_usage",
    "workload",
    "task_number",
    "lut_number",
    "rw_kb",
    "full_name",
    "task_size",  # eval_perf 1.5 only (not in the layers frame)
    "regcmd_size",
)


_LAYER_TAIL = _TAIL_SLOTS[: _TAIL_SLOTS.index("full_name") + 1]  # the slots the layers frame keeps


_SLOT = {name: i for i, name in enumerate(_TAIL_SLOTS)}


_FULL_NAME = _SLOT["full_name"]


_INT, _FLOAT, _TEXT, _SPLIT = 0, 1, 2, 3  # how a cell's token is converted (`\\` means n/a)


_Step = tuple[int, tuple[int, ...]]  # (conversion, slots it fills)


_PLANS: dict[int, tuple[tuple[str, ...], tuple[_Step | None, ...]]] = {}


_SINGLE_CELLS = {
    "DDR Cycles": ("ddr_cycles", _INT),
    "NPU Cycles": ("npu_cycles", _INT),
    "Total Cycles": ("total_cycles", _INT),
    "Time(us)": ("time_us", _INT),
    "Task Number": ("task_number", _INT),
    "Lut Number": ("lut_number", _INT),
    "Task Size": ("task_size", _INT),
    "Regcmd Size": ("regcmd_size", _INT),
    "RW(KB)": ("rw_kb", _FLOAT),
}


def _cell(column: str) -> _Step | None:
    """How one header column's token lands in the tail slots; None for a column logscope does not keep."""
    if column.startswith("Cycles("):
        return _SPLIT, (_SLOT["ddr_cycles"], _SLOT["npu_cycles"], _SLOT["total_cycles"])
    if column == "Task/Lut":
        return _SPLIT, (_SLOT["task_number"], _SLOT["lut_number"])
    single = _SINGLE_CELLS.get(column)
    if single is not None:
        return single[1], (_SLOT[single[0]],)
    if column.startswith("MacUsage"):
        return _TEXT, (_SLOT["mac_usage"],)
    if column.startswith("WorkLoad"):
        return _TEXT, (_SLOT["workload"],)
    return None


def _tail_plan(columns: tuple[str, ...]) -> tuple[_Step | None, ...]:
    """The conversion steps of a header's columns, computed once per header object (a table of tens
    of thousands of rows shares one header tuple; hashing it per row cost more than converting)."""
    cached = _PLANS.get(id(columns))
    if cached is not None and cached[0] is columns:
        return cached[1]
    steps = tuple(_cell(column) for column in columns)
    if len(_PLANS) > 256:
        _PLANS.clear()
    _PLANS[id(columns)] = (columns, steps)
    return steps


def _parse_layer_tail(tail: str, header: tuple[str, ...] | None) -> tuple[Any, ...] | None:
    """Split what follows OutputShape according to the header's columns (or the row's own shape).

    Returns the `_TAIL_SLOTS` values in order, or None when the row fits neither its header nor any
    known layout. Each plan is compiled once into a converter (a 50 MB log has ~56,000 layer rows).
    """
    if " - Up:" in tail:
        tail = tail.replace(" - Up:", "-Up:")  # 1.5 perf WorkLoad cell `100.0%/0.0%/0.0% - Up:0.0%`
    tokens = tail.split()
    if not tokens:
        return _EMPTY_TAIL
    count = len(tokens) - 1
    columns = header
    if columns is not None and len(columns) != count:
        return None  # a row of a headed table with an empty or extra cell: `read_tail` places its cells
    if columns is None:
        columns = _LAYOUTS_BY_COUNT.get(count)
        if columns is None:
            return None
    return _tail_converter(_tail_plan(columns))(tokens)


_EMPTY_TAIL: tuple[Any, ...] = (None,) * len(_TAIL_SLOTS)


def read_tails(
    header: tuple[str, ...] | None, layout: Layout | None, tails: list[str]
) -> list[tuple[Any, ...] | None]:
    """The `_TAIL_SLOTS` values of each tail, as `_parse_layer_tail` reads it by the header, else
    `read_tail` by the header's layout (None: neither can). A tail whose token count fits the header
    (every row of a well-formed table) goes straight to the header's converter, looked up once for
    all the tails instead of once per row; any other tail takes the per-row path."""
    if header is None:
        return [read_layer_tail(tail, None, layout) for tail in tails]
    convert, width = _tail_converter(_tail_plan(header)), len(header) + 1
    return [
        convert(tokens)
        if len(tokens) == width and " - Up:" not in tail
        else read_layer_tail(tail, header, layout)
        for tail, tokens in zip(tails, map(str.split, tails), strict=True)
    ]


def tail_columns(header: tuple[str, ...] | None, tails: Sequence[str]) -> list[Any] | None:
    """The `_LAYER_TAIL` values of a run's tails as columns (each a sequence of one value per tail), read
    as `read_tails` reads them, with no Python call per tail; None when a tail needs the per-row path.

    Why it reads the same: `read_tails` converts a tail with the header's converter exactly when the
    header is known, the tail holds no ` - Up:` and it splits into one token per header column plus
    the FullName. Here a run goes on only when every tail does (the token counts of all tails, and no
    token `-`: the `-` of ` - Up:` has blanks on both sides; looked for only in the columns whose
    conversion did not already show there is none: `-` is not decimal, `float` refuses it, and it is
    not a split cell of two or more parts), and each header column's tokens, gathered by one
    transposition, go through the conversion the converter writes for that column, applied to the
    whole column:
    `int(t) if t.isdecimal() else None` is `map(int, ...)` when the column's tokens joined are decimal
    and none is empty (so each of them is decimal), one conversion spread over the column when all its
    tokens are the same token (a simulator prints zeros in every cycle column), else the expression
    per token; `_float_or_none` is `map(float, ...)` unless a token raises, then the function per
    token; `\\` is None by one `dict.get`; a split cell (`a/b/c`) is its parts' columns when every
    cell has the header's number of parts, else per cell. A slot two columns fill keeps the later one,
    as in the converter."""
    if header is None or not tails:
        return None
    tokens = list(map(str.split, tails))
    width = len(header) + 1
    if list(map(len, tokens)).count(width) != len(tokens):
        return None
    cells = list(zip(*tokens, strict=True))
    count = len(tails)
    columns: list[Any] = [None] * len(_LAYER_TAIL)
    unchecked = [cells[-1]]  # the columns whose conversion did not show that no token is `-`
    for index, step in enumerate(_tail_plan(header)):
        column = cells[index]
        if step is None:
            unchecked.append(column)
            continue
        kind, slots = step
        if kind == _SPLIT:
            parts, split = _split_columns(column, len(slots))
            for slot, part in zip(slots, parts, strict=True):
                if slot < len(columns):
                    columns[slot] = part
        else:
            values: list[Any]
            values, split = (
                _int_column(column)
                if kind == _INT
                else _float_column(column)
                if kind == _FLOAT
                else (_text_column(column), False)
            )
            if slots[0] < len(columns):
                columns[slots[0]] = values
        if not split:
            unchecked.append(column)
    if any("-" in column for column in unchecked):  # (a tail holding ` - Up:` holds the token `-`)
        return None
    columns[_FULL_NAME] = cells[-1]
    return [[None] * count if column is None else column for column in columns]


def _int_column(tokens: tuple[str, ...]) -> tuple[list[int | None], bool]:
    """`int(t) if t.isdecimal() else None` of each token, and whether every token is decimal."""
    first = tokens[0]
    if tokens.count(first) == len(tokens):
        return [int(first) if first.isdecimal() else None] * len(tokens), first.isdecimal()
    if "".join(tokens).isdecimal() and "" not in tokens:  # (a part of `a//b` is empty)
        return list(map(int, tokens)), True
    return [int(t) if t.isdecimal() else None for t in tokens], False


def _float_column(tokens: tuple[str, ...]) -> tuple[list[float | None], bool]:
    """`_float_or_none` of each token, and whether `float` read every one."""
    try:
        return list(map(float, tokens)), True
    except ValueError:
        return list(map(_float_or_none, tokens)), False


_NOT_APPLICABLE = {"\\": None}.get


def _text_column(tokens: tuple[str, ...]) -> list[str | None]:
    """Each token, None for `\\` (not applicable)."""
    return list(map(_NOT_APPLICABLE, tokens, tokens))


def _split_columns(tokens: tuple[str, ...], parts: int) -> tuple[list[list[int | None]], bool]:
    """The `parts` integer columns of cells `a/b/...`: for each cell, each part as `_int_column` reads
    it when the cell has `parts` parts, else None in every column (as the converter reads them); and
    whether every cell has `parts` parts (two or more: a cell `-` has one)."""
    pieces = [token.split("/") for token in tokens]
    if all(len(piece) == parts for piece in pieces):
        return [_int_column(column)[0] for column in zip(*pieces, strict=True)], True
    return [
        [int(p[j]) if len(p) == parts and p[j].isdecimal() else None for p in pieces] for j in range(parts)
    ], False


def read_layer_tail(
    tail: str, header: tuple[str, ...] | None, layout: Layout | None
) -> tuple[Any, ...] | None:
    """One tail's values: converted token by token when they match the header (the fast path), else
    placed by the header's layout (empty cells, pasted spacing); None when neither reads it."""
    values = _parse_layer_tail(tail, header)
    if values is None and layout is not None:
        values = read_tail(layout, tail)
    return values


_CONVERTERS: dict[tuple[_Step | None, ...], Callable[[list[str]], tuple[Any, ...]]] = {}


def _tail_converter(plan: tuple[_Step | None, ...]) -> Callable[[list[str]], tuple[Any, ...]]:
    """A function `tokens -> tail slots` generated for one plan: the cell conversions written out as one
    tuple expression (as `collections.namedtuple` generates its code) instead of a loop of branches;
    twice as fast on layer-heavy logs. The last token is the FullName."""
    converter = _CONVERTERS.get(plan)
    if converter is not None:
        return converter
    exprs = ["None"] * len(_TAIL_SLOTS)
    exprs[_FULL_NAME] = "tokens[-1]"
    body = []
    for i, step in enumerate(plan):
        if step is None:
            continue
        kind, slots = step
        token = f"tokens[{i}]"
        if kind == _INT:
            exprs[slots[0]] = f"(int({token}) if {token}.isdecimal() else None)"
        elif kind == _FLOAT:
            exprs[slots[0]] = f"_float_or_none({token})"
        elif kind == _TEXT:
            exprs[slots[0]] = f"(None if {token} == {chr(92)!r} else {token})"  # `\\` is n/a
        else:
            body.append(f"    p{i} = {token}.split('/'); ok{i} = len(p{i}) == {len(slots)}")
            for j, slot in enumerate(slots):
                exprs[slot] = f"(int(p{i}[{j}]) if ok{i} and p{i}[{j}].isdecimal() else None)"
    source = "def convert(tokens):\n" + "".join(f"{line}\n" for line in body)
    source += "    return (" + ", ".join(exprs) + ",)\n"
    namespace: dict[str, Any] = {"_float_or_none": _float_or_none}
    exec(source, namespace)  # generated from the fixed table of column conversions above
    converter = namespace["convert"]
    _CONVERTERS[plan] = converter
    return converter


# ---------------------------------------------------------------------- by layout
# What a cell of each layer / eval_perf column holds; `\\` (not applicable) is allowed in every one.
_INT_CELL, _RATIO_CELL = r"\d+", r"\d+/\d+"
_CELL_KINDS = {
    "Cycles(DDR/NPU/Total)": r"\d+/\d+/\d+",
    "DDR Cycles": _INT_CELL,
    "NPU Cycles": _INT_CELL,
    "Total Cycles": _INT_CELL,
    "Time(us)": _INT_CELL,
    "Task Number": _INT_CELL,
    "Lut Number": _INT_CELL,
    "Task Size": _INT_CELL,
    "Regcmd Size": _INT_CELL,
    "Task/Lut": _RATIO_CELL,
    "RW(KB)": r"\d+(?:\.\d+)?",
    # One value per core on multi-core runs (`6.95/6.95/6.95`).
    "MacUsage(%)": r"\d+(?:\.\d+)?(?:/\d+(?:\.\d+)?)*",
    # `100.0%/0.0%/0.0%`; 1.5 appends ` - Up:0.0%`, joined to `-Up:0.0%` before reading.
    "WorkLoad(0/1/2)": r"\d+(?:\.\d+)?%(?:/\d+(?:\.\d+)?%)*",
    "WorkLoad(0/1/2)-ImproveTherical": r"\d+(?:\.\d+)?%(?:/\d+(?:\.\d+)?%)*(?:-Up:\d+(?:\.\d+)?%)?",
    # rk3576 build tables (toolkit 2.2-2.5) add `SparseRatio` (`0%`), blank on Input/OutputOperator rows.
    "SparseRatio": r"\d+(?:\.\d+)?%",
}
_KINDS = {name: rf"\\|{kind}" for name, kind in _CELL_KINDS.items()}
_KNOWN = (*_CELL_KINDS, "FullName")
# eval_perf 2.x leaves MacUsage blank on rows without MACs, and FullName blank on some rows.
_NULLABLE = ("MacUsage(%)", "FullName", "SparseRatio")


@functools.lru_cache(maxsize=256)  # a Layout is immutable; a log repeats its header once per build
def tail_layout(columns: str) -> Layout:
    """The layout of a layer / eval_perf header's columns after OutputShape (FullName last): 18 us of
    work per header, once per distinct header (a log of 528 builds printed the same one 528 times)."""
    return layout_from_header(columns, known=_KNOWN, kinds=_KINDS, nullable=_NULLABLE, rest=True)


# Rows seen without their header, identified by their cells' kinds (not only their count): the eval_perf
# 2.x layout first, since its `Cycles a/b/c, Time, MacUsage, WorkLoad, RW` has as many cells as the 1.6
# build layout `DDR, NPU, Total, Task/Lut, RW` and a count alone took its Time for NPU cycles.
PERF_2X = tail_layout("Cycles(DDR/NPU/Total)  Time(us)  MacUsage(%)  WorkLoad(0/1/2)  RW(KB)  FullName")
_HEADERLESS = (
    PERF_2X,
    *(tail_layout("  ".join((*_LAYOUTS_BY_COUNT[n], "FullName"))) for n in (2, 5, 8)),
)


def identify_tail(tail: str) -> Layout | None:
    """The layout a header-less row's tail fits (marked `headerless`), or None."""
    return identify([tail.replace(" - Up:", "-Up:")], _HEADERLESS)


def read_tail(layout: Layout, tail: str) -> tuple[Any, ...] | None:
    """The `_TAIL_SLOTS` values of a row tail read by the layout (empty cells are None), or None."""
    text = tail.replace(" - Up:", "-Up:")
    cells = read_row(layout, text)
    if cells is None:
        return None
    names = layout.names
    has_name = names[-1] == "FullName"
    columns = names[:-1] if has_name else names
    tokens = [c if c is not None else "\\" for c in cells]
    if not has_name:
        tokens.append("\\")
    values = list(_tail_converter(_tail_plan(_interned(columns)))(tokens))
    if not has_name or cells[-1] is None:
        values[_FULL_NAME] = None
    return tuple(values)


_INTERNED: dict[tuple[str, ...], tuple[str, ...]] = {}


def _interned(columns: tuple[str, ...]) -> tuple[str, ...]:
    """One tuple object per column list, so `_tail_plan`'s cache (keyed by identity) hits."""
    return _INTERNED.setdefault(columns, columns)


# ---------------------------------------------------------------------- ranking tables
# 2.x `OpType CallNumber CPUTime(us) GPUTime(us) NPUTime(us) TotalTime(us) TimeRatio(%)` (ratio with `%`);
# 1.5 `OpType Call Number CPU Time(us) NPU Time(us) Total Time(us) Time Ratio(%)` (no GPU, no `%`).
RANKING_COLUMNS = {
    "OpType": "op_type",
    "CallNumber": "call_number",
    "CPUTime(us)": "cpu_time_us",
    "GPUTime(us)": "gpu_time_us",
    "NPUTime(us)": "npu_time_us",
    "TotalTime(us)": "total_time_us",
    "TimeRatio(%)": "time_ratio_pct",
}
_RANKING_KNOWN = (
    *RANKING_COLUMNS,
    *("Call Number", "CPU Time(us)", "GPU Time(us)", "NPU Time(us)", "Total Time(us)", "Time Ratio(%)"),
)
_RANKING_KINDS = {name: (r"\d+(?:\.\d+)?%?" if "Ratio" in name else r"\d+") for name in _RANKING_KNOWN[1:]}
_RANKING_HEADERLESS: tuple[Layout, ...] = ()
# Where a table line's cells start: after the native logger's `D RKNN: [ts] ` prefix and indentation.
_LINE_PREFIX = re.compile(r"[ \t]*(?:[DIWE] RKNN: (?:\[[^\]\n]*\] )?)?[ \t]*")


def _body_start(line: str) -> int:
    m = _LINE_PREFIX.match(line)
    return m.end() if m else 0


def ranking_layout(header: str) -> Layout:
    """The layout of a ranking header (either spelling, spaces collapsed or not)."""
    return layout_from_header(header, known=_RANKING_KNOWN, kinds=_RANKING_KINDS)


def identify_ranking(row: str) -> Layout | None:
    """The ranking layout (2.x with GPU time, or 1.5 without) a header-less row fits, or None."""
    global _RANKING_HEADERLESS
    if not _RANKING_HEADERLESS:
        _RANKING_HEADERLESS = (
            ranking_layout("  ".join(RANKING_COLUMNS)),
            ranking_layout("  ".join(n for n in RANKING_COLUMNS if n != "GPUTime(us)")),
        )
    return identify([row], _RANKING_HEADERLESS)


def ranking_value(column: str, cell: str | None) -> Any:
    if cell is None or column == "op_type":
        return cell
    if column == "time_ratio_pct":
        return float(cell.rstrip("%"))
    return int(cell)
