"""`logscope report` and `logscope plot`: arguments in, files out, exit codes."""

from __future__ import annotations

import json

import onnx
import pytest
from typer.testing import CliRunner

from logscope.cli import app
from tests.conftest import FIXTURES, MOBILENET

runner = CliRunner()
HEAP_LOG = FIXTURES / "synthetic" / "heap-trace-stm32-uart-bytes-leak.txt"
NNOM_LOG = FIXTURES / "mcu" / "19-nnom-kws-compile-memblocks-and-model-stat.txt"


def test_report_html_md_json(tmp_path):
    for name, files in (("r.html", [HEAP_LOG]), ("r.json", [MOBILENET, HEAP_LOG])):
        result = runner.invoke(app, ["report", *map(str, files), "-o", str(tmp_path / name)])
        assert result.exit_code == 0, result.output
        assert f"wrote {tmp_path / name}" in result.stderr
    assert (tmp_path / "r.html").read_text().count("<section") == 1
    data = json.loads((tmp_path / "r.json").read_text())
    assert [f["verdict"]["level"] for f in data["files"]] == ["warning", "error"]
    result = runner.invoke(app, ["report", str(HEAP_LOG), "-o", str(tmp_path / "r.md")])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "r-1-memory.png").read_bytes()[:4] == b"\x89PNG"
    assert "![Memory over ops](r-1-memory.png)" in (tmp_path / "r.md").read_text()


def test_report_compact_and_sram(tmp_path):
    out = tmp_path / "c.md"
    result = runner.invoke(app, ["report", str(NNOM_LOG), "-o", str(out), "--compact", "--sram", "8KiB"])
    assert result.exit_code == 0, result.output
    text = out.read_text()
    assert len(text.splitlines()) <= 60 and "![" not in text
    assert "OVER BUDGET by | 3.00 KiB (3072 B)" in text  # 11264 B peak against the 8 KiB given


def test_report_errors_are_one_line(tmp_path):
    for args, message in (
        (["report", str(MOBILENET), "-o", str(tmp_path / "r.pdf")], "use .html, .md or .json"),
        (["report", str(MOBILENET), "-o", str(tmp_path / "r.html"), "--compact"], "--compact"),
        (["report", str(tmp_path / "missing.log"), "-o", str(tmp_path / "r.html")], "missing.log"),
    ):
        result = runner.invoke(app, args)
        assert result.exit_code == 2, result.output
        assert result.stderr.startswith("logscope: error:") and message in result.stderr
        assert "Traceback" not in result.output


@pytest.mark.parametrize(
    ("path", "kind"),
    [
        (MOBILENET, "memory"),
        (MOBILENET, "address-map"),
        (MOBILENET, "breakdown"),
        (MOBILENET, "perf"),
        (FIXTURES / "mcu" / "18-espidf-sysview-host-heap-log-timestamped.txt", "fragmentation"),
    ],
)
def test_plot_every_kind(tmp_path, path, kind):
    out = tmp_path / f"{kind}.svg"
    result = runner.invoke(app, ["plot", str(path), "--kind", kind, "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert b"<svg" in out.read_bytes()[:400]


def test_plot_errors(tmp_path):
    result = runner.invoke(
        app, ["plot", str(MOBILENET), "--kind", "fragmentation", "-o", str(tmp_path / "f.png")]
    )
    assert result.exit_code == 2 and "no alloc/free trace" in result.stderr
    result = runner.invoke(app, ["plot", str(MOBILENET), "-o", str(tmp_path / "f.jpg")])
    assert result.exit_code == 2 and ".png or .svg" in result.stderr
    result = runner.invoke(app, ["plot", str(MOBILENET), "--kind", "pie", "-o", str(tmp_path / "f.png")])
    assert result.exit_code == 2


def test_plot_memory_with_an_onnx_reference(tmp_path):
    from tests.check_models import mobilenet_v1

    model = tmp_path / "mobilenet_v1.onnx"
    onnx.save(mobilenet_v1(), model)
    out = tmp_path / "m.svg"
    result = runner.invoke(app, ["plot", str(MOBILENET), "--onnx", str(model), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert "mobilenet_v1.onnx (RKNN emulation) (high-water)" in out.read_text()
