"""MCU cases read from their formats: failed runs, cut lines, CPU placement, small ST figures, old ESP-IDF
summaries, profiler totals, stated budgets, dump peaks and plain arena prints.

Each test writes the lines as the tool's format string prints them (quoted in the test), in more than
one shape where copies differ (cut, collapsed blanks, a logger prefix), not only the fixture excerpt.
"""

from __future__ import annotations

import re

import pandas as pd
import pytest
from typer.testing import CliRunner

import logscope
from logscope.cli import app
from logscope.io import decode_bytes
from logscope.parsers.mcu import parse_mcu
from logscope.rules import run_rules
from tests.conftest import FIXTURES

MCU = FIXTURES / "mcu"


def parse_lines(*lines: str) -> logscope.ParsedLog:
    return logscope.parse_text(decode_bytes("\n".join(lines).encode(), "<test>"))


def mcu_lines(*lines: str) -> logscope.ParsedLog:
    """Parse as MCU output whatever detection would say (ESP-IDF-prefixed lines alone look like RKNN)."""
    return parse_mcu(decode_bytes("\n".join(lines).encode(), "<test>"))


def plain(value):
    """<NA> and NaN as None, numpy numbers as Python numbers: frame cells, comparable in a tuple."""
    if value is None or pd.isna(value):
        return None
    return value.item() if hasattr(value, "item") else value


def run0(log: logscope.ParsedLog) -> dict:
    return {k: plain(v) for k, v in log.frames["mcu_runs"].iloc[0].to_dict().items()}


def codes(log: logscope.ParsedLog) -> list[str]:
    """The MCU findings (LOG001 also reports the unparsed lines some tests contain on purpose)."""
    return [f.code for f in run_rules(log) if f.code.startswith("MCU")]


# ---------------------------------------------------------------------------------- failed runs
def test_older_tflm_tensor_info_failure_and_mbed_hardfault_fixture():
    (path,) = MCU.glob("30-*.txt")
    log = logscope.parse(path)
    assert log.kind == "mcu-tflm"  # the fault dump names the platform; the run is TFLM's
    run = run0(log)
    assert (run["status"], run["status_reason"], run["status_line"]) == ("failed", "allocation-failure", 1)
    assert run["status_message"] == "Failed to allocate memory for tensor_info, 1320 bytes required"
    assert (run["fault"], run["fault_line"]) == ("HardFault", 6)
    arena = log.frames["arena"]
    assert arena[["category", "requested_bytes", "line"]].values.tolist() == [
        ["failed: tensor_info", 1320, 1]
    ]
    assert log.line_counts["unparsed"] == 0 and log.line_counts["total"] == 45
    assert codes(log) == ["MCU006"]
    result = CliRunner().invoke(app, ["parse", str(path)])
    assert result.exit_code == 1, result.output
    assert "RKNN" not in result.output


@pytest.mark.parametrize(
    "line, needed, available",
    [
        (
            "Arena size is too small for all buffers. Needed 102400 but only 65536 was available.",
            102400,
            65536,
        ),
        ("Arena size is too small for all buffers. Needed 102400 but only 65536 was avai.", 102400, 65536),
        ("[TFLITE-MICRO] Arena size is too small for all buffers. Needed 102400 but only 655", 102400, None),
        ("Arena size is too small for all buffers. Needed 102400 but on", 102400, None),
        ("Arena size is too small for all buffers. Needed 1024", None, None),
        ("Arena size is too small for all buffers.Needed 4096 but only 2048 was available.", 4096, 2048),
        ("Arena size is too small for al", None, None),
    ],
)
def test_arena_too_small_read_whole_or_cut(line, needed, available):
    log = parse_lines("model loaded", line, "AllocateTensors() failed")
    run = run0(log)
    assert (run["status"], run["status_reason"], run["status_line"]) == ("failed", "arena-too-small", 2)
    row = log.frames["arena"].iloc[0]
    assert (plain(row["requested_bytes"]), plain(row["free_bytes"])) == (needed, available)
    if needed is not None and available is not None:
        assert run["over_budget_bytes"] == needed - available
        assert codes(log) == ["MCU005"]  # the shortfall is stated: arena-too-small, not twice
    else:
        assert codes(log) == ["MCU006"]


def test_allocate_tensors_failed_behind_an_esp_idf_log_prefix():
    log = mcu_lines(
        "I (312) cpu_start: Starting scheduler on PRO CPU.",
        "I (402) main: Arena used bytes: 53212",
        "E (410) main: AllocateTensors() failed",
    )
    run = run0(log)
    assert (run["status"], run["status_reason"], run["status_line"]) == (
        "failed",
        "allocate-tensors-failed",
        3,
    )
    assert (run["reported_bytes"], run["reported_line"]) == (53212, 2)
    assert log.line_counts["foreign"] == 1 and log.line_counts["structural"] == 2


def test_a_hardfault_alone_fails_the_run_and_registers_outside_a_dump_are_unparsed():
    log = parse_lines(
        "R0   : 00000000",
        "++ MbedOS Fault Handler ++",
        "",
        "FaultType: HardFault",
        "",
        "Context:",
        "PC   : 000010E4",
        "-- MbedOS Fault Handler --",
        "PC   : 000010E4",
        "++ MbedOS Error Info ++",
        "Error Status: 0x80FF013D Code: 317 Module: 255",
        "Error Message: Fault exception",
        "-- MbedOS Error Info --",
        "Error Message: Fault exception",
    )
    run = run0(log)
    assert (run["status"], run["status_reason"], run["status_line"], run["fault"]) == (
        "failed",
        "hard-fault",
        4,
        "HardFault",
    )
    assert log.frames["unparsed"]["line"].tolist() == [1, 9, 14]
    assert codes(log) == ["MCU006"]


def test_unity_fail_line_and_summary():
    log = parse_lines(
        "12 bytes 'leaked' in trace (1 allocations)",
        "total allocations 3 total frees 2",
        "test/test_heap.c:42:inference frees its buffers:FAIL: Expected 0 Was 12",
        "-----------------------",
        "1 Tests 1 Failures 0 Ignored",
        "FAIL",
    )
    run = run0(log)
    assert (run["status"], run["status_reason"], run["status_line"]) == ("failed", "test-failed", 3)
    assert (run["reported_leak_bytes"], run["reported_leak_blocks"], run["reported_leak_line"]) == (12, 1, 1)
    assert (run["reported_alloc_count"], run["reported_free_count"]) == (3, 2)
    assert log.line_counts["unparsed"] == 0
    assert sorted(codes(log)) == ["MCU003", "MCU006"]
    # `FAIL` alone, away from the summary, is not Unity's verdict.
    assert parse_lines("12 bytes 'leaked' in trace (1 allocations)", "FAIL").line_counts["unparsed"] == 1


# ---------------------------------------------------------------------------------- Vela placement
def test_vela_cpu_split_listing_warnings_and_constraints():
    log = parse_lines(
        "Warning: RESIZE_BILINEAR 'model/resize' is not supported on the NPU. Placing on CPU instead",
        " - Half_pixel_centers is only supported for 2x upscaling",
        "   Op has half_pixel_centers=True",
        "Warning: Unsupported TensorFlow Lite semantics for MEAN 'model/mean'. Placing on CPU instead",
        "Info: RESHAPE 'model/reshape' is a CPU only op",
        'Warning: "SQUARED_DIFFERENCE" is not supported on the NPU. Placing on CPU instead',
        "Total SRAM used                                 91.19 KiB",
        "CPU operators = 10 (37.0%)",
        "   CPU: Passthrough = model/pass (inputs [1, 4], outputs [1, 4])",
        "NPU operators = 17 ( 63.0%)",
        "   NPU: Conv2DBias = model/conv (inputs [1, 96, 96, 1] [8, 3, 3, 1] [8], outputs [1, 48, 48, 8])",
        " - a dash line away from any warning",
    )
    run = run0(log)
    assert (run["cpu_ops"], run["npu_ops"], run["ops_split_line"]) == (10, 17, 8)
    placed = log.frames["mcu_layers"]
    assert [
        [plain(v) for v in row] for row in placed[["op_type", "name", "target", "line"]].values.tolist()
    ] == [
        ["RESIZE_BILINEAR", "model/resize", "CPU", 1],
        ["MEAN", "model/mean", "CPU", 4],
        ["RESHAPE", "model/reshape", "CPU", 5],
        ["SQUARED_DIFFERENCE", None, "CPU", 6],
        ["Passthrough", "model/pass", "CPU", 9],
        ["Conv2DBias", "model/conv", "NPU", 11],
    ]
    assert placed["detail"].iloc[0] == (
        "not supported on the NPU: Half_pixel_centers is only supported for 2x upscaling; "
        "Op has half_pixel_centers=True"
    )
    assert log.frames["unparsed"]["line"].tolist() == [12]
    assert codes(log) == ["MCU007"]


def test_vela_listing_line_outside_its_split_is_unparsed():
    log = parse_lines("Total SRAM used 1.00 KiB", "   CPU: Passthrough = x (inputs [1], outputs [1])")
    assert log.frames["unparsed"]["line"].tolist() == [2]


# ---------------------------------------------------------------------------------- ST figures
@pytest.mark.parametrize(
    "lines, expected",
    [
        (  # ST Edge AI: a figure under 1 KiB prints its human form in B
            (
                " activations (rw)   :   896 B (896 B) (1 segment) *",
                " ram (total)        :   968 B (968 B) = 896 + 40 + 32",
            ),
            {
                "activations (rw)": 896,
                "ram (total)": 968,
                "ram (total): input": 40,
                "ram (total): output": 32,
            },
        ),
        (  # pasted with the blanks collapsed
            (
                "activations (rw): 4,060 B (3.96 KiB) (1 segment) *",
                "ram (total): 4,060 B (3.96 KiB) = 4,060 + 0 + 0",
            ),
            {
                "activations (rw)": 4060,
                "ram (total)": 4060,
                "ram (total): input": 0,
                "ram (total): output": 0,
            },
        ),
        (  # X-CUBE-AI v5: no `B`
            (
                "activations (rw)   : 1,696 (1.66 KiB)",
                "ram (total)        : 3,164 (3.09 KiB) = 1,696 + 1,440 + 28",
            ),
            {
                "activations (rw)": 1696,
                "ram (total)": 3164,
                "ram (total): input": 1440,
                "ram (total): output": 28,
            },
        ),
    ],
)
def test_st_activations_and_ram_total(lines, expected):
    log = parse_lines(" Exec/report summary (analyze)", *lines)
    arena = log.frames["arena"]
    assert dict(zip(arena["category"], arena["used_bytes"], strict=True)) == expected
    assert log.line_counts["unparsed"] == 0
    assert run0(log)["reported_bytes"] == expected["ram (total)"]


# ---------------------------------------------------------------------------------- ESP-IDF
def test_espidf_v4_dump_with_one_line_summary_and_a_peak():
    log = parse_lines(
        "====== Heap Trace: 3 records (100 capacity) ======",
        "    12 bytes (@ 0x3ffb8e30) allocated CPU 0 ccount 0x2f4f7b6c caller 0x400d2b10:0x400d2c38",
        "    2048 bytes (@ 0x3ffb9000) allocated CPU 0 ccount 0x2f4f8a20 caller 0x400d2b10:0x400d2c40",
        "freed by 0x400d2c50:0x400d2c58",
        "    96 bytes (@ 0x3ffb9900) allocated CPU 1 ccount 0x2f4f9a20 caller 0x400d2b10:0x400d2c40",
        "freed by 0x400d2c50:0x400d2c58",
        "12 bytes 'leaked' in trace (1 allocations)",
        "total allocations 3 total frees 2",
        "(NB: Buffer has overflowed, so trace data is incomplete.)",
    )
    assert log.line_counts["unparsed"] == 0
    mem = log.summary()["runs"][0]["memory"]
    # No free times: the peak is the lower bound max(never freed 12, largest record 2048).
    assert (mem["peak_bytes"], log.summary()["runs"][0]["memory_lines"]["peak_bytes"]) == (2048, 3)
    assert "lower bound" in mem["derivation"] and "upper bound 2156" in mem["derivation"]
    assert codes(log) == ["MCU003"]


def test_espidf_unit_test_leak_check_line():
    for line in (
        "MALLOC_CAP_8BIT potential leak: Before 291016 bytes free, After 291004 bytes free (delta 12)",
        "MALLOC_CAP_32BIT leak: Before 100 bytes free, After 88 bytes free (delta 12)",
    ):
        log = parse_lines(line)
        assert (run0(log)["reported_leak_bytes"], run0(log)["reported_leak_line"]) == (12, 1)
        assert codes(log) == ["MCU003"]


# ---------------------------------------------------------------------------------- MicroProfiler totals
def test_microprofiler_whole_invoke_line_is_a_total_not_an_op_fixture():
    (path,) = MCU.glob("31-*.txt")
    log = logscope.parse(path)
    ops = log.frames["ops"]
    assert len(ops) == 15 and int(ops["ticks"].sum()) == 38516  # not 77032
    assert ops["op_index"].tolist() == list(range(15)) and ops["line"].tolist() == list(range(2, 17))
    total = log.frames["profile"]
    assert total[["tag", "ticks", "is_total", "line"]].values.tolist() == [
        ["KeywordRunNIerations(1)", 38516, True, 1]
    ]
    assert (run0(log)["reported_time_us"], run0(log)["reported_time_line"]) == (38000, 1)


def test_microprofiler_total_printed_after_its_ops_and_blocks_without_total():
    after = parse_lines(
        "CONV_2D took 300 ticks (0 ms).",
        "SOFTMAX took 20 ticks (0 ms).",
        "ADD took 80 ticks (0 ms).",
        "Invoke took 400 ticks (0 ms).",
    )
    assert after.frames["ops"]["op_name"].tolist() == ["CONV_2D", "SOFTMAX", "ADD"]
    assert after.frames["profile"]["line"].tolist() == [4]
    # Two ops whose ticks happen to equal a third's sum only when at least two follow: `A = B` is no total.
    plain = parse_lines("CONV_2D took 300 ticks (0 ms).", "CONV_2D took 300 ticks (0 ms).")
    assert len(plain.frames["ops"]) == 2 and not len(plain.frames["profile"])
    uneven = parse_lines(*(f"OP{i} took {t} ticks (0 ms)." for i, t in enumerate([500, 100, 200, 300])))
    assert len(uneven.frames["ops"]) == 4  # 500 != 100 + 200 + 300: no line is a total


# ---------------------------------------------------------------------------------- budgets, plain prints
@pytest.mark.parametrize(
    "banner, budget",
    [
        ("STM32F746NG @ 216 MHz, SRAM 320KB, Flash 1MB", 320 * 1024),
        ("Board: nRF52840 64MHz RAM: 256 KiB flash 1 MiB", 256 * 1024),
        ("ESP32-S3 240MHz, SRAM 512K, flash 8MB", 512 * 1024),
    ],
)
def test_boot_banner_sram_is_the_budget_and_the_finding_says_so(banner, budget):
    log = parse_lines(banner, "Arena used bytes: 600000")
    run = run0(log)
    assert (run["budget_bytes"], run["budget_line"]) == (budget, 1)
    assert "boot banner" in run["budget_label"]
    (finding,) = [f for f in run_rules(log) if f.code == "MCU001"]
    assert "boot banner (line 1)" in finding.message


def test_a_stated_budget_line_wins_over_the_banner():
    log = parse_lines("STM32F746NG @ 216 MHz, SRAM 320KB", "RAM budget: 65536 B", "Arena used bytes: 1000")
    assert (run0(log)["budget_bytes"], run0(log)["budget_line"]) == (65536, 2)


def test_sram_in_prose_is_not_a_budget():
    log = parse_lines("Arena used bytes: 1000", "moved the buffers to SRAM 2 yesterday")
    assert run0(log)["budget_bytes"] is None


@pytest.mark.parametrize(
    "line, value",
    [
        ("Arena used bytes: 53212", 53212),
        ("arena_used_bytes() = 53212", 53212),
        ("[main] Tensor arena used: 52 KiB", 53248),
        ("Used arena size: 53212 bytes", 53212),
        ("arena used bytes 53212", 53212),
    ],
)
def test_plain_arena_used_prints(line, value):
    log = parse_lines(line)
    assert log.kind == "mcu-tflm"
    assert (run0(log)["reported_bytes"], run0(log)["reported_line"]) == (value, 1)
    assert log.summary()["runs"][0]["memory"]["peak_bytes"] == value


# ---------------------------------------------------------------------------------- Vela table by its layout
_VELA_COLUMNS = (
    "TFLite_operator",
    "NNG Operator",
    "SRAM Usage",
    "Peak%",
    "Op Cycles",
    "Network%",
    "NPU",
    "SRAM AC",
    "DRAM AC",
    "OnFlash AC",
    "OffFlash AC",
    "MAC Count",
    "Network%",
    "Util%",
    "Name",
)


def _vela_table() -> list[str]:
    (path,) = MCU.glob("13-*.txt")
    return path.read_text(encoding="utf-8").split("\n")


@pytest.mark.parametrize("column", range(2, 14))
def test_vela_row_with_an_empty_cell_is_read_by_the_rule_spans(column):
    """Vela right-aligns its figures: emptying any one cell leaves every other figure in its column."""
    lines = _vela_table()
    row = lines[4]
    full = parse_lines(*lines[:5]).frames["mcu_layers"].iloc[-1]
    token = list(re.finditer(r"\S+", row))[column]
    emptied = row[: token.start()] + " " * len(token.group()) + row[token.end() :]
    layer = parse_lines(*lines[:4], emptied).frames["mcu_layers"].iloc[-1]
    figures = {
        "SRAM Usage": "working_set_bytes",
        "Peak%": "peak_percent",
        "Op Cycles": "cycles",
        "MAC Count": "macs",
    }
    for name, field in figures.items():
        expected = None if _VELA_COLUMNS[column] == name else plain(full[field])
        assert plain(layer[field]) == expected, (name, column)
    assert layer["name"] == full["name"]


def test_vela_rows_cut_short_or_foreign_inside_the_table():
    lines = _vela_table()
    log = parse_lines(*lines[:4], lines[4][:60], lines[4][:75], "this is not a row of the table")
    layers = log.frames["mcu_layers"]
    # Cut before the Name column: the last figure on the line may be cut in its digits and is not read.
    assert [plain(v) for v in layers["working_set_bytes"]] == [629616, 629616]
    assert [plain(v) for v in layers["peak_percent"]] == [None, 86.18]
    assert [plain(v) for v in layers["cycles"]] == [None, 1889913]  # the cut `4` of `46.80`: not read
    unparsed = log.frames["unparsed"]
    assert unparsed["line"].tolist() == [7]
    assert unparsed["reason"].iloc[0] == "vela_layers row that does not fit the header's layout"


def test_a_row_cut_inside_an_st_table_is_unparsed_with_its_table():
    (path,) = MCU.glob("11-*.txt")
    lines = path.read_text(encoding="utf-8").split("\n")
    start = lines.index("C-Arrays (13)")
    rows = lines[start : start + 6]
    cut = rows[5][:30]  # `0      _Relu_1_output_0_bias  ` without item/size, domain and c-type
    log = parse_lines(*rows[:5], cut)
    assert [plain(v) for v in log.frames["buffers"]["size_bytes"]] == [256]
    unparsed = log.frames["unparsed"]
    assert unparsed[["line", "reason"]].values.tolist() == [
        [6, "st_carrays row that does not fit the header's layout"]
    ]


def test_st_carray_rows_missed_by_the_row_terminal_are_read_by_the_columns():
    (path,) = MCU.glob("11-*.txt")
    lines = path.read_text(encoding="utf-8").split("\n")
    start = lines.index("C-Arrays (13)")
    head, row = lines[start : start + 4], lines[start + 12]  # `8  input_output  784/784 ... s8  /input`
    no_type = row[:91] + "  " + row[93:]  # the c-type cell empty (the terminal needs one), the comment kept
    cut_in_type = lines[start + 4][:95]  # `cons`: the last cell may be cut, so it is not read
    cut_in_pool = lines[start + 4][:73]  # `weights/wei`: the pool may be cut, the row cannot be read
    log = parse_lines(*head, no_type, cut_in_type, cut_in_pool)
    buffers = log.frames["buffers"]
    assert buffers[["buffer_id", "size_bytes", "domain", "mem_pool", "line"]].values.tolist() == [
        [8, 784, "activations", "POOL_0_DTCMRAM", 5],
        [0, 256, "weights", "weights", 6],
    ]
    assert log.frames["unparsed"]["line"].tolist() == [7]
