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
Runs of plain messages are read as columns (`bulk`, `logscope.parsers.runs`), runs of table rows, noise
lines and pass markers matched in C and read column by column (`table_runs`); the rest line by line.
"""

from __future__ import annotations

import functools
import operator
import re
from collections.abc import Callable, Iterable, Sequence
from itertools import compress
from typing import Any

from logscope.collector import collector_paused
from logscope.io import LogSource, LogText
from logscope.model import ParsedLog
from logscope.parsers.grammar import (
    MAX_BLANK_RUN,
    Fields,
    LineLexer,
    load_line_grammar,
    refused,
    required_substrings,
)
from logscope.parsers.rknn import table_runs
from logscope.parsers.rknn.assembler import RknnAssembler
from logscope.parsers.rknn.bulk import (
    category_substrings,
    fusion_reader,
    joined_run,
    mark_reader,
    named_lines,
    native_reader,
    run_regex,
)
from logscope.parsers.rknn.state import _FOREIGN, _LAYER_FIELDS, _QUIET_NOISE, _TENSOR_FIELDS
from logscope.parsers.rknn.table_runs import noise_counter, run_from, table_readers, tensor_row_regex
from logscope.parsers.runs import feed_with_runs

__all__ = ["parse_rknn", "parse_rknn_blocks"]

Substrings = tuple[tuple[str, ...], tuple[str, ...]]
# A plain message line's level and text (the run regex has already checked its whole shape).
_PLAIN_LEVEL = re.compile(r"^[ \t]*([DIWE]) ", re.MULTILINE)
_PLAIN_TEXT = re.compile(r"^[ \t]*[DIWE] (.*)$", re.MULTILINE)


# Whether a match holds any group (`LineLexer.either_matcher`: a noise line's holds none).
_LAST_GROUP = operator.attrgetter("lastindex")
# Pass markers read as one run at most (a run goes on from where one stops).
_MARK_RUN = 1024

# Lines `feed` only counts, with no handler, when no cut perf row waits (`_FOREIGN`; table rules, and
# optimiser steps outside a fusion section, of `_NOISE`): the parse loop counts these too.
_COUNTED = _FOREIGN | {"TABLE_RULE", "OPT_STEP"}

# The kinds of the lines the noise-or-marker matcher matches (`LineLexer.either_matcher`).
_NOISE_OR_MARK = frozenset({"NATIVE_NOISE", "PASS_MARK"})

# Every run line is of this shape (`runs.may_hold_run`).
_PLAIN_START = re.compile(r"[ \t]{0,16}[DIWE] [A-Za-z0-9_][A-Za-z0-9_ ]*\Z")


def _levels_and_texts(text: str, span: tuple[int, int], count: int) -> tuple[list[str] | str, list[str]]:
    """The levels and texts of the `count` plain-message lines in `text[span]`. When every line starts
    with the same letter and a blank (counted in C: a newline, the letter, a blank), the level is that
    letter and the texts are what is left of the lines once `\n<letter> ` is removed: two C calls, no
    regex. Else one regex pass each."""
    start, end = span
    letter = text[start]
    if letter in "DIWE" and text.count(f"\n{letter} ", start - 1, end) == count:
        return letter, text[start + 2 : end - 1].replace(f"\n{letter} ", "\n").split("\n")
    texts: list[str] = _PLAIN_TEXT.findall(text, start, end)
    levels: list[str] = _PLAIN_LEVEL.findall(text, start, end)
    return levels, texts


@functools.cache
def _bulk_regexes(lexer: LineLexer) -> tuple[re.Pattern[str] | None, Substrings | None]:
    """The grammar's run regex and the categories' required strings (`bulk`), once per process."""
    return run_regex(lexer), category_substrings()


@functools.cache
def _required_string(lexer: LineLexer, terminal: str) -> str:
    """A string every match of `terminal` holds (`grammar.required_substrings`), or `""` (which every
    line holds) when no single one can be shown."""
    found = required_substrings(lexer.plan.terminals[terminal])
    if found is None or found[1] or len(found[0]) != 1:
        return ""
    return next(iter(found[0]))


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
    with collector_paused():
        return _parse_lines(source, blocks)


def _parse_lines(source: LogSource, blocks: Iterable[tuple[list[str], list[int]]]) -> ParsedLog:
    assembler = RknnAssembler(source)
    lexer = load_line_grammar("rknn").lexer
    classify = lexer.classify
    # Inside a table, try the one-regex matcher of its row first (it agrees with classify, see
    # LineLexer.row_matcher): table rows are half of a verbose log.
    tensor_matcher = lexer.row_matcher("NATIVE_PREFIX", "TENSOR_ROW")
    match_tensor, tensor_groups = tensor_matcher.match, tensor_matcher.indices(_TENSOR_FIELDS)
    fast_tensor = tensor_row_regex(lexer).match  # the same groups (`table_runs.tensor_row_regex`)
    # The rows after a run's first one, read from their lines joined (`table_runs.joined_rows`).
    read_fast_tensors, read_tensors, read_layers = table_readers(lexer)
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
    # Noise lines and pass markers, one regex (`LineLexer.either_matcher`): they come in runs.
    noise_pass = lexer.either_matcher("NATIVE_PREFIX", "NATIVE_NOISE", "PASS_MARK")
    match_noise_pass = noise_pass.match
    noise_pass_groups = (
        noise_pass.body_groups["mark"],
        noise_pass.body_groups["name"],
        noise_pass.prefix_groups["ts"],
    )
    quiet = _QUIET_NOISE
    remembered = lexer.remembered
    native_string = _required_string(lexer, "NATIVE_PREFIX")  # (`RKNN: `)
    tensor_row, tensor_rows = assembler._tensor_row, assembler._tensor_rows
    layer_row, layer_rows, feed = assembler._layer_row, assembler._layer_rows, assembler.feed
    pass_values = assembler._pass_values
    counts = assembler.counts
    # Native messages and fusion results come in runs (half the lines of the largest real compiler log,
    # and 92 per build of it): the lines after the first read joined, by kind.
    run_readers: dict[str, Callable[[list[str], list[int], int], int]] = {}
    read_native, read_fusions = native_reader(lexer), fusion_reader(lexer)
    if read_native is not None:
        run_readers["NATIVE_MSG"] = functools.partial(assembler._native_run, read_native)
    if read_fusions is not None:
        run_readers["FUSE_RESULT"] = functools.partial(assembler._fusion_run, read_fusions)
    read_marks = mark_reader(lexer)  # runs of pass markers, read joined
    count_noise = noise_counter(lexer)  # runs of noise lines, counted joined

    def feed_each(lines: list[str], numbers: list[int]) -> None:
        """Line by line, except that a line that starts a run of table rows, noise lines or pass markers
        is read with the rest of its run (`table_runs.run_from`: matched with no Python call per line,
        read column by column); see `table_runs` for why a run reads exactly as its lines one by one."""
        # The hot loop reads only locals (closure cells cost ~5% on a verbose log).
        a, classify_, quiet_, feed_ = assembler, classify, quiet, feed
        match_tensor_, tensor_groups_, tensor_rows_ = match_tensor, tensor_groups, tensor_rows
        match_layer_, layer_groups_, layer_rows_ = match_layer, layer_groups, layer_rows
        match_noise_, tensor_row_, layer_row_ = match_noise, tensor_row, layer_row
        match_pass_, pass_groups_, pass_values_ = match_pass, pass_groups, pass_values
        match_noise_pass_, noise_pass_groups_, run_from_ = match_noise_pass, noise_pass_groups, run_from
        run_readers_, native_ = run_readers, native_string
        fast_tensor_, read_fast_tensors_, read_tensors_, read_layers_ = (
            fast_tensor,
            read_fast_tensors,
            read_tensors,
            read_layers,
        )
        counted_, count_noise_, remembered_ = _COUNTED, count_noise, remembered
        blank = noise = foreign = 0
        positions: Any = iter(range(len(lines)))  # a range iterator: `__setstate__` moves it on
        for i in positions:
            line, number = lines[i], numbers[i]
            if not line:
                blank += 1
                a.open_message = None
                continue
            if len(line) > MAX_BLANK_RUN and refused(line):  # no terminal matches it, so no matcher may
                feed_("", Fields(), line, number)
                continue
            table = a.table
            pass_tried = False
            # The line's kind when `classify` already read it (a line an earlier build printed too): each
            # matcher below matches only lines `classify` reads as its own kind, so a remembered kind
            # other than that says it cannot match, and it is not tried; the line goes to `classify`,
            # which answers from memory. (Fixture 09's builds: about 40 lines a build, rules, headers and
            # totals in a table, compiler lines that are neither noise nor marker, each a failed match.)
            known = remembered_(line)
            kind = "" if known is None else known[0]
            if table == "feature" or table == "const":
                matcher: Callable[[str], re.Match[str] | None] = fast_tensor_
                m = None
                if known is None or kind == "TENSOR_ROW":
                    m = matcher(line)
                    if m is None:  # (a name cell with blanks in it)
                        matcher = match_tensor_
                        m = matcher(line)
                if m is not None:
                    # A run only once a build is open: opening one (the first row's) closes the table.
                    read = read_fast_tensors_ if matcher is fast_tensor_ else read_tensors_
                    rows = read(lines, i + 1) if read is not None and a.builds else None
                    if rows is not None:
                        rows.insert(0, m.group(*tensor_groups_))
                    else:
                        run = run_from_(matcher, m, lines, i) if a.builds else [m]
                        rows = [r.group(*tensor_groups_) for r in run]
                    last = i + len(rows)
                    a.last_fed = numbers[last - 1]
                    a.open_message = None
                    tensor_rows_(rows, numbers[i:last])
                    positions.__setstate__(last)
                    continue
            elif table == "layer":
                m = match_layer_(line) if known is None or kind == "LAYER_ROW" else None
                if m is not None:  # a prefixed row: never a perf row (those are bare)
                    rows = read_layers_(lines, i + 1) if read_layers_ is not None and a.builds else None
                    if rows is not None:
                        rows.insert(0, m.group(*layer_groups_))
                    else:
                        run = run_from_(match_layer_, m, lines, i) if a.builds else [m]
                        rows = [r.group(*layer_groups_) for r in run]
                    last = i + len(rows)
                    a.last_fed = numbers[last - 1]
                    a.open_message = None
                    layer_rows_(rows, lines[i:last], numbers[i:last])
                    positions.__setstate__(last)
                    continue
            elif a.wrapped_perf is None:
                # (both come after the native prefix: a line without the string it requires is neither,
                # and a substring test costs a third of the failed match)
                m = (
                    match_noise_pass_(line)
                    if native_ in line and (known is None or kind in _NOISE_OR_MARK)
                    else None
                )
                if m is not None and m.lastindex is not None and read_marks is not None:
                    # A marker: the markers after it read joined (`bulk.mark_reader`), as `run_from`
                    # would read them (a noise line ends the run; the loop reads it next).
                    after = joined_run(read_marks, lines, i + 1, _MARK_RUN)
                    if after:
                        _, stamps, signs, raws = zip(*after, strict=True)
                        mark, name, ts = m.group(*noise_pass_groups_)
                        if "" in stamps:  # (`findall` gives '' for the timestamp a line lacks)
                            stamps = tuple(stamp or None for stamp in stamps)
                        last = i + 1 + len(after)
                        a.open_message = None
                        pass_values_((mark, *signs), (name, *raws), (ts, *stamps), numbers[i:last])
                        a.last_fed = numbers[last - 1]
                        positions.__setstate__(last)
                        continue
                if m is not None:
                    run = run_from_(match_noise_pass_, m, lines, i)
                    last = i + len(run)
                    a.open_message = None
                    marks = 0
                    # (a noise line's match holds no group: a run of noise alone is only counted)
                    marked = list(map(_LAST_GROUP, run))
                    if any(marked):
                        run_numbers: Sequence[int] = numbers[i:last]
                        if None in marked:  # noise lines among the markers: only counted, never read
                            run = list(compress(run, marked))
                            run_numbers = list(compress(run_numbers, marked))
                        columns: list[Sequence[Any]] = list(
                            zip(*[r.group(*noise_pass_groups_) for r in run], strict=True)
                        )
                        marks = len(run_numbers)
                        pass_values_(columns[0], columns[1], columns[2], run_numbers)
                    elif len(run) == table_runs.MAX_RUN and count_noise_ is not None:
                        # A run of noise alone cut at its bound: the noise lines after it, which the
                        # loop would take run after run, counted joined (`table_runs.joined_count`; a
                        # marker or any other line ends them, and the loop reads it next). Short runs,
                        # and runs holding markers, read as before: counting a run of a few noise
                        # lines, then reading the markers after it apart, cost more than the run.
                        taken = count_noise_(lines, last)
                        if taken:
                            last += taken
                    noise += last - i - marks
                    a.last_fed = numbers[last - 1]
                    positions.__setstate__(last)
                    continue
                pass_tried = True
            elif (known is None or kind == "NATIVE_NOISE") and match_noise_(line) is not None:
                # (a cut perf row is open: a pass marker flushes it)
                noise += 1
                a.last_fed = number
                a.open_message = None
                continue
            if not pass_tried and a.wrapped_perf is None:  # (else `feed` flushes the cut perf row first)
                m = match_pass_(line) if known is None or kind == "PASS_MARK" else None
                if m is not None:
                    a.last_fed = number
                    a.open_message = None
                    mark, name, ts = m.group(*pass_groups_)
                    pass_values_((mark,), (name,), (ts,), (number,))
                    continue
            kind, fields = classify_(line) if known is None else known
            if kind in quiet_:  # half of a verbose log: counted here, without a call
                noise += 1
                a.last_fed = number
                a.open_message = None
            elif kind in counted_ and a.wrapped_perf is None and (kind != "OPT_STEP" or not a.fuse_section):
                # A sixth of a table-dense build log's lines (48 of fixture 09's 303): what `feed` does with
                # them when no cut perf row waits, without the call. The script's prints and foreign
                # loggers are counted; so are table rules, which keep the open message; an optimiser step
                # outside a fusion section moves nothing else.
                a.last_fed = number
                if kind == "TABLE_RULE":
                    noise += 1
                    continue
                a.open_message = None
                if kind == "OPT_STEP":
                    noise += 1
                else:
                    foreign += 1
            elif kind == "TENSOR_ROW" or kind == "LAYER_ROW":  # rows outside a table context
                a.last_fed = number
                a.open_message = None
                (tensor_row_ if kind == "TENSOR_ROW" else layer_row_)(fields, line, number)
            else:
                feed_(kind, fields, line, number)
                read_run = run_readers_.get(kind)
                if read_run is not None:
                    taken = read_run(lines, numbers, i + 1)
                    if taken:
                        positions.__setstate__(i + 1 + taken)
        counts["blank"] += blank
        counts["noise"] += noise
        counts["foreign"] += foreign
        a.native_ahead = None  # (it holds the block)

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
        levels, texts = _levels_and_texts(text, span, len(lines))
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
