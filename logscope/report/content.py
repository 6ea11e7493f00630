"""What a diagnosis report says, independent of its format: verdict, headline figures, findings, plots,
tables and provenance, each figure with the log lines it came from.

`build_report(logs)` collects it; the HTML, Markdown and JSON renderers only lay it out. Values stay raw
(ints, strings from the log); every renderer escapes what it prints.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

import pandas as pd

from logscope.figures import FIGURES, figure, format_value, memory_rows
from logscope.model import ParsedLog, versions_text
from logscope.plots import available_plots
from logscope.plots._common import as_int, as_str, frame_of, human, line_range
from logscope.plots.data import (
    address_layout,
    breakdown_bars,
    feature_curve,
    fragmentation_series,
    heap_snapshot,
    mcu_curves,
    perf_table,
)
from logscope.rules import Finding, Severity, worst_severity

REPORT_SCHEMA_VERSION = 1
TOP_FINDINGS = 5  # findings shown in full in the summary; the rest are listed in a table
TABLE_ROWS = 10


@dataclass(frozen=True)
class Verdict:
    level: str  # "error", "warning", "info" or "ok"
    text: str


@dataclass(frozen=True)
class Headline:
    """One figure of the summary: label, value as text, raw bytes if any, and where it comes from."""

    label: str
    value: str
    where: str
    bytes: int | None = None


@dataclass(frozen=True)
class PlotSpec:
    """A plot the report shows: kind (a key of `logscope.plots.PLOTS`), what it shows, and its lines."""

    kind: str
    title: str
    caption: str
    lines: str
    facts: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Table:
    key: str
    title: str
    columns: tuple[str, ...]
    rows: tuple[tuple[Any, ...], ...]
    note: str = ""


@dataclass
class LogReport:
    """The report of one log file."""

    log: ParsedLog
    verdict: Verdict
    headline: list[Headline]
    findings: list[Finding]
    plots: list[PlotSpec]
    tables: list[Table]
    provenance: list[tuple[str, str]]
    plot_options: dict[str, dict[str, Any]] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return Path(self.log.source).name

    @property
    def top_findings(self) -> list[Finding]:
        """The most severe findings first (then by line), at most TOP_FINDINGS."""
        ranked = sorted(
            self.findings,
            key=lambda f: (-(f.severity or Severity.info), f.line is None, f.line or 0, f.code),
        )
        return ranked[:TOP_FINDINGS]


@dataclass
class Report:
    files: list[LogReport]
    version: str

    @property
    def verdict(self) -> Verdict:
        levels = ["ok", "info", "warning", "error"]
        worst = max((f.verdict.level for f in self.files), key=levels.index, default="ok")
        counts = ", ".join(
            f"{sum(1 for f in self.files if f.verdict.level == level)} {level}"
            for level in reversed(levels)
            if any(f.verdict.level == level for f in self.files)
        )
        return Verdict(worst, f"{len(self.files)} file{'s' if len(self.files) != 1 else ''}: {counts}")


def logscope_version() -> str:
    try:
        return metadata.version("logscope")
    except metadata.PackageNotFoundError:  # running from a source tree that was never installed
        return "unknown"


def build_report(
    logs: Sequence[ParsedLog],
    *,
    budget_bytes: int | None = None,
    references: dict[str, pd.DataFrame] | None = None,
    reference_label: str = "reference",
) -> Report:
    """The report of parsed (and analysed: `log.findings`) logs.

    `budget_bytes` is the SRAM budget for MCU logs that state none (`--sram`); `references` maps a
    log's `source` to a reference curve overlaid on its memory plot (`logscope.plots.reference_curve`).
    """
    files = [
        _log_report(log, budget_bytes, (references or {}).get(log.source), reference_label) for log in logs
    ]
    return Report(files, logscope_version())


def _log_report(
    log: ParsedLog, budget_bytes: int | None, reference: pd.DataFrame | None, reference_label: str
) -> LogReport:
    options: dict[str, dict[str, Any]] = {"memory": {"budget_bytes": budget_bytes}}
    if reference is not None:
        options["memory"] |= {"reference": reference, "reference_label": reference_label}
    plots = [_plot_spec(log, kind, budget_bytes) for kind in available_plots(log)]
    return LogReport(
        log=log,
        verdict=verdict(log),
        headline=_headline(log, budget_bytes),
        findings=list(log.findings),
        plots=plots,
        tables=[t for t in _tables(log) if t.rows],
        provenance=_provenance(log, plots),
        plot_options=options,
    )


# ----------------------------------------------------------------------------------------- verdict


def verdict(log: ParsedLog) -> Verdict:
    """Worst finding severity (a failed build is an error), with the counts and the most severe finding."""
    worst = worst_severity(log.findings)
    builds = frame_of(log.frames, "builds")
    failed = builds[builds["status"] == "failed"]
    counts = {level: sum(1 for f in log.findings if f.severity == level) for level in Severity}
    parts = [
        f"{n} {level.name}{'s' if n != 1 and level is not Severity.info else ''}"
        for level, n in sorted(counts.items(), reverse=True)
        if n
    ]
    level = "ok" if worst is None else worst.name
    text = ", ".join(parts) if parts else "no findings"
    if len(failed):
        level = "error"
        row = failed.iloc[0]
        reason = as_str(row["status_reason"]) or "failed"
        line = as_int(row["status_line"])
        text = (
            f"build {as_int(row['build_index'])} failed: {reason}"
            + (f" (line {line})" if line else "")
            + f"; {text}"
        )
    elif log.findings:
        first = sorted(log.findings, key=lambda f: (-(f.severity or 0), f.line or 0))[0]
        where = (
            f" (line {first.line})"
            if first.line is not None and f"line {first.line}" not in first.message
            else ""
        )
        text += f" — {first.code} {first.name}: {first.message}{where}"
    return Verdict(level, text)


# ---------------------------------------------------------------------------------------- headline


HEADLINE_BUILDS = 3  # builds whose figures the summary shows; the rest are named in a note


def _headline(log: ParsedLog, budget_bytes: int | None) -> list[Headline]:
    """Per build (at most HEADLINE_BUILDS, the rest named in a note): status, then every memory figure
    with the label, value and provenance of `logscope.figures`, the broken invariants beside it."""
    out: list[Headline] = []
    summary = log.summary()
    builds = summary["builds"]
    many = len(builds) > 1
    curve = feature_curve(log)
    shown = builds[:HEADLINE_BUILDS]
    if curve is not None and curve.pool.build_index not in {b["index"] for b in shown}:
        shown = shown[: HEADLINE_BUILDS - 1] + [b for b in builds if b["index"] == curve.pool.build_index]
    if len(builds) > len(shown):
        left = [str(b["index"]) for b in builds if b not in shown]
        out.append(
            Headline(
                "builds",
                f"{len(builds)} builds; {len(shown)} shown, {len(left)} left out (builds "
                f"{_index_ranges(left)}): `logscope parse --format json` lists every build",
                "builds",
            )
        )
    for b in shown:
        prefix = f"build {b['index']}: " if many else ""
        versions = versions_text(b)
        status = (b["status"] or "unknown") + (f" ({b['status_reason']})" if b["status_reason"] else "")
        out.append(
            Headline(
                f"build {b['index']}",
                status + (f" — {versions}" if versions else ""),
                _lines(b["lines"][0], b["lines"][1]),
            )
        )
        values = {**b["memory"], **b["derived"]}
        for label, value, where, broken in memory_rows(b):
            key = next((f.key for f in FIGURES if f.label == label), None)
            raw = values.get(key) if key else None
            number = raw if isinstance(raw, int) and key and key.endswith("_bytes") else None
            where = where + "".join(f"; ⚠ {text}" for text in broken)
            out.append(Headline(prefix + label, value, where, number))
        if curve is not None and curve.pool.build_index == b["index"]:
            out += _pool_headline(curve, prefix)
    totals = frame_of(log.frames, "perf_totals")
    for row in totals.head(2).to_dict("records"):
        time_us = as_int(row.get("total_time_us"))
        if time_us is not None:
            fps = row.get("fps")
            fps_text = f", {float(fps):.2f} FPS" if fps is not None and not pd.isna(fps) else ""
            prefix = f"build {as_int(row.get('build_index'))}: " if many else ""
            out.append(
                Headline(f"{prefix}total time", f"{time_us} µs{fps_text}", _at(as_int(row.get("time_line"))))
            )
    out += _mcu_headline(log, budget_bytes)
    return out


def _pool_headline(curve: Any, prefix: str) -> list[Headline]:
    """The live-memory figures of the pool the memory plot draws (`logscope.figures.POOL_FIGURES`)."""
    pool = curve.pool
    where = f"layer {curve.peak_layer}" + (f" {curve.peak_op_type}" if curve.peak_op_type else "")
    where += f" (line {curve.peak_line})" if curve.peak_line is not None else ""
    peak = figure("live_peak_bytes")
    out = [
        Headline(
            prefix + peak.label,
            format_value(peak.key, curve.peak_bytes),
            f"{where}: {', '.join(curve.peak_tensors[:4])}; feature table lines {_range(pool.table_lines)}",
            curve.peak_bytes,
        )
    ]
    bound = pool.lower_bound_bytes
    if bound is not None and bound != curve.peak_bytes:  # only where the table's rows alias
        fig = figure("lower_bound_bytes")
        out.append(
            Headline(
                prefix + fig.label,
                format_value(fig.key, bound),
                f"layer {pool.lower_bound_step}: {', '.join(pool.lower_bound_tensors[:4])}; "
                f"each tensor once, overlapping address ranges once (lines "
                f"{', '.join(str(n) for n in pool.lower_bound_lines[:6])})",
                bound,
            )
        )
    return out


def _index_ranges(indexes: list[str]) -> str:
    """`["3", "4", "5", "9"]` -> `3–5, 9`."""
    numbers = sorted(int(i) for i in indexes if i.lstrip("-").isdecimal())
    parts: list[str] = []
    for n in numbers:
        if parts and n == int(parts[-1].split("–")[-1]) + 1:
            parts[-1] = f"{parts[-1].split('–')[0]}–{n}"
        else:
            parts.append(str(n))
    return ", ".join(parts)


def _mcu_headline(log: ParsedLog, budget_bytes: int | None) -> list[Headline]:
    memory = frame_of(log.frames, "mcu_memory")
    runs = frame_of(log.frames, "mcu_runs")
    if memory.empty:
        return []
    run_lines = {as_int(r["run_index"]): r for r in runs.to_dict("records")}
    rows = memory.to_dict("records")
    shown = rows if len(rows) <= 4 else sorted(rows, key=lambda r: -(as_int(r["peak_bytes"]) or -1))[:3]
    out: list[Headline] = []
    if len(rows) > len(shown):
        out.append(Headline("runs", f"{len(rows)} (the 3 with the highest peak below)", "mcu_runs"))
    for row in shown:
        index = as_int(row["run_index"])
        prefix = f"run {index}: " if len(rows) > 1 else ""
        peak = as_int(row["peak_bytes"])
        if peak is not None:
            op = " ".join(
                x
                for x in (
                    f"op {as_int(row['peak_op_index'])}" if as_int(row["peak_op_index"]) is not None else "",
                    as_str(row["peak_op_name"]) or "",
                )
                if x
            )
            where = "; ".join(
                x for x in (op, _at(as_int(row["peak_line"])), as_str(row["derivation"]) or "") if x
            )
            out.append(Headline(f"{prefix}peak", human(peak), where, peak))
        budget = as_int(row["budget_bytes"])
        run = run_lines.get(index, {})
        if budget is not None:
            out.append(
                Headline(
                    f"{prefix}budget", human(budget), _at(as_int(run.get("budget_line"))) or "log", budget
                )
            )
        elif budget_bytes is not None:
            budget = budget_bytes
            out.append(Headline(f"{prefix}budget", human(budget), "--sram", budget))
        if budget is not None and peak is not None:
            if peak > budget:
                out.append(
                    Headline(f"{prefix}OVER BUDGET by", human(peak - budget), "peak − budget", peak - budget)
                )
            else:
                out.append(
                    Headline(f"{prefix}headroom", human(budget - peak), "budget − peak", budget - peak)
                )
        leak = as_int(row["leak_bytes"])
        if leak:
            out.append(
                Headline(
                    f"{prefix}not freed",
                    human(leak),
                    f"{as_int(row['leak_blocks'])} blocks, event replay",
                    leak,
                )
            )
    return out


# ------------------------------------------------------------------------------------------- plots


def _plot_spec(log: ParsedLog, kind: str, budget_bytes: int | None) -> PlotSpec:
    if kind == "memory":
        curve = feature_curve(log)
        if curve is not None:
            pool = curve.pool
            lines = f"feature-tensor table lines {_range(pool.table_lines)}"
            if pool.internal_line is not None:
                lines += f"; Total Internal Memory Size line {pool.internal_line}"
            return PlotSpec(
                kind,
                "Feature-map memory over layers",
                "Live bytes per layer: each feature tensor is live from the layer before its first consumer "
                "to its last consumer (the table's ID is the consuming operator); the bytes of their "
                "address ranges are summed, shared ranges once: what the log's plan holds. Without aliased "
                "rows it equals the lower bound of any allocation (dotted where it does not). High-water: "
                "max(End) − pool start over the same tensors. Dashed: the pool span.",
                lines,
                {
                    "peak_bytes": curve.peak_bytes,
                    "peak_layer": curve.peak_layer,
                    "peak_line": curve.peak_line,
                    "peak_tensors": list(curve.peak_tensors),
                    "pool_bytes": pool.span_bytes,
                    "internal_bytes": pool.internal_bytes,
                    "build_index": pool.build_index,
                    "lower_bound_bytes": pool.lower_bound_bytes,
                    "lower_bound_layer": pool.lower_bound_step,
                    "lower_bound_tensors": list(pool.lower_bound_tensors),
                    "lower_bound_lines": list(pool.lower_bound_lines),
                },
            )
        curves = mcu_curves(log, budget_bytes)
        top = max(curves, key=lambda c: c.peak_bytes or -1)
        curve_lines = line_range(pd.concat([c.frame["line"] for c in curves]))
        budget_line = f"; budget line {top.budget_line}" if top.budget_line is not None else ""
        # The caption promises a budget line only when one is drawn (a budget stated or given).
        budgeted = any(c.budget_bytes is not None for c in curves)
        budget_text = (
            "the dashed line is the SRAM budget."
            if budgeted
            else "no SRAM budget is stated in the log or given (--sram), so none is drawn."
        )
        return PlotSpec(
            kind,
            "Memory over ops",
            f"Live bytes per step ({top.derivation or 'curve'}); the peak is marked; {budget_text}",
            (f"lines {_range(curve_lines)}" if curve_lines else "no line numbers") + budget_line,
            {
                "peak_bytes": top.peak_bytes,
                "peak_run": top.run_index,
                "peak_step": top.peak_step,
                "peak_line": top.peak_line,
                "budget_bytes": top.budget_bytes,
                "runs": len(curves),
            },
        )
    if kind == "address-map":
        layout = address_layout(log)
        assert layout is not None
        return PlotSpec(
            kind,
            "Tensor address map",
            "One rectangle per tensor: x = the layers it is live, y = its bytes in the pool. Empty space "
            "under the dashed span at a layer is memory the allocator did not reuse there.",
            f"lines {_range(layout.lines)}" if layout.lines else "",
            {
                "span_bytes": layout.span_bytes,
                "tensors": len(layout.rects),
                "outside_pool": int((~layout.rects["inside"]).sum()),
            },
        )
    if kind == "breakdown":
        bars = breakdown_bars(log)
        every = len(breakdown_bars(log, limit=None))
        bar_lines = sorted({ln for b in bars for _, _, ln in b.segments if ln is not None})
        cut = (
            f" The first {len(bars)} of {every} bars are drawn; the JSON summary lists every build."
            if every > len(bars)
            else ""
        )
        return PlotSpec(
            kind,
            "Memory breakdown",
            "Each source's own figures, never added across sources; a black tick is a total the log prints."
            + cut,
            f"lines {', '.join(map(str, bar_lines))}" if bar_lines else "",
            {
                "bars": [
                    {
                        "label": b.label,
                        "segments": {c: v for c, v, _ in b.segments},
                        "total": b.total[0] if b.total else None,
                    }
                    for b in bars
                ]
            },
        )
    if kind == "fragmentation":
        series = fragmentation_series(log)
        if series is not None:
            frame = series.frame
            worst = frame.iloc[
                int((1 - frame["largest_free_bytes"] / frame["free_bytes"].clip(lower=1)).argmax())
            ]
            return PlotSpec(
                kind,
                "Fragmentation",
                "Free bytes inside the traced address span and the largest free block after each event; the "
                "band between them cannot serve one allocation. Requested sizes, so headers count as free.",
                f"lines {_range(series.lines)}" if series.lines else "",
                {
                    "span_bytes": series.span_bytes,
                    "events": len(frame),
                    "worst_free_bytes": int(worst["free_bytes"]),
                    "worst_largest_free_bytes": int(worst["largest_free_bytes"]),
                    "worst_line": as_int(worst["line"]),
                },
            )
        snapshot = heap_snapshot(log)
        assert snapshot is not None
        return PlotSpec(
            kind,
            "Heap regions: free vs largest free block",
            "The heap info table's own figures per region (a snapshot, not a trace).",
            f"lines {_range(snapshot.lines)}" if snapshot.lines else "",
            {"regions": len(snapshot.rows)},
        )
    table = perf_table(log)
    assert table is not None
    return PlotSpec(
        kind,
        "Slowest layers" if table.ranked_by == "time_us" else "Largest read/write layers",
        f"Top {min(20, table.layers)} of {table.layers} layers ({table.source}) by "
        + ("time, with their RW(KB)." if table.ranked_by == "time_us" else "RW(KB): the log gives no times."),
        f"lines {_range(table.lines)}" if table.lines else "",
        {
            "layers": table.layers,
            "total_time_us": table.total_time_us,
            "total_rw_kb": table.total_rw_kb,
            "ranked_by": table.ranked_by,
        },
    )


# ------------------------------------------------------------------------------------------ tables


def _tables(log: ParsedLog) -> list[Table]:
    return [
        _largest_tensors(log),
        _padding(log),
        _slowest(log),
        _op_types(log),
        _fusions(log),
        _mcu_steps(log),
        _buffers(log),
        _reported(log),
        _messages(log),
    ]


def _largest_tensors(log: ParsedLog) -> Table:
    tensors = frame_of(log.frames, "tensors")
    rows = tensors[tensors["size_bytes"].notna()].nlargest(TABLE_ROWS, "size_bytes")
    many = _multi_build(log)
    return Table(
        "largest_tensors",
        "Largest tensors",
        ("build",) * many
        + ("table", "op", "user op", "tensor", "dtype", "shape", "native shape", "size", "start", "line"),
        tuple(
            (as_int(r.build_index),) * many
            + (
                r.table,
                as_int(r.op_id),
                as_str(r.user_op),
                as_str(r.name),
                as_str(r.dtype),
                as_str(r.orig_shape),
                as_str(r.native_shape),
                human(as_int(r.size_bytes)),
                _hex(r.start_offset),
                as_int(r.line),
            )
            for r in rows.itertuples(index=False)
        ),
        f"{TABLE_ROWS} largest of {len(tensors)} rows (feature and const tables"
        + (f", {len(log.frames['builds'])} builds" if many else "")
        + ")"
        if len(tensors) > TABLE_ROWS
        else "",
    )


def _padding(log: ParsedLog) -> Table:
    tensors = frame_of(log.frames, "tensors")
    padded = tensors[
        tensors["padding_bytes"].notna()
        & (tensors["padding_bytes"] > 0)
        & (tensors["padding_bytes"] <= tensors["size_bytes"])  # the padding figure's invariant
    ]
    rows = padded.nlargest(TABLE_ROWS, "padding_bytes")
    many = _multi_build(log)
    checks = log.frames["figure_checks"]
    broken = int((checks["figure"] == "padding_bytes").sum())
    return Table(
        "padding",
        "Padding overhead (native − logical shape bytes)",
        ("build",) * many
        + ("tensor", "dtype", "shape", "native shape", "logical", "native", "padding", "share", "line"),
        tuple(
            (as_int(r.build_index),) * many
            + (
                as_str(r.name),
                as_str(r.dtype),
                as_str(r.orig_shape),
                as_str(r.native_shape),
                as_int(r.logical_bytes),
                as_int(r.native_bytes),
                human(as_int(r.padding_bytes)),
                f"{(as_int(r.padding_bytes) or 0) / (as_int(r.native_bytes) or 1) * 100:.1f}%"
                if as_int(r.native_bytes)
                else None,
                as_int(r.line),
            )
            for r in rows.itertuples(index=False)
        ),
        (
            f"top {TABLE_ROWS} of {len(padded)} padded tensors, "
            f"{human(int(padded['padding_bytes'].sum()))} in all"
            + (f" over {len(log.frames['builds'])} builds" if many else "")
            if len(padded)
            else ""
        )
        + (
            f"; {broken} rows left out: their padding breaks an invariant (see the figure checks)"
            if broken
            else ""
        ),
    )


def _slowest(log: ParsedLog) -> Table:
    table = perf_table(log)
    if table is None:
        return Table("slowest_layers", "Slowest layers", (), ())
    rows = table.frame.head(TABLE_ROWS)
    title = "Slowest layers" if table.ranked_by == "time_us" else "Layers with the most read/write (no times)"
    unit = "ticks" if "ticks" in table.source else "time (µs)"
    return Table(
        "slowest_layers",
        title,
        ("layer", "op type", "name", unit, "RW (KB)", "line"),
        tuple(
            (
                as_int(r.layer),
                as_str(r.op_type),
                as_str(r.name),
                _num(r.time_us),
                _num(r.rw_kb),
                as_int(r.line),
            )
            for r in rows.itertuples(index=False)
        ),
        f"top {len(rows)} of {table.layers} ({table.source})",
    )


def _op_types(log: ParsedLog) -> Table:
    ranking = frame_of(log.frames, "perf_ranking")
    if len(ranking):
        return Table(
            "op_types",
            "Op-type distribution (the log's ranking)",
            ("op type", "calls", "total time (µs)", "time share", "line"),
            tuple(
                (
                    as_str(r.op_type),
                    as_int(r.call_number),
                    as_int(r.total_time_us),
                    f"{_num(r.time_ratio_pct)}%" if _num(r.time_ratio_pct) is not None else None,
                    as_int(r.line),
                )
                for r in ranking.head(15).itertuples(index=False)
            ),
        )
    for name in ("perf", "layers"):
        layers = frame_of(log.frames, name)
        if len(layers) and layers["op_type"].notna().any():
            grouped = (
                layers.groupby("op_type", dropna=True)
                .agg(
                    layers=("op_type", "size"),
                    time_us=("time_us", "sum"),
                    rw_kb=("rw_kb", "sum"),
                    first_line=("line", "min"),
                )
                .sort_values(["layers", "time_us"], ascending=False)
            )
            total = float(grouped["time_us"].sum())
            return Table(
                "op_types",
                "Op-type distribution",
                ("op type", "layers", "time (µs)", "time share", "RW (KB)", "first line"),
                tuple(
                    (
                        str(op),
                        int(r.layers),
                        _num(r.time_us),
                        f"{float(r.time_us) / total * 100:.1f}%" if total else None,
                        _num(r.rw_kb),
                        as_int(r.first_line),
                    )
                    for op, r in grouped.head(15).iterrows()
                ),
                f"{len(grouped)} op types over {len(layers)} layers",
            )
    return Table("op_types", "Op-type distribution", (), ())


def _fusions(log: ParsedLog) -> Table:
    fusions = frame_of(log.frames, "fusions")

    def nodes(value: Any) -> str:
        items = list(value) if isinstance(value, list | tuple) else []
        text = ", ".join(str(v) for v in items[:3])
        return text + (f", … {len(items) - 3} more" if len(items) > 3 else "")

    return Table(
        "fusions",
        "Fusions",
        ("section", "rule", "removed", "added", "line"),
        tuple(
            (as_str(r.section), as_str(r.rule), nodes(r.removed_nodes), nodes(r.added_nodes), as_int(r.line))
            for r in fusions.head(15).itertuples(index=False)
        ),
        f"first 15 of {len(fusions)}" if len(fusions) > 15 else "",
    )


def _mcu_steps(log: ParsedLog) -> Table:
    curve = frame_of(log.frames, "curve")
    if curve.empty:
        return Table("mcu_steps", "Highest steps", (), ())
    rows = curve[curve["live_bytes"].notna()].nlargest(TABLE_ROWS, "live_bytes")
    return Table(
        "mcu_steps",
        "Steps with the most live memory",
        ("run", "step", "op", "name", "live", "line"),
        tuple(
            (
                as_int(r.run_index),
                as_int(r.step),
                as_int(r.op_index),
                as_str(r.op_name),
                human(as_int(r.live_bytes)),
                as_int(r.line),
            )
            for r in rows.itertuples(index=False)
        ),
    )


def _buffers(log: ParsedLog) -> Table:
    buffers = frame_of(log.frames, "buffers")
    rows = buffers[buffers["size_bytes"].notna()].nlargest(TABLE_ROWS, "size_bytes")
    return Table(
        "buffers",
        "Largest planned buffers",
        ("run", "buffer", "name", "size", "offset", "first op", "last op", "line"),
        tuple(
            (
                as_int(r.run_index),
                as_int(r.buffer_id),
                as_str(r.name),
                human(as_int(r.size_bytes)),
                as_int(r.offset_bytes),
                as_int(r.first_op),
                as_int(r.last_op),
                as_int(r.line),
            )
            for r in rows.itertuples(index=False)
        ),
    )


def _reported(log: ParsedLog) -> Table:
    arena = frame_of(log.frames, "arena")
    rows = arena[arena["used_bytes"].notna() | arena["free_bytes"].notna()].head(15)
    return Table(
        "reported",
        "Figures the tool reports",
        ("run", "source", "region", "category", "used", "capacity", "free", "largest free", "line"),
        tuple(
            (
                as_int(r.run_index),
                as_str(r.source),
                as_str(r.region),
                as_str(r.category),
                as_int(r.used_bytes),
                as_int(r.capacity_bytes),
                as_int(r.free_bytes),
                as_int(r.largest_free_bytes),
                as_int(r.line),
            )
            for r in rows.itertuples(index=False)
        ),
        f"first 15 of {len(arena)}" if len(arena) > 15 else "",
    )


def _messages(log: ParsedLog) -> Table:
    messages = frame_of(log.frames, "messages")
    rows = messages[messages["level"].isin(["E", "F"]) | (messages["fatal"] == True)]  # noqa: E712 - nullable
    if rows.empty:
        rows = messages[messages["level"] == "W"]
    shown = rows.head(TABLE_ROWS)
    return Table(
        "messages",
        "Errors" if len(rows) and (rows["level"] != "W").any() else "Warnings",
        ("line", "level", "category", "message"),
        tuple(
            (as_int(r.line), as_str(r.level), as_str(r.category), _first_line(as_str(r.message) or "", 200))
            for r in shown.itertuples(index=False)
        ),
        f"first {TABLE_ROWS} of {len(rows)}" if len(rows) > TABLE_ROWS else "",
    )


def _multi_build(log: ParsedLog) -> bool:
    """Tables of a log with several builds name each row's build."""
    return len(log.frames["builds"]) > 1


# -------------------------------------------------------------------------------------- provenance


def _provenance(log: ParsedLog, plots: list[PlotSpec]) -> list[tuple[str, str]]:
    counts = log.line_counts
    out = [
        ("file", log.source),
        ("sha256", log.sha256 or "—"),
        ("size", f"{log.size_bytes} B"),
        (
            "read as",
            ", ".join(x for x in (log.encoding, log.compression or "") if x)
            + (f" ({'; '.join(log.notes)})" if log.notes else ""),
        ),
        ("detected", log.kind),
        ("lines", ", ".join(f"{k} {v}" for k, v in counts.items())),
        ("logscope", logscope_version()),
    ]
    out += [(f"figure: {p.title}", p.lines or "—") for p in plots]
    return out


# ----------------------------------------------------------------------------------------- helpers


def finding_lines(finding: Finding) -> str:
    lines = sorted({*(finding.lines or ()), *((finding.line,) if finding.line is not None else ())})
    if not lines:
        return "—"
    return ", ".join(str(n) for n in lines[:8]) + (f", … ({len(lines)} lines)" if len(lines) > 8 else "")


def _first_line(text: str, limit: int) -> str:
    first = text.splitlines()[0] if text else ""
    return first if len(first) <= limit else first[: limit - 1] + "…"


def _num(value: Any) -> int | float | None:
    if value is None or value is pd.NA or (isinstance(value, float) and pd.isna(value)):
        return None
    number = float(value)
    return int(number) if number.is_integer() else round(number, 2)


def _hex(value: Any) -> str | None:
    number = as_int(value)
    return None if number is None else f"0x{number:x}"


def _range(lines: tuple[int, int] | None) -> str:
    if lines is None:
        return "—"
    return str(lines[0]) if lines[0] == lines[1] else f"{lines[0]}–{lines[1]}"


def _lines(first: int | None, last: int | None) -> str:
    if first is None:
        return ""
    return f"lines {first}–{last}" if last is not None and last != first else f"line {first}"


def _at(line: int | None) -> str:
    return f"line {line}" if line is not None else ""
