"""The REF rules through `logscope check`: findings after the table / under `findings`, exit codes,
--fail-on, --config, --select and --ignore; and that `logscope parse` never runs them."""

from __future__ import annotations

import json

import onnx
import pytest
from typer.testing import CliRunner

import logscope
from logscope.cli import app
from logscope.reference import analyze_model, check_log_against_model
from logscope.rules import RULES, Config
from logscope.rules.engine import applicable
from tests.check_models import mobilenet_v1_width, model
from tests.conftest import MOBILENET, RKNN

runner = CliRunner()
SRAM_LOG = str(RKNN / "29-doc-rknpu2-sram-runtime-log-level3-rk3588.log")
LOG_09 = str(MOBILENET)
REF_RULES = [r for r in RULES if r.code.startswith("REF")]


@pytest.fixture(scope="module")
def models(tmp_path_factory) -> dict[str, str]:
    folder = tmp_path_factory.mktemp("ref-rules")
    paths = {}
    for name in ("mobilenet_v1", "mobilenet_v1_050"):
        paths[name] = str(folder / f"{name}.onnx")
        onnx.save(model(name), paths[name])
    return paths


def check(*args: str):
    return runner.invoke(app, ["check", *args])


def findings_of(result) -> list[dict]:
    return json.loads(result.stdout)["findings"]


# --- the fixtures against the MobileNet v1 of the tests ------------------------------------------------


def test_09_matches_its_model_no_ref_finding(models):
    """[09] vs MobileNet v1 (rv1106): pool 1,756,160 = emulation, 1.46x greedy (< 1.5), weights 1.04x,
    27 of 27 fusions: no REF finding, even at --fail-on info."""
    result = check(LOG_09, "--onnx", models["mobilenet_v1"], "--target", "rv1106", "--select", "REF")
    assert result.exit_code == 0, result.output
    assert "findings: none" in result.stdout
    result = check(
        LOG_09, "--onnx", models["mobilenet_v1"], "--target", "rv1106", "--select", "REF", "--fail-on", "info"
    )
    assert result.exit_code == 0, result.output


def test_09_json_runs_every_rule_like_parse(models):
    """Without --select, check runs every enabled rule on the checked log: the log-only findings of
    `logscope parse` (warnings and infos on [09]: exit 0 at the default --fail-on error), no REF one."""
    result = check(LOG_09, "--onnx", models["mobilenet_v1"], "--target", "rv1106", "--format", "json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["schema_version"] == 1 and "summary" in data
    codes = [f["code"] for f in data["findings"]]
    parsed = logscope.analyze(MOBILENET, Config())
    assert codes == [f.code for f in parsed.findings]
    assert not any(c.startswith("REF") for c in codes)
    result = check(LOG_09, "--onnx", models["mobilenet_v1"], "--target", "rv1106", "--fail-on", "warning")
    assert result.exit_code == 1  # QNT001 and MEM001 are warnings


def test_29_as_rv1106_reports_the_pool(models):
    """[29] (an RK3588 log that names no target) checked as rv1106: 2,157,568 B is 1.23x the rv1106
    emulation's 1,756,160 B; with the suggested quirks the emulation reproduces it. A warning: exit 0 by
    default, 1 at --fail-on warning. (As rk3588, the default, the learned profile reproduces it.)"""
    rv1106 = ("--target", "rv1106")
    result = check(SRAM_LOG, "--onnx", models["mobilenet_v1"], *rv1106, "--select", "REF")
    assert result.exit_code == 0, result.output
    out = result.stdout
    table_end = out.index("findings: 1 warning")
    assert out.index("feature pool (RKNN emulation)") < table_end  # the findings follow the table
    assert "line 41: warning REF001 pool-above-reference" in out
    assert "1.23×" in out and "(401408 B) more" in out
    # 7x7 planes are already padded to 52 by the rv1106 profile: only the depthwise padding is suggested
    assert "--quirk dw32-as-64 the emulation reproduces it to the byte" in out

    result = check(
        SRAM_LOG, "--onnx", models["mobilenet_v1"], *rv1106, "--select", "REF", "--fail-on", "warning"
    )
    assert result.exit_code == 1

    result = check(SRAM_LOG, "--onnx", models["mobilenet_v1"], *rv1106, "--select", "REF", "--format", "json")
    (finding,) = findings_of(result)
    assert finding["code"] == "REF001" and finding["line"] == 41 and finding["severity"] == "warning"
    evidence = finding["evidence"]
    assert evidence["internal_bytes"] == 2_157_568 and evidence["internal_line"] == 41
    assert evidence["emulation"]["bytes"] == 1_756_160
    assert evidence["emulation_with_suggested_quirks"]["bytes"] == 2_157_568
    assert evidence["suggested_quirks"] == ["dw32-as-64"]
    assert evidence["greedy_by_size_native"]["bytes"] == 1_204_224
    assert evidence["lower_bound_logical"]["bytes"] == 1_605_632
    # the differently sized rows and the total: line 9 (the 32-channel depthwise output RK3588 doubles)
    # and lines 11, 13, 15 (64/128-channel depthwise outputs reading >= 401,408 B, which the rv1106
    # profile gives a spare 16-channel block, the RK3588 log none); the 7x7 rows agree
    assert finding["lines"] == [9, 11, 13, 15, 41]


def test_29_with_its_quirks_is_clean(models):
    result = check(
        SRAM_LOG,
        "--onnx",
        models["mobilenet_v1"],
        "--quirk",
        "dw32-as-64",
        "--quirk",
        "hw-align-4",
        "--select",
        "REF",
        "--fail-on",
        "info",
    )
    assert result.exit_code == 0, result.output
    assert "findings: none" in result.stdout


def test_wrong_model_fires_pool_and_weights(models):
    """[09] vs MobileNet v1 0.5: pool 1.84x the emulation, weights 3.30x the model's."""
    result = check(
        LOG_09, "--onnx", models["mobilenet_v1_050"], "--target", "rv1106", "--select", "REF", "-f", "json"
    )
    assert result.exit_code == 0, result.output
    found = {f["code"]: f for f in findings_of(result)}
    assert set(found) == {"REF001", "REF003"}
    assert found["REF001"]["line"] == 279 and found["REF001"]["evidence"]["emulation"]["bytes"] == 953_344
    weights = found["REF003"]
    assert weights["line"] == 278 and weights["evidence"]["reference_weight_bytes"] == 1_346_054
    assert "is this the model the log was built from?" in weights["message"]


# --- configuration: --ignore, --config (severity, options), bad selectors ------------------------------


def test_ignore_and_select(models):
    args = [SRAM_LOG, "--onnx", models["mobilenet_v1"], "--target", "rv1106", "--fail-on", "warning"]
    assert check(*args, "--select", "REF").exit_code == 1
    assert check(*args, "--select", "REF", "--ignore", "pool-above-reference").exit_code == 0
    result = check(*args, "--select", "REF002,REF003", "--format", "json")
    assert result.exit_code == 0 and findings_of(result) == []


def test_config_file_severity_and_options(tmp_path, models):
    config = tmp_path / "logscope.toml"
    config.write_text('select = ["REF"]\n[rules.REF001]\nseverity = "error"\n', encoding="utf-8")
    rv1106 = ("--target", "rv1106")  # as rk3588 the learned profile reproduces [29]: no REF001
    result = check(SRAM_LOG, "--onnx", models["mobilenet_v1"], *rv1106, "--config", str(config), "-f", "json")
    assert result.exit_code == 1, result.output
    assert [(f["code"], f["severity"]) for f in findings_of(result)] == [("REF001", "error")]

    config.write_text(
        'select = ["REF"]\n[rules.REF001]\nmax_emulation_ratio = 1.3\nmax_greedy_ratio = 2.0\n',
        encoding="utf-8",
    )
    result = check(
        SRAM_LOG, "--onnx", models["mobilenet_v1"], *rv1106, "--config", str(config), "--fail-on", "info"
    )
    assert result.exit_code == 0, result.output

    config.write_text("[rules.REF001]\nmax_ratio = 2\n", encoding="utf-8")
    result = check(SRAM_LOG, "--onnx", models["mobilenet_v1"], *rv1106, "--config", str(config))
    assert result.exit_code == 2 and "max_ratio" in result.output and "Traceback" not in result.output


def test_unknown_selector_exits_2(models):
    result = check(SRAM_LOG, "--onnx", models["mobilenet_v1"], "--select", "NOPE999")
    assert result.exit_code == 2 and "NOPE999" in result.output


# --- library level: REF rules need the cross-check frames --------------------------------------------


@pytest.mark.parametrize("path", [LOG_09, SRAM_LOG])
def test_parse_alone_never_runs_ref_rules(path):
    log = logscope.analyze(path, Config())
    assert not [f for f in log.findings if f.code.startswith("REF")]
    assert REF_RULES and not any(applicable(rule, log) for rule in REF_RULES)
    check_log_against_model(log, model("mobilenet_v1")).attach_to(log)
    assert applicable(REF_RULES[0], log)  # check_summary is there now


def test_check_fusions_carry_the_log_line():
    log = logscope.parse(MOBILENET)
    result = check_log_against_model(log, model("mobilenet_v1"), target="rv1106")
    fusions = result.frames["check_fusions"]
    layers = log.frames["layers"].set_index("layer_id")["line"]
    assert len(fusions) == 27 and fusions["fused_in_log"].all()
    assert [int(layers[i]) for i in fusions["log_layer_id"]] == [int(v) for v in fusions["log_line"]]


def test_width_builder_at_1_0_is_the_standard_mobilenet():
    from logscope.reference import ReferenceOptions

    options = ReferenceOptions(target="rv1106")
    assert (
        analyze_model(mobilenet_v1_width(1.0), options).totals
        == analyze_model(model("mobilenet_v1"), options).totals
    )
