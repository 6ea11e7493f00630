"""The Unity test framework's result lines (ESP-IDF and Zephyr unit tests): a failed test fails its run."""

from __future__ import annotations

from logscope.parsers.grammar import Fields
from logscope.parsers.mcu.mbed import Mbed


class Unity(Mbed):
    """Handlers of the Unity terminals (`UNITY_*` in `grammars/mcu.lark`)."""

    def _unity_result(self, f: Fields, line: str, number: int) -> None:
        run = self._run(number)
        if f["result"] == "FAIL":
            self._fail(run, "test-failed", number, line)

    def _unity_summary(self, f: Fields, line: str, number: int) -> None:
        run = self._run(number)
        if int(f["failures"] or 0):
            self._fail(run, "test-failed", number, line)

    def _unity_verdict(self, f: Fields, line: str, number: int) -> None:
        """`FAIL` / `OK` alone: Unity's verdict, read only under its `N Tests N Failures N Ignored` line."""
        if self.prev != "UNITY_SUMMARY":
            self._outside()
