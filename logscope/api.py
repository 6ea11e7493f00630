"""The library entry point: read, detect, parse, derive. The CLI and the audit call this."""

from __future__ import annotations

import os

from logscope.analysis.derived import add_derived_memory
from logscope.errors import InputError
from logscope.io import LogStream, LogText
from logscope.model import ParsedLog
from logscope.parsers.rknn import parse_rknn, parse_rknn_blocks


def parse(path: str | os.PathLike[str]) -> ParsedLog:
    """Parse one log file into frames, with the derived memory figures filled in.

    The file is streamed block by block (`LogStream`): memory follows the rows the log holds, not its
    length. Raises `InputError` for a file that is not a log: unreadable, binary, or one in which not
    a single line was recognised.
    """
    stream = LogStream(path)
    return _checked(parse_rknn_blocks(stream, stream), stream.path)


def parse_text(text: LogText) -> ParsedLog:
    """Parse text that `logscope.io` has already read (used by tests and the audit)."""
    return _checked(parse_rknn(text), text.path)


def _checked(log: ParsedLog, path: str) -> ParsedLog:
    counts = log.line_counts
    recognised = counts["structural"] + counts["message"] + counts["noise"]
    lines = counts["total"]
    if lines and recognised == 0:
        raise InputError(f"{path}: no RKNN-Toolkit or runtime log line recognised in {lines} lines")
    add_derived_memory(log)
    return log
