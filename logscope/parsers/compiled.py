"""Compiled grammars kept on disk, so a process does not rebuild what the last one built.

Building the fast line lexers (`logscope.parsers.grammar.LineLexer`) means loading each grammar into
Lark and compiling some 130 alternations of up to 40 terminals with Python's `re`: 0.5 s of CPU, more
than reading a small log, parsing it and running every rule together. What that work produces is data:
the lexer's plan (terminal regexes, their order per context, their first characters) and, per regex,
the program `re` compiles it into. This module stores both in one file per grammar and rebuilds the
regex objects from their programs (`_sre.compile`, the last step of `re.compile`) in a few
milliseconds.

The cache is a layer in front of the build, keyed on content, never on the grammar's internals:

- the file name holds a hash of the grammar text, of the code that turns a grammar into a lexer
  (this module and `grammar.py`), of the Lark and Python versions and of `re`'s program format
  (`_sre.MAGIC`), so any change to one of them misses and rebuilds;
- the folder is `$LOGSCOPE_CACHE_DIR`, else `$XDG_CACHE_HOME/logscope`, else `~/.cache/logscope`, with
  a subfolder per logscope version; `LOGSCOPE_CACHE_DIR=off` turns the cache off;
- a file that is missing, truncated, damaged (its CRC-32 is checked) or that `_sre` refuses is ignored
  and the grammar is built as if there were no cache; a folder that cannot be written is only slower.
  Files are written to a temporary name and renamed, so concurrent audit workers never read half a file.
"""

from __future__ import annotations

import array
import base64
import hashlib
import importlib
import importlib.util
import json
import os
import re
import sys
import tempfile
import zlib
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from logscope._version import __version__

try:  # `_sre` is CPython's regex engine; elsewhere the cache only holds the lexer plan
    import _sre
except ImportError:  # pragma: no cover - other Python implementations
    _sre = None

FORMAT = 3
_MAGIC_LINE = b"logscope-compiled-grammar"
_ENV = "LOGSCOPE_CACHE_DIR"


def cache_root() -> Path | None:
    """The folder compiled grammars are kept in, or None when the cache is turned off."""
    configured = os.environ.get(_ENV)
    if configured is not None:
        return None if configured.strip().lower() in ("", "off", "0", "no") else Path(configured)
    xdg = os.environ.get("XDG_CACHE_HOME")
    try:
        base = Path(xdg) if xdg else Path.home() / ".cache"
    except (RuntimeError, KeyError):  # no home directory to be found
        return None
    # An unexpanded `~` (no HOME, no passwd entry) would put the cache in the working folder: off instead.
    return base / "logscope" if base.is_absolute() else None


def cache_file(name: str, grammar: str, root: Path | None = None, suffix: str = ".json") -> Path | None:
    """Where the compiled form of grammar `name` with text `grammar` is kept (None: cache off)."""
    root = cache_root() if root is None else root
    if root is None:
        return None
    parts = (
        grammar.encode("utf-8"),
        source_of(__file__),
        source_of(str(Path(__file__).with_name("grammar.py"))),
        _lark_version().encode(),
        sys.implementation.cache_tag.encode() if sys.implementation.cache_tag else b"",
        str(getattr(_sre, "MAGIC", 0)).encode(),
        str(FORMAT).encode(),
    )
    return named_by(root, name, parts, suffix)


def named_by(root: Path, name: str, parts: Iterable[bytes], suffix: str = ".json") -> Path:
    """`<root>/grammars-<logscope version>/<name>-<hash of parts><suffix>`: a cache file whose name
    changes with anything its content was derived from. Each part is hashed with its length, so two
    different lists of parts never join into the same bytes."""
    digest = hashlib.sha256()
    for part in parts:
        digest.update(len(part).to_bytes(8, "little") + part)
    return root / f"grammars-{__version__}" / f"{name}-{digest.hexdigest()[:24]}{suffix}"


def source_of(path: str) -> bytes:
    """A module's source, which names its cache file (b"" when there is none to read)."""
    try:
        return Path(path).read_bytes()
    except OSError:  # a zipped or source-less install: the version in the folder name still separates
        return b""


def _lark_version() -> str:
    """Lark's version, read from its package source: importing Lark (15 ms) only to name the cache
    would cost every process that finds its grammars already compiled."""
    spec = importlib.util.find_spec("lark")
    origin = spec.origin if spec is not None else None
    if origin:
        try:
            text = Path(origin).read_text(encoding="utf-8", errors="replace")
        except OSError:
            text = ""
        found = re.search(r"""^__version__\b[^=]*=\s*["']([^"']+)["']""", text, re.MULTILINE)
        if found:
            return found.group(1)
    import lark

    return str(getattr(lark, "__version__", ""))


class CompiledGrammar:
    """The stored plan of one grammar's lexer and the compiled programs of its regexes.

    `compile(pattern)` returns the regex, from its stored program when there is one (and `re.compile`
    otherwise, remembering the program); `save()` writes the file when something was added.

    The file: a head line (format and a CRC-32 of the rest, which catches a damaged file; the folder is
    trusted as `__pycache__` is), an index line (the plan, and per regex, keyed by a hash of its pattern,
    where its program lies), then the programs. A process decodes only the programs it asks for: the MCU
    grammar's 2.8 MB took 6 ms to decode whole, while an RKNN log needs a handful of its alternations.
    """

    def __init__(
        self,
        path: Path | None,
        plan: dict[str, Any] | None,
        programs: dict[str, bytes | list[Any]],
    ) -> None:
        self.path = path
        self.plan = plan
        self._programs = programs  # pattern key -> the program's JSON (as stored) or the program
        self._dirty = False
        self.hits = 0
        self.misses = 0

    @classmethod
    def load(cls, path: Path | None) -> CompiledGrammar:
        """Read the file at `path`; anything wrong with it gives an empty cache, never an error."""
        if path is None:
            return cls(None, None, {})
        try:
            rest = read_checked(path, _MAGIC_LINE, FORMAT)
            index_line, _, blob = rest.partition(b"\n")
            index = json.loads(index_line)
            plan, where = index["plan"], index["programs"]
            if not isinstance(plan, dict) or not isinstance(where, dict):
                raise ValueError("malformed")
            programs: dict[str, bytes | list[Any]] = {
                key: blob[int(offset) : int(offset) + int(length)] for key, (offset, length) in where.items()
            }
        except (OSError, ValueError, KeyError, TypeError):
            return cls(path, None, {})
        return cls(path, plan, programs)

    def compile(self, pattern: str) -> re.Pattern[str]:
        """`re.compile(pattern)`, from the stored program when it is there and `_sre` accepts it."""
        key = _key(pattern)
        stored = self._programs.get(key)
        if stored is not None and _sre is not None:
            try:
                program = json.loads(stored) if isinstance(stored, bytes) else stored
                flags, packed, groups, groupindex, indexgroup = program
                code = array.array("I")
                code.frombytes(base64.b64decode(packed))
                compiled: re.Pattern[str] = _sre.compile(
                    pattern, flags, code.tolist(), groups, groupindex, tuple(indexgroup)
                )
            except (TypeError, ValueError, RuntimeError, OverflowError):  # RuntimeError: `_sre` refused it
                del self._programs[key]
            else:
                self.hits += 1
                return compiled
        self.misses += 1
        fresh = _program(pattern)
        if fresh is not None:
            self._programs[key] = fresh
            self._dirty = True
        return re.compile(pattern)

    @property
    def dirty(self) -> bool:
        """Something was added that the file does not hold yet."""
        return self._dirty

    def set_plan(self, plan: dict[str, Any]) -> None:
        self.plan = plan
        self._dirty = True

    def save(self) -> None:
        """Write the file if anything was added; a folder that cannot be written is left alone."""
        if not self._dirty or self.path is None:
            return
        chunks: list[bytes] = []
        where: dict[str, tuple[int, int]] = {}
        offset = 0
        for key, program in self._programs.items():
            chunk = (
                program if isinstance(program, bytes) else json.dumps(program, separators=(",", ":")).encode()
            )
            where[key] = (offset, len(chunk))
            chunks.append(chunk)
            offset += len(chunk)
        index = json.dumps({"plan": self.plan, "programs": where}, separators=(",", ":")).encode()
        if write_checked(self.path, _MAGIC_LINE, FORMAT, index + b"\n" + b"".join(chunks)):
            self._dirty = False


def read_checked(path: Path, magic: bytes, fmt: int) -> bytes:
    """The body of a cache file written by `write_checked`. OSError when it cannot be read, ValueError
    when it is of another kind or format, or damaged (its CRC-32)."""
    head, _, body = path.read_bytes().partition(b"\n")
    found_magic, found_fmt, checksum = head.split(b" ")
    if found_magic != magic or int(found_fmt) != fmt:
        raise ValueError(f"not a {magic.decode()} file of format {fmt}")
    if int(checksum, 16) != zlib.crc32(body):
        raise ValueError("checksum mismatch")
    return body


def write_checked(path: Path, magic: bytes, fmt: int, body: bytes) -> bool:
    """Write a cache file: a head line (`magic`, the format, a CRC-32 of the body), then the body. It is
    written to a temporary name and renamed, so a concurrent reader never sees half a file. False when
    the folder cannot be written: a cache that cannot be kept only costs the next process its work."""
    head = b" ".join([magic, str(fmt).encode(), f"{zlib.crc32(body):08x}".encode()])
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=path.name, suffix=".tmp", dir=path.parent)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(head + b"\n" + body)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except OSError:
        return False
    return True


def _key(pattern: str) -> str:
    """A regex's key in the file: a hash of its pattern (the patterns themselves run to 400 KB)."""
    return hashlib.blake2b(pattern.encode("utf-8"), digest_size=16).hexdigest()


def _program(pattern: str) -> list[Any] | None:
    """What `re.compile` hands to `_sre.compile` for `pattern` (flags 0), as JSON-able data: the
    program's 32-bit words travel as base64 (a JSON list of half a million numbers took twice as long to
    load), decoded only for the regexes a process asks for."""
    if _sre is None:
        return None
    try:
        _compiler = importlib.import_module("re._compiler")  # no type stubs for re's private modules
        _parser = importlib.import_module("re._parser")
        parsed = _parser.parse(pattern, 0)
        code = array.array("I", [int(op) for op in _compiler._code(parsed, 0)])
        groupindex = dict(parsed.state.groupdict)
        indexgroup: list[str | None] = [None] * parsed.state.groups
        for key, index in groupindex.items():
            indexgroup[index] = key
        packed = base64.b64encode(code.tobytes()).decode("ascii")
        return [int(parsed.state.flags), packed, parsed.state.groups - 1, groupindex, indexgroup]
    except Exception:  # a private API that may change: then this regex is only not stored
        return None
