"""Reading a printed table by its layout: column boundaries from the header, empty cells as NA.

Tools print tables as fixed-width text: a header line, often a dashed rule, then rows whose cells start
under their column's name. Copies of those tables lose what a one-regex-per-row reader needs:

- a cell is empty when it does not apply (eval_perf 2.x leaves MacUsage blank on non-conv rows and
  FullName blank on some rows); a row with an empty cell has fewer tokens than the header has columns;
- pasting collapses runs of spaces into one, so positions no longer say which column a token is in;
- an excerpt may start below the header, so the layout must be recognised from the rows themselves.

`Layout` holds the column names, where each column starts (from the header line, or from the dashed
rule when it is segmented) and what kind of value each column holds. `read_row` returns one cell per
column (None for an empty cell) or None when the row cannot be read with this layout (the caller keeps
it as an unparsed row with a reason). A row whose token count equals the column count is read token by
token (the common case, and the only one a long table pays for); fewer tokens are aligned to columns by
their positions and value kinds. `identify` picks, for header-less rows, the candidate layout whose column
count and value kinds the rows fit, and the result is marked `headerless`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

_TOKEN = re.compile(r"\S+")
_RULE_SEGMENT = re.compile(r"-+")
Cells = tuple[str | None, ...]


@dataclass(frozen=True)
class Layout:
    """Columns of one printed table.

    `starts[i]`: offset of column i from the start of the first column, or None when the header's
    spacing is unknown (collapsed). `kinds[i]`: a regex a non-empty cell must match in full (None: any
    token). `nullable[i]`: the column may be empty. `rest`: the last column takes every remaining token
    (free text such as a layer's full name). `headerless`: identified from rows, not read from a header.
    """

    names: tuple[str, ...]
    starts: tuple[int, ...] | None
    kinds: tuple[re.Pattern[str] | None, ...]
    nullable: tuple[bool, ...]
    rest: bool = False
    headerless: bool = False

    @property
    def width(self) -> int:
        return len(self.names)


def layout_from_header(
    header: str,
    *,
    known: Sequence[str] = (),
    kinds: Mapping[str, str] | None = None,
    nullable: Sequence[str] = (),
    rule: str | None = None,
    rest: bool = False,
) -> Layout:
    """The layout of a header line such as `OpType  CallNumber  CPUTime(us) ...`.

    Columns are separated by two or more spaces; names made of several words (`Call Number`,
    `DDR Cycles`) stay one column. When the header was pasted with single spaces, the `known` column
    names (longest first) are found in it instead, and the layout has no positions. A `rule` made of
    several dash runs (`-----  -------`) gives the boundaries when it has as many runs as columns.
    """
    kinds = kinds or {}
    first = len(header) - len(header.lstrip())
    spans = [(m.start(), m.group()) for m in re.finditer(r"\S+(?: \S+)*", header)]
    names = [name for _, name in spans]
    starts: list[int] | None = [start - first for start, _ in spans]
    if known and any(name not in known for name in names):
        found = _split_known(header.strip(), known)
        if found is not None:
            names, starts = found, None
    if rule is not None and starts is not None:
        runs = [m.start() for m in _RULE_SEGMENT.finditer(rule)]
        rule_first = len(rule) - len(rule.lstrip())
        if len(runs) == len(names):
            starts = [r - rule_first for r in runs]
    return Layout(
        names=tuple(names),
        starts=tuple(starts) if starts is not None else None,
        kinds=tuple(re.compile(kinds[n]) if n in kinds else None for n in names),
        nullable=tuple(n in nullable for n in names),
        rest=rest,
    )


def _split_known(text: str, known: Sequence[str]) -> list[str] | None:
    """`OpType CallNumber CPUTime(us)` -> the known names in order; None if something else is in it."""
    by_length = sorted(known, key=len, reverse=True)
    names: list[str] = []
    pos = 0
    while pos < len(text):
        if text[pos] == " ":
            pos += 1
            continue
        for name in by_length:
            if text.startswith(name, pos) and (pos + len(name) == len(text) or text[pos + len(name)] == " "):
                names.append(name)
                pos += len(name)
                break
        else:
            return None
    return names


def read_row(layout: Layout, text: str, origin: int = 0, start: int | None = None) -> Cells | None:
    """The cells of one row (None = empty cell), or None when the row does not fit the layout.

    `origin` is the offset in `text` that the layout's column positions count from (rows and header
    share a line prefix of the same width, such as `D RKNN: [ts] `, so the caller passes the offset its
    prefix ends at). `start` is where the cells begin, when the layout covers only the row's last
    columns (default: `origin`).
    """
    pos = origin if start is None else start
    tokens = [(m.start() - origin, m.group()) for m in _TOKEN.finditer(text, pos)]
    width = layout.width
    if len(tokens) > width and layout.rest:
        head, tail = tokens[: width - 1], tokens[width - 1 :]
        tokens = [*head, (tail[0][0], " ".join(t for _, t in tail))]
    if len(tokens) == width:
        cells = tuple(t for _, t in tokens)
        if _fits(layout, cells):
            return cells
    if len(tokens) >= width:
        return None
    return _align(layout, tokens)


def _fits(layout: Layout, cells: Cells) -> bool:
    for cell, kind, nullable in zip(cells, layout.kinds, layout.nullable, strict=True):
        if cell is None:
            if not nullable:
                return False
        elif kind is not None and kind.fullmatch(cell) is None:
            return False
    return True


def _align(layout: Layout, tokens: list[tuple[int, str]]) -> Cells | None:
    """Assign tokens, in order, to columns so that skipped columns are nullable and every token fits
    its column's kind. Among the assignments, the one closest to the header's column positions wins
    (without positions: the one that leaves the latest columns empty is as good as any other, so the
    first found is taken)."""
    width, count = layout.width, len(tokens)
    starts = layout.starts
    best: tuple[float, Cells] | None = None

    def place(col: int, tok: int, cells: list[str | None], cost: float) -> None:
        nonlocal best
        if best is not None and cost >= best[0]:
            return
        if tok == count:
            if all(layout.nullable[c] for c in range(col, width)):
                best = (cost, (*cells, *([None] * (width - col))))
            return
        if width - col < count - tok:
            return
        start, token = tokens[tok]
        kind = layout.kinds[col]
        if kind is None or kind.fullmatch(token):
            penalty = abs(start - starts[col]) if starts is not None else 0
            place(col + 1, tok + 1, [*cells, token], cost + penalty)
        if layout.nullable[col]:
            place(col + 1, tok, [*cells, None], cost)

    place(0, 0, [], 0.0)
    return best[1] if best is not None else None


def identify(rows: Sequence[str], candidates: Sequence[Layout]) -> Layout | None:
    """The first candidate layout every row can be read with, marked `headerless`; None if none fits.

    Rows without their header carry no positions worth trusting, so the layout returned has none.
    """
    for layout in candidates:
        loose = replace(layout, starts=None, headerless=True)
        if rows and all(read_row(loose, row.strip()) is not None for row in rows):
            return loose
    return None
