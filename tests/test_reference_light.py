"""The nine ONNX "light" test models shipped in the onnx wheel: params, MACs, planners vs the anchors.

Expected figures are reference-anchors §5.1 (fp32, batch 1, 1x3x224x224, no in-place), measured with
the same definitions; published parameter counts with their sources are in docs/reference.md.
"""

from __future__ import annotations

from pathlib import Path

import onnx
import pytest

from logscope.reference import ReferenceOptions, analyze_model

LIGHT = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light"

# model: (compute ops, constant nodes, params, Conv+Gemm MACs, activations, naive, lower bound, greedy,
#         first fit in execution order)
EXPECTED = {
    "bvlc_alexnet": (24, 16, 60_965_224, 654_560_384, 25, 7_804_736, 2_239_488, 2_239_488, 2_841_600),
    "densenet121": (668, 1078, 8_146_152, 2_834_161_664, 669, 321_084_320, 8_429_568, 8_830_976, 10_436_608),
    "inception_v1": (143, 94, 6_998_552, 1_431_556_352, 144, 37_244_480, 6_422_528, 6_422_528, 7_024_640),
    "inception_v2": (371, 545, 11_234_792, 2_018_851_840, 372, 85_146_048, 6_422_528, 6_422_528, 7_024_640),
    "resnet50": (176, 239, 25_610_152, 4_089_184_256, 177, 150_853_440, 9_633_792, 9_633_792, 11_239_424),
    "shufflenet": (203, 243, 1_420_152, 124_664_528, 204, 57_673_984, 3_110_912, 3_110_912, 4_315_136),
    "squeezenet": (66, 39, 1_235_496, 349_151_936, 67, 28_793_728, 6_308_352, 6_308_352, 6_910_464),
    "vgg19": (46, 36, 143_667_240, 19_632_062_464, 47, 125_747_008, 25_690_112, 25_690_112, 26_292_224),
    "zfnet512": (22, 16, 87_250_536, 1_481_727_008, 23, 19_442_112, 9_124_608, 9_124_608, 9_726_720),
}

# Published parameter counts (docs/reference.md lists the sources). Value, and how it is compared:
# "incl" = all float constants incl. BN running statistics, "excl" = without them; tolerance in params.
PUBLISHED = {
    "bvlc_alexnet": (61.0e6, "incl", 0.05e6),  # BVLC Caffe AlexNet, 61.0 M
    "densenet121": (8.1e6, "incl", 0.05e6),  # incl. BN statistics and Caffe Scale layers
    "inception_v1": (6.99e6, "incl", 0.01e6),  # onnx-tool README: GoogleNet 6.99 M
    "inception_v2": (11_295_240, "incl", 0.0075 * 11_295_240),  # osmr BN-Inception, within 0.75 %
    "resnet50": (25_557_032, "excl", 0),  # osmr/torchvision ResNet-50, exactly; 25.6 M incl. BN stats
    "squeezenet": (1_235_496, "incl", 0),  # osmr SqueezeNet v1.1, exactly (1.24 M)
    "vgg19": (143_667_240, "incl", 0),  # osmr VGG-19, exactly (143.7 M)
    "zfnet512": (349.0e6 / 4, "incl", 0.01e6),  # onnx/models zfnet README: model size 349 MB of fp32
}


@pytest.fixture(scope="module")
def light() -> dict[str, object]:
    out = {}
    for name in EXPECTED:
        out[name] = analyze_model(LIGHT / f"light_{name}.onnx", ReferenceOptions(dtype="fp32"))
    return out


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_light_model_figures(light, name):
    ops, consts, params, macs, acts, naive, lb, greedy, first_fit = EXPECTED[name]
    t = light[name].totals
    assert (t["compute_ops"], t["constant_nodes"]) == (ops, consts)
    assert (t["params"], t["macs"], t["activation_tensors"]) == (params, macs, acts)
    assert (t["naive_bytes"], t["lower_bound_bytes"]) == (naive, lb)
    assert (t["greedy_bytes"], t["first_fit_bytes"]) == (greedy, first_fit)
    assert t["weight_bytes"] == 4 * params


@pytest.mark.parametrize("name", sorted(PUBLISHED))
def test_params_match_published(light, name):
    value, kind, tolerance = PUBLISHED[name]
    t = light[name].totals
    measured = t["params"] if kind == "incl" else t["params_without_bn_stats"]
    assert abs(measured - value) <= tolerance


def test_greedy_equals_lower_bound_on_chain_like_models(light):
    for name, result in light.items():
        t = result.totals
        if name == "densenet121":
            assert t["greedy_bytes"] / t["lower_bound_bytes"] <= 1.05  # 1.0476
        else:
            assert t["greedy_bytes"] == t["lower_bound_bytes"], name


def test_naive_to_lower_bound_ratios(light):
    ratios = {n: r.totals["naive_to_lower_bound"] for n, r in light.items()}
    assert ratios["densenet121"] == pytest.approx(38.09, abs=0.01)
    assert ratios["resnet50"] == pytest.approx(15.66, abs=0.01)
    assert ratios["zfnet512"] == pytest.approx(2.13, abs=0.01)
    assert min(ratios.values()) == ratios["zfnet512"] and max(ratios.values()) == ratios["densenet121"]


def test_weights_are_constant_folded(light):
    # AlexNet keeps 17 initializers (all listed as graph inputs, IR 3) and 16 ConstantOfShape weights.
    result = light["bvlc_alexnet"]
    assert list(result.graph.inputs) == ["data_0"]
    roles = [t.role for t in result.graph.tensors.values()]
    assert roles.count("input") == 1 and roles.count("weight") == 16
    # DenseNet's Caffe Scale layers: Unsqueeze on constants feeding Mul/Add are weights too.
    dense = light["densenet121"].graph
    unsqueezed = [t for t in dense.tensors.values() if t.role == "weight" and t.shape and len(t.shape) == 3]
    assert len(unsqueezed) == 242


def test_dropout_masks_cost_nothing(light):
    tensors = light["vgg19"].frames["ref_tensors"]
    masks = tensors[(tensors["readers"] == 0) & (~tensors["is_output"])]
    assert len(masks) == 2 and (masks["size_bytes"] == 0).all()
    assert masks["first_step"].isna().all()  # never planned


def test_in_place_aliasing_option():
    result = analyze_model(LIGHT / "light_densenet121.onnx", ReferenceOptions(dtype="fp32", in_place=True))
    t = result.totals
    assert (t["lower_bound_bytes"], t["greedy_bytes"]) == (7_225_344, 8_028_160)
    assert t["buffers"] == 243 and t["activation_tensors"] == 669
    squeeze = analyze_model(LIGHT / "light_squeezenet.onnx", ReferenceOptions(dtype="fp32", in_place=True))
    assert squeeze.totals["greedy_bytes"] == squeeze.totals["lower_bound_bytes"] == 3_928_576


def test_dtype_policies_scale_bytes(light):
    int8 = analyze_model(LIGHT / "light_resnet50.onnx", ReferenceOptions(dtype="int8"))
    fp16 = analyze_model(LIGHT / "light_resnet50.onnx", ReferenceOptions(dtype="fp16"))
    assert fp16.totals["lower_bound_bytes"] * 2 == light["resnet50"].totals["lower_bound_bytes"]
    assert int8.totals["lower_bound_bytes"] * 4 == light["resnet50"].totals["lower_bound_bytes"]
    # int8: weights 1 B, Conv/Gemm biases int32. ResNet-50's convs have no bias; its FC has 1000.
    assert int8.totals["weight_bytes"] == int8.totals["params"] + 3 * 1000


def test_fusion_candidates(light):
    names = light["resnet50"].frames["ref_fusions"]["rknn_name"].value_counts().to_dict()
    assert names == {"ConvRelu": 33, "ConvAddRelu": 16, "Conv": 4}
    # RKNN runs fully connected layers as convolutions, so Gemm+Relu is named ConvRelu too.
    patterns = light["vgg19"].frames["ref_fusions"]["pattern"].value_counts().to_dict()
    assert patterns == {"Conv+Relu": 16, "Gemm+Relu": 2}


def test_first_fit_order_explains_anchor_a4(light):
    """A4's online first-fit figures are ours with the graph input placed after the first op's output."""
    from logscope.reference.planners import plan_first_fit

    a4 = {
        "bvlc_alexnet": 2_239_488,
        "densenet121": 10_436_608,
        "inception_v1": 6_422_528,
        "inception_v2": 6_422_528,
        "resnet50": 11_239_424,
        "shufflenet": 4_315_136,
        "squeezenet": 6_308_352,
        "vgg19": 25_690_112,
        "zfnet512": 9_124_608,
    }
    for name, expected in a4.items():
        records = list(light[name].lifetimes.records)
        assert plan_first_fit(records[1:] + records[:1]).total == expected, name
