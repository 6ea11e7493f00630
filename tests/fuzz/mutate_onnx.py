"""ONNX model mutations for the fuzz harness: huge and negative dims, huge kernels, shapes that expand to
astronomic sizes, cycles, missing shapes, bad external data, broken attributes, corrupted bytes.

Models are built with `onnx.helper` (weights are zeros: only shapes matter). `mutate_model` returns the
serialized bytes and, for external-data cases, the side files to write beside the model.
"""

from __future__ import annotations

import random
from collections.abc import Callable

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HUGE = (2**31, 2**32 + 1, 2**40, 2**62, 2**63 - 1, 10**12)
BAD_DIMS = (*HUGE, -1, -7, 0)


def _model(
    nodes: list[onnx.NodeProto], inputs: list, outputs: list, inits: list, name: str
) -> onnx.ModelProto:
    graph = helper.make_graph(nodes, name, inputs, outputs, inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def conv_chain() -> onnx.ModelProto:
    """input (1,8,16,16) → conv 3x3 → relu → conv 1x1 → add(residual) → maxpool → reshape → matmul."""
    inits = [
        numpy_helper.from_array(np.zeros((8, 8, 3, 3), np.float32), "w1"),
        numpy_helper.from_array(np.zeros(8, np.float32), "b1"),
        numpy_helper.from_array(np.zeros((8, 8, 1, 1), np.float32), "w2"),
        numpy_helper.from_array(np.array([1, -1], np.int64), "shape"),
        numpy_helper.from_array(np.zeros((512, 10), np.float32), "fc"),
    ]
    nodes = [
        helper.make_node(
            "Conv", ["input", "w1", "b1"], ["c1"], name="conv1", kernel_shape=[3, 3], pads=[1] * 4
        ),
        helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
        helper.make_node("Conv", ["r1", "w2"], ["c2"], name="conv2", kernel_shape=[1, 1]),
        helper.make_node("Add", ["c2", "input"], ["s"], name="add"),
        helper.make_node("MaxPool", ["s"], ["p"], name="pool", kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Reshape", ["p", "shape"], ["flat"], name="reshape"),
        helper.make_node("MatMul", ["flat", "fc"], ["out"], name="fc"),
    ]
    return _model(
        nodes,
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 8, 16, 16])],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, [1, 10])],
        inits,
        "conv_chain",
    )


def shape_ops() -> onnx.ModelProto:
    """ConstantOfShape and Expand driven by constant shape tensors, concatenated with a Gather."""
    inits = [
        numpy_helper.from_array(np.array([1, 4, 8, 8], np.int64), "cshape"),
        numpy_helper.from_array(np.array([1, 4, 8, 8], np.int64), "eshape"),
        numpy_helper.from_array(np.array([0, 1], np.int64), "idx"),
    ]
    nodes = [
        helper.make_node("ConstantOfShape", ["cshape"], ["zeros"], name="cos"),
        helper.make_node("Expand", ["input", "eshape"], ["big"], name="expand"),
        helper.make_node("Add", ["zeros", "big"], ["sum"], name="add"),
        helper.make_node("Concat", ["sum", "big"], ["cat"], name="concat", axis=1),
        helper.make_node("Gather", ["cat", "idx"], ["out"], name="gather", axis=1),
    ]
    return _model(
        nodes,
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 1, 8, 8])],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, None)],
        inits,
        "shape_ops",
    )


BASES: dict[str, Callable[[], onnx.ModelProto]] = {"conv_chain": conv_chain, "shape_ops": shape_ops}


def _set_dims(value_info: onnx.ValueInfoProto, rng: random.Random) -> None:
    dims = value_info.type.tensor_type.shape.dim
    if dims:
        dims[rng.randrange(len(dims))].dim_value = rng.choice(BAD_DIMS)


def huge_input(m: onnx.ModelProto, rng: random.Random) -> None:
    for _ in range(rng.randint(1, 3)):
        _set_dims(m.graph.input[0], rng)


def huge_initializer(m: onnx.ModelProto, rng: random.Random) -> None:
    """An initializer whose declared dims are huge or negative (its data stays small: a lie)."""
    init = rng.choice(m.graph.initializer)
    if init.dims:
        init.dims[rng.randrange(len(init.dims))] = rng.choice(BAD_DIMS)


def huge_shape_tensor(m: onnx.ModelProto, rng: random.Random) -> None:
    """A Reshape / ConstantOfShape / Expand target of astronomic (or negative) size: the base models'
    shape tensors by name, any other model's by the input they feed."""
    targets = {"shape", "cshape", "eshape"}
    for node in m.graph.node:
        at = {"Reshape": 1, "Expand": 1, "ConstantOfShape": 0}.get(node.op_type)
        if at is not None and len(node.input) > at:
            targets.add(node.input[at])
    for init in m.graph.initializer:
        external = init.data_location == TensorProto.EXTERNAL
        if init.data_type == TensorProto.INT64 and init.name in targets and not external:
            values = numpy_helper.to_array(init).copy()
            values[rng.randrange(len(values))] = rng.choice((*BAD_DIMS, 2**63 - 1, -(2**63)))
            init.CopyFrom(numpy_helper.from_array(values.astype(np.int64), init.name))


def huge_kernel(m: onnx.ModelProto, rng: random.Random) -> None:
    """Conv and pool attributes: huge or zero kernels, strides, pads, dilations, groups."""
    for node in m.graph.node:
        for attr in node.attribute:
            if attr.ints and rng.random() < 0.5:
                attr.ints[rng.randrange(len(attr.ints))] = rng.choice((*BAD_DIMS, 2**63 - 1))
            elif attr.type == onnx.AttributeProto.INT and rng.random() < 0.5:
                attr.i = rng.choice((*BAD_DIMS, 2**63 - 1))
    for node in m.graph.node:
        if node.op_type == "Conv" and rng.random() < 0.5:
            node.attribute.append(helper.make_attribute("group", rng.choice((0, -3, 2**40))))
            break


def cycle(m: onnx.ModelProto, rng: random.Random) -> None:
    """A node reads the output of a later node (or its own)."""
    nodes = m.graph.node
    i = rng.randrange(len(nodes))
    j = rng.randrange(i, len(nodes))
    nodes[i].input[0] = nodes[j].output[0]


def missing_shapes(m: onnx.ModelProto, rng: random.Random) -> None:
    """Shapes gone: input dims cleared or symbolic, output types dropped, an initializer removed."""
    choice = rng.randrange(4)
    if choice == 0:
        m.graph.input[0].type.tensor_type.ClearField("shape")
    elif choice == 1:
        for dim in m.graph.input[0].type.tensor_type.shape.dim:
            dim.dim_param = rng.choice(("N", "batch", ""))
    elif choice == 2:
        m.graph.output[0].type.Clear()
    else:
        del m.graph.initializer[rng.randrange(len(m.graph.initializer))]


def bad_external_data(m: onnx.ModelProto, rng: random.Random) -> None:
    """An initializer's data declared external: outside the folder, missing, or out of the file's range."""
    init = rng.choice(m.graph.initializer)
    init.ClearField("raw_data")
    init.ClearField("float_data")
    init.ClearField("int64_data")
    init.data_location = TensorProto.EXTERNAL
    location = rng.choice(
        ("../escape.bin", "/etc/passwd", "C:\\x.bin", "\\\\host\\share\\x", "missing.bin", "weights.bin")
    )
    entries = {"location": location}
    if rng.random() < 0.7:
        entries["offset"] = str(rng.choice((0, 16, 2**40, -5)))
        entries["length"] = str(rng.choice((4, 2**40, -1, 0)))
    for key, value in entries.items():
        entry = init.external_data.add()
        entry.key, entry.value = key, value


def duplicate_names(m: onnx.ModelProto, rng: random.Random) -> None:
    """Two nodes writing the same tensor, or a node reading a tensor nobody writes."""
    nodes = m.graph.node
    if rng.random() < 0.5 and len(nodes) > 1:
        nodes[rng.randrange(1, len(nodes))].output[0] = nodes[0].output[0]
    else:
        nodes[rng.randrange(len(nodes))].input[0] = "undefined_tensor"


ONNX_MUTATORS: dict[str, Callable[[onnx.ModelProto, random.Random], None]] = {
    "huge-input": huge_input,
    "huge-initializer": huge_initializer,
    "huge-shape-tensor": huge_shape_tensor,
    "huge-kernel": huge_kernel,
    "cycle": cycle,
    "missing-shapes": missing_shapes,
    "bad-external-data": bad_external_data,
    "duplicate-names": duplicate_names,
}


def mutate_model(rng: random.Random) -> tuple[bytes, dict[str, bytes], list[str]]:
    """One case: a base model, one or two mutations, sometimes corrupted bytes. Returns (model bytes,
    side files by name, what was done)."""
    base = rng.choice(sorted(BASES))
    data, side, names = mutate_onnx(BASES[base](), rng)
    return data, side, [base, *names]


def mutate_onnx(model: onnx.ModelProto, rng: random.Random) -> tuple[bytes, dict[str, bytes], list[str]]:
    """`model` (changed in place) after one or two mutations, sometimes with corrupted bytes. Returns
    (model bytes, side files by name, what was done)."""
    names = rng.sample(sorted(ONNX_MUTATORS), rng.choice((1, 1, 2)))
    for i, name in enumerate(names):
        try:
            ONNX_MUTATORS[name](model, rng)
        except Exception:  # a mutation that cannot apply to what an earlier one left (a lying tensor)
            names[i] = f"{name} (not applicable)"
    data = model.SerializeToString()
    if rng.random() < 0.08:
        raw = bytearray(data)
        for _ in range(rng.randint(1, 8)):
            raw[rng.randrange(len(raw))] = rng.randrange(256)
        data = bytes(raw)
        names.append("flip-bytes")
    side = {"weights.bin": bytes(64)} if "bad-external-data" in names else {}
    return data, side, names
