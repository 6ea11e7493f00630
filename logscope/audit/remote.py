"""Audit inputs in object stores: `s3://bucket/ci/**/*.log`, and URLs of any other fsspec file system.

Logs of CI builds are kept in buckets, and a dask cluster has no shared file system: so an audit argument
with a URL scheme (`s3://`, `gs://`, `az://`, `memory://`, ...) is listed with fsspec and read where it is.

- **Listing** (the auditing process): a glob is expanded (`**` spans any number of prefix levels), a
  bucket or prefix is walked like a folder with the same name patterns, and names starting with a dot
  are skipped unless the glob names them, as for local folders. Each listed object's size, modification
  time and ETag are asked for; no byte of an object is read here.
- **Reading** (the worker, wherever it runs: the URL is what is shipped, never the bytes): the object is
  opened by its URL and streamed through the same reader as a local file (`LogStream`): the size cap
  before the first byte, binary input refused on its first block, gzip / xz / bz2 decompressed under
  the same cap. The bytes are hashed as they pass, so an object is downloaded once; what the parse did
  not need (an archive's tail, a refused binary object) is read only to finish its hash, never past the
  size cap.
- **Resume**: an object whose size, modification time and ETag match what the store recorded for its
  URL is skipped unread. The content hash is only known once a worker has read the object, so a copy
  of content already stored is parsed again (its rows replace the stored ones) rather than recognised
  before parsing as a local copy is.

The URL, with its scheme, is the path stored. `file://` URLs are local paths and are audited as such.
Credentials and the endpoint come only from the environment and fsspec's standard configuration
(`AWS_ACCESS_KEY_ID` / `AWS_SECRET_ACCESS_KEY` or `AWS_PROFILE`, `AWS_ENDPOINT_URL` for an S3-compatible
store, `FSSPEC_S3` or `~/.config/fsspec/` for other s3fs options), on every worker; a URL carrying a
password is refused, so no secret is ever stored, printed or shipped with a task. `memory://` is each
process's own: usable with `--jobs 1`.
"""

from __future__ import annotations

import datetime as dt
import fnmatch
import glob
import hashlib
import io
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import IO, TYPE_CHECKING, Any, TypeVar, cast
from urllib.parse import SplitResult, unquote, urlsplit

from logscope.errors import ConfigError, InputError
from logscope.io import DEFAULT_MAX_BYTES

if TYPE_CHECKING:
    from _typeshed import WriteableBuffer

# Objects larger than this are not read (as for local files); the planner and the worker both check it.
MAX_BYTES = DEFAULT_MAX_BYTES
EXTRA = "pip install 'logscope[s3]'"
# A scheme of two letters or more: `C:\\logs` or a file named `a:b` is not a URL.
_URL = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]+)://")
# How much an object read asks the store for at once (fsspec's read-ahead block): fewer, larger requests
# than the stream's own blocks, since each request to an object store has a round trip.
_BLOCK = 4 * 1024 * 1024

T = TypeVar("T")


def url_scheme(text: str) -> str | None:
    """The scheme of a URL argument (`s3`, `file`, ...), lower case; None for a local path."""
    match = _URL.match(text)
    return match.group(1).lower() if match else None


def is_url(text: str) -> bool:
    """Whether `text` names an object read through fsspec (any URL but `file://`, which is local)."""
    scheme = url_scheme(text)
    return scheme is not None and scheme != "file"


def file_url_path(text: str) -> str | None:
    """The local path of a `file://` URL (`file:///srv/ci/a.log` -> `/srv/ci/a.log`), else None."""
    if url_scheme(text) != "file":
        return None
    parts = _split(text)
    if parts.netloc not in ("", "localhost"):
        raise InputError(f"{text}: a file:// URL on another host ({parts.netloc}) cannot be read")
    return unquote(parts.path)


@dataclass(frozen=True)
class ObjectInfo:
    """What identifies an object's version without reading it."""

    size: int
    mtime: dt.datetime | None  # UTC, naive, whole seconds
    etag: str | None

    @property
    def mtime_ns(self) -> int | None:
        if self.mtime is None:
            return None
        return (self.mtime - dt.datetime(1970, 1, 1)) // dt.timedelta(microseconds=1) * 1000


# ---------------------------------------------------------------------------------------- listing


def discover_url(url: str, patterns: Iterable[str]) -> list[str]:
    """The URLs of the objects `url` names: itself, the objects under a bucket or prefix whose names match
    `patterns`, or the matches of a glob; sorted. `InputError` when it names nothing or cannot be listed
    (no such bucket, access denied), `ConfigError` when the protocol's package is not installed."""
    fs, path = _filesystem(url)
    pats = tuple(patterns)
    fs.invalidate_cache()  # a listing cached by an earlier audit in this process would miss new objects
    out: list[str] = []
    if glob.has_magic(path):
        found = _call(url, lambda: fs.glob(path, detail=True))
        hidden_ok = "/." in "/" + path
        base = _literal_prefix(path)
        for name, info in sorted(found.items()):
            if not hidden_ok and _hidden(name[len(base) :]):
                continue
            if info.get("type") == "directory":
                out += _walk(fs, url, name, pats)
            else:
                out.append(fs.unstrip_protocol(name))
        if not out:
            if base.strip("/"):  # say so when the bucket or prefix itself is missing
                _call(url, lambda: fs.info(base.rstrip("/")))
            raise InputError(f"{url}: matched no object")
        return out
    info = _call(url, lambda: fs.info(path))
    if info.get("type") == "directory":
        return _walk(fs, url, path, pats)
    return [fs.unstrip_protocol(path)]


def _walk(fs: Any, url: str, prefix: str, patterns: tuple[str, ...]) -> list[str]:
    found = _call(url, lambda: fs.find(prefix, detail=True))
    out = []
    for name, info in sorted(found.items()):
        if info.get("type") == "directory" or _hidden(name[len(prefix) :]):
            continue
        if any(fnmatch.fnmatch(name.rsplit("/", 1)[-1], pat) for pat in patterns):
            out.append(fs.unstrip_protocol(name))
    return out


def _literal_prefix(path: str) -> str:
    """The part of a glob before its first pattern character, up to a `/`."""
    first = min((i for i, ch in enumerate(path) if ch in "*?["), default=len(path))
    return path[: path.rfind("/", 0, first) + 1]


def _hidden(relative: str) -> bool:
    return any(part.startswith(".") for part in relative.split("/"))


def too_large(url: str, size: int, max_bytes: int) -> str:
    return f"{url}: {size} bytes is larger than the limit of {max_bytes}"


def object_info(url: str) -> ObjectInfo:
    """Size, modification time and ETag of the object at `url` (`InputError` if it cannot be asked)."""
    fs, path = _filesystem(url)
    info = _call(url, lambda: fs.info(path))
    if info.get("type") != "file":
        raise InputError(f"{url}: not an object (a bucket or prefix)")
    return _identity(info)


def _identity(info: dict[str, Any]) -> ObjectInfo:
    """The fields fsspec file systems name differently: S3 `LastModified`/`ETag`, GCS `updated`/`etag`,
    Azure `last_modified`/`etag`, the memory file system `created`."""
    mtime: Any = None
    for key in ("LastModified", "last_modified", "mtime", "updated", "modified", "created"):
        if info.get(key) is not None:
            mtime = info[key]
            break
    etag = info.get("ETag") or info.get("etag") or info.get("md5Hash")
    stamp = _utc(mtime)
    # Whole seconds: a listing may give milliseconds where a HEAD request (HTTP `Last-Modified`) gives
    # seconds, and the planner sees one while the worker records the other.
    second = stamp.replace(microsecond=0) if stamp else None
    return ObjectInfo(int(info.get("size") or 0), second, str(etag) if etag else None)


def _utc(value: Any) -> dt.datetime | None:
    if isinstance(value, int | float):
        try:
            value = dt.datetime.fromtimestamp(value, dt.UTC)
        except (OverflowError, OSError, ValueError):  # not a time a file system can mean
            return None
    elif isinstance(value, str):
        try:
            value = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return None
    if not isinstance(value, dt.datetime):
        return None
    if value.tzinfo is not None:
        value = value.astimezone(dt.UTC)
    return value.replace(tzinfo=None)


# ---------------------------------------------------------------------------------------- reading


class ObjectReader:
    """One object opened for a worker: `open()` hands `LogStream` a stream that hashes what it reads;
    `finish()` reads what the parse left (at most up to the size cap) and returns the SHA-256 of all
    the object's bytes. Use as a context manager: the remote file is closed on exit."""

    def __init__(self, url: str, max_bytes: int | None = None) -> None:
        self.url = url
        self.max_bytes = MAX_BYTES if max_bytes is None else max_bytes
        fs, path = _filesystem(url)
        self._file = _call(url, lambda: fs.open(path, "rb", block_size=_BLOCK))
        try:
            details = getattr(self._file, "details", None) or _call(url, lambda: fs.info(path))
            self.info = _identity(details)
            if self.info.size > self.max_bytes:
                raise InputError(too_large(url, self.info.size, self.max_bytes))
        except BaseException:
            self._file.close()
            raise
        self._tee = _HashingReader(self._file)

    def open(self) -> tuple[IO[bytes], int | None]:
        return cast(IO[bytes], self._tee), self.info.size

    def finish(self) -> str:
        tee = self._tee
        while tee.read_bytes < self.max_bytes and tee.read_raw(min(_BLOCK, self.max_bytes - tee.read_bytes)):
            pass
        return tee.digest.hexdigest()

    def __enter__(self) -> ObjectReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self._file.close()


class _HashingReader(io.RawIOBase):
    """The remote file's bytes, hashed as they pass; closing it leaves the remote file open (the
    reader's `finish` still needs it). Failures of the store's client become `OSError`, which the
    reader turns into a one-line `read error`."""

    def __init__(self, raw: Any) -> None:
        super().__init__()
        self._raw = raw
        self.digest = hashlib.sha256()
        self.read_bytes = 0

    def readable(self) -> bool:
        return True

    def read_raw(self, size: int) -> bytes:
        try:
            data = bytes(self._raw.read(size))
        except OSError:
            raise
        except Exception as exc:  # a botocore ClientError, a lost connection
            raise OSError(_reason(exc)) from None
        self.digest.update(data)
        self.read_bytes += len(data)
        return data

    def readinto(self, buffer: WriteableBuffer, /) -> int:
        view = memoryview(buffer).cast("B")
        data = self.read_raw(len(view))
        view[: len(data)] = data
        return len(data)


def first_lines(
    blocks: Iterator[tuple[list[str], list[int]]], keep: int
) -> tuple[Iterator[tuple[list[str], list[int]]], list[tuple[list[str], list[int]]]]:
    """`blocks` passed through, and a list that gets the first `keep` lines of the first block once it
    has passed (what the log-time search reads, without opening the object a second time)."""
    seen: list[tuple[list[str], list[int]]] = []

    def tap() -> Iterator[tuple[list[str], list[int]]]:
        for lines, numbers in blocks:
            if not seen:
                seen.append((lines[:keep], numbers[:keep]))
            yield lines, numbers

    return tap(), seen


# ---------------------------------------------------------------------------------------- fsspec


def _filesystem(url: str) -> tuple[Any, str]:
    """fsspec's file system for `url` and the path within it; what is missing or wrong is one line."""
    parts = _split(url)
    if parts.password:
        raise InputError(
            f"{parts.scheme}://{parts.hostname or ''}...: a URL with a password is refused; give "
            "credentials through the environment or fsspec's configuration"
        )
    scheme = url_scheme(url) or ""
    try:
        import fsspec.core
    except ImportError:
        raise ConfigError(f"{url}: reading URLs needs fsspec: {EXTRA}") from None
    try:
        return cast(tuple[Any, str], fsspec.core.url_to_fs(url))
    except ImportError as exc:
        hint = EXTRA if scheme in ("s3", "s3a") else f"install the fsspec package for {scheme}://"
        raise ConfigError(
            f"{url}: {scheme}:// needs a package that is not installed ({_first(exc)}): {hint}"
        ) from None
    except (ValueError, TypeError) as exc:
        raise InputError(f"{url}: not a URL logscope can read: {_first(exc)}") from None
    except Exception as exc:  # a client that refuses its configuration
        raise InputError(f"{url}: {_reason(exc)}") from None


def _split(url: str) -> SplitResult:
    try:
        return urlsplit(url)
    except ValueError as exc:  # `s3://[bucket/x`: an unbalanced bracket reads as a broken IPv6 host
        raise InputError(f"{url}: not a URL logscope can read: {_first(exc)}") from None


def _call(url: str, action: Callable[[], T]) -> T:
    """Run one file-system request; anything it raises becomes an `InputError` naming the URL."""
    try:
        return action()
    except InputError:
        raise
    except Exception as exc:
        raise InputError(f"{url}: {_reason(exc)}") from None


def _reason(exc: BaseException) -> str:
    """One line for what a store's client raised, without its traceback (and without credentials:
    clients name the endpoint, bucket and key in their messages, never the secret)."""
    kind = type(exc).__name__
    text = _first(exc)
    if isinstance(exc, FileNotFoundError):
        return f"no such bucket, prefix or object ({text})"
    if isinstance(exc, PermissionError):
        return f"access denied ({text})"
    if kind in ("NoCredentialsError", "PartialCredentialsError"):
        return f"no credentials ({text}): set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE"
    if kind in ("EndpointConnectionError", "ConnectTimeoutError", "ClientConnectorError"):
        return f"cannot reach the store ({text})"
    return f"{kind}: {text}" if text != kind else kind


def _first(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return lines[0].strip() if lines else type(exc).__name__
