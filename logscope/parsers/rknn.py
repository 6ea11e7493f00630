"""RKNN-Toolkit / librknnc logs into frames: the grammar classifies lines, this module assembles them.

The assembler is a small state machine over classified lines. It keeps three kinds of context that a
line alone cannot carry:

- which *build* a line belongs to. A file can hold several builds (encoder + decoder, a simulator run
  then a board run). Builds are segmented on toolkit lines only (banner, `rknn building ...`, compiler
  invocation, memory tables repeated), never on the example scripts' `--> Building model` prints,
  because stdout and stderr interleave (rknn-log-formats §10.1);
- which *table* a row belongs to (layer, feature or const tensor, outlier), from the last header or
  title seen; rows without a header (issue excerpts) are placed by their own shape;
- the *open message*: indented lines continue the previous multi-line W/E message or traceback.

Noise lines (known, content-free compiler chatter and tqdm bars) are counted, never stored, so memory
does not grow with them. Every other line lands in a frame or in `unparsed` with its line number.
"""

from __future__ import annotations

import functools
import gc
import math
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from lark import Token, Tree
from lark.exceptions import LarkError

from logscope.frames import SCHEMAS, build_frame
from logscope.io import LogSource, LogText
from logscope.model import ParsedLog
from logscope.parsers.categories import classify_message
from logscope.parsers.grammar import Fields, load_line_grammar, load_value_parser

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
_TQDM_FRAME = re.compile(
    r"(?P<stage>[A-Z][A-Za-z]*(?: \d+)?) ?: +(?P<pct>\d+)%\|[^|]*\| *(?P<done>\d+)/(?P<total>\d+)"
    r"(?: \[[^\]]*?(?:, *(?P<rate>[\d.]+)(?P<unit>it/s|s/it))?\])?"
)
# Counted only: lines whose content is fully known and carries nothing logscope reports.
_NOISE = frozenset(
    {
        "NATIVE_NOISE",
        "LOGGER_BLANK",
        "OPT_STEP",
        "TK1_GRAPH",
        "INVOKED",
        "MODEL_BUILD_STATS",
        "EVAL_FRAME",
        "REGCFG",
        "TABLE_RULE",
        "TABLE_TITLE",
        "OUTLIER_HEADER",
        "MIN_CONST_HEADER",
    }
)
# Noise that moves no context (titles, headers, rules and phase lines do): the parse loop counts these.
_QUIET_NOISE = _NOISE - {
    "TABLE_TITLE",
    "OUTLIER_HEADER",
    "MIN_CONST_HEADER",
    "INVOKED",
    "OPT_STEP",
    "TABLE_RULE",
}
_FOREIGN = frozenset({"SCRIPT_PRINT", "FOREIGN_LOG"})
_MESSAGE_KINDS = frozenset(
    {
        "PY_MSG",
        "PY_PLAIN",
        "NATIVE_MSG",
        "PROXY_MSG",
        "LOGCAT",
        "COMPACT_MSG",
        "EXCEPTION",
        "PROCESS_DEATH",
        "HYBRID_TYPE",
        "TRACEBACK_HEAD",
        "BARE_MSG",
    }
)
# Grammar fields of the two table rows, in the order the handlers unpack them.
_TENSOR_FIELDS = (
    "id",
    "user",
    "name",
    "dtype",
    "data_format",
    "orig_shape",
    "native_shape",
    "start",
    "flag",
    "end",
    "size",
    "sram_hit",
)
_LAYER_FIELDS = ("id", "op_type", "dtype", "target", "inputs", "output", "tail")
# The two big tables' rows are tuples in their frame's schema order (build_frame checks the width).
_ROW_COLUMNS = {name: tuple(SCHEMAS[name]) for name in ("tensors", "layers")}
# Failed runtime allocations: what was asked for and why it failed (rknn-log-formats §4).
_FAILED_ALLOC = re.compile(
    r"failed to (?P<what>malloc npu memory|allocate handle)!?,?"
    r"(?:.*?size: (?P<size>\d+))?(?:.*?flags: (?P<flags>0x[0-9a-fA-F]+))?(?:.*?errno: (?P<errno>\d+))?"
)
_MAX_MESSAGE_CHARS = 4000
_MAX_UNPARSED_CHARS = 500


def parse_rknn(text: LogText) -> ParsedLog:
    """Parse an RKNN log (build, runtime or both) that `logscope.io` has read and cleaned."""
    return parse_rknn_blocks(text, [(text.lines, text.numbers)])


def parse_rknn_blocks(source: LogSource, blocks: Iterable[tuple[list[str], list[int]]]) -> ParsedLog:
    """Parse an RKNN log arriving as blocks of (lines, numbers), e.g. from a `LogStream`.

    Only rows are kept, never lines, so memory follows what the log holds, not how long it is.
    `source` is read for its path, encoding and hash after the last block.
    """
    # Nothing the parse allocates is cyclic garbage; without the collector's repeated scans of the
    # growing row lists (hundreds of thousands of tuples) the parse runs ~10% faster.
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _parse_lines(source, blocks)
    finally:
        if collecting:
            gc.enable()


def _parse_lines(source: LogSource, blocks: Iterable[tuple[list[str], list[int]]]) -> ParsedLog:
    assembler = _Assembler(source)
    lexer = load_line_grammar("rknn").lexer
    classify = lexer.classify
    # Inside a table, try the one-regex matcher of its row first (it agrees with classify, see
    # LineLexer.row_matcher): table rows are half of a verbose log.
    tensor_matcher = lexer.row_matcher("NATIVE_PREFIX", "TENSOR_ROW")
    match_tensor, tensor_groups = tensor_matcher.match, tensor_matcher.indices(_TENSOR_FIELDS)
    layer_matcher = lexer.row_matcher("NATIVE_PREFIX", "LAYER_ROW")
    match_layer, layer_groups = layer_matcher.match, layer_matcher.indices(_LAYER_FIELDS)
    match_noise = lexer.row_matcher("NATIVE_PREFIX", "NATIVE_NOISE").match  # the other half
    quiet = _QUIET_NOISE
    tensor_row, tensor_values = assembler._tensor_row, assembler._tensor_values
    layer_row, layer_values, feed = assembler._layer_row, assembler._layer_values, assembler.feed
    blank = noise = 0
    for lines, numbers in blocks:
        for line, number in zip(lines, numbers, strict=True):
            if not line:
                blank += 1
                assembler.open_message = None
                continue
            table = assembler.table
            if table == "feature" or table == "const":
                m = match_tensor(line)
                if m is not None:
                    assembler.last_fed = number
                    assembler.open_message = None
                    tensor_values(m.group(*tensor_groups), number)
                    continue
            elif table == "layer":
                m = match_layer(line)
                if m is not None:  # a prefixed row: never a perf row (those are bare)
                    assembler.last_fed = number
                    assembler.open_message = None
                    layer_values(m.group(*layer_groups), line, number)
                    continue
            elif match_noise(line) is not None:
                noise += 1
                assembler.last_fed = number
                assembler.open_message = None
                continue
            kind, fields = classify(line)
            if kind in quiet:  # half of a verbose log: counted here, without a call
                noise += 1
                assembler.last_fed = number
                assembler.open_message = None
            elif kind == "TENSOR_ROW" or kind == "LAYER_ROW":  # rows outside a table context
                assembler.last_fed = number
                assembler.open_message = None
                (tensor_row if kind == "TENSOR_ROW" else layer_row)(fields, line, number)
            else:
                feed(kind, fields, line, number)
    assembler.counts["blank"] += blank
    assembler.counts["noise"] += noise
    return assembler.finish()


@dataclass
class _Build:
    index: int
    start_line: int
    toolkit_product: str | None = None
    toolkit_version: str | None = None
    compiler_version: str | None = None
    target_platform: str | None = None
    settings: dict[str, str] | None = None
    build_start_line: int | None = None
    done_line: int | None = None
    invoked_line: int | None = None
    end_line: int = 0
    warn_summary_count: int | None = None
    fatal: tuple[str, int] | None = None
    memory: dict[str, Any] = field(default_factory=dict)
    compact: dict[str, Any] = field(default_factory=dict)
    has_tables: bool = False
    versions: dict[str, Any] = field(default_factory=dict)  # runtime / driver / proxy / model versions
    eval_memory: dict[str, Any] = field(default_factory=dict)  # eval_memory() figures (memory frame)
    perf_totals: dict[str, Any] = field(default_factory=dict)

    @property
    def has_board_output(self) -> bool:
        return bool(self.versions) or bool(self.eval_memory) or bool(self.perf_totals)

    @property
    def has_compile_output(self) -> bool:
        return self.has_tables or bool(self.memory) or self.done_line is not None

    @property
    def has_content(self) -> bool:
        return (
            self.has_compile_output
            or self.has_board_output
            or self.build_start_line is not None
            or self.invoked_line is not None
        )


class _Assembler:
    def __init__(self, text: LogSource) -> None:
        self.text = text
        self.builds: list[_Build] = []
        # Rows are dicts, except in the two big tables (tuples in `_ROW_COLUMNS` order: 2-3x cheaper).
        self.rows: dict[str, list[Any]] = {
            k: []
            for k in (
                "layers",
                "tensors",
                "fusions",
                "messages",
                "passes",
                "progress",
                "outliers",
                "unparsed",
                "perf",
                "perf_ranking",
                "allocations",
                "tensor_attrs",
            )
        }
        self.counts = {"structural": 0, "message": 0, "noise": 0, "foreign": 0, "blank": 0, "unparsed": 0}
        self.table: str | None = None  # "layer" | "feature" | "const" | "min_const" | "outlier"
        self.layer_columns: tuple[str, ...] | None = None
        self.pending_title: str | None = None
        self.fuse_section: str | None = None
        self.open_message: dict[str, Any] | None = None
        self.open_fusion: dict[str, Any] | None = None
        self.open_passes: dict[str, dict[str, Any]] = {}
        self.last_progress: dict[str, Any] | None = None
        self.last_fed = 0  # number of the last non-blank line: where the current build ends so far
        self.attr_io: str | None = None  # `Input tensors:` / `Output tensors:` of the proxy block
        self.eval_section: str | None = None  # eval_memory section: tk2 detail, or tk1 system/npu/total
        self.last_perf: bool = False  # a tk1 perf row is open (its Name wraps onto the next lines)
        self.wrapped_perf: tuple[tuple[Any, ...], str, str, int] | None = None  # a 1.5 perf row cut short
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
            "CONFIG_LINE": self._config,
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

    # ------------------------------------------------------------------ dispatch
    def feed(self, kind: str, fields: Fields, line: str, number: int) -> None:
        self.last_fed = number
        if kind in _NOISE:
            self.counts["noise"] += 1
            self._noise_context(kind, fields, number)
            return
        if kind in _FOREIGN:
            self.counts["foreign"] += 1
            self.open_message = None
            return
        if kind in _MESSAGE_KINDS:
            self._message(kind, fields, line, number)
            return
        handler = self.handlers.get(kind)
        if handler is None:  # a terminal the grammar gained but the assembler does not know yet
            self._unparsed(number, line, f"no handler for {kind}")
            return
        if kind not in ("TRACEBACK_FRAME", "INDENTED", "OTHER", ""):
            self.open_message = None
        handler(fields, line, number)

    def _structural(self) -> None:
        self.counts["structural"] += 1

    def _unparsed(self, number: int, line: str, reason: str) -> None:
        self.counts["unparsed"] += 1
        self.rows["unparsed"].append({"line": number, "reason": reason, "text": line[:_MAX_UNPARSED_CHARS]})

    def _noise_context(self, kind: str, fields: Fields, number: int) -> None:
        """Noise lines still move table context: titles, rules and headers open or close tables."""
        if kind == "TABLE_TITLE":
            title = fields.get("title") or ""
            self.pending_title = title
            self.table = {
                "Feature Tensor Information Table": "feature",
                "Const Tensor Information Table": "const",
                "Network Layer Information Table": "layer",
            }.get(title)
            if self.table == "layer":
                self._current(number)
        elif kind == "OUTLIER_HEADER":
            self.table = "outlier"
        elif kind == "MIN_CONST_HEADER":
            self.table = "min_const"
        elif kind == "INVOKED":
            build = self._current(number)
            if build.invoked_line is not None or build.has_compile_output:
                build = self._new_build(number, inherit=True)
            build.invoked_line = number
        elif kind == "OPT_STEP" and self.fuse_section and not (fields.get("indent") or ""):
            self.fuse_section = None
        if (
            kind != "TABLE_RULE"
            and kind != "TABLE_TITLE"
            and kind not in ("OUTLIER_HEADER", "MIN_CONST_HEADER")
        ):
            self.open_message = None

    # ------------------------------------------------------------------ builds
    def _current(self, number: int) -> _Build:
        if not self.builds:
            return self._new_build(number, inherit=False)
        return self.builds[-1]

    def _new_build(self, number: int, *, inherit: bool) -> _Build:
        if self.builds:
            self.builds[-1].end_line = self.last_fed
        build = _Build(index=len(self.builds), start_line=number, end_line=number)
        if inherit and self.builds:
            # Same process: the toolkit banner and the target are printed once for several builds.
            prev = self.builds[-1]
            build.toolkit_product, build.toolkit_version = prev.toolkit_product, prev.toolkit_version
            build.target_platform = prev.target_platform
        self.builds.append(build)
        self.table = None
        self.layer_columns = None
        self.open_passes.clear()
        return build

    def _banner(self, f: Fields, line: str, number: int) -> None:
        self._structural()
        if f.get("level") == "E" and self.builds:
            return  # 2.x echoes the banner at E after a WARN summary: same build, not an error
        build = self._current(number)
        if build.has_content or (build.toolkit_version and build.toolkit_version != f["version"]):
            build = self._new_build(number, inherit=False)
        build.toolkit_product, build.toolkit_version = f["product"], f["version"]

    def _build_start(self, f: Fields, line: str, number: int) -> None:
        self._structural()
        build = self._current(number)
        if build.build_start_line is not None or build.has_compile_output:
            build = self._new_build(number, inherit=True)
        build.build_start_line = number

    def _build_done(self, f: Fields, line: str, number: int) -> None:
        self._structural()
        build = self._current(number)
        build.done_line = number
        self.table = None

    def _target(self, f: Fields, line: str, number: int) -> None:
        self._structural()
        build = self._current(number)
        build.target_platform = (f.get("target") or f.get("target2") or "").lower() or None

    def _config(self, f: Fields, line: str, number: int) -> None:
        build = self._current(number)
        if build.settings is not None or build.has_compile_output:
            build = self._new_build(number, inherit=True)
        settings = _parse_settings(f["body"] or "")
        if settings is None:
            self._unparsed(number, line, "malformed compiler settings")
            return
        self._structural()
        build.settings = settings

    def _compiler(self, f: Fields, line: str, number: int) -> None:
        self._structural()
        build = self._current(number)
        if build.compiler_version is not None or build.has_compile_output:
            build = self._new_build(number, inherit=True)
        build.compiler_version = f["version"]

    def _warn_summary(self, f: Fields, line: str, number: int) -> None:
        self._structural()
        count = f.get("count") or f.get("count1")
        self._current(number).warn_summary_count = int(count) if count else None

    # ------------------------------------------------------------------ passes
    def _pass_mark(self, f: Fields, line: str, number: int) -> None:
        self._structural()
        raw = f["name"] or ""
        name = _demangle(raw)
        if (f["mark"] or "").startswith(">"):
            build = self._current(number)
            if name == "RKNNMemStatisticsPass" and build.has_tables and build.memory:
                build = self._new_build(number, inherit=True)
            record = {
                "build_index": build.index,
                "name": name,
                "start_line": number,
                "end_line": None,
                "start_time": f.get("ts"),
                "end_time": None,
            }
            self.rows["passes"].append(record)
            self.open_passes[name] = record
            if name in ("RKNNModelBuildPass", "RKNNMemStatisticsPass"):
                self.table = None
        else:
            closing: dict[str, Any] | None = self.open_passes.pop(name) if name in self.open_passes else None
            if closing is None:  # an excerpt that starts inside a pass
                build = self._current(number)
                closing = {
                    "build_index": build.index,
                    "name": name,
                    "start_line": None,
                    "end_line": None,
                    "start_time": None,
                    "end_time": None,
                }
                self.rows["passes"].append(closing)
            closing["end_line"], closing["end_time"] = number, f.get("ts")
            self.table = None

    # ------------------------------------------------------------------ optimiser
    def _fuse_header(self, f: Fields, line: str, number: int) -> None:
        self._structural()
        self._current(number)
        self.fuse_section = (f["section"] or "").replace(" ", "_")

    def _fuse_result(self, f: Fields, line: str, number: int) -> None:
        parsed = _parse_nodes(f["body"] or "")
        if parsed is None:
            self._unparsed(number, line, "malformed node list")
            return
        self._structural()
        build = self._current(number)
        removed, added = parsed
        section = self.fuse_section or "fuse_ops"
        if section == "quant_optimizer":  # `adjust_relu: [...]` lists the nodes the rule acted on
            removed, added = parsed[0] + parsed[1], []
        row = {
            "build_index": build.index,
            "section": section,
            "rule": f["rule"],
            "removed_nodes": removed,
            "added_nodes": added,
            "line": number,
        }
        self.rows["fusions"].append(row)
        self.open_fusion = row

    def _fuse_cont(self, f: Fields, line: str, number: int) -> None:
        parsed = _parse_nodes(f["body"] or "")
        if parsed is None or self.open_fusion is None:
            self._unparsed(number, line, "add-node list without a fusion rule before it")
            return
        self._structural()
        self.open_fusion["added_nodes"] = self.open_fusion["added_nodes"] + parsed[1]

    def _fold_remove(self, f: Fields, line: str, number: int) -> None:
        parsed = _parse_nodes(f["body"] or "")
        if parsed is None:
            self._unparsed(number, line, "malformed node list")
            return
        self._structural()
        build = self._current(number)
        self.rows["fusions"].append(
            {
                "build_index": build.index,
                "section": "fold_constant",
                "rule": "fold_constant",
                "removed_nodes": parsed[0] + parsed[1],
                "added_nodes": [],
                "line": number,
            }
        )

    def _compact_fusion(self, f: Fields, line: str, number: int) -> None:
        self._structural()
        build = self._current(number)
        inputs = [p.strip() for p in (f["inputs"] or "").split("+") if p.strip()]
        self.rows["fusions"].append(
            {
                "build_index": build.index,
                "section": "compiler",
                "rule": "op_fusion",
                "removed_nodes": inputs,
                "added_nodes": [(f["output"] or "").strip()],
                "line": number,
            }
        )

    def _progress(self, f: Fields, line: str, number: int) -> None:
        """tqdm bars are counted as noise; only the final frame of each bar is kept (stage timings)."""
        self.counts["noise"] += 1
        self.open_message = None
        frames = list(_TQDM_FRAME.finditer(line))
        if not frames:
            return
        last = frames[-1]
        rate = float(last["rate"]) if last["rate"] else None
        if rate and last["unit"] == "s/it":
            rate = 1.0 / rate if rate else None
        build = self._current(number)
        row = {
            "build_index": build.index,
            "stage": last["stage"],
            "percent": int(last["pct"]),
            "done": int(last["done"]),
            "total": int(last["total"]),
            "rate_per_s": rate,
            "line": number,
        }
        prev = self.last_progress
        if (
            prev is not None
            and prev["stage"] == row["stage"]
            and prev["percent"] < 100
            and prev["line"] >= number - 1
        ):
            prev.update(row)  # the 0% and 100% frames of one bar on separate lines [45]
        else:
            self.rows["progress"].append(row)
            self.last_progress = row

    def _outlier_row(self, f: Fields, line: str, number: int) -> None:
        if self.table != "outlier":
            self._other(f, line, number)
            return
        self._structural()
        build = self._current(number)
        self.rows["outliers"].append(
            {
                "build_index": build.index,
                "const_name": f["name"],
                "abs_mean": float(f["abs_mean"] or "nan"),
                "abs_std": float(f["abs_std"] or "nan"),
                "outlier_value": float(f["outlier"] or "nan"),
                "line": number,
            }
        )

    # ------------------------------------------------------------------ tables
    def _layer_header(self, f: Fields, line: str, number: int) -> None:
        self._structural()
        self._current(number)
        # Build and runtime layer tables come with the `D RKNN:` prefix; eval_perf() and the C API's
        # perf detail print theirs bare ([03] [07] [11] [59]), and those are measurements, not plans.
        self.table = "layer" if f.get("level") else "perf"
        columns = re.split(r"\s{2,}", (f["columns"] or "").strip())
        self.layer_columns = tuple(c for c in columns if c and c != "FullName")

    def _layer_row(self, f: Fields, line: str, number: int) -> None:
        head = f.take(_LAYER_FIELDS)
        if self.table == "perf" and not f.get("level"):
            self._perf_row(head, line, number)
            return
        self._layer_values(head, line, number)

    def _layer_values(self, head: tuple[str | None, ...], line: str, number: int) -> None:
        """One build-time layer row from its `_LAYER_FIELDS` values (both lexer paths end here)."""
        layer_id, op_type, dtype, target, inputs, output, tail_text = head
        tail = _parse_layer_tail(tail_text or "", self.layer_columns)
        if tail is None:
            self._unparsed(number, line, "layer row with an unknown column layout")
            return
        self.counts["structural"] += 1
        build = self.builds[-1] if self.builds else self._current(number)
        build.has_tables = True
        self.rows["layers"].append(
            (
                build.index,
                int(layer_id or 0),
                op_type,
                dtype,
                target,
                None if inputs == "\\" else inputs,
                None if output == "\\" else output,
                *tail[: len(_LAYER_TAIL)],
                number,
            )
        )

    def _perf_row(self, head: tuple[str | None, ...], line: str, number: int, end: int | None = None) -> None:
        """One eval_perf row; a 1.5 row cut short by the terminal width waits for its continuation [11]."""
        layer_id, op_type, dtype, target, inputs, output, tail_text = head
        tail = _parse_layer_tail(tail_text or "", self.layer_columns)
        if tail is None:
            if end is None:
                self.wrapped_perf = (head, tail_text or "", line, number)
                return
            self._unparsed(number, line, "perf row with an unknown column layout")
            return
        self.counts["structural"] += 1
        build = self._current(number)
        ddr, npu, total, time_us, mac, workload, task_number, _lut, rw_kb, full_name, task_size, regcmd = tail
        self.rows["perf"].append(
            {
                "build_index": build.index,
                "layer_id": int(layer_id or 0),
                "op_type": op_type,
                "dtype": dtype,
                "target": target,
                "input_shapes": None if inputs == "\\" else inputs,
                "output_shape": None if output == "\\" else output,
                "ddr_cycles": ddr,
                "npu_cycles": npu,
                "total_cycles": total,
                "time_us": time_us,
                "mac_usage": mac,
                "workload": workload,
                "task_number": task_number,
                "task_size": task_size,
                "regcmd_size": regcmd,
                "rw_kb": rw_kb,
                "full_name": full_name,
                "line": number,
                "end_line": end if end is not None else number,
            }
        )

    def _resolve_wrapped_perf(self, line: str, number: int) -> bool:
        """Join a pending cut-short perf row with this line; True if this line was its continuation."""
        pending, self.wrapped_perf = self.wrapped_perf, None
        if pending is None:
            return False
        head, tail_text, first_line, first_number = pending
        joined = (*head[:-1], f"{tail_text} {line.strip()}")
        if _parse_layer_tail(joined[-1] or "", self.layer_columns) is None:
            self._unparsed(first_number, first_line, "perf row with an unknown column layout")
            return False
        self.counts["structural"] += 1  # the continuation line; _perf_row counts the row's first line
        self._perf_row(joined, first_line, first_number, end=number)
        return True

    def _tensor_header(self, f: Fields, line: str, number: int) -> None:
        self._structural()
        build = self._current(number)
        columns = f["columns"] or ""
        table = "feature" if "NativeShape" in columns else "const"
        if build.memory and build.has_tables:
            build = self._new_build(number, inherit=True)  # runtime logs print tables at every rknn_init
        self.table = table

    def _tensor_row(self, f: Fields, line: str, number: int) -> None:
        self._tensor_values(f.take(_TENSOR_FIELDS), number)

    def _tensor_values(self, values: tuple[str | None, ...], number: int) -> None:
        """One tensor-table row from its `_TENSOR_FIELDS` values (both lexer paths end here)."""
        self.counts["structural"] += 1
        build = self.builds[-1] if self.builds else self._current(number)
        build.has_tables = True
        op_id, user, name, dtype, data_format, orig, native, start, flag, end, size, sram_hit = values
        table = "feature" if native or data_format else "const"
        if native is None and data_format is None and self.table in ("feature", "const"):
            table = self.table
        dtype = dtype or ""
        logical = _shape_bytes(orig, dtype)
        native_bytes = _shape_bytes(native, dtype) if native else None
        self.rows["tensors"].append(
            (
                build.index,
                table,
                int(op_id or 0),
                user,
                name,
                dtype,
                data_format,
                orig,
                native,
                int(start or "0", 16),
                int(end or "0", 16),
                int(size or "0", 16),
                flag == "*",
                sram_hit,
                logical,
                native_bytes,
                native_bytes - logical if native_bytes is not None and logical is not None else None,
                number,
            )
        )

    def _min_const_row(self, f: Fields, line: str, number: int) -> None:
        if self.table != "min_const":
            self._other(f, line, number)
            return
        self._structural()
        build = self._current(number)
        build.has_tables = True
        dtype = f["dtype"] or ""
        orig = f["orig_shape"]
        row = (build.index, "const", None, f["user"], f["name"], dtype, None, orig, None)
        self.rows["tensors"].append(
            (*row, None, None, None, False, None, _shape_bytes(orig, dtype), None, None, number)
        )

    # ------------------------------------------------------------------ memory figures
    def _total_memory(self, f: Fields, line: str, number: int) -> None:
        self._structural()
        build = self._current(number)
        key = "weight" if f["kind"] == "Weight" else "internal"
        if f"{key}_bytes" in build.memory:
            build = self._new_build(number, inherit=True)
        value = _to_bytes(f["value"], f["unit"])
        build.memory[f"{key}_bytes"] = value
        build.memory[f"{key}_line"] = number
        if key == "internal":  # RKNN's "Internal" is feature-map memory, i.e. activations
            build.memory["activation_bytes"], build.memory["activation_line"] = value, number

    def _predict_rw(self, f: Fields, line: str, number: int) -> None:
        self._structural()
        key = {
            "Internal Memory": "predict_internal_rw_bytes",
            "Weight Memory": "predict_weight_rw_bytes",
            "SRAM Hit": "predict_sram_hit_rw_bytes",
        }[f["kind"] or "SRAM Hit"]
        self._current(number).memory[key] = int(f["value"] or 0)

    def _sram_total(self, f: Fields, line: str, number: int) -> None:
        self._structural()
        self._current(number)

    def _analyze_counts(self, f: Fields, line: str, number: int) -> None:
        self._structural()
        compact = self._current(number).compact
        compact["tensor_count"], compact["memory_node_count"] = int(f["tensors"] or 0), int(f["nodes"] or 0)

    def _analyze_reuse(self, f: Fields, line: str, number: int) -> None:
        self._structural()
        compact = self._current(number).compact
        compact["reuse_rate"], compact["reuse_line"] = float(f["rate"] or 0) / 100.0, number

    def _allocate_memory(self, f: Fields, line: str, number: int) -> None:
        self._structural()
        compact = self._current(number).compact
        # Compact vocabulary: Activation = feature maps, Internal = operator scratch.
        key = {"Weight": "weight", "Activation": "activation", "Internal": "scratch", "Total": "total"}[
            f["kind"] or "Total"
        ]
        compact[f"{key}_bytes"], compact[f"{key}_line"] = _to_bytes(f["value"], f["unit"]), number
        peak = f.get("peak")
        if peak:
            compact["peak_layer"] = peak.strip()

    # ------------------------------------------------------------------ board side (issue 3)
    def _counted(self, f: Fields, line: str, number: int) -> None:
        self._structural()
        self._current(number)

    def _session(self, number: int, key: str) -> _Build:
        """The build a runtime line belongs to: a new session when this one already has `key` or output.

        Each `rknn_init` prints the runtime information again, and then its own tables [01]; a build
        log followed by `init_runtime` on a board [10] is two things: what was compiled, what ran.
        """
        build = self._current(number)
        if key in build.versions or build.has_compile_output or build.eval_memory or build.perf_totals:
            build = self._new_build(number, inherit=True)
            self.last_perf = False
        return build

    def _runtime_info(self, f: Fields, line: str, number: int) -> None:
        self._structural()
        build = self._session(number, "runtime_version")
        build.versions["runtime_version"] = f["version"]
        build.versions["runtime_line"] = number

    def _driver_info(self, f: Fields, line: str, number: int) -> None:
        self._structural()
        build = self._current(number)
        if "driver_version" in build.versions:
            build = self._session(number, "driver_version")
        build.versions["driver_version"], build.versions["driver_line"] = f["version"], number

    def _model_info(self, f: Fields, line: str, number: int) -> None:
        self._structural()
        build = self._current(number)
        build.versions["model_toolkit_version"] = (f["toolkit"] or "").strip() or None
        build.versions["model_compiler_version"] = f["compiler"]
        build.versions["model_format_version"] = int(f["model_version"] or 0)
        build.versions["model_info_line"] = number
        if build.target_platform is None and f["platform"]:
            build.target_platform = f["platform"].strip().lower() or None

    def _allocation(self, f: Fields, line: str, number: int) -> None:
        self._structural()
        build = self._current(number)
        self.rows["allocations"].append(
            {
                "build_index": build.index,
                "name": f["name"],
                "status": "allocated",
                "size_bytes": int(f["size"] or 0),
                "aligned_size_bytes": int(f["aligned"] or 0),
                "virt_addr": f["virt"],
                "dma_addr": f["dma"],
                "fd": int(f["fd"] or 0),
                "handle": int(f["handle"] or 0),
                "flags": f["flags"],
                "line": number,
            }
        )

    def _proxy_version(self, f: Fields, line: str, number: int) -> None:
        self._structural()
        if f["api"]:
            build = self._session(number, "api_version")
            build.versions["api_version"], build.versions["api_line"] = f["api"], number
            return
        key = "server_version" if f["driver"] == "rknn_server" else "proxy_runtime_version"
        self._current(number).versions[key] = f["driver_version"]

    def _proxy_io(self, f: Fields, line: str, number: int) -> None:
        self._structural()
        self.attr_io = (f["io"] or "").lower() or None

    def _tensor_attr(self, f: Fields, line: str, number: int) -> None:
        self._structural()
        build = self._current(number)
        self.rows["tensor_attrs"].append(
            {
                "build_index": build.index,
                "io": self.attr_io,
                "index": int(f["index"] or 0),
                "name": f["name"],
                "n_dims": int(f["n_dims"] or 0),
                "dims": f["dims"],
                "n_elems": int(f["n_elems"] or 0),
                "size_bytes": int(f["size"] or 0),
                "w_stride": _int_or_none(f["w_stride"] or ""),
                "size_with_stride_bytes": _int_or_none(f["size_with_stride"] or ""),
                "fmt": f["fmt"],
                "dtype": f["type"],
                "qnt_type": f["qnt_type"],
                "zp": int(f["zp"] or 0),
                "scale": _float_or_none(f["scale"] or ""),
                "line": number,
            }
        )

    def _perf_total(self, f: Fields, line: str, number: int) -> None:
        self._structural()
        build = self._current(number)
        key, value = f["key"] or "", float(f["value"] or 0)
        totals = build.perf_totals
        if key == "FPS":
            totals["fps"] = value
        elif "Time" in key:
            totals["total_time_us"], totals["time_line"] = int(value), number
        else:  # 1.5 prints MB (of 1024 KB: the 2.x KB figure of the same model agrees), 2.x KB
            totals["rw_kb"] = value * 1024 if "(MB)" in key else value
            totals["rw_line"] = number
        self.table = None

    def _ranking_header(self, f: Fields, line: str, number: int) -> None:
        self._structural()
        self._current(number)
        self.table = "ranking"

    def _ranking_row(self, f: Fields, line: str, number: int) -> None:
        if self.table != "ranking":
            self._other(f, line, number)
            return
        self._structural()
        gpu = f["gpu"]
        self.rows["perf_ranking"].append(
            {
                "build_index": self._current(number).index,
                "op_type": f["op_type"],
                "call_number": int(f["calls"] or 0),
                "cpu_time_us": int(f["cpu"] or 0),
                "gpu_time_us": int(gpu) if gpu is not None else None,
                "npu_time_us": int(f["npu"] or 0),
                "total_time_us": int(f["total"] or 0),
                "time_ratio_pct": float(f["ratio"] or 0),
                "line": number,
            }
        )

    def _tk1_perf_header(self, f: Fields, line: str, number: int) -> None:
        self._structural()
        self._current(number)
        self.table = "tk1_perf"
        self.last_perf = False

    def _tk1_perf_row(self, f: Fields, line: str, number: int) -> None:
        if self.table != "tk1_perf":
            self._other(f, line, number)
            return
        self._structural()
        row = {
            "build_index": self._current(number).index,
            "layer_id": int(f["id"] or 0),
            "op_type": f["op_type"],
            "time_us": int(f["time"] or 0),
            "full_name": f["name"],
            "uid": int(f["uid"] or 0),
            "line": number,
            "end_line": number,
        }
        self.rows["perf"].append(row)
        self.last_perf = True

    def _eval_mem_section(self, f: Fields, line: str, number: int) -> None:
        self._structural()
        section = f["section"] or ""
        self.eval_section = {"System memory": "system", "NPU memory": "npu", "Total memory": "max_total"}.get(
            section, "detail"
        )
        build = self._current(number)
        if build.eval_memory.get("_sections", set()) & {self.eval_section}:
            build = self._new_build(number, inherit=True)  # a second eval_memory dump: a second session
        build.eval_memory.setdefault("_sections", set()).add(self.eval_section)

    def _eval_mem_value(self, f: Fields, line: str, number: int) -> None:
        kind, section = f["kind"] or "", self.eval_section
        value = _to_bytes(f["value"], f["unit"])
        memory = self._current(number).eval_memory
        if kind in ("maximum allocation", "total allocation"):
            if section not in ("system", "npu", "max_total"):
                self._other(f, line, number)
                return
            which = "max" if kind.startswith("maximum") else "total"
            key = {"system": f"system_{which}_bytes", "npu": f"npu_{which}_bytes"}.get(section or "")
            if section == "max_total":
                key = "max_total_bytes" if which == "max" else "total_bytes"
        else:
            key = {
                "Total Weight Memory": "weight_bytes",
                "Weight Memory": "weight_bytes",
                "Total Internal Tensor Memory": "internal_bytes",
                "Internal Tensor Memory": "internal_bytes",
                "Other Memory": "other_bytes",
                "Total Memory": "total_bytes",
            }[kind]
        if key is None:
            self._other(f, line, number)
            return
        self._structural()
        memory[key] = value
        line_key = {"weight_bytes": "weight_line", "internal_bytes": "internal_line"} | {
            "total_bytes": "total_line"
        }
        if key in line_key:
            memory[line_key[key]] = number
        if key == "internal_bytes":  # Internal Tensor Memory = feature maps, as in the build log
            memory["activation_bytes"], memory["activation_line"] = value, number

    def _model_size(self, f: Fields, line: str, number: int) -> None:
        self._structural()
        memory = self._current(number).eval_memory
        memory["model_bytes"], memory["model_line"] = _to_bytes(f["value"], f["unit"]), number

    # ------------------------------------------------------------------ messages
    def _message(self, kind: str, f: Fields, line: str, number: int) -> None:
        level = f.get("level") or f.get("level2")
        logger = None
        func = f.get("func")
        text = f.get("message")
        if kind == "LOGCAT":
            logger = (f.get("tag") or f.get("tag2") or "").strip() or None
            if not text and logger:  # kernel `W Call trace:` has no tag: what looks like one is the text
                text, logger = f"{logger}:", None
        elif kind == "PROXY_MSG":
            logger = f.get("logger")
        elif kind == "NATIVE_MSG" or kind == "HYBRID_TYPE":
            logger = "RKNN"
        elif kind == "COMPACT_MSG":
            logger = f.get("section")
        if kind == "EXCEPTION":
            level, text = "E", f"{f['exc']}: {f.get('message') or ''}"
        elif kind == "PROCESS_DEATH":
            level, text = "E", f.get("death")
        elif kind == "TRACEBACK_HEAD":
            level, text = "E", "Traceback (most recent call last):"
        elif kind == "HYBRID_TYPE":
            text = line[line.index("Meet hybrid") :]
        text = text if text is not None else line.strip()
        category = classify_message(text if func is None else f"{func}: {text}")
        fatal = bool(category and category.fatal) or (
            level == "E" and func in ("build", "export_rknn", "load_onnx", "load_pytorch", "load_tflite")
        )
        build = self._current(number)
        if fatal and build.fatal is None and build.done_line is None:
            build.fatal = (category.name if category else f"{func} error", number)
        row = {
            "build_index": build.index,
            "line": number,
            "end_line": number,
            "level": level,
            "logger": logger,
            "func": func,
            "timestamp": f.get("ts"),
            "category": category.name if category else None,
            "fatal": fatal,
            "message": text[:_MAX_MESSAGE_CHARS],
        }
        self.rows["messages"].append(row)
        self.counts["message"] += 1
        self.open_message = row
        if category is not None and category.name == "allocation-failure":
            self._failed_allocation(text, build, number)

    def _failed_allocation(self, text: str, build: _Build, number: int) -> None:
        """Read `failed to malloc npu memory!, size: N, flags: F` and `failed to allocate handle, errno: N`.

        The failed request becomes an `allocations` row (status `failed`) so a rule can name its size.
        """
        m = _FAILED_ALLOC.search(text)
        if m is None:
            return
        self.rows["allocations"].append(
            {
                "build_index": build.index,
                "name": m.group("what"),
                "status": "failed",
                "size_bytes": int(m.group("size")) if m.group("size") else None,
                "flags": m.group("flags"),
                "errno": int(m.group("errno")) if m.group("errno") else None,
                "line": number,
            }
        )

    def _traceback_frame(self, f: Fields, line: str, number: int) -> None:
        """A frame continues the open traceback; issue excerpts often start mid-traceback."""
        if self.open_message is None:
            self._message("TRACEBACK_HEAD", Fields(), line, number)
            self.open_message["message"] += "\n" + line.strip()  # type: ignore[index]
            return
        self._indented(f, line, number)

    def _indented(self, f: Fields, line: str, number: int) -> None:
        """An indented line continues the open multi-line message (`W config:` notes, tracebacks)."""
        if self.table == "tk1_perf" and self.last_perf and self.open_message is None:
            # tk1 wraps the Name column every 40 characters onto 12-space continuation lines [25].
            row = self.rows["perf"][-1]
            row["full_name"] = (row["full_name"] or "") + line.strip()
            row["end_line"] = number
            self.counts["structural"] += 1
            return
        if self.open_message is None:
            self._other(f, line, number)
            return
        self.counts["message"] += 1
        msg = self.open_message
        if len(msg["message"]) < _MAX_MESSAGE_CHARS:
            msg["message"] = (msg["message"] + "\n" + line.strip())[:_MAX_MESSAGE_CHARS]
        msg["end_line"] = number

    def _other(self, f: Fields, line: str, number: int) -> None:
        self.open_message = None
        if self.wrapped_perf is not None and self._resolve_wrapped_perf(line, number):
            return
        self._unparsed(number, line, "unrecognised line")

    # ------------------------------------------------------------------ output
    def finish(self) -> ParsedLog:
        if self.builds:
            self.builds[-1].end_line = self.last_fed
        builds, memory, perf_totals = [], [], []
        for b in self.builds:
            status, reason, status_line = "unknown", None, None
            if b.done_line is not None:
                status, status_line = "done", b.done_line
            elif b.fatal is not None:
                status, reason, status_line = "failed", b.fatal[0], b.fatal[1]
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
        frames = {name: build_frame(name, rows, _ROW_COLUMNS.get(name)) for name, rows in self.rows.items()}
        frames["builds"] = build_frame("builds", builds)
        frames["memory"] = build_frame("memory", memory)
        frames["perf_totals"] = build_frame("perf_totals", perf_totals)
        total = sum(self.counts.values())
        kind = _log_kind(frames, self.counts)
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


def _log_kind(frames: dict[str, Any], counts: dict[str, int]) -> str:
    builds = frames["builds"]
    if len(builds) and (builds["kind"] == "build").any():
        return "rknn-build"
    if counts["structural"] + counts["message"] + counts["noise"]:
        return "rknn-log"
    return "unknown"


def _demangle(name: str) -> str:
    """`N4rknn21RKNNMemStatisticsPassE` (tk2 <= 1.5) and `rknn::RKNNMemStatisticsPass` -> the class name."""
    m = _MANGLED.match(name)
    if m:
        return m.group(1)
    return name.rsplit("::", 1)[-1]


def _to_bytes(value: str | None, unit: str | None) -> int | None:
    """`12.5` MB -> bytes. A figure that overflows to infinity (`1e999`) or past int64 is no byte count
    logscope can hold: it is missing (None), never a traceback."""
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
    return int(token) if token.isdigit() else None


def _float_or_none(token: str) -> float | None:
    try:
        return float(token)
    except ValueError:
        return None


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
    if columns is None or len(columns) != count:
        columns = _LAYOUTS_BY_COUNT.get(count)
        if columns is None:
            return None
    return _tail_converter(_tail_plan(columns))(tokens)


_EMPTY_TAIL: tuple[Any, ...] = (None,) * len(_TAIL_SLOTS)
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
            exprs[slots[0]] = f"(int({token}) if {token}.isdigit() else None)"
        elif kind == _FLOAT:
            exprs[slots[0]] = f"_float_or_none({token})"
        elif kind == _TEXT:
            exprs[slots[0]] = f"(None if {token} == {chr(92)!r} else {token})"  # `\\` is n/a
        else:
            body.append(f"    p{i} = {token}.split('/'); ok{i} = len(p{i}) == {len(slots)}")
            for j, slot in enumerate(slots):
                exprs[slot] = f"(int(p{i}[{j}]) if ok{i} and p{i}[{j}].isdigit() else None)"
    source = "def convert(tokens):\n" + "".join(f"{line}\n" for line in body)
    source += "    return (" + ", ".join(exprs) + ",)\n"
    namespace: dict[str, Any] = {"_float_or_none": _float_or_none}
    exec(source, namespace)  # generated from the fixed table of column conversions above
    converter = namespace["convert"]
    _CONVERTERS[plan] = converter
    return converter


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
