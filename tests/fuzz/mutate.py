"""Mutations of logs and ONNX models for the fuzz harness: what a careless paste, a cut upload, a
broken tool or an attacker makes of a real file.

Every mutator takes the text (as a list of lines) and a seeded `random.Random`, and returns new lines;
`mutate_log` chains one to three of them and may then change the bytes (encodings, NUL, compression).
The same seed gives the same case, so a failure is replayed with `benchmarks/fuzz.py --replay`.
"""

from __future__ import annotations

import bz2
import gzip
import lzma
import random
import re
from collections.abc import Callable

Lines = list[str]

_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?![\w.])")
_HEX = re.compile(r"0x[0-9a-fA-F]+")

EXTREME_NUMBERS = (
    "0",
    "-1",
    "-0",
    "2147483648",
    "4294967296",
    "9223372036854775807",
    "18446744073709551617",
    "99999999999999999999999999999999999999",
    "-99999999999999999999",
    "1e308",
    "1e999",
    "0.0000000001",
    "1" * 400,
)
NAN_INF = ("nan", "NaN", "inf", "-inf", "Infinity", "-Infinity", "INF", "nan%")
HUGE_HEX = (
    "0xffffffff",
    "0xffffffffffffffff",
    "0x10000000000000000",
    "0x7fffffffffffffffffffffffffffffff",
    "0x" + "f" * 200,
    "0x0",
)


def _pick_line(
    lines: Lines, rng: random.Random, wanted: re.Pattern[str] | Callable[[str], bool] | None = None
) -> int | None:
    """A random line, or a random one of those `wanted` (a pattern found in the line, or a test) holds for.
    A pattern must be linear to search: a case is as long as 2,000 copies of a line (`long_line`)."""
    if not lines:
        return None
    if wanted is None:
        return rng.randrange(len(lines))
    test = wanted.search if isinstance(wanted, re.Pattern) else wanted
    candidates = [i for i, line in enumerate(lines) if test(line)]
    return rng.choice(candidates) if candidates else None


def _has_three_words(line: str) -> bool:
    """Whether the line has three whitespace-separated words: what `\\S+\\s+\\S+\\s+\\S+` found, in one
    pass. That pattern, searched, backtracked over every start in a long run of non-space characters:
    quadratic in the line: over 428 s on one 140 KB line that `long_line` made of a rule `-----`.
    `str.split()` and the pattern's `\\s` split on the same (Unicode) whitespace."""
    return len(line.split(maxsplit=2)) == 3


def splice(lines: Lines, rng: random.Random, others: list[Lines]) -> Lines:
    """A run of lines from another log inserted or replacing a run here (a paste of two logs)."""
    other = rng.choice(others) if others else lines
    if not other:
        return lines
    start = rng.randrange(len(other))
    chunk = other[start : start + rng.randint(1, 60)]
    at = rng.randint(0, len(lines))
    drop = rng.choice((0, 0, rng.randint(0, 40)))
    return lines[:at] + chunk + lines[at + drop :]


def truncate(lines: Lines, rng: random.Random, others: list[Lines]) -> Lines:
    """The file cut anywhere, mid-line included (an upload limit, a killed process)."""
    text = "\n".join(lines)
    return text[: rng.randint(0, len(text))].split("\n")


def flip(lines: Lines, rng: random.Random, others: list[Lines]) -> Lines:
    """A few characters replaced by random ones (a noisy serial line)."""
    text = list("\n".join(lines))
    for _ in range(rng.randint(1, 12)):
        if text:
            text[rng.randrange(len(text))] = chr(rng.choice((rng.randint(32, 126), rng.randint(0, 0x2FF))))
    return "".join(text).split("\n")


def duplicate(lines: Lines, rng: random.Random, others: list[Lines]) -> Lines:
    """A run of lines repeated (a log printed twice, a loop that prints a table again)."""
    if not lines:
        return lines
    start = rng.randrange(len(lines))
    chunk = lines[start : start + rng.randint(1, 80)]
    at = rng.randint(0, len(lines))
    return lines[:at] + chunk * rng.randint(1, 6) + lines[at:]


def empty_cells(lines: Lines, rng: random.Random, others: list[Lines]) -> Lines:
    """Cells of table rows removed (a tool that prints nothing for a missing value)."""
    out = list(lines)
    for _ in range(rng.randint(1, 20)):
        i = _pick_line(out, rng, _has_three_words)
        if i is None:
            break
        cells = re.split(r"(\s+)", out[i])
        words = [k for k, c in enumerate(cells) if c.strip()]
        cells[rng.choice(words)] = rng.choice(("", "-", "\\", "N/A"))
        out[i] = "".join(cells)
    return out


def collapse_spaces(lines: Lines, rng: random.Random, others: list[Lines]) -> Lines:
    """Runs of spaces collapsed to one (a chat client, an HTML page) in some lines or all."""
    every = rng.random() < 0.5
    return [re.sub(r" {2,}", " ", line) if every or rng.random() < 0.3 else line for line in lines]


def extreme_numbers(lines: Lines, rng: random.Random, others: list[Lines]) -> Lines:
    """Numbers replaced by huge, negative, zero or overlong ones."""
    return _replace(lines, rng, _NUMBER, EXTREME_NUMBERS)


def nan_inf(lines: Lines, rng: random.Random, others: list[Lines]) -> Lines:
    """Numbers replaced by NaN and infinities in their many spellings."""
    return _replace(lines, rng, _NUMBER, NAN_INF)


def huge_hex(lines: Lines, rng: random.Random, others: list[Lines]) -> Lines:
    """Hex addresses replaced by 64-bit, over-64-bit and 200-digit ones."""
    return _replace(lines, rng, _HEX, HUGE_HEX)


def reversed_ranges(lines: Lines, rng: random.Random, others: list[Lines]) -> Lines:
    """The first two hex numbers (or numbers) of lines swapped: end before start."""
    out = list(lines)
    for _ in range(rng.randint(1, 30)):
        pattern = _HEX if rng.random() < 0.7 else _NUMBER
        i = _pick_line(out, rng, pattern)
        if i is None:
            break
        found = list(pattern.finditer(out[i]))
        if len(found) < 2:
            continue
        a, b = found[0], found[1]
        line = out[i]
        out[i] = line[: a.start()] + b.group() + line[a.end() : b.start()] + a.group() + line[b.end() :]
    return out


def nul(lines: Lines, rng: random.Random, others: list[Lines]) -> Lines:
    """NUL characters inside lines (a C string printed with its terminator, memory garbage)."""
    out = list(lines)
    for _ in range(rng.randint(1, 5)):
        i = _pick_line(out, rng)
        if i is None:
            break
        at = rng.randint(0, len(out[i]))
        out[i] = out[i][:at] + "\x00" * rng.randint(1, 3) + out[i][at:]
    return out


def controls(lines: Lines, rng: random.Random, others: list[Lines]) -> Lines:
    """Terminal debris: ANSI colours, carriage returns, backspaces, 8-bit CSI, tabs."""
    debris = ("\x1b[31m", "\x1b[0m", "\r", "\x08", "\x9b2J", "\t", "\x1b]0;t\x07", "\u202e")
    out = list(lines)
    for _ in range(rng.randint(1, 20)):
        i = _pick_line(out, rng)
        if i is None:
            break
        at = rng.randint(0, len(out[i]))
        out[i] = out[i][:at] + rng.choice(debris) + out[i][at:]
    return out


def long_line(lines: Lines, rng: random.Random, others: list[Lines]) -> Lines:
    """One line made very long (a progress bar never ended, a tensor dump on one line)."""
    if not lines:
        return lines
    i = rng.randrange(len(lines))
    return [*lines[:i], lines[i] * rng.randint(50, 2000), *lines[i + 1 :]]


TEXT_MUTATORS: dict[str, Callable[[Lines, random.Random, list[Lines]], Lines]] = {
    "splice": splice,
    "truncate": truncate,
    "flip": flip,
    "duplicate": duplicate,
    "empty-cells": empty_cells,
    "collapse-spaces": collapse_spaces,
    "extreme-numbers": extreme_numbers,
    "nan-inf": nan_inf,
    "huge-hex": huge_hex,
    "reversed-ranges": reversed_ranges,
    "nul": nul,
    "controls": controls,
    "long-line": long_line,
}


def _replace(lines: Lines, rng: random.Random, pattern: re.Pattern[str], values: tuple[str, ...]) -> Lines:
    out = list(lines)
    everywhere = rng.random() < 0.15  # sometimes every match in the file, not a few
    if everywhere:
        return [pattern.sub(lambda m: rng.choice(values), line) for line in out]
    for _ in range(rng.randint(1, 25)):
        i = _pick_line(out, rng, pattern)
        if i is None:
            break
        found = list(pattern.finditer(out[i]))
        m = rng.choice(found)
        out[i] = out[i][: m.start()] + rng.choice(values) + out[i][m.end() :]
    return out


def encode(text: str, rng: random.Random) -> tuple[bytes, str]:
    """The text as bytes: UTF-8 mostly, else another encoding, a mix, a BOM or stray bytes."""
    roll = rng.random()
    if roll < 0.70:
        return text.encode("utf-8", "surrogatepass"), "utf-8"
    if roll < 0.76:
        return text.encode("gbk", "replace"), "gbk"
    if roll < 0.82:
        return text.encode(rng.choice(("utf-16", "utf-16-le", "utf-16-be")), "surrogatepass"), "utf-16"
    if roll < 0.86:
        return b"\xef\xbb\xbf" + text.encode("utf-8", "surrogatepass"), "utf-8-bom"
    if roll < 0.93:  # halves in different encodings (two tools appending to one file)
        cut = rng.randint(0, len(text))
        return text[:cut].encode("utf-8", "replace") + text[cut:].encode("gbk", "replace"), "mixed"
    data = bytearray(text.encode("utf-8", "replace"))
    for _ in range(rng.randint(1, 10)):
        if data:
            data[rng.randrange(len(data))] = rng.choice((0x80, 0xC3, 0xFF, 0xFE, 0xE2, 0x00))
    return bytes(data), "stray-bytes"


def compress(data: bytes, rng: random.Random) -> tuple[bytes, str]:
    """Sometimes gzip, xz or bzip2 (now and then cut short): the suffix the file must carry."""
    roll = rng.random()
    if roll < 0.85:
        return data, ".log"
    suffix, packed = rng.choice(
        ((".gz", gzip.compress(data)), (".xz", lzma.compress(data)), (".bz2", bz2.compress(data)))
    )
    if rng.random() < 0.3:
        packed = packed[: rng.randint(0, len(packed))]
    return packed, suffix


def mutate_log(
    lines: Lines, rng: random.Random, others: list[Lines], trail: list[str] | None = None
) -> tuple[bytes, str, list[str]]:
    """One case: one to three text mutations, then the bytes. Returns (data, suffix, what was done);
    `trail` receives each step's name as it starts."""
    names = rng.sample(sorted(TEXT_MUTATORS), rng.choice((1, 1, 2, 3)))
    for name in names:
        if trail is not None:
            trail.append(name)
        lines = TEXT_MUTATORS[name](lines, rng, others)
    if trail is not None:
        trail.append("encode, compress")
    data, encoding = encode("\n".join(lines), rng)
    data, suffix = compress(data, rng)
    return data, suffix, [*names, encoding, suffix]
