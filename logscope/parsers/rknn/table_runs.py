"""Runs of table rows, noise lines and pass markers, matched with no Python call per line.

Three kinds of lines are most of a verbose build log: tensor- and layer-table rows (a table-dense log:
50,000 tensor rows and 18,000 layer rows in 528 builds), compiler noise and pass markers (half of a
verbose log). Line by line, each cost a loop turn, a matcher call and a handler call: more than the
regex. They come in runs (a table's rows, the noise lines of one pass, the markers of passes that print
nothing), so when the parse loop meets the first line of one, `run_from` matches the lines after it
with the same matcher, in C (`map` stopped by `takewhile` at the first line it refuses), and the
handlers read the run column by column (`_tensor_rows`, `_layer_rows`, the markers' own handler).

Why a run reads exactly as its lines one by one:

- **The same matcher decides.** A line joins the run only when the matcher the loop would have tried on
  it, in the state the loop would have been in, matches it: inside a tensor table the tensor-row
  matcher, inside a layer table the layer-row matcher, elsewhere noise-or-marker
  (`LineLexer.either_matcher`, the two row matchers as one alternation). Each agrees with `classify`
  (`LineLexer.row_matcher`; tests/test_grammars.py).
- **No line of the run changes what the loop would try on the next one.** A table row changes no
  context; nor does a noise line. A pass marker may close the table or open a build, and both leave
  the loop outside a table, where it tries noise-or-marker again; a run of table rows starts only
  once a build is open (the first row would open one, and opening a build closes the table).
  What a marker reads (the line number, the open passes, the build) is set as the loop would set it
  before each marker; a cut perf row waiting for its continuation (`wrapped_perf`) stops markers from
  joining (a marker must flush it first, on the ordinary path).
- **Lines the loop treats apart are left to it.** A run never holds a blank line (no matcher matches
  one) and stops before a line longer than `MAX_BLANK_RUN`, which the loop first checks is not one no
  terminal may match (`grammar.refused`). Blocks holding pieces of one physical line are fed one line
  at a time (`base.feed_glued`), so a run never crosses them.

Table rows after a run's first line are read from the lines joined (`joined_rows`): one `findall` yields
each row's fields as a tuple, with no match object and no `group` call per row (a fifth of a row's
cost). The regex is the row matcher's, rewritten so that it matches a line followed by `\n` exactly
when the matcher matches the line alone (`line_bound` checks the proof on the pattern).

Tensor rows are matched by a narrower regex than the tensor-row matcher (`tensor_row_regex`): half the
regex work, exactly the same groups on every line it matches; a row it refuses is tried by the
tensor-row matcher on the ordinary path, which may start a run again.

Noise lines are only counted, so when a run of noise alone reaches `MAX_RUN`, the noise lines after it
are counted from their lines joined (`joined_count`, `noise_counter`): one match of the noise matcher's
regex repeated over the text, with no match object per line (a third of a noise line's cost; a CI build
log is 30-70 % noise, in runs of hundreds of lines). A marker or any other line ends the count; the loop
reads it next, as it reads the line after any run.

tests/test_table_runs.py parses every fixture, generated logs and mangled copies both ways.
"""

from __future__ import annotations

import functools
import operator
import re
import re._constants as _sre_constants
import re._parser as _sre_parser
from collections.abc import Callable, Iterator
from itertools import groupby, islice, takewhile
from typing import Any

from logscope.parsers.grammar import _NAMED_GROUP, MAX_BLANK_RUN, LineLexer, _class_admits
from logscope.parsers.kept import kept

_MATCHED = functools.partial(operator.is_not, None)
# A run's match objects are held until it is read, then freed among the rows that stay: a bound keeps
# that memory flat however long the run, at the cost of one loop turn per `MAX_RUN` lines. At 2,048 the
# freed matches left the allocator's pools fragmented: benchmarks/run.py's parse RSS grew 1.26x from
# 20 % to 80 % noise lines (limit 1.10); at 256, 1.07x; at 64, 0.97x, as line by line (0.98x).
MAX_RUN = 64


def run_from(
    match: Callable[[str], re.Match[str] | None], first: re.Match[str], lines: list[str], start: int
) -> list[re.Match[str]]:
    """`first` (the match of `lines[start]`), then the matches of the lines after it up to the first
    line `match` refuses, or that is longer than `MAX_BLANK_RUN` (left to the loop's own checks); at
    most `MAX_RUN` lines (the loop starts the next run where this one stops)."""
    rest = iter(lines)
    rest.__setstate__(start + 1)  # type: ignore[attr-defined]  # a list iterator, moved in O(1)
    run = [first]
    run.extend(takewhile(_MATCHED, map(match, islice(rest, MAX_RUN - 1))))  # type: ignore[arg-type]
    if len(run) > 1 and max(map(len, lines[start + 1 : start + len(run)])) > MAX_BLANK_RUN:
        long = next(j for j in range(start + 1, start + len(run)) if len(lines[j]) > MAX_BLANK_RUN)
        del run[long - start :]
    return run


# The tensor-row terminal's name cell and its look-ahead, as the grammar spells them inside the matcher
# (Lark writes the grammar's `\n` as the character itself).
_LAZY_NAME = "(?P<TENSOR_ROW__name>\\S(?:[^\n]*?\\S)?)"
_BAR_AHEAD = "(?=[^\n]*\\| *0x)"
_TOKEN_NAME = r"(?P<TENSOR_ROW__name>\S\S+)"
# The prefix's timestamp digits and the id cell, and the same with ASCII digits (`tensor_row_regex`).
_TS_DIGITS, _TS_ASCII = r"\d\d:\d\d:\d\d\.\d+", "[0-9][0-9]:[0-9][0-9]:[0-9][0-9]\\.[0-9]+"
_ID_DIGITS, _ID_ASCII = r"(?P<TENSOR_ROW__id>\d+)", "(?P<TENSOR_ROW__id>[0-9]+)"


@functools.cache  # once per lexer (and process)
def tensor_row_regex(lexer: LineLexer) -> re.Pattern[str]:
    r"""A regex that matches a subset of the lines `row_matcher("NATIVE_PREFIX", "TENSOR_ROW")` matches,
    with the same groups: tensor rows whose name cell has no blank (every row of the fixtures), at about
    half the cost. The matcher itself when its pattern is not the one this was proven on.

    Two changes to the matcher's pattern, each proven not to change a match:
    - **No look-ahead for `| 0x`.** It only spares the lazy name scan a hopeless search; what follows
      the name requires `| 0x` after it anyway, so a line that matches satisfies it.
    - **The name cell is one blank-free token of two characters or more (`\S\S+`)**, where the terminal
      reads `\S(?:[^\n]*?\S)?`, the shortest name after which the rest of the row matches, lengths
      2, 3, ... tried first and 1 last (the optional group is greedy). Before the name everything is
      fixed (an id, a user token, blanks: no other way to match them), and the name must be followed
      by a blank. If the token at the name is T >= 2 characters long, every shorter length >= 2 ends
      inside the token, before a non-blank, and fails; the terminal then tries length T, exactly as
      this regex does, and matches the rest from the same position in the same way. A one-character
      token is refused: the terminal would first try longer names spanning blanks
      (`a INT8 (1) | ...` read with the name `a INT8`), which `\S\S+` cannot do.
    - **ASCII digits in the timestamp and the id** (`[0-9]` for `\d`, which takes any script's
      digits; 6 % off the match). A path of this regex is one of the matcher's, so when this regex
      matches, the matcher does, and the same way: its earlier choices were the same. The timestamp
      is taken when `[` and ASCII digits up to `] ` follow the prefix, as `\d` would take it; when
      `[` follows and they are not ASCII this regex skips the timestamp, then refuses the line (a
      digit must follow the prefix). The id's digits are followed by a blank, so `\d+` takes no more.
    Its optional groups are branches (`optional_groups_as_branches`: the same regex, cheaper).
    """
    pattern = lexer.row_pattern("NATIVE_PREFIX", "TENSOR_ROW")
    if pattern.count(_LAZY_NAME) != 1 or pattern.count(_BAR_AHEAD) != 1:
        matcher: re.Pattern[str] = lexer.row_matcher("NATIVE_PREFIX", "TENSOR_ROW").match.__self__  # type: ignore[attr-defined]
        return matcher
    narrow = pattern.replace(_BAR_AHEAD, "").replace(_LAZY_NAME, _TOKEN_NAME)
    if narrow.count(_TS_DIGITS) == 1 and narrow.count(_ID_DIGITS) == 1:
        ascii = narrow.replace(_TS_DIGITS, _TS_ASCII).replace(_ID_DIGITS, _ID_ASCII)
        if "\\d" not in ascii:
            narrow = ascii
    return lexer.stored_regex(optional_groups_as_branches(narrow))


def _pieces(pattern: str) -> Iterator[tuple[int, str, bool]]:
    """(position, character or escape such as `\\d`, inside a character class) of each piece of a
    regex's text, in order (a `]` first in a class is one of its characters)."""
    i, end, in_class = 0, len(pattern), False
    while i < end:
        piece = pattern[i : i + 2] if pattern[i] == "\\" else pattern[i]
        if in_class:
            yield i, piece, True
            in_class = piece != "]"
        elif piece == "[":
            yield i, piece, False
            i += 1
            for first in ("^", "]"):
                if pattern.startswith(first, i):
                    yield i, first, True
                    i += 1
            in_class = True
            continue
        else:
            yield i, piece, False
        i += len(piece)


@kept
def optional_groups_as_branches(pattern: str) -> str:
    r"""`pattern` with each greedy optional non-capturing group `(?:X)?` written `(?:X|)`: the same
    regex, read the same way (X tried first, then nothing; a group inside X set only when X matched),
    and cheaper in `re`, which allocates a repeat's state for each `?` group it enters, where a branch
    only remembers where it started (8 % off a tensor row's match: its timestamp, DataFormat,
    NativeShape and SRAM cells are such groups). Lazy (`??`) and possessive (`?+`) groups are left."""
    out = list(pattern)
    starts: list[int] = []
    for i, piece, in_class in _pieces(pattern):
        if in_class or len(piece) > 1:
            continue
        if piece == "(":
            starts.append(i)
        elif piece == ")":
            start = starts.pop()
            if (
                pattern.startswith("(?:", start)
                and pattern.startswith("?", i + 1)
                and not pattern.startswith(("??", "?+"), i + 1)
            ):
                out[i], out[i + 1] = "|", ")"
    return "".join(out)


# The layer-row terminal's shape cells (`_SHAPES`), as the grammar spells them, each followed by what
# follows it there, and the same cells with possessive repeats (`bar_free_layer_pattern`).
_SHAPES = "(?:\\\\|\\([0-9,]*\\)(?:,\\([0-9,]*\\))*(?:,\\.\\.\\.)?)"
_POSSESSIVE_SHAPES = "(?:\\\\|\\([0-9,]*+\\)(?:,\\([0-9,]*+\\))*+(?:,\\.\\.\\.)?+)"
_INPUTS_CELL = f"(?P<LAYER_ROW__inputs>{_SHAPES}) +(?P<LAYER_ROW__output>"
_OUTPUT_CELL = f"(?P<LAYER_ROW__output>{_SHAPES}) *(?P<LAYER_ROW__tail>[^\n]*))\\Z"


@functools.cache  # once per lexer (and process)
def bar_free_layer_pattern(lexer: LineLexer) -> str | None:
    r"""The pattern of `row_matcher("NATIVE_PREFIX", "LAYER_ROW")` without its tensor-row guard and with
    possessive repeats in its shape cells: on a line that holds no `|`, it matches exactly when the
    matcher does, with the same groups, at two thirds of the cost; None when the matcher's pattern is
    not the one this was proven on.

    - **No tensor-row guard.** The matcher refuses a line the tensor-row terminal (ranked before the
      layer row) takes whole: `(?!TENSOR_ROW\Z)`, a look-ahead that scans the line for `| *0x` (a
      quarter of the match). The tensor-row terminal starts with `(?=[^\n]*\| *0x)`: on a line
      without a `|` it never matches, the guard holds, and dropping it (a look-ahead: it consumes
      nothing) leaves every step of the match as it was. `joined_rows` reads with this pattern only
      the lines before the first `|` of the text it joins.
    - **Possessive shape repeats** (`[0-9,]*+`, `(?:,(...))*+`, `(?:,\.\.\.)?+`): a repeat that
      gives nothing back only loses a match that needs it to give something back. Inside a shape,
      `[0-9,]*` is followed by `\)`, which refuses the digit or comma given back. InputShape is
      followed by ` +`: giving back `,(...)` or `,...` leaves a `,` there, which ` +` refuses (and
      `(?:,\.\.\.)?` takes only before `.`). OutputShape is followed by ` *` and the tail
      `[^\n]*`, which takes the rest of the line whatever it holds, then the line's end: nothing
      after it ever fails, so it is never asked to give anything back.
    """
    pattern = lexer.row_pattern("NATIVE_PREFIX", "LAYER_ROW")
    tensor = lexer.anchored("TENSOR_ROW")
    guard = f"(?!{tensor})"
    if (
        not tensor.startswith("(?:(?=[^\n]*\\| *0x)")
        or any(pattern.count(piece) != 1 for piece in (guard, _INPUTS_CELL, _OUTPUT_CELL))
        or pattern.count(_SHAPES) != 2
        or not pattern.endswith(_OUTPUT_CELL)
    ):
        return None
    return pattern.replace(guard, "").replace(_SHAPES, _POSSESSIVE_SHAPES)


def repeats_likely(lines: list[str]) -> bool:
    """Whether `lines` holds a run of equal lines worth reading once: a line equal to the next one at
    `REPEAT_PROBE` intervals, so a run of more than `REPEAT_PROBE` lines is always seen. 4 comparisons
    for a 64-line chunk, 0.1-0.5 us: comparing every neighbour cost 4 us, 2-3 % of reading the chunk's
    table rows, and `any` over a generator 1.2-1.8 us (a table-dense log of 20 MB makes 5,300 reads)."""
    for i in range(0, len(lines) - 1, REPEAT_PROBE):  # noqa: SIM110 - a loop: see above
        if lines[i] == lines[i + 1]:
            return True
    return False


def equal_runs(lines: list[str]) -> tuple[list[str], list[int]]:
    """The distinct lines of `lines` in order, one per run of equal neighbours, and each run's length."""
    keys: list[str] = []
    sizes: list[int] = []
    for key, run in groupby(lines):
        keys.append(key)
        sizes.append(sum(1 for _ in run))
    return keys, sizes


# Tools repeat a message in bursts: rknn-toolkit2 2.3-2.5 prints `tensor name: ... is already in
# IndependentMap` 391 times per build of a small transformer, in runs of up to 64 equal lines (one per
# millisecond of its timestamp), half of that log's lines. A joined read takes each run as one line.
REPEAT_PROBE = 16
# Lines a joined read takes at most (a run goes on from where one stops, as with `MAX_RUN`): what it
# keeps is the rows' fields, not match objects, so the bound only limits the text joined past a run's end
# (at 256, joining the lines after a 34-row layer table cost what reading its rows joined saved).
JOINED_RUN = 64
# Where a whole-line matcher requires the end of the line: `\Z`, and `(?=\n|$)` (Lark writes `\n` as
# the character itself). In lines joined with `\n` both become "a newline follows".
_LINE_END = re.compile(r"(?<!\\)((?:\\\\)*)\\Z")
_NL_OR_END = "(?=\n|$)"
_NEWLINE = ord("\n")
RowReader = Callable[[list[str], int], list[tuple[str | None, ...]] | None]


def joined_rows(
    pattern: str,
    fields: tuple[str, ...],
    compile: Callable[[str], re.Pattern[str]] = re.compile,
    bar_free: str | None = None,
) -> RowReader | None:
    r"""A reader of the rows after a run's first line, or None when exactness cannot be shown.

    `pattern` is a whole-line matcher (`match` at the line's start, `\Z` at its end) and `fields` the
    names of its groups to read, in the order they appear in it. `reader(lines, start)` returns the
    fields (`''` for a group that took no part in the match, where the matcher gives None) of
    `lines[start]`, `lines[start + 1]`, ... up to the first line the matcher refuses, or that is
    longer than `MAX_BLANK_RUN`, at most `JOINED_RUN` lines; None when the lines cannot be joined
    (one of those read holds a newline), and the caller reads them one by one. `bar_free`, when given,
    is a pattern that reads every line without a `|` as `pattern` does (`bar_free_layer_pattern`): the
    lines before the first `|` of the joined text are read with it, the rest with `pattern`.

    Exactness: the other groups become non-capturing; `\Z` becomes `(?=\n)`; `line_bound` checks that
    nothing else in the pattern can consume a newline or see across one (no `^`, `$`, look-behind,
    newline literal), so at a line's start in `"\n".join(lines) + "\n"` the regex followed by `\n`
    matches exactly when the matcher matches the line alone, with the same groups. Each field must
    take part in every match or be at least one character long where it matches (`findall` gives
    `''` for a group that took no part, so `''` then means None), and the first must be both: a
    line the regex refuses ends the run through the second branch, which takes the rest of the text
    and no field (a tuple whose first field is `''`); it is `(?s:.+)`, one jump to the end, where
    `[\s\S]+` tested each character's class (0.3 ms for a 30 KB rest, more than the rows it ended).
    The `bar_free` regex reads the text up to the start of the line holding the first `|` (`findall`
    with an end: the lines before it end with their `\n` inside it); when it reads all those lines,
    `pattern`'s regex reads on from there, as it would have.
    """
    findall = _joined_findall(pattern, fields, compile)
    if findall is None:
        return None
    free = findall if bar_free is None else _joined_findall(bar_free, fields, compile)
    if free is None:
        return None

    def read(lines: list[str], start: int) -> list[tuple[str | None, ...]] | None:
        chunk = lines[start : start + JOINED_RUN]
        if repeats_likely(chunk):
            keys, sizes = equal_runs(chunk)
            if len(keys) <= len(chunk) // 2:
                # Each run of equal lines read as one line, its row repeated: exact, because a line's
                # row depends on the line alone (`line_bound`) and the lines are read in order, so the
                # rows of the distinct lines, each repeated as often as its line, are the chunk's rows
                # up to the same first refused (or cut, or too long) line, and a line holding a newline
                # gives None either way.
                rows = read_chunk(keys)
                if not rows:
                    return rows
                out: list[tuple[str | None, ...]] = []
                for row, size in zip(rows, sizes[: len(rows)], strict=True):  # (fewer: one is refused)
                    out += [row] * size
                return out
        return read_chunk(chunk)

    def read_chunk(chunk: list[str]) -> list[tuple[str | None, ...]] | None:
        size = len(chunk)
        if not size:
            return []
        chunk.append("")  # (the text's last newline, joined in: no second copy of the text)
        text = "\n".join(chunk)
        if free is findall:
            rows: list[tuple[str | None, ...]] = findall(text)
        else:
            bar = text.find("|")
            cut = len(text) if bar < 0 else text.rfind("\n", 0, bar) + 1
            rows = free(text, 0, cut)
            if cut < len(text) and (not rows or rows[-1][0]) and len(rows) == text.count("\n", 0, cut):
                rows += findall(text, cut)
        if rows and not rows[-1][0]:
            rows.pop()
        if not rows:
            return rows
        # The rows are the text's first lines; they are `chunk`'s first lines when none of those holds a
        # newline (more rows than lines: one does). Looked for in those lines joined with nothing, which
        # `in` searches with memchr: counting the newlines of the rows' text (the same answer) walked it
        # character by character, 9 us for a 58-row table, more than the rest of the read but the regex.
        count = len(rows)
        if count > size:
            return None
        read_lines = chunk[:count]
        if "\n" in "".join(read_lines):
            return None
        if max(map(len, read_lines)) > MAX_BLANK_RUN:
            del rows[next(j for j, line in enumerate(read_lines) if len(line) > MAX_BLANK_RUN) :]
        return rows

    return read


# Lines `joined_count` joins at a time (the run goes on in the next chunk while every line matched): it
# keeps no match object, so unlike `MAX_RUN` the bound only limits the text joined past a run's end. The
# first chunk is short and each next one four times longer, up to the bound: most noise runs of a
# table-dense log are a line or a dozen long, and joining the 256 lines of the table after one cost
# 23 us a run (3 % of the parse of fixture 09 repeated).
JOINED_FIRST = 8
JOINED_COUNT = 256
LineCounter = Callable[[list[str], int], int | None]


def joined_count(pattern: str, compile: Callable[[str], re.Pattern[str]] = re.compile) -> LineCounter | None:
    r"""A counter of the lines after a run's first one that a whole-line matcher matches, for lines only
    counted (noise): None when exactness cannot be shown.

    `pattern` is a whole-line matcher (`match` at the line's start, `\Z` at its end).
    `count(lines, start)` is the number of lines from `lines[start]` on that it matches, up to the first
    line it refuses or that is longer than `MAX_BLANK_RUN` (what `run_from` takes after its first line,
    with no bound and no match object); None when a line it read holds a newline (the caller then reads
    with `run_from`).

    Exactness: the pattern is rewritten as for `joined_rows` (groups non-capturing, `\Z` as `(?=\n)`;
    `line_bound` holds), so at a line's start in `"\n".join(chunk) + "\n"` it matches, followed by
    `\n`, exactly when the matcher matches the line alone; `(?:...\n)*` then takes the lines one by one
    from the text's start up to the first it refuses, one call in C for the whole chunk. Those are
    `chunk`'s first lines when none of them holds a newline: when their lengths and newlines add up to
    where the match ended.
    """
    rewritten = _joined_pattern(pattern, ())
    if rewritten is None:
        return None
    try:
        match = compile(f"(?:(?:{rewritten})\n)*").match
    except re.error:
        return None

    def count(lines: list[str], start: int) -> int | None:
        total, step = 0, JOINED_FIRST
        while True:
            at = start + total
            chunk = lines[at : at + step]
            step = min(4 * step, JOINED_COUNT)
            if not chunk:
                return total
            text = "\n".join(chunk) + "\n"
            end = match(text).end()  # type: ignore[union-attr]  # (a repeat matches the empty string)
            taken = text.count("\n", 0, end)
            if not taken:
                return total
            lengths = list(map(len, chunk[:taken]))
            if sum(lengths) + taken != end:  # a line holding a newline
                return total or None
            if max(lengths) > MAX_BLANK_RUN:
                return total + next(j for j, size in enumerate(lengths) if size > MAX_BLANK_RUN)
            total += taken
            if taken < len(chunk):
                return total

    return count


@kept
def _joined_pattern(pattern: str, fields: tuple[str, ...]) -> str | None:
    """`pattern` rewritten for lines joined with `\n` (`joined_rows`): the groups not in `fields` made
    non-capturing, the line's end a look-ahead for `\n`, optional groups branches
    (`optional_groups_as_branches`: the same regex). None when `line_bound` cannot show it exact."""
    wanted = set(fields)
    kept_groups = _NAMED_GROUP.sub(lambda m: m.group(0) if m.group(1) in wanted else "(?:", pattern)
    ended = _LINE_END.sub(lambda m: f"{m.group(1)}(?=\n)", kept_groups.replace(_NL_OR_END, "(?=\n)"))
    rewritten = optional_groups_as_branches(ended)
    try:
        parsed = _sre_parser.parse(rewritten)
    except re.error:
        return None
    if not line_bound(list(parsed), dotall=bool(parsed.state.flags & re.DOTALL)):
        return None
    return rewritten


@kept
def _fields_read_exactly(rewritten: str, count: int) -> bool:
    """Whether `findall` tells each of the first `count` groups of `rewritten` (a `_joined_pattern`)
    apart from a group that took no part: each takes part in every match or is at least one character
    long, and the first is both (`joined_rows`)."""
    items = list(_sre_parser.parse(rewritten))
    widths = _group_widths(items)
    if any(widths.get(i, 0) < 1 and not _required_group(items, i) for i in range(1, count + 1)):
        return False
    return widths.get(1, 0) >= 1 and _required_group(items, 1)


def _joined_findall(
    pattern: str, fields: tuple[str, ...], compile: Callable[[str], re.Pattern[str]]
) -> Callable[..., list[tuple[str | None, ...]]] | None:
    """`findall` of `pattern` rewritten for joined lines (`joined_rows`), or None when exactness cannot be
    shown."""
    rewritten = _joined_pattern(pattern, fields)
    if rewritten is None:
        return None
    try:
        regex = compile(f"(?:{rewritten})\n|(?s:.+)")
    except re.error:
        return None
    if tuple(sorted(regex.groupindex, key=regex.groupindex.__getitem__)) != fields or regex.groups != len(
        fields
    ):
        return None
    if not _fields_read_exactly(rewritten, len(fields)):
        return None
    return regex.findall


def line_bound(items: list[Any], dotall: bool = False) -> bool:
    r"""True when nothing in the parsed regex (sre's parse) can consume a newline or look past one, but a
    `(?=\n)` look-ahead: no `^`, `\A`, `$`, `\Z`, no look-behind, no newline literal, no class or `.`
    that admits a newline. Conservative: a construct this does not model answers False."""
    c = _sre_constants
    for op, arg in items:
        if op is c.LITERAL:
            if arg == _NEWLINE:
                return False
        elif op is c.NOT_LITERAL:
            if arg != _NEWLINE:
                return False
        elif op is c.ANY:
            if dotall:
                return False
        elif op is c.IN:
            if _class_admits(arg, "\n"):  # (unknown parts admit it)
                return False
        elif op in (c.MAX_REPEAT, c.MIN_REPEAT, getattr(c, "POSSESSIVE_REPEAT", c.MAX_REPEAT)):
            if not line_bound(list(arg[2]), dotall):
                return False
        elif op is c.SUBPATTERN:
            _group, add_flags, del_flags, sub = arg
            inner = (dotall or bool(add_flags & re.DOTALL)) and not del_flags & re.DOTALL
            if not line_bound(list(sub), inner):
                return False
        elif op is getattr(c, "ATOMIC_GROUP", None):
            if not line_bound(list(arg), dotall):
                return False
        elif op is c.BRANCH:
            if not all(line_bound(list(branch), dotall) for branch in arg[1]):
                return False
        elif op is c.ASSERT:
            direction, sub = arg
            if direction != 1:
                return False
            if list(sub) != [(c.LITERAL, _NEWLINE)] and not line_bound(list(sub), dotall):
                return False
        elif op is c.ASSERT_NOT:
            direction, sub = arg
            if direction != 1 or not line_bound(list(sub), dotall):
                return False
        elif op is c.AT:
            if arg not in (c.AT_BOUNDARY, c.AT_NON_BOUNDARY):  # (a newline is no word character)
                return False
        elif op is not c.GROUPREF:  # (a group holds no newline, so neither does its repetition)
            return False
    return True


def _group_widths(items: list[Any]) -> dict[int, int]:
    """{group number: the fewest characters it can match} of every capturing group."""
    c = _sre_constants
    widths: dict[int, int] = {}
    for op, arg in items:
        if op is c.SUBPATTERN:
            group, _add, _del, sub = arg
            if group is not None:
                widths[group] = sub.getwidth()[0]
            widths |= _group_widths(list(sub))
        elif op in (c.MAX_REPEAT, c.MIN_REPEAT, getattr(c, "POSSESSIVE_REPEAT", c.MAX_REPEAT)):
            widths |= _group_widths(list(arg[2]))
        elif op is getattr(c, "ATOMIC_GROUP", None):
            widths |= _group_widths(list(arg))
        elif op is c.BRANCH:
            for branch in arg[1]:
                widths |= _group_widths(list(branch))
        elif op in (c.ASSERT, c.ASSERT_NOT):
            widths |= _group_widths(list(arg[1]))
    return widths


def _required_group(items: list[Any], group: int) -> bool:
    """True when group `group` takes part in every match: it sits in the top-level sequence, or in a
    group, atomic group or repetition of at least one that does (never only in a branch or look-around)."""
    c = _sre_constants
    for op, arg in items:
        if op is c.SUBPATTERN:
            if arg[0] == group or _required_group(list(arg[3]), group):
                return True
        elif op is getattr(c, "ATOMIC_GROUP", None):
            if _required_group(list(arg), group):
                return True
        elif (
            op in (c.MAX_REPEAT, c.MIN_REPEAT, getattr(c, "POSSESSIVE_REPEAT", c.MAX_REPEAT))
            and arg[0] >= 1
            and _required_group(list(arg[2]), group)
        ):
            return True
    return False


@functools.cache  # once per lexer (and process)
def noise_counter(lexer: LineLexer) -> LineCounter | None:
    """`joined_count` of `row_matcher("NATIVE_PREFIX", "NATIVE_NOISE")`: the noise alternative of the
    parse loop's noise-or-marker matcher (`LineLexer.either_matcher`), which matches a line exactly when
    that matcher matches it with no group (a noise line, not a marker)."""
    if not lexer.tries_after("NATIVE_PREFIX", "NATIVE_NOISE"):
        return None
    return joined_count(lexer.row_pattern("NATIVE_PREFIX", "NATIVE_NOISE"), lexer.stored_regex)


@functools.cache  # once per lexer (and process)
def table_readers(lexer: LineLexer) -> tuple[RowReader | None, RowReader | None, RowReader | None]:
    """`joined_rows` of the narrow tensor-row regex, of the tensor-row matcher and of the layer-row matcher
    (lines without a `|` read without its tensor-row guard: `bar_free_layer_pattern`), compiled through
    the grammar's store of compiled programs."""
    from logscope.parsers.rknn.state import _LAYER_FIELDS, _TENSOR_FIELDS

    tensor_fields = tuple(f"TENSOR_ROW__{name}" for name in _TENSOR_FIELDS)
    layer_fields = tuple(f"LAYER_ROW__{name}" for name in _LAYER_FIELDS)
    return (
        joined_rows(tensor_row_regex(lexer).pattern, tensor_fields, lexer.stored_regex),
        joined_rows(lexer.row_pattern("NATIVE_PREFIX", "TENSOR_ROW"), tensor_fields, lexer.stored_regex),
        joined_rows(
            lexer.row_pattern("NATIVE_PREFIX", "LAYER_ROW"),
            layer_fields,
            lexer.stored_regex,
            bar_free=bar_free_layer_pattern(lexer),
        ),
    )
