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


_NO_EVIDENCE: Any = object()  # `evidence` not given: a new empty dict, as `field(default_factory=dict)`


@dataclass(frozen=True, init=False)
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

    def __init__(
        self,
        message: str,
        line: int | None = None,
        lines: tuple[int, ...] = (),
        subject: str | None = None,
        evidence: dict[str, Any] = _NO_EVIDENCE,
        hint: str | None = None,
        severity: Severity | None = None,
        build_index: int | None = None,
        code: str = "",
        name: str = "",
        source: str = "",
    ) -> None:
        """The dataclass's `__init__`, with the fields set in one `__dict__` update instead of one
        `object.__setattr__` each (what a frozen dataclass does): half the cost, and a log with
        hundreds of builds has thousands of findings."""
        self.__dict__.update(
            message=message,
            line=line,
            lines=lines,
            subject=subject,
            evidence={} if evidence is _NO_EVIDENCE else evidence,
            hint=hint,
            severity=severity,
            build_index=build_index,
            code=code,
            name=name,
            source=source,
        )

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
