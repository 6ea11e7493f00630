"""`logscope parse` with rules, `logscope rules`, `logscope explain`: exit codes 0 / 1 / 2 and output."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from logscope.cli import app
from logscope.rules.registry import RULES
from tests.conftest import MOBILENET, RKNN

runner = CliRunner()
ARGB = RKNN / "05-build-argb-abort-tqdm-tk2-2.0.0b0.log"


def test_warnings_only_exit_0_by_default():
    result = runner.invoke(app, ["parse", str(MOBILENET)])
    assert result.exit_code == 0, result.output
    assert "warning MEM001 low-memory-reuse" in result.stdout and "hint:" in result.stdout


def test_fail_on_warning_exits_1():
    assert runner.invoke(app, ["parse", str(MOBILENET), "--fail-on", "warning"]).exit_code == 1
    assert (
        runner.invoke(app, ["parse", str(MOBILENET), "--fail-on", "warning", "--select", "MEM004"]).exit_code
        == 0
    )
    assert (
        runner.invoke(app, ["parse", str(MOBILENET), "--fail-on", "info", "--select", "MEM004"]).exit_code
        == 1
    )


def test_error_finding_exits_1_and_ignore_clears_it():
    assert runner.invoke(app, ["parse", str(ARGB)]).exit_code == 1
    assert runner.invoke(app, ["parse", str(ARGB), "--ignore", "fatal-error"]).exit_code == 0
    assert runner.invoke(app, ["parse", str(ARGB), "--ignore", "BLD"]).exit_code == 0


def test_json_findings_contract():
    result = runner.invoke(app, ["parse", str(MOBILENET), "--format", "json"])
    data = json.loads(result.stdout)
    codes = [f["code"] for f in data["findings"]]
    assert "MEM001" in codes
    reuse = data["findings"][codes.index("MEM001")]
    assert reuse["name"] == "low-memory-reuse" and reuse["severity"] == "warning" and reuse["line"] == 279
    assert {"message", "subject", "evidence", "hint", "lines", "source"} <= set(reuse)
    assert (
        reuse["evidence"]["pool_span_bytes"] == 1756160 and reuse["evidence"]["tensor_sum_bytes"] == 5377762
    )


def test_markdown_lists_findings():
    result = runner.invoke(app, ["parse", str(ARGB), "--format", "markdown"])
    assert result.exit_code == 1 and "| 8 | error | BLD001 fatal-error |" in result.stdout


def test_config_file_and_errors_exit_2(tmp_path):
    good = tmp_path / "logscope.toml"
    good.write_text('fail-on = "warning"\n[rules.MEM001]\nseverity = "info"\n')
    result = runner.invoke(app, ["parse", str(MOBILENET), "--config", str(good), "--select", "MEM001"])
    assert result.exit_code == 0 and "info MEM001" in result.stdout
    bad = tmp_path / "bad.toml"
    bad.write_text("[rules.MEM001]\nwarn_belw = 0.5\n")
    for args in (
        ["--config", str(bad)],
        ["--select", "NOPE999"],
        ["--target", "rk9999"],
        ["--sram", "a lot"],
        ["--config", str(tmp_path / "missing.toml")],
    ):
        result = runner.invoke(app, ["parse", str(MOBILENET), *args])
        assert result.exit_code == 2, (args, result.output)
        assert "logscope: error:" in result.output and "Traceback" not in result.output
    assert "warn_belw" in runner.invoke(app, ["parse", str(MOBILENET), "--config", str(bad)]).output


def test_target_and_sram_accepted():
    result = runner.invoke(app, ["parse", str(MOBILENET), "--target", "rv1106", "--sram", "320KiB"])
    assert result.exit_code == 0, result.output


def test_rules_and_explain():
    result = runner.invoke(app, ["rules"])
    rows = [line for line in result.stdout.strip().splitlines() if not line.startswith(" ")]
    assert result.exit_code == 0 and len(rows) == len(RULES)  # long summaries wrap, indented
    for key in ("MEM005", "channel-padding-waste", "mem005"):
        result = runner.invoke(app, ["explain", key])
        assert (
            result.exit_code == 0
            and "## What it does" in result.stdout
            and "min_tensor_bytes" in result.stdout
        )
    result = runner.invoke(app, ["explain", "XYZ123"])
    assert result.exit_code == 2 and "unknown rule" in result.output
