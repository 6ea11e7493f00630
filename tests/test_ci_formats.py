"""`parse --format sarif|github|junit`: what code scanning, workflow annotations and JUnit readers get.

SARIF is validated against the OASIS SARIF 2.1.0 JSON schema (errata 01, `tests/data/`); the workflow
commands are decoded back with the runner's escaping rules; JUnit is parsed back as XML.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema
import pytest
from typer.testing import CliRunner

import logscope
from logscope.cli import app
from logscope.render.ci import LogFindings, render_github, render_junit, render_sarif
from logscope.rules import RULES, Finding, Severity, analyze_log, resolve_config
from tests.conftest import FIXTURES, MOBILENET, RKNN

runner = CliRunner()
SCHEMA = json.loads((Path(__file__).parent / "data" / "sarif-schema-2.1.0.json").read_text())
FAILED_LOAD = RKNN / "17-issue-rknpu2-67-parseRKNN-share-weight-error.log"
ALL_FIXTURES = sorted(p for p in FIXTURES.rglob("*") if p.is_file() and p.suffix in {".log", ".txt"})

HOSTILE = Finding(
    message='50% of 2,048 B: "x" <b>&</b>\nsecond line\r\x1b[31mred\x00',
    line=7,
    lines=(7, 8),
    subject="a,b:c",
    evidence={"ratio": 0.5, "names": ["<script>", "%0A"]},
    hint="fix: it, now",
    severity=Severity.warning,
    build_index=0,
    code="MEM001",
    name="low-memory-reuse",
    source="dir with, comma/x:y.log",
)


def _analyzed(path: Path) -> logscope.ParsedLog:
    return analyze_log(logscope.parse(path), resolve_config(None, path))


def _decode_github(line: str) -> tuple[str, dict[str, str], str]:
    match = re.fullmatch(r"::(\w+) ([^:]*)::(.*)", line)
    assert match, line
    unescape = {"%25": "%", "%0D": "\r", "%0A": "\n", "%3A": ":", "%2C": ","}

    def decode(text: str) -> str:
        return re.sub(r"%(25|0D|0A|3A|2C)", lambda m: unescape[m.group()], text)

    props = dict(item.split("=", 1) for item in match.group(2).split(","))
    return match.group(1), {k: decode(v) for k, v in props.items()}, decode(match.group(3))


def test_sarif_validates_and_carries_every_finding_of_every_fixture(monkeypatch):
    monkeypatch.chdir(FIXTURES.parent)
    logs = [_analyzed(path) for path in ALL_FIXTURES]
    inputs = [LogFindings(str(log.source), log.findings) for log in logs]
    sarif = json.loads(render_sarif(inputs, RULES, logscope.__version__))
    jsonschema.validate(sarif, SCHEMA)
    run = sarif["runs"][0]
    findings = [f for log in logs for f in log.findings]
    assert len(findings) > 40  # the fixtures hold dozens of findings: the test sees real output
    assert len(run["results"]) == len(findings)
    rule_ids = [rule["id"] for rule in run["tool"]["driver"]["rules"]]
    assert sorted(rule_ids) == sorted({f.code for f in findings})
    for result, finding in zip(run["results"], findings, strict=True):
        assert rule_ids[result["ruleIndex"]] == result["ruleId"] == finding.code
        location = result["locations"][0]["physicalLocation"]
        uri = Path(finding.source).relative_to(FIXTURES.parent).as_posix()  # under the working dir
        assert location["artifactLocation"]["uri"] == uri
        assert location.get("region", {}).get("startLine") == finding.line
        assert (
            result["level"] == {"error": "error", "warning": "warning", "info": "note"}[finding.severity.name]
        )


def test_sarif_keeps_hostile_text_as_data():
    sarif = json.loads(render_sarif([LogFindings(HOSTILE.source, [HOSTILE])], RULES, "0"))
    jsonschema.validate(sarif, SCHEMA)
    result = sarif["runs"][0]["results"][0]
    assert result["message"]["text"] == f"{HOSTILE.message}\nhint: {HOSTILE.hint}"
    assert result["properties"]["evidence"]["names"] == ["<script>", "%0A"]


def test_github_commands_round_trip_hostile_text():
    (line,) = render_github([LogFindings(HOSTILE.source, [HOSTILE])]).splitlines()
    command, props, message = _decode_github(line)
    assert command == "warning"
    assert props == {"file": HOSTILE.source, "line": "7", "title": "MEM001 low-memory-reuse"}
    assert message == f"{HOSTILE.message}\nhint: {HOSTILE.hint}"


def test_github_format_through_the_cli():
    result = runner.invoke(app, ["parse", str(MOBILENET), "--format", "github"])
    assert result.exit_code == 0, result.output
    decoded = [_decode_github(line) for line in result.stdout.splitlines()]
    expected = _analyzed(MOBILENET).findings
    assert [(c, p["line"], p["title"].split()[0]) for c, p, _ in decoded] == [
        ({"warning": "warning", "info": "notice", "error": "error"}[f.severity.name], str(f.line), f.code)
        for f in expected
    ]


@pytest.mark.parametrize("fail_on, failures", [("error", 0), ("warning", 2), ("info", 4)])
def test_junit_failures_follow_fail_on(fail_on, failures):
    result = runner.invoke(app, ["parse", str(MOBILENET), "--format", "junit", "--fail-on", fail_on])
    assert result.exit_code == (1 if failures else 0), result.output
    root = ET.fromstring(result.stdout)
    assert root.get("tests") == "4" and root.get("failures") == str(failures)
    assert len(root.findall(".//failure")) == failures


def test_junit_failed_load_and_a_clean_log():
    clean = FIXTURES / "synthetic" / "heap-trace-esp32-kws-kib-baseline.txt"
    assert not _analyzed(clean).findings  # a log that passes every rule
    result = runner.invoke(app, ["parse", str(FAILED_LOAD), str(clean), "--format", "junit"])
    assert result.exit_code == 1, result.output
    suites = ET.fromstring(result.stdout).findall("testsuite")
    assert [s.get("failures") for s in suites] == ["1", "0"]
    assert suites[1].find("testcase").get("name") == "no findings"
    failure = suites[0].find(".//failure")
    assert failure.get("type") == "error" and "load model failed" in failure.text


def test_junit_is_well_formed_with_control_characters():
    xml = render_junit([LogFindings("a\x1b.log", [HOSTILE], Severity.warning)])
    root = ET.fromstring(xml)  # raises on characters XML 1.0 cannot hold
    failure = root.find(".//failure")
    assert failure is not None and "\\x1b[31mred\\x00" in failure.text
    assert "&lt;b&gt;&amp;&lt;/b&gt;" in xml  # markup in a message stays text
    assert '"x" <b>&</b>' in failure.text
    assert failure.get("message").startswith('50% of 2,048 B: "x" <b>&</b>')


def test_audit_reports_stored_findings_of_every_discovered_file(tmp_path, monkeypatch):
    """A re-run skips the stored file, and its findings still reach SARIF and JUnit (read from the store)."""
    monkeypatch.chdir(FIXTURES.parent)
    db = tmp_path / "audit.duckdb"
    args = ["audit", str(MOBILENET.relative_to(FIXTURES.parent)), str(FAILED_LOAD), "--db", str(db)]
    first = runner.invoke(app, [*args, "--format", "sarif"])
    assert first.exit_code == 0, first.output
    sarif = json.loads(first.stdout)
    jsonschema.validate(sarif, SCHEMA)
    expected = [f for path in (MOBILENET, FAILED_LOAD) for f in _analyzed(path).findings]
    results = sarif["runs"][0]["results"]
    assert [(r["ruleId"], r["locations"][0]["physicalLocation"]["region"]["startLine"]) for r in results] == [
        (f.code, f.line) for f in expected
    ]
    assert {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in results} == {
        "fixtures/rknn/" + MOBILENET.name,
        "fixtures/rknn/" + FAILED_LOAD.name,
    }
    again = runner.invoke(app, [*args, "--format", "junit"])
    assert again.exit_code == 0, again.output
    root = ET.fromstring(again.stdout)
    assert root.get("tests") == str(len(expected)) and root.get("failures") == "1"
