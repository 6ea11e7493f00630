"""Hostile and degenerate input found by the fuzz harness (tests/fuzz): each a regression test.

A quantity read from a log or a model that drives an allocation or a loop is checked against a stated
limit; what goes over it is left out with the reason, or refused with one line (exit 2), never a
traceback and never an allocation sized by the input.
"""

from __future__ import annotations

import math
import re
import struct
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from typer.testing import CliRunner

from logscope.analysis.derived import derive_memory
from logscope.analysis.mcu import MAX_OP_INDEX
from logscope.api import parse
from logscope.cli import app
from logscope.frames import build_frame
from logscope.plots import plot
from logscope.reference import analyze_model
from logscope.reference.costs import MAX_MODEL_MACS
from logscope.reference.errors import ModelError, ModelTooLargeError
from logscope.reference.frames import build_reference_frame
from logscope.reference.graph import MAX_TENSOR_ELEMENTS

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
PLAN = FIXTURES / "mcu" / "04-tflm-greedy-planner-printmemoryplan-pr48595-partial.txt"
PERF = FIXTURES / "rknn" / "03-perf-detail-cpp-yolov8-1920-rk3588.log"


def test_spliced_buffer_addresses_do_not_size_an_allocation(tmp_path: Path) -> None:
    """A TFLM plan row whose last_used was spliced to 2**32 once made `_buffer_curve` ask numpy for a
    32 GiB array; the row is now left out of the curve, with its line in the derivation."""
    lines = PLAN.read_text(encoding="utf-8").splitlines()
    lines[2] = "2 (id=2): size=16, offset=16, first_used=29 last_used=4294967297"
    lines[4] = "4 (id=4): size=4608, offset=4608, first_used=20 last_used=19"  # reversed range
    path = tmp_path / "plan.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    log = parse(path)
    curve = log.frames["curve"]
    assert len(curve) and curve["op_index"].max() <= MAX_OP_INDEX
    derivation = str(log.frames["mcu_memory"]["derivation"].iloc[0])
    assert "2 buffer row(s) left out" in derivation and "line 3, 5" in derivation
    assert len(log.frames["buffers"]) == len(lines)  # the rows themselves stay, with their lines


def test_derived_memory_with_sizes_but_no_offsets() -> None:
    """`int()` of an NA span: a feature row with a size but emptied offset cells."""
    tensors = build_frame(
        "tensors",
        [
            {"build_index": 0, "table": "feature", "name": "a", "size_bytes": 64, "line": 3},
            {"build_index": 0, "table": "const", "name": "w", "size_bytes": 32, "line": 4},
        ],
    )
    derived = derive_memory(tensors)[0][0]
    # A row without offsets is not a usable feature row: no span, no reuse rate, never a 0 or a crash.
    assert derived.get("feature_pool_bytes") is None and derived.get("computed_reuse_rate") is None
    assert derived["const_span_bytes"] is None and derived["const_sum_bytes"] == 32


def test_perf_plot_with_an_infinite_rw_cell(tmp_path: Path) -> None:
    """ "Axis limits cannot be NaN or Inf": an RW(KB) or Time(us) cell printed as `inf`."""
    text = PERF.read_text(encoding="utf-8")
    log = parse(PERF)
    perf = log.frames["perf"]
    assert perf["rw_kb"].notna().any()
    perf.loc[perf.index[0], "rw_kb"] = math.inf
    perf.loc[perf.index[1], "time_us"] = pd_na_or_inf(perf["time_us"])
    figure = plot("perf", log)
    assert figure.axes and text


def pd_na_or_inf(column: object) -> object:
    """An infinite value where the column's dtype allows it (time is integer in some logs)."""
    return math.inf if str(getattr(column, "dtype", "")).startswith("float") else None


def _model(
    tmp_path: Path, nodes: list[onnx.NodeProto], inits: list[onnx.TensorProto], dims: list[int]
) -> Path:
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, dims)],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, None)],
        inits,
    )
    path = tmp_path / "m.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)
    return path


def _relu(tmp_path: Path, dims: list[int]) -> Path:
    return _model(tmp_path, [helper.make_node("Relu", ["input"], ["out"])], [], dims)


@pytest.mark.parametrize(
    ("build", "error"),
    [
        (lambda tmp: _relu(tmp, [1, 3, 2**31, 2**31]), ModelTooLargeError),  # a huge declared input
        (
            lambda tmp: _model(  # a huge kernel
                tmp,
                [helper.make_node("Conv", ["input", "w"], ["out"], kernel_shape=[3, 3])],
                [_lying_weight((2**20, 2**20, 3, 3))],
                [1, 2**20, 8, 8],
            ),
            ModelTooLargeError,
        ),
        (
            lambda tmp: _model(  # ConstantOfShape to an astronomic shape
                tmp,
                [
                    helper.make_node("ConstantOfShape", ["shape"], ["zeros"]),
                    helper.make_node("Add", ["input", "zeros"], ["out"]),
                ],
                [numpy_helper.from_array(np.array([2**62, 2**62], np.int64), "shape")],
                [1, 1],
            ),
            ModelTooLargeError,
        ),
        (
            lambda tmp: _model(  # Expand to one
                tmp,
                [helper.make_node("Expand", ["input", "shape"], ["out"])],
                [numpy_helper.from_array(np.array([2**40, 2**30], np.int64), "shape")],
                [1, 1],
            ),
            ModelTooLargeError,
        ),
    ],
)
def test_reference_refuses_astronomic_shapes(tmp_path: Path, build: object, error: type) -> None:
    """Once an `OverflowError: Python int too large to convert to C long` in a rich traceback box."""
    path = build(tmp_path)  # type: ignore[operator]
    with pytest.raises(error, match=str(MAX_TENSOR_ELEMENTS)):
        analyze_model(path)
    result = CliRunner().invoke(app, ["reference", str(path)])
    assert result.exit_code == 2
    assert result.stderr.startswith("logscope: error:") and result.stderr.count("\n") == 1


def test_reference_refuses_a_mac_count_past_the_limit(tmp_path: Path) -> None:
    """Every tensor under 2**40 elements, but a Conv whose weight dims disagree with its 3x3 kernel
    multiplies two such figures: 2.8e22 MACs once ended the frames' int64 cast in a traceback."""
    path = _model(
        tmp_path,
        [helper.make_node("Conv", ["input", "w"], ["out"], kernel_shape=[3, 3], pads=[1, 1, 1, 1])],
        [_lying_weight((8, 8, 2**32 + 1, 3))],
        [1, 8, 16, 2**31],
    )
    with pytest.raises(ModelTooLargeError, match=str(MAX_MODEL_MACS)):
        analyze_model(path)
    result = CliRunner().invoke(app, ["reference", str(path), "--frames-out", str(tmp_path / "f")])
    assert result.exit_code == 2
    assert result.stderr.startswith("logscope: error: op ") and result.stderr.count("\n") == 1


def test_a_reference_figure_past_int64_is_refused_by_name() -> None:
    """The frames' int64 cast is the last place a figure too large for any bound above could end the
    command in a traceback: it is refused there, naming the frame, the column and the row."""
    rows = [{"step": 0, "name": "a", "macs": 1}, {"step": 1, "name": "b", "macs": 2**70}]
    named = r"frame ref_ops, column macs, row 1: 1180591620717411303424"
    with pytest.raises(ModelTooLargeError, match=named):
        build_reference_frame("ref_ops", rows)
    assert build_reference_frame("ref_ops", [{"step": 0, "macs": 2**63 - 1}])["macs"].iloc[0] == 2**63 - 1


def _lying_weight(dims: tuple[int, ...]) -> onnx.TensorProto:
    """A weight whose declared dims are huge while it carries no data (only dims are read)."""
    tensor = onnx.TensorProto(name="w", data_type=TensorProto.FLOAT)
    tensor.dims.extend(dims)
    return tensor


def test_reference_refuses_negative_dims(tmp_path: Path) -> None:
    with pytest.raises(ModelError):
        analyze_model(_relu(tmp_path, [1, -3, 8, 8]))


def test_spliced_rknn_op_id_does_not_drive_the_pool_sweep(tmp_path: Path) -> None:
    """An op id of 2**40 in the feature-tensor table once made the pool's per-step sweep run (and
    allocate) one step per id up to it: a MemoryError. The tensor now counts as untimed."""
    from logscope.analysis.pool import feature_pools
    from logscope.rules import analyze_log, resolve_config

    source = FIXTURES / "rknn" / "09-build-verbose-mobilenetv1-rv1106-tk2-1.5.2-simulator.log"
    text = source.read_text(encoding="utf-8")
    old = "] 2   ConvClip       Relu6__5:0 "
    assert old in text
    path = tmp_path / "spliced.log"
    path.write_text(text.replace(old, f"] {2**40} ConvClip Relu6__5:0 "), encoding="utf-8")
    log = analyze_log(parse(path), resolve_config(None, path))
    pools = [pool for pool in feature_pools(log.frames).values() if pool is not None]
    assert pools
    for pool in pools:
        assert len(pool.steps) and int(pool.steps["step"].max()) <= MAX_OP_INDEX


@pytest.mark.parametrize("figure", ["1" * 400, "99999999999999999999999"])
def test_memory_figure_past_int64_is_missing(tmp_path: Path, figure: str) -> None:
    """`Weight memory: 111…1 MB` (400 digits) once ended in `OverflowError: cannot convert float infinity to
    integer`; a figure no int64 can hold is now missing, and the rest of the log is read."""
    source = FIXTURES / "synthetic" / "compact-summary-yolov5s.log"
    path = tmp_path / "huge.log"
    path.write_text(
        source.read_text(encoding="utf-8").replace("Weight memory: 12.34 MB", f"Weight memory: {figure} MB"),
        encoding="utf-8",
    )
    memory = parse(path).frames["memory"]
    assert memory["weight_bytes"].isna().all()
    assert memory["total_bytes"].notna().any()


def test_tflite_tensor_with_astronomic_dims_is_refused(tmp_path: Path) -> None:
    """A .tflite tensor whose shape words were changed (a cut download, a crafted file) once ended in
    `OverflowError: Python int too large to convert to C long` building the int64 frames of
    `reference --frames-out`; it is refused with one line (exit 2), as an ONNX tensor over the limit is."""
    from tflite.Model import Model

    source = FIXTURES / "tflm-corpus" / "conv_chain_float.tflite"
    data = bytearray(source.read_bytes())
    tensor = Model.GetRootAsModel(data, 0).Subgraphs(0).Tensors(0)
    start = tensor._tab.Vector(tensor._tab.Offset(4))  # field 0: the shape vector's first int32
    for i in range(tensor.ShapeLength()):
        struct.pack_into("<i", data, start + 4 * i, 2**31 - 1)
    path = tmp_path / "huge.tflite"
    path.write_bytes(bytes(data))
    result = CliRunner().invoke(app, ["reference", str(path), "--frames-out", str(tmp_path / "f")])
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith("logscope: error:") and result.stderr.count("\n") == 1
    assert "over the limit of 1099511627776 (2**40)" in result.stderr


@pytest.mark.parametrize(
    ("runtime", "old", "new", "message"),
    [
        ("rknn", b"Relu", b"R\xa5lu", "node 0: its op type is not UTF-8 text: b'R\\xa5lu'"),
        ("tflm", b"Relu", b"R\xa5lu", "node 0: its op type is not UTF-8 text: b'R\\xa5lu'"),
        ("tflm", b"graph-of-one", b"graph-of-\xa5ne", "a graph name is not UTF-8 text"),
        ("rknn", b"producer-x", b"producer-\xa5", "the model's producer_name is not UTF-8 text"),
    ],
)
def test_onnx_string_field_that_is_not_utf8_is_refused(
    tmp_path: Path, runtime: str, old: bytes, new: bytes, message: str
) -> None:
    """A flipped byte in a node's op type made protobuf hand back `bytes`, and `reference --runtime
    tflm` ended in `TypeError: sequence item 0: expected str instance, bytes found`; such a model (op
    type, graph name, producer) is now refused at load with one line naming the field."""
    graph = helper.make_graph(
        [helper.make_node("Relu", ["input"], ["out"])],
        "graph-of-one",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 3, 8, 8])],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, None)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], producer_name="producer-x")
    path = tmp_path / "m.onnx"
    path.write_bytes(model.SerializeToString().replace(old, new))
    result = CliRunner().invoke(app, ["reference", str(path), "--runtime", runtime, "-f", "json"])
    assert result.exit_code == 2, result.output
    assert result.stderr.count("\n") == 1
    assert message in result.stderr


def test_onnx_external_data_location_that_is_not_utf8_is_refused(tmp_path: Path) -> None:
    """A flipped byte in an external-data location once ended in `TypeError: a bytes-like object is
    required, not 'str'` in the path check; it is refused with one line (exit 2)."""
    weight = onnx.TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[4])
    weight.data_location = TensorProto.EXTERNAL
    entry = weight.external_data.add()
    entry.key, entry.value = "location", "weights.bin"
    (tmp_path / "weights.bin").write_bytes(bytes(16))
    path = _model(tmp_path, [helper.make_node("Add", ["input", "w"], ["out"])], [weight], [4])
    path.write_bytes(path.read_bytes().replace(b"weights.bin", b"weights.\xd9in"))
    result = CliRunner().invoke(app, ["reference", str(path)])
    assert result.exit_code == 2, result.output
    assert result.stderr.count("\n") == 1 and "external-data entries that are not UTF-8 text" in result.stderr


def test_perf_ranking_row_with_missing_cells_renders() -> None:
    """A ranking row whose CPU / NPU / total / share cells were out of range (a spliced or overlong
    number) once ended `parse` in `TypeError: unsupported format string passed to NoneType.__format__`;
    the missing cells are dashes."""
    from logscope.render.summary import _perf_text

    perf = {
        "total_time_us": None,
        "fps": None,
        "rw_kb": None,
        "rows_time_us": None,
        "slowest": [],
        "ranking": [
            {
                "op_type": "Conv",
                "cpu_time_us": None,
                "npu_time_us": 12,
                "total_time_us": None,
                "time_ratio_pct": None,
                "line": 7,
            }
        ],
    }
    assert (
        _perf_text(perf)[-1] == "    Conv                        — /       12 /        —        —  [line 7]"
    )


def test_byte_figure_past_float_range_is_printed_exactly() -> None:
    """An overlong number that reached a rule message (ALC001) once raised `OverflowError: int too
    large to convert to float` in the byte formatter."""
    from logscope.units import human_bytes

    huge = int("1" * 400)
    assert human_bytes(huge) == f"{huge} B"
    assert human_bytes(1756160) == "1.67 MiB (1756160 B)"


def test_perf_total_time_past_int64_is_missing(tmp_path: Path) -> None:
    """`Total Operator Elapsed Time(us): 111...1` (400 digits) once raised `OverflowError: cannot
    convert float infinity to integer` in the parser; the total is missing, the line still counted."""
    source = FIXTURES / "rknn" / "59-doc-tk2-board-test-readme-eval-perf-tk2-1.5.x.log"
    text = re.sub(r"(Total Operator Elapsed Time\(us\): *)[\d.]+", r"\g<1>" + "1" * 400, source.read_text())
    path = tmp_path / "perf.log"
    path.write_text(text, encoding="utf-8")
    result = CliRunner().invoke(app, ["parse", str(path), "-f", "json"])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert result.exit_code in (0, 1), result.output


@pytest.mark.parametrize("digit", ["³", "²", "¹", "⁷", "①"])
def test_a_digit_that_int_does_not_read_leaves_the_cell_empty(tmp_path: Path, digit: str) -> None:
    """`str.isdigit()` is true for superscripts and circled digits, which `int()` refuses: a byte flipped
    into `³` in an ST Edge AI v5 layer row once ended `parse` in `ValueError`. Cells are read as numbers
    only when every character is a decimal digit; the row is kept and the run still parses."""
    source = FIXTURES / "mcu" / "10-xcubeai-v5-analyze-report-lstm.txt"
    lines = source.read_text(encoding="utf-8").splitlines()
    row = next(i for i, line in enumerate(lines) if "FCN3 (Dense)" in line)
    lines[row] = lines[row].rstrip() + "         " + digit
    path = tmp_path / "st.log"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    for fmt in ("text", "markdown", "json"):
        result = CliRunner().invoke(app, ["parse", str(path), "-f", fmt])
        assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
        assert result.exit_code in (0, 1), result.output
    log = parse(path)
    assert log.line_counts["total"] == len(lines)
