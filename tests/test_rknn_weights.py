"""RKNN weight memory: the const layout rules (logscope.reference.rknn_weights) from the format, the
corpus measurement they are pinned to, and the check's itemised weight row.

The rules are read off the Const Tensor Information Table (`Size` against `OrigShape`, rows on 64-B
boundaries); the unit tests below state them with the corpus rows they come from. Fixture [09] (a
MobileNet v1 built for rv1106 by toolkit 1.5.2, outside the corpus) is predicted to the byte.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import onnx
import pandas as pd
import pytest
from onnx import TensorProto, helper, numpy_helper

import logscope
from logscope.reference import ReferenceOptions, analyze_model, check_log_against_model
from logscope.reference.graph import build_graph
from logscope.reference.rknn_weights import (
    CONST_ALIGN,
    ChannelRound,
    align_up,
    plan_weights,
    weight_layout,
)
from logscope.render.reference import render_reference_text
from tests.check_models import mobilenet_v1
from tests.conftest import MOBILENET, RKNN

SRAM_LOG = RKNN / "29-doc-rknpu2-sram-runtime-log-level3-rk3588.log"

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "fixtures" / "rknn-compiler"
sys.path.insert(0, str(ROOT / "tools" / "corpus"))

import rknn_models  # noqa: E402
import rknn_weight_accuracy  # noqa: E402

BUILDS = json.loads((CORPUS / "manifest.json").read_text())["builds"]  # the main corpus


def _model(nodes, inputs, inits, outputs, opset=13):
    graph = helper.make_graph(
        nodes,
        "t",
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in inputs],
        [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in outputs],
        [numpy_helper.from_array(np.ones(s, np.float32), n) for n, s in inits],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def _conv(name, x, w, b=None, group=1, k=3):
    inputs = [x, w] + ([b] if b else [])
    return helper.make_node("Conv", inputs, [f"{name}_o0"], name=name, group=group, pads=[k // 2] * 4)


def _rows(model, target, dtype="int8", toolkit=None):
    plan = plan_weights(build_graph(model, {}), target, dtype, toolkit)
    assert plan is not None
    return plan, {r.name: r for r in plan.rows}


# --- the rounding and the per-target rules ------------------------------------------------------------


def test_channel_rounding_forms():
    assert [ChannelRound(16)(c) for c in (3, 24, 40, 72)] == [16, 32, 48, 80]
    # rk3588 int8 depthwise: at least 16, powers of two up to 64, then multiples of 16
    dw = ChannelRound(16, minimum=16, pow2_up_to=64)
    assert [dw(c) for c in (3, 24, 40, 72, 120, 200)] == [16, 32, 64, 80, 128, 208]
    # rk3566 / rk3588 fp16: multiples of 8, a 24 tail in a 32 block takes the whole block
    tail = ChannelRound(8, minimum=8, tail24=True)
    assert [tail(c) for c in (3, 24, 40, 72, 120, 200, 108)] == [8, 32, 40, 72, 128, 200, 112]


def test_rk3588_int8_kernel_bias_and_depthwise_sizes():
    """mobilenet_v1 on rk3588 (2.5.0): w164 (1001,1024,1,1) 0xfa800 B, w1 (32,3,3,3) 0x1200, dw w19
    (1,64,3,3) 0x240, w2 (32) 0x100, dw bias w8 (32) 0x200; dw_odd w17 (1,40,3,3) 576."""
    lay = weight_layout("rk3588", "int8")
    assert lay is not None
    assert lay.cout(1001) * lay.cin(1024) == 0xFA800
    assert lay.cout(32) * lay.cin_input(3) * 9 == 0x1200
    assert lay.dw(64) * 9 * lay.dw_factor == 0x240 and lay.dw(40) * 9 == 576
    assert lay.bias(32) * lay.bias_bytes == 0x100
    assert lay.dw_bias(32) * lay.dw_bias_bytes == 0x200
    assert lay.fixed_block == 2048


def test_rk3562_int8_stores_depthwise_kernels_in_16_bits():
    """dw_odd on rk3562 int8: w25 (1,72,3,3) 1,728 B = 96 x 9 x 2; its bias w26 (72) 576 = 96 x 6."""
    lay = weight_layout("rk3562", "int8")
    assert lay is not None
    assert lay.dw(72) * 9 * lay.dw_factor == 1728
    assert lay.dw_bias(72) * lay.dw_bias_bytes == 576


def test_every_row_starts_on_64_bytes_and_the_total_adds_the_block():
    model = _model(
        [_conv("Conv1", "x", "w1", "b1"), _conv("Conv2", "Conv1_o0", "w2", "b2", k=1)],
        [("x", [1, 3, 16, 16])],
        [("w1", (8, 3, 3, 3)), ("b1", (8,)), ("w2", (10, 8, 1, 1)), ("b2", (10,))],
        ["Conv2_o0"],
    )
    plan, _ = _rows(model, "rk3588")
    # w1: Cout 8, Cin 3 -> 16, 3 x 3: 1,152 B; b1: 32 channels x 8 B; w2: 10 x 16; b2: 32 x 8
    assert [(r.name, r.size_bytes) for r in plan.rows] == [
        ("w1", 1152),
        ("b1", 256),
        ("w2", 160),
        ("b2", 256),
    ]
    assert plan.table_bytes == 1152 + 256 + 192 + 256
    assert plan.total == plan.table_bytes + 2048 and plan.complete


def test_a_conv_without_bias_gets_one_in_int8_only():
    model = _model([_conv("Conv1", "x", "w1")], [("x", [1, 3, 8, 8])], [("w1", (4, 3, 3, 3))], ["Conv1_o0"])
    _, int8 = _rows(model, "rk3566", "int8")
    _, fp16 = _rows(model, "rk3566", "fp16")
    assert "w1_bias_0" in int8 and int8["w1_bias_0"].component == "added bias"
    assert set(fp16) == {"w1"}


def test_only_an_image_input_of_at_most_4_channels_takes_the_input_rule():
    """multi_io `features` (1,8,32,32) on rk3562 int8: w5 (16,8,1,1) is 256 B (Cin 8 -> 16), while the
    3-channel image's conv w1 (16,3,3,3) is 576 B (Cin 3 -> 4)."""
    model = rknn_models.build("multi_io", "zeros")
    _, rows = _rows(model, "rk3562")
    assert rows["w1"].size_bytes == 576 and rows["w5"].size_bytes == 256


def test_rk3576_input_conv_depends_on_the_input_width():
    """rk3576 int8: the 3-channel first conv stores Cin 8 at widths 64 .. 640, Cin 4 at 13, 56, 75."""
    _, wide = _rows(rknn_models.build("multi_io", "zeros"), "rk3576")
    _, narrow = _rows(rknn_models.build("chain_75", "zeros"), "rk3576")
    assert wide["w1"].size_bytes == 16 * 8 * 9 and narrow["w1"].size_bytes == 16 * 4 * 9


@pytest.mark.parametrize(
    ("side", "kernels"),
    [(14, [(7, 7), (2, 2)]), (9, [(7, 7), (2, 2)]), (28, [(7, 7), (4, 4)]), (5, [(5, 5)])],
)
def test_global_average_pool_becomes_depthwise_convs_of_at_most_7(side, kernels):
    model = _model(
        [helper.make_node("GlobalAveragePool", ["x"], ["g"], name="GlobalAveragePool1")],
        [("x", [1, 32, side, side])],
        [],
        ["g"],
    )
    plan, rows = _rows(model, "rk3588", "fp16")
    assert [r.shape[2:] for r in plan.rows if r.component == "added kernel"] == kernels
    assert rows["GlobalAveragePool1_2conv0_i2"].component == "added bias"


def test_resize_rows_follow_the_toolkit_version():
    """unet_128: 2.2.0/2.3.0 turn the nearest Resize into a depthwise deconvolution (`Resize28_2deconv_i1`
    (64,1,4,4)); 2.3.2 keeps the Resize (`empty_placeholder_0`, `c27`); 2.5.0 also splits the Concat ->
    Conv after it by input channels (`Resize28_o0_conv_i1` (32,64,3,3), `Relu17_o0_conv_i1`)."""
    model = rknn_models.build("unet_128", "zeros")
    _, old = _rows(model, "rk3588", "int8", "2.3.0")
    _, kept = _rows(model, "rk3588", "int8", "2.3.2")
    _, new = _rows(model, "rk3588", "int8", "2.5.0")
    assert old["Resize28_2deconv_i1"].shape == (64, 1, 4, 4) and "c27" not in old
    assert {"empty_placeholder_0", "c27", "w30"} <= set(kept) and "Resize28_2deconv_i1" not in kept
    assert new["Resize28_o0_conv_i1"].shape == (32, 64, 3, 3) and "w30" not in new
    assert new["Relu17_o0_conv_i1"].shape == (32, 32, 3, 3) and "Relu17_o0_conv_i2" in new
    assert "Resize28_o0_conv_i1_bias_0" in new  # int8: the Resize branch's conv gets a bias of its own


def test_unknown_layouts_and_unmodelled_ops_predict_no_total():
    assert plan_weights(build_graph(mobilenet_v1(), {}), "rk1808", "int8") is None
    block_unknown = plan_weights(build_graph(mobilenet_v1(), {}), "rk3576", "int8")
    assert block_unknown is not None and not block_unknown.complete
    lstm = rknn_models.build("lstm", "zeros")
    plan = plan_weights(build_graph(lstm, {}), "rk3588", "int8", "2.3.0")
    assert plan is not None and plan.skipped == ("LSTM4",) and not plan.complete
    ref = analyze_model(lstm, ReferenceOptions(target="rk3588", toolkit="2.3.0"))
    assert ref.totals["rknn_weight_bytes"] is None and ref.totals["rknn_weight_table_bytes"] is not None
    assert any("no weight total is predicted" in n for n in ref.notes)


def test_recurrent_consts():
    """lstm (F 32, H 64) on rk3562 int8, 2.5.0: `w1` 4 gates x 64 x Cin 32 (INT8, 8,192 B), `w2` 4 x 64 x 64,
    `w3` 8 x 64 x 8 B; the projection `LSTM4_o0_input_proj` (64,64,1,1) 16,384 B; and 384 B beyond the
    table. gru on rv1106 2.3.2: fp32 CPU copies, 16 times their size (`w1` (1,144,32) 294,912 B)."""
    plan, rows = _rows(rknn_models.build("lstm", "zeros"), "rk3562", "int8", "2.5.0")
    assert [rows[n].size_bytes for n in ("w1", "w2", "w3")] == [8192, 16384, 4096]
    assert rows["LSTM4_o0_input_proj"].size_bytes == 16384 and plan.fixed_block == 384
    assert plan.total == 46_528  # the log prints 45.4375KB
    _, gru = _rows(rknn_models.build("gru", "zeros"), "rv1106", "int8", "2.3.2")
    assert gru["w1"].size_bytes == 294_912 and gru["w1"].dtype == "FLOAT"


def test_transformer_consts():
    """transformer (T 49, D 64) on rk3588 int8, 2.5.0: LayerNorm `w1` FLOAT16 (1,64,1,1) 128 B and `w2`
    FLOAT 256 B; MatMul `w18` (64,64) as a (64,64,1,1) conv with its Add's `w20` as bias; `w34` (no Add)
    gets `w34_bias_0` from 2.3.2 on; the attention scale `c27` is folded on rk3588, a row on rk3566."""
    model = rknn_models.build("transformer", "zeros")
    plan, rows = _rows(model, "rk3588", "int8", "2.5.0")
    assert plan.complete and plan.total == 56_960  # the log's Total Weight Memory Size: 55.625KB
    assert (rows["w1"].size_bytes, rows["w2"].size_bytes) == (128, 256)
    assert rows["w18"].shape == (64, 64, 1, 1) and rows["w20"].component == "bias"
    assert "w34_bias_0" in rows and "c27" not in rows
    _, old = _rows(model, "rk3588", "int8", "2.3.0")
    assert "w34_bias_0" not in old and "input_rs_i1" in old
    _, rk3566 = _rows(model, "rk3566", "int8", "2.5.0")
    assert rk3566["c27"].component == "scalar constant"


def test_fixture_09_toolkit_1_5_2_is_predicted_to_the_byte():
    """[09] prints `Total Weight Memory Size: 4447296` for MobileNet v1 on rv1106 (toolkit 1.5.2, not in
    the corpus the rules were read from)."""
    log = logscope.parse(MOBILENET)
    assert int(log.frames["memory"]["weight_bytes"].iloc[0]) == 4_447_296
    ref = analyze_model(mobilenet_v1(), ReferenceOptions(target="rv1106"))
    assert ref.totals["rknn_weight_bytes"] == 4_447_296
    frame = ref.frames["ref_rknn_weights"]
    assert int(frame["stored_bytes"].sum()) == 4_447_296 and (frame["stored_bytes"] % CONST_ALIGN == 0).all()
    assert "RKNN weight memory" in render_reference_text(ref)


# --- the check's weight row -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def mobilenet_file(tmp_path_factory) -> str:
    path = tmp_path_factory.mktemp("models") / "mobilenet_v1.onnx"
    onnx.save(mobilenet_v1(), path)
    return str(path)


def _summary(check):
    return {r["item"]: r for r in check.frames["check_summary"].to_dict("records")}


def test_check_itemises_the_weight_total_per_component(tmp_path):
    model = rknn_models.build("mobilenet_v1", "zeros")
    path = tmp_path / "m.onnx"
    onnx.save(model, path)
    log = logscope.parse(CORPUS / "2.5.0" / "mobilenet_v1-rk3588-int8.log.gz")
    check = check_log_against_model(log, str(path), target="rk3588", toolkit="2.5.0")
    row = _summary(check)["weight memory (RKNN const layout)"]
    assert (row["log_value"], row["reference_value"], row["difference"]) == (4_371_395, 4_371_392, 3)
    cause = row["likely_cause"]
    assert "kernel 4,170,240 B logged / 4,170,240 predicted" in cause
    assert "block beyond the table 2,051 B logged / 2,048 predicted" in cause
    assert "remainder +3 B (the printed KiB rounding)" in cause and "unexplained" not in cause
    weights = check.frames["check_weights"]
    assert (
        len(weights) == 59 and (weights["size_difference"] == 0).all() and weights["log_line"].notna().all()
    )


def test_check_names_the_targets_whose_layout_reproduces_the_weight_total(tmp_path):
    """The corpus logs name no target: the weight total alone singles out rk3562 for this yolo_320 build."""
    path = tmp_path / "m.onnx"
    onnx.save(rknn_models.build("yolo_320", "zeros"), path)
    log = logscope.parse(CORPUS / "2.5.0" / "yolo_320-rk3562-int8.log.gz")
    check = check_log_against_model(log, str(path))
    assert "the logged weight total 271,041 B (int8) matches the const layout of: rk3562" in check.notes


def test_check_without_a_const_table_states_the_whole_difference(mobilenet_file):
    """[29] (an rknpu2 runtime log, rk3588) prints a weight total but no const table."""
    log = logscope.parse(SRAM_LOG)
    row = _summary(check_log_against_model(log, mobilenet_file, target="rk3588"))[
        "weight memory (RKNN const layout)"
    ]
    assert (row["log_value"], row["reference_value"]) == (4_260_864, 4_371_392)
    assert row["likely_cause"].startswith("the log has no const table: kernel 4,170,240 B")
    assert row["likely_cause"].endswith(
        "unexplained remainder -110,528 B (the log lists no const rows to compare)"
    )


def test_check_states_the_unmodelled_block_as_the_remainder(tmp_path):
    path = tmp_path / "m.onnx"
    onnx.save(rknn_models.build("head_1x1", "zeros"), path)
    log = logscope.parse(CORPUS / "2.5.0" / "head_1x1-rk3576-fp16.log.gz")
    check = check_log_against_model(log, str(path), target="rk3576", dtype="fp16", toolkit="2.5.0")
    row = _summary(check)["weight memory (RKNN const layout)"]
    assert pd.isna(row["reference_value"])  # no total predicted: the block is not modelled
    assert (
        "unexplained remainder +2,304 B: rk3576's block beyond the table is not modelled"
        in row["likely_cause"]
    )


# --- the corpus -----------------------------------------------------------------------------------------

# group -> target -> (builds, within 0.5 %, exact) of rknn_weight_accuracy.per_target; rk3576 and
# rv1126b are measured on the const table alone where their block is not modelled (all but recurrent).
_NO_BLOCK = {"rk3576", "rv1126b"}
EXPECTED = {
    "cnn": {
        "rk2118": (18, 18, 18),
        "rk3562": (80, 80, 80),
        "rk3566": (80, 80, 80),
        "rk3568": (40, 40, 40),
        "rk3576": (80, 5, 0),
        "rk3588": (80, 80, 80),
        "rv1103": (20, 20, 20),
        "rv1103b": (20, 20, 20),
        "rv1106": (40, 40, 40),
        "rv1106b": (20, 20, 20),
        "rv1126b": (20, 2, 0),
    },
    "cnn-held-out": {
        "rk2118": (4, 4, 4),
        "rk3562": (12, 12, 12),
        "rk3566": (12, 12, 10),
        "rk3568": (8, 8, 6),
        "rk3576": (12, 0, 0),
        "rk3588": (12, 12, 10),
        "rv1103": (4, 4, 4),
        "rv1103b": (4, 4, 4),
        "rv1106": (6, 6, 6),
        "rv1106b": (4, 4, 4),
        "rv1126b": (4, 0, 0),
    },
    "transformer": {
        "rk2118": (2, 2, 2),
        "rk3562": (8, 8, 8),
        "rk3566": (8, 8, 8),
        "rk3568": (4, 4, 4),
        "rk3576": (8, 0, 0),
        "rk3588": (8, 8, 8),
        "rv1103": (2, 2, 2),
        "rv1103b": (2, 2, 2),
        "rv1106": (4, 4, 4),
        "rv1106b": (2, 2, 2),
        "rv1126b": (2, 0, 0),
    },
    "transformer-held-out": {
        "rk2118": (16, 16, 16),
        "rk3562": (96, 96, 96),
        "rk3566": (64, 64, 64),
        "rk3568": (32, 32, 32),
        "rk3576": (96, 0, 0),
        "rk3588": (224, 224, 224),
        "rv1103": (24, 24, 24),
        "rv1103b": (16, 16, 16),
        "rv1106": (48, 48, 48),
        "rv1106b": (16, 16, 16),
        "rv1126b": (32, 0, 0),
    },
    # 2.2.0 and 2.3.0 builds get no prediction (the recurrent layout is learned from 2.3.2 and 2.5.0)
    "recurrent": {
        "rk2118": (20, 12, 12),
        "rk3562": (48, 24, 24),
        "rk3566": (38, 18, 18),
        "rk3568": (37, 23, 23),
        "rk3576": (48, 24, 24),
        "rk3588": (48, 24, 24),
        "rv1103": (20, 12, 12),
        "rv1103b": (20, 12, 12),
        "rv1106": (24, 12, 12),
        "rv1106b": (20, 12, 12),
        "rv1126b": (12, 12, 12),
    },
    "recurrent-held-out": {
        "rk2118": (16, 8, 8),
        "rk3562": (32, 16, 16),
        "rk3566": (29, 11, 11),
        "rk3568": (29, 11, 11),
        "rk3576": (29, 15, 15),
        "rk3588": (32, 16, 16),
        "rv1103": (16, 8, 8),
        "rv1103b": (16, 8, 8),
        "rv1106": (16, 8, 8),
        "rv1106b": (16, 8, 8),
        "rv1126b": (8, 8, 8),
    },
}


@pytest.fixture(scope="module")
def outcomes():
    return rknn_weight_accuracy.measure()


@pytest.mark.parametrize("group", sorted(EXPECTED))
def test_corpus_counts_per_target(outcomes, group):
    measured = rknn_weight_accuracy.per_target([o for o in outcomes if o.group == group])
    assert measured == EXPECTED[group]


def test_recurrent_builds_before_2_3_2_get_no_weight_prediction(outcomes):
    old = [o for o in outcomes if o.group.startswith("recurrent") and o.toolkit in ("2.2.0", "2.3.0")]
    assert len(old) == 264 and all(o.predicted is None for o in old)


def test_the_generated_weight_section_is_current(outcomes):
    assert rknn_weight_accuracy.render(outcomes) == rknn_weight_accuracy.current_doc(), (
        "run tools/corpus/rknn_weight_accuracy.py"
    )


def test_every_2_5_0_cnn_const_row_is_sized_as_logged():
    """Row by row on the 2.5.0 CNN builds, one target per layout (rk3568, rv1103, rv1103b and rv1126b
    share theirs with rk3566, rv1106, rv1106b and rk3576), int8 and two fp16 targets (the totals test
    covers every build): every log row is predicted under its own name with its 64-B slot, but the
    108-channel rows of the held-out fpn_lite."""
    known_misses = {("rk3566", "fp16", "w23"), ("rk3566", "fp16", "w29"), ("rk3588", "int8", "w23")}
    targets = {"rk2118", "rk3562", "rk3566", "rk3576", "rk3588", "rv1106", "rv1106b"}
    graphs: dict[str, object] = {}
    misses = set()
    checked = 0
    for b in BUILDS:
        fp16_sample = b["dtype"] == "fp16" and b["target"] in ("rk3566", "rk3588")
        if b["toolkit"] != "2.5.0" or b["target"] not in targets or not b["built"]:
            continue
        if b["dtype"] != "int8" and not fp16_sample:
            continue
        if b["model"] == "transformer":  # its shape rows are renamed by version (matched by shape)
            continue
        if b["model"] not in graphs:
            graphs[b["model"]] = build_graph(rknn_models.build(b["model"], "zeros"), {})
        plan = plan_weights(graphs[b["model"]], b["target"], b["dtype"], b["toolkit"])
        assert plan is not None
        predicted = {r.name: align_up(r.size_bytes, CONST_ALIGN) for r in plan.rows}
        log = logscope.parse(CORPUS / b["log"])
        t = log.frames["tensors"]
        for r in t[t["table"] == "const"].itertuples(index=False):
            checked += 1
            if predicted.get(str(r.name)) != align_up(int(r.size_bytes), CONST_ALIGN):
                misses.add((b["target"], b["dtype"], str(r.name)))
        assert set(predicted) <= set(t.loc[t["table"] == "const", "name"].astype(str)), b["id"]
    assert checked > 1500 and misses == known_misses
