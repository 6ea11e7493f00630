"""Mangled MCU traces never escape as anything but logscope's own errors; peaks follow their definition."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import logscope
from logscope.io import decode_bytes
from logscope.parsers.mcu import parse_mcu
from logscope.rules import run_rules
from tests.regenerate_golden import mcu_fixtures
from tests.test_line_invariant import check_accounted, physical_lines

TRACES = mcu_fixtures()
BYTES = [p.read_bytes() for p in TRACES]
LINES = [line for data in BYTES for line in data.decode("utf-8").splitlines()]


def _parse_bytes(data: bytes) -> logscope.ParsedLog | None:
    try:
        log = logscope.parse_text(decode_bytes(data, "<mangled>"))
    except logscope.LogscopeError:
        return None
    counts = log.line_counts
    assert counts["total"] == sum(v for k, v in counts.items() if k != "total")
    json.dumps(log.summary())  # the contract stays serialisable
    return log


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(BYTES), st.integers(0, 30000), st.integers(0, 30000))
def test_truncated_and_sliced_traces(data, a, b):
    _parse_bytes(data[min(a, b) : max(a, b)])


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.sampled_from(LINES), max_size=80),
    st.lists(st.text(max_size=120), max_size=15),
    st.sampled_from(["utf-8", "utf-16", "gb18030", "utf-8-sig"]),
    st.randoms(),
)
def test_shuffled_trace_lines_mixed_with_noise_in_any_encoding(lines, noise, encoding, rnd):
    mixed = lines + noise
    rnd.shuffle(mixed)
    _parse_bytes("\n".join(mixed).encode(encoding, errors="replace"))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(LINES), min_size=1, max_size=20), st.text(max_size=30), st.integers(0, 120))
def test_corrupted_rows(lines, junk, pos):
    victim = lines[pos % len(lines)]
    lines[pos % len(lines)] = victim[:pos] + junk + victim[pos:]
    _parse_bytes("\n".join(lines).encode("utf-8", errors="replace"))


@settings(max_examples=30, deadline=None)
@given(st.sampled_from(LINES), st.integers(1000, 100_000))
def test_huge_lines(line, width):
    _parse_bytes((line + "9" * width + "\n" + line).encode())


OPS = st.lists(
    st.tuples(
        st.sampled_from(["Conv2D", "ReLU", "MaxPool", "Add", "FullyConnected"]), st.integers(-4000, 9000)
    ),
    min_size=1,
    max_size=30,
)


@settings(max_examples=100, deadline=None)
@given(st.lists(OPS, min_size=1, max_size=4), st.integers(0, 50_000), st.sampled_from(["", " B", "bytes"]))
def test_heap_trace_peak_is_the_first_op_reaching_the_highest_total(runs, baseline, unit):
    lines, expected = ["boot ok"], []
    for ops in runs:
        total = baseline + 60_000  # totals stay positive whatever the deltas
        lines.append(f"heap baseline: {total}{unit}")
        totals = []
        for i, (name, delta) in enumerate(ops):
            total += delta
            sign = "+" if delta > 0 else ""
            lines.append(f"Op[{i}] {name}: delta={sign}{delta}{unit}, total={total}{unit}")
            lines.append("app: tick")  # an interleaved print
            totals.append(total)
        peak = max(totals)
        expected.append((peak, totals.index(peak), baseline + 60_000, totals[-1]))
    log = _parse_bytes("\n".join(lines).encode())
    assert log is not None
    got = [
        (
            m["peak_bytes"],
            m["peak_op"]["index"] if m["peak_op"] else None,
            m["baseline_bytes"],
            m["final_bytes"],
        )
        for m in (r["memory"] for r in log.summary()["runs"])
    ]
    assert got == [(max(p, b), i if p >= b else None, b, f) for p, i, b, f in expected]
    assert log.line_counts["unparsed"] == 1 + sum(len(ops) for ops in runs)


# ---------------------------------------------------------------------------------- the line invariant
# Every physical line of an MCU trace lands in exactly one class, and the total is the physical count,
# under the damage copies of real traces suffer: a cell emptied, blanks collapsed, a row cut short,
# the header lines removed (checked with the same definition as tests/test_line_invariant.py).
TEXTS = [data.decode("utf-8") for data in BYTES]


def _mutate(text: str, how: str, where: int, pos: int) -> str:
    lines = text.split("\n")
    i = where % len(lines)
    line = lines[i]
    if how == "empty-cell":
        tokens = list(re.finditer(r"\S+", line))
        if tokens:
            t = tokens[pos % len(tokens)]
            lines[i] = line[: t.start()] + " " * len(t.group()) + line[t.end() :]
    elif how == "collapse":
        lines = [re.sub(r"[ \t]{2,}", " ", x) for x in lines]
    elif how == "cut":
        lines[i] = line[: pos % (len(line) + 1)]
    elif how == "no-header":
        lines = lines[1 + where % 8 :] or [""]
    return "\n".join(lines)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.sampled_from(TEXTS),
    st.lists(
        st.tuples(
            st.sampled_from(["empty-cell", "collapse", "cut", "no-header"]),
            st.integers(0, 10_000),
            st.integers(0, 200),
        ),
        min_size=1,
        max_size=4,
    ),
)
def test_every_line_accounted_for_under_mutation(text, mutations):
    for how, where, pos in mutations:
        text = _mutate(text, how, where, pos)
    # The MCU parser itself (detection may send a badly damaged trace elsewhere, which is not the point).
    check_accounted(parse_mcu(decode_bytes(text.encode("utf-8"), "<mutated>")), physical_lines(text))


@pytest.mark.parametrize("index", range(len(TRACES)), ids=[p.stem[:40] for p in TRACES])
def test_every_line_accounted_for_with_every_line_cut_in_half(index):
    """Each line cut at its middle (an 80-column console does worse): still one class per line."""
    text = "\n".join(line[: len(line) // 2] for line in TEXTS[index].split("\n"))
    check_accounted(parse_mcu(decode_bytes(text.encode("utf-8"), "<cut>")), physical_lines(text))


# Lines written from the formats in the rule cases (Vela placement, Mbed faults, Unity, ESP-IDF summaries,
# banners ...), mixed, cut and padded: the invariant holds and the rules run on whatever is read.
CASE_LINES = [
    line
    for path in sorted((Path(__file__).parent / "rules" / "cases").glob("MCU*.toml"))
    for case in tomllib.loads(path.read_text(encoding="utf-8"))["case"]
    for line in case["log"].split("\n")
]


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.sampled_from(CASE_LINES), min_size=1, max_size=25),
    st.lists(st.tuples(st.integers(0, 100), st.integers(0, 200), st.sampled_from(["cut", "pad", "junk"]))),
)
def test_format_lines_mixed_and_mangled(lines, damage):
    for where, pos, how in damage:
        i = where % len(lines)
        line = lines[i]
        cut = pos % (len(line) + 1)
        lines[i] = {"cut": line[:cut], "pad": line[:cut] + "   " + line[cut:], "junk": line[:cut] + "9" * 20}[
            how
        ]
    text = "\n".join(lines)
    check_accounted(parse_mcu(decode_bytes(text.encode("utf-8"), "<mixed>")), physical_lines(text))
    log = _parse_bytes(text.encode("utf-8"))
    if log is not None:
        run_rules(log)
