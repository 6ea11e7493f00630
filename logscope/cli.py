"""The `logscope` command: translates arguments into library calls, renders, picks the exit code.

Exit codes: 0 parsed, 1 findings at or above --fail-on (rules engine), 2 usage, input or config error.
"""

from __future__ import annotations

import sys
from enum import Enum
from pathlib import Path

import typer
from rich.console import Console

from logscope.api import parse
from logscope.errors import LogscopeError
from logscope.model import ParsedLog
from logscope.render.frames_out import write_frames
from logscope.render.summary import render_json, render_markdown, render_text

app = typer.Typer(add_completion=False, no_args_is_help=True, help="Read NPU compiler and MCU memory logs.")


class OutputFormat(str, Enum):
    text = "text"
    json = "json"
    markdown = "markdown"


class FramesFormat(str, Enum):
    parquet = "parquet"
    csv = "csv"


def _fail(message: str) -> typer.Exit:
    Console(stderr=True, highlight=False, soft_wrap=True).print(f"logscope: error: {message}", markup=False)
    return typer.Exit(code=2)


@app.callback()
def _root() -> None:
    """logscope: what went wrong with memory, proved with the log's own lines."""


@app.command("parse")
def parse_command(
    files: list[Path] = typer.Argument(..., help="Log files (plain, .gz, .xz, .bz2)."),
    output_format: OutputFormat = typer.Option(OutputFormat.text, "--format", "-f", help="Output format."),
    frames_out: Path | None = typer.Option(None, "--frames-out", help="Write every frame to this folder."),
    frames_format: FramesFormat = typer.Option(
        FramesFormat.parquet, "--frames-format", help="parquet or csv."
    ),
) -> None:
    """Parse logs: what was built, where the memory goes, every line accounted for."""
    logs: list[ParsedLog] = []
    for path in files:
        try:
            logs.append(parse(path))
        except LogscopeError as exc:
            raise _fail(str(exc)) from None
    if frames_out is not None:
        try:
            for log in logs:
                target = frames_out if len(logs) == 1 else frames_out / Path(log.source).name
                write_frames(log, target, frames_format.value)
        except OSError as exc:
            raise _fail(f"cannot write frames to {frames_out}: {exc.strerror or exc}") from None
    if output_format is OutputFormat.json:
        sys.stdout.write(render_json(logs) + "\n")
    elif output_format is OutputFormat.markdown:
        sys.stdout.write("\n\n".join(render_markdown(log) for log in logs) + "\n")
    else:
        console = Console(highlight=False, soft_wrap=True)
        for log in logs:
            console.print(render_text(log), markup=False)


def main() -> None:
    app()


if __name__ == "__main__":
    main()
