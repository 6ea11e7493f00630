"""Tests for logscope.io, the one place logscope reads bytes.

Each section matches one requirement of the module: compression, encodings, binary input,
line splitting and numbering, ANSI/backspace debris, tqdm glue, markdown dedent, whitespace,
and property tests (arbitrary bytes never crash; the fast and slow paths agree).
"""

from __future__ import annotations

import bz2
import codecs
import contextlib
import dataclasses
import gzip
import hashlib
import io
import lzma
import os
import random
import stat
import threading
import tracemalloc
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from logscope.errors import InputError, LogscopeError
from logscope.io import LogStream, LogText, decode_bytes, read_log

GLUED = "I Loading : 100%|█████| 96/100 [00:00<00:00, 240.65it/s]E build: inputs or 'outputs' must be set!"
BAR = "I Loading : 100%|█████| 96/100 [00:00<00:00, 240.65it/s]"
GLUED_MSG = "E build: inputs or 'outputs' must be set!"

COMPRESSORS: dict[str, Callable[[bytes], bytes]] = {
    "gzip": gzip.compress,
    "xz": lzma.compress,  # FORMAT_XZ is the default
    "bz2": bz2.compress,
}

SAMPLE_LOG = (
    "I rknn-toolkit2 version: 1.6.0\n"
    "W load_onnx: It is recommended onnx opset 19, but your onnx model opset is 12!\n"
    "\n"
    "E build: Catch exception when building RKNN model!\n"
    "    Traceback (most recent call last):\n"
    '      File "rknn/api/rknn_base.py", line 1962, in build\n'
)


def lines_of(data: bytes) -> list[str]:
    return decode_bytes(data).lines


def write(tmp_path: Path, name: str, data: bytes) -> Path:
    p = tmp_path / name
    p.write_bytes(data)
    return p


def noisy_payload(n: int = 200_000, seed: int = 0) -> bytes:
    """Text that does not compress to nothing, so corruption in the middle hits real data."""
    rnd = random.Random(seed)
    words = ["alloc", "free", "tensor", "0x2000", "E", "I", "W", "layer", "conv", "ok"]
    out: list[str] = []
    size = 0
    while size < n:
        line = " ".join(rnd.choice(words) + str(rnd.randrange(10**6)) for _ in range(8))
        out.append(line)
        size += len(line) + 1
    return ("\n".join(out) + "\n").encode()


# ----------------------------------------------------------------------------------------------
# 1. Compression, files, size cap
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", sorted(COMPRESSORS))
def test_compression_detected_by_magic_not_extension(tmp_path: Path, kind: str) -> None:
    raw = SAMPLE_LOG.encode()
    p = write(tmp_path, "build.log.txt", COMPRESSORS[kind](raw))  # misleading name on purpose
    t = read_log(p)
    assert t.compression == kind
    assert t.lines == SAMPLE_LOG.split("\n")[:-1]
    assert t.numbers == list(range(1, 7))
    assert t.sha256 == hashlib.sha256(raw).hexdigest()  # of the decompressed bytes
    assert t.size_bytes == len(raw)


@pytest.mark.parametrize("kind", sorted(COMPRESSORS))
def test_decode_bytes_decompresses_too(kind: str) -> None:
    t = decode_bytes(COMPRESSORS[kind](b"a\nb\n"))
    assert (t.lines, t.compression, t.path) == (["a", "b"], kind, "<bytes>")


def test_plain_file_with_gz_extension_is_read_as_plain(tmp_path: Path) -> None:
    t = read_log(write(tmp_path, "trace.gz", b"already unpacked\n"))
    assert t.compression is None
    assert t.lines == ["already unpacked"]


def test_concatenated_gzip_members_are_all_read() -> None:
    data = gzip.compress(b"first\n") + gzip.compress(b"second\n")
    assert lines_of(data) == ["first", "second"]


def test_text_starting_with_bzh_is_not_bz2() -> None:
    t = decode_bytes(b"BZh9 is not an archive header\n")
    assert t.compression is None
    assert t.lines == ["BZh9 is not an archive header"]


@pytest.mark.parametrize("kind", sorted(COMPRESSORS))
def test_truncated_archive_is_input_error(tmp_path: Path, kind: str) -> None:
    blob = COMPRESSORS[kind](noisy_payload())
    p = write(tmp_path, "cut.log", blob[: len(blob) // 2])
    with pytest.raises(InputError) as info:
        read_log(p)
    msg = str(info.value)
    assert kind in msg and "\n" not in msg


@pytest.mark.parametrize("kind", sorted(COMPRESSORS))
def test_corrupt_archive_is_input_error(kind: str) -> None:
    blob = bytearray(COMPRESSORS[kind](noisy_payload()))
    mid = len(blob) // 2
    for i in range(mid, mid + 16):
        blob[i] ^= 0x5A
    with pytest.raises(InputError) as info:
        decode_bytes(bytes(blob), "x.log")
    msg = str(info.value)
    assert msg.startswith("x.log: ") and kind in msg and "\n" not in msg


@pytest.mark.parametrize(
    "data", [b"\x1f\x8b", b"\x1f\x8b\x08junk", b"\xfd7zXZ\x00", b"\xfd7zXZ\x00garbage!", b"BZh9"]
)
def test_header_only_or_garbage_archive(data: bytes) -> None:
    with pytest.raises(InputError):
        decode_bytes(data)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such file"):
        read_log(tmp_path / "nope.log")


def test_directory(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="directory"):
        read_log(tmp_path)


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0, reason="root can read anything")
def test_unreadable_file(tmp_path: Path) -> None:
    p = write(tmp_path, "secret.log", b"x\n")
    p.chmod(0)
    with pytest.raises(InputError, match="permission"):
        read_log(p)


def test_input_error_is_a_logscope_error(tmp_path: Path) -> None:
    with pytest.raises(LogscopeError):
        read_log(tmp_path / "nope.log")


def test_plain_file_over_max_bytes(tmp_path: Path) -> None:
    p = write(tmp_path, "big.log", b"x" * 1000 + b"\n")
    with pytest.raises(InputError, match="limit"):
        read_log(p, max_bytes=1000)
    assert read_log(p, max_bytes=1001).lines == ["x" * 1000]
    with pytest.raises(InputError, match="limit"):
        decode_bytes(b"x" * 1001, max_bytes=1000)


def _gzip_bomb(size: int) -> bytes:
    buf = io.BytesIO()
    # Text, not zeros: NUL bytes are refused as binary from the first block, before the cap matters.
    block = (b"I rknn building\n" * 65536)[: 1 << 20]
    with gzip.GzipFile(fileobj=buf, mode="wb", compresslevel=9) as gz:
        for _ in range(size >> 20):
            gz.write(block)
    return buf.getvalue()


@pytest.mark.parametrize("kind", sorted(COMPRESSORS))
def test_decompressed_size_over_max_bytes(tmp_path: Path, kind: str) -> None:
    blob = COMPRESSORS[kind](b"A" * (8 << 20))
    with pytest.raises(InputError, match="limit"):
        read_log(write(tmp_path, "bomb.bin", blob), max_bytes=1 << 20)
    assert len(read_log(write(tmp_path, "ok.bin", blob), max_bytes=8 << 20).lines) == 1


def test_bomb_is_stopped_early_without_inflating_it() -> None:
    bomb = _gzip_bomb(256 << 20)  # 256 MiB of text in about 250 KiB
    assert len(bomb) < 1 << 20
    tracemalloc.start()
    try:
        with pytest.raises(InputError, match="decompression bomb"):
            decode_bytes(bomb, max_bytes=1 << 20)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 32 << 20, f"peak {peak} bytes: decompression was not streamed"


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
def test_compressed_input_from_a_pipe(tmp_path: Path) -> None:
    """Pipes cannot seek back after the magic bytes are sniffed; they must still work."""
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    blob = gzip.compress(SAMPLE_LOG.encode())

    def feed() -> None:
        with open(fifo, "wb") as w:
            w.write(blob)

    writer = threading.Thread(target=feed)
    writer.start()
    try:
        t = read_log(fifo)
    finally:
        writer.join(timeout=10)
    assert t.compression == "gzip"
    assert t.lines[0] == "I rknn-toolkit2 version: 1.6.0"


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
@pytest.mark.parametrize("stream", [False, True], ids=["read_log", "LogStream"])
def test_a_writer_done_before_the_first_read_loses_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, stream: bool
) -> None:
    """A writer may write everything and close between the reader's open and its first read (the
    reader opens without blocking to see what the file is first). What it wrote is read; the reader
    does not wait for a second writer."""
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    real_fstat = os.fstat

    def fstat_then_write(fd: int) -> os.stat_result:
        found = real_fstat(fd)
        if stat.S_ISFIFO(found.st_mode):  # the reader is open: a writer's open succeeds at once
            writer = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
            os.write(writer, SAMPLE_LOG.encode())
            os.close(writer)
        return found

    monkeypatch.setattr(os, "fstat", fstat_then_write)
    got: list[list[str]] = []

    def read() -> None:
        got.append(read_log(fifo).lines if not stream else [x for lines, _ in LogStream(fifo) for x in lines])

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(timeout=10)
    if reader.is_alive():  # let it go: a writer that closes at once ends its wait
        os.close(os.open(fifo, os.O_WRONLY))
        pytest.fail("the reader waited for a second writer: the first one's data was lost")
    assert got and got[0][0] == "I rknn-toolkit2 version: 1.6.0"


def test_metadata_fields(tmp_path: Path) -> None:
    p = write(tmp_path, "m.log", b"a\n")
    t = read_log(p)
    assert t.path == str(p)
    assert read_log(str(p)).path == str(p)
    assert (t.encoding, t.compression, t.size_bytes, t.notes) == ("utf-8", None, 2, ())
    assert t.sha256 == hashlib.sha256(b"a\n").hexdigest()
    with pytest.raises(dataclasses.FrozenInstanceError):
        t.path = "other"  # type: ignore[misc]
    assert "lines" not in repr(t)  # a 50 MB log must not end up in a traceback


# ----------------------------------------------------------------------------------------------
# 2. Encodings
# ----------------------------------------------------------------------------------------------


def test_utf8() -> None:
    t = decode_bytes("I 内存 ok ✓\n".encode())
    assert (t.lines, t.encoding, t.notes) == (["I 内存 ok ✓"], "utf-8", ())


def test_utf8_bom_is_removed() -> None:
    t = decode_bytes(codecs.BOM_UTF8 + b"I first\n")
    assert t.lines == ["I first"]
    assert t.encoding == "utf-8-sig"


@pytest.mark.parametrize(
    "data",
    [
        codecs.BOM_UTF16_LE + "E 已杀死\r\nI ok\r\n".encode("utf-16-le"),
        codecs.BOM_UTF16_BE + "E 已杀死\r\nI ok\r\n".encode("utf-16-be"),
    ],
)
def test_utf16_with_bom(data: bytes) -> None:
    t = decode_bytes(data)
    assert t.lines == ["E 已杀死", "I ok"]
    assert t.encoding == "utf-16"


@pytest.mark.parametrize("codec", ["utf-16-le", "utf-16-be"])
def test_utf16_without_bom(codec: str) -> None:
    t = decode_bytes("PS> python convert.py\nE build failed\n".encode(codec))
    assert t.lines == ["PS> python convert.py", "E build failed"]
    assert t.encoding == codec
    assert any("no byte-order mark" in n for n in t.notes)


def test_gbk_chinese_windows_console() -> None:
    text = "I rknn building ...\r\nE 已杀死\r\n"
    t = decode_bytes(text.encode("gbk"))
    assert t.lines == ["I rknn building ...", "E 已杀死"]
    assert t.encoding == "gb18030"
    assert "decoded as gb18030" in t.notes


def test_latin1_fallback_never_fails() -> None:
    t = decode_bytes(b"caf\xe9 ok\nna\xefve\n")  # not utf-8; 0xE9 0x20 is not gb18030 either
    assert t.lines == ["café ok", "naïve"]
    assert t.encoding == "latin-1"


def test_utf8_cut_mid_character_stays_utf8() -> None:
    """`head -c` cuts a character in half; the rest must not be re-decoded as mojibake."""
    data = ("I 模型加载完成 内存分配成功\n" * 5).encode() + "E 内存".encode()[:-1]
    t = decode_bytes(data)
    assert t.encoding == "utf-8"
    assert t.lines[0] == "I 模型加载完成 内存分配成功"
    assert t.lines[-1] == "E 内\ufffd"
    assert any("replaced by U+FFFD" in n for n in t.notes)


def test_undecodable_never_raises_unicode_error() -> None:
    for data in (b"\xff\xfe\xff", b"\xfe\xff\x00", b"\x81\x82\x83 text\n", bytes(range(0x80, 0x100))):
        with contextlib.suppress(InputError):
            decode_bytes(data)


# ----------------------------------------------------------------------------------------------
# 3. Binary input
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "data",
    [
        b"\x7fELF\x02\x01\x01\x00" + bytes(64),  # NUL bytes
        b"RKNN\x00\x00\x00\x01 model blob",
        b"abc" + bytes(range(1, 8)) * 3,  # mostly control characters
        random.Random(0).randbytes(4096),
        bytes(range(256)) * 8,
    ],
)
def test_binary_is_refused(data: bytes) -> None:
    with pytest.raises(InputError, match="looks binary"):
        decode_bytes(data)


def test_binary_inside_gzip_is_refused() -> None:
    with pytest.raises(InputError, match="looks binary"):
        decode_bytes(gzip.compress(bytes(1000)))


def test_empty_input_is_zero_lines(tmp_path: Path) -> None:
    t = read_log(write(tmp_path, "empty.log", b""))
    assert (t.lines, t.numbers, t.size_bytes) == ([], [], 0)
    assert t.sha256 == hashlib.sha256(b"").hexdigest()
    assert decode_bytes(gzip.compress(b"")).lines == []


def test_a_few_control_characters_are_fine() -> None:
    t = decode_bytes(b"bell\x07 rings once in a long enough line\n")
    assert t.lines == ["bell\x07 rings once in a long enough line"]


def test_stray_nul_far_from_the_start_is_removed() -> None:
    data = b"I ok\n" * 20_000 + b"E uart gl\x00itch\n"
    t = decode_bytes(data)
    assert t.lines[-1] == "E uart glitch"
    assert t.numbers[-1] == 20_001
    assert "removed 1 NUL character" in t.notes


# ----------------------------------------------------------------------------------------------
# 4. Line splitting and numbering
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "lines"),
    [
        (b"", []),
        (b"\n", [""]),
        (b"a", ["a"]),
        (b"a\n", ["a"]),  # a final newline does not create an extra empty line
        (b"a\n\n", ["a", ""]),
        (b"a\nb", ["a", "b"]),
        (b"a\r\nb\r\n", ["a", "b"]),
        (b"a\r\nb\nc", ["a", "b", "c"]),
        (b"\r\n", [""]),
        (b"\r\n\r\n", ["", ""]),
        (b"abc\r\n", ["abc"]),
        (b"abc\r\r\n", ["abc"]),
    ],
)
def test_line_endings_and_trailing_newline_convention(data: bytes, lines: list[str]) -> None:
    t = decode_bytes(data)
    assert t.lines == lines
    assert t.numbers == list(range(1, len(lines) + 1))


def test_carriage_return_frames_keep_the_physical_number() -> None:
    data = b"start\n\r  0%|  | 0/2\r 50%|# | 1/2\r100%|##| 2/2\n\nend\n"
    t = decode_bytes(data)
    assert t.lines == ["start", "  0%|  | 0/2", " 50%|# | 1/2", "100%|##| 2/2", "", "end"]
    assert t.numbers == [1, 2, 2, 2, 3, 4]
    assert "split 3 carriage-return frames (from 1 physical line)" in t.notes


def test_empty_and_blank_frames_are_dropped_but_blank_lines_stay() -> None:
    data = b"\r\r\n\rdone\r    \r\n\n"
    t = decode_bytes(data)
    assert t.lines == ["", "done", ""]
    assert t.numbers == [1, 2, 3]


def test_numbering_after_dirty_lines_in_a_big_clean_log() -> None:
    body = [f"I line {i}" for i in range(1, 5001)]
    body[999] = "\x1b[31mI line 1000\x1b[0m"
    body[2999] = "I line 3000\rI line 3000 again"
    t = decode_bytes(("\n".join(body) + "\n").encode())
    assert len(t.lines) == 5001
    assert t.lines[999] == "I line 1000" and t.numbers[999] == 1000
    assert t.lines[2999:3001] == ["I line 3000", "I line 3000 again"]
    assert t.numbers[2999:3002] == [3000, 3000, 3001]
    assert t.lines[-1] == "I line 5000" and t.numbers[-1] == 5000


# ----------------------------------------------------------------------------------------------
# 5. ANSI escape sequences and backspaces
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        ("\x1b[1;31mE build failed\x1b[0m", "E build failed"),
        ("\x1b[32mI\x1b[39m ok\x1b[K", "I ok"),
        ("\x1b[2K\x1b[1G I progress", " I progress"),
        ("\x1b]0;rknn convert\x07I title set", "I title set"),
        ("\x1b]8;;https://x.y\x1b\\link\x1b]8;;\x1b\\ text", "link text"),
        ("\x1b(BI charset\x1b7\x1b8", "I charset"),
        ("\x1b[AI cursor up", "I cursor up"),
        ("I cut escape \x1b", "I cut escape"),
    ],
)
def test_ansi_sequences_removed(raw: str, clean: str) -> None:
    t = decode_bytes((raw + "\n").encode())
    assert t.lines == [clean]
    assert "stripped ANSI codes on 1 line" in t.notes


def test_backspaces_removed() -> None:
    t = decode_bytes(b"spin |\x08/\x08-\x08\\\x08 done\n")
    assert t.lines == ["spin |/-\\ done"]
    assert "removed backspaces on 1 line" in t.notes


def test_ansi_inside_carriage_return_frames() -> None:
    t = decode_bytes(b"\x1b[32m 50%\x1b[0m\r\x1b[32m100%\x1b[0m\n")
    assert t.lines == [" 50%", "100%"]


# ----------------------------------------------------------------------------------------------
# 6. tqdm debris
# ----------------------------------------------------------------------------------------------


def test_log_line_glued_to_progress_bar_is_split() -> None:
    t = decode_bytes(("I before\n" + GLUED + "\nI after\n").encode())
    assert t.lines == ["I before", BAR, GLUED_MSG, "I after"]
    assert t.numbers == [1, 2, 2, 3]
    assert "split 1 log line glued to progress bars" in t.notes


def test_glue_after_seconds_per_iteration_and_after_frames() -> None:
    data = "\r  0%|  | 0/3 [00:00<?, ?it/s]\r 33%|# | 1/3 [00:02<00:04, 2.01s/it]W quantize: slow\n"
    t = decode_bytes(data.encode())
    assert t.lines == [
        "  0%|  | 0/3 [00:00<?, ?it/s]",
        " 33%|# | 1/3 [00:02<00:04, 2.01s/it]",
        "W quantize: slow",
    ]
    assert t.numbers == [1, 1, 1]


@pytest.mark.parametrize(
    "line",
    [
        "100%|##| 2/2 [00:00<00:00, 9.1it/s]Error text",  # no "<level> " prefix
        "100%|##| 2/2 [00:00<00:00, 9.1it/s]E  double space",  # level not followed by non-space
        "100%|##| 2/2 [00:00<00:00, 9.1it/s]X other: level",  # not a D/I/W/E level
        "100%|##| 2/2 [00:00<00:00, 9.1it/s] E spaced",  # not glued
        "100%|##| 2/2 [00:00<00:00, 9.1it/s]",
        "I Loading :   0%|          | 0/I Loading : 100%|█████| 96/100 [00:00<00:00, 240.65it/s]",
    ],
)
def test_things_that_are_not_glue_are_left_alone(line: str) -> None:
    assert lines_of((line + "\n").encode()) == [line.rstrip()]


# ----------------------------------------------------------------------------------------------
# 7. Markdown-indented copies
# ----------------------------------------------------------------------------------------------


def test_markdown_indented_copy_is_dedented() -> None:
    indented = "".join("    " + ln + "\n" if ln else "\n" for ln in SAMPLE_LOG.split("\n")[:-1])
    t = decode_bytes(indented.encode())
    assert t.lines == SAMPLE_LOG.split("\n")[:-1]  # continuation lines keep their relative indent
    assert "dedented 4 spaces" in t.notes


def test_common_indentation_is_the_minimum() -> None:
    t = decode_bytes(b"        I a\n          cont\n\n        I b\n")
    assert t.lines == ["I a", "  cont", "", "I b"]
    assert "dedented 8 spaces" in t.notes


def test_tab_indented_copy() -> None:
    t = decode_bytes(b"\tI a\n\t    cont\n")
    assert t.lines == ["I a", "    cont"]
    assert "dedented 1 tab" in t.notes


def test_mixed_tab_and_space_indented_copy_loses_one_level() -> None:
    t = decode_bytes(b"\tI a\n        cont\n")
    assert t.lines == ["I a", "    cont"]


def test_one_line_at_column_zero_blocks_dedent() -> None:
    data = b"I top\n    continuation\n    more\n"
    t = decode_bytes(data)
    assert t.lines == ["I top", "    continuation", "    more"]
    assert not any(n.startswith("dedented") for n in t.notes)


def test_three_spaces_is_not_a_markdown_indent() -> None:
    assert lines_of(b"   a\n   b\n") == ["   a", "   b"]


def test_dedent_of_a_glued_tqdm_line() -> None:
    data = ("    I before\n    " + GLUED + "\n").encode()
    assert lines_of(data) == ["I before", BAR, GLUED_MSG]


# ----------------------------------------------------------------------------------------------
# 8. Whitespace
# ----------------------------------------------------------------------------------------------


def test_trailing_whitespace_stripped_leading_kept() -> None:
    t = decode_bytes(b"I top \t\n  cont  \n\t\n")
    assert t.lines == ["I top", "  cont", ""]


# ----------------------------------------------------------------------------------------------
# 10. Properties
# ----------------------------------------------------------------------------------------------


def _physical_count(text: str) -> int:
    """Physical lines under the module's convention: \\n ends a line, \\r\\n contains a \\n."""
    if not text:
        return 0
    return text.count("\n") + (0 if text.endswith("\n") else 1)


def _check_invariants(t: LogText) -> None:
    assert len(t.lines) == len(t.numbers)
    assert all(a <= b for a, b in zip(t.numbers, t.numbers[1:], strict=False))
    for line in t.lines:
        assert "\n" not in line and "\r" not in line
        assert line == line.rstrip(" \t")


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=512))
def test_arbitrary_bytes_give_logtext_or_input_error(data: bytes) -> None:
    try:
        t = decode_bytes(data)
    except InputError:
        return
    _check_invariants(t)
    if t.numbers:
        assert t.numbers[0] >= 1
        assert t.numbers[-1] <= data.count(b"\n") + 1


@settings(max_examples=200, deadline=None)
@given(st.sampled_from([b"\x1f\x8b", b"\x1f\x8b\x08\x00", b"\xfd7zXZ\x00", b"BZh91AY&SY"]), st.binary())
def test_garbage_behind_archive_magic_is_input_error(magic: bytes, rest: bytes) -> None:
    try:
        t = decode_bytes(magic + rest)
    except InputError as exc:
        assert "\n" not in str(exc)
        return
    _check_invariants(t)  # a valid archive by luck is fine too


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(sorted(COMPRESSORS)), st.binary(max_size=300), st.data())
def test_truncated_archives_always_fail_cleanly(kind: str, payload: bytes, data: st.DataObject) -> None:
    blob = COMPRESSORS[kind](payload)
    cut = data.draw(st.integers(min_value=10, max_value=len(blob) - 1))
    with pytest.raises(InputError):
        decode_bytes(blob[:cut])


_CLEAN_CHARS = st.one_of(
    st.characters(exclude_categories=("Cs", "Cc")),
    st.sampled_from(["\n", " ", "\t", "a", "I", "E"]),
)


def _clean_text_ok(text: str) -> bool:
    """Texts for which the module should do nothing beyond split + rstrip."""
    if text.startswith(("\ufeff", "BZh")) or "it/s]" in text or "s/it]" in text:
        return False
    nonblank = [ln for ln in text.split("\n") if ln.strip(" \t")]
    return not (nonblank and all(ln.startswith(("    ", "\t")) for ln in nonblank))


def _expected_lines(text: str) -> list[str]:
    if not text:
        return []
    parts = text.split("\n")
    if text.endswith("\n"):
        parts.pop()  # convention: a final "\n" does not start an extra empty line
    return [p.rstrip(" \t") for p in parts]


@settings(max_examples=200, deadline=None)
@given(st.text(_CLEAN_CHARS, max_size=300))
def test_clean_text_is_split_on_newlines_only(text: str) -> None:
    assume(_clean_text_ok(text))
    t = decode_bytes(text.encode("utf-8"))
    expected = _expected_lines(text)
    assert t.lines == expected
    assert t.numbers == list(range(1, len(expected) + 1))
    assert t.encoding == "utf-8"


@settings(max_examples=200, deadline=None)
@given(st.text(_CLEAN_CHARS, max_size=200), st.data())
def test_slow_path_agrees_with_fast_path(text: str, data: st.DataObject) -> None:
    """CRLF endings, injected colour codes and compression must not change lines or numbers."""
    assume(_clean_text_ok(text) and text)
    clean = decode_bytes(text.encode())
    parts = text.split("\n")
    last = len(parts) - (2 if text.endswith("\n") else 1)  # after a final "\n" there is no line
    k = data.draw(st.integers(min_value=0, max_value=last))
    parts[k] = "\x1b[1;32m" + parts[k] + "\x1b[0m"
    variants = [
        "\n".join(parts).encode(),
        text.replace("\n", "\r\n").encode(),
        gzip.compress(text.encode()),
        codecs.BOM_UTF16_LE + text.encode("utf-16-le"),
    ]
    for variant in variants:
        other = decode_bytes(variant)
        assert (other.lines, other.numbers) == (clean.lines, clean.numbers)


_DEBRIS = st.sampled_from(
    [
        "\r",
        "\n",
        "\r\n",
        "\x1b",
        "\x1b[31m",
        "\x1b[0m",
        "\x1b[K",
        "\x1b]0;t\x07",
        "\x08",
        "\t",
        " ",
        "    ",
        "it/s]",
        "s/it]",
        "E x",
        "I ",
        "W",
        "a",
        "█",
        "[",
        "]",
        "|",
        "100%",
    ]
)


@settings(max_examples=200, deadline=None)
@given(st.lists(_DEBRIS, max_size=60).map("".join))
def test_terminal_debris_keeps_every_physical_line(text: str) -> None:
    t = decode_bytes(text.encode())
    _check_invariants(t)
    n = _physical_count(text)
    # Every physical line yields at least one logical line, and numbers never leave 1..n.
    assert sorted(set(t.numbers)) == list(range(1, n + 1))
    for line in t.lines:
        assert "\x1b" not in line and "\x08" not in line
