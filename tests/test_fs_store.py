"""The audit store recognises its own database and refuses every other file without writing a byte;
migrations are versioned. Through the real CLI in a child process with a timeout and a memory limit."""

from __future__ import annotations

import gzip
import hashlib
import os
import shutil
import sqlite3
from pathlib import Path

import duckdb
import pytest

from logscope.audit.store import MARKER_TABLE, STORE_SCHEMA_VERSION
from tests.cli_run import run_cli
from tests.conftest import FIXTURES, MOBILENET

STORE_V1 = FIXTURES / "audit" / "store-v1.duckdb.gz"


def _snapshot(folder: Path) -> dict[str, str]:
    """Every file in the folder with its SHA-256: a refusal must leave all of them as they were (and
    create none, such as a DuckDB write-ahead log)."""
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir())}


def _refused(tmp_path: Path, db: Path, *words: str) -> None:
    shutil.copy(MOBILENET, tmp_path / "ok.log")
    before = _snapshot(db.parent)
    done = run_cli(["audit", str(tmp_path / "ok.log"), "--db", str(db)])
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.startswith("logscope: error: ") and len(done.stderr.strip().splitlines()) == 1
    for word in words:
        assert word in done.stderr
    assert _snapshot(db.parent) == before


def _duckdb(path: Path, *statements: str) -> None:
    con = duckdb.connect(str(path))
    for sql in statements:
        con.execute(sql)
    con.close()


@pytest.mark.parametrize(
    "statements",
    [
        ["CREATE TABLE files (x INTEGER)", "INSERT INTO files VALUES (1)"],
        [
            "CREATE TABLE meta (key VARCHAR, value VARCHAR)",
            "INSERT INTO meta VALUES ('store_schema_version', '1')",
        ],
        ["CREATE TABLE tensors (name VARCHAR)", "CREATE VIEW files AS SELECT 1 AS file_id"],
        [
            f"CREATE TABLE {MARKER_TABLE} (format VARCHAR, schema_version INTEGER)",
            f"INSERT INTO {MARKER_TABLE} VALUES ('somebody-else', 1)",
        ],
        [],
    ],
    ids=["files-table", "meta-table", "view-named-files", "foreign-marker", "empty-duckdb"],
)
def test_a_foreign_duckdb_database_is_refused_untouched(tmp_path: Path, statements: list[str]) -> None:
    db = tmp_path / "store" / "their.duckdb"
    db.parent.mkdir()
    _duckdb(db, *statements)
    _refused(tmp_path, db, "their.duckdb", "not a logscope audit database")


def test_a_sqlite_file_is_refused_without_loading_an_extension(tmp_path: Path) -> None:
    db = tmp_path / "store" / "their.db"
    db.parent.mkdir()
    con = sqlite3.connect(db)
    con.execute("CREATE TABLE files (x INTEGER)")
    con.commit()
    con.close()
    _refused(tmp_path, db, "SQLite")


@pytest.mark.parametrize(
    "content", [b"", b"just some text\n", os.urandom(4096)], ids=["empty", "text", "random"]
)
def test_any_other_file_is_refused_untouched(tmp_path: Path, content: bytes) -> None:
    db = tmp_path / "store" / "audit.duckdb"
    db.parent.mkdir()
    db.write_bytes(content)
    _refused(tmp_path, db, "not a logscope audit database")


def test_a_store_of_a_newer_version_is_refused_untouched(tmp_path: Path) -> None:
    db = tmp_path / "store" / "audit.duckdb"
    db.parent.mkdir()
    shutil.copy(MOBILENET, tmp_path / "first.log")
    assert run_cli(["audit", str(tmp_path / "first.log"), "--db", str(db)]).returncode == 0
    _duckdb(db, f"UPDATE {MARKER_TABLE} SET schema_version = {STORE_SCHEMA_VERSION + 1}")
    _refused(tmp_path, db, "newer logscope", f"store schema {STORE_SCHEMA_VERSION + 1}")


def test_a_store_of_this_version_keeps_working(tmp_path: Path) -> None:
    db = tmp_path / "audit.duckdb"
    shutil.copy(MOBILENET, tmp_path / "one.log")
    assert run_cli(["audit", str(tmp_path / "one.log"), "--db", str(db)]).returncode == 0
    (tmp_path / "two.log").write_text(MOBILENET.read_text(encoding="utf-8") + "I two\n", encoding="utf-8")
    done = run_cli(["audit", str(tmp_path), "--db", str(db), "--include", "*.log"])
    assert done.returncode == 0, done.stderr
    con = duckdb.connect(str(db), read_only=True)
    assert con.execute(f"SELECT format, schema_version FROM {MARKER_TABLE}").fetchall() == [
        ("logscope-audit", STORE_SCHEMA_VERSION)
    ]
    assert con.execute("SELECT count(*) FROM files WHERE status = 'ok'").fetchone() == (2,)
    con.close()


def test_a_version_1_store_is_migrated(tmp_path: Path) -> None:
    """fixtures/audit/store-v1.duckdb.gz was written by logscope with store schema 1 (no marker table,
    `paths` keyed by a UTF-8 `path`); it gains the marker and `path_bytes`, keeps its rows and takes
    new files."""
    db = tmp_path / "old.duckdb"
    db.write_bytes(gzip.decompress(STORE_V1.read_bytes()))
    con = duckdb.connect(str(db), read_only=True)
    old_files = con.execute("SELECT sha256, path, status FROM files ORDER BY sha256").fetchall()
    old_paths = con.execute("SELECT path, sha256 FROM paths ORDER BY path").fetchall()
    con.close()
    assert len(old_files) == 2
    (tmp_path / "new.log").write_text(MOBILENET.read_text(encoding="utf-8") + "I new\n", encoding="utf-8")
    done = run_cli(["audit", str(tmp_path / "new.log"), "--db", str(db)])
    assert done.returncode == 0, done.stderr
    con = duckdb.connect(str(db), read_only=True)
    assert con.execute(f"SELECT schema_version FROM {MARKER_TABLE}").fetchone() == (STORE_SCHEMA_VERSION,)
    assert con.execute("SELECT value FROM meta").fetchone() == (str(STORE_SCHEMA_VERSION),)
    files = con.execute("SELECT sha256, path, status, path_bytes FROM files ORDER BY sha256").fetchall()
    assert len(files) == 3
    for sha, path, status in old_files:
        assert (sha, path, status, path.encode()) in files
    paths = con.execute("SELECT path, sha256, path_bytes FROM paths ORDER BY path").fetchall()
    for path, sha in old_paths:
        assert (path, sha, path.encode()) in paths
    con.close()
    trend = run_cli(["trend", "--db", str(db), "--format", "json"])
    assert trend.returncode == 0, trend.stderr


def test_db_under_an_existing_file_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "plain").write_text("a file, not a folder\n")
    shutil.copy(MOBILENET, tmp_path / "ok.log")
    done = run_cli(["audit", str(tmp_path / "ok.log"), "--db", str(tmp_path / "plain" / "a.duckdb")])
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1
    assert "a.duckdb" in done.stderr and "not a folder" in done.stderr


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders: the refusal cannot happen")
def test_db_in_a_read_only_folder_is_one_line(tmp_path: Path) -> None:
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o555)
    shutil.copy(MOBILENET, tmp_path / "ok.log")
    try:
        done = run_cli(["audit", str(tmp_path / "ok.log"), "--db", str(folder / "a.duckdb")])
    finally:
        folder.chmod(0o755)
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1
    assert "not writable" in done.stderr


def test_extensions_are_never_installed_or_loaded_on_their_own(tmp_path: Path) -> None:
    from logscope.audit.store import Store

    with Store(tmp_path / "a.duckdb") as store:
        settings = store.con.execute(
            "SELECT current_setting('autoinstall_known_extensions'), "
            "current_setting('autoload_known_extensions')"
        ).fetchone()
    assert settings == (False, False)


def _row_groups(db: Path, table: str) -> list[int]:
    with duckdb.connect(str(db), read_only=True) as con:
        rows = con.execute(
            f"SELECT row_group_id, max(count) FROM pragma_storage_info('{table}') GROUP BY 1 ORDER BY 1"
        ).fetchall()
    return [int(n) for _, n in rows]


@pytest.mark.parametrize("attach_has_the_option", [True, False])
def test_the_writer_appends_small_row_groups(
    tmp_path: Path, monkeypatch, attach_has_the_option: bool
) -> None:
    """The writer's rows go in row groups of ROW_GROUP_ROWS (a checkpoint rewrites the last one of each
    table); a DuckDB whose ATTACH has no ROW_GROUP_SIZE opens the store with its default layout, and the
    rows read back the same either way."""
    from logscope.audit import store as store_module

    if not attach_has_the_option:
        real = duckdb.DuckDBPyConnection.execute

        def no_option(self: duckdb.DuckDBPyConnection, sql: str, *args: object) -> object:
            if "ROW_GROUP_SIZE" in sql:
                raise duckdb.BinderException('Unrecognized option for attach "row_group_size"')
            return real(self, sql, *args)

        monkeypatch.setattr(duckdb.DuckDBPyConnection, "execute", no_option)
    db = tmp_path / "it's a store.duckdb"  # a quote in the name goes through SQL text
    with store_module.Store(db) as store:
        store.con.execute(
            "INSERT INTO fusions (file_id, build_index) SELECT range, range % 7 FROM range(20000)"
        )
    monkeypatch.undo()
    groups = _row_groups(db, "fusions")
    if attach_has_the_option:
        assert groups == [store_module.ROW_GROUP_ROWS] * 2 + [20000 - 2 * store_module.ROW_GROUP_ROWS]
    else:
        assert groups == [20000]
    with duckdb.connect(str(db), read_only=True) as con:
        assert con.execute("SELECT sum(file_id), sum(build_index), count(*) FROM fusions").fetchone() == (
            sum(range(20000)),
            sum(i % 7 for i in range(20000)),
            20000,
        )
