"""NNoM: the compile table with its memory blocks and totals, and the running statistics."""

from __future__ import annotations

from logscope.parsers.grammar import Fields
from logscope.parsers.mcu.state import _count
from logscope.parsers.mcu.tflm import Tflm


class Nnom(Tflm):
    """Handlers of the NNoM terminals (`NNOM_*` in `grammars/mcu.lark`)."""

    def _nnom_compile_start(self, f: Fields, line: str, number: int) -> None:
        run = self._run(number)
        if run.nnom_layers:
            self._new_run(number)

    def _nnom_info(self, f: Fields, line: str, number: int) -> None:
        run = self._run(number)
        if f["version"]:
            run.figures["tool_version"] = f"NNoM {f['version']}"

    def _nnom_compile_header(self, f: Fields, line: str, number: int) -> None:
        run = self._run(number)
        if run.nnom_layers:
            run = self._new_run(number)
        self.table = "nnom_compile"

    def _nnom_compile_row(self, f: Fields, line: str, number: int) -> None:
        run = self._run(number)
        num = int(f["num"] or 0)
        if num in run.nnom_layers:
            return self._outside()
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

    def _nnom_blocks_title(self, f: Fields, line: str, number: int) -> None:
        self._run(number)
        self.table = "nnom_blocks"

    def _nnom_blocks(self, f: Fields, line: str, number: int) -> None:
        run = self._run(number)
        for item in (f["blocks"] or "").split():
            name, _, size = item.partition(":")
            self._arena(
                run, "nnom-compile", number, category=name, region="network buffers", used_bytes=int(size)
            )

    def _nnom_net_total(self, f: Fields, line: str, number: int) -> None:
        run = self._run(number)
        value = int(f["value"] or 0)
        self._arena(run, "nnom-compile", number, category="network buffers total", used_bytes=value)
        self._report(run, "memory cost by network buffers", value, number)

    def _nnom_occupied(self, f: Fields, line: str, number: int) -> None:
        run = self._run(number)
        self._arena(
            run, "nnom-compile", number, category="total memory occupied", used_bytes=int(f["value"] or 0)
        )

    def _nnom_compile_done(self, f: Fields, line: str, number: int) -> None:
        self._run(number)
        self.table = None

    def _nnom_stat_title(self, f: Fields, line: str, number: int) -> None:
        run = self._run(number)
        if run.nnom_stats:
            self._new_run(number)

    def _nnom_stat_header(self, f: Fields, line: str, number: int) -> None:
        run = self._run(number)
        if run.nnom_stats and self.prev != "NNOM_STAT_TITLE":
            self._new_run(number)
        self.table = "nnom_stat"

    def _nnom_stat_row(self, f: Fields, line: str, number: int) -> None:
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

    def _nnom_summary(self, f: Fields, line: str, number: int) -> None:
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
