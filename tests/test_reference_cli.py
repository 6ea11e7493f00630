"""`logscope reference` and `logscope check`: exit codes, formats, frames and plots on disk."""

from __future__ import annotations

import json

import onnx
import pandas as pd
import pytest
from typer.testing import CliRunner

from logscope.cli import app
from tests.check_models import mobilenet_v1
from tests.conftest import MOBILENET, RKNN
from tests.test_reference_light import LIGHT

runner = CliRunner()
SQUEEZENET = str(LIGHT / "light_squeezenet.onnx")


@pytest.fixture(scope="module")
def mobilenet_file(tmp_path_factory) -> str:
    path = tmp_path_factory.mktemp("cli") / "mobilenet_v1.onnx"
    onnx.save(mobilenet_v1(), path)
    return str(path)


def test_reference_text():
    result = runner.invoke(app, ["reference", SQUEEZENET, "--dtype", "fp32"])
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "1,235,496" in out and "6308352 B" in out and "28793728 B" in out
    assert "RKNN allocator emulation" in out and "fusion candidates: 26" in out


def test_reference_json_contract():
    result = runner.invoke(app, ["reference", SQUEEZENET, "--format", "json", "--dtype", "fp32"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["schema_version"] == 1
    assert data["totals"]["lower_bound_bytes"] == data["totals"]["greedy_bytes"] == 6_308_352
    planners = {p["planner"] for p in data["plans"]}
    assert planners == {
        "naive",
        "lower_bound",
        "greedy_by_size",
        "first_fit",
        "rknn",
        "rknn_greedy_by_size",
        "rknn_lower_bound",
    }
    assert len(data["curves"]["greedy_by_size"]) == 66 and len(data["ops"]) == 66
    assert {"offset_greedy", "rknn_offset", "native_bytes"} <= set(data["tensors"][0])


def test_reference_options_and_outputs(tmp_path, mobilenet_file):
    frames = tmp_path / "frames"
    plot = tmp_path / "curve.png"
    result = runner.invoke(
        app,
        [
            "reference",
            mobilenet_file,
            "--target",
            "rk3588",
            "--quirk",
            "dw32-as-64",
            "--format",
            "json",
            "--frames-out",
            str(frames),
            "--frames-format",
            "csv",
            "--plot",
            str(plot),
            "--input-shape",
            "input=1x3x224x224",
        ],
    )
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["totals"]["rknn_bytes"] == 2_157_568
    plans = pd.read_csv(frames / "ref_plans.csv")
    assert set(plans["planner"]) >= {"rknn", "greedy_by_size"}
    assert plot.stat().st_size > 1000 and plot.read_bytes()[:4] == b"\x89PNG"


@pytest.mark.parametrize(
    "args, message",
    [
        (["reference", "nope.onnx"], "no such file"),
        (["reference", SQUEEZENET, "--target", "rk9999"], "unknown RKNN target"),
        (["reference", SQUEEZENET, "--dtype", "int4"], "unknown dtype"),
        (["reference", SQUEEZENET, "--input-shape", "data_0=1x3xHx4"], "--input-shape"),
        (["reference", SQUEEZENET, "--quirk", "magic"], "unknown quirk"),
        (["reference", str(MOBILENET)], "not an ONNX model"),
        (["check", str(MOBILENET), "--onnx", str(MOBILENET)], "not an ONNX model"),
        (["check", "missing.log", "--onnx", SQUEEZENET], "missing.log"),
    ],
)
def test_errors_exit_2(args, message):
    result = runner.invoke(app, args)
    assert result.exit_code == 2
    assert message in result.output and "Traceback" not in result.output


def test_check_text(mobilenet_file):
    result = runner.invoke(app, ["check", str(MOBILENET), "--onnx", mobilenet_file, "--target", "rv1106"])
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "feature pool (RKNN emulation)" in out and "reproduced to the byte" in out
    assert "replay of the log's own table: 33 of 36 rows" in out
    assert "1,756,160" in out


def test_check_json_frames_and_plot(tmp_path, mobilenet_file):
    plot = tmp_path / "overlay.png"
    frames = tmp_path / "frames"
    log = RKNN / "29-doc-rknpu2-sram-runtime-log-level3-rk3588.log"
    result = runner.invoke(
        app,
        [
            "check",
            str(log),
            "--onnx",
            mobilenet_file,
            "--format",
            "json",
            "--quirk",
            "dw32-as-64",
            "--plot",
            str(plot),
            "--frames-out",
            str(frames),
        ],
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["schema_version"] == 1 and data["quirks"] == ["dw32-as-64"]
    pool = next(r for r in data["summary"] if r["item"] == "feature pool (RKNN emulation)")
    assert pool["log_value"] == pool["reference_value"] == 2_157_568
    assert data["replay"]["reproduced"] == 29 and data["replay"]["pool_base"] == 0xFF3E0000
    assert plot.read_bytes()[:4] == b"\x89PNG"
    assert (frames / "check_tensors.parquet").exists() and (frames / "replay.parquet").exists()


def test_figures_hold_the_curves(mobilenet_file):
    """Plots are built with matplotlib's object API (no pyplot state); the axes hold the data."""
    import logscope
    from logscope.reference import ReferenceOptions, analyze_model, check_log_against_model
    from logscope.render.reference import check_curves_figure, reference_curves_figure

    result = analyze_model(mobilenet_file, ReferenceOptions(target="rv1106"))
    top, bottom = reference_curves_figure(result).axes
    assert len(top.lines) == 3 and len(bottom.lines) == 3
    assert max(bottom.lines[0].get_ydata()) * 2**20 == 1_756_160  # the RKNN emulation's peak
    check = check_log_against_model(logscope.parse(MOBILENET), mobilenet_file, target="rv1106")
    (ax,) = check_curves_figure(check).axes
    log_line, ref_line, _ = ax.lines
    assert max(log_line.get_ydata()) * 2**20 == max(ref_line.get_ydata()) * 2**20 == 1_756_160
