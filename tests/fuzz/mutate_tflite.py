"""TFLite model mutations for the fuzz harness: what a cut download, a bad converter or an attacker makes
of a flatbuffer.

A .tflite file is a flatbuffer: 32-bit offsets, vector lengths and scalars at 4-byte boundaries. The
mutations work on those words (a huge or negative length, count, dim, buffer or opcode index, an offset
pointing anywhere) and on the bytes (truncation, flips, a duplicated run), starting from the TFLM corpus
models in `fixtures/tflm-corpus/`.
"""

from __future__ import annotations

import random
import struct
from collections.abc import Callable

WORDS = (0, 1, 0x7FFF, 0x10000, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 0xFFFFFFFE, 0x40000000, 1_000_001)


def _word_offsets(data: bytearray) -> range:
    return range(8, max(8, len(data) - 4), 4)


def huge_words(data: bytearray, rng: random.Random) -> bytearray:
    """A few 32-bit words (lengths, counts, dims, indices, offsets) set to extreme values."""
    offsets = _word_offsets(data)
    for _ in range(rng.randint(1, 6)):
        if offsets:
            at = rng.choice(offsets)
            data[at : at + 4] = struct.pack("<I", rng.choice(WORDS))
    return data


def small_words(data: bytearray, rng: random.Random) -> bytearray:
    """Words that hold small numbers (dims, indices, counts) nudged: -1, 0, +1, doubled, off by 2**31."""
    offsets = [at for at in _word_offsets(data) if struct.unpack_from("<i", data, at)[0] in range(1, 4096)]
    for _ in range(rng.randint(1, 8)):
        if offsets:
            at = rng.choice(offsets)
            value = struct.unpack_from("<i", data, at)[0]
            new = rng.choice((-1, 0, value + 1, value - 1, value * 2, value + 2**31, 2**31 - 1))
            data[at : at + 4] = struct.pack("<I", new % 2**32)
    return data


def truncate(data: bytearray, rng: random.Random) -> bytearray:
    """The file cut anywhere (a download or a copy stopped short)."""
    return data[: rng.randint(0, len(data))]


def flip_bytes(data: bytearray, rng: random.Random) -> bytearray:
    """A few random bytes replaced."""
    for _ in range(rng.randint(1, 16)):
        if data:
            data[rng.randrange(len(data))] = rng.randrange(256)
    return data


def duplicate_run(data: bytearray, rng: random.Random) -> bytearray:
    """A run of bytes repeated in place (offsets after it now point elsewhere)."""
    if not data:
        return data
    start = rng.randrange(len(data))
    chunk = data[start : start + rng.randint(1, 256)]
    return data[:start] + chunk * rng.randint(1, 4) + data[start:]


def bad_identifier(data: bytearray, rng: random.Random) -> bytearray:
    """The file identifier (`TFL3`) or the root offset changed."""
    if len(data) >= 8:
        at = rng.choice((0, 4))
        data[at : at + 4] = rng.choice((b"TFL2", b"\xff\xff\xff\xff", b"\x00\x00\x00\x00", b"ONNX"))
    return data


TFLITE_MUTATORS: dict[str, Callable[[bytearray, random.Random], bytearray]] = {
    "huge-words": huge_words,
    "small-words": small_words,
    "truncate": truncate,
    "flip-bytes": flip_bytes,
    "duplicate-run": duplicate_run,
    "bad-identifier": bad_identifier,
}


def mutate_tflite(data: bytes, rng: random.Random) -> tuple[bytes, list[str]]:
    """One case: one or two mutations of a model's bytes (the word mutations weighted up: they reach
    furthest past the loader's first checks). Returns (bytes, what was done)."""
    pool = [*sorted(TFLITE_MUTATORS), "huge-words", "small-words", "small-words"]
    names = [rng.choice(pool) for _ in range(rng.choice((1, 1, 2)))]
    out = bytearray(data)
    for name in names:
        out = TFLITE_MUTATORS[name](out, rng)
    return bytes(out), names
