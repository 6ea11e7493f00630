"""Runs the registered rules over a parsed log: skip, run, stamp, sort.

The engine, not the rule, stamps `code`, `name`, `source` and the effective severity: the severity set
in the configuration for that rule if any, else the one the rule gave the finding (a rule may raise a
finding above its default, e.g. a reuse rate under the error threshold), else the rule's `SEVERITY`.
A rule runs only when every frame in its `NEEDS` exists and has rows (`"perf|layers"`: either).
Findings are sorted by line (findings without a line last), then code, subject and message, so the
output is the same on every run.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from logscope.errors import note_where
from logscope.model import Frames, ParsedLog
from logscope.rules import config as rules_config
from logscope.rules._common import forget_frames
from logscope.rules.config import Config
from logscope.rules.finding import Finding, Severity
from logscope.rules.registry import Rule


def applicable(rule: Rule, log: ParsedLog) -> bool:
    """True when every frame the rule needs is present and non-empty; an entry `"perf|layers"` is
    satisfied by either frame."""
    return _needs_met(rule, filled_frames(log))


def filled_frames(log: ParsedLog) -> set[str]:
    """The names of the log's frames with rows (`Frames.filled` makes no empty frame to answer)."""
    frames = log.frames
    if isinstance(frames, Frames):
        return frames.filled()
    return {name for name, frame in frames.items() if len(frame) > 0}


def _needs_met(rule: Rule, filled: set[str]) -> bool:
    alternatives = _ALTERNATIVES.get(rule.needs)
    if alternatives is None:  # (each entry split once per process, not once per rule and log)
        alternatives = _ALTERNATIVES[rule.needs] = tuple(frozenset(entry.split("|")) for entry in rule.needs)
    return all(not names.isdisjoint(filled) for names in alternatives)


_ALTERNATIVES: dict[tuple[str, ...], tuple[frozenset[str], ...]] = {}


def run_rules(log: ParsedLog, config: Config | None = None) -> list[Finding]:
    """All findings of the enabled, applicable rules, stamped and sorted."""
    config = config or Config()
    findings: list[Finding] = []
    filled = filled_frames(log)  # listed once per log, not once per rule
    forget_frames()  # the rules' per-frame caches start empty and are dropped after the run
    try:
        for rule, options, override in _settings(config):
            if not _needs_met(rule, filled):
                continue
            try:
                for finding in rule.check(log, options):
                    findings.append(
                        _stamped(finding, rule, override or finding.severity or rule.severity, log.source)
                    )
            except Exception as exc:  # a bug in the rule: the CLI's internal-error line names it
                note_where(exc, rule=rule.code)
                raise
    finally:
        forget_frames()
    return sort_findings(findings)


def _settings(config: Config) -> list[tuple[Rule, Any, Severity | None]]:
    """(rule, options, severity override) of each enabled rule, in registry order.

    An audit runs the rules on every file with the same configuration (an equal one when it is read
    again for each file); deciding what is enabled and building each rule's options took longer than
    several rules. The answer for the last configuration is kept while the same registry tuple is in
    place: `Config` and every `Options` are frozen dataclasses, and an equal configuration over the
    same rules gives equal options."""
    registry = rules_config.RULES  # what `Config.enabled_rules` reads (a test may swap it)
    cached = _SETTINGS.get("last")
    if cached is not None and cached[1] is registry and (cached[0] is config or cached[0] == config):
        return cached[2]
    settings = [
        (rule, config.options_for(rule), config.severity_for(rule)) for rule in config.enabled_rules()
    ]
    _SETTINGS["last"] = (config, registry, settings)
    return settings


_SETTINGS: dict[str, tuple[Config, tuple[Rule, ...], list[tuple[Rule, Any, Severity | None]]]] = {}


def _stamped(finding: Finding, rule: Rule, severity: Severity, source: str) -> Finding:
    """`dataclasses.replace(finding, code=..., name=..., severity=..., source=...)` without re-running
    `__init__` over every field: a big log has thousands of findings, each stamped once."""
    stamped = object.__new__(Finding)
    stamped.__dict__.update(finding.__dict__)
    stamped.__dict__.update(code=rule.code, name=rule.name, severity=severity, source=source)
    return stamped


def sort_findings(findings: Iterable[Finding]) -> list[Finding]:
    return sorted(
        findings,
        key=lambda f: (f.line is None, f.line or 0, f.code, f.subject or "", f.message),
    )


def analyze_log(log: ParsedLog, config: Config | None = None) -> ParsedLog:
    """Fill `log.findings` (replacing any earlier run) and return the log."""
    log.findings = run_rules(log, config)
    return log


def worst_severity(findings: Iterable[Finding]) -> Severity | None:
    levels = [f.severity for f in findings if f.severity is not None]
    return max(levels) if levels else None
