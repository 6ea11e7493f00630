"""The native compiler (librknnc): settings, version, passes, layer and tensor tables, memory totals, and
the compact compiler summary."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import repeat
from typing import Any

from logscope.parsers.grammar import Fields
from logscope.parsers.rknn.evaluation import Evaluation
from logscope.parsers.rknn.layer_cells import _LAYER_TAIL, read_tails, tail_columns, tail_layout
from logscope.parsers.rknn.state import _LAYER_FIELDS, _ROW_COLUMNS, _TENSOR_FIELDS, BOUNDARIES
from logscope.parsers.rknn.values import _demangle, _parse_settings, _to_bytes

_BOUNDARY_PASSES = frozenset(key.partition(":")[2] for key in BOUNDARIES if key.startswith("PASS_MARK:"))
# Where a `passes` row (a list in the schema's column order) holds what a pass's end fills in.
_PASS_END_LINE, _PASS_END_TIME = (_ROW_COLUMNS["passes"].index(c) for c in ("end_line", "end_time"))
# Pass names as `_demangle` reads them, by their spelling in the log: a log names a few dozen passes
# thousands of times. Cleared when full, so memory stays bounded whatever the log names.
_PASS_NAMES: dict[str, str] = {}
_PASS_NAMES_SIZE = 4096


def _pass_name(raw: str | None) -> str:
    """`_demangle(raw)`, remembered in `_PASS_NAMES`."""
    name = _demangle(raw or "")
    if raw is not None:
        if len(_PASS_NAMES) >= _PASS_NAMES_SIZE:
            _PASS_NAMES.clear()
        _PASS_NAMES[raw] = name
    return name


# Compiler settings lines as `_parse_settings` reads them, by their text: a process compiling several
# models prints the same line each build, and one audit worker reads it in many logs of one toolkit (its
# reading was most of the line's 11 us). Never changed once read (a build's settings are a new dict
# joined from it); cleared when full.
_SETTINGS_READ: dict[str, dict[str, str]] = {}
_SETTINGS_READ_SIZE = 256


_UNFIT_LAYER_ROW = "layer row that fits neither its header nor a known layout"


class CompilerOutput(Evaluation):
    """Compiler lines behind `D RKNN:` and the tables it prints (also bare, in docs and eval_perf)."""

    def _config(self, f: Fields, line: str, number: int) -> None:
        build = self._segment("CONFIG_LINE", number)
        body = f["body"] or ""
        settings = _SETTINGS_READ.get(body)
        if settings is None:
            settings = _parse_settings(body)
            if settings is not None:
                if len(_SETTINGS_READ) >= _SETTINGS_READ_SIZE:
                    _SETTINGS_READ.clear()
                _SETTINGS_READ[body] = settings
        if settings is None:
            self._unparsed(number, line, "malformed compiler settings")
            return
        self._structural()
        build.settings = (self.pending_settings or {}) | settings
        self.pending_settings = None

    def _toolkit_settings(self, f: Fields, line: str, number: int) -> None:
        """2.5.0's unprefixed options line; kept until the compiler's own settings line of the build,
        whose values it joins (the compiler's win where both name a key)."""
        settings = _parse_settings(line.strip())
        if settings is None:
            self._unparsed(number, line, "malformed toolkit settings")
            return
        self._structural()
        self.pending_settings = settings

    def _compiler(self, f: Fields, line: str, number: int) -> None:
        self._structural()
        build = self._segment("COMPILER_VERSION", number)
        build.compiler_version = f["version"]

    def _pass_mark(self, f: Fields, line: str, number: int) -> None:
        self._pass_values((f["mark"],), (f["name"],), (f.get("ts"),), (number,))

    def _pass_values(
        self,
        marks: Sequence[str | None],
        raws: Sequence[str | None],
        stamps: Sequence[str | None],
        numbers: Sequence[int],
    ) -> None:
        """Pass starts and ends from their fields, in line order: one marker (`classify`'s path) or a
        run of them (`table_runs.run_from`), read in one call because a table-dense log holds thousands
        of markers and a call per marker cost a fifth of their parse. Each marker reads as it would
        alone: `last_fed` is its own line when it is read (a build it opens ends the one before there).

        Rows are lists in the `passes` schema's column order (`_ROW_COLUMNS`): a start's row is open
        until its end fills `end_line` and `end_time`."""
        self.counts["structural"] += len(numbers)
        append = self.rows["passes"].append
        open_passes, builds, known = self.open_passes, self.builds, _PASS_NAMES
        for mark, raw, ts, number in zip(marks, raws, stamps, numbers, strict=True):
            self.last_fed = number
            name = known.get(raw) if raw is not None else None
            if name is None:
                name = _pass_name(raw)
            if mark and mark[0] == ">":
                # (only the passes `BOUNDARIES` names may open a build: the others go to the current one)
                if name in _BOUNDARY_PASSES:
                    build = self._segment(f"PASS_MARK:{name}", number)
                else:
                    build = builds[-1] if builds else self._current(number)
                record = [build.index, name, number, None, ts, None]
                append(record)
                open_passes[name] = record
                if name == "RKNNModelBuildPass" or name == "RKNNMemStatisticsPass":
                    self.table = None
            else:
                closing = open_passes.pop(name, None)
                if closing is None:  # an excerpt that starts inside a pass
                    closing = [
                        (builds[-1] if builds else self._current(number)).index,
                        name,
                        None,
                        None,
                        None,
                        None,
                    ]
                    append(closing)
                closing[_PASS_END_LINE], closing[_PASS_END_TIME] = number, ts
                self.table = None

    def _layer_header(self, f: Fields, line: str, number: int) -> None:
        self._structural()
        self._current(number)
        # Build and runtime layer tables come with the `D RKNN:` prefix; eval_perf() and the C API's
        # perf detail print theirs bare ([03] [07] [11] [59]), and those are measurements, not plans.
        self.table = "layer" if f.get("level") else "perf"
        layout = tail_layout(f["columns"] or "")
        self.layer_layout, self.headerless = layout, False
        self.layer_columns = tuple(c for c in layout.names if c != "FullName")

    def _layer_row(self, f: Fields, line: str, number: int) -> None:
        head = f.take(_LAYER_FIELDS)
        if self.wrapped_perf is not None:
            self._flush_wrapped_perf()
        if self.layer_columns is None:
            self._current(number)  # (a first build opened later would reset the layout found here)
            self._identify_rows(head[-1] or "")  # a header-less run: its layout, maybe eval_perf's
        if self.table == "perf" and not f.get("level"):
            self._perf_row(head, line, number)
            return
        self._layer_values(head, line, number)

    def _layer_values(self, head: tuple[str | None, ...], line: str, number: int) -> None:
        """One build-time layer row from its `_LAYER_FIELDS` values (both lexer paths end here)."""
        self._layer_rows([head], [line], [number])

    def _layer_rows(self, heads: list[tuple[str | None, ...]], lines: list[str], numbers: list[int]) -> None:
        """Build-time layer rows from their `_LAYER_FIELDS` values, in line order, column by column: a
        run of a layer table's rows (`parsers.rknn.table_runs`) is read with no Python call per row
        (`layer_cells.tail_columns`), or, when some tail needs it, with the tail converter per row. A
        row whose tail fits neither its header nor a known layout is unparsed, in its place among the
        run's rows (the `unparsed` rows keep their order: no other line of the run adds one). Reads the
        layout but changes no context, so a run reads as its rows one by one."""
        ids, op_types, dtypes, targets, inputs, outputs, tails = zip(*heads, strict=True)
        columns = tail_columns(self.layer_columns, tails if None not in tails else [t or "" for t in tails])
        if columns is None:
            self._layer_rows_by_row(heads, lines, numbers)
            return
        self._add_layer_rows(ids, op_types, dtypes, targets, inputs, outputs, columns, numbers)

    def _layer_rows_by_row(
        self, heads: list[tuple[str | None, ...]], lines: list[str], numbers: list[int]
    ) -> None:
        """`_layer_rows` with each tail read by `read_tails` (a header-less run, a tail with an empty or
        extra cell, a perf WorkLoad cell): the rows read, and an unparsed row for each other one."""
        tails = read_tails(self.layer_columns, self.layer_layout, [head[-1] or "" for head in heads])
        if None in tails:
            for index, tail in enumerate(tails):
                if tail is None:
                    self._unparsed(numbers[index], lines[index], _UNFIT_LAYER_ROW)
            keep = [index for index, tail in enumerate(tails) if tail is not None]
            if not keep:
                return
            heads, tails, numbers = (
                [heads[i] for i in keep],
                [tails[i] for i in keep],
                [numbers[i] for i in keep],
            )
        ids, op_types, dtypes, targets, inputs, outputs, _ = zip(*heads, strict=True)
        columns = list(zip(*tails, strict=True))[: len(_LAYER_TAIL)]
        self._add_layer_rows(ids, op_types, dtypes, targets, inputs, outputs, columns, numbers)

    def _add_layer_rows(
        self,
        ids: Sequence[Any],
        op_types: Sequence[Any],
        dtypes: Sequence[Any],
        targets: Sequence[Any],
        inputs: Sequence[Any],
        outputs: Sequence[Any],
        tail_values: Sequence[Sequence[Any]],
        numbers: list[int],
    ) -> None:
        """The `layers` rows of read cells (`tail_values`: the `_LAYER_TAIL` columns), added as columns
        (`layer_rows`), each made in C: `\\` shapes made None by a dict lookup
        (`{"\\": None}.get(cell, cell)`); the id is always there (the terminal requires its digits)."""
        count = len(numbers)
        self.counts["structural"] += count
        build = self.builds[-1] if self.builds else self._current(numbers[0])
        build.has_tables = True
        not_applicable = {"\\": None}.get
        self.layer_rows.add(
            (
                repeat(build.index, count),
                map(int, ids),
                op_types,
                dtypes,
                targets,
                map(not_applicable, inputs, inputs),
                map(not_applicable, outputs, outputs),
                *tail_values,
                repeat(self.headerless, count),
                numbers,
            )
        )

    def _tensor_header(self, f: Fields, line: str, number: int) -> None:
        self._structural()
        self._segment("TENSOR_HEADER", number)
        self.table = "feature" if "NativeShape" in (f["columns"] or "") else "const"

    def _tensor_row(self, f: Fields, line: str, number: int) -> None:
        self._tensor_values(f.take(_TENSOR_FIELDS), number)

    def _tensor_values(self, values: tuple[str | None, ...], number: int) -> None:
        """One tensor-table row from its `_TENSOR_FIELDS` values (both lexer paths end here)."""
        self._tensor_rows([values], [number])

    def _tensor_rows(self, rows: list[tuple[str | None, ...]], numbers: list[int]) -> None:
        """Tensor-table rows from their `_TENSOR_FIELDS` values, in line order (a run of a tensor table's
        rows, `parsers.rknn.table_runs`, or one row): kept as read, with the build and the table a row
        without NativeShape or DataFormat belongs to, and converted by whole columns once per log
        (`tensor_rows.TensorRows`). Reads the table but changes no context, so a run reads as its rows
        one by one."""
        self.counts["structural"] += len(rows)
        build = self.builds[-1] if self.builds else self._current(numbers[0])
        build.has_tables = True
        current = self.table if self.table in ("feature", "const") else "const"
        self.tensor_rows.add(build.index, current, rows, numbers)

    def _min_const_row(self, f: Fields, line: str, number: int) -> None:
        if self.table != "min_const":
            self._other(f, line, number)
            return
        self._structural()
        build = self._current(number)
        build.has_tables = True
        # A const row with no id, offsets or NativeShape (`TensorRows` reads a missing flag as no star).
        cells = (None, f["user"], f["name"], f["dtype"] or "", None, f["orig_shape"], *(None,) * 6)
        self.tensor_rows.add(build.index, "const", [cells], [number])

    def _total_memory(self, f: Fields, line: str, number: int) -> None:
        self._structural()
        key = "weight" if f["kind"] == "Weight" else "internal"
        build = self._segment(f"TOTAL_MEMORY:{key}", number)
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

    def _compact_fusion(self, f: Fields, line: str, number: int) -> None:
        self._structural()
        build = self._current(number)
        inputs = [p.strip() for p in (f["inputs"] or "").split("+") if p.strip()]
        self.rows["fusions"].append(  # (in the schema's column order, as `_fuse_results` writes them)
            [build.index, "compiler", "op_fusion", inputs, [(f["output"] or "").strip()], number]
        )
