"""The one place logscope reads bytes.

Every parser works on :class:`LogText`: clean text lines paired with the *original* physical line
number each one came from. Logs reach us in bad shape, and each problem is handled here once so the
parsers never have to think about it:

* **Compression is sniffed from magic bytes**, never from the file name: people attach
  ``build.log`` that is really gzip, or ``trace.gz`` that was already unpacked by the browser.
  Decompression is streamed with a size cap because a 40 KiB archive can inflate to gigabytes.
* **Encodings vary.** RKNN toolkits run on Linux (UTF-8), but logs are also captured from
  Chinese-locale Windows consoles (GBK, e.g. ``已杀死`` for "Killed") or saved by PowerShell
  (UTF-16 with or without a byte-order mark). Decoding never raises ``UnicodeDecodeError``:
  latin-1 is the last resort because it maps every byte to a character.
* **Binary input is refused** with :class:`~logscope.errors.InputError` rather than "parsed",
  so the user learns they attached a model file instead of a log.
* **Terminal debris is removed.** tqdm redraws its progress bar with a bare ``\\r``, coloured
  loggers add ANSI escape codes, and the toolkit often prints its next log line straight after the
  last bar frame without a newline. Each ``\\r`` frame becomes a logical line that keeps the
  number of the physical line it was drawn on, so error messages still point at the right line.
* **Markdown copies are dedented.** A log pasted as an indented code block has four extra spaces
  on every line, which would turn every line into a "continuation" line for the parsers.

Line-ending convention: ``\\n`` and ``\\r\\n`` end a line. A final line terminator does *not*
start an extra empty line (``"a\\nb\\n"`` and ``"a\\nb"`` both have two lines), an empty input has
zero lines, and ``"\\n"`` is one blank line. Blank lines are kept as ``""`` so numbering is exact.

Speed matters because logs can be 50 MB. The lines that need more than a split (``\\r``, ESC,
backspace, a log line glued to a tqdm rate, trailing blanks) are found by a few numpy passes over a
block's bytes (:class:`_Marks`), and only they get the expensive treatment; valid UTF-8 is decoded
in runs so that the ASCII lines stay one byte a character however many tqdm bars the log draws
(:func:`_utf8_lines`). Both are checked against the per-line definitions in the tests.
"""

from __future__ import annotations

import bz2
import codecs
import gzip
import hashlib
import io
import lzma
import os
import re
import select
import stat
import threading
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import IO, TYPE_CHECKING, Protocol

import numpy as np

from logscope.errors import InputError

if TYPE_CHECKING:
    from _typeshed import WriteableBuffer

__all__ = [
    "DEFAULT_MAX_BYTES",
    "STREAM_BLOCK_BYTES",
    "LogSource",
    "LogStream",
    "LogText",
    "decode_bytes",
    "display_path",
    "file_kind",
    "open_regular",
    "read_log",
]

#: Refuse inputs (after decompression) larger than this by default: 2 GiB.
DEFAULT_MAX_BYTES = 2 * 1024**3

# Heuristics look at this much of the input: enough to be representative, cheap on 50 MB files.
_SAMPLE = 64 * 1024
# Read and decompress in chunks of this size so the size cap is enforced while streaming.
_CHUNK = 4 * 1024 * 1024

_GZIP_MAGIC = b"\x1f\x8b"
_XZ_MAGIC = b"\xfd7zXZ\x00"
# bzip2: "BZh" + block-size digit, then either a block header (BCD pi) or the end-of-stream
# marker (BCD sqrt(pi)) of an empty stream. Checking those too keeps a text file that happens to
# begin with "BZh" from being treated as an archive.
_BZ2_BLOCK_MAGIC = (b"\x31\x41\x59\x26\x53\x59", b"\x17\x72\x45\x38\x50\x90")
_MAGIC_LEN = 10

# Control characters that do not occur in text logs. \t \n \r are layout, \x1b starts ANSI codes
# and \x08 is backspace debris from progress bars, so those are not counted. C1 controls
# (\x80-\x9f) are counted because binary data decoded as latin-1 is full of them.
_CONTROL = re.compile("[\x00-\x07\x0b\x0c\x0e-\x1a\x1c-\x1f\x7f-\x9f]")
# What a wrong legacy decoding tends to produce: controls, replacement and private-use characters.
_SUSPICIOUS = re.compile("[\x00-\x07\x0b\x0c\x0e-\x1a\x1c-\x1f\x7f-\x9f\ufffd\ue000-\uf8ff]")

# Anything that sends a physical line down the slow path (looked for after CRLF normalisation):
# tqdm's \r redraws, ANSI escapes, backspaces, and a log line glued to a tqdm rate bracket
# (_TQDM_GLUE below). A rate bracket alone is not debris: the slow path would return the line as is.
_CHAR_MARKERS = ("\r", "\x1b", "\x08")

# ANSI / VT100 escape sequences. Order matters: CSI and OSC are tried before the generic
# two-character escapes. None of them may swallow a \r, which separates tqdm frames.
_ANSI = re.compile(
    r"""
      \x1b\[ [0-?]* [ -/]* [@-~]              # CSI: colours \x1b[31m, erase \x1b[K / \x1b[2K, cursor moves
    | \x1b\] [^\x07\x1b\r]* (?:\x07|\x1b\\)?   # OSC: window title etc., ended by BEL or ST (or the line)
    | \x1b [PX^_] [^\x1b\r]* (?:\x1b\\)?       # DCS / SOS / PM / APC strings
    | \x1b [ -/]* [0-~]                        # two-character escapes: ESC 7, ESC (B, ESC M, ...
    | \x1b                                     # a lone ESC left over from a cut sequence
    """,
    re.VERBOSE,
)

# A toolkit log line glued to the closing bracket of a tqdm rate: "...240.65it/s]E build: ...".
# The lookahead requires "<level letter><space><non-space>" so ordinary text is never split.
# Matching the "]" first and looking behind from it lets the regex engine skip quickly to each
# bracket; a leading lookbehind would be tried at every character (20x slower on long bars).
_TQDM_GLUE = re.compile(r"\](?<=it/s\]|s/it\])(?=[DIWE] \S)")


class LogSource(Protocol):
    """What a parser needs to know about where its lines came from (LogText and LogStream have it)."""

    @property
    def path(self) -> str: ...
    @property
    def encoding(self) -> str: ...
    @property
    def compression(self) -> str | None: ...
    @property
    def sha256(self) -> str: ...
    @property
    def size_bytes(self) -> int: ...
    @property
    def notes(self) -> tuple[str, ...]: ...


@dataclass(frozen=True)
class LogText:
    """A decoded, cleaned log: the only thing parsers ever receive.

    ``lines[i]`` is a logical line and ``numbers[i]`` the 1-based physical line of the original
    file it came from. Several logical lines share a number when one physical line held several
    tqdm frames or a log line glued to a progress bar; that is why numbers are stored rather than
    derived from the index. ``notes`` tell the user what cleaning did, so a surprising result can
    be explained ("decoded as gb18030", "dedented 4 spaces", ...).
    """

    path: str
    lines: list[str] = field(repr=False)
    numbers: list[int] = field(repr=False)
    encoding: str
    compression: str | None
    sha256: str
    size_bytes: int
    notes: tuple[str, ...]


def read_log(path: str | os.PathLike[str], *, max_bytes: int = DEFAULT_MAX_BYTES) -> LogText:
    """Read, decompress, decode and clean the log at ``path``.

    Every failure a user can cause (missing file, directory, device, permissions, corrupt or truncated
    archive, oversized or binary input) becomes an :class:`InputError` with a one-line reason, so
    the CLI can print it instead of a traceback. The file is read in chunks and decompression is
    streamed, so the ``max_bytes`` cap stops a decompression bomb long before memory runs out; a
    regular file over the cap, and input whose first block is binary, are refused before the rest
    is read.
    """
    opened = os.fspath(path)
    name = display_path(opened)
    fh, st = _open_file(opened, name)
    with fh:
        try:
            head = fh.read(_MAGIC_LEN)
            compression = _sniff_compression(head)
            if compression is None:
                _check_size(st, name, max_bytes)
                read = _guarded_reader(fh.read, name, None, max_bytes, already=len(head))
                raw = _read_checked(read, name, head)
            else:
                # Replay the sniffed header in front of the rest: works for pipes, which cannot seek.
                stream = io.BufferedReader(_Replay(head, fh))
                raw = _decompress(stream, compression, name, max_bytes)
        except OSError as exc:
            raise InputError(f"{name}: read error: {_one_line(exc)}") from None
    return _build(raw, name, compression)


def display_path(path: str | os.PathLike[str]) -> str:
    """``path`` as text that can be printed and stored: bytes that are not UTF-8 (a GBK ``构建日志``
    file name on a UTF-8 system arrives as lone surrogates) are shown as ``\\xNN`` escapes.

    A valid name is returned unchanged. The escaped form is for people; code that must find the file
    again keeps the original (``os.fsencode`` gives its exact bytes).
    """
    text = os.fspath(path)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return os.fsencode(text).decode("utf-8", "backslashreplace")
    return text


def file_kind(mode: int) -> str:
    """What a non-regular file is, for messages: "a FIFO", "a character device", ..."""
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def open_regular(path: str, name: str | None = None, *, max_bytes: int = DEFAULT_MAX_BYTES) -> IO[bytes]:
    """Open a *regular* file of at most ``max_bytes`` for reading bytes, or raise ``InputError``.

    The open is non-blocking, so a FIFO with no writer cannot hang it, and the kind and size come
    from ``fstat`` of the opened descriptor (no race with a file swapped in between). This is what
    the audit uses: a folder may hold FIFOs, sockets or a symlink to ``/dev/zero``; none is read.
    """
    name = name or display_path(path)
    fh, st = _open_file(path, name, regular_only=True)
    try:
        _check_size(st, name, max_bytes)
    except InputError:
        fh.close()
        raise
    return fh


def _check_size(st: os.stat_result, name: str, max_bytes: int) -> None:
    """Refuse a regular file larger than the cap from its size, before reading a byte of it."""
    _check_length(st.st_size if stat.S_ISREG(st.st_mode) else None, name, max_bytes)


def _check_length(size: int | None, name: str, max_bytes: int) -> None:
    """Refuse input of a known size larger than the cap (an unknown size is capped while reading)."""
    if size is not None and size > max_bytes:
        raise InputError(f"{name}: {size} bytes is larger than the limit of {max_bytes}")


def _read_checked(read: Callable[[int], bytes], name: str, head: bytes = b"") -> bytes:
    """Read everything, refusing binary input after the first sample instead of after the whole cap."""
    first = head + _read_up_to(read, _SAMPLE)
    _refuse_binary_start(first, name)
    return first + _read_all(read)


def _refuse_binary_start(raw: bytes, name: str) -> None:
    """NUL bytes near the start of input that is not UTF-16: binary (a model, /dev/zero, a sparse
    file), refused now rather than after reading up to the size cap."""
    if raw.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)) or _sniff_utf16(raw) is not None:
        return
    if b"\x00" in raw[:_SAMPLE]:
        raise InputError(f"{name}: looks binary (NUL bytes near the start), not a text log")


def _wait_for_writer(fd: int) -> None:
    """Block until a writer has opened the FIFO `fd` reads (non-blocking, so far) and written or closed.

    A read end opened without a writer reads as end-of-file at once; poll reports a hang-up only once
    a writer has come and gone since the open, and data as soon as there is some, so after it a
    blocking read returns the data, then end-of-file when the last writer closes."""
    poller = select.poll()
    poller.register(fd, select.POLLIN | select.POLLHUP)
    poller.poll()


def _open_file(path: str, name: str, *, regular_only: bool = False) -> tuple[IO[bytes], os.stat_result]:
    """Open ``path`` for reading bytes; what a user can get wrong becomes a one-line InputError.

    The first open is non-blocking (a FIFO with no writer would block a plain ``open`` forever) and
    the descriptor is ``fstat``-ed: directories, devices and sockets are refused (``/dev/zero`` or
    ``/dev/urandom`` are endless, not logs). A FIFO is refused with ``regular_only``; otherwise
    (``logscope parse <(zcat x.gz)``) the reader waits for its writer as ``cat`` does, on the same
    descriptor: closing it and opening the FIFO again lost what a quick writer had written and closed in
    between (no reader left: the pipe drops its data), and the second open then waited for a writer
    that never came.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise InputError(f"{name}: no such file") from None
    except IsADirectoryError:
        raise InputError(f"{name}: is a directory, not a log file") from None
    except PermissionError:
        raise InputError(f"{name}: permission denied") from None
    except OSError as exc:
        raise InputError(f"{name}: cannot open: {_one_line(exc)}") from None
    st = os.fstat(fd)
    mode = st.st_mode
    if stat.S_ISREG(mode) or (stat.S_ISFIFO(mode) and not regular_only):
        if stat.S_ISFIFO(mode):
            _wait_for_writer(fd)
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb"), st
    os.close(fd)
    if stat.S_ISDIR(mode):
        raise InputError(f"{name}: is a directory, not a log file")
    raise InputError(f"{name}: is {file_kind(mode)}, not a regular file; not read")


#: Block size of :class:`LogStream`: big enough that per-block work is noise, small enough to bound memory.
STREAM_BLOCK_BYTES = 4 * 1024 * 1024


class LogStream:
    """A log read block by block, for parsers whose memory must not grow with the file.

    Iterate once; each item is ``(lines, numbers)`` for a run of complete lines, exactly as
    :func:`read_log` would number and clean them. After the iteration ``encoding``, ``sha256``,
    ``size_bytes`` and ``notes`` are final (before it they describe what was read so far).

    Streaming needs decisions that :func:`read_log` takes on the whole file to be takeable on the
    first block. They are for the common case (UTF-8 or ASCII, no byte-order mark, no markdown
    indentation). Anything else (UTF-16, GBK, an indented copy, a file that fits in one block)
    falls back to :func:`read_log`'s whole-file path and yields a single block, so the result is
    the same either way. One case differs: a file whose first block is valid UTF-8 is UTF-8; a
    later invalid byte is replaced (and noted) rather than re-deciding the encoding of the file.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        max_bytes: int = DEFAULT_MAX_BYTES,
        block_bytes: int = STREAM_BLOCK_BYTES,
        opener: Callable[[], tuple[IO[bytes], int | None]] | None = None,
    ) -> None:
        # `opener` gives (bytes stream, its size if known) for input that is not a local file (an
        # object-store URL); `path` then only names it in messages. The stream is closed after reading.
        self._opener = opener
        self._opened = os.fspath(path)
        self.path = display_path(self._opened)
        self.max_bytes = max_bytes
        self.block_bytes = max(block_bytes, 1)
        self.encoding = "utf-8"
        self.compression: str | None = None
        self.sha256 = ""
        self.size_bytes = 0
        self.notes: tuple[str, ...] = ()

    def __iter__(self) -> Iterator[tuple[list[str], list[int]]]:
        name = self.path
        if self._opener is None:
            fh, st = _open_file(self._opened, name)
            size = st.st_size if stat.S_ISREG(st.st_mode) else None
        else:
            fh, size = self._opener()
        with fh:
            try:
                head = fh.read(_MAGIC_LEN)
            except OSError as exc:
                raise InputError(f"{name}: read error: {_one_line(exc)}") from None
            self.compression = _sniff_compression(head)
            if self.compression is None:
                # Plain text is read straight from the file, the sniffed head put back in front of the
                # first block: a replaying wrapper would copy every block once more through a buffer
                # the size of a block (0.6 ms of a 575 KB file).
                _check_length(size, name, self.max_bytes)
                read = _guarded_reader(fh.read, name, None, self.max_bytes, already=len(head))
                yield from self._blocks(read, head, size)
                return
            source = io.BufferedReader(_Replay(head, fh))
            reader = _open_decompressor(self.compression, source)
            read = _guarded_reader(reader.read, name, self.compression, self.max_bytes)
            yield from self._blocks(read, b"", None)

    def _blocks(
        self, read: Callable[[int], bytes], head: bytes, size: int | None
    ) -> Iterator[tuple[list[str], list[int]]]:
        first = head + _read_first(read, max(self.block_bytes, _SAMPLE) - len(head), size, len(head))
        _refuse_binary_start(first, self.path)
        cut = first.rfind(b"\n") + 1
        more = _read_up_to(read, 1) if cut else b""
        if not more or not _streamable_start(memoryview(first)[:cut]):
            # `more` is read only when the block has a line end: an empty one then means the end.
            raw = first if cut and not more else b"".join([first, more, _read_all(read)])
            whole = _build(raw, self.path, self.compression)
            self.encoding, self.sha256 = whole.encoding, whole.sha256
            self.size_bytes, self.notes = whole.size_bytes, whole.notes
            yield whole.lines, whole.numbers
            return
        digest, counts = hashlib.sha256(), _Counts()
        offset = nuls = bad = 0
        # `carry` holds the start of a line not yet complete, in pieces (a line may outgrow many
        # blocks: joining the pieces once when it ends keeps that linear). Each block is copied once,
        # carry and complete lines joined; a block that ends on a line end is handed on as read.
        carry: list[bytes] = []
        data, eof = first + more, False
        while True:
            if eof:
                block = b"".join([*carry, data])
                carry = []
            else:
                cut = data.rfind(b"\n") + 1
                if cut == 0:
                    carry.append(data)  # one line longer than a block: read on
                    data = _read_up_to(read, self.block_bytes)
                    eof = len(data) < self.block_bytes
                    continue
                if not carry and cut == len(data):
                    block = data
                else:
                    block = b"".join([*carry, memoryview(data)[:cut]])
                    carry = [data[cut:]] if cut < len(data) else []
            data = b""
            digest.update(block)
            self.size_bytes += len(block)
            marks = _block_marks(block, spans=True)
            phys = _plain_lines(block, marks)
            if phys is not None and marks is not None:
                if offset == 0:
                    _check_text(*_utf8_head(block), self.path)
                terminated = block.endswith(b"\n")
                del block
                lines, numbers, physical = _split_lines(
                    phys, terminated, offset, counts, dedent=False, marks=marks
                )
                del phys
            else:
                try:
                    text = block.decode("utf-8")
                except UnicodeDecodeError:
                    text = block.decode("utf-8", "replace")
                    bad += text.count("\ufffd") - block.count("\ufffd".encode())
                if offset == 0:
                    _check_text(text, None, self.path)
                if b"\x00" in block:  # in UTF-8 a NUL character is a NUL byte, found here by memchr
                    nuls += text.count("\x00")
                    text = text.replace("\x00", "")
                del block
                lines, numbers, physical = _split_block(text, offset, counts, dedent=False, marks=marks)
                del text
            offset += physical
            yield lines, numbers
            if eof:
                break
            data = _read_up_to(read, self.block_bytes)
            eof = len(data) < self.block_bytes
        self.sha256 = digest.hexdigest()
        notes = []
        if bad:
            notes.append(f"decoded as utf-8 with {_plural(bad, 'invalid byte sequence')} replaced by U+FFFD")
        if nuls:
            notes.append(f"removed {_plural(nuls, 'NUL character')}")
        self.notes = tuple(notes + _line_notes(counts))


def _block_marks(block: bytes, *, spans: bool = False) -> _Marks | None:
    """The marks of a block of UTF-8 bytes for its decoded text, or None when the text will not keep the
    block's lines character for character (NULs removed, or ``\\r\\n`` about to be normalised)."""
    if b"\x00" in block or (b"\r" in block and b"\r\n" in block):
        return None
    return _Marks(block, spans=spans)


def _plain_lines(block: bytes, marks: _Marks | None) -> list[str] | None:
    """The physical lines of a block of valid UTF-8 without NUL or ``\\r\\n`` (exactly its text's split at
    ``\\n``), or None when it is not one or has too many non-ASCII lines to decode them apart."""
    if marks is None or marks.wide is None:
        return None
    try:
        return _utf8_lines(block, marks.wide) if block else []  # an empty text has no line
    except UnicodeDecodeError:
        return None


def _streamable_start(raw: memoryview) -> bool:
    """Whether the first block lets the rest be streamed: plain UTF-8 (or ASCII), not a markdown copy."""
    if bytes(raw[:3]).startswith((codecs.BOM_UTF8, codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return False
    sample = bytes(raw[:_SAMPLE])
    if _sniff_utf16(sample) is not None or b"\x00" in sample:
        return False
    try:
        text = str(raw, "utf-8")
    except UnicodeDecodeError:
        return False
    # A line at column 0 settles the dedent question for the whole file (see _dedent).
    return _dedent_undecided(text)


def _dedent_undecided(text: str) -> bool:
    """``_dedent(text.split("\\n")) is None``, looking only as far as the first line that settles it.

    A real log settles it on its first non-blank line; splitting a whole 4 MiB block into lines to
    find that out cost more than decoding it.
    """
    indented = ("    ", "\t")
    start, seen_indented = 0, False
    while True:
        end = text.find("\n", start)
        line = text[start:] if end < 0 else text[start:end]
        if line.strip(" \t\r"):
            if not line.startswith(indented):
                return True
            seen_indented = True
        if end < 0:
            return not seen_indented
        start = end + 1


def _read_first(read: Callable[[int], bytes], want: int, size: int | None, already: int) -> bytes:
    """``_read_up_to(read, want)`` for a file known to hold ``size`` bytes, ``already`` of them read.

    A file smaller than a block is read with a request of its own size (plus one byte, to see its
    end): asking for a whole block makes the reader allocate, fault in and shrink 4 MiB for a 500 KB
    file, which cost more than hashing it. A file that grew since it was measured is read on.
    """
    if size is None or size - already + 1 >= want:
        return _read_up_to(read, want)
    data = _read_up_to(read, max(size - already + 1, 0))
    if len(data) <= size - already:
        return data  # the end of the input
    return data + _read_up_to(read, want - len(data))


def _read_up_to(read: Callable[[int], bytes], size: int) -> bytes:
    """Read exactly ``size`` bytes, or fewer only at the end of the input."""
    parts: list[bytes] = []
    missing = size
    while missing > 0:
        data = read(missing)
        if not data:
            break
        parts.append(data)
        missing -= len(data)
    return b"".join(parts)


def _read_all(read: Callable[[int], bytes]) -> bytes:
    parts: list[bytes] = []
    while data := read(_CHUNK):
        parts.append(data)
    return b"".join(parts)


def _guarded_reader(
    read: Callable[[int], bytes], name: str, compression: str | None, max_bytes: int, *, already: int = 0
) -> Callable[[int], bytes]:
    """``read`` with the size cap and one-line errors for I/O and archive failures.

    The cap is checked after every read, not once at the end: that is what makes it a protection
    against decompression bombs and endless pipes. ``already`` counts bytes read before (a sniffed head).
    """
    total = already

    def guarded(size: int) -> bytes:
        nonlocal total
        try:
            data = read(size)
        except EOFError:
            raise InputError(
                f"{name}: truncated {compression} archive (ends before its end-of-stream marker)"
            ) from None
        except (zlib.error, lzma.LZMAError, ValueError) as exc:
            raise InputError(f"{name}: corrupt {compression} archive: {_one_line(exc)}") from None
        except OSError as exc:
            if compression is not None:
                raise InputError(f"{name}: corrupt {compression} archive: {_one_line(exc)}") from None
            raise InputError(f"{name}: read error: {_one_line(exc)}") from None
        total += len(data)
        if total > max_bytes:
            if compression is not None:
                raise InputError(
                    f"{name}: decompressed data exceeds the limit of {max_bytes} bytes "
                    "(refusing a possible decompression bomb)"
                )
            raise InputError(f"{name}: larger than the limit of {max_bytes} bytes")
        return data

    return guarded


def decode_bytes(data: bytes, path: str = "<bytes>", *, max_bytes: int = DEFAULT_MAX_BYTES) -> LogText:
    """Do everything :func:`read_log` does, on bytes already in memory.

    Compressed data is recognised by its magic bytes here too, so callers holding an upload or a
    test fixture get exactly the same result as reading the file. ``path`` is only used in
    messages and copied to :attr:`LogText.path`.
    """
    compression = _sniff_compression(data[:_MAGIC_LEN])
    if compression is None:
        if len(data) > max_bytes:
            raise InputError(f"{path}: {len(data)} bytes is larger than the limit of {max_bytes}")
        raw = data
    else:
        raw = _decompress(io.BytesIO(data), compression, path, max_bytes)
    return _build(raw, path, compression)


# --------------------------------------------------------------------------------------------
# Bytes: compression, size cap
# --------------------------------------------------------------------------------------------


def _plural(n: int, word: str) -> str:
    """``"1 line"`` / ``"3 lines"``: notes are read by people."""
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _one_line(exc: BaseException) -> str:
    """First line of an exception message: InputError reasons must fit on one line."""
    text = getattr(exc, "strerror", None) or str(exc)
    first = str(text).strip().splitlines()
    return first[0] if first else type(exc).__name__


def _sniff_compression(head: bytes) -> str | None:
    """Name the compression from magic bytes, because file extensions lie."""
    if head.startswith(_GZIP_MAGIC):
        return "gzip"
    if head.startswith(_XZ_MAGIC):
        return "xz"
    # Too short to see the block magic: still call it bz2 so it is reported as truncated.
    if (
        head[:3] == b"BZh"
        and head[3:4].isdigit()
        and head[3:4] != b"0"
        and (len(head) < 10 or head[4:10] in _BZ2_BLOCK_MAGIC)
    ):
        return "bz2"
    return None


class _Replay(io.RawIOBase):
    """A raw stream that returns ``head`` first, then the rest of ``rest``.

    We must read the magic bytes before knowing which decompressor to use, and a pipe cannot be
    rewound, so the bytes already read are replayed instead of seeking back.
    """

    def __init__(self, head: bytes, rest: IO[bytes]) -> None:
        super().__init__()
        self._head = head
        self._rest = rest

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: WriteableBuffer, /) -> int:
        view = memoryview(buffer).cast("B")
        if self._head:
            n = min(len(view), len(self._head))
            view[:n] = self._head[:n]
            self._head = self._head[n:]
            return n
        data = self._rest.read(len(view))
        view[: len(data)] = data
        return len(data)


def _open_decompressor(kind: str, stream: IO[bytes]) -> io.BufferedIOBase:
    """A file-like decompressor for ``kind`` reading from ``stream``."""
    if kind == "gzip":
        return gzip.GzipFile(fileobj=stream, mode="rb")
    if kind == "bz2":
        return bz2.BZ2File(stream, mode="rb")
    return lzma.LZMAFile(stream, mode="rb", format=lzma.FORMAT_XZ)


def _decompress(stream: IO[bytes], kind: str, name: str, max_bytes: int) -> bytes:
    """Stream-decompress ``stream``; corrupt or truncated archives become a one-line InputError.

    The stdlib file wrappers decompress with a bounded output size per ``read`` call, so memory
    stays at roughly ``max_bytes`` plus one chunk even for a bomb. They also handle concatenated
    members (``cat a.gz b.gz``, pbzip2 output).
    """
    try:
        with _open_decompressor(kind, stream) as dec:
            return _read_checked(_guarded_reader(dec.read, name, kind, max_bytes), name)
    except EOFError:
        raise InputError(f"{name}: truncated {kind} archive (ends before its end-of-stream marker)") from None
    except (OSError, zlib.error, lzma.LZMAError, ValueError) as exc:
        raise InputError(f"{name}: corrupt {kind} archive: {_one_line(exc)}") from None


# --------------------------------------------------------------------------------------------
# Text: encoding, binary detection
# --------------------------------------------------------------------------------------------


def _sniff_utf16(raw: bytes) -> str | None:
    """Recognise BOM-less UTF-16 by its NUL bytes.

    ASCII text in UTF-16 has a NUL in every other byte (odd offsets for little-endian, even for
    big-endian). Requiring that pattern to be strong *and* one-sided keeps binary files, which
    have NULs everywhere, from being taken for UTF-16.
    """
    if raw.find(b"\x00", 0, _SAMPLE) < 0:
        return None  # no NUL byte at all (by memchr: the strided counts below walk the sample twice)
    sample = raw[:_SAMPLE]
    pairs = len(sample) // 2
    if pairs == 0:
        return None
    nul_even = sample[0 : 2 * pairs : 2].count(0)
    nul_odd = sample[1 : 2 * pairs : 2].count(0)
    if nul_odd * 4 >= pairs and nul_even * 10 <= nul_odd:
        return "utf-16-le"
    if nul_even * 4 >= pairs and nul_odd * 10 <= nul_even:
        return "utf-16-be"
    return None


_HIGH_BYTES = bytes(range(0x80, 0x100))


def _mostly_utf8(raw: bytes) -> tuple[str, int] | None:
    """Decode as UTF-8 with replacement when only a few bytes are invalid.

    A UTF-8 log cut in the middle of a character (``head -c``, log rotation) or with one stray
    byte must not be re-decoded as gb18030 or latin-1, which would garble every CJK character in
    it. GBK text, by contrast, is mostly invalid UTF-8, so it fails the ratio test below.
    """
    text = raw.decode("utf-8", "replace")
    bad = text.count("\ufffd") - raw.count("\ufffd".encode())
    ascii_chars = len(raw.translate(None, _HIGH_BYTES))
    valid_non_ascii = len(text) - ascii_chars - text.count("\ufffd")
    if bad > 0 and valid_non_ascii >= 4 * bad:
        return text, bad
    return None


def _looks_sane(text: str) -> bool:
    """True when a legacy decoding produced few control, replacement or private-use characters."""
    sample = text[:_SAMPLE]
    return len(_SUSPICIOUS.findall(sample)) * 100 <= len(sample)


def _decode(raw: bytes, name: str) -> tuple[str, str, list[str]]:
    """Pick an encoding and decode; return ``(text, encoding, notes)``. Never UnicodeDecodeError.

    Order: byte-order mark, BOM-less UTF-16, strict UTF-8, UTF-8 with a handful of bad bytes,
    strict gb18030 if the result looks like text (a superset of GBK, the Chinese Windows console
    encoding), then latin-1, which cannot fail. Binary input is refused along the way.
    """
    if raw.startswith(codecs.BOM_UTF8):
        text = raw[3:].decode("utf-8", "replace")
        return text, "utf-8-sig", ["decoded as utf-8-sig (byte-order mark removed)"]
    if raw.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        # The "utf-16" codec reads the BOM to pick the byte order and drops it.
        return raw.decode("utf-16", "replace"), "utf-16", ["decoded as utf-16 (byte-order mark)"]
    utf16 = _sniff_utf16(raw)
    if utf16 is not None:
        text = raw.decode(utf16, "replace")
        return text, utf16, [f"decoded as {utf16} (no byte-order mark; detected from NUL byte pattern)"]

    # All remaining candidates are ASCII-compatible, so a NUL byte is a NUL character: refuse
    # binary data before spending time decoding a possibly huge file.
    if b"\x00" in raw[:_SAMPLE]:
        raise InputError(f"{name}: looks binary (NUL bytes near the start), not a text log")
    try:
        return raw.decode("utf-8"), "utf-8", []
    except UnicodeDecodeError:
        pass
    mostly = _mostly_utf8(raw)
    if mostly is not None:
        text, bad = mostly
        replaced = _plural(bad, "invalid byte sequence")
        return text, "utf-8", [f"decoded as utf-8 with {replaced} replaced by U+FFFD"]
    try:
        text = raw.decode("gb18030")
    except UnicodeDecodeError:
        pass
    else:
        if _looks_sane(text):
            return text, "gb18030", ["decoded as gb18030"]
    return raw.decode("latin-1"), "latin-1", ["decoded as latin-1 (neither utf-8 nor gb18030)"]


# Every byte but the C0 controls _CONTROL counts and DEL: deleting them leaves one byte per such control.
_NOT_C0_CONTROL = bytes(b for b in range(256) if not _CONTROL.match(chr(b)) or b >= 0x80)


def _count_controls(sample: str, encoded: bytes | None = None) -> int:
    """``len(_CONTROL.findall(sample))``, by ``bytes.translate`` in C where it can be.

    The regex walks a 64 K sample at about 5 ns a character (0.35 ms per file read). In UTF-8 a C0
    control or DEL is one byte and a C1 control (U+0080-U+009F) starts with byte 0xC2; when the
    encoded sample has no 0xC2 byte, deleting every other byte leaves exactly the controls. ``encoded``:
    ``sample``'s UTF-8 bytes when the caller has them.
    """
    if encoded is None:
        encoded = sample.encode("utf-8", "surrogatepass")
    if b"\xc2" in encoded:
        return len(_CONTROL.findall(sample))
    return len(encoded.translate(None, _NOT_C0_CONTROL))


def _check_text(text: str, encoded: bytes | None, name: str) -> None:
    """Refuse decoded data that is not text: NULs or >10% control characters near the start.

    \\t \\n \\r, ESC and backspace do not count: terminals and progress bars produce them.
    ``encoded``: the UTF-8 bytes of ``text[:_SAMPLE]`` when the caller has them (or None).
    """
    sample = text[:_SAMPLE]
    if "\x00" in sample:
        raise InputError(f"{name}: looks binary (NUL characters near the start), not a text log")
    if "\x1b" in sample:
        # BEL legitimately ends OSC sequences (terminal titles, hyperlinks): judge what is left.
        sample, encoded = _ANSI.sub("", sample), None
    controls = _count_controls(sample, encoded)
    if controls * 10 > len(sample):
        share = 100 * controls // len(sample)
        raise InputError(
            f"{name}: looks binary ({share}% control characters in the first "
            f"{len(sample)} characters), not a text log"
        )


# --------------------------------------------------------------------------------------------
# Lines: splitting, terminal debris, dedent
# --------------------------------------------------------------------------------------------


# The bytes of a log line glued to a tqdm rate bracket ("]" + level letter + " ") and of the one-character
# markers. All are ASCII: in UTF-8 such a byte is always that character, never part of another one.
_GLUE_LEVEL = np.zeros(256, dtype=bool)
_GLUE_LEVEL[list(b"DIWE")] = True
_CLOSE, _SPACE, _TAB, _NEWLINE = (ord(c) for c in "] \t\n")
_CHAR_MARKERS_B = tuple(marker.encode("ascii") for marker in _CHAR_MARKERS)


class _Marks:
    """Which physical lines of a block need more than a split, found on its UTF-8 bytes.

    ``marked``: lines holding ``\\r``, ESC or backspace; ``glued``: lines holding ``]``, a level letter
    and a space in a row (a superset of the lines :data:`_TQDM_GLUE` finds glue in, checked with it
    once split); ``blank``: lines ending in a space or tab. Indices are 0-based lines of the block
    (``\\n``-separated), ascending.

    Why bytes and numpy: the line of each such byte is the number of ``\\n`` before it (one
    ``searchsorted`` over the newline positions), and the comparisons run over the whole block in C.
    The two whole-text regex scans this replaces (the glue regex, stopping at every ``]``, and a
    blank-before-newline regex, stopping at every newline) cost 0.3-0.5 ms per MB each; this costs
    about 0.2 for all three. Valid for a text exactly when each of its lines holds the same ASCII
    characters, in the same order, as the same line of ``data``: true of the UTF-8 bytes it was
    decoded from (with or without replaced bytes: the decoder never merges an ASCII byte into another
    character) as long as no ``\\r\\n`` or NUL was removed from the text.
    """

    __slots__ = ("blank", "glued", "marked", "wide")

    def __init__(self, data: bytes, *, spans: bool = False) -> None:
        a = np.frombuffer(data, dtype=np.uint8)
        mask = _scratch_mask(len(a))
        ends = np.flatnonzero(np.equal(a, _NEWLINE, out=mask))
        found = [
            np.flatnonzero(np.equal(a, marker[0], out=mask)) for marker in _CHAR_MARKERS_B if marker in data
        ]
        self.marked: list[int] = []
        if found:
            self.marked = np.unique(np.searchsorted(ends, np.concatenate(found))).tolist()
        glue = np.flatnonzero(np.equal(a[:-2], _CLOSE, out=mask[: max(len(a) - 2, 0)]))
        glue = glue[a[glue + 2] == _SPACE]
        glue = glue[_GLUE_LEVEL[a[glue + 1]]]
        self.glued: list[int] = np.searchsorted(ends, glue).tolist() if len(glue) else []
        before = a[ends - 1]  # the last character of each terminated line (or the \n before an empty one)
        if len(ends) and ends[0] == 0:
            before[0] = _NEWLINE  # an empty first line: a[-1] is the block's last byte, not its own
        self.blank: list[int] = np.flatnonzero((before == _SPACE) | (before == _TAB)).tolist()
        if data.endswith((b" ", b"\t")):
            self.blank.append(len(ends))  # the last line, without a terminator
        # ``wide`` (with ``spans``): see :func:`_utf8_lines`; None when there are too many to be worth it.
        self.wide: list[tuple[int, int]] | None = None
        if spans:
            self.wide = [] if data.isascii() else _wide_spans(a, ends, mask)


# More runs of lines with non-ASCII bytes than this (or one per _WIDE_EVERY bytes, if more) in a block:
# decoded as one text (a log in Chinese). Each run costs two decodes and two splits, a few microseconds;
# a 4 MiB block decoded two bytes a character costs about 1.5 ms more (verbose logs repeat a build
# with its five tqdm bars every 40 KB).
_WIDE_RUNS = 64
_WIDE_EVERY = 8 * 1024


def _wide_spans(a: np.ndarray, ends: np.ndarray, mask: np.ndarray) -> list[tuple[int, int]] | None:
    """Byte spans ``[start, end)`` of the runs of consecutive lines holding a non-ASCII byte, ``end`` at
    the ``\\n`` after the run (or the end of the data); None for too many runs (see ``_WIDE_RUNS``)."""
    wide = np.flatnonzero(np.greater_equal(a, 0x80, out=mask))
    wide = wide[np.diff(wide, prepend=-2) > 1]  # the first of each run of such bytes (a tqdm bar: 300 in one)
    lines = np.searchsorted(ends, wide)
    lines = lines[np.diff(lines, prepend=-1) > 0]  # ascending: each line once
    spans: list[tuple[int, int]] = []
    count = len(ends)
    most = max(_WIDE_RUNS, len(a) // _WIDE_EVERY)
    for i in lines.tolist():
        start = int(ends[i - 1]) + 1 if i else 0
        end = int(ends[i]) if i < count else len(a)
        if spans and spans[-1][1] + 1 == start:
            spans[-1] = (spans[-1][0], end)
        elif len(spans) == most:
            return None
        else:
            spans.append((start, end))
    return spans


def _utf8_lines(data: bytes, wide: list[tuple[int, int]]) -> list[str]:
    """``data.decode("utf-8").split("\\n")``, decoding the ASCII lines apart from the ``wide`` spans of
    lines that hold other bytes (:func:`_wide_spans`); UnicodeDecodeError where ``data`` is not UTF-8.

    Why: one non-ASCII character (a tqdm bar drawn with block characters, in nearly every build log)
    makes the whole decoded text two bytes a character; decoding it cost 0.4 ms per MB instead of 0.05,
    and splitting it had to look for the widest character of every line. Decoding is the same either
    way: the pieces end at ``\\n``, which no UTF-8 sequence spans.
    """
    view = memoryview(data)
    phys: list[str] = []
    pos = 0
    for start, end in wide:
        if start > pos:
            phys += str(view[pos : start - 1], "ascii").split("\n")  # up to the \n before `start`
        phys += str(view[start:end], "utf-8").split("\n")
        pos = end + 1
    if pos <= len(data):
        phys += str(view[pos:], "ascii").split("\n")
    return phys


def _utf8_head(raw: bytes) -> tuple[str, bytes]:
    """The first ``_SAMPLE`` characters of the text of ``raw`` (valid UTF-8) and their bytes, for
    :func:`_check_text` where the text is not built as one string (see :func:`_utf8_lines`)."""
    head = raw[:_SAMPLE]
    if head.isascii():
        return head.decode("ascii"), head
    first, used = codecs.utf_8_decode(head, "strict", False)  # up to a character cut at the end
    need = _SAMPLE - len(first)
    if need and used < len(raw):
        more = codecs.utf_8_decode(raw[used : used + 4 * need], "strict", False)[0][:need]
        return first + more, raw[: used + len(more.encode("utf-8"))]
    return first, raw[:used]


# Each thread's mask for _Marks, kept between blocks up to this size. A fresh block-sized array for each
# comparison took fresh pages from the system every block (the page faults cost more than the compares:
# 0.7 against 0.3 ms per MB on a 47 MB log).
_SCRATCH_KEEP = 2 * STREAM_BLOCK_BYTES
_scratch = threading.local()


def _scratch_mask(size: int) -> np.ndarray:
    """A boolean array of ``size`` to compute into (contents undefined), this thread's own."""
    if size > _SCRATCH_KEEP:
        return np.empty(size, dtype=bool)
    mask: np.ndarray | None = getattr(_scratch, "mask", None)
    if mask is None or len(mask) < size:
        mask = _scratch.mask = np.empty(max(size, 1 << 16), dtype=bool)
    return mask[:size]


def _encoded(text: str) -> bytes:
    """``text`` as UTF-8 for :class:`_Marks` (a copy at memory speed for ASCII text)."""
    return text.encode("ascii") if text.isascii() else text.encode("utf-8", "surrogatepass")


def _marked_lines(phys: list[str], marks: _Marks) -> list[int]:
    """Indices (ascending, unique) of the physical lines with a slow-path marker: ``\\r``, ESC,
    backspace, or a log line glued to a tqdm rate (a glue candidate counts when the glue regex finds
    glue in its line; a glued line's ``]`` is a candidate, so none is missed)."""
    search = _TQDM_GLUE.search
    glued = [i for i in dict.fromkeys(marks.glued) if search(phys[i])]
    return sorted({*marks.marked, *glued}) if glued else marks.marked


def _physical_lines(text: str) -> tuple[list[str], list[int]]:
    """``text.split("\\n")`` and the 0-based indices (ascending, unique) of the lines with a marker."""
    phys = text.split("\n")
    return phys, _marked_lines(phys, _Marks(_encoded(text)))


def _common_prefix(strings: list[str]) -> str:
    """Longest common leading substring (the min and max strings bound all others)."""
    lo, hi = min(strings), max(strings)
    n = 0
    while n < len(lo) and lo[n] == hi[n]:
        n += 1
    return lo[:n]


def _dedent(phys: list[str]) -> str | None:
    """Remove markdown code-block indentation; return a note, or None if nothing was done.

    Only when *every* non-blank line starts with four spaces or a tab: a real log has lines at
    column 0, and its indented continuation lines must keep their indentation. The amount removed
    is the common leading whitespace (the minimum over non-blank lines), the same for every line,
    so relative indentation survives. Works on physical lines, before ``\\r`` frames are split:
    markdown indents the start of a physical line, not each progress-bar frame.
    """
    indented = ("    ", "\t")
    prefix = ""  # common leading whitespace of the non-blank lines seen so far
    mixed = False  # some lines use a tab, others spaces: no common prefix, one level each
    for s in phys:
        if prefix and s.startswith(prefix):
            continue  # the usual case once the prefix is known: one C call per line
        if not s.startswith(indented):
            if s.strip(" \t\r"):
                return None  # a non-blank line at column 0 (the usual case for a real log)
            continue
        if mixed or not s.strip(" \t\r"):
            continue
        lead = s[: len(s) - len(s.lstrip(" \t"))]
        prefix = _common_prefix([prefix, lead]) if prefix else lead
        if not prefix.startswith(indented):
            mixed, prefix = True, ""
    if not prefix and not mixed:
        return None  # only blank lines
    # Blank lines are sliced too: they stay blank, and one comprehension beats a per-line test.
    if not mixed:
        cut = len(prefix)
        phys[:] = [s[cut:] for s in phys]
        if prefix == " " * cut:
            return f"dedented {_plural(cut, 'space')}"
        if prefix == "\t" * cut:
            return f"dedented {_plural(cut, 'tab')}"
        return f"dedented {cut} leading whitespace characters"
    phys[:] = [s[1:] if s.startswith("\t") else s[4:] for s in phys]
    return "dedented one markdown level (a tab or 4 spaces)"


class _Counts:
    """Tallies for the notes, so users can see how much debris was removed."""

    def __init__(self) -> None:
        self.ansi_lines = 0
        self.bs_lines = 0
        self.cr_lines = 0
        self.cr_frames = 0
        self.glued = 0
        self.crlf = 0
        self.dedent_note: str | None = None


def _scrub(line: str, counts: _Counts) -> str:
    """Remove ANSI escape codes and backspaces from one physical line (its ``\\r`` stay)."""
    if "\x1b" in line:
        line = _ANSI.sub("", line)
        counts.ansi_lines += 1
    if "\x08" in line:
        # Backspaces come from spinners redrawing a character; the visible text is what is left.
        line = line.replace("\x08", "")
        counts.bs_lines += 1
    return line


def _expand(line: str, counts: _Counts) -> list[str]:
    """Split one scrubbed physical line into its logical lines.

    tqdm redraws the bar by writing ``\\r`` and the new frame, so each frame is its own logical
    line. Empty frames (from a leading or trailing ``\\r``, or a bar cleared with spaces) are
    dropped, but a physical line always yields at least one logical line so every physical line
    number stays present. A toolkit line glued after a tqdm rate bracket is split off as well.
    """
    glued = 0
    if "it/s]" in line or "s/it]" in line:
        # Mark glue points with "\n" (cannot occur inside a physical line): one regex call per
        # line instead of one per frame, which matters for bars redrawn thousands of times.
        line, glued = _TQDM_GLUE.subn("]\n", line)
        counts.glued += glued
    has_cr = "\r" in line
    if has_cr:
        frames = line.replace("\n", "\r").split("\r") if glued else line.split("\r")
    else:
        frames = line.split("\n") if glued else [line]
    out = [piece for piece in (frame.rstrip(" \t") for frame in frames) if piece]
    if has_cr:
        counts.cr_lines += 1
        counts.cr_frames += len(out) - glued  # each glue point adds exactly one non-empty piece
    return out or [""]


def _split(text: str, marks: _Marks | None = None) -> tuple[list[str], list[int], list[str]]:
    """Turn decoded text into ``(lines, numbers, notes)`` following the module's conventions."""
    counts = _Counts()
    lines, numbers, _ = _split_block(text, 0, counts, dedent=True, marks=marks)
    return lines, numbers, _line_notes(counts)


def _split_block(
    text: str, offset: int, counts: _Counts, *, dedent: bool, marks: _Marks | None = None
) -> tuple[list[str], list[int], int]:
    """Split one block of decoded text whose first physical line is number ``offset + 1``.

    Returns ``(lines, numbers, physical line count)``. A block is a whole file, or (streaming) a run
    of complete lines: everything here is local to a physical line except the dedent decision,
    which needs every line and is therefore only taken when ``dedent`` is set. ``marks`` may come
    from the bytes ``text`` was decoded from (see :class:`_Marks` for when that is valid); without
    them they are found on the text's own encoding.
    """
    if not text:
        return [], [], 0
    if "\r" in text:
        crlf = text.count("\r\n")
        if crlf:
            text = text.replace("\r\n", "\n")
            counts.crlf += crlf
            marks = None  # lines lost their \r: the bytes' marks no longer fit
    if marks is None:
        marks = _Marks(_encoded(text))
    return _split_lines(text.split("\n"), text.endswith("\n"), offset, counts, dedent=dedent, marks=marks)


def _split_lines(
    phys: list[str], terminated: bool, offset: int, counts: _Counts, *, dedent: bool, marks: _Marks
) -> tuple[list[str], list[int], int]:
    """:func:`_split_block` once the text is split at ``\\n`` into ``phys`` (``terminated``: the text
    ends with one), with the marks of its lines."""
    if terminated:
        phys.pop()  # a final terminator ends the last line; it does not start a new one
    dirty = _marked_lines(phys, marks)
    if len(dirty) > 1:
        dirty = _scrub_colour_lines(phys, dirty, counts)
    for i in dirty:
        phys[i] = _scrub(phys[i], counts)

    if dedent:
        counts.dedent_note = _dedent(phys)

    # Only the lines that end in blanks are stripped: rstrip leaves every other line as it is, and
    # these are a few per block (a list comprehension over every line cost 0.04 us a line). Dirty
    # lines among them are stripped again by _expand, piece by piece.
    for i in marks.blank:
        phys[i] = phys[i].rstrip(" \t")

    if not dirty:
        return phys, list(range(offset + 1, offset + len(phys) + 1)), len(phys)
    lines: list[str] = []
    numbers: list[int] = []
    prev = 0
    for i in dirty:
        if i > prev:
            lines.extend(phys[prev:i])
            numbers.extend(range(offset + prev + 1, offset + i + 1))
        pieces = _expand(phys[i], counts)
        lines.extend(pieces)
        numbers.extend([offset + i + 1] * len(pieces))
        prev = i + 1
    lines.extend(phys[prev:])
    numbers.extend(range(offset + prev + 1, offset + len(phys) + 1))
    return lines, numbers, len(phys)


def _scrub_colour_lines(phys: list[str], dirty: list[int], counts: _Counts) -> list[int]:
    """Clean the lines of ``dirty`` whose only debris is ANSI codes, in one regex call over them all;
    returns the dirty lines left (to :func:`_scrub` and :func:`_expand` line by line).

    Such a line (ESC, no ``\\r``, no backspace, no tqdm rate after scrubbing) is exactly what
    ``_expand(_scrub(line))`` makes of it: one piece, the scrubbed line without trailing blanks, under
    its own number, so it leaves the dirty list (a coloured logger prints hundreds per block, each
    paid a regex call and two function calls). The lines are joined with ``\\r``: none of them holds
    one, and no ANSI pattern can match it, so the substitution keeps them apart.
    """
    colour = [i for i in dirty if "\x1b" in (line := phys[i]) and "\r" not in line and "\x08" not in line]
    if not colour:
        return dirty
    cleaned = _ANSI.sub("", "\r".join([phys[i] for i in colour])).split("\r")
    counts.ansi_lines += len(colour)
    done = set()
    for i, line in zip(colour, cleaned, strict=True):
        phys[i] = line  # _scrub will find nothing more in it
        if "it/s]" not in line and "s/it]" not in line:
            phys[i] = line.rstrip(" \t")
            done.add(i)
    return [i for i in dirty if i not in done] if done else dirty


def _line_notes(counts: _Counts) -> list[str]:
    notes: list[str] = []
    if counts.crlf:
        notes.append(f"normalized {_plural(counts.crlf, 'CRLF line ending')}")
    if counts.ansi_lines:
        notes.append(f"stripped ANSI codes on {_plural(counts.ansi_lines, 'line')}")
    if counts.bs_lines:
        notes.append(f"removed backspaces on {_plural(counts.bs_lines, 'line')}")
    if counts.cr_lines:
        frames = _plural(counts.cr_frames, "carriage-return frame")
        notes.append(f"split {frames} (from {_plural(counts.cr_lines, 'physical line')})")
    if counts.glued:
        notes.append(f"split {_plural(counts.glued, 'log line')} glued to progress bars")
    if counts.dedent_note:
        notes.append(counts.dedent_note)
    return notes


def _build(raw: bytes, name: str, compression: str | None) -> LogText:
    """Decode, check and split ``raw`` (already decompressed) into a :class:`LogText`."""
    digest = hashlib.sha256(raw).hexdigest()
    if not raw:
        return LogText(name, [], [], "utf-8", compression, digest, 0, ())
    if (
        not raw.startswith((codecs.BOM_UTF8, codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE))
        and _sniff_utf16(raw) is None
    ):
        # What _decode reads as strict UTF-8, decoded line by line in runs (see _utf8_lines).
        marks = _block_marks(raw, spans=True)
        phys = _plain_lines(raw, marks)
        if phys is not None and marks is not None:
            _check_text(*_utf8_head(raw), name)
            counts = _Counts()
            lines, numbers, _ = _split_lines(phys, raw.endswith(b"\n"), 0, counts, dedent=True, marks=marks)
            return LogText(
                name, lines, numbers, "utf-8", compression, digest, len(raw), tuple(_line_notes(counts))
            )
    text, encoding, notes = _decode(raw, name)
    _check_text(text, None, name)
    # In every encoding but UTF-16 a NUL character is a NUL byte: found by memchr in the bytes, where
    # `in` on text that is not pure ASCII (one tqdm bar of block characters) walks it at 0.3 ms per MB.
    has_nul = "\x00" in text if encoding.startswith("utf-16") else b"\x00" in raw
    if has_nul:
        # Past the sampled head: serial consoles emit stray NULs on line glitches; drop them.
        notes.append(f"removed {_plural(text.count(chr(0)), 'NUL character')}")
        text = text.replace("\x00", "")
    # Text decoded from UTF-8 has its lines' ASCII characters byte for byte in `raw` (see _Marks).
    marks = _block_marks(raw) if encoding == "utf-8" else None
    lines, numbers, line_notes = _split(text, marks)
    return LogText(name, lines, numbers, encoding, compression, digest, len(raw), tuple(notes + line_notes))
