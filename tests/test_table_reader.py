"""The table reader, built from the formats: empty cells, collapsed spaces, rules, header-less rows."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from logscope.parsers.table import identify, layout_from_header, read_row

RANK = "OpType               CallNumber   CPUTime(us)  GPUTime(us)  NPUTime(us)  TotalTime(us)  TimeRatio(%)"
RANK_NAMES = (
    "OpType",
    "CallNumber",
    "CPUTime(us)",
    "GPUTime(us)",
    "NPUTime(us)",
    "TotalTime(us)",
    "TimeRatio(%)",
)
NUM = r"\d+"
PERF = (
    "Cycles(DDR/NPU/Total)    Time(us)     MacUsage(%)          WorkLoad(0/1/2)      RW(KB)       "
    "FullName        "
)
PERF_KINDS = {
    "Cycles(DDR/NPU/Total)": r"\d+/\d+/\d+",
    "Time(us)": NUM,
    "MacUsage(%)": r"\\|[\d.]+(?:/[\d.]+)*",
    "WorkLoad(0/1/2)": r"[\d.]+%(?:/[\d.]+%)*",
    "RW(KB)": r"[\d.]+",
}


def perf_layout(header: str = PERF):
    return layout_from_header(
        header,
        kinds=PERF_KINDS,
        nullable=("MacUsage(%)", "FullName"),
        rest=True,
        known=(*PERF_KINDS, "FullName"),
    )


def test_columns_come_from_the_header_spacing():
    layout = layout_from_header(RANK)
    assert layout.names == RANK_NAMES
    assert layout.starts == (0, 21, 34, 47, 60, 73, 88)


def test_multi_word_names_stay_one_column():
    layout = layout_from_header("OpType           Call Number     CPU Time(us)    NPU Time(us)")
    assert layout.names == ("OpType", "Call Number", "CPU Time(us)", "NPU Time(us)")


def test_collapsed_header_is_split_by_known_names():
    layout = layout_from_header(re.sub(" +", " ", RANK), known=RANK_NAMES)
    assert layout.names == RANK_NAMES and layout.starts is None


def test_segmented_rule_gives_boundaries():
    layout = layout_from_header("Name   Size", rule="------ -------")
    assert layout.starts == (0, 7)


def test_full_row_reads_token_by_token():
    layout = perf_layout()
    row = (
        "1091036/8294400/8294400  16130        2.41/0.00/0.00       100.0%/0.0%/0.0%     10802        Conv:/m"
    )
    assert read_row(layout, row) == (
        "1091036/8294400/8294400",
        "16130",
        "2.41/0.00/0.00",
        "100.0%/0.0%/0.0%",
        "10802",
        "Conv:/m",
    )


def test_empty_mac_usage_cell_is_na_by_position():
    layout = perf_layout()
    row = "623388/0/623388          1195                              100.0%/0.0%/0.0%     7200         S:/m"
    assert read_row(layout, row) == ("623388/0/623388", "1195", None, "100.0%/0.0%/0.0%", "7200", "S:/m")


def test_empty_cells_with_collapsed_spaces_are_placed_by_kind():
    layout = perf_layout(re.sub(" +", " ", PERF))
    assert read_row(layout, "623388/0/623388 1195 100.0%/0.0%/0.0% 7200") == (
        "623388/0/623388",
        "1195",
        None,
        "100.0%/0.0%/0.0%",
        "7200",
        None,
    )


def test_a_row_that_fits_nowhere_is_none():
    layout = perf_layout()
    assert read_row(layout, "abc def") is None
    assert read_row(layout, "1/2/3 x y z w v u") is None


def test_headerless_rows_are_identified_by_shape_and_marked():
    other = layout_from_header("A  B", kinds={"A": r"[a-z]+", "B": r"[a-z]+"})
    rows = [
        "0/0/0  2574  \\  0.0%/0.0%/0.0%  295  Gather:785",
        "45457/0/45457  455  \\  100.0%/0.0%/0.0%  525  Split:x",
    ]
    found = identify(rows, [other, perf_layout()])
    assert found is not None and found.headerless and found.names[0] == "Cycles(DDR/NPU/Total)"
    assert identify(["hello world"], [perf_layout()]) is None


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.integers(0, 10**6), min_size=5, max_size=5),
    st.booleans(),
    st.booleans(),
    st.booleans(),
)
def test_any_row_of_the_format_reads_back(values, empty_mac, empty_name, collapse):
    """Rows generated from the format, with optional empty cells and collapsed spacing, read back exactly."""
    ddr, npu, time_us, rw, mac = values
    cells = [
        f"{ddr}/{npu}/{max(ddr, npu)}",
        str(time_us),
        None if empty_mac else f"{mac / 100:.2f}",
        "100.0%/0.0%/0.0%",
        str(rw),
        None if empty_name else "Conv:x",
    ]
    layout = perf_layout()
    widths = [25, 13, 21, 21, 13, 16]
    text = "".join((c or "").ljust(w) for c, w in zip(cells, widths, strict=True))
    if collapse:
        text = re.sub(" +", " ", text)
        layout = perf_layout(re.sub(" +", " ", PERF))
    assert read_row(layout, text) == tuple(cells)
