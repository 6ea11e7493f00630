"""TensorFlow Lite Micro: RecordingMicroAllocator reports, allocation failures (current and 2019-2020
messages), the application's failed calls and arena prints, GreedyMemoryPlanner plans, MicroProfiler
logs, CSV and per-tag tables, and the generic benchmarking tool's tables and op list."""

from __future__ import annotations

from logscope.parsers.grammar import Fields
from logscope.parsers.mcu.heaptrace import HeapTrace
from logscope.parsers.mcu.state import _clip, _int, _Run, to_bytes


class Tflm(HeapTrace):
    """Handlers of the TFLM terminals (`TFLM_*` in `grammars/mcu.lark`)."""

    def _tflm_alloc_total(self, f: Fields, line: str, number: int) -> None:
        part = f["part"] or "total"
        run = self._run(number)
        value = int(f["value"] or 0)
        self._arena(run, "tflm-allocator", number, category=f"arena {part}", used_bytes=value)
        if part == "total":
            self._report(run, "arena allocation total (head + tail)", value, number)

    def _tflm_alloc_category(self, f: Fields, line: str, number: int) -> None:
        run = self._run(number)
        self._arena(
            run,
            "tflm-allocator",
            number,
            category=f["category"],
            region="tail",
            used_bytes=int(f["used"] or 0),
            requested_bytes=int(f["requested"] or 0),
            count=int(f["count"] or 0),
            count_unit=(f["noun"] or "").strip(),
        )

    def _tflm_alloc_fail(self, f: Fields, line: str, number: int) -> None:
        run = self._run(number)
        requested, available, missing = (int(f[k] or 0) for k in ("requested", "available", "missing"))
        self._arena(
            run,
            "tflm-allocator",
            number,
            category=f"failed: {f['what']}",
            requested_bytes=requested,
            free_bytes=available,
        )
        run.figures.setdefault("over_budget_bytes", missing)
        run.figures.setdefault("over_budget_line", number)
        self._fail(run, "allocation-failure", number, line)

    def _tflm_arena_too_small(self, f: Fields, line: str, number: int) -> None:
        run = self._run(number)
        needed, available = _int(f["needed"]), _int(f["available"])  # None when the line was cut before them
        self._arena(
            run,
            "tflm-allocator",
            number,
            category="failed: arena too small",
            requested_bytes=needed,
            free_bytes=available,
        )
        if needed is not None and available is not None:
            run.figures.setdefault("over_budget_bytes", needed - available)
            run.figures.setdefault("over_budget_line", number)
        self._fail(run, "arena-too-small", number, line)

    def _tflm_alloc_for(self, f: Fields, line: str, number: int) -> None:
        """`Failed to allocate memory for tensor_info, 1320 bytes required`: a request, not a shortfall."""
        run = self._run(number)
        self._arena(
            run,
            "tflm-allocator",
            number,
            category=f"failed: {(f['what'] or '').strip()}",
            requested_bytes=_int(f["requested"]),
        )
        self._fail(run, "allocation-failure", number, line)

    def _tflm_call_failed(self, f: Fields, line: str, number: int) -> None:
        call = f["call"] or ""
        self._fail(
            self._run(number),
            "allocate-tensors-failed" if call == "AllocateTensors" else "invoke-failed",
            number,
            line,
        )

    def _tflm_arena_used(self, f: Fields, line: str, number: int) -> None:
        """`Arena used bytes: 53212`: the application prints `interpreter.arena_used_bytes()`."""
        run = self._run(number)
        value = to_bytes(f["value"], f["unit"] if f["unit"] not in ("bytes", "Bytes") else None)
        self._arena(run, "tflm-app-print", number, category="arena used bytes", used_bytes=value)
        self._report(run, "arena used bytes (arena_used_bytes())", value, number)

    def _tflm_plan_buffer(self, f: Fields, line: str, number: int) -> None:
        buffer_id = int(f["id"] or 0)
        run = self._run(number)
        if buffer_id in run.plan_ids:
            run = self._new_run(number)
        run.plan_ids.add(buffer_id)
        self.rows["buffers"].append(
            {
                "run_index": run.index,
                "buffer_id": buffer_id,
                "ordinal": f["ordinal"],
                "size_bytes": int(f["size"] or 0),
                "offset_bytes": int(f["offset"] or 0),
                "first_op": int(f["first"] or 0),
                "last_op": int(f["last"] or 0),
                "source": "tflm-planner",
                "line": number,
            }
        )

    def _tflm_plan_tick(self, f: Fields, line: str, number: int) -> None:
        run = self._run(number)
        # `(Nk)` is ceil(live bytes / 1024): kept as an upper bound, in KiB rounded up.
        self._arena(
            run,
            "tflm-planner",
            number,
            category=f"tick {f['tick']}",
            region="arena map",
            used_bytes=int(f["kb"] or 0) * 1024,
        )

    def _tflm_prof_log(self, f: Fields, line: str, number: int) -> None:
        run = self._run(number)
        if self.prev != "TFLM_PROF_LOG" and run.prof_ops:
            run = self._new_run(number)  # a second per-op block: the next invocation
        ms = int(f["ms"] or 0)
        run.prof_log.append(len(self.ops))
        self.ops.append(
            (
                run.index,
                run.prof_ops,
                f["tag"],
                None,
                None,
                int(f["ticks"] or 0),
                ms * 1000.0,
                "tflm-profiler",
                None,
                number,
            )
        )
        run.prof_ops += 1

    def _tflm_prof_csv_header(self, f: Fields, line: str, number: int) -> None:
        run = self._run(number)
        if run.prof_ops:
            self._new_run(number)
        self.table = "prof_csv"

    def _tflm_prof_csv_row(self, f: Fields, line: str, number: int) -> None:
        if self.table != "prof_csv":
            return self._outside()
        run = self._run(number)
        self.ops.append(
            (
                run.index,
                int(f["event"] or 0),
                (f["tag"] or "").strip(),
                None,
                None,
                int(f["ticks"] or 0),
                None,
                "tflm-profiler",
                None,
                number,
            )
        )
        run.prof_ops += 1

    def _tflm_prof_tag_header(self, f: Fields, line: str, number: int) -> None:
        self._run(number)
        self.table = "prof_tags"
        self.prof_tag_block += 1

    def _tflm_prof_tag_row(self, f: Fields, line: str, number: int) -> None:
        if self.table != "prof_tags":
            return self._outside()
        run = self._run(number)
        self.rows["profile"].append(
            {
                "run_index": run.index,
                "block": self.prof_tag_block,
                "tag": (f["tag"] or "").strip(),
                "ticks": int(f["ticks"] or 0),
                "is_total": False,
                "line": number,
            }
        )

    def _tflm_prof_tag_total(self, f: Fields, line: str, number: int) -> None:
        run = self._run(number)
        self.rows["profile"].append(
            {
                "run_index": run.index,
                "block": self.prof_tag_block,
                "tag": "total number of ticks",
                "ticks": int(f["ticks"] or 0),
                "is_total": True,
                "line": number,
            }
        )
        self.table = None

    def _tflm_bench_title(self, f: Fields, line: str, number: int) -> None:
        name = (f["name"] or "").strip()
        self._run(number)
        self.table = {"Arena": "bench_arena", "Allocations": "bench_alloc"}.get(name)

    def _tflm_bench_arena_row(self, f: Fields, line: str, number: int) -> None:
        run = self._run(number)
        value = int(f["bytes"] or 0)
        self._arena(
            run,
            "tflm-benchmark",
            number,
            category=f"arena {(f['name'] or '').lower()}",
            used_bytes=value,
            percent=float(f["pct"] or 0),
        )
        if f["name"] == "Total":
            self._report(run, "arena total", value, number)

    def _tflm_bench_alloc_row(self, f: Fields, line: str, number: int) -> None:
        run = self._run(number)
        self._arena(
            run,
            "tflm-benchmark",
            number,
            category=(f["name"] or "").strip(),
            used_bytes=int(f["used"] or 0),
            requested_bytes=int(f["requested"] or 0),
            count=int(f["count"] or 0),
            percent=float(f["pct"] or 0),
        )

    def _tflm_bench_model_size(self, f: Fields, line: str, number: int) -> None:
        label = f["label"] or ""
        run = self._run(number)
        self._arena(
            run,
            "tflm-benchmark",
            number,
            category=label.strip("()").lower(),
            region="model file",
            used_bytes=int(f["bytes"] or 0),
            percent=float(f["pct"]) if f["pct"] else None,
        )

    def _tflm_oplist_intro(self, f: Fields, line: str, number: int) -> None:
        run = self._run(number)
        if run.oplist_ops:
            self._new_run(number)

    def _tflm_oplist_subgraph(self, f: Fields, line: str, number: int) -> None:
        self._run(number)
        self.table = "oplist"

    def _tflm_oplist_op(self, f: Fields, line: str, number: int) -> None:
        run = self._run(number)
        index = int(f["index"] or 0)
        outputs = f["outputs"]
        self.ops.append(
            (
                run.index,
                index,
                f["name"],
                None,
                None,
                None,
                None,
                "tflm-oplist",
                f"({_clip(f['inputs'])}) -> [{outputs}]"
                if outputs is not None
                else f"({_clip(f['inputs'])}) ->",
                number,
            )
        )
        run.oplist_ops += 1
        self.open_op = len(self.ops) - 1 if outputs is None else None

    def _tflm_oplist_cont(self, f: Fields, line: str, number: int) -> None:
        if self.open_op is None:
            return self._outside()
        row = self.ops[self.open_op]
        self.ops[self.open_op] = (*row[:8], f"{row[8]} [{f['outputs']}]", row[9])
        self.open_op = None

    def _tflm_oplist_tensors(self, f: Fields, line: str, number: int) -> None:
        self._run(number)
        self.table = None

    def _invoke_totals(self, run: _Run) -> set[int]:
        """MicroProfiler lines that time a whole invoke, not an op: positions in `self.ops` to drop.

        A benchmark prints the invoke's ticks next to the per-op lines (`KeywordRunNIerations(1) took 38516
        ticks` then 15 ops that sum to 38516 [31]); counted as an op it doubles the tick sum. A line is such a
        total when its ticks equal exactly the sum of the (at least two) lines that follow it, or of those
        that precede it back to the block start or the previous total (both readings count the same timer).
        The total moves to `profile` (`is_total`) and to the run's `reported_time_*`; ops are renumbered.
        """
        rows = run.prof_log
        ticks = [self.ops[position][5] for position in rows]
        totals: list[int] = []  # indices into rows
        start = 0
        i = 0
        while i < len(rows):
            # The total first: its ticks are the sum of the lines after it.
            acc, j = 0, i + 1
            while j < len(rows) and acc < ticks[i]:
                acc += ticks[j]
                j += 1
            if acc == ticks[i] and j - i > 2:
                totals.append(i)
                start = i = j
                continue
            # The total last: its ticks are the sum of the lines since the block start (or the last total).
            if i - start >= 2 and ticks[i] == sum(ticks[start:i]):
                totals.append(i)
                start = i + 1
            i += 1
        if not totals:
            return set()
        for i in totals:
            row = self.ops[rows[i]]
            self.rows["profile"].append(
                {
                    "run_index": run.index,
                    "block": None,
                    "tag": row[2],
                    "ticks": row[5],
                    "is_total": True,
                    "line": row[9],
                }
            )
            if "reported_time_us" not in run.figures and row[6] is not None:
                run.figures.update(reported_time_us=round(row[6]), reported_time_line=row[9])
        dropped = {rows[i] for i in totals}
        for number, position in enumerate(p for p in rows if p not in dropped):
            row = self.ops[position]
            self.ops[position] = (row[0], number, *row[2:])
        run.prof_ops -= len(totals)
        return dropped
