"""What the auditing process and its workers exchange (`FileTask` out, `FileResult` back), and the content
hash both compute, with no pandas, parser or rule imported: the auditing process of a worker pool plans,
hashes and writes with this module, pyarrow and DuckDB alone, and leaves the rest to the workers, so it is
ready before the workers' fork server has imported what they run."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from logscope.io import DEFAULT_MAX_BYTES, open_regular

if TYPE_CHECKING:
    from logscope.rules import Config

_HASH_BLOCK = 1 << 20


@dataclass(frozen=True)
class RuleOverrides:
    """Command-line rule settings applied on top of each file's configuration."""

    select: tuple[str, ...] | None = None
    ignore: tuple[str, ...] | None = None
    target: str | None = None
    sram: str | None = None

    def apply(self, config: Config) -> Config:
        return config.with_overrides(
            select=self.select, ignore=self.ignore, target=self.target, sram=self.sram
        )


@dataclass(frozen=True)
class FileTask:
    """What a worker needs: the path and what the planner saw (its content hash may be unknown)."""

    path: str
    sha256: str | None = None
    config: Config | None = None  # None: the logscope.toml / [tool.logscope] found upward from the log
    overrides: RuleOverrides = field(default_factory=RuleOverrides)


@dataclass
class FileResult:
    """One file's audit: the `files` row (without `file_id`) and the rows of each stored table."""

    path: str
    sha256: str
    status: str  # ok | rejected | error
    error: str | None
    row: dict[str, Any]
    tables: dict[str, pa.Table]
    size_bytes: int
    mtime_ns: int
    etag: str | None = None  # an object-store URL's ETag

    @property
    def row_counts(self) -> dict[str, int]:
        return {name: table.num_rows for name, table in self.tables.items()}

    def __getstate__(self) -> dict[str, Any]:
        """Pickled (to the auditing process, from a pool or dask worker) with each table as one Arrow
        IPC stream: pickling an arrow table reduces every column's buffers one by one, which cost the
        single writer 1.3 ms per CI log to unpickle (and the worker 2.1 ms to pickle) against 0.6 and
        0.5 ms for IPC. The tables come back with the same schema, metadata and values."""
        state = dict(self.__dict__)
        state["tables"] = {name: _ipc_bytes(table) for name, table in self.tables.items()}
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        tables = state.get("tables") or {}
        state = dict(state, tables={name: _ipc_table(data) for name, data in tables.items()})
        self.__dict__.update(state)


def _ipc_bytes(table: pa.Table) -> pa.Buffer:
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return sink.getvalue()


def _ipc_table(data: pa.Buffer | bytes | pa.Table) -> pa.Table:
    if isinstance(data, pa.Table):  # pickled by a logscope that sent tables as they are
        return data
    return pa.ipc.open_stream(data).read_all()


def hash_file(path: str, max_bytes: int = DEFAULT_MAX_BYTES) -> str:
    """SHA-256 of the file's bytes as stored (a .gz is hashed compressed): the audit's content key.

    Only a regular file of at most `max_bytes` is read (`InputError` otherwise, before reading): a
    FIFO, a device or a 3 GB sparse file found in an audited folder must not hang or stall the run.
    At most `max_bytes` are read even if the file grows while it is hashed.
    """
    digest = hashlib.sha256()
    left = max_bytes
    with open_regular(path, max_bytes=max_bytes) as fh:
        while left > 0 and (block := fh.read(min(_HASH_BLOCK, left))):
            digest.update(block)
            left -= len(block)
    return digest.hexdigest()


def audit_task(task: FileTask) -> FileResult:
    """`worker.audit_file(task)`, imported where the task runs: the auditing process of a pool sends this
    function to its workers by name without importing the parsers and rules it runs (0.4-0.5 s of CPU at
    the start of every pool audit, spent while the workers' fork server imports them on the other core);
    in a worker forked from that server the import is already done."""
    from logscope.audit.worker import audit_file

    return audit_file(task)
