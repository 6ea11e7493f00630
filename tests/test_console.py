"""The console script's first step: which command lines start the audit pool's fork server before
typer and the command's imports, and that it then hands every command line to the CLI unchanged."""

from __future__ import annotations

import subprocess
import sys

import pytest

from logscope._console import _audit_pool_wanted


@pytest.mark.parametrize(
    "args",
    [
        ["audit", "logs", "--jobs", "2"],
        ["audit", "-j", "4", "logs"],
        ["audit", "--jobs=3", "logs"],
        ["audit", "-j2", "logs"],
        ["--debug", "audit", "logs", "-j", "2"],
        ["audit", "logs", "-j", "2", "--engine", "local"],
        ["audit", "logs", "-j", "2", "--engine=local"],
    ],
)
def test_a_local_audit_of_several_jobs_wants_the_pool(args):
    assert _audit_pool_wanted(args)


@pytest.mark.parametrize(
    "args",
    [
        [],
        ["--help"],
        ["parse", "build.log", "--jobs", "2"],  # not the audit
        ["audit", "logs"],  # one job: the audit runs in its own process
        ["audit", "logs", "--jobs", "1"],
        ["audit", "logs", "-j"],  # the value missing: click says so, no server
        ["audit", "logs", "-j", "two"],
        ["audit", "logs", "-j", "2", "--engine", "dask"],
        ["audit", "logs", "-j", "2", "--engine=dask"],
        ["audit", "--", "-j", "2"],  # after `--`, paths
        ["report", "audit", "-j", "2"],  # `audit` as an argument of another command
    ],
)
def test_other_command_lines_do_not(args):
    assert not _audit_pool_wanted(args)


def test_the_console_script_hands_the_command_line_to_the_cli(tmp_path):
    """The entry point behaves as the CLI's own `main`: the same output and exit codes."""
    script = "import sys; from logscope._console import main; sys.argv[0] = 'logscope'; main()"
    version = subprocess.run([sys.executable, "-c", script, "--version"], capture_output=True, text=True)
    assert version.returncode == 0 and version.stdout.strip()
    wrong = subprocess.run([sys.executable, "-c", script, "parse"], capture_output=True, text=True)
    assert wrong.returncode == 2 and wrong.stderr.startswith("logscope: error:")
    missing = subprocess.run(
        [sys.executable, "-c", script, "parse", str(tmp_path / "none.log")], capture_output=True, text=True
    )
    assert missing.returncode == 2 and "none.log" in missing.stderr


def test_the_audit_pool_is_started_before_the_cli_is_imported(monkeypatch):
    import logscope._console as console
    import logscope.pool_start as pool_start

    order: list[str] = []
    monkeypatch.setattr(pool_start, "start_pool_server", lambda: order.append("server"))
    monkeypatch.setattr(sys, "argv", ["logscope", "audit", "logs", "-j", "2"])
    import logscope.cli

    monkeypatch.setattr(logscope.cli, "main", lambda: order.append("cli"))
    console.main()
    assert order == ["server", "cli"]
    order.clear()
    monkeypatch.setattr(sys, "argv", ["logscope", "audit", "logs"])
    console.main()
    assert order == ["cli"]
