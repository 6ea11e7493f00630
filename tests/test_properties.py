"""Mangled input never escapes as anything but logscope's own errors."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import logscope
from logscope.io import decode_bytes
from tests.conftest import MOBILENET

REAL = MOBILENET.read_bytes()
LINES = REAL.decode("utf-8").splitlines()


def _parse_bytes(data: bytes) -> None:
    try:
        log = logscope.parse_text(decode_bytes(data, "<mangled>"))
    except logscope.LogscopeError:
        return
    counts = log.line_counts
    assert counts["total"] == sum(v for k, v in counts.items() if k != "total")
    log.summary()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, len(REAL)), st.integers(0, len(REAL)))
def test_truncated_and_sliced_real_log(a, b):
    _parse_bytes(REAL[min(a, b) : max(a, b)])


@settings(max_examples=150, deadline=None)
@given(st.binary(max_size=4000))
def test_random_bytes(data):
    _parse_bytes(data)


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.sampled_from(LINES), max_size=60),
    st.lists(st.text(max_size=200), max_size=20),
    st.sampled_from(["utf-8", "utf-16", "gb18030", "utf-8-sig"]),
    st.randoms(),
)
def test_shuffled_real_lines_mixed_with_noise_in_any_encoding(lines, noise, encoding, rnd):
    mixed = lines + noise
    rnd.shuffle(mixed)
    _parse_bytes("\n".join(mixed).encode(encoding, errors="replace"))


@settings(max_examples=30, deadline=None)
@given(st.sampled_from(LINES), st.integers(1000, 200_000))
def test_huge_lines(line, width):
    _parse_bytes((line + "x" * width + "\n" + line[: width % 80]).encode())


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(LINES), st.text(max_size=40), st.integers(0, 200))
def test_corrupted_table_rows(line, junk, pos):
    _parse_bytes((line[:pos] + junk + line[pos:]).encode("utf-8", errors="replace"))
