"""The `logscope` command: translates arguments into library calls, renders, picks the exit code.

Exit codes: 0 clean, 1 a finding at or above --fail-on (default error), 2 usage, input or config error.
Every error is one line on stderr, `logscope: error: ...`; usage errors of the argument parser too
(`main` runs the app outside click's standalone mode to print them so). A command given several
files goes on past one it cannot read, names it, and exits 2 at the end.
"""

from __future__ import annotations

import gc
import os
import sys
from collections.abc import Iterable, Sequence
from enum import Enum
from itertools import chain
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from logscope.errors import LogscopeError, note_row, where_of
from logscope.inert import visible_controls
from logscope.outputs import check_outputs

if TYPE_CHECKING:  # the commands import what they use: `--help` and `rules` never load pandas or the parsers
    from logscope.model import ParsedLog
    from logscope.render.ci import LogFindings
    from logscope.rules import Config

# rich_markup_mode=None: help texts are printed as written (rich markup would eat `[tool.logscope]`).
app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
    help="Read NPU compiler and MCU memory logs.",
)

TEXT_WIDTH = 100  # text output is wrapped to this many columns


class OutputFormat(str, Enum):
    text = "text"
    json = "json"
    markdown = "markdown"


class ParseFormat(str, Enum):
    """`parse` prints summaries, or findings in the formats CI systems read."""

    text = "text"
    json = "json"
    markdown = "markdown"
    sarif = "sarif"
    github = "github"
    junit = "junit"


CI_FORMATS = ("sarif", "github", "junit")


def _write_ci_format(fmt: str, logs: list[LogFindings]) -> bool:
    """SARIF, GitHub annotations or JUnit on stdout; False when `fmt` is none of them."""
    from logscope import __version__
    from logscope.render.ci import render_github, render_junit, render_sarif
    from logscope.rules import RULES

    if fmt == "sarif":
        text = render_sarif(logs, RULES, __version__)
    elif fmt == "github":
        text = render_github(logs)
    elif fmt == "junit":
        text = render_junit(logs)
    else:
        return False
    if text:
        _out(text + "\n")
    return True


class FramesFormat(str, Enum):
    parquet = "parquet"
    csv = "csv"


class Level(str, Enum):
    info = "info"
    warning = "warning"
    error = "error"


class TextOrJson(str, Enum):
    text = "text"
    json = "json"


# --- options shared by several commands: declared once ---
ConfigOption = Annotated[
    Path | None,
    typer.Option(
        "--config",
        help="A logscope.toml, or a pyproject.toml with a [tool.logscope] table "
        "(default: the first found upward from each log, then from the working folder).",
    ),
]
SelectOption = Annotated[
    list[str] | None,
    typer.Option(
        "--select", help="Only these rules: codes, names or family prefixes (repeat or comma-separate)."
    ),
]
IgnoreOption = Annotated[
    list[str] | None, typer.Option("--ignore", help="Skip these rules (added to the config's).")
]
TargetOption = Annotated[
    str | None,
    typer.Option(
        "--target", help="Target chip for the rules' budgets and channel blocks: rk3588, rv1106, ..."
    ),
]
SramOption = Annotated[
    str | None,
    typer.Option("--sram", help="SRAM budget with a unit, e.g. 320KiB or 1MiB (a bare number is an error)."),
]
FailOnOption = Annotated[
    Level | None,
    typer.Option("--fail-on", help="Exit 1 when a finding is at least this severe (default: error)."),
]
FramesOutOption = Annotated[
    Path | None, typer.Option("--frames-out", help="Write the frames to this folder.")
]
FramesFormatOption = Annotated[FramesFormat, typer.Option("--frames-format", help="parquet or csv.")]


def _to_stderr(line: str) -> None:
    """One line on stderr, as written: no wrapping, markup or emoji codes (and no rich import)."""
    sys.stderr.write(line + "\n")
    sys.stderr.flush()


def _error(message: str) -> None:
    """One line on stderr: `logscope: error: ...` (a control character from a log shown as an escape)."""
    _to_stderr(visible_controls(f"logscope: error: {' '.join(message.split())}"))


def _out(text: str) -> None:
    """Text, JSON and Markdown output that is not wrapped: a control character from a log or a model
    is shown as an escape (`\\x1b`, `\\u009b`), never emitted to the terminal."""
    sys.stdout.write(visible_controls(text))


def _out_pieces(pieces: Iterable[str]) -> None:
    """`_out` of each piece of one output. A reader that leaves after taking part of it (`| head`)
    ends it quietly and the command exits with its own code, as when the output was one write (a
    pipe closed after the first part of a write drops the rest, and Python reports the write done);
    stdout then goes to the null device, so the exit's flush of what is buffered cannot fail. A
    reader gone before the first piece is click's broken pipe, exit 1, as it was."""
    for n, piece in enumerate(pieces):
        try:
            _out(piece)
        except BrokenPipeError:
            if not n:
                raise
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            return


def _fail(message: str) -> typer.Exit:
    _error(message)
    return typer.Exit(code=2)


def _wrote(path: Path | str) -> None:
    """Every file a command writes is announced on stderr."""
    _to_stderr(visible_controls(f"wrote {path}"))


def _echo(text: str, width: int | None = TEXT_WIDTH) -> None:
    """Text output, wrapped to `width` columns; severities coloured on a terminal only (rich honours
    NO_COLOR and TERM=dumb)."""
    from logscope.render.summary import fit

    text = visible_controls(text)
    if width is not None:
        text = fit(text, width)
    if not sys.stdout.isatty() and not os.environ.get("FORCE_COLOR") and not os.environ.get("TTY_COMPATIBLE"):
        sys.stdout.write(text if text.endswith("\n") else text + "\n")  # a pipe or file: rich not needed
        return
    from rich.console import Console

    console = Console(highlight=False, soft_wrap=True)
    if not console.is_terminal or console.no_color:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
        return
    from rich.text import Text

    styled = Text(text)
    for word, style in (("error", "bold red"), ("warning", "yellow"), ("info", "cyan")):
        styled.highlight_regex(rf"(?m)^ *{word}(?= [A-Z]{{3}}\d{{3}} )", style)  # a rule's block header
        styled.highlight_regex(rf"(?<=\d )({word})s?\b", style)  # the counts: "2 warning"
    console.print(styled)


def _config(
    path: Path | str | None,
    config_path: Path | None,
    *,
    select: list[str] | None = None,
    ignore: list[str] | None = None,
    target: str | None = None,
    sram: str | None = None,
    fail_on: Level | None = None,
) -> Config:
    """The configuration for one log: the file (explicit or found upward), then the command line."""
    from logscope.rules import resolve_config

    _RUN["input"] = path  # what an internal error names
    start = Path(path) if path is not None and str(path) != "-" else None
    return resolve_config(config_path, start).with_overrides(
        select=select, ignore=ignore, target=target, sram=sram, fail_on=fail_on.value if fail_on else None
    )


def _version(value: bool) -> None:
    if value:
        from logscope import __version__

        sys.stdout.write(f"logscope {__version__}\n")
        raise typer.Exit()


_FORCE = typer.Option(False, "--force", help="Overwrite existing output files (never one of the inputs).")


def _guard(outputs: list[Path], inputs: list[Path | None], force: bool, folders: Sequence[Path] = ()) -> None:
    """Exit 2 before writing over an input of this command, or over an existing file without --force."""
    try:
        check_outputs(outputs, inputs, folders=folders, force=force)
    except LogscopeError as exc:
        raise _fail(str(exc)) from None


# What `main` names in an internal error: the --debug flag and the input being worked on; and whether
# the command asked for what it leaves behind to be frozen for the exit (`main`).
_RUN: dict[str, Any] = {"debug": False, "input": None, "freeze_at_exit": False}


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit."),
    ] = False,
    debug: bool = typer.Option(False, "--debug", help="Show the traceback of an internal error."),
) -> None:
    """logscope: what went wrong with memory, proved with the log's own lines."""
    _RUN["debug"] = debug


@app.command("parse")
def parse_command(
    files: list[Path] = typer.Argument(
        ..., help="Log files (plain, .gz, .xz, .bz2); - reads standard input."
    ),
    output_format: ParseFormat = typer.Option(
        ParseFormat.text,
        "--format",
        "-f",
        help="text, json, markdown; or for CI: sarif (code scanning), github (annotations), junit.",
    ),
    frames_out: FramesOutOption = None,
    frames_format: FramesFormatOption = FramesFormat.parquet,
    fail_on: FailOnOption = None,
    config_path: ConfigOption = None,
    select: SelectOption = None,
    ignore: IgnoreOption = None,
    target_preset: TargetOption = None,
    sram: SramOption = None,
    max_findings: int = typer.Option(
        20, "--max-findings", help="Findings shown in text output, grouped by rule (0: all)."
    ),
    verbose: bool = typer.Option(
        False, "--verbose", "-v", help="Text: every finding and long values unwrapped."
    ),
    force: bool = _FORCE,
) -> None:
    """Parse logs and run the rules: what was built, where the memory goes, what is wrong."""
    from logscope.api import analyze
    from logscope.collector import collector_paused
    from logscope.outputs import frame_files, frame_folders
    from logscope.render.ci import LogFindings
    from logscope.render.frames_out import write_frames
    from logscope.render.summary import iter_json, render_markdown, render_text
    from logscope.rules import worst_severity

    _RUN["freeze_at_exit"] = True
    logs: list[ParsedLog] = []
    configs: list[Config] = []
    bad = 0
    for path in files:
        try:
            config = _config(
                path,
                config_path,
                select=select,
                ignore=ignore,
                target=target_preset,
                sram=sram,
                fail_on=fail_on,
            )
            logs.append(analyze(path, config))
            configs.append(config)
        except LogscopeError as exc:
            _error(str(exc))
            bad += 1
    if frames_out is not None:
        folders = frame_folders([log.source for log in logs], frames_out)
        planned = [
            f
            for log, d in zip(logs, folders, strict=True)
            for f in frame_files(d, log.frames, frames_format.value)
        ]
        _guard(planned, [*files, config_path], force, [frames_out, *folders])
        try:
            for log, folder in zip(logs, folders, strict=True):
                for written in write_frames(log, folder, frames_format.value):
                    _wrote(written)
        except OSError as exc:
            raise _fail(f"cannot write frames to {frames_out}: {exc.strerror or exc}") from None
    ci_logs = [
        LogFindings(log.source, log.findings, config.fail_on)
        for log, config in zip(logs, configs, strict=True)
    ]
    # The logs stay alive until the output is written; with the collector on, its first pass after
    # `analyze` walked every row they hold while the output was being built (half the JSON's cost on a
    # 100 MB log). An output makes no cyclic garbage.
    with collector_paused():
        if _write_ci_format(output_format.value, ci_logs) or not logs:
            pass
        elif output_format is ParseFormat.json:
            _out_pieces(chain(iter_json(logs), ["\n"]))  # the text of render_json, never whole in memory
        elif output_format is ParseFormat.markdown:
            _out("\n\n".join(render_markdown(log) for log in logs) + "\n")
        else:
            limit = None if verbose or max_findings <= 0 else max_findings
            width = None if verbose else TEXT_WIDTH
            _echo("\n\n".join(render_text(log, max_findings=limit) for log in logs), width)
    if bad:
        if len(files) > 1:
            _error(f"{bad} of {len(files)} files could not be read (above)")
        raise typer.Exit(code=2)
    failing = [
        log
        for log, config in zip(logs, configs, strict=True)
        if (worst := worst_severity(log.findings)) is not None and worst >= config.fail_on
    ]
    if failing:
        raise typer.Exit(code=1)


@app.command("rules")
def rules_command() -> None:
    """List every rule: code, name, default severity, what goes wrong."""
    from logscope.render.summary import render_rule_list
    from logscope.rules import RULES

    _echo(render_rule_list(RULES))


@app.command("explain")
def explain_command(
    rule: str = typer.Argument(..., help="A rule code (MEM001) or name (low-memory-reuse)."),
) -> None:
    """Print a rule's documentation: what it does, why it matters, an example, how to fix, options."""
    from rich.console import Console

    from logscope.rules import get_rule
    from logscope.rules.docs import explain_text

    try:
        found = get_rule(rule)
    except KeyError:
        raise _fail(f"unknown rule {rule!r} (see `logscope rules`)") from None
    text = explain_text(found)
    console = Console(highlight=False)
    if console.is_terminal:
        from rich.markdown import Markdown

        console.print(Markdown(text))
    else:
        _out(text)


# --- reference analysis: `logscope reference MODEL` and `logscope check LOG --onnx MODEL` ---


def _input_shapes(values: list[str] | None) -> dict[str | None, tuple[int, ...]]:
    from logscope.reference import parse_input_shape

    shapes: dict[str | None, tuple[int, ...]] = {}
    for value in values or []:
        name, shape = parse_input_shape(value)
        shapes[name] = shape
    return shapes


class ReferenceFormat(str, Enum):
    text = "text"
    json = "json"
    c = "c"


@app.command("reference")
def reference_command(
    model: Path = typer.Argument(..., help="An ONNX model (.onnx) or a TFLite model (.tflite)."),
    output_format: ReferenceFormat = typer.Option(
        ReferenceFormat.text, "--format", "-f", help="text, json, or c (.tflite: the kTensorArenaSize line)."
    ),
    margin: float = typer.Option(0.0, "--margin", help=".tflite: safety factor on tensor_arena (0.1: +10%)."),
    arch: str = typer.Option("x86_64", "--arch", help=".tflite: struct sizes of x86_64 or arm32 (Cortex-M)."),
    kernels: str = typer.Option(
        "reference", "--kernels", help=".tflite: scratch buffers of reference or cmsis-nn kernels."
    ),
    runtime: str = typer.Option(
        "auto", "--runtime", help="auto (.tflite: tflm, .onnx: rknn) or tflm for an ONNX model."
    ),
    target: str = typer.Option("rk3588", "--target", help="RKNN platform: rk3588, rk3576, rv1106, rk3566..."),
    toolkit: str | None = typer.Option(
        None, "--toolkit", help="rknn-toolkit2 version the sizes are learned for (default: the newest)."
    ),
    dtype: str = typer.Option("int8", "--dtype", help="Deployment dtype: int8 (int32 bias), fp16 or fp32."),
    input_shape: list[str] | None = typer.Option(
        None, "--input-shape", help="NAME=1x3x640x640 for dynamic or changed input dims (repeatable)."
    ),
    in_place: bool = typer.Option(False, "--in-place", help="Alias single-reader elementwise ops in place."),
    alignment: int = typer.Option(1, "--alignment", help="Offset alignment of the generic planners (bytes)."),
    quirk: list[str] | None = typer.Option(None, "--quirk", help="RKNN padding quirk (docs/reference.md)."),
    frames_out: FramesOutOption = None,
    frames_format: FramesFormatOption = FramesFormat.parquet,
    plot: Path | None = typer.Option(None, "--plot", help="Write the memory-over-ops curves as a PNG."),
    force: bool = _FORCE,
) -> None:
    """Memory figures of a model. ONNX: weights, MACs, lifetimes, every planner, RKNN emulation.
    .tflite: the TFLite Micro tensor_arena (head + tail), the op of the peak, every component."""
    from logscope.outputs import frame_files
    from logscope.reference.tflite_loader import is_tflite

    _RUN["input"] = model  # what an internal error names
    if runtime not in ("auto", "tflm", "rknn"):
        raise _fail(f"--runtime {runtime!r}: auto, tflm or rknn")
    tflite = is_tflite(model) or model.suffix.lower() == ".tflite"
    if tflite and runtime == "rknn":
        raise _fail("--runtime rknn needs an ONNX model; a .tflite model is predicted for TFLM")
    if tflite or runtime == "tflm":
        onnx_dtype = None if tflite else (dtype, _input_shapes(input_shape))
        _reference_tflite(
            model, output_format, margin, arch, kernels, frames_out, frames_format.value, plot, onnx_dtype
        )
        return
    if output_format is ReferenceFormat.c:
        raise _fail("--format c prints TFLM's kTensorArenaSize: it needs a .tflite model")
    from logscope.reference import ReferenceOptions, analyze_model
    from logscope.render.reference import (
        plot_reference_curves,
        render_reference_json,
        render_reference_text,
        write_reference_frames,
    )

    try:
        options = ReferenceOptions(
            dtype=dtype,
            target=target,
            input_shapes=_input_shapes(input_shape),
            in_place=in_place,
            alignment=alignment,
            quirks=frozenset(quirk or ()),
            toolkit=toolkit,
        )
        result = analyze_model(model, options)
    except LogscopeError as exc:
        raise _fail(str(exc)) from None
    planned = frame_files(frames_out, result.frames, frames_format.value) if frames_out is not None else []
    _guard([*planned, *([plot] if plot else [])], [model], force, [frames_out] if frames_out else [])
    try:
        if frames_out is not None:
            for written in write_reference_frames(result.frames, frames_out, frames_format.value):
                _wrote(written)
        if plot is not None:
            _wrote(plot_reference_curves(result, plot))
    except OSError as exc:
        raise _fail(f"cannot write output: {exc.strerror or exc}") from None
    if output_format is ReferenceFormat.json:
        _out(render_reference_json(result) + "\n")
    else:
        _echo(render_reference_text(result))


def _reference_tflite(
    model: Path,
    output_format: ReferenceFormat,
    margin: float,
    arch: str,
    kernels: str,
    frames_out: Path | None,
    frames_format: str,
    plot: Path | None,
    onnx: tuple[str, dict[str | None, tuple[int, ...]]] | None = None,
) -> None:
    from logscope.reference.tflm import TflmOptions, analyze_tflite, predict_arena
    from logscope.reference.tflm_onnx import onnx_tflm_model
    from logscope.render.reference import write_reference_frames
    from logscope.render.tflm import plot_tflm_curve, render_tflm_c, render_tflm_json, render_tflm_text

    try:
        options = TflmOptions(arch=arch, kernels=kernels, margin=margin)
        if onnx is None:
            pred = analyze_tflite(model, options)
        else:
            pred = predict_arena(onnx_tflm_model(model, onnx[0], onnx[1]), options)
            pred.notes.insert(0, "ONNX converted as the TFLite converter would (docs/reference.md)")
    except LogscopeError as exc:
        raise _fail(str(exc)) from None
    try:
        if frames_out is not None:
            write_reference_frames(pred.frames, frames_out, frames_format)
        if plot is not None:
            plot_tflm_curve(pred, plot)
    except OSError as exc:
        raise _fail(f"cannot write output: {exc.strerror or exc}") from None
    if output_format is ReferenceFormat.json:
        _out(render_tflm_json(pred) + "\n")
    elif output_format is ReferenceFormat.c:
        _out(render_tflm_c(pred))
    else:
        _echo(render_tflm_text(pred))


@app.command("check")
def check_command(
    log_file: Path = typer.Argument(..., help="An RKNN build or runtime log, or an MCU trace."),
    onnx_model: Path | None = typer.Option(None, "--onnx", help="The ONNX model an RKNN log was built from."),
    model_file: Path | None = typer.Option(
        None, "--model", help="The model: .tflite for an MCU trace (TFLM prediction), .onnx as --onnx."
    ),
    arch: str | None = typer.Option(None, "--arch", help="MCU: x86_64 or arm32 (default: from the trace)."),
    kernels: str = typer.Option("reference", "--kernels", help="MCU: reference or cmsis-nn kernels."),
    target: str | None = typer.Option(None, "--target", help="RKNN platform (default: the log's)."),
    toolkit: str | None = typer.Option(None, "--toolkit", help="rknn-toolkit2 version (default: the log's)."),
    dtype: str | None = typer.Option(None, "--dtype", help="int8, fp16 or fp32 (default: the log's)."),
    input_shape: list[str] | None = typer.Option(None, "--input-shape", help="NAME=1x3x640x640 (repeat)."),
    quirk: list[str] | None = typer.Option(None, "--quirk", help="RKNN padding quirk (docs/reference.md)."),
    build: int | None = typer.Option(None, "--build", help="Build index (default: the last with tables)."),
    output_format: TextOrJson = typer.Option(TextOrJson.text, "--format", "-f", help="text or json."),
    frames_out: FramesOutOption = None,
    frames_format: FramesFormatOption = FramesFormat.parquet,
    plot: Path | None = typer.Option(None, "--plot", help="Overlay of both memory-over-ops curves as a PNG."),
    force: bool = _FORCE,
    fail_on: FailOnOption = None,
    config_path: ConfigOption = None,
    select: SelectOption = None,
    ignore: IgnoreOption = None,
) -> None:
    """Put a log and its model side by side, then run the rules on the checked log (the REF rules judge
    the disagreements). RKNN log + ONNX: weights, pool, tensors, fusions, allocator. MCU trace + .tflite:
    allocator figures, per-op heap trace, op list and stated arena against the TFLM prediction."""
    from logscope.api import parse
    from logscope.outputs import frame_files
    from logscope.reference.tflite_loader import is_tflite
    from logscope.rules import analyze_log, worst_severity

    if onnx_model is not None and model_file is not None:
        raise _fail("give the model once: --model or --onnx")
    if model_file is not None and (is_tflite(model_file) or model_file.suffix.lower() == ".tflite"):
        rknn_only = {
            "--onnx": onnx_model,
            "--target": target,
            "--dtype": dtype,
            "--input-shape": input_shape,
            "--quirk": quirk,
            "--build": build,
        }
        given = [k for k, v in rknn_only.items() if v]
        if given:
            raise _fail(f"{', '.join(given)}: RKNN-only option(s); a .tflite model checks an MCU trace")
        _check_mcu(
            log_file, model_file, arch, kernels, output_format, plot, fail_on, config_path, select, ignore
        )
        return
    onnx_model = onnx_model or model_file
    if onnx_model is None:
        raise _fail("name the model: --model MODEL.tflite (MCU trace) or --onnx MODEL.onnx (RKNN log)")
    from logscope.reference import check_log_against_model
    from logscope.render.reference import (
        plot_check_curves,
        render_check_json,
        render_check_text,
        write_reference_frames,
    )

    try:
        config = _config(log_file, config_path, select=select, ignore=ignore, target=target, fail_on=fail_on)
        log = parse(log_file)
        if log.kind.startswith("mcu") and model_file is None:
            raise _fail(f"{log_file} is an MCU trace ({log.kind}): check it with --model MODEL.tflite|.onnx")
    except LogscopeError as exc:
        raise _fail(str(exc)) from None
    if log.kind.startswith("mcu"):
        given = [k for k, v in {"--target": target, "--quirk": quirk, "--build": build}.items() if v]
        if given:
            raise _fail(f"{', '.join(given)}: RKNN-only option(s); {log_file} is an MCU trace")
        try:
            onnx = (dtype or "int8", _input_shapes(input_shape))
        except LogscopeError as exc:
            raise _fail(str(exc)) from None
        _check_mcu(
            log_file,
            onnx_model,
            arch,
            kernels,
            output_format,
            plot,
            fail_on,
            config_path,
            select,
            ignore,
            onnx=onnx,
            parsed=log,
        )
        return
    if arch is not None or kernels != "reference":
        raise _fail("--arch and --kernels are for MCU traces checked against a .tflite or ONNX model")
    try:
        result = check_log_against_model(
            log,
            onnx_model,
            target=target,
            dtype=dtype,
            input_shapes=_input_shapes(input_shape),
            quirks=frozenset(quirk or ()),
            build_index=build,
            toolkit=toolkit,
        )
        result.attach_to(log)
        analyze_log(log, config)
    except LogscopeError as exc:
        raise _fail(str(exc)) from None
    planned = frame_files(frames_out, result.frames, frames_format.value) if frames_out is not None else []
    outputs = [*planned, *([plot] if plot else [])]
    _guard(outputs, [log_file, onnx_model, config_path], force, [frames_out] if frames_out else [])
    try:
        if frames_out is not None:
            for written in write_reference_frames(result.frames, frames_out, frames_format.value):
                _wrote(written)
        if plot is not None:
            _wrote(plot_check_curves(result, plot))
    except OSError as exc:
        raise _fail(f"cannot write output: {exc.strerror or exc}") from None
    if output_format is TextOrJson.json:
        _out(render_check_json(result, log.findings) + "\n")
    else:
        _echo(render_check_text(result, log.findings))
    worst = worst_severity(log.findings)
    if worst is not None and worst >= config.fail_on:
        raise typer.Exit(code=1)


def _check_mcu(
    log_file: Path,
    model_file: Path,
    arch: str | None,
    kernels: str,
    output_format: TextOrJson,
    plot: Path | None,
    fail_on: Level | None,
    config_path: Path | None,
    select: list[str] | None,
    ignore: list[str] | None,
    onnx: tuple[str, dict[str | None, tuple[int, ...]]] | None = None,
    parsed: ParsedLog | None = None,
) -> None:
    from logscope.api import parse
    from logscope.reference.tflite_loader import load_tflite
    from logscope.reference.tflm import TflmOptions
    from logscope.reference.tflm_check import check_trace_against_tflite
    from logscope.reference.tflm_onnx import onnx_tflm_model
    from logscope.render.tflm import plot_tflm_curve, render_mcu_check_json, render_mcu_check_text
    from logscope.rules import analyze_log, resolve_config, worst_severity

    try:
        config = resolve_config(config_path, log_file).with_overrides(
            select=select, ignore=ignore, fail_on=fail_on.value if fail_on else None
        )
        log = parsed if parsed is not None else parse(log_file)
        model = load_tflite(model_file) if onnx is None else onnx_tflm_model(model_file, *onnx)
        options = TflmOptions(arch=arch or "x86_64", kernels=kernels)
        result = check_trace_against_tflite(log, model, options, arch_given=arch is not None)
        result.attach_to(log)
        analyze_log(log, config)
    except LogscopeError as exc:
        raise _fail(str(exc)) from None
    try:
        if plot is not None:
            plot_tflm_curve(result.prediction, plot, result)
    except OSError as exc:
        raise _fail(f"cannot write output: {exc.strerror or exc}") from None
    if output_format is TextOrJson.json:
        _out(render_mcu_check_json(result, log.findings) + "\n")
    else:
        text = render_mcu_check_text(result, log.findings)
        _echo(text)
    worst = worst_severity(log.findings)
    if worst is not None and worst >= config.fail_on:
        raise typer.Exit(code=1)


# --- batch audit, trend and build diff: `logscope audit`, `logscope trend`, `logscope diff` ---


class AuditEngine(str, Enum):
    local = "local"
    dask = "dask"


class TrendFormat(str, Enum):
    text = "text"
    json = "json"
    csv = "csv"
    png = "png"


_PLOT_SUFFIXES = {".png": TrendFormat.png, ".svg": TrendFormat.png, ".pdf": TrendFormat.png}


class AuditFormat(str, Enum):
    text = "text"
    json = "json"
    sarif = "sarif"
    github = "github"
    junit = "junit"


@app.command("audit")
def audit_command(
    paths: list[str] = typer.Argument(
        ...,
        help="Log files, folders (walked recursively), globs, and object-store URLs "
        "(s3://bucket/ci/**/*.log; pip install 'logscope[s3]').",
    ),
    db: Path = typer.Option(
        Path("audit.duckdb"), "--db", help="The DuckDB audit database (created if missing)."
    ),
    jobs: int = typer.Option(1, "--jobs", "-j", help="Worker processes (1: in this process)."),
    engine: AuditEngine = typer.Option(AuditEngine.local, "--engine", help="local (process pool) or dask."),
    scheduler: str | None = typer.Option(
        None, "--scheduler", help="dask scheduler address (default: a LocalCluster of --jobs workers)."
    ),
    include: list[str] | None = typer.Option(
        None, "--include", help="File-name patterns taken from folders (default: *.log *.txt *.out *.gz ...)."
    ),
    force: bool = typer.Option(False, "--force", help="Re-audit every file, even content already stored."),
    retry_failed: bool = typer.Option(
        False, "--retry-failed", help="Re-audit files stored as rejected/error."
    ),
    rehash: bool = typer.Option(
        False, "--rehash", help="Hash every file, even with unchanged size and mtime."
    ),
    config_path: ConfigOption = None,
    select: SelectOption = None,
    ignore: IgnoreOption = None,
    target_preset: TargetOption = None,
    output_format: AuditFormat = typer.Option(
        AuditFormat.text,
        "--format",
        "-f",
        help="Summary as text or json; or every discovered file's stored findings as sarif, github, junit.",
    ),
    verbose: bool = typer.Option(
        False, "--verbose", "-v", help="A line per committed batch and failed file."
    ),
    commit_every: int = typer.Option(
        64, "--commit-every", help="Commit after this many files (or 2 s): what a kill -9 can lose."
    ),
) -> None:
    """Audit many logs into a DuckDB database: parse, run the rules, store; re-runs skip what is stored."""
    _RUN["freeze_at_exit"] = True
    if jobs > 1 and engine == AuditEngine.local:
        from logscope.pool_start import start_pool_server

        start_pool_server()  # its imports run on the other core while this process does its own
    from rich.console import Console

    from logscope.audit import DEFAULT_PATTERNS, AuditInterrupted, AuditOptions, RuleOverrides, audit
    from logscope.audit.render import BothProgress, CommitLog, RichProgress, render_audit_json, summary_table

    err = Console(stderr=True, highlight=False, soft_wrap=True)
    sinks: list[object] = []
    if err.is_terminal:
        sinks.append(RichProgress(err))
    if verbose:
        sinks.append(CommitLog(err))
    try:
        options = AuditOptions(
            jobs=jobs,
            engine=engine.value,
            scheduler=scheduler,
            config=_rules_config(config_path),
            overrides=RuleOverrides(
                select=tuple(select) if select else None,
                ignore=tuple(ignore) if ignore else None,
                target=target_preset,
            ),
            force=force,
            retry_failed=retry_failed,
            rehash=rehash,
            patterns=tuple(include) if include else DEFAULT_PATTERNS,
            batch_files=commit_every,
        )
        report = audit(paths, db, options, BothProgress(*sinks) if sinks else None)
    except AuditInterrupted as stop:
        Console(highlight=False, soft_wrap=True).print(summary_table(stop.report))
        raise typer.Exit(code=130) from None
    except LogscopeError as exc:
        raise _fail(str(exc)) from None
    if output_format.value in CI_FORMATS:
        from logscope.audit.export import stored_findings

        try:
            stored = stored_findings(db, report.paths)
        except LogscopeError as exc:
            raise _fail(str(exc)) from None
        _write_ci_format(output_format.value, stored)
    elif output_format is AuditFormat.json:
        _out(render_audit_json(report) + "\n")
    else:
        Console(highlight=False, soft_wrap=True).print(summary_table(report))


def _rules_config(path: Path | None) -> Config | None:
    """The configuration a `--config` file gives, or None (each log's own, found by the worker that
    reads it). The rules are imported only for a file given: a pool's auditing process runs none."""
    if path is None:
        return None
    from logscope.rules import resolve_config

    return resolve_config(path)


@app.command("trend")
def trend_command(
    db: Path = typer.Option(Path("audit.duckdb"), "--db", help="An audit database (logscope audit)."),
    metric: str = typer.Option("internal_bytes", "--metric", help="A build_metrics column (docs/audit.md)."),
    by: str = typer.Option(
        "model",
        "--by",
        help="Group by: model (the same layer or tensor table; the default), all (one group), "
        "target_platform, toolkit_version, path, ...",
    ),
    threshold: float = typer.Option(
        5.0, "--threshold", help="Regression: a change for the worse over PCT %."
    ),
    output: Path | None = typer.Option(None, "--output", "-o", help="Write here (.png/.svg/.pdf: the plot)."),
    output_format: TrendFormat | None = typer.Option(
        None, "--format", "-f", help="text, json, csv or png (default: from -o's suffix, else text)."
    ),
    force: bool = _FORCE,
) -> None:
    """A metric per build over time (time from the log, else file mtime), regressions marked."""
    from logscope.audit import (
        compute_trend,
        plot_trend,
        render_trend_csv,
        render_trend_json,
        render_trend_text,
    )
    from logscope.rules.config import MAX_RATIO, check_number

    fmt = output_format
    if fmt is None:
        suffix = output.suffix.lower() if output is not None else ""
        fmt = _PLOT_SUFFIXES.get(suffix) or {".json": TrendFormat.json, ".csv": TrendFormat.csv}.get(
            suffix, TrendFormat.text
        )
    if fmt is TrendFormat.png and output is None:
        raise _fail("--format png needs -o FILE.png")
    try:
        check_number(threshold, "--threshold", 0, MAX_RATIO)
        result = compute_trend(db, metric, by, threshold)
    except LogscopeError as exc:
        raise _fail(str(exc)) from None
    if output is not None:
        _guard([output], [db], force)
    try:
        if fmt is TrendFormat.png:
            assert output is not None
            plot_trend(result, output)
            _wrote(output)
            _echo(render_trend_text(result))
            return
        text = {
            TrendFormat.json: render_trend_json,
            TrendFormat.csv: render_trend_csv,
            TrendFormat.text: render_trend_text,
        }[fmt](result)
        if output is not None:
            output.write_text(
                visible_controls(text if text.endswith("\n") else text + "\n"), encoding="utf-8"
            )
            _wrote(output)
        elif fmt is TrendFormat.text:
            _echo(text)
        else:
            _out(text if text.endswith("\n") else text + "\n")
    except OSError as exc:
        raise _fail(f"cannot write {output}: {exc.strerror or exc}") from None


@app.command("diff")
def diff_command(
    old: str = typer.Argument(..., help="The old build: a log, or LOG#N for its build N (#-1: the last)."),
    new: str = typer.Argument(..., help="The new build: a log, or LOG#N (the same log: two of its builds)."),
    output_format: OutputFormat = typer.Option(OutputFormat.text, "--format", "-f", help="Output format."),
    fail_on_regression: float | None = typer.Option(
        None,
        "--fail-on-regression",
        metavar="PCT",
        help="Exit 1 when a memory figure grew by more than PCT %.",
    ),
    config_path: ConfigOption = None,
    output: Path | None = typer.Option(
        None,
        "--output",
        "-o",
        help="Also write a visual comparison: diff.html (interactive, offline) or diff.md (+ PNG).",
    ),
    force: bool = _FORCE,
) -> None:
    """Compare two builds: versions, memory, reuse, layer targets, fusions, tensor sizes, new warnings."""
    from logscope.analysis.diff import diff_builds, split_build_ref
    from logscope.api import analyze
    from logscope.render.diff import render_diff_json, render_diff_markdown, render_diff_text
    from logscope.rules.config import MAX_RATIO, check_number

    try:
        if fail_on_regression is not None:
            check_number(fail_on_regression, "--fail-on-regression", 0, MAX_RATIO)
        (old_path, old_index), (new_path, new_index) = split_build_ref(old), split_build_ref(new)
        old_log = analyze(old_path, _config(old_path, config_path))
        new_log = old_log if new_path == old_path else analyze(new_path, _config(new_path, config_path))
        diff = diff_builds(old_log, new_log, old_index, new_index)
        written = []
        if output is not None:
            from logscope.report.diffpage import write_diff

            image = output.with_name(f"{output.stem}-memory.png")  # a diff.md's plot (write_diff_markdown)
            outputs = [output, image] if output.suffix.lower() in (".md", ".markdown") else [output]
            check_outputs(outputs, [Path(old_path), Path(new_path), config_path], force=force)
            written = write_diff(old_log, new_log, diff, output, fail_on_regression)
    except LogscopeError as exc:
        raise _fail(str(exc)) from None
    except OSError as exc:
        raise _fail(f"cannot write {output}: {exc.strerror or exc}") from None
    for path in written:
        _wrote(path)
    if output_format is OutputFormat.json:
        _out(render_diff_json(diff, fail_on_regression) + "\n")
    elif output_format is OutputFormat.markdown:
        _out(render_diff_markdown(diff, fail_on_regression))
    else:
        _echo(render_diff_text(diff, fail_on_regression))
    if fail_on_regression is not None and diff.regressions(fail_on_regression):
        raise typer.Exit(code=1)


# --- plots and reports: `logscope plot FILE -k KIND -o x.png`, `logscope report FILES -o r.md` ---


class PlotKind(str, Enum):
    memory = "memory"
    address_map = "address-map"
    breakdown = "breakdown"
    fragmentation = "fragmentation"
    perf = "perf"


def _reference_for(log: ParsedLog, onnx_model: Path | None) -> Any:
    """The reference curve of `onnx_model` checked against `log`, or None without a model."""
    if onnx_model is None:
        return None
    from logscope.plots import reference_curve
    from logscope.reference import check_log_against_model

    return reference_curve(check_log_against_model(log, onnx_model))


@app.command("plot")
def plot_command(
    log_file: Path = typer.Argument(..., help="A log file."),
    kind: PlotKind = typer.Option(PlotKind.memory, "--kind", "-k", help="What to draw."),
    output: Path = typer.Option(..., "--output", "-o", help="The image to write: .png or .svg."),
    build: int | None = typer.Option(None, "--build", help="Build index (default: the last with tables)."),
    sram: SramOption = None,
    onnx_model: Path | None = typer.Option(
        None, "--onnx", help="Overlay the reference curve of this ONNX model (memory plot)."
    ),
    config_path: ConfigOption = None,
    force: bool = _FORCE,
) -> None:
    """Draw one plot of a log: memory over ops, address map, breakdown, fragmentation, per-layer time."""
    from logscope.api import parse
    from logscope.plots import plot, save_figure

    _guard([output], [log_file, onnx_model, config_path], force)
    try:
        config = _config(log_file, config_path, sram=sram)
        log = parse(log_file)
        options: dict[str, Any] = {}
        if kind in (PlotKind.memory, PlotKind.address_map, PlotKind.perf) and build is not None:
            options["build"] = build
        if kind is PlotKind.memory:
            options["budget_bytes"] = config.sram_bytes
            reference = _reference_for(log, onnx_model)
            if reference is not None and onnx_model is not None:
                options |= {"reference": reference, "reference_label": f"{onnx_model.name} (RKNN emulation)"}
        elif onnx_model is not None:
            raise _fail("--onnx overlays the memory plot only (--kind memory)")
        save_figure(plot(kind.value, log, **options), output)
    except LogscopeError as exc:
        raise _fail(str(exc)) from None
    except OSError as exc:
        raise _fail(f"cannot write {output}: {exc.strerror or exc}") from None
    _wrote(output)


@app.command("report")
def report_command(
    files: list[Path] = typer.Argument(..., help="Log files; one section each."),
    output: Path = typer.Option(..., "--output", "-o", help="report.html, report.md or report.json."),
    compact: bool = typer.Option(False, "--compact", help="Markdown of at most ~60 lines, no images."),
    static: bool = typer.Option(
        False, "--static", help="HTML with PNG plots and no script (default: interactive, still offline)."
    ),
    config_path: ConfigOption = None,
    target_preset: TargetOption = None,
    sram: SramOption = None,
    onnx_model: Path | None = typer.Option(
        None, "--onnx", help="Overlay this ONNX model's reference curve on each RKNN memory plot."
    ),
    force: bool = _FORCE,
) -> None:
    """Write a diagnosis report for a ticket: verdict, findings with lines, plots, tables, provenance."""
    from logscope.api import analyze
    from logscope.plots.data import feature_curve
    from logscope.report import build_report, report_files, report_format, write_report

    try:
        report_format(output)
        check_outputs([output], [*files, onnx_model, config_path], force=force)  # before the long part
    except LogscopeError as exc:
        raise _fail(str(exc)) from None
    logs: list[ParsedLog] = []
    references: dict[str, Any] = {}
    budget: int | None = None
    bad = 0
    for path in files:
        try:
            config = _config(path, config_path, target=target_preset, sram=sram)
            log = analyze(path, config)
            budget = budget if budget is not None else config.sram_bytes
            if onnx_model is not None and feature_curve(log) is not None:
                references[log.source] = _reference_for(log, onnx_model)
            logs.append(log)
        except LogscopeError as exc:
            _error(str(exc))
            bad += 1
    if logs:
        try:
            report = build_report(
                logs,
                budget_bytes=budget,
                references=references,
                reference_label=f"{onnx_model.name} (RKNN emulation)" if onnx_model else "reference",
            )
            check_outputs(
                report_files(report, output, compact=compact), [*files, onnx_model, config_path], force=force
            )
            for path in write_report(report, output, compact=compact, static=static):
                _wrote(path)
        except LogscopeError as exc:
            raise _fail(str(exc)) from None
        except OSError as exc:
            raise _fail(f"cannot write {output}: {exc.strerror or exc}") from None
    if bad:
        if len(files) > 1:
            _error(
                f"{bad} of {len(files)} files could not be read (above)"
                + ("; no report written" if not logs else f"; the report covers the other {len(logs)}")
            )
        raise typer.Exit(code=2)


def _is(exc: BaseException, name: str) -> bool:
    """Whether `exc` is a click exception of class `name`: typer vendors its own copy of click, so
    the classes are recognised by name, whichever copy raised them."""
    return any(cls.__name__ == name for cls in type(exc).__mro__)


def main() -> None:
    """The console script. Usage errors (unknown option, missing argument, bad choice) become one line
    `logscope: error: ...` with exit 2 instead of click's usage block.

    After `parse` and `audit`, the objects left in the process are frozen (`gc.freeze`) before it
    exits. The interpreter's exit otherwise runs full collections over every container of the loaded
    libraries (pandas, pyarrow, numpy, Lark and their caches: about 80,000) and frees those held in
    cycles (modules, classes, functions) one by one: 0.21-0.26 s of CPU after a 20 MB log and
    0.33-0.55 s after a 100 MB one (a larger heap), against 0.03-0.08 s frozen; after an audit of 40
    CI logs, 0.34-0.55 s of wall time from the store's close to the process's end, against
    0.10-0.11 s. The memory goes back with the process; objects freed by reference counting are still
    freed (their finalizers run), and the rest of the exit is Python's own: output flushed, atexit
    handlers run, the exit code as raised. What is skipped are the finalizers of objects in cycles:
    `parse` leaves none that matter (it closes each file it writes), nor does `audit` (it closes its
    store and shuts its pool down first). A caller that runs `main` and goes on keeps what it had
    when `main` ended: frozen objects are never collected."""
    _RUN["freeze_at_exit"] = False
    try:
        code = app(standalone_mode=False)
    except Exception as exc:
        if _is(exc, "NoArgsIsHelpError"):
            ctx: Any = getattr(exc, "ctx", None)
            sys.stdout.write((ctx.get_help() if ctx is not None else "") + "\n")
            raise SystemExit(2) from None
        if _is(exc, "UsageError"):
            ctx = getattr(exc, "ctx", None)
            command = ctx.command_path if ctx is not None else "logscope"
            _error(f"{exc.format_message()} (see `{command} --help`)")  # type: ignore[attr-defined]
            raise SystemExit(2) from None
        if _is(exc, "ClickException"):
            _error(exc.format_message())  # type: ignore[attr-defined]
            raise SystemExit(getattr(exc, "exit_code", 2)) from None
        if _is(exc, "Abort"):
            raise SystemExit(130) from None
        # The last line of defence: an exception logscope did not expect is a bug, reported in one line
        # (what failed, on which input and line where known) with exit 3; --debug adds the traceback.
        note_row(exc)  # outside the parsers' line loop: the frame row being worked on
        if _RUN["debug"] or "--debug" in sys.argv[1:]:
            import traceback

            traceback.print_exc()
        _to_stderr(internal_error_line(exc, _RUN["input"]))
        raise SystemExit(3) from None
    if _RUN["freeze_at_exit"]:
        gc.freeze()
    raise SystemExit(code if isinstance(code, int) else 0)


def internal_error_line(exc: BaseException, source: object) -> str:
    """`logscope: internal error: ValueError: ... (x.log:12, rule MCU003; --debug shows the traceback)`:
    the input, and the line and rule noted on the exception (`errors.note_where`: by the parser's line
    loop, the rules engine, frame building, or `errors.note_row` for the row a later stage was at) or
    the line the exception carries itself (Lark's)."""
    where_noted = where_of(exc)
    line = where_noted.get("line", getattr(exc, "line", None))
    source = where_noted.get("source", source)  # a row's own log, when the command reads several
    place = f"{source}" if source is not None else ""
    if isinstance(line, int):
        place = f"{place}:{line}" if place else f"line {line}"
    where = [place] if place else []
    if where_noted.get("rule"):
        where.append(f"rule {where_noted['rule']}")
    message = " ".join(str(exc).split())[:300] or "(no message)"
    tail = f"{', '.join(where)}; --debug shows the traceback" if where else "--debug shows the traceback"
    return visible_controls(f"logscope: internal error: {type(exc).__name__}: {message} ({tail})")


if __name__ == "__main__":
    main()
