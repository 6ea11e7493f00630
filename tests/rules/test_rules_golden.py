"""Every rule over every real fixture gives the reviewed findings in golden_findings.json."""

from __future__ import annotations

import json

import pytest

from tests.rules.regenerate_findings import GOLDEN, findings_of, fixtures

EXPECTED = json.loads(GOLDEN.read_text(encoding="utf-8"))


def test_every_fixture_is_in_the_golden_file():
    assert set(EXPECTED) == {p.name for p in fixtures()}


@pytest.mark.parametrize("path", fixtures(), ids=lambda p: p.stem[:40])
def test_findings_match_golden(path):
    assert findings_of(path) == EXPECTED[path.name], (
        f"run `make golden-findings`, review the diff for {path.name} (tests/rules/GOLDEN_REVIEW.md)"
    )


def test_reviewed_totals():
    """The reviewed count per severity; a change here must come with a review of the diff."""
    counts: dict[str, int] = {}
    for findings in EXPECTED.values():
        for f in findings:
            counts[f["severity"]] = counts.get(f["severity"], 0) + 1
    assert counts == {"error": 31, "warning": 15, "info": 11}
