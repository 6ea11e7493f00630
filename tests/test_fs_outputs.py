"""Outputs never replace an input of the same command, and an existing file is only overwritten with
--force; through the real CLI in a child process with a timeout and a memory limit."""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

import pytest

from tests.cli_run import run_cli
from tests.conftest import MOBILENET


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize("name", ["self.md", "self.json", "self.html"])
def test_report_refuses_to_write_over_its_input(tmp_path: Path, name: str) -> None:
    log = tmp_path / name
    shutil.copy(MOBILENET, log)
    before = _digest(log)
    (tmp_path / "sub").mkdir()
    for output, force in ((name, False), (f"./sub/../{name}", True)):  # --force never covers an input
        done = run_cli(["report", name, "-o", output, *(["--force"] if force else [])], cwd=tmp_path)
        assert done.returncode == 2, done.stderr
        assert f"is the input {name}" in done.stderr and str(Path(output)) in done.stderr
    assert _digest(log) == before


def test_report_refuses_a_link_to_its_input(tmp_path: Path) -> None:
    log = tmp_path / "build.md"
    shutil.copy(MOBILENET, log)
    os.link(log, tmp_path / "hard.md")
    (tmp_path / "soft.md").symlink_to("build.md")
    before = _digest(log)
    for output in ("hard.md", "soft.md"):
        done = run_cli(["report", "build.md", "-o", output, "--force"], cwd=tmp_path)
        assert done.returncode == 2 and "is the input build.md" in done.stderr
    assert _digest(log) == before


def test_plot_refuses_to_write_over_its_input(tmp_path: Path) -> None:
    log = tmp_path / "b.png"
    shutil.copy(MOBILENET, log)
    before = _digest(log)
    done = run_cli(["plot", "b.png", "-o", "b.png", "--force"], cwd=tmp_path)
    assert done.returncode == 2 and "is the input b.png" in done.stderr
    assert _digest(log) == before


def test_existing_outputs_need_force(tmp_path: Path) -> None:
    shutil.copy(MOBILENET, tmp_path / "build.log")
    (tmp_path / "report.md").write_text("mine\n")
    done = run_cli(["report", "build.log", "-o", "report.md"], cwd=tmp_path)
    assert done.returncode == 2 and "report.md: exists" in done.stderr and "--force" in done.stderr
    assert (tmp_path / "report.md").read_text() == "mine\n"
    forced = run_cli(["report", "build.log", "-o", "report.md", "--force"], cwd=tmp_path)
    assert forced.returncode == 0, forced.stderr
    assert (tmp_path / "report.md").read_text() != "mine\n"
    # a Markdown report's images count too
    (tmp_path / "again.md").unlink(missing_ok=True)
    (tmp_path / "again-1-memory.png").write_bytes(b"mine")
    done = run_cli(["report", "build.log", "-o", "again.md"], cwd=tmp_path)
    assert done.returncode == 2 and "again-1-memory.png: exists" in done.stderr
    assert not (tmp_path / "again.md").exists()


def test_frames_of_logs_with_one_name_go_to_distinct_folders(tmp_path: Path) -> None:
    for folder, extra in (("a", "a"), ("b", "b")):
        (tmp_path / folder).mkdir()
        text = MOBILENET.read_text(encoding="utf-8")
        (tmp_path / folder / "x.log").write_text(text + f"I extra {extra}\n", encoding="utf-8")
    done = run_cli(
        ["parse", "a/x.log", "b/x.log", "--frames-out", "out", "--frames-format", "csv"], cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["1-x.log", "2-x.log"]
    for number in (1, 2):
        assert (tmp_path / "out" / f"{number}-x.log" / "builds.csv").is_file()
    again = run_cli(
        ["parse", "a/x.log", "b/x.log", "--frames-out", "out", "--frames-format", "csv"], cwd=tmp_path
    )
    assert again.returncode == 2 and ".csv: exists; refusing to overwrite it without --force" in again.stderr
