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
"""

from __future__ import annotations

import gc
from collections.abc import Iterable

from logscope.io import LogSource, LogText
from logscope.model import ParsedLog
from logscope.parsers.grammar import load_line_grammar
from logscope.parsers.rknn.assembler import RknnAssembler
from logscope.parsers.rknn.state import _LAYER_FIELDS, _QUIET_NOISE, _TENSOR_FIELDS

__all__ = ["parse_rknn", "parse_rknn_blocks"]


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

    def feed_block(lines: list[str], numbers: list[int]) -> None:
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

    assembler.feed_lines(blocks, feed_block)
    try:
        return assembler.finish()
    finally:
        assembler.release()
