"""RKNN-Toolkit / librknnc logs into frames: the grammar classifies lines, this module assembles them.

The assembler is a small state machine over classified lines. It keeps three kinds of context that a
line alone cannot carry:

- which *build* a line belongs to. A file can hold several builds (encoder + decoder, a simulator run
  then a board run). Builds are segmented on toolkit lines only (banner, `rknn building ...`, compiler
  invocation, memory tables repeated), never on the example scripts' `--> Building model` prints,
  because stdout and stderr interleave (the script's prints land before or after the toolkit's lines);
- which *table* a row belongs to (layer, feature or const tensor, outlier), from the last header or
  title seen; rows without a header (excerpts) are placed by their own shape;
- the *open message*: indented lines continue the previous multi-line W/E message or traceback.

Noise lines (known, content-free compiler chatter and tqdm bars) are counted, never stored, so memory
does not grow with them. Every other line lands in a frame or in `unparsed` with its line number.
Runs of plain messages are read as columns (`bulk`, `logscope.parsers.runs`); the rest line by line.
"""

from __future__ import annotations

import functools
import gc
import re
from collections.abc import Iterable

from logscope.io import LogSource, LogText
from logscope.model import ParsedLog
from logscope.parsers.grammar import MAX_BLANK_RUN, Fields, LineLexer, load_line_grammar, refused
from logscope.parsers.rknn.assembler import RknnAssembler
from logscope.parsers.rknn.bulk import category_substrings, named_lines, run_regex
from logscope.parsers.rknn.state import _LAYER_FIELDS, _QUIET_NOISE, _TENSOR_FIELDS
from logscope.parsers.runs import feed_with_runs

__all__ = ["parse_rknn", "parse_rknn_blocks"]

Substrings = tuple[tuple[str, ...], tuple[str, ...]]
# A plain message line's level and text (the run regex has already checked its whole shape).
_PLAIN_LEVEL = re.compile(r"^[ \t]*([DIWE]) ", re.MULTILINE)
_PLAIN_TEXT = re.compile(r"^[ \t]*[DIWE] (.*)$", re.MULTILINE)


# Every run line is of this shape (`runs.may_hold_run`).
_PLAIN_START = re.compile(r"[ \t]{0,16}[DIWE] [A-Za-z0-9_][A-Za-z0-9_ ]*\Z")


def _levels(text: str, span: tuple[int, int], count: int) -> list[str] | str:
    """The levels of the `count` plain-message lines in `text[span]`: one letter when every line starts
    with it (counted in C: a newline, the letter, a blank), else one per line."""
    start, end = span
    letter = text[start]
    if letter in "DIWE" and text.count(f"\n{letter} ", start - 1, end) == count:
        return letter
    levels: list[str] = _PLAIN_LEVEL.findall(text, start, end)
    return levels


@functools.cache
def _bulk_regexes(lexer: LineLexer) -> tuple[re.Pattern[str] | None, Substrings | None]:
    """The grammar's run regex and the categories' required strings (`bulk`), once per process."""
    return run_regex(lexer), category_substrings()


def parse_rknn(text: LogText) -> ParsedLog:
    """Parse an RKNN log (build, runtime or both) that `logscope.io` has read and cleaned."""
    return parse_rknn_blocks(text, [(text.lines, text.numbers)])


def parse_rknn_blocks(source: LogSource, blocks: Iterable[tuple[list[str], list[int]]]) -> ParsedLog:
    """Parse an RKNN log arriving as blocks of (lines, numbers), e.g. from a `LogStream`.

    Only rows are kept, never lines, so memory follows what the log holds, not how long it is.
    `source` is read for its path, encoding and hash after the last block.
    """
    # Nothing the parse allocates is cyclic garbage; without the collector's repeated scans of the
    # growing row lists (hundreds of thousands of tuples) the parse runs ~10% faster.
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _parse_lines(source, blocks)
    finally:
        if collecting:
            gc.enable()


def _parse_lines(source: LogSource, blocks: Iterable[tuple[list[str], list[int]]]) -> ParsedLog:
    assembler = RknnAssembler(source)
    lexer = load_line_grammar("rknn").lexer
    classify = lexer.classify
    # Inside a table, try the one-regex matcher of its row first (it agrees with classify, see
    # LineLexer.row_matcher): table rows are half of a verbose log.
    tensor_matcher = lexer.row_matcher("NATIVE_PREFIX", "TENSOR_ROW")
    match_tensor, tensor_groups = tensor_matcher.match, tensor_matcher.indices(_TENSOR_FIELDS)
    layer_matcher = lexer.row_matcher("NATIVE_PREFIX", "LAYER_ROW")
    match_layer, layer_groups = layer_matcher.match, layer_matcher.indices(_LAYER_FIELDS)
    match_noise = lexer.row_matcher("NATIVE_PREFIX", "NATIVE_NOISE").match  # the other half
    # Pass markers: a sixth of a table-dense build log's lines (52 of fixture 09's 303).
    pass_matcher = lexer.row_matcher("NATIVE_PREFIX", "PASS_MARK")
    match_pass, pass_groups = (
        pass_matcher.match,
        (
            pass_matcher.body_groups["mark"],
            pass_matcher.body_groups["name"],
            pass_matcher.prefix_groups["ts"],
        ),
    )
    quiet = _QUIET_NOISE
    tensor_row, tensor_values = assembler._tensor_row, assembler._tensor_values
    layer_row, layer_values, feed = assembler._layer_row, assembler._layer_values, assembler.feed
    pass_values = assembler._pass_values
    counts = assembler.counts

    def feed_each(lines: list[str], numbers: list[int]) -> None:
        # The hot loop reads only locals (closure cells cost ~5% on a verbose log).
        a, classify_, quiet_, feed_ = assembler, classify, quiet, feed
        match_tensor_, tensor_groups_, tensor_values_ = match_tensor, tensor_groups, tensor_values
        match_layer_, layer_groups_, layer_values_ = match_layer, layer_groups, layer_values
        match_noise_, tensor_row_, layer_row_ = match_noise, tensor_row, layer_row
        match_pass_, pass_groups_, pass_values_ = match_pass, pass_groups, pass_values
        blank = noise = 0
        for line, number in zip(lines, numbers, strict=True):
            if not line:
                blank += 1
                a.open_message = None
                continue
            if len(line) > MAX_BLANK_RUN and refused(line):  # no terminal matches it, so no matcher may
                feed_("", Fields(), line, number)
                continue
            table = a.table
            if table == "feature" or table == "const":
                m = match_tensor_(line)
                if m is not None:
                    a.last_fed = number
                    a.open_message = None
                    tensor_values_(m.group(*tensor_groups_), number)
                    continue
            elif table == "layer":
                m = match_layer_(line)
                if m is not None:  # a prefixed row: never a perf row (those are bare)
                    a.last_fed = number
                    a.open_message = None
                    layer_values_(m.group(*layer_groups_), line, number)
                    continue
            elif match_noise_(line) is not None:
                noise += 1
                a.last_fed = number
                a.open_message = None
                continue
            if a.wrapped_perf is None:  # (else `feed` flushes the cut perf row first)
                m = match_pass_(line)
                if m is not None:
                    a.last_fed = number
                    a.open_message = None
                    mark, name, ts = m.group(*pass_groups_)
                    pass_values_(mark, name, ts, number)
                    continue
            kind, fields = classify_(line)
            if kind in quiet_:  # half of a verbose log: counted here, without a call
                noise += 1
                a.last_fed = number
                a.open_message = None
            elif kind == "TENSOR_ROW" or kind == "LAYER_ROW":  # rows outside a table context
                a.last_fed = number
                a.open_message = None
                (tensor_row_ if kind == "TENSOR_ROW" else layer_row_)(fields, line, number)
            else:
                feed_(kind, fields, line, number)
        counts["blank"] += blank
        counts["noise"] += noise

    def feed_block(lines: list[str], numbers: list[int]) -> None:
        """Runs of plain messages go to `bulk` (their first and last lines, and any line a category names,
        to `feed_each`, which does what a message does to the assembler's state); the rest to `feed_each`."""
        feed_with_runs(lines, numbers, _PLAIN_START, lambda: _bulk_regexes(lexer)[0], feed_each, read_plain)

    def read_plain(text: str, span: tuple[int, int], lines: list[str], numbers: list[int]) -> bool:
        categories = _bulk_regexes(lexer)[1]
        if assembler.traceback is not None or assembler.wrapped_perf is not None or categories is None:
            return False
        _feed_plain(text, span, lines, numbers, categories)
        return True

    def _feed_plain(
        text: str, span: tuple[int, int], lines: list[str], numbers: list[int], substrings: Substrings
    ) -> None:
        """The middle lines of a run: `span` is where they are in `text` (the block, joined)."""
        texts = _PLAIN_TEXT.findall(text, *span)
        levels = _levels(text, span, len(texts))
        done = 0
        for index in [*named_lines(texts, substrings), len(lines)]:  # a category: the ordinary path
            if index > done:
                part = levels if isinstance(levels, str) else levels[done:index]
                assembler._plain_run(part, texts[done:index], numbers[done:index])
            if index < len(lines):
                feed_each(lines[index : index + 1], numbers[index : index + 1])
            done = index + 1

    assembler.feed_lines(blocks, feed_block, located=feed_each)
    try:
        return assembler.finish()
    finally:
        assembler.release()
