"""Board-side output: eval_perf, eval_memory, runtime verbose logs, proxy block, failures."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

import logscope
from logscope.cli import app
from tests.conftest import MOBILENET, RKNN

PERF_1_5 = RKNN / "11-eval-perf-memory-yolov5-rk3588-tk2-1.5.0-wrapped.log"
PERF_2X = RKNN / "03-perf-detail-cpp-yolov8-1920-rk3588.log"
PERF_MULTICORE = RKNN / "07-perf-detail-multicore-yolov8-1920x1088.log"
TK1 = RKNN / "12-tk1-1.6.1-eval-perf-memory-rk1808.log"
TK1_WRAPPED = RKNN / "25-issue-rl-tk1-388-eval-perf-wrapped-names-rv1126.log"
EVAL_MEM_1_6 = RKNN / "02-eval-memory-yolov8-1920-rk3588-tk2-1.6.log"
RUNTIME = RKNN / "01-runtime-verbose-conv2d-rk3588-232.log"
BOARD_INIT = RKNN / "10-build-tail-init-runtime-rv1106-board-tk2-1.5.2.log"
LOGCAT = RKNN / "16-issue-rl-tk2-218-logcat-malloc-npu-memory-rk3566.log"
MIB = 1024 * 1024


@pytest.mark.parametrize("path", [PERF_1_5, PERF_2X, PERF_MULTICORE], ids=lambda p: p.name[:2])
def test_perf_totals_equal_the_sum_of_their_rows(path):
    """Where the table is complete (its rows are as many as the ranking's calls), the log's own totals
    must equal the sums: Total Operator Elapsed Time = sum(Time) = sum(ranking Total Time), and per op type
    the ranking row = the sum of that type's rows. 2.x RW is checked within the rows' integer rounding
    (half a KB per row); 1.5's `Total Memory RW Amount(MB)` is not the sum of its RW(KB) column in [11]
    (88.49 MB vs 94445 KB), so it is not checked."""
    log = logscope.parse(path)
    perf, ranking, totals = (log.frames[k] for k in ("perf", "perf_ranking", "perf_totals"))
    assert len(perf) == ranking["call_number"].sum()
    total = int(totals["total_time_us"].iloc[0])
    assert int(perf["time_us"].sum()) == total == int(ranking["total_time_us"].sum())
    by_type = perf.groupby("op_type")["time_us"].sum()
    for row in ranking.itertuples():
        assert by_type[row.op_type] == row.total_time_us, row.op_type
    if "Per Frame" in path.read_text():
        assert abs(perf["rw_kb"].sum() - totals["rw_kb"].iloc[0]) <= 0.5 * len(perf)
    # Total Cycles = max(DDR, NPU) on every row (rknn-log-formats §5.3).
    cycles = perf.dropna(subset=["ddr_cycles", "npu_cycles", "total_cycles"])
    assert len(cycles) and (cycles["total_cycles"] == cycles[["ddr_cycles", "npu_cycles"]].max(axis=1)).all()


def test_perf_1_5_figures_and_wrapped_rows():
    log = logscope.parse(PERF_1_5)
    perf = log.frames["perf"]
    assert len(perf) == 82 and log.frames["layers"].empty  # measurements, not the compiler's plan
    first = perf.iloc[1]
    assert (first.layer_id, first.op_type, first.time_us, first.mac_usage) == (2, "ConvRelu", 4041, "8.55")
    assert (first.task_number, first.task_size, first.regcmd_size, first.rw_kb) == (68, 67456, 69632, 4918.31)
    assert first.workload == "100.0%/0.0%/0.0%-Up:0.0%"  # the cell has spaces in the log
    # Row 41 was cut after its NPU cycles (line 71) and continues on line 72; row 50 over a blank line.
    row41 = perf[perf["layer_id"] == 41].iloc[0]
    assert (row41.line, row41.end_line, row41.total_cycles, row41.time_us) == (71, 72, 281551, 203)
    assert row41.full_name == "Concat:Concat_78"
    row50 = perf[perf["layer_id"] == 50].iloc[0]
    assert (row50.line, row50.end_line, row50.full_name) == (81, 83, "Concat:Concat_94")
    assert log.unparsed_lines == 0
    totals = log.frames["perf_totals"].iloc[0]
    assert (totals.total_time_us, totals.time_line, totals.rw_line) == (27987, 116, 117)
    assert totals.rw_kb == pytest.approx(88.4914 * 1024)


def test_perf_2x_multicore_cells():
    perf = logscope.parse(PERF_MULTICORE).frames["perf"]
    conv = perf[perf["layer_id"] == 3].iloc[0]
    assert conv.mac_usage == "6.95/6.95/6.95"
    assert (conv.ddr_cycles, conv.npu_cycles, conv.total_cycles, conv.time_us) == (
        int(conv.ddr_cycles),
        int(conv.npu_cycles),
        max(int(conv.ddr_cycles), int(conv.npu_cycles)),
        2817,
    )
    ranking = logscope.parse(PERF_2X).frames["perf_ranking"]
    top = ranking.iloc[0]
    assert (top.op_type, top.call_number, top.gpu_time_us, top.npu_time_us, top.time_ratio_pct) == (
        "ConvExSwish",
        57,
        0,
        100965,
        78.61,
    )


def test_tk1_perf_names_are_joined_and_totals_read():
    perf = logscope.parse(TK1_WRAPPED).frames["perf"]
    assert list(perf["layer_id"]) == [0, 2, 3, 4, 5]  # ids skip values in tk1
    assert perf.iloc[0].full_name == "MobilenetV1/MobilenetV1/Conv2d_0/Relu6_1_RKNN_mark_perm_60_0"
    assert perf.iloc[2].full_name == "MobilenetV1/MobilenetV1/Conv2d_1_depthwise/Relu6_3_2"
    assert (perf.iloc[0].line, perf.iloc[0].end_line, perf.iloc[0].uid, perf.iloc[0].time_us) == (
        10,
        11,
        60,
        361,
    )
    totals = logscope.parse(TK1).frames["perf_totals"].iloc[0]
    assert (totals.total_time_us, totals.fps) == (106762, 9.37)


def test_eval_memory_three_variants():
    tk2_16 = logscope.parse(EVAL_MEM_1_6).frames["memory"].iloc[0]
    assert tk2_16.source == "eval_memory"
    assert tk2_16.weight_bytes == round(8.06 * MIB) and tk2_16.internal_bytes == round(105.47 * MIB)
    assert tk2_16.other_bytes == round(3.72 * MIB) and tk2_16.total_bytes == round(117.25 * MIB)
    assert tk2_16.model_bytes == round(11.79 * MIB)
    tk2_15 = logscope.parse(PERF_1_5).frames["memory"].iloc[0]
    assert tk2_15.weight_bytes == round(6.99 * MIB) and tk2_15.internal_bytes == round(5.86 * MIB)
    assert tk2_15.total_bytes == round(18.16 * MIB) and tk2_15.other_bytes is pd_na()  # 1.5 hides "other"
    tk1 = logscope.parse(TK1).frames["memory"].iloc[0]
    assert (tk1.system_max_bytes, tk1.system_total_bytes) == (round(39.08 * MIB), round(197.72 * MIB))
    assert (tk1.npu_max_bytes, tk1.npu_total_bytes) == (round(141.80 * MIB), round(143.33 * MIB))
    assert (tk1.max_total_bytes, tk1.total_bytes) == (round(180.88 * MIB), round(341.04 * MIB))
    assert (tk1.total_line, tk1.model_line) == (20, 23)


def pd_na():
    import pandas as pd

    return pd.NA


def test_build_total_and_eval_memory_total_stay_apart(tmp_path):
    """A build log and an eval_memory dump of the same session: two memory sources, never merged."""
    path = tmp_path / "both.log"
    path.write_bytes(MOBILENET.read_bytes() + EVAL_MEM_1_6.read_bytes())
    memory = logscope.parse(path).frames["memory"]
    assert list(memory["source"]) == ["build-log", "eval_memory"]
    assert list(memory["internal_bytes"]) == [1756160, round(105.47 * MIB)]
    result = CliRunner().invoke(app, ["parse", str(path)])
    assert "also from eval_memory: weight 8.06 MiB" in result.stdout


def test_each_rknn_init_is_a_session(tmp_path):
    path = tmp_path / "two-inits.log"
    path.write_bytes(RUNTIME.read_bytes() * 2)
    log = logscope.parse(path)
    builds = log.frames["builds"]
    assert list(builds["kind"]) == ["session", "session"]
    assert list(builds["runtime_version"]) == ["2.3.2", "2.3.2"]
    assert list(log.frames["allocations"].groupby("build_index").size()) == [4, 4]
    assert list(log.frames["tensors"].groupby("build_index").size()) == [3, 3]


def test_runtime_versions_and_buffers():
    log = logscope.parse(RUNTIME)
    build = log.frames["builds"].iloc[0]
    assert (build.runtime_version, build.driver_version, build.model_toolkit_version) == (
        "2.3.2",
        "0.9.2",
        "2.3.2",
    )
    assert (build.model_format_version, build.target_platform) == (6, "rk3588")
    allocations = log.frames["allocations"]
    assert list(allocations["name"]) == ["task", "weight", "internal", "external"]
    weight = allocations.iloc[1]
    assert (weight["size_bytes"], weight["aligned_size_bytes"], weight["flags"], weight["fd"]) == (
        9728,
        12288,
        "0x403",
        5,
    )


def test_version_mismatch_is_in_the_data():
    """[10]: the PC toolkit's API 1.5.2 talks to a board runtime 1.2.6b3; both are in the session row."""
    log = logscope.parse(BOARD_INIT)
    session = log.frames["builds"].iloc[-1]
    assert (session.api_version, session.server_version, session.proxy_runtime_version) == (
        "1.5.2",
        "1.5.2",
        "1.2.6b3",
    )
    attrs = log.frames["tensor_attrs"]
    assert list(attrs["io"]) == ["input", "output"]
    first = attrs.iloc[0]
    assert (first["name"], first["size_bytes"], first["fmt"], first["dtype"]) == (
        "input",
        150528,
        "NHWC",
        "UINT8",
    )


def test_failed_allocations_carry_what_was_asked():
    allocations = logscope.parse(LOGCAT).frames["allocations"]
    failed = allocations[allocations["status"] == "failed"]
    assert list(failed["name"]) == ["allocate handle", "malloc npu memory"]
    assert failed.iloc[0].errno == 22
    malloc = failed.iloc[1]
    assert (malloc["size_bytes"], malloc["flags"], malloc["line"]) == (6421360, "0xa", 2)


def test_text_output_shows_perf_top_layers_and_json_carries_them():
    runner = CliRunner()
    text = runner.invoke(app, ["parse", str(PERF_1_5)]).stdout
    assert "perf: total 27987 us (line 116)" in text
    assert "4041 us  layer 2    ConvRelu         Conv:Conv_0  [line 32]" in text
    data = json.loads(runner.invoke(app, ["parse", str(PERF_1_5), "--format", "json"]).stdout)
    perf = data["builds"][0]["perf"]
    assert perf["total_time_us"] == perf["rows_time_us"] == 27987
    assert [row["time_us"] for row in perf["slowest"]] == [4041, 924, 817, 747, 739]
    assert data["builds"][0]["versions"]["api_version"] == "1.5.0"
