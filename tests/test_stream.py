"""LogStream (block-by-block reading) must give exactly what read_log gives, and parse the same."""

from __future__ import annotations

import bz2
import gzip
import lzma
import random
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from logscope.errors import InputError
from logscope.io import LogStream, read_log
from logscope.parsers.rknn import parse_rknn, parse_rknn_blocks
from tests.conftest import FIXTURES, MOBILENET

ALL_FIXTURES = sorted(p for p in FIXTURES.rglob("*") if p.suffix in (".log", ".txt"))


def collect(stream: LogStream) -> tuple[list[str], list[int], int]:
    lines: list[str] = []
    numbers: list[int] = []
    blocks = 0
    for block_lines, block_numbers in stream:
        lines += block_lines
        numbers += block_numbers
        blocks += 1
    return lines, numbers, blocks


def assert_same_as_read_log(path: Path, block_bytes: int) -> int:
    stream = LogStream(path, block_bytes=block_bytes)
    lines, numbers, blocks = collect(stream)
    whole = read_log(path)
    assert lines == whole.lines
    assert numbers == whole.numbers
    assert stream.notes == whole.notes
    assert (stream.sha256, stream.size_bytes) == (whole.sha256, whole.size_bytes)
    assert (stream.encoding, stream.compression) == (whole.encoding, whole.compression)
    return blocks


@pytest.mark.parametrize("path", ALL_FIXTURES, ids=lambda p: p.name[:40])
def test_every_fixture_streams_like_read_log(path: Path) -> None:
    for block_bytes in (97, 4096):
        assert_same_as_read_log(path, block_bytes)


def debris_log(lines: int = 6000, seed: int = 1) -> bytes:
    """A >64 KiB log with every kind of debris read_log cleans, spread over the whole file."""
    rng = random.Random(seed)
    real = MOBILENET.read_bytes().splitlines()
    out = []
    for i in range(lines):
        pick = rng.random()
        line = real[i % len(real)]
        if pick < 0.05:
            line = (
                b"Analysing :  50%|##   | 1/2 [00:00<00:00, 9.1it/s]"
                b"\rAnalysing : 100%|####| 2/2 [00:00<00:00, 9.2it/s]"
            )
        elif pick < 0.08:
            line = (
                b"Quantizating : 100%|####| 2/2 [00:00<00:00, 7.0it/s]E build: glued error " + str(i).encode()
            )
        elif pick < 0.10:
            line = b"\x1b[33mW build: coloured " + str(i).encode() + b"\x1b[0m"
        elif pick < 0.12:
            line = line + b"   \t"
        elif pick < 0.13 and i > 2000:  # NULs near the start mean binary: read_log refuses those
            line = b"NUL\x00inside " + str(i).encode()
        elif pick < 0.14:
            line = b"x" * 9000  # longer than the small test blocks
        out.append(line + (b"\r\n" if pick > 0.9 else b"\n"))
    return b"".join(out)


@pytest.mark.parametrize("compress", [None, gzip.compress, bz2.compress, lzma.compress])
def test_debris_across_block_boundaries(tmp_path: Path, compress) -> None:
    data = debris_log()
    path = tmp_path / "debris.log"
    path.write_bytes(compress(data) if compress else data)
    blocks = assert_same_as_read_log(path, 4096)
    assert blocks > 10  # it really streamed


def test_file_without_final_newline_and_tiny_blocks(tmp_path: Path) -> None:
    path = tmp_path / "x.log"
    path.write_bytes(debris_log(3000).rstrip(b"\n"))
    assert assert_same_as_read_log(path, 1) > 1


@settings(max_examples=25, deadline=None)
@given(
    pieces=st.lists(
        st.sampled_from(["I rknn building ...", "", "  ", "\r", "\r\n", "\x1b[1m", "it/s]E x", "\t", "ab c"]),
        min_size=1,
        max_size=60,
    ),
    block=st.integers(min_value=1, max_value=300),
)
def test_random_debris_after_a_plain_head(tmp_path_factory, pieces: list[str], block: int) -> None:
    head = "I plain line\n" * 6000  # > 64 KiB so that streaming starts
    path = tmp_path_factory.mktemp("s") / "r.log"
    path.write_text(head + "\n".join(pieces), encoding="utf-8", newline="")
    assert_same_as_read_log(path, block)


def test_markdown_copy_falls_back_to_one_block(tmp_path: Path) -> None:
    path = tmp_path / "md.log"
    path.write_bytes(b"".join(b"    " + line + b"\n" for line in debris_log(3000).splitlines()))
    assert assert_same_as_read_log(path, 4096) == 1
    assert any("dedented" in note for note in read_log(path).notes)


def test_gbk_file_falls_back_to_one_block(tmp_path: Path) -> None:
    path = tmp_path / "gbk.log"
    path.write_bytes(("E build: 已杀死\n" * 9000).encode("gb18030"))
    assert assert_same_as_read_log(path, 4096) == 1


def test_invalid_utf8_after_the_first_block_is_replaced_and_noted(tmp_path: Path) -> None:
    path = tmp_path / "late.log"
    path.write_bytes(b"I ok\n" * 20000 + b"E bad \xff\xfe byte\n")
    stream = LogStream(path, block_bytes=4096)
    lines, _, _ = collect(stream)
    assert lines[-1] == "E bad \ufffd\ufffd byte"
    assert stream.notes == ("decoded as utf-8 with 2 invalid byte sequences replaced by U+FFFD",)


def test_stream_errors_are_input_errors(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such file"):
        collect(LogStream(tmp_path / "missing.log"))
    with pytest.raises(InputError, match="directory"):
        collect(LogStream(tmp_path))
    truncated = tmp_path / "t.log.gz"
    truncated.write_bytes(gzip.compress(debris_log())[:-40])
    with pytest.raises(InputError, match="gzip"):
        collect(LogStream(truncated, block_bytes=4096))
    big = tmp_path / "big.log"
    big.write_bytes(b"I x\n" * 50000)
    with pytest.raises(InputError, match="limit"):
        collect(LogStream(big, max_bytes=100_000))


def test_streamed_parse_equals_whole_parse(tmp_path: Path) -> None:
    """Ten builds of fixture 09 in one 1 MB file, parsed in 4 KiB blocks: identical frames."""
    path = tmp_path / "ten.log"
    path.write_bytes(MOBILENET.read_bytes() * 10)
    streamed = parse_rknn_blocks(stream := LogStream(path, block_bytes=4096), stream)
    whole = parse_rknn(read_log(path))
    assert streamed.summary() == whole.summary()
    assert len(streamed.frames["builds"]) == 10
    for name, frame in whole.frames.items():
        pd.testing.assert_frame_equal(streamed.frames[name], frame, obj=name)
