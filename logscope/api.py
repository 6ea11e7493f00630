"""The library entry point: read, detect, parse, derive. The CLI and the audit call this."""

from __future__ import annotations

import os

from logscope.analysis.derived import add_derived_memory
from logscope.errors import InputError
from logscope.io import LogText, read_log
from logscope.model import ParsedLog
from logscope.parsers.rknn import parse_rknn


def parse(path: str | os.PathLike[str]) -> ParsedLog:
    """Parse one log file into frames, with the derived memory figures filled in.

    Raises `InputError` for a file that is not a log: unreadable, binary, or one in which not a single
    line was recognised as RKNN-Toolkit output.
    """
    return parse_text(read_log(path))


def parse_text(text: LogText) -> ParsedLog:
    """Parse text that `logscope.io` has already read (used by tests and the audit)."""
    log = parse_rknn(text)
    counts = log.line_counts
    recognised = counts["structural"] + counts["message"] + counts["noise"]
    if text.lines and recognised == 0:
        raise InputError(
            f"{text.path}: no RKNN-Toolkit or runtime log line recognised in {len(text.lines)} lines"
        )
    add_derived_memory(log)
    return log
