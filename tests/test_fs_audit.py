"""The audit against a hostile file system, through the real CLI in a child process with a timeout and a
memory limit: file names that are not UTF-8, FIFOs, devices, sockets, link loops, sparse and binary
files. Every good file is stored, every other path gets a row saying why it was not read, and nothing
hangs or reads gigabytes."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import socket
import sqlite3
from pathlib import Path

import duckdb
import pytest

from logscope.io import display_path
from tests.cli_run import run_cli
from tests.conftest import MOBILENET

GBK_NAME = "构建日志".encode("gbk") + b".log"  # a log saved by a Chinese-locale Windows tool


def _variant(path: Path, marker: str) -> None:
    """A copy of the MobileNet log with different bytes (so it is its own content, not a copy)."""
    path.write_text(MOBILENET.read_text(encoding="utf-8") + f"I {marker}\n", encoding="utf-8")


def _rows(db: Path, sql: str) -> list[tuple]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def _audit(*args: str | os.PathLike[str], cwd: Path | None = None) -> dict:
    done = run_cli(["audit", *args, "--format", "json"], cwd=cwd)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.mark.skipif(os.name != "posix", reason="file names as bytes are a POSIX matter")
def test_non_utf8_file_name_is_stored_losslessly_and_shown_escaped(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    _variant(logs / "good.log", "good")
    gbk = os.path.join(os.fsencode(logs), GBK_NAME)
    _variant(Path(os.fsdecode(gbk)), "gbk")
    db = tmp_path / "a.duckdb"
    report = _audit(logs, "--db", db)
    assert report["statuses"] == {"ok": 2} and report["failures"] == []
    stored = dict(_rows(db, "SELECT path_bytes, path FROM paths"))
    assert gbk in stored  # the exact bytes
    # Printable: the bytes that are not UTF-8 as \xNN (0xd6 0xbe happens to be valid UTF-8: U+05BE).
    assert stored[gbk] == str(logs) + "/\\xb9\\xb9\\xbd\\xa8\\xc8\\xd5\u05be.log"
    assert _rows(db, "SELECT count(*) FROM files WHERE status = 'ok'") == [(2,)]
    again = _audit(logs, "--db", db)  # the stored bytes find the file again: nothing re-read
    assert (again["unchanged"], again["audited"]) == (2, 0)
    sarif = run_cli(["audit", str(logs), "--db", str(db), "--format", "sarif"])  # read back by bytes
    assert sarif.returncode == 0, sarif.stderr
    assert "xb9" in sarif.stdout  # the escaped name (in a URI: %5Cxb9)
    parsed = run_cli(["parse", os.fsdecode(gbk), "--format", "json"])
    assert parsed.returncode == 0, parsed.stderr
    assert "\\\\xb9\\\\xb9" in parsed.stdout  # JSON of the escaped name
    report = run_cli(["report", os.fsdecode(gbk), "-o", str(tmp_path / "r.json")])
    assert report.returncode == 0, report.stderr
    assert "\\\\xb9\\\\xb9" in (tmp_path / "r.json").read_text(encoding="utf-8")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs and device files")
def test_fifos_devices_and_sockets_are_skipped_with_a_reason(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    _variant(logs / "good.log", "good")
    os.mkfifo(logs / "fifo.log")  # blocks a plain open() forever: no writer
    (logs / "zero.log").symlink_to("/dev/zero")  # endless
    (logs / "random.log").symlink_to("/dev/urandom")  # endless and binary
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(logs / "sock.log"))
        report = _audit(logs, "--db", tmp_path / "a.duckdb")
    assert report["statuses"] == {"ok": 1} and report["skipped"] == 4
    reasons = {Path(path).name: error for path, status, error in report["failures"] if status == "skipped"}
    assert "FIFO" in reasons["fifo.log"]
    assert "character device" in reasons["zero.log"] and "character device" in reasons["random.log"]
    assert "socket" in reasons["sock.log"]
    errors = _rows(
        tmp_path / "a.duckdb", "SELECT count(*) FROM paths WHERE error LIKE '%not a regular file%'"
    )
    assert errors == [(4,)]


def test_link_loops_end_and_each_real_file_has_one_row(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    (tree / "a" / "b").mkdir(parents=True)
    _variant(tree / "top.log", "top")
    _variant(tree / "a" / "b" / "deep.log", "deep")
    (tree / "a" / "up").symlink_to("..")  # two loops: glob.glob(**) used to walk them for minutes
    (tree / "a" / "b" / "again").symlink_to("../../a")
    (tree / "alias.log").symlink_to("a/b/deep.log")  # a second name for a real file
    (tree / "dangling.log").symlink_to("nowhere.log")
    for number, arg in enumerate([str(tree), str(tree / "**" / "*.log")]):
        db = tmp_path / f"{number}.duckdb"
        report = _audit(arg, "--db", db)
        assert report["statuses"] == {"ok": 2}
        assert report["unreadable"] == 1 and "dangling.log" in report["failures"][0][0]
        paths = sorted(p for (p,) in _rows(db, "SELECT path FROM paths WHERE sha256 IS NOT NULL"))
        assert paths == [str(tree / "a" / "b" / "deep.log"), str(tree / "top.log")]


def test_sparse_and_binary_files_are_refused_before_reading(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    _variant(logs / "good.log", "good")
    with open(logs / "sparse.log", "wb") as fh:  # 3 GB of holes: no disk, but 3 GB to read
        fh.truncate(3 * 1024**3)
    with open(logs / "holes.log", "wb") as fh:  # under the cap: hashed, then refused as binary from its
        fh.truncate(64 * 1024**2)  # first block (the size only costs the hash)
    (logs / "model.log").write_bytes(b"\x08\x07\x12\x00ONNX" + os.urandom(1 << 20))
    report = _audit(logs, "--db", tmp_path / "a.duckdb")
    assert report["statuses"] == {"ok": 1, "rejected": 2} and report["skipped"] == 1
    by_name = {Path(path).name: (status, error) for path, status, error in report["failures"]}
    assert by_name["sparse.log"][0] == "skipped" and "larger than the limit" in by_name["sparse.log"][1]
    assert "looks binary" in by_name["holes.log"][1] and "looks binary" in by_name["model.log"][1]


@pytest.mark.parametrize("source", ["/dev/zero", "/dev/urandom", "sparse", "holes"])
def test_parse_refuses_endless_and_binary_input_early(tmp_path: Path, source: str) -> None:
    """Within 1 GiB of resident memory (`run_cli` checks the child's peak): reading up to the 2 GiB
    cap before refusing, as before, cannot fit; the refusal comes after the first block."""
    if source.startswith("/dev/"):
        if not os.path.exists(source):
            pytest.skip(f"no {source}")
        path = str(source)
    else:
        path = str(tmp_path / f"{source}.log")
        with open(path, "wb") as fh:
            fh.truncate(3 * 1024**3 if source == "sparse" else 1800 * 1024**2)
    done = run_cli(["parse", path], timeout=60)
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("logscope: error: ") and len(done.stderr.strip().splitlines()) == 1
    assert any(word in done.stderr for word in ("character device", "larger than the limit", "binary"))


def test_a_file_the_store_refuses_does_not_cost_the_batch(tmp_path: Path, monkeypatch) -> None:
    """A batch that the store refuses is written again one file at a time; the file whose rows are
    still refused gets an `error` row, every other file keeps its rows."""
    from logscope.audit import AuditOptions, audit
    from logscope.audit.store import Store

    logs = tmp_path / "logs"
    logs.mkdir()
    for name in ("a.log", "b.log", "poison.log"):
        _variant(logs / name, name)
    real = Store.write_batch

    def refuse_poison(self, files, *args, **kwargs):
        if any(row["path"].endswith("poison.log") and row["status"] == "ok" for row, _ in files):
            raise ValueError("a value the store cannot hold")
        return real(self, files, *args, **kwargs)

    monkeypatch.setattr(Store, "write_batch", refuse_poison)
    db = tmp_path / "a.duckdb"
    report = audit([str(logs)], db, AuditOptions())
    assert report.statuses == {"ok": 2, "error": 1} and report.stored_alone == 3
    rows = _rows(db, "SELECT path, status, error FROM files ORDER BY path")
    assert [(Path(p).name, s) for p, s, _ in rows] == [
        ("a.log", "ok"),
        ("b.log", "ok"),
        ("poison.log", "error"),
    ]
    assert "a value the store cannot hold" in rows[2][2]
    assert _rows(db, "SELECT count(DISTINCT file_id) FROM builds") == [(2,)]
    shutil.rmtree(logs)


def _regular_files(folder: Path) -> dict[str, str]:
    """SHA-256 of every regular file under `folder` (links and special files not followed)."""
    out = {}
    for root, _, names in os.walk(folder):
        for name in names:
            path = os.path.join(root, name)
            if os.path.isfile(path) and not os.path.islink(path) and os.path.getsize(path) < 1 << 30:
                with open(path, "rb") as fh:
                    out[path] = hashlib.sha256(fh.read()).hexdigest()
    return out


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs, sockets and device files")
def test_an_audit_of_every_case_at_once(tmp_path: Path) -> None:
    """One folder holding every case: the audit finishes within the limits, stores every good file,
    gives every other path a row with its reason, and leaves every foreign file byte-identical."""
    folder = tmp_path / "everything"
    (folder / "sub").mkdir(parents=True)
    (folder / "badconfig").mkdir()
    good = [
        folder / "good.log",
        folder / "sub" / "other.log",
        Path(os.fsdecode(os.path.join(os.fsencode(folder), GBK_NAME))),
    ]
    for number, path in enumerate(good):
        _variant(path, f"good {number}")
    _variant(folder / "badconfig" / "ruled.log", "ruled")
    (folder / "badconfig" / "logscope.toml").write_bytes(b"[rules.MEM001]\nwarn_below = nan\n")
    os.mkfifo(folder / "fifo.log")
    (folder / "zero.log").symlink_to("/dev/zero")
    (folder / "random.log").symlink_to("/dev/urandom")
    (folder / "sub" / "up").symlink_to("..")
    (folder / "sub" / "again").symlink_to("../sub")
    (folder / "alias.log").symlink_to("good.log")
    with open(folder / "sparse.log", "wb") as fh:
        fh.truncate(3 * 1024**3)
    (folder / "model.log").write_bytes(b"\x08\x07\x12\x00ONNX" + os.urandom(1 << 16))
    their = folder / "their.duckdb.log"  # a foreign database that matches the patterns: read as a log
    con = duckdb.connect(str(their))
    con.execute("CREATE TABLE files (x INTEGER)")
    con.close()
    sqlite = folder / "their.sqlite.log"
    lite = sqlite3.connect(sqlite)
    lite.execute("CREATE TABLE t (x INTEGER)")
    lite.commit()
    lite.close()
    (folder / "empty.log").write_bytes(b"")
    before = _regular_files(folder)

    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(folder / "sock.log"))
        # --db pointing at the foreign database: refused, nothing written anywhere
        refused = run_cli(["audit", str(folder), "--db", str(their)])
        assert refused.returncode == 2 and "not a logscope audit database" in refused.stderr
        db = tmp_path / "audit.duckdb"
        report = _audit(folder, "--db", db)

    assert _regular_files(folder) == before
    statuses = dict(((Path(p).name, s) for p, s in _rows(db, "SELECT path, status FROM files")))
    ok = {name for name, status in statuses.items() if status == "ok"}
    # every good file; an empty file is not a log (`logscope parse` exits 2 on it): rejected, with why
    assert ok == {Path(display_path(path)).name for path in good}
    assert statuses["ruled.log"] == statuses["empty.log"] == "rejected"
    by_name = {Path(p).name: (s, e) for p, s, e in report["failures"]}
    assert "not a finite number" in by_name["ruled.log"][1]
    assert "empty (no line to read)" in by_name["empty.log"][1]
    for name in ("fifo.log", "zero.log", "random.log", "sock.log", "sparse.log"):
        assert by_name[name][0] == "skipped", name
    for name in ("model.log", "their.duckdb.log", "their.sqlite.log"):
        assert by_name[name][0] == "rejected", name
    # one row per real file: the alias and the loops add no path of their own
    assert _rows(db, "SELECT count(*) FROM paths WHERE path LIKE '%alias%' OR path LIKE '%/up/%'") == [(0,)]
