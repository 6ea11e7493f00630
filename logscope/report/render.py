"""Report renderers: one self-contained HTML file, GitHub/GitLab-safe Markdown (with images beside it or
`compact` without), and JSON. Everything taken from a log is escaped by the renderer that prints it.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from importlib import resources
from pathlib import Path
from typing import Any
from urllib.parse import quote

from jinja2 import Environment, StrictUndefined

from logscope.plots import PLOTS, figure_bytes
from logscope.report.content import (
    REPORT_SCHEMA_VERSION,
    LogReport,
    PlotSpec,
    Report,
    Table,
    finding_lines,
)
from logscope.report.interactive import evidence_fields, report_data, script_json

COMPACT_LINES = 60  # `--compact` Markdown fits a ticket comment or a chat message
PLOT_DPI = 90


def render_plot(file: LogReport, spec: PlotSpec, fmt: str = "png", dpi: int = PLOT_DPI) -> bytes:
    """One plot of a report, rendered (Agg for PNG) with the options the report was built with."""
    figure = PLOTS[spec.kind](file.log, **file.plot_options.get(spec.kind, {}))
    return figure_bytes(figure, fmt, dpi)


# -------------------------------------------------------------------------------------------- HTML


PLOTLY_VERSION = "4.1.1"  # logscope/report/static/plotly-basic.min.js (plotly.js-basic-dist-min, MIT)


def render_html(report: Report, *, dpi: int = PLOT_DPI, interactive: bool = True) -> str:
    """One self-contained HTML page that makes no network request.

    Interactive (the default): memory over ops and the address map drawn with plotly.js, inlined,
    zoomable, with hover and a click-through to each layer's tensors, perf row and log lines, and
    the findings grouped by rule and build with filters. `interactive=False` is the static page with
    the plots as PNG and no script at all.

    Jinja2 autoescaping is on for every value; log text reaches the script only as JSON string values
    inside a non-executable `<script type="application/json">`, and the script inserts text with
    `textContent`. The Content-Security-Policy allows no network access and only the page's own
    scripts, by their SHA-256, as a second line of defence should a log ever smuggle markup through.
    """
    environment = Environment(
        autoescape=True, undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True
    )
    template_text = resources.files("logscope.report").joinpath("templates/report.html.j2").read_text("utf-8")
    template = environment.from_string(template_text)
    figures = (
        [[] for _ in report.files]
        if interactive
        else [
            [
                (spec, base64.b64encode(render_plot(file, spec, "png", dpi)).decode("ascii"))
                for spec in file.plots
            ]
            for file in report.files
        ]
    )
    title = report.files[0].name if len(report.files) == 1 else f"{len(report.files)} files"
    scripts = page_scripts(report_data(report)) if interactive else {}
    return template.render(
        report=report,
        figures=figures,
        title=title,
        evidence=evidence_fields,
        lines=finding_lines,
        interactive=interactive,
        css=report_css(),
        compare=_compare_rows(report) if len(report.files) > 1 else [],
        **scripts,
    )


def report_css() -> str:
    """The style sheet the report and the diff page share (inlined: the CSP allows inline styles)."""
    return resources.files("logscope.report").joinpath("templates/report.css").read_text("utf-8")


def page_scripts(data: Any) -> dict[str, str]:
    """What an interactive page inlines: its data as JSON (inert), plotly.js, the page script, and the
    CSP `script-src` value that allows exactly those two scripts by their SHA-256."""
    static = resources.files("logscope.report").joinpath("static")
    scripts = {
        "data_json": script_json(data),
        "plotly_js": static.joinpath("plotly-basic.min.js").read_text("utf-8"),
        "app_js": static.joinpath("report.js").read_text("utf-8"),
    }
    hashes = " ".join(
        f"'sha256-{base64.b64encode(hashlib.sha256(scripts[key].encode()).digest()).decode()}'"
        for key in ("plotly_js", "app_js")
    )
    return scripts | {"script_hashes": hashes, "plotly_version": PLOTLY_VERSION}


def _compare_rows(report: Report) -> list[tuple[str, list[str]]]:
    """The headline figures of every file side by side: one row per label, "—" where a file has none."""
    labels: list[str] = []
    for file in report.files:
        labels += [h.label for h in file.headline if h.label not in labels]
    return [
        (label, [next((h.value for h in f.headline if h.label == label), "—") for f in report.files])
        for label in labels
    ]


# ---------------------------------------------------------------------------------------- Markdown

_MD_SPECIAL = re.compile(r"([\\`*_\[\]~])")


def md_text(value: Any) -> str:
    """Text from a log made inert in Markdown (GitHub, GitLab, Jira's Markdown): HTML characters as
    entities, Markdown punctuation backslash-escaped, `|` as `&#124;` so it can never split a table
    cell, line breaks flattened."""
    if value is None:
        return "—"
    text = " ".join(str(value).split())
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("|", "&#124;")
    return _MD_SPECIAL.sub(r"\\\1", text)


def _md_table(columns: tuple[str, ...] | list[str], rows: Any) -> list[str]:
    out = ["| " + " | ".join(md_text(c) for c in columns) + " |", "|" + "---|" * len(columns)]
    for row in rows:
        out.append("| " + " | ".join(md_text(v) for v in row) + " |")
    return out


def render_markdown(report: Report, *, image_names: dict[tuple[int, str], str] | None = None) -> str:
    """The full Markdown report. `image_names` maps (file number, plot kind) to the image file written
    beside the report; plots without one are left out."""
    images = image_names or {}
    out = ["# logscope report", "", f"logscope {md_text(report.version)} · {len(report.files)} file(s)", ""]
    if len(report.files) > 1:
        out += [f"**{report.verdict.level.upper()}** {md_text(report.verdict.text)}", ""]
        out += _md_table(
            ("file", "verdict", "findings"),
            [(f.name, f.verdict.level, len(f.findings)) for f in report.files],
        )
        out.append("")
    for number, file in enumerate(report.files, 1):
        out += [
            f"## {md_text(file.name)}",
            "",
            f"**{file.verdict.level.upper()}** {md_text(file.verdict.text)}",
            "",
        ]
        if file.headline:
            out += _md_table(
                ("figure", "value", "from"), [(h.label, h.value, h.where) for h in file.headline]
            )
            out.append("")
        if file.findings:
            out += ["### Findings", ""]
            for i, finding in enumerate(file.top_findings, 1):
                severity = finding.severity.name if finding.severity else ""
                out.append(
                    f"{i}. **{md_text(severity)} {md_text(finding.code)} {md_text(finding.name)}** "
                    f"(line {md_text(finding_lines(finding))}): {md_text(finding.message)}"
                )
                if finding.evidence:
                    evidence = "; ".join(f"{k}: {v}" for k, v in evidence_fields(finding.evidence, 100))
                    out.append(f"   - evidence: {md_text(evidence)}")
                if finding.hint:
                    out.append(f"   - hint: {md_text(finding.hint)}")
            if len(file.findings) > len(file.top_findings):
                out += ["", f"All {len(file.findings)} findings:", ""]
                out += _md_table(
                    ("line", "severity", "rule", "finding"),
                    [
                        (
                            finding_lines(f),
                            f.severity.name if f.severity else "",
                            f"{f.code} {f.name}",
                            f.message,
                        )
                        for f in file.findings
                    ],
                )
            out.append("")
        shown = [p for p in file.plots if (number, p.kind) in images]
        if shown:
            out += ["### Plots", ""]
            for spec in shown:
                target = quote(images[(number, spec.kind)])
                out += [
                    f"![{md_text(spec.title)}]({target})",
                    "",
                    f"*{md_text(spec.title)}.* {md_text(spec.caption)} Drawn from {md_text(spec.lines)}.",
                    "",
                ]
        if file.tables:
            out += ["### Tables", ""]
            for table in file.tables:
                out += [f"#### {md_text(table.title)}", ""]
                out += _md_table(table.columns, table.rows)
                if table.note:
                    out += ["", f"_{md_text(table.note)}_"]
                out.append("")
        out += ["### Provenance", ""]
        out += _md_table(("", ""), file.provenance)
        out.append("")
    return "\n".join(out)


def render_compact(report: Report, limit: int = COMPACT_LINES) -> str:
    """At most `limit` lines, no images, for a ticket comment or a chat message: per file the verdict,
    the key figures and the top findings; with more than two files, one table row per file."""
    out = [f"**logscope {md_text(report.version)}**: {md_text(report.verdict.text)}", ""]
    if len(report.files) > 2:
        out += _md_table(("file", "verdict", "findings", "most severe"), [])
        room = limit - len(out) - 1
        order = ["error", "warning", "info", "ok"]
        ranked = sorted(report.files, key=lambda f: order.index(f.verdict.level))  # stable: worst first
        for file in ranked[:room]:
            top = file.top_findings[0] if file.top_findings else None
            first = f"{top.code} line {finding_lines(top)}: {_cut(top.message, 110)}" if top else "—"
            out.append(
                "| "
                + " | ".join(md_text(v) for v in (file.name, file.verdict.level, len(file.findings), first))
                + " |"
            )
        if len(report.files) > room:
            out.append(f"… {len(report.files) - room} more files (`logscope report FILE... -o report.md`)")
        return "\n".join(out[:limit]) + "\n"
    per_file = (limit - len(out)) // len(report.files)
    for file in report.files:
        block = [
            f"**{md_text(file.name)}** — **{file.verdict.level.upper()}** "
            f"{md_text(_cut(file.verdict.text, 240))}"
        ]
        figures = sorted(
            (h for h in file.headline if h.bytes is not None or h.label.startswith("build")),
            key=lambda h: 0 if "OVER" in h.label else 1 if "peak" in h.label else 2,
        )[:6]
        if figures:
            block += [
                "",
                *_md_table(
                    ("figure", "value", "from"), [(h.label, h.value, _cut(h.where, 80)) for h in figures]
                ),
            ]
        if file.findings:
            block.append("")
            for finding in file.top_findings[:4]:
                severity = finding.severity.name if finding.severity else ""
                block.append(
                    f"- {md_text(severity)} {md_text(finding.code)} line {md_text(finding_lines(finding))}: "
                    f"{md_text(_cut(finding.message, 200))}"
                )
            if len(file.findings) > 4:
                block.append(f"- … {len(file.findings) - 4} more findings")
        if file.log.sha256:
            block.append(f"- sha256 `{file.log.sha256[:16]}…`, logscope {md_text(report.version)}")
        out += [*block[: per_file - 1], ""]
    return "\n".join(out[:limit]).rstrip("\n") + "\n"


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


# -------------------------------------------------------------------------------------------- JSON


def report_dict(report: Report) -> dict[str, Any]:
    """The JSON report: a `schema_version`, then per file the verdict, figures, findings, plots (what
    each shows and its lines, not the images), tables, provenance and the `logscope parse` summary."""
    return {
        "schema_version": REPORT_SCHEMA_VERSION,
        "logscope_version": report.version,
        "verdict": {"level": report.verdict.level, "text": report.verdict.text},
        "files": [
            {
                "source": file.log.source,
                "sha256": file.log.sha256,
                "size_bytes": file.log.size_bytes,
                "kind": file.log.kind,
                "verdict": {"level": file.verdict.level, "text": file.verdict.text},
                "headline": [
                    {"label": h.label, "value": h.value, "bytes": h.bytes, "from": h.where}
                    for h in file.headline
                ],
                "findings": [f.to_dict() for f in file.findings],
                "plots": [
                    {
                        "kind": p.kind,
                        "title": p.title,
                        "caption": p.caption,
                        "lines": p.lines,
                        "facts": p.facts,
                    }
                    for p in file.plots
                ],
                "tables": [_table_dict(t) for t in file.tables],
                "provenance": dict(file.provenance),
                "summary": file.log.summary(),
            }
            for file in report.files
        ],
    }


def render_json(report: Report) -> str:
    return json.dumps(report_dict(report), indent=2, ensure_ascii=False, default=str)


def _table_dict(table: Table) -> dict[str, Any]:
    return {
        "key": table.key,
        "title": table.title,
        "columns": list(table.columns),
        "rows": [list(row) for row in table.rows],
        "note": table.note,
    }


# ------------------------------------------------------------------------------------------ writing


def markdown_images(report: Report, path: Path) -> dict[tuple[int, str], Path]:
    """The images a Markdown report writes beside `path`, by (file number, plot kind)."""
    return {
        (number, spec.kind): path.with_name(f"{path.stem}-{number}-{spec.kind}.png")
        for number, file in enumerate(report.files, 1)
        for spec in file.plots
    }


def write_markdown(report: Report, path: Path, *, dpi: int = PLOT_DPI) -> list[Path]:
    """`path` and its images beside it (`<stem>-<file number>-<kind>.png`); returns every path written."""
    written: list[Path] = []
    names: dict[tuple[int, str], str] = {}
    images = markdown_images(report, path)
    for number, file in enumerate(report.files, 1):
        for spec in file.plots:
            image = images[(number, spec.kind)]
            image.write_bytes(render_plot(file, spec, "png", dpi))
            names[(number, spec.kind)] = image.name
            written.append(image)
    path.write_text(render_markdown(report, image_names=names), encoding="utf-8")
    return [path, *written]
