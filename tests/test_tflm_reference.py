"""The TFLM reference: .tflite reading (bounded), the arena prediction against the committed corpus of
real tflite-micro printouts, the planner's ordering rules, `reference MODEL.tflite` and `check TRACE
--model MODEL.tflite`. Everything runs from committed files; tflite-micro is not needed."""

from __future__ import annotations

import contextlib
import json
import random
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

import logscope
from logscope.cli import app
from logscope.errors import LogscopeError
from logscope.reference.errors import ModelError, ModelFormatError, ReferenceOptionError
from logscope.reference.tflite_loader import load_tflite, read_tflite
from logscope.reference.tflm import (
    ONLINE,
    PlannedBuffer,
    TflmOptions,
    analyze_tflite,
    greedy_plan,
    predict_arena,
)
from logscope.reference.tflm_check import check_trace_against_tflite
from logscope.reference.tflm_corpus import (
    BEGIN,
    END,
    corpus_accuracy,
    render_accuracy_markdown,
)

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO / "fixtures" / "tflm-corpus"
KWS = CORPUS / "kws_int8.tflite"
runner = CliRunner()


@pytest.fixture(scope="module")
def accuracy():
    return corpus_accuracy(CORPUS)


# ------------------------------------------------------------------------------------------------ reading
def test_reads_operators_options_and_quantization():
    m = load_tflite(CORPUS / "conv_pool_chain_int8.tflite")
    ops = [op.opcode for op in m.main.operators]
    assert ops == [
        "CONV_2D",
        "MAX_POOL_2D",
        "CONV_2D",
        "AVERAGE_POOL_2D",
        "RESHAPE",
        "FULLY_CONNECTED",
        "SOFTMAX",
    ]
    conv = m.main.operators[0]
    assert conv.options_type == "Conv2DOptions"
    assert conv.options["stride_w"] == 1 and conv.options["fused_activation_function"] == 1
    assert m.main.operators[4].options["new_shape"] == [1, 784]
    weights = m.main.tensors[conv.inputs[1]]
    assert weights.dtype == "INT8" and weights.data_bytes == 8 * 3 * 3 * 1
    assert weights.quant is not None and weights.quant.scales == 8  # per channel
    x = m.main.tensors[m.main.inputs[0]]
    assert x.data_bytes == 0 and x.quant is not None and x.quant.first_zero_point == -128
    assert x.shape == (1, 28, 28, 1) and x.size_bytes == 784


def test_float_model_has_no_quantization():
    m = load_tflite(CORPUS / "conv_chain_float.tflite")
    assert all(t.quant is None for t in m.main.tensors)
    assert {t.dtype for t in m.main.tensors} == {"FLOAT32"}


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"", "too short"),
        (b"\x00" * 64, "no TFL3"),
        (b"ONNX" * 16, "no TFL3"),
    ],
)
def test_not_a_tflite_model(tmp_path, data, message):
    path = tmp_path / "m.tflite"
    path.write_bytes(data)
    with pytest.raises(ModelFormatError, match=message):
        load_tflite(path)


def test_missing_file_and_directory(tmp_path):
    with pytest.raises(LogscopeError, match="no such file"):
        load_tflite(tmp_path / "absent.tflite")
    with pytest.raises(LogscopeError, match="not a regular file"):
        load_tflite(tmp_path)


def test_every_truncation_is_a_clear_error():
    data = (CORPUS / "single_conv_int8.tflite").read_bytes()
    for cut in range(8, len(data), max(1, len(data) // 97)):
        with contextlib.suppress(ModelFormatError):
            read_tflite(data[:cut], "cut")


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.integers(8, 1199), st.integers(0, 255)), min_size=1, max_size=12))
@example(flips=[(1035, 15)])  # a tensor dimension over the element limit: ModelTooLargeError
def test_flipped_bytes_never_raise_anything_else(flips):
    """A flipped byte gives a model error (malformed, or a declared size over a load limit), never
    another exception."""
    data = bytearray((CORPUS / "single_conv_int8.tflite").read_bytes())
    for pos, value in flips:
        data[pos % len(data)] = value
    try:
        model = read_tflite(bytes(data), "fuzzed")
    except ModelError:
        return
    with contextlib.suppress(LogscopeError):
        predict_arena(model)


def test_impossible_vector_length_is_refused():
    data = bytearray((CORPUS / "single_fc_int8.tflite").read_bytes())
    model = read_tflite(bytes(data))
    n = len(model.main.tensors)
    # Find the tensors vector's length field (a little-endian n followed by n offsets) and inflate it.
    needle = n.to_bytes(4, "little")
    hits = [i for i in range(0, len(data) - 4, 4) if data[i : i + 4] == needle]
    refused = 0
    for i in hits:
        patched = bytearray(data)
        patched[i : i + 4] = (0x7FFFFFF0).to_bytes(4, "little")
        try:
            read_tflite(bytes(patched))
        except ModelFormatError:
            refused += 1
    assert refused >= 1


# ------------------------------------------------------------------------------------------- the corpus
def test_corpus_head_exact_and_total_within_one_percent(accuracy):
    assert len(accuracy) >= 100
    exact = sum(r.head_exact for r in accuracy)
    assert exact / len(accuracy) >= 0.95, [r.name for r in accuracy if not r.head_exact]
    assert all(abs(r.total_error) <= 0.01 for r in accuracy), [
        (r.name, r.total_error) for r in accuracy if abs(r.total_error) > 0.01
    ]
    families = {r.family for r in accuracy}
    assert {"op", "net", "dag", "seq"} <= families
    assert {r.dtype for r in accuracy} == {"int8", "float"}


def test_corpus_manifest_matches_files():
    manifest = json.loads((CORPUS / "manifest.json").read_text())
    import hashlib

    for entry in manifest["models"]:
        data = (CORPUS / entry["model"]).read_bytes()
        assert hashlib.sha256(data).hexdigest() == entry["model_sha256"], entry["name"]
        assert (CORPUS / entry["printout"]).is_file()
    sizes = sum(p.stat().st_size for p in CORPUS.iterdir())
    assert sizes < 6 * 1024 * 1024


def test_accuracy_table_in_docs_is_current(accuracy):
    text = (REPO / "docs" / "reference.md").read_text(encoding="utf-8")
    assert BEGIN in text and END in text
    current = text[text.index(BEGIN) : text.index(END) + len(END)]
    assert current == render_accuracy_markdown(accuracy), "run tools/corpus/tflm_accuracy.py --write"


# ------------------------------------------------------------------------------------------- the planner
def _buf(i: int, size: int, first: int, last: int, offline: int = ONLINE) -> PlannedBuffer:
    return PlannedBuffer(i, "tensor", i, f"t{i}", None, size, size, first, last, offline)


def test_equal_sizes_place_the_last_added_first():
    # TFLM fills its sort list from the end and its bubble sort keeps equal sizes in that order.
    bufs = [_buf(0, 32, 0, 1), _buf(1, 32, 1, 2)]
    assert greedy_plan(bufs) == [32, 0]


def test_first_gap_that_fits_not_the_smallest():
    bufs = [
        _buf(0, 100, 0, 3),  # placed first at 0
        _buf(1, 60, 0, 0),  # 100..160
        _buf(2, 50, 0, 0),  # 160..210
        _buf(3, 40, 1, 3),  # 100.. (gap above buffer 0 while 1 and 2 are dead)
        _buf(4, 30, 0, 3),  # conflicts with all: after buffer 2 at 210
    ]
    assert greedy_plan(bufs) == [0, 100, 160, 100, 210]


def test_offline_offsets_are_kept():
    bufs = [_buf(0, 16, 0, 1, offline=64), _buf(1, 64, 0, 1)]
    assert greedy_plan(bufs) == [64, 0]


def test_scratch_buffers_with_cmsis_nn():
    ref = analyze_tflite(KWS)
    cmsis = analyze_tflite(KWS, TflmOptions(kernels="cmsis-nn"))
    scratch = [b for b in cmsis.buffers if b.kind == "scratch"]
    # The first conv (3x3 on 1 channel) and the average pool (64 channels) ask for one; the 1x1
    # convolutions and the 3x3 depthwise convolutions take CMSIS-NN's buffer-less paths.
    assert [(b.op, b.bytes) for b in scratch] == [(0, 2 * 1 * 3 * 3 * 2), (9, 64 * 4)]
    assert cmsis.head >= ref.head
    assert "scratch buffer handles" in {i.component for i in cmsis.tail_items}


# ---------------------------------------------------------------------------------------- the prediction
def test_prediction_parts_add_up():
    pred = analyze_tflite(KWS)
    assert pred.total == pred.head + pred.tail == 24272
    assert sum(row["bytes"] for row in pred.components()) == pred.total
    assert pred.peak_op == 1
    peak = max(r["high_water_bytes"] for r in pred.op_rows)
    assert peak == pred.head


def test_peak_op_is_where_most_is_live():
    """Inception: a long-lived tensor sits at the top of the plan from op 1 on, but the op that needs
    the whole head is the CONCATENATION, where every branch output is live at once."""
    pred = analyze_tflite(CORPUS / "inception_int8.tflite")
    assert pred.op_rows[1]["high_water_bytes"] == pred.head
    assert pred.peak_op == 6 and pred.model.main.operators[6].opcode == "CONCATENATION"
    assert pred.op_rows[6]["live_bytes"] == pred.head


def test_margin_rounds_up_to_16():
    pred = analyze_tflite(KWS, TflmOptions(margin=0.1))
    assert pred.with_margin % 16 == 0 and pred.with_margin >= pred.total * 1.1


@pytest.mark.parametrize(
    "options", [TflmOptions(arch="riscv"), TflmOptions(kernels="x"), TflmOptions(margin=-1)]
)
def test_bad_options(options):
    with pytest.raises(ReferenceOptionError):
        analyze_tflite(KWS, options)


def test_arm32_struct_sizes_match_a_cortex_m_printout():
    """[02] is a DS-CNN on an STM32H745 with the corpus KWS's 35 tensors and 13 ops: the struct
    categories are reproduced; kernel op data (CMSIS-NN build) and the head differ, and say so."""
    log = logscope.parse(REPO / "fixtures/mcu/02-tflm-profiler-ticks-csv-plus-allocations-stm32h745-kws.txt")
    check = check_trace_against_tflite(log, load_tflite(KWS))
    assert check.prediction.options.arch == "arm32"
    rows = {r["item"]: r for r in check.rows}
    for item in (
        "tail: TfLiteEvalTensor data",
        "tail: Persistent TfLiteTensor data",
        "tail: Persistent TfLiteTensor quantization data",
        "tail: NodeAndRegistration struct",
    ):
        assert rows[item]["difference"] == 0, item
    assert rows["arena head (TFLM greedy plan)"]["difference"] == 4
    assert "scratch buffers" in rows["arena head (TFLM greedy plan)"]["likely_cause"]
    assert "kernel op data" in rows["tail: Persistent buffer data"]["likely_cause"]
    assert "the same operator types" in rows["profiled operator types (model operators)"]["likely_cause"]


def test_published_person_detect_on_cortex_m():
    """[06]: the published person_detect.tflite run by TFLM's benchmarking tool on a Corstone-300; the
    corpus person-detection net has its architecture (same constants to the byte, same 89 tensors and 31
    ops in the same order)."""
    log = logscope.parse(REPO / "fixtures/mcu/06-tflm-generic-benchmark-profile-arena-tables.txt")
    check = check_trace_against_tflite(log, load_tflite(CORPUS / "person_detection_int8.tflite"))
    rows = {r["item"]: r for r in check.rows}
    assert check.prediction.options.arch == "arm32"
    exact = [
        "model constant data (model buffers)",
        "TfLiteEvalTensor count (model tensors)",
        "NodeAndRegistration count (model operators)",
        "arena head (TFLM greedy plan)",
        "tail: TfLiteEvalTensor data",
        "tail: Persistent TfLiteTensor data",
        "tail: Persistent TfLiteTensor quantization data",
        "tail: NodeAndRegistration struct",
    ]
    for item in exact:
        assert rows[item]["difference"] == 0, (item, rows[item])
    assert rows["arena head (TFLM greedy plan)"]["log_value"] == 55296
    assert rows["tail: Persistent buffer data"]["difference"] == 1568
    total = rows["arena total"]
    assert abs(total["difference"]) / total["log_value"] < 0.02
    assert rows["profiled operator types (model operators)"]["likely_cause"] == "matches"
    oplist = logscope.parse(REPO / "fixtures/mcu/05-tflm-generic-benchmark-model-oplist.txt")
    listed = check_trace_against_tflite(oplist, load_tflite(CORPUS / "person_detection_int8.tflite"))
    assert [r["likely_cause"] for r in listed.rows] == ["matches"]
    other = check_trace_against_tflite(oplist, load_tflite(CORPUS / "mobilenet_small_int8.tflite"))
    assert "CONV_2D 14 in the log, 15 in the model" in other.rows[0]["likely_cause"]


def test_published_person_detect_memory_plan():
    """[04]: nine rows of GreedyMemoryPlanner::PrintMemoryPlan for person_detect (a 2021 TFLM, scopes
    from the first op): every row is a buffer of the corpus twin's plan, at the same offset."""
    log = logscope.parse(REPO / "fixtures/mcu/04-tflm-greedy-planner-printmemoryplan-pr48595-partial.txt")
    check = check_trace_against_tflite(log, load_tflite(CORPUS / "person_detection_int8.tflite"))
    rows = {r["item"]: r for r in check.rows}
    assert rows["memory-plan buffers found in the model's plan"]["reference_value"] == 9
    assert (
        rows["memory-plan offsets (GreedyMemoryPlanner)"]["likely_cause"] == "all 9 at the predicted offsets"
    )
    other = check_trace_against_tflite(log, load_tflite(CORPUS / "mobilenet_small_int8.tflite"))
    found = {r["item"]: r for r in other.rows}["memory-plan buffers found in the model's plan"]
    assert found["reference_value"] < 9 and "another model" in found["likely_cause"]


# ------------------------------------------------------------------------------------------------- check
@pytest.mark.parametrize("name", ["kws_int8", "mobilenet_small_float", "random_head_b_int8", "seq_CFFS_int8"])
def test_check_reproduces_corpus_printouts(name):
    log = logscope.parse(CORPUS / f"{name}.txt")
    check = check_trace_against_tflite(log, load_tflite(CORPUS / f"{name}.tflite"))
    assert check.rows
    for row in check.rows:
        assert row["difference"] in (0, None), row


def test_check_rejects_an_rknn_log():
    log = logscope.parse(REPO / "fixtures/rknn/09-build-verbose-mobilenetv1-rv1106-tk2-1.5.2-simulator.log")
    with pytest.raises(ReferenceOptionError, match="RKNN log with --onnx"):
        check_trace_against_tflite(log, load_tflite(KWS))


def _cli(*args: str):
    return runner.invoke(app, [str(a) for a in args])


def test_cli_reference_tflite_first_line():
    result = _cli("reference", KWS)
    assert result.exit_code == 0, result.output
    first = result.output.splitlines()[0]
    assert first == "tensor_arena: 24272 bytes (head 16000 + tail 8272), peak at op 1 (DEPTHWISE_CONV_2D)"


def test_cli_reference_tflite_c_and_json():
    result = _cli("reference", KWS, "--format", "c", "--margin", "0.25")
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[-1] == "constexpr int kTensorArenaSize = 30352;"
    result = _cli("reference", KWS, "--format", "json")
    data = json.loads(result.output)
    assert data["schema_version"] == 1 and data["runtime"] == "tflm"
    assert data["tensor_arena_bytes"] == 24272 and data["head_bytes"] == 16000
    assert len(data["ops"]) == 13 and data["peak_op"] == 1


def test_cli_reference_tflite_frames(tmp_path):
    import pandas as pd

    result = _cli("reference", KWS, "--frames-out", tmp_path, "--frames-format", "csv")
    assert result.exit_code == 0, result.output
    ops = pd.read_csv(tmp_path / "tflm_ops.csv")
    buffers = pd.read_csv(tmp_path / "tflm_buffers.csv")
    components = pd.read_csv(tmp_path / "tflm_components.csv")
    assert len(ops) == 13 and ops["high_water_bytes"].max() == 16000
    assert (buffers["offset"] + buffers["size_bytes"]).max() == 16000
    assert components["bytes"].sum() == 24272


def test_cli_reference_errors(tmp_path):
    bad = tmp_path / "bad.tflite"
    bad.write_bytes(b"1234TFL3" + bytes(range(200)))
    for args in (
        ("reference", bad),
        ("reference", KWS, "--arch", "riscv"),
        ("reference", tmp_path / "absent.tflite"),
    ):
        result = _cli(*args)
        assert result.exit_code == 2, (args, result.output)
        assert "Traceback" not in result.output


def test_cli_check_mcu(tmp_path):
    result = _cli("check", CORPUS / "kws_int8.txt", "--model", KWS)
    assert result.exit_code == 0, result.output
    assert "reproduced to the byte" in result.output and "REF004" not in result.output
    wrong = _cli("check", CORPUS / "kws_int8.txt", "--model", CORPUS / "mobilenet_small_int8.tflite")
    assert wrong.exit_code == 0 and "REF004" in wrong.output and "does not belong" in wrong.output
    failing = _cli(
        "check",
        CORPUS / "kws_int8.txt",
        "--model",
        CORPUS / "mobilenet_small_int8.tflite",
        "--fail-on",
        "warning",
    )
    assert failing.exit_code == 1
    plot = tmp_path / "overlay.png"
    js = _cli("check", CORPUS / "kws_int8.txt", "--model", KWS, "--format", "json", "--plot", plot)
    data = json.loads(js.output)
    assert data["runtime"] == "tflm" and data["prediction"]["tensor_arena_bytes"] == 24272
    assert plot.stat().st_size > 1000


def test_cli_check_mixed_families_are_errors():
    rknn = REPO / "fixtures/rknn/09-build-verbose-mobilenetv1-rv1106-tk2-1.5.2-simulator.log"
    for args in (
        ("check", rknn, "--model", KWS),
        ("check", CORPUS / "kws_int8.txt", "--model", KWS, "--target", "rk3588"),
        ("check", CORPUS / "kws_int8.txt", "--model", KWS, "--quirk", "hw-align-4"),
        ("check", CORPUS / "kws_int8.txt", "--onnx", KWS.with_suffix(".onnx")),
        ("check", CORPUS / "kws_int8.txt"),
        ("check", rknn, "--onnx", KWS, "--model", KWS),
    ):
        result = _cli(*args)
        assert result.exit_code == 2, (args, result.output)
        assert "error" in result.output and "Traceback" not in result.output


def test_random_corpus_sample_is_stable():
    """Predictions depend on the model only: the same file twice gives the same figures."""
    name = random.Random(0).choice(sorted(p.name for p in CORPUS.glob("*.tflite")))
    a = analyze_tflite(CORPUS / name).summary()
    b = analyze_tflite(CORPUS / name).summary()
    assert a == b


# ------------------------------------------------------------------------------------ ONNX for TFLM
def kws_onnx():
    """The ONNX twin of the corpus DS-CNN (kws_*.tflite): Conv + Relu / Clip(0, 6), AveragePool,
    Flatten, Gemm, Softmax, NCHW."""
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    nodes = []
    inits = [
        numpy_helper.from_array(np.array(0.0, np.float32), "lo"),
        numpy_helper.from_array(np.array(6.0, np.float32), "hi"),
    ]
    count = 0

    def conv(x: str, cin: int, cout: int, k: int, stride: int, group: int, relu6: bool) -> str:
        nonlocal count
        count += 1
        w, b, y = f"w{count}", f"b{count}", f"c{count}"
        inits.append(numpy_helper.from_array(np.zeros((cout, cin // group, k, k), np.float32), w))
        inits.append(numpy_helper.from_array(np.zeros(cout, np.float32), b))
        pads = [k // 2] * 4
        nodes.append(
            helper.make_node(
                "Conv", [x, w, b], [y], kernel_shape=[k, k], strides=[stride] * 2, pads=pads, group=group
            )
        )
        if relu6:
            nodes.append(helper.make_node("Clip", [y, "lo", "hi"], [y + "a"]))
        else:
            nodes.append(helper.make_node("Relu", [y], [y + "a"]))
        return y + "a"

    x = conv("input", 1, 64, 3, 2, 1, False)
    for _ in range(4):
        x = conv(conv(x, 64, 64, 3, 1, 64, True), 64, 64, 1, 1, 1, False)
    nodes.append(helper.make_node("AveragePool", [x], ["pool"], kernel_shape=[5, 5], strides=[5, 5]))
    nodes.append(helper.make_node("Flatten", ["pool"], ["flat"]))
    inits.append(numpy_helper.from_array(np.zeros((320, 12), np.float32), "fw"))
    inits.append(numpy_helper.from_array(np.zeros(12, np.float32), "fb"))
    nodes.append(helper.make_node("Gemm", ["flat", "fw", "fb"], ["logits"]))
    nodes.append(helper.make_node("Softmax", ["logits"], ["prob"]))
    graph = helper.make_graph(
        nodes,
        "kws",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 1, 49, 10])],
        [helper.make_tensor_value_info("prob", TensorProto.FLOAT, [1, 12])],
        inits,
    )
    return onnx.helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


@pytest.fixture(scope="module")
def kws_onnx_path(tmp_path_factory):
    import onnx

    path = tmp_path_factory.mktemp("onnx") / "kws.onnx"
    onnx.save(kws_onnx(), path)
    return path


@pytest.mark.parametrize(("dtype", "printout"), [("int8", "kws_int8.txt"), ("fp32", "kws_float.txt")])
def test_onnx_twin_predicts_the_corpus_printout(kws_onnx_path, dtype, printout):
    from logscope.reference.tflm_onnx import onnx_tflm_model

    model = onnx_tflm_model(kws_onnx_path, dtype)
    assert [op.opcode for op in model.main.operators] == [
        op.opcode for op in load_tflite(CORPUS / "kws_int8.tflite").main.operators
    ]
    pred = predict_arena(model)
    log = logscope.parse(CORPUS / printout)
    arena = log.frames["arena"].set_index("category")["used_bytes"]
    assert (pred.head, pred.tail, pred.total) == (
        arena["arena head"],
        arena["arena tail"],
        arena["arena total"],
    )


def test_onnx_batchnorm_and_relu_fold(kws_onnx_path):
    """A Conv → BatchNormalization → Relu chain is one CONV_2D, as the converter folds it."""
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper

    from logscope.reference.graph import build_graph
    from logscope.reference.tflm_onnx import onnx_to_tflm_model

    inits = [numpy_helper.from_array(np.zeros((8, 3, 3, 3), np.float32), "w")] + [
        numpy_helper.from_array(np.ones(8, np.float32), n) for n in ("s", "bb", "m", "v")
    ]
    nodes = [
        helper.make_node("Conv", ["x", "w"], ["c"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("BatchNormalization", ["c", "s", "bb", "m", "v"], ["n"]),
        helper.make_node("Relu", ["n"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8, 8, 8])],
        inits,
    )
    model = onnx_to_tflm_model(build_graph(helper.make_model(graph), {}), "int8")
    assert [op.opcode for op in model.main.operators] == ["CONV_2D"]
    assert predict_arena(model).head == 8 * 8 * 3 + 8 * 8 * 8


def test_cli_onnx_for_tflm(kws_onnx_path):
    result = _cli("reference", kws_onnx_path, "--runtime", "tflm")
    assert result.exit_code == 0, result.output
    assert result.output.startswith("tensor_arena: 24272 bytes (head 16000 + tail 8272)")
    assert _cli("reference", kws_onnx_path, "--runtime", "tflm", "--dtype", "fp16").exit_code == 2
    assert _cli("reference", KWS, "--runtime", "rknn").exit_code == 2
    checked = _cli("check", CORPUS / "kws_int8.txt", "--model", kws_onnx_path)
    assert checked.exit_code == 0 and "reproduced to the byte" in checked.output
    assert _cli("check", CORPUS / "kws_int8.txt", "--model", kws_onnx_path, "--quirk", "x").exit_code == 2


def test_planning_limit_is_a_clear_error(monkeypatch):
    import importlib

    from logscope.reference.errors import ModelTooLargeError

    # `logscope.reference` is also the name of a function on the package: import the module by path.
    monkeypatch.setattr(importlib.import_module("logscope.reference.tflm"), "MAX_PLANNED_BUFFERS", 3)
    with pytest.raises(ModelTooLargeError, match="3-buffer limit"):
        analyze_tflite(KWS)
    result = _cli("reference", KWS)
    assert result.exit_code == 2 and "buffer limit" in result.output


def test_names_from_the_file_are_printable():
    from logscope.reference.tflite_loader import _text

    assert _text(b"conv\x1b[31m\x07") == "conv?[31m?"
    assert len(_text(b"x" * 10_000)) == 256
