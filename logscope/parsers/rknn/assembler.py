"""The RKNN assembler: every family's handlers, the dispatch by terminal, and the frames at the end."""

from __future__ import annotations

from typing import Any

from logscope.io import LogSource
from logscope.model import Frames, ParsedLog
from logscope.parsers.grammar import Fields
from logscope.parsers.rknn.accuracy_join import join_accuracy_layers
from logscope.parsers.rknn.bulk import messages_frame
from logscope.parsers.rknn.layer_rows import LayerRows
from logscope.parsers.rknn.state import _FOREIGN, _MESSAGE_KINDS, _NOISE, _ROW_COLUMNS, _Build
from logscope.parsers.rknn.tensor_rows import TensorRows
from logscope.parsers.rknn.toolkit import ToolkitLogger


class RknnAssembler(ToolkitLogger):
    """Feeds classified lines to the handler of their terminal; `finish()` returns the ParsedLog."""

    def __init__(self, text: LogSource) -> None:
        super().__init__(text)
        self.handlers = {
            "TOOLKIT_BANNER": self._banner,
            "BUILD_START": self._build_start,
            "BUILD_DONE": self._build_done,
            "TK1_BUILD_DONE": self._build_done,
            "TARGET_SET": self._target,
            "TARGET_DEFAULT": self._target,
            "FUSE_HEADER": self._fuse_header,
            "FUSE_RESULT": self._fuse_result,
            "FUSE_CONT": self._fuse_cont,
            "FOLD_REMOVE": self._fold_remove,
            "PROGRESS": self._progress,
            "WARN_SUMMARY": self._warn_summary,
            "OUTLIER_ROW": self._outlier_row,
            "ACCURACY_ROW": self._accuracy_row,
            "CONFIG_LINE": self._config,
            "TOOLKIT_SETTINGS": self._toolkit_settings,
            "COMPILER_VERSION": self._compiler,
            "PASS_MARK": self._pass_mark,
            "LAYER_HEADER": self._layer_header,
            "LAYER_ROW": self._layer_row,
            "TENSOR_HEADER": self._tensor_header,
            "TENSOR_ROW": self._tensor_row,
            "MIN_CONST_ROW": self._min_const_row,
            "TOTAL_MEMORY": self._total_memory,
            "PREDICT_RW": self._predict_rw,
            "SRAM_TOTAL": self._sram_total,
            "ANALYZE_COUNTS": self._analyze_counts,
            "ANALYZE_REUSE": self._analyze_reuse,
            "ALLOCATE_MEMORY": self._allocate_memory,
            "COMPACT_FUSION": self._compact_fusion,
            "TRACEBACK_FRAME": self._traceback_frame,
            "RUNTIME_INFO": self._runtime_info,
            "DRIVER_INFO": self._driver_info,
            "SDK_VERSION": self._sdk_version,
            "MODEL_INFO": self._model_info,
            "ALLOCATION": self._allocation,
            "SUBGRAPH_BUFFERS": self._counted,
            "PROXY_VERSION": self._proxy_version,
            "PROXY_IO": self._proxy_io,
            "TENSOR_ATTR": self._tensor_attr,
            "PERF_TOTAL": self._perf_total,
            "RANKING_TITLE": self._counted,
            "RANKING_HEADER": self._ranking_header,
            "RANKING_ROW": self._ranking_row,
            "TK1_PERF_HEADER": self._tk1_perf_header,
            "TK1_PERF_ROW": self._tk1_perf_row,
            "EVAL_MEM_SECTION": self._eval_mem_section,
            "EVAL_MEM_VALUE": self._eval_mem_value,
            "EVAL_MEM_NOTE": self._counted,
            "MODEL_SIZE": self._model_size,
            "INDENTED": self._indented,
            "OTHER": self._other,
            "": self._other,
        }

    def feed(self, kind: str, fields: Fields, line: str, number: int) -> None:
        self.last_fed = number
        if self.wrapped_perf is not None and kind not in ("OTHER", "", "INDENTED"):
            self._flush_wrapped_perf()
        if kind in _NOISE:
            self.counts["noise"] += 1
            self._noise_context(kind, fields, number)
            return
        if kind in _FOREIGN:
            self.counts["foreign"] += 1
            self.open_message = None
            return
        if kind in _MESSAGE_KINDS:
            if kind == "NATIVE_MSG" and self._unfit_row(line, number):
                return
            self._message(kind, fields, line, number)
            return
        handler = self.handlers.get(kind)
        if handler is None:  # a terminal the grammar gained but the assembler does not know yet
            self._unparsed(number, line, f"no handler for {kind}")
            return
        if kind not in ("TRACEBACK_FRAME", "INDENTED", "OTHER", ""):
            self.open_message = None
        handler(fields, line, number)

    def finish(self) -> ParsedLog:
        self._flush_wrapped_perf()
        if self.builds:
            self.builds[-1].end_line = self.last_fed
        builds, memory, perf_totals = [], [], []
        for b in self.builds:
            status, reason, status_line = "unknown", None, None
            if b.done_line is not None:
                status, status_line = "done", b.done_line
            elif b.fatal is not None:
                status, reason, status_line = "failed", b.fatal[0], b.fatal[1]
            elif b.completed_line is not None:  # a run printed its results: it ended
                status, status_line = "done", b.completed_line
            builds.append(
                {
                    "build_index": b.index,
                    "kind": _build_kind(b),
                    "toolkit_product": b.toolkit_product,
                    "toolkit_version": b.toolkit_version,
                    "compiler_version": b.compiler_version,
                    "target_platform": b.target_platform,
                    "status": status,
                    "status_reason": reason,
                    "status_line": status_line,
                    "start_line": b.start_line,
                    "end_line": b.end_line,
                    "warn_summary_count": b.warn_summary_count,
                    "settings": b.settings,
                }
                | b.versions
            )
            if b.memory:
                memory.append({"build_index": b.index, "source": "build-log"} | b.memory)
            if b.compact:
                memory.append({"build_index": b.index, "source": "compact-summary"} | b.compact)
            if b.eval_memory:
                figures = {k: v for k, v in b.eval_memory.items() if not k.startswith("_")}
                if figures:
                    memory.append({"build_index": b.index, "source": "eval_memory"} | figures)
            if b.perf_totals:
                perf_totals.append({"build_index": b.index} | b.perf_totals)
        # A frame without rows is declared, made when read (`Frames`): most of a log's frames are empty.
        frames = Frames()
        for name, rows in self.rows.items():
            if name == "unparsed":
                continue
            if not rows:
                frames.defer(name)
            elif isinstance(rows, TensorRows | LayerRows):  # (kept as read: converted by whole columns)
                frames[name] = rows.frame()
            elif name == "messages" and self.has_message_runs:
                frames[name] = messages_frame(rows, _ROW_COLUMNS[name])
            else:
                frames.build(name, rows, _ROW_COLUMNS.get(name))
        if self.rows["accuracy"]:
            frames["accuracy_layers"] = join_accuracy_layers(frames["accuracy"], frames["layers"])
        else:  # (what the join returns for no accuracy row)
            frames.defer("accuracy_layers")
        if self.account.unparsed_rows:
            frames["unparsed"] = self.account.frame()
        else:
            frames.defer("unparsed")
        frames.build("builds", builds)
        frames.build_later("memory", memory)  # (the derived figures add to its rows, then it is built)
        frames.build("perf_totals", perf_totals)
        total = sum(self.counts.values())
        kind = _log_kind(builds, self.counts)
        return ParsedLog(
            source=self.text.path,
            kind=kind,
            frames=frames,
            line_counts={"total": total, **self.counts},
            encoding=self.text.encoding,
            compression=self.text.compression,
            sha256=self.text.sha256,
            size_bytes=self.text.size_bytes,
            notes=self.text.notes,
        )


# ---------------------------------------------------------------------- helpers
def _build_kind(b: _Build) -> str:
    """`build` for compiler output, `session` for what a runtime printed (rknn_init, eval_*, perf detail)."""
    if b.build_start_line is not None or b.invoked_line is not None or b.compiler_version or b.compact:
        return "build"
    if b.has_tables and "runtime_version" not in b.versions and "api_version" not in b.versions:
        return "build"  # tables without any runtime line: an excerpt of a build log
    return "session"


def _log_kind(builds: list[dict[str, Any]], counts: dict[str, int]) -> str:
    """`rknn-build` when a build row is of kind `build` (read from the rows the `builds` frame is made of:
    a comparison on the frame cost 0.4 ms a log)."""
    if any(b["kind"] == "build" for b in builds):
        return "rknn-build"
    if counts["structural"] + counts["message"] + counts["noise"]:
        return "rknn-log"
    return "unknown"
