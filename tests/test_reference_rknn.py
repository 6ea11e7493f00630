"""The RKNN allocator emulation: replaying fixtures [09] and [29], and predicting them from ONNX."""

from __future__ import annotations

import onnx
import pytest

import logscope
from logscope.reference import (
    ReferenceOptionError,
    ReferenceOptions,
    analyze_model,
    check_log_against_model,
    cross_check,
    replay_log,
)
from logscope.reference.rknn import C2_TABLE, native_layout
from tests.check_models import mobilenet_v1
from tests.conftest import MOBILENET, RKNN

SRAM_LOG = RKNN / "29-doc-rknpu2-sram-runtime-log-level3-rk3588.log"


@pytest.fixture(scope="module")
def mobilenet_file(tmp_path_factory) -> str:
    path = tmp_path_factory.mktemp("models") / "mobilenet_v1.onnx"
    onnx.save(mobilenet_v1(), path)
    return str(path)


def feature_rows(log):
    t = log.frames["tensors"]
    return t[(t["table"] == "feature") & (t["build_index"] == 0)]


# --- replay: the emulated allocator on the logs' own rows and sizes -------------------------------------


def test_replay_reproduces_log_09_row_for_row():
    log = logscope.parse(MOBILENET)
    replay = replay_log(feature_rows(log), 1_756_160)
    frame = replay.frame
    assert replay.base == 0x454680
    assert replay.total == 1_756_160 == replay.logged_total
    assert len(frame) == 36 and replay.reproduced == 33
    # The three OutputOperator rows sit 64 B higher in the log; given the logged placement of the first
    # one, the allocator reproduces the other two (status follows-earlier-difference).
    rest = frame[frame["status"] != "reproduced"]
    assert list(rest["line"]) == [210, 211, 212]
    assert list(rest["status"]) == ["differs", "follows-earlier-difference", "follows-earlier-difference"]
    assert list(rest["log_offset"] - rest["emulated_offset"]) == [64, 64, 64]
    assert "[0, 64) occupied by a buffer its table does not list" in rest["reason"].iloc[0]
    assert (frame["stepwise_offset"] == frame["log_offset"]).sum() == 35


def test_replay_reproduces_log_29_row_for_row():
    log = logscope.parse(SRAM_LOG)
    replay = replay_log(feature_rows(log), 2_157_568)
    frame = replay.frame
    assert replay.base == 0xFF3E0000
    assert replay.total == 2_157_568 == replay.logged_total
    pool = frame[frame["status"] != "outside-pool"]
    assert len(pool) == 29 and (pool["status"] == "reproduced").all()
    outside = frame[frame["status"] == "outside-pool"]
    assert list(outside["name"]) == ["input0", "output57"]
    # The user input lives outside the pool; the pool keeps a slot of its size at offset 0.
    assert "starts at offset 150528 = the input's 150528 bytes" in outside["reason"].iloc[0]
    assert pool["log_offset"].iloc[0] == 150_528


def test_replay_curves_peak_at_the_total():
    log = logscope.parse(MOBILENET)
    replay = replay_log(feature_rows(log), 1_756_160)
    assert max(replay.log_curve) == max(replay.emulated_curve) == 1_756_160


# --- prediction from the ONNX graph ----------------------------------------------------------------------


def test_mobilenet_v1_predicts_log_09(mobilenet_file):
    result = analyze_model(mobilenet_file, ReferenceOptions(dtype="int8", target="rv1106"))
    t = result.totals
    assert t["rknn_bytes"] == 1_756_160  # [09] line 279, Total Internal Memory Size
    assert t["fusion_candidates"] == 27 and t["rknn_ops"] == 31 and t["rknn_tensors"] == 32
    assert t["rknn_lower_bound_bytes"] == t["rknn_greedy_bytes"] == 1_204_224
    assert t["lower_bound_bytes"] == 1_605_632  # int8, unfused: conv3 + its Relu6 at 112x112x64


def test_mobilenet_v1_predicts_log_29_with_the_learned_profile_or_the_quirk(mobilenet_file):
    learned = analyze_model(mobilenet_file, ReferenceOptions(target="rk3588"))
    assert learned.totals["rknn_bytes"] == 2_157_568  # [29] line 41, no flag needed
    plain = analyze_model(mobilenet_file, ReferenceOptions(target="rk3588", learned=False))
    assert plain.totals["rknn_bytes"] == 1_756_160
    quirk = analyze_model(
        mobilenet_file, ReferenceOptions(target="rk3588", quirks=frozenset({"dw32-as-64"}), learned=False)
    )
    assert quirk.totals["rknn_bytes"] == 2_157_568  # [29] line 41
    assert quirk.totals["rknn_lower_bound_bytes"] == 1_605_632  # A9: 1.344x the native lower bound
    tensors = quirk.frames["ref_tensors"]
    padded = tensors[tensors["quirk"] == "dw32-as-64"]
    assert list(padded["native_shape"]) == ["(1,4,112,112,16)"] and list(padded["native_bytes"]) == [802_816]


def test_emulated_offsets_equal_the_logs_offsets(mobilenet_file):
    """The first 29 rows of [29] (input slot + 28 conv/pool outputs) at the emulation's offsets."""
    quirks = frozenset({"dw32-as-64", "hw-align-4"})
    result = analyze_model(mobilenet_file, ReferenceOptions(target="rk3588", quirks=quirks, learned=False))
    log = logscope.parse(SRAM_LOG)
    check = cross_check(log, result)
    rows = check.frames["check_tensors"]
    matched = rows[rows["matched_by"].notna()]
    assert len(matched) == 29
    inside = matched[matched["log_offset"] >= 0]
    assert (inside["log_offset"] == inside["ref_offset"]).all() and len(inside) == 28
    assert (matched["size_difference"] == 0).all()


def test_native_layout():
    assert native_layout((1, 32, 112, 112), 16) == ((1, 2, 112, 112, 16), 401_408)
    assert native_layout((1, 1001, 1, 1), 16) == ((1, 63, 1, 1, 16), 1008)
    assert native_layout((1, 512, 7, 7), 16, hw_align=4)[1] == 26_624  # [09] line 201, [29] line 31
    assert native_layout((1, 32, 1, 1), 8) == ((1, 4, 1, 1, 8), 32)  # the RKNPU guide's RK3566 example
    assert native_layout((1, 1001), 16) == ((1, 1001), 1001)
    assert C2_TABLE["rk3566"] == {"int8": 8, "fp16": 4, "int16": 4}


def test_rk3566_pads_to_eight(mobilenet_file):
    result = analyze_model(mobilenet_file, ReferenceOptions(target="rk3566"))
    tensors = result.frames["ref_tensors"]
    assert tensors.loc[tensors["name"] == "conv28", "native_bytes"].iloc[0] == 1008  # 126 x 8
    fp16 = analyze_model(mobilenet_file, ReferenceOptions(target="rk3566", dtype="fp16"))
    assert fp16.totals["rknn_bytes"] == 2 * result.totals["rknn_bytes"]


def test_options_are_checked(mobilenet_file):
    with pytest.raises(ReferenceOptionError, match="unknown RKNN target"):
        analyze_model(mobilenet_file, ReferenceOptions(target="rk9999"))
    with pytest.raises(ReferenceOptionError, match="unknown quirk"):
        analyze_model(mobilenet_file, ReferenceOptions(quirks=frozenset({"nope"})))
    with pytest.raises(ReferenceOptionError, match="unknown dtype"):
        analyze_model(mobilenet_file, ReferenceOptions(dtype="int4"))


# --- the cross-check ---------------------------------------------------------------------------------


def summary_of(check) -> dict[str, dict]:
    return {r["item"]: r for r in check.frames["check_summary"].to_dict("records")}


def test_check_log_09(mobilenet_file):
    check = check_log_against_model(logscope.parse(MOBILENET), mobilenet_file, target="rv1106")
    rows = summary_of(check)
    pool = rows["feature pool (RKNN emulation)"]
    assert (pool["log_value"], pool["reference_value"], pool["difference"]) == (1_756_160, 1_756_160, 0)
    assert "reproduced to the byte" in pool["likely_cause"] and pool["log_line"] == 279
    weight = rows["weight bytes"]
    assert (weight["log_value"], weight["reference_value"]) == (4_447_296, 4_257_894)
    assert "AvgPool_2global_2conv_weight0" in weight["likely_cause"]  # the compiler's added constants
    assert rows["fusions (candidates fused in the log)"]["log_value"] == 27
    assert rows["allocator replay of the log's own rows"]["difference"] == 0
    greedy = rows["feature pool vs greedy-by-size plan (native, fused)"]
    assert greedy["difference"] == 551_936
    tensors = check.frames["check_tensors"]
    extra_block = tensors[tensors["likely_cause"].str.contains("extra C1 block", na=False)]
    assert list(extra_block["log_line"]) == [181, 183, 185]
    assert check.dtype == "int8" and check.target == "rv1106"


def test_check_log_29_is_reproduced_by_the_learned_profile(mobilenet_file):
    check = check_log_against_model(logscope.parse(SRAM_LOG), mobilenet_file)
    rows = summary_of(check)
    assert rows["feature pool (RKNN emulation)"]["difference"] == 0
    assert "feature pool (RKNN emulation + suggested quirks)" not in rows
    assert any("target rk3588 assumed" in n for n in check.notes)
    # [29] names no target: the note lists every target whose profile gives 2,157,568 B
    reproducing = next(n for n in check.notes if "reproduces the logged 2,157,568 B" in n)
    assert "rk3588" in reproducing and "rk3576" in reproducing and "rv1106" not in reproducing
    curve = check.frames["check_curve"]
    assert set(curve["source"]) == {"log", "reference"}


# --- replay of a rewritten transformer block (exNorm, exSDPAttention, ConvExGelu): toolkit 2.5.0, rk3588 --


TRANSFORMER_LOG = RKNN.parent / "rknn-compiler" / "2.5.0" / "transformer-rk3588-int8.log.gz"


def test_replay_transformer_table_with_multi_reader_scratch_and_in_place_rows():
    """The table lists a tensor once per reader (`LayerNormalization3#1` under ops 4, 5 and 6, the
    residual `input_tp-rs` under ops 3 and 12), each op's `_exSecondary` scratch, and Reshapes whose
    output shares its input's buffer; with the layer table naming the writers, every row is placed
    where the log put it and the pool total is the log's."""
    log = logscope.parse(TRANSFORMER_LOG)
    rows = feature_rows(log)
    logged = int(rows["end_offset"].max() - rows["start_offset"].min())
    replay = replay_log(rows, logged, layers=log.frames["layers"])
    assert logged == 54_016 and replay.total == logged
    frame = replay.frame
    assert (frame["status"] == "reproduced").sum() >= len(frame) - 2
    # one buffer for the three readers of the normalised input, live from op 3 to op 6
    ln = frame[frame["name"] == "LayerNormalization3#1"]
    assert len(ln) == 3 and ln["emulated_offset"].nunique() == 1
    # an exSecondary row is scratch of its reader only
    sdpa = frame[frame["name"] == "Transpose10_o0_tp_rs_exSecondary"].iloc[0]
    assert sdpa["first_step"] == sdpa["last_step"]
    # the in-place Reshape: Q's conv output and the reshaped Q share one offset
    q = frame[frame["name"].isin(["MatMul5_o0_mm_tp_sw", "Transpose10_o0_tp_rs"])]
    assert q["emulated_offset"].nunique() == 1 and (q["emulated_offset"] == q["log_offset"]).all()
    # Without the layer table the writers are guessed as a chain, and the total is not the log's.
    assert replay_log(rows, logged).total != logged
