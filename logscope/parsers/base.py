"""What every log-family assembler shares: line accounting, unparsed rows, and declared segmentation.

A parser classifies each line with its grammar and hands it to a *handler* (one per grammar terminal).
The base assembler owns what must not differ between families:

- **Line accounting.** Every physical line lands in exactly one class of `LINE_CLASSES` and
  `line_counts["total"]` is the number of physical lines. `logscope.io` may split one physical line into
  several logical lines (tqdm frames glued by carriage returns); such a line is counted once, in the
  class of its highest-ranked piece (`_RANK`), so an unreadable piece is never hidden behind a readable one.
- **Unparsed rows.** A line that no handler reads, or a row inside a recognised table that cannot be
  read, becomes an `unparsed` row with its line number and a reason; it is never dropped.
- **Segmentation from a declared table.** Which line kinds start a new build, session or run is data
  (`Boundary` entries keyed by terminal), not calls scattered over handlers. A boundary names the marks
  that, when the current segment already carries one of them, make the line open a new segment.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

import pandas as pd

from logscope.errors import note_where
from logscope.frames import build_frame, build_frame_columns
from logscope.parsers.grammar import Fields

LINE_CLASSES = ("structural", "message", "noise", "foreign", "blank", "unparsed")
# When one physical line holds several logical lines, the most telling piece decides its class.
_RANK = {"unparsed": 5, "message": 4, "structural": 3, "foreign": 2, "noise": 1, "blank": 0}
MAX_UNPARSED_CHARS = 500


class Handler(Protocol):
    """Reads one classified line: counts it (via the assembler) and turns its fields into rows or context."""

    def __call__(self, fields: Fields, line: str, number: int, /) -> None: ...


@dataclass(frozen=True)
class Boundary:
    """A line kind that may start a new segment (build, session, run).

    `when_has`: the marks of the current segment that make this line start a new one (a second
    `librknnc version` line in a build that already has one is a second build). `inherit`: the new
    segment keeps what a process prints once for several segments (toolkit banner, target).
    `sets`: the mark this line gives its segment, or None.
    """

    when_has: frozenset[str]
    inherit: bool = True
    sets: str | None = None


class Segment(Protocol):
    index: int

    def holds_any(self, wanted: frozenset[str]) -> bool:
        """Whether the segment holds any of the marks `wanted` (a boundary's `when_has`): asked on
        every line of a boundary's kind, so a segment answers without listing all its marks."""
        ...


S = TypeVar("S", bound=Segment)


@dataclass(frozen=True)
class UnparsedRun:
    """Consecutive unparsed lines with one reason, column by column (`logscope.parsers.runs`)."""

    lines: list[int]
    reason: str
    texts: list[str]


class LineAccount:
    """Counts of physical lines per class, and the unparsed rows (line, reason, text)."""

    __slots__ = ("counts", "has_runs", "unparsed_rows")

    def __init__(self) -> None:
        self.counts: dict[str, int] = dict.fromkeys(LINE_CLASSES, 0)
        self.unparsed_rows: list[dict[str, Any] | UnparsedRun] = []
        self.has_runs = False

    def unparsed(self, number: int, line: str, reason: str) -> None:
        self.counts["unparsed"] += 1
        self.unparsed_rows.append({"line": number, "reason": reason, "text": line[:MAX_UNPARSED_CHARS]})

    def unparsed_run(self, numbers: list[int], lines: list[str], reason: str) -> None:
        """Many unparsed lines at once: what `unparsed` does for each, in one row of columns."""
        self.counts["unparsed"] += len(numbers)
        if max(map(len, lines)) > MAX_UNPARSED_CHARS:
            lines = [line[:MAX_UNPARSED_CHARS] for line in lines]
        self.unparsed_rows.append(UnparsedRun(numbers, reason, lines))
        self.has_runs = True

    def frame(self) -> pd.DataFrame:
        """The `unparsed` frame, in line order."""
        if not self.has_runs:
            return build_frame("unparsed", self.unparsed_rows)  # type: ignore[arg-type]
        lines: list[int] = []
        reasons: list[str] = []
        texts: list[str] = []
        for row in self.unparsed_rows:
            if isinstance(row, UnparsedRun):
                lines += row.lines
                reasons += [row.reason] * len(row.lines)
                texts += row.texts
            else:
                lines.append(row["line"])
                reasons.append(row["reason"])
                texts.append(row["text"])
        return build_frame_columns("unparsed", {"line": lines, "reason": reasons, "text": texts}, len(lines))

    def snapshot(self) -> tuple[int, ...]:
        counts = self.counts
        return tuple(counts[c] for c in LINE_CLASSES)

    def class_since(self, before: tuple[int, ...]) -> str | None:
        """The one class counted since `before`, None if nothing was (a handler that did not count)."""
        counts = self.counts
        for name, was in zip(LINE_CLASSES, before, strict=True):
            if counts[name] != was:
                return name
        return None

    def line_counts(self) -> dict[str, int]:
        return {"total": sum(self.counts.values()), **self.counts}


def has_glued_lines(numbers: list[int]) -> bool:
    """True when a block holds several logical lines of one physical line (else numbers ascend by one)."""
    return bool(numbers) and numbers[-1] - numbers[0] + 1 != len(numbers)


def feed_glued(
    account: LineAccount, lines: list[str], numbers: list[int], feed_line: Callable[[str, int], None]
) -> None:
    """Feed a block that has glued pieces, then count each physical line once (its highest-ranked piece).

    Slow (a snapshot per line), so parsers call it only for the rare blocks `has_glued_lines` flags.
    """
    counts = account.counts
    current, classes = -1, list[str]()
    for line, number in zip(lines, numbers, strict=True):
        if number != current:
            _merge(counts, classes)
            current, classes = number, list[str]()
        before = account.snapshot()
        feed_line(line, number)
        cls = account.class_since(before)
        if cls is not None:
            classes.append(cls)
    _merge(counts, classes)


def _line_at(exc: BaseException, feed_block: Callable[..., None]) -> int | None:
    """The line number `feed_block` was reading when `exc` was raised: its loop variable `number` in the
    innermost frame of `feed_block` on the traceback (None if the exception came from elsewhere)."""
    code = getattr(feed_block, "__code__", None)
    line = None
    tb = exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code is code:
            number = tb.tb_frame.f_locals.get("number")
            line = number if isinstance(number, int) else line
        tb = tb.tb_next
    return line


def _merge(counts: dict[str, int], classes: list[str]) -> None:
    if len(classes) < 2:
        return
    keep = max(classes, key=_RANK.__getitem__)
    for cls in classes:
        counts[cls] -= 1
    counts[keep] += 1


class BaseAssembler(Generic[S]):
    """Dispatch by terminal, line accounting and declared segmentation; a family subclass adds handlers.

    Subclasses set `NOISE` and `FOREIGN` (terminals counted, never stored), `BOUNDARIES` (the declared
    segmentation table) and fill `self.handlers` ({terminal: Handler}); `new_segment` builds a segment.
    """

    NOISE: frozenset[str] = frozenset()
    FOREIGN: frozenset[str] = frozenset()
    BOUNDARIES: Mapping[str, Boundary] = {}

    def __init__(self) -> None:
        self.account = LineAccount()
        self.counts = self.account.counts
        self.segments: list[S] = []
        self.handlers: dict[str, Handler] = {}
        self.last_fed = 0  # the last non-blank line: where the current segment ends so far

    # ------------------------------------------------------------------ accounting
    def structural(self) -> None:
        self.counts["structural"] += 1

    def unparsed(self, number: int, line: str, reason: str) -> None:
        self.account.unparsed(number, line, reason)

    def feed_lines(
        self,
        blocks: Iterable[tuple[list[str], list[int]]],
        feed_block: Callable[[list[str], list[int]], None],
        located: Callable[..., None] | None = None,
    ) -> None:
        """Run `feed_block` over each block, or `feed_glued` line by line when a block has glued pieces.

        An unexpected exception leaves with the line it happened on (`errors.note_where`): the `number`
        `feed_block` (or the per-line function `located` it calls) was at, read from its frame, so the
        hot loop pays nothing for it.
        """
        try:
            for lines, numbers in blocks:
                if has_glued_lines(numbers):
                    feed_glued(
                        self.account, lines, numbers, lambda line, number: feed_block([line], [number])
                    )
                else:
                    feed_block(lines, numbers)
        except Exception as exc:
            note_where(exc, line=_line_at(exc, located or feed_block))
            raise

    def release(self) -> None:
        """Drop the handler table once the frames are built. It holds bound methods of this assembler, a
        reference cycle that kept every row (hundreds of thousands of tuples) alive after the parse
        until the cyclic collector found them, and made that collection walk them all."""
        self.handlers = {}

    # ------------------------------------------------------------------ segmentation
    def new_segment(self, number: int, previous: S | None, inherit: bool) -> S:
        raise NotImplementedError

    def current(self, number: int) -> S:
        if not self.segments:
            return self.open_segment(number, inherit=False)
        return self.segments[-1]

    def open_segment(self, number: int, *, inherit: bool) -> S:
        previous = self.segments[-1] if self.segments else None
        segment = self.new_segment(number, previous if inherit else None, inherit)
        self.segments.append(segment)
        return segment

    def segment_for(self, kind: str, number: int) -> S:
        """The segment a line of `kind` belongs to, opening a new one when `BOUNDARIES` says so."""
        segment = self.current(number)
        boundary = self.BOUNDARIES.get(kind)
        if boundary is not None and segment.holds_any(boundary.when_has):
            segment = self.open_segment(number, inherit=boundary.inherit)
        return segment
