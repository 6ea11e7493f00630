"""Configuration files and numeric options: every bad value is one line on stderr with exit code 2
(never a traceback, never exit 1, which means findings), naming the file or option, the key and the
accepted range. Through the real CLI in a child process with a timeout and a memory limit."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.cli_run import run_cli
from tests.conftest import MOBILENET

HUGE = "9" * 400

CONFIG_CASES = {
    "xff-byte": ("logscope.toml", b'fail-on = "warning\xff"\n', ["logscope.toml", "not UTF-8", "0xff"]),
    "utf-16": ("logscope.toml", 'fail-on = "warning"\n'.encode("utf-16"), ["logscope.toml", "UTF-16"]),
    "deep-nesting": ("logscope.toml", b"a = " + b"[" * 5000 + b"]" * 5000 + b"\n", ["nested", "at most 32"]),
    "tool-string": ("pyproject.toml", b'tool = "logscope"\n', ["pyproject.toml", "tool must be a table"]),
    "huge-option": (
        "logscope.toml",
        f"[rules.MEM001]\nwarn_below = {HUGE}\n".encode(),
        ["rules.MEM001.warn_below", "out of range", "accepted: 0 to 1000000"],
    ),
    "nan-threshold": (
        "logscope.toml",
        b"[rules.MEM001]\nwarn_below = nan\n",
        ["rules.MEM001.warn_below", "not a finite number"],
    ),
    "inf-threshold": (
        "logscope.toml",
        b"[rules.MEM003]\nmax_share = inf\n",
        ["rules.MEM003.max_share", "not a finite number", "accepted: 0 to 1"],
    ),
    "negative-threshold": (
        "logscope.toml",
        b"[rules.MEM005]\nmin_tensor_bytes = -5\n",
        ["rules.MEM005.min_tensor_bytes", "-5 is out of range"],
    ),
    "negative-ratio": (
        "logscope.toml",
        b"[rules.MEM006]\nmax_ratio = -1.5\n",
        ["rules.MEM006.max_ratio", "out of range"],
    ),
    "huge-sram": ("logscope.toml", f'sram = "{HUGE}KiB"\n'.encode(), ["logscope.toml: sram", "out of range"]),
}


def _one_line_exit_2(done, words: list[str]) -> None:
    assert done.returncode == 2, (done.returncode, done.stderr[-2000:])
    assert done.stderr.startswith("logscope: error: ") and len(done.stderr.strip().splitlines()) == 1
    assert "Traceback" not in done.stderr
    for word in words:
        assert word in done.stderr, done.stderr


@pytest.mark.parametrize("case", sorted(CONFIG_CASES))
def test_bad_configuration_file(tmp_path: Path, case: str) -> None:
    name, content, words = CONFIG_CASES[case]
    shutil.copy(MOBILENET, tmp_path / "b.log")
    (tmp_path / name).write_bytes(content)
    _one_line_exit_2(run_cli(["parse", "b.log"], cwd=tmp_path), words)


OPTION_CASES = {
    "sram": (["parse", "b.log", "--sram", HUGE], ["--sram", "out of range", "1099511627776"]),
    "alignment": (
        ["reference", "m.onnx", "--alignment", "99999999999999999999"],
        ["--alignment", "1 to 1048576"],
    ),
    "trend-nan": (
        ["trend", "--db", "a.duckdb", "--threshold", "nan"],
        ["--threshold", "not a finite number"],
    ),
    "trend-negative": (["trend", "--db", "a.duckdb", "--threshold", "-1"], ["--threshold", "out of range"]),
    "diff-inf": (
        ["diff", "b.log", "b.log", "--fail-on-regression", "inf"],
        ["--fail-on-regression", "finite"],
    ),
    "jobs": (["audit", "b.log", "--db", "a.duckdb", "--jobs", HUGE], ["--jobs", "1 to 1024"]),
    "db-under-a-file": (["audit", "b.log", "--db", "b.log/a.duckdb"], ["b.log/a.duckdb", "not a folder"]),
}


@pytest.mark.parametrize("case", sorted(OPTION_CASES))
def test_bad_option(tmp_path: Path, case: str) -> None:
    args, words = OPTION_CASES[case]
    shutil.copy(MOBILENET, tmp_path / "b.log")
    _one_line_exit_2(run_cli(args, cwd=tmp_path), words)


def test_values_in_range_are_accepted(tmp_path: Path) -> None:
    """The same keys with sane values: the run goes through (exit 0 or 1 by findings, never 2)."""
    shutil.copy(MOBILENET, tmp_path / "b.log")
    (tmp_path / "logscope.toml").write_text(
        'sram = "320KiB"\n[rules.MEM001]\nwarn_below = 0.5\n[rules.MEM005]\nmin_tensor_bytes = "64KiB"\n'
    )
    done = run_cli(["parse", "b.log"], cwd=tmp_path)
    assert done.returncode in (0, 1), done.stderr
