"""Microcontroller runtime and tool memory output: TFLite Micro, NNoM, ESP-IDF heap tracing,
Mbed, Arm Vela, ST X-CUBE-AI / Edge AI, ESP-DL, TinyEngine, and the per-operator heap trace
(`Op[i] NAME: delta=…, total=…`) that users print from their own inference loop.

`grammars/mcu.lark` is the line vocabulary and `vocabulary` says what each terminal means. Each format
family has its module of handlers (`heaptrace`, `tflm`, `nnom`, `espidf`, `mbed`, `unity`, `vela`, `st`,
`espdl`, `tinyengine`) on the shared state (`state`, a `logscope.parsers.base.BaseAssembler`), and
`assembler` maps each terminal to its handler, counts every line and builds the frames.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable
from typing import Any

from logscope.collector import collector_paused
from logscope.io import LogSource, LogText
from logscope.model import ParsedLog
from logscope.parsers.grammar import MAX_BLANK_RUN, LineLexer, load_line_grammar, refused
from logscope.parsers.mcu.assembler import McuAssembler
from logscope.parsers.mcu.state import HEAP_FIELDS, to_bytes
from logscope.parsers.mcu.vocabulary import format_of, is_evidence
from logscope.parsers.runs import feed_with_runs, unrecognised_run_regex

__all__ = ["format_of", "is_evidence", "parse_mcu", "parse_mcu_blocks", "to_bytes"]


@functools.cache
def _heap_shortcut() -> tuple[Callable[[str], re.Match[str] | None], tuple[int, ...], Callable[[str], Any]]:
    """The grammar's own HEAP_OP and ESP_PREFIX terminals as whole-line regexes, and the field groups.

    tests/test_mcu_grammar.py checks the shortcut classifies every fixture line (and mangled ones) as
    the lexer does.
    """
    lexer = load_line_grammar("mcu").lexer
    heap, prefix = lexer.terminal_regex("HEAP_OP"), lexer.terminal_regex("ESP_PREFIX")
    return heap.match, tuple(heap.groupindex[name] for name in HEAP_FIELDS), prefix.match


# Every line of a run of unrecognised lines (`runs.unrecognised_run_regex`) starts so.
_WORDS_ONLY = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_ ]*\Z")


@functools.cache
def _unrecognised_runs(lexer: LineLexer) -> re.Pattern[str] | None:
    return unrecognised_run_regex(lexer)


def parse_mcu(text: LogText) -> ParsedLog:
    """Parse MCU memory output that `logscope.io` has read and cleaned (frames only, nothing derived)."""
    return parse_mcu_blocks(text, [(text.lines, text.numbers)])


def parse_mcu_blocks(source: LogSource, blocks: Iterable[tuple[list[str], list[int]]]) -> ParsedLog:
    """Parse MCU output arriving as blocks of (lines, numbers), e.g. from a `LogStream`.

    `source` is read for its path, encoding and hash after the last block.
    """
    # Nothing the parse allocates is cyclic garbage; without the collector's repeated scans of the growing
    # row lists (a million tuples for a long trace) the parse and the frame building run faster.
    with collector_paused():
        return _parse(source, blocks)


def _parse(source: LogSource, blocks: Iterable[tuple[list[str], list[int]]]) -> ParsedLog:
    assembler = McuAssembler(source)
    classify = load_line_grammar("mcu").lexer.classify
    feed, blank, heap_row = assembler.feed, assembler.feed_blank, assembler.heap_row
    heap_match, groups, prefixed = _heap_shortcut()

    def feed_block(lines: list[str], numbers: list[int]) -> None:
        for line, number in zip(lines, numbers, strict=True):
            if not line:
                blank()
                continue
            # Most lines of a long trace are per-op heap lines: try their terminal first. HEAP_OP is the
            # first body terminal in Lark's order, so a whole-line match is what `classify` would
            # return too, unless the ESP-IDF logger prefix (the only terminal before it) starts the line,
            # or the line is one `classify` refuses whole (`refused`).
            m = heap_match(line) if len(line) <= MAX_BLANK_RUN or not refused(line) else None
            if m is not None and prefixed(line) is None:
                heap_row(m.group(*groups), line, number)
                continue
            kind, fields = classify(line)
            feed(kind, fields, line, number)

    lexer = load_line_grammar("mcu").lexer

    def feed_runs(lines: list[str], numbers: list[int]) -> None:
        """Runs of lines no terminal but `OTHER` takes go to the assembler as one run of unparsed rows."""
        feed_with_runs(
            lines,
            numbers,
            _WORDS_ONLY,
            lambda: _unrecognised_runs(lexer),
            feed_block,
            lambda _text, _span, run_lines, run_numbers: assembler.unrecognised_run(run_lines, run_numbers),
        )

    # The base counts a physical line once when `logscope.io` split it into several logical lines.
    assembler.feed_lines(blocks, feed_runs, located=feed_block)
    try:
        return assembler.finish()
    finally:
        assembler.release()
