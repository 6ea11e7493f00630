"""Messages of every logger (toolkit, native, proxy, logcat, bare), tracebacks and continuation lines."""

from __future__ import annotations

from logscope.parsers.categories import classify_message
from logscope.parsers.grammar import Fields
from logscope.parsers.rknn.evaluation import Evaluation
from logscope.parsers.rknn.state import _MAX_MESSAGE_CHARS


class Messages(Evaluation):
    """W/E messages, tracebacks (one error per traceback) and indented continuations."""

    def _message(self, kind: str, f: Fields, line: str, number: int) -> None:
        level = f.get("level") or f.get("level2")
        logger = None
        func = f.get("func")
        text = f.get("message")
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
        category = classify_message(text if func is None else f"{func}: {text}")
        fatal = bool(category and category.fatal) or (
            level == "E" and func in ("build", "export_rknn", "load_onnx", "load_pytorch", "load_tflite")
        )
        build = self._current(number)
        if fatal and build.fatal is None and build.done_line is None:
            build.fatal = (category.name if category else f"{func} error", number)
        row = {
            "build_index": build.index,
            "line": number,
            "end_line": number,
            "level": level,
            "logger": logger,
            "func": func,
            "timestamp": f.get("ts"),
            "category": category.name if category else None,
            "fatal": fatal,
            "message": text[:_MAX_MESSAGE_CHARS],
        }
        self.rows["messages"].append(row)
        self.counts["message"] += 1
        self.open_message = row
        if category is not None and category.name == "allocation-failure":
            self._failed_allocation(text, build, number)

    def _traceback_frame(self, f: Fields, line: str, number: int) -> None:
        """A frame continues the open traceback; issue excerpts often start mid-traceback."""
        if self.open_message is None:
            self._message("TRACEBACK_HEAD", Fields(), line, number)
            self.open_message["message"] += "\n" + line.strip()  # type: ignore[index]
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
        self.counts["message"] += 1
        msg = self.open_message
        if len(msg["message"]) < _MAX_MESSAGE_CHARS:
            msg["message"] = (msg["message"] + "\n" + line.strip())[:_MAX_MESSAGE_CHARS]
        msg["end_line"] = number
