"""`logscope diff OLD NEW -o diff.html|diff.md`: the visual comparison of two builds.

The "new" build is the real MobileNetV1 log [09] with two edits a newer toolkit could make: layer 5
moved to the CPU, and layer 4's input `Relu6__9:0` given 0x10000 more bytes (End and Size both).
"""

from __future__ import annotations

import json
import re

import pytest
from typer.testing import CliRunner

import logscope
from logscope.analysis.diff import diff_builds
from logscope.cli import app
from logscope.io import decode_bytes
from logscope.report.diffpage import layer_deltas, render_diff_html
from logscope.rules import Config, analyze_log
from tests.conftest import MOBILENET, RKNN
from tests.test_report import Page

runner = CliRunner()
OLD_ROW = "D RKNN: [15:13:15.953] 4   ConvClip       Relu6__9:0"
OLD_RANGE = "0x0053d280 0x00601280 0x000c4000"
NEW_RANGE = "0x0053d280 0x00611280 0x000d4000"


@pytest.fixture(scope="module")
def new_text() -> str:
    text = MOBILENET.read_text(encoding="utf-8")
    lines = text.splitlines(keepends=True)
    (k,) = [i for i, line in enumerate(lines) if line.startswith(OLD_ROW)]
    assert OLD_RANGE in lines[k]
    lines[k] = lines[k].replace(OLD_RANGE, NEW_RANGE)
    (j,) = [
        i for i, line in enumerate(lines) if "Conv:MobilenetV1/MobilenetV1/Conv2d_2_pointwise/Relu6" in line
    ]
    lines[j] = lines[j].replace("INT8     NPU ", "INT8     CPU ", 1)
    return "".join(lines)


@pytest.fixture(scope="module")
def pair(new_text):
    old = analyze_log(logscope.parse(MOBILENET), Config())
    new = analyze_log(logscope.parse_text(decode_bytes(new_text.encode(), "new.log")), Config())
    return old, new, diff_builds(old, new)


def test_layer_deltas_name_what_changed(pair):
    old, new, diff = pair
    deltas = {d.layer: d for d in layer_deltas(old, new, diff)}
    assert set(deltas) == {
        "Conv:MobilenetV1/MobilenetV1/Conv2d_2_depthwise/Relu6",  # layer 4 consumes Relu6__9:0
        "Conv:MobilenetV1/MobilenetV1/Conv2d_2_pointwise/Relu6",  # layer 5 moved to the CPU
    }
    grown = deltas["Conv:MobilenetV1/MobilenetV1/Conv2d_2_depthwise/Relu6"]
    assert grown.tensor_delta == 0x10000 and grown.old_target == grown.new_target == "NPU"
    moved = deltas["Conv:MobilenetV1/MobilenetV1/Conv2d_2_pointwise/Relu6"]
    assert (moved.old_target, moved.new_target, moved.tensor_delta) == ("NPU", "CPU", 0)
    assert next(d.layer for d in layer_deltas(old, new, diff)) == grown.layer  # bytes first


def test_html_marks_regressions_and_carries_both_builds(pair):
    old, new, diff = pair
    html = render_diff_html(old, new, diff, fail_pct=1.0)
    page = Page(html)
    rows = {
        cells[0]: cells
        for cells in (
            [c.strip() for c in re.split(r"</?td[^>]*>", row) if c.strip()]
            for row in re.findall(r"<tr class=\"regression\">(.*?)</tr>", html, re.S)
        )
    }
    # The pool span grew by 65,536 B (+3.7 %) and the reuse rate fell 1.2 %: both over 1 %, both marked.
    # The sum of sizes grew too (+1.2 %) but is not a regression figure: more tensors can be fine.
    assert sorted(name.split()[0] for name in rows) == ["computed_reuse_rate", "feature_pool_bytes"]
    text = " ".join(page.text)
    assert "+65,536 B (+1.2 %)" in text and "NPU → CPU" in text
    (raw,) = re.findall(r'<script type="application/json" id="logscope-data">(.*?)</script>', html, re.S)
    data = json.loads(raw)
    assert [log["name"] for log in data["logs"]] == ["old: " + MOBILENET.name, "new: new.log"]
    assert [len(log["views"]) for log in data["logs"]] == [1, 1]
    assert 'id="compare-chart"' in html and not [
        a for _, a in page.tags if any(k.startswith("on") for k in a)
    ]


def test_no_regression_under_a_higher_threshold(pair):
    old, new, diff = pair
    html = render_diff_html(old, new, diff, fail_pct=5.0)
    assert 'class="regression"' not in html and "No memory figure grew by more than 5.0 %" in html


def test_cli_writes_html_and_markdown(tmp_path, new_text):
    new_path = tmp_path / "new.log"
    new_path.write_text(new_text, encoding="utf-8")
    html = tmp_path / "diff.html"
    result = runner.invoke(app, ["diff", str(MOBILENET), str(new_path), "-o", str(html)])
    assert result.exit_code == 0, result.output
    assert f"wrote {html}" in result.stderr and html.stat().st_size > 100_000
    md = tmp_path / "diff.md"
    result = runner.invoke(app, ["diff", str(MOBILENET), str(new_path), "-o", str(md)])
    assert result.exit_code == 0, result.output
    image = tmp_path / "diff-memory.png"
    assert image.read_bytes()[:4] == b"\x89PNG" and "](diff-memory.png)" in md.read_text()
    bad = runner.invoke(app, ["diff", str(MOBILENET), str(new_path), "-o", str(tmp_path / "diff.txt")])
    assert bad.exit_code == 2 and bad.stderr.count("\n") == 1 and "diff writes .html or .md" in bad.stderr


def test_two_fixtures_side_by_side(tmp_path):
    """Two different real builds (an RV1106 simulator build and an RK3588 runtime log) overlay too."""
    other = RKNN / "29-doc-rknpu2-sram-runtime-log-level3-rk3588.log"
    out = tmp_path / "d.html"
    result = runner.invoke(app, ["diff", str(MOBILENET), str(other), "-o", str(out)])
    assert result.exit_code == 0, result.output
    (raw,) = re.findall(r'id="logscope-data">(.*?)</script>', out.read_text(), re.S)
    views = [log["views"][0]["span"]["bytes"] for log in json.loads(raw)["logs"]]
    assert views == [1756160, 2157568]
