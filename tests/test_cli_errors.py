"""The CLI's last line of defence: an unexpected exception is one line and exit 3, never a traceback box."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import logscope.api as api
import logscope.cli as cli

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
