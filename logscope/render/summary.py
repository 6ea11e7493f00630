"""Text and Markdown summaries of a parsed log; JSON is `ParsedLog.summary()` serialised."""

from __future__ import annotations

import functools
import textwrap
from collections.abc import Iterator
from operator import attrgetter
from typing import Any, cast

import pandas as pd

from logscope.figures import memory_rows
from logscope.inert import markdown_text
from logscope.model import (
    BUILD_HEAD,
    COUNT_KEYS,
    DERIVED_KEYS,
    MEMORY_LINE_KEYS,
    MEMORY_OBJECT_KEYS,
    VERSION_KEYS,
    BuildFields,
    ParsedLog,
    versions_text,
)
from logscope.render._json import (
    Written,
    dict_template,
    dumps_indented,
    encoded_scalars,
    iter_indented,
    written_column,
)
from logscope.rules import Finding, Rule
from logscope.schemas import FINDING_KEYS
from logscope.units import human_bytes


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{value * 100:.1f}%"


def render_json(logs: list[ParsedLog]) -> str:
    return dumps_indented(_json_payload(logs))


def iter_json(logs: list[ParsedLog]) -> Iterator[str]:
    """The text of `render_json(logs)` in pieces of some tens of kilobytes, for a stream: a 100 MB log's
    JSON is tens of megabytes, which as one string is made, copied and freed again by every step that
    writes it."""
    return iter_indented(_json_payload(logs))


def _json_payload(logs: list[ParsedLog]) -> Any:
    """`summary()` of each log (of the one log alone), each build given with its text (`_written`)."""
    depth = 2 if len(logs) == 1 else 3  # a build's and a finding's depth in the payload
    summaries = [
        log.summary_with_builds(
            functools.partial(_written, depth=depth), functools.partial(_written_findings, depth=depth)
        )
        for log in logs
    ]
    return summaries[0] if len(logs) == 1 else summaries


def _written_findings(findings: list[Any], depth: int, indent: int = 2) -> list[Any]:
    """The findings of a summary (`Finding.to_dict` of each), each a `Written` with its text at `depth`,
    written key by key over all findings (`written_column`) into a template of its keys (as `_written`
    writes the builds). Findings of another type, a value the writer would hand to json.dumps, or a
    `to_dict` whose keys are not `FINDING_KEYS` (one it gains is never left out), give the dicts."""
    if not all(type(f) is Finding for f in findings) or (
        findings and tuple(findings[0].to_dict()) != FINDING_KEYS
    ):
        return [f.to_dict() if hasattr(f, "to_dict") else f for f in findings]
    columns: list[list[str] | None] = []
    for key in FINDING_KEYS:
        if key == "severity":
            values = [None if f.severity is None else f.severity.name for f in findings]
        elif key == "evidence":
            values = [f.evidence if type(f.evidence) is dict else dict(f.evidence) for f in findings]
        else:
            values = list(map(attrgetter(key), findings))
        columns.append(written_column(values, depth + 1, indent))
    if any(column is None for column in columns):
        return [f.to_dict() for f in findings]
    template = _finding_template(depth, indent)
    rows = zip(*cast(list[list[str]], columns), strict=True)
    return [Written(template % row, depth, indent, f.to_dict) for f, row in zip(findings, rows, strict=True)]


@functools.cache
def _finding_template(depth: int, indent: int) -> str:
    """A finding's text at `depth` with `%s` for each value, in `Finding.to_dict`'s key order."""
    return dict_template(FINDING_KEYS, depth, indent)


def _written(fields: BuildFields, depth: int, indent: int = 2) -> list[Any]:
    """The builds of a summary, each a `Written` with the text the JSON writer writes for its dict at
    `depth`, made column by column: the scalars of every build encoded in one call per field, each
    build's text one `%` of a template of its keys. Why: the dicts of a log with hundreds of builds
    took longer to make and to walk than the text takes to make from the fields. Where a field holds
    a value the writer would hand to json.dumps, the builds are the dicts (`BuildFields.dicts`)."""
    scalars = [
        fields.indexes,
        *fields.head,
        *fields.lines,
        *fields.memory,
        *fields.memory_lines,
        *fields.derived,
    ]
    tail = [*fields.versions]
    counts = [*fields.counts]
    encoded = [encoded_scalars(column) for column in (*scalars, *tail, *counts)]
    inner = [written_column(column, depth + 1, indent) for column in (fields.checks, fields.memory_sources)]
    inner.append(written_column(fields.perf, depth + 1, indent))
    if any(column is None for column in (*encoded, *inner)):
        return fields.dicts()
    texts = cast(list[list[str]], encoded)
    head, versions = texts[: len(scalars)], texts[len(scalars) : len(scalars) + len(tail)]
    count_texts = texts[len(scalars) + len(tail) :]
    checks, sources, perf = cast(list[list[str]], inner)
    rows = zip(*head, checks, sources, *versions, perf, *count_texts, strict=True)
    template = _build_template(depth, indent)
    return [
        Written(template % row, depth, indent, functools.partial(fields.build, b))
        for b, row in enumerate(rows)
    ]


@functools.cache
def _build_template(depth: int, indent: int) -> str:
    """A build's text at `depth` with `%s` for each value, in `BuildFields` order: what the JSON writer
    writes for the dict `BuildFields.build` makes (its flat objects on lines of their own, as
    json.dumps indents them)."""
    one, two = "\n" + " " * (indent * (depth + 1)), "\n" + " " * (indent * (depth + 2))
    nested = {
        "lines": f"[{two}%s,{two}%s{one}]",
        "memory": dict_template(MEMORY_OBJECT_KEYS, depth + 1, indent),
        "memory_lines": dict_template(MEMORY_LINE_KEYS, depth + 1, indent),
        "derived": dict_template(DERIVED_KEYS, depth + 1, indent),
        "versions": dict_template(VERSION_KEYS, depth + 1, indent),
        "counts": dict_template(COUNT_KEYS, depth + 1, indent),
    }
    keys = (
        "index",
        *BUILD_HEAD,
        *("lines", "memory", "memory_lines", "derived", "checks", "memory_sources", "versions", "perf"),
        "counts",
    )
    return dict_template(keys, depth, indent, nested)


_SOURCE_FIGURES = (
    ("weight_bytes", "weight"),
    ("internal_bytes", "internal"),
    ("scratch_bytes", "scratch"),
    ("other_bytes", "other"),
    ("total_bytes", "total"),
    ("model_bytes", "model file"),
    ("system_max_bytes", "system max"),
    ("npu_max_bytes", "NPU max"),
    ("max_total_bytes", "max total"),
)


def _other_sources_text(build: dict[str, Any]) -> list[str]:
    """The figures of every memory source after the first: a build total and an eval_memory total can
    disagree, and both are shown, each under its own name, never merged."""
    out = []
    for source in build["memory_sources"][1:]:
        figures = [f"{label} {human_bytes(source[key])}" for key, label in _SOURCE_FIGURES if source.get(key)]
        if figures:
            out.append(f"  also from {source['source']}: " + "; ".join(figures))
    return out


def _or_dash(value: Any) -> str:
    """A perf cell for a fixed-width column: a cut or emptied cell is missing, shown as a dash."""
    return "—" if value is None else str(value)


def _share_pct(value: Any) -> str:
    """A share already in percent printed as `12.34%`, a dash when the cell is missing."""
    return "—" if value is None else f"{value:.2f}%"


def _perf_text(perf: dict[str, Any] | None, top: int = 5) -> list[str]:
    if not perf:
        return []
    head = []
    if perf["total_time_us"] is not None:
        head.append(f"total {perf['total_time_us']} us (line {perf['lines'][0]})")
    if perf["fps"] is not None:
        head.append(f"{perf['fps']} FPS")
    if perf["rw_kb"] is not None:
        head.append(f"RW {perf['rw_kb']:.0f} KB (line {perf['lines'][1]})")
    if perf["rows_time_us"] is not None:
        head.append(f"rows sum {perf['rows_time_us']} us")
    out = ["  perf: " + ", ".join(head)] if head else []
    for row in perf["slowest"][:top]:
        out.append(
            f"    {_or_dash(row['time_us']):>8} us  layer {_or_dash(row['layer_id']):<4} "
            f"{row['op_type'] or '':<16} "
            f"{row['full_name'] or ''}  [line {row['line']}]"
        )
    if perf.get("ranking"):
        out.append("  ranking (op type: CPU / NPU / total us, share as printed):")
    for row in perf.get("ranking", []):
        out.append(
            f"    {row['op_type'] or '':<20} {_or_dash(row['cpu_time_us']):>8} / "
            f"{_or_dash(row['npu_time_us']):>8} / {_or_dash(row['total_time_us']):>8}  "
            f"{_share_pct(row['time_ratio_pct']):>7}  [line {row['line']}]"
        )
    return out


def render_text(log: ParsedLog, *, max_findings: int | None = None, width: int | None = None) -> str:
    """The text summary. Findings are grouped by rule (count and hint once), at most `max_findings`
    shown (None: all) with a note naming what was left out; `width` wraps every longer line."""
    text = _render_text(log, max_findings)
    return text if width is None else fit(text, width)


def fit(text: str, width: int) -> str:
    """Every line wrapped to `width` columns, continuations indented under the line's own indent."""
    out = []
    for line in text.splitlines():
        if len(line) <= width:
            out.append(line)
            continue
        indent = " " * (len(line) - len(line.lstrip()) + 4)
        out += textwrap.wrap(
            line, width, subsequent_indent=indent, break_long_words=True, break_on_hyphens=False
        )
    return "\n".join(out)


def _render_text(log: ParsedLog, max_findings: int | None) -> str:
    s = log.summary()
    counts = s["line_counts"]
    out = [f"{s['source']}  [{s['kind']}]  {counts['total']} lines, {s['unparsed_lines']} unparsed"]
    if log.notes:
        out.append("  read: " + "; ".join(log.notes))
    for b in s["builds"]:
        head = f"build {b['index']} ({b['kind']}): {b['status']}"
        if b["status_reason"]:
            head += f" ({b['status_reason']})"
        versions = versions_text(b)
        out.append(
            f"\n{head}" + (f" — {versions}" if versions else "") + f"  lines {b['lines'][0]}-{b['lines'][1]}"
        )
        board = ", ".join(f"{k.removesuffix('_version')} {v}" for k, v in b["versions"].items() if v)
        if board:
            out.append(f"  board/runtime: {board}")
        for label, value, source, broken in memory_rows(b):
            out.append(f"  {label:<26} {value:<28} [{source}]")
            out += [f"    ! {text}" for text in broken]
        out += _other_sources_text(b)
        out += _perf_text(b["perf"])
        c = b["counts"]
        out.append(
            f"  layers {c['layers']}, feature tensors {c['feature_tensors']}, "
            f"const tensors {c['const_tensors']}, fusions {c['fusions']}, "
            f"warnings {c['warnings']}, errors {c['errors']}"
            + "".join(
                f", {label} {c[key]}"
                for key, label in (
                    ("perf_layers", "perf rows"),
                    ("allocations", "runtime buffers"),
                    ("failed_allocations", "failed allocations"),
                )
                if c.get(key)
            )
        )
    out += _mcu_runs_text(log, s.get("runs", []))
    errors = log.frames["messages"]
    errors = errors[errors["level"] == "E"].head(5)
    if len(errors):
        out.append("\nfirst errors:")
        for row in errors.itertuples(index=False):
            first = str(row.message).splitlines()[0][:120]
            category = str(row.category) if isinstance(row.category, str) else "other"
            out.append(f"  line {row.line}: [{category}] {first}")
    if s["unparsed_lines"]:
        unparsed = log.frames["unparsed"].head(3)
        shown = ", ".join(str(n) for n in unparsed["line"])
        out.append(
            f"\nunparsed lines: {s['unparsed_lines']} (first at line {shown}; --frames-out to see all)"
        )
    if log.findings:
        out.append(f"\nfindings: {_finding_counts(log.findings)}")
        out += _grouped_findings(log.findings, max_findings)
    return "\n".join(out)


def _grouped_findings(findings: list[Finding], limit: int | None) -> list[str]:
    """One block per rule (most severe rule first): code, name, severity, count, the hint once, then a
    line per finding. Past `limit` findings, the rest are counted per rule in a closing note."""
    groups: dict[str, list[Finding]] = {}
    for f in findings:
        groups.setdefault(f.code, []).append(f)
    order = sorted(groups.values(), key=lambda g: (-max(int(f.severity or 0) for f in g), g[0].code))
    out: list[str] = []
    shown = 0
    left: list[str] = []
    for group in order:
        first = group[0]
        room = len(group) if limit is None else max(0, limit - shown)
        if room == 0:
            left.append(f"{first.code} {len(group)}")
            continue
        count = f" ({len(group)} findings)" if len(group) > 1 else ""
        out.append(f"  {first.severity} {first.code} {first.name}{count}")
        for f in group[:room]:
            where = f"line {f.line}" if f.line is not None else "no line"
            out.append(f"    {where}: {f.message}")
        if len(group) > room:
            out.append(f"    ... {len(group) - room} more {first.code} findings")
        hints = dict.fromkeys(f.hint for f in group if f.hint)
        out += [f"    hint: {hint}" for hint in hints]
        shown += min(room, len(group))
    if left:
        out.append(
            f"  ... {sum(int(x.split()[1]) for x in left)} more findings not shown ({', '.join(left)}): "
            "--max-findings 0 or --format json for all"
        )
    return out


# ---------------------------------------------------------------------- MCU logs
_MCU_TEXT_RUNS = 20  # a trace of a thousand inferences prints the first runs, then a count


def _mcu_runs_text(log: ParsedLog, runs: list[dict[str, Any]]) -> list[str]:
    """Per run: peak (and the op that makes it), baseline, final, budget, the tool's own total, top steps."""
    out: list[str] = []
    curves = dict(iter(log.frames["curve"].groupby("run_index"))) if runs else {}
    for run in runs[:_MCU_TEXT_RUNS]:
        mem, lines = run["memory"], run["memory_lines"]
        formats = ", ".join(run["formats"]) or "—"
        extra = ", ".join(str(v) for v in (run["tool_version"], run["model_name"]) if v)
        out.append(
            f"\nrun {run['index']} ({formats})"
            + (f" — {extra}" if extra else "")
            + f"  lines {run['lines'][0]}-{run['lines'][1]}"
        )
        status = run["status"]
        if status is not None:
            fault = f"; then {status['fault']} (line {status['fault_line']})" if status["fault"] else ""
            out.append(
                f"  {'status':<26} {status['status']} ({status['reason']}, line {status['line']}): "
                f"{status['message']}{fault}"
            )
        peak_op = mem["peak_op"]
        where = ""
        if peak_op is not None:
            name = " ".join(str(v) for v in (peak_op["index"], peak_op["name"]) if v is not None)
            where = f"op {name}" if peak_op["index"] is not None else f"phase {name}"
        rows = [
            (
                "peak",
                mem["peak_bytes"],
                "; ".join(x for x in (where, _at(lines["peak_bytes"]), mem["derivation"]) if x),
            ),
            ("baseline", mem["baseline_bytes"], _at(lines["baseline_bytes"]) or "first total - first delta"),
            ("final", mem["final_bytes"], "last step"),
            ("budget", mem["budget_bytes"], _at(lines["budget_bytes"])),
        ]
        for label, value, source in rows:
            if value is not None:
                out.append(f"  {label:<26} {human_bytes(value):<28} [{source}]")
        if mem["over_budget_bytes"]:
            out.append(
                f"  {'OVER BUDGET by':<26} {human_bytes(mem['over_budget_bytes']):<28} "
                f"[{_at(lines['over_budget_bytes']) or 'peak - budget'}]"
            )
        elif mem["headroom_bytes"] is not None:
            out.append(f"  {'headroom':<26} {human_bytes(mem['headroom_bytes']):<28} [budget - peak]")
        reported = mem["reported"]
        if reported is not None and reported["line"] != lines["peak_bytes"]:
            out.append(
                f"  {'reported':<26} {human_bytes(reported['bytes']):<28} "
                f"[{reported['label']}, {_at(reported['line'])}]"
            )
        ev = run["events"]
        if ev is not None:
            text = (
                f"{ev['allocations']} allocations ({ev['alloc_bytes']} B), {ev['frees']} frees "
                f"({ev['free_bytes']} B), {ev['unmatched_frees']} unmatched frees; "
                f"leak {ev['leak_bytes']} B in {ev['leak_blocks']} blocks"
            )
            if ev["reported_leak_bytes"] is not None:
                verdict = "balanced" if ev["balanced"] else "NOT balanced"
                said = f"{ev['reported_leak_bytes']} B in {ev['reported_leak_blocks']}"
                text += f"; trace reports {said}: {verdict}"
            out.append(f"  events: {text}")
        curve = curves.get(run["index"])
        if curve is not None and len(curve) > 1:
            top = curve.nlargest(3, "live_bytes")
            steps = ", ".join(
                f"{_step_name(r.op_index, r.op_name)} {human_bytes(_whole(r.live_bytes))}"
                for r in top.itertuples(index=False)
            )
            out.append(f"  top steps: {steps}")
        c = run["counts"]
        out.append("  " + ", ".join(f"{k} {v}" for k, v in c.items()))
    if len(runs) > _MCU_TEXT_RUNS:
        peaks = [r["memory"]["peak_bytes"] for r in runs if r["memory"]["peak_bytes"] is not None]
        out.append(
            f"\n... and {len(runs) - _MCU_TEXT_RUNS} more runs ({len(runs)} in all"
            + (f", highest peak {human_bytes(max(peaks))}" if peaks else "")
            + "; --frames-out for all)"
        )
    return out


def _mcu_runs_markdown(runs: list[dict[str, Any]]) -> list[str]:
    """One table row per run: peak, the op that makes it, budget, over budget, and where each comes from."""
    if not runs:
        return []
    out = ["### runs", "", "| run | formats | peak | peak op | budget | over budget | derivation |"]
    out.append("|---|---|---|---|---|---|---|")
    for run in runs[:_MCU_TEXT_RUNS]:
        mem = run["memory"]
        op = mem["peak_op"]
        op_text = "—" if op is None else " ".join(str(v) for v in (op["index"], op["name"]) if v is not None)
        if op is not None and op["line"] is not None:
            op_text += f" (line {op['line']})"
        cells = [
            str(run["index"]),
            ", ".join(run["formats"]),
            human_bytes(mem["peak_bytes"]),
            op_text,
            human_bytes(mem["budget_bytes"]),
            human_bytes(mem["over_budget_bytes"]) if mem["over_budget_bytes"] else "—",
            mem["derivation"] or "—",
        ]
        out.append("| " + " | ".join(_md_escape(c) for c in cells) + " |")
    if len(runs) > _MCU_TEXT_RUNS:
        out.append(f"| … | {len(runs) - _MCU_TEXT_RUNS} more runs | | | | | |")
    out.append("")
    return out


def _whole(value: Any) -> int:
    return int(value)


def _at(line: int | None) -> str:
    return f"line {line}" if line is not None else ""


def _step_name(index: Any, name: Any) -> str:
    parts = [
        f"op {index}" if index is not None and index is not pd.NA else "",
        str(name) if isinstance(name, str) else "",
    ]
    return " ".join(p for p in parts if p) or "step"


def _finding_counts(findings: list[Finding]) -> str:
    counts = {
        level: sum(1 for f in findings if str(f.severity) == level) for level in ("error", "warning", "info")
    }
    return ", ".join(f"{n} {level}" for level, n in counts.items() if n)


def _finding_text(f: Finding) -> str:
    where = f"line {f.line}" if f.line is not None else "no line"
    text = f"  {where}: {f.severity} {f.code} {f.name}: {f.message}"
    return text + (f"\n      hint: {f.hint}" if f.hint else "")


def render_rule_list(rules: tuple[Rule, ...]) -> str:
    """`logscope rules`: one line per rule."""
    width = max(len(r.name) for r in rules)
    return "\n".join(f"{r.code}  {r.name:<{width}}  {r.severity.name:<7}  {r.summary}" for r in rules)


def _md_escape(text: object) -> str:
    return markdown_text(text)


def render_markdown(log: ParsedLog) -> str:
    s = log.summary()
    out = [
        f"## {_md_escape(s['source'])}",
        "",
        f"kind `{s['kind']}`, {s['line_counts']['total']} lines, {s['unparsed_lines']} unparsed",
        "",
    ]
    for b in s["builds"]:
        out.append(f"### build {b['index']}: {b['status']}")
        out.append("")
        out.append("| figure | value | source |")
        out.append("|---|---|---|")
        out.append(f"| toolkit | {_md_escape(b['toolkit_version'] or '—')} | log |")
        out.append(f"| librknnc | {_md_escape(b['compiler_version'] or '—')} | log |")
        for label, value, source, broken in memory_rows(b):
            note = "".join(f"<br>⚠ {_md_escape(text)}" for text in broken)
            out.append(f"| {label} | {_md_escape(value)}{note} | {_md_escape(source)} |")
        out.append("")
    out += _mcu_runs_markdown(s.get("runs", []))
    if log.findings:
        out += [
            f"### findings ({_finding_counts(log.findings)})",
            "",
            "| line | severity | rule | finding | hint |",
        ]
        out.append("|---|---|---|---|---|")
        for f in log.findings:
            out.append(
                f"| {f.line if f.line is not None else '—'} | {f.severity} | {f.code} {f.name} | "
                f"{_md_escape(f.message)} | {_md_escape(f.hint or '')} |"
            )
        out.append("")
    return "\n".join(out)
