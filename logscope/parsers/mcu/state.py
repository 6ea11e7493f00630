"""The state every MCU family module shares: runs, open records, row lists, and the figure helpers.

A *run* is one inference, compile or report (the segment of `logscope.parsers.base`). A new run starts
when a section the current run already has appears again (a second `Arena allocation total`, a second
NNoM compile table, a second ST report) and, in the per-op heap trace, when the op index goes back (or a
baseline line follows ops). Runs inherit a stated budget from the run before (it is a device figure).
Units are normalised to bytes here; derived figures (curves, peaks, replays) are `logscope.analysis.mcu`'s.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from logscope.io import LogSource
from logscope.parsers.base import BaseAssembler
from logscope.parsers.grammar import Fields
from logscope.parsers.table import Cells, Layout

# Byte units as printed. ESP-DL `KB` is size/1024 (dl_model_base.cpp), ST N6 `kB` is KiB (4060 B prints
# as 3.965 kB [08]), Vela and ST print KiB; the per-op heap trace follows the same (binary) reading.
_UNIT = {
    None: 1,
    "": 1,
    "B": 1,
    "bytes": 1,
    "Bytes": 1,
    "KB": 1024,
    "kB": 1024,
    "KiB": 1024,
    "kiB": 1024,
    "MB": 1024**2,
    "MiB": 1024**2,
    "GB": 1024**3,
    "GiB": 1024**3,
}
_SUFFIX = {"": 1, "k": 1000, "M": 1000**2, "G": 1000**3}  # NNoM MAC counts: `188k`, `2.23M`
_ESPDL_CELL = re.compile(r"(?:-- )?(?P<value>\d+(?:\.\d+)?) ?(?P<unit>[KMG]i?B|B)")
_ST_BYTES = re.compile(r"(?P<value>\d[\d,]*(?:\.\d+)?) (?P<unit>Bytes|B|KiB|MiB)\b")
_ST_TERMS = re.compile(r"=\s*(?P<act>\d[\d,]*)\s*\+\s*(?P<inp>\d[\d,]*)\s*\+\s*(?P<out>\d[\d,]*)")
# Frames hold 64-bit integers. A 16-digit figure (a petabyte) is never what an MCU tool printed: such a
# line is reported as unparsed instead of overflowing a column. Scaled values are capped the same way.
_HUGE = re.compile(r"\d{16,}")
_MAX_VALUE = 10**15
_MAX_TEXT = 300

HEAP_FIELDS = ("index", "name", "delta", "delta_unit", "total", "total_unit", "extra")
_HEAP_COLUMNS = ("run_index", "op_index", "op_name", "delta_bytes", "total_bytes", "detail", "line")
_ROW_FRAMES = ("mcu_runs", "ops", "buffers", "events", "arena", "mcu_layers", "profile")
OP_COLUMNS = (
    "run_index",
    "op_index",
    "op_name",
    "delta_bytes",
    "total_bytes",
    "ticks",
    "time_us",
    "source",
    "detail",
    "line",
)


def to_bytes(value: str | None, unit: str | None = None) -> int | None:
    """`53000` -> 53000, `51.76`, `KiB` -> 53002; thousands separators allowed; None stays None."""
    if value is None:
        return None
    factor = _UNIT.get(unit, 1)
    if factor == 1:
        try:
            return int(value)  # `53000`, `+8000`, `-5000`: the common case, no float round trip
        except ValueError:
            pass
    scaled = float(value.replace(",", "")) * factor
    return round(scaled) if abs(scaled) <= _MAX_VALUE else None


def _int(value: str | None) -> int | None:
    if value is None or value == "":
        return None
    text = value.replace(",", "")
    return int(text) if text.isdecimal() else None


def _count(value: str | None) -> int | None:
    """NNoM MAC counts as printed: `188k` -> 188000 (three significant digits, so approximate)."""
    if not value:
        return None
    suffix = value[-1] if value[-1] in "kMG" else ""
    number = value[: len(value) - len(suffix)]
    try:
        scaled = float(number) * _SUFFIX[suffix]
    except ValueError:
        return None
    return round(scaled) if scaled <= _MAX_VALUE else None


def _clip(text: str | None, limit: int = _MAX_TEXT) -> str:
    text = text or ""
    return text if len(text) <= limit else text[: limit - 3] + "..."


def cells_by_columns(layout: Layout, line: str) -> Cells | None:
    """The cells of a row cut at the layout's column starts (taken from the rule under the header).

    A cell is the text from its column's start to the next column's, so figures right-aligned in their
    column (Vela) and text with blanks inside (ST's `const s32`) both stay in their column. None when a
    cell does not fit its column's kind or an empty cell is not nullable. A row that ends before its last
    column starts may have been cut (trailing blanks are gone by now, so an empty last cell and a cut look
    alike): its last cell may be cut in its digits and is not read, and the row not at all if that cell
    may not be empty.
    """
    starts = layout.starts
    if starts is None:
        return None
    ends = (*starts[1:], max(len(line), starts[-1]))
    cells = tuple(line[a:b].strip() or None for a, b in zip(starts, ends, strict=True))
    for value, kind, nullable in zip(cells, layout.kinds, layout.nullable, strict=True):
        if (value is None and not nullable) or (
            value is not None and kind is not None and not kind.fullmatch(value)
        ):
            return None
    if len(line) < starts[-1] and any(value is not None for value in cells):
        last = max(i for i, value in enumerate(cells) if value is not None)
        if not layout.nullable[last]:
            return None
        cells = (*cells[:last], None, *cells[last + 1 :])
    return cells


@dataclass
class _Run:
    index: int
    start_line: int
    end_line: int
    families: Counter[str] = field(default_factory=Counter)
    formats: dict[str, None] = field(default_factory=dict)
    sections: set[str] = field(default_factory=set)
    figures: dict[str, Any] = field(default_factory=dict)
    heap_ops: int = 0
    last_heap_index: int = -1
    prof_ops: int = 0
    prof_log: list[int] = field(
        default_factory=list
    )  # indices into McuAssembler.ops of `X took N ticks` rows
    oplist_ops: int = 0
    events: int = 0
    plan_ids: set[int] = field(default_factory=set)
    nnom_layers: dict[int, dict[str, Any]] = field(default_factory=dict)
    nnom_stats: int = 0
    caps_regions: int = 0
    vela_groups: set[str] = field(default_factory=set)
    vela_layers: int = 0
    st_arrays: dict[str, dict[str, Any]] = field(default_factory=dict)
    st_layers: list[dict[str, Any]] = field(default_factory=list)
    st_v5_last_id: int | None = None

    def holds_any(self, wanted: frozenset[str]) -> bool:
        return not wanted.isdisjoint(self.sections)


class McuState(BaseAssembler[_Run]):
    """Runs, the open table and records, and the row lists the family modules fill."""

    def __init__(self, source: LogSource) -> None:
        super().__init__()
        self.source = source
        self.runs: list[_Run] = self.segments
        self.rows: dict[str, list[dict[str, Any]]] = {k: [] for k in _ROW_FRAMES}
        self.ops: list[tuple[Any, ...]] = []  # profiler events and op lists: tuples in OP_COLUMNS order
        self.heap_rows: list[tuple[Any, ...]] = []  # the hot table: per-op heap lines, in _HEAP_COLUMNS order
        self.table: str | None = None  # which table generic rows belong to
        self.skipping = False  # inside an ST section logscope does not read, until the next blank line
        self.leak_report = False  # ESP-IDF host log: allocations listed after HEAP TRACE REPORT are leaks
        self.open_event: dict[str, Any] | None = None
        self.open_layer: dict[str, Any] | None = None
        self.open_op: int | None = None  # index into self.ops of the last TFLM op-list row
        self.phase: str | None = None
        self.prof_tag_block = 0
        self.vela_group: str | None = None
        self.vela_layout: Layout | None = None  # the per-layer table's columns, from its header
        self.st_header: str | None = (
            None  # the last ST table header, until the rule under it gives its layout
        )
        self.st_layout: Layout | None = None  # the C-arrays table's columns
        self.open_vela: dict[str, Any] | None = (
            None  # the last Vela `Placing on CPU` row, for its constraints
        )
        self.in_fault = False  # inside an Mbed OS fault or error report (between its ++ and -- titles)
        self.prev_kind = ""  # the kind of the line being read, once read
        self.prev = ""  # the kind of the line before it (a continuation is read only after its head)
        self.rejected = False  # set by `_outside` while a handler runs

    def _outside(self) -> None:
        """A generic shape read outside its table: the dispatcher keeps the line as unparsed."""
        self.rejected = True

    def _run(self, number: int) -> _Run:
        return self.current(number)

    def _new_run(self, number: int) -> _Run:
        return self.open_segment(number, inherit=True)

    def new_segment(self, number: int, previous: _Run | None, inherit: bool) -> _Run:
        run = _Run(index=len(self.segments), start_line=number, end_line=number)
        if previous is not None:  # a stated budget is a device figure: it holds for the runs after it
            for key in ("budget_bytes", "budget_line"):
                if key in previous.figures:
                    run.figures[key] = previous.figures[key]
        self.table = None
        self.open_event = self.open_layer = None
        self.open_op = None
        self.leak_report = False
        self.vela_group = None
        self.open_vela = None
        self.in_fault = False
        return run

    def _section(self, number: int, key: str) -> _Run:
        """The run for a section that occurs once per run: a repeat starts a new run."""
        run = self._run(number)
        if key in run.sections:
            run = self._new_run(number)
        run.sections.add(key)
        return run

    def _report(self, run: _Run, label: str, value: int | None, number: int) -> None:
        """The run's headline total as the tool prints it (the first one seen wins)."""
        if value is not None and "reported_bytes" not in run.figures:
            run.figures.update(reported_label=label, reported_bytes=value, reported_line=number)

    def _arena(self, run: _Run, source: str, number: int, **values: Any) -> None:
        self.rows["arena"].append({"run_index": run.index, "source": source, "line": number} | values)

    def _fail(self, run: _Run, reason: str, number: int, line: str) -> None:
        """The first failure a run prints is its cause; what follows (a HardFault) is the effect."""
        if run.figures.get("status") != "failed":
            run.figures.update(
                status="failed", status_reason=reason, status_line=number, status_message=_clip(line.strip())
            )

    def _event(self, run: _Run, number: int, **values: Any) -> dict[str, Any]:
        row = {"run_index": run.index, "seq": run.events, "phase": self.phase, "line": number} | values
        run.events += 1
        self.rows["events"].append(row)
        self.open_event = row
        return row

    def _app_marker(self, f: Fields, line: str, number: int) -> None:
        self.phase = f["text"]
