"""The audit store: one embedded DuckDB file, written by one process, queryable with plain SQL.

Tables (docs/audit.md documents every column and gives example queries):

- `files`: one row per distinct file content audited, keyed by the SHA-256 of the file's bytes as they
  are on disk (compressed files are hashed compressed). `status` is `ok`, `rejected` (not a log:
  binary, empty of any recognised line, a corrupt archive) or `error` (logscope itself failed); `error`
  holds the one-line reason.
- `paths`: every path seen and the content it held when last seen (a copy of a file is a second path to
  the same `sha256`); `size_bytes` and `mtime_ns` let a re-run skip unchanged paths without hashing.
- one table per frame that the audit keeps (`FRAME_TABLES`), the frame's declared columns
  (`logscope.frames.SCHEMAS`) behind a `file_id`; plus `findings`.
- the view `build_metrics`: one row per build with its time, primary memory figures and counts.

Every file's rows are written in the same transaction as its `files` row, so the database never holds
half a file: a run killed at any point leaves whole files, and the next run audits the rest.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa

from logscope.analysis.diff import MEMORY_FIELDS, REUSE_FIELDS
from logscope.errors import InputError
from logscope.figures import FIGURES
from logscope.frames import BOOL, FLT, INT, OBJ, SCHEMAS, STR

STORE_SCHEMA_VERSION = 1

# Frames stored, in this order. Other frames (passes, progress, outliers, unparsed, MCU traces) stay in
# the log files: `logscope parse --frames-out` writes them when they are needed.
FRAME_TABLES = ("builds", "memory", "layers", "tensors", "fusions", "messages", "mcu_runs", "mcu_memory")

_SQL_TYPES = {INT: "BIGINT", FLT: "DOUBLE", STR: "VARCHAR", BOOL: "BOOLEAN", OBJ: "VARCHAR"}
_ARROW_TYPES = {
    "BIGINT": pa.int64(),
    "INTEGER": pa.int32(),
    "DOUBLE": pa.float64(),
    "VARCHAR": pa.string(),
    "BOOLEAN": pa.bool_(),
    "TIMESTAMP": pa.timestamp("us"),
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
    "path": "VARCHAR",
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
    "path": "VARCHAR",
    "sha256": "VARCHAR",
    "size_bytes": "BIGINT",
    "mtime_ns": "BIGINT",
    "seen_at": "TIMESTAMP",  # UTC
    "error": "VARCHAR",  # why the path could not be read (then sha256 is NULL)
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
    return pa.schema([(name, _ARROW_TYPES[sql]) for name, sql in columns.items()])


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


@dataclass(frozen=True)
class KnownFile:
    file_id: int
    status: str


class Store:
    """A DuckDB audit database opened for writing (one writer; DuckDB locks the file)."""

    def __init__(self, path: str | os.PathLike[str], *, read_only: bool = False) -> None:
        import duckdb

        self.path = Path(path)
        if read_only and not self.path.is_file():
            raise InputError(f"{self.path}: no such audit database")
        if not read_only:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self.con = duckdb.connect(str(self.path), read_only=read_only)
        except duckdb.IOException as exc:  # locked by another writer, not a database, unreadable
            raise InputError(f"{self.path}: cannot open the audit database: {_first_line(exc)}") from None
        except duckdb.Error as exc:
            raise InputError(f"{self.path}: not an audit database: {_first_line(exc)}") from None
        self.read_only = read_only
        self.columns = table_columns()
        if read_only:
            self._check_schema()
        else:
            self._create()

    # ------------------------------------------------------------------ schema
    def _create(self) -> None:
        con = self.con
        con.execute("BEGIN")
        con.execute("CREATE TABLE IF NOT EXISTS meta (key VARCHAR PRIMARY KEY, value VARCHAR)")
        row = con.execute("SELECT value FROM meta WHERE key = 'store_schema_version'").fetchone()
        if row is None:
            con.execute("INSERT INTO meta VALUES ('store_schema_version', ?)", [str(STORE_SCHEMA_VERSION)])
        elif int(row[0]) > STORE_SCHEMA_VERSION:
            con.execute("ROLLBACK")
            raise InputError(
                f"{self.path}: written by a newer logscope (store schema {row[0]} > {STORE_SCHEMA_VERSION})"
            )
        # sha256 is unique by construction (the single writer checks it); no index: DuckDB checks index
        # constraints eagerly, which would refuse a delete and re-insert of one key in a transaction.
        self._ensure_table("files", FILES_COLUMNS, primary="file_id")
        self._ensure_table("paths", PATHS_COLUMNS, primary="path")
        for name, columns in self.columns.items():
            self._ensure_table(name, {"file_id": "BIGINT"} | columns)
        con.execute(BUILD_METRICS_VIEW)
        con.execute("COMMIT")

    def _ensure_table(self, name: str, columns: Mapping[str, str], primary: str | None = None) -> None:
        """Create the table, or add the columns a newer frame schema declares (never drops any)."""
        existing = {
            r[0]
            for r in self.con.execute(
                "SELECT column_name FROM information_schema.columns WHERE table_name = ?", [name]
            ).fetchall()
        }
        if not existing:
            cols = ", ".join(
                f'"{c}" {t}' + (" PRIMARY KEY" if c == primary else "") for c, t in columns.items()
            )
            self.con.execute(f"CREATE TABLE {name} ({cols})")
            return
        for column, sql_type in columns.items():
            if column not in existing:
                self.con.execute(f'ALTER TABLE {name} ADD COLUMN "{column}" {sql_type}')

    def _check_schema(self) -> None:
        tables = {
            r[0] for r in self.con.execute("SELECT table_name FROM information_schema.tables").fetchall()
        }
        if not {"files", "builds", "meta"} <= tables:
            raise InputError(f"{self.path}: not a logscope audit database (no files/builds tables)")

    # ------------------------------------------------------------------ reading
    def known_paths(self) -> dict[str, KnownPath]:
        rows = self.con.execute("SELECT path, sha256, size_bytes, mtime_ns FROM paths").fetchall()
        return {p: KnownPath(s, z, m) for p, s, z, m in rows}

    def known_files(self) -> dict[str, KnownFile]:
        rows = self.con.execute("SELECT sha256, file_id, status FROM files").fetchall()
        return {s: KnownFile(int(i), st) for s, i, st in rows}

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
                file_rows = pa.Table.from_pylist([f for f, _ in files], schema=arrow_schema(FILES_COLUMNS))
                self._insert("files", FILES_COLUMNS, file_rows)
                for name, columns in self.columns.items():
                    parts = []
                    for row, tables in files:
                        table = tables.get(name)
                        if table is None or table.num_rows == 0:
                            continue
                        ids = pa.array([row["file_id"]] * table.num_rows, pa.int64())
                        parts.append(table.add_column(0, "file_id", ids))
                    if parts:
                        self._insert(name, {"file_id": "BIGINT"} | columns, pa.concat_tables(parts))
            path_rows = list(paths)
            if path_rows:
                table = pa.Table.from_pylist(path_rows, schema=arrow_schema(PATHS_COLUMNS))
                con.register("_paths_batch", table)
                cols = ", ".join(PATHS_COLUMNS)
                updates = ", ".join(f"{c} = excluded.{c}" for c in PATHS_COLUMNS if c != "path")
                con.execute(
                    f"INSERT INTO paths ({cols}) SELECT {cols} FROM _paths_batch "
                    f"ON CONFLICT (path) DO UPDATE SET {updates}"
                )
                con.unregister("_paths_batch")
            orphans = self.orphaned(maybe_orphaned)
            if orphans:
                self._delete_files(orphans)
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            raise
        return orphans

    def _insert(self, name: str, columns: Mapping[str, str], table: pa.Table) -> None:
        cols = [c for c in columns if c in table.column_names]
        quoted = ", ".join(f'"{c}"' for c in cols)
        self.con.register("_batch", table)
        try:
            self.con.execute(f"INSERT INTO {name} ({quoted}) SELECT {quoted} FROM _batch")
        finally:
            self.con.unregister("_batch")

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


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__
