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
    assert f"input {LOG}" in err and "--debug" in err and "Traceback" not in err


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
        "logscope: internal error: RuntimeError: bad (input x.log; line 12; --debug shows the traceback)"
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
