"""Loading models safely and resolving shapes: every bad model is a `ModelError`, never a traceback."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

import numpy as np
import onnx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from onnx import TensorProto, helper, numpy_helper

from logscope.errors import InputError, LogscopeError
from logscope.reference import (
    LoadLimits,
    ModelFormatError,
    ModelTooLargeError,
    ReferenceOptions,
    ShapeError,
    UnsafeModelError,
    analyze_model,
    load_model,
    parse_input_shape,
)


def small_model(input_dims=(1, 3, 8, 8), *, weight: np.ndarray | None = None) -> onnx.ModelProto:
    w = numpy_helper.from_array(weight if weight is not None else np.ones((4, 3, 3, 3), np.float32), "w")
    nodes = [
        helper.make_node("Conv", ["x", "w"], ["y"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["y"], ["z"]),
    ]
    graph = helper.make_graph(
        nodes,
        "small",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(input_dims))],
        [helper.make_tensor_value_info("z", TensorProto.FLOAT, None)],
        [w],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def external(model: onnx.ModelProto, location: str, offset: int = 0, length: int | None = None) -> None:
    """Point initializer `w` at external data."""
    tensor = model.graph.initializer[0]
    tensor.ClearField("raw_data")
    tensor.ClearField("float_data")
    tensor.data_location = TensorProto.EXTERNAL
    entries = {"location": location, "offset": str(offset)}
    if length is not None:
        entries["length"] = str(length)
    for key, value in entries.items():
        entry = tensor.external_data.add()
        entry.key, entry.value = key, value


def save(model: onnx.ModelProto, path: Path) -> Path:
    path.write_bytes(model.SerializeToString())
    return path


def test_external_data_inside_the_folder_is_fine(tmp_path):
    (tmp_path / "weights.bin").write_bytes(b"\0" * 432)
    model = small_model()
    external(model, "weights.bin", 0, 432)
    result = analyze_model(save(model, tmp_path / "m.onnx"), ReferenceOptions(dtype="fp32"))
    assert result.totals["params"] == 108 and result.totals["weight_bytes"] == 432


@pytest.mark.parametrize(
    "location, message",
    [
        ("../secret.bin", "climbs out"),
        ("sub/../../secret.bin", "climbs out"),
        ("/etc/passwd", "absolute path"),
        ("C:\\Windows\\win.ini", "absolute path"),
        ("", "empty or invalid"),
    ],
)
def test_external_data_cannot_escape(tmp_path, location, message):
    inner = tmp_path / "model"
    inner.mkdir()
    (tmp_path / "secret.bin").write_bytes(b"\0" * 432)
    model = small_model()
    external(model, location, 0, 432)
    with pytest.raises(UnsafeModelError, match=message):
        load_model(save(model, inner / "m.onnx"))


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="needs symlinks")
def test_external_data_symlink_out_of_the_folder(tmp_path):
    inner = tmp_path / "model"
    inner.mkdir()
    (tmp_path / "secret.bin").write_bytes(b"\0" * 432)
    (inner / "weights.bin").symlink_to(tmp_path / "secret.bin")
    model = small_model()
    external(model, "weights.bin", 0, 432)
    with pytest.raises(UnsafeModelError, match="resolves outside"):
        load_model(save(model, inner / "m.onnx"))


def test_external_data_bounds(tmp_path):
    (tmp_path / "weights.bin").write_bytes(b"\0" * 100)
    model = small_model()
    external(model, "weights.bin", 0, 432)
    with pytest.raises(ModelFormatError, match="holds 100"):
        load_model(save(model, tmp_path / "m.onnx"))
    model = small_model()
    external(model, "missing.bin", 0, 432)
    with pytest.raises(ModelFormatError, match="missing"):
        load_model(save(model, tmp_path / "m2.onnx"))
    (tmp_path / "big.bin").write_bytes(b"\0" * 432)
    model = small_model()
    external(model, "big.bin", 0, 432)
    with pytest.raises(ModelTooLargeError):
        load_model(save(model, tmp_path / "m3.onnx"), LoadLimits(max_external_bytes=100))


def test_size_and_node_limits(tmp_path):
    path = save(small_model(), tmp_path / "m.onnx")
    with pytest.raises(ModelTooLargeError, match="model limit"):
        load_model(path, LoadLimits(max_model_bytes=10))
    with pytest.raises(ModelTooLargeError, match="more than 1 nodes"):
        load_model(path, LoadLimits(max_nodes=1))


@pytest.mark.parametrize(
    "content, error",
    [
        (b"", ModelFormatError),
        (b"this is a build log, not a model\n" * 10, ModelFormatError),
        (b"\x08\x07", ModelFormatError),  # a valid protobuf (ir_version 7) without a graph
    ],
)
def test_not_a_model(tmp_path, content, error):
    path = tmp_path / "bad.onnx"
    path.write_bytes(content)
    with pytest.raises(error):
        load_model(path)


def test_truncated_model(tmp_path):
    data = small_model().SerializeToString()
    path = tmp_path / "cut.onnx"
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(ModelFormatError):
        analyze_model(path)


def test_missing_file_is_an_input_error(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        analyze_model(tmp_path / "nope.onnx")


@settings(max_examples=60, deadline=None)
@given(st.binary(max_size=300))
def test_random_bytes_never_escape_as_other_errors(tmp_path_factory, data):
    path = tmp_path_factory.mktemp("fuzz") / "m.onnx"
    path.write_bytes(data)
    with contextlib.suppress(LogscopeError):  # anything else fails the test
        analyze_model(path)


def test_malformed_graphs():
    model = small_model()
    model.graph.node[1].input[0] = "nowhere"
    with pytest.raises(ModelFormatError, match="no input, initializer or node defines"):
        analyze_model(model)
    model = small_model()
    model.graph.node.add().CopyFrom(helper.make_node("Relu", ["y"], ["z"]))
    with pytest.raises(ModelFormatError, match="produced twice"):
        analyze_model(model)
    cyc = helper.make_graph(
        [helper.make_node("Relu", ["b"], ["a"]), helper.make_node("Relu", ["a"], ["b"])],
        "cycle",
        [],
        [helper.make_tensor_value_info("b", TensorProto.FLOAT, [1])],
    )
    with pytest.raises(ModelFormatError, match="cycle"):
        analyze_model(helper.make_model(cyc))


def test_nodes_out_of_order_are_sorted():
    model = small_model()
    nodes = list(model.graph.node)
    del model.graph.node[:]
    model.graph.node.extend(reversed(nodes))
    result = analyze_model(model, ReferenceOptions(dtype="fp32"))
    assert [op.op_type for op in result.graph.ops] == ["Conv", "Relu"]


def test_dynamic_dims_need_a_value():
    model = small_model(("N", 3, "H", "W"))
    with pytest.raises(ShapeError, match="--input-shape x=Nx3xNxN"):
        analyze_model(model)
    result = analyze_model(model, ReferenceOptions(dtype="fp32", input_shapes={"x": (1, 3, 16, 16)}))
    assert result.totals["lower_bound_bytes"] == 2 * 4 * 16 * 16 * 4  # conv out + relu out
    result = analyze_model(model, ReferenceOptions(dtype="fp32", input_shapes={None: (2, 3, 4, 4)}))
    assert result.graph.inputs == {"x": (2, 3, 4, 4)}


def test_dynamic_batch_defaults_to_one():
    result = analyze_model(small_model(("batch", 3, 8, 8)), ReferenceOptions(dtype="fp32"))
    assert result.graph.inputs == {"x": (1, 3, 8, 8)}
    assert any("batch dimension taken as 1" in n for n in result.notes)


def test_input_shape_errors():
    assert parse_input_shape("images=1x3x640x640") == ("images", (1, 3, 640, 640))
    assert parse_input_shape("input:0=1,3,224,224") == ("input:0", (1, 3, 224, 224))
    assert parse_input_shape("1x3x224x224") == (None, (1, 3, 224, 224))
    for bad in ("x=1x3xHx4", "x=", "x=0x3", "x=-1x3"):
        with pytest.raises(ShapeError):
            parse_input_shape(bad)
    with pytest.raises(ShapeError, match="names no model input"):
        analyze_model(small_model(), ReferenceOptions(input_shapes={"y": (1, 3, 8, 8)}))
    with pytest.raises(ShapeError, match="3 dims given"):
        analyze_model(small_model(), ReferenceOptions(input_shapes={"x": (1, 3, 8)}))


def test_shape_inference_fallback():
    """A custom-domain op defeats inference; the elementwise op after it still gets a shape."""
    nodes = [
        helper.make_node("Relu", ["x"], ["a"]),
        helper.make_node("Mystery", ["a"], ["b"], domain="com.example"),
        helper.make_node("Relu", ["a"], ["c"]),
        helper.make_node("Add", ["c", "c"], ["d"]),
    ]
    graph = helper.make_graph(
        nodes,
        "fallback",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
        [
            helper.make_tensor_value_info("b", TensorProto.FLOAT, None),
            helper.make_tensor_value_info("d", 1, None),
        ],
    )
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid("com.example", 1)]
    )
    result = analyze_model(model, ReferenceOptions(dtype="fp32"))
    tensors = {t.name: t for t in result.graph.tensors.values()}
    assert tensors["d"].shape == (1, 4)
    assert tensors["b"].shape is None and tensors["b"].shape_source == "unknown"
    assert any("unknown shape" in n for n in result.notes)


def test_fallback_rules():
    from logscope.reference.shapes import TensorType, fallback_type

    x = TensorType(TensorProto.FLOAT, (1, 8, 4, 4))
    assert fallback_type("Relu", {}, 0, [x]) == x
    assert fallback_type("Dropout", {}, 1, [x]) == TensorType(TensorProto.BOOL, (1, 8, 4, 4))
    assert fallback_type("Cast", {"to": TensorProto.FLOAT16}, 0, [x]).elem_type == TensorProto.FLOAT16
    bias = TensorType(TensorProto.FLOAT, (8, 1, 1))
    assert fallback_type("Add", {}, 0, [x, bias]) == x
    assert fallback_type("Greater", {}, 0, [x, bias]).elem_type == TensorProto.BOOL
    assert fallback_type("Add", {}, 0, [x, TensorType(1, (3, 1, 1))]) is None  # does not broadcast
    assert fallback_type("Conv", {}, 0, [x]) is None
