"""Microcontroller memory output into frames: the grammar classifies lines, this module dispatches them.

One assembler reads every family of `grammars/mcu.lark`, because real captures mix them (a TFLM
profiler CSV next to the allocator report [02], an ESP-IDF log prefix on ESP-DL tables [22], app prints
between per-op heap lines). The handlers live in one module per family; this module maps each terminal
to its handler (an explicit table), and keeps what no family owns:

- the *table* a row belongs to (profiler per-tag block, ESP-DL memory summary, ST C-layers ...), from
  the last title or header; generic shapes (`CONV_2D, 108195201`) are only read inside their table, and
  a handler that finds one outside calls `_outside`: the line is then kept as unparsed with the reason;
- the *open record*: backtrace lines continue the last ESP-IDF event, `freed by` the last dump record,
  `S: array` the last ST C-layer, a wrapped `[T#34]` the last op of the TFLM op list;
- the *phase*: an application marker (`--- post_import_graph done ---` [27]) names the events after it.

Every physical line is counted in exactly one class of `line_counts` (structural, message, noise,
foreign, blank, unparsed) by the shared base (`logscope.parsers.base`); a read line is structural,
unrecognised lines go to `unparsed` with their line number.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

import pandas as pd

from logscope.frames import build_frame, build_frame_columns
from logscope.io import LogSource
from logscope.model import Frames, ParsedLog
from logscope.parsers.base import Handler
from logscope.parsers.grammar import Fields
from logscope.parsers.mcu.state import _HEAP_COLUMNS, _HUGE, OP_COLUMNS, _clip
from logscope.parsers.mcu.tinyengine import TinyEngine
from logscope.parsers.mcu.vocabulary import FOREIGN, NOISE, PLATFORM_FORMATS, format_of

# The sections a run prints once, by terminal: a line opening a section the current run already has starts
# the next run (a second `Arena allocation total`, a second ST report). The mark is read from the line's
# fields; None: this line opens no section. Run boundaries that depend on what came before (an op index
# going back, a repeated planner buffer id, a second profiler block) are decided by the family handlers.
SECTIONS: dict[str, Callable[[Fields], str | None]] = {
    "TFLM_ALLOC_TOTAL": lambda f: "tflm-alloc" if (f["part"] or "total") == "total" else None,
    "TFLM_BENCH_TITLE": lambda f: "bench-arena" if (f["name"] or "").strip() == "Arena" else None,
    "TFLM_BENCH_MODEL_SIZE": lambda f: "bench-model" if f["label"] == "Model size" else None,
    "VELA_SUMMARY_TITLE": lambda f: "vela-summary",
    "VELA_MEM_USED": lambda f: f"vela-used-{f['memory'] or 'SRAM'}",
    "ST_BANNER": lambda f: "st-banner",
    "ST_SUMMARY_TITLE": lambda f: "st-summary",
    "ST_MEMORY": lambda f: f"st-{f['key'] or ''}",
    "ESPDL_TITLE": lambda f: "espdl-mem" if f["title"] == "memory summary" else "espdl-module",
    "TINY_SRAM_FLASH": lambda f: "tiny",
}


class McuAssembler(TinyEngine):
    """Feeds classified lines to the handler of their terminal; `finish()` returns the ParsedLog."""

    def __init__(self, source: LogSource) -> None:
        super().__init__(source)
        # One handler per terminal that carries data or context; NOISE and FOREIGN terminals need none.
        self.handlers: dict[str, Handler] = {
            "HEAP_OP": self._heap_op,
            "HEAP_BASELINE": self._heap_baseline,
            "HEAP_BUDGET": self._heap_budget,
            "HEAP_BANNER_SRAM": self._heap_banner_sram,
            "TFLM_ALLOC_TOTAL": self._tflm_alloc_total,
            "TFLM_ALLOC_CATEGORY": self._tflm_alloc_category,
            "TFLM_ALLOC_FAIL": self._tflm_alloc_fail,
            "TFLM_ARENA_TOO_SMALL": self._tflm_arena_too_small,
            "TFLM_ALLOC_FOR": self._tflm_alloc_for,
            "TFLM_CALL_FAILED": self._tflm_call_failed,
            "TFLM_ARENA_USED": self._tflm_arena_used,
            "MBED_FAULT_TITLE": self._mbed_fault_title,
            "MBED_FAULT_TYPE": self._mbed_fault_type,
            "MBED_FAULT_REGISTER": self._mbed_fault_register,
            "MBED_ERROR_STATUS": self._mbed_error_status,
            "MBED_ERROR_FIELD": self._mbed_error_field,
            "UNITY_RESULT": self._unity_result,
            "UNITY_SUMMARY": self._unity_summary,
            "UNITY_VERDICT": self._unity_verdict,
            "TFLM_PLAN_BUFFER": self._tflm_plan_buffer,
            "TFLM_PLAN_TICK": self._tflm_plan_tick,
            "TFLM_PROF_LOG": self._tflm_prof_log,
            "TFLM_PROF_CSV_HEADER": self._tflm_prof_csv_header,
            "TFLM_PROF_CSV_ROW": self._tflm_prof_csv_row,
            "TFLM_PROF_TAG_HEADER": self._tflm_prof_tag_header,
            "TFLM_PROF_TAG_ROW": self._tflm_prof_tag_row,
            "TFLM_PROF_TAG_TOTAL": self._tflm_prof_tag_total,
            "TFLM_BENCH_TITLE": self._tflm_bench_title,
            "TFLM_BENCH_ARENA_ROW": self._tflm_bench_arena_row,
            "TFLM_BENCH_ALLOC_ROW": self._tflm_bench_alloc_row,
            "TFLM_BENCH_MODEL_SIZE": self._tflm_bench_model_size,
            "TFLM_OPLIST_INTRO": self._tflm_oplist_intro,
            "TFLM_OPLIST_SUBGRAPH": self._tflm_oplist_subgraph,
            "TFLM_OPLIST_OP": self._tflm_oplist_op,
            "TFLM_OPLIST_CONT": self._tflm_oplist_cont,
            "TFLM_OPLIST_TENSORS": self._tflm_oplist_tensors,
            "NNOM_COMPILE_START": self._nnom_compile_start,
            "NNOM_INFO": self._nnom_info,
            "NNOM_COMPILE_HEADER": self._nnom_compile_header,
            "NNOM_COMPILE_ROW": self._nnom_compile_row,
            "NNOM_BLOCKS_TITLE": self._nnom_blocks_title,
            "NNOM_BLOCKS": self._nnom_blocks,
            "NNOM_NET_TOTAL": self._nnom_net_total,
            "NNOM_OCCUPIED": self._nnom_occupied,
            "NNOM_COMPILE_DONE": self._nnom_compile_done,
            "NNOM_STAT_TITLE": self._nnom_stat_title,
            "NNOM_STAT_HEADER": self._nnom_stat_header,
            "NNOM_STAT_ROW": self._nnom_stat_row,
            "NNOM_SUMMARY": self._nnom_summary,
            "ESPH_DUMP_HEADER": self._esph_dump_header,
            "ESPH_DUMP_RECORD": self._esph_dump_record,
            "ESPH_DUMP_FREED_BY": self._esph_dump_freed_by,
            "ESPH_DUMP_SUMMARY": self._esph_dump_summary,
            "ESPH_DUMP_SUMMARY_V4": self._esph_dump_summary,
            "ESPH_LEAK_CHECK": self._esph_leak_check,
            "ESPH_HOST_ALLOC": self._esph_host_alloc,
            "ESPH_HOST_FREE": self._esph_host_free,
            "ESPH_BACKTRACE": self._esph_backtrace,
            "ESPH_HOST_REPORT": self._esph_host_report,
            "ESPH_CAPS_TITLE": self._esph_caps_title,
            "ESPH_CAPS_REGION": self._esph_caps_region,
            "ESPH_CAPS_BLOCKS": self._esph_caps_blocks,
            "ESPH_CAPS_TOTALS_TITLE": self._esph_caps_totals_title,
            "ESPH_CAPS_TOTALS": self._esph_caps_totals,
            "MBED_EVENT": self._mbed_event,
            "APP_MARKER": self._app_marker,
            "VELA_SUMMARY_TITLE": self._vela_summary_title,
            "VELA_MEM_USED": self._vela_mem_used,
            "VELA_SUBGRAPH": self._vela_subgraph,
            "VELA_LAYER_HEADER": self._vela_layer_header,
            "VELA_CSV_HEADER": self._vela_csv_header,
            "VELA_LAYER_ROW": self._vela_layer_row,
            "VELA_OPERATORS": self._vela_operators,
            "VELA_OP_PLACED": self._vela_op_placed,
            "VELA_PLACED_ON_CPU": self._vela_placed_on_cpu,
            "VELA_CONSTRAINT": self._vela_constraint,
            "ST_BANNER": self._st_banner,
            "ST_SUMMARY_TITLE": self._st_summary_title,
            "ST_KV": self._st_kv,
            "ST_IO": self._st_io,
            "ST_MEMORY": self._st_memory,
            "ST_SKIP_TITLE": self._st_skip_title,
            "ST_V5_ROW": self._st_v5_row,
            "ST_V1_ROW": self._st_v1_row,
            "ST_POOL_ROW": self._st_pool_row,
            "ST_WARNING": self._st_warning,
            "ST_CARRAYS_TITLE": self._st_carrays_title,
            "ST_CARRAY_ROW": self._st_carray_row,
            "ST_CLAYERS_TITLE": self._st_clayers_title,
            "ST_CLAYER_ROW": self._st_clayer_row,
            "ST_CLAYER_TENSOR": self._st_clayer_tensor,
            "ST_TARGET_TITLE": self._st_target_title,
            "ST_TARGET_ROW": self._st_target_row,
            "ST_N6_REGION": self._st_n6_region,
            "ST_N6_TOTAL": self._st_n6_total,
            "ESPDL_MODEL": self._espdl_model,
            "ESPDL_TITLE": self._espdl_title,
            "ESPDL_MEM_ROW": self._espdl_mem_row,
            "ESPDL_MODULE_ROW": self._espdl_module_row,
            "TINY_SRAM_FLASH": self._tiny_sram_flash,
            "TINY_DEFINE": self._tiny_define,
            "TINY_BUFFER": self._tiny_buffer,
            "VELA_CSV_ROW": self._vela_layer_row,
        }

    def feed_blank(self) -> None:
        self.counts["blank"] += 1
        self.table = None
        self.skipping = False
        self.open_layer = None
        self.prev_kind = ""

    def unrecognised_run(self, lines: list[str], numbers: list[int]) -> bool:
        """The middle lines of a run of lines `OTHER` takes (`runs.unrecognised_run_regex`): what `feed`
        does with each when no table reads them by layout and no ST section is skipped (False: it
        does not apply, feed them one by one)."""
        if self.skipping or self.table in ("vela_layers", "st_carrays"):
            return False
        self.account.unparsed_run(numbers, lines, "unrecognised line")
        self.prev_kind = "OTHER"
        return True

    def feed(self, kind: str, fields: Fields, line: str, number: int) -> None:
        if kind == "HEAP_OP":
            self._heap_op(fields, line, number)
            return
        prev = self.prev = self.prev_kind
        self.prev_kind = kind
        if kind in NOISE:
            self.counts["noise"] += 1
            if kind == "ST_HEADER":
                self.st_header = line
            elif kind == "RULE" and prev == "VELA_LAYER_HEADER":
                self.vela_rule(line)
            elif kind == "RULE" and prev == "ST_HEADER":
                self.st_rule(line)
            return
        if kind in FOREIGN:
            self.counts["foreign"] += 1
            return
        handler = self.handlers.get(kind)
        if handler is None:  # OTHER, or a terminal no handler reads yet
            if self.skipping:  # a row of an ST section logscope does not read
                self.counts["noise"] += 1
                return
            # A row of a table read by its layout that its row terminal did not match (an empty cell, a cut).
            layout_row = {"vela_layers": self.vela_layout_row, "st_carrays": self.st_layout_row}.get(
                self.table or ""
            )
            if layout_row is not None and kind in ("", "OTHER"):
                if layout_row(line, number):
                    self.counts["structural"] += 1
                else:
                    self.unparsed(number, line, f"{self.table} row that does not fit the header's layout")
                return
            if prev == "VELA_CONSTRAINT" and self.open_vela is not None and line.startswith("   "):
                # Vela prints a constraint's detail indented by three blanks under it (`   Op has ...`).
                self.open_vela["detail"] = _clip(f"{self.open_vela['detail']}; {line.strip()}")
                self.prev_kind = "VELA_CONSTRAINT"
                self.counts["structural"] += 1
                return
            self.unparsed(
                number, line, "unrecognised line" if kind in ("", "OTHER") else f"no handler for {kind}"
            )
            return
        if kind != "ST_KV" and _HUGE.search(line):  # (ST_KV: model hashes are long digit runs)
            self.unparsed(number, line, "number out of range")
            return
        section = SECTIONS.get(kind)
        if section is not None and (mark := section(fields)) is not None:
            self._section(number, mark)
        self.rejected = False
        handler(fields, line, number)
        if self.rejected:  # a generic shape outside its table
            self.unparsed(number, line, f"{kind.lower()} outside its table")
            return
        self.counts["structural"] += 1
        ident = format_of(kind)
        if ident is not None and self.runs:
            run = self.runs[-1]
            if ident[1] not in PLATFORM_FORMATS:
                run.families[ident[0]] += 1
            run.formats.setdefault(ident[1])
            run.end_line = max(run.end_line, number)

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
        # A frame without rows is declared, made when read (`Frames`): most of a log's frames are empty.
        frames = Frames()
        for name, rows in self.rows.items():
            if name != "mcu_runs":
                frames.build(name, rows)
        if self.account.unparsed_rows:
            frames["unparsed"] = self.account.frame()
        else:
            frames.defer("unparsed")
        frames.build("mcu_runs", runs)
        if self.ops or self.heap_rows:
            frames["ops"] = self._ops_frame()
        else:
            frames.defer("ops")
        families: Counter[str] = Counter()
        for run in self.runs:
            families.update(run.families)
        kind = f"mcu-{families.most_common(1)[0][0]}" if families else "mcu"
        return ParsedLog(
            source=self.source.path,
            kind=kind,
            frames=frames,
            line_counts=self.account.line_counts(),
            encoding=self.source.encoding,
            compression=self.source.compression,
            sha256=self.source.sha256,
            size_bytes=self.source.size_bytes,
            notes=self.source.notes,
        )

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
