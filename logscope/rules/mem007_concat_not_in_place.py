"""A Concat's inputs are allocated apart from its output instead of being written in place.

## What it does
Reads the feature-tensor table of each build (the pool-resident rows of `logscope.analysis.pool`).
The table's `ID` is the operator that *consumes* a tensor, so the inputs of a Concat are the rows whose
ID is the Concat's layer ID (`User` starting with `Concat`, or a layer-table row of that ID whose
OpType does). Its output is the tensor with the Concat's output shape (the layer table's
OutputShape, else the input shapes summed along the one axis where they differ) that is first
consumed soonest after the Concat (ties: a name containing `concat`, then the earlier line); every
row listing that tensor gives an output range. An input is **in place** when its [Start, End) lies
inside an output range: the producer wrote it straight into its slice of the output, and the Concat
moves nothing. A Concat is reported when the inputs that are not in place add up to at least
`min_extra_bytes` (64 KiB): the extra bytes are the sum of those inputs' Size, counting bytes two of
them share once (the generated benchmark logs list a tensor twice at one address). At most
`max_findings` (10) Concats per build are reported, largest first.

Inputs outside the pool (the graph input in its own DMA buffer, as in [29]) and const inputs are not
judged: they cannot be written in place. A Concat whose output row the table does not list (an elided
table, a graph output) is not judged.

Severity is **info**: materialising a Concat is what RKNN routinely does — every Concat in the perf
tables of [03] and [11] costs DDR cycles and time (`/model.2/Concat` of [03]: 935,081 DDR cycles,
2002 µs) — and the extra bytes raise the memory a build needs only when the Concat runs at the
pool's busiest step.
There the finding is a **warning**: the Concat's step is the pool's lower-bound step and a separately
allocated input is part of that bound, so those bytes are part of the feature-map peak.

## Why it matters
A Concat done by copying holds its inputs and its output at the same time and moves every byte once
more through DDR. Written in place, the producers' outputs already are the Concat's output: the inputs
take no memory of their own and the copy disappears.

## Example
No real fixture prints a Concat in a tensor table. The case `copied-inputs-info` of
`tests/rules/cases/MEM007.toml` is synthetic, in the row layout of
`fixtures/rknn/09-build-verbose-mobilenetv1-rv1106-tk2-1.5.2-simulator.log`:
```text
D RKNN: [15:13:15.953] 4   Concat         Relu6__7:0    INT8      (1,32,112,112)   (1,2,112,112,16)   | 0x0059f280 0x00601280 0x00062000
D RKNN: [15:13:15.953] 4   Concat         Relu6__9:0    INT8      (1,32,112,112)   (1,2,112,112,16)   | 0x00601280 0x00663280 0x00062000
D RKNN: [15:13:15.953] 5   ConvClip       concat__4:0   INT8      (1,64,112,112)   (1,4,112,112,16)   | 0x00454680 0x00518680 0x000c4000
```
Layer 4's output `concat__4:0` (first consumed by op 5) is at [0x00454680, 0x00518680); both inputs lie
above it: 784 KiB (802,816 B) held apart and copied. In place they would be its two halves,
[0x00454680, 0x004b6680) and [0x004b6680, 0x00518680). The pool's busiest step is op 3, not the
Concat, so the finding is info.

## How to fix
- Give the Concat inputs channel counts that are multiples of the NPU channel block (16 for INT8): a
  slice of an NC1HWC2 output is contiguous only on block boundaries.
- Build with `optimization_level=3` and the newest RKNN-Toolkit2, which fold more Concats.
- Concatenate along channels (axis 1), right after the producers; a Concat of tensors produced long
  before keeps them alive across the ops between.

## Options
- `min_extra_bytes` (int, 64 KiB): Concats whose separately allocated inputs are smaller are not reported.
- `max_findings` (int, 10): at most this many Concats per build (largest extra bytes first).
"""

from __future__ import annotations

import bisect
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from logscope.analysis.pool import factorised_codes
from logscope.model import ParsedLog
from logscope.rules._common import Columns, KiB, as_str, columns, fmt_bytes, listed, parse_shape
from logscope.rules._pool import FeaturePool, feature_pools
from logscope.rules.finding import Finding, Severity

CODE = "MEM007"
NAME = "concat-not-in-place"
SEVERITY = Severity.info
NEEDS = ("tensors",)


@dataclass(frozen=True)
class Options:
    min_extra_bytes: int = 64 * KiB
    max_findings: int = 10


OPTIONS = Options

HINT = (
    "give Concat inputs channel counts that are multiples of the NPU channel block (16 for INT8) so each "
    "is a contiguous slice of the output; build with optimization_level=3 and the newest toolkit; "
    "concatenate along channels right after the producers"
)


@dataclass(frozen=True)
class _Layer:
    output_shape: str | None
    full_name: str | None
    line: int | None


def check(log: ParsedLog, options: Options) -> Iterator[Finding]:
    pools = feature_pools(log)
    if not pools:
        return
    layers = _concat_layers(log.frames.get("layers"))
    # Which builds have a Concat at all, from whole-frame columns read once: most have none, and their
    # rows are then never read. A build's rows are the pool's plain lists, never a frame per build.
    tensors = log.frames["tensors"]
    cols = columns(tensors)
    concat_user = _starts_with(cols.array("user_op"), "Concat")
    op_ids = cols.ints("op_id", missing=-1)
    # The shapes as codes of the distinct values (shared with MEM005), each value normalised once
    # (spaces dropped); a missing shape (code -1) reads as "", the last entry.
    shape_codes, shape_values = cols.codes("orig_shape")
    normed = [v if " " not in v else "".join(v.split()) for v in map(str, shape_values)] + [""]
    codes_of: dict[str, list[int]] = {}  # each normalised shape's codes (a few raw spellings at most)
    for code, shape in enumerate(normed):
        codes_of.setdefault(shape, []).append(code)
    for build_index, pool in pools.items():
        build_layers = layers.get(build_index, {})
        positions = pool.resident_arrays()[0]
        build_ids = op_ids[positions]
        concat_ids = set(build_ids[concat_user[positions]].tolist())
        if build_layers:
            concat_ids |= set(build_layers).intersection(build_ids.tolist())
        concat_ids.discard(-1)
        if not concat_ids:
            continue
        yield from _check_build(
            pool, build_layers, concat_ids, (build_ids, shape_codes[positions], normed, codes_of), options
        )


def _starts_with(column: Any, prefix: str) -> np.ndarray:
    """Per row: the cell of a text column (its array: a Series costs tens of µs to make) starts with
    `prefix` (a missing cell does not). Arrow's kernel when the column is Arrow-backed text (no Python
    string per row), else a comparison per cell."""
    if len(column) and isinstance(column.dtype, pd.StringDtype) and column.dtype.storage == "pyarrow":
        flags = pc.fill_null(pc.starts_with(pa.array(column), pattern=prefix), False)
        return np.asarray(flags.to_numpy(zero_copy_only=False), dtype=bool)
    return np.array([type(v) is str and v.startswith(prefix) for v in listed(column)], dtype=bool)


def _norm(text: Any) -> str | None:
    value = as_str(text)
    return None if value is None else "".join(value.split())


def _concat_layers(layers: pd.DataFrame | None) -> dict[int | None, dict[int, _Layer]]:
    """{build: {layer id: output shape, full name, line}} of the layer-table rows whose OpType is Concat*."""
    out: dict[int | None, dict[int, _Layer]] = {}
    if layers is None or layers.empty:
        return out
    # The op types as the shared codes of their distinct values (FUS001 and NPU001 test the same).
    cols = columns(layers)
    positions = np.flatnonzero(cols.flags("op_type", lambda v: type(v) is str and v.startswith("Concat")))
    if not len(positions):
        return out
    wanted = positions.tolist()
    # (the integer cells from the shared int64 columns, the text cells read at the Concat rows only)
    cells = [_int_cells(cols, c, positions) for c in ("build_index", "layer_id", "line")]
    cells += [cols.take(c, wanted) for c in ("output_shape", "full_name")]
    for build, layer_id, line, shape, full_name in zip(*cells, strict=True):
        if layer_id is not None:
            out.setdefault(build, {})[layer_id] = _Layer(_norm(shape), as_str(full_name), line)
    return out


def _int_cells(cols: Columns, name: str, positions: np.ndarray) -> list[int | None]:
    """An integer column's cells at `positions`, None where missing (what `as_int` makes of the cells
    `take` reads), from the frame's int64 values and mask the rules share (`Columns.ints`, `missing`)."""
    values = cols.ints(name)[positions].tolist()
    missing = cols.missing(name)[positions]
    if not missing.any():
        return values
    return [None if gone else value for value, gone in zip(values, missing.tolist(), strict=True)]


def _inferred_shapes(shapes: list[str | None]) -> set[str]:
    """Output shapes a Concat of `shapes` can have: summed along the one axis where they differ, or along
    any axis when they are all equal; empty when they cannot be concatenated."""
    parsed = [parse_shape(s) for s in shapes]
    if not parsed or any(p is None for p in parsed):
        return set()
    dims = [p for p in parsed if p is not None]
    rank = len(dims[0])
    if any(len(p) != rank for p in dims):
        return set()
    differ = [a for a in range(rank) if len({p[a] for p in dims}) > 1]
    axes = differ if len(differ) == 1 else (list(range(rank)) if not differ else [])
    out = set()
    for axis in axes:
        shape = list(dims[0])
        shape[axis] = sum(p[axis] for p in dims)
        out.add("(" + ",".join(map(str, shape)) + ")")
    return out


def _check_build(
    pool: FeaturePool,
    layers: dict[int, _Layer],
    concat_ids: set[int],
    cells: tuple[np.ndarray, np.ndarray, list[str], dict[str, list[int]]],
    options: Options,
) -> Iterator[Finding]:
    """The findings of one build. Plain lists and whole-column numpy, C-level `map`/`zip`/`dict` where
    a row is read: a build has hundreds of rows (the benchmark logs 71k over their builds), and every
    build with a Concat pays this on every parse that runs the rules."""
    # The rows' IDs (-1: none) and the codes of their shapes, line order; each code's normalised shape
    # and each normalised shape's codes.
    ids, shape_codes, normed, codes_of = cells
    shapes = cast(list[str], _Shapes(shape_codes, normed))  # (a build's few Concat rows are read)
    rows = pool.resident_rows()
    lines = rows.line
    names = rows.name
    if all(names):  # the pool's codes of the names: no name hashed here
        name_codes = pool.resident_name_codes()
    else:  # an unnamed row is its own tensor
        names = [n if n else f"\0line {ln}" for n, ln in zip(names, lines, strict=True)]
        name_codes = factorised_codes(names)
    starts, ends, sizes = rows.start, rows.end, rows.size
    consumer, is_first = _first_consumers(name_codes, ids)
    inputs_of: dict[int, list[int]] = {}
    for i, op in zip(*_rows_with_ids(ids, concat_ids), strict=True):
        inputs_of.setdefault(op, []).append(i)

    wanted: dict[int, set[str]] = {}
    for k, members in inputs_of.items():
        layer = layers.get(k)
        if layer is not None and layer.output_shape:
            wanted[k] = {layer.output_shape}
        else:
            wanted[k] = _inferred_shapes([shapes[i] for i in members])
    needed = set().union(*wanted.values()) if wanted else set()
    # The rows that can be a Concat's output (one per name: its first row, consumed), per shape by
    # first consumer then line: whole-column numpy, as most rows of a generated log share a few shapes.
    code_of = {shape: c for c, shape in enumerate(needed)}
    table = np.full(len(normed), -1, dtype=np.int64)  # shape code -> code of the needed shape
    for shape, c in code_of.items():
        table[codes_of.get(shape, [])] = c
    codes = table[shape_codes]
    line_array = pool.resident_arrays()[1]
    candidates = np.flatnonzero((codes >= 0) & is_first & (consumer >= 0))
    candidates = candidates[np.lexsort((line_array[candidates], consumer[candidates], codes[candidates]))]
    by_shape: dict[str, tuple[list[int], list[int]]] = {}  # shape: (first consumers, rows), sorted
    cut = np.flatnonzero(np.diff(codes[candidates])) + 1
    for group in np.split(candidates, cut) if len(candidates) else ():
        by_shape[shapes[int(group[0])]] = (consumer[group].tolist(), group.tolist())

    def output_key(i: int) -> tuple[int, bool, int]:
        """The output is chosen by: first consumer, then a name with "concat", then line."""
        return int(consumer[i]), "concat" not in names[i].lower(), lines[i]

    chosen: list[tuple[int, int]] = []
    for k in sorted(inputs_of):
        # Per shape, the rows first consumed soonest after k (all of that consumer), then the best.
        best = []
        for shape in wanted[k]:
            if shape not in by_shape:
                continue
            fcs, shape_rows = by_shape[shape]
            j = bisect.bisect_right(fcs, k)
            if j < len(fcs):
                best.append(min(shape_rows[j : bisect.bisect_right(fcs, fcs[j])], key=output_key))
        if best:
            chosen.append((k, min(best, key=output_key)))
    rows_of_name: dict[str, list[int]] = {}
    if chosen:
        for i in np.flatnonzero(np.isin(name_codes, name_codes[[out for _, out in chosen]])).tolist():
            rows_of_name.setdefault(names[i], []).append(i)

    found = []
    for k, out in chosen:
        members = inputs_of[k]
        out_rows = [i for i in rows_of_name[names[out]] if shapes[i] == shapes[out]]
        ranges = [(starts[i], ends[i]) for i in out_rows]
        apart = [i for i in members if not any(s <= starts[i] and ends[i] <= e for s, e in ranges)]
        extra = _union_bytes([(starts[i], ends[i]) for i in apart])
        if extra < options.min_extra_bytes:
            continue
        found.append((k, members, out, out_rows, apart, extra))

    found.sort(key=lambda f: (-f[5], lines[f[1][0]]))
    for k, members, out, out_rows, apart, extra in found[: options.max_findings]:
        layer = layers.get(k)
        at_peak = pool.lower_bound_step == k and any(names[i] in pool.lower_bound_tensors for i in apart)
        out_lines = [lines[i] for i in out_rows]
        finding_lines = {lines[i] for i in members} | set(out_lines)
        if layer is not None and layer.line is not None:
            finding_lines.add(layer.line)
        label = f"Concat layer {k}" + (f" ({layer.full_name})" if layer and layer.full_name else "")
        listed = "; ".join(
            f"{_display(names[i])} [0x{starts[i]:08x}, 0x{ends[i]:08x}) line {lines[i]}" for i in apart
        )
        verb = "lies" if len(apart) == 1 else "lie"
        message = (
            f"{label} writes its {shapes[out]} output {_display(names[out])} to "
            f"[0x{starts[out]:08x}, 0x{ends[out]:08x}) (line {lines[out]}), but {len(apart)} of its "
            f"{len(members)} inputs {verb} outside it: {listed}; {fmt_bytes(extra)} allocated "
            "separately instead of in place"
        )
        if at_peak:
            message += (
                f"; op {k} is the pool's busiest step ({fmt_bytes(pool.lower_bound_bytes)} live), so "
                "these bytes are part of the feature-map peak"
            )
        yield Finding(
            message=message,
            line=lines[members[0]],
            lines=tuple(sorted(finding_lines)),
            subject=(layer.full_name if layer and layer.full_name else f"Concat layer {k}"),
            evidence={
                "layer": k,
                "layer_line": layer.line if layer else None,
                "output_tensor": _display(names[out]),
                "output_shape": shapes[out],
                "output_shape_from": "layer table" if layer and layer.output_shape else "input shapes",
                "output_ranges": [[starts[i], ends[i]] for i in out_rows],
                "output_lines": out_lines,
                "output_bytes": sizes[out],
                "inputs": [
                    {
                        "tensor": _display(names[i]),
                        "shape": shapes[i],
                        "start_offset": starts[i],
                        "end_offset": ends[i],
                        "size_bytes": sizes[i],
                        "line": lines[i],
                        "in_place": i not in apart,
                    }
                    for i in members
                ],
                "extra_bytes": extra,
                "inputs_bytes": sum(sizes[i] for i in members),
                "at_pool_peak": at_peak,
                "pool_lower_bound_step": pool.lower_bound_step,
                "pool_lower_bound_bytes": pool.lower_bound_bytes,
                "computation": "inputs = feature rows whose ID is the Concat's; output = the tensor of the "
                "Concat's output shape first consumed soonest after it; an input is in place when its "
                "[Start, End) lies inside an output row's; extra = bytes of the union of [Start, End) over the "
                "inputs that are not (their summed Size unless two share addresses)",
            },
            hint=HINT,
            severity=Severity.warning if at_peak else None,
            build_index=pool.build_index,
        )


class _Shapes:
    """The normalised shape of each row, looked up from its code when read."""

    __slots__ = ("_codes", "_normed")

    def __init__(self, codes: np.ndarray, normed: list[str]) -> None:
        self._codes = codes
        self._normed = normed

    def __getitem__(self, i: int) -> str:
        return self._normed[self._codes[i]]


def _first_consumers(name_codes: np.ndarray, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per row: the first consumer of its name (the smallest ID >= 0 over the rows of that name, -1 when
    none has one), and whether it is its name's first row. `name_codes` are equal for equal names."""
    count = len(name_codes)
    if not count:
        return np.empty(0, dtype=np.int64), np.zeros(0, dtype=bool)
    width = int(name_codes.max()) + 1
    if width > 2 * count:  # codes of a log's every build: numbered afresh for this one's names
        name_codes = np.unique(name_codes, return_inverse=True)[1].reshape(-1)
        width = int(name_codes.max()) + 1
    none = np.iinfo(np.int64).max
    first_id = np.full(width, none, dtype=np.int64)
    consumed = ids >= 0
    np.minimum.at(first_id, name_codes[consumed], ids[consumed])
    per_row = first_id[name_codes]
    first_row = np.full(width, count, dtype=np.int64)
    np.minimum.at(first_row, name_codes, np.arange(count, dtype=np.int64))
    is_first = np.zeros(count, dtype=bool)
    is_first[first_row[first_row < count]] = True
    return np.where(per_row == none, -1, per_row), is_first


def _rows_with_ids(ids: np.ndarray, wanted: set[int]) -> tuple[list[int], list[int]]:
    """(row indexes, their IDs) of the rows whose ID is in `wanted`, row order."""
    rows = np.flatnonzero(np.isin(ids, list(wanted)))
    return rows.tolist(), ids[rows].tolist()


def _union_bytes(ranges: list[tuple[int, int]]) -> int:
    """Bytes covered by `ranges`: their summed sizes unless two of them share addresses."""
    total, reach = 0, None
    for start, end in sorted(ranges):
        if reach is None or start >= reach:
            total, reach = total + end - start, end
        elif end > reach:
            total, reach = total + end - reach, end
    return total


def _display(name: str) -> str:
    return "(unnamed)" if name.startswith("\0") else name
