"""The parsed log: what any parser returns and every later stage reads."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple, cast

import numpy as np
import pandas as pd
import pyarrow as pa

from logscope.figures import DERIVED_KEYS as _FIGURE_DERIVED_KEYS
from logscope.figures import MEMORY_FIGURES
from logscope.frames import SCHEMAS, build_frame, empty_frame, plain_value
from logscope.schemas import FINDING_KEYS

SCHEMA_VERSION = 1

# JSON keys of the per-build memory object, in order; values come from the `memory` frame.
MEMORY_KEYS = (*MEMORY_FIGURES, "reuse_rate", "peak_layer")
# eval_memory() of toolkit 1 reports maximum and total allocation per pool (fixture [12]).
EVAL_MEMORY_KEYS = (
    "system_max_bytes",
    "system_total_bytes",
    "npu_max_bytes",
    "npu_total_bytes",
    "max_total_bytes",
)
# What a board said about itself and the model it ran; a disagreement is the rules engine's business.
VERSION_KEYS = (
    "runtime_version",
    "driver_version",
    "api_version",
    "server_version",
    "proxy_runtime_version",
    "model_toolkit_version",
    "model_compiler_version",
    "model_format_version",
)
# Figures derived from the tensor tables (labels and definitions: logscope.figures).
DERIVED_KEYS = _FIGURE_DERIVED_KEYS


# The value a `Frames` holds for an empty frame not made yet.
_PENDING: Any = object()


class _Unbuilt(NamedTuple):
    """The value a `Frames` holds for a frame of rows not built yet (`Frames.build_later`)."""

    rows: list[Any]
    columns: Sequence[str] | None


class Frames(dict[str, pd.DataFrame]):
    """A parsed log's frames by name, every declared one there, the empty ones made when first read.

    A log fills a handful of the 30 declared frames; an empty frame costs 20-100 us to make (a typed
    array and a pandas block per column), 0.85 ms of the parse of a typical CI build log for frames
    that nothing but the rules engine's emptiness test may read. The keys are all there, in the order
    the frames would have been added; a key whose frame is not made yet holds `_PENDING`, replaced by
    `empty_frame(name)` when the frame is read. Every way of reading a value goes through
    `__getitem__` (`get`, `pop`, `setdefault`), or makes every pending frame first (`values`, `items`,
    copies, comparison, `repr`, pickling); overriding `__iter__` sends C-level merges (`dict(frames)`,
    `{**frames}`) through `keys()` and `__getitem__` too. So no reader ever sees `_PENDING`, and each
    log's empty frames are its own, as before. A frame of rows may be left unbuilt the same way
    (`build_later`, an `_Unbuilt` value): the parse leaves the `memory` frame's rows to the derived
    figures, which add to them and so build the frame once, where they replaced its columns.
    """

    __slots__ = ()

    def defer(self, name: str) -> None:
        """Declare frame `name` empty, made when read."""
        dict.__setitem__(self, name, _PENDING)

    def build(self, name: str, rows: Sequence[Any], columns: Sequence[str] | None = None) -> None:
        """Frame `name` of `rows` (`frames.build_frame`), or declared empty when there are none."""
        if rows:
            self[name] = build_frame(name, rows, columns)
        else:
            self.defer(name)

    def build_later(self, name: str, rows: list[Any], columns: Sequence[str] | None = None) -> None:
        """Frame `name` of `rows`, built when first read (`build`): a later stage that changes the rows
        (`unbuilt`) builds the frame once instead of twice. The rows are the frame's from here on."""
        if rows:
            dict.__setitem__(self, name, cast(pd.DataFrame, _Unbuilt(rows, columns)))
        else:
            self.defer(name)

    def unbuilt(self, name: str) -> list[Any] | None:
        """The rows of frame `name` if it is not built yet (`build_later`), to change in place before it
        is; None once it is built, or when it was given as a frame."""
        value = dict.get(self, name)
        return value.rows if type(value) is _Unbuilt else None

    def pending(self, name: str) -> bool:
        """Whether frame `name` is declared empty and not made yet (`defer`): empty without making it."""
        return dict.get(self, name) is _PENDING

    def declare(self, names: Iterable[str]) -> None:
        """Every name of `names` not present yet, empty (`ParsedLog` declares every schema's)."""
        for name in names:
            if not dict.__contains__(self, name):
                dict.__setitem__(self, name, _PENDING)

    def __getitem__(self, name: str) -> pd.DataFrame:
        frame = dict.__getitem__(self, name)
        if frame is _PENDING:
            frame = empty_frame(name)
            dict.__setitem__(self, name, frame)
        elif type(frame) is _Unbuilt:
            frame = build_frame(name, frame.rows, frame.columns)
            dict.__setitem__(self, name, frame)
        return frame

    def filled(self) -> set[str]:
        """The names of the frames with rows, making none: a pending frame is empty by definition (the
        rules engine asks this of every log, and making every empty frame to ask it cost more than
        the parse saved by deferring them)."""
        return {
            name
            for name, frame in dict.items(self)
            if frame is not _PENDING and (type(frame) is _Unbuilt or len(frame) > 0)
        }

    def _made(self) -> Frames:
        """Every pending or unbuilt frame made (in key order)."""
        for name, frame in list(dict.items(self)):
            if frame is _PENDING or type(frame) is _Unbuilt:
                self[name]
        return self

    def __iter__(self) -> Iterator[str]:
        return dict.__iter__(self)

    def get(self, name: str, default: Any = None) -> Any:
        return self[name] if dict.__contains__(self, name) else default

    def values(self) -> Any:
        return dict.values(self._made())

    def items(self) -> Any:
        return dict.items(self._made())

    def copy(self) -> dict[str, pd.DataFrame]:
        return dict(dict.items(self._made()))

    def pop(self, name: str, *default: Any) -> Any:
        if dict.__contains__(self, name):
            self[name]
        return dict.pop(self, name, *default)

    def popitem(self) -> tuple[str, pd.DataFrame]:
        return dict.popitem(self._made())

    def setdefault(self, name: str, default: Any = None) -> Any:
        if dict.__contains__(self, name):
            return self[name]
        return dict.setdefault(self, name, default)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Frames):
            other._made()
        return dict.__eq__(self._made(), other)

    def __ne__(self, other: object) -> bool:
        return not self == other

    __hash__ = None

    def __repr__(self) -> str:
        return dict.__repr__(self._made())

    def __or__(self, other: Any) -> Any:
        return dict.__or__(self._made(), other)

    def __ror__(self, other: Any) -> Any:
        return dict(other) | dict(dict.items(self._made()))

    def __reduce__(self) -> tuple[Any, ...]:
        return (Frames, (dict(dict.items(self._made())),))


@dataclass(repr=False)
class ParsedLog:
    """A log read into frames. `frames` always holds every frame in `SCHEMAS` (possibly empty).

    In a notebook: `log` shows a short summary (`_repr_html_`), `log.findings_frame` the findings as a
    DataFrame, `log.table("layers")` a frame with a `source` column, shapes as tuples of ints and
    MAC usage as floats; `logscope.concat(logs, "tensors")` stacks one frame of many logs.
    """

    source: str
    kind: str
    frames: dict[str, pd.DataFrame]
    line_counts: dict[str, int]
    encoding: str = "utf-8"
    compression: str | None = None
    sha256: str = ""
    size_bytes: int = 0
    notes: tuple[str, ...] = ()
    findings: list[Any] = field(default_factory=list)

    def __post_init__(self) -> None:
        if isinstance(self.frames, Frames):  # the empty ones made when read
            self.frames.declare(SCHEMAS)
            return
        for name in SCHEMAS:
            if name not in self.frames:  # not setdefault: that would build every empty frame first
                self.frames[name] = empty_frame(name)

    def frame(self, name: str) -> pd.DataFrame:
        return self.frames[name]

    def __repr__(self) -> str:
        counts = self.line_counts
        builds = len(self.frames["builds"]) or len(self.frames["mcu_runs"])
        unit = "build" if len(self.frames["builds"]) or not len(self.frames["mcu_runs"]) else "run"
        return (
            f"<ParsedLog {Path(self.source).name!r} {self.kind}: {counts.get('total', 0)} lines, "
            f"{counts.get('unparsed', 0)} unparsed, {builds} {unit}{'s' if builds != 1 else ''}, "
            f"{len(self.findings)} finding{'s' if len(self.findings) != 1 else ''}>"
        )

    def _repr_html_(self) -> str:
        """A notebook summary: the file, then one row per build with its main figures, then findings."""
        from html import escape

        from logscope.figures import memory_rows

        parts = [
            f"<p><b>{escape(Path(self.source).name)}</b> <code>{escape(self.kind)}</code> — "
            f"{self.line_counts.get('total', 0)} lines, {self.unparsed_lines} unparsed</p>"
        ]
        summary = self.summary()
        rows = []
        for b in summary["builds"][:10]:
            figures = "; ".join(f"{label} {value}" for label, value, _, _ in memory_rows(b)[:6])
            rows.append(
                f"<tr><td>{b['index']}</td><td>{escape(str(b['status']))}</td><td>{escape(figures)}</td></tr>"
            )
        if rows:
            more = len(summary["builds"]) - 10
            note = f"<p>… {more} more builds (log.summary())</p>" if more > 0 else ""
            parts.append(
                "<table><tr><th>build</th><th>status</th><th>memory</th></tr>"
                + "".join(rows)
                + "</table>"
                + note
            )
        if self.findings:
            by_code: dict[str, int] = {}
            for f in self.findings:
                by_code[f"{f.severity} {f.code} {f.name}"] = (
                    by_code.get(f"{f.severity} {f.code} {f.name}", 0) + 1
                )
            parts.append(
                "<p>findings: "
                + ", ".join(escape(f"{k} ×{n}" if n > 1 else k) for k, n in by_code.items())
                + "</p>"
            )
        return "".join(parts)

    @property
    def findings_frame(self) -> pd.DataFrame:
        """The findings as a DataFrame: one row each, the JSON keys as columns (evidence as a dict)."""
        rows = [f.to_dict() for f in self.findings]
        frame = pd.DataFrame(rows, columns=list(FINDING_KEYS))
        for column in ("line", "build_index"):
            frame[column] = frame[column].astype("Int64")
        return frame

    def table(self, name: str) -> pd.DataFrame:
        """Frame `name` for analysis: a `source` column first, shape columns as tuples of ints
        (`input_shapes` as a tuple of shapes), `mac_usage` as a tuple of floats (one per NPU core)."""
        frame = self.frames[name].copy()
        converters: dict[str, Callable[[Any], Any]] = {
            "orig_shape": _shape,
            "native_shape": _shape,
            "output_shape": _shape,
            "input_shapes": _shapes,
            "mac_usage": _floats,
        }
        for column, convert in converters.items():
            if column in frame:  # a list of Python objects: pandas would turn tuples into arrays
                values = [None if pd.isna(v) else convert(v) for v in frame[column].tolist()]
                frame[column] = pd.Series(values, index=frame.index, dtype=object)
        frame.insert(0, "source", pd.Series([self.source] * len(frame), index=frame.index, dtype="string"))
        return frame

    @property
    def unparsed_lines(self) -> int:
        return self.line_counts.get("unparsed", 0)

    def summary(self) -> dict[str, Any]:
        """The stable JSON contract (`schema_version` 1): keys are never renamed, unknown is null."""
        return self.summary_with_builds(BuildFields.dicts)

    def summary_with_builds(
        self,
        make_builds: Callable[[BuildFields], list[Any]],
        make_findings: Callable[[list[Any]], list[Any]] | None = None,
    ) -> dict[str, Any]:
        """`summary()` with its `builds` made by `make_builds` from their fields (and its `findings` by
        `make_findings` from the findings, when given): `summary()` makes the dicts
        (`BuildFields.dicts`, `Finding.to_dict`), the JSON renderer their text, from the same fields."""
        out_builds = make_builds(self.build_fields())
        out = {
            "schema_version": SCHEMA_VERSION,
            "source": self.source,
            "kind": self.kind,
            "unparsed_lines": self.unparsed_lines,
            "line_counts": dict(self.line_counts),
            "builds": out_builds,
            "findings": [f.to_dict() if hasattr(f, "to_dict") else f for f in self.findings]
            if make_findings is None
            else make_findings(self.findings),
        }
        if self.kind.startswith("mcu"):  # MCU logs add their runs; RKNN keys stay as they are
            out |= _mcu_summary(self.frames)
        return out

    def build_fields(self) -> BuildFields:
        """The fields of `summary()`'s builds, each a list over the builds (frame order)."""
        builds = self.frames["builds"]
        counts = _counts_by_build(self.frames)
        checks: dict[Any, list[dict[str, Any]]] = {}
        figure_checks = self.frames["figure_checks"]
        if len(figure_checks):  # (columns read whole: a log with hundreds of builds has a check in each)
            cells = [_plain_list(figure_checks[k]) for k in _CHECK_KEYS]
            for key, *values in zip(figure_checks["build_index"].tolist(), *cells, strict=True):
                checks.setdefault(key, []).append(dict(zip(_CHECK_KEYS, values, strict=True)))
        by_build = {name: _by_build(self.frames[name]) for name in ("perf", "perf_totals", "perf_ranking")}
        memory = _MemoryRows(self.frames["memory"])
        # The build rows as plain values, column by column: one pass per column instead of a named
        # tuple and a conversion per cell per build.
        indexes, starts, ends = (builds[c].tolist() for c in ("build_index", "start_line", "end_line"))
        shown = [_plain_list(builds[c]) for c in _BUILD_COLUMNS]
        n_head = len(_BUILD_HEAD)
        owns = [memory.positions(idx) for idx in indexes]
        firsts = [own[0] if own else -1 for own in owns]
        zero = _zero_counts()
        per_build = [counts.get(idx, zero) for idx in indexes]
        return BuildFields(
            indexes=[_plain(idx) for idx in indexes],
            head=shown[:n_head],
            lines=[[_plain(v) for v in starts], [_plain(v) for v in ends]],
            memory=[memory.first_cells(k, firsts) for k in _FIGURE_KEYS],
            memory_lines=[memory.first_cells(c, firsts) for _, c in _MEMORY_LINES],
            derived=[memory.first_cells(k, firsts) for k in DERIVED_KEYS],
            checks=[checks.get(idx, []) for idx in indexes],
            memory_sources=[memory.sources(own) for own in owns],
            versions=shown[n_head:],
            perf=[_perf_summary(self.frames, idx, by_build) for idx in indexes],
            counts=[[c[k] for c in per_build] for k in zero],
        )


class BuildFields(NamedTuple):
    """`ParsedLog.summary()`'s builds field by field: each list (or list of lists: one per key of the
    object) holds a value per build, frame order. Scalars are plain values; `checks`,
    `memory_sources` and `perf` are each build's list or object as `summary()` shows it."""

    indexes: list[Any]
    head: list[list[Any]]  # BUILD_HEAD
    lines: list[list[Any]]  # start, end
    memory: list[list[Any]]  # MEMORY_OBJECT_KEYS
    memory_lines: list[list[Any]]  # MEMORY_LINE_KEYS
    derived: list[list[Any]]  # DERIVED_KEYS
    checks: list[list[dict[str, Any]]]
    memory_sources: list[list[dict[str, Any]]]
    versions: list[list[Any]]  # VERSION_KEYS
    perf: list[dict[str, Any] | None]
    counts: list[list[int]]  # COUNT_KEYS

    def build(self, b: int) -> dict[str, Any]:
        """Build `b` as `summary()` shows it."""
        return {
            "index": self.indexes[b],
            **{k: column[b] for k, column in zip(BUILD_HEAD, self.head, strict=True)},
            "lines": [self.lines[0][b], self.lines[1][b]],
            "memory": {k: column[b] for k, column in zip(MEMORY_OBJECT_KEYS, self.memory, strict=True)},
            "memory_lines": {
                k: column[b] for k, column in zip(MEMORY_LINE_KEYS, self.memory_lines, strict=True)
            },
            "derived": {k: column[b] for k, column in zip(DERIVED_KEYS, self.derived, strict=True)},
            "checks": self.checks[b],
            "memory_sources": self.memory_sources[b],
            "versions": {k: column[b] for k, column in zip(VERSION_KEYS, self.versions, strict=True)},
            "perf": self.perf[b],
            "counts": {k: column[b] for k, column in zip(COUNT_KEYS, self.counts, strict=True)},
        }

    def dicts(self) -> list[dict[str, Any]]:
        return [self.build(b) for b in range(len(self.indexes))]


def _shape(text: Any) -> tuple[int, ...] | None:
    """`"(1,32,112,112)"` -> (1, 32, 112, 112); None for text that is not one shape."""
    inner = str(text).strip().removeprefix("(").removesuffix(")")
    try:
        return tuple(int(v) for v in inner.split(",") if v.strip())
    except ValueError:
        return None


def _shapes(text: Any) -> tuple[tuple[int, ...] | None, ...]:
    """`"(1,3,224,224),(32,3,3,3),(32)"` -> ((1, 3, 224, 224), (32, 3, 3, 3), (32,))."""
    return tuple(_shape(part) for part in re.findall(r"\([^()]*\)", str(text)))


def _floats(text: Any) -> tuple[float, ...] | None:
    """`"21.32/0.00/0.00"` -> (21.32, 0.0, 0.0); None when a part is not a number."""
    try:
        return tuple(float(v) for v in str(text).replace("%", "").split("/") if v.strip())
    except ValueError:
        return None


def concat(logs: list[ParsedLog], name: str) -> pd.DataFrame:
    """Frame `name` of every log stacked, each row with its log's `source` (`ParsedLog.table`)."""
    frames = [log.findings_frame if name == "findings" else log.table(name) for log in logs]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def versions_text(build: dict[str, Any]) -> str:
    """`toolkit 1.5.2, librknnc 1.5.2, target rv1106` of a build of `summary()`: what it was built with."""
    return ", ".join(
        f"{k} {v}"
        for k, v in (
            ("toolkit", build["toolkit_version"]),
            ("librknnc", build["compiler_version"]),
            ("target", build["target_platform"]),
        )
        if v
    )


def _zero_counts() -> dict[str, int]:
    return {
        "layers": 0,
        "feature_tensors": 0,
        "const_tensors": 0,
        "fusions": 0,
        "warnings": 0,
        "errors": 0,
        "perf_layers": 0,
        "allocations": 0,
        "failed_allocations": 0,
        "tensor_attrs": 0,
    }


COUNT_KEYS = tuple(_zero_counts())


# The build columns `summary()` shows as they are: the head of a build's object, then its versions.
_BUILD_HEAD = (
    "kind",
    "toolkit_product",
    "toolkit_version",
    "compiler_version",
    "target_platform",
    "status",
    "status_reason",
)
_BUILD_COLUMNS = (*_BUILD_HEAD, *VERSION_KEYS)
# A build's `memory_lines` object: each key and the memory frame's column of the line it was read from.
_MEMORY_LINES = (
    *((f"{k}_bytes", f"{k}_line") for k in ("weight", "internal", "activation", "scratch", "total", "model")),
    ("reuse_rate", "reuse_line"),
)
_FIGURE_KEYS = (*MEMORY_KEYS, "source")
_CHECK_KEYS = ("figure", "invariant", "reason", "line")
# The keys of a build's objects in `summary()`, in order (`BuildFields`).
BUILD_HEAD = _BUILD_HEAD
MEMORY_OBJECT_KEYS = _FIGURE_KEYS
MEMORY_LINE_KEYS = tuple(k for k, _ in _MEMORY_LINES)
_SOURCE_KEYS = ("source", *MEMORY_KEYS, *EVAL_MEMORY_KEYS)


def _plain_list(column: pd.Series) -> list[Any]:
    """A column's cells as plain values (`plain_value` of each, as they come out of `tolist`).

    Integer, boolean and Arrow text columns are converted whole (what `plain_value` gives each cell:
    the Python value, None where missing), floats too with NaN as None: a `plain_value` call per cell
    was most of the summary's cost of a log with hundreds of builds (60 columns of its builds and
    memory rows). Any other column goes cell by cell."""
    array = column.array
    if isinstance(array, pd.arrays.IntegerArray | pd.arrays.BooleanArray):
        return cast(list[Any], cast(Any, array).to_numpy(dtype=object, na_value=None).tolist())
    if isinstance(array, pd.arrays.FloatingArray):
        cells = cast(Any, array).to_numpy(dtype=object, na_value=None).tolist()
        return [None if cell is None or cell != cell else cell for cell in cells]
    if isinstance(array.dtype, pd.StringDtype) and array.dtype.storage == "pyarrow":
        return cast(list[Any], pa.array(array).to_pylist())
    return [_plain(v) for v in column.tolist()]


class _MemoryRows:
    """The `memory` frame for `summary()`: each row's shown cells as plain values, converted once per
    log (not once per build and cell), and each build's rows as positions. A build's first row is its
    `memory`, `memory_lines` and `derived` objects; every row is one of its `memory_sources`."""

    def __init__(self, memory: pd.DataFrame) -> None:
        shown = dict.fromkeys((*_SOURCE_KEYS, *DERIVED_KEYS, *(c for _, c in _MEMORY_LINES)))
        present = [k for k in shown if k in memory.columns]
        columns = [_plain_list(memory[k]) for k in present]
        self._columns = dict(zip(present, columns, strict=True))
        self._rows = [dict(zip(present, cells, strict=True)) for cells in zip(*columns, strict=True)]
        self._positions: dict[Any, list[int]] = {}
        keys = memory["build_index"].tolist() if "build_index" in memory.columns else []
        for position, key in enumerate(keys):
            if key is not None and key is not pd.NA:
                self._positions.setdefault(key, []).append(position)

    def positions(self, build_index: Any) -> list[int]:
        """The build's rows, in frame order (none for a build without an index)."""
        if build_index is None or build_index is pd.NA:
            return []
        return self._positions.get(build_index, [])

    def first_cells(self, column: str, firsts: list[int]) -> list[Any]:
        """Column `column`'s cell of each build's first row (`firsts`: a position, -1 for none: None)."""
        if all(p < 0 for p in firsts):
            return [None] * len(firsts)
        cells = self._columns[column]
        return [cells[p] if p >= 0 else None for p in firsts]

    def sources(self, own: list[int]) -> list[dict[str, Any]]:
        """Every memory row of a build (one per source of figures)."""
        return [{k: self._rows[p][k] for k in _SOURCE_KEYS} for p in own]


def _by_build(frame: pd.DataFrame) -> dict[Any, pd.DataFrame]:
    """The rows of each (known) build index, in frame order: one split instead of a mask per build."""
    if frame.empty:
        return {}
    return dict(iter(frame.groupby("build_index", sort=False, dropna=True)))


def _of_build(frame: pd.DataFrame, split: dict[Any, pd.DataFrame], build_index: Any) -> pd.DataFrame:
    """`frame[frame["build_index"] == build_index]` read from `_by_build`'s split."""
    rows = None if build_index is None or build_index is pd.NA else split.get(build_index)
    return frame.iloc[0:0] if rows is None else rows


def _perf_summary(
    frames: dict[str, pd.DataFrame], build_index: Any, by_build: dict[str, dict[Any, pd.DataFrame]]
) -> dict[str, Any] | None:
    """Totals of a build's perf table (as printed, with their lines), its slowest layers, and the op
    types of its ranking table as printed: the first five rows and every row with CPU time."""
    if (
        build_index is None
        or build_index is pd.NA
        or all(build_index not in rows for rows in by_build.values())
    ):
        return None  # no perf rows in this build (most builds): slicing three frames per build cost more
    perf = _of_build(frames["perf"], by_build["perf"], build_index)
    totals = _of_build(frames["perf_totals"], by_build["perf_totals"], build_index)
    ranking = _of_build(frames["perf_ranking"], by_build["perf_ranking"], build_index)
    if not len(perf) and not len(totals) and not len(ranking):
        return None
    total = totals.to_dict("records")[0] if len(totals) else None  # per column: ints stay ints
    timed = perf[perf["time_us"].notna()].sort_values(["time_us", "line"], ascending=[False, True])
    return {
        "total_time_us": _plain(total["total_time_us"]) if total is not None else None,
        "fps": _plain(total["fps"]) if total is not None else None,
        "rw_kb": _plain(total["rw_kb"]) if total is not None else None,
        "lines": [_plain(total["time_line"]), _plain(total["rw_line"])]
        if total is not None
        else [None, None],
        "rows_time_us": _plain(perf["time_us"].sum()) if len(perf) else None,
        "slowest": [
            {
                "layer_id": _plain(r.layer_id),
                "op_type": _plain(r.op_type),
                "time_us": _plain(r.time_us),
                "full_name": _plain(r.full_name),
                "line": _plain(r.line),
            }
            for r in timed.head(5).itertuples()
        ],
        "ranking": [
            {
                "op_type": _plain(r.op_type),
                "cpu_time_us": _plain(r.cpu_time_us),
                "npu_time_us": _plain(r.npu_time_us),
                "total_time_us": _plain(r.total_time_us),
                "time_ratio_pct": _plain(r.time_ratio_pct),
                "line": _plain(r.line),
            }
            for r in ranking.sort_values("line")
            .loc[lambda t: (t["line"].rank(method="first") <= 5) | (t["cpu_time_us"].fillna(0) > 0)]
            .itertuples()
        ],
    }


def _counts_by_build(frames: dict[str, pd.DataFrame]) -> dict[Any, dict[str, int]]:
    """Rows per build of each counted frame (of a kind: `table == "feature"`), counted on numpy
    arrays: a mask and a groupby per count were two thirds of the summary of a one-build log."""
    out: dict[Any, dict[str, int]] = {}

    def bump(frame: pd.DataFrame, key: str, column: str | None = None, value: str | None = None) -> None:
        builds = frame["build_index"]
        rows = builds.notna().to_numpy(dtype=bool)
        if column is not None:  # compared in the column's own storage (Arrow's for text), NA is no match
            rows = rows & (frame[column] == value).to_numpy(dtype=bool, na_value=False)
        for idx, n in _index_counts(builds.to_numpy(dtype="int64", na_value=0)[rows]):
            out.setdefault(idx, _zero_counts())[key] = n

    tensors, messages = frames["tensors"], frames["messages"]
    bump(frames["layers"], "layers")
    bump(tensors, "feature_tensors", "table", "feature")
    bump(tensors, "const_tensors", "table", "const")
    bump(frames["fusions"], "fusions")
    bump(messages, "warnings", "level", "W")
    bump(messages, "errors", "level", "E")
    allocations = frames["allocations"]
    bump(frames["perf"], "perf_layers")
    bump(allocations, "allocations", "status", "allocated")
    bump(allocations, "failed_allocations", "status", "failed")
    bump(frames["tensor_attrs"], "tensor_attrs")
    return out


def _index_counts(indexes: np.ndarray) -> Iterator[tuple[int, int]]:
    """Each distinct build index with its number of rows, in increasing order (`np.unique`'s answer).
    Build indexes count up from 0, so one `bincount` does it without sorting the rows (a sort of the
    tensor rows was a fifth of the summary of a log of hundreds of builds); `np.unique` for any other
    numbering."""
    if not len(indexes) or indexes.min() < 0 or indexes.max() > 4 * len(indexes) + 4096:
        found, sizes = np.unique(indexes, return_counts=True)
        return zip(found.tolist(), sizes.tolist(), strict=True)
    per_index = np.bincount(indexes)
    found = np.flatnonzero(per_index)
    return zip(found.tolist(), per_index[found].tolist(), strict=True)


_plain = plain_value  # one definition, in logscope.frames


# ---------------------------------------------------------------------- MCU logs
_MCU_COUNTED = {
    "ops": "ops",
    "buffers": "buffers",
    "events": "events",
    "arena": "arena",
    "mcu_layers": "layers",
    "curve": "curve",
}


def _mcu_summary(frames: dict[str, pd.DataFrame]) -> dict[str, Any]:
    """`formats` (every printer seen, in order) and one `runs` entry per run, each with its `memory`."""
    runs, memory = frames["mcu_runs"], frames["mcu_memory"]
    derived = {row["run_index"]: row for row in memory.to_dict("records")}
    counts = {key: frames[name].groupby("run_index").size().to_dict() for name, key in _MCU_COUNTED.items()}
    formats: dict[str, None] = {}
    out_runs = []
    for run in runs.to_dict("records"):
        idx = run["run_index"]
        m = derived.get(idx, {})
        run_formats = [f for f in (_plain(run["formats"]) or "").split(",") if f]
        formats.update(dict.fromkeys(run_formats))
        peak_op = None
        if _plain(m.get("peak_op_index")) is not None or _plain(m.get("peak_op_name")) is not None:
            peak_op = {
                "index": _plain(m.get("peak_op_index")),
                "name": _plain(m.get("peak_op_name")),
                "type": _plain(m.get("peak_op_type")),
                "line": _plain(m.get("peak_line")),
            }
        reported = None
        if _plain(run["reported_bytes"]) is not None:
            reported = {
                "label": _plain(run["reported_label"]),
                "bytes": _plain(run["reported_bytes"]),
                "line": _plain(run["reported_line"]),
            }
        events = None
        if _plain(m.get("alloc_count")) is not None:
            leak, blocks = _plain(m.get("leak_bytes")), _plain(m.get("leak_blocks"))
            said, said_blocks = _plain(run["reported_leak_bytes"]), _plain(run["reported_leak_blocks"])
            events = {
                "allocations": _plain(m.get("alloc_count")),
                "frees": _plain(m.get("free_count")),
                "alloc_bytes": _plain(m.get("alloc_bytes")),
                "free_bytes": _plain(m.get("free_bytes")),
                "unmatched_frees": _plain(m.get("unmatched_frees")),
                "leak_bytes": leak,
                "leak_blocks": blocks,
                "reported_leak_bytes": said,
                "reported_leak_blocks": said_blocks,
                "reported_allocations": _plain(run["reported_alloc_count"]),
                "reported_frees": _plain(run["reported_free_count"]),
                "balanced": None if said is None else (leak == said and said_blocks in (None, blocks)),
            }
        out_runs.append(
            {
                "index": _plain(idx),
                "family": _plain(run["family"]),
                "formats": run_formats,
                "tool_version": _plain(run["tool_version"]),
                "model_name": _plain(run["model_name"]),
                "lines": [_plain(run["start_line"]), _plain(run["end_line"])],
                "status": None
                if _plain(run["status"]) is None
                else {
                    "status": _plain(run["status"]),
                    "reason": _plain(run["status_reason"]),
                    "line": _plain(run["status_line"]),
                    "message": _plain(run["status_message"]),
                    "fault": _plain(run["fault"]),
                    "fault_line": _plain(run["fault_line"]),
                },
                "memory": {
                    "peak_bytes": _plain(m.get("peak_bytes")),
                    "peak_op": peak_op,
                    "derivation": _plain(m.get("derivation")),
                    "baseline_bytes": _plain(m.get("baseline_bytes")),
                    "final_bytes": _plain(m.get("final_bytes")),
                    "budget_bytes": _plain(m.get("budget_bytes")),
                    "over_budget_bytes": _plain(m.get("over_budget_bytes")),
                    "headroom_bytes": _plain(m.get("headroom_bytes")),
                    "reported": reported,
                },
                "memory_lines": {
                    "peak_bytes": _plain(m.get("peak_line")),
                    "baseline_bytes": _plain(run["baseline_line"]),
                    "budget_bytes": _plain(run["budget_line"]),
                    "over_budget_bytes": _plain(run["over_budget_line"]),
                },
                "events": events,
                "counts": {key: int(counts[key].get(idx, 0)) for key in _MCU_COUNTED.values()},
            }
        )
    return {"formats": list(formats), "runs": out_runs}
