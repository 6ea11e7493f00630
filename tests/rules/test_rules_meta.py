"""Meta-tests: a consistent registry, every rule documented and with cases, docs/rules.md current."""

from __future__ import annotations

import dataclasses
import pkgutil
import re
import tomllib
from pathlib import Path

import logscope.rules
from logscope.rules.docs import SECTIONS, doc_sections, render_rules_markdown
from logscope.rules.finding import Severity
from logscope.rules.registry import RULE_MODULES, RULES, get_rule, rules_matching
from tests.conftest import ROOT

CASES_DIR = Path(__file__).parent / "cases"


def test_codes_and_names_are_unique():
    codes = [r.code for r in RULES]
    names = [r.name for r in RULES]
    assert len(codes) == len(set(codes)) and len(names) == len(set(names))


def test_every_rule_module_is_registered():
    """A rule module that is not in the registry never runs; catch it."""
    modules = {
        m.name for m in pkgutil.iter_modules(logscope.rules.__path__) if re.match(r"^[a-z]{3}\d{3}_", m.name)
    }
    registered = {m.__name__.rsplit(".", 1)[1] for m in RULE_MODULES}
    assert modules == registered


def test_module_names_match_codes():
    for rule in RULES:
        stem = rule.module.__name__.rsplit(".", 1)[1]
        assert stem == f"{rule.code.lower()}_{rule.name.replace('-', '_')}"


def test_every_rule_is_documented():
    for rule in RULES:
        sections = doc_sections(rule)
        missing = [s for s in SECTIONS if not sections.get(s)]
        assert not missing, (rule.code, missing)
        assert "```" in sections["Example"], f"{rule.code}: the example must quote a log excerpt"
        for f in rule.option_fields():
            assert f"`{f.name}`" in sections["Options"], (rule.code, f.name)
        assert rule.summary.endswith(".")


def test_rule_declarations():
    for rule in RULES:
        assert isinstance(rule.severity, Severity)
        assert rule.needs and all(isinstance(n, str) for n in rule.needs)
        assert dataclasses.is_dataclass(rule.options_type)
        rule.default_options()  # every option has a default


def test_every_rule_has_passing_and_failing_cases():
    files = {p.stem: tomllib.loads(p.read_text(encoding="utf-8")) for p in CASES_DIR.glob("*.toml")}
    assert set(files) == {r.code for r in RULES}
    for code, data in files.items():
        assert data["rule"] == code
        cases = data["case"]
        assert any(c["expect"] for c in cases), f"{code}: no failing case"
        assert any(not c["expect"] for c in cases), f"{code}: no passing case"
        for case in cases:
            assert case["source"], (code, case["name"])
        names = [c["name"] for c in cases]
        assert len(names) == len(set(names))


def test_rules_doc_is_current():
    doc = ROOT / "docs" / "rules.md"
    assert doc.read_text(encoding="utf-8") == render_rules_markdown(), (
        "docs/rules.md is stale: run `make rules-doc` (python -m logscope.rules.docs > docs/rules.md)"
    )


def test_lookup_by_code_name_and_family():
    assert get_rule("mem001") is get_rule("low-memory-reuse") is get_rule("MEM001")
    assert {r.code for r in rules_matching("MEM")} == {r.code for r in RULES if r.code.startswith("MEM")}
    assert rules_matching("nothing-like-this") == []
