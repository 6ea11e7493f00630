"""A fixed-seed slice of the fuzz harness in `make test`: mutated fixtures of every family and mutated
ONNX and TFLite models through the CLI entry point (`logscope.cli.main`, every command in rotation) in
a forked worker with an address-space limit, a CPU limit and the peak-memory bound, plus a few cases
through `python -m logscope`. The full run is `make fuzz` (benchmarks/fuzz.py, 10,000 cases per
family)."""

from __future__ import annotations

import random
import re
import time
from pathlib import Path

import harness
import mutate
import pytest

# Cases per family: about 0.07 s of CPU each once the worker runs, so the slice stays near a minute.
CASES = {"rknn": 64, "mcu": 48, "synthetic": 32, "onnx": 40, "tflite": 36}
SEED = 20261201


@pytest.mark.parametrize("family", harness.FAMILIES)
def test_fuzz_slice(family: str) -> None:
    summary = harness.run_family(family, CASES[family], SEED)
    assert summary.cases == CASES[family]
    assert summary.bad == 0, harness.format_summary([summary])
    assert summary.counts["ok"] > 0, harness.format_summary([summary])  # the mutations leave parseable cases
    assert set(summary.by_command) == {harness.command_for(family, i)[0] for i in range(CASES[family])}


def test_fuzz_cli_sample() -> None:
    """Two cases per family through `python -m logscope` (exit code, one stderr line, no traceback)."""
    for family in harness.FAMILIES:
        for index in (0, 1):
            result = harness.run_cli_case(family, SEED, index)
            assert result.outcome in ("ok", "refused"), result


@pytest.mark.parametrize(
    ("code", "stderr", "outcome"),
    [
        (0, "wrote r.html\n", "ok"),
        (1, "", "ok"),
        (2, "logscope: error: x.log: looks binary\n", "refused"),
        (2, "logscope: error: a\nlogscope: error: b\n", "traceback"),
        (2, "Usage: logscope parse\n", "traceback"),
        (3, "logscope: internal error: ValueError: x (x.log:3; --debug shows the traceback)\n", "traceback"),
        (3, "logscope: internal error: MemoryError: (x.log; --debug shows the traceback)\n", "memory-limit"),
        (0, "Traceback (most recent call last):\n  ...\nValueError\n", "traceback"),
        (-11, "", "crash"),
    ],
)
def test_classify(code: int, stderr: str, outcome: str) -> None:
    assert harness.classify(code, stderr)[0] == outcome


def test_memory_bound_is_an_outcome() -> None:
    """A case whose peak is over the stated bound is counted as `memory-bound`, not ok."""
    summary = harness.Summary("rknn")
    big = harness.memory_bound(1000) + 1
    summary.add(harness.Result("rknn", 0, "memory-bound", [], "", 1000, "parse", big))
    assert summary.bad == 1
    assert harness.memory_bound(10**6) == harness.MEMORY_FIXED_BYTES + harness.MEMORY_PER_INPUT_BYTE * 10**6


# ------------------------------------------------------------------ the harness's own mutation step

# Lines a mutator must handle in time linear in their length: a rule or a progress bar made long by
# `long_line` (no whitespace at all), two long words, a long run of digits, dots or hex digits, and a
# file of many one-word lines.
DEGENERATE = {
    "rule": ["-" * 1_000_000],
    "two-words": ["x" * 500_000 + " " + "y" * 500_000],
    "digits": ["7" * 1_000_000 + "a"],
    "dotted": ["1." * 500_000],
    "hex": ["0x" + "f" * 1_000_000 + "g"],
    "one-word-lines": ["word"] * 200_000,
}


@pytest.mark.parametrize("name", sorted(mutate.TEXT_MUTATORS))
def test_every_text_mutation_writes_a_degenerate_case_within_the_mutation_limit(name: str) -> None:
    """Each mutation on each degenerate input of about 1 MB, under the harness's own CPU limit for
    writing a case (milliseconds are needed; `empty-cells` once searched a backtracking pattern and took
    hours on the one-line rule)."""
    others = list(DEGENERATE.values())
    for seed, lines in enumerate(DEGENERATE.values()):
        rng = random.Random(seed)
        with harness.cpu_limit(harness.MUTATION_CPU_SECONDS, harness.MutationTimeout):
            mutate.TEXT_MUTATORS[name](list(lines), rng, others)


def test_three_words_is_what_the_pattern_found() -> None:
    """`empty_cells` picks the same lines as with `\\S+\\s+\\S+\\s+\\S+` (so seeds give the same cases):
    every fixture line, and lines built from every character Python counts as whitespace."""
    pattern = re.compile(r"\S+\s+\S+\s+\S+")
    spaces = [chr(c) for c in range(0x3100) if chr(c).isspace()] + ["\u3000", "\x1c", "\x85"]
    lines = [line for found in harness.corpus().all for line in found]
    lines += [f"a{s}b{t}c" for s in spaces for t in (" ", "\t", "\u2028")]
    lines += ["a b", " a  b ", "a\u00a0b c", "a\u200bb c", "", "x", "\u3000a\u3000b\u3000c\u3000"]
    assert all(mutate._has_three_words(line) == bool(pattern.search(line)) for line in lines)


@pytest.mark.parametrize("index", [1244, 3759, 8751, 9576])
def test_the_cases_the_mutator_timed_out_on_now_run(index: int, tmp_path: Path) -> None:
    """Seed 3's mcu cases whose writing ran past the CPU limit (one 140 KB rule line, then
    `empty-cells`) are written and run by logscope."""
    result = harness.run_case("mcu", 3, index, tmp_path)
    assert result.outcome in ("ok", "refused"), result
    assert {"long-line", "empty-cells"} <= set(result.mutations)


def _slow(lines: list[str], rng: random.Random, others: list[list[str]]) -> list[str]:
    while True:  # CPU until the limit stops it
        pass


def _failing(lines: list[str], rng: random.Random, others: list[list[str]]) -> list[str]:
    raise IndexError("a mutator bug")


def _force_mutators(monkeypatch: pytest.MonkeyPatch, mutator: object) -> None:
    monkeypatch.setattr(mutate, "TEXT_MUTATORS", dict.fromkeys(mutate.TEXT_MUTATORS, mutator))


def test_a_slow_mutation_is_the_harness_s_outcome_not_logscope_s(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _force_mutators(monkeypatch, _slow)
    monkeypatch.setattr(harness, "MUTATION_CPU_SECONDS", 0.3)
    result = harness.run_case("rknn", 1, 0, tmp_path)
    assert result.outcome == "mutation-timeout", result
    assert "over 0.3 s of CPU" in result.detail and result.mutations[0].endswith(".log")
    summary = harness.Summary("rknn")
    summary.add(result)
    assert summary.bad == 0 and summary.harness_defects == 1
    table = harness.format_summary([summary])
    assert "defects of the harness" in table and "failures of logscope" not in table


def test_a_failing_mutation_is_the_harness_s_outcome(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    _force_mutators(monkeypatch, _failing)
    result = harness.run_case("mcu", 1, 0, tmp_path)
    assert result.outcome == "mutation-error"
    assert "IndexError: a mutator bug" in result.detail


def _sleeping(lines: list[str], rng: random.Random, others: list[list[str]]) -> list[str]:
    time.sleep(30)  # no CPU: only the parent's wall-time limit sees it
    return lines


def test_a_worker_hung_in_the_mutation_step_is_a_mutation_timeout(monkeypatch: pytest.MonkeyPatch) -> None:
    """The forked worker stops answering while it writes the case: the parent reads the worker's phase
    and counts a mutation timeout, not a logscope timeout."""
    _force_mutators(monkeypatch, _sleeping)
    monkeypatch.setattr(harness, "WALL_SECONDS", 1)
    worker = harness.Worker(1)
    try:
        result = worker.run("synthetic", 0)
    finally:
        worker.stop()
    assert result.outcome == "mutation-timeout", result
    assert "while writing the case" in result.detail


# ------------------------------------------------------------------ check: RKNN build logs against ONNX


def test_the_rknn_rotation_checks_build_logs_against_their_models(tmp_path: Path) -> None:
    """`check LOG --onnx MODEL` is in the rknn rotation; its cases mutate the log, the model or both,
    and write the other side as it is."""
    names = [name for name, _ in harness.commands("rknn")]
    assert {"check-onnx", "check-onnx-json", "check-onnx-frames", "check-onnx-plot"} <= set(names)
    pairs = {p.log.name: p for p in harness.corpus().check_pairs}
    sides, models_changed = set(), 0
    for index in range(len(names) * 12):
        name, _ = harness.command_for("rknn", index)
        if not name.startswith("check-onnx"):
            continue
        folder = tmp_path / str(index)
        folder.mkdir()
        case = harness.write_case("rknn", 1, index, folder)
        _, args = harness.case_argv("rknn", index, case, folder / "out")
        assert args[:4] == ["check", str(case.path), "--onnx", str(case.model)]
        pair = pairs[case.mutations[0]]
        side = case.mutations[2].removeprefix("mutated: ")
        sides.add(side)
        if side == "log":
            assert case.model.read_bytes() == pair.model
        else:
            models_changed += case.model.read_bytes() != pair.model
        assert (case.path.read_bytes() == pair.log.read_bytes()) == (side == "model")
    assert sides == {"log", "model", "both"} and models_changed


@pytest.mark.parametrize("build", harness.RKNN_CHECK_PAIRS)
def test_each_check_pair_is_a_log_and_the_model_it_was_built_from(
    build: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The pair's model is the graph the log was compiled from: rebuilt with its random weights it hashes
    to the manifest's `model_sha256`, and the zero-weight copy the harness uses differs only in the
    weights' values. `check` of the unmutated pair runs clean."""
    import hashlib
    import json

    import onnx

    monkeypatch.syspath_prepend(str(harness.ROOT / "tools" / "corpus"))
    import rknn_models

    manifest = json.loads((harness.RKNN_COMPILER / "manifest.json").read_text())["builds"]
    (entry,) = [b for b in manifest if b["id"] == build]
    (pair,) = [p for p in harness.corpus().check_pairs if p.log == harness.RKNN_COMPILER / entry["log"]]
    compiled = rknn_models.build(entry["model"])
    assert hashlib.sha256(compiled.SerializeToString()).hexdigest() == entry["model_sha256"]
    used = onnx.load_from_string(pair.model)
    for graph in (compiled.graph, used.graph):
        for init in graph.initializer:
            init.ClearField("raw_data")
            init.ClearField("float_data")
    assert used == compiled
    model = tmp_path / "m.onnx"
    model.write_bytes(pair.model)
    code, stderr = harness.run_cli_in_process(["check", str(pair.log), "--onnx", str(model)])
    assert harness.classify(code, stderr)[0] == "ok", stderr
