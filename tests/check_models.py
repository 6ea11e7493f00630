"""ONNX models that rule cases are checked against, by name (`model = "mobilenet_v1"` in a case file).

A case in tests/rules/cases/REF*.toml names one of `MODELS`; the harness parses the case's log excerpt,
checks it against the model (`check_log_against_model`, the case's `target` and `quirks`) and attaches
the comparison frames before running the rule. Models are built with `onnx.helper` (weights are zeros:
only shapes matter) and cached per session.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

# MobileNet v1 1.0/224: conv 3x3/2 to 32, then (depthwise stride, pointwise channels) pairs.
MOBILENET_V1 = (
    [(1, 64), (2, 128), (1, 128), (2, 256), (1, 256), (2, 512)] + [(1, 512)] * 5 + [(2, 1024), (1, 1024)]
)


def mobilenet_v1_width(alpha: float, classes: int = 1001) -> onnx.ModelProto:
    """MobileNet v1 with width multiplier `alpha` (Keras: every conv's channels × alpha, rounded down),
    224x224, Relu6 as Clip, BN folded; `mobilenet_v1_width(1.0)` is the standard `mobilenet_v1()`."""
    nodes: list[onnx.NodeProto] = []
    inits: list[onnx.TensorProto] = [
        numpy_helper.from_array(np.array(0.0, dtype=np.float32), "relu6_min"),
        numpy_helper.from_array(np.array(6.0, dtype=np.float32), "relu6_max"),
    ]
    count = 0

    def conv(x: str, cin: int, cout: int, k: int, stride: int, group: int, act: bool = True) -> str:
        nonlocal count
        count += 1
        w, b, y = f"w{count}", f"b{count}", f"conv{count}"
        inits.append(numpy_helper.from_array(np.zeros((cout, cin // group, k, k), np.float32), w))
        inits.append(numpy_helper.from_array(np.zeros(cout, np.float32), b))
        nodes.append(
            helper.make_node(
                "Conv",
                [x, w, b],
                [y],
                name=f"Conv{count}",
                kernel_shape=[k, k],
                strides=[stride, stride],
                pads=[k // 2] * 4,
                group=group,
            )
        )
        if not act:
            return y
        nodes.append(
            helper.make_node("Clip", [y, "relu6_min", "relu6_max"], [f"relu6_{count}"], name=f"Relu6_{count}")
        )
        return f"relu6_{count}"

    c = int(32 * alpha)
    x = conv("input", 3, c, 3, 2, 1)
    for stride, cout in MOBILENET_V1:
        x = conv(x, c, c, 3, stride, c)
        x, c = conv(x, c, int(cout * alpha), 1, 1, 1), int(cout * alpha)
    nodes.append(helper.make_node("GlobalAveragePool", [x], ["pool"], name="AvgPool"))
    logits = conv("pool", c, classes, 1, 1, 1, act=False)
    inits.append(numpy_helper.from_array(np.array([1, classes], dtype=np.int64), "flat_shape"))
    nodes.append(helper.make_node("Reshape", [logits, "flat_shape"], ["logits"], name="Reshape"))
    nodes.append(helper.make_node("Softmax", ["logits"], ["prob"], name="Softmax", axis=1))
    graph = helper.make_graph(
        nodes,
        "mobilenet_v1" if alpha == 1.0 else f"mobilenet_v1_{alpha}",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 3, 224, 224])],
        [helper.make_tensor_value_info("prob", TensorProto.FLOAT, [1, classes])],
        inits,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def mobilenet_v1(classes: int = 1001) -> onnx.ModelProto:
    """The standard MobileNet v1 (224x224, Relu6 as Clip, BN folded into conv biases), as TF exports it."""
    return mobilenet_v1_width(1.0, classes)


def residual_block() -> onnx.ModelProto:
    """input (1,3,32,32) → conv1 3→16 → relu1 → conv2 16→16 → add(conv2, relu1) → relu2: two fusion
    candidates, `ConvRelu` (conv1 + relu1) and `ConvAddRelu` (conv2 + add + relu2)."""
    inits = [
        numpy_helper.from_array(np.zeros((16, 3, 3, 3), np.float32), "w1"),
        numpy_helper.from_array(np.zeros(16, np.float32), "b1"),
        numpy_helper.from_array(np.zeros((16, 16, 3, 3), np.float32), "w2"),
        numpy_helper.from_array(np.zeros(16, np.float32), "b2"),
    ]
    pads = {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1]}
    nodes = [
        helper.make_node("Conv", ["input", "w1", "b1"], ["c1"], name="conv1", **pads),
        helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
        helper.make_node("Conv", ["r1", "w2", "b2"], ["c2"], name="conv2", **pads),
        helper.make_node("Add", ["c2", "r1"], ["s"], name="add"),
        helper.make_node("Relu", ["s"], ["out"], name="relu2"),
    ]
    graph = helper.make_graph(
        nodes,
        "residual_block",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 3, 32, 32])],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, [1, 16, 32, 32])],
        inits,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def conv_relu_add() -> onnx.ModelProto:
    """YOLOv5's residual: input (1,16,32,32) → conv 16→16 → relu → add(relu, input). One fusion
    candidate, `ConvRelu` (the Add follows the activation); RKNN prints the layer as `ConvReluAdd`
    (fixtures/rknn/11-eval-perf-memory-yolov5-rk3588-tk2-1.5.0-wrapped.log, line 36)."""
    inits = [
        numpy_helper.from_array(np.zeros((16, 16, 3, 3), np.float32), "w"),
        numpy_helper.from_array(np.zeros(16, np.float32), "b"),
    ]
    nodes = [
        helper.make_node("Conv", ["input", "w", "b"], ["c"], name="conv", kernel_shape=[3, 3], pads=[1] * 4),
        helper.make_node("Relu", ["c"], ["r"], name="relu"),
        helper.make_node("Add", ["r", "input"], ["out"], name="add"),
    ]
    graph = helper.make_graph(
        nodes,
        "conv_relu_add",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 16, 32, 32])],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, [1, 16, 32, 32])],
        inits,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


MODELS: dict[str, Callable[[], onnx.ModelProto]] = {
    # The standard MobileNet v1 1.0/224 (1001 classes) the reference tests predict [09] and [29] from.
    "mobilenet_v1": mobilenet_v1,
    # The same network at width 0.5 and 1.4: "the wrong model" for the log of a 1.0 build.
    "mobilenet_v1_050": lambda: mobilenet_v1_width(0.5),
    "mobilenet_v1_140": lambda: mobilenet_v1_width(1.4),
    "residual_block": residual_block,
    "conv_relu_add": conv_relu_add,
}


@functools.cache
def model(name: str) -> onnx.ModelProto:
    """The model registered as `name`; raises `KeyError` naming the registered ones."""
    if name not in MODELS:
        raise KeyError(f"unknown test model {name!r} (registered: {', '.join(sorted(MODELS))})")
    return MODELS[name]()
