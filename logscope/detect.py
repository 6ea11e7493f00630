"""Which family a log belongs to: RKNN-Toolkit output, or what a microcontroller runtime or tool printed.

Sniffing, not trusting file names (the way sqlite-utils says which format it detected). Lines are
classified with each family's line grammar, in order, and each family counts the lines that are
evidence for it. Shapes that any text can take (table rules, shell prompts, a bare `I message`,
`key, 123`, catch-alls, Python tracebacks) are not evidence by themselves; a traceback frame or bare
logger line that names the toolkit (`rknn/api/rknn_base.py`, `Catch exception when building RKNN
model!`) is.

Reading stops as soon as the evidence decides:
- `DECISIVE` evidence lines for one family and none for the other: that family (a verbose build log is
  decided within its first screen of lines instead of after classifying its first 2,000 with both
  grammars);
- otherwise after `HEAD` non-blank lines, by the larger count (MCU wins only with strictly more).
  When those lines hold no evidence at all (an application's own output before the trace), reading goes
  on, up to `SEARCH` times as many lines.
A family needs at least `MINIMUM` evidence line to be chosen. A text with non-blank lines and no
evidence for either family is neither: `Detection.family` is None and `explain()` names both families
and the closest each came (`logscope.parse` raises it as an input error, exit 2), so a three-line
ESP-IDF application log is not read as an RKNN session. An empty text is read as RKNN (nothing to say).
A stream's blocks are read only as far as needed and handed back to the parser.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from logscope.io import LogText
from logscope.parsers.grammar import load_line_grammar
from logscope.parsers.mcu import is_evidence

HEAD = 2000
SEARCH = 10
DECISIVE = 20
MINIMUM = 1

FAMILIES = {"rknn": "an RKNN-Toolkit or RKNN runtime log", "mcu": "MCU memory output"}

# RKNN grammar terminals that other text matches as well: a bare `I ...`/`W func: ...` logger line, rules,
# indented or unknown lines, other tools' and shells' prints, Python tracebacks.
_RKNN_WEAK = frozenset(
    {
        "",
        "OTHER",
        "INDENTED",
        "PY_PLAIN",
        "PY_MSG",
        "LOGGER_BLANK",
        "SCRIPT_PRINT",
        "FOREIGN_LOG",
        "EVAL_FRAME",
        "TABLE_RULE",
        "OUTLIER_ROW",
        "EXCEPTION",
        "TRACEBACK_HEAD",
        "TRACEBACK_FRAME",
        "PROCESS_DEATH",
    }
)
# A weak line that names the toolkit is evidence: its module paths (`rknn/api/…`, `rknn.base.RKNNlib`)
# in traceback frames, or the toolkit's own messages (`Catch exception when building RKNN model!`).
_NAMES_RKNN = re.compile(r"(?<![A-Za-z])rknn(?![a-z])", re.IGNORECASE)
# What the closest non-evidence lines look like, for the message when neither family is found.
_SHAPES = {
    "PY_PLAIN": "a bare logger line (`I text`)",
    "PY_MSG": "a Python logger line",
    "LOGGER_BLANK": "an empty logger line",
    "SCRIPT_PRINT": "a script's print",
    "FOREIGN_LOG": "another program's log line",
    "EXCEPTION": "a Python exception",
    "TRACEBACK_HEAD": "a Python traceback",
    "TRACEBACK_FRAME": "a Python traceback frame",
    "EVAL_FRAME": "a rule or banner line (`----`, `Performance`)",
    "TABLE_RULE": "a table rule",
    "OUTLIER_ROW": "a name followed by numbers",
    "INDENTED": "an indented line",
    "PROCESS_DEATH": "a process death (`Killed`, `Segmentation fault`)",
    "ESP_MSG": "an ESP-IDF log line without memory figures",
    "SHELL": "a shell prompt",
    "RULE": "a table rule",
    "BORDER": "a table border",
    "C_LINE": "a C source location",
    "APP_MARKER": "an application marker",
    "SIM_NOISE": "simulator output",
    "RTOS_NOISE": "RTOS output",
}

Block = tuple[list[str], list[int]]


@dataclass(frozen=True)
class Evidence:
    """The first line of a family that is evidence for it (or the closest: a line of a shape it shares)."""

    line: int
    text: str
    kind: str

    def quote(self) -> str:
        text = self.text.strip()
        text = text if len(text) <= 60 else text[:57] + "..."
        return f"line {self.line} `{text}`"


@dataclass(frozen=True)
class Detection:
    """The family chosen (`rknn`, `mcu`, or None for neither) and the evidence each family had.

    `sampled` non-blank lines were classified; `decided_at` is the line number at which the evidence
    decided (None when every sampled line was needed); `first` holds each family's first evidence line
    and `closest` each family's first line of a shape it shares with other text.
    """

    family: str | None
    scores: dict[str, int]
    sampled: int
    decided_at: int | None = None
    first: dict[str, Evidence] = field(default_factory=dict)
    closest: dict[str, Evidence] = field(default_factory=dict)

    def explain(self) -> str:
        """One sentence: what was decided and on what evidence (the error message when neither)."""
        if self.family is not None:
            ev = self.first.get(self.family)
            where = f", first at {ev.quote()}" if ev else ""
            stop = f"decided at line {self.decided_at}" if self.decided_at else f"in {self.sampled} lines"
            counts = ", ".join(f"{fam} {n}" for fam, n in self.scores.items())
            return f"read as {FAMILIES[self.family]}: evidence lines {counts} ({stop}){where}"
        parts = []
        for fam, label in FAMILIES.items():
            near = self.closest.get(fam)
            what = f"{near.quote()} is only {_SHAPES.get(near.kind, 'a shared shape')}" if near else "nothing"
            parts.append(f"{label}: {what}")
        return (
            f"neither {FAMILIES['rknn']} nor {FAMILIES['mcu']}: none of the first {self.sampled} non-blank "
            f"lines is evidence for either; closest to {'; to '.join(parts)}"
        )


def detect(text: LogText, head: int = HEAD) -> Detection:
    """Choose the parser family for text already read."""
    return detect_blocks(iter([(text.lines, text.numbers)]), head)[0]


def detect_blocks(blocks: Iterator[Block], head: int = HEAD) -> tuple[Detection, list[Block]]:
    """Choose the parser family from the first blocks of a stream; returns the blocks it read."""
    scorer = _Scorer()
    taken: list[Block] = []
    limit = head
    for lines, numbers in blocks:
        taken.append((lines, numbers))
        start = 0
        while True:
            status, start = scorer.feed(lines, numbers, start, limit)
            if status != _LIMIT or any(scorer.scores.values()) or limit >= head * SEARCH:
                break
            limit = head * SEARCH  # no evidence in the head: read on, in this block first
        if status != _EXHAUSTED:
            break
    return scorer.result(), taken


_DECIDED, _LIMIT, _EXHAUSTED = "decided", "limit", "exhausted"


class _Scorer:
    """Running evidence counts over the lines classified so far."""

    def __init__(self) -> None:
        self.scores = {"rknn": 0, "mcu": 0}
        self.sampled = 0
        self.decided_at: int | None = None
        self.first: dict[str, Evidence] = {}
        self.closest: dict[str, Evidence] = {}
        self._rknn = load_line_grammar("rknn").lexer.classify
        self._mcu = load_line_grammar("mcu").lexer.classify

    def feed(self, lines: list[str], numbers: list[int], start: int, limit: int) -> tuple[str, int]:
        """Classify lines from index `start` until the evidence decides, `limit` non-blank lines have been
        read in all, or the block ends; returns why it stopped and the index to resume at."""
        scores, first, closest = self.scores, self.first, self.closest
        rknn, mcu = self._rknn, self._mcu
        for index in range(start, len(lines)):
            line = lines[index]
            if not line:
                continue
            if self.sampled >= limit:
                return _LIMIT, index
            self.sampled += 1
            number = numbers[index]
            kind = rknn(line)[0]
            if kind not in _RKNN_WEAK or (kind and _NAMES_RKNN.search(line)):
                scores["rknn"] += 1
                first.setdefault("rknn", Evidence(number, line, kind))
            elif kind and kind != "OTHER":
                closest.setdefault("rknn", Evidence(number, line, kind))
            kind = mcu(line)[0]
            if is_evidence(kind):
                scores["mcu"] += 1
                first.setdefault("mcu", Evidence(number, line, kind))
            elif kind and kind != "OTHER":
                closest.setdefault("mcu", Evidence(number, line, kind))
            if max(scores.values()) >= DECISIVE and min(scores.values()) == 0:
                self.decided_at = number
                return _DECIDED, index + 1
        return (_LIMIT if self.sampled >= limit else _EXHAUSTED), len(lines)

    def result(self) -> Detection:
        scores = self.scores
        if self.sampled and max(scores.values()) < MINIMUM:
            family = None
        else:
            family = "mcu" if scores["mcu"] > scores["rknn"] else "rknn"
        return Detection(
            family, dict(scores), self.sampled, self.decided_at, dict(self.first), dict(self.closest)
        )
