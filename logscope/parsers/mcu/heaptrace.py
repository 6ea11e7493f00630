"""The per-operator heap trace an application prints from its inference loop (`Op[2] Conv2D: delta=+8000,
total=53000`), its baseline and budget lines, and the budget a boot banner states (`SRAM 320KB`)."""

from __future__ import annotations

from typing import Any

from logscope.parsers.grammar import Fields
from logscope.parsers.mcu.state import HEAP_FIELDS, McuState, to_bytes


class HeapTrace(McuState):
    """Handlers of the per-op heap trace terminals (`HEAP_*` in `grammars/mcu.lark`)."""

    def _heap_op(self, f: Fields, line: str, number: int) -> None:
        """`Op[2] Conv2D: delta=+8000, total=53000` (see `heap_row`)."""
        self.heap_row(f.take(HEAP_FIELDS), line, number)

    def heap_row(self, fields: tuple[Any, ...], line: str, number: int) -> None:
        """One per-op heap line, its fields in `HEAP_FIELDS` order: the hot path of a long trace.

        The parse loop calls this directly (no `feed` dispatch), so it does its own counting; the run's
        family tally is added up in `finish` from `heap_ops`.
        """
        self.prev_kind = "HEAP_OP"
        index_text, name, delta, delta_unit, total, total_unit, extra = fields
        if len(index_text) > 15 or len(delta) > 16 or len(total) > 15:  # see _HUGE
            self.unparsed(number, line, "number out of range")
            return
        index = int(index_text)
        runs = self.runs
        run = runs[-1] if runs else self._new_run(number)
        if run.heap_ops and index <= run.last_heap_index:
            run = self._new_run(number)  # the op index went back: the next inference
        run.heap_ops += 1
        run.last_heap_index = index
        run.end_line = number
        self.counts["structural"] += 1
        if delta_unit is None:
            try:
                delta_bytes: int | None = int(delta)
            except ValueError:
                delta_bytes = to_bytes(delta)
        else:
            delta_bytes = to_bytes(delta, delta_unit)
        self.heap_rows.append(
            (
                run.index,
                index,
                name.strip() or None,
                delta_bytes,
                int(total) if total_unit is None and total.isdecimal() else to_bytes(total, total_unit),
                extra.lstrip(",; ") or None if extra else None,
                number,
            )
        )

    def _heap_baseline(self, f: Fields, line: str, number: int) -> None:
        run = self._run(number)
        if run.heap_ops or "baseline_bytes" in run.figures:
            run = self._new_run(number)
        run.figures.update(baseline_bytes=to_bytes(f["value"], f["unit"]), baseline_line=number)

    def _heap_budget(self, f: Fields, line: str, number: int) -> None:
        run = self._run(number)
        if run.heap_ops:
            run = self._new_run(number)
        run.figures.update(budget_bytes=to_bytes(f["value"], f["unit"]), budget_line=number)
        run.figures.setdefault("budget_label", (f["label"] or "").strip())

    def _heap_banner_sram(self, f: Fields, line: str, number: int) -> None:
        """`STM32F746 @ 216 MHz, SRAM 320KB`: the part's SRAM is the budget unless the log states one."""
        run = self._run(number)
        if run.heap_ops:
            run = self._new_run(number)
        if "budget_bytes" in run.figures:  # a budget line (`RAM budget: 65536 B`) is more specific
            return
        unit = f["unit"] or ""
        unit = unit + "B" if unit in ("K", "k", "M") else unit  # `SRAM 320K`
        run.figures.update(
            budget_bytes=to_bytes(f["value"], unit),
            budget_line=number,
            budget_label=f"{f['label']} in the boot banner",
        )
