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

Tensor rows are matched by a narrower regex than the tensor-row matcher (`tensor_row_regex`): half the
regex work, exactly the same groups on every line it matches; a row it refuses is tried by the
tensor-row matcher on the ordinary path, which may start a run again.

tests/test_table_runs.py parses every fixture, generated logs and mangled copies both ways.
"""

from __future__ import annotations

import functools
import operator
import re
from collections.abc import Callable
from itertools import islice, takewhile

from logscope.parsers.grammar import MAX_BLANK_RUN, LineLexer

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
    """
    pattern = lexer.row_pattern("NATIVE_PREFIX", "TENSOR_ROW")
    if pattern.count(_LAZY_NAME) != 1 or pattern.count(_BAR_AHEAD) != 1:
        matcher: re.Pattern[str] = lexer.row_matcher("NATIVE_PREFIX", "TENSOR_ROW").match.__self__  # type: ignore[attr-defined]
        return matcher
    return lexer.stored_regex(pattern.replace(_BAR_AHEAD, "").replace(_LAZY_NAME, _TOKEN_NAME))
