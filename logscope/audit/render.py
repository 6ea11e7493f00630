"""What an audit shows: a rich progress bar on a terminal, one line per commit when asked, the summary."""

from __future__ import annotations

import json
from typing import Any

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table
from rich.text import Text

from logscope.inert import visible_controls

from .runner import AuditReport
from .tasks import FileResult


class RichProgress:
    """Files done / total, rate, ETA; on a terminal only (the CLI decides)."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.bar = Progress(
            TextColumn("auditing"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[rate]:>7.1f} files/s"),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=console,
            transient=True,
        )
        self.task: TaskID | None = None

    def start(self, total: int) -> None:
        if total:
            self.bar.start()
            self.task = self.bar.add_task("audit", total=total, rate=0.0)

    def advance(self, result: FileResult) -> None:
        if self.task is None:
            return
        self.bar.advance(self.task)
        task = self.bar.tasks[0]
        elapsed = task.elapsed or 0.0
        self.bar.update(self.task, rate=task.completed / elapsed if elapsed else 0.0)

    def committed(self, files: int, total: int) -> None:
        pass

    def notice(self, text: str) -> None:
        self.console.print(visible_controls(text), markup=False)

    def close(self) -> None:
        if self.task is not None:
            self.bar.stop()
            self.task = None


class CommitLog:
    """`--verbose`: one line per committed batch and per file not audited `ok` (for CI logs, tests)."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.total = 0

    def start(self, total: int) -> None:
        self.total = total
        self.console.print(f"to audit: {total} files", markup=False)

    def advance(self, result: FileResult) -> None:
        if result.status != "ok":
            self.console.print(
                visible_controls(f"{result.status}: {result.path}: {result.error}"), markup=False
            )

    def committed(self, files: int, total: int) -> None:
        self.console.print(f"committed {files} files ({total}/{self.total})", markup=False)

    def notice(self, text: str) -> None:
        self.console.print(visible_controls(text), markup=False)

    def close(self) -> None:
        pass


class BothProgress:
    def __init__(self, *sinks: Any) -> None:
        self.sinks = sinks

    def start(self, total: int) -> None:
        for s in self.sinks:
            s.start(total)

    def advance(self, result: FileResult) -> None:
        for s in self.sinks:
            s.advance(result)

    def committed(self, files: int, total: int) -> None:
        for s in self.sinks:
            s.committed(files, total)

    def notice(self, text: str) -> None:
        for s in self.sinks[:1]:  # once, not per display
            s.notice(text)

    def close(self) -> None:
        for s in self.sinks:
            s.close()


def summary_table(report: AuditReport, max_failures: int = 10) -> Table:
    """The closing summary: what was found, skipped, audited, and what is now in the store."""
    title = "audit interrupted (re-run to resume)" if report.interrupted else "audit"
    # Paths and error messages come from files: plain Text (never rich markup), controls visible.
    table = Table(
        title=Text(visible_controls(f"{title}: {report.db}")), show_header=False, title_justify="left"
    )
    table.add_column("what", style="bold")
    table.add_column("count")
    engine = report.engine + ("" if report.engine == "dask" and report.jobs == 1 else f" x{report.jobs}")
    rows: list[tuple[str, str]] = [
        ("files found", f"{report.discovered:,}"),
        ("unchanged (skipped)", f"{report.unchanged:,}"),
        ("content already audited", f"{report.known:,}"),
        ("audited now", f"{report.audited:,} of {report.to_audit:,}"),
        ("  ok", f"{report.statuses.get('ok', 0):,}"),
        ("  rejected (not a log)", f"{report.statuses.get('rejected', 0):,}"),
        ("  error (logscope failed)", f"{report.statuses.get('error', 0):,}"),
        ("unreadable", f"{report.unreadable:,}"),
        ("builds stored", f"{report.builds:,}"),
        (
            "findings",
            ", ".join(f"{k} {v:,}" for k, v in sorted(report.findings.items())) or "0",
        ),
        ("rows", ", ".join(f"{k} {v:,}" for k, v in sorted(report.rows.items())) or "0"),
        ("engine", engine),
        ("time", f"{report.seconds:.1f} s ({report.files_per_second:.1f} files/s)"),
    ]
    if report.removed:
        rows.insert(8, ("replaced contents removed", f"{report.removed:,}"))
    if report.worker_restarts:
        rows.insert(8, ("worker restarts", f"{report.worker_restarts:,} (a worker process died)"))
    for what, count in rows:
        table.add_row(what, count)
    for path, status, error in report.failures[:max_failures]:
        table.add_row(f"  {status}", Text(visible_controls(f"{path}: {error}")))
    if len(report.failures) > max_failures:
        table.add_row(
            "  ...", f"{len(report.failures) - max_failures} more (SELECT * FROM files WHERE status <> 'ok')"
        )
    return table


def render_audit_json(report: AuditReport) -> str:
    return json.dumps({"schema_version": 1, **report.to_dict()}, indent=2)
