"""The library entry point: read, detect, parse, derive. The CLI and the audit call this."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

from logscope.analysis.derived import add_derived_memory
from logscope.analysis.mcu import add_mcu_memory
from logscope.collector import collector_paused
from logscope.detect import Block, detect_blocks
from logscope.errors import InputError
from logscope.io import DEFAULT_MAX_BYTES, LogSource, LogStream, LogText, decode_bytes
from logscope.model import ParsedLog
from logscope.parsers.mcu import parse_mcu_blocks
from logscope.parsers.rknn import parse_rknn_blocks
from logscope.rules import Config, analyze_log, resolve_config

STDIN = "-"  # the path that reads standard input


def parse(path: str | os.PathLike[str]) -> ParsedLog:
    """Parse one log file into frames, with the derived memory figures filled in; no rules run
    (`analyze` runs them, as the `parse` command does).

    The file is streamed block by block (`LogStream`): memory follows the rows the log holds, not its
    length. `-` reads standard input. Raises `InputError` for a file that is not a log: unreadable,
    empty, binary, or one in which not a single line was recognised.
    """
    if os.fspath(path) == STDIN:
        return parse_text(decode_bytes(_read_stdin(), "<stdin>"))
    stream = LogStream(path)
    return _parse_blocks(stream, iter(stream))


def parse_text(text: LogText | str) -> ParsedLog:
    """Parse a log held in a string (`parse_text("I RKNN: ...")`), or text `logscope.io` has read."""
    if isinstance(text, str):
        text = decode_bytes(text.encode("utf-8"), "<text>")
    return _parse_blocks(text, iter([(text.lines, text.numbers)]))


def parse_stream(stream: LogStream, blocks: Iterator[Block] | None = None) -> ParsedLog:
    """Parse a `LogStream` built by the caller (one that reads through an `opener`, such as an
    object-store URL); `blocks` may wrap `iter(stream)` to look at the lines as they pass."""
    return _parse_blocks(stream, blocks if blocks is not None else iter(stream))


def _read_stdin() -> bytes:
    """Standard input, at most the reader's size cap (one byte more is how the cap is detected)."""
    return sys.stdin.buffer.read(DEFAULT_MAX_BYTES + 1)


def _parse_blocks(source: LogSource, blocks: Iterator[tuple[list[str], list[int]]]) -> ParsedLog:
    """Detect the family (`logscope.detect`) on the first blocks, then parse every block with its parser."""
    with collector_paused():
        return _detect_and_parse(source, blocks)


def _detect_and_parse(source: LogSource, blocks: Iterator[tuple[list[str], list[int]]]) -> ParsedLog:
    detection, head = detect_blocks(blocks)
    if detection.family is None:
        raise InputError(f"{source.path}: {detection.explain()}")
    lines = _drained(head, blocks)
    if detection.family == "mcu":
        log = parse_mcu_blocks(source, lines)
        add_mcu_memory(log)
        return _not_empty(log, source.path)
    return _checked(_not_empty(parse_rknn_blocks(source, lines), source.path), source.path)


def _not_empty(log: ParsedLog, path: str) -> ParsedLog:
    """A file without a single non-blank line is not a log (the CLI exits 2, not `0 lines`)."""
    counts = log.line_counts
    if counts.get("total", 0) - counts.get("blank", 0) <= 0:
        raise InputError(f"{path}: empty (no line to read)")
    return log


def _drained(head: list[Block], rest: Iterator[Block]) -> Iterator[Block]:
    """The blocks detection read, then the rest; each head block is let go once handed over, so the
    parse keeps no block alive longer than it needs (peak memory must not grow with noise lines)."""
    head.reverse()
    while head:
        yield head.pop()
    yield from rest


def _checked(log: ParsedLog, path: str) -> ParsedLog:
    counts = log.line_counts
    recognised = counts["structural"] + counts["message"] + counts["noise"]
    lines = counts["total"]
    if lines and recognised == 0:
        raise InputError(f"{path}: no RKNN-Toolkit or runtime log line recognised in {lines} lines")
    add_derived_memory(log)
    return log


def analyze(path: str | os.PathLike[str], config: Config | None = None) -> ParsedLog:
    """The entry point that matches the `logscope parse` command: `parse(path)`, then every enabled
    rule; `log.findings` holds the sorted findings (`log.findings_frame()` as a DataFrame).

    Without `config`, the configuration is the `logscope.toml` / `[tool.logscope]` found upward from
    the log's folder (then the working folder), or the defaults. Raises `ConfigError` for a bad one.
    """
    if config is None:
        config = resolve_config(None, None if os.fspath(path) == STDIN else Path(path))
    with collector_paused():
        return analyze_log(parse(path), config)
