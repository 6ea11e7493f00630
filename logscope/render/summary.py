"""Text and Markdown summaries of a parsed log; JSON is `ParsedLog.summary()` serialised."""

from __future__ import annotations

import json
from typing import Any

from logscope.model import ParsedLog


def human_bytes(value: int | None) -> str:
    """`1756160` -> `1.67 MiB (1756160 B)`: the exact figure always stays visible."""
    if value is None:
        return "—"
    size = float(value)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(size) < 1024 or unit == "GiB":
            return f"{value} B" if unit == "B" else f"{size:.2f} {unit} ({value} B)"
        size /= 1024
    return f"{value} B"


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{value * 100:.1f}%"


def render_json(logs: list[ParsedLog]) -> str:
    payload: Any = logs[0].summary() if len(logs) == 1 else [log.summary() for log in logs]
    return json.dumps(payload, indent=2, ensure_ascii=False)


def _memory_lines(build: dict[str, Any]) -> list[tuple[str, str, str]]:
    """(label, value, provenance) rows for one build's memory."""
    rows: list[tuple[str, str, str]] = []
    mem, derived, lines = build["memory"], build["derived"], build["memory_lines"]
    source = mem.get("source")

    def where(key: str) -> str:
        return f"{source} line {lines[key]}" if lines.get(key) is not None else str(source)

    for key, label in (
        ("weight_bytes", "weight"),
        ("internal_bytes", "internal (feature maps)"),
        ("activation_bytes", "activation (feature maps)"),
        ("scratch_bytes", "scratch (op internal)"),
        ("other_bytes", "other"),
        ("total_bytes", "total"),
        ("model_bytes", "model file"),
    ):
        if key == "activation_bytes" and mem.get("internal_bytes") is not None:
            continue  # same figure as RKNN's "internal"
        if mem.get(key) is not None:
            rows.append((label, human_bytes(mem[key]), where(key)))
    if mem.get("reuse_rate") is not None:
        rows.append(("reuse rate", _pct(mem["reuse_rate"]), where("reuse_rate")))
    if mem.get("peak_layer"):
        rows.append(("peak layer", str(mem["peak_layer"]), str(source)))
    if derived.get("feature_pool_bytes") is not None:
        rows.append(
            ("feature pool span", human_bytes(derived["feature_pool_bytes"]), "max(End) - min(Start)")
        )
        rows.append(("feature sum (no reuse)", human_bytes(derived["feature_sum_bytes"]), "sum(Size)"))
        rows.append(("computed reuse", _pct(derived["computed_reuse_rate"]), "1 - span / sum"))
    if derived.get("padding_bytes") is not None:
        rows.append(
            ("channel padding", human_bytes(derived["padding_bytes"]), "native - logical shape bytes")
        )
    return rows


def render_text(log: ParsedLog) -> str:
    s = log.summary()
    counts = s["line_counts"]
    out = [f"{s['source']}  [{s['kind']}]  {counts['total']} lines, {s['unparsed_lines']} unparsed"]
    if log.notes:
        out.append("  read: " + "; ".join(log.notes))
    for b in s["builds"]:
        head = f"build {b['index']} ({b['kind']}): {b['status']}"
        if b["status_reason"]:
            head += f" ({b['status_reason']})"
        versions = ", ".join(
            f"{k} {v}"
            for k, v in (
                ("toolkit", b["toolkit_version"]),
                ("librknnc", b["compiler_version"]),
                ("target", b["target_platform"]),
            )
            if v
        )
        out.append(
            f"\n{head}" + (f" — {versions}" if versions else "") + f"  lines {b['lines'][0]}-{b['lines'][1]}"
        )
        for label, value, source in _memory_lines(b):
            out.append(f"  {label:<26} {value:<28} [{source}]")
        c = b["counts"]
        out.append(
            f"  layers {c['layers']}, feature tensors {c['feature_tensors']}, "
            f"const tensors {c['const_tensors']}, fusions {c['fusions']}, "
            f"warnings {c['warnings']}, errors {c['errors']}"
        )
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
    return "\n".join(out)


def _md_escape(text: object) -> str:
    return str(text).replace("\\", "\\\\").replace("|", "\\|").replace("<", "&lt;").replace(">", "&gt;")


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
        for label, value, source in _memory_lines(b):
            out.append(f"| {label} | {_md_escape(value)} | {_md_escape(source)} |")
        out.append("")
    return "\n".join(out)
