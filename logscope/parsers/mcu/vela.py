"""Arm Vela: the network summary, the per-layer table and CSV, the CPU/NPU operator split and listing, and
the warnings that place an operator on the CPU with the constraint it broke."""

from __future__ import annotations

from logscope.parsers.grammar import Fields
from logscope.parsers.mcu.state import _clip, to_bytes
from logscope.parsers.mcu.unity import Unity


class Vela(Unity):
    """Handlers of the Vela terminals (`VELA_*` in `grammars/mcu.lark`)."""

    def _vela_summary_title(self, f: Fields, line: str, number: int) -> None:
        run = self._section(number, "vela-summary")
        run.figures["model_name"] = f["name"]

    def _vela_mem_used(self, f: Fields, line: str, number: int) -> None:
        memory = f["memory"] or "SRAM"
        run = self._section(number, f"vela-used-{memory}")
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

    def _vela_csv_header(self, f: Fields, line: str, number: int) -> None:
        self._run(number)
        self.table = "vela_layers"

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
        return

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
        return

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
        return
