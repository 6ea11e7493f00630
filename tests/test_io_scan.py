"""The whole-text scans of `logscope.io` against per-line reference definitions, and the read paths.

The reader finds slow-path lines with a few C-level scans over the whole text, splits the text in
runs between them, counts control characters with `bytes.translate`, settles the dedent question
from the first lines and reads a small file with a request of its own size. Each is checked here
against the plain per-line definition it replaces, on inputs built from the format: CR-only, CRLF
and mixed endings, tqdm frames and rate brackets, ANSI codes, backspaces, markers on the last line
with or without a terminator, lines longer than a block, blocks that end exactly on a line end.
"""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

from logscope import io as lio
from logscope.io import LogStream, decode_bytes, read_log

MARKERS = ("\r", "\x1b", "\x08")
GLUE = re.compile(r"(?:it/s|s/it)\][DIWE] \S")  # a log line glued to a tqdm rate bracket
CONTROL = re.compile("[\x00-\x07\x0b\x0c\x0e-\x1a\x1c-\x1f\x7f-\x9f]")

# Pieces a physical line of a real log is made of (tqdm frames, colour codes, glued log lines, blanks).
ATOMS = [
    "\n",
    "\r",
    "\r\n",
    "\x1b[31m",
    "\x1b",
    "\x08",
    "it/s]",
    "s/it]",
    "it/s",
    "]",
    " 5.1s/it]",
    "I build: done",
    "E x",
    "W build: y",
    " ",
    "\t",
    "██",
    "已杀死",
]


def reference_lines(text: str) -> tuple[list[str], list[int]]:
    """The definition: every physical line, and the indices of those holding debris."""
    phys = text.split("\n")
    return phys, [i for i, line in enumerate(phys) if any(m in line for m in MARKERS) or GLUE.search(line)]


def random_texts(count: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return ["".join(rng.choice(ATOMS) for _ in range(rng.randint(0, 30))) for _ in range(count)]


@pytest.mark.parametrize(
    "text",
    [
        "",
        "\n",
        "plain\nlines\n",
        "a\rb\rc\nnext\n",  # CR-only frames
        "a\r\nb\r\n",  # CRLF (the reader normalises it first; the scan must still be right)
        "a\r\nb\rc\nd\n",  # mixed
        "x\n" * 50 + "bar 1/2 [00:00, 9.1it/s]\rbar 2/2 [00:00, 9.2it/s]E build: glued\n" + "y\n" * 50,
        "first\x1b[0m\x08\rsecond it/s]\n",  # several markers on one line: one index
        "clean\nlast line 2.0s/it]",  # a marked last line without a terminator
        "clean\nlast line \x1b[1m\n",  # ... and with one
        "\r\r\r\n\x08\n\x1b\n",  # adjacent marked lines
        "no marker ] it/ s] s/ it]\n",
        "a finished bar 9/9 [00:01, 9.9it/s]\nanother 2.0s/it]I \n",  # rate brackets, nothing glued
        "bar 9.9it/s]E x\nbar 2.0s/it]W  y\nbar 1s/it]I build: z",  # glued, not glued, glued last
    ],
)
def test_physical_lines_match_the_per_line_definition(text: str) -> None:
    assert lio._physical_lines(text) == reference_lines(text)


def test_physical_lines_on_random_debris() -> None:
    for text in random_texts(3000, seed=7):
        assert lio._physical_lines(text) == reference_lines(text), repr(text)


def test_split_block_numbers_lines_after_late_marked_lines() -> None:
    """Marked lines near the end of a long text (where tqdm bars of a CI log sit) keep exact numbers."""
    text = (
        "".join(f"I line {i}\n" for i in range(5000))
        + "Bar: 100%|██| 2/2 [00:00, 7.0it/s]E build: late\nend\n"
    )
    lines, numbers, physical = lio._split_block(text, 10, lio._Counts(), dedent=False)
    assert physical == 5002
    assert lines[5000:] == ["Bar: 100%|██| 2/2 [00:00, 7.0it/s]", "E build: late", "end"]
    assert numbers[5000:] == [5011, 5011, 5012]
    assert numbers[:3] == [11, 12, 13]


@pytest.mark.parametrize(
    "sample",
    [
        "",
        "plain ascii text\twith\ttabs\n",
        "\x00\x01\x07\x0b\x0c\x0e\x1a\x1c\x1f\x7f",  # C0 controls and DEL
        "\x1b\x08\r\n\t",  # layout and debris: not counted
        "latin-1 binary \x80\x85\x9f\xa0\xff",  # C1 controls, then characters that are not controls
        "已杀死 ██ \ue000\ufffd",
        "\ud800 lone surrogate \x03",
    ],
)
def test_count_controls_matches_the_regex(sample: str) -> None:
    assert lio._count_controls(sample) == len(CONTROL.findall(sample))


def test_count_controls_on_random_characters() -> None:
    rng = random.Random(3)
    for _ in range(3000):
        sample = "".join(
            chr(
                rng.choice(
                    [rng.randrange(0, 0x100), rng.randrange(0x100, 0x3000), rng.randrange(0xD800, 0xE000)]
                )
            )
            for _ in range(rng.randint(0, 40))
        )
        assert lio._count_controls(sample) == len(CONTROL.findall(sample)), repr(sample)


def test_binary_refusal_counts_controls_as_before() -> None:
    """11% controls in the sample is binary, 9% is text, whichever way they are counted."""
    with pytest.raises(lio.InputError, match="11% control characters"):
        lio._check_text("\x01" * 11 + "a" * 89, None, "x")
    lio._check_text("\x01" * 9 + "a" * 91, None, "x")
    with pytest.raises(lio.InputError, match="control characters"):
        lio._check_text("\x85" * 11 + "a" * 89, None, "x")  # C1 controls take the regex path


@pytest.mark.parametrize(
    "text",
    [
        "",
        "\n\n  \n",  # only blank lines
        "I real log\n    indented continuation\n",
        "    a\n    b\n",  # a markdown copy
        "\ta\n\tb\n",
        "    a\n\tb\n",  # mixed indentation
        "    a\n  \n\r\n    b\n" + "    c\n" * 100 + "col0\n",  # settled only by the last line
        "  two spaces is not markdown\n",
        "   \tx\n",
        "    a\n\r\n",
    ],
)
def test_dedent_undecided_matches_dedent(text: str) -> None:
    assert lio._dedent_undecided(text) == (lio._dedent(text.split("\n")) is None)


class Chunks:
    """A reader that hands out at most `step` bytes per call, like a pipe."""

    def __init__(self, data: bytes, step: int) -> None:
        self.data, self.step, self.calls = data, step, 0

    def read(self, size: int) -> bytes:
        self.calls += 1
        out, self.data = self.data[: min(size, self.step)], self.data[min(size, self.step) :]
        return out


@pytest.mark.parametrize("step", [1, 7, 10_000])
@pytest.mark.parametrize(
    ("actual", "size"),
    [(0, 0), (100, 100), (100, 40), (100, 400), (5000, 100), (3000, None)],  # grew, shrank, unknown
)
def test_read_first_reads_what_a_block_request_reads(actual: int, size: int | None, step: int) -> None:
    data = bytes(range(256)) * (actual // 256 + 1)
    data = data[:actual]
    for want in (1, 64, 2048, 10_000):
        expected = data[:want]
        assert lio._read_first(Chunks(data, step).read, want, size, 0) == expected


def write(tmp_path: Path, name: str, data: bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


def assert_streams_like_read_log(path: Path, block_bytes: int) -> int:
    stream = LogStream(path, block_bytes=block_bytes)
    blocks = list(stream)
    whole = read_log(path)
    assert [line for lines, _ in blocks for line in lines] == whole.lines
    assert [n for _, numbers in blocks for n in numbers] == whole.numbers
    assert (stream.sha256, stream.size_bytes, stream.notes) == (whole.sha256, whole.size_bytes, whole.notes)
    return len(blocks)


HEAD = b"I plain line\n" * 6000  # > 64 KiB of plain UTF-8: streaming starts


def test_tqdm_bar_split_across_blocks(tmp_path: Path) -> None:
    frames = b"".join(
        b"\rConverting: %3d%%|%s| %d/100 [00:01<00:00, 9.9it/s]" % (i, b"#" * (i // 10), i)
        for i in range(100)
    )
    path = write(tmp_path, "bar.log", HEAD + frames + b"W build: glued after the bar\nI after\n" + HEAD)
    for block in (100, 1000, 4096):
        assert assert_streams_like_read_log(path, block) > 2
    lines = read_log(path).lines
    assert lines[6000] == "Converting:   0%|| 0/100 [00:01<00:00, 9.9it/s]"
    assert lines[6099:6102] == [
        "Converting:  99%|#########| 99/100 [00:01<00:00, 9.9it/s]",
        "W build: glued after the bar",
        "I after",
    ]


def test_line_longer_than_many_blocks(tmp_path: Path) -> None:
    long_line = b"D " + b"x" * 50_000 + b" \x1b[0m"
    path = write(tmp_path, "long.log", HEAD + long_line + b"\n" + b"I a\n" * 100 + long_line)
    assert assert_streams_like_read_log(path, 1000) > 3
    assert read_log(path).lines[6000] == "D " + "x" * 50_000


def test_blocks_ending_exactly_on_line_ends(tmp_path: Path) -> None:
    """Every block ends on a newline (lines of the block size): each block is handed on as read."""
    line = b"I " + b"y" * 60 + b"\n"  # 63 bytes
    path = write(tmp_path, "exact.log", line * 5000)
    assert assert_streams_like_read_log(path, 63) > 10
    assert assert_streams_like_read_log(path, 63 * 7) > 10


@pytest.mark.parametrize("ending", [b"\n", b"\r\n", b"\r"])
def test_line_endings_across_blocks(tmp_path: Path, ending: bytes) -> None:
    body = b"".join(b"I line %d  " % i + (ending if i % 3 else b"\r\n") for i in range(3000))
    path = write(tmp_path, "end.log", HEAD + body)
    for block in (5, 64, 4096):
        assert_streams_like_read_log(path, block)
    assert decode_bytes(HEAD + body).lines == read_log(path).lines


def test_small_file_read_in_one_request(tmp_path: Path) -> None:
    """A file smaller than a block is one block, the same text as read_log, for sizes around the head."""
    for size in (0, 1, 9, 10, 11, 65_535, 65_536, 65_537):
        data = (b"I x\n" * (size // 4 + 1))[:size]
        path = write(tmp_path, f"s{size}.log", data)
        if size:
            assert assert_streams_like_read_log(path, lio.STREAM_BLOCK_BYTES) == 1
        else:
            assert [list(b) for b in LogStream(path)] == [[[], []]]


@pytest.mark.parametrize("tail", [b"", b"\n", b"\nI next\n"])
def test_first_line_longer_than_the_first_block(tmp_path: Path, tail: bytes) -> None:
    """No line end in the first block: the whole file is read as one block, none of it lost."""
    data = b"D " + b"z" * 200_000 + tail
    path = write(tmp_path, "first.log", data)
    for block in (1000, 70_000, lio.STREAM_BLOCK_BYTES):
        assert assert_streams_like_read_log(path, block) == 1
    stream = LogStream(path, block_bytes=1000)
    first, *rest = [line for lines, _ in stream for line in lines]  # the whole stream, so size_bytes is final
    assert first == "D " + "z" * 200_000
    assert rest == {b"": [], b"\n": [], b"\nI next\n": ["I next"]}[tail]
    assert stream.size_bytes == len(data)


def reference_split(text: str, counts: lio._Counts | None = None) -> tuple[list[str], list[int]]:
    """The definition of a block's lines: a clean physical line loses its trailing blanks; a line with
    debris is scrubbed and expanded into its frames; every line keeps its own number."""
    counts = counts or lio._Counts()
    if not text:
        return [], []
    counts.crlf += text.count("\r\n")
    phys, dirty = reference_lines(text.replace("\r\n", "\n"))
    if text.endswith("\n"):
        phys.pop()
    lines: list[str] = []
    numbers: list[int] = []
    for i, line in enumerate(phys):
        pieces = lio._expand(lio._scrub(line, counts), counts) if i in dirty else [line.rstrip(" \t")]
        lines.extend(pieces)
        numbers.extend([i + 1] * len(pieces))
    return lines, numbers


def test_marks_match_the_per_line_definitions() -> None:
    """Marks found on the bytes: debris lines as `reference_lines`, blank-ended lines as `endswith`."""
    for text in [*random_texts(3000, seed=11), "", " ", "\n ", " \n", "\n\n\t", "]I x", "a]E \n"]:
        phys = text.split("\n")
        marks = lio._Marks(text.encode("utf-8"))
        assert lio._marked_lines(phys, marks) == reference_lines(text)[1], repr(text)
        assert marks.blank == [i for i, line in enumerate(phys) if line.endswith((" ", "\t"))], repr(text)


def test_split_block_matches_the_per_line_definition() -> None:
    for text in random_texts(3000, seed=5):
        lines, numbers, _ = lio._split_block(text, 0, lio._Counts(), dedent=False)
        assert (lines, numbers) == reference_split(text), repr(text)


def test_marks_of_the_raw_bytes_fit_text_decoded_with_replacements() -> None:
    """A block with invalid UTF-8 (cut characters, stray bytes next to debris) is split by the marks of
    its raw bytes exactly as by the marks of its decoded text's own encoding."""
    rng = random.Random(2)
    bad = [b"\xff", b"\xe4\xb8", b"\xc2", b"\xed\xa0\x80", b"\xf0\x9f\x98"]
    for text in random_texts(2000, seed=9):
        parts = [atom.encode("utf-8") for atom in text] + [rng.choice(bad) for _ in range(3)]
        rng.shuffle(parts)
        raw = b"".join(parts)
        decoded = raw.decode("utf-8", "replace")
        marks = lio._block_marks(raw)
        if marks is None:  # \r\n to normalise: the text's own encoding is used
            continue
        expected = lio._split_block(decoded, 0, lio._Counts(), dedent=False)
        assert lio._split_block(decoded, 0, lio._Counts(), dedent=False, marks=marks) == expected, raw
        assert expected[:2] == reference_split(decoded), raw


@pytest.mark.parametrize("wide", ["", "é", "█", "已杀死", "😀"])
@pytest.mark.parametrize("length", [0, 10, lio._SAMPLE - 2, lio._SAMPLE, lio._SAMPLE + 3, 3 * lio._SAMPLE])
def test_utf8_head_is_the_texts_sample_and_its_bytes(wide: str, length: int) -> None:
    """Characters of 1 to 4 bytes around the sample's end, the sample cut inside one, texts shorter
    than the sample: the head is `text[:_SAMPLE]` and exactly its UTF-8 bytes."""
    rng = random.Random(length)
    text = "".join(rng.choice(["a", "\n", wide or "b"]) for _ in range(length))
    sample = text[: lio._SAMPLE]
    assert lio._utf8_head(text.encode("utf-8")) == (sample, sample.encode("utf-8"))


@pytest.mark.parametrize(
    "text",
    [
        "I plain\n" * 3,
        "Loading: 100%|████| 1/1 [00:00, 9.9it/s]\nI next \n",  # a wide line between ASCII lines
        "█\n\n█",  # wide first and last lines, no terminator
        "\n".join(["a"] * 10 + ["é"] * 3 + ["b"] * 2 + ["é"]) + "\n",  # adjacent wide lines form one run
        "".join(f"{i} 已杀死\nI ok\n" for i in range(200)),  # more runs than decoded apart
    ],
)
def test_utf8_lines_split_as_the_decoded_text(text: str) -> None:
    """The lines decoded in ASCII runs and wide runs are the decoded text's lines, whatever the runs."""
    raw = text.encode("utf-8")
    marks = lio._Marks(raw, spans=True)
    if marks.wide is None:
        assert text.count("已") > lio._WIDE_RUNS
        return
    assert lio._utf8_lines(raw, marks.wide) == text.split("\n")
    assert lio._plain_lines(raw, marks) == text.split("\n")


def test_utf8_lines_on_random_text() -> None:
    for text in random_texts(3000, seed=13):
        raw = text.encode("utf-8")
        marks = lio._Marks(raw, spans=True)
        assert marks.wide is not None
        assert lio._utf8_lines(raw, marks.wide) == text.split("\n"), repr(text)
    bad = "I ok\n█\n".encode() + b"\xff\n"
    with pytest.raises(UnicodeDecodeError):
        lio._utf8_lines(bad, lio._Marks(bad, spans=True).wide or [])


COLOUR_ATOMS = [
    "\n",
    "\x1b[31m",
    "\x1b[0m",
    "\x1b[",  # a CSI cut at the line's end
    "\x1b]0;title",  # an OSC without its terminator: runs to the end of the line
    "\x1b]8;;x\x07",
    "\x1bP q",  # a DCS string without its terminator
    "\x1b(B",
    "\x1b",
    "I build: done",
    " ",
    "\t",
    "9.9it/s]",
    "E x",
    "\x08",
    "\r",
]


def test_colour_lines_cleaned_together_as_line_by_line() -> None:
    """Many coloured lines in a block (cut and unterminated sequences at line ends, blanks left behind,
    tqdm rates, other debris on some lines) read as each line scrubbed and expanded on its own."""
    rng = random.Random(17)
    for _ in range(2000):
        text = "".join(rng.choice(COLOUR_ATOMS) for _ in range(rng.randint(0, 60)))
        lines, numbers, _ = lio._split_block(text, 0, lio._Counts(), dedent=False)
        assert (lines, numbers) == reference_split(text), repr(text)
        counts, expected = lio._Counts(), lio._Counts()
        lio._split_block(text, 0, counts, dedent=False)
        reference_split(text, expected)
        assert lio._line_notes(counts) == lio._line_notes(expected), repr(text)
