"""Exact figures from the MCU traces: every number below is checked against the trace's own lines."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from typer.testing import CliRunner

import logscope
from logscope.cli import app
from logscope.io import decode_bytes
from tests.conftest import FIXTURES

MCU = FIXTURES / "mcu"
SYNTHETIC = FIXTURES / "synthetic"


def trace(name: str) -> logscope.ParsedLog:
    folder = SYNTHETIC if name.startswith("heap-trace") else MCU
    (path,) = folder.glob(f"{name}*.txt")
    return logscope.parse(path)


def parse_lines(*lines: str) -> logscope.ParsedLog:
    return logscope.parse_text(decode_bytes("\n".join(lines).encode(), "<test>"))


def memory(log: logscope.ParsedLog, run: int = 0) -> dict:
    return log.summary()["runs"][run]["memory"]


# ---------------------------------------------------------------------------------- per-op heap trace
def test_issue_example_peak_is_op_2_conv2d_at_53000():
    log = trace("heap-trace-issue-example")
    mem = memory(log)
    assert log.kind == "mcu-heap-trace"
    assert mem["peak_bytes"] == 53000
    assert mem["peak_op"] == {"index": 2, "name": "Conv2D", "type": None, "line": 5}
    assert (mem["baseline_bytes"], mem["final_bytes"]) == (45000 - 12000, 48000)
    ops = log.frames["ops"]
    assert ops["delta_bytes"].tolist() == [12000, 0, 8000, -5000]
    assert ops["line"].tolist() == [3, 4, 5, 6]
    assert log.frames["unparsed"]["line"].tolist() == [1, 2]  # the fixture's own comment header


def test_units_signs_baseline_budget_and_runs():
    log = parse_lines(
        "boot: heap ready",
        "Heap budget: 8 KiB",
        "Heap baseline: 1.00KiB",
        "Op[0] Conv: delta=+2KiB, total=3KiB",
        "Op[1] Relu: delta=0, total=3072 B",
        "app says hello",
        "Op[2] Pool: delta=-1.5KB, total=1.5KB",
        "Op[0] Conv: delta=4096 bytes, total=10 KiB",  # the index goes back: a second run
        "Op[1] Relu: delta=-1024, total=9216",
    )
    runs = log.summary()["runs"]
    assert [r["memory"]["peak_bytes"] for r in runs] == [3072, 10240]
    assert runs[0]["memory"]["baseline_bytes"] == 1024
    assert runs[0]["memory"]["peak_op"]["index"] == 0  # the first op that reaches the peak
    assert runs[1]["memory"]["budget_bytes"] == 8192  # a stated budget holds for the runs after it
    assert runs[1]["memory"]["over_budget_bytes"] == 2048 and runs[0]["memory"]["headroom_bytes"] == 5120
    assert runs[1]["memory"]["baseline_bytes"] == 10240 - 4096  # derived: first total - first delta
    assert log.frames["ops"]["delta_bytes"].tolist() == [2048, 0, -1536, 4096, -1024]
    assert log.frames["unparsed"]["line"].tolist() == [1, 6]


def test_baseline_line_after_ops_starts_a_new_run():
    log = parse_lines(
        "baseline: 100", "Op[0] A: delta=10, total=110", "baseline: 200", "Op[0] A: delta=10, total=210"
    )
    assert [r["memory"]["peak_bytes"] for r in log.summary()["runs"]] == [110, 210]


def test_synthetic_traces():
    esp = trace("heap-trace-esp32")
    assert [memory(esp, i)["peak_op"]["name"] for i in (0, 1)] == ["DEPTHWISE_CONV_2D"] * 2
    assert memory(esp)["peak_bytes"] == round(54.69 * 1024) and memory(esp)["budget_bytes"] == 65536
    assert esp.line_counts["foreign"] == 5  # other components' and the app's own ESP_LOGI lines
    stm = trace("heap-trace-stm32")
    assert [memory(stm, i)["peak_bytes"] for i in range(3)] == [53000, 61192, 69384]
    assert [memory(stm, i)["over_budget_bytes"] for i in range(3)] == [0, 0, 69384 - 65536]
    zephyr = trace("heap-trace-zephyr")
    assert len(zephyr.summary()["runs"]) == 3
    assert memory(zephyr)["peak_op"]["name"] == "sequential/conv2d/Relu;sequential/conv2d/BiasAdd"
    assert memory(zephyr)["baseline_bytes"] == 20480


# ---------------------------------------------------------------------------------- TFLM
@pytest.mark.parametrize("name", ["01", "02", "07", "29"])
def test_allocator_head_plus_tail_is_total(name):
    arena = trace(name).frames["arena"].set_index("category")["used_bytes"]
    assert arena["arena head"] + arena["arena tail"] == arena["arena total"]


def test_allocator_categories_fit_in_tail():
    log = trace("02")
    arena = log.frames["arena"]
    categories = arena[arena["region"] == "tail"]
    assert int(categories["used_bytes"].sum()) == 6824 <= 7408
    assert memory(log)["peak_bytes"] == 23412 and memory(log)["derivation"].startswith("reported")


def test_profiler_per_tag_sums():
    profile = trace("02").frames["profile"]
    assert int(profile[~profile["is_total"]]["ticks"].sum()) == int(
        profile[profile["is_total"]]["ticks"].iloc[0]
    )
    blocks = trace("06").frames["profile"].groupby("block")
    sums = {
        b: (int(g[~g["is_total"]]["ticks"].sum()), int(g[g["is_total"]]["ticks"].iloc[0])) for b, g in blocks
    }
    # [06]'s init-phase block adds up; its inference block does not (3192498 vs 2820774): kept as printed.
    assert sums == {1: (371724, 371724), 2: (3192498, 2820774)}


def test_profiler_events_and_op_list_give_op_names():
    csv = trace("26").frames["ops"]
    assert len(csv) == 31 and csv["op_index"].tolist() == list(range(31))
    assert csv["op_name"].iloc[27] == "AVERAGE_POOL_2D" and int(csv["ticks"].sum()) > 0
    log06 = trace("06").frames["ops"]
    assert len(log06) == 31 and log06["time_us"].iloc[0] == 8000.0
    oplist = trace("05").frames["ops"]
    assert oplist["op_name"].tolist()[:3] == ["DEPTHWISE_CONV_2D", "DEPTHWISE_CONV_2D", "CONV_2D"]
    assert oplist["detail"].iloc[0].endswith("-> [T#34]")  # the output wrapped onto the next line


def test_planner_curve_is_sum_of_live_buffers():
    log = trace("04")
    curve = log.frames["curve"].set_index("op_index")["live_bytes"]
    assert curve[0] == curve[1] == 18432 and curve[20] == 4608 + 4608 and curve[23] == 4608 + 1152
    assert curve[28] == 256 + 16 and len(curve) == 31
    assert memory(log)["peak_bytes"] == 18432 and memory(log)["peak_op"]["index"] == 0


def test_planner_tick_line_and_allocation_errors():
    log = parse_lines(
        "3 (id=3): size=18432, offset=0, first_used=0 last_used=1",
        "   0: aaaaaaaaaaaaaaaaaa.... (18k)",
        "Arena size is too small for all buffers. Needed 102400 but only 98080 was available.",
    )
    arena = log.frames["arena"]
    assert arena["used_bytes"].iloc[0] == 18 * 1024
    assert memory(log)["over_budget_bytes"] == 102400 - 98080
    fail = trace("28")
    row = fail.frames["arena"].iloc[0]
    assert row["requested_bytes"] == row["free_bytes"] + memory(fail)["over_budget_bytes"]


# ---------------------------------------------------------------------------------- NNoM
@pytest.mark.parametrize(
    ("name", "peak", "op", "blocks"),
    [
        ("19", 11264, (3, "MaxPool"), 13568),
        ("20", 16416, (10, "Conv2D"), 18144),
        ("21", 1923, (2, "RNN/GRU"), 2588),
    ],
)
def test_nnom_series_and_block_totals_match_printed_totals(name, peak, op, blocks):
    log = trace(name)
    layers = log.frames["mcu_layers"]
    compiled = layers[layers["source"] == "nnom-compile"]
    series = compiled["in_bytes"] + compiled["out_bytes"] + compiled["buf_bytes"]
    assert (series == compiled["working_set_bytes"]).all()
    arena = log.frames["arena"]
    block_sum = int(arena[arena["category"].str.startswith("blk_")]["used_bytes"].sum())
    printed = int(arena[arena["category"] == "network buffers total"]["used_bytes"].iloc[0])
    assert block_sum == printed == blocks
    assert int(series.max()) == peak <= printed
    mem = memory(log)
    assert mem["peak_bytes"] == peak and (mem["peak_op"]["index"], mem["peak_op"]["name"]) == op
    run = log.frames["mcu_runs"].iloc[0]
    # The stat rows add up to the printed prediction time ([21]'s rows give 3282 µs, its summary 3281 µs).
    assert abs(int(compiled["time_us"].sum()) - int(run["reported_time_us"])) <= (name == "21")


def test_nnom_tensors_flow_from_layer_to_layer():
    compiled = trace("19").frames["mcu_layers"]
    assert compiled["out_bytes"].iloc[:-1].tolist() == compiled["in_bytes"].iloc[1:].tolist()


# ---------------------------------------------------------------------------------- ESP-IDF, Mbed
def test_host_heap_log_replay_balances_against_leak_report():
    log = trace("18")
    ev = log.summary()["runs"][0]["events"]
    assert ev["alloc_bytes"] - ev["free_bytes"] == ev["reported_leak_bytes"] == 10
    assert ev["leak_blocks"] == ev["reported_leak_blocks"] == 4 and ev["balanced"] is True
    assert ev["unmatched_frees"] == 2  # frees of blocks allocated before the trace started
    events = log.frames["events"]
    listed = events[events["action"] == "leaked"]
    replayed = events[events["action"] != "leaked"]
    still = {}
    for row in replayed.itertuples(index=False):
        if row.action == "alloc":
            still[row.address] = row.size_bytes
        else:
            still.pop(row.address, None)
    assert dict(zip(listed["address"], listed["size_bytes"], strict=True)) == still
    assert memory(log)["peak_bytes"] == 18 and memory(log)["final_bytes"] == 10
    assert events["caller"].iloc[0].endswith("sysview_heap_log.c:47")


def test_heap_trace_dump_balances_against_its_summary():
    ev = trace("16").summary()["runs"][0]["events"]
    assert (ev["allocations"], ev["frees"]) == (ev["reported_allocations"], ev["reported_frees"]) == (8, 8)
    assert ev["leak_bytes"] == ev["reported_leak_bytes"] == 0 and ev["balanced"] is True
    # Free times are not logged: no curve, and the peak is a lower bound, the largest record (24 B, line 9).
    mem = memory(trace("16"))
    assert mem["peak_bytes"] == 24 and mem["derivation"].startswith(
        "heap trace dump, no free times: lower bound"
    )


def test_heap_trace_dump_xtensa_form_and_leaks():
    log = parse_lines(
        "====== Heap Trace: 2 records (2 capacity) ======",
        "    6 bytes (@ 0x3fc9f620, Internal) allocated CPU 0 ccount 0x1a31ac84 caller 0x40376321:0x40376379",
        "freed by 0x403839e4:0x42008096",
        "   10 bytes (@ 0x3fc9f630, Internal) allocated CPU 0 ccount 0x1a31ad00 caller 0x40376321:0x40376379",
        "10 bytes alive in trace (1/2 allocations)",
    )
    ev = log.summary()["runs"][0]["events"]
    assert (ev["frees"], ev["leak_bytes"], ev["leak_blocks"], ev["balanced"]) == (1, 10, 1, True)


def test_heap_caps_low_water_mark():
    log = trace("25")
    arena = log.frames["arena"]
    regions = arena[arena["category"] == "heap region"]
    used = int((regions["capacity_bytes"] - regions["min_free_bytes"]).sum())
    totals = arena[arena["category"] == "totals"].iloc[0]
    assert used == int(regions["capacity_bytes"].sum()) - int(totals["min_free_bytes"]) == 143576
    assert memory(log)["peak_bytes"] == used and memory(log)["budget_bytes"] == 163984


def test_mbed_trace_replay_with_calloc_realloc_free():
    log = parse_lines(
        "--- post_import_graph done ---",
        "#m:0x20001000;0x800142f-100",
        "#c:0x20002000;0x800142f-4;8",
        "--- invoke ---",
        "#r:0x20003000;0x800142f-0x20001000;200",
        "#f:0x0;0x800142f-0x20002000",
    )
    mem = memory(log)
    assert (mem["peak_bytes"], mem["final_bytes"]) == (232, 200)
    assert mem["peak_op"]["name"] == "invoke"
    assert memory(trace("27"))["peak_bytes"] == 16


# ------------------------------------------------------------------------- Vela, ST, ESP-DL, TinyEngine
def test_vela_peak_percent_is_usage_over_peak():
    log = trace("13")
    layers = log.frames["mcu_layers"]
    peak = int(layers["working_set_bytes"].max())
    assert (layers["working_set_bytes"] / peak * 100).round(2).tolist() == layers["peak_percent"].tolist()
    assert memory(log)["peak_bytes"] == 730624 and memory(log)["peak_op"]["type"] == "CONV_2D"
    assert memory(trace("12"))["peak_bytes"] == round(0.95 * 1024)


def test_vela_per_layer_csv():
    log = parse_lines(
        "TFLite_operator,NNG Operator,SRAM Usage,Peak%,Op Cycles,Network%,NPU,SRAM AC,DRAM AC,OnFlash AC,"
        "OffFlash AC,MAC Count,Network%,Util%,Name",
        "CONV_2D,Conv2DBias,11936,54.65201465201465,7312.0,40.1,7312.0,1024.0,0.0,0.0,512.0,110592,30.0,23.6,conv1",
        "ADD,Add,21840,100.0,1200.0,6.5,1200.0,512.0,0.0,0.0,0.0,0,0.0,0.0,add/y",
    )
    assert memory(log)["peak_bytes"] == 21840 and memory(log)["peak_op"]["name"] == "add/y"


def test_st_c_layers_working_set_and_peak():
    log = trace("11")
    layers = log.frames["mcu_layers"]
    c_layers = layers[layers["source"] == "st-c-layer"]
    assert c_layers["working_set_bytes"].tolist() == [784 + 2848 + 128, 128 + 896 + 64, 64 + 228 + 10]
    arena = log.frames["arena"].set_index("category")["used_bytes"]
    assert memory(log)["peak_bytes"] == arena["activations (rw)"] == 3760
    assert memory(log)["peak_op"]["name"] == "_Relu_output_0"
    assert arena["ram total incl. runtime"] == 5516 == 3760 + 1756


def test_st_ram_total_terms_and_n6_kib():
    arena = trace("09").frames["arena"].set_index("category")["used_bytes"]
    assert (
        arena["ram (total)"]
        == arena["activations (rw)"] + arena["ram (total): input"] + arena["ram (total): output"]
    )
    n6 = trace("08").frames["arena"]
    npu4 = n6[n6["region"] == "npuRAM4"].iloc[0]
    assert npu4["used_bytes"] == 4060 and npu4["capacity_bytes"] == 0x342E0000 - 0x34270000


def test_espdl_totals_add_up_within_rounding():
    arena = trace("23").frames["arena"]
    psram = arena[arena["region"] == "PSRAM"].set_index("category")["used_bytes"]
    parts = psram["parameter_copy"] + psram["variable"] + psram["others"]
    assert abs(parts - psram["total"]) <= 3 * 0.005 * 1024  # three cells rounded to 0.01 KB
    modules = trace("22").frames["mcu_layers"]
    assert len(modules) == 10 and modules["time_us"].iloc[0] == 28814.0


def test_tinyengine_two_headers_two_runs():
    runs = trace("24").summary()["runs"]
    assert [r["memory"]["peak_bytes"] for r in runs] == [1084, 262568]


# ---------------------------------------------------------------------------------- contract, CLI
def test_every_frame_row_keeps_its_line_and_integers_stay_integers():
    for path in sorted(MCU.glob("*.txt")):
        log = logscope.parse(path)
        for name in ("ops", "buffers", "events", "arena", "mcu_layers", "profile", "curve"):
            frame = log.frames[name]
            assert str(frame["run_index"].dtype) == "Int64", (path.name, name)
            if name != "curve":
                assert frame["line"].notna().all(), (path.name, name)


def test_rknn_summaries_have_no_mcu_keys(mobilenet_log):
    summary = mobilenet_log.summary()
    assert "runs" not in summary and "formats" not in summary


def test_cli_text_json_markdown_and_frames(tmp_path):
    runner = CliRunner()
    path = SYNTHETIC / "heap-trace-stm32-uart-bytes-leak.txt"
    parsed = (0, 1)  # 1: the rules found something at or above --fail-on (this run is over budget)
    text = runner.invoke(app, ["parse", str(path)])
    assert text.exit_code in parsed and "[mcu-heap-trace]" in text.stdout and "OVER BUDGET" in text.stdout
    data = json.loads(runner.invoke(app, ["parse", str(path), "--format", "json"]).stdout)
    assert data["schema_version"] == 1 and data["runs"][2]["memory"]["peak_op"]["line"] == 40
    markdown = runner.invoke(app, ["parse", str(path), "--format", "markdown"])
    assert markdown.exit_code in parsed and "| 2 |" in markdown.stdout
    out = tmp_path / "frames"
    frames = runner.invoke(app, ["parse", str(path), "--frames-out", str(out), "--frames-format", "csv"])
    assert frames.exit_code in parsed
    assert len(pd.read_csv(out / "curve.csv")) == 33 and len(pd.read_csv(out / "mcu_memory.csv")) == 3


def test_benchmark_arena_table_adds_up():
    arena = trace("06").frames["arena"].set_index("category")["used_bytes"]
    assert arena["arena total"] == arena["arena nonpersistent"] + arena["arena persistent"] == 84436


def test_unparsed_lines_reviewed():
    """Reviewed (docs/formats.md): [26]'s menu and prints (15), [29]'s `Finished in 128us`, [24]'s two
    curator notes; the synthetic traces' headers, banners and application prints (25)."""
    real = {p.name[:2]: logscope.parse(p).unparsed_lines for p in sorted(MCU.glob("*.txt"))}
    assert {k: v for k, v in real.items() if v} == {"24": 2, "26": 15, "29": 1}
    synthetic = sum(logscope.parse(p).unparsed_lines for p in SYNTHETIC.glob("heap-trace-*.txt"))
    assert synthetic == 25
