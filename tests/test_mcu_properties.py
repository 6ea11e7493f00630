"""Mangled MCU traces never escape as anything but logscope's own errors; peaks follow their definition."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import logscope
from logscope.io import decode_bytes
from tests.regenerate_golden import mcu_fixtures

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
