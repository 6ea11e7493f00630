"""Object-store inputs (`logscope audit s3://bucket/ci/**/*.log`) against a local S3 endpoint: moto's server
on a free loopback port, started by a fixture here; nothing reaches the network. Skipped when the `[s3]`
extra (fsspec, s3fs) or moto is not installed.

The bucket holds real fixtures under nested prefixes, a gzipped one, a binary one, one over the size cap
(the cap is lowered for these tests), a gzip bomb and a hidden one; the same logs audited from a local
folder give the same stored rows.
"""

from __future__ import annotations

import gzip
import logging
import socket
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

import logscope.audit.remote as remote
from logscope.audit import AuditOptions, audit, discover
from logscope.audit.worker import FileTask, audit_file
from logscope.cli import app
from tests.conftest import FIXTURES, RKNN
from tests.test_audit import content, table

fsspec = pytest.importorskip("fsspec")
s3fs = pytest.importorskip("s3fs")
moto_server = pytest.importorskip("moto.server")

BUCKET = "ci-logs"
CAP = 64 * 1024  # the size cap in these tests (in this process: `--jobs 1`)
MOBILENET = (RKNN / "09-build-verbose-mobilenetv1-rv1106-tk2-1.5.2-simulator.log").read_bytes()
SRAM = (RKNN / "29-doc-rknpu2-sram-runtime-log-level3-rk3588.log").read_bytes()
YOLO = (RKNN / "11-eval-perf-memory-yolov5-rk3588-tk2-1.5.0-wrapped.log").read_bytes()
STEDGEAI = (FIXTURES / "mcu" / "08-stedgeai-n6-generate-report-memory-usage.txt").read_bytes()
OBJECTS = {
    "ci/2024-06/rknn/build-0042.log": MOBILENET,
    "ci/2024-06/rknn/perf/eval-0042.log": YOLO,
    "ci/2024-07/deep/nested/runtime-0077.log.gz": gzip.compress(SRAM),
    "ci/2024-07/mcu/report-0077.txt": STEDGEAI,
    "ci/2024-07/models/model.log": bytes(range(256)) * 16,  # a binary object named like a log
    "ci/2024-08/huge.log": MOBILENET * 3,  # 113 KB: over the cap
    "ci/2024-08/bomb.log.gz": gzip.compress(b"I RKNN: padding\n" * 20_000),  # 320 KB once inflated
    "ci/.cache/stale.log": SRAM,  # hidden: not listed by a walk or `**`
    "ci/README.md": b"# CI logs\n",
}


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def s3(tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    """A moto S3 server on loopback with BUCKET filled; the environment points fsspec at it."""
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    port = _free_port()
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    home = tmp_path_factory.mktemp("aws")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("AWS_ENDPOINT_URL", f"http://127.0.0.1:{port}")
        mp.setenv("AWS_ACCESS_KEY_ID", "testing")
        mp.setenv("AWS_SECRET_ACCESS_KEY", "testing")
        mp.setenv("AWS_DEFAULT_REGION", "us-east-1")
        mp.setenv("AWS_CONFIG_FILE", str(home / "config"))  # never the machine's own profiles
        mp.setenv("AWS_SHARED_CREDENTIALS_FILE", str(home / "credentials"))
        mp.delenv("AWS_PROFILE", raising=False)
        s3fs.S3FileSystem.clear_instance_cache()
        fs = s3fs.S3FileSystem()
        fs.mkdir(BUCKET)
        for key, data in OBJECTS.items():
            fs.pipe(f"{BUCKET}/{key}", data)
        try:
            yield fs
        finally:
            s3fs.S3FileSystem.clear_instance_cache()
            server.stop()


@pytest.fixture
def small_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(remote, "MAX_BYTES", CAP)


def url(key: str) -> str:
    return f"s3://{BUCKET}/{key}"


def test_glob_lists_nested_objects_and_skips_hidden_ones(s3):
    found = discover([url("ci/**/*.log*")])
    assert found == sorted(url(k) for k in OBJECTS if k.split("/")[-1].count(".log") and ".cache" not in k)
    # A prefix is walked like a folder: the default patterns take *.txt and *.gz, never README.md.
    walked = discover([url("ci/2024-07")])
    assert walked == [
        url("ci/2024-07/deep/nested/runtime-0077.log.gz"),
        url("ci/2024-07/mcu/report-0077.txt"),
        url("ci/2024-07/models/model.log"),
    ]
    assert discover([url("ci/2024-06/rknn/build-0042.log")]) == [url("ci/2024-06/rknn/build-0042.log")]
    assert discover([url("ci/.cache/*.log")]) == [url("ci/.cache/stale.log")]  # named: taken


def test_audit_by_glob_stores_urls_with_the_same_rows_as_local_files(s3, small_cap, tmp_path):
    report = audit([url("ci/**/*")], tmp_path / "s3.duckdb")
    assert report.discovered == 8  # every object but the hidden one
    assert report.statuses == {"ok": 4, "rejected": 3}
    assert report.skipped == 1 and report.unreadable == 0
    failures = {path: (status, error) for path, status, error in report.failures}
    assert failures[url("ci/2024-07/models/model.log")][0] == "rejected"
    assert "looks binary" in failures[url("ci/2024-07/models/model.log")][1]
    assert failures[url("ci/2024-08/huge.log")] == (
        "skipped",
        f"{url('ci/2024-08/huge.log')}: {3 * len(MOBILENET)} bytes is larger than the limit of {CAP}",
    )
    assert "decompression bomb" in failures[url("ci/2024-08/bomb.log.gz")][1]
    assert "README.md" in " ".join(report.paths)  # named by the glob: taken, and rejected as no log
    files = table(tmp_path / "s3.duckdb", "SELECT path, status, compression, size_bytes FROM files")
    by_path = files.set_index("path")
    assert by_path.loc[url("ci/2024-07/deep/nested/runtime-0077.log.gz"), "compression"] == "gzip"
    assert by_path.loc[url("ci/2024-06/rknn/build-0042.log"), "size_bytes"] == len(MOBILENET)
    paths = table(tmp_path / "s3.duckdb", "SELECT path, etag, mtime_ns FROM paths WHERE sha256 IS NOT NULL")
    assert paths["etag"].notna().all() and paths["mtime_ns"].notna().all()

    # The same four logs read from a local folder: the same rows in every table.
    local = tmp_path / "local"
    for key in ("ci/2024-06/rknn/build-0042.log", "ci/2024-06/rknn/perf/eval-0042.log",
                "ci/2024-07/deep/nested/runtime-0077.log.gz", "ci/2024-07/mcu/report-0077.txt"):  # fmt: skip
        (local / key).parent.mkdir(parents=True, exist_ok=True)
        (local / key).write_bytes(OBJECTS[key])
    audit([str(local)], tmp_path / "local.duckdb")
    a, b = content(tmp_path / "s3.duckdb"), content(tmp_path / "local.duckdb")
    for name in a:
        if name == "files":
            continue
        pd.testing.assert_frame_equal(a[name], b[name], obj=name)
    ok = a["files"][a["files"]["status"] == "ok"]
    same = ["sha256", "kind", "encoding", "compression", "content_sha256", "lines", "builds", "findings",
            "log_time", "log_time_line", "worst_severity"]  # fmt: skip
    pd.testing.assert_frame_equal(ok[same].reset_index(drop=True), b["files"][same], check_dtype=False)


def test_resume_skips_unchanged_objects_and_reads_new_and_rewritten_ones(s3, tmp_path):
    bucket = "resume"
    s3.mkdir(bucket)
    s3.pipe(f"{bucket}/ci/a/build-1.log", MOBILENET)
    s3.pipe(f"{bucket}/ci/b/eval-1.log", YOLO)
    db = tmp_path / "resume.duckdb"
    glob = f"s3://{bucket}/ci/**/*.log"
    first = audit([glob], db)
    assert (first.audited, first.unchanged) == (2, 0)
    again = audit([glob], db)
    assert (again.audited, again.unchanged, again.to_audit) == (0, 2, 0)
    s3.pipe(f"{bucket}/ci/c/runtime-2.log", SRAM)  # a new object
    added = audit([glob], db)
    assert (added.audited, added.unchanged) == (1, 2)
    s3.pipe(f"{bucket}/ci/a/build-1.log", SRAM + b"\n")  # rewritten: new size, ETag and mtime
    rewritten = audit([glob], db)
    assert (rewritten.audited, rewritten.unchanged, rewritten.removed) == (1, 2, 1)
    stored = table(db, "SELECT path, sha256 FROM paths ORDER BY path")
    assert stored["path"].tolist() == [
        f"s3://{bucket}/ci/a/build-1.log",
        f"s3://{bucket}/ci/b/eval-1.log",
        f"s3://{bucket}/ci/c/runtime-2.log",
    ]
    assert table(db, "SELECT count(*) AS n FROM files")["n"][0] == 3  # the overwritten content is gone


def test_dask_workers_read_the_urls_themselves(s3, tmp_path, monkeypatch):
    """On a LocalCluster (threads, for speed) every object is opened inside a dask task: the scheduler
    ships the URL, never the bytes."""
    distributed = pytest.importorskip("distributed")
    opened: list[tuple[str, str]] = []
    real = remote.ObjectReader

    def on_worker(address: str) -> remote.ObjectReader:
        opened.append((address, distributed.get_worker().address))  # ValueError outside a dask task
        return real(address)

    monkeypatch.setattr("logscope.audit.worker.ObjectReader", on_worker)
    glob = url("ci/2024-0[67]/**/*.log*")
    with distributed.LocalCluster(
        n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None
    ) as cluster:
        options = AuditOptions(engine="dask", jobs=1, scheduler=cluster.scheduler_address)
        report = audit([glob], tmp_path / "dask.duckdb", options)
        workers = set(cluster.scheduler_info["workers"])
    assert report.statuses == {"ok": 3, "rejected": 1}
    assert sorted(u for u, _ in opened) == discover([glob])
    assert {w for _, w in opened} <= workers and len(workers) == 1
    assert table(tmp_path / "dask.duckdb", "SELECT count(*) AS n FROM layers")["n"][0] > 0


def test_worker_refuses_an_object_over_the_cap_before_reading_it(s3, small_cap):
    result = audit_file(FileTask(url("ci/2024-08/huge.log")))
    assert result.status == "rejected" and result.sha256 == ""
    assert result.error is not None and "larger than the limit of 65536" in result.error


def test_an_object_gone_after_the_listing_is_unreadable_not_fatal(s3):
    result = audit_file(FileTask(url("ci/2024-06/deleted-since.log")))
    assert (result.status, result.sha256) == ("rejected", "")
    assert result.error == (
        f"{url('ci/2024-06/deleted-since.log')}: no such bucket, prefix or object "
        f"({BUCKET}/ci/2024-06/deleted-since.log)"
    )


def test_ci_formats_read_the_findings_of_urls_back(s3, tmp_path):
    db = tmp_path / "ci.duckdb"
    target = url("ci/2024-06/rknn/build-0042.log")
    result = CliRunner().invoke(app, ["audit", target, "--db", str(db), "--format", "github"])
    assert result.exit_code == 0, result.output
    stored = table(db, "SELECT count(*) AS n FROM findings")["n"][0]
    assert stored > 0 and result.output.count(f"file={target.replace(':', '%3A')},") == stored


def test_memory_urls_come_for_free(tmp_path):
    mem = fsspec.filesystem("memory")
    mem.pipe("/logscope-test/ci/build.log", MOBILENET)
    mem.pipe("/logscope-test/ci/sub/report.txt", STEDGEAI)
    try:
        report = audit(["memory://logscope-test/ci"], tmp_path / "mem.duckdb")
        assert report.statuses == {"ok": 2}
        assert sorted(report.paths) == ["memory:///logscope-test/ci/build.log",
                                        "memory:///logscope-test/ci/sub/report.txt"]  # fmt: skip
    finally:
        mem.rm("/logscope-test", recursive=True)


def test_file_urls_are_local_paths(tmp_path):
    log = tmp_path / "build.log"
    log.write_bytes(MOBILENET)
    assert discover([log.as_uri()]) == [str(log)]


@pytest.mark.parametrize(
    ("target", "expected"),
    [
        ("s3://no-such-bucket/ci/*.log", "no such bucket"),
        (f"s3://{BUCKET}/ci/*.nothing", "matched no object"),
        (f"s3://{BUCKET}/ci/nothing/*.log", "no such bucket, prefix or object"),
        (f"s3://{BUCKET}/ci/missing.log", "no such bucket, prefix or object"),
        ("s3x://bucket/a.log", "not a URL logscope can read"),
        ("s3://[bucket/a.log", "not a URL logscope can read"),
        ("ftp://user:hunter2@example.invalid/a.log", "a URL with a password is refused"),
    ],
)
def test_cli_errors_are_one_line_with_exit_2(s3, tmp_path, target, expected):
    result = CliRunner().invoke(app, ["audit", target, "--db", str(tmp_path / "x.duckdb")])
    assert result.exit_code == 2, result.output
    text = result.output.strip()
    assert expected in text and len(text.splitlines()) == 1 and "Traceback" not in text
    assert "hunter2" not in text and "testing" not in text


def test_missing_s3fs_names_the_extra(s3, tmp_path, monkeypatch):
    import importlib
    import sys

    registry = importlib.import_module("fsspec.registry")
    monkeypatch.delitem(registry._registry, "s3", raising=False)
    monkeypatch.setitem(sys.modules, "s3fs", None)
    result = CliRunner().invoke(app, ["audit", url("ci/*.log"), "--db", str(tmp_path / "x.duckdb")])
    assert result.exit_code == 2
    assert "pip install 'logscope[s3]'" in result.output and len(result.output.strip().splitlines()) == 1


def test_missing_fsspec_names_the_extra(tmp_path, monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "fsspec", None)
    result = CliRunner().invoke(app, ["audit", "s3://bucket/ci/*.log", "--db", str(tmp_path / "x.duckdb")])
    assert result.exit_code == 2
    assert "needs fsspec: pip install 'logscope[s3]'" in result.output


def test_no_credentials_is_one_line(s3, tmp_path, monkeypatch):
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        monkeypatch.delenv(name)
    s3fs.S3FileSystem.clear_instance_cache()
    try:
        result = CliRunner().invoke(app, ["audit", url("ci/**/*.log"), "--db", str(tmp_path / "x.duckdb")])
    finally:
        s3fs.S3FileSystem.clear_instance_cache()
    assert result.exit_code == 2, result.output
    assert "no credentials" in result.output and len(result.output.strip().splitlines()) == 1


def test_cli_audit_of_a_bucket_prints_the_summary(s3, small_cap, tmp_path):
    db = tmp_path / "cli.duckdb"
    result = CliRunner().invoke(app, ["audit", url("ci/2024-06"), "--db", str(db), "--format", "json"])
    assert result.exit_code == 0, result.output
    assert '"audited": 2' in result.output
    assert sorted(table(db, "SELECT path FROM files")["path"]) == [
        url("ci/2024-06/rknn/build-0042.log"),
        url("ci/2024-06/rknn/perf/eval-0042.log"),
    ]


def test_paths_are_urls_not_local_names():
    assert remote.is_url("s3://b/k") and remote.is_url("gs://b/k") and not remote.is_url("file:///x")
    assert not remote.is_url("C:\\logs\\a.log") and not remote.is_url("logs/a:b.log")
    assert remote.file_url_path("file:///srv/ci/a%20b.log") == "/srv/ci/a b.log"
    assert Path(remote.file_url_path("file://localhost/srv/x.log") or "") == Path("/srv/x.log")


def test_object_identity_is_size_second_and_etag():
    import datetime as dt

    listed = remote._identity(
        {"size": 7, "ETag": '"abc"', "LastModified": dt.datetime(2024, 7, 1, 12, 0, 5, 123000, dt.UTC)}
    )
    headed = remote._identity({"size": 7, "ETag": '"abc"', "LastModified": dt.datetime(2024, 7, 1, 12, 0, 5)})
    assert listed == headed and listed.mtime_ns == 1_719_835_205 * 10**9
    assert remote._identity({"size": 7, "etag": "x", "updated": "2024-07-01T12:00:05Z"}) == remote.ObjectInfo(
        7, dt.datetime(2024, 7, 1, 12, 0, 5), "x"
    )


def test_store_client_errors_are_named():
    assert remote._reason(PermissionError("Access Denied")) == "access denied (Access Denied)"
    assert remote._reason(FileNotFoundError("bkt/a.log")) == "no such bucket, prefix or object (bkt/a.log)"
