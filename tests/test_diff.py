"""`logscope diff OLD NEW`: two builds compared, the toolkit-upgrade case built from fixture [09]."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

import logscope
from logscope.analysis.diff import diff_builds, pick_build, split_build_ref
from logscope.cli import app
from logscope.errors import InputError
from logscope.render.diff import render_diff_json, render_diff_markdown, render_diff_text
from tests.conftest import MOBILENET, ROOT

# Edits that turn [09] into "the same model after a toolkit upgrade".
UPGRADE = [
    (
        "W __init__: rknn-toolkit2 version: 1.5.2+b642f30c",
        "W __init__: rknn-toolkit2 version: 1.6.0+81f21f4d",
    ),
    # layer 7 moves to the CPU
    (
        "7    ConvClip         INT8     NPU    (1,128,56,56),(128,128,1,1),(128)",
        "7    ConvClip         INT8     CPU    (1,128,56,56),(128,128,1,1),(128)",
    ),
    # Relu6__13:0 gets one more C1 block: 8 -> 9 x (56,56,16), 401408 -> 451584 B
    (
        "(1,128,56,56)  (1,8,56,56,16)   | 0x00491a80 0x004f3a80 0x00062000",
        "(1,128,56,56)  (1,9,56,56,16)   | 0x00491a80 0x004ffe80 0x0006e400",
    ),
    ("Total Internal Memory Size: 1756160", "Total Internal Memory Size: 1931776"),  # +10 %
    (
        "I     convert_avgpool_to_global: remove node = ['MobilenetV1/Logits/AvgPool_1a/AvgPool'], "
        "add node = ['MobilenetV1/Logits/AvgPool_1a/AvgPool_2global']\n",
        "",
    ),
    ("--> Config model\n", "--> Config model\nW config: The 'target_platform' rv1106 is deprecated\n"),
]


@pytest.fixture(scope="module")
def upgraded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    text = MOBILENET.read_text(encoding="utf-8")
    for old, new in UPGRADE:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    path = tmp_path_factory.mktemp("diff") / "09-upgraded.log"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def upgrade_diff(upgraded: Path):
    return diff_builds(logscope.analyze(MOBILENET), logscope.analyze(upgraded))


def test_versions_and_memory(upgrade_diff):
    d = upgrade_diff
    changed = {c.name: (c.old, c.new) for c in d.version_changes}
    assert changed == {"toolkit_version": ("1.5.2+b642f30c", "1.6.0+81f21f4d")}
    memory = {c.name: c for c in d.memory}
    assert (memory["internal_bytes"].old, memory["internal_bytes"].new) == (1756160, 1931776)
    assert memory["internal_bytes"].change_pct == pytest.approx(10.0)
    assert memory["weight_bytes"].delta == 0
    assert memory["feature_sum_bytes"].delta == 451584 - 401408
    assert {c.name for c in d.reuse} == {"computed_reuse_rate"}
    assert [c.name for c in d.regressions(5)] == ["internal_bytes"]
    assert d.regressions(20) == []


def test_layers_fusions_tensors_messages(upgrade_diff):
    d = upgrade_diff
    assert d.layer_counts == (34, 34)
    assert d.target_counts["CPU"] == (1, 2) and d.target_counts["NPU"] == (33, 32)
    [move] = d.layer_targets
    assert (move["old_target"], move["new_target"], move["op_type"]) == ("NPU", "CPU", "ConvClip")
    assert move["layer"].startswith("Conv:MobilenetV1/MobilenetV1/Conv2d_3_pointwise")
    assert d.layers_added == d.layers_removed == []
    assert d.fusions_gained == []
    assert [(f["rule"], f["removed_nodes"]) for f in d.fusions_lost] == [
        ("convert_avgpool_to_global", ["MobilenetV1/Logits/AvgPool_1a/AvgPool"])
    ]
    assert [(c.name, c.old, c.new) for c in d.fusion_counts] == [("fuse_ops/convert_avgpool_to_global", 1, 0)]
    [resized] = d.tensors_resized
    assert (resized["name"], resized["old_bytes"], resized["new_bytes"]) == ("Relu6__13:0", 401408, 451584)
    assert resized["new_native_shape"] == "(1,9,56,56,16)"
    assert [m["message"] for m in d.messages_new] == ["The 'target_platform' rv1106 is deprecated"]
    assert d.messages_gone == []
    assert d.findings_compared


def test_renderers(upgrade_diff):
    d = upgrade_diff
    doc = json.loads(render_diff_json(d, 5.0))
    assert doc["schema_version"] == 1
    assert doc["layers"]["target_changes"][0]["new_target"] == "CPU"
    assert [r["name"] for r in doc["regressions"]] == ["internal_bytes"]
    assert {"versions", "settings", "memory", "reuse", "fusions", "tensors", "messages", "findings"} <= set(
        doc
    )
    text = render_diff_text(d, 5.0)
    assert "* toolkit_version" in text and "NPU -> CPU" in text and "REGRESSION (> 5%)" in text
    assert "Relu6__13:0: 401,408 -> 451,584 B" in text
    markdown = render_diff_markdown(d, 20.0)
    assert "| **toolkit_version** | 1.5.2+b642f30c | 1.6.0+81f21f4d |" in markdown
    assert "No regression over 20%." in markdown


def test_two_builds_of_one_file(tmp_path):
    sys.path.insert(0, str(ROOT))
    from benchmarks.generate import generate_log

    path = tmp_path / "two.log"
    generate_log(path, builds=2, seed=3, noise_ratio=0.0)
    log = logscope.parse(path)
    assert pick_build(log, None) == 1 and pick_build(log, -2) == 0
    d = diff_builds(log, log, 0, 1)
    assert (d.old.build_index, d.new.build_index) == (0, 1)
    assert d.layer_counts[0] != d.layer_counts[1]
    runner = CliRunner()
    same = runner.invoke(app, ["diff", f"{path}#0", f"{path}#0", "--fail-on-regression", "0", "-f", "json"])
    assert same.exit_code == 0, same.output
    assert json.loads(same.stdout)["regressions"] == []
    grown = runner.invoke(app, ["diff", f"{path}#1", f"{path}#0", "--fail-on-regression", "1"])
    shrunk = runner.invoke(app, ["diff", f"{path}#0", f"{path}#1", "--fail-on-regression", "1"])
    assert sorted([grown.exit_code, shrunk.exit_code]) in ([0, 1], [1, 1])
    assert runner.invoke(app, ["diff", f"{path}#0", f"{path}#9"]).exit_code == 2


def test_cli(upgraded):
    runner = CliRunner()
    result = runner.invoke(app, ["diff", str(MOBILENET), str(upgraded), "--fail-on-regression", "5"])
    assert result.exit_code == 1 and "REGRESSION" in result.stdout
    ok = runner.invoke(
        app, ["diff", str(MOBILENET), str(upgraded), "--fail-on-regression", "15", "-f", "markdown"]
    )
    assert ok.exit_code == 0 and ok.stdout.startswith("## Build diff")
    plain = runner.invoke(app, ["diff", str(MOBILENET), str(upgraded)])
    assert plain.exit_code == 0
    assert runner.invoke(app, ["diff", str(MOBILENET), "missing.log"]).exit_code == 2


def test_build_refs(tmp_path):
    assert split_build_ref("a.log#2", exists=lambda p: False) == ("a.log", 2)
    assert split_build_ref("a.log#-1", exists=lambda p: False) == ("a.log", -1)
    assert split_build_ref("a.log", exists=lambda p: False) == ("a.log", None)
    odd = tmp_path / "odd#1"
    odd.write_text("x")
    assert split_build_ref(str(odd)) == (str(odd), None)  # an existing name is never split
    mcu = logscope.parse(Path(ROOT) / "fixtures" / "mcu" / "19-nnom-kws-compile-memblocks-and-model-stat.txt")
    with pytest.raises(InputError, match="no RKNN build"):
        pick_build(mcu, None)
