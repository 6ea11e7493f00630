"""The CLI's last line of defence: an unexpected exception is one line and exit 3, never a traceback box."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import logscope.api as api
import logscope.cli as cli
from tests.conftest import MOBILENET

LOG = (
    Path(__file__).resolve().parent.parent / "fixtures" / "rknn" / "01-runtime-verbose-conv2d-rk3588-232.log"
)


def _explode(path: object) -> None:
    raise ValueError("cannot convert float NaN to integer\n  (second line)")


def _main(monkeypatch: pytest.MonkeyPatch, *args: str) -> int:
    monkeypatch.setattr(sys, "argv", ["logscope", *args])
    monkeypatch.setattr(api, "analyze", lambda path, *args, **kwargs: _explode(path))
    monkeypatch.setitem(cli._RUN, "debug", False)
    with pytest.raises(SystemExit) as stop:
        cli.main()
    return int(stop.value.code or 0)


def test_internal_error_is_one_line_exit_3(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _main(monkeypatch, "parse", str(LOG)) == 3
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert err.startswith(
        "logscope: internal error: ValueError: cannot convert float NaN to integer (second line)"
    )
    assert f"({LOG}; --debug" in err and "Traceback" not in err


def test_debug_shows_the_traceback(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _main(monkeypatch, "--debug", "parse", str(LOG)) == 3
    err = capsys.readouterr().err
    assert "Traceback (most recent call last)" in err and "_explode" in err
    assert err.rstrip().splitlines()[-1].startswith("logscope: internal error: ValueError")


def test_line_number_when_the_exception_knows_it() -> None:
    exc = RuntimeError("bad")
    exc.line = 12  # type: ignore[attr-defined]
    assert cli.internal_error_line(exc, "x.log") == (
        "logscope: internal error: RuntimeError: bad (x.log:12; --debug shows the traceback)"
    )


def _inject(monkeypatch: pytest.MonkeyPatch, cls: type, method: str, at_line: int) -> None:
    """Make `cls.method` (a handler called with the line number last) fail on line `at_line`."""
    original = getattr(cls, method)

    def failing(self: object, *args: object) -> object:
        if args[-1] == at_line:
            raise KeyError("injected")
        return original(self, *args)

    monkeypatch.setattr(cls, method, failing)


def _run(monkeypatch: pytest.MonkeyPatch, *args: str) -> int:
    monkeypatch.setattr(sys, "argv", ["logscope", *args])
    monkeypatch.setitem(cli._RUN, "debug", False)
    with pytest.raises(SystemExit) as stop:
        cli.main()
    return int(stop.value.code or 0)


def test_a_parser_failure_names_file_and_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A handler failing on line 6 of an RKNN log: the one line says `FILE:6`."""
    from logscope.parsers.rknn.assembler import RknnAssembler

    _inject(monkeypatch, RknnAssembler, "feed", 6)
    assert _run(monkeypatch, "parse", str(LOG)) == 3
    err = capsys.readouterr().err
    assert err == f"logscope: internal error: KeyError: 'injected' ({LOG}:6; --debug shows the traceback)\n"


def test_an_mcu_heap_row_failure_names_its_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """The MCU parser's fast path for heap lines (a different loop) names the line too, and --debug
    shows the traceback with the line as a note."""
    from logscope.parsers.mcu.heaptrace import HeapTrace

    trace = LOG.parent.parent / "synthetic" / "heap-trace-issue-example.txt"
    lines = trace.read_text().splitlines()
    target = next(i + 1 for i, line in enumerate(lines) if line.startswith("Op[2]"))
    _inject(monkeypatch, HeapTrace, "heap_row", target)
    assert _run(monkeypatch, "--debug", "report", str(trace), "-o", str(tmp_path / "r.md")) == 3
    err = capsys.readouterr().err
    assert f"logscope: while at input line {target}" in err and "Traceback" in err
    assert err.rstrip().splitlines()[-1] == (
        f"logscope: internal error: KeyError: 'injected' ({trace}:{target}; --debug shows the traceback)"
    )


def test_a_rule_failure_names_the_rule(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """An exception inside a rule: the input and the rule's code (a rule has no one line)."""
    import dataclasses

    import logscope.rules.config as rules_config
    from logscope.api import parse
    from logscope.rules.engine import applicable

    log = parse(LOG)
    code = next(r.code for r in rules_config.Config().enabled_rules() if applicable(r, log))

    def failing(log: object, options: object) -> object:
        raise ZeroDivisionError("injected")

    broken = tuple(dataclasses.replace(r, check=failing) if r.code == code else r for r in rules_config.RULES)
    monkeypatch.setattr(rules_config, "RULES", broken)
    assert _run(monkeypatch, "parse", str(LOG)) == 3
    err = capsys.readouterr().err
    assert err == (
        f"logscope: internal error: ZeroDivisionError: injected ({LOG}, rule {code}; "
        "--debug shows the traceback)\n"
    )


def test_no_rich_traceback_box_in_a_real_process(tmp_path: Path) -> None:
    """A real subprocess: typer's pretty exceptions are off, so no box even when main is bypassed."""
    assert cli.app.pretty_exceptions_enable is False
    result = subprocess.run(
        [sys.executable, "-m", "logscope", "parse", str(tmp_path / "missing.log")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and "╭" not in result.stderr


def test_a_model_failure_names_the_model(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`reference` on a .tflite model: an unexpected exception names the model file."""
    import importlib

    tflm = importlib.import_module("logscope.reference.tflm")
    model = LOG.parent.parent / "tflm-corpus" / "conv_chain_float.tflite"

    def failing(path: object, options: object) -> object:
        raise OverflowError("injected")

    monkeypatch.setattr(tflm, "analyze_tflite", failing)
    assert _run(monkeypatch, "reference", str(model)) == 3
    assert capsys.readouterr().err == (
        f"logscope: internal error: OverflowError: injected ({model}; --debug shows the traceback)\n"
    )


def test_a_frame_build_failure_names_the_row_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Building a frame fails on one row's cell (the const tensor `conv.weight`, line 21): the row is
    found after the failure and the one line says `FILE:21`."""
    import logscope.frames as frames
    from logscope.parsers.rknn.tensor_rows import TensorRows

    original = frames._typed_array
    original_rows = frames._arrow_rows
    original_columns = TensorRows._arrow_columns

    def failing(values: list[object], dtype: str) -> object:
        if "conv.weight" in values:
            raise KeyError("injected")
        return original(values, dtype)

    def failing_rows(name: str, table: list[tuple[object, ...]], columns: list[str]) -> object:
        # (the cell fails the whole-table conversion too, which then leaves it to the columns)
        return None if any("conv.weight" in row for row in table) else original_rows(name, table, columns)

    def failing_columns(rows: TensorRows) -> object:
        # (and the tensor table's column conversion, which then sends it to the per-row reading)
        return None if any("conv.weight" in row for row in rows) else original_columns(rows)

    monkeypatch.setattr(frames, "_typed_array", failing)
    monkeypatch.setattr(frames, "_arrow_rows", failing_rows)
    monkeypatch.setattr(TensorRows, "_arrow_columns", failing_columns)
    assert _run(monkeypatch, "parse", str(LOG)) == 3
    assert capsys.readouterr().err == (
        f"logscope: internal error: KeyError: 'injected' ({LOG}:21; --debug shows the traceback)\n"
    )


def test_a_derivation_failure_names_the_row_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The MCU live-buffer curve fails while it reads the second ST Edge AI layer row: `FILE:LINE` of
    that row, though no parser loop is running any more."""
    import logscope.analysis.mcu as mcu
    from logscope.api import parse

    trace = LOG.parent.parent / "mcu" / "11-stedgeai-v1-analyze-report-mnist-h750.txt"
    layers = parse(trace).frames["mcu_layers"]
    row = layers[layers["source"] == "st-c-layer"].iloc[1]
    original = mcu._key

    def failing(value: object) -> int:
        if value == row["layer_index"]:
            raise KeyError("injected")
        return original(value)

    monkeypatch.setattr(mcu, "_key", failing)
    assert _run(monkeypatch, "parse", str(trace)) == 3
    assert capsys.readouterr().err == (
        f"logscope: internal error: KeyError: 'injected' ({trace}:{row['line']}; "
        "--debug shows the traceback)\n"
    )


class _Unprintable:
    """A finding message that fails when rendered (a renderer bug stands in for it)."""

    def __format__(self, spec: str) -> str:
        raise ValueError("injected")

    def __lt__(self, other: object) -> bool:
        return False


def test_a_rendering_failure_names_the_finding_s_line_and_its_log(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Rendering the text summary fails on a finding of line 9 of the first of two logs: the one line
    names that log and line, not the last file the command read."""
    import dataclasses

    import logscope.rules.config as rules_config
    from logscope.api import parse
    from logscope.rules.engine import applicable
    from logscope.rules.finding import Finding

    log = parse(LOG)
    code = next(r.code for r in rules_config.Config().enabled_rules() if applicable(r, log))

    def finding(log: object, options: object) -> object:
        if str(getattr(log, "source", "")) == str(LOG):
            yield Finding(message=_Unprintable(), line=9)  # type: ignore[arg-type]

    broken = tuple(dataclasses.replace(r, check=finding) if r.code == code else r for r in rules_config.RULES)
    monkeypatch.setattr(rules_config, "RULES", broken)
    other = tmp_path / "copy.log"
    other.write_bytes(LOG.read_bytes())
    assert _run(monkeypatch, "parse", str(LOG), str(other)) == 3
    assert capsys.readouterr().err == (
        f"logscope: internal error: ValueError: injected ({LOG}:9; --debug shows the traceback)\n"
    )


def test_a_value_left_in_a_loop_variable_is_not_a_row_being_worked_on(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """After its loop, a loop variable still holds the last row; a failure there names no line. (The
    frames read are logscope's own: this test's file stands in for the package.)"""
    import logscope.errors as errors
    from logscope.errors import row_where

    monkeypatch.setattr(errors, "_PACKAGE", str(Path(__file__).resolve().parent))

    rows = [{"line": 4}, {"line": 7}]

    def after_the_loop() -> None:
        seen = []
        for row in rows:
            seen.append(row["line"])
        raise RuntimeError(row, seen)

    def in_the_loop() -> None:
        for row in rows:
            if row["line"] == 7:
                raise RuntimeError(row)

    for function, want in ((after_the_loop, None), (in_the_loop, (7, None))):
        with pytest.raises(RuntimeError) as caught:
            function()
        assert row_where(caught.value) == want


@pytest.mark.parametrize(
    "args, code, frozen",
    [
        (["parse", "--format", "json", str(LOG)], 0, True),
        (["parse", "--fail-on", "info", str(MOBILENET)], 1, True),
        (["parse", "missing.log"], 2, True),
        (["rules"], 0, False),
        (["--version"], 0, False),
    ],
)
def test_main_freezes_what_parse_leaves_for_the_exit(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    args: list[str],
    code: int,
    frozen: bool,
) -> None:
    """After `parse` (whatever its exit code) the objects left are frozen, so the exit neither walks nor
    frees them; other commands exit as Python does. The output and the exit code are unchanged."""
    import gc

    monkeypatch.setattr(sys, "argv", ["logscope", *args])
    gc.unfreeze()
    try:
        with pytest.raises(SystemExit) as stop:
            cli.main()
        assert (stop.value.code, gc.get_freeze_count() > 0) == (code, frozen)
    finally:
        gc.unfreeze()
    out = capsys.readouterr().out
    if "json" in args:
        assert json.loads(out)["source"] == str(LOG)


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_main_freezes_what_audit_leaves_for_the_exit(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path, jobs: str
) -> None:
    """`audit` exits frozen as `parse` does (its store is closed and its pool shut down before), and its
    database holds the file."""
    import gc

    import duckdb

    db = tmp_path / "a.duckdb"
    monkeypatch.setattr(sys, "argv", ["logscope", "audit", str(MOBILENET), "--db", str(db), "--jobs", jobs])
    gc.unfreeze()
    try:
        with pytest.raises(SystemExit) as stop:
            cli.main()
        assert (stop.value.code, gc.get_freeze_count() > 0) == (0, True)
    finally:
        gc.unfreeze()
    capsys.readouterr()
    with duckdb.connect(str(db), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM files WHERE status = 'ok'").fetchone() == (1,)
