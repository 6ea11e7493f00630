"""docs/cli.md is generated from the typer app: it must match the code."""

from __future__ import annotations

from logscope.cli_docs import render_cli_markdown
from tests.conftest import ROOT


def test_cli_reference_is_current():
    current = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    assert current == render_cli_markdown(), "run `make docs` (python -m logscope.cli_docs > docs/cli.md)"


def test_every_command_is_documented():
    text = render_cli_markdown()
    for command in (
        "parse",
        "rules",
        "explain",
        "report",
        "plot",
        "reference",
        "check",
        "audit",
        "trend",
        "diff",
    ):
        assert f"## `logscope {command}`" in text
