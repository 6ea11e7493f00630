"""Interrupted audits: a killed worker, Ctrl-C and kill -9 of the writer. Nothing committed is lost, the
database is never half-written, and a re-run finishes the job with the same rows as an uninterrupted run.

These run the real CLI (`python -m logscope audit`) in a child process on generated verbose build logs
(benchmarks/generate.py), each large enough (~0.2-0.6 s to audit) that the run is still going when the
test strikes.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest

from logscope.audit import audit
from tests.conftest import ROOT

N_FILES = 24


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, int]]:
    """N_FILES single-build logs; returns the folder and the layer rows each file holds."""
    sys.path.insert(0, str(ROOT))
    from benchmarks.generate import generate_log

    folder = tmp_path_factory.mktemp("generated")
    layers = {}
    for seed in range(N_FILES):
        path = folder / f"build-{seed:02d}.log"
        stats = generate_log(path, builds=1, seed=100 + seed, noise_ratio=0.2)
        layers[str(path)] = int(stats["layer"])
    return folder, layers


def start_audit(folder: Path, db: Path, jobs: int) -> subprocess.Popen[str]:
    cmd = [sys.executable, "-m", "logscope", "audit", str(folder), "--db", str(db), "-j", str(jobs), "-v"]
    return subprocess.Popen(
        [*cmd, "--commit-every", "2"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        # A test run started in the background by a shell without job control inherits an ignored SIGINT,
        # and Python then installs no handler: the child gets the default, as from a terminal.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )


def read_until(proc: subprocess.Popen[str], needle: str, timeout: float = 120) -> list[str]:
    """Lines of the child's output up to and including the first one containing `needle`."""
    assert proc.stdout is not None
    lines: list[str] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        lines.append(line)
        if needle in line:
            return lines
    raise AssertionError(f"{needle!r} not seen; output:\n{''.join(lines)}")


def children(pid: int) -> list[int]:
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
            out.append(int(entry))
    return out


def workers(pid: int) -> list[int]:
    """The pool's worker processes: forked by multiprocessing's fork server (a child of `pid`), or
    spawned by `pid` itself."""
    found = []
    for child in children(pid):
        cmdline = _cmdline(child)
        if b"forkserver" in cmdline:
            found += children(child)
        elif b"spawn_main" in cmdline:
            found.append(child)
    return found


def descendants(pid: int) -> list[int]:
    out = []
    for child in children(pid):
        out += [child, *descendants(child)]
    return out


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def kill_all(pids: list[int]) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def check_store(db: Path, layers: dict[str, int], complete: bool) -> int:
    """Every stored file is whole (its builds, layers and tensors are all there); returns how many."""
    con = duckdb.connect(str(db))  # read-write: replays the WAL a killed writer left
    try:
        files = con.execute("SELECT file_id, path, status FROM files").fetchall()
        assert len({p for _, p, _ in files}) == len(files)
        for file_id, path, status in files:
            assert status == "ok", path
            n_layers = con.execute("SELECT count(*) FROM layers WHERE file_id = ?", [file_id]).fetchone()
            n_builds = con.execute("SELECT count(*) FROM builds WHERE file_id = ?", [file_id]).fetchone()
            assert n_layers == (layers[path],) and n_builds == (1,), path
        for table in ("builds", "memory", "layers", "tensors", "messages", "findings"):
            stray = con.execute(
                f"SELECT count(*) FROM {table} WHERE file_id NOT IN (SELECT file_id FROM files)"
            )
            assert stray.fetchone() == (0,), table
        if complete:
            assert sorted(p for _, p, _ in files) == sorted(layers)
        return len(files)
    finally:
        con.close()


def test_killed_worker_is_replaced_and_its_files_audited(generated, tmp_path):
    folder, layers = generated
    db = tmp_path / "a.duckdb"
    proc = start_audit(folder, db, jobs=2)
    try:
        read_until(proc, "to audit: ")
        deadline = time.monotonic() + 60
        while len(workers(proc.pid)) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        pool = workers(proc.pid)
        assert pool, "no worker process appeared"
        # Files are submitted before the workers start: killing one now breaks the pool with files in flight.
        assert proc.poll() is None, "the audit ended before the worker could be killed"
        os.kill(pool[0], signal.SIGKILL)
        out, _ = proc.communicate(timeout=300)
    finally:
        kill_all([proc.pid, *descendants(proc.pid)])
    assert proc.returncode == 0, out
    assert "a worker process died" in out and "worker restarts" in out, out
    assert check_store(db, layers, complete=True) == N_FILES


@pytest.mark.parametrize("how", ["sigint", "sigkill"])
def test_interrupted_run_keeps_commits_and_resumes(generated, tmp_path, how):
    folder, layers = generated
    db = tmp_path / "a.duckdb"
    proc = start_audit(folder, db, jobs=2)
    pool: list[int] = []
    try:
        read_until(proc, "committed ")
        assert proc.poll() is None, "the audit ended before it could be interrupted"
        pool = descendants(proc.pid)  # the fork server, its workers, multiprocessing's resource tracker
        os.kill(proc.pid, signal.SIGINT if how == "sigint" else signal.SIGKILL)
        out, _ = proc.communicate(timeout=120)  # the workers exit once their parent is gone
    finally:
        kill_all([proc.pid, *pool])
    if how == "sigint":
        assert proc.returncode == 130, out
        assert "interrupted" in out
    else:
        assert proc.returncode == -signal.SIGKILL
        deadline = time.monotonic() + 10
        while any(Path(f"/proc/{pid}").exists() for pid in pool) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not [pid for pid in pool if _cmdline(pid)], "orphaned workers"
    done = check_store(db, layers, complete=False)
    assert 2 <= done < N_FILES
    report = audit([str(folder)], db)  # the re-run picks up where the interrupted one stopped
    assert report.unchanged == done and report.audited == N_FILES - done
    assert check_store(db, layers, complete=True) == N_FILES
