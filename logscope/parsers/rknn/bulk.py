"""Runs of plain toolkit messages (`I x`, `W some words`) read as columns, with no Python call per line.

A log of a million one-word messages spent 3.5 µs on each line (two alternations, a handler, a row),
fifteen times a real log's cost per byte. Such lines are the cheapest to recognise, so a block is first
scanned with one regex for runs of them, in C, and a run's middle lines become one `MessageRun` of
columns. What makes that exact, not a guess:

- **The run regex's line pattern accepts only lines `classify` reads as `PY_PREFIX` + `PY_PLAIN`.** The
  lines are `[ \t]*[DIWE] ` and a body of ASCII word characters and spaces that starts with a word character
  (at most `runs.MAX_BODY` characters, far under every line limit). Each terminal `classify` would try on
  such a body before `PY_PLAIN` is proven unable to match it (`grammar.requires_outside`: every string
  it matches holds a character outside that set); first characters for which a rival cannot be ruled
  out (`rknn building done` is `BUILD_DONE`) are left out of the run regex. The start terminals ranked
  before `PY_PREFIX` are proven the same way, or shown to cover at most one word character of a line
  (`grammar.most_matched`) where these lines hold two. When any of this cannot be shown for the grammar
  in hand, there is no run regex and every line takes the ordinary path.
- **A run's first and last lines take the ordinary path**, so what a message does to the assembler's
  state (closing a traceback or a wrapped perf row, the open message a continuation line extends) is
  done by the ordinary code; the middle lines change nothing but the counts and the rows.
- **Lines whose text names a message category** (`out of memory`, `Killed`, ...) also take the ordinary
  path. Every category's pattern requires one of a few strings (`grammar.required_substrings`); only
  the texts holding one (found by `str.find` over the run) are classified, and those a category names
  are handed over.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Any

from logscope.parsers import categories
from logscope.parsers.grammar import LineLexer, most_matched, required_substrings, requires_outside
from logscope.parsers.rknn.table_runs import JOINED_RUN, RowReader, joined_rows
from logscope.parsers.runs import MAX_BODY, WORD, WORDS

_LINE_CHARS = WORDS | {"\t"}
# The prefix the run regex spells out; another grammar's PY_PREFIX turns the fast path off.
_PY_PREFIX = "[ \t]*(?P<level>[DIWE]) "
_MAX_INDENT = 16


@dataclass(frozen=True)
class MessageRun:
    """Consecutive `messages` rows of plain toolkit messages, column by column.

    Every row has `line == end_line`, the run's logger, its timestamp if any, no function or category,
    and is not fatal.
    """

    build_index: int
    lines: list[int]
    levels: list[str] | str  # one level for the whole run, or one per row
    texts: list[str]
    logger: str | None = None  # the run's logger (`RKNN` for native messages)
    timestamps: list[str | None] | None = None  # one per row (native messages), or none at all


def run_regex(lexer: LineLexer) -> re.Pattern[str] | None:
    """The regex that finds, in a block joined as `"\n" + "\n".join(lines) + "\n"`, the newline before
    each line that is *not* a plain message (and the last newline), or None when exactness cannot be
    shown. Runs are the gaps between its matches (`split_runs`): searching for the exceptions with
    one look-ahead per line is 3x faster than matching the runs as repeated groups."""
    plan = lexer.plan
    if plan.terminals.get("PY_PREFIX") != _PY_PREFIX or not lexer.tries_after("PY_PREFIX", "PY_PLAIN"):
        return None
    start, after = plan.order[""], plan.order["PY_PREFIX"]
    for name in start[: start.index("PY_PREFIX")]:
        regexp = plan.terminals[name]
        if requires_outside(regexp, _LINE_CHARS):
            continue
        if not name.endswith("_PREFIX") and most_matched(regexp, WORD) < 2:
            continue  # it must cover the line, which holds two word characters (the level, the body's first)
        return None
    firsts = ""
    rivals = after[: after.index("PY_PLAIN")]
    for ch in sorted(WORD):
        trying = [n for n in rivals if (first := plan.firsts[n]) is None or ord(ch) in first]
        if all(requires_outside(plan.terminals[n], WORDS) for n in trying):
            firsts += ch
    if not firsts:
        return None
    indent, body = f"[ \\t]{{0,{_MAX_INDENT}}}", f"[A-Za-z0-9_ ]{{0,{MAX_BODY - 1}}}"
    line = f"{indent}[DIWE] [{re.escape(firsts)}]{body}\\n"
    return re.compile(f"\\n(?!{line})")


# A native message's fields, in the order the native-message row matcher holds them.
NATIVE_FIELDS = ("NATIVE_PREFIX__level", "NATIVE_PREFIX__ts", "NATIVE_MSG__message")


@functools.cache  # once per lexer (and process)
def native_reader(lexer: LineLexer) -> RowReader | None:
    r"""A reader of runs of native messages (`W RKNN: [ts] <text>` that no other native body takes), or
    None when exactness cannot be shown (`table_runs.joined_rows`).

    It is `joined_rows` of `row_matcher("NATIVE_PREFIX", "NATIVE_MSG")`, which matches a line exactly
    when `classify` reads it as that prefix and that body: the terminals ranked before the prefix at
    the line start and before the body after it (for the first characters it admits) are negative
    look-aheads in it, each as `classify` tries it. First characters that more than two bodies ranked
    before `NATIVE_MSG` may start with (`I`, `R`, `T`, digits, ...) are left to `classify`.
    """
    if not lexer.tries_after("NATIVE_PREFIX", "NATIVE_MSG"):
        return None
    pattern = lexer.row_pattern("NATIVE_PREFIX", "NATIVE_MSG")
    return joined_rows(pattern, NATIVE_FIELDS, lexer.stored_regex)


# The fields of a pass marker, in the order the pass-marker row matcher holds them (the level only
# because `joined_rows` needs a first field that every match fills).
MARK_FIELDS = ("NATIVE_PREFIX__level", "NATIVE_PREFIX__ts", "PASS_MARK__mark", "PASS_MARK__name")


@functools.cache  # once per lexer (and process)
def mark_reader(lexer: LineLexer) -> RowReader | None:
    """A reader of runs of pass markers: `joined_rows` of `row_matcher("NATIVE_PREFIX", "PASS_MARK")`,
    which matches a line exactly when `classify` reads it as a pass marker; None when that cannot be
    shown."""
    if not lexer.tries_after("NATIVE_PREFIX", "PASS_MARK"):
        return None
    return joined_rows(lexer.row_pattern("NATIVE_PREFIX", "PASS_MARK"), MARK_FIELDS, lexer.stored_regex)


# The fields of a fusion result, in the order its row matcher holds them (the level: see `MARK_FIELDS`).
FUSION_FIELDS = ("PY_PREFIX__level", "FUSE_RESULT__rule", "FUSE_RESULT__body")


@functools.cache  # once per lexer (and process)
def fusion_reader(lexer: LineLexer) -> RowReader | None:
    """A reader of runs of fusion results (`I     rule: remove node = [...], add node = [...]`):
    `joined_rows` of `row_matcher("PY_PREFIX", "FUSE_RESULT", 5)`, which matches a line exactly when
    `classify` reads it as a fusion result. Their body starts with blanks, where five terminals are
    tried first (tracebacks, exceptions, progress bars, ...): each is a look-ahead of the matcher."""
    if not lexer.tries_after("PY_PREFIX", "FUSE_RESULT"):
        return None
    pattern = lexer.row_pattern("PY_PREFIX", "FUSE_RESULT", _FUSION_RIVALS)
    full = joined_rows(pattern, FUSION_FIELDS, lexer.stored_regex)
    if full is None:
        return None
    return _without_rivals(lexer, "PY_PREFIX", "FUSE_RESULT", _FUSION_SLOW, pattern, FUSION_FIELDS, full)


_FUSION_RIVALS = 5
# The look-ahead for an exception line (`(?:[A-Za-z_]\w*\.)*\w*(?:Error|...)`, backtracking over the
# rule's name) was two thirds of a fusion result's regex time (1.75 -> 0.60 us a row on the largest real
# compiler log, whose 92 a build it reads); the other eight, 0.27 us together, cost less left in than
# the search for their strings (0.6 us a row).
_FUSION_SLOW = ("EXCEPTION",)


def _without_rivals(
    lexer: LineLexer,
    prefix: str,
    body: str,
    rivals: tuple[str, ...],
    pattern: str,
    fields: tuple[str, ...],
    full: RowReader,
) -> RowReader:
    """`full` (`joined_rows(pattern, fields)`, `pattern` a `row_matcher` of `prefix` + `body`), reading
    first without the look-aheads for `rivals` (bodies ranked before `body`) for which a set of strings
    one of which every match holds can be shown (`grammar.required_substrings`). When no line this
    wider read takes holds one of those strings, no rival can match any of them, so `full` would take
    the same lines with the same fields; when one does, `full` reads them."""
    narrow, needles = pattern, set[str]()
    for name in rivals:
        guard = f"(?!{lexer.anchored(name)})" if name in lexer.plan.terminals else ""
        found = required_substrings(lexer.plan.terminals[name]) if guard else None
        if narrow.count(guard) != 1 or found is None or found[1] or "" in found[0]:
            continue
        narrow = narrow.replace(guard, "")
        needles |= found[0]
    quick = joined_rows(narrow, fields, lexer.stored_regex) if needles else None
    if quick is None:
        return full
    strings = tuple(sorted(needles))

    def read(lines: list[str], start: int) -> list[tuple[str | None, ...]] | None:
        rows = quick(lines, start)
        if not rows:
            return rows
        text = "\n".join(lines[start : start + len(rows)])
        for needle in strings:
            if needle in text:
                return full(lines, start)
        return rows

    return read


def joined_run(read: RowReader, lines: list[str], start: int, most: int) -> list[tuple[str | None, ...]]:
    """The rows `read` takes from `lines[start]` on, up to the first line it refuses, read `JOINED_RUN`
    lines at a time, at most about `most` (a run goes on from where one stops)."""
    rows: list[tuple[str | None, ...]] = []
    while len(rows) < most:
        chunk = read(lines, start + len(rows))
        if not chunk:
            break
        rows += chunk
        if len(chunk) < JOINED_RUN:
            break
    return rows


def category_substrings() -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    """Strings one of which every message a category names holds: (as written, lower-cased for the
    case-blind patterns), or None when some category's pattern requires no string that can be shown."""
    exact: set[str] = set()
    folded: set[str] = set()
    for category in categories.CATEGORIES:
        found = required_substrings(category.pattern.pattern)
        if found is None:
            return None
        strings, ignore_case = found
        if ignore_case:
            folded.update(text.lower() for text in strings)
        else:
            exact.update(strings)
    return tuple(sorted(exact)), tuple(sorted(folded))


def named_lines(texts: list[str], substrings: tuple[tuple[str, ...], tuple[str, ...]]) -> list[int]:
    """Indices, ascending, of the texts a message category names (`categories.classify_message`).

    Only texts holding one of the categories' required strings can be named; those are found with
    `str.find` over the texts joined with newlines, and only they are classified.
    """
    exact, folded = substrings
    joined = "\n".join(texts)
    hits: list[int] = []
    for haystack, needles in ((joined, exact), (joined.lower() if folded else "", folded)):
        for needle in needles:
            pos = haystack.find(needle)
            while pos != -1:
                hits.append(pos)
                pos = haystack.find(needle, pos + 1)
    if not hits:
        return []
    hits.sort()
    candidates: list[int] = []
    line = pos = 0
    for hit in hits:
        line += joined.count("\n", pos, hit)
        pos = hit
        if not candidates or candidates[-1] != line:
            candidates.append(line)
    return [i for i in candidates if categories.classify_message(texts[i]) is not None]


def messages_frame(items: list[Any], columns: tuple[str, ...]) -> Any:
    """The `messages` frame from rows (lists in `columns` order) and `MessageRun`s, in line order.

    Integer and boolean columns are assembled as numpy arrays (a run's line numbers are a range when no
    physical line was split), text columns as lists; columns no row fills are left to be made <NA>.
    """
    import numpy as np

    from logscope.frames import build_frame_columns

    text_columns = ("level", "logger", "func", "timestamp", "category", "message")
    texts: dict[str, list[Any]] = {column: [] for column in text_columns}
    # Per text column a run may leave empty: (position in the column, rows) of each run's empty cells.
    gaps: dict[str, list[tuple[int, int]]] = {column: [] for column in text_columns}
    numbers: dict[str, list[Any]] = {"build_index": [], "line": [], "end_line": [], "fatal": []}
    filled = {"level", "message"}  # the text columns runs fill
    pending: list[Any] = []
    size = 0

    def flush() -> None:
        for column, cells in zip(columns, zip(*pending, strict=True), strict=True):
            if column in texts:
                texts[column].extend(cells)
                if column not in filled and any(cell is not None for cell in cells):
                    filled.add(column)
            elif column == "fatal":
                numbers[column].append(np.array(cells, dtype=bool))
            else:  # integers, unless a row left one out
                numbers[column].append(np.array(cells, dtype=object if None in cells else np.int64))
        pending.clear()

    for item in items:
        if not isinstance(item, MessageRun):
            pending.append(item)
            size += 1
            continue
        flush()
        count, lines = len(item.lines), item.lines
        consecutive = lines[-1] - lines[0] == count - 1
        line_numbers = np.arange(lines[0], lines[-1] + 1) if consecutive else np.array(lines, dtype=np.int64)
        numbers["build_index"].append(np.full(count, item.build_index, dtype=np.int64))
        numbers["line"].append(line_numbers)
        numbers["end_line"].append(line_numbers.copy())
        numbers["fatal"].append(np.zeros(count, dtype=bool))
        levels = item.levels
        texts["level"].extend([levels] * count if isinstance(levels, str) else levels)
        texts["message"].extend(item.texts)
        for column, cells in (("logger", item.logger), ("timestamp", item.timestamps)):
            if cells is None:
                gaps[column].append((len(texts[column]), count))
                continue
            texts[column].extend([cells] * count if isinstance(cells, str) else cells)
            if column not in filled and (isinstance(cells, str) or any(cell is not None for cell in cells)):
                filled.add(column)
        for column in ("func", "category"):
            gaps[column].append((len(texts[column]), count))
        size += count
    flush()
    data: dict[str, Any] = {column: _with_gaps(texts[column], gaps[column]) for column in filled}
    for column, pieces in numbers.items():
        joined = np.concatenate(pieces) if pieces else np.zeros(0, dtype=np.int64)
        data[column] = joined.tolist() if joined.dtype == object else joined
    return build_frame_columns("messages", data, size)


def _with_gaps(cells: list[Any], gaps: list[tuple[int, int]]) -> list[Any]:
    """A column runs leave empty (logger, function, timestamp, category) holds only the rows' cells:
    put each run's missing cells back where the run was."""
    if not gaps:
        return cells
    out: list[Any] = []
    done = 0
    for at, count in gaps:
        out.extend(cells[done:at])
        out.extend([None] * count)
        done = at
    out.extend(cells[done:])
    return out
