"""Text, JSON and Markdown of a build-to-build diff (`logscope diff OLD NEW`)."""

from __future__ import annotations

import json
from typing import Any

from logscope.analysis.diff import DIFF_SCHEMA_VERSION, BuildDiff, FigureChange
from logscope.figures import BY_KEY, format_value
from logscope.inert import markdown_text
from logscope.render.summary import human_bytes

_TOP = 20  # rows of each list shown in text and Markdown; JSON has them all


def diff_dict(diff: BuildDiff, fail_pct: float | None = None) -> dict[str, Any]:
    """The JSON contract (`schema_version` 1); keys are never renamed."""
    regressions = diff.regressions(fail_pct) if fail_pct is not None else []
    return {
        "schema_version": DIFF_SCHEMA_VERSION,
        "old": {
            "source": diff.old.source,
            "build_index": diff.old.build_index,
            "lines": list(diff.old.lines),
        },
        "new": {
            "source": diff.new.source,
            "build_index": diff.new.build_index,
            "lines": list(diff.new.lines),
        },
        "versions": [c.to_dict() | {"changed": c.changed} for c in diff.versions],
        "settings": [c.to_dict() for c in diff.settings],
        "memory_source": {"old": diff.memory_source[0], "new": diff.memory_source[1]},
        "memory": [c.to_dict() for c in diff.memory],
        "reuse": [c.to_dict() for c in diff.reuse],
        "layers": {
            "old": diff.layer_counts[0],
            "new": diff.layer_counts[1],
            "by_target": {t: {"old": a, "new": b} for t, (a, b) in diff.target_counts.items()},
            "target_changes": diff.layer_targets,
            "added": diff.layers_added,
            "removed": diff.layers_removed,
        },
        "fusions": {
            "by_rule": [c.to_dict() for c in diff.fusion_counts],
            "gained": diff.fusions_gained,
            "lost": diff.fusions_lost,
        },
        "tensors": {
            "old": diff.tensor_counts[0],
            "new": diff.tensor_counts[1],
            "resized": diff.tensors_resized,
            "added": diff.tensors_added,
            "removed": diff.tensors_removed,
        },
        "messages": {"new": diff.messages_new, "gone": diff.messages_gone},
        "findings": (
            {"new": diff.findings_new, "gone": diff.findings_gone} if diff.findings_compared else None
        ),
        "regression_threshold_pct": fail_pct,
        "regressions": [c.to_dict() for c in regressions],
    }


def render_diff_json(diff: BuildDiff, fail_pct: float | None = None) -> str:
    return json.dumps(diff_dict(diff, fail_pct), indent=2, ensure_ascii=False, default=str)


def _label(name: str) -> str:
    """A memory figure's label from `logscope.figures`; other fields keep their name."""
    return BY_KEY[name].label if name in BY_KEY else name


def _value(name: str, value: Any) -> str:
    if name in BY_KEY:
        return format_value(name, value)
    if value is None:
        return "—"
    if name.endswith("_bytes"):
        return human_bytes(int(value))
    if name.endswith("_rate"):
        return f"{float(value) * 100:.1f}%"
    return str(value)


def _change(c: FigureChange) -> str:
    if c.delta is None:
        return ""
    pct = c.change_pct
    if c.name.endswith("_rate"):
        return f"{c.delta * 100:+.1f} points"
    sign = f"{c.delta:+,}" if isinstance(c.delta, int) else f"{c.delta:+.4g}"
    return sign + (f" B ({pct:+.1f}%)" if pct is not None and c.name.endswith("_bytes") else "")


def _side(diff: BuildDiff, which: str) -> str:
    side = diff.old if which == "old" else diff.new
    lines = side.lines
    span = f" lines {lines[0]}-{lines[1]}" if lines[0] is not None else ""
    return f"{side.source}#{side.build_index}{span}"


def render_diff_text(diff: BuildDiff, fail_pct: float | None = None) -> str:
    out = [f"old  {_side(diff, 'old')}", f"new  {_side(diff, 'new')}", ""]
    changed = diff.version_changes
    out.append("versions" + ("" if changed else ": unchanged"))
    for c in diff.versions:
        mark = "*" if c.changed else " "
        out.append(f" {mark} {c.name:24} {c.old or '—'}  ->  {c.new or '—'}")
    if diff.settings:
        out.append("compiler settings changed")
        out += [f"   {c.name:24} {c.old or '—'}  ->  {c.new or '—'}" for c in diff.settings]
    out.append("")
    src = diff.memory_source
    out.append(f"memory (source {src[0] or '—'} -> {src[1] or '—'})")
    for c in diff.memory + diff.reuse:
        out.append(
            f"   {_label(c.name):25} {_value(c.name, c.old):>24} -> {_value(c.name, c.new):>24}  {_change(c)}"
        )
    if not diff.memory and not diff.reuse:
        out.append("   no memory figures in either build")
    out.append("")
    la, lb = diff.layer_counts
    by_target = ", ".join(f"{t} {a}->{b}" for t, (a, b) in diff.target_counts.items())
    out.append(f"layers {la} -> {lb}" + (f" ({by_target})" if by_target else ""))
    for d in diff.layer_targets[:_TOP]:
        out.append(
            f"   {d['old_target']} -> {d['new_target']}  {d['layer']} ({d['op_type']}), "
            f"line {d['old_line']} -> {d['new_line']}"
        )
    out += _more(diff.layer_targets, "target changes")
    out += _names("added", diff.layers_added) + _names("removed", diff.layers_removed)
    out.append("")
    out.append(f"fusions: {len(diff.fusions_gained)} gained, {len(diff.fusions_lost)} lost")
    for c in diff.fusion_counts:
        out.append(f"   {c.name:48} {c.old} -> {c.new}")
    for label, rows in (("+", diff.fusions_gained), ("-", diff.fusions_lost)):
        for d in rows[:_TOP]:
            nodes = ", ".join(d["removed_nodes"][:3]) + (" ..." if len(d["removed_nodes"]) > 3 else "")
            out.append(f"   {label} {d['section']}/{d['rule']}" + (f" [{nodes}]" if nodes else ""))
    out.append("")
    ta, tb = diff.tensor_counts
    out.append(f"tensors {ta} -> {tb}: {len(diff.tensors_resized)} changed native size")
    for d in diff.tensors_resized[:_TOP]:
        out.append(
            f"   {d['table']:7} {d['name']}: {d['old_bytes']:,} -> {d['new_bytes']:,} B "
            f"({d['delta_bytes']:+,}) {d['old_native_shape']} -> {d['new_native_shape']}"
        )
    out += _more(diff.tensors_resized, "resized tensors")
    out += _names("added", diff.tensors_added) + _names("removed", diff.tensors_removed)
    out.append("")
    out.append(f"warnings/errors: {len(diff.messages_new)} new, {len(diff.messages_gone)} gone")
    for label, rows in (("+", diff.messages_new), ("-", diff.messages_gone)):
        for d in rows[:_TOP]:
            out.append(f"   {label} {d['level']} line {d['line']}: {_short(d['message'])}")
    if diff.findings_compared:
        out.append(f"findings: {len(diff.findings_new)} new, {len(diff.findings_gone)} gone")
        for label, rows in (("+", diff.findings_new), ("-", diff.findings_gone)):
            for d in rows[:_TOP]:
                out.append(f"   {label} {d['code']} {d['severity']}: {_short(d['message'])}")
    if fail_pct is not None:
        regs = diff.regressions(fail_pct)
        out.append("")
        if regs:
            out.append(f"REGRESSION (> {fail_pct:g}%): " + "; ".join(f"{c.name} {_change(c)}" for c in regs))
        else:
            out.append(f"no regression over {fail_pct:g}%")
    return "\n".join(out)


def _more(rows: list[Any], what: str) -> list[str]:
    return [f"   ... {len(rows) - _TOP} more {what} (--format json lists all)"] if len(rows) > _TOP else []


def _names(label: str, names: list[str]) -> list[str]:
    if not names:
        return []
    shown = ", ".join(names[:5]) + (f", ... ({len(names)} in all)" if len(names) > 5 else "")
    return [f"   {label}: {shown}"]


def _short(text: Any, width: int = 140) -> str:
    s = " ".join(str(text or "").split())
    return s if len(s) <= width else s[: width - 1] + "…"


def _md(text: Any) -> str:
    return markdown_text(text)


def render_diff_markdown(diff: BuildDiff, fail_pct: float | None = None) -> str:
    out = [f"## Build diff: {_md(_side(diff, 'old'))} → {_md(_side(diff, 'new'))}", ""]
    out += ["| field | old | new |", "|---|---|---|"]
    for c in diff.versions:
        name = f"**{c.name}**" if c.changed else c.name
        out.append(f"| {name} | {_md(c.old)} | {_md(c.new)} |")
    for c in diff.settings:
        out.append(f"| **setting {_md(c.name)}** | {_md(c.old)} | {_md(c.new)} |")
    out += ["", "### Memory", "", "| figure | old | new | change |", "|---|---|---|---|"]
    for c in diff.memory + diff.reuse:
        out.append(
            f"| {_md(_label(c.name))} | {_md(_value(c.name, c.old))} | {_md(_value(c.name, c.new))} "
            f"| {_md(_change(c))} |"
        )
    la, lb = diff.layer_counts
    out += ["", f"### Layers ({la} → {lb})", ""]
    if diff.layer_targets:
        out += ["| layer | op | old target | new target | lines |", "|---|---|---|---|---|"]
        for d in diff.layer_targets[:_TOP]:
            out.append(
                f"| {_md(d['layer'])} | {_md(d['op_type'])} | {_md(d['old_target'])} | "
                f"{_md(d['new_target'])} | {d['old_line']} → {d['new_line']} |"
            )
    else:
        out.append("No layer changed target.")
    out += ["", f"### Fusions ({len(diff.fusions_gained)} gained, {len(diff.fusions_lost)} lost)", ""]
    for label, rows in (("gained", diff.fusions_gained), ("lost", diff.fusions_lost)):
        for d in rows[:_TOP]:
            out.append(
                f"- {label}: {_md(d['section'])}/{_md(d['rule'])} {_md(', '.join(d['removed_nodes'][:3]))}"
            )
    ta, tb = diff.tensor_counts
    out += ["", f"### Tensors ({ta} → {tb}, {len(diff.tensors_resized)} resized)", ""]
    if diff.tensors_resized:
        out += ["| table | tensor | old B | new B | change | shapes |", "|---|---|---|---|---|---|"]
        for d in diff.tensors_resized[:_TOP]:
            out.append(
                f"| {d['table']} | {_md(d['name'])} | {d['old_bytes']:,} | {d['new_bytes']:,} | "
                f"{d['delta_bytes']:+,} | {_md(d['old_native_shape'])} → {_md(d['new_native_shape'])} |"
            )
    out += ["", f"### Warnings and errors ({len(diff.messages_new)} new, {len(diff.messages_gone)} gone)", ""]
    for label, rows in (("new", diff.messages_new), ("gone", diff.messages_gone)):
        for d in rows[:_TOP]:
            out.append(f"- {label} {d['level']} (line {d['line']}): {_md(_short(d['message']))}")
    if diff.findings_compared:
        out += ["", f"### Findings ({len(diff.findings_new)} new, {len(diff.findings_gone)} gone)", ""]
        for label, rows in (("new", diff.findings_new), ("gone", diff.findings_gone)):
            for d in rows[:_TOP]:
                out.append(f"- {label} {_md(d['code'])} {d['severity']}: {_md(_short(d['message']))}")
    if fail_pct is not None:
        regs = diff.regressions(fail_pct)
        out.append("")
        out.append(
            f"**Regression over {fail_pct:g}%:** " + ", ".join(f"{c.name} {_change(c)}" for c in regs)
            if regs
            else f"No regression over {fail_pct:g}%."
        )
    return "\n".join(out) + "\n"
