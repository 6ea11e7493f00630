"""ESP-DL `profile()`: the memory summary and module summary tables behind an ESP-IDF log prefix."""

from __future__ import annotations

from logscope.parsers.grammar import Fields
from logscope.parsers.mcu.st import St
from logscope.parsers.mcu.state import _ESPDL_CELL, to_bytes


class EspDl(St):
    """Handlers of the ESP-DL terminals (`ESPDL_*` in `grammars/mcu.lark`)."""

    def _espdl_model(self, f: Fields, line: str, number: int) -> None:
        run = self._run(number)
        if "espdl-mem" in run.sections or "espdl-module" in run.sections:
            run = self._new_run(number)
        run.figures["model_name"] = (f["model"] or "").strip()

    def _espdl_title(self, f: Fields, line: str, number: int) -> None:
        title = f["title"] or ""
        self._run(number)
        self.table = "espdl_mem" if title == "memory summary" else "espdl_module"

    def _espdl_mem_row(self, f: Fields, line: str, number: int) -> None:
        if self.table != "espdl_mem":
            return self._outside()
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

    def _espdl_module_row(self, f: Fields, line: str, number: int) -> None:
        if self.table != "espdl_module":
            return self._outside()
        run = self._run(number)
        latency = float(f["latency"] or 0)
        unit = f["unit"] or "us"
        if f["name"] == "total":
            run.figures.update(
                reported_time_us=round(latency * (1000 if unit == "ms" else 1)), reported_time_line=number
            )
            return
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
