"""Mbed OS: the memory tracer's `#m:`/`#c:`/`#r:`/`#f:` events, and the fault handler and error report that
end a crashed run."""

from __future__ import annotations

from logscope.parsers.grammar import Fields
from logscope.parsers.mcu.espidf import EspIdf
from logscope.parsers.mcu.state import _MAX_VALUE


class Mbed(EspIdf):
    """Handlers of the Mbed OS terminals (`MBED_*` in `grammars/mcu.lark`)."""

    def _mbed_fault_title(self, f: Fields, line: str, number: int) -> None:
        self._run(number)
        self.in_fault = f["edge"] == "++"

    def _mbed_fault_type(self, f: Fields, line: str, number: int) -> None:
        if not self.in_fault:
            return self._outside()
        run = self._run(number)
        run.figures.setdefault("fault", f["fault"])
        run.figures.setdefault("fault_line", number)
        self._fail(run, "hard-fault" if f["fault"] == "HardFault" else "fault", number, line)

    def _mbed_fault_register(self, f: Fields, line: str, number: int) -> None:
        if not self.in_fault:
            self._outside()

    def _mbed_error_status(self, f: Fields, line: str, number: int) -> None:
        if not self.in_fault:
            return self._outside()
        run = self._run(number)
        run.figures.setdefault("fault", f"Mbed OS error {f['status']}")
        run.figures.setdefault("fault_line", number)
        self._fail(run, "mbed-error", number, line)

    def _mbed_error_field(self, f: Fields, line: str, number: int) -> None:
        if not self.in_fault:
            self._outside()

    def _mbed_event(self, f: Fields, line: str, number: int) -> None:
        run = self._run(number)
        op, result, args = f["op"], f["result"], (f["args"] or "").split(";")
        events: list[tuple[str, str | None, int | None]]
        try:
            if op == "m":
                events = [("alloc", result, int(args[0]))]
            elif op == "c":
                events = [("alloc", result, min(int(args[0]) * int(args[1]), _MAX_VALUE))]
            elif op == "r":  # realloc: the old block goes, the new one comes
                events = [("free", args[0], None), ("alloc", result, int(args[1]))]
            else:
                events = [("free", args[0], None)]
        except (ValueError, IndexError):
            return self._outside()
        for action, address, size in events:
            if action == "free" and address in ("0x0", "(nil)", "0", "NULL"):
                continue  # free(NULL) and realloc(NULL, n) release nothing
            self._event(
                run,
                number,
                action=action,
                address=address,
                size_bytes=size,
                caller=f["caller"],
                source="mbed-mem-trace",
            )
