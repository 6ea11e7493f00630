"""What a rule reports: a `Finding` with a `Severity`; nothing is ever "fixed"."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any


class Severity(enum.IntEnum):
    """Ordered so that `info < warning < error`; the JSON form is the lower-case name."""

    info = 1
    warning = 2
    error = 3

    @classmethod
    def parse(cls, text: str) -> Severity:
        """`"warning"` -> `Severity.warning`; raises `ValueError` naming the accepted values."""
        try:
            return cls[str(text).strip().lower()]
        except KeyError:
            raise ValueError(f"unknown severity {text!r} (use info, warning or error)") from None

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class Finding:
    """One diagnosis, pointing at the log lines that prove it.

    A rule fills `message`, `line`/`lines`, `subject`, `evidence` and `hint`; it may set `severity`
    when a finding is worse than the rule's default (a reuse rate under the error threshold). The
    engine stamps `code`, `name`, the effective `severity` and `source`.
    `evidence` holds the numbers that triggered the finding; every figure in it is either a value
    read from the log (with its `*_line`) or the result of a computation stated in `computation`.
    """

    message: str
    line: int | None = None
    lines: tuple[int, ...] = ()
    subject: str | None = None
    evidence: dict[str, Any] = field(default_factory=dict)
    hint: str | None = None
    severity: Severity | None = None
    build_index: int | None = None
    code: str = ""
    name: str = ""
    source: str = ""

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (under `findings` in `logscope parse --format json`); keys are never renamed."""
        return {
            "code": self.code,
            "name": self.name,
            "severity": self.severity.name if self.severity is not None else None,
            "message": self.message,
            "source": self.source,
            "line": self.line,
            "lines": list(self.lines),
            "build_index": self.build_index,
            "subject": self.subject,
            "evidence": dict(self.evidence),
            "hint": self.hint,
        }
