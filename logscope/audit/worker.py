"""The per-file function: parse one log, run the rules, return its rows. No database, no printing.

The same `audit_file` runs in-process (`--jobs 1`), in a local process pool and on dask.distributed
workers; only the runner's single writer touches the store. It never raises for a bad file: a file that
is not a log comes back `rejected`, a failure of logscope itself `error`, each with a one-line reason.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import stat
import time
import traceback
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
from pandas.api.types import is_object_dtype

from logscope.api import STDIN, parse_stream
from logscope.collector import collector_paused
from logscope.errors import LogscopeError
from logscope.frames import column_array
from logscope.io import DEFAULT_MAX_BYTES, LogStream, display_path
from logscope.model import Frames, ParsedLog
from logscope.rules import Config, Finding, analyze_log, resolve_config, worst_severity

from .remote import ObjectReader, first_lines, is_url
from .store import FRAME_TABLES, arrow_schema, logscope_version, table_columns
from .tasks import FileResult, FileTask, hash_file

# Lines searched for the time the log was written: the first lines of the first block read.
_TIME_LINES = 400
# A date and time at the start of a line (after an optional `[`): TensorFlow's
# `2023-12-22 15:13:10.185671: W tensorflow/...` in fixture [09], logcat's
# `2022-07-06 15:37:03.100 12848-12876 E/RKNN:` in [34]. Stamps inside a line are not taken:
# `librknnc version: 1.5.2 (c6b7b351a@2023-08-23T15:34:44)` is when the compiler was built, not when it ran.
_LEADING_TIME = re.compile(
    r"^\s*\[?(\d{4})[-/](\d{2})[-/](\d{2})[ T](\d{2}):(\d{2}):(\d{2})(?:[.,](\d{1,6}))?(?!\d)"
)
# A labelled date: ST Edge AI / X-CUBE-AI reports print `Created date       : 2024-10-26 14:42:10`.
_LABELLED_TIME = re.compile(
    r"^\s*(?:created|creation|generated|start(?:ed)?)(?:\s+(?:date|time|on|at))?\s*[:=]\s*"
    r"(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2}):(\d{2})(?:[.,](\d{1,6}))?",
    re.IGNORECASE,
)


_CONFIGS: dict[str, Config] = {}


def audit_file(task: FileTask) -> FileResult:
    """Hash, parse and check one file, or one object-store URL (read here, where the worker runs).
    Never raises for anything the file can cause."""
    path = task.path
    if is_url(path):
        return _audit_object(task)
    try:
        st = os.stat(path)
        # A regular file within the size cap is hashed by the parse itself, which reads every byte
        # anyway (`LogStream.sha256`); anything else is hashed first, so its refusal reads as before.
        sha256 = "" if _hashed_by_parse(path, st) else hash_file(path)
    except OSError as exc:
        return _unread(path, exc)
    except LogscopeError as exc:  # not a regular file any more, or over the size limit
        return FileResult(path, "", "rejected", _one_line(str(exc)), {}, {}, 0, 0)
    mtime = dt.datetime.fromtimestamp(st.st_mtime, dt.UTC).replace(tzinfo=None)
    row = _file_row(path, sha256, st.st_size, mtime)
    stream = LogStream(path)
    status, error, tables = _audit_stream(task, row, stream)
    if not sha256:
        if (
            status == "ok"
            and stream.compression is None
            and stream.sha256
            and stream.size_bytes == st.st_size
        ):
            sha256 = stream.sha256  # the bytes parsed are the file's bytes: their hash is the file's
        else:  # not read to the end (refused, failed), decompressed, or changed while read
            try:
                sha256 = hash_file(path)
            except OSError as exc:
                return _unread(path, exc)
            except LogscopeError as exc:
                return FileResult(path, "", "rejected", _one_line(str(exc)), {}, {}, 0, 0)
        row["sha256"] = sha256
    return FileResult(path, sha256, status, error, row, tables, st.st_size, st.st_mtime_ns)


def _audit_stream(
    task: FileTask, row: dict[str, Any], stream: LogStream
) -> tuple[str, str | None, dict[str, pa.Table]]:
    """`_audit_log` of a file or object read as `stream`. The log's time is searched in the first lines
    the parse reads, as they pass: opening a file a second time to read them again cost 0.5 ms per CI log,
    and an object would be downloaded twice."""
    blocks, head = first_lines(iter(stream), _TIME_LINES)
    return _audit_log(
        task,
        row,
        lambda: parse_stream(stream, blocks),
        lambda: log_time_in(*head[0]) if head else (None, None),
    )


def _hashed_by_parse(path: str, st: os.stat_result) -> bool:
    return path != STDIN and stat.S_ISREG(st.st_mode) and st.st_size <= DEFAULT_MAX_BYTES


def _unread(path: str, exc: OSError) -> FileResult:
    reason = f"{display_path(path)}: cannot read: {exc.strerror or exc}"
    return FileResult(path, "", "rejected", reason, {}, {}, 0, 0)


def _audit_object(task: FileTask) -> FileResult:
    """`audit_file` of an object-store URL: one download, hashed as the parse streams it."""
    url = task.path
    try:
        reader = ObjectReader(url)
    except LogscopeError as exc:  # cannot be opened, or larger than the size cap
        return FileResult(url, "", "rejected", _one_line(str(exc)), {}, {}, 0, 0)
    with reader:
        info = reader.info
        row = _file_row(url, "", info.size, info.mtime)
        stream = LogStream(url, max_bytes=reader.max_bytes, opener=reader.open)
        status, error, tables = _audit_stream(task, row, stream)
        try:
            sha256 = reader.finish()
        except OSError as exc:
            return FileResult(url, "", "rejected", f"{url}: read error: {exc}", {}, {}, 0, 0)
    row["sha256"] = sha256
    return FileResult(url, sha256, status, error, row, tables, info.size, info.mtime_ns or 0, info.etag)


def _file_row(path: str, sha256: str, size: int, mtime: dt.datetime | None) -> dict[str, Any]:
    return {
        "sha256": sha256,
        "path": display_path(path),
        "path_bytes": os.fsencode(path),
        "size_bytes": size,
        "mtime": mtime,
        "logscope_version": logscope_version(),
        "parsed_at": dt.datetime.now(dt.UTC).replace(tzinfo=None),
    }


def _audit_log(
    task: FileTask,
    row: dict[str, Any],
    read: Callable[[], ParsedLog],
    log_time: Callable[[], tuple[dt.datetime | None, int | None]],
) -> tuple[str, str | None, dict[str, pa.Table]]:
    """Parse (`read`), check and tabulate one log, filling in `row`; (status, error, tables)."""
    t0 = time.perf_counter()
    tables: dict[str, pa.Table] = {}
    try:
        config = _config_for(task)
        row["config_origin"] = config.origin
        with collector_paused():  # (see `logscope.collector`)
            log = analyze_log(read(), config)
            tables = log_tables(log)
            row.update(_log_info(log))
            del log  # freed before the collector is back: its first pass then finds little to walk
        row["log_time"], row["log_time_line"] = log_time()
        status, error = "ok", None
    except LogscopeError as exc:
        status, error = "rejected", _one_line(str(exc))
    except Exception as exc:  # a parser or rule bug: keep the file, the reason and where it happened
        status = "error"
        where = traceback.extract_tb(exc.__traceback__)[-1] if exc.__traceback__ else None
        at = f" (at {Path(where.filename).name}:{where.lineno})" if where else ""
        error = f"{type(exc).__name__}: {_one_line(str(exc))}{at}"
    row["parse_seconds"] = time.perf_counter() - t0
    row["status"], row["error"] = status, error
    return status, error, tables


def _config_for(task: FileTask) -> Config:
    if task.config is not None:
        return task.overrides.apply(task.config)
    if is_url(task.path):  # no folder to search upward from (the planner passes the auditing one's)
        return task.overrides.apply(resolve_config(None))
    folder = str(Path(task.path).resolve().parent)
    config = _CONFIGS.get(folder)
    if config is None:
        config = _CONFIGS[folder] = resolve_config(None, Path(task.path))
    return task.overrides.apply(config)


def _log_info(log: ParsedLog) -> dict[str, Any]:
    worst = worst_severity(log.findings)
    builds = log.frames["builds"]
    # The MCU runs only for a log without builds: read for every log, an RKNN log's empty frame was made.
    runs = None if len(builds) else log.frames.get("mcu_runs")
    return {
        "kind": log.kind,
        "encoding": log.encoding,
        "compression": log.compression,
        "content_sha256": log.sha256,
        "lines": int(log.line_counts.get("total", 0)),
        "unparsed_lines": int(log.unparsed_lines),
        "builds": len(builds) if len(builds) else (len(runs) if runs is not None else 0),
        "findings": len(log.findings),
        "worst_severity": worst.name if worst is not None else None,
    }


def log_tables(log: ParsedLog) -> dict[str, pa.Table]:
    """The stored tables of one parsed (and analysed) log, typed as the store declares them.

    Only the frames with rows are read: a frame the parse declared empty is not made just to be found
    empty (`Frames.filled`; an RKNN log leaves the MCU frames, among others, unmade)."""
    columns = table_columns()
    frames = log.frames
    filled = frames.filled() if isinstance(frames, Frames) else None
    out: dict[str, pa.Table] = {}
    for name in FRAME_TABLES:
        if filled is not None and name not in filled:
            continue
        frame = frames.get(name)
        if frame is None or len(frame) == 0:
            continue
        extra = {"source_rank": source_ranks(frame["build_index"].tolist())} if name == "memory" else {}
        out[name] = frame_to_arrow(frame, columns[name], extra)
    if log.findings:
        out["findings"] = findings_table(log.findings, columns["findings"])
    return out


def source_ranks(build_indexes: list[Any]) -> list[int]:
    """0 for the first row of each build index, 1, 2... for the next ones (a missing index is a group
    of its own): the memory table's `source_rank`. A loop over the few memory rows, where a groupby
    cost a millisecond per log."""
    seen: dict[Any, int] = {}
    ranks = []
    for key in build_indexes:
        rank = seen.get(key, 0)
        ranks.append(rank)
        seen[key] = rank + 1
    return ranks


def frame_to_arrow(
    frame: pd.DataFrame, columns: Mapping[str, str], extra: Mapping[str, list[Any]] | None = None
) -> pa.Table:
    """A frame as an arrow table with exactly the store's columns: objects (dicts, lists) become JSON.
    `extra` holds the values of columns the frame does not have (the store adds them).

    Typed columns are their arrays' own arrow form (`__arrow_array__`, arrays read by
    `frames.column_array`): converting the Series asked pandas for attributes a Series does not have,
    each miss a lookup in its index, and going through `pa.array` cost a dispatch per column. A string
    column is the arrow array its frame already holds, of the store's string type (`store.arrow_schema`),
    so nothing is copied or cast; anything else of another type is cast to the column's."""
    schema = arrow_schema(columns)
    extra = extra or {}
    arrays: list[pa.Array | pa.ChunkedArray] = []
    for column in schema:
        name = column.name
        array = column_array(frame, name)
        if array is None:
            given = extra.get(name)
            missing = given is None
            arrays.append(pa.nulls(len(frame), column.type) if missing else pa.array(given, column.type))
            continue
        to_arrow = getattr(array, "__arrow_array__", None)
        if to_arrow is not None:
            arrow = to_arrow(column.type)
            arrays.append(arrow if arrow.type == column.type else arrow.cast(column.type))
        elif is_object_dtype(array.dtype):
            texts = [None if _missing(v) else json.dumps(_jsonable(v), default=str) for v in array]
            arrays.append(pa.array(texts, column.type))
        else:
            arrays.append(pa.array(array, type=column.type))
    return pa.Table.from_arrays(arrays, schema=schema)


def findings_table(findings: list[Finding], columns: Mapping[str, str]) -> pa.Table:
    """The findings as the store's `findings` rows: the fields of their JSON form (`Finding.to_dict`),
    line lists and evidence as JSON text. Read from each finding's fields into one list per column:
    a dict per finding (`to_dict`, then the row) and pyarrow's row-by-row reading cost twice as much."""
    dumps = json.dumps
    data: dict[str, list[Any]] = {
        "build_index": [f.build_index for f in findings],
        "code": [f.code for f in findings],
        "name": [f.name for f in findings],
        "severity": [None if f.severity is None else f.severity.name for f in findings],
        "message": [f.message for f in findings],
        "line": [f.line for f in findings],
        "lines": [dumps(list(f.lines)) for f in findings],
        "subject": [f.subject for f in findings],
        "evidence": [dumps(_jsonable(dict(f.evidence)), default=str) for f in findings],
        "hint": [f.hint for f in findings],
    }
    return pa.Table.from_pydict(data, schema=arrow_schema(columns))


def find_log_time(path: str) -> tuple[dt.datetime | None, int | None]:
    """The first date-time the log states about itself (a leading timestamp or a `Created date`),
    with its line number, from its first `_TIME_LINES` lines (those of the first block `LogStream`
    reads, as the audit takes them while it parses); (None, None) when it has none."""
    try:
        for lines, numbers in LogStream(path):
            return log_time_in(lines[:_TIME_LINES], numbers[:_TIME_LINES])  # only the first block
    except LogscopeError:
        pass
    return None, None


def log_time_in(lines: list[str], numbers: list[int]) -> tuple[dt.datetime | None, int | None]:
    """`find_log_time` on lines already read: the first stated date-time and its line number."""
    for text, number in zip(lines, numbers, strict=False):
        match = _LEADING_TIME.match(text) or _LABELLED_TIME.match(text)
        if match:
            stamp = _datetime(match.groups())
            if stamp is not None:
                return stamp, number
    return None, None


def _datetime(groups: tuple[str | None, ...]) -> dt.datetime | None:
    year, month, day, hour, minute, second, frac = groups
    try:
        micro = int((frac or "0").ljust(6, "0")[:6])
        return dt.datetime(int(year or 0), int(month or 0), int(day or 0), int(hour or 0),
                           int(minute or 0), int(second or 0), micro)  # fmt: skip
    except ValueError:  # 2023-13-45: not a date
        return None


def _missing(value: Any) -> bool:
    if value is None or value is pd.NA:
        return True
    return isinstance(value, float) and value != value


_PLAIN = frozenset({str, int, float, bool, type(None)})


def _jsonable(value: Any) -> Any:
    """`value` with mappings, sequences and sets as dicts (string keys) and lists, numpy scalars as
    Python values. The exact types evidence is made of are answered first: the ABC checks below took
    most of the 0.5 ms a CI log's findings cost to tabulate (a few hundred values each)."""
    kind = type(value)
    if kind in _PLAIN:
        return value
    if kind is dict:
        return {str(k): _jsonable(v) for k, v in value.items()}
    if kind is list or kind is tuple:
        return [_jsonable(v) for v in value]
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [_jsonable(v) for v in value]
    if hasattr(value, "item") and not isinstance(value, str | bytes):
        try:
            return value.item()
        except (TypeError, ValueError):
            return str(value)
    return value


def _one_line(text: str) -> str:
    lines = text.strip().splitlines()
    return lines[0] if lines else ""
