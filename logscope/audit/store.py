"""The audit store: one embedded DuckDB file, written by one process, queryable with plain SQL.

Tables (docs/audit.md documents every column and gives example queries):

- `files`: one row per distinct file content audited, keyed by the SHA-256 of the file's bytes as they
  are on disk (compressed files are hashed compressed). `status` is `ok`, `rejected` (not a log:
  binary, empty of any recognised line, a corrupt archive) or `error` (logscope itself failed); `error`
  holds the one-line reason.
- `paths`: every path seen and the content it held when last seen (a copy of a file is a second path to
  the same `sha256`); `size_bytes` and `mtime_ns` let a re-run skip unchanged paths without hashing.
- one table per frame that the audit keeps (`FRAME_TABLES`), the frame's declared columns
  (`logscope.schemas.SCHEMAS`) behind a `file_id`; plus `findings`.
- the view `build_metrics`: one row per build with its time, primary memory figures and counts.

Every file's rows are written in the same transaction as its `files` row, so the database never holds
half a file: a run killed at any point leaves whole files, and the next run audits the rest.

The store is recognised before anything is written: the table `logscope_store` (format and schema
version) marks a database logscope created. A file that is not one (another DuckDB database, a SQLite
file, any other bytes, an empty file) is refused with an `InputError` after reading only its header and,
for DuckDB, its table list on a read-only connection; the file is left byte for byte as it was. A store
of an older schema version is migrated in one transaction (`MIGRATIONS`); a newer one is refused.
DuckDB never installs or loads an extension on its own here (no network access, ever).
"""

from __future__ import annotations

import datetime as dt
import functools
import os
import stat
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from logscope.errors import InputError
from logscope.figures import FIGURES, MEMORY_FIELDS, REUSE_FIELDS
from logscope.io import display_path
from logscope.schemas import BOOL, FLT, INT, OBJ, SCHEMAS, STR

# 1: the first store (schema version in `meta` only). 2: `logscope_store` marker; `path_bytes` holds a
# path's exact bytes (names need not be UTF-8) and keys `paths`; `path` is its printable form.
STORE_SCHEMA_VERSION = 2
STORE_FORMAT = "logscope-audit"
MARKER_TABLE = "logscope_store"
_MARKER_COLUMNS = "format VARCHAR, schema_version INTEGER, created_by VARCHAR"
# No extension is ever fetched or loaded behind our back: a SQLite file given as --db must not make
# DuckDB download its sqlite scanner.
DUCKDB_CONFIG = {"autoinstall_known_extensions": False, "autoload_known_extensions": False}
_DUCKDB_MAGIC = b"DUCK"  # at offset 8 of every DuckDB database file
_SQLITE_MAGIC = b"SQLite format 3\x00"

# Frames stored, in this order. Other frames (passes, progress, outliers, unparsed, MCU traces) stay in
# the log files: `logscope parse --frames-out` writes them when they are needed.
FRAME_TABLES = ("builds", "memory", "layers", "tensors", "fusions", "messages", "mcu_runs", "mcu_memory")

_SQL_TYPES = {INT: "BIGINT", FLT: "DOUBLE", STR: "VARCHAR", BOOL: "BOOLEAN", OBJ: "VARCHAR"}
# The arrow types the writer hands DuckDB. VARCHAR is a large string because the frames' string columns
# are large-string arrow arrays already (`logscope.frames.arrow_type`): taken as they are, where casting
# each to 32-bit offsets cost 0.35 ms of a CI log's 1.2 ms of conversion; DuckDB stores both the same.
_ARROW_TYPES = {
    "BIGINT": pa.int64(),
    "INTEGER": pa.int32(),
    "DOUBLE": pa.float64(),
    "VARCHAR": pa.large_string(),
    "BOOLEAN": pa.bool_(),
    "TIMESTAMP": pa.timestamp("us"),
    "BLOB": pa.binary(),
}

# Columns the audit adds to a frame's own (after `file_id`).
_EXTRA_COLUMNS: dict[str, dict[str, str]] = {
    # 0 for the row `ParsedLog.summary()` reports as the build's memory (the first source), 1, 2... after.
    "memory": {"source_rank": "INTEGER"},
}

FINDINGS_COLUMNS: dict[str, str] = {
    "build_index": "BIGINT",
    "code": "VARCHAR",
    "name": "VARCHAR",
    "severity": "VARCHAR",
    "message": "VARCHAR",
    "line": "BIGINT",
    "lines": "VARCHAR",  # JSON list of line numbers
    "subject": "VARCHAR",
    "evidence": "VARCHAR",  # JSON object
    "hint": "VARCHAR",
}

FILES_COLUMNS: dict[str, str] = {
    "file_id": "BIGINT",
    "sha256": "VARCHAR",
    "path": "VARCHAR",  # printable: bytes that are not UTF-8 shown as \xNN
    "path_bytes": "BLOB",  # the exact bytes of the path
    "size_bytes": "BIGINT",
    "mtime": "TIMESTAMP",  # UTC
    "status": "VARCHAR",
    "error": "VARCHAR",
    "kind": "VARCHAR",
    "encoding": "VARCHAR",
    "compression": "VARCHAR",
    "content_sha256": "VARCHAR",  # of the decompressed bytes (ParsedLog.sha256)
    "lines": "BIGINT",
    "unparsed_lines": "BIGINT",
    "builds": "BIGINT",
    "findings": "BIGINT",
    "worst_severity": "VARCHAR",
    "log_time": "TIMESTAMP",  # as written in the log (no time zone)
    "log_time_line": "BIGINT",
    "config_origin": "VARCHAR",
    "logscope_version": "VARCHAR",
    "parsed_at": "TIMESTAMP",  # UTC
    "parse_seconds": "DOUBLE",
}

PATHS_COLUMNS: dict[str, str] = {
    "path_bytes": "BLOB",  # the key: the exact bytes of the path
    "path": "VARCHAR",  # printable: bytes that are not UTF-8 shown as \xNN
    "sha256": "VARCHAR",
    "size_bytes": "BIGINT",
    "mtime_ns": "BIGINT",
    "seen_at": "TIMESTAMP",  # UTC
    "error": "VARCHAR",  # why the path could not be read (then sha256 is NULL)
    # An object-store URL's ETag, which changes with its content: with size and mtime, what lets a re-run
    # skip the object unread. NULL for a local file. Added to a store of this version when it is opened.
    "etag": "VARCHAR",
}


def table_columns() -> dict[str, dict[str, str]]:
    """Every child table's columns (after `file_id`) as {name: SQL type}, from the frame schemas."""
    out: dict[str, dict[str, str]] = {}
    for name in FRAME_TABLES:
        columns = {col: _SQL_TYPES[dtype] for col, dtype in SCHEMAS.get(name, {}).items()}
        out[name] = columns | _EXTRA_COLUMNS.get(name, {})
    out["findings"] = dict(FINDINGS_COLUMNS)
    return out


def arrow_schema(columns: Mapping[str, str]) -> pa.Schema:
    return _arrow_schema(tuple(columns.items()))


@functools.cache
def _arrow_schema(columns: tuple[tuple[str, str], ...]) -> pa.Schema:
    # Built once per column list (schemas are immutable): a file's tables asked for eight of them.
    return pa.schema([(name, _ARROW_TYPES[sql]) for name, sql in columns])


def rows_table(rows: Sequence[Mapping[str, Any]], columns: Mapping[str, str]) -> pa.Table:
    """`pa.Table.from_pylist(rows, schema=arrow_schema(columns))` for the rows this store writes itself
    (`files`, `paths`: Python ints, floats, str, bytes, naive datetimes, None), built from buffers.

    pyarrow's conversion of Python objects imports pandas the first time it runs (to test for pandas'
    array types): 0.25 s of CPU that a worker pool's auditing process, which imports no pandas, would
    pay at its first commit while its workers run. A value of any other type, or out of range, takes
    the converter."""
    try:
        arrays = [_buffer_array([row.get(name) for row in rows], sql) for name, sql in columns.items()]
    except _NotPlain:
        return pa.Table.from_pylist(list(rows), schema=arrow_schema(columns))
    return pa.Table.from_arrays(arrays, schema=arrow_schema(columns))


class _NotPlain(Exception):
    """A value `_buffer_array` leaves to pyarrow's converter."""


_EPOCH = dt.datetime(1970, 1, 1)
_MICROSECOND = dt.timedelta(microseconds=1)
# (an int for a DOUBLE is the converter's: it refuses one a double cannot hold exactly)
_NUMBERS = {"BIGINT": (np.int64, (int,)), "INTEGER": (np.int32, (int,)), "DOUBLE": (np.float64, (float,))}


def _buffer_array(values: list[Any], sql: str) -> pa.Array:
    n = len(values)
    valid = [v is not None for v in values]
    nulls = n - sum(valid)
    bitmap = pa.py_buffer(np.packbits(np.array(valid, dtype=bool), bitorder="little")) if nulls else None
    kind = _ARROW_TYPES[sql]
    present = [v for v in values if v is not None]
    if sql in _NUMBERS:
        dtype, types = _NUMBERS[sql]
        if any(type(v) not in types for v in present):
            raise _NotPlain
        try:
            data = np.array([0 if v is None else v for v in values], dtype=dtype)
        except OverflowError:
            raise _NotPlain from None
        return pa.Array.from_buffers(kind, n, [bitmap, pa.py_buffer(data)], null_count=nulls)
    if sql == "TIMESTAMP":
        if any(type(v) is not dt.datetime or v.tzinfo is not None for v in present):
            raise _NotPlain
        ticks = np.array([0 if v is None else (v - _EPOCH) // _MICROSECOND for v in values], dtype=np.int64)
        return pa.Array.from_buffers(kind, n, [bitmap, pa.py_buffer(ticks)], null_count=nulls)
    if sql in ("VARCHAR", "BLOB"):
        plain = str if sql == "VARCHAR" else bytes
        if any(type(v) is not plain for v in present):
            raise _NotPlain
        try:
            encoded = [b"" if v is None else v.encode() if sql == "VARCHAR" else v for v in values]
        except UnicodeEncodeError:  # a lone surrogate: the converter's error
            raise _NotPlain from None
        offsets = np.zeros(n + 1, dtype=np.int64 if sql == "VARCHAR" else np.int32)
        np.cumsum([len(b) for b in encoded], out=offsets[1:])
        buffers = [bitmap, pa.py_buffer(offsets), pa.py_buffer(b"".join(encoded))]
        return pa.Array.from_buffers(kind, n, buffers, null_count=nulls)
    raise _NotPlain


def _repeated_ids(ids: list[int], counts: list[int]) -> pa.Array:
    """The `file_id` column of concatenated tables: ids[i] repeated counts[i] times (built from a numpy
    buffer, for the reason `rows_table` gives)."""
    column = np.repeat(np.array(ids, dtype=np.int64), counts)
    return pa.Array.from_buffers(pa.int64(), len(column), [None, pa.py_buffer(column)])


# The memory figures of logscope.figures that the memory frame holds, in the table's order.
_FIGURE_COLUMNS = ", ".join(f"m.{f.key}" for f in FIGURES if f.key in SCHEMAS["memory"])
BUILD_METRICS_VIEW = f"""
CREATE OR REPLACE VIEW build_metrics AS
WITH layer_counts AS (
    SELECT file_id, build_index, count(*) AS layers,
           count(*) FILTER (WHERE upper(target) = 'CPU') AS cpu_layers
    FROM layers GROUP BY ALL
), fusion_counts AS (
    SELECT file_id, build_index, count(*) AS fusions FROM fusions GROUP BY ALL
), message_counts AS (
    SELECT file_id, build_index,
           count(*) FILTER (WHERE level = 'W') AS warnings,
           count(*) FILTER (WHERE level = 'E') AS errors
    FROM messages GROUP BY ALL
), finding_counts AS (
    SELECT file_id, build_index, count(*) AS findings,
           count(*) FILTER (WHERE severity = 'error') AS error_findings,
           count(*) FILTER (WHERE severity = 'warning') AS warning_findings
    FROM findings GROUP BY ALL
)
SELECT
    f.file_id, f.path, f.sha256,
    coalesce(f.log_time, f.mtime) AS time,
    CASE WHEN f.log_time IS NOT NULL THEN 'log' ELSE 'mtime' END AS time_source,
    b.build_index, b.kind, b.toolkit_product, b.toolkit_version, b.compiler_version, b.target_platform,
    b.status, b.status_reason,
    m.source AS memory_source,
    {_FIGURE_COLUMNS},
    coalesce(l.layers, 0) AS layers, coalesce(l.cpu_layers, 0) AS cpu_layers,
    coalesce(u.fusions, 0) AS fusions,
    coalesce(g.warnings, 0) AS warnings, coalesce(g.errors, 0) AS errors,
    coalesce(n.findings, 0) AS findings, coalesce(n.error_findings, 0) AS error_findings,
    coalesce(n.warning_findings, 0) AS warning_findings
FROM builds b
JOIN files f USING (file_id)
LEFT JOIN memory m ON m.file_id = b.file_id AND m.build_index = b.build_index AND m.source_rank = 0
LEFT JOIN layer_counts l ON l.file_id = b.file_id AND l.build_index = b.build_index
LEFT JOIN fusion_counts u ON u.file_id = b.file_id AND u.build_index = b.build_index
LEFT JOIN message_counts g ON g.file_id = b.file_id AND g.build_index = b.build_index
LEFT JOIN finding_counts n ON n.file_id = b.file_id AND n.build_index = b.build_index
"""

# Numeric columns of build_metrics that `logscope trend --metric` accepts; rates: higher is better.
TREND_METRICS = (
    *MEMORY_FIELDS,
    *REUSE_FIELDS,
    "layers",
    "cpu_layers",
    "fusions",
    "warnings",
    "errors",
    "findings",
    "error_findings",
    "warning_findings",
)
HIGHER_IS_BETTER = frozenset({"reuse_rate", "computed_reuse_rate", "fusions"})
GROUP_COLUMNS = (
    "target_platform",
    "toolkit_version",
    "toolkit_product",
    "compiler_version",
    "kind",
    "status",
    "path",
    "memory_source",
)


@dataclass(frozen=True)
class KnownPath:
    sha256: str | None
    size_bytes: int | None
    mtime_ns: int | None
    etag: str | None = None


@dataclass(frozen=True)
class KnownFile:
    file_id: int
    status: str


def inspect_store(path: Path) -> int | None:
    """The schema version of the logscope store at `path`, or None when there is no file yet.

    Raises `InputError` for anything else, having only read the file's header and (for a DuckDB
    database) listed its tables on a read-only connection: nothing is written to a file that is not ours.
    """
    import duckdb

    if not os.path.lexists(path):
        return None
    shown = display_path(path)
    try:
        st = os.stat(path)
        if not stat.S_ISREG(st.st_mode):
            raise InputError(f"{shown}: not a logscope audit database (not a regular file)")
        with open(path, "rb") as fh:
            head = fh.read(16)
    except OSError as exc:
        raise InputError(f"{shown}: cannot read the audit database: {exc.strerror or exc}") from None
    refuse = f"{shown}: not a logscope audit database"
    if not head:
        raise InputError(f"{refuse} (an empty file); refusing to write to it (choose another --db)")
    if head.startswith(_SQLITE_MAGIC):
        raise InputError(f"{refuse} (a SQLite database); refusing to touch it (choose another --db)")
    if head[8:12] != _DUCKDB_MAGIC:
        raise InputError(f"{refuse} (not a DuckDB file); refusing to touch it (choose another --db)")
    try:
        con = duckdb.connect(str(path), read_only=True, config=dict(DUCKDB_CONFIG))
    except duckdb.Error as exc:
        raise InputError(f"{shown}: cannot open the audit database: {first_line(exc)}") from None
    try:
        return _store_version(con, refuse)
    finally:
        con.close()


def _store_version(con: Any, refuse: str) -> int:
    """The version a read-only connection's database declares, or `InputError` if it is not a store."""
    tables = {
        r[0]: r[1]
        for r in con.execute(
            "SELECT table_name, table_type FROM information_schema.tables WHERE table_schema = 'main'"
        ).fetchall()
    }
    if tables.get(MARKER_TABLE) == "BASE TABLE":
        try:
            row = con.execute(f"SELECT format, schema_version FROM {MARKER_TABLE}").fetchone()
        except Exception:  # a table of that name with other columns: not ours
            row = None
        if row is None or row[0] != STORE_FORMAT:
            raise InputError(f"{refuse} (its {MARKER_TABLE} table is not logscope's); refusing to touch it")
        version = int(row[1])
        if version > STORE_SCHEMA_VERSION:
            raise InputError(
                f"{refuse.split(':')[0]}: written by a newer logscope (store schema {version}, this version "
                f"reads up to {STORE_SCHEMA_VERSION}); upgrade logscope or choose another --db"
            )
        return version
    if _is_version_1(con, tables):
        return 1
    listed = ", ".join(sorted(tables)[:6]) or "no tables"
    raise InputError(
        f"{refuse} (a DuckDB database logscope did not create: {listed}); refusing to touch it "
        "(choose another --db)"
    )


_V1_FILES = set(FILES_COLUMNS) - {"path_bytes"}
_V1_PATHS = set(PATHS_COLUMNS) - {"path_bytes", "etag"}


def _is_version_1(con: Any, tables: Mapping[str, str]) -> bool:
    """A store written before the marker table: `meta` says schema 1 and `files`/`paths` have its
    columns (every one of them, so a foreign `files(x int)` does not pass)."""
    if not all(tables.get(t) == "BASE TABLE" for t in ("meta", "files", "paths")):
        return False
    try:
        row = con.execute("SELECT value FROM meta WHERE key = 'store_schema_version'").fetchone()
    except Exception:
        return False
    if row is None or row[0] != "1":
        return False
    columns: dict[str, set[str]] = {}
    for table, column in con.execute(
        "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = 'main'"
    ).fetchall():
        columns.setdefault(table, set()).add(column)
    files, paths = columns.get("files", set()), columns.get("paths", set())
    return files >= _V1_FILES and paths >= _V1_PATHS


def _migrate_1_to_2(con: Any) -> None:
    """Schema 1 -> 2: `path_bytes` (the path's exact bytes; schema 1 could only hold UTF-8 names, so
    they are the UTF-8 encoding of `path`) in `files`, and as the key of a rebuilt `paths`."""
    con.execute("ALTER TABLE files ADD COLUMN path_bytes BLOB")
    con.execute("UPDATE files SET path_bytes = encode(path)")
    cols = ", ".join(
        f'"{c}" {t}' + (" PRIMARY KEY" if c == "path_bytes" else "") for c, t in PATHS_COLUMNS.items()
    )
    con.execute(f"CREATE TABLE paths_v2 ({cols})")
    rest = ", ".join(c for c in PATHS_COLUMNS if c not in ("path_bytes", "etag"))
    con.execute(f"INSERT INTO paths_v2 (path_bytes, {rest}) SELECT encode(path), {rest} FROM paths")
    con.execute("DROP TABLE paths")
    con.execute("ALTER TABLE paths_v2 RENAME TO paths")


# Each step takes a store of version `key` to `key + 1`, inside the opening transaction.
MIGRATIONS = {1: _migrate_1_to_2}


class Store:
    """A DuckDB audit database opened for writing (one writer; DuckDB locks the file)."""

    def __init__(self, path: str | os.PathLike[str], *, read_only: bool = False) -> None:
        import duckdb

        self.path = Path(path)
        shown = display_path(self.path)
        version = inspect_store(self.path)  # refuses a foreign file before anything is written
        if read_only and version is None:
            raise InputError(f"{shown}: no such audit database")
        if not read_only:
            _make_parent(self.path)
        try:
            if read_only:
                self.con = duckdb.connect(str(self.path), read_only=True, config=dict(DUCKDB_CONFIG))
            else:
                self.con = _open_for_writing(str(self.path))
        except duckdb.IOException as exc:  # locked by another writer, unreadable, a read-only folder
            raise InputError(f"{shown}: cannot open the audit database: {first_line(exc)}") from None
        except duckdb.Error as exc:
            raise InputError(f"{shown}: not an audit database: {first_line(exc)}") from None
        self.read_only = read_only
        self.version = version or STORE_SCHEMA_VERSION
        self.columns = table_columns()
        if not read_only:
            try:
                # The writer inserts one batch of small tables at a time: DuckDB's worker threads cost
                # more CPU than they save there (inserting 40 CI logs' rows: 48 -> 25 ms CPU).
                self.con.execute("SET threads = 1")
                self._create(version)
            except duckdb.Error as exc:
                self.con.close()
                raise InputError(f"{shown}: cannot write the audit database: {first_line(exc)}") from None

    # ------------------------------------------------------------------ schema
    def _create(self, version: int | None) -> None:
        con = self.con
        con.execute("BEGIN")
        try:
            if version is None:
                con.execute("CREATE TABLE meta (key VARCHAR PRIMARY KEY, value VARCHAR)")
                con.execute(
                    "INSERT INTO meta VALUES ('store_schema_version', ?)", [str(STORE_SCHEMA_VERSION)]
                )
                con.execute(f"CREATE TABLE {MARKER_TABLE} ({_MARKER_COLUMNS})")
                con.execute(
                    f"INSERT INTO {MARKER_TABLE} VALUES (?, ?, ?)",
                    [STORE_FORMAT, STORE_SCHEMA_VERSION, f"logscope {logscope_version()}"],
                )
            else:
                for step in range(version, STORE_SCHEMA_VERSION):
                    MIGRATIONS[step](con)
                if version < STORE_SCHEMA_VERSION:
                    self._mark_version()
            # sha256 is unique by construction (the single writer checks it); no index: DuckDB checks
            # index constraints eagerly, which would refuse a delete and re-insert of one key in a
            # transaction.
            # Every table's columns in one query, and none in a new database (DuckDB's first catalog
            # query costs 15 ms of CPU; one per table took more than the rest of opening a store).
            existing: dict[str, set[str]] = {}
            if version is not None:
                for table, column in con.execute(
                    "SELECT table_name, column_name FROM information_schema.columns"
                ).fetchall():
                    existing.setdefault(table, set()).add(column)
            self._ensure_table("files", FILES_COLUMNS, existing.get("files", set()), primary="file_id")
            self._ensure_table("paths", PATHS_COLUMNS, existing.get("paths", set()), primary="path_bytes")
            for name, columns in self.columns.items():
                self._ensure_table(name, {"file_id": "BIGINT"} | columns, existing.get(name, set()))
            con.execute(BUILD_METRICS_VIEW)
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            raise
        self.version = STORE_SCHEMA_VERSION

    def _mark_version(self) -> None:
        """Record the current version in the marker and in `meta` (which logscope before the marker
        reads: it refuses a store whose `meta` version is newer than its own)."""
        con = self.con
        con.execute(f"CREATE TABLE IF NOT EXISTS {MARKER_TABLE} ({_MARKER_COLUMNS})")
        con.execute(f"DELETE FROM {MARKER_TABLE}")
        con.execute(
            f"INSERT INTO {MARKER_TABLE} VALUES (?, ?, ?)",
            [STORE_FORMAT, STORE_SCHEMA_VERSION, f"logscope {logscope_version()}"],
        )
        con.execute(
            "UPDATE meta SET value = ? WHERE key = 'store_schema_version'", [str(STORE_SCHEMA_VERSION)]
        )

    def _ensure_table(
        self, name: str, columns: Mapping[str, str], existing: set[str], primary: str | None = None
    ) -> None:
        """Create the table (`existing`: its columns now, none if there is no such table), or add the
        columns a newer frame schema declares (never drops any)."""
        if not existing:
            cols = ", ".join(
                f'"{c}" {t}' + (" PRIMARY KEY" if c == primary else "") for c, t in columns.items()
            )
            self.con.execute(f"CREATE TABLE {name} ({cols})")
            return
        for column, sql_type in columns.items():
            if column not in existing:
                self.con.execute(f'ALTER TABLE {name} ADD COLUMN "{column}" {sql_type}')

    # ------------------------------------------------------------------ reading
    def known_paths(self) -> dict[str, KnownPath]:
        """Every recorded path, keyed by the name as the operating system gives it (`os.fsdecode` of
        its exact bytes, so a name that is not UTF-8 finds its row again)."""
        rows = self.con.execute("SELECT path_bytes, sha256, size_bytes, mtime_ns, etag FROM paths").fetchall()
        return {os.fsdecode(bytes(p)): KnownPath(s, z, m, e) for p, s, z, m, e in rows}

    def known_files(self) -> dict[str, KnownFile]:
        rows = self.con.execute("SELECT sha256, file_id, status FROM files").fetchall()
        return {s: KnownFile(int(i), st) for s, i, st in rows}

    def file_sizes(self) -> set[int] | None:
        """The sizes of the contents stored (as on disk), or None when one of them is not known."""
        rows = self.con.execute("SELECT DISTINCT size_bytes FROM files").fetchall()
        sizes = {r[0] for r in rows}
        return None if None in sizes else sizes

    def next_file_id(self) -> int:
        row = self.con.execute("SELECT coalesce(max(file_id), 0) + 1 FROM files").fetchone()
        return int(row[0]) if row else 1

    def query_df(self, sql: str, params: Sequence[Any] | None = None) -> Any:
        return self.con.execute(sql, params or []).df()

    def counts(self) -> dict[str, int]:
        out = {}
        for name in ("files", "paths", *self.columns):
            row = self.con.execute(f"SELECT count(*) FROM {name}").fetchone()
            out[name] = int(row[0]) if row else 0
        return out

    # ------------------------------------------------------------------ writing
    def write_batch(
        self,
        files: Sequence[tuple[dict[str, Any], Mapping[str, pa.Table]]],
        paths: Iterable[dict[str, Any]],
        replace_file_ids: Iterable[int] = (),
        maybe_orphaned: Iterable[int] = (),
    ) -> list[int]:
        """One transaction: drop replaced files, insert files with their rows, upsert paths, then drop
        the files of `maybe_orphaned` that no path points at any more (a path whose content changed).

        `files` holds (files-row dict with its `file_id`, {table: arrow table without file_id}). Returns
        the file ids dropped as orphans.
        """
        con = self.con
        con.execute("BEGIN")
        try:
            stale = sorted(set(replace_file_ids))
            if stale:
                self._delete_files(stale)
            if files:
                self._insert("files", FILES_COLUMNS, rows_table([f for f, _ in files], FILES_COLUMNS))
                for name, columns in self.columns.items():
                    ids, parts = [], []
                    for row, tables in files:
                        table = tables.get(name)
                        if table is None or table.num_rows == 0:
                            continue
                        ids.append(row["file_id"])
                        parts.append(table)
                    if parts:
                        counts = [part.num_rows for part in parts]
                        rows = pa.concat_tables(parts).add_column(0, "file_id", _repeated_ids(ids, counts))
                        self._insert(name, {"file_id": "BIGINT"} | columns, rows)
            path_rows = list(paths)
            if path_rows:
                _paths_batch = rows_table(path_rows, PATHS_COLUMNS)
                cols = ", ".join(PATHS_COLUMNS)
                updates = ", ".join(f"{c} = excluded.{c}" for c in PATHS_COLUMNS if c != "path_bytes")
                con.execute(  # (`_paths_batch` read by name, as `_insert` reads its table)
                    f"INSERT INTO paths ({cols}) SELECT {cols} FROM _paths_batch "
                    f"ON CONFLICT (path_bytes) DO UPDATE SET {updates}"
                )
            orphans = self.orphaned(maybe_orphaned)
            if orphans:
                self._delete_files(orphans)
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            raise
        return orphans

    def _insert(self, name: str, columns: Mapping[str, str], table: pa.Table) -> None:
        """Insert `table`'s rows, by column name. DuckDB reads the arrow table from this function's local
        `_batch` (a replacement scan): registering it as a view and dropping it again cost 0.3-0.5 ms per
        statement, and a batch has one statement per table."""
        cols = [c for c in columns if c in table.column_names]
        quoted = ", ".join(f'"{c}"' for c in cols)
        _batch = table  # read by name in the SQL below
        self.con.execute(f"INSERT INTO {name} ({quoted}) SELECT {quoted} FROM _batch")

    def _delete_files(self, file_ids: Sequence[int]) -> None:
        ids = ", ".join(str(int(i)) for i in file_ids)
        for name in self.columns:
            self.con.execute(f"DELETE FROM {name} WHERE file_id IN ({ids})")
        self.con.execute(f"DELETE FROM files WHERE file_id IN ({ids})")

    def orphaned(self, file_ids: Iterable[int]) -> list[int]:
        """Those of `file_ids` whose content no path points at any more."""
        ids = sorted(set(file_ids))
        if not ids:
            return []
        listed = ", ".join(str(int(i)) for i in ids)
        rows = self.con.execute(
            f"SELECT file_id FROM files f WHERE file_id IN ({listed}) "
            "AND NOT EXISTS (SELECT 1 FROM paths p WHERE p.sha256 = f.sha256)"
        ).fetchall()
        return [int(r[0]) for r in rows]

    def delete_files(self, file_ids: Sequence[int]) -> None:
        if not file_ids:
            return
        self.con.execute("BEGIN")
        try:
            self._delete_files(file_ids)
            self.con.execute("COMMIT")
        except BaseException:
            self.con.execute("ROLLBACK")
            raise

    def close(self) -> None:
        self.con.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# Rows per row group of the tables the writer appends to. Each commit of a batch is a checkpoint
# (DuckDB writes a large transaction straight to the file instead of its log), and a checkpoint rewrites
# the last, partly filled row group of every table it appends to: with DuckDB's 122,880 rows, the
# tensors and layers of up to 80 CI logs again at every commit, and once more when the store closes.
# With 8,192 rows, committing 160 CI logs in four batches and closing cost 4.0 ms per log instead of
# 5.1 (one batch of 40: 4.1 instead of 4.6), and the last commit and close of a pool's run, which
# nothing runs alongside, 0.14 s instead of 0.22; the file is about 7 % larger. A multiple of 2,048
# (DuckDB's vector size). Only how rows are laid out on disk changes: what every query returns is the same.
ROW_GROUP_ROWS = 8192
_STORE_ALIAS = "audit_store"


def _open_for_writing(path: str) -> Any:
    """A connection whose default database is the store at `path`, appending `ROW_GROUP_ROWS` rows per
    row group (an option of ATTACH, not of `duckdb.connect`). Where DuckDB has no such option (before
    1.2) or the path cannot be spelled in SQL, the store is opened as DuckDB's default lays it out."""
    import duckdb

    con = duckdb.connect(":memory:", config=dict(DUCKDB_CONFIG))
    try:
        quoted = "'" + path.replace("'", "''") + "'"
        quoted.encode("utf-8")  # a name that is not UTF-8 cannot go into SQL text
        con.execute(f"ATTACH {quoted} AS {_STORE_ALIAS} (ROW_GROUP_SIZE {ROW_GROUP_ROWS})")
    except (duckdb.BinderException, duckdb.NotImplementedException, duckdb.ParserException, UnicodeError):
        con.close()
        return duckdb.connect(path, config=dict(DUCKDB_CONFIG))
    except BaseException:
        con.close()
        raise
    con.execute(f"USE {_STORE_ALIAS}")
    return con


def _make_parent(path: Path) -> None:
    """Create the database's folder; a path under a regular file or in a folder that cannot be
    written is an `InputError` naming it."""
    parent = path.parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        raise InputError(
            f"{display_path(path)}: cannot create the audit database: a parent is a file, not a folder"
        ) from None
    except OSError as exc:
        raise InputError(
            f"{display_path(path)}: cannot create the audit database: {exc.strerror or exc}"
        ) from None
    if not os.access(parent, os.W_OK):
        raise InputError(
            f"{display_path(path)}: cannot create the audit database: {display_path(parent)} is not writable"
        )


def logscope_version() -> str:
    from logscope import __version__

    return __version__


def store_errors() -> tuple[type[BaseException], ...]:
    """What a write can raise for the data of one file (a value arrow or DuckDB cannot hold)."""
    import duckdb

    return (duckdb.Error, ValueError, TypeError, UnicodeError, pa.ArrowException)


def is_interrupt(exc: BaseException) -> bool:
    """Ctrl-C. Arriving while DuckDB runs a statement, the signal reaches Python as the client's own
    exception (`InterruptException`, or `RuntimeError: Query interrupted` from a scan of an Arrow
    table), not as KeyboardInterrupt; it must stop the audit like one, never count as a bad file."""
    if isinstance(exc, KeyboardInterrupt):
        return True
    if type(exc).__name__ == "InterruptException":
        return True
    return isinstance(exc, RuntimeError) and str(exc).strip() == "Query interrupted"


def first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__
