"""The batch audit: every fixture into DuckDB, idempotent re-runs, changed and copied files, bad files."""

from __future__ import annotations

import datetime as dt
import gzip
import json
import os
import re
import shutil
from pathlib import Path

import duckdb
import pandas as pd
import pytest
from typer.testing import CliRunner

import logscope
from logscope.audit import AuditOptions, audit, compute_trend, discover, find_log_time
from logscope.audit.store import FRAME_TABLES
from logscope.cli import app
from logscope.errors import ConfigError, InputError
from tests.conftest import FIXTURES, MOBILENET, RKNN

ALL_FIXTURES = [FIXTURES / "rknn", FIXTURES / "mcu", FIXTURES / "synthetic"]
# Columns that differ between two audits of the same bytes: when, where, which id.
VOLATILE = {"file_id", "parsed_at", "parse_seconds", "seen_at"}


def fixture_files() -> list[str]:
    return discover([str(p) for p in ALL_FIXTURES if p.is_dir()])


def table(db: Path, sql: str) -> pd.DataFrame:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute(sql).df()
    finally:
        con.close()


def content(db: Path) -> dict[str, pd.DataFrame]:
    """Every stored table keyed by content hash instead of file_id, sorted: comparable across databases."""
    out = {}
    for name in (*FRAME_TABLES, "findings"):
        frame = table(
            db, f"SELECT f.sha256, t.* EXCLUDE (file_id) FROM {name} t JOIN files f USING (file_id)"
        )
        out[name] = frame.sort_values(list(frame.columns)).reset_index(drop=True)
    files = table(db, "SELECT * FROM files")
    files = files.drop(columns=[c for c in VOLATILE if c in files.columns])
    out["files"] = files.sort_values("sha256").reset_index(drop=True)
    return out


@pytest.fixture(scope="module")
def fixtures_db(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, logscope.audit.AuditReport]:
    db = tmp_path_factory.mktemp("audit") / "fixtures.duckdb"
    report = audit([str(p) for p in ALL_FIXTURES if p.is_dir()], db)
    return db, report


def test_audit_stores_every_fixture(fixtures_db):
    db, report = fixtures_db
    files = fixture_files()
    assert len(files) >= 50
    assert report.discovered == report.to_audit == report.audited == len(files)
    stored = table(db, "SELECT path, status, error, sha256, size_bytes, logscope_version FROM files")
    assert sorted(stored["path"]) == sorted(files)
    assert set(stored["status"]) == {"ok"}, stored[stored["status"] != "ok"][["path", "error"]]
    assert (stored["logscope_version"] == logscope.__version__).all()
    assert stored["sha256"].str.fullmatch(r"[0-9a-f]{64}").all()
    paths = table(db, "SELECT * FROM paths")
    assert len(paths) == len(files) and paths["error"].isna().all()
    # Per-file builds in `files` match the builds table, and the report counts what was committed.
    builds = table(db, "SELECT count(*) AS n FROM builds")["n"].iloc[0]
    runs = table(db, "SELECT count(*) AS n FROM mcu_runs")["n"].iloc[0]
    assert report.builds == builds + runs == table(db, "SELECT sum(builds) AS n FROM files")["n"].iloc[0]
    for name, n in report.rows.items():
        assert table(db, f"SELECT count(*) AS n FROM {name}")["n"].iloc[0] == n
    assert sum(report.findings.values()) == report.rows["findings"] > 0


def test_stored_rows_equal_the_parsed_frames(fixtures_db):
    db, _ = fixtures_db
    log = logscope.analyze(MOBILENET)
    file_id = table(db, f"SELECT file_id FROM files WHERE path = '{MOBILENET}'")["file_id"].iloc[0]
    for name in ("layers", "tensors", "fusions", "messages", "builds"):
        order = "" if name == "builds" else " ORDER BY line"
        stored = table(db, f"SELECT * EXCLUDE (file_id) FROM {name} WHERE file_id = {file_id}{order}")
        frame = log.frames[name]
        assert len(stored) == len(frame), name
        assert list(stored.columns) == list(frame.columns), name
    tensors = table(db, f"SELECT * FROM tensors WHERE file_id = {file_id} ORDER BY line")
    assert tensors["size_bytes"].tolist() == log.frames["tensors"].sort_values("line")["size_bytes"].tolist()
    fusions = table(db, f"SELECT removed_nodes FROM fusions WHERE file_id = {file_id} ORDER BY line")
    assert json.loads(fusions["removed_nodes"].iloc[0]) == list(
        log.frames["fusions"]["removed_nodes"].iloc[0]
    )
    findings = table(db, f"SELECT * FROM findings WHERE file_id = {file_id}")
    assert sorted(findings["code"]) == sorted(f.code for f in log.findings)
    evidence = json.loads(findings[findings["code"] == "MEM001"]["evidence"].iloc[0])
    assert evidence and isinstance(evidence, dict)
    metrics = table(db, f"SELECT * FROM build_metrics WHERE file_id = {file_id}").iloc[0]
    assert metrics["internal_bytes"] == 1756160 and metrics["weight_bytes"] == 4447296
    assert metrics["layers"] == 34 and metrics["findings"] == len(log.findings)
    # [09] states when it ran: TensorFlow's line 6 `2023-12-22 15:13:10.185671: W ...`.
    assert metrics["time_source"] == "log"
    assert metrics["time"] == pd.Timestamp("2023-12-22 15:13:10.185671")


def test_rerun_is_idempotent(fixtures_db, tmp_path):
    db, _ = fixtures_db
    work = tmp_path / "again.duckdb"
    shutil.copy(db, work)
    before = content(work)
    again = audit([str(p) for p in ALL_FIXTURES if p.is_dir()], work)
    assert again.unchanged == again.discovered and again.audited == 0 and again.to_audit == 0
    rehashed = audit([str(p) for p in ALL_FIXTURES if p.is_dir()], work, AuditOptions(rehash=True))
    assert rehashed.known == rehashed.discovered and rehashed.audited == 0
    after = content(work)
    for name, frame in before.items():
        pd.testing.assert_frame_equal(frame, after[name], obj=name)


def test_changed_file_is_reaudited_and_copies_are_not(tmp_path):
    logs = tmp_path / "logs"
    logs.mkdir()
    target = logs / "build.log"
    shutil.copy(MOBILENET, target)
    db = tmp_path / "a.duckdb"
    first = audit([str(logs)], db)
    assert first.audited == 1
    old_sha = table(db, "SELECT sha256 FROM files")["sha256"].iloc[0]

    shutil.copy(target, logs / "copy-of-build.log")  # same content, second path: recorded, not parsed
    copied = audit([str(logs)], db)
    assert (copied.unchanged, copied.known, copied.audited) == (1, 1, 0)
    assert len(table(db, "SELECT * FROM paths")) == 2 and len(table(db, "SELECT * FROM files")) == 1

    target.write_text(target.read_text().replace("1756160", "1999999"))  # a changed Total Internal figure
    os.utime(target, ns=(1, 1_700_000_000_000_000_000))
    changed = audit([str(logs)], db)
    assert (changed.unchanged, changed.audited) == (1, 1)
    files = table(db, "SELECT sha256, path FROM files ORDER BY path")
    assert len(files) == 2 and old_sha in set(files["sha256"])  # the copy still holds the old content
    internal = table(db, "SELECT path, internal_bytes FROM build_metrics ORDER BY path")
    assert internal["internal_bytes"].tolist() == [1756160, 1999999]
    assert table(db, "SELECT time_source FROM build_metrics")["time_source"].tolist() == ["log", "log"]

    (logs / "copy-of-build.log").write_text(target.read_text())  # the copy now matches: old content orphaned
    replaced = audit([str(logs)], db)
    assert replaced.known == 1 and replaced.removed == 1 and replaced.audited == 0
    assert len(table(db, "SELECT * FROM files")) == 1
    for name in FRAME_TABLES:
        orphans = table(
            db, f"SELECT count(*) AS n FROM {name} WHERE file_id NOT IN (SELECT file_id FROM files)"
        )
        assert orphans["n"].iloc[0] == 0, name


def test_bad_files_are_recorded_and_the_run_goes_on(tmp_path, monkeypatch):
    logs = tmp_path / "logs"
    logs.mkdir()
    good = sorted(RKNN.glob("*.log"))[:3]
    for path in good:
        shutil.copy(path, logs / path.name)
    (logs / "binary.log").write_bytes(bytes(range(256)) * 64)
    (logs / "truncated.log.gz").write_bytes(gzip.compress(MOBILENET.read_bytes())[:300])
    (logs / "notes.txt").write_text("nothing a toolkit would print\n" * 5)
    (logs / "crash.log").write_text(MOBILENET.read_text() + "\n# this copy crashes the parser\n")
    (logs / ".hidden.log").write_text("skipped")
    (logs / "image.png").write_bytes(b"\x89PNG")

    import logscope.audit.worker as worker

    real_parse = worker.parse_stream

    def parse_stream(stream, blocks=None):
        if str(stream.path).endswith("crash.log"):
            raise RuntimeError("boom")
        return real_parse(stream, blocks)

    monkeypatch.setattr(worker, "parse_stream", parse_stream)
    db = tmp_path / "a.duckdb"
    report = audit([str(logs)], db)
    assert report.discovered == 7
    status = table(db, "SELECT path, status, error FROM files").set_index("path")
    status.index = [Path(p).name for p in status.index]
    assert status.loc[[p.name for p in good], "status"].tolist() == ["ok"] * 3
    for name in ("binary.log", "truncated.log.gz", "notes.txt"):
        assert status.loc[name, "status"] == "rejected", name
        assert status.loc[name, "error"]
    assert (
        "gzip" in status.loc["truncated.log.gz", "error"]
        or "compress" in status.loc["truncated.log.gz", "error"]
    )
    assert status.loc["crash.log", "status"] == "error"
    assert status.loc["crash.log", "error"].startswith("RuntimeError: boom (at test_audit.py:")
    assert report.statuses == {"ok": 3, "rejected": 3, "error": 1}
    assert {f[1] for f in report.failures} == {"rejected", "error"}
    # Failed content is not retried on a plain re-run; --retry-failed re-reads it.
    monkeypatch.setattr(worker, "parse_stream", real_parse)
    assert audit([str(logs)], db).audited == 0
    retried = audit([str(logs)], db, AuditOptions(retry_failed=True))
    assert retried.audited == 4 and retried.statuses["ok"] == 1
    assert len(table(db, "SELECT * FROM files")) == 7


def test_unreadable_path_is_recorded(tmp_path):
    logs = tmp_path / "logs"
    logs.mkdir()
    shutil.copy(MOBILENET, logs / "good.log")
    (logs / "gone.log").symlink_to(tmp_path / "nowhere.log")  # listed by the walk, cannot be opened
    db = tmp_path / "a.duckdb"
    report = audit([str(logs)], db)
    assert (report.discovered, report.audited, report.unreadable) == (2, 1, 1)
    assert report.failures[0][1] == "unreadable" and "cannot read" in report.failures[0][2]
    paths = table(db, "SELECT path, sha256, error FROM paths ORDER BY path")
    assert paths["sha256"].isna().tolist() == [True, False]
    assert "cannot read" in paths["error"].iloc[0]
    (tmp_path / "nowhere.log").write_text(MOBILENET.read_text().replace("1756160", "1756161"))
    again = audit([str(logs)], db)  # an unreadable path is tried again on every run
    assert (again.unchanged, again.audited, again.unreadable) == (1, 1, 0)


def test_discover_walks_globs_and_patterns(tmp_path):
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / ".git").mkdir()
    for name in ("a/one.log", "a/b/two.log.gz", "a/b/three.txt", "a/skip.png", ".git/x.log", "a/.h.log"):
        (tmp_path / name).write_text("x")
    found = [Path(p).relative_to(tmp_path).as_posix() for p in discover([str(tmp_path)])]
    assert found == ["a/one.log", "a/b/three.txt", "a/b/two.log.gz"] or sorted(found) == sorted(
        ["a/one.log", "a/b/three.txt", "a/b/two.log.gz"]
    )
    globbed = discover([str(tmp_path / "**" / "*.gz"), str(tmp_path / "a" / "one.log")])
    assert [Path(p).name for p in globbed] == ["two.log.gz", "one.log"]
    assert discover([str(tmp_path)], patterns=("*.png",)) == [str(tmp_path / "a" / "skip.png")]
    with pytest.raises(InputError, match="matched no file"):
        discover([str(tmp_path / "*.nothing")])
    with pytest.raises(InputError, match="no such file"):
        discover([str(tmp_path / "missing")])


def test_log_time_is_a_leading_or_labelled_date():
    assert find_log_time(str(MOBILENET)) == (dt.datetime(2023, 12, 22, 15, 13, 10, 185671), 6)
    logcat = RKNN / "34-issue-rl-tk2-44-android-logcat-malloc-npu-rk3568.log"
    assert find_log_time(str(logcat)) == (dt.datetime(2022, 7, 6, 15, 37, 3, 100000), 1)
    st_report = FIXTURES / "mcu" / "11-stedgeai-v1-analyze-report-mnist-h750.txt"
    assert find_log_time(str(st_report)) == (dt.datetime(2024, 10, 26, 14, 42, 10), 2)
    # A compiler build stamp inside a line is not when the log was written.
    assert find_log_time(str(RKNN / "26-issue-rl-tk2-118-tqdm-cr-buffer-overflow-tk2-1.x.log")) == (
        None,
        None,
    )


def test_audited_log_time_is_found_in_the_lines_the_parse_read():
    """The audit takes the log time from the first lines its parse read, not from a second read of the
    file: the same time and line as `find_log_time` for each of these logs (dates leading a line or
    labelled, in RKNN and MCU logs, and one log without a date)."""
    from logscope.audit.worker import FileTask, audit_file

    paths = [
        MOBILENET,
        RKNN / "34-issue-rl-tk2-44-android-logcat-malloc-npu-rk3568.log",
        FIXTURES / "mcu" / "11-stedgeai-v1-analyze-report-mnist-h750.txt",
        RKNN / "26-issue-rl-tk2-118-tqdm-cr-buffer-overflow-tk2-1.x.log",
    ]
    for path in paths:
        result = audit_file(FileTask(str(path)))
        assert result.status == "ok", result.error
        found = (result.row["log_time"], result.row["log_time_line"])
        assert found == find_log_time(str(path)), path


def test_options_are_checked(tmp_path):
    with pytest.raises(ConfigError, match="engine"):
        audit([str(MOBILENET)], tmp_path / "a.duckdb", AuditOptions(engine="spark"))
    with pytest.raises(ConfigError, match="jobs"):
        audit([str(MOBILENET)], tmp_path / "a.duckdb", AuditOptions(jobs=0))
    (tmp_path / "not.duckdb").write_text("this is not a database")
    with pytest.raises(InputError):
        audit([str(MOBILENET)], tmp_path / "not.duckdb")


# ---------------------------------------------------------------------------------------- CLI and trend


def test_cli_audit_and_trend(tmp_path):
    logs = tmp_path / "logs"
    logs.mkdir()
    # Three builds of one model over three days: the feature-map total grows 10 % on the third.
    text = MOBILENET.read_text().replace("2023-12-22 15:13:10", "# no date here")
    for day, internal in ((1, 1756160), (2, 1756160), (3, 1931776)):
        path = logs / f"build-{day}.log"
        body = text.replace("Total Internal Memory Size: 1756160", f"Total Internal Memory Size: {internal}")
        path.write_text(body + "\n" * day)  # distinct bytes: identical content is audited once
        stamp = dt.datetime(2024, 5, day, tzinfo=dt.UTC).timestamp()
        os.utime(path, (stamp, stamp))
    (logs / "junk.txt").write_text("not a log\n")
    db = tmp_path / "a.duckdb"
    runner = CliRunner()
    result = runner.invoke(app, ["audit", str(logs), "--db", str(db), "--format", "json"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["schema_version"] == 1 and summary["audited"] == 4
    assert summary["statuses"] == {"ok": 3, "rejected": 1}
    text_run = runner.invoke(app, ["audit", str(logs), "--db", str(db)])
    assert text_run.exit_code == 0
    assert re.search(r"unchanged \(skipped\)\s+│ 4 ", text_run.stdout), text_run.stdout

    out = runner.invoke(app, ["trend", "--db", str(db), "--format", "json"])
    assert out.exit_code == 0, out.output
    trend = json.loads(out.stdout)
    assert trend["metric"] == "internal_bytes" and trend["time_sources"] == {"mtime": 3}
    assert [p["value"] for p in trend["points"]] == [1756160, 1756160, 1931776]
    assert [p["regression"] for p in trend["points"]] == [False, False, True]
    assert trend["regressions"][0]["change_pct"] == pytest.approx(10.0)
    assert trend["points"][2]["time"] == "2024-05-03T00:00:00"

    csv_out = runner.invoke(app, ["trend", "--db", str(db), "--by", "target_platform", "--format", "csv"])
    assert csv_out.exit_code == 0 and csv_out.stdout.splitlines()[0].startswith("group,time,time_source")
    png = tmp_path / "trend.png"
    plotted = runner.invoke(app, ["trend", "--db", str(db), "-o", str(png), "--threshold", "20"])
    assert plotted.exit_code == 0 and png.read_bytes()[:4] == b"\x89PNG"
    assert "regressions 0" in plotted.stdout
    assert runner.invoke(app, ["trend", "--db", str(db), "--metric", "nope"]).exit_code == 2
    assert runner.invoke(app, ["trend", "--db", str(tmp_path / "none.duckdb")]).exit_code == 2
    assert runner.invoke(app, ["audit", str(tmp_path / "missing"), "--db", str(db)]).exit_code == 2


def test_trend_rates_regress_downwards(fixtures_db):
    db, _ = fixtures_db
    result = compute_trend(db, "computed_reuse_rate", threshold_pct=1.0)
    assert result.higher_is_better
    pts = result.points
    falls = pts[(pts["change_pct"] < -1.0)]
    assert pts["regression"].tolist() == pts.index.isin(falls.index).tolist()


@pytest.mark.parametrize(
    "interrupt", [RuntimeError("Query interrupted"), duckdb.InterruptException("INTERRUPT Error")]
)
def test_ctrl_c_inside_a_duckdb_statement_stops_the_audit_like_keyboard_interrupt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, interrupt: BaseException
) -> None:
    """Ctrl-C while DuckDB runs a statement reaches Python as the client's own exception, not as
    KeyboardInterrupt: it once ended `audit` as an internal error (exit 3) and could send the batch
    down the file-by-file path as if the rows were bad. It stops the run, and what was received is
    committed."""
    from logscope.audit import AuditInterrupted
    from logscope.audit.store import Store

    logs = tmp_path / "logs"
    logs.mkdir()
    for i in range(3):
        shutil.copy(MOBILENET, logs / f"b{i}.log")
        with open(logs / f"b{i}.log", "a", encoding="utf-8") as fh:
            fh.write(f"I copy {i}\n")  # distinct content: three files, not one
    real = Store.write_batch
    calls = {"n": 0}

    def interrupted_once(self: Store, *args: object, **kwargs: object) -> list[int]:
        calls["n"] += 1
        if calls["n"] == 1:
            raise interrupt
        return real(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Store, "write_batch", interrupted_once)
    db = tmp_path / "a.duckdb"
    with pytest.raises(AuditInterrupted) as stop:
        audit([str(logs)], db, AuditOptions(batch_files=1))
    assert stop.value.report.interrupted
    assert stop.value.report.stored_alone == 0
    monkeypatch.setattr(Store, "write_batch", real)
    with duckdb.connect(str(db), read_only=True) as con:
        stored = con.execute("SELECT count(*) FROM files").fetchone()
    assert stored is not None and stored[0] >= 1


@pytest.mark.parametrize(
    "build_indexes",
    [[], [0], [0, 0, 1], [1, 0, 1, 0, 0], [None, 0, None, 0], [pd.NA, 2, pd.NA, 2, 3]],
)
def test_source_rank_counts_rows_per_build_as_a_groupby_would(build_indexes: list) -> None:
    from logscope.audit.worker import source_ranks

    frame = pd.DataFrame({"build_index": pd.array(build_indexes, dtype="Int64")})
    expected = frame.groupby("build_index", dropna=False).cumcount().tolist()
    assert source_ranks(frame["build_index"].tolist()) == expected


def test_log_time_is_searched_in_the_first_lines_however_long(tmp_path):
    """The first 400 lines are searched whatever their length: the audit takes them from the first block
    the parse reads (a local file as an object-store URL), and `find_log_time` reads the same block."""
    from logscope.audit import FileTask, audit_file

    stamp = dt.datetime(2023, 12, 22, 15, 13, 10, 185671)
    long_head = tmp_path / "long-head.log"  # 80 KB of long lines before the stamp on line 256
    long_head.write_text(
        "".join(f"I note {i}: " + "x" * 300 + "\n" for i in range(250)) + MOBILENET.read_text()
    )
    assert find_log_time(str(long_head)) == (stamp, 256)
    result = audit_file(FileTask(str(long_head)))
    assert result.status == "ok"
    assert (result.row["log_time"], result.row["log_time_line"]) == (stamp, 256)
    late = tmp_path / "late.log"  # the stamp on line 406: not looked for
    late.write_text("".join(f"I note {i}\n" for i in range(400)) + MOBILENET.read_text())
    assert find_log_time(str(late)) == (None, None)
    result = audit_file(FileTask(str(late)))
    assert result.status == "ok" and (result.row["log_time"], result.row["log_time_line"]) == (None, None)


def test_planner_hashes_only_what_could_be_known_content(tmp_path, monkeypatch):
    """A file whose size no stored content and no other planned file has cannot be known content: the
    worker hashes it as it parses, and the store holds the hash of its bytes all the same. Files of a
    shared size are hashed first, so a copy is still recorded without being parsed."""
    import hashlib

    from logscope.audit import runner

    logs = tmp_path / "logs"
    logs.mkdir()
    shutil.copy(MOBILENET, logs / "a.log")
    shutil.copy(MOBILENET, logs / "b.log")  # same bytes, same size: hashed, a copy
    (logs / "c.log").write_text(MOBILENET.read_text() + "I one line more\n")  # a size of its own
    hashed: list[str] = []
    real = runner.hash_file

    def counted(path: str, *args: object, **kwargs: object) -> str:
        hashed.append(Path(path).name)
        return real(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(runner, "hash_file", counted)
    db = tmp_path / "a.duckdb"
    first = audit([str(logs)], db)
    assert sorted(hashed) == ["a.log", "b.log"]
    assert (first.to_audit, first.audited, first.known) == (2, 2, 1)
    files = table(db, "SELECT path, sha256 FROM files ORDER BY path")
    c_bytes = (logs / "c.log").read_bytes()
    assert files["sha256"].tolist()[-1] == hashlib.sha256(c_bytes).hexdigest()
    assert len(table(db, "SELECT * FROM paths")) == 3

    hashed.clear()
    (logs / "d.log").write_bytes(c_bytes)  # c's content: its size is stored now, so it is hashed, not parsed
    second = audit([str(logs)], db)
    assert hashed == ["d.log"]
    assert (second.unchanged, second.known, second.audited) == (3, 1, 0)


def test_a_pool_commits_what_came_while_its_last_files_run(tmp_path):
    """Once every file has gone to a worker, what came so far is committed while the last ones run,
    and again when each worker runs its last file, so only those are left to commit after the workers
    stop."""
    from logscope.audit import runner

    logs = tmp_path / "logs"
    logs.mkdir()
    for i in range(40):
        (logs / f"b{i:02d}.log").write_text(MOBILENET.read_text() + f"I copy {i}\n")
    commits: list[int] = []

    class Commits:
        def start(self, total: int) -> None: ...
        def advance(self, result: object) -> None: ...
        def committed(self, files: int, total: int) -> None:
            commits.append(files)

        def notice(self, text: str) -> None: ...
        def close(self) -> None: ...

    options = AuditOptions(jobs=2, batch_seconds=1e9)
    report = audit([str(logs)], tmp_path / "a.duckdb", options, Commits())
    assert report.audited == 40
    points = runner._drain_points(options)
    assert points == (runner.IN_FLIGHT * 2, 2)
    assert commits == [40 - points[0], points[0] - points[1], points[1]]


def test_files_in_flight_are_bounded_by_count_and_by_bytes():
    """Up to IN_FLIGHT_ANY files per worker go whatever their size; more, up to IN_FLIGHT, only while
    the bytes in flight fit IN_FLIGHT_BYTES per worker; a finished file frees its bytes."""
    from logscope.audit import runner
    from logscope.audit.worker import FileTask

    small, medium, big = FileTask("small.log"), FileTask("medium.log"), FileTask("big.log")
    budget = runner.IN_FLIGHT_BYTES * 2
    floor = runner.IN_FLIGHT_ANY * 2
    sizes = {"small.log": 1 << 20, "medium.log": budget // (floor + 1), "big.log": budget}

    def fill(task: FileTask) -> tuple[runner._InFlight, int]:
        room, count = runner._InFlight(2, sizes), 0
        while room.admits(task, count):
            room.add(task)
            count += 1
        return room, count

    assert fill(small)[1] == runner.IN_FLIGHT * 2  # 24 MiB of small logs fit the budget
    assert fill(big)[1] == floor  # over budget from the first, but the floor always goes
    room, count = fill(medium)
    assert count == floor + 1  # the floor, then one more while the bytes fit
    room.remove(medium)  # a finished file frees its bytes
    assert room.admits(medium, count - 1)
    assert room.admits(FileTask("not planned"), count)  # unknown size counts as 0 bytes
    assert not room.admits(FileTask("not planned"), runner.IN_FLIGHT * 2)


def test_evidence_is_made_plain_for_json():
    """Exact dicts, lists and scalars take the short way, anything else the general one: same values."""
    import numpy as np

    from logscope.audit.worker import _jsonable

    class Mapped(dict):  # a dict subclass goes the general way
        pass

    evidence = {
        1: (np.int64(3), 2.5, None, True),
        "set": frozenset({"a"}),
        "nested": Mapped(x=[np.float64(1.5), {"k": np.bool_(True)}]),
        "text": "s",
        "bytes": b"\x00",
    }
    assert _jsonable(evidence) == {
        "1": [3, 2.5, None, True],
        "set": ["a"],
        "nested": {"x": [1.5, {"k": True}]},
        "text": "s",
        "bytes": b"\x00",
    }
    assert type(_jsonable(evidence)["1"][0]) is int
