"""Runs of lines that all read the same simple way, found in C and read as columns: what both families share.

A block (the lines `logscope.io` hands over) is joined as `"\n" + "\n".join(lines) + "\n"`, and a
family's *exception regex* finds the newline before each line that is *not* of the run's shape; runs are
the gaps of at least `MIN_RUN` lines between two such newlines (`split_runs`). Searching for the
exceptions with one look-ahead per line is about 3x faster than matching runs as repeated groups, and a
block with no run costs one scan. Each family proves from its grammar that every line of the shape
classifies the way its run reader assumes (`logscope.parsers.rknn.bulk`, `logscope.parsers.mcu`), and
reads a run's first and last lines the ordinary way, so the state those lines leave is the ordinary one.
"""

from __future__ import annotations

import re
import string
from collections.abc import Callable, Iterable, Iterator

from logscope.parsers.grammar import LineLexer, required_substrings, requires_outside

# Shorter runs are not worth a join and a scan (a real log's runs of such lines are a few lines long).
MIN_RUN = 32
# Every run of `MIN_RUN` lines holds `SAMPLES` consecutive lines of every `STRIDE`-th: a block where no
# `SAMPLES` consecutive samples have the run's shape holds no run, and is not joined and scanned (a real
# log: with two samples 16 lines apart, a verbose build log passed the test and paid the scan for nothing).
STRIDE = 8
SAMPLES = MIN_RUN // STRIDE
WORD = frozenset(string.ascii_letters + string.digits + "_")
WORDS = WORD | {" "}
MAX_BODY = 1000  # characters of a run line: far under every line limit (`grammar.MAX_BLANK_RUN`)


FeedLines = Callable[[list[str], list[int]], None]
# Reads a run's middle lines (the joined block, their span in it, the lines, their numbers); False when
# the assembler's state does not allow it, and the lines are then fed one by one.
ReadMiddle = Callable[[str, tuple[int, int], list[str], list[int]], bool]


def feed_with_runs(
    lines: list[str],
    numbers: list[int],
    sample: re.Pattern[str],
    exceptions: Callable[[], re.Pattern[str] | None],
    each: FeedLines,
    middle: ReadMiddle,
) -> None:
    """Feed a block: the runs the exception regex leaves (see `split_runs`) to `middle`, their first and
    last lines and everything else to `each`, the family's line-by-line loop. The exception regex is asked
    for only when the block passes the sample test: building it costs a proof over the grammar (once per
    process), which a log without runs never pays."""
    finder = exceptions() if may_hold_run(lines, sample) else None
    if finder is None:
        each(lines, numbers)
        return
    text = "\n" + "\n".join(lines) + "\n"  # every line between two newlines
    done = 0
    for first, stop, span in split_runs(text, finder.finditer(text)):
        each(lines[done : first + 1], numbers[done : first + 1])
        done = stop - 1
        run_lines, run_numbers = lines[first + 1 : done], numbers[first + 1 : done]
        if not middle(text, span, run_lines, run_numbers):
            each(run_lines, run_numbers)
    each(lines[done:], numbers[done:])


def may_hold_run(lines: list[str], sample: re.Pattern[str]) -> bool:
    """False when the block cannot hold a run: no two consecutive samples match `sample` (a regex every
    run line matches)."""
    return len(lines) >= MIN_RUN and b"\x01" * SAMPLES in bytes(map(bool, map(sample.match, lines[::STRIDE])))


def split_runs(text: str, exceptions: Iterable[re.Match[str]]) -> Iterator[tuple[int, int, tuple[int, int]]]:
    """Runs of at least `MIN_RUN` plain-message lines in `text` (a block joined as `run_regex` says),
    from the newlines before the lines that are not plain messages: per run, its line indices
    [first, stop) and the character span of its middle lines (all but the first and the last)."""
    previous, previous_at = -1, 0  # the last line that is not a plain message, and its newline
    line = pos = 0
    for m in exceptions:
        at = m.start()
        line += text.count("\n", pos, at)  # the line after the newline at `at` (the text opens with one)
        pos = at
        if line - previous - 1 >= MIN_RUN:
            first_start = text.index("\n", previous_at + 1) + 1 if previous >= 0 else 1
            middle_start = text.index("\n", first_start) + 1
            middle_end = text.rindex("\n", 0, at) + 1
            yield previous + 1, line, (middle_start, middle_end)
        previous, previous_at = line, at


def unrecognised_run_regex(lexer: LineLexer) -> re.Pattern[str] | None:
    """The exception regex for runs of lines the grammar's catch-all `OTHER` takes: lines of ASCII word
    characters and spaces (starting with a word character) that no terminal ranked before `OTHER` can
    match. A rival is ruled out by a character outside that set it requires (`requires_outside`), or,
    failing that, by strings one of which it requires (`required_substrings`): a run line holds none of
    them (a look-ahead). First characters for which a rival is ruled out neither way are left out.
    None when `OTHER` is not the last, catch-all terminal, or no first character is left.
    """
    plan = lexer.plan
    start = plan.order[""]
    if not start or start[-1] != "OTHER" or plan.terminals["OTHER"] != "[^\n]+":
        return None
    rivals = start[:-1]
    firsts, forbidden = "", set[str]()
    for ch in sorted(WORD):
        trying = [n for n in rivals if (first := plan.firsts[n]) is None or ord(ch) in first]
        needs: set[str] = set()
        for name in trying:
            regexp = plan.terminals[name]
            if requires_outside(regexp, WORDS):
                continue
            found = required_substrings(regexp)
            if found is None:
                break
            strings, folded = found
            needs |= {f"(?i:{re.escape(t)})" if folded else re.escape(t) for t in strings}
        else:
            firsts += ch
            forbidden |= needs
    if not firsts:
        return None
    absent = f"(?![^\\n]*?(?:{'|'.join(sorted(forbidden))}))" if forbidden else ""
    line = f"{absent}[{re.escape(firsts)}][A-Za-z0-9_ ]{{0,{MAX_BODY - 1}}}\\n"
    return re.compile(f"\\n(?!{line})")
