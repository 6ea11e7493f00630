"""Findings in the formats CI systems read: SARIF 2.1.0, GitHub workflow commands, JUnit XML.

The conventions follow linters that already feed these systems (ruff, flake8-sarif): one SARIF run
whose driver lists every rule that fired with its documentation, results pointing at the log file and
line; one `::error file=…,line=…::` command per finding; one JUnit test suite per log with a test case
per finding. Everything here is a pure function of the findings, so `parse` and `audit` render the same
finding the same way.

Log text is untrusted: messages reach an XML file, a workflow command parser and a JSON document, so
each format escapes what its reader would interpret (workflow-command `%`, `:` and `,`; characters XML
1.0 cannot carry; nothing in JSON, whose encoder escapes control characters itself).
"""

from __future__ import annotations

import json
import os
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import PurePath
from typing import Any

from logscope.rules import Finding, Rule, Severity

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
SARIF_VERSION = "2.1.0"

# SARIF result levels and GitHub annotation commands for logscope's severities.
_SARIF_LEVEL = {Severity.error: "error", Severity.warning: "warning", Severity.info: "note"}
_GITHUB_COMMAND = {Severity.error: "error", Severity.warning: "warning", Severity.info: "notice"}


@dataclass(frozen=True)
class LogFindings:
    """One input's findings, with the path CI should point at (as given on the command line)."""

    source: str
    findings: Sequence[Finding]
    fail_on: Severity = Severity.error  # the log's --fail-on: what JUnit counts as a failure


def _severity(finding: Finding) -> Severity:
    return finding.severity if finding.severity is not None else Severity.info


def _uri(source: str) -> str:
    """The log's path relative to the working directory when it lies under it, with `/` separators.

    Code scanning and annotations resolve paths against the checkout, where CI runs; an audit discovers
    absolute paths, so they are made relative here. A path outside the working directory stays as it is.
    """
    if re.match(r"[A-Za-z][A-Za-z0-9+.-]+://", source):  # an object-store URL (s3://...): kept whole
        return source
    path = source
    if os.path.isabs(path):
        try:
            relative = os.path.relpath(path)
        except ValueError:  # another drive on Windows
            relative = path
        if not relative.startswith(".."):
            path = relative
    text = PurePath(path).as_posix()
    return text[2:] if text.startswith("./") else text


def _rules_fired(logs: Sequence[LogFindings], rules: Iterable[Rule]) -> list[Rule]:
    codes = {f.code for log in logs for f in log.findings}
    return [rule for rule in rules if rule.code in codes]


def render_sarif(logs: Sequence[LogFindings], rules: Iterable[Rule], version: str) -> str:
    """A SARIF 2.1.0 log: one run, the rules that fired as `tool.driver.rules`, one result per finding.

    `level` maps error/warning/info to error/warning/note. A finding without a line points at the file
    only. The finding's evidence and build index go to the result's `properties`, so nothing shown by
    `parse --format json` is lost in code scanning.
    """
    fired = _rules_fired(logs, rules)
    index = {rule.code: i for i, rule in enumerate(fired)}
    artifacts: list[dict[str, Any]] = []
    artifact_index: dict[str, int] = {}
    results: list[dict[str, Any]] = []
    for log in logs:
        uri = _uri(log.source)
        if uri not in artifact_index:
            artifact_index[uri] = len(artifacts)
            artifacts.append({"location": {"uri": uri}})
        for finding in log.findings:
            location: dict[str, Any] = {
                "artifactLocation": {"uri": uri, "index": artifact_index[uri]},
            }
            if finding.line is not None and finding.line >= 1:
                location["region"] = {"startLine": int(finding.line)}
            result: dict[str, Any] = {
                "ruleId": finding.code,
                "level": _SARIF_LEVEL[_severity(finding)],
                "message": {"text": _sarif_message(finding)},
                "locations": [{"physicalLocation": location}],
                "properties": {
                    "name": finding.name,
                    "severity": _severity(finding).name,
                    "buildIndex": finding.build_index,
                    "subject": finding.subject,
                    "lines": list(finding.lines),
                    "evidence": _jsonable(finding.evidence),
                },
            }
            if finding.code in index:
                result["ruleIndex"] = index[finding.code]
            results.append(result)
    driver: dict[str, Any] = {
        "name": "logscope",
        "version": version,
        "rules": [_sarif_rule(rule) for rule in fired],
    }
    run = {
        "tool": {"driver": driver},
        "artifacts": artifacts,
        "results": results,
        "columnKind": "unicodeCodePoints",
    }
    return json.dumps({"$schema": SARIF_SCHEMA, "version": SARIF_VERSION, "runs": [run]}, indent=2)


def _sarif_message(finding: Finding) -> str:
    return f"{finding.message}\nhint: {finding.hint}" if finding.hint else finding.message


def _sarif_rule(rule: Rule) -> dict[str, Any]:
    return {
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": rule.summary},
        "fullDescription": {"text": rule.summary},
        "help": {"text": rule.doc.strip(), "markdown": rule.doc.strip()},
        "defaultConfiguration": {"level": _SARIF_LEVEL[rule.severity]},
        "properties": {"family": rule.family},
    }


def _jsonable(value: Any) -> Any:
    """Evidence holds numbers, strings, lists and NA-like values; JSON gets plain values only."""
    return json.loads(json.dumps(value, default=str))


# --- GitHub Actions workflow commands ------------------------------------------------------------------


def _escape_data(text: str) -> str:
    """The message part of a workflow command: `%`, CR and LF are escaped as the runner expects."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    """A property value (file, title): as data, plus `:` and `,` which separate properties."""
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def render_github(logs: Sequence[LogFindings]) -> str:
    """One `::error|warning|notice file=…,line=…,title=…::message` line per finding.

    GitHub Actions turns each into an annotation on the log file's line (info becomes a notice). The
    title carries the rule code and name, the message the finding and its hint.
    """
    out: list[str] = []
    for log in logs:
        path = _escape_property(_uri(log.source))
        for finding in log.findings:
            props = [f"file={path}"]
            if finding.line is not None and finding.line >= 1:
                props.append(f"line={int(finding.line)}")
            props.append(f"title={_escape_property(f'{finding.code} {finding.name}')}")
            command = _GITHUB_COMMAND[_severity(finding)]
            out.append(f"::{command} {','.join(props)}::{_escape_data(_sarif_message(finding))}")
    return "\n".join(out)


# --- JUnit XML -----------------------------------------------------------------------------------------

# Characters XML 1.0 cannot carry at all (C0 controls except tab, LF, CR; surrogates; U+FFFE/FFFF).
_XML_INVALID = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _xml_text(text: str) -> str:
    return _XML_INVALID.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def render_junit(logs: Sequence[LogFindings]) -> str:
    """A `<testsuites>` document: one suite per log, one test case per finding.

    A finding at or above its log's `fail_on` is a `<failure>` (so the JUnit result agrees with the
    exit code); a less severe one is a passing case whose text is in `<system-out>`. A log without
    findings has one passing case, so every input is visible in the CI's test view.
    """
    root = ET.Element("testsuites", name="logscope")
    total = failures = 0
    for log in logs:
        uri = _xml_text(_uri(log.source))
        suite = ET.SubElement(root, "testsuite", name=uri)
        cases = failed = 0
        for finding in log.findings:
            severity = _severity(finding)
            where = f"line {finding.line}" if finding.line is not None else "file"
            case = ET.SubElement(
                suite,
                "testcase",
                name=_xml_text(f"{finding.code} {finding.name} ({where})"),
                classname=uri,
            )
            if finding.line is not None:
                case.set("file", uri)
                case.set("line", str(int(finding.line)))
            body = _xml_text(_sarif_message(finding))
            if severity >= log.fail_on:
                failure = ET.SubElement(
                    case, "failure", message=_xml_text(finding.message), type=severity.name
                )
                failure.text = body
                failed += 1
            else:
                ET.SubElement(case, "system-out").text = f"{severity.name}: {body}"
            cases += 1
        if cases == 0:
            ET.SubElement(suite, "testcase", name="no findings", classname=uri)
            cases = 1
        suite.set("tests", str(cases))
        suite.set("failures", str(failed))
        suite.set("errors", "0")
        total += cases
        failures += failed
    root.set("tests", str(total))
    root.set("failures", str(failures))
    root.set("errors", "0")
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode")
