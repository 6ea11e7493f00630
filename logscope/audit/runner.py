"""Runs an audit: plan what needs reading, read it on an engine, write results through one writer.

Plan (this process): every path is `stat`ed; a path whose size and mtime match what the store recorded is
skipped without being read; any other is hashed (SHA-256 of its bytes), and content the store already
holds is not parsed again (a copy, a moved or touched file): only its path is recorded.

Engines run `worker.audit_file` on each remaining file: in this process (`jobs=1`), in a local process
pool (`jobs>1`), or on dask.distributed (`engine="dask"`: a LocalCluster on loopback, or the scheduler
given). Workers never touch the database; this process is its only writer and commits results in
batches, each one transaction (a file's rows and its `files` row go in together). Ctrl-C commits the
results already received and stops; a killed run loses the uncommitted batch only, and re-running
audits whatever is missing.

A worker process that dies (killed, out of memory) breaks the pool: the files it held are re-run one
at a time in a fresh pool, and a file that kills a worker on its own is recorded as `error`.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import os
import signal
import stat
import threading
import time
from collections import Counter, deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

import pyarrow as pa

from logscope.errors import ConfigError, LogscopeError
from logscope.io import display_path, file_kind, open_regular
from logscope.pool_start import pool_context, start_pool_server

from . import remote
from .discover import DEFAULT_PATTERNS, discover
from .store import KnownFile, KnownPath, Store, first_line, is_interrupt, logscope_version, store_errors
from .tasks import FileResult, FileTask, RuleOverrides, audit_task, hash_file

if TYPE_CHECKING:
    from logscope.rules import Config

ENGINES = ("local", "dask")
MAX_JOBS = 1024  # worker processes; more is a typo, not a machine


@dataclass(frozen=True)
class AuditOptions:
    jobs: int = 1
    engine: str = "local"
    scheduler: str | None = None  # dask scheduler address; None: a LocalCluster of `jobs` workers
    config: Config | None = None  # None: each log's own logscope.toml / [tool.logscope], found upward
    overrides: RuleOverrides = field(default_factory=RuleOverrides)
    force: bool = False  # re-audit everything, even content already in the store
    retry_failed: bool = False  # re-audit content recorded as rejected or error
    rehash: bool = False  # hash every file, even when size and mtime are unchanged
    patterns: tuple[str, ...] = DEFAULT_PATTERNS
    batch_files: int = 64  # commit after this many files ...
    batch_seconds: float = 2.0  # ... or this many seconds, whichever comes first


@dataclass
class AuditReport:
    """What a run did. `failures` lists (path, status, error) for every file not audited `ok`."""

    db: str
    engine: str
    jobs: int
    discovered: int = 0
    unchanged: int = 0  # skipped: same path, size and mtime as recorded
    known: int = 0  # skipped: content already audited (a copy, a moved or touched file)
    to_audit: int = 0
    audited: int = 0  # files parsed in this run and committed
    statuses: Counter[str] = field(default_factory=Counter)
    unreadable: int = 0  # paths that could not be read (missing, permission, a link loop)
    skipped: int = 0  # not read on purpose: not a regular file (FIFO, device, socket) or over the size limit
    stored_alone: int = 0  # files of a batch the store refused, then written one by one
    builds: int = 0
    findings: Counter[str] = field(default_factory=Counter)  # by severity
    rows: Counter[str] = field(default_factory=Counter)  # by table
    removed: int = 0  # stored contents dropped because their path now holds something else
    worker_restarts: int = 0  # local pools rebuilt after a worker process died
    seconds: float = 0.0
    audit_seconds: float = 0.0  # from the first task submitted to the last commit
    interrupted: bool = False
    failures: list[tuple[str, str, str]] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)  # every file discovered, in order (not in to_dict)

    @property
    def files_per_second(self) -> float:
        return self.audited / self.audit_seconds if self.audit_seconds > 0 else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "db": self.db,
            "engine": self.engine,
            "jobs": self.jobs,
            "discovered": self.discovered,
            "unchanged": self.unchanged,
            "known": self.known,
            "to_audit": self.to_audit,
            "audited": self.audited,
            "statuses": dict(self.statuses),
            "unreadable": self.unreadable,
            "skipped": self.skipped,
            "stored_alone": self.stored_alone,
            "builds": self.builds,
            "findings": dict(self.findings),
            "rows": dict(self.rows),
            "removed": self.removed,
            "worker_restarts": self.worker_restarts,
            "seconds": round(self.seconds, 3),
            "audit_seconds": round(self.audit_seconds, 3),
            "files_per_second": round(self.files_per_second, 2),
            "interrupted": self.interrupted,
            "failures": [list(f) for f in self.failures],
        }


class AuditProgress(Protocol):
    """What the runner tells a progress display (the CLI's rich bar, a test's list)."""

    def start(self, total: int) -> None: ...
    def advance(self, result: FileResult) -> None: ...
    def committed(self, files: int, total: int) -> None: ...
    def notice(self, text: str) -> None: ...
    def close(self) -> None: ...


class AuditInterrupted(Exception):
    """Ctrl-C: what was received is committed; `report` says how far the run got."""

    def __init__(self, report: AuditReport) -> None:
        super().__init__("audit interrupted")
        self.report = report


def audit(
    paths: Sequence[str],
    db: str | os.PathLike[str],
    options: AuditOptions | None = None,
    progress: AuditProgress | None = None,
) -> AuditReport:
    """Audit every log under `paths` into the DuckDB database `db` (created if missing).

    Raises `InputError` for a path that names nothing or a database that cannot be opened (another
    writer holds it), `ConfigError` for bad options, and `AuditInterrupted` on Ctrl-C (after
    committing what was received).
    """
    options = options or AuditOptions()
    if options.engine not in ENGINES:
        raise ConfigError(f"unknown engine {options.engine!r} (use {' or '.join(ENGINES)})")
    if not 1 <= options.jobs <= MAX_JOBS:
        raise ConfigError(f"--jobs: {options.jobs} is out of range (accepted: 1 to {MAX_JOBS})")
    if not 1 <= options.batch_files <= MAX_JOBS * 1024:
        raise ConfigError(
            f"--commit-every: {options.batch_files} is out of range (accepted: 1 to {MAX_JOBS * 1024})"
        )
    t0 = time.perf_counter()
    files = discover(paths, options.patterns)
    report = AuditReport(str(db), options.engine, options.jobs, discovered=len(files), paths=files)
    if files and options.engine == "local" and options.jobs > 1:
        start_pool_server()  # (if the CLI has not): it imports while this process opens the store and plans
    with Store(db) as store:
        writer = _Writer(store, report, options, progress)
        tasks = writer.plan(files)
        if options.engine == "dask" or options.jobs > 1:
            tasks = writer.largest_first(tasks)
        report.to_audit = len(tasks)
        if progress is not None:
            progress.start(len(tasks))
        t_audit = time.perf_counter()

        def broken(retried: int) -> None:
            report.worker_restarts += 1
            if progress is not None:
                progress.notice(
                    f"a worker process died: {retried} file(s) re-run one at a time on a new pool"
                )

        results = _engine(tasks, options, broken, writer.sizes) if tasks else iter(())
        writer.expect(len(tasks), _drain_points(options))
        try:
            with _ctrl_c_remembered() as pressed:
                for result in results:
                    writer.add(result)
                    if pressed():
                        raise KeyboardInterrupt  # one DuckDB swallowed: stop all the same
                writer.finish()
        except BaseException as exc:
            if not is_interrupt(exc):
                raise
            report.interrupted = True
            _close(results)
            writer.flush()
        finally:
            _close(results)
            report.audit_seconds = time.perf_counter() - t_audit
            report.seconds = time.perf_counter() - t0
            if progress is not None:
                progress.close()
    if report.interrupted:
        raise AuditInterrupted(report)
    return report


def _close(results: Iterator[FileResult]) -> None:
    close = getattr(results, "close", None)
    if close is not None:
        close()


# ---------------------------------------------------------------------------------------- the writer


def _path_row(
    path: str,
    sha256: str | None,
    size: int | None,
    mtime_ns: int | None,
    error: str | None = None,
    etag: str | None = None,
) -> dict[str, Any]:
    return {
        "etag": etag,
        "path_bytes": os.fsencode(path),
        "path": display_path(path),
        "sha256": sha256,
        "size_bytes": size,
        "mtime_ns": mtime_ns,
        "seen_at": dt.datetime.now(dt.UTC).replace(tzinfo=None),
        "error": error,
    }


class _Writer:
    """The single writer: plans against the store, then commits results in batches."""

    def __init__(
        self, store: Store, report: AuditReport, options: AuditOptions, progress: AuditProgress | None
    ) -> None:
        self.store = store
        self.report = report
        self.options = options
        self.progress = progress
        self.paths: dict[str, KnownPath] = store.known_paths()
        self.contents: dict[str, KnownFile] = store.known_files()
        self.next_id = store.next_file_id()
        self.batch: list[tuple[dict[str, Any], dict[str, pa.Table]]] = []
        self.batch_paths: list[dict[str, Any]] = []
        self.batch_replace: dict[str, int] = {}  # sha256 -> the stored file id its new row replaces
        self.batch_orphans: set[int] = set()
        self.batch_started = 0.0
        self.batch_results: list[FileResult] = []
        self.copies: list[tuple[str, str, os.stat_result]] = []  # paths whose content is being audited
        self.sizes: dict[str, int] = {}  # bytes of each path planned for auditing
        self.url_config: Config | None = None  # the configuration of URL inputs, resolved once
        self.committed = 0
        self.expected = 0  # results still to come
        self.drain_at: tuple[int, ...] = ()  # commit when this many results are still to come

    def expect(self, results: int, drain_at: tuple[int, ...]) -> None:
        """`results` are coming; commit what has come when any of `drain_at` of them are still to
        come (see `_drain_points`)."""
        self.expected, self.drain_at = results, drain_at

    def _redo(self, known: KnownFile | None) -> bool:
        """Whether content the store already holds is audited again."""
        if known is None:
            return True
        return self.options.force or (self.options.retry_failed and known.status != "ok")

    def plan(self, files: Iterable[str]) -> list[FileTask]:
        """The files to audit, in order; records at once the paths that need no parsing (unreadable,
        or content the store holds).

        A file is hashed here only when its content could be one the store holds or another planned
        file's: when content of its size is stored, or another planned file has its size (equal
        content has equal size). Any other file goes to the worker unhashed, which hashes the bytes
        as it parses them; hashing it here too cost 0.45 ms of this process's CPU per CI log, spent
        before the first file could start. It is opened all the same, so what cannot be read is
        refused here as before."""
        tasks: list[FileTask] = []
        pending: set[str] = set()
        opts = self.options
        files = list(files)
        stats: dict[str, os.stat_result | OSError] = {}
        for path in files:
            if not remote.is_url(path):
                try:
                    stats[path] = os.stat(path)
                except OSError as exc:
                    stats[path] = exc
        stored_sizes = self.store.file_sizes()
        shared = Counter(st.st_size for st in stats.values() if isinstance(st, os.stat_result))
        for path in files:
            if remote.is_url(path):
                task = self._plan_object(path)
                if task is not None:
                    tasks.append(task)
                continue
            st = stats[path]
            if isinstance(st, OSError):
                self._unreadable(path, f"{display_path(path)}: cannot read: {st.strerror or st}")
                continue
            if not stat.S_ISREG(st.st_mode):
                self._unreadable(
                    path,
                    f"{display_path(path)}: {file_kind(st.st_mode)}, not a regular file; not read",
                    "skipped",
                )
                continue
            seen = self.paths.get(path)
            if (
                seen is not None
                and seen.sha256 is not None
                and not opts.rehash
                and seen.size_bytes == st.st_size
                and seen.mtime_ns == st.st_mtime_ns
                and not self._redo(self.contents.get(seen.sha256))
            ):
                self.report.unchanged += 1
                continue
            unique = shared[st.st_size] == 1 and stored_sizes is not None and st.st_size not in stored_sizes
            try:
                if unique:  # no content it could be: read by the worker alone (see above)
                    open_regular(path).close()
                    sha256 = None
                else:
                    sha256 = hash_file(path)
            except OSError as exc:
                self._unreadable(path, f"{display_path(path)}: cannot read: {exc.strerror or exc}")
                continue
            except LogscopeError as exc:  # over the size limit, or swapped for a FIFO since the stat
                self._unreadable(path, str(exc), "skipped")
                continue
            if sha256 is None:
                self.sizes[path] = st.st_size
                tasks.append(FileTask(path, None, opts.config, opts.overrides))
                continue
            if sha256 in pending:
                self.copies.append((path, sha256, st))
                continue
            if not self._redo(self.contents.get(sha256)):
                self.report.known += 1
                self._note_path(path, sha256, st.st_size, st.st_mtime_ns)
                continue
            pending.add(sha256)
            self.sizes[path] = st.st_size
            tasks.append(FileTask(path, sha256, opts.config, opts.overrides))
        if self.batch_paths:  # paths of known content: one transaction before any parsing
            self.flush()
        return tasks

    def largest_first(self, tasks: list[FileTask]) -> list[FileTask]:
        """The tasks, largest file first (in plan order among equal sizes): a pool whose last task is
        a big log waits for it with its other workers idle; dispatched first, it runs while the
        small ones fill the other workers. Results come in as they complete whatever the order, so
        only how soon the last one comes changes."""
        sizes = self.sizes
        return sorted(tasks, key=lambda task: -sizes.get(task.path, 0))

    def _plan_object(self, url: str) -> FileTask | None:
        """An object-store URL: skipped when its size, mtime and ETag are those recorded, else a task
        without a hash (the worker reads the object where it runs, and hashes it as it reads)."""
        try:
            info = remote.object_info(url)
        except LogscopeError as exc:
            self._unreadable(url, str(exc))
            return None
        if info.size > remote.MAX_BYTES:
            self._unreadable(url, remote.too_large(url, info.size, remote.MAX_BYTES), "skipped")
            return None
        seen = self.paths.get(url)
        if (
            seen is not None
            and seen.sha256 is not None
            and not self.options.rehash
            and (seen.size_bytes, seen.mtime_ns, seen.etag) == (info.size, info.mtime_ns, info.etag)
            and not self._redo(self.contents.get(seen.sha256))
        ):
            self.report.unchanged += 1
            return None
        self.sizes[url] = info.size
        if self.url_config is None:  # no folder to find a logscope.toml in: the working directory's
            from logscope.rules import resolve_config

            self.url_config = self.options.config or resolve_config(None)
        return FileTask(url, None, self.url_config, self.options.overrides)

    def _unreadable(self, path: str, error: str, status: str = "unreadable") -> None:
        """A path that is not read: a row in `paths` with the reason, and a failure in the report."""
        if status == "skipped":
            self.report.skipped += 1
        else:
            self.report.unreadable += 1
        self.report.failures.append((display_path(path), status, error))
        self.batch_paths.append(_path_row(path, None, None, None, error))

    def _note_path(self, path: str, sha256: str, size: int, mtime_ns: int, etag: str | None = None) -> None:
        """Record where content is; if the path held other content before, that content may be orphaned."""
        before = self.paths.get(path)
        if before is not None and before.sha256 not in (None, sha256):
            old = self.contents.get(before.sha256 or "")
            if old is not None:
                self.batch_orphans.add(old.file_id)
        self.paths[path] = KnownPath(sha256, size, mtime_ns, etag)
        self.batch_paths.append(_path_row(path, sha256, size, mtime_ns, etag=etag))

    def add(self, result: FileResult) -> None:
        if not self.batch_started:
            self.batch_started = time.perf_counter()
        if not result.sha256:  # the worker could not read the file at all
            self._unreadable(result.path, result.error or "cannot read")
        else:
            old = self.contents.get(result.sha256)
            if old is not None and any(row["sha256"] == result.sha256 for row, _ in self.batch):
                pass  # the same content twice in one batch: keep the first
            else:
                if old is not None:
                    self.batch_replace[result.sha256] = old.file_id
                row = dict(result.row, file_id=self.next_id)
                self.contents[result.sha256] = KnownFile(self.next_id, result.status)
                self.next_id += 1
                self.batch.append((row, result.tables))
            self._note_path(result.path, result.sha256, result.size_bytes, result.mtime_ns, result.etag)
        self.batch_results.append(result)
        if self.progress is not None:
            self.progress.advance(result)
        self.expected -= 1
        age = time.perf_counter() - self.batch_started
        if (
            len(self.batch_results) >= self.options.batch_files
            or age >= self.options.batch_seconds
            or self.expected in self.drain_at
        ):
            self.flush()

    def flush(self) -> None:
        if not (self.batch or self.batch_paths or self.batch_orphans):
            return
        try:
            removed = self.store.write_batch(
                self.batch, self.batch_paths, self.batch_replace.values(), self.batch_orphans
            )
        except store_errors() as exc:  # one file's rows the store refuses must not cost the others theirs
            if is_interrupt(exc):
                raise
            removed = self._write_each()
        # Counted only once committed: the report describes what the database holds.
        report = self.report
        report.removed += len(removed)
        for row, tables in self.batch:
            report.audited += 1
            report.statuses[row["status"]] += 1
            report.builds += int(row.get("builds") or 0)
            if row["status"] != "ok":
                report.failures.append((row["path"], row["status"], row.get("error") or ""))
            for name, table in tables.items():
                report.rows[name] += table.num_rows
            if "findings" in tables:
                for severity, n in Counter(tables["findings"].column("severity").to_pylist()).items():
                    report.findings[str(severity)] += n
        self.committed += len(self.batch)
        if self.progress is not None and self.batch:
            self.progress.committed(len(self.batch), self.committed)
        self.batch, self.batch_paths, self.batch_results = [], [], []
        self.batch_replace, self.batch_orphans = {}, set()
        self.batch_started = 0.0

    def _write_each(self) -> list[int]:
        """The batch again, one transaction per file; a file whose rows are still refused is stored as
        `error` with the reason and no rows, so every file keeps its `files` row."""
        removed: list[int] = []
        by_sha = {row["sha256"]: (row, tables) for row, tables in self.batch}
        path_rows: dict[str, list[dict[str, Any]]] = {}
        others = []
        for prow in self.batch_paths:
            if prow["sha256"] in by_sha:
                path_rows.setdefault(prow["sha256"], []).append(prow)
            else:
                others.append(prow)
        kept = []
        for sha, (row, tables) in by_sha.items():
            replace = [self.batch_replace[sha]] if sha in self.batch_replace else []
            paths = path_rows.get(sha, [])
            try:
                removed += self.store.write_batch([(row, tables)], paths, replace)
            except store_errors() as exc:
                if is_interrupt(exc):
                    raise
                reason = f"cannot store this file's rows: {type(exc).__name__}: {first_line(exc)}"
                row = {
                    k: row.get(k) for k in ("file_id", "sha256", "path", "path_bytes", "size_bytes", "mtime")
                }
                row |= {"status": "error", "error": reason, "logscope_version": logscope_version()}
                tables = {}
                removed += self.store.write_batch([(row, tables)], paths, replace)
                self.contents[sha] = KnownFile(row["file_id"], "error")
            self.report.stored_alone += 1
            kept.append((row, tables))
        self.batch = kept
        removed += self.store.write_batch([], others, (), self.batch_orphans)
        return removed

    def finish(self) -> None:
        for path, sha256, st in self.copies:  # copies of content audited in this run
            if sha256 in self.contents:
                self.report.known += 1
                self._note_path(path, sha256, st.st_size, st.st_mtime_ns)
        self.copies = []
        self.flush()


# ---------------------------------------------------------------------------------------- engines


def _engine(
    tasks: list[FileTask],
    options: AuditOptions,
    on_broken: Callable[[int], None] | None = None,
    sizes: Mapping[str, int] | None = None,
) -> Iterator[FileResult]:
    if options.engine == "dask":
        return run_dask(tasks, options.jobs, options.scheduler)
    if options.jobs == 1:
        return (audit_task(task) for task in tasks)
    return run_pool(tasks, options.jobs, on_broken=on_broken, sizes=sizes)


def _drain_points(options: AuditOptions) -> tuple[int, ...]:
    """How many results may still be to come when the received ones are committed whatever the batch's
    size. When every task has gone to a worker (`IN_FLIGHT` per worker still to come), and again when
    each worker runs its last file: only those few are left to commit once the last one is in. A batch
    committed after the workers stopped leaves the other cores idle: up to 64 CI logs, 0.2 s; the 24
    files in flight of a 2-job audit, 0.1 s. Nothing in this process, where nothing runs alongside a
    commit."""
    if options.engine == "dask":
        return (DASK_IN_FLIGHT * options.jobs,)  # (as `run_dask` submits: for the local cluster it starts)
    return (IN_FLIGHT * options.jobs, options.jobs) if options.jobs > 1 else ()


def _died(task: FileTask, reason: str) -> FileResult:
    sha256 = task.sha256
    if sha256 is None and not remote.is_url(task.path):  # planned unhashed: its content keeps its row
        try:
            sha256 = hash_file(task.path)
        except (OSError, LogscopeError):
            sha256 = None
    row: dict[str, Any] = {
        "sha256": sha256,
        "path": task.path,
        "status": "error",
        "error": reason,
        "parsed_at": dt.datetime.now(dt.UTC).replace(tzinfo=None),
    }
    try:
        st = os.stat(task.path)
        size, mtime_ns = st.st_size, st.st_mtime_ns
        row |= {
            "size_bytes": size,
            "mtime": dt.datetime.fromtimestamp(st.st_mtime, dt.UTC).replace(tzinfo=None),
        }
    except OSError:
        size, mtime_ns = 0, 0
    return FileResult(task.path, sha256 or "", "error", reason, row, {}, size, mtime_ns)


def _pool(jobs: int) -> ProcessPoolExecutor:
    # Workers fork from a fork server that imported logscope and compiled its grammars once (_preload),
    # or are spawned where there is no fork server (`logscope.pool_start`).
    context = pool_context()
    start_pool_server()  # (a no-op when it runs): started here, it imports from where this process does
    return ProcessPoolExecutor(jobs, mp_context=context, initializer=_init_worker, initargs=(os.getpid(),))


@contextlib.contextmanager
def _ctrl_c_remembered() -> Iterator[Callable[[], bool]]:
    """Ctrl-C raises KeyboardInterrupt as usual, and is also remembered: when it arrives while DuckDB
    runs a statement that then completes, the client may swallow the exception (the audit went on to the
    last file in one test run in hundreds), so the loop asks `pressed()` after each file. Only in the main
    thread, where Python delivers signals, and only when Ctrl-C is not ignored."""
    previous = signal.getsignal(signal.SIGINT)
    if threading.current_thread() is not threading.main_thread() or previous == signal.SIG_IGN:
        yield lambda: False
        return
    seen = [False]

    def handler(signum: int, frame: object) -> None:
        seen[0] = True
        if callable(previous):
            previous(signum, frame)  # type: ignore[arg-type]
        else:
            raise KeyboardInterrupt

    signal.signal(signal.SIGINT, handler)
    try:
        yield lambda: seen[0]
    finally:
        signal.signal(signal.SIGINT, previous)


def _init_worker(parent: int) -> None:
    """Workers leave Ctrl-C to the parent (which commits and shuts the pool down), and exit when the
    auditing process is gone (kill -9): nothing else would tell them, and the fork server they came from
    waits for them."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)

    def watch() -> None:
        while _alive(parent):
            time.sleep(0.5)
        os._exit(1)

    threading.Thread(target=watch, name="logscope-parent-watch", daemon=True).start()


def _alive(pid: int) -> bool:
    """Whether process `pid` still runs (a zombie, killed but not yet reaped, does not)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            return fh.read().rsplit(b")", 1)[1].split()[0] not in (b"Z", b"X")
    except FileNotFoundError:
        return False
    except OSError:  # no /proc: ask the kernel
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True


def run_pool(
    tasks: Sequence[FileTask],
    jobs: int,
    function: Callable[[FileTask], FileResult] = audit_task,
    on_broken: Callable[[int], None] | None = None,
    sizes: Mapping[str, int] | None = None,
) -> Iterator[FileResult]:
    """`function` over `tasks` on a local process pool, results as they complete.

    Files in flight are bounded (`_InFlight`: by count, and by bytes for big logs), so memory is
    bounded and Ctrl-C stops quickly. If a worker dies, the files in flight are retried one at a time on
    a fresh pool; the one that kills its worker alone is returned as an `error` result.
    """
    queue: deque[FileTask] = deque(tasks)
    suspects: deque[FileTask] = deque()
    room = _InFlight(jobs, sizes or {})
    executor = _pool(jobs)
    inflight: dict[Future[FileResult], FileTask] = {}
    isolating = False  # True while one suspect runs alone
    try:
        while queue or suspects or inflight:
            broken = False
            try:
                if suspects:
                    if not inflight:
                        task = suspects[0]
                        inflight[executor.submit(function, task)] = task
                        suspects.popleft()
                        isolating = True
                else:
                    while queue and room.admits(queue[0], len(inflight)):
                        task = queue[0]
                        inflight[executor.submit(function, task)] = task
                        room.add(task)
                        queue.popleft()
            except BrokenProcessPool:
                # A worker died after the last wait: the task stays queued, the pool is rebuilt below.
                broken = True
            done, _ = wait(inflight, return_when=FIRST_COMPLETED) if inflight else (set(), set())
            if broken or any(isinstance(f.exception(), BrokenProcessPool) for f in done):
                wait(inflight)  # a broken pool fails every future in it: collect them all
                for fut, task in inflight.items():
                    exc = fut.exception()
                    if exc is None:
                        yield fut.result()
                    elif not isinstance(exc, BrokenProcessPool):
                        yield _died(task, f"{type(exc).__name__}: {exc}")
                    elif isolating:
                        yield _died(task, _WORKER_DIED)
                    else:
                        suspects.append(task)
                inflight.clear()
                room.clear()
                isolating = False
                executor.shutdown(wait=False, cancel_futures=True)
                executor = _pool(jobs)
                if on_broken is not None:
                    on_broken(len(suspects))
                continue
            for fut in done:
                task = inflight.pop(fut)
                room.remove(task)
                exc = fut.exception()
                yield fut.result() if exc is None else _died(task, f"{type(exc).__name__}: {exc}")
            isolating = False
    finally:
        executor.shutdown(wait=False, cancel_futures=True)


# Files in flight per worker: the one it runs and the next ones queued, enough to keep it busy while this
# process commits a batch. A commit of 64 CI logs takes 0.25-0.4 s of this process and a worker runs a
# CI log in about 30 ms: with 4 per worker, each worker of a 2-job audit of 160 CI logs stood idle for
# 0.4-0.6 s in all (busy 2.7 s of a 3.1 s span); with 12, for 0.14 s.
IN_FLIGHT = 12
# Beyond the first `IN_FLIGHT_ANY` files per worker, more are sent only while the files in flight total
# at most `IN_FLIGHT_BYTES` per worker: twelve 100 MB logs would hold their results in memory at once.
IN_FLIGHT_ANY = 4
IN_FLIGHT_BYTES = 32 << 20


class _InFlight:
    """How many files `run_pool` may have in flight: up to `IN_FLIGHT_ANY` per worker whatever their
    size, up to `IN_FLIGHT` per worker while their bytes (as planned; unknown counts as 0) fit
    `IN_FLIGHT_BYTES` per worker."""

    def __init__(self, jobs: int, sizes: Mapping[str, int]) -> None:
        self.any = IN_FLIGHT_ANY * jobs
        self.most = IN_FLIGHT * jobs
        self.budget = IN_FLIGHT_BYTES * jobs
        self.sizes = sizes
        self.bytes = 0

    def admits(self, task: FileTask, count: int) -> bool:
        if count < self.any:
            return True
        return count < self.most and self.bytes + self.sizes.get(task.path, 0) <= self.budget

    def add(self, task: FileTask) -> None:
        self.bytes += self.sizes.get(task.path, 0)

    def remove(self, task: FileTask) -> None:
        self.bytes -= self.sizes.get(task.path, 0)

    def clear(self) -> None:
        self.bytes = 0


# Tasks submitted to a dask cluster per worker thread at a time.
DASK_IN_FLIGHT = 2

_WORKER_DIED = "a worker process died while auditing this file (killed, or out of memory)"


def run_dask(
    tasks: Sequence[FileTask],
    jobs: int,
    scheduler: str | None = None,
    function: Callable[[FileTask], FileResult] = audit_task,
) -> Iterator[FileResult]:
    """`function` over `tasks` on dask.distributed: the cluster at `scheduler`, or a LocalCluster of
    `jobs` single-threaded worker processes on 127.0.0.1. Paths must be readable by the workers."""
    try:
        import logging

        from distributed import Client, LocalCluster, as_completed
    except ImportError:
        raise ConfigError("--engine dask needs dask.distributed: pip install 'logscope[dask]'") from None
    cluster = None
    try:
        if scheduler:
            client = Client(scheduler, timeout="20s")
        else:
            cluster = LocalCluster(
                n_workers=jobs,
                threads_per_worker=1,
                processes=True,
                host="127.0.0.1",
                dashboard_address=None,
                silence_logs=logging.ERROR,
            )
            client = Client(cluster)
    except OSError as exc:
        raise ConfigError(f"cannot reach the dask scheduler {scheduler or '(local)'}: {exc}") from None
    pending = iter(tasks)
    by_key: dict[Any, FileTask] = {}
    completed = as_completed()

    def submit(task: FileTask) -> None:
        fut = client.submit(function, task, pure=False)
        by_key[fut.key] = task
        completed.add(fut)

    try:
        for task in list(_take(pending, DASK_IN_FLIGHT * max(jobs, len(client.nthreads()) or 1))):
            submit(task)
        for fut in completed:
            task = by_key.pop(fut.key)
            try:
                result = fut.result()
            except Exception as exc:  # KilledWorker after the scheduler's retries, a lost connection
                result = _died(task, f"{type(exc).__name__}: {exc}")
            fut.release()
            nxt = next(pending, None)
            if nxt is not None:
                submit(nxt)
            yield result
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


def _take(it: Iterator[FileTask], n: int) -> Iterator[FileTask]:
    for _ in range(n):
        nxt = next(it, None)
        if nxt is None:
            return
        yield nxt
