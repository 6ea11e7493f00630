"""The `logscope` command as a user runs it: a real process, its stdout, stderr and exit code.

CliRunner calls the typer app inside pytest; usage errors, standard input, colours and the
one-line error contract only show in a separate process running `python -m logscope`.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import FIXTURES, MOBILENET, RKNN, ROOT

R29 = RKNN / "29-doc-rknpu2-sram-runtime-log-level3-rk3588.log"
MCU = FIXTURES / "mcu" / "29-tflm-recording-allocator-stm32f413-samsung-one-issue7598-partial.txt"
ANSI = re.compile(r"\x1b\[")


def run(*args: str, stdin: bytes | None = None, env: dict[str, str] | None = None, cwd: Path | None = None):
    base = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "NO_COLOR", "TTY_COMPATIBLE")}
    base["PYTHONPATH"] = str(ROOT)
    return subprocess.run(
        [sys.executable, "-m", "logscope", *args],
        input=stdin,
        capture_output=True,
        env=base | (env or {}),
        cwd=cwd or ROOT,
        timeout=300,
    )


def _one_error_line(result: subprocess.CompletedProcess[bytes]) -> str:
    err = result.stderr.decode()
    assert result.returncode == 2, (result.returncode, err)
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("logscope: error: "), err
    assert "Usage:" not in err and "╭" not in err and "Traceback" not in err
    return lines[0]


def test_version() -> None:
    result = run("--version")
    assert result.returncode == 0 and re.fullmatch(rb"logscope \d+\.\d+\.\d+\S*\n", result.stdout)


@pytest.mark.parametrize(
    "args, says",
    [
        (["parse", "--bogus", str(MOBILENET)], "No such option: --bogus"),
        (["parse"], "Missing argument"),
        (["parse", "-f", "xml", str(MOBILENET)], "'xml' is not one of"),
        (["bogus"], "No such command 'bogus'"),
        (["explain"], "Missing argument"),
        (["plot", str(MOBILENET)], "Missing option '--output'"),
        (["parse", "--sram", "320", str(MOBILENET)], "320KiB"),
        (["parse", "--target", "rk9999", str(MOBILENET)], "unknown target"),
    ],
)
def test_usage_errors_are_one_line(args: list[str], says: str) -> None:
    assert says in _one_error_line(run(*args))


def test_empty_and_non_log_input_exit_2(tmp_path: Path) -> None:
    empty = tmp_path / "empty.log"
    empty.write_bytes(b"")
    blank = tmp_path / "blank.log"
    blank.write_bytes(b"\n\n  \n")
    prose = tmp_path / "prose.txt"
    prose.write_text("Dear diary, today nothing was compiled.\n")
    result = run("parse", str(empty), str(blank), str(prose))
    assert result.returncode == 2 and result.stdout == b""
    assert result.stderr.decode().splitlines() == [
        f"logscope: error: {empty}: empty (no line to read)",
        f"logscope: error: {blank}: empty (no line to read)",
        f"logscope: error: {prose}: neither an RKNN-Toolkit or RKNN runtime log nor MCU memory output: "
        "none of the first 1 non-blank lines is evidence for either; closest to an RKNN-Toolkit or RKNN "
        "runtime log: nothing; to MCU memory output: nothing",
        "logscope: error: 3 of 3 files could not be read (above)",
    ]
    assert "empty" in _one_error_line(run("parse", "-", stdin=b""))


def test_dash_reads_standard_input() -> None:
    result = run("parse", "-", "-f", "json", stdin=R29.read_bytes())
    assert result.returncode == 0, result.stderr
    import json

    data = json.loads(result.stdout)
    assert data["source"] == "<stdin>" and data["builds"][0]["derived"]["feature_pool_bytes"] == 2157568


def test_parse_goes_on_past_a_bad_file_and_exits_2(tmp_path: Path) -> None:
    missing = tmp_path / "missing.log"
    result = run("parse", str(missing), str(R29))
    assert result.returncode == 2
    assert "feature pool span          2.06 MiB (2157568 B)" in result.stdout.decode()  # the good file
    err = result.stderr.decode().splitlines()
    assert err[0] == f"logscope: error: {missing}: no such file"
    assert err[-1] == "logscope: error: 1 of 2 files could not be read (above)"


def test_report_goes_on_past_a_bad_file(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    result = run("report", str(tmp_path / "nope.log"), str(R29), "-o", str(out))
    assert result.returncode == 2 and out.is_file()
    err = result.stderr.decode()
    assert f"wrote {out}" in err and "nope.log: no such file" in err
    assert "the report covers the other 1" in err


def test_help_keeps_brackets() -> None:
    result = run("parse", "--help")
    assert result.returncode == 0 and b"[tool.logscope]" in result.stdout


def test_explain_is_rendered_on_a_terminal_and_plain_when_piped() -> None:
    piped = run("explain", "MEM002").stdout.decode()
    assert "## What it does" in piped
    terminal = run("explain", "MEM002", env={"FORCE_COLOR": "1", "COLUMNS": "100"}).stdout.decode()
    assert "What it does" in terminal and "## What it does" not in terminal


def test_colours_on_a_terminal_only() -> None:
    assert not ANSI.search(run("parse", str(R29)).stdout.decode())
    coloured = run("parse", str(R29), env={"FORCE_COLOR": "1", "TERM": "xterm-256color"}).stdout.decode()
    assert ANSI.search(coloured)
    no_color = {"FORCE_COLOR": "1", "TERM": "xterm-256color", "NO_COLOR": "1"}
    assert not ANSI.search(run("parse", str(R29), env=no_color).stdout.decode())


@pytest.fixture(scope="module")
def big_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    sys.path.insert(0, str(ROOT))
    from benchmarks.generate import generate_log

    path = tmp_path_factory.mktemp("gen") / "gen.log"
    generate_log(path, builds=2, seed=3)
    return path


def test_text_fits_100_columns_and_findings_are_grouped(big_log: Path) -> None:
    every = run("parse", str(MOBILENET), str(R29), str(MCU), str(big_log), "--max-findings", "0")
    text = every.stdout.decode()
    assert max(len(line) for line in text.splitlines()) <= 100
    import logscope

    count = len(logscope.analyze(big_log).findings)
    big = text.split(f"{big_log}  [", 1)[1]
    assert len(re.findall(r"^    (line \d+|no line): ", big, re.MULTILINE)) == count  # 0: all shown
    text = run("parse", str(big_log), "--max-findings", "5").stdout.decode()
    headers = re.findall(r"^  (error|warning|info) ([A-Z]{3}\d{3}) ", text, re.MULTILINE)
    assert len(headers) == len({code for _, code in headers})  # one block per rule
    assert len(re.findall(r"^    line \d+: ", text, re.MULTILINE)) == 5
    flat = " ".join(text.split())
    assert re.search(r"more findings not shown \(.*\): --max-findings 0 or --format json for all", flat)
    for code in {code for _, code in headers}:
        block = text.split(f" {code} ", 1)[1].split("\n  ", 1)[0]
        assert block.count("hint:") <= 1


def test_every_written_file_is_announced(tmp_path: Path) -> None:
    png = tmp_path / "m.png"
    result = run("plot", str(R29), "-o", str(png))
    assert result.returncode == 0 and result.stderr.decode() == f"wrote {png}\n"
    frames = tmp_path / "frames"
    result = run("parse", str(R29), "--frames-out", str(frames), "--frames-format", "csv")
    wrote = [line for line in result.stderr.decode().splitlines() if line.startswith("wrote ")]
    assert sorted(wrote) == sorted(f"wrote {p}" for p in frames.iterdir())
    db = tmp_path / "a.duckdb"
    assert run("audit", str(R29), str(MOBILENET), "--db", str(db)).returncode == 0
    csv = tmp_path / "trend.csv"
    result = run("trend", "--db", str(db), "-o", str(csv))
    assert result.returncode == 0 and f"wrote {csv}" in result.stderr.decode() and csv.is_file()


def test_check_on_an_mcu_trace_with_an_rknn_option_says_how_to_check_it(tmp_path: Path) -> None:
    """`--onnx` asks for the RKNN emulation; an MCU trace is checked with `--model` (TFLM prediction)."""
    line = _one_error_line(run("check", str(MCU), "--onnx", str(tmp_path / "model.onnx")))
    assert "is an MCU trace" in line and "--model MODEL.tflite|.onnx" in line


def test_targets_of_logs_that_parse_are_accepted() -> None:
    rv1126 = RKNN / "25-issue-rl-tk1-388-eval-perf-wrapped-names-rv1126.log"
    result = run("parse", str(rv1126), "--target", "rv1126")
    assert result.returncode in (0, 1), result.stderr


def test_a_reader_that_leaves_part_way_ends_the_json_quietly(tmp_path: Path) -> None:
    """`parse --format json BIG | head`: the JSON is written in pieces, and a reader that leaves after
    the first ends the output without an error and with the command's own exit code (0 here), as
    when it was one write; a reader gone before any output is a broken pipe, exit 1."""
    log = tmp_path / "many-builds.log"
    log.write_text(MOBILENET.read_text() * 40)  # about 360 KB of JSON: several pieces
    base = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "NO_COLOR", "TTY_COMPATIBLE")}
    command = [sys.executable, "-m", "logscope", "parse", "--format", "json", str(log)]
    for take, code in ((100, 0), (0, 1)):
        proc = subprocess.Popen(
            command,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=base | {"PYTHONPATH": str(ROOT)},
            cwd=ROOT,
        )
        assert proc.stdout is not None and proc.stderr is not None
        if take:
            assert proc.stdout.read(take).startswith(b"{\n")
        proc.stdout.close()
        err = proc.stderr.read()
        assert (proc.wait(timeout=300), err) == (code, b"")
