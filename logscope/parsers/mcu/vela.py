"""Arm Vela: the network summary, the per-layer table and CSV, the CPU/NPU operator split and listing, and
the warnings that place an operator on the CPU with the constraint it broke."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from logscope.parsers.grammar import Fields
from logscope.parsers.mcu.state import _clip, cells_by_columns, to_bytes
from logscope.parsers.mcu.unity import Unity
from logscope.parsers.table import Layout, layout_from_header, read_row

# The per-layer table's value columns (npu_performance.py `print_performance`): a row that the row terminal
# does not match (a cell left empty, a row cut short) is read by the header's layout, these cells as NA.
_NUMBER = r"\d+(?:\.\d+)?"
_LAYER_KINDS = {
    "TFLite_operator": r"[A-Z][A-Z0-9_]*",
    "TOSA_operator": r"[A-Z][A-Z0-9_]*",
    "SRAM Usage": _NUMBER,
    "Peak%": _NUMBER,
    "Op Cycles": _NUMBER,
    "Network%": _NUMBER,
    "NPU": _NUMBER,
    "SRAM AC": _NUMBER,
    "DRAM AC": _NUMBER,
    "OnFlash AC": _NUMBER,
    "OffFlash AC": _NUMBER,
    "MAC Count": _NUMBER,
    "Util%": _NUMBER,
}
_LAYER_NAMES = (*_LAYER_KINDS, "NNG Operator", "Name")
_LAYER_NULLABLE = tuple(name for name in _LAYER_NAMES if not name.endswith("_operator"))


class Vela(Unity):
    """Handlers of the Vela terminals (`VELA_*` in `grammars/mcu.lark`)."""

    def _vela_summary_title(self, f: Fields, line: str, number: int) -> None:
        run = self._run(number)
        run.figures["model_name"] = f["name"]

    def _vela_mem_used(self, f: Fields, line: str, number: int) -> None:
        memory = f["memory"] or "SRAM"
        run = self._run(number)
        value = to_bytes(f["value"], f["unit"])
        self._arena(run, "vela-summary", number, category="total used", region=memory, used_bytes=value)
        if memory == "SRAM":
            self._report(run, "Total SRAM used", value, number)

    def _vela_subgraph(self, f: Fields, line: str, number: int) -> None:
        name = f["name"] or ""
        run = self._run(number)
        if name in run.vela_groups:
            run = self._new_run(number)
        run.vela_groups.add(name)
        self.vela_group = name

    def _vela_layer_header(self, f: Fields, line: str, number: int) -> None:
        self._run(number)
        self.table = "vela_layers"
        # `Op Cycles Network%` is printed with one blank between the columns: the names are found as known.
        self.vela_layout = layout_from_header(
            line, known=_LAYER_NAMES, kinds=_LAYER_KINDS, nullable=_LAYER_NULLABLE, rest=True
        )

    def _vela_csv_header(self, f: Fields, line: str, number: int) -> None:
        self._run(number)
        self.table = "vela_layers"
        self.vela_layout = None  # comma-separated: the row terminal reads empty cells already

    def vela_rule(self, line: str) -> None:
        """The dashes under the per-layer header: one run per column, so they give the column starts."""
        layout = self.vela_layout
        starts = tuple(m.start() for m in re.finditer(r"-+", line))
        if layout is not None and len(starts) == layout.width:
            self.vela_layout = replace(layout, starts=starts)

    def vela_layout_row(self, line: str, number: int) -> bool:
        """A line inside the per-layer table that the row terminal did not match (a cell left empty, a row
        cut short), read by the header's layout (names and kinds from the shared table reader) and cut at
        the rule's column starts: Vela right-aligns its figures, so a cell is what lies under its dashes.
        Without the rule only a row with every cell is read. False: the caller keeps the line as unparsed.
        """
        layout: Layout | None = self.vela_layout
        if layout is None:
            return False
        cells: tuple[str | None, ...] | None
        if layout.starts is not None:
            cells = cells_by_columns(layout, line)
        else:
            full = len(line.split()) >= layout.width
            cells = read_row(replace(layout, nullable=(False,) * layout.width), line) if full else None
        if cells is None or cells[0] is None:
            return False
        cell: dict[str, str | None] = {}
        for name, value in zip(layout.names, cells, strict=True):
            cell.setdefault(name, value)  # `Network%` twice (of time, then of MACs): the first is kept
        run = self._run(number)

        def number_of(name: str) -> Any:
            value = cell.get(name)
            return None if value is None else round(float(value))

        self.rows["mcu_layers"].append(
            {
                "run_index": run.index,
                "source": "vela-per-layer",
                "group": self.vela_group,
                "layer_index": run.vela_layers,
                "name": (cell.get("Name") or "").strip('"') or None,
                "op_type": cells[0],
                "detail": cell.get("NNG Operator"),
                "working_set_bytes": number_of("SRAM Usage"),
                "peak_percent": None if cell.get("Peak%") is None else float(cell["Peak%"] or 0),
                "cycles": number_of("Op Cycles"),
                "macs": number_of("MAC Count"),
                "line": number,
            }
        )
        run.vela_layers += 1
        return True

    def _vela_layer_row(self, f: Fields, line: str, number: int) -> None:
        if self.table != "vela_layers":
            return self._outside()
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

    def _vela_operators(self, f: Fields, line: str, number: int) -> None:
        run = self._run(number)
        run.figures[f"{(f['where'] or 'CPU').lower()}_ops"] = int(f["count"] or 0)
        run.figures.setdefault("ops_split_line", number)

    def _vela_op_placed(self, f: Fields, line: str, number: int) -> None:
        """`   CPU: Passthrough = name (inputs ..., outputs ...)`, listed under `CPU operators = N`."""
        if self.prev not in ("VELA_OPERATORS", "VELA_OP_PLACED"):
            return self._outside()
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

    def _vela_placed_on_cpu(self, f: Fields, line: str, number: int) -> None:
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

    def _vela_constraint(self, f: Fields, line: str, number: int) -> None:
        """` - Scaling factor must be power of two`: the constraint the op under the last warning broke."""
        if self.open_vela is None or self.prev not in ("VELA_PLACED_ON_CPU", "VELA_CONSTRAINT"):
            return self._outside()
        self.open_vela["detail"] = _clip(f"{self.open_vela['detail']}: {f['text']}")
