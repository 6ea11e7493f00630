"""One harness for every declarative rule case in tests/rules/cases/CODE.toml.

Each case parses its `log` excerpt, runs only the rule named by the file (with the case's `options`,
validated like a configuration file) and compares the findings, in order, with `expect`: severity,
line (the excerpt's own numbering) and substrings of the message.

A case with `model = "NAME"` (a model of tests/check_models.py) is first checked against that ONNX
model, as `logscope check` does (optional `target`, `quirks`); a case with `tflite = "PATH"` (a
committed .tflite) is checked as `logscope check TRACE --model PATH` does. The cross-check frames
they attach are what the `REF` rules need. A rule that needs them must name a model in every case, or
its passing cases would pass only because the rule never ran.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from logscope.api import parse_text
from logscope.io import decode_bytes
from logscope.rules import RULES, run_rules
from logscope.rules.config import config_from_mapping
from tests import check_models

CASES_DIR = Path(__file__).parent / "cases"
REPO = Path(__file__).resolve().parents[2]


def load_cases() -> list[tuple[str, dict]]:
    out = []
    for path in sorted(CASES_DIR.glob("*.toml")):
        data = tomllib.loads(path.read_text(encoding="utf-8"))
        for case in data["case"]:
            out.append((data["rule"], case))
    return out


CASES = load_cases()


def run_case(code: str, case: dict):
    config = config_from_mapping(
        {"select": [code], "rules": {code: case.get("options", {})}}, f"case {case['name']}"
    )
    log = parse_text(decode_bytes(case["log"].encode("utf-8"), path=f"{code}-{case['name']}.log"))
    if "model" in case:
        from logscope.reference import check_log_against_model

        check = check_log_against_model(
            log,
            check_models.model(case["model"]),
            target=case.get("target"),
            quirks=frozenset(case.get("quirks", ())),
        )
        check.attach_to(log)
    if "tflite" in case:
        from logscope.reference.tflite_loader import load_tflite
        from logscope.reference.tflm_check import check_trace_against_tflite

        check_trace_against_tflite(log, load_tflite(REPO / case["tflite"])).attach_to(log)
    return run_rules(log, config)


def needs_check(code: str) -> bool:
    """The rule runs only on a log checked against its model (NEEDS a `check_*` frame)."""
    rule = next(r for r in RULES if r.code == code)
    return any(name.startswith("check_") for entry in rule.needs for name in entry.split("|"))


def test_checked_rules_name_a_model_in_every_case():
    checked = {code for code, _ in CASES if needs_check(code)}
    assert checked, "no case of a rule that needs the cross-check frames"
    for code, case in CASES:
        if "model" in case:
            assert case["model"] in check_models.MODELS, (code, case["name"], case["model"])
        elif "tflite" in case:
            assert (REPO / case["tflite"]).is_file(), (code, case["name"], case["tflite"])
        else:
            assert not needs_check(code), f"{code} {case['name']}: needs `model = ...` to run at all"


@pytest.mark.parametrize(("code", "case"), CASES, ids=[f"{c}-{case['name']}" for c, case in CASES])
def test_case(code, case):
    findings = run_case(code, case)
    expected = case["expect"]
    got = [(f.severity.name, f.line, f.message) for f in findings]
    assert len(findings) == len(expected), got
    for finding, want in zip(findings, expected, strict=True):
        assert finding.code == code
        assert finding.severity.name == want["severity"], got
        assert finding.line == want["line"], got
        for text in want.get("contains", []):
            assert text in finding.message, (text, finding.message)
        # Every finding points at the log and says what triggered it.
        assert finding.lines and finding.line in finding.lines
        assert all(1 <= n <= len(case["log"].splitlines()) for n in finding.lines)
        assert finding.evidence and finding.hint
