"""The verbose tk2 1.5.2 MobileNetV1 build [09]: every figure must match the log exactly."""

from __future__ import annotations

import pandas as pd

import logscope
from tests.conftest import FIXTURES, MOBILENET, RKNN


def test_versions_status_and_settings(mobilenet_log):
    builds = mobilenet_log.frames["builds"]
    assert len(builds) == 1
    b = builds.iloc[0]
    assert (b.toolkit_version, b.compiler_version, b.status) == ("1.5.2+b642f30c", "1.5.2", "done")
    assert b.status_line == 284  # `I rknn buiding done.` (sic)
    assert b.settings["enable_argb_group"] == "0"  # glued `output_optimize = 1,enable_argb_group=0`
    assert b.settings["multi-core-model-mode"] == "7"
    assert mobilenet_log.kind == "rknn-build"


def test_memory_totals_match_the_log(mobilenet_log):
    mem = mobilenet_log.frames["memory"].iloc[0]
    assert mem.source == "build-log"
    assert mem.weight_bytes == 4447296 and mem.weight_line == 278
    assert mem.internal_bytes == 1756160 and mem.internal_line == 279
    assert mem.predict_internal_rw_bytes == 10570545
    assert mem.predict_weight_rw_bytes == 4479552
    assert pd.isna(mem.total_bytes) and pd.isna(mem.scratch_bytes)  # never invented


def test_derived_figures_reproduce_the_totals(mobilenet_log):
    mem = mobilenet_log.frames["memory"].iloc[0]
    assert mem.feature_pool_bytes == mem.internal_bytes == 0x601280 - 0x454680
    assert mem.const_span_bytes == mem.weight_bytes == 0x43DC40
    tensors = mobilenet_log.frames["tensors"]
    feature = tensors[tensors["table"] == "feature"]
    assert mem.feature_sum_bytes == feature["size_bytes"].sum() == 5377762
    assert abs(mem.computed_reuse_rate - (1 - 1756160 / 5377762)) < 1e-12


def test_tensor_tables(mobilenet_log):
    tensors = mobilenet_log.frames["tensors"]
    feature, const = tensors[tensors["table"] == "feature"], tensors[tensors["table"] == "const"]
    assert len(feature) == 36 and len(const) == 59
    assert (tensors["end_offset"] - tensors["start_offset"] == tensors["size_bytes"]).all()
    first = feature.iloc[0]
    assert (first.op_id, first.user_op, first["name"], first["dtype"]) == (1, "ConvClip", "input", "INT8")
    assert (first.orig_shape, first.native_shape, first.size_bytes) == (
        "(1,3,224,224)",
        "(1,1,224,224,3)",
        0x24C00,
    )
    long_name = feature[feature["name"] == "MobilenetV1/Logits/Conv2d_1c_1x1/BiasAdd__float16_exSecondary"]
    assert len(long_name) == 1 and long_name.iloc[0].native_shape == "(1,1523,1,1,8)"
    assert feature["op_id"].value_counts()[33] == 3  # repeated IDs are kept, never keyed on
    starred = const[const["star_flag"]]
    assert list(starred["name"]) == ["MobilenetV1/Logits/AvgPool_1a/AvgPool_2global_2conv_bias0"]
    # Channel padding: (1,64,56,56) INT8 stored as (1,5,56,56,16) wastes 16 channels of 56x56.
    relu11 = feature[feature["name"] == "Relu6__11:0"].iloc[0]
    assert relu11.padding_bytes == 16 * 56 * 56
    assert int(feature["line"].min()) == 177 and int(feature["line"].max()) == 212
    assert int(const["line"].min()) == 217


def test_layer_table(mobilenet_log):
    layers = mobilenet_log.frames["layers"]
    assert len(layers) == 34 and list(layers["layer_id"]) == list(range(34))
    conv = layers.iloc[1]
    assert (conv.op_type, conv["dtype"], conv.target) == ("ConvClip", "INT8", "NPU")
    assert conv.input_shapes == "(1,3,224,224),(32,3,3,3),(32)" and conv.output_shape == "(1,32,112,112)"
    assert conv.rw_kb == 540.38 and conv.total_cycles == 0 and pd.isna(conv.mac_usage)
    assert conv.full_name == "Conv:MobilenetV1/MobilenetV1/Conv2d_0/Relu6"
    assert pd.isna(layers.iloc[0].input_shapes) and pd.isna(layers.iloc[33].output_shape)  # `\`


def test_fusions(mobilenet_log):
    fusions = mobilenet_log.frames["fusions"]
    assert list(fusions["section"].value_counts().sort_index().items()) == [
        ("fuse_ops", 5),
        ("fuse_ops_with_passes", 2),
        ("quant_optimizer", 1),
    ]
    swap = fusions[fusions["rule"] == "swap_reshape_softmax"].iloc[0]
    assert swap.removed_nodes == [
        "MobilenetV1/Logits/SpatialSqueeze_2reshape",
        "MobilenetV1/Predictions/Reshape_1",
    ]
    assert swap.added_nodes == [
        "MobilenetV1/Predictions/Reshape_1",
        "MobilenetV1/Logits/SpatialSqueeze_2reshape",
    ]
    relu = fusions[fusions["rule"] == "adjust_relu"].iloc[0]
    assert len(relu.removed_nodes) == 27 and relu.removed_nodes[0] == "Relu6__57"


def test_messages_passes_progress_outliers(mobilenet_log):
    f = mobilenet_log.frames
    cats = f["messages"].set_index("line")["category"]
    assert cats[32] == "quant-outliers" and cats[58] == "dtype-change" and cats[64] == "hybrid-dtype"
    dtype_msg = f["messages"].set_index("line").loc[58]
    assert dtype_msg.end_line == 59 and "Runtime API" in dtype_msg.message  # continuation joined
    passes = f["passes"]
    assert len(passes) == 26 and passes["end_line"].notna().all()
    assert "RKNNMemStatisticsPass" in set(passes["name"]) and "OpEmit" in set(passes["name"])
    assert list(f["outliers"]["const_name"]) == [
        "const_fold_opt__306",
        "const_fold_opt__296",
        "const_fold_opt__276",
        "const_fold_opt__262",
    ]
    assert f["progress"].set_index("stage").loc["Quantizating", "total"] == 58


def test_every_line_is_accounted_for(mobilenet_log):
    counts = mobilenet_log.line_counts
    assert counts["total"] == 303
    assert counts["total"] == sum(v for k, v in counts.items() if k != "total")
    # The example script's top-5 print is recognised (lines 296-301); its model-name line is not.
    unparsed = mobilenet_log.frames["unparsed"]
    assert list(unparsed["line"]) == [295]
    assert list(unparsed["text"]) == ["mobilenet_v1"]


def test_two_builds_in_one_file_are_segmented(tmp_path):
    """Simulator build then board build [09]+[10]: segmented on toolkit lines, not script prints."""
    joined = tmp_path / "two.log"
    joined.write_bytes(
        MOBILENET.read_bytes() + (RKNN / "10-build-tail-init-runtime-rv1106-board-tk2-1.5.2.log").read_bytes()
    )
    log = logscope.parse(joined)
    mem = log.frames["memory"]
    assert list(mem["build_index"]) == [0, 1]
    assert list(mem["weight_bytes"]) == [4447296, 4447296]
    assert log.frames["builds"].iloc[1].target_platform == "rv1106"


def test_compact_summary_keeps_the_two_meanings_of_internal():
    log = logscope.parse(FIXTURES / "synthetic" / "compact-summary-yolov5s.log")
    mem = log.frames["memory"].iloc[0]
    assert mem.source == "compact-summary"
    assert mem.activation_bytes == round(8.56 * 2**20) and mem.scratch_bytes == round(1.23 * 2**20)
    assert pd.isna(mem.internal_bytes)  # compact "Internal" is scratch, not RKNN's feature maps
    assert mem.reuse_rate == 0.785 and mem.peak_layer == "Conv_83"
    assert (mem.tensor_count, mem.memory_node_count) == (342, 128)
    fusions = log.frames["fusions"]
    assert fusions.iloc[0].removed_nodes == ["conv_0", "bn_0", "relu_0"]
    assert fusions.iloc[0].added_nodes == ["fused_conv_0"]
    messages = log.frames["messages"].set_index("line")
    assert messages.loc[13, "category"] == "activation-peak" and messages.loc[13, "level"] == "W"


def test_layer_layouts_without_headers():
    """Issue excerpts lose the header: 2.x merged cycles [31] and the 1.6 five-column form [33]."""
    v2 = logscope.parse(RKNN / "31-issue-tk2-163-build-layer-table-yolov8-tk2.log").frames["layers"]
    row = v2[v2["layer_id"] == 108].iloc[0]
    assert (row.ddr_cycles, row.npu_cycles, row.total_cycles, row.rw_kb) == (45463, 134400, 134400, 525.0)
    assert v2[v2["layer_id"] == 110].iloc[0].output_shape == "(1,2,1,8400),..."
    v16 = logscope.parse(RKNN / "33-issue-meta-rockchip-100-build-layer-table-rows-tk2.log").frames["layers"]
    row = v16[v16["layer_id"] == 72].iloc[0]
    assert (row.ddr_cycles, row.npu_cycles, row.total_cycles, row.task_number, row.lut_number) == (
        34633,
        0,
        34633,
        2,
        0,
    )


def test_failures_are_classified():
    argb = logscope.parse(RKNN / "05-build-argb-abort-tqdm-tk2-2.0.0b0.log").frames
    assert argb["builds"].iloc[0].status == "failed"
    assert set(argb["messages"]["category"].dropna()) >= {"argb-config-failure", "process-aborted"}
    overflow = logscope.parse(RKNN / "26-issue-rl-tk2-118-tqdm-cr-buffer-overflow-tk2-1.x.log").frames
    assert overflow["builds"].iloc[0].status_reason == "compiler-memory-corruption"
    regtask = logscope.parse(RKNN / "08-regtask-bitwidth-error-tk2-2.0.0b0.log").frames
    assert regtask["messages"].iloc[0].category == "regtask-overflow"
    assert regtask["builds"].iloc[0].status == "unknown"  # REGTASK errors are not fatal: the build goes on
