"""The library entry point: read, detect, parse, derive. The CLI and the audit call this."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

from logscope.analysis.derived import add_derived_memory
from logscope.analysis.mcu import add_mcu_memory
from logscope.detect import Block, detect_blocks
from logscope.errors import InputError
from logscope.io import LogSource, LogStream, LogText
from logscope.model import ParsedLog
from logscope.parsers.mcu import parse_mcu_blocks
from logscope.parsers.rknn import parse_rknn_blocks
from logscope.rules import Config, analyze_log, resolve_config


def parse(path: str | os.PathLike[str]) -> ParsedLog:
    """Parse one log file into frames, with the derived memory figures filled in.

    The file is streamed block by block (`LogStream`): memory follows the rows the log holds, not its
    length. Raises `InputError` for a file that is not a log: unreadable, binary, or one in which not
    a single line was recognised.
    """
    stream = LogStream(path)
    return _parse_blocks(stream, iter(stream))


def parse_text(text: LogText) -> ParsedLog:
    """Parse text that `logscope.io` has already read (used by tests and the audit)."""
    return _parse_blocks(text, iter([(text.lines, text.numbers)]))


def _parse_blocks(source: LogSource, blocks: Iterator[tuple[list[str], list[int]]]) -> ParsedLog:
    """Detect the family (`logscope.detect`) on the first blocks, then parse every block with its parser."""
    detection, head = detect_blocks(blocks)
    if detection.family is None:
        raise InputError(f"{source.path}: {detection.explain()}")
    lines = _drained(head, blocks)
    if detection.family == "mcu":
        log = parse_mcu_blocks(source, lines)
        add_mcu_memory(log)
        return log
    return _checked(parse_rknn_blocks(source, lines), source.path)


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
    """`parse(path)` and run the rules: `log.findings` holds the sorted findings.

    Without `config`, the configuration is the `logscope.toml` / `[tool.logscope]` found upward from
    the log's folder (then the working folder), or the defaults. Raises `ConfigError` for a bad one.
    """
    if config is None:
        config = resolve_config(None, Path(path))
    return analyze_log(parse(path), config)
