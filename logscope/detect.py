"""Which family a log belongs to: RKNN-Toolkit output, or what a microcontroller runtime or tool printed.

Sniffing, not trusting file names (the way sqlite-utils says which format it detected): the first
`HEAD` non-blank lines are classified with each family's line grammar, and each family scores the
lines that are evidence for it. Shapes that any text can take (table rules, shell prompts, a bare
`I message`, `key, 123`, catch-alls) are not evidence. MCU wins only with strictly more evidence;
otherwise, and when nothing is recognised at all, the log is read as RKNN, whose parser then says what
it could not read. When the head holds no evidence for either family, up to `SEARCH` times as many
lines are read. A stream's blocks are read only as far as needed and handed back to the parser.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from logscope.io import LogText
from logscope.parsers.grammar import load_line_grammar
from logscope.parsers.mcu import is_evidence

HEAD = 2000
SEARCH = 10

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


Block = tuple[list[str], list[int]]


@dataclass(frozen=True)
class Detection:
    """The family chosen (`rknn` or `mcu`) and the evidence each family had in the sampled lines."""

    family: str
    scores: dict[str, int]
    sampled: int


def detect(text: LogText, head: int = HEAD) -> Detection:
    """Choose the parser family for text already read."""
    return detect_blocks(iter([(text.lines, text.numbers)]), head)[0]


def detect_blocks(blocks: Iterator[Block], head: int = HEAD) -> tuple[Detection, list[Block]]:
    """Choose the parser family from the first blocks of a stream; returns the blocks it read.

    The first `head` non-blank lines decide. If they hold no evidence for either family (an
    application's own output before the trace), reading goes on, up to `SEARCH` times as many lines.
    """
    taken: list[Block] = []
    sample: list[str] = []
    scores = {"rknn": 0, "mcu": 0}
    limit, decided = head, False
    for block in blocks:
        taken.append(block)
        rest = [line for line in block[0] if line]
        while rest and not decided:
            fresh, rest = rest[: limit - len(sample)], rest[limit - len(sample) :]
            sample += fresh
            for family, score in _score(fresh).items():
                scores[family] += score
            if len(sample) < limit:
                break  # this block is used up: read the next one
            if any(scores.values()) or limit >= head * SEARCH:
                decided = True
            limit = head * SEARCH
        if decided:
            break
    family = "mcu" if scores["mcu"] > scores["rknn"] else "rknn"
    return Detection(family=family, scores=scores, sampled=len(sample)), taken


def _score(lines: list[str]) -> dict[str, int]:
    rknn = load_line_grammar("rknn").lexer.classify
    mcu = load_line_grammar("mcu").lexer.classify
    return {
        "rknn": sum(1 for line in lines if rknn(line)[0] not in _RKNN_WEAK),
        "mcu": sum(1 for line in lines if is_evidence(mcu(line)[0])),
    }
