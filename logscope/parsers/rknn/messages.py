"""Messages of every logger (toolkit, native, proxy, logcat, bare), tracebacks and continuation lines."""

from __future__ import annotations

import re
from typing import Any

from logscope.parsers.categories import classify_exception, classify_message
from logscope.parsers.grammar import Fields
from logscope.parsers.rknn.bulk import MessageRun, joined_run
from logscope.parsers.rknn.runtime import Runtime
from logscope.parsers.rknn.state import _MAX_MESSAGE_CHARS, _ROW_COLUMNS, _ROW_TABLES
from logscope.parsers.rknn.table_runs import RowReader

# The fields every message kind may carry, read in one call.
_MESSAGE_FIELDS = ("level", "level2", "func", "message", "ts")
# Positions in a `messages` row (a list in the frame's column order).
_BUILD_INDEX, _LINE, _END_LINE, _CATEGORY, _FATAL, _MESSAGE = (
    _ROW_COLUMNS["messages"].index(column)
    for column in ("build_index", "line", "end_line", "category", "fatal", "message")
)

# Toolkit steps whose `E <func>:` errors end the build or session: nothing after them can have run.
_FATAL_FUNCS = frozenset(
    {"build", "export_rknn", "load_onnx", "load_pytorch", "load_tflite", "init_runtime", "inference"}
)
_TRACEBACK_HEAD = "Traceback (most recent call last):"
# Native messages read as one run at most (a real log's runs: a few hundred lines).
NATIVE_RUN = 1024
# The line that ends a traceback: an exception class (a name ending in Error/Exception/Interrupt, or
# any dotted class such as onnxruntime's `...onnxruntime_pybind11_state.InvalidArgument`) and its message.
_EXCEPTION_LINE = re.compile(
    r"(?P<exc>(?:[A-Za-z_]\w*\.)*\w*(?:Error|Exception|Interrupt|Exit)|(?:[a-z_]\w*\.)+[A-Z]\w*)(?::|$)"
)


class Messages(Runtime):
    """W/E messages, tracebacks (one error per traceback) and indented continuations.

    A traceback is one `messages` row: it opens at `Traceback (most recent call last):` (bare, or under
    the toolkit logger as `E load_onnx: Traceback ...`), takes its frame and source lines, and closes at
    its exception line, which becomes the first line of the message (the frames follow it) and decides
    the category. Its lines are counted as message lines, not as further errors.
    """

    def _message(self, kind: str, f: Fields, line: str, number: int) -> None:
        level, level2, func, text, timestamp = f.read(_MESSAGE_FIELDS)
        level = level or level2
        logger = None
        if kind == "LOGCAT":
            logger = (f.get("tag") or f.get("tag2") or "").strip() or None
            if not text and logger:  # kernel `W Call trace:` has no tag: what looks like one is the text
                text, logger = f"{logger}:", None
        elif kind == "PROXY_MSG":
            logger = f.get("logger")
        elif kind == "NATIVE_MSG" or kind == "HYBRID_TYPE":
            logger = "RKNN"
        elif kind == "COMPACT_MSG":
            logger = f.get("section")
        if kind == "EXCEPTION":
            level, text = "E", f"{f['exc']}: {f.get('message') or ''}"
        elif kind == "PROCESS_DEATH":
            level, text = "E", f.get("death")
        elif kind == "TRACEBACK_HEAD":
            level, text = "E", "Traceback (most recent call last):"
        elif kind == "HYBRID_TYPE":
            text = line[line.index("Meet hybrid") :]
        text = text if text is not None else line.strip()
        if self._traceback_line(kind, func, text, number):
            return
        category = classify_message(text if func is None else f"{func}: {text}")
        fatal = bool(category and category.fatal) or (level == "E" and func in _FATAL_FUNCS)
        build = self._current(number)
        if fatal and build.fatal is None and build.done_line is None:
            build.fatal = (category.name if category else f"{func} error", number)
        # In the `messages` schema's column order (`_ROW_COLUMNS`); a list, because continuation lines
        # and a traceback's closing line update it: a million one-word messages made a dict per row the
        # largest cost of their parse (time and memory).
        row = [
            build.index,
            number,
            number,
            level,
            logger,
            func,
            timestamp,
            category.name if category else None,
            fatal,
            text[:_MAX_MESSAGE_CHARS],
        ]
        self.rows["messages"].append(row)
        self.counts["message"] += 1
        self.open_message = row
        if text.startswith(_TRACEBACK_HEAD):
            self.traceback, self.traceback_func = row, func
        if category is not None and category.name == "allocation-failure":
            self._failed_allocation(text, build, number)

    def _plain_run(self, levels: list[str] | str, texts: list[str], numbers: list[int]) -> None:
        """The middle lines of a run of plain messages (`bulk`): rows as columns, nothing else changes."""
        build = self._current(numbers[0])
        self.rows["messages"].append(MessageRun(build.index, numbers, levels, texts))
        self.has_message_runs = True
        self.counts["message"] += len(numbers)
        self.last_fed = numbers[-1]
        self.open_message = None

    def _native_run(self, read: RowReader, lines: list[str], numbers: list[int], start: int) -> int:
        """Native messages from `lines[start]` on, right after one the ordinary path has read: how many
        lines it took (0: none, the loop goes on line by line). `read` is `bulk.native_reader`, which
        takes a line exactly when `classify` reads it as a native message.

        The rows are those `_message` would make (the current build, the line's level and timestamp,
        logger `RKNN`, no function), as one `MessageRun`. What `_message` does besides a row is left to
        it: a run starts only when no traceback is open, no cut perf row waits and no row table is open
        (where `_unfit_row` may take a line), and it stops before the first text that a category names
        or that opens a traceback, and before the last line the reader takes, so the line after the run
        is always a native message read the ordinary way (it sets the open message a continuation
        extends, whatever the run held). The run's lines change nothing else, as on the ordinary path.
        """
        if self.traceback is not None or self.wrapped_perf is not None or self.table in _ROW_TABLES:
            return 0
        if not self.builds:
            return 0
        rows = self._native_rows(read, lines, start)
        if len(rows) < 2:
            return 0
        # (the last row is left to the ordinary path)
        levels, stamps, texts = (list(column) for column in zip(*rows[:-1], strict=True))
        named = [t for t in set(texts) if t.startswith(_TRACEBACK_HEAD) or classify_message(t) is not None]
        count = min(map(texts.index, named)) if named else len(texts)
        if count == 0:
            return 0
        if count < len(texts):
            del levels[count:], stamps[count:], texts[count:]
        if "" in stamps:  # (`findall` gives '' for the timestamp a line lacks)
            stamps = [stamp or None for stamp in stamps]
        letter = levels[0]
        run_numbers = numbers[start : start + count]
        self.rows["messages"].append(
            MessageRun(
                self.builds[-1].index,
                run_numbers,
                letter if levels.count(letter) == count else levels,
                texts,
                "RKNN",
                stamps,
            )
        )
        self.has_message_runs = True
        self.counts["message"] += count
        self.last_fed = run_numbers[-1]
        self.open_message = None
        return count

    def _native_rows(self, read: RowReader, lines: list[str], start: int) -> list[tuple[str | None, ...]]:
        """`joined_run(read, lines, start, NATIVE_RUN)`: what is left of the last read when it began before
        `start` in the same block and took the line before it, else a new read. A run stops before each
        message a category names, which the ordinary path reads and then asks for the run after it: the
        largest real compiler log prints twelve such warnings in a row per build, and each read them all
        again. Exact: a read depends on the lines alone, and one that stopped short of `NATIVE_RUN`
        stopped at the first line it refuses, so from any later line of it, it reads the same rows."""
        ahead = self.native_ahead
        if ahead is not None and ahead[0] is lines and 0 < start - ahead[1] <= len(ahead[2]):
            return ahead[2][start - ahead[1] :]
        rows = joined_run(read, lines, start, NATIVE_RUN)
        self.native_ahead = (lines, start, rows) if len(rows) < NATIVE_RUN else None
        return rows

    def _traceback_line(self, kind: str, func: str | None, text: str, number: int) -> bool:
        """Add a line to the open traceback (a frame, a source line, the closing exception line);
        False when it is not one (the traceback, if any, is then closed as it stands)."""
        row = self.traceback
        if row is None or self.open_message is not row:
            return False
        if kind == "PY_MSG" and func != self.traceback_func:
            self.traceback = None
            return False
        if kind == "PY_MSG" and (text[:1].isspace() or text.startswith('File "')):
            self._append(row, text, number)
            return True
        m = _EXCEPTION_LINE.match(text)
        if m is None or kind not in ("PY_MSG", "EXCEPTION"):
            self.traceback = None
            return False
        self.counts["message"] += 1
        category = classify_exception(m["exc"], text)
        row[_MESSAGE] = f"{text}\n{row[_MESSAGE]}"[:_MAX_MESSAGE_CHARS]
        row[_END_LINE], row[_CATEGORY] = number, category.name
        row[_FATAL] = row[_FATAL] or category.fatal
        build = self.builds[row[_BUILD_INDEX]]
        if build.fatal is not None and build.fatal == ("python-traceback", row[_LINE]):
            build.fatal = (category.name, row[_LINE])  # the traceback was the failure: name its kind
        self.traceback = None
        # An exception message may go on over indented lines (2.2.0's load_onnx `ValueError: The input
        # shape ... is not support!` + `      Please set the 'inputs' ...`): they continue this row.
        self.open_message = row
        return True

    def _append(self, row: list[Any], text: str, number: int) -> None:
        self.counts["message"] += 1
        if len(row[_MESSAGE]) < _MAX_MESSAGE_CHARS:
            row[_MESSAGE] = (row[_MESSAGE] + "\n" + text.strip())[:_MAX_MESSAGE_CHARS]
        row[_END_LINE] = number

    def _traceback_frame(self, f: Fields, line: str, number: int) -> None:
        """A frame continues the open traceback; excerpts often start mid-traceback."""
        if self.open_message is None:
            self._message("TRACEBACK_HEAD", Fields(), line, number)
            self.open_message[_MESSAGE] += "\n" + line.strip()  # type: ignore[index]
            return
        self._indented(f, line, number)

    def _indented(self, f: Fields, line: str, number: int) -> None:
        """An indented line continues the open multi-line message (`W config:` notes, tracebacks)."""
        if self.table == "tk1_perf" and self.last_perf and self.open_message is None:
            # tk1 wraps the Name column every 40 characters onto 12-space continuation lines [25].
            row = self.rows["perf"][-1]
            row["full_name"] = (row["full_name"] or "") + line.strip()
            row["end_line"] = number
            self.counts["structural"] += 1
            return
        if self.open_message is None:
            self._other(f, line, number)
            return
        self._append(self.open_message, line, number)
