"""The fuzz harness: mutated logs and models through the real CLI entry point, in long-lived forked
workers with an address-space limit, a CPU limit per case and a peak-memory measurement per case.

A worker is forked once from a parent that has imported everything a command uses, then runs case
after case: it writes the mutated file, sets `sys.argv` and calls `logscope.cli.main` (the console
script's own function: typer parsing, every command, the one-line error and internal-error paths),
with stdout and stderr captured and the `SystemExit` code kept. A case costs its command's work, not
an interpreter start. The command is rotated over the cases of a family (`FAMILY_COMMANDS`), so every
command sees its share of every family. A worker is replaced after a case that did not end cleanly and
every `RESTART_EVERY` cases.

Outcomes of a case:
- `ok`: exit 0 or 1 (1: a finding at or above --fail-on), nothing but `wrote ...` lines or findings
  progress on stderr that looks like a traceback;
- `refused`: exit 2 with exactly one `logscope: error: ...` line (not a log, binary, corrupt archive, an
  unsafe or oversized model, nothing to plot): the clean refusal;
- `traceback`: exit 3 (the CLI's internal-error line: an exception logscope did not expect), a
  traceback or rich box on stderr, exit 2 without its one line, or any exception out of `main`;
- `memory-limit`: the case needed more than the worker's address-space limit (`MemoryError`, or the
  worker killed);
- `memory-bound`: the case ran, but its peak resident memory over the worker's before the case exceeded
  `MEMORY_FIXED_BYTES + MEMORY_PER_INPUT_BYTE` × the input's size (the stated bound, docs/security.md);
- `timeout`: logscope used more than `CASE_CPU_SECONDS` of CPU on the case;
- `crash`: the worker died another way while logscope ran.

Outcomes of the harness itself, never counted as logscope's (the case was not run, or not to its end):
- `mutation-timeout`: writing the case (the mutators, encoding, compression) used more than
  `MUTATION_CPU_SECONDS` of CPU, or the worker stopped answering while it wrote the case;
- `mutation-error`: writing the case raised, or the worker died while it wrote the case.
Both limits are separate: the mutation step runs under its own CPU limit, then logscope under its own.

Peak memory: before each case the worker resets its kernel high-water mark (`/proc/self/clear_refs`,
value 5) and reads its resident size; after it, `VmHWM` minus that is the case's peak. The input's size
is the bytes logscope reads after decompression (the model's file size for models).

Case `i` of a family is generated from seed `(seed, family, i)`, so any case replays alone
(`benchmarks/fuzz.py --replay FAMILY INDEX`). A sample also goes through `python -m logscope` in a
subprocess (`run_cli_case`) to check the installed entry point end to end.
"""

from __future__ import annotations

import bz2
import contextlib
import gzip
import io
import json
import lzma
import multiprocessing
import random
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "fixtures"
TFLITE_FIXTURES = FIXTURES / "tflm-corpus"
RKNN_COMPILER = FIXTURES / "rknn-compiler"
# Build logs of fixtures/rknn-compiler/ checked against their models (`check LOG --onnx MODEL`): small
# models of different shapes (batch 2, a 1x1 head, two inputs and outputs, an LSTM, odd depthwise
# kernels, attention, a build the compiler refused) over the four toolkit versions. The models are
# rebuilt by tools/corpus/rknn_models.py with zero weights, as tests/test_compiler_corpus.py does:
# only shapes matter to `check`, and a rebuilt model is the one the log was compiled from.
RKNN_CHECK_PAIRS = (
    "2.5.0/batch2-rk3588-int8",
    "2.5.0/head_1x1-rk3588-fp16",
    "2.3.2/multi_io-rk3566-int8",
    "2.5.0/lstm-rk3588-int8",
    "2.2.0/dw_odd-rk3576-fp16",
    "2.3.0/transformer-rk3588-int8",
    "2.5.0/refused_custom_op-rk3588-int8",
)
TEXT_FAMILIES = ("rknn", "mcu", "synthetic")
MODEL_FAMILIES = ("onnx", "tflite")
FAMILIES = (*TEXT_FAMILIES, *MODEL_FAMILIES)
OUTCOMES = ("ok", "refused", "traceback", "memory-limit", "memory-bound", "timeout", "crash")
BAD_OUTCOMES = ("traceback", "memory-limit", "memory-bound", "timeout", "crash")
HARNESS_OUTCOMES = ("mutation-timeout", "mutation-error")  # defects of the harness, not of logscope

# Limits of one case. The address-space limit is over the worker's own size after imports (pandas,
# matplotlib and onnx map several hundred MiB before any case runs).
CASE_MEMORY_BYTES = 1024 * 1024 * 1024
CASE_CPU_SECONDS = 30
# Writing a case takes milliseconds (the largest, 2,000 copies of a line compressed with xz, about a
# second): a case over this limit is a mutator that is not linear in its input.
MUTATION_CPU_SECONDS = 10
# A worker that has not answered after this much wall time (the machine is shared) is stopped: a hang
# no CPU limit sees (a sleep, a blocked read); its `phase` says whether the harness or logscope hung.
WALL_SECONDS = (MUTATION_CPU_SECONDS + CASE_CPU_SECONDS) * 6 + 60
RESTART_EVERY = 400
CLI_TIMEOUT_SECONDS = 120
CLI_MEMORY_BYTES = 3 * 1024 * 1024 * 1024  # the whole interpreter: imports included

# The stated bound on a case's peak memory (resident, over the worker's before the case): a fixed part
# (a matplotlib figure and its PNG, the HTML report's images, pandas frames of an empty log) plus a
# multiple of the input's size (lines, frames, rendered text).
MEMORY_FIXED_BYTES = 256 * 1024 * 1024
MEMORY_PER_INPUT_BYTE = 40

# The commands rotated over the cases of each family: (name, argv). `{in}` is the case's file,
# `{origin}` the fixture it was mutated from, `{out}` a fresh folder, `{kind}` a plot kind and `{trace}`
# the TFLM trace printed for a .tflite fixture.
LOG_COMMANDS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("parse", ("parse", "{in}")),
    ("parse-json", ("parse", "{in}", "-f", "json")),
    ("parse-markdown", ("parse", "{in}", "-f", "markdown", "-v")),
    ("parse-sarif", ("parse", "{in}", "-f", "sarif")),
    ("parse-frames", ("parse", "{in}", "--frames-out", "{out}/f", "--frames-format", "csv")),
    ("report-md", ("report", "{in}", "-o", "{out}/r.md")),
    ("report-json", ("report", "{in}", "-o", "{out}/r.json")),
    ("report-html", ("report", "{in}", "-o", "{out}/r.html")),
    ("plot", ("plot", "{in}", "-k", "{kind}", "-o", "{out}/p.png")),
    ("diff-text", ("diff", "{origin}", "{in}")),
    ("diff-json", ("diff", "{in}", "{origin}", "-f", "json")),
    ("diff-markdown", ("diff", "{origin}", "{in}", "-f", "markdown")),
)
# `audit` writes a DuckDB per case and `trend` reads it back (`&&`: the second runs when the first
# exits 0 or 1); about three times a parse's CPU, so a run takes them when asked (`--commands audit`).
AUDIT_COMMANDS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("audit", ("audit", "{in}", "--db", "{out}/a.duckdb", "-f", "json")),
    (
        "audit-trend",
        ("audit", "{in}", "--db", "{out}/a.duckdb", "&&", "trend", "--db", "{out}/a.duckdb", "-f", "csv"),
    ),
)
# `check` of an RKNN build log against its ONNX model, in the rknn rotation: `{model}` is the case's
# model. These cases mutate the log, the model (the ONNX mutations) or both (`write_check_case`).
RKNN_CHECK_COMMANDS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("check-onnx", ("check", "{in}", "--onnx", "{model}")),
    ("check-onnx-json", ("check", "{in}", "--onnx", "{model}", "-f", "json")),
    (
        "check-onnx-frames",
        ("check", "{in}", "--onnx", "{model}", "--frames-out", "{out}/f", "--frames-format", "csv"),
    ),
    ("check-onnx-plot", ("check", "{in}", "--onnx", "{model}", "--plot", "{out}/c.png")),
)
PLOT_KINDS = ("memory", "address-map", "breakdown", "fragmentation", "perf")
MODEL_COMMANDS: dict[str, tuple[tuple[str, tuple[str, ...]], ...]] = {
    "onnx": (
        ("reference", ("reference", "{in}")),
        ("reference-json", ("reference", "{in}", "-f", "json", "--in-place", "--alignment", "64")),
        ("reference-frames", ("reference", "{in}", "--frames-out", "{out}/f", "--frames-format", "csv")),
        ("reference-plot", ("reference", "{in}", "--plot", "{out}/r.png", "--dtype", "fp16")),
        ("reference-tflm", ("reference", "{in}", "--runtime", "tflm", "-f", "json")),
    ),
    "tflite": (
        ("reference", ("reference", "{in}")),
        ("reference-json", ("reference", "{in}", "-f", "json", "--arch", "arm32")),
        ("reference-c", ("reference", "{in}", "-f", "c", "--kernels", "cmsis-nn", "--margin", "0.1")),
        ("reference-frames", ("reference", "{in}", "--frames-out", "{out}/f", "--frames-format", "csv")),
        ("reference-plot", ("reference", "{in}", "--plot", "{out}/r.png")),
        ("check", ("check", "{trace}", "--model", "{in}", "-f", "json")),
    ),
}


FAMILY_COMMANDS: dict[str, tuple[tuple[str, tuple[str, ...]], ...]] = {
    "rknn": (*LOG_COMMANDS, *RKNN_CHECK_COMMANDS),
    "mcu": LOG_COMMANDS,
    "synthetic": LOG_COMMANDS,
    **MODEL_COMMANDS,
}


def commands(family: str, only: tuple[str, ...] = ()) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """The commands rotated over `family`'s cases; `only`: those named (the audit ones included)."""
    table = FAMILY_COMMANDS[family]
    if not only:
        return table
    extra = AUDIT_COMMANDS if family in TEXT_FAMILIES else ()
    chosen = tuple(c for c in (*table, *extra) if c[0] in only or c[0].split("-")[0] in only)
    if not chosen:
        raise ValueError(f"no command of {family} is named {', '.join(only)}")
    return chosen


def command_for(family: str, index: int, only: tuple[str, ...] = ()) -> tuple[str, tuple[str, ...]]:
    """The command case `index` runs: rotated, with the plot kind rotated within the plot cases."""
    table = commands(family, only)
    name, argv = table[index % len(table)]
    kind = PLOT_KINDS[(index // len(table)) % len(PLOT_KINDS)]
    return (f"plot-{kind}" if name == "plot" else name), tuple(a.replace("{kind}", kind) for a in argv)


class CaseTimeout(BaseException):
    """Raised by SIGPROF in the worker when a case runs past its CPU limit (a BaseException, so the
    CLI's own last-resort handler does not turn it into an internal-error line)."""


class MutationTimeout(BaseException):
    """Raised by SIGPROF when writing a case runs past `MUTATION_CPU_SECONDS`: a harness defect."""


@contextlib.contextmanager
def cpu_limit(seconds: float, exception: type[BaseException]) -> Iterator[None]:
    """Raise `exception` in this (main) thread once the process has used `seconds` more of CPU
    (`ITIMER_PROF`); the previous SIGPROF handler is put back after."""

    def expire(signum: int, frame: Any) -> None:
        raise exception(f"over {seconds} s of CPU")

    previous = signal.signal(signal.SIGPROF, expire)
    signal.setitimer(signal.ITIMER_PROF, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, previous)


@dataclass
class Result:
    family: str
    index: int
    outcome: str
    mutations: list[str]
    detail: str = ""
    input_bytes: int = 0
    command: str = ""
    peak_bytes: int = 0
    exit_code: int | None = None
    cpu_seconds: float = 0.0


@dataclass
class Summary:
    family: str
    counts: Counter[str] = field(default_factory=Counter)
    by_command: dict[str, Counter[str]] = field(default_factory=dict)
    command_cpu: Counter[str] = field(default_factory=Counter)
    cli_counts: Counter[str] = field(default_factory=Counter)
    failures: list[Result] = field(default_factory=list)
    cpu_seconds: float = 0.0
    peak_bytes: int = 0  # the largest case peak seen
    peak_case: str = ""
    max_multiple: float = 0.0  # the largest peak / input size among inputs of at least 64 KiB
    max_multiple_case: str = ""
    largest_input: int = 0

    @property
    def cases(self) -> int:
        return sum(self.counts.values())

    @property
    def bad(self) -> int:
        """Cases logscope did not end cleanly."""
        return sum(self.counts[o] + self.cli_counts[o] for o in BAD_OUTCOMES)

    @property
    def harness_defects(self) -> int:
        """Cases the harness could not write: not logscope outcomes, but the run is not clean either."""
        return sum(self.counts[o] + self.cli_counts[o] for o in HARNESS_OUTCOMES)

    def add(self, result: Result) -> None:
        self.counts[result.outcome] += 1
        self.by_command.setdefault(result.command, Counter())[result.outcome] += 1
        self.command_cpu[result.command] += result.cpu_seconds
        if result.outcome in BAD_OUTCOMES or result.outcome in HARNESS_OUTCOMES:
            self.failures.append(result)
        self.largest_input = max(self.largest_input, result.input_bytes)
        name = f"{result.family}/{result.index} {result.command}"
        if result.peak_bytes > self.peak_bytes:
            self.peak_bytes, self.peak_case = result.peak_bytes, f"{name} ({result.input_bytes:,} B input)"
        if result.input_bytes >= 64 * 1024:
            multiple = result.peak_bytes / result.input_bytes
            if multiple > self.max_multiple:
                self.max_multiple = multiple
                self.max_multiple_case = f"{name} ({result.input_bytes:,} B input)"


def fixture_files(family: str) -> list[Path]:
    return sorted(p for p in (FIXTURES / family).iterdir() if p.is_file() and p.name != "SOURCES.md")


def case_rng(seed: int, family: str, index: int) -> random.Random:
    return random.Random(f"{seed}/{family}/{index}")


def memory_bound(input_bytes: int) -> int:
    return MEMORY_FIXED_BYTES + MEMORY_PER_INPUT_BYTE * input_bytes


# ------------------------------------------------------------------------------------ case generation


class _Corpus:
    """The fixtures of every text family as lines, and the TFLM corpus models, read once per process."""

    def __init__(self) -> None:
        self.lines: dict[str, list[tuple[Path, list[str]]]] = {}
        for family in TEXT_FAMILIES:
            self.lines[family] = [
                (p, p.read_bytes().decode("utf-8", "replace").split("\n")) for p in fixture_files(family)
            ]
        self.all = [lines for family in TEXT_FAMILIES for _, lines in self.lines[family]]
        # Models under 64 KiB whose trace is in the corpus too: the mutations' reach, not the bytes.
        self.tflite = [
            (p, p.read_bytes())
            for p in sorted(TFLITE_FIXTURES.glob("*.tflite"))
            if p.stat().st_size < 64 * 1024 and p.with_suffix(".txt").exists()
        ]
        builds = json.loads((RKNN_COMPILER / "manifest.json").read_text())["builds"]
        self.check_pairs = [check_pair(build, builds) for build in RKNN_CHECK_PAIRS]


@dataclass
class CheckPair:
    log: Path  # a build log of fixtures/rknn-compiler/ (gzipped)
    lines: list[str]
    model_name: str
    model: bytes  # the ONNX model it was built from, rebuilt with zero weights


def check_pair(build_id: str, builds: list[dict[str, Any]]) -> CheckPair:
    """The build log `build_id` of the RKNN compiler corpus (`builds`: its manifest) and its model,
    rebuilt."""
    sys.path.insert(0, str(ROOT / "tools" / "corpus"))
    try:
        import rknn_models
    finally:
        sys.path.pop(0)
    (build,) = [b for b in builds if b["id"] == build_id]
    log = RKNN_COMPILER / build["log"]
    lines = gzip.decompress(log.read_bytes()).decode("utf-8", "replace").split("\n")
    model = rknn_models.build(build["model"], "zeros").SerializeToString()
    return CheckPair(log, lines, build["model"], model)


_CORPUS: _Corpus | None = None


def corpus() -> _Corpus:
    global _CORPUS
    if _CORPUS is None:
        _CORPUS = _Corpus()
    return _CORPUS


def _plain_size(data: bytes, suffix: str) -> int:
    """The bytes logscope reads from `data` once decompressed (as far as a cut archive goes)."""
    opener = {".gz": gzip.GzipFile, ".xz": lzma.LZMAFile, ".bz2": bz2.BZ2File}.get(suffix)
    if opener is None:
        return len(data)
    total = 0
    with contextlib.suppress(Exception), opener(fileobj=io.BytesIO(data)) as handle:  # type: ignore[operator]
        while chunk := handle.read(1 << 20):
            total += len(chunk)
    return total


@dataclass
class Case:
    path: Path
    origin: Path | None  # the fixture it was mutated from (the other side of `diff`)
    mutations: list[str]
    input_bytes: int
    model: Path | None = None  # the model `check` reads beside the log


def write_case(
    family: str,
    seed: int,
    index: int,
    folder: Path,
    trail: list[str] | None = None,
    only: tuple[str, ...] = (),
) -> Case:
    """Write case `index` of `family` into `folder` (a log and a model when its command is a `check`).
    `trail` receives the fixture and each text mutation as it starts, so a mutation step stopped by its
    CPU limit says where it was."""
    trail = [] if trail is None else trail
    rng = case_rng(seed, family, index)
    if command_for(family, index, only)[0].startswith("check-onnx"):
        return write_check_case(rng, index, folder, trail)
    if family == "onnx":
        from mutate_onnx import mutate_model

        data, side, names = mutate_model(rng)
        for name, content in side.items():
            (folder / name).write_bytes(content)
        path = folder / f"case-{index}.onnx"
        path.write_bytes(data)
        return Case(path, None, names, len(data))
    if family == "tflite":
        from mutate_tflite import mutate_tflite

        origin, original = rng.choice(corpus().tflite)
        data, names = mutate_tflite(original, rng)
        path = folder / f"case-{index}.tflite"
        path.write_bytes(data)
        return Case(path, origin, [origin.name, *names], len(data))
    from mutate import mutate_log

    origin, lines = rng.choice(corpus().lines[family])
    trail.append(origin.name)
    data, suffix, names = mutate_log(list(lines), rng, corpus().all, trail)
    path = folder / f"case-{index}{suffix}"
    path.write_bytes(data)
    return Case(path, origin, [origin.name, *names], _plain_size(data, suffix))


def write_check_case(rng: random.Random, index: int, folder: Path, trail: list[str]) -> Case:
    """A build log and its model (`RKNN_CHECK_PAIRS`): the log mutated (45 %), the model (35 %, the
    ONNX family's mutations) or both (20 %); the side left alone is written as it is."""
    import onnx
    from mutate import mutate_log
    from mutate_onnx import mutate_onnx

    pair = rng.choice(corpus().check_pairs)
    roll = rng.random()
    sides = "log" if roll < 0.45 else "model" if roll < 0.80 else "both"
    trail += [pair.log.name, f"mutated: {sides}"]
    names = [pair.log.name, pair.model_name, f"mutated: {sides}"]
    if sides == "model":
        data, suffix, size = pair.log.read_bytes(), ".log.gz", sum(len(line) + 1 for line in pair.lines)
    else:
        data, suffix, log_names = mutate_log(list(pair.lines), rng, corpus().all, trail)
        names += log_names
        size = _plain_size(data, suffix)
    path = folder / f"case-{index}{suffix}"
    path.write_bytes(data)
    model = pair.model
    if sides != "log":
        trail.append("onnx mutations")
        model, side, model_names = mutate_onnx(onnx.load_from_string(pair.model), rng)
        names += model_names
        for name, content in side.items():
            (folder / name).write_bytes(content)
    model_path = folder / f"case-{index}.onnx"
    model_path.write_bytes(model)
    return Case(path, pair.log, names, size + len(model), model_path)


def case_argv(
    family: str, index: int, case: Case, out: Path, only: tuple[str, ...] = ()
) -> tuple[str, list[str]]:
    name, argv = command_for(family, index, only)
    origin = case.origin
    values = {
        "{in}": str(case.path),
        "{origin}": str(origin) if origin is not None else str(case.path),
        "{out}": str(out),
        "{trace}": str(origin.with_suffix(".txt")) if origin is not None else "",
        "{model}": str(case.model) if case.model is not None else "",
    }
    args = []
    for arg in argv:
        for key, value in values.items():
            arg = arg.replace(key, value)
        args.append(arg)
    return name, args


# ------------------------------------------------------------------------------------ running one case


def classify(code: int | None, stderr: str) -> tuple[str, str]:
    """The outcome of one CLI run from its exit code and stderr, and the line that says why."""
    lines = [line for line in stderr.splitlines() if line.strip()]
    last = lines[-1] if lines else ""
    if "Traceback (most recent call last)" in stderr or "╭" in stderr:
        return "traceback", last
    if code == 3:
        internal = [line for line in lines if line.startswith("logscope: internal error:")]
        line = internal[-1] if internal else last
        return ("memory-limit" if "MemoryError" in line else "traceback"), line
    if code in (0, 1):
        return "ok", ""
    if code == 2:
        errors = [line for line in lines if line.startswith("logscope: error:")]
        if len(errors) == 1 and not any(line.startswith("logscope:") for line in lines if line not in errors):
            return "refused", errors[0]
        return "traceback", f"exit 2 without one error line: {stderr[:300]!r}"
    return "crash", f"exit {code}: {last}"


def _clean(folder: Path) -> None:
    for p in folder.iterdir():
        if p.is_dir():
            shutil.rmtree(p)
        else:
            p.unlink()


def _rss() -> int:
    with open("/proc/self/statm") as handle:
        return int(handle.read().split()[1]) * resource.getpagesize()


def _reset_peak() -> bool:
    try:
        with open("/proc/self/clear_refs", "w") as handle:
            handle.write("5")
        return True
    except OSError:
        return False


def _peak() -> int:
    with open("/proc/self/status") as handle:
        for line in handle:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return 0


def run_cli_in_process(args: list[str]) -> tuple[int | None, str]:
    """`logscope ARGS` through `logscope.cli.main` in this process: (exit code, stderr)."""
    from logscope import cli

    cli._RUN.update(debug=False, input=None)
    out, err = io.StringIO(), io.StringIO()
    saved = sys.argv
    sys.argv = ["logscope", *args]
    code: int | None = 0
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            cli.main()
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
    finally:
        sys.argv = saved
        import matplotlib.pyplot as plt

        plt.close("all")
    return code, err.getvalue()


def _chain(args: list[str]) -> list[list[str]]:
    """`a ... && b ...` as the argument lists of the commands run one after the other."""
    chain: list[list[str]] = [[]]
    for arg in args:
        if arg == "&&":
            chain.append([])
        else:
            chain[-1].append(arg)
    return chain


WRITING, RUNNING = 1, 2  # what a worker is doing (`phase`), read by the parent when it stops answering


def write_limited(
    family: str, seed: int, index: int, folder: Path, only: tuple[str, ...] = ()
) -> Case | Result:
    """Case `index` written under `MUTATION_CPU_SECONDS` of CPU, or the harness outcome saying why not."""
    trail: list[str] = []
    name, _ = command_for(family, index, only)
    try:
        with cpu_limit(MUTATION_CPU_SECONDS, MutationTimeout):
            return write_case(family, seed, index, folder, trail, only)
    except MutationTimeout:
        where = f" (in {trail[-1]})" if trail else ""
        detail = f"writing the case took over {MUTATION_CPU_SECONDS} s of CPU{where}"
        return Result(family, index, "mutation-timeout", trail, detail, command=name)
    except Exception as exc:
        detail = f"writing the case raised {type(exc).__name__}: {exc}"[:300]
        return Result(family, index, "mutation-error", trail, detail, command=name)


def run_case(
    family: str, seed: int, index: int, folder: Path, only: tuple[str, ...] = (), phase: Any = None
) -> Result:
    """Case `index` of `family` written into `folder` and run through its command in this process, the
    writing and the command each under its own CPU limit. `phase` (a shared value) is set to `WRITING`,
    then `RUNNING`, for the parent to tell a hung mutator from a hung logscope."""
    _clean(folder)
    if phase is not None:
        phase.value = WRITING
    case = write_limited(family, seed, index, folder, only)
    if isinstance(case, Result):
        return case
    if phase is not None:
        phase.value = RUNNING
    out = folder / "out"
    out.mkdir()
    name, args = case_argv(family, index, case, out, only)
    measured = _reset_peak()
    before = _rss()
    result = Result(family, index, "ok", case.mutations, input_bytes=case.input_bytes, command=name)
    try:
        with cpu_limit(CASE_CPU_SECONDS, CaseTimeout):
            for argv in _chain(args):
                code, stderr = run_cli_in_process(argv)
                result.exit_code = code
                result.outcome, result.detail = classify(code, stderr)
                if result.outcome != "ok":
                    break
    except MemoryError:
        result.outcome, result.detail = "memory-limit", "MemoryError out of main"
    except CaseTimeout:
        result.outcome, result.detail = "timeout", f"over {CASE_CPU_SECONDS} s of CPU"
    except Exception as exc:
        result.outcome, result.detail = "traceback", f"{type(exc).__name__} out of main: {exc}"[:300]
    if measured:
        result.peak_bytes = max(0, _peak() - before)
        if result.outcome == "ok" or result.outcome == "refused":
            bound = memory_bound(case.input_bytes)
            if result.peak_bytes > bound:
                result.outcome = "memory-bound"
                result.detail = f"peak {result.peak_bytes:,} B over the bound {bound:,} B"
    return result


# ------------------------------------------------------------------------------------ the forked worker


def _address_space() -> int:
    with open("/proc/self/statm") as handle:
        return int(handle.read().split()[0]) * resource.getpagesize()


def _import_before_fork() -> None:
    """Everything a command uses, imported once in the parent: each forked worker starts with the same
    code, and neither the memory limit nor the peak measures imports."""
    import matplotlib

    matplotlib.use("Agg")
    import logscope.analysis.diff
    import logscope.api
    import logscope.cli
    import logscope.plots
    import logscope.reference
    import logscope.reference.tflm
    import logscope.reference.tflm_onnx
    import logscope.render.diff
    import logscope.render.frames_out
    import logscope.render.reference
    import logscope.render.summary
    import logscope.render.tflm
    import logscope.report
    import logscope.report.render  # noqa: F401

    corpus()
    _cache_click_command()
    _warm_up()


def _cache_click_command() -> None:
    """Typer builds the click command tree from the functions' signatures on every `app()` call (a
    tenth of a small case's CPU); a worker runs thousands of calls of one unchanged app, so it builds
    the tree once. Parsing, dispatch and every command's code still run per case."""
    import typer.main

    from logscope import cli

    build = typer.main.get_command
    if getattr(build, "cached_for_fuzz", False):
        return
    command = build(cli.app)

    def cached(instance: Any) -> Any:
        return command if instance is cli.app else build(instance)

    cached.cached_for_fuzz = True  # type: ignore[attr-defined]
    typer.main.get_command = cached


_WARM = False


def _warm_up() -> None:
    """One run of each kind of command on unmutated fixtures before the fork: grammars, caches and font
    tables built on first use belong to every worker, not to the first case's peak."""
    global _WARM
    if _WARM:
        return
    _WARM = True
    with tempfile.TemporaryDirectory(prefix="logscope-fuzz-warm-") as tmp:
        out = Path(tmp)
        for family in TEXT_FAMILIES:
            for path in fixture_files(family)[:3]:
                run_cli_in_process(["parse", str(path), "-f", "json"])
                run_cli_in_process(["report", str(path), "-o", str(out / f"{path.name}.html")])
        for kind in PLOT_KINDS:
            run_cli_in_process(["plot", str(fixture_files("rknn")[0]), "-k", kind, "-o", str(out / "p.png")])
        tflite, _ = corpus().tflite[0]
        run_cli_in_process(["reference", str(tflite), "--plot", str(out / "t.png")])
        run_cli_in_process(["check", str(tflite.with_suffix(".txt")), "--model", str(tflite)])
        log = fixture_files("rknn")[0]
        run_cli_in_process(["audit", str(log), "--db", str(out / "a.duckdb"), "-f", "json"])
        run_cli_in_process(["trend", "--db", str(out / "a.duckdb"), "-f", "csv"])
        from mutate_onnx import conv_chain

        model = out / "m.onnx"
        model.write_bytes(conv_chain().SerializeToString())
        run_cli_in_process(["reference", str(model), "--plot", str(out / "r.png"), "-f", "json"])
        run_cli_in_process(["reference", str(model), "--runtime", "tflm"])
        pair = corpus().check_pairs[0]
        (out / "pair.onnx").write_bytes(pair.model)
        run_cli_in_process(
            ["check", str(pair.log), "--onnx", str(out / "pair.onnx"), "--plot", str(out / "c.png")]
        )


def _worker(conn: Any, seed: int, only: tuple[str, ...], phase: Any) -> None:
    limit = _address_space() + CASE_MEMORY_BYTES
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    with tempfile.TemporaryDirectory(prefix="logscope-fuzz-") as tmp:
        folder = Path(tmp)
        while True:
            job = conn.recv()
            if job is None:
                return
            family, index = job
            started = time.process_time()
            result = run_case(family, seed, index, folder, only, phase)
            result.cpu_seconds = time.process_time() - started
            conn.send(result)


class Worker:
    """One long-lived forked worker; replaced after a case that did not end cleanly."""

    def __init__(self, seed: int, only: tuple[str, ...] = ()) -> None:
        self.seed, self.only = seed, only
        self.process: Any = None
        self.done = 0

    def _start(self) -> None:
        context = multiprocessing.get_context("fork")
        self.conn, child = context.Pipe()
        self.phase = context.Value("i", 0, lock=False)
        self.process = context.Process(
            target=_worker, args=(child, self.seed, self.only, self.phase), daemon=True
        )
        self.process.start()
        self.done = 0

    def stop(self) -> None:
        if self.process is not None:
            with contextlib.suppress(BrokenPipeError, OSError):
                self.conn.send(None)
            self.process.join(5)
            if self.process.is_alive():
                self.process.kill()
                self.process.join()
            self.process = None

    def run(self, family: str, index: int) -> Result:
        if self.process is None or self.done >= RESTART_EVERY:
            self.stop()
            self._start()
        try:
            self.conn.send((family, index))
            ready = self.conn.poll(WALL_SECONDS)
        except OSError:  # the worker died before it read the case
            ready = False
        if ready:
            try:
                result: Result = self.conn.recv()
                self.done += 1
                if result.outcome not in ("ok", "refused"):
                    self.stop()  # a fresh worker for the next case: no leftovers
                return result
            except (EOFError, OSError):
                pass
        code = self.process.exitcode
        writing = self.phase.value == WRITING
        self.stop()
        outcome = "memory-limit" if code in (-signal.SIGKILL, -signal.SIGSEGV, -signal.SIGABRT) else "crash"
        if code is None:
            outcome = "timeout"
        if writing:  # the harness's own step: never counted as logscope's
            outcome = "mutation-timeout" if code is None else "mutation-error"
        name, _ = command_for(family, index, self.only)
        where = " while writing the case" if writing else ""
        return Result(family, index, outcome, [], f"worker exit code {code}{where}", command=name)


# ------------------------------------------------------------------------------------ the CLI sample


def run_cli_case(family: str, seed: int, index: int, only: tuple[str, ...] = ()) -> Result:
    """Case `index` through `python -m logscope` in a subprocess, under the same kind of limits."""
    with tempfile.TemporaryDirectory(prefix="logscope-fuzz-cli-") as tmp:
        folder = Path(tmp)
        case = write_limited(family, seed, index, folder, only)
        if isinstance(case, Result):
            return case
        out = folder / "out"
        out.mkdir()
        name, args = case_argv(family, index, case, out, only)
        args = _chain(args)[0]

        def limits() -> None:
            resource.setrlimit(resource.RLIMIT_AS, (CLI_MEMORY_BYTES, CLI_MEMORY_BYTES))
            resource.setrlimit(resource.RLIMIT_CPU, (CLI_TIMEOUT_SECONDS, CLI_TIMEOUT_SECONDS + 5))

        result = Result(family, index, "ok", case.mutations, input_bytes=case.input_bytes, command=name)
        try:
            done = subprocess.run(
                [sys.executable, "-m", "logscope", *args],
                capture_output=True,
                text=True,
                errors="replace",
                timeout=CLI_TIMEOUT_SECONDS * 2,
                preexec_fn=limits,
                cwd=folder,
            )
        except subprocess.TimeoutExpired:
            result.outcome, result.detail = "timeout", "CLI over its time limit"
            return result
        result.exit_code = done.returncode
        if done.returncode in (-signal.SIGKILL, -signal.SIGXCPU):
            result.outcome, result.detail = "memory-limit", f"exit {done.returncode}"
        else:
            result.outcome, result.detail = classify(done.returncode, done.stderr)
        return result


# ------------------------------------------------------------------------------------ a run


STOP = {"now": False}  # set by `benchmarks/fuzz.py` on SIGTERM: the run ends after the current case


def run_family(
    family: str,
    cases: int,
    seed: int,
    cli_every: int = 0,
    progress: io.TextIOBase | None = None,
    deadline: float | None = None,
    start: int = 0,
    only: tuple[str, ...] = (),
    checkpoint: Any = None,
) -> Summary:
    """Cases `start` .. `start + cases - 1` of `family` (and every `cli_every`-th through a subprocess);
    stops early at `deadline` (a `time.monotonic()` value) or when `STOP` is set (a signal handler
    does), the summary saying how many cases ran. `checkpoint(summary)` is called every 250 cases."""
    summary = Summary(family)
    _import_before_fork()
    worker = Worker(seed, only)
    began = time.process_time()
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    try:
        for index in range(start, start + cases):
            if STOP["now"] or (deadline is not None and time.monotonic() > deadline):
                break
            result = worker.run(family, index)
            summary.add(result)
            if result.outcome not in ("ok", "refused") and progress is not None:
                progress.write(
                    f"  {family}/{index}: {result.outcome} {result.command} "
                    f"{result.mutations} {result.detail}\n"
                )
            if cli_every and index % cli_every == 0:
                cli = run_cli_case(family, seed, index, only)
                summary.cli_counts[cli.outcome] += 1
                if cli.outcome not in ("ok", "refused"):
                    summary.failures.append(cli)
            if checkpoint is not None and (index + 1 - start) % 250 == 0:
                checkpoint(summary)
            if progress is not None and (index + 1 - start) % 500 == 0:
                progress.write(f"  {family}: {index + 1 - start}/{cases} {dict(summary.counts)}\n")
                progress.flush()
    finally:
        worker.stop()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    summary.cpu_seconds = (
        time.process_time()
        - began
        + (after.ru_utime - children.ru_utime)
        + (after.ru_stime - children.ru_stime)
    )
    return summary


def format_summary(summaries: list[Summary]) -> str:
    """The counts per family: logscope's outcomes, then (after `|`) the harness's own defects."""
    head = f"{'family':<10} {'cases':>7} " + " ".join(f"{o:>12}" for o in OUTCOMES)
    head += " |" + " ".join(f"{o:>17}" for o in HARNESS_OUTCOMES)
    head += f" {'CLI sample':>24} {'CPU s':>7} {'peak MiB':>9} {'max x input':>11}"
    out = [head]
    for s in summaries:
        cli = ", ".join(f"{k} {v}" for k, v in sorted(s.cli_counts.items())) or "—"
        multiple = f"{s.max_multiple:.1f}" if s.max_multiple else "—"
        out.append(
            f"{s.family:<10} {s.cases:>7} "
            + " ".join(f"{s.counts[o]:>12}" for o in OUTCOMES)
            + " |"
            + " ".join(f"{s.counts[o]:>17}" for o in HARNESS_OUTCOMES)
            + f" {cli:>24} {s.cpu_seconds:>7.0f} {s.peak_bytes / 2**20:>9.1f} {multiple:>11}"
        )
    out.append("")
    out.append("per command: ok / refused / bad (mean CPU per case)")
    for s in summaries:
        cells = []
        for name in sorted(s.by_command):
            c = s.by_command[name]
            bad = sum(c[o] for o in BAD_OUTCOMES)
            cpu_ms = 1000 * s.command_cpu[name] / max(1, sum(c.values()))
            cells.append(f"{name} {c['ok']}/{c['refused']}/{bad} ({cpu_ms:.0f} ms)")
        out.append(f"  {s.family}: " + ", ".join(cells))
    out.append("")
    for s in summaries:
        out.append(
            f"  {s.family}: largest peak {s.peak_bytes / 2**20:.1f} MiB ({s.peak_case}); largest input "
            f"{s.largest_input:,} B; largest peak/input over inputs >= 64 KiB {s.max_multiple:.1f} "
            f"({s.max_multiple_case or 'none'})"
        )
    for title, kinds in (
        ("failures of logscope", BAD_OUTCOMES),
        ("defects of the harness (cases not run by logscope)", HARNESS_OUTCOMES),
    ):
        failures = [f for s in summaries for f in s.failures if f.outcome in kinds]
        if not failures:
            continue
        out.append("")
        out.append(f"{title} (family/index: outcome, command, mutations, why):")
        seen: Counter[str] = Counter()
        for f in failures:
            seen[f.detail] += 1
            if seen[f.detail] <= 3:
                out.append(f"  {f.family}/{f.index}: {f.outcome} {f.command} {f.mutations} {f.detail}")
        out.append(f"  ({len(failures)} cases, {len(seen)} distinct)")
    return "\n".join(out)
