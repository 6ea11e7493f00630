"""Board side, the evaluation output: eval_perf tables and totals, ranking tables, eval_memory."""

from __future__ import annotations

import math
from typing import Any

from logscope.parsers.grammar import Fields
from logscope.parsers.rknn.layer_cells import (
    RANKING_COLUMNS,
    _body_start,
    identify_ranking,
    ranking_layout,
    ranking_value,
)
from logscope.parsers.rknn.messages import Messages
from logscope.parsers.rknn.values import _to_bytes
from logscope.parsers.table import read_row

_UNFIT_PERF = "perf row that fits neither its header nor a known layout"


class Evaluation(Messages):
    """eval_perf (1.5, 2.x, tk1), the ranking table, eval_memory and the model size line."""

    def _perf_row(self, head: tuple[str | None, ...], line: str, number: int, end: int | None = None) -> None:
        """One eval_perf row; a 1.5 row cut short by the terminal width waits for its continuation
        (tk2 1.5.0 eval_perf wraps rows at the console width, sometimes with a blank line in between)."""
        layer_id, op_type, dtype, target, inputs, output, tail_text = head
        tail = self._read_tail(tail_text or "")
        if tail is None:
            if end is None:
                self._flush_wrapped_perf()
                self.wrapped_perf = (head, tail_text or "", line, number)
                return
            self._unparsed(number, line, _UNFIT_PERF)
            return
        self.counts["structural"] += 1
        build = self._current(number)
        build.completed_line = end if end is not None else number
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
                "headerless": self.headerless,
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
        if self._read_tail(joined[-1] or "") is None:
            self._unparsed(first_number, first_line, _UNFIT_PERF)
            return False
        self.counts["structural"] += 1  # the continuation line; _perf_row counts the row's first line
        self._perf_row(joined, first_line, first_number, end=number)
        return True

    def _flush_wrapped_perf(self) -> None:
        """A cut-short row whose continuation never came stays findable as unparsed (never dropped)."""
        pending, self.wrapped_perf = self.wrapped_perf, None
        if pending is not None:
            self._unparsed(pending[3], pending[2], "perf row cut short, no continuation line after it")

    def _continues_line(self, line: str, number: int) -> bool:
        return self.wrapped_perf is not None and self._resolve_wrapped_perf(line, number)

    def _perf_total(self, f: Fields, line: str, number: int) -> None:
        self._structural()
        build = self._current(number)
        build.completed_line = number
        key, value = f["key"] or "", float(f["value"] or 0)
        totals = build.perf_totals
        if key == "FPS":
            totals["fps"] = value
        elif "Time" in key:
            # A 400-digit total overflows to infinity: no figure logscope can hold (missing), no traceback.
            whole = int(value) if math.isfinite(value) and abs(value) < 2**63 else None
            totals["total_time_us"], totals["time_line"] = whole, number
        else:  # 1.5 prints MB (of 1024 KB: the 2.x KB figure of the same model agrees), 2.x KB
            totals["rw_kb"] = value * 1024 if "(MB)" in key else value
            totals["rw_line"] = number
        self.table = None

    def _ranking_header(self, f: Fields, line: str, number: int) -> None:
        self._structural()
        self._current(number)
        self.table = "ranking"
        start = _body_start(line)
        self.ranking_layout = ranking_layout(line[start:])

    def _ranking_row(self, f: Fields, line: str, number: int) -> None:
        """A ranking row read by its header's layout; without a header, by its shape (bare rows only:
        behind the `D RKNN:` prefix a line of figures outside the table is a message)."""
        layout = self.ranking_layout if self.table == "ranking" else None
        if layout is None:
            if f.get("level"):  # the message is what follows the logger prefix
                self._message("NATIVE_MSG", f, line[_body_start(line) :], number)
                return
            layout = identify_ranking(line.strip())
            if layout is None:
                self._other(f, line, number)
                return
            self.table, self.ranking_layout = "ranking", layout
        start = _body_start(line)
        cells = read_row(layout, line, origin=start)
        if cells is None:
            self._unparsed(number, line, "ranking row that fits neither its header nor a known layout")
            return
        self._structural()
        build = self._current(number)
        build.completed_line = number
        row: dict[str, Any] = {"build_index": build.index, "headerless": layout.headerless, "line": number}
        for name, cell in zip(layout.names, cells, strict=True):
            column = RANKING_COLUMNS.get(name.replace(" ", ""))
            if column is not None:
                row[column] = ranking_value(column, cell)
        self.rows["perf_ranking"].append(row)

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
        build = self._current(number)
        build.completed_line = number
        row = {
            "build_index": build.index,
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
        build = self._segment(f"EVAL_MEM_SECTION:{self.eval_section}", number)
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
        self._current(number).completed_line = number
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
