"""TinyEngine generated headers: `/* sram:…, flash:… */`, `#define PEAK_MEM`, static buffers."""

from __future__ import annotations

from logscope.parsers.grammar import Fields
from logscope.parsers.mcu.espdl import EspDl


class TinyEngine(EspDl):
    """Handlers of the TinyEngine terminals (`TINY_*` in `grammars/mcu.lark`)."""

    def _tiny_sram_flash(self, f: Fields, line: str, number: int) -> None:
        run = self._run(number)
        sram = int(f["sram"] or 0)
        self._arena(run, "tinyengine-header", number, category="sram", region="sram", used_bytes=sram)
        self._arena(
            run,
            "tinyengine-header",
            number,
            category="flash",
            region="flash",
            used_bytes=int(f["flash"] or 0),
        )
        run.figures["tiny_sram"] = (sram, number)

    def _tiny_define(self, f: Fields, line: str, number: int) -> None:
        run = self._run(number)
        value = int(f["value"] or 0)
        if f["key"] == "PEAK_MEM":
            self._report(run, "PEAK_MEM", value, number)
        self._arena(run, "tinyengine-header", number, category=f["key"], used_bytes=value)

    def _tiny_buffer(self, f: Fields, line: str, number: int) -> None:
        self._run(number)
