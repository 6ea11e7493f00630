"""The fuzz harness: mutated logs and models through the library path every command takes, each case in
a forked worker with an address-space limit and a time limit, every outcome counted.

Outcomes of a case:
- `ok`: every step ran (a step refusing with a `LogscopeError`, e.g. a plot with nothing to draw, is a
  clean one-line exit 2 in the CLI and counts as ok);
- `refused`: the input was refused as a whole with a `LogscopeError` (not a log, binary, corrupt
  archive, an unsafe or oversized model): one line and exit 2 in the CLI;
- `traceback`: any other exception: a bug;
- `memory-limit`: the case needed more than the worker's address-space limit (a `MemoryError`, or the
  worker killed);
- `timeout`: the case took longer than the time limit (CPU seconds);
- `crash`: the worker died another way.

The bulk runs in process (fork once, run many cases, restart after a failure or every
`RESTART_EVERY` cases so one case's leftovers never count against the next); a sample goes through
the real CLI in a subprocess (`python -m logscope ...`, same limits) to check exit codes and that stderr
holds one line, never a traceback. Case `i` of a family is generated from seed `(seed, family, i)`, so
any case replays alone.
"""

from __future__ import annotations

import contextlib
import io
import multiprocessing
import random
import resource
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "fixtures"
TEXT_FAMILIES = ("rknn", "mcu", "synthetic")
FAMILIES = (*TEXT_FAMILIES, "onnx")
OUTCOMES = ("ok", "refused", "traceback", "memory-limit", "timeout", "crash")

# Limits of one case. The address-space limit is over the worker's own size after imports (pandas,
# matplotlib and onnx map several hundred MiB before any case runs).
CASE_MEMORY_BYTES = 1024 * 1024 * 1024
CASE_CPU_SECONDS = 30
RESTART_EVERY = 250
CLI_TIMEOUT_SECONDS = 120
CLI_MEMORY_BYTES = 3 * 1024 * 1024 * 1024  # the whole interpreter: imports included


class CaseTimeout(Exception):
    """Raised by SIGXCPU/SIGALRM in the worker when a case runs past its time limit."""


@dataclass
class Result:
    family: str
    index: int
    outcome: str
    mutations: list[str]
    detail: str = ""
    input_bytes: int = 0


@dataclass
class Summary:
    family: str
    counts: Counter[str] = field(default_factory=Counter)
    cli_counts: Counter[str] = field(default_factory=Counter)
    failures: list[Result] = field(default_factory=list)
    cpu_seconds: float = 0.0

    @property
    def cases(self) -> int:
        return sum(self.counts.values())

    @property
    def bad(self) -> int:
        return sum(
            self.counts[o] + self.cli_counts[o] for o in ("traceback", "memory-limit", "timeout", "crash")
        )


def fixture_files(family: str) -> list[Path]:
    return sorted(p for p in (FIXTURES / family).iterdir() if p.is_file() and p.name != "SOURCES.md")


def case_rng(seed: int, family: str, index: int) -> random.Random:
    return random.Random(f"{seed}/{family}/{index}")


# ------------------------------------------------------------------------------------ case generation


class _Corpus:
    """The fixtures of every text family as lines, read once per process."""

    def __init__(self) -> None:
        self.lines: dict[str, list[tuple[Path, list[str]]]] = {}
        for family in TEXT_FAMILIES:
            self.lines[family] = [
                (p, p.read_bytes().decode("utf-8", "replace").split("\n")) for p in fixture_files(family)
            ]
        self.all = [lines for family in TEXT_FAMILIES for _, lines in self.lines[family]]


_CORPUS: _Corpus | None = None


def corpus() -> _Corpus:
    global _CORPUS
    if _CORPUS is None:
        _CORPUS = _Corpus()
    return _CORPUS


def write_case(family: str, seed: int, index: int, folder: Path) -> tuple[Path, Path | None, list[str]]:
    """Write case `index` of `family` into `folder`: (the file, the fixture it came from, mutations)."""
    rng = case_rng(seed, family, index)
    if family == "onnx":
        from mutate_onnx import mutate_model

        data, side, names = mutate_model(rng)
        for name, content in side.items():
            (folder / name).write_bytes(content)
        path = folder / f"case-{index}.onnx"
        path.write_bytes(data)
        return path, None, names
    from mutate import mutate_log

    origin, lines = rng.choice(corpus().lines[family])
    data, suffix, names = mutate_log(list(lines), rng, corpus().all)
    path = folder / f"case-{index}{suffix}"
    path.write_bytes(data)
    return path, origin, [origin.name, *names]


# ------------------------------------------------------------------------------------ running one case


def _quiet_steps(steps: list[Any]) -> None:
    """Run each step; a LogscopeError (a clean refusal: exit 2 in the CLI) ends only that step."""
    from logscope.errors import LogscopeError

    for step in steps:
        with contextlib.suppress(LogscopeError):
            step()


_BASELINES: dict[Path, Any] = {}


def run_log_case(path: Path, origin: Path | None, draw: bool) -> str:
    """The library path of `parse`, `report`, `plot` and `diff` on one file. Returns `ok` or `refused`;
    any other exception propagates (the caller classifies it)."""
    import matplotlib.pyplot as plt

    from logscope.analysis.diff import diff_builds
    from logscope.api import parse
    from logscope.errors import LogscopeError
    from logscope.plots import PLOTS, available_plots, figure_bytes
    from logscope.render.diff import render_diff_json, render_diff_markdown, render_diff_text
    from logscope.render.frames_out import write_frames
    from logscope.render.summary import render_json, render_markdown, render_text
    from logscope.report import build_report
    from logscope.report.render import render_compact, render_html
    from logscope.report.render import render_json as report_json
    from logscope.report.render import render_markdown as report_markdown
    from logscope.rules import analyze_log, resolve_config

    config = resolve_config(None, path)
    try:
        log = analyze_log(parse(path), config)
    except LogscopeError:
        return "refused"
    render_text(log)
    render_json([log])
    render_markdown(log)
    report = build_report([log], budget_bytes=config.sram_bytes)
    report_json(report)
    report_markdown(report)
    render_compact(report)
    kinds = available_plots(log)
    steps: list[Any] = [lambda k=k: plt.close(PLOTS[k](log)) for k in kinds]
    if draw:
        steps.append(lambda: render_html(report, dpi=30))
        steps += [lambda k=k: figure_bytes(PLOTS[k](log), "png", 30) for k in kinds]
        folder = path.parent / f"{path.name}-frames"
        steps.append(lambda: write_frames(log, folder, "csv"))
    if origin is not None:
        if origin not in _BASELINES:
            _BASELINES[origin] = analyze_log(parse(origin), config)
        base = _BASELINES[origin]

        def diff() -> None:
            d = diff_builds(base, log, None, None)
            render_diff_text(d, 5.0)
            render_diff_json(d, 5.0)
            render_diff_markdown(d, 5.0)

        steps.append(diff)
    _quiet_steps(steps)
    plt.close("all")
    return "ok"


def run_model_case(path: Path, draw: bool) -> str:
    """The library path of `reference` (text, JSON, frames, plot) on one model."""
    import matplotlib.pyplot as plt

    from logscope.errors import LogscopeError
    from logscope.reference import ReferenceOptions, analyze_model
    from logscope.render.reference import (
        plot_reference_curves,
        render_reference_json,
        render_reference_text,
        write_reference_frames,
    )

    try:
        result = analyze_model(path, ReferenceOptions())
    except LogscopeError:
        return "refused"
    steps: list[Any] = [lambda: render_reference_text(result), lambda: render_reference_json(result)]
    if draw:
        steps.append(
            lambda: write_reference_frames(result.frames, path.parent / f"{path.name}-frames", "csv")
        )
        steps.append(lambda: plot_reference_curves(result, path.parent / f"{path.name}.png"))
    _quiet_steps(steps)
    plt.close("all")
    return "ok"


def _where(exc: BaseException) -> str:
    """`Type: message @ innermost logscope frame` — one signature per distinct bug."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if "/logscope/" in f.filename]
    at = f" @ {Path(frames[-1].filename).name}:{frames[-1].lineno} {frames[-1].name}" if frames else ""
    message = " ".join(str(exc).split())[:160]
    return f"{type(exc).__name__}: {message}{at}"


def run_case(family: str, seed: int, index: int, folder: Path, draw: bool) -> Result:
    for p in folder.iterdir():
        if p.is_dir():
            import shutil

            shutil.rmtree(p)
        else:
            p.unlink()
    path, origin, names = write_case(family, seed, index, folder)
    size = path.stat().st_size
    try:
        outcome = run_model_case(path, draw) if family == "onnx" else run_log_case(path, origin, draw)
        return Result(family, index, outcome, names, input_bytes=size)
    except MemoryError as exc:
        return Result(family, index, "memory-limit", names, _where(exc), size)
    except CaseTimeout as exc:
        return Result(family, index, "timeout", names, _where(exc), size)
    except RecursionError as exc:
        return Result(family, index, "traceback", names, _where(exc), size)
    except Exception as exc:
        return Result(family, index, "traceback", names, _where(exc), size)


# ------------------------------------------------------------------------------------ the forked worker


def _on_cpu_limit(signum: int, frame: Any) -> None:
    raise CaseTimeout(f"over {CASE_CPU_SECONDS} s of CPU")


def _address_space() -> int:
    with open("/proc/self/statm") as handle:
        return int(handle.read().split()[0]) * resource.getpagesize()


def _import_before_fork() -> None:
    """Everything a case uses, imported once in the parent: each forked worker starts with the same
    code, and the memory limit measures the case, not the imports."""
    import matplotlib

    matplotlib.use("Agg")
    import logscope.analysis.diff
    import logscope.api
    import logscope.plots
    import logscope.reference
    import logscope.render.diff
    import logscope.render.frames_out
    import logscope.render.reference
    import logscope.render.summary
    import logscope.report
    import logscope.report.render  # noqa: F401


def _worker(conn: Any, seed: int, draw_every: int) -> None:
    _import_before_fork()
    limit = _address_space() + CASE_MEMORY_BYTES
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    signal.signal(signal.SIGALRM, _on_cpu_limit)
    with tempfile.TemporaryDirectory(prefix="logscope-fuzz-") as tmp:
        folder = Path(tmp)
        while True:
            job = conn.recv()
            if job is None:
                return
            family, index = job
            signal.setitimer(signal.ITIMER_PROF, CASE_CPU_SECONDS)
            signal.signal(signal.SIGPROF, _on_cpu_limit)
            result = run_case(family, seed, index, folder, draw=index % draw_every == 0)
            signal.setitimer(signal.ITIMER_PROF, 0)
            conn.send(result)


class Worker:
    def __init__(self, seed: int, draw_every: int) -> None:
        self.seed, self.draw_every = seed, draw_every
        self.process: Any = None
        self.done = 0

    def _start(self) -> None:
        context = multiprocessing.get_context("fork")
        self.conn, child = context.Pipe()
        self.process = context.Process(target=_worker, args=(child, self.seed, self.draw_every), daemon=True)
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
            ready = self.conn.poll(CASE_CPU_SECONDS * 4 + 30)
        except OSError:  # the worker died before it read the case
            ready = False
        if ready:
            try:
                result: Result = self.conn.recv()
                self.done += 1
                if result.outcome != "ok" and result.outcome != "refused":
                    self.stop()  # a fresh worker for the next case: no leftovers
                return result
            except (EOFError, OSError):
                pass
        code = self.process.exitcode
        self.stop()
        outcome = "memory-limit" if code in (-signal.SIGKILL, -signal.SIGSEGV, -signal.SIGABRT) else "crash"
        if code is None:
            outcome = "timeout"
        names = []
        return Result(family, index, outcome, names, f"worker exit code {code}")


# ------------------------------------------------------------------------------------ the CLI sample

_CLI_COMMANDS = ("parse-json", "parse-frames", "report-html", "plot-memory", "diff", "report-md")


def run_cli_case(family: str, seed: int, index: int) -> Result:
    """Case `index` through the real CLI in a subprocess, under the same kind of limits."""
    with tempfile.TemporaryDirectory(prefix="logscope-fuzz-cli-") as tmp:
        folder = Path(tmp)
        path, origin, names = write_case(family, seed, index, folder)
        command = _CLI_COMMANDS[index % len(_CLI_COMMANDS)]
        if family == "onnx":
            command = "reference"
            args = ["reference", str(path), "-f", "json", "--plot", str(folder / "r.png")]
        else:
            args = {
                "parse-json": ["parse", str(path), "-f", "json"],
                "parse-frames": [
                    "parse",
                    str(path),
                    "--frames-out",
                    str(folder / "f"),
                    "--frames-format",
                    "csv",
                ],
                "report-html": ["report", str(path), "-o", str(folder / "r.html")],
                "report-md": ["report", str(path), "-o", str(folder / "r.md")],
                "plot-memory": ["plot", str(path), "-k", "memory", "-o", str(folder / "p.png")],
                "diff": ["diff", str(origin), str(path), "-f", "markdown"],
            }[command]

        def limits() -> None:
            resource.setrlimit(resource.RLIMIT_AS, (CLI_MEMORY_BYTES, CLI_MEMORY_BYTES))
            resource.setrlimit(resource.RLIMIT_CPU, (CLI_TIMEOUT_SECONDS, CLI_TIMEOUT_SECONDS + 5))

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
            return Result(family, index, "timeout", [command, *names], "CLI over its time limit")
        err = done.stderr
        if "Traceback" in err or "╭" in err or done.returncode == 3:
            detail = err.strip().splitlines()[-1] if err.strip() else ""
            outcome = "memory-limit" if "MemoryError" in err else "traceback"
            return Result(family, index, outcome, [command, *names], detail)
        if done.returncode in (0, 1):
            return Result(family, index, "ok", [command, *names])
        if done.returncode == 2:
            lines = [line for line in err.splitlines() if line.strip() and not line.startswith("wrote ")]
            if len(lines) == 1 and lines[0].startswith("logscope: error:"):
                return Result(family, index, "refused", [command, *names])
            return Result(
                family, index, "traceback", [command, *names], f"exit 2 without one line: {err[:300]!r}"
            )
        outcome = "memory-limit" if done.returncode in (-signal.SIGKILL, -signal.SIGXCPU) else "crash"
        return Result(family, index, outcome, [command, *names], f"exit {done.returncode}: {err[-300:]!r}")


# ------------------------------------------------------------------------------------ a run


def run_family(
    family: str,
    cases: int,
    seed: int,
    cli_every: int = 0,
    draw_every: int = 25,
    progress: io.TextIOBase | None = None,
    deadline: float | None = None,
) -> Summary:
    """`cases` in-process cases of `family` (and every `cli_every`-th through the CLI); stops early at
    `deadline` (a `time.monotonic()` value), the summary saying how many cases ran."""
    summary = Summary(family)
    _import_before_fork()
    worker = Worker(seed, draw_every)
    start = time.process_time()
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    try:
        for index in range(cases):
            if deadline is not None and time.monotonic() > deadline:
                break
            result = worker.run(family, index)
            summary.counts[result.outcome] += 1
            if result.outcome not in ("ok", "refused"):
                summary.failures.append(result)
                if progress is not None:
                    progress.write(
                        f"  {family}/{index}: {result.outcome} {result.mutations} {result.detail}\n"
                    )
            if cli_every and index % cli_every == 0:
                cli = run_cli_case(family, seed, index)
                summary.cli_counts[cli.outcome] += 1
                if cli.outcome not in ("ok", "refused"):
                    summary.failures.append(cli)
            if progress is not None and (index + 1) % 500 == 0:
                progress.write(f"  {family}: {index + 1}/{cases} {dict(summary.counts)}\n")
                progress.flush()
    finally:
        worker.stop()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    summary.cpu_seconds = (
        time.process_time()
        - start
        + (after.ru_utime - children.ru_utime)
        + (after.ru_stime - children.ru_stime)
    )
    return summary


def format_summary(summaries: list[Summary]) -> str:
    head = (
        f"{'family':<10} {'cases':>7} "
        + " ".join(f"{o:>12}" for o in OUTCOMES)
        + f" {'CLI sample':>30} {'CPU s':>8}"
    )
    out = [head]
    for s in summaries:
        cli = ", ".join(f"{k} {v}" for k, v in sorted(s.cli_counts.items())) or "—"
        out.append(
            f"{s.family:<10} {s.cases:>7} "
            + " ".join(f"{s.counts[o]:>12}" for o in OUTCOMES)
            + f" {cli:>30} {s.cpu_seconds:>8.0f}"
        )
    failures = [f for s in summaries for f in s.failures]
    if failures:
        out.append("")
        out.append("failures (family/index: outcome, mutations, where):")
        seen: Counter[str] = Counter()
        for f in failures:
            seen[f.detail] += 1
            if seen[f.detail] <= 3:
                out.append(f"  {f.family}/{f.index}: {f.outcome} {f.mutations} {f.detail}")
        out.append(f"  ({len(failures)} failures, {len(seen)} distinct)")
    return "\n".join(out)
