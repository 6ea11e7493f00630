"""Diagnosis reports for bug tickets: `build_report(logs)`, then `write_report(report, path)`.

The format follows the suffix: `.html` (one self-contained page, plots inlined), `.md` (Markdown, plots
written beside it as PNG; `compact=True` for at most ~60 lines and no images) or `.json`. Content and
derivations: docs/report.md.
"""

from __future__ import annotations

from pathlib import Path

from logscope.errors import LogscopeError
from logscope.report.content import (
    REPORT_SCHEMA_VERSION,
    Headline,
    LogReport,
    PlotSpec,
    Report,
    Table,
    Verdict,
    build_report,
    verdict,
)
from logscope.report.render import (
    markdown_images,
    md_text,
    render_compact,
    render_html,
    render_json,
    render_markdown,
    report_dict,
    write_markdown,
)

FORMATS = {".html": "html", ".htm": "html", ".md": "markdown", ".markdown": "markdown", ".json": "json"}


class ReportError(LogscopeError):
    """The report cannot be written as asked (an unknown suffix, `--compact` with HTML)."""


def report_format(path: Path) -> str:
    """`html`, `markdown` or `json` from the output's suffix; anything else is a `ReportError`."""
    try:
        return FORMATS[path.suffix.lower()]
    except KeyError:
        raise ReportError(
            f"{path}: cannot tell the report format from {path.suffix or 'no suffix'!r} "
            "(use .html, .md or .json)"
        ) from None


def report_files(report: Report, path: str | Path, *, compact: bool = False) -> list[Path]:
    """Every file `write_report` writes for these arguments (the report, and a Markdown report's images)."""
    target = Path(path)
    if report_format(target) != "markdown" or compact:
        return [target]
    return [target, *markdown_images(report, target).values()]


def write_report(
    report: Report, path: str | Path, *, compact: bool = False, static: bool = False
) -> list[Path]:
    """Write the report as `path`'s suffix says; returns every file written (Markdown images too).

    HTML is interactive unless `static` (PNG plots, no script).
    """
    target = Path(path)
    fmt = report_format(target)
    if compact and fmt != "markdown":
        raise ReportError(f"{target}: --compact is a Markdown variant (use a .md output)")
    if static and fmt != "html":
        raise ReportError(f"{target}: --static is an HTML variant (use a .html output)")
    if fmt == "html":
        target.write_text(render_html(report, interactive=not static), encoding="utf-8")
        return [target]
    if fmt == "json":
        target.write_text(render_json(report) + "\n", encoding="utf-8")
        return [target]
    if compact:
        target.write_text(render_compact(report), encoding="utf-8")
        return [target]
    return write_markdown(report, target)


__all__ = [
    "FORMATS",
    "REPORT_SCHEMA_VERSION",
    "Headline",
    "LogReport",
    "PlotSpec",
    "Report",
    "ReportError",
    "Table",
    "Verdict",
    "build_report",
    "md_text",
    "render_compact",
    "render_html",
    "render_json",
    "render_markdown",
    "report_dict",
    "report_files",
    "report_format",
    "verdict",
    "write_report",
]
