"""ESP-IDF heap tracing: `heap_trace_dump()` (v3-v5 summaries), the host-side sysview heap log with its
backtraces and leak report, `heap_caps_print_heap_info()`, and the unit-test leak check."""

from __future__ import annotations

from logscope.parsers.grammar import Fields
from logscope.parsers.mcu.nnom import Nnom


class EspIdf(Nnom):
    """Handlers of the ESP-IDF heap terminals (`ESPH_*` in `grammars/mcu.lark`)."""

    def _esph_dump_header(self, f: Fields, line: str, number: int) -> None:
        run = self._run(number)
        if run.events:
            run = self._new_run(number)
        run.figures["dump_records"] = int(f["records"] or 0)
        self.leak_report = False

    def _esph_dump_record(self, f: Fields, line: str, number: int) -> None:
        run = self._run(number)
        self._event(
            run,
            number,
            action="alloc",
            cycle=int(f["ccount"] or "0", 16) if len(f["ccount"] or "") <= 12 else None,
            address=f["address"],
            size_bytes=int(f["size"] or 0),
            region=f["region"],
            cpu=int(f["cpu"] or 0),
            caller=f["caller"],
            freed=f["freed"] is not None,
            source="esp-idf-heap-trace-dump",
        )

    def _esph_dump_freed_by(self, f: Fields, line: str, number: int) -> None:
        if self.open_event is None or self.open_event.get("source") != "esp-idf-heap-trace-dump":
            return self._outside()
        self.open_event["freed"] = True
        self.open_event["freed_by"] = f["caller"]

    def _esph_dump_summary(self, f: Fields, line: str, number: int) -> None:
        """The dump's summary, v5 (`0 bytes alive in trace (0/8 allocations)`, `total frees: 8`) or v3-v4
        (`12 bytes 'leaked' in trace (1 allocations)`, `total allocations 3 total frees 2`): same fields."""
        run = self._run(number)
        if f["alive_bytes"] is not None:
            run.figures.update(
                reported_leak_bytes=int(f["alive_bytes"]),
                reported_leak_blocks=int(f["alive"] or 0),
                reported_leak_line=number,
            )
        if f["total_allocs"] is not None:
            run.figures["reported_alloc_count"] = int(f["total_allocs"])
        if f["total_frees"] is not None:
            run.figures["reported_free_count"] = int(f["total_frees"])

    def _esph_leak_check(self, f: Fields, line: str, number: int) -> None:
        """`MALLOC_CAP_8BIT potential leak: Before 291016 bytes free, After 291004 bytes free (delta 12)`."""
        run = self._run(number)
        run.figures.setdefault("reported_leak_bytes", int(f["delta"] or 0))
        run.figures.setdefault("reported_leak_line", number)

    def _esph_host_alloc(self, f: Fields, line: str, number: int) -> None:
        run = self._run(number)
        self._event(
            run,
            number,
            action="leaked" if self.leak_report else "alloc",
            time_s=float(f["time"] or 0),
            address=f["address"],
            size_bytes=int(f["size"] or 0),
            cpu=int(f["core"] or 0),
            task=f["task"],
            source="esp-idf-host-heap-log",
        )

    def _esph_host_free(self, f: Fields, line: str, number: int) -> None:
        run = self._run(number)
        self._event(
            run,
            number,
            action="free",
            time_s=float(f["time"] or 0),
            address=f["address"],
            cpu=int(f["core"] or 0),
            task=f["task"],
            source="esp-idf-host-heap-log",
        )

    def _esph_backtrace(self, f: Fields, line: str, number: int) -> None:
        if self.open_event is None:
            return self._outside()
        if self.open_event.get("caller") is None:  # the innermost frame names the caller
            self.open_event["caller"] = f["frame"]

    def _esph_host_report(self, f: Fields, line: str, number: int) -> None:
        run = self._run(number)
        if f["heap_events"] is None and f["leaked_bytes"] is None:
            self.leak_report = True  # the banner: what follows lists the blocks still allocated
        elif f["heap_events"] is not None:
            run.figures["reported_event_count"] = int(f["heap_events"])
        else:
            run.figures.update(
                reported_leak_bytes=int(f["leaked_bytes"] or 0),
                reported_leak_blocks=int(f["leaked_blocks"] or 0),
                reported_leak_line=number,
            )
            self.leak_report = False

    def _esph_caps_title(self, f: Fields, line: str, number: int) -> None:
        run = self._run(number)
        if run.caps_regions:
            self._new_run(number)

    def _esph_caps_region(self, f: Fields, line: str, number: int) -> None:
        run = self._run(number)
        run.caps_regions += 1
        length = int(f["len"] or 0)
        min_free = int(f["min_free"] or 0)
        self._arena(
            run,
            "esp-idf-heap-caps",
            number,
            category="heap region",
            region=f["address"],
            used_bytes=int(f["allocated"] or 0),
            capacity_bytes=length,
            free_bytes=int(f["free"] or 0),
            min_free_bytes=min_free,
        )
        figures = run.figures
        figures["caps_len"] = figures.get("caps_len", 0) + length
        figures["caps_low_water_used"] = figures.get("caps_low_water_used", 0) + length - min_free
        figures.update(budget_bytes=figures["caps_len"], budget_line=figures.get("budget_line", number))
        figures["budget_label"] = "heap regions len"

    def _esph_caps_blocks(self, f: Fields, line: str, number: int) -> None:
        arena = self.rows["arena"]
        if not arena or arena[-1]["source"] != "esp-idf-heap-caps" or arena[-1]["category"] != "heap region":
            return self._outside()
        arena[-1]["largest_free_bytes"] = int(f["largest"] or 0)
        arena[-1]["count"] = int(f["alloc_blocks"] or 0)
        arena[-1]["count_unit"] = "alloc blocks"

    def _esph_caps_totals_title(self, f: Fields, line: str, number: int) -> None:
        self._run(number)

    def _esph_caps_totals(self, f: Fields, line: str, number: int) -> None:
        run = self._run(number)
        self._arena(
            run,
            "esp-idf-heap-caps",
            number,
            category="totals",
            used_bytes=int(f["allocated"] or 0),
            free_bytes=int(f["free"] or 0),
            min_free_bytes=int(f["min_free"] or 0),
            largest_free_bytes=int(f["largest"] or 0),
        )
        if "caps_low_water_used" in run.figures:
            self._report(
                run,
                "low-water use: sum of (len - min_free) over regions",
                run.figures["caps_low_water_used"],
                number,
            )
