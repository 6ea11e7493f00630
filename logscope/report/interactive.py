"""The data behind the interactive HTML report: every series, tensor, layer and finding as plain JSON.

The page draws it with Plotly (inlined, no network) and a small script of ours; every number in it is
taken from the same functions the static plots and the tables use (`logscope.plots.data`), so the
interactive page, the PNG plots and the JSON report cannot disagree. Text from the log reaches the
page only as JSON string values, which the script inserts with `textContent`, never as markup.

Size is bounded for big logs: per layer at most `LIVE_NAMES` live tensors are named (with the count of
the rest), and log excerpts are kept only for the lines a layer, a tensor or a finding points at.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from typing import Any

import pandas as pd

from logscope.errors import LogscopeError
from logscope.io import read_log
from logscope.model import ParsedLog
from logscope.plots._common import as_str
from logscope.plots.data import address_layout, feature_builds, feature_curve, mcu_curves, step_label
from logscope.report.content import LogReport, Report
from logscope.rules import Finding, Severity
from logscope.units import human_bytes

LIVE_NAMES = 12  # live tensors named per layer in the hover and the detail panel
EXCERPT_CONTEXT = 0  # lines shown around each cited line
MAX_EXCERPT_LINES = 60_000  # a bound on the excerpt table of one log (a few MB at most)
MAX_EXCERPT_CHARS = 400  # one quoted line is cut there


def report_data(report: Report) -> dict[str, Any]:
    """The JSON document the interactive page reads: one entry per log, in report order."""
    return {
        "version": report.version,
        "logs": [log_data(file, index) for index, file in enumerate(report.files)],
    }


def log_data(file: LogReport, index: int) -> dict[str, Any]:
    log = file.log
    views = _rknn_views(log) + _mcu_views(log)
    cited: set[int] = set()
    for view in views:
        cited.update(_view_lines(view))
    findings = [_finding(f) for f in file.findings]
    for finding in file.findings:
        cited.update(n for n in (finding.line, *finding.lines) if n is not None)
    return {
        "index": index,
        "name": file.name,
        "source": str(log.source),
        "kind": log.kind,
        "verdict": {"level": file.verdict.level, "text": file.verdict.text},
        "views": views,
        "findings": findings,
        "excerpts": _excerpts(log, cited),
    }


# ------------------------------------------------------------------------------------ RKNN builds


def _rknn_views(log: ParsedLog) -> list[dict[str, Any]]:
    views = []
    for build in feature_builds(log):
        curve = feature_curve(log, build)
        layout = address_layout(log, build=build)
        if curve is None or layout is None:
            continue
        pool = curve.pool
        tensors = _pool_tensors(pool.tensors, pool.outside_tensors, pool.start_offset)
        steps = curve.frame
        live = _live_indices(tensors, [int(x) for x in steps["layer"]])
        views.append(
            {
                "key": f"build-{build}",
                "kind": "rknn",
                "build": _int(build),
                "label": _build_label(log, build),
                "x_label": "layer (operator id)",
                "curve": {
                    "x": _ints(steps["layer"]),
                    "occupied": _ints(steps["occupied_bytes"]),
                    "lower": _ints(steps["lower_bound_bytes"]),
                    "high": _ints(steps["high_water_bytes"]),
                    "op": _strs(steps["op_type"]),
                    "line": _ints(steps["line"]),
                    "live": [ids[:LIVE_NAMES] for ids in live],
                    "live_count": [len(ids) for ids in live],
                },
                "peak": {
                    "bytes": _int(curve.peak_bytes),
                    "layer": _int(curve.peak_layer),
                    "line": _int(curve.peak_line),
                },
                "span": {
                    "bytes": _int(layout.span_bytes),
                    "label": layout.span_label.format(span=human_bytes(layout.span_bytes)),
                },
                "tensors": tensors,
                "layers": _layers(log, build),
            }
        )
    return views


def _pool_tensors(inside: pd.DataFrame, outside: pd.DataFrame, start: int) -> dict[str, list[Any]]:
    """Resident tensors then those outside the pool, as columns: what the address map and panel show."""
    out: dict[str, list[Any]] = {
        k: []
        for k in (
            "name",
            "dtype",
            "start",
            "end",
            "rel_start",
            "size",
            "padding",
            "first",
            "last",
            "line",
            "inside",
            "shape",
        )
    }
    for frame, resident in ((inside, True), (outside, False)):
        if frame.empty:
            continue
        first = frame["op_first"]
        for i in range(len(frame)):
            row = frame.iloc[i]
            op_first = _int(first.iloc[i])
            op_last = _int(row.get("op_last"))
            out["name"].append(as_str(row.get("name")))
            out["dtype"].append(as_str(row.get("dtype")))
            out["start"].append(_int(row.get("start_offset")))
            out["end"].append(_int(row.get("end_offset")))
            start_offset = _int(row.get("start_offset"))
            out["rel_start"].append(None if start_offset is None else start_offset - start)
            out["size"].append(_int(row.get("size_bytes")))
            out["padding"].append(_int(row.get("padding_bytes")))
            out["first"].append(op_first)
            out["last"].append(op_last if op_last is not None else op_first)
            out["line"].append(_int(row.get("line")))
            out["inside"].append(resident)
            out["shape"].append(as_str(row.get("native_shape")) or as_str(row.get("orig_shape")))
    return out


def _live_indices(tensors: dict[str, list[Any]], steps: Sequence[int]) -> list[list[int]]:
    """For each step, the indexes of the resident tensors live there (first <= step <= last)."""
    position = {step: i for i, step in enumerate(steps)}
    live: list[list[int]] = [[] for _ in steps]
    for index, (first, last, resident) in enumerate(
        zip(tensors["first"], tensors["last"], tensors["inside"], strict=True)
    ):
        if not resident or first is None or last is None:
            continue
        for step in range(first, last + 1):
            slot = position.get(step)
            if slot is not None:
                live[slot].append(index)
    return live


_LAYER_COLUMNS = ("op_type", "full_name", "target", "dtype", "output_shape", "time_us", "rw_kb", "line")
_PERF_COLUMNS = ("time_us", "rw_kb", "mac_usage", "line")


def _layers(log: ParsedLog, build: int) -> dict[str, list[Any]]:
    """The build's layer table as columns (`id` first) and, where the log has an eval_perf table, each
    layer's first perf row as `perf_*` columns. Columns, not one object per layer: a 5,000-layer build
    would repeat every key 5,000 times in the page."""
    layers = log.frames["layers"]
    rows = layers[layers["build_index"] == build]
    out: dict[str, list[Any]] = {"id": _ints(rows["layer_id"])}
    for column in _LAYER_COLUMNS:
        values = rows[column]
        out[column] = _strs(values) if values.dtype == "string" else [_number(v) for v in values]
    perf = log.frames["perf"]
    # Perf rows are matched by layer id only when the log has one perf table: with several sessions
    # there is no saying which one ran this build.
    if not perf.empty and perf["build_index"].nunique(dropna=False) == 1:
        first = perf.drop_duplicates("layer_id").set_index("layer_id")
        for column in _PERF_COLUMNS:
            by_id = first[column]
            out[f"perf_{column}"] = [
                None if layer is None or layer not in by_id.index else _value(by_id.loc[layer])
                for layer in out["id"]
            ]
    return out


def _number(value: Any) -> int | float | None:
    number = _float(value)
    if number is None:
        return None
    return int(number) if number.is_integer() else round(number, 3)


def _value(value: Any) -> Any:
    return as_str(value) if isinstance(value, str) else _number(value)


def _build_label(log: ParsedLog, build: int) -> str:
    builds = log.frames["builds"]
    row = builds[builds["build_index"] == build]
    parts = [f"build {build}"]
    if len(row):
        first = row.iloc[0]
        for column in ("kind", "target_platform"):
            if column in row.columns and (value := as_str(first.get(column))):
                parts.append(value)
        start, end = _int(first.get("start_line")), _int(first.get("end_line"))
        if start is not None:
            parts.append(f"lines {start}-{end}" if end is not None and end != start else f"line {start}")
    return " · ".join(parts)


# ------------------------------------------------------------------------------------------- MCU


def _mcu_views(log: ParsedLog) -> list[dict[str, Any]]:
    views = []
    for curve in mcu_curves(log):
        frame = curve.frame
        if frame.empty:
            continue
        labels = [step_label(i, n) for i, n in zip(frame["op_index"], frame["op_name"], strict=True)]
        view: dict[str, Any] = {
            "key": f"run-{curve.run_index}",
            "kind": "mcu",
            "build": _int(curve.run_index),
            "label": f"run {curve.run_index}" + (f" · {curve.derivation}" if curve.derivation else ""),
            "x_label": "step (operator in execution order)",
            "curve": {
                "x": _ints(frame["step"]),
                "occupied": _ints(frame["live_bytes"]),
                "op": labels,
                "line": _ints(frame["line"]),
            },
            "peak": {
                "bytes": _int(curve.peak_bytes),
                "layer": _int(curve.peak_step),
                "line": _int(curve.peak_line),
            },
            "budget": None
            if curve.budget_bytes is None
            else {
                "bytes": _int(curve.budget_bytes),
                "line": _int(curve.budget_line),
                "source": curve.budget_source,
            },
            "baseline": _int(curve.baseline_bytes),
        }
        layout = address_layout(log, run=curve.run_index)
        if layout is not None and not layout.rects.empty:
            rects = layout.rects
            view["tensors"] = {
                "name": _strs(rects["name"]),
                "dtype": _strs(rects["dtype"]),
                "start": _ints(rects["y0"]),
                "end": _ints(rects["y1"]),
                "rel_start": _ints(rects["y0"]),
                "size": _ints(rects["size_bytes"]),
                "padding": [None] * len(rects),
                "first": [_float(x + 0.4) for x in rects["x0"]],
                "last": [_float(x - 0.4) for x in rects["x1"]],
                "line": _ints(rects["line"]),
                "inside": [bool(x) for x in rects["inside"]],
                "shape": [None] * len(rects),
            }
            view["span"] = {
                "bytes": _int(layout.span_bytes),
                "label": layout.span_label.format(span=human_bytes(layout.span_bytes)),
            }
        views.append(view)
    return views


# -------------------------------------------------------------------------------------- findings

_UNIT_SUFFIXES: tuple[tuple[str, str], ...] = (
    ("_bytes", "bytes"),
    ("_lines", "lines"),
    ("_line", "line"),
    ("_rate", "ratio"),
    ("_ratio", "ratio"),
    ("_share", "ratio"),
    ("_fraction", "ratio"),
    ("_pct", "pct"),
    ("_percent", "pct"),
    ("_us", "µs"),
    ("_ms", "ms"),
    ("_kb", "KB"),
    ("_mb", "MB"),
    ("_cycles", "cycles"),
)


def evidence_fields(evidence: dict[str, Any], limit: int = 240) -> list[tuple[str, str]]:
    """A finding's evidence as (label, value with its unit): what a person reads, not internal keys.

    The unit comes from the key's suffix, the naming convention of every frame and rule (`_bytes`,
    `_line`, `_rate` as a 0-1 fraction, `_pct` as printed, `_us`). A figure's `X_line` joins the
    figure `X_…` it belongs to ("weight: 4.24 MiB (4447296 B) · line 278"). Empty values (None, empty
    lists) are left out: "no rows outside the pool" is not evidence of anything.
    """
    entries: dict[str, list[str]] = {}
    lines: dict[str, str] = {}
    for key, value in evidence.items():
        if value is None or (isinstance(value, list | tuple | dict | str) and len(value) == 0):
            continue
        if isinstance(value, float) and math.isnan(value):
            continue
        unit = next((u for suffix, u in _UNIT_SUFFIXES if key.endswith(suffix)), None)
        base = key[: key.rfind("_")] if unit is not None and "_" in key else key
        text = _evidence_text(value, unit, limit)
        if unit == "line":
            lines[base] = text
            continue
        entries.setdefault(base, []).append(text)
    for base, text in lines.items():
        if base in entries:
            entries[base][-1] += f" · {text}"
        else:
            entries[base] = [text]
    return [(base.replace("_", " ").strip() or base, "; ".join(texts)) for base, texts in entries.items()]


def _evidence_text(value: Any, unit: str | None, limit: int) -> str:
    if isinstance(value, bool):
        text = "yes" if value else "no"
    elif unit == "bytes" and isinstance(value, int):
        text = human_bytes(value)
    elif unit == "line" and isinstance(value, int):
        text = f"line {value}"
    elif unit == "lines" and isinstance(value, list | tuple):
        shown = ", ".join(str(v) for v in value[:12])
        text = f"lines {shown}" + (f", … ({len(value)} lines)" if len(value) > 12 else "")
    elif unit == "ratio" and isinstance(value, int | float):
        text = f"{value * 100:.1f} %"
    elif unit == "pct" and isinstance(value, int | float):
        text = f"{value:.1f} %"
    elif unit in {"µs", "ms", "KB", "MB", "cycles"} and isinstance(value, int | float):
        text = f"{value:,} {unit}" if isinstance(value, int) else f"{value:,.2f} {unit}"
    elif isinstance(value, int | float | str):
        text = f"{value:,}" if isinstance(value, int) else str(value)
    elif isinstance(value, list | tuple):
        shown = ", ".join(str(v) for v in value[:12])
        text = shown + (f", … ({len(value)} items)" if len(value) > 12 else "")
    else:
        text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _finding(finding: Finding) -> dict[str, Any]:
    severity = finding.severity or Severity.info
    return {
        "code": finding.code,
        "name": finding.name,
        "severity": severity.name,
        "build": finding.build_index,
        "line": finding.line,
        "lines": sorted({*finding.lines, *((finding.line,) if finding.line is not None else ())}),
        "subject": finding.subject,
        "message": finding.message,
        "hint": finding.hint,
        "evidence": evidence_fields(finding.evidence),
    }


# -------------------------------------------------------------------------------------- excerpts


def _view_lines(view: dict[str, Any]) -> Iterable[int]:
    """The lines a view's panel quotes: layer rows and perf rows. Tensor rows are not quoted: each
    tensor's fields and line number are in the page already, and quoting them doubled its size."""
    yield from (n for n in view["curve"].get("line", []) if n is not None)
    layers = view.get("layers", {})
    for column in ("line", "perf_line"):
        yield from (n for n in layers.get(column, []) if n is not None)


def _excerpts(log: ParsedLog, cited: set[int]) -> dict[str, str]:
    """The text of every cited physical line, read again from the file (so what the page quotes is what
    the log says). A log that cannot be read again (standard input, a file changed since) has none."""
    if not cited:
        return {}
    try:
        text = read_log(log.source)
    except (LogscopeError, OSError):
        return {}
    wanted = set(sorted(cited)[:MAX_EXCERPT_LINES])
    out: dict[str, str] = {}
    for number, line in zip(text.numbers, text.lines, strict=True):
        if number in wanted:
            key = str(number)
            piece = line if len(line) <= MAX_EXCERPT_CHARS else line[: MAX_EXCERPT_CHARS - 1] + "…"
            out[key] = out[key] + "\n" + piece if key in out else piece
    return out


# ---------------------------------------------------------------------------------------- values


def _int(value: Any) -> int | None:
    if value is None or value is pd.NA:
        return None
    try:
        if isinstance(value, float) and not math.isfinite(value):
            return None
        return int(value)
    except (TypeError, ValueError, OverflowError):
        return None


def _float(value: Any) -> float | None:
    if value is None or value is pd.NA:
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def _ints(values: Iterable[Any]) -> list[int | None]:
    return [_int(v) for v in values]


def _strs(values: Iterable[Any]) -> list[str | None]:
    return [as_str(v) for v in values]


def script_json(data: Any) -> str:
    """JSON safe inside `<script type="application/json">`: no `</script>`, no `<!--`, no U+2028."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return (
        text.replace("&", "\\u0026")
        .replace("<", "\\u003c")
        .replace(">", "\\u003e")
        .replace("\u2028", "\\u2028")
        .replace("\u2029", "\\u2029")
    )
