"""The audit's parallel path: what a worker sends back, how it hashes, the order tasks are dispatched in,
and a pool audit storing exactly what an in-process audit stores."""

from __future__ import annotations

import gzip
import hashlib
import json
import pickle
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

import logscope
from logscope import model
from logscope.audit import AuditOptions, FileTask, audit, audit_file, runner, worker
from logscope.audit.store import FRAME_TABLES, table_columns
from logscope.pool_start import pool_context, start_pool_server
from logscope.rules import Finding, analyze_log, resolve_config
from tests.conftest import FIXTURES, MOBILENET
from tests.test_audit import content

MCU = sorted((FIXTURES / "mcu").rglob("*.txt"))[:6]


def test_a_result_pickles_its_tables_as_ipc_and_comes_back_equal() -> None:
    result = audit_file(FileTask(str(MOBILENET)))
    assert result.status == "ok" and result.tables
    state = result.__getstate__()
    assert all(isinstance(data, pa.Buffer) for data in state["tables"].values())
    back = pickle.loads(pickle.dumps(result))
    assert back.row == result.row and back.sha256 == result.sha256 and back.path == result.path
    assert back.tables.keys() == result.tables.keys()
    for name, table in result.tables.items():
        assert back.tables[name].schema.equals(table.schema, check_metadata=True), name
        assert back.tables[name].equals(table), name


def test_a_result_pickled_with_tables_as_they_are_still_loads() -> None:
    result = audit_file(FileTask(str(MOBILENET)))
    state = dict(result.__dict__)  # what a logscope without the IPC state sent
    back = worker.FileResult.__new__(worker.FileResult)
    back.__setstate__(state)
    assert all(back.tables[name].equals(t) for name, t in result.tables.items())


def test_a_result_without_tables_round_trips() -> None:
    result = worker.FileResult("x.log", "", "rejected", "x.log: empty", {}, {}, 0, 0)
    back = pickle.loads(pickle.dumps(result))
    assert back == result


def test_the_parse_hash_is_the_file_hash(tmp_path: Path) -> None:
    plain = tmp_path / "plain.log"
    shutil.copy(MOBILENET, plain)
    packed = tmp_path / "packed.log.gz"
    packed.write_bytes(gzip.compress(MOBILENET.read_bytes()))
    for path in (plain, packed):
        result = audit_file(FileTask(str(path)))
        expected = hashlib.sha256(path.read_bytes()).hexdigest()
        assert result.status == "ok"
        assert result.sha256 == expected == result.row["sha256"] == worker.hash_file(str(path))
    # A file the parse refuses is hashed all the same.
    binary = tmp_path / "binary.log"
    binary.write_bytes(b"\x00\x01\x02\xff" * 100)
    refused = audit_file(FileTask(str(binary)))
    assert refused.status == "rejected"
    assert refused.sha256 == hashlib.sha256(binary.read_bytes()).hexdigest()


@pytest.mark.parametrize("path", [MOBILENET, *MCU], ids=lambda p: Path(p).name)
def test_column_values_give_what_the_public_api_gives(path: Path, monkeypatch) -> None:
    log = analyze_log(logscope.parse(path), resolve_config(None))
    columns = table_columns()
    for name in FRAME_TABLES:
        frame = log.frames.get(name)
        if frame is None or len(frame) == 0:
            continue
        fast = worker.frame_to_arrow(frame, columns[name])
        with monkeypatch.context() as m:  # a pandas without the block manager's `iget_values`
            m.delattr(type(frame._mgr), "iget_values")
            assert getattr(frame._mgr, "iget_values", None) is None
            public = worker.frame_to_arrow(frame, columns[name])
        assert fast.schema.equals(public.schema, check_metadata=True)
        assert fast.equals(public), name


def test_tabulating_a_log_makes_none_of_its_empty_frames() -> None:
    """The stored tables come from the frames with rows; an RKNN log's MCU frames (declared empty by the
    parse) are neither made nor stored, and the file row reads its build count without them."""
    log = analyze_log(logscope.parse(MOBILENET), resolve_config(None))

    def pending() -> set[str]:
        return {name for name in log.frames if dict.__getitem__(log.frames, name) is model._PENDING}

    before = pending()
    assert {"mcu_runs", "mcu_memory"} <= before
    tables = worker.log_tables(log)
    assert worker._log_info(log)["builds"] == 1
    assert pending() == before
    assert set(tables) == {name for name in FRAME_TABLES if name in log.frames.filled()} | {"findings"}


@pytest.mark.parametrize("path", [MOBILENET, *sorted((FIXTURES / "rknn").glob("*.log"))[:12], *MCU[:2]],
                         ids=lambda p: Path(p).name)  # fmt: skip
def test_findings_rows_are_the_findings_json_form(path: Path) -> None:
    """Each `findings` row holds what `Finding.to_dict` gives, line lists and evidence as JSON text."""
    findings = analyze_log(logscope.parse(path), resolve_config(None)).findings
    odd = Finding("odd evidence", lines=(3, 4), evidence={1: (2, 3), "set": frozenset({5}), "n": np.int64(7),
                  "nested": {"f": np.float32(0.5), "none": None}, "obj": Path("x")})  # fmt: skip
    rows = []
    for f in [*findings, odd]:
        d = f.to_dict()
        rows.append({key: d[key] for key in ("build_index", "code", "name", "severity", "message", "line",
                     "subject", "hint")} | {"lines": json.dumps(d["lines"]),
                     "evidence": json.dumps(worker._jsonable(d["evidence"]), default=str)})  # fmt: skip
    table = worker.findings_table([*findings, odd], table_columns()["findings"])
    assert table.to_pylist() == [{name: row[name] for name in table.column_names} for row in rows]
    assert json.loads(table.column("evidence")[-1].as_py()) == {
        "1": [2, 3], "set": [5], "n": 7, "nested": {"f": 0.5, "none": None}, "obj": "x"
    }  # fmt: skip


def test_tasks_are_dispatched_largest_first(tmp_path: Path) -> None:
    sizes = {"a.log": 10, "b.log": 300, "c.log": 10, "d.log": 50}
    paths = []
    for name, size in sizes.items():
        path = tmp_path / name
        path.write_text("x" * size)
        paths.append(str(path))
    tasks = [FileTask(p) for p in paths]
    writer = runner._Writer.__new__(runner._Writer)
    writer.sizes = {p: sizes[Path(p).name] for p in paths}
    ordered = [Path(t.path).name for t in writer.largest_first(tasks)]
    assert ordered == ["b.log", "d.log", "a.log", "c.log"]  # equal sizes keep their plan order


def test_a_pool_audit_stores_what_an_in_process_audit_stores(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    for path in [*sorted((FIXTURES / "rknn").glob("*.log"))[:8], MOBILENET, *MCU]:
        shutil.copy(path, logs / path.name)
    shutil.copy(MOBILENET, logs / "copy-of-mobilenet.log")  # one content, two paths
    one = audit([str(logs)], tmp_path / "one.duckdb", AuditOptions(jobs=1))
    two = audit([str(logs)], tmp_path / "two.duckdb", AuditOptions(jobs=2))
    assert one.audited == two.audited and one.known == two.known == 1
    assert one.statuses == two.statuses and one.rows == two.rows and one.findings == two.findings
    a, b = content(tmp_path / "one.duckdb"), content(tmp_path / "two.duckdb")
    for name in a:
        pd.testing.assert_frame_equal(a[name], b[name], check_like=False)


def test_starting_the_pool_server_early_is_harmless_without_a_fork_server(monkeypatch) -> None:
    import multiprocessing

    get_context = multiprocessing.get_context

    def no_forkserver(method: str | None = None):
        if method == "forkserver":
            raise ValueError("no fork server here")
        return get_context(method)

    monkeypatch.setattr(multiprocessing, "get_context", no_forkserver)
    start_pool_server()  # spawn: nothing to start, no error
    assert pool_context().get_start_method() == "spawn"


def test_the_pool_start_imports_nothing_heavy() -> None:
    """The CLI starts the fork server before its own imports: the module that does it must not pull in
    pandas, pyarrow, DuckDB or the rest of logscope."""
    import subprocess
    import sys

    code = (
        "import sys, logscope.pool_start; "
        "heavy = ('pandas', 'pyarrow', 'duckdb', 'numpy', 'logscope.audit'); "
        "print(sorted(m for m in heavy if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_the_pool_server_imports_from_where_the_auditing_process_does(tmp_path: Path) -> None:
    """A module in the folder an audit is started from shadows nothing in the fork server: a
    `pandas.py` there is imported by no process (it was by the server, whose preload then failed), and
    the audit stores its files. The auditing process is started as the console script is: its
    working directory is not on its own import path."""
    import subprocess
    import sys

    if pool_context().get_start_method() != "forkserver":
        pytest.skip("no fork server on this platform")
    marker = tmp_path / "imported.txt"
    (tmp_path / "pandas.py").write_text(
        f"open({str(marker)!r}, 'w').write('imported')\nraise ImportError('a pandas.py in the folder')\n"
    )
    copy = tmp_path / "copy.log"
    copy.write_text(MOBILENET.read_text() + "I copy\n")
    db = tmp_path / "a.duckdb"
    argv = ["logscope", "audit", str(MOBILENET), str(copy), "--db", str(db), "--jobs", "2"]
    code = (
        "import sys\n"
        "sys.path[:] = [p for p in sys.path if p]\n"
        f"sys.argv = {argv!r}\n"
        "from logscope._console import main\n"
        "main()\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert not marker.exists()
    import duckdb

    with duckdb.connect(str(db), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM files WHERE status = 'ok'").fetchone() == (2,)


def test_the_pool_servers_objects_are_frozen_when_it_exits() -> None:
    """The fork server's preload freezes what it loaded when the server's interpreter exits, so the exit
    walks none of it; nothing is frozen before (the workers fork from a server whose collector is as
    Python leaves it)."""
    import subprocess
    import sys

    code = (
        "import atexit, gc\n"
        "import logscope.audit._preload\n"
        "before = gc.get_freeze_count()\n"
        "atexit._run_exitfuncs()\n"
        "print(before, gc.get_freeze_count())\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    before, after = map(int, done.stdout.split())
    assert before == 0
    assert after > 10_000  # pandas, pyarrow, numpy, Lark and logscope's own objects


def test_a_pool_audits_auditing_process_imports_no_pandas_parser_or_rule(tmp_path: Path) -> None:
    """`logscope audit --jobs 2` plans, receives and writes with pyarrow and DuckDB alone: pandas, the
    parsers and the rules are the workers' (imported by their fork server), and the command is ready
    before that server is. The files are stored all the same, findings included."""
    import subprocess
    import sys

    if pool_context().get_start_method() != "forkserver":
        pytest.skip("no fork server on this platform")
    logs = [str(p) for p in [*sorted((FIXTURES / "rknn").glob("*.log"))[:6], MOBILENET]]
    db = tmp_path / "a.duckdb"
    argv = ["logscope", "audit", *logs, "--db", str(db), "--jobs", "2", "--format", "json"]
    heavy = ("pandas", "logscope.parsers", "logscope.rules", "logscope.frames", "logscope.audit.worker")
    code = (
        "import atexit, sys\n"
        f"atexit.register(lambda: print(sorted(m for m in {heavy!r} if m in sys.modules), file=sys.stderr))\n"
        f"sys.argv = {argv!r}\n"
        "from logscope._console import main\n"
        "main()\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode in (0, 1), done.stderr
    assert done.stderr.strip().splitlines()[-1] == "[]"
    report = json.loads(done.stdout)
    assert report["audited"] == len(logs) and sum(report["findings"].values()) > 0


def _store_rows() -> list[dict[str, object]]:
    """Rows of every kind the store writes itself, and the edges of each type."""
    import datetime as dt

    return [
        {
            "file_id": 1,
            "sha256": "ab" * 32,
            "path": "logs/a.log",
            "path_bytes": b"logs/a.log",
            "size_bytes": 0,
            "mtime": dt.datetime(2024, 2, 29, 23, 59, 59, 999999),
            "status": "ok",
            "parse_seconds": 0.25,
            "lines": 2**63 - 1,
            "unparsed_lines": -(2**63),
        },
        {
            "file_id": 2,
            "path": "日本/ünïcode\\xff.log",
            "path_bytes": b"\xff\x00\xfe",
            "mtime": dt.datetime(1901, 1, 1),
            "error": "",
            "parse_seconds": 3,
            "log_time": dt.datetime(1970, 1, 1),
        },
        {
            "file_id": None,
            "sha256": None,
            "path": None,
            "path_bytes": None,
            "mtime": None,
            "parse_seconds": None,
        },
        {},
    ]


@pytest.mark.parametrize("rows", [_store_rows(), _store_rows()[:1], _store_rows()[2:], []])
def test_store_rows_built_from_buffers_equal_pyarrows_conversion(rows: list[dict[str, object]]) -> None:
    from logscope.audit.store import FILES_COLUMNS, PATHS_COLUMNS, arrow_schema, rows_table

    for columns in (FILES_COLUMNS, PATHS_COLUMNS):
        expected = pa.Table.from_pylist(rows, schema=arrow_schema(columns))
        built = rows_table(rows, columns)
        built.validate(full=True)
        assert built.schema.equals(expected.schema) and built.equals(expected)


@pytest.mark.parametrize(
    "column, value",
    [
        ("size_bytes", np.int64(5)),  # numpy scalars, bools, out-of-range or foreign values: the converter
        ("size_bytes", True),
        ("size_bytes", 2**63),
        ("parse_seconds", np.float32(0.5)),
        ("parse_seconds", 2**53 + 1),
        ("path", b"bytes where text goes"),
        ("path", "lone surrogate \udcff"),
        ("path_bytes", "text where bytes go"),
        ("mtime", "2024-01-01"),
        ("mtime", "tz-aware"),
    ],
)
def test_store_rows_of_other_values_take_pyarrows_conversion(column: str, value: object) -> None:
    import datetime as dt

    from logscope.audit.store import FILES_COLUMNS, arrow_schema, rows_table

    if value == "tz-aware":
        value = dt.datetime(2024, 1, 1, 12, tzinfo=dt.timezone(dt.timedelta(hours=8)))
    rows = [{"file_id": 1, "path": "a", "mtime": dt.datetime(2024, 1, 1)}, {column: value}]
    try:
        expected = pa.Table.from_pylist(rows, schema=arrow_schema(FILES_COLUMNS))
    except (pa.ArrowException, OverflowError, UnicodeEncodeError, TypeError, ValueError) as exc:
        with pytest.raises(type(exc)):
            rows_table(rows, FILES_COLUMNS)
        return
    assert rows_table(rows, FILES_COLUMNS).equals(expected)


def test_file_ids_repeat_for_each_files_rows() -> None:
    from logscope.audit.store import _repeated_ids

    assert _repeated_ids([7, 3, 9], [2, 0, 3]).to_pylist() == [7, 7, 9, 9, 9]
    assert _repeated_ids([], []).to_pylist() == []
