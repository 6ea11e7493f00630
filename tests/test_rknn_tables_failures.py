"""RKNN tables read by their layout, and failed runs as findings: each case built from the format.

The shared excerpts (fixtures 61-65) are checked by their goldens; these tests generate the formats with
the variations copies of real logs show (empty cells, collapsed spaces, the `D RKNN: [ts]` prefix, rows
without their header) and check no row is lost and every failure ends its session.
"""

from __future__ import annotations

import re

import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

import logscope
from logscope.cli import app
from logscope.io import decode_bytes
from logscope.rules.engine import analyze_log
from tests.conftest import RKNN

PERF_HEADER = (
    "ID   OpType           DataType Target InputShape                               OutputShape            "
    "Cycles(DDR/NPU/Total)    Time(us)     MacUsage(%)          WorkLoad(0/1/2)      RW(KB)       "
    "FullName        "
)
WIDTHS = (5, 17, 9, 7, 41, 23, 25, 13, 21, 21, 13, 0)


def parse(text: str) -> logscope.ParsedLog:
    return logscope.parse_text(decode_bytes(text.encode("utf-8"), "<case>"))


def perf_row(i: int, op: str, target: str, time_us: int, mac: str | None, name: str | None) -> str:
    cells = [
        str(i),
        op,
        "INT8",
        target,
        "(1,16,480,480),(16,16,3,3)",
        "(1,16,480,480)",
        f"{time_us * 3}/{time_us * 2}/{time_us * 3}",
        str(time_us),
        mac or "",
        "100.0%/0.0%/0.0%",
        "3602",
        name or "",
    ]
    return "".join(c.ljust(w) for c, w in zip(cells, WIDTHS, strict=True)).rstrip()


ROWS = st.lists(
    st.tuples(
        st.sampled_from(["ConvExSwish", "Resize", "Concat", "Split"]),
        st.sampled_from(["NPU", "CPU"]),
        st.integers(1, 50_000),
        st.booleans(),
        st.booleans(),
    ),
    min_size=1,
    max_size=40,
)


@settings(max_examples=60, deadline=None)
@given(ROWS, st.booleans())
def test_eval_perf_2x_rows_with_empty_cells_are_all_read(rows, collapse):
    lines = ["Network Layer Information Table", PERF_HEADER]
    for i, (op, target, time_us, empty_mac, empty_name) in enumerate(rows, start=1):
        lines.append(
            perf_row(
                i, op, target, time_us, None if empty_mac else "12.50", None if empty_name else f"{op}:n{i}"
            )
        )
    total = sum(r[2] for r in rows)
    lines.append(f"Total Operator Elapsed Per Frame Time(us): {total}")
    if collapse:
        lines = [re.sub(r"(?<=\S) {2,}", " ", line) for line in lines]
    log = parse("\n".join(lines) + "\n")
    perf = log.frames["perf"]
    assert len(perf) == len(rows), log.frames["unparsed"]
    assert log.line_counts["total"] == len(lines) and log.line_counts["unparsed"] == 0
    assert list(perf["time_us"]) == [r[2] for r in rows]
    assert list(perf["target"]) == [r[1] for r in rows]
    assert [v if isinstance(v, str) else None for v in perf["full_name"]] == [
        None if r[4] else f"{r[0]}:n{i}" for i, r in enumerate(rows, start=1)
    ]
    assert [v if isinstance(v, str) else None for v in perf["mac_usage"]] == [
        None if r[3] else "12.50" for r in rows
    ]
    assert log.frames["builds"]["status"].iloc[0] == "done"


def test_a_cut_perf_row_without_continuation_stays_unparsed():
    lines = ["Network Layer Information Table", PERF_HEADER]
    lines.append(perf_row(1, "Conv", "NPU", 100, "1.0", "Conv:a")[:110])  # cut inside the cycles cell
    lines.append(perf_row(2, "Conv", "NPU", 200, "1.0", "Conv:b"))
    log = parse("\n".join(lines) + "\n")
    assert list(log.frames["perf"]["layer_id"]) == [2]
    unparsed = log.frames["unparsed"]
    assert list(unparsed["line"]) == [3] and "cut short" in unparsed["reason"].iloc[0]
    assert log.line_counts["total"] == 4


def test_headerless_eval_perf_rows_are_perf_not_build_layers():
    rows = [
        perf_row(128 + i, op, t, us, None, f"{op}:x{i}")
        for i, (op, t, us) in enumerate([("Gather", "CPU", 2574), ("Split", "NPU", 455), ("Sub", "NPU", 199)])
    ]
    for text in ("\n".join(rows), "\n".join(re.sub(r"(?<=\S) {2,}", " ", r) for r in rows)):
        log = parse(text + "\n")
        assert len(log.frames["layers"]) == 0
        perf = log.frames["perf"]
        assert list(perf["time_us"]) == [2574, 455, 199]
        assert list(perf["npu_cycles"]) == [2 * 2574, 2 * 455, 2 * 199]
        assert perf["headerless"].all()
        assert log.frames["builds"]["kind"].iloc[0] == "session"


RANKING = [
    "                                 Operator Time Consuming Ranking Table",
    "-" * 101,
    "OpType               CallNumber   CPUTime(us)  GPUTime(us)  NPUTime(us)  TotalTime(us)  TimeRatio(%)",
    "-" * 101,
    "Gather               4            0            0            59192        59192          33.70%",
    "Pow                  2            41000        0            1200         42200          64.00%",
    "Transpose            15           12618        0            6833         19451          11.07%",
]


@settings(max_examples=30, deadline=None)
@given(st.booleans(), st.booleans())
def test_ranking_table_prefixed_and_collapsed(prefixed, collapse):
    lines = list(RANKING)
    if collapse:
        lines = [re.sub(r"(?<=\S) {2,}", " ", line).strip() for line in lines]
    if prefixed:
        lines = [f"D RKNN: [19:41:05.496] {line}" for line in lines]
    log = parse("\n".join(lines) + "\n")
    ranking = log.frames["perf_ranking"]
    assert list(ranking["op_type"]) == ["Gather", "Pow", "Transpose"]
    assert list(ranking["cpu_time_us"]) == [0, 41000, 12618]
    assert list(ranking["time_ratio_pct"]) == [33.70, 64.00, 11.07]
    assert log.line_counts["unparsed"] == 0 and log.line_counts["message"] == 0


def test_ranking_15_without_gpu_column_reads_by_header():
    log = parse(
        "Operator Time-Consuming Ranking:\n"
        "OpType           Call Number     CPU Time(us)    NPU Time(us)    Total Time(us)    Time Ratio(%)\n"
        "ConvRelu         50              0               19301           19301             68.96\n"
    )
    row = log.frames["perf_ranking"].iloc[0]
    assert (row["call_number"], row["npu_time_us"], row["time_ratio_pct"]) == (50, 19301, 68.96)


FAILED_RUNS = {
    "submit": (
        "I RKNN: [09:58:04.794] RKNN Runtime Information, librknnrt version: 2.3.2 (429f97ae6b@2025-04-09)\n"
        "E RKNN: [07:24:22.771] failed to submit!, op id: 1, op name: Conv:Conv_0, flags: 0x1\n"
        "rknn_run fail! ret=-1\n",
        "run-failure",
        2,
    ),
    "rknn_run only": ("rknn_run fail! ret=-1\n", "run-failure", 1),
    "init_runtime error": (
        "W init_runtime: Flag perf_debug has been set, it will affect the performance of inference!\n"
        "E init_runtime: RKNN model does not exist, please load & build model first!\n",
        "init_runtime error",
        2,
    ),
    "connect": (
        "I target set by user is: rk3588\n"
        "E init_runtime: Connect to Device Failure (-1)\n"
        "E init_runtime: Catch exception when init runtime!\n",
        "runtime-init-failure",
        2,
    ),
    "adb": (
        "adb server version (41) doesn't match this client (39); killing...\n"
        "E RKNNAPI: rknn_init,  server connect fail!  ret = -9(ERROR_PIPE)!\n",
        "runtime-init-failure",
        1,
    ),
    "c demo": (
        "sdk version: 2.3.2 (429f97ae6b@2025-04-09T09:09:27) driver version: 0.7.2\n"
        "index=0, name=images, n_dims=4, dims=[1, 640, 640, 3], n_elems=1228800, size=1228800, "
        "fmt=NHWC, type=INT8, qnt_type=AFFINE, zp=-128, scale=0.003922\n"
        "E RKNN: [00:00:14.023] failed to submit!, op id: 167, op name: Mul:Mul_383, flags: 0x5\n"
        "rknn_run fail! ret=-1\n",
        "run-failure",
        3,
    ),
}


def test_failed_runs_end_the_session_failed_with_a_cause():
    for name, (text, reason, status_line) in FAILED_RUNS.items():
        log = parse(text)
        build = log.frames["builds"].iloc[-1]
        assert (build["status"], build["status_reason"], build["status_line"]) == (
            "failed",
            reason,
            status_line,
        ), name
        assert log.line_counts["unparsed"] == 0, (name, log.frames["unparsed"])
        found = analyze_log(log)
        assert any(f.code == "BLD001" and f.severity.name == "error" for f in found.findings), name


def test_c_demo_versions_are_read():
    log = parse(FAILED_RUNS["c demo"][0])
    build = log.frames["builds"].iloc[0]
    assert (build["runtime_version"], build["driver_version"]) == ("2.3.2", "0.7.2")
    assert len(log.frames["tensor_attrs"]) == 1


def test_cli_exits_1_on_a_failed_run(tmp_path):
    path = tmp_path / "run.log"
    path.write_text(FAILED_RUNS["submit"][0])
    result = CliRunner().invoke(app, ["parse", str(path)])
    assert result.exit_code == 1, result.output
    assert "BLD001" in result.output
    result = CliRunner().invoke(
        app, ["parse", str(RKNN / "64-issue-tk2-447-runtime-2.3.2-failed-to-submit-rknn-run-fail.log")]
    )
    assert result.exit_code == 1


TOOLKIT_TRACEBACK = """W __init__: rknn-toolkit2 version: 1.4.0-22dcfef4
E load_onnx: Catch exception when loading onnx model: m.onnx!
E load_onnx: Traceback (most recent call last):
E load_onnx:   File "rknn/api/rknn_base.py", line 1152, in rknn.api.rknn_base.RKNNBase.load_onnx
E load_onnx: {exception}
Traceback (most recent call last):
  File "export.py", line 52, in <module>
    assert ret == 0, "Load model failed!"
AssertionError: Load model failed!
"""


def test_a_traceback_is_one_error_named_by_its_exception():
    cases = {
        "TypeError: '<=' not supported between instances of 'NoneType' and 'int'": "python-exception",
        "onnxruntime.capi.onnxruntime_pybind11_state.InvalidArgument: [ONNXRuntimeError] : 2 : "
        "INVALID_ARGUMENT : Failed to load model: Opset 19 is under development": "python-exception",
        "MemoryError: Unable to allocate 2.00 GiB": "allocation-failure",
        "Exception: RKNN init failed. error code: RKNN_ERR_DEVICE_UNAVAILABLE": "runtime-init-failure",
    }
    for exception, category in cases.items():
        log = parse(TOOLKIT_TRACEBACK.format(exception=exception))
        errors = log.frames["messages"]
        errors = errors[errors["level"] == "E"]
        assert len(errors) == 3, exception  # the catch line and two tracebacks, not one per line
        toolkit = errors.iloc[1]
        assert toolkit["message"].splitlines()[0] == exception
        assert (toolkit["line"], toolkit["end_line"], toolkit["category"]) == (3, 5, category)
        script = errors.iloc[2]
        assert script["message"].splitlines()[0] == "AssertionError: Load model failed!"
        assert (script["line"], script["end_line"]) == (6, 9)
        assert log.line_counts["unparsed"] == 0
        assert log.frames["builds"]["status_reason"].iloc[0] == "model-not-loaded"


def test_a_runtime_session_that_printed_results_is_done():
    log = parse(
        "I RKNN: [09:58:04.794] RKNN Runtime Information, librknnrt version: 2.3.2 (429f97ae6b@2025-04-09)\n"
        + "\n".join(RANKING)
        + "\n"
    )
    build = log.frames["builds"].iloc[0]
    assert (build["kind"], build["status"], build["status_line"]) == ("session", "done", 8)
    assert (
        parse("I RKNN: [09:58:04.794] RKNN Driver Information, version: 0.9.2\n")
        .frames["builds"]["status"]
        .iloc[0]
        == "unknown"
    )


def test_build_layer_row_with_empty_full_name_is_kept():
    lines = (RKNN / "09-build-verbose-mobilenetv1-rv1106-tk2-1.5.2-simulator.log").read_text().splitlines()
    header = next(i for i, line in enumerate(lines) if "OpType" in line and "FullName" in line)
    rows = [i for i in range(header + 1, len(lines)) if re.match(r"D RKNN: \[[^\]]*\] \d+ ", lines[i])][:6]
    before = parse("\n".join(lines) + "\n")
    cut = list(lines)
    name = cut[rows[3]].split()[-1]
    cut[rows[3]] = cut[rows[3]][: cut[rows[3]].rindex(name)].rstrip()  # FullName cell left empty
    after = parse("\n".join(cut) + "\n")
    assert len(after.frames["layers"]) == len(before.frames["layers"])
    row = after.frames["layers"].set_index("line").loc[rows[3] + 1]
    assert pd.isna(row["full_name"])
    assert row["rw_kb"] == before.frames["layers"].set_index("line").loc[rows[3] + 1]["rw_kb"]
    assert after.line_counts["unparsed"] == before.line_counts["unparsed"]


def test_a_prefixed_line_of_figures_outside_a_ranking_table_is_a_message():
    log = parse("D RKNN: [19:41:05.496] Gather 4 0 0 59192 59192 33.70%\n")
    assert len(log.frames["perf_ranking"]) == 0
    assert list(log.frames["messages"]["message"]) == ["Gather 4 0 0 59192 59192 33.70%"]
    bare = parse("Gather  4  0  0  59192  59192  33.70%\n")  # bare: identified by its shape, marked
    assert bare.frames["perf_ranking"]["headerless"].tolist() == [True]


def test_a_whole_log_pasted_with_collapsed_spaces_gives_the_same_rows():
    """Every run of spaces collapsed to one (as a paste into an issue does): same rows, same values."""
    for name in (
        "09-build-verbose-mobilenetv1-rv1106-tk2-1.5.2-simulator.log",
        "03-perf-detail-cpp-yolov8-1920-rk3588.log",
        "11-eval-perf-memory-yolov5-rk3588-tk2-1.5.0-wrapped.log",
    ):
        text = (RKNN / name).read_text()
        whole = parse(text)
        pasted = parse("\n".join(re.sub(r"(?<=\S) {2,}", " ", line) for line in text.split("\n")))
        for frame in ("layers", "perf", "perf_ranking", "tensors"):
            a, b = whole.frames[frame], pasted.frames[frame]
            assert a.astype(str).equals(b.astype(str)), (name, frame)
        # (Outside tables a collapsed paste may read differently: `I     adjust_relu: [...]` without its
        # indentation is a message, not a fusion; every line is still counted.)
        assert whole.line_counts["total"] == pasted.line_counts["total"], name
        assert whole.line_counts["unparsed"] == pasted.line_counts["unparsed"], name


def test_a_row_cut_before_its_shapes_is_an_unparsed_row_of_its_table():
    lines = (RKNN / "09-build-verbose-mobilenetv1-rv1106-tk2-1.5.2-simulator.log").read_text().splitlines()
    header = next(i for i, line in enumerate(lines) if "OpType" in line and "FullName" in line)
    row = next(i for i in range(header + 1, len(lines)) if re.match(r"D RKNN: \[[^\]]*\] 3 ", lines[i]))
    cut = list(lines)
    cut[row] = cut[row][: cut[row].index("(")]  # `D RKNN: [ts] 3    ConvClip  INT8  NPU    `
    log = analyze_log(parse("\n".join(cut) + "\n"))
    unparsed = log.frames["unparsed"].set_index("line")
    assert unparsed.loc[row + 1, "reason"] == "row of the layer table that fits no row shape"
    assert row + 1 not in set(log.frames["messages"]["line"])
    assert any(f.code == "LOG001" and f.line == row + 1 for f in log.findings)
