"""The ONNX models of the RKNN compiler corpus, built with onnx.helper.

Each builder returns a model whose weights are random, non-zero and seeded (the compiler folds
all-zero weights away, which would change the graph it compiles). `build(name, weights="zeros")`
gives the same graph with zero weights: the reference analyzer needs only shapes, and the tests build
the models that way in a fraction of the time.

The families are the ones RKNN users deploy: plain chains, inverted residuals, U-Net skips with Resize
and ConvTranspose, YOLO-style heads, a transformer block, LSTM/GRU, depthwise convolutions with channel
counts that are not multiples of 8 or 16, odd spatial sizes (7, 13, 19, 75, 1x1), batch 2, several
inputs and outputs, and models the compiler refuses.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


class _Net:
    """A small graph builder: named ops, seeded random (or zero) weights."""

    def __init__(self, name: str, weights: str, seed: int) -> None:
        self.name = name
        self.zeros = weights == "zeros"
        self.rng = np.random.default_rng(seed)
        self.nodes: list[onnx.NodeProto] = []
        self.inits: list[onnx.TensorProto] = []
        self.count = 0

    def uid(self, prefix: str) -> str:
        self.count += 1
        return f"{prefix}{self.count}"

    def weight(self, shape: tuple[int, ...], scale: float | None = None) -> str:
        name = self.uid("w")
        if self.zeros:
            data = np.zeros(shape, np.float32)
        else:
            fan_in = int(np.prod(shape[1:])) if len(shape) > 1 else int(shape[0])
            s = scale if scale is not None else 1.0 / np.sqrt(max(fan_in, 1))
            data = (self.rng.standard_normal(shape) * s).astype(np.float32)
            data[data == 0] = s  # never an exact zero
        self.inits.append(numpy_helper.from_array(data, name))
        return name

    def const(self, value: np.ndarray, prefix: str = "c") -> str:
        name = self.uid(prefix)
        self.inits.append(numpy_helper.from_array(value, name))
        return name

    def op(self, op_type: str, inputs: list[str], n_out: int = 1, **attrs: object) -> list[str]:
        name = self.uid(op_type)
        outs = [f"{name}_o{i}" for i in range(n_out)]
        self.nodes.append(helper.make_node(op_type, inputs, outs, name=name, **attrs))
        return outs

    def conv(
        self,
        x: str,
        cin: int,
        cout: int,
        k: int = 3,
        stride: int = 1,
        group: int = 1,
        act: str | None = "relu",
    ) -> str:
        w = self.weight((cout, cin // group, k, k))
        b = self.weight((cout,), 0.1)
        (y,) = self.op(
            "Conv", [x, w, b], kernel_shape=[k, k], strides=[stride, stride], pads=[k // 2] * 4, group=group
        )
        return self.act(y, act)

    def act(self, y: str, act: str | None) -> str:
        if act == "relu":
            return self.op("Relu", [y])[0]
        if act == "relu6":
            lo = self.const(np.array(0.0, np.float32))
            hi = self.const(np.array(6.0, np.float32))
            return self.op("Clip", [y, lo, hi])[0]
        if act == "silu":
            (s,) = self.op("Sigmoid", [y])
            return self.op("Mul", [y, s])[0]
        if act == "sigmoid":
            return self.op("Sigmoid", [y])[0]
        return y

    def model(
        self,
        inputs: list[tuple[str, list[int]]],
        outputs: list[str],
        opset: int = 13,
        extra_opsets: tuple[tuple[str, int], ...] = (),
    ) -> onnx.ModelProto:
        graph = helper.make_graph(
            self.nodes,
            self.name,
            [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in inputs],
            [helper.make_empty_tensor_value_info(o) for o in outputs],
            self.inits,
        )
        m = helper.make_model(
            graph,
            opset_imports=[helper.make_opsetid("", opset)]
            + [helper.make_opsetid(d, v) for d, v in extra_opsets],
        )
        m.ir_version = 8
        # Output types and shapes from shape inference (a custom-domain op leaves its output untyped).
        known = {v.name: v for v in onnx.shape_inference.infer_shapes(m).graph.value_info}
        del m.graph.output[:]
        for o in outputs:
            v = known.get(o)
            m.graph.output.append(
                v if v is not None else helper.make_tensor_value_info(o, TensorProto.FLOAT, None)
            )
        return m


# --- the families ----------------------------------------------------------------------------------


def mobilenet_v1(n: _Net) -> onnx.ModelProto:
    """MobileNet v1 1.0/224, Relu6 as Clip, BN folded, 1001 classes (the published RK3588 SRAM log's net)."""
    cfg = (
        [(1, 64), (2, 128), (1, 128), (2, 256), (1, 256), (2, 512)] + [(1, 512)] * 5 + [(2, 1024), (1, 1024)]
    )
    x, c = n.conv("input", 3, 32, 3, 2, act="relu6"), 32
    for stride, cout in cfg:
        x = n.conv(x, c, c, 3, stride, group=c, act="relu6")
        x, c = n.conv(x, c, cout, 1, act="relu6"), cout
    (p,) = n.op("GlobalAveragePool", [x])
    logits = n.conv(p, c, 1001, 1, act=None)
    (r,) = n.op("Reshape", [logits, n.const(np.array([1, 1001], np.int64))])
    (y,) = n.op("Softmax", [r], axis=1)
    return n.model([("input", [1, 3, 224, 224])], [y])


def chain_75(n: _Net) -> onnx.ModelProto:
    """A plain conv chain at 75x75 (odd size, stride 2 -> 38 -> 19), MaxPool, Gemm head."""
    x = n.conv("input", 3, 16, 3, 1)
    x = n.conv(x, 16, 32, 3, 2)
    x = n.conv(x, 32, 64, 3, 2)
    (x,) = n.op("MaxPool", [x], kernel_shape=[2, 2], strides=[2, 2])
    x = n.conv(x, 64, 64, 3, 1)
    (p,) = n.op("GlobalAveragePool", [x])
    (f,) = n.op("Flatten", [p])
    (y,) = n.op("Gemm", [f, n.weight((10, 64)), n.weight((10,), 0.1)], transB=1)
    return n.model([("input", [1, 3, 75, 75])], [y])


def mobilenet_v2(n: _Net) -> onnx.ModelProto:
    """Inverted residuals (expand 1x1, depthwise 3x3, project 1x1, Add), a shortened MobileNet v2 at 224."""
    x, c = n.conv("input", 3, 32, 3, 2, act="relu6"), 32
    for t, cout, reps, stride in [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 2, 2), (6, 96, 2, 1)]:
        for i in range(reps):
            s = stride if i == 0 else 1
            h = n.conv(x, c, c * t, 1, act="relu6") if t != 1 else x
            h = n.conv(h, c * t, c * t, 3, s, group=c * t, act="relu6")
            h = n.conv(h, c * t, cout, 1, act=None)
            if s == 1 and c == cout:
                (h,) = n.op("Add", [x, h])
            x, c = h, cout
    x = n.conv(x, c, 320, 1, act="relu6")
    (p,) = n.op("GlobalAveragePool", [x])
    (f,) = n.op("Flatten", [p])
    (y,) = n.op("Gemm", [f, n.weight((100, 320)), n.weight((100,), 0.1)], transB=1)
    return n.model([("input", [1, 3, 224, 224])], [y])


def unet_128(n: _Net) -> onnx.ModelProto:
    """U-Net: MaxPool down, nearest Resize and ConvTranspose up, Concat skips, 128x128."""
    e1 = n.conv(n.conv("input", 3, 16), 16, 16)
    (d1,) = n.op("MaxPool", [e1], kernel_shape=[2, 2], strides=[2, 2])
    e2 = n.conv(n.conv(d1, 16, 32), 32, 32)
    (d2,) = n.op("MaxPool", [e2], kernel_shape=[2, 2], strides=[2, 2])
    e3 = n.conv(n.conv(d2, 32, 64), 64, 64)
    scales = n.const(np.array([1, 1, 2, 2], np.float32))
    (u2,) = n.op("Resize", [e3, "", scales], mode="nearest")
    (c2,) = n.op("Concat", [u2, e2], axis=1)
    x = n.conv(n.conv(c2, 96, 32), 32, 32)
    (u1,) = n.op(
        "ConvTranspose",
        [x, n.weight((32, 16, 2, 2)), n.weight((16,), 0.1)],
        kernel_shape=[2, 2],
        strides=[2, 2],
    )
    (c1,) = n.op("Concat", [u1, e1], axis=1)
    x = n.conv(n.conv(c1, 32, 16), 16, 16)
    y = n.conv(x, 16, 2, 1, act="sigmoid")
    return n.model([("input", [1, 3, 128, 128])], [y])


def _yolo(n: _Net, size: int, width: int, classes: int) -> onnx.ModelProto:
    w = width
    x = n.conv("input", 3, w, 3, 2, act="silu")
    x = n.conv(x, w, 2 * w, 3, 2, act="silu")
    # C2f-like block: split in two, convs on one half, concat
    a, b = n.op("Split", [x, n.const(np.array([w, w], np.int64))], n_out=2, axis=1)
    b2 = n.conv(b, w, w, 3, act="silu")
    (x,) = n.op("Concat", [a, b, b2], axis=1)
    p3 = n.conv(x, 3 * w, 2 * w, 1, act="silu")
    p4 = n.conv(p3, 2 * w, 4 * w, 3, 2, act="silu")
    p5 = n.conv(p4, 4 * w, 8 * w, 3, 2, act="silu")
    # SPPF
    (m1,) = n.op("MaxPool", [p5], kernel_shape=[5, 5], strides=[1, 1], pads=[2, 2, 2, 2])
    (m2,) = n.op("MaxPool", [m1], kernel_shape=[5, 5], strides=[1, 1], pads=[2, 2, 2, 2])
    (s,) = n.op("Concat", [p5, m1, m2], axis=1)
    p5 = n.conv(s, 24 * w, 8 * w, 1, act="silu")
    scales = n.const(np.array([1, 1, 2, 2], np.float32))
    (u,) = n.op("Resize", [p5, "", scales], mode="nearest")
    (f4,) = n.op("Concat", [u, p4], axis=1)
    f4 = n.conv(f4, 12 * w, 4 * w, 3, act="silu")
    outs = []
    no = 4 + classes
    for i, (feat, ch) in enumerate([(f4, 4 * w), (p5, 8 * w)]):
        h = n.conv(feat, ch, no, 1, act=None)
        hw = (size // (8 * 2**i)) ** 2  # f4 is at stride 8, p5 at 16
        (r,) = n.op("Reshape", [h, n.const(np.array([1, no, hw], np.int64))])
        outs.append(r)
    (cat,) = n.op("Concat", outs, axis=2)
    box, cls = n.op("Split", [cat, n.const(np.array([4, classes], np.int64))], n_out=2, axis=1)
    (cls,) = n.op("Sigmoid", [cls])
    (t,) = n.op("Transpose", [cls], perm=[0, 2, 1])
    return n.model([("input", [1, 3, size, size])], [box, t])


def yolo_320(n: _Net) -> onnx.ModelProto:
    """YOLO-style: SiLU, Split/Concat block, SPPF MaxPools, Resize, Reshape heads, Split, Sigmoid,
    Transpose."""
    return _yolo(n, 320, 16, 20)


def yolo_640(n: _Net) -> onnx.ModelProto:
    """The same YOLO-style graph at 640x640 with narrow channels."""
    return _yolo(n, 640, 8, 4)


def transformer(n: _Net) -> onnx.ModelProto:
    """One pre-norm transformer block on 49 tokens x 64: LayerNormalization, MatMul Q/K/V, 4-head
    attention (Reshape, Transpose, MatMul, Softmax), GELU (Erf form) MLP, residual Adds. Opset 17."""
    return _transformer_block(n, 49, 64, 4)


def _transformer_block(n: _Net, t: int, d: int, heads: int) -> onnx.ModelProto:
    """The block of `transformer` on `t` tokens x `d` features with `heads` heads (MLP width 4 d)."""
    hd = d // heads
    ln_s = n.weight((d,), 1.0)
    ln_b = n.weight((d,), 0.1)
    (h,) = n.op("LayerNormalization", ["input", ln_s, ln_b], axis=-1, epsilon=1e-5)
    qkv = []
    for _ in range(3):
        (m,) = n.op("MatMul", [h, n.weight((d, d))])
        (m,) = n.op("Add", [m, n.weight((d,), 0.1)])
        (r,) = n.op("Reshape", [m, n.const(np.array([1, t, heads, hd], np.int64))])
        (p,) = n.op("Transpose", [r], perm=[0, 2, 1, 3])
        qkv.append(p)
    q, k, v = qkv
    (kt,) = n.op("Transpose", [k], perm=[0, 1, 3, 2])
    (s,) = n.op("MatMul", [q, kt])
    (s,) = n.op("Mul", [s, n.const(np.array(1 / np.sqrt(hd), np.float32))])
    (a,) = n.op("Softmax", [s], axis=-1)
    (o,) = n.op("MatMul", [a, v])
    (o,) = n.op("Transpose", [o], perm=[0, 2, 1, 3])
    (o,) = n.op("Reshape", [o, n.const(np.array([1, t, d], np.int64))])
    (o,) = n.op("MatMul", [o, n.weight((d, d))])
    (x,) = n.op("Add", ["input", o])
    (h,) = n.op("LayerNormalization", [x, n.weight((d,), 1.0), n.weight((d,), 0.1)], axis=-1, epsilon=1e-5)
    (m,) = n.op("MatMul", [h, n.weight((d, 4 * d))])
    (m,) = n.op("Add", [m, n.weight((4 * d,), 0.1)])
    # GELU: 0.5 x (1 + erf(x / sqrt 2))
    (e,) = n.op("Div", [m, n.const(np.array(np.sqrt(2.0), np.float32))])
    (e,) = n.op("Erf", [e])
    (e,) = n.op("Add", [e, n.const(np.array(1.0, np.float32))])
    (g,) = n.op("Mul", [m, e])
    (g,) = n.op("Mul", [g, n.const(np.array(0.5, np.float32))])
    (m,) = n.op("MatMul", [g, n.weight((4 * d, d))])
    (y,) = n.op("Add", [x, m])
    return n.model([("input", [1, t, d])], [y], opset=17)


def lstm(n: _Net) -> onnx.ModelProto:
    """An LSTM over 16 steps (batch 1, 32 features, hidden 64), then a MatMul head."""
    seq, feat, hid = 16, 32, 64
    w = n.weight((1, 4 * hid, feat))
    r = n.weight((1, 4 * hid, hid))
    b = n.weight((1, 8 * hid), 0.1)
    y, _h, _c = n.op("LSTM", ["input", w, r, b], n_out=3, hidden_size=hid)
    (s,) = n.op("Squeeze", [y, n.const(np.array([1], np.int64))])
    (o,) = n.op("MatMul", [s, n.weight((hid, 10))])
    return n.model([("input", [seq, 1, feat])], [o])


def gru(n: _Net) -> onnx.ModelProto:
    """A GRU over 16 steps (batch 1, 32 features, hidden 48), then a MatMul head."""
    seq, feat, hid = 16, 32, 48
    w = n.weight((1, 3 * hid, feat))
    r = n.weight((1, 3 * hid, hid))
    b = n.weight((1, 6 * hid), 0.1)
    y, _h = n.op("GRU", ["input", w, r, b], n_out=2, hidden_size=hid, linear_before_reset=1)
    (s,) = n.op("Squeeze", [y, n.const(np.array([1], np.int64))])
    (o,) = n.op("MatMul", [s, n.weight((hid, 10))])
    return n.model([("input", [seq, 1, feat])], [o])


def dw_odd(n: _Net) -> onnx.ModelProto:
    """Depthwise convs with 3, 24, 40, 72, 120, 200 channels (not multiples of 8/16), 38 -> 19 -> 10 -> 5."""
    x, c = "input", 3
    x = n.conv(x, 3, 3, 3, 1, group=3)
    for cout, stride, k in [(24, 2, 3), (40, 1, 3), (72, 2, 3), (120, 1, 5), (200, 2, 3)]:
        x = n.conv(x, c, cout, 1, act="relu")
        x = n.conv(x, cout, cout, k, stride, group=cout, act="relu")
        c = cout
    (p,) = n.op("GlobalAveragePool", [x])
    y = n.conv(p, c, 10, 1, act=None)
    return n.model([("input", [1, 3, 38, 38])], [y])


def dw_13(n: _Net) -> onnx.ModelProto:
    """Depthwise/pointwise pairs at 13x13 then 7x7 with 40 and 120 channels."""
    x = n.conv("input", 3, 40, 3, 1)
    x = n.conv(x, 40, 40, 3, 1, group=40)
    x = n.conv(x, 40, 120, 1)
    x = n.conv(x, 120, 120, 3, 2, group=120)
    x = n.conv(x, 120, 72, 1, act=None)
    return n.model([("input", [1, 3, 13, 13])], [x])


def head_1x1(n: _Net) -> onnx.ModelProto:
    """A 1x1-spatial classifier: 1x1 convs on a (1,200,1,1) feature, the shape of a pooled head."""
    x = n.conv("input", 200, 120, 1)
    x = n.conv(x, 120, 72, 1)
    y = n.conv(x, 72, 10, 1, act=None)
    return n.model([("input", [1, 200, 1, 1])], [y])


def batch2(n: _Net) -> onnx.ModelProto:
    """A conv chain with batch 2 at 56x56."""
    x = n.conv("input", 3, 16, 3, 1)
    x = n.conv(x, 16, 32, 3, 2)
    x = n.conv(x, 32, 32, 3, 1)
    (y,) = n.op("GlobalAveragePool", [x])
    return n.model([("input", [2, 3, 56, 56])], [y])


def multi_io(n: _Net) -> onnx.ModelProto:
    """Two inputs (an image and a feature map), merged by Concat, two outputs at different scales."""
    a = n.conv("image", 3, 16, 3, 2)
    b = n.conv("features", 8, 16, 1)
    (x,) = n.op("Concat", [a, b], axis=1)
    x = n.conv(x, 32, 32, 3, 1)
    y1 = n.conv(x, 32, 4, 1, act=None)
    y2 = n.conv(n.conv(x, 32, 48, 3, 2), 48, 6, 1, act="sigmoid")
    return n.model([("image", [1, 3, 64, 64]), ("features", [1, 8, 32, 32])], [y1, y2])


def fpn_lite(n: _Net) -> onnx.ModelProto:
    """A held-out architecture, added after the size profiles were learned (it tests them): inverted
    residuals with widths 24/36/108/144/192 at 160x160, a residual Add, a SiLU conv, an FPN-style nearest
    Resize + Concat + Conv, and a Conv + Sigmoid output."""
    x = n.conv("input", 3, 24, 3, 2)
    x = n.conv(x, 24, 24, 3, 1, group=24, act="relu6")
    x = n.conv(x, 24, 36, 1, act="relu6")
    h = n.conv(x, 36, 108, 1, act="relu6")
    h = n.conv(h, 108, 108, 3, 2, group=108, act="relu6")
    c3 = n.conv(h, 108, 48, 1, act=None)
    h = n.conv(c3, 48, 144, 1, act="relu6")
    h = n.conv(h, 144, 144, 3, 1, group=144, act="relu6")
    h = n.conv(h, 144, 48, 1, act=None)
    (c3,) = n.op("Add", [c3, h])
    h = n.conv(c3, 48, 192, 1, act="relu6")
    h = n.conv(h, 192, 192, 3, 2, group=192, act="relu6")
    c4 = n.conv(h, 192, 72, 1, act="silu")
    scales = n.const(np.array([1, 1, 2, 2], np.float32))
    (u,) = n.op("Resize", [c4, "", scales], mode="nearest")
    (f,) = n.op("Concat", [u, c3], axis=1)
    f = n.conv(f, 120, 40, 3)
    y = n.conv(f, 40, 5, 1, act="sigmoid")
    return n.model([("input", [1, 3, 160, 160])], [y])


def refused_custom_op(n: _Net) -> onnx.ModelProto:
    """A conv followed by an op of an unknown domain: the compiler cannot load it."""
    x = n.conv("input", 3, 8, 3, 1)
    y = n.uid("y")
    n.nodes.append(helper.make_node("FancyOp", [x], [y], name="FancyOp", domain="com.example"))
    return n.model([("input", [1, 3, 32, 32])], [y], extra_opsets=(("com.example", 1),))


def refused_conv3d(n: _Net) -> onnx.ModelProto:
    """A 5-D (3-D) convolution with a dynamic depth."""
    w = n.weight((4, 2, 3, 3, 3))
    (y,) = n.op("Conv", ["input", w], kernel_shape=[3, 3, 3], pads=[1] * 6)
    return n.model([("input", [1, 2, "depth", 16, 16])], [y])


@dataclass(frozen=True)
class ModelSpec:
    name: str
    builder: Callable[[_Net], onnx.ModelProto]
    refused: bool = False  # expected to fail in the compiler


MODELS: dict[str, ModelSpec] = {
    s.name: s
    for s in [
        ModelSpec("mobilenet_v1", mobilenet_v1),
        ModelSpec("chain_75", chain_75),
        ModelSpec("mobilenet_v2", mobilenet_v2),
        ModelSpec("unet_128", unet_128),
        ModelSpec("yolo_320", yolo_320),
        ModelSpec("yolo_640", yolo_640),
        ModelSpec("transformer", transformer),
        ModelSpec("lstm", lstm),
        ModelSpec("gru", gru),
        ModelSpec("dw_odd", dw_odd),
        ModelSpec("dw_13", dw_13),
        ModelSpec("head_1x1", head_1x1),
        ModelSpec("batch2", batch2),
        ModelSpec("multi_io", multi_io),
        ModelSpec("fpn_lite", fpn_lite),
        ModelSpec("refused_custom_op", refused_custom_op, refused=True),
        ModelSpec("refused_conv3d", refused_conv3d, refused=True),
    ]
}


def _recurrent(kind: str, seq: int, feat: int, hid: int, k: int) -> Callable[[_Net], onnx.ModelProto]:
    """An LSTM or GRU over `seq` steps (batch 1, `feat` features, hidden `hid`), then a MatMul to `k`."""
    gates = 4 if kind == "LSTM" else 3

    def builder(n: _Net) -> onnx.ModelProto:
        w = n.weight((1, gates * hid, feat))
        r = n.weight((1, gates * hid, hid))
        b = n.weight((1, 2 * gates * hid), 0.1)
        attrs: dict[str, object] = {"hidden_size": hid}
        if kind == "GRU":
            attrs["linear_before_reset"] = 1
        outs = n.op(kind, ["input", w, r, b], n_out=3 if kind == "LSTM" else 2, **attrs)
        (s,) = n.op("Squeeze", [outs[0], n.const(np.array([1], np.int64))])
        (o,) = n.op("MatMul", [s, n.weight((hid, k))])
        return n.model([("input", [seq, 1, feat])], [o])

    return builder


#: Recurrent models at other sizes than `lstm`/`gru` (S, F, H and the head width K all differ), in two
#: sets built by `rknn.py build --heldout`: RECURRENT_DEV into `fixtures/rknn-compiler/recurrent-dev/`,
#: whose logs refined the rules of `logscope/reference/rknn_rewrites.py` after a first measurement, and
#: HELDOUT into `fixtures/rknn-compiler/heldout-recurrent/`, built and measured after the rules were fixed.
RECURRENT_DEV: dict[str, ModelSpec] = {
    s.name: s
    for s in [
        ModelSpec("lstm_s12_f20_h40_k6", _recurrent("LSTM", 12, 20, 40, 6)),
        ModelSpec("lstm_s32_f16_h128_k24", _recurrent("LSTM", 32, 16, 128, 24)),
        ModelSpec("gru_s10_f24_h56_k12", _recurrent("GRU", 10, 24, 56, 12)),
        ModelSpec("gru_s20_f40_h24_k3", _recurrent("GRU", 20, 40, 24, 3)),
    ]
}
HELDOUT: dict[str, ModelSpec] = {
    s.name: s
    for s in [
        ModelSpec("lstm_s20_f36_h72_k5", _recurrent("LSTM", 20, 36, 72, 5)),
        ModelSpec("lstm_s6_f8_h24_k16", _recurrent("LSTM", 6, 8, 24, 16)),
        ModelSpec("gru_s14_f12_h88_k7", _recurrent("GRU", 14, 12, 88, 7)),
        ModelSpec("gru_s28_f48_h40_k20", _recurrent("GRU", 28, 48, 40, 20)),
    ]
}


def _transformer(t: int, d: int, heads: int) -> Callable[[_Net], onnx.ModelProto]:
    return lambda n: _transformer_block(n, t, d, heads)


#: Transformer blocks at other token counts T, widths D and head counts than `transformer` (T 49, D 64,
#: 4 heads), built by `rknn.py build --heldout --set transformer-dev --toolkit 2.5.0 --toolkit 2.3.2`
#: into `fixtures/rknn-compiler/transformer-dev/`: how the compiler's added tensors scale with T, D
#: and heads, and a held-out measure of the feature-table replay (whose rules were fixed on the
#: `transformer` builds before these were built).
TRANSFORMER_DEV: dict[str, ModelSpec] = {
    s.name: s
    for s in [
        ModelSpec("tf_t16_d64_h4", _transformer(16, 64, 4)),
        ModelSpec("tf_t64_d64_h4", _transformer(64, 64, 4)),
        ModelSpec("tf_t49_d32_h4", _transformer(49, 32, 4)),
        ModelSpec("tf_t49_d128_h4", _transformer(49, 128, 4)),
        ModelSpec("tf_t49_d64_h2", _transformer(49, 64, 2)),
        ModelSpec("tf_t49_d64_h8", _transformer(49, 64, 8)),
        ModelSpec("tf_t100_d48_h3", _transformer(100, 48, 3)),
        ModelSpec("tf_t10_d96_h6", _transformer(10, 96, 6)),
    ]
}
#: The block at every odd token count 1-127 (D 32, 2 heads), built for rk3588 int8 with 2.5.0 and 2.3.2
#: (`rknn.py build --heldout --set transformer-sweep --toolkit 2.5.0 --toolkit 2.3.2 --target rk3588
#: --dtype int8`)
#: into `fixtures/rknn-compiler/transformer-sweep/`: the exSDPAttention scratch as a function of T.
TRANSFORMER_SWEEP: dict[str, ModelSpec] = {
    f"tf_t{t}_d32_h2": ModelSpec(f"tf_t{t}_d32_h2", _transformer(t, 32, 2)) for t in range(1, 128, 2)
}
#: Every fourth of them from T 33 to 125, built for rk3588, rk3576, rv1126b, rk3562 and rv1106, int8 and
#: fp16, with 2.5.0 and 2.3.2 (`rknn.py build --heldout --set transformer-sweep-targets --toolkit 2.5.0
#: --toolkit 2.3.2 --target rk3588 --target rk3576 --target rv1126b --target rk3562 --target rv1106`)
#: into `fixtures/rknn-compiler/transformer-sweep-targets/`: the same scratch on the other targets.
TRANSFORMER_SWEEP_TARGETS: dict[str, ModelSpec] = {
    f"tf_t{t}_d32_h2": TRANSFORMER_SWEEP[f"tf_t{t}_d32_h2"] for t in range(33, 128, 4)
}

#: Transformer blocks built after the tables of logscope/reference/rknn_transformer_data.py were learned,
#: at token counts, widths and head counts no development build has (`rknn.py build --heldout --set
#: transformer-heldout --toolkit 2.5.0 --toolkit 2.3.2`, and 2.3.0 / 2.2.0 on their five targets) into
#: `fixtures/rknn-compiler/transformer-heldout/`: a held-out measure of the prediction.
TRANSFORMER_HELDOUT: dict[str, ModelSpec] = {
    s.name: s
    for s in [
        ModelSpec("tf_t57_d96_h6", _transformer(57, 96, 6)),
        ModelSpec("tf_t81_d160_h5", _transformer(81, 160, 5)),
        ModelSpec("tf_t113_d48_h3", _transformer(113, 48, 3)),
        ModelSpec("tf_t37_d128_h8", _transformer(37, 128, 8)),
    ]
}


def _maxpools(
    channels: int, size: int, kernel: int, width: int | None = None
) -> Callable[[_Net], onnx.ModelProto]:
    """A conv to `channels` at size x width (default square), two MaxPools in a row (kernel 5: stride 1,
    pad 2, as yolo's SPPF; kernel 2: stride 2), a Concat of the three (kernel 5) and a 1x1 conv."""

    def builder(n: _Net) -> onnx.ModelProto:
        x = n.conv("input", 3, channels, 3, 1)
        if kernel == 5:
            pool = {"kernel_shape": [5, 5], "strides": [1, 1], "pads": [2, 2, 2, 2]}
        else:
            pool = {"kernel_shape": [kernel, kernel], "strides": [kernel, kernel]}
        (m1,) = n.op("MaxPool", [x], **pool)
        (m2,) = n.op("MaxPool", [m1], **pool)
        if kernel == 5:
            (m2,) = n.op("Concat", [x, m1, m2], axis=1)
            y = n.conv(m2, 3 * channels, 8, 1)
        else:
            y = n.conv(m2, channels, 8, 1)
        return n.model([("input", [1, 3, size, width or size])], [y])

    return builder


#: MaxPools at other widths and sizes than the corpus's (yolo_320's SPPF: 128 channels at 20 x 20, whose
#: inputs rk2118 stores at 11.5 x their channels where the other corpus MaxPool tensors take 10 x), built for
#: rk2118 fp16 with 2.5.0 and 2.3.2 (`rknn.py build --heldout --set maxpool-dev --toolkit 2.5.0 --toolkit
#: 2.3.2 --target rk2118 --dtype fp16`) into `fixtures/rknn-compiler/maxpool-dev/`.
MAXPOOL_DEV: dict[str, ModelSpec] = {
    f"mp_k{k}_c{c}_s{h}": ModelSpec(f"mp_k{k}_c{c}_s{h}", _maxpools(c, h, k))
    for k, c, h in [
        (5, 32, 20),
        (5, 64, 20),
        (5, 96, 20),
        (5, 128, 20),
        (5, 192, 20),
        (5, 256, 20),
        (5, 64, 40),
        (5, 128, 40),
        (5, 128, 10),
        (5, 256, 10),
        (5, 128, 13),
        (5, 72, 20),
        (5, 80, 20),
        *((5, 128, h) for h in (8, 12, 16, 18, 22, 24, 26, 28, 30, 32, 36)),
        (5, 256, 30),
        (5, 256, 40),
        (2, 64, 20),
        (2, 128, 20),
        (2, 256, 20),
    ]
}
#: Non-square inputs and more widths at 20 x 20, added after the square sweep to tell H from W.
MAXPOOL_DEV.update(
    {
        f"mp_k5_c{c}_s{h}x{w}": ModelSpec(f"mp_k5_c{c}_s{h}x{w}", _maxpools(c, h, 5, w))
        for c, h, w in [
            *((128, h, w) for h in (16, 20, 24, 28, 32, 36) for w in (16, 24, 32, 40) if h != w),
            (112, 20, 20),
            (120, 20, 20),
            (160, 20, 20),
        ]
    }
)


def spec(name: str) -> ModelSpec:
    return {
        **MODELS,
        **RECURRENT_DEV,
        **HELDOUT,
        **TRANSFORMER_DEV,
        **TRANSFORMER_SWEEP,
        **TRANSFORMER_HELDOUT,
        **MAXPOOL_DEV,
    }[name]


def build(name: str, weights: str = "random") -> onnx.ModelProto:
    """The model `name`; `weights="zeros"` gives the same graph with zero weights (for shape analysis)."""
    spec_ = spec(name)
    seed = int(hashlib.sha256(name.encode()).hexdigest()[:8], 16)
    return spec_.builder(_Net(name, weights, seed))


def input_shapes(model: onnx.ModelProto) -> dict[str, list[int | str]]:
    inits = {i.name for i in model.graph.initializer}
    out: dict[str, list[int | str]] = {}
    for i in model.graph.input:
        if i.name in inits:
            continue
        dims = i.type.tensor_type.shape.dim
        out[i.name] = [d.dim_value if d.HasField("dim_value") else d.dim_param for d in dims]
    return out
