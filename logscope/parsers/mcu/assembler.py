"""Microcontroller memory output into frames: the grammar classifies lines, this module assembles them.

One assembler reads every family of `grammars/mcu.lark`, because real captures mix them (a TFLM
profiler CSV next to the allocator report [02], an ESP-IDF log prefix on ESP-DL tables [22], app prints
between per-op heap lines). It keeps the context a line alone cannot carry:

- the *run* a figure belongs to. A run is one inference, compile or report. A new run starts when a
  section the current run already has appears again (a second `Arena allocation total`, a second NNoM
  compile table, a second ST report), and, in the per-op heap trace, when the op index goes back (or a
  baseline line follows ops). Runs inherit a stated budget from the run before (it is a device figure);
- the *table* a row belongs to (profiler per-tag block, ESP-DL memory summary, ST C-layers ...), from
  the last title or header; generic shapes (`CONV_2D, 108195201`) are only read inside their table;
- the *open record*: backtrace lines continue the last ESP-IDF event, `freed by` the last dump record,
  `S: array` the last ST C-layer, a wrapped `[T#34]` the last op of the TFLM op list;
- the *phase*: an application marker (`--- post_import_graph done ---` [27]) names the events after it.

Every line is counted in exactly one class of `line_counts` (structural, message, noise, foreign,
blank, unparsed); unrecognised lines go to `unparsed` with their line number. Units are normalised to
bytes here; derived figures (curves, peaks, replays) are `logscope.analysis.mcu`'s.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from logscope.frames import build_frame, build_frame_columns
from logscope.io import LogSource
from logscope.model import ParsedLog
from logscope.parsers.grammar import Fields
from logscope.parsers.mcu.vocabulary import FOREIGN, NOISE, PLATFORM_FORMATS, format_of

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
_MAX_UNPARSED_CHARS = 500
# Frames hold 64-bit integers. A 16-digit figure (a petabyte) is never what an MCU tool printed: such a
# line is reported as unparsed instead of overflowing a column. Scaled values are capped the same way.
_HUGE = re.compile(r"\d{16,}")
_MAX_VALUE = 10**15
_MAX_TEXT = 300

HEAP_FIELDS = ("index", "name", "delta", "delta_unit", "total", "total_unit", "extra")
_HEAP_COLUMNS = ("run_index", "op_index", "op_name", "delta_bytes", "total_bytes", "detail", "line")
_ROW_FRAMES = ("mcu_runs", "ops", "buffers", "events", "arena", "mcu_layers", "profile", "unparsed")
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
    return int(text) if text.isdigit() else None


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


class McuAssembler:
    """Feeds classified lines into runs and frame rows; `finish()` returns the ParsedLog."""

    def __init__(self, source: LogSource) -> None:
        self.source = source
        self.runs: list[_Run] = []
        self.rows: dict[str, list[dict[str, Any]]] = {k: [] for k in _ROW_FRAMES}
        self.ops: list[tuple[Any, ...]] = []  # profiler events and op lists: tuples in OP_COLUMNS order
        self.heap_rows: list[tuple[Any, ...]] = []  # the hot table: per-op heap lines, in _HEAP_COLUMNS order
        self.counts = {"structural": 0, "message": 0, "noise": 0, "foreign": 0, "blank": 0, "unparsed": 0}
        self.table: str | None = None  # which table generic rows belong to
        self.skipping = False  # inside an ST section logscope does not read, until the next blank line
        self.leak_report = False  # ESP-IDF host log: allocations listed after HEAP TRACE REPORT are leaks
        self.open_event: dict[str, Any] | None = None
        self.open_layer: dict[str, Any] | None = None
        self.open_op: int | None = None  # index into self.ops of the last TFLM op-list row
        self.phase: str | None = None
        self.prof_tag_block = 0
        self.vela_group: str | None = None
        self.open_vela: dict[str, Any] | None = (
            None  # the last Vela `Placing on CPU` row, for its constraints
        )
        self.in_fault = False  # inside an Mbed OS fault or error report (between its ++ and -- titles)
        self.prev_kind = ""
        # Handlers are the methods named `_<TERMINAL>`: one per terminal that carries data or context.
        self.handlers = {
            name[1:]: getattr(self, name)
            for name in dir(type(self))
            if name.startswith("_") and name[1:2].isalpha() and name[1:].isupper()
        }

    # ------------------------------------------------------------------ dispatch
    def feed_blank(self) -> None:
        self.counts["blank"] += 1
        self.table = None
        self.skipping = False
        self.open_layer = None
        self.prev_kind = ""

    def feed(self, kind: str, fields: Fields, line: str, number: int) -> None:
        if kind == "HEAP_OP":
            self._HEAP_OP(fields, line, number)
            return
        prev, self.prev_kind = self.prev_kind, kind
        if kind in NOISE:
            self.counts["noise"] += 1
            return
        if kind in FOREIGN:
            self.counts["foreign"] += 1
            return
        handler = self.handlers.get(kind)
        if handler is None:  # OTHER, or a terminal no handler reads yet
            if self.skipping:  # a row of an ST section logscope does not read
                self.counts["noise"] += 1
                return
            if prev == "VELA_CONSTRAINT" and self.open_vela is not None and line.startswith("   "):
                # Vela prints a constraint's detail indented by three blanks under it (`   Op has ...`).
                self.open_vela["detail"] = _clip(f"{self.open_vela['detail']}; {line.strip()}")
                self.prev_kind = "VELA_CONSTRAINT"
                self.counts["structural"] += 1
                return
            self._unparsed(
                number, line, "unrecognised line" if kind in ("", "OTHER") else f"no handler for {kind}"
            )
            return
        if kind != "ST_KV" and _HUGE.search(line):  # (ST_KV: model hashes are long digit runs)
            self._unparsed(number, line, "number out of range")
            return
        if handler(fields, line, number, prev) is False:  # a generic shape outside its table
            self._unparsed(number, line, f"{kind.lower()} outside its table")
            return
        self.counts["structural"] += 1
        ident = format_of(kind)
        if ident is not None and self.runs:
            run = self.runs[-1]
            if ident[1] not in PLATFORM_FORMATS:
                run.families[ident[0]] += 1
            run.formats.setdefault(ident[1])
            run.end_line = max(run.end_line, number)

    def _unparsed(self, number: int, line: str, reason: str) -> None:
        self.counts["unparsed"] += 1
        self.rows["unparsed"].append({"line": number, "reason": reason, "text": line[:_MAX_UNPARSED_CHARS]})

    # ------------------------------------------------------------------ runs
    def _run(self, number: int) -> _Run:
        if not self.runs:
            return self._new_run(number)
        return self.runs[-1]

    def _new_run(self, number: int) -> _Run:
        run = _Run(index=len(self.runs), start_line=number, end_line=number)
        if self.runs:  # a stated budget is a device figure: it holds for the runs after it
            prev = self.runs[-1].figures
            for key in ("budget_bytes", "budget_line"):
                if key in prev:
                    run.figures[key] = prev[key]
        self.runs.append(run)
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

    # ------------------------------------------------------------------ per-op heap trace
    def _HEAP_OP(self, f: Fields, line: str, number: int, prev: str = "") -> None:
        """`Op[2] Conv2D: delta=+8000, total=53000` (see `heap_row`)."""
        self.heap_row(f.take(HEAP_FIELDS), line, number)

    def heap_row(self, fields: tuple[Any, ...], line: str, number: int) -> None:
        """One per-op heap line, its fields in `HEAP_FIELDS` order: the hot path of a long trace.

        The parse loop calls this directly (no `feed` dispatch), so it does its own counting; the run's
        family tally is added up in `finish` from `heap_ops`.
        """
        self.prev_kind = "HEAP_OP"
        index_text, name, delta, delta_unit, total, total_unit, extra = fields
        if len(index_text) > 15 or len(delta) > 16 or len(total) > 15:  # see _HUGE
            self._unparsed(number, line, "number out of range")
            return
        index = int(index_text)
        runs = self.runs
        run = runs[-1] if runs else self._new_run(number)
        if run.heap_ops and index <= run.last_heap_index:
            run = self._new_run(number)  # the op index went back: the next inference
        run.heap_ops += 1
        run.last_heap_index = index
        run.end_line = number
        self.counts["structural"] += 1
        if delta_unit is None:
            try:
                delta_bytes: int | None = int(delta)
            except ValueError:
                delta_bytes = to_bytes(delta)
        else:
            delta_bytes = to_bytes(delta, delta_unit)
        self.heap_rows.append(
            (
                run.index,
                index,
                name.strip() or None,
                delta_bytes,
                int(total) if total_unit is None and total.isdigit() else to_bytes(total, total_unit),
                extra.lstrip(",; ") or None if extra else None,
                number,
            )
        )

    def _HEAP_BASELINE(self, f: Fields, line: str, number: int, prev: str) -> None:
        run = self._run(number)
        if run.heap_ops or "baseline_bytes" in run.figures:
            run = self._new_run(number)
        run.figures.update(baseline_bytes=to_bytes(f["value"], f["unit"]), baseline_line=number)

    def _HEAP_BUDGET(self, f: Fields, line: str, number: int, prev: str) -> None:
        run = self._run(number)
        if run.heap_ops:
            run = self._new_run(number)
        run.figures.update(budget_bytes=to_bytes(f["value"], f["unit"]), budget_line=number)
        run.figures.setdefault("budget_label", (f["label"] or "").strip())

    def _HEAP_BANNER_SRAM(self, f: Fields, line: str, number: int, prev: str) -> None:
        """`STM32F746 @ 216 MHz, SRAM 320KB`: the part's SRAM is the budget unless the log states one."""
        run = self._run(number)
        if run.heap_ops:
            run = self._new_run(number)
        if "budget_bytes" in run.figures:  # a budget line (`RAM budget: 65536 B`) is more specific
            return
        unit = f["unit"] or ""
        unit = unit + "B" if unit in ("K", "k", "M") else unit  # `SRAM 320K`
        run.figures.update(
            budget_bytes=to_bytes(f["value"], unit),
            budget_line=number,
            budget_label=f"{f['label']} in the boot banner",
        )

    # ------------------------------------------------------------------ TFLM allocator
    def _TFLM_ALLOC_TOTAL(self, f: Fields, line: str, number: int, prev: str) -> None:
        part = f["part"] or "total"
        run = self._section(number, "tflm-alloc") if part == "total" else self._run(number)
        value = int(f["value"] or 0)
        self._arena(run, "tflm-allocator", number, category=f"arena {part}", used_bytes=value)
        if part == "total":
            self._report(run, "arena allocation total (head + tail)", value, number)

    def _TFLM_ALLOC_CATEGORY(self, f: Fields, line: str, number: int, prev: str) -> None:
        run = self._run(number)
        self._arena(
            run,
            "tflm-allocator",
            number,
            category=f["category"],
            region="tail",
            used_bytes=int(f["used"] or 0),
            requested_bytes=int(f["requested"] or 0),
            count=int(f["count"] or 0),
            count_unit=(f["noun"] or "").strip(),
        )

    def _TFLM_ALLOC_FAIL(self, f: Fields, line: str, number: int, prev: str) -> None:
        run = self._run(number)
        requested, available, missing = (int(f[k] or 0) for k in ("requested", "available", "missing"))
        self._arena(
            run,
            "tflm-allocator",
            number,
            category=f"failed: {f['what']}",
            requested_bytes=requested,
            free_bytes=available,
        )
        run.figures.setdefault("over_budget_bytes", missing)
        run.figures.setdefault("over_budget_line", number)
        self._fail(run, "allocation-failure", number, line)

    def _TFLM_ARENA_TOO_SMALL(self, f: Fields, line: str, number: int, prev: str) -> None:
        run = self._run(number)
        needed, available = _int(f["needed"]), _int(f["available"])  # None when the line was cut before them
        self._arena(
            run,
            "tflm-allocator",
            number,
            category="failed: arena too small",
            requested_bytes=needed,
            free_bytes=available,
        )
        if needed is not None and available is not None:
            run.figures.setdefault("over_budget_bytes", needed - available)
            run.figures.setdefault("over_budget_line", number)
        self._fail(run, "arena-too-small", number, line)

    def _TFLM_ALLOC_FOR(self, f: Fields, line: str, number: int, prev: str) -> None:
        """`Failed to allocate memory for tensor_info, 1320 bytes required`: a request, not a shortfall."""
        run = self._run(number)
        self._arena(
            run,
            "tflm-allocator",
            number,
            category=f"failed: {(f['what'] or '').strip()}",
            requested_bytes=_int(f["requested"]),
        )
        self._fail(run, "allocation-failure", number, line)

    def _TFLM_CALL_FAILED(self, f: Fields, line: str, number: int, prev: str) -> None:
        call = f["call"] or ""
        self._fail(
            self._run(number),
            "allocate-tensors-failed" if call == "AllocateTensors" else "invoke-failed",
            number,
            line,
        )

    def _TFLM_ARENA_USED(self, f: Fields, line: str, number: int, prev: str) -> None:
        """`Arena used bytes: 53212`: the application prints `interpreter.arena_used_bytes()`."""
        run = self._run(number)
        value = to_bytes(f["value"], f["unit"] if f["unit"] not in ("bytes", "Bytes") else None)
        self._arena(run, "tflm-app-print", number, category="arena used bytes", used_bytes=value)
        self._report(run, "arena used bytes (arena_used_bytes())", value, number)

    # ------------------------------------------------------------------ failures
    def _fail(self, run: _Run, reason: str, number: int, line: str) -> None:
        """The first failure a run prints is its cause; what follows (a HardFault) is the effect."""
        if run.figures.get("status") != "failed":
            run.figures.update(
                status="failed", status_reason=reason, status_line=number, status_message=_clip(line.strip())
            )

    def _MBED_FAULT_TITLE(self, f: Fields, line: str, number: int, prev: str) -> None:
        self._run(number)
        self.in_fault = f["edge"] == "++"

    def _MBED_FAULT_TYPE(self, f: Fields, line: str, number: int, prev: str) -> bool | None:
        if not self.in_fault:
            return False
        run = self._run(number)
        run.figures.setdefault("fault", f["fault"])
        run.figures.setdefault("fault_line", number)
        self._fail(run, "hard-fault" if f["fault"] == "HardFault" else "fault", number, line)
        return None

    def _MBED_FAULT_REGISTER(self, f: Fields, line: str, number: int, prev: str) -> bool | None:
        return False if not self.in_fault else None

    def _MBED_ERROR_STATUS(self, f: Fields, line: str, number: int, prev: str) -> bool | None:
        if not self.in_fault:
            return False
        run = self._run(number)
        run.figures.setdefault("fault", f"Mbed OS error {f['status']}")
        run.figures.setdefault("fault_line", number)
        self._fail(run, "mbed-error", number, line)
        return None

    def _MBED_ERROR_FIELD(self, f: Fields, line: str, number: int, prev: str) -> bool | None:
        return False if not self.in_fault else None

    def _UNITY_RESULT(self, f: Fields, line: str, number: int, prev: str) -> None:
        run = self._run(number)
        if f["result"] == "FAIL":
            self._fail(run, "test-failed", number, line)

    def _UNITY_SUMMARY(self, f: Fields, line: str, number: int, prev: str) -> None:
        run = self._run(number)
        if int(f["failures"] or 0):
            self._fail(run, "test-failed", number, line)

    def _UNITY_VERDICT(self, f: Fields, line: str, number: int, prev: str) -> bool | None:
        """`FAIL` / `OK` alone: Unity's verdict, read only under its `N Tests N Failures N Ignored` line."""
        return None if prev == "UNITY_SUMMARY" else False

    # ------------------------------------------------------------------ TFLM planner
    def _TFLM_PLAN_BUFFER(self, f: Fields, line: str, number: int, prev: str) -> None:
        buffer_id = int(f["id"] or 0)
        run = self._run(number)
        if buffer_id in run.plan_ids:
            run = self._new_run(number)
        run.plan_ids.add(buffer_id)
        self.rows["buffers"].append(
            {
                "run_index": run.index,
                "buffer_id": buffer_id,
                "ordinal": f["ordinal"],
                "size_bytes": int(f["size"] or 0),
                "offset_bytes": int(f["offset"] or 0),
                "first_op": int(f["first"] or 0),
                "last_op": int(f["last"] or 0),
                "source": "tflm-planner",
                "line": number,
            }
        )

    def _TFLM_PLAN_TICK(self, f: Fields, line: str, number: int, prev: str) -> None:
        run = self._run(number)
        # `(Nk)` is ceil(live bytes / 1024): kept as an upper bound, in KiB rounded up.
        self._arena(
            run,
            "tflm-planner",
            number,
            category=f"tick {f['tick']}",
            region="arena map",
            used_bytes=int(f["kb"] or 0) * 1024,
        )

    # ------------------------------------------------------------------ TFLM profiler
    def _TFLM_PROF_LOG(self, f: Fields, line: str, number: int, prev: str) -> None:
        run = self._run(number)
        if prev != "TFLM_PROF_LOG" and run.prof_ops:
            run = self._new_run(number)  # a second per-op block: the next invocation
        ms = int(f["ms"] or 0)
        run.prof_log.append(len(self.ops))
        self.ops.append(
            (
                run.index,
                run.prof_ops,
                f["tag"],
                None,
                None,
                int(f["ticks"] or 0),
                ms * 1000.0,
                "tflm-profiler",
                None,
                number,
            )
        )
        run.prof_ops += 1

    def _TFLM_PROF_CSV_HEADER(self, f: Fields, line: str, number: int, prev: str) -> None:
        run = self._run(number)
        if run.prof_ops:
            self._new_run(number)
        self.table = "prof_csv"

    def _TFLM_PROF_CSV_ROW(self, f: Fields, line: str, number: int, prev: str) -> bool | None:
        if self.table != "prof_csv":
            return False
        run = self._run(number)
        self.ops.append(
            (
                run.index,
                int(f["event"] or 0),
                (f["tag"] or "").strip(),
                None,
                None,
                int(f["ticks"] or 0),
                None,
                "tflm-profiler",
                None,
                number,
            )
        )
        run.prof_ops += 1
        return None

    def _TFLM_PROF_TAG_HEADER(self, f: Fields, line: str, number: int, prev: str) -> None:
        self._run(number)
        self.table = "prof_tags"
        self.prof_tag_block += 1

    def _TFLM_PROF_TAG_ROW(self, f: Fields, line: str, number: int, prev: str) -> bool | None:
        if self.table != "prof_tags":
            return False
        run = self._run(number)
        self.rows["profile"].append(
            {
                "run_index": run.index,
                "block": self.prof_tag_block,
                "tag": (f["tag"] or "").strip(),
                "ticks": int(f["ticks"] or 0),
                "is_total": False,
                "line": number,
            }
        )
        return None

    def _TFLM_PROF_TAG_TOTAL(self, f: Fields, line: str, number: int, prev: str) -> None:
        run = self._run(number)
        self.rows["profile"].append(
            {
                "run_index": run.index,
                "block": self.prof_tag_block,
                "tag": "total number of ticks",
                "ticks": int(f["ticks"] or 0),
                "is_total": True,
                "line": number,
            }
        )
        self.table = None

    # ------------------------------------------------------------------ TFLM benchmark tool
    def _TFLM_BENCH_TITLE(self, f: Fields, line: str, number: int, prev: str) -> None:
        name = (f["name"] or "").strip()
        if name == "Arena":
            self._section(number, "bench-arena")
        else:
            self._run(number)
        self.table = {"Arena": "bench_arena", "Allocations": "bench_alloc"}.get(name)

    def _TFLM_BENCH_ARENA_ROW(self, f: Fields, line: str, number: int, prev: str) -> None:
        run = self._run(number)
        value = int(f["bytes"] or 0)
        self._arena(
            run,
            "tflm-benchmark",
            number,
            category=f"arena {(f['name'] or '').lower()}",
            used_bytes=value,
            percent=float(f["pct"] or 0),
        )
        if f["name"] == "Total":
            self._report(run, "arena total", value, number)

    def _TFLM_BENCH_ALLOC_ROW(self, f: Fields, line: str, number: int, prev: str) -> None:
        run = self._run(number)
        self._arena(
            run,
            "tflm-benchmark",
            number,
            category=(f["name"] or "").strip(),
            used_bytes=int(f["used"] or 0),
            requested_bytes=int(f["requested"] or 0),
            count=int(f["count"] or 0),
            percent=float(f["pct"] or 0),
        )

    def _TFLM_BENCH_MODEL_SIZE(self, f: Fields, line: str, number: int, prev: str) -> None:
        label = f["label"] or ""
        run = self._section(number, "bench-model") if label == "Model size" else self._run(number)
        self._arena(
            run,
            "tflm-benchmark",
            number,
            category=label.strip("()").lower(),
            region="model file",
            used_bytes=int(f["bytes"] or 0),
            percent=float(f["pct"]) if f["pct"] else None,
        )

    def _TFLM_OPLIST_INTRO(self, f: Fields, line: str, number: int, prev: str) -> None:
        run = self._run(number)
        if run.oplist_ops:
            self._new_run(number)

    def _TFLM_OPLIST_SUBGRAPH(self, f: Fields, line: str, number: int, prev: str) -> None:
        self._run(number)
        self.table = "oplist"

    def _TFLM_OPLIST_OP(self, f: Fields, line: str, number: int, prev: str) -> None:
        run = self._run(number)
        index = int(f["index"] or 0)
        outputs = f["outputs"]
        self.ops.append(
            (
                run.index,
                index,
                f["name"],
                None,
                None,
                None,
                None,
                "tflm-oplist",
                f"({_clip(f['inputs'])}) -> [{outputs}]"
                if outputs is not None
                else f"({_clip(f['inputs'])}) ->",
                number,
            )
        )
        run.oplist_ops += 1
        self.open_op = len(self.ops) - 1 if outputs is None else None

    def _TFLM_OPLIST_CONT(self, f: Fields, line: str, number: int, prev: str) -> bool | None:
        if self.open_op is None:
            return False
        row = self.ops[self.open_op]
        self.ops[self.open_op] = (*row[:8], f"{row[8]} [{f['outputs']}]", row[9])
        self.open_op = None
        return None

    def _TFLM_OPLIST_TENSORS(self, f: Fields, line: str, number: int, prev: str) -> None:
        self._run(number)
        self.table = None

    # ------------------------------------------------------------------ NNoM
    def _NNOM_COMPILE_START(self, f: Fields, line: str, number: int, prev: str) -> None:
        run = self._run(number)
        if run.nnom_layers:
            self._new_run(number)

    def _NNOM_INFO(self, f: Fields, line: str, number: int, prev: str) -> None:
        run = self._run(number)
        if f["version"]:
            run.figures["tool_version"] = f"NNoM {f['version']}"

    def _NNOM_COMPILE_HEADER(self, f: Fields, line: str, number: int, prev: str) -> None:
        run = self._run(number)
        if run.nnom_layers:
            run = self._new_run(number)
        self.table = "nnom_compile"

    def _NNOM_COMPILE_ROW(self, f: Fields, line: str, number: int, prev: str) -> bool | None:
        run = self._run(number)
        num = int(f["num"] or 0)
        if num in run.nnom_layers:
            return False
        in_b, out_b, buf_b = (int(f[k] or 0) for k in ("in", "out", "buf"))
        row = {
            "run_index": run.index,
            "source": "nnom-compile",
            "layer_index": num,
            "name": f["type"],
            "op_type": f["type"],
            "activation": f["act"],
            "output_shape": "(" + ",".join(p.strip() for p in (f["shape"] or "").split(",")) + ")",
            "macs": _count(f["macs"]),
            "in_bytes": in_b,
            "out_bytes": out_b,
            "buf_bytes": buf_b,
            "working_set_bytes": in_b + out_b + buf_b,
            "blocks": f["blocks"],
            "line": number,
        }
        run.nnom_layers[num] = row
        self.rows["mcu_layers"].append(row)
        return None

    def _NNOM_BLOCKS_TITLE(self, f: Fields, line: str, number: int, prev: str) -> None:
        self._run(number)
        self.table = "nnom_blocks"

    def _NNOM_BLOCKS(self, f: Fields, line: str, number: int, prev: str) -> None:
        run = self._run(number)
        for item in (f["blocks"] or "").split():
            name, _, size = item.partition(":")
            self._arena(
                run, "nnom-compile", number, category=name, region="network buffers", used_bytes=int(size)
            )

    def _NNOM_NET_TOTAL(self, f: Fields, line: str, number: int, prev: str) -> None:
        run = self._run(number)
        value = int(f["value"] or 0)
        self._arena(run, "nnom-compile", number, category="network buffers total", used_bytes=value)
        self._report(run, "memory cost by network buffers", value, number)

    def _NNOM_OCCUPIED(self, f: Fields, line: str, number: int, prev: str) -> None:
        run = self._run(number)
        self._arena(
            run, "nnom-compile", number, category="total memory occupied", used_bytes=int(f["value"] or 0)
        )

    def _NNOM_COMPILE_DONE(self, f: Fields, line: str, number: int, prev: str) -> None:
        self._run(number)
        self.table = None

    def _NNOM_STAT_TITLE(self, f: Fields, line: str, number: int, prev: str) -> None:
        run = self._run(number)
        if run.nnom_stats:
            self._new_run(number)

    def _NNOM_STAT_HEADER(self, f: Fields, line: str, number: int, prev: str) -> None:
        run = self._run(number)
        if run.nnom_stats and prev != "NNOM_STAT_TITLE":
            self._new_run(number)
        self.table = "nnom_stat"

    def _NNOM_STAT_ROW(self, f: Fields, line: str, number: int, prev: str) -> None:
        run = self._run(number)
        run.nnom_stats += 1
        num = int(f["num"] or 0)
        layer = run.nnom_layers.get(num)
        if layer is None or layer.get("stat_line") is not None:
            layer = {
                "run_index": run.index,
                "source": "nnom-stat",
                "layer_index": num,
                "name": f["type"],
                "op_type": f["type"],
                "line": number,
            }
            self.rows["mcu_layers"].append(layer)
        layer["time_us"] = float(f["time"] or 0)
        if layer.get("macs") is None:
            layer["macs"] = _count(f["macs"])
        layer["stat_line"] = number

    def _NNOM_SUMMARY(self, f: Fields, line: str, number: int, prev: str) -> None:
        run = self._run(number)
        if f["time"]:
            run.figures.update(reported_time_us=int(f["time"]), reported_time_line=number)
        for key, label in (
            ("total_mem", "total memory cost (network and NNoM)"),
            ("nnom_total", "NNOM total mem"),
            ("total_memory", "total memory"),
        ):
            if f[key]:
                self._arena(run, "nnom-stat", number, category=label, used_bytes=int(f[key] or 0))

    # ------------------------------------------------------------------ ESP-IDF heap tracing
    def _event(self, run: _Run, number: int, **values: Any) -> dict[str, Any]:
        row = {"run_index": run.index, "seq": run.events, "phase": self.phase, "line": number} | values
        run.events += 1
        self.rows["events"].append(row)
        self.open_event = row
        return row

    def _ESPH_DUMP_HEADER(self, f: Fields, line: str, number: int, prev: str) -> None:
        run = self._run(number)
        if run.events:
            run = self._new_run(number)
        run.figures["dump_records"] = int(f["records"] or 0)
        self.leak_report = False

    def _ESPH_DUMP_RECORD(self, f: Fields, line: str, number: int, prev: str) -> None:
        run = self._run(number)
        self._event(
            run,
            number,
            action="alloc",
            cycle=int(f["ccount"] or "0", 16) if len(f["ccount"] or "") <= 12 else None,
            address=f["address"],
            size_bytes=int(f["size"] or 0),
            region=f["region"],
            cpu=int(f["cpu"] or 0),
            caller=f["caller"],
            freed=f["freed"] is not None,
            source="esp-idf-heap-trace-dump",
        )

    def _ESPH_DUMP_FREED_BY(self, f: Fields, line: str, number: int, prev: str) -> bool | None:
        if self.open_event is None or self.open_event.get("source") != "esp-idf-heap-trace-dump":
            return False
        self.open_event["freed"] = True
        self.open_event["freed_by"] = f["caller"]
        return None

    def _ESPH_DUMP_SUMMARY(self, f: Fields, line: str, number: int, prev: str) -> None:
        run = self._run(number)
        if f["alive_bytes"] is not None:
            run.figures.update(
                reported_leak_bytes=int(f["alive_bytes"]),
                reported_leak_blocks=int(f["alive"] or 0),
                reported_leak_line=number,
            )
        if f["total_allocs"] is not None:
            run.figures["reported_alloc_count"] = int(f["total_allocs"])
        if f["total_frees"] is not None:
            run.figures["reported_free_count"] = int(f["total_frees"])

    def _ESPH_DUMP_SUMMARY_V4(self, f: Fields, line: str, number: int, prev: str) -> None:
        run = self._run(number)
        if f["alive_bytes"] is not None and f["mode"] == "leaked":
            run.figures.update(
                reported_leak_bytes=int(f["alive_bytes"]),
                reported_leak_blocks=int(f["alive"] or 0),
                reported_leak_line=number,
            )
        if f["total_allocs"] is not None:
            run.figures["reported_alloc_count"] = int(f["total_allocs"])
            run.figures["reported_free_count"] = int(f["total_frees"] or 0)

    def _ESPH_LEAK_CHECK(self, f: Fields, line: str, number: int, prev: str) -> None:
        """`MALLOC_CAP_8BIT potential leak: Before 291016 bytes free, After 291004 bytes free (delta 12)`."""
        run = self._run(number)
        run.figures.setdefault("reported_leak_bytes", int(f["delta"] or 0))
        run.figures.setdefault("reported_leak_line", number)

    def _ESPH_HOST_ALLOC(self, f: Fields, line: str, number: int, prev: str) -> None:
        run = self._run(number)
        self._event(
            run,
            number,
            action="leaked" if self.leak_report else "alloc",
            time_s=float(f["time"] or 0),
            address=f["address"],
            size_bytes=int(f["size"] or 0),
            cpu=int(f["core"] or 0),
            task=f["task"],
            source="esp-idf-host-heap-log",
        )

    def _ESPH_HOST_FREE(self, f: Fields, line: str, number: int, prev: str) -> None:
        run = self._run(number)
        self._event(
            run,
            number,
            action="free",
            time_s=float(f["time"] or 0),
            address=f["address"],
            cpu=int(f["core"] or 0),
            task=f["task"],
            source="esp-idf-host-heap-log",
        )

    def _ESPH_BACKTRACE(self, f: Fields, line: str, number: int, prev: str) -> bool | None:
        if self.open_event is None:
            return False
        if self.open_event.get("caller") is None:  # the innermost frame names the caller
            self.open_event["caller"] = f["frame"]
        return None

    def _ESPH_HOST_REPORT(self, f: Fields, line: str, number: int, prev: str) -> None:
        run = self._run(number)
        if f["heap_events"] is None and f["leaked_bytes"] is None:
            self.leak_report = True  # the banner: what follows lists the blocks still allocated
        elif f["heap_events"] is not None:
            run.figures["reported_event_count"] = int(f["heap_events"])
        else:
            run.figures.update(
                reported_leak_bytes=int(f["leaked_bytes"] or 0),
                reported_leak_blocks=int(f["leaked_blocks"] or 0),
                reported_leak_line=number,
            )
            self.leak_report = False

    def _ESPH_CAPS_TITLE(self, f: Fields, line: str, number: int, prev: str) -> None:
        run = self._run(number)
        if run.caps_regions:
            self._new_run(number)

    def _ESPH_CAPS_REGION(self, f: Fields, line: str, number: int, prev: str) -> None:
        run = self._run(number)
        run.caps_regions += 1
        length = int(f["len"] or 0)
        min_free = int(f["min_free"] or 0)
        self._arena(
            run,
            "esp-idf-heap-caps",
            number,
            category="heap region",
            region=f["address"],
            used_bytes=int(f["allocated"] or 0),
            capacity_bytes=length,
            free_bytes=int(f["free"] or 0),
            min_free_bytes=min_free,
        )
        figures = run.figures
        figures["caps_len"] = figures.get("caps_len", 0) + length
        figures["caps_low_water_used"] = figures.get("caps_low_water_used", 0) + length - min_free
        figures.update(budget_bytes=figures["caps_len"], budget_line=figures.get("budget_line", number))
        figures["budget_label"] = "heap regions len"

    def _ESPH_CAPS_BLOCKS(self, f: Fields, line: str, number: int, prev: str) -> bool | None:
        arena = self.rows["arena"]
        if not arena or arena[-1]["source"] != "esp-idf-heap-caps" or arena[-1]["category"] != "heap region":
            return False
        arena[-1]["largest_free_bytes"] = int(f["largest"] or 0)
        arena[-1]["count"] = int(f["alloc_blocks"] or 0)
        arena[-1]["count_unit"] = "alloc blocks"
        return None

    def _ESPH_CAPS_TOTALS_TITLE(self, f: Fields, line: str, number: int, prev: str) -> None:
        self._run(number)

    def _ESPH_CAPS_TOTALS(self, f: Fields, line: str, number: int, prev: str) -> None:
        run = self._run(number)
        self._arena(
            run,
            "esp-idf-heap-caps",
            number,
            category="totals",
            used_bytes=int(f["allocated"] or 0),
            free_bytes=int(f["free"] or 0),
            min_free_bytes=int(f["min_free"] or 0),
            largest_free_bytes=int(f["largest"] or 0),
        )
        if "caps_low_water_used" in run.figures:
            self._report(
                run,
                "low-water use: sum of (len - min_free) over regions",
                run.figures["caps_low_water_used"],
                number,
            )

    # ------------------------------------------------------------------ Mbed
    def _MBED_EVENT(self, f: Fields, line: str, number: int, prev: str) -> bool | None:
        run = self._run(number)
        op, result, args = f["op"], f["result"], (f["args"] or "").split(";")
        events: list[tuple[str, str | None, int | None]]
        try:
            if op == "m":
                events = [("alloc", result, int(args[0]))]
            elif op == "c":
                events = [("alloc", result, min(int(args[0]) * int(args[1]), _MAX_VALUE))]
            elif op == "r":  # realloc: the old block goes, the new one comes
                events = [("free", args[0], None), ("alloc", result, int(args[1]))]
            else:
                events = [("free", args[0], None)]
        except (ValueError, IndexError):
            return False
        for action, address, size in events:
            if action == "free" and address in ("0x0", "(nil)", "0", "NULL"):
                continue  # free(NULL) and realloc(NULL, n) release nothing
            self._event(
                run,
                number,
                action=action,
                address=address,
                size_bytes=size,
                caller=f["caller"],
                source="mbed-mem-trace",
            )
        return None

    def _APP_MARKER(self, f: Fields, line: str, number: int, prev: str) -> None:
        self.phase = f["text"]

    # ------------------------------------------------------------------ Arm Vela
    def _VELA_SUMMARY_TITLE(self, f: Fields, line: str, number: int, prev: str) -> None:
        run = self._section(number, "vela-summary")
        run.figures["model_name"] = f["name"]

    def _VELA_MEM_USED(self, f: Fields, line: str, number: int, prev: str) -> None:
        memory = f["memory"] or "SRAM"
        run = self._section(number, f"vela-used-{memory}")
        value = to_bytes(f["value"], f["unit"])
        self._arena(run, "vela-summary", number, category="total used", region=memory, used_bytes=value)
        if memory == "SRAM":
            self._report(run, "Total SRAM used", value, number)

    def _VELA_SUBGRAPH(self, f: Fields, line: str, number: int, prev: str) -> None:
        name = f["name"] or ""
        run = self._run(number)
        if name in run.vela_groups:
            run = self._new_run(number)
        run.vela_groups.add(name)
        self.vela_group = name

    def _VELA_LAYER_HEADER(self, f: Fields, line: str, number: int, prev: str) -> None:
        self._run(number)
        self.table = "vela_layers"

    def _VELA_CSV_HEADER(self, f: Fields, line: str, number: int, prev: str) -> None:
        self._run(number)
        self.table = "vela_layers"

    def _VELA_LAYER_ROW(self, f: Fields, line: str, number: int, prev: str) -> bool | None:
        if self.table != "vela_layers":
            return False
        run = self._run(number)
        self.rows["mcu_layers"].append(
            {
                "run_index": run.index,
                "source": "vela-per-layer",
                "group": self.vela_group,
                "layer_index": run.vela_layers,
                "name": (f["name"] or "").strip().strip('"'),
                "op_type": f["op"],
                "detail": f["nng"],
                "working_set_bytes": round(float(f["sram"] or 0)),
                "peak_percent": float(f["peak"] or 0),
                "cycles": round(float(f["cycles"] or 0)),
                "macs": round(float(f["macs"] or 0)),
                "line": number,
            }
        )
        run.vela_layers += 1
        return None

    _VELA_CSV_ROW = _VELA_LAYER_ROW

    def _VELA_OPERATORS(self, f: Fields, line: str, number: int, prev: str) -> None:
        run = self._run(number)
        run.figures[f"{(f['where'] or 'CPU').lower()}_ops"] = int(f["count"] or 0)
        run.figures.setdefault("ops_split_line", number)

    def _VELA_OP_PLACED(self, f: Fields, line: str, number: int, prev: str) -> bool | None:
        """`   CPU: Passthrough = name (inputs ..., outputs ...)`, listed under `CPU operators = N`."""
        if prev not in ("VELA_OPERATORS", "VELA_OP_PLACED"):
            return False
        run = self._run(number)
        shapes = f"inputs {f['inputs']}, outputs {f['outputs']}" if f["inputs"] is not None else None
        self.rows["mcu_layers"].append(
            {
                "run_index": run.index,
                "source": "vela-op-placement",
                "name": (f["name"] or "").strip(),
                "op_type": f["op"],
                "target": f["where"],
                "detail": _clip(shapes) if shapes else None,
                "line": number,
            }
        )
        return None

    def _VELA_PLACED_ON_CPU(self, f: Fields, line: str, number: int, prev: str) -> None:
        """`Warning: RESIZE_BILINEAR 'up' is not supported on the NPU. Placing on CPU instead`."""
        run = self._run(number)
        why = "a CPU-only op" if f["why"] == "is a CPU only op" else "not supported on the NPU"
        if "semantics" in line:
            why = "unsupported TFLite semantics"
        self.open_vela = {
            "run_index": run.index,
            "source": "vela-warning",
            "name": f["name"],
            "op_type": f["op"],
            "target": "CPU",
            "detail": why,
            "line": number,
        }
        self.rows["mcu_layers"].append(self.open_vela)

    def _VELA_CONSTRAINT(self, f: Fields, line: str, number: int, prev: str) -> bool | None:
        """` - Scaling factor must be power of two`: the constraint the op under the last warning broke."""
        if self.open_vela is None or prev not in ("VELA_PLACED_ON_CPU", "VELA_CONSTRAINT"):
            return False
        self.open_vela["detail"] = _clip(f"{self.open_vela['detail']}: {f['text']}")
        return None

    # ------------------------------------------------------------------ ST
    def _ST_BANNER(self, f: Fields, line: str, number: int, prev: str) -> None:
        run = self._section(number, "st-banner")
        run.figures["tool_version"] = (
            f"ST Edge AI Core {f['edge']}" if f["edge"] else f"X-CUBE-AI {f['ai']} (tools {f['tools']})"
        )

    def _ST_SUMMARY_TITLE(self, f: Fields, line: str, number: int, prev: str) -> None:
        self._section(number, "st-summary")
        self.table = "st_summary"

    def _ST_KV(self, f: Fields, line: str, number: int, prev: str) -> None:
        run = self._run(number)
        key, value = f["key"], (f["value"] or "").strip()
        if key in ("model_name", "model name") and value:
            run.figures.setdefault("model_name", value)

    def _ST_IO(self, f: Fields, line: str, number: int, prev: str) -> None:
        run = self._run(number)
        m = _ST_BYTES.search(f["value"] or "")
        if m is not None:
            unit = "B" if m["unit"] == "Bytes" else m["unit"]
            self._arena(
                run,
                "st-report",
                number,
                category=line.split(":")[0].strip(),
                region="io",
                used_bytes=to_bytes(m["value"], unit),
            )

    def _ST_MEMORY(self, f: Fields, line: str, number: int, prev: str) -> None:
        key = f["key"] or ""
        run = self._section(number, f"st-{key}")
        value = _int(f["value"])
        region = {"weights (ro)": "flash", "activations (rw)": "ram", "ram (total)": "ram"}[key]
        self._arena(run, "st-report", number, category=key, region=region, used_bytes=value)
        if key == "ram (total)":
            self._report(run, "ram (total)", value, number)
            terms = _ST_TERMS.search(f["rest"] or "")
            if terms is not None:  # `= activations + input + output`, exact where the KiB figures round
                for name, group in (("ram (total): input", "inp"), ("ram (total): output", "out")):
                    self._arena(
                        run, "st-report", number, category=name, region="ram", used_bytes=_int(terms[group])
                    )

    def _ST_SKIP_TITLE(self, f: Fields, line: str, number: int, prev: str) -> None:
        self._run(number)
        self.skipping = True
        self.table = None

    def _ST_V5_ROW(self, f: Fields, line: str, number: int, prev: str) -> None:
        run = self._run(number)
        if f["id"] is not None:
            run.st_v5_last_id = int(f["id"])
        # Columns after the shape: `param #  connected to  macc  rom`, any of them blank. The connected-to
        # names are the non-numeric tokens; numbers before them are the params, after them macc then rom.
        tokens = (f["tail"] or "").split()
        first_name = next((i for i, token in enumerate(tokens) if _int(token) is None), len(tokens))
        after = [_int(token) for token in tokens[first_name:] if _int(token) is not None]
        if first_name == len(tokens):  # no connected-to column: nothing tells params from macc
            after = []
        self.rows["mcu_layers"].append(
            {
                "run_index": run.index,
                "source": "st-model",
                "layer_index": run.st_v5_last_id,
                "name": f["name"],
                "op_type": f["type"],
                "output_shape": f"({f['shape']})",
                "macs": after[0] if len(after) > 0 else None,
                "rom_bytes": after[1] if len(after) > 1 else None,
                "detail": " ".join(t for t in tokens[first_name:] if _int(t) is None) or None,
                "line": number,
            }
        )

    def _ST_V1_ROW(self, f: Fields, line: str, number: int, prev: str) -> None:
        run = self._run(number)
        left, _, right = (f["tail"] or "").partition("|")
        rom = macc = None
        connected: list[str] = []
        for token in left.split():
            if "/" in token and token.replace(",", "").replace("/", "").isdigit():
                rom = _int(token.split("/")[1])  # `param/size`: the size in bytes
            elif _int(token) is not None:
                macc = _int(token)
            else:
                connected.append(token)
        right_tokens = right.split()
        c_type = right_tokens[-1] if right_tokens and right_tokens[-1][0] not in "+-" else None
        self.rows["mcu_layers"].append(
            {
                "run_index": run.index,
                "source": "st-model",
                "layer_index": int(f["id"] or 0),
                "name": f["name"],
                "op_type": (f["type"] or "").strip() or None,
                "output_shape": f["shape"],
                "macs": macc,
                "rom_bytes": rom,
                "detail": c_type,
                "line": number,
            }
        )

    def _ST_POOL_ROW(self, f: Fields, line: str, number: int, prev: str) -> None:
        run = self._run(number)
        self._arena(
            run,
            "st-report",
            number,
            category="memory pool",
            region=f["name"],
            used_bytes=to_bytes(f["used"], f["unit"]) if f["used"] else None,
            percent=float(f["pct"]) if f["pct"] else None,
            count=_int(f["buffers"]),
            count_unit="buffers",
        )

    def _ST_WARNING(self, f: Fields, line: str, number: int, prev: str) -> None:
        self._run(number)

    def _ST_CARRAYS_TITLE(self, f: Fields, line: str, number: int, prev: str) -> None:
        self._run(number)
        self.table = "st_carrays"

    def _ST_CARRAY_ROW(self, f: Fields, line: str, number: int, prev: str) -> bool | None:
        if self.table != "st_carrays":
            return False
        run = self._run(number)
        row = {
            "run_index": run.index,
            "buffer_id": int(f["id"] or 0),
            "name": f["name"],
            "size_bytes": int(f["size"] or 0),
            "domain": f["domain"],
            "mem_pool": f["pool"],
            "source": "st-c-array",
            "line": number,
        }
        run.st_arrays[f["name"] or ""] = row
        self.rows["buffers"].append(row)
        return None

    def _ST_CLAYERS_TITLE(self, f: Fields, line: str, number: int, prev: str) -> None:
        self._run(number)
        self.table = "st_clayers"

    def _ST_CLAYER_ROW(self, f: Fields, line: str, number: int, prev: str) -> bool | None:
        if self.table != "st_clayers":
            return False
        run = self._run(number)
        layer = {
            "run_index": run.index,
            "source": "st-c-layer",
            "layer_index": int(f["id"] or 0),
            "name": f["name"],
            "op_type": f["type"],
            "macs": int(f["macc"] or 0),
            "rom_bytes": int(f["rom"] or 0),
            "detail": f"m_id {f['mid']}",
            "line": number,
            "_tensors": [(f["role"], f["array"])],
        }
        run.st_layers.append(layer)
        self.rows["mcu_layers"].append(layer)
        self.open_layer = layer
        return None

    def _ST_CLAYER_TENSOR(self, f: Fields, line: str, number: int, prev: str) -> bool | None:
        if self.open_layer is None:
            return False
        self.open_layer["_tensors"].append((f["role"], f["array"]))
        return None

    def _ST_TARGET_TITLE(self, f: Fields, line: str, number: int, prev: str) -> None:
        self._run(number)
        self.table = "st_target"

    def _ST_TARGET_ROW(self, f: Fields, line: str, number: int, prev: str) -> bool | None:
        if self.table != "st_target":
            return False
        run = self._run(number)
        label = "runtime" if f["row"] == "RT total" else "total incl. runtime"
        self._arena(
            run, "st-report", number, category=f"flash {label}", region="flash", used_bytes=_int(f["flash"])
        )
        self._arena(
            run, "st-report", number, category=f"ram {label}", region="ram", used_bytes=_int(f["ram"])
        )
        return None

    def _ST_N6_REGION(self, f: Fields, line: str, number: int, prev: str) -> None:
        run = self._run(number)
        self._arena(
            run,
            "st-report",
            number,
            category="memory region",
            region=f["region"],
            used_bytes=to_bytes(f["used"], f["used_unit"]),
            capacity_bytes=to_bytes(f["cap"], f["cap_unit"]),
            percent=float(f["pct"] or 0),
        )

    def _ST_N6_TOTAL(self, f: Fields, line: str, number: int, prev: str) -> None:
        run = self._run(number)
        self._arena(
            run,
            "st-report",
            number,
            category="memory regions total",
            used_bytes=to_bytes(f["total"], f["total_unit"]),
        )

    # ------------------------------------------------------------------ ESP-DL
    def _ESPDL_MODEL(self, f: Fields, line: str, number: int, prev: str) -> None:
        run = self._run(number)
        if "espdl-mem" in run.sections or "espdl-module" in run.sections:
            run = self._new_run(number)
        run.figures["model_name"] = (f["model"] or "").strip()

    def _ESPDL_TITLE(self, f: Fields, line: str, number: int, prev: str) -> None:
        title = f["title"] or ""
        self._section(number, "espdl-mem" if title == "memory summary" else "espdl-module")
        self.table = "espdl_mem" if title == "memory summary" else "espdl_module"

    def _ESPDL_MEM_ROW(self, f: Fields, line: str, number: int, prev: str) -> bool | None:
        if self.table != "espdl_mem":
            return False
        run = self._run(number)
        name = (f["name"] or "").strip()
        name = "fbs_model parameter" if name.endswith("parameter") else name
        total = 0
        for region, key in (("internal RAM", "internal"), ("PSRAM", "psram"), ("FLASH", "flash")):
            m = _ESPDL_CELL.fullmatch((f[key] or "").strip())
            if m is None:
                continue
            value = to_bytes(m["value"], m["unit"])
            self._arena(run, "esp-dl-profile", number, category=name, region=region, used_bytes=value)
            if region != "FLASH":
                total += value or 0
        if name == "total":
            self._report(run, "total internal RAM + PSRAM", total, number)
        return None

    def _ESPDL_MODULE_ROW(self, f: Fields, line: str, number: int, prev: str) -> bool | None:
        if self.table != "espdl_module":
            return False
        run = self._run(number)
        latency = float(f["latency"] or 0)
        unit = f["unit"] or "us"
        if f["name"] == "total":
            run.figures.update(
                reported_time_us=round(latency * (1000 if unit == "ms" else 1)), reported_time_line=number
            )
            return None
        self.rows["mcu_layers"].append(
            {
                "run_index": run.index,
                "source": "esp-dl-module",
                "name": f["name"],
                "op_type": f["type"] or None,
                "time_us": latency * 1000 if unit == "ms" else (latency if unit == "us" else None),
                "cycles": round(latency) if unit == "cycles" else None,
                "line": number,
            }
        )
        return None

    # ------------------------------------------------------------------ TinyEngine
    def _TINY_SRAM_FLASH(self, f: Fields, line: str, number: int, prev: str) -> None:
        run = self._section(number, "tiny")
        sram = int(f["sram"] or 0)
        self._arena(run, "tinyengine-header", number, category="sram", region="sram", used_bytes=sram)
        self._arena(
            run,
            "tinyengine-header",
            number,
            category="flash",
            region="flash",
            used_bytes=int(f["flash"] or 0),
        )
        run.figures["tiny_sram"] = (sram, number)

    def _TINY_DEFINE(self, f: Fields, line: str, number: int, prev: str) -> None:
        run = self._run(number)
        value = int(f["value"] or 0)
        if f["key"] == "PEAK_MEM":
            self._report(run, "PEAK_MEM", value, number)
        self._arena(run, "tinyengine-header", number, category=f["key"], used_bytes=value)

    def _TINY_BUFFER(self, f: Fields, line: str, number: int, prev: str) -> None:
        self._run(number)

    # ------------------------------------------------------------------ output
    def finish(self) -> ParsedLog:
        runs = []
        removed: set[int] = set()
        for run in self.runs:
            removed |= self._invoke_totals(run)
        if removed:
            self.ops = [row for position, row in enumerate(self.ops) if position not in removed]
        for run in self.runs:
            self._join_st(run)
            if "tiny_sram" in run.figures:
                sram, number = run.figures.pop("tiny_sram")
                self._report(run, "sram", sram, number)
            if run.heap_ops:
                run.families["heap-trace"] += run.heap_ops
                run.formats = {"heap-trace": None} | run.formats
            family = run.families.most_common(1)[0][0] if run.families else None
            figures = {k: v for k, v in run.figures.items() if not k.startswith("caps_")}
            figures.pop("dump_records", None)
            runs.append(
                {
                    "run_index": run.index,
                    "family": family,
                    "formats": ",".join(run.formats),
                    "start_line": run.start_line,
                    "end_line": run.end_line,
                }
                | figures
            )
        for layer in self.rows["mcu_layers"]:
            layer.pop("_tensors", None)
        frames = {name: build_frame(name, rows) for name, rows in self.rows.items() if name != "mcu_runs"}
        frames["mcu_runs"] = build_frame("mcu_runs", runs)
        frames["ops"] = self._ops_frame()
        families: Counter[str] = Counter()
        for run in self.runs:
            families.update(run.families)
        kind = f"mcu-{families.most_common(1)[0][0]}" if families else "mcu"
        return ParsedLog(
            source=self.source.path,
            kind=kind,
            frames=frames,
            line_counts={"total": sum(self.counts.values()), **self.counts},
            encoding=self.source.encoding,
            compression=self.source.compression,
            sha256=self.source.sha256,
            size_bytes=self.source.size_bytes,
            notes=self.source.notes,
        )

    def _invoke_totals(self, run: _Run) -> set[int]:
        """MicroProfiler lines that time a whole invoke, not an op: positions in `self.ops` to drop.

        A benchmark prints the invoke's ticks next to the per-op lines (`KeywordRunNIerations(1) took 38516
        ticks` then 15 ops that sum to 38516 [31]); counted as an op it doubles the tick sum. A line is such a
        total when its ticks equal exactly the sum of the (at least two) lines that follow it, or of those
        that precede it back to the block start or the previous total (both readings count the same timer).
        The total moves to `profile` (`is_total`) and to the run's `reported_time_*`; ops are renumbered.
        """
        rows = run.prof_log
        ticks = [self.ops[position][5] for position in rows]
        totals: list[int] = []  # indices into rows
        start = 0
        i = 0
        while i < len(rows):
            # The total first: its ticks are the sum of the lines after it.
            acc, j = 0, i + 1
            while j < len(rows) and acc < ticks[i]:
                acc += ticks[j]
                j += 1
            if acc == ticks[i] and j - i > 2:
                totals.append(i)
                start = i = j
                continue
            # The total last: its ticks are the sum of the lines since the block start (or the last total).
            if i - start >= 2 and ticks[i] == sum(ticks[start:i]):
                totals.append(i)
                start = i + 1
            i += 1
        if not totals:
            return set()
        for i in totals:
            row = self.ops[rows[i]]
            self.rows["profile"].append(
                {
                    "run_index": run.index,
                    "block": None,
                    "tag": row[2],
                    "ticks": row[5],
                    "is_total": True,
                    "line": row[9],
                }
            )
            if "reported_time_us" not in run.figures and row[6] is not None:
                run.figures.update(reported_time_us=round(row[6]), reported_time_line=row[9])
        dropped = {rows[i] for i in totals}
        for number, position in enumerate(p for p in rows if p not in dropped):
            row = self.ops[position]
            self.ops[position] = (row[0], number, *row[2:])
        run.prof_ops -= len(totals)
        return dropped

    def _ops_frame(self) -> pd.DataFrame:
        """Heap lines column by column (a trace can hold a million), then the other sources, in line order."""
        other = build_frame("ops", self.ops, columns=OP_COLUMNS)
        count = len(self.heap_rows)
        if not count:
            return other
        columns: dict[str, Any] = dict(zip(_HEAP_COLUMNS, zip(*self.heap_rows, strict=True), strict=True))
        columns["source"] = ["heap-trace"] * count
        heap = build_frame_columns("ops", columns, count)
        if not len(other):
            return heap
        return pd.concat([heap, other], ignore_index=True).sort_values(
            "line", kind="stable", ignore_index=True
        )

    def _join_st(self, run: _Run) -> None:
        """ST C-layers name the C-arrays they read and write: a buffer lives from its first to its last layer.

        Only activations-domain arrays take RAM; with each array used by consecutive layers (as in [11]) the
        live sum per layer equals the layer's I/O/scratch working set (trace-formats §2).
        """
        for position, layer in enumerate(run.st_layers):
            working = 0
            for _role, name in layer["_tensors"]:
                array = run.st_arrays.get(name)
                if array is None or array.get("domain") != "activations":
                    continue
                working += array["size_bytes"]
                array["first_op"] = position if array.get("first_op") is None else array["first_op"]
                array["last_op"] = position
            layer["working_set_bytes"] = working


def _clip(text: str | None, limit: int = _MAX_TEXT) -> str:
    text = text or ""
    return text if len(text) <= limit else text[: limit - 3] + "..."
