"""The `logscope parse` command: exit codes, formats, frames on disk."""

from __future__ import annotations

import gzip
import json

import pandas as pd
from typer.testing import CliRunner

from logscope.cli import app
from tests.conftest import MOBILENET, RKNN

runner = CliRunner()


def test_text_summary():
    result = runner.invoke(app, ["parse", str(MOBILENET)])
    assert result.exit_code == 0, result.output
    assert "1756160 B" in result.stdout and "4447296 B" in result.stdout and "done" in result.stdout


def test_json_contract():
    result = runner.invoke(app, ["parse", str(MOBILENET), "--format", "json"])
    assert result.exit_code == 0
    data = json.loads(result.stdout)
    assert data["schema_version"] == 1 and data["kind"] == "rknn-build"
    assert "MEM001" in [f["code"] for f in data["findings"]]  # rules: tests/rules/test_rules_cli.py
    build = data["builds"][0]
    assert {"toolkit_version", "compiler_version", "target_platform", "status", "memory", "counts"} <= set(
        build
    )
    assert set(build["memory"]) >= {
        "weight_bytes",
        "internal_bytes",
        "other_bytes",
        "total_bytes",
        "model_bytes",
        "activation_bytes",
        "scratch_bytes",
        "reuse_rate",
        "peak_layer",
    }
    assert build["memory"]["internal_bytes"] == 1756160 and build["memory"]["other_bytes"] is None
    assert build["counts"] == {
        "layers": 34,
        "feature_tensors": 36,
        "const_tensors": 59,
        "fusions": 8,
        "warnings": 6,
        "errors": 0,
        "perf_layers": 0,
        "allocations": 0,
        "failed_allocations": 0,
        "tensor_attrs": 0,
    }


def test_markdown_and_several_files():
    result = runner.invoke(
        app,
        [
            "parse",
            str(MOBILENET),
            str(RKNN / "05-build-argb-abort-tqdm-tk2-2.0.0b0.log"),
            "--format",
            "markdown",
        ],
    )
    assert result.exit_code == 1  # 05 failed to build: an error finding (BLD001)
    assert result.stdout.count("### build 0") == 2 and "| weight |" in result.stdout


def test_frames_out(tmp_path):
    for fmt in ("parquet", "csv"):
        out = tmp_path / fmt
        result = runner.invoke(
            app, ["parse", str(MOBILENET), "--frames-out", str(out), "--frames-format", fmt]
        )
        assert result.exit_code == 0
        read = pd.read_parquet if fmt == "parquet" else pd.read_csv
        assert len(read(out / f"tensors.{fmt}")) == 95
        assert len(read(out / f"unparsed.{fmt}")) == 1


def test_compressed_input(tmp_path):
    packed = tmp_path / "build.log.gz"
    packed.write_bytes(gzip.compress(MOBILENET.read_bytes()))
    result = runner.invoke(app, ["parse", str(packed), "--format", "json"])
    assert (
        result.exit_code == 0 and json.loads(result.stdout)["builds"][0]["memory"]["weight_bytes"] == 4447296
    )


def test_bad_inputs_exit_2_without_traceback(tmp_path):
    binary = tmp_path / "model.rknn"
    binary.write_bytes(b"RKNN\x00\x01\x02" + bytes(range(256)) * 40)
    prose = tmp_path / "notes.txt"
    prose.write_text("nothing to see here\njust words\n")
    for path in (binary, prose, tmp_path / "missing.log", tmp_path):
        result = runner.invoke(app, ["parse", str(path)])
        assert result.exit_code == 2, (path, result.output)
        assert "Traceback" not in result.output and "logscope: error:" in result.output
