"""What the RKNN handlers share: the build/session record, the assembler's context, segmentation.

The family modules (`runtime`, `evaluation`, `messages`, `compiler`, `toolkit`) each add the handlers of
one format family to this state, in a chain of classes so each may use the handlers of the families
before it (a build-table header row routes eval_perf rows to `evaluation`). `assembler` closes the chain.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from logscope.frames import SCHEMAS
from logscope.io import LogSource
from logscope.parsers.base import BaseAssembler, Boundary
from logscope.parsers.grammar import Fields
from logscope.parsers.rknn.layer_cells import _body_start, identify_tail, read_layer_tail
from logscope.parsers.rknn.layer_rows import LayerRows
from logscope.parsers.rknn.tensor_rows import TensorRows
from logscope.parsers.table import Layout

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
        "ACCURACY_NOTE",
        "ACCURACY_HEADER",
        "ACCURACY_SUBHEADER",
    }
)


# Noise that moves no context (titles, headers, rules and phase lines do): the parse loop counts these.
_QUIET_NOISE = _NOISE - {
    "TABLE_TITLE",
    "OUTLIER_HEADER",
    "MIN_CONST_HEADER",
    "ACCURACY_HEADER",
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


# The two big tables' rows are tuples, message, pass and fusion rows lists, in their frame's schema order
# (build_frame checks the width).
_ROW_COLUMNS = {name: tuple(SCHEMAS[name]) for name in ("tensors", "layers", "messages", "passes", "fusions")}


_MAX_MESSAGE_CHARS = 4000


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
    # The last line that only a finished run prints (eval_perf rows and totals, rankings, eval_memory):
    # a session holding one ended, unless a failure says otherwise.
    completed_line: int | None = None

    @property
    def has_board_output(self) -> bool:
        return bool(self.versions) or bool(self.eval_memory) or bool(self.perf_totals)

    @property
    def has_compile_output(self) -> bool:
        return self.has_tables or bool(self.memory) or self.done_line is not None

    def marks(self) -> set[str]:
        """What this build already holds, in the vocabulary of `BOUNDARIES`."""
        marks = {f"version:{key}" for key in self.versions} | {f"total:{key}" for key in self.memory}
        marks |= {f"eval:{section}" for section in self.eval_memory.get("_sections", ())}
        return marks | {mark for mark, present in _FLAG_MARKS.items() if present(self)}

    def holds_any(self, wanted: frozenset[str]) -> bool:
        """`bool(wanted & self.marks())`, each wanted mark tested alone: a boundary names one to three, and
        building every mark cost more than the line that asked (a line in ten of a table-dense log)."""
        for mark in wanted:
            family, keyed, key = mark.partition(":")
            if keyed:
                if family == "version":
                    held: Any = self.versions
                elif family == "total":
                    held = self.memory
                elif family == "eval":
                    held = self.eval_memory.get("_sections", ())
                else:
                    continue
                if key in held:
                    return True
            else:
                present = _FLAG_MARKS.get(mark)
                if present is not None and present(self):
                    return True
        return False

    @property
    def has_content(self) -> bool:
        return (
            self.has_compile_output
            or self.has_board_output
            or self.build_start_line is not None
            or self.invoked_line is not None
        )


# The marks a build holds or not, by name (`_Build.marks`, `_Build.holds_any`).
_FLAG_MARKS: dict[str, Callable[[_Build], bool]] = {
    "compile_output": lambda b: b.has_compile_output,
    "content": lambda b: b.has_content,
    "build_start": lambda b: b.build_start_line is not None,
    "settings": lambda b: b.settings is not None,
    "compiler_version": lambda b: b.compiler_version is not None,
    "invoked": lambda b: b.invoked_line is not None,
    "tables_and_memory": lambda b: b.has_tables and bool(b.memory),
    "eval_memory": lambda b: bool(b.eval_memory),
    "perf_totals": lambda b: bool(b.perf_totals),
}


# Tables whose rows start with a numeric id; `_ROW_START` is that start (`12   Conv ...`).
_ROW_TABLES = frozenset({"layer", "perf", "feature", "const"})
_ROW_START = re.compile(r"\d+ +\S")
_COMPILED = frozenset({"compile_output"})
_SESSION_DONE = frozenset({"compile_output", "eval_memory", "perf_totals"})
# Which lines start a new build or session, and when. A file holds several: encoder and decoder builds,
# a simulator run then a board run, one runtime session per `rknn_init`. Builds are segmented on toolkit
# and compiler lines only, never on the example scripts' `--> Building model` prints, because stdout and
# stderr interleave. Keys are terminals, or `terminal:variant` where the line's content decides.
BOUNDARIES: dict[str, Boundary] = {
    # The banner is printed once per process: a second one (or one after any output) is a new process.
    "TOOLKIT_BANNER": Boundary(frozenset({"content"}), inherit=False),
    "BUILD_START": Boundary(_COMPILED | {"build_start"}),
    "CONFIG_LINE": Boundary(_COMPILED | {"settings"}),
    "COMPILER_VERSION": Boundary(_COMPILED | {"compiler_version"}),
    "INVOKED": Boundary(_COMPILED | {"invoked"}),
    # The memory statistics pass and the tensor tables come once per build, after its layer table and
    # totals; runtime logs print the tables again at every rknn_init.
    "PASS_MARK:RKNNMemStatisticsPass": Boundary(frozenset({"tables_and_memory"})),
    "TENSOR_HEADER": Boundary(frozenset({"tables_and_memory"})),
    "TOTAL_MEMORY:weight": Boundary(frozenset({"total:weight_bytes"})),
    "TOTAL_MEMORY:internal": Boundary(frozenset({"total:internal_bytes"})),
    # librknnrt prints its information at every rknn_init; a build log followed by `init_runtime` on a
    # board is two things: what was compiled, and what ran.
    "RUNTIME_INFO": Boundary(_SESSION_DONE | {"version:runtime_version"}),
    "SDK_VERSION": Boundary(_SESSION_DONE | {"version:runtime_version"}),
    "DRIVER_INFO": Boundary(frozenset({"version:driver_version"})),
    "PROXY_VERSION:api": Boundary(_SESSION_DONE | {"version:api_version"}),
    # A second eval_memory dump of the same section is a second session.
    **{
        f"EVAL_MEM_SECTION:{section}": Boundary(frozenset({f"eval:{section}"}))
        for section in ("detail", "system", "npu", "max_total")
    },
}


class RknnState(BaseAssembler[_Build]):
    BOUNDARIES = BOUNDARIES

    def __init__(self, text: LogSource) -> None:
        super().__init__()
        self.text = text
        self.builds: list[_Build] = self.segments
        # Rows are dicts, except in the big tables (tuples or lists in `_ROW_COLUMNS` order: 2-3x cheaper).
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
                "accuracy",
                "perf",
                "perf_ranking",
                "allocations",
                "tensor_attrs",
            )
        }
        # Tensor rows are kept as read and converted by whole columns (`tensor_rows`); layer rows as
        # columns (`layer_rows`).
        self.tensor_rows = TensorRows()
        self.rows["tensors"] = self.tensor_rows
        self.layer_rows = LayerRows()
        self.rows["layers"] = self.layer_rows  # type: ignore[assignment]
        self.rows["unparsed"] = self.account.unparsed_rows
        self.table: str | None = None  # "layer" | "feature" | "const" | "min_const" | "outlier"
        self.layer_columns: tuple[str, ...] | None = None  # the layer / perf header's columns, FullName aside
        self.layer_layout: Layout | None = None  # that header as a layout, for rows with empty cells
        self.headerless = False  # the layer / perf rows being read came without their header
        self.ranking_layout: Layout | None = None  # the ranking table's header, as a layout
        self.traceback: list[Any] | None = None  # the open traceback's message row
        self.traceback_func: str | None = None  # the toolkit function an `E load_onnx:` traceback is under
        self.pending_title: str | None = None
        self.pending_settings: dict[str, str] | None = None  # 2.5.0's toolkit options line
        self.fuse_section: str | None = None
        self.open_message: list[Any] | None = None  # a `messages` row, in `_ROW_COLUMNS` order
        self.has_message_runs = False  # `messages` holds `bulk.MessageRun`s besides rows
        # The last run of native messages read ahead: (block, first line, rows); `Messages._native_rows`.
        self.native_ahead: tuple[list[str], int, list[tuple[str | None, ...]]] | None = None
        self.open_fusion: list[Any] | None = None  # a `fusions` row, in `_ROW_COLUMNS` order
        self.open_passes: dict[str, list[Any]] = {}  # a `passes` row, in `_ROW_COLUMNS` order
        self.last_progress: dict[str, Any] | None = None
        self.attr_io: str | None = None  # `Input tensors:` / `Output tensors:` of the proxy block
        self.eval_section: str | None = None  # eval_memory section: tk2 detail, or tk1 system/npu/total
        self.last_perf: bool = False  # a tk1 perf row is open (its Name wraps onto the next lines)
        self.wrapped_perf: tuple[tuple[Any, ...], str, str, int] | None = None  # a 1.5 perf row cut short

    # ------------------------------------------------------------------ accounting
    def _structural(self) -> None:
        self.counts["structural"] += 1

    def _unparsed(self, number: int, line: str, reason: str) -> None:
        self.account.unparsed(number, line, reason)

    def _counted(self, f: Fields, line: str, number: int) -> None:
        self._structural()
        self._current(number)

    def _read_tail(self, tail_text: str) -> tuple[Any, ...] | None:
        """A layer / perf row's cells after OutputShape: converted token by token when they match the
        header (the fast path), else placed by the header's layout (empty cells, pasted spacing)."""
        return read_layer_tail(tail_text, self.layer_columns, self.layer_layout)

    def _identify_rows(self, tail_text: str) -> bool:
        """For a layer-shaped row without a header before it: find the layout its cells fit and read the
        rows that follow with it, as eval_perf rows (`table = "perf"`) or build layer rows. False if none."""
        layout = identify_tail(tail_text)
        if layout is None:
            return False
        self.layer_layout = layout
        self.layer_columns = tuple(name for name in layout.names if name != "FullName")
        self.headerless = True
        if "Time(us)" in layout.names and "RW(KB)" in layout.names and layout.names[0].startswith("Cycles("):
            self.table = "perf"
        return True

    def _continues_line(self, line: str, number: int) -> bool:
        """True if this unrecognised line continues a row cut short before it (a family overrides)."""
        return False

    def _other(self, f: Fields, line: str, number: int) -> None:
        self.open_message = None
        if self._continues_line(line, number):
            return
        if self._unfit_row(line, number):
            return
        self._unparsed(number, line, "unrecognised line")

    def _unfit_row(self, line: str, number: int) -> bool:
        """A line inside a layer, perf or tensor table that starts like a row (an id, then a cell) but
        fits no row shape (cut short, a cell lost): an unparsed row of that table, not a message."""
        if self.table not in _ROW_TABLES or _ROW_START.match(line, _body_start(line)) is None:
            return False
        self._unparsed(number, line, f"row of the {self.table} table that fits no row shape")
        return True

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
        elif kind == "ACCURACY_HEADER":
            # opened here, not at the first row: a table pasted alone would open its build there,
            # and opening a build closes the table
            self._current(number)
            self.table = "accuracy"
        elif kind == "INVOKED":
            self._segment("INVOKED", number).invoked_line = number
        elif kind == "OPT_STEP" and self.fuse_section and not (fields.get("indent") or ""):
            self.fuse_section = None
        if (
            kind != "TABLE_RULE"
            and kind != "TABLE_TITLE"
            and kind not in ("OUTLIER_HEADER", "MIN_CONST_HEADER", "ACCURACY_HEADER")
        ):
            self.open_message = None

    # ------------------------------------------------------------------ builds
    def _current(self, number: int) -> _Build:
        builds = self.builds  # (inlined `current`: handlers call this on most lines)
        return builds[-1] if builds else self.open_segment(number, inherit=False)

    def _segment(self, key: str, number: int) -> _Build:
        """The build a line of `key` belongs to: a new one when `BOUNDARIES` says the current one is done."""
        return self.segment_for(key, number)

    def _new_build(self, number: int, *, inherit: bool) -> _Build:
        return self.open_segment(number, inherit=inherit)

    def new_segment(self, number: int, previous: _Build | None, inherit: bool) -> _Build:
        if self.builds:
            self.builds[-1].end_line = self.last_fed
        build = _Build(index=len(self.builds), start_line=number, end_line=number)
        if previous is not None:
            # Same process: the toolkit banner and the target are printed once for several builds.
            build.toolkit_product, build.toolkit_version = previous.toolkit_product, previous.toolkit_version
            build.target_platform = previous.target_platform
        self.table = None
        self.layer_columns = None
        self.layer_layout = None
        self.headerless = False
        self.open_passes.clear()
        self.last_perf = False
        return build
