"""`make bench` (fixed costs): start-up latency, audits of many small logs, and end-to-end big logs.

All figures are process CPU time (user + system), robust to the other jobs of a shared machine in a way
wall time is not; each is the best of N runs (`--repeat`, default 5, for every part: on a virtual
machine whose speed changes from minute to minute, the two runs of one figure differed by up to 1.5x),
the runs of a comparison interleaved (A B A B ...) so both sides see the same load. Nothing is asserted:
a missed target prints MISSED, figures go to benchmarks/out/fixed_costs.json. Exit 1 only if something
fails to run.

1. **Start-up.** Fresh processes: the floor `python -c "import pandas, pyarrow"` (what any pandas tool
   pays), `logscope --help`, and `logscope parse` of the 303-line fixture 09. Bytecode is compiled first
   (`compileall`, as an installed wheel has it) and one untimed run fills the compiled-grammar cache.
   Targets: `--help` <= 1.2x the floor, `parse` <= 1.5x.
2. **Audit of typical CI build logs.** `--audit-files` generated verbose RKNN-Toolkit2 build logs (one
   build each, 200-900 layers, noise lines 30-70 %, `benchmarks/generate.py`), cached in
   benchmarks/out/ci-corpus/. In this process: the per-line regex scan of every file
   (`benchmarks/baseline.py`) against `logscope.audit.audit(..., jobs=1)` into a fresh DuckDB file.
   **ratio = scan CPU / audit CPU** (target >= 0.5). The per-file breakdown runs the stages of one audit
   separately on every file: detect (`logscope.detect`), parse (the family's parser), derive (derived
   memory figures), rules (`analyze_log`), each file with the collector paused as the audit pauses it;
   store = the audit's CPU minus those four (rows, DuckDB, hashing, the collector's pass after each file).
   **2 workers vs 1**: elapsed time of `logscope audit --jobs 2` against `--jobs 1`, each in a fresh
   process, over `--worker-files` logs (default 160: the same 40 and 120 more of the same kind; the pool's
   start, about 0.6 s of CPU, is paid once per run, as a user pays it), interleaved, best of N (a speed-up
   is about elapsed time; CPU time cannot show it); target >= 1.7,
   reachable only with two free cores. The same is then run over four times as many logs: the
   difference between the two sizes is the marginal speed-up, what two workers do for the extra logs
   with the start both runs pay cancelled (as the per-file cost falls, that fixed start weighs more in a
   160-log run).
3. **Big logs.** At each size of `--big-mb` (default 20 and 100 MB): two table-dense logs, fixture 09
   (the largest published real log) repeated and the largest log of the compiler corpus (real
   rknn-toolkit2 output) repeated, and the generated 50 %-noise verbose log of benchmarks/run.py.
   Start-up is a fixed cost of the CLI (about 0.6 s of CPU, of which 0.4 s import pandas and pyarrow),
   so the end-to-end ratio grows with the size; the larger size shows what a large log costs per byte.
   `logscope parse --format json` in a fresh process (CPU of the child, start-up included) and
   `logscope.parse` in this process, each against the regex scan in this process. Targets: end to end
   >= 0.5, in process >= 0.8. Then one run of the CLI's stages in this process, each timed: parse,
   rules, JSON (summary and text). Peak memory over noise lines is benchmarks/run.py's part.
4. **Per line kind.** Where the big-log ratio goes: logs of `--kind-lines` lines of one kind each, cut from
   real logs (fixture 09's build head, then its tensor rows, its layer rows, its native noise lines or
   its pass markers repeated, then its tail; the largest corpus log's head, then its native
   `tensor name: ... is ...` warnings repeated), `logscope.parse` in this process against the regex
   scan, in microseconds per line. A big log's in-process ratio is about the line-weighted mix of
   these, plus what each build costs beyond its lines.

Usage: python benchmarks/fixed_costs.py [--repeat N] [--audit-files N] [--worker-files N]
       [--big-mb MB[,MB...]] [--kind-lines N] [--only startup,audit,big,kinds]
"""

from __future__ import annotations

import argparse
import compileall
import gc
import gzip
import json
import os
import resource
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run as `python benchmarks/fixed_costs.py`
    sys.path.insert(0, str(ROOT))

from benchmarks.baseline import scan_records  # noqa: E402
from benchmarks.generate import GENERATOR_VERSION, generate_log  # noqa: E402
from benchmarks.run import machine  # noqa: E402

OUT = ROOT / "benchmarks" / "out"
FIXTURE = ROOT / "fixtures" / "rknn" / "09-build-verbose-mobilenetv1-rv1106-tk2-1.5.2-simulator.log"
BIN = Path(sys.executable).parent
TARGETS = {"help": 1.2, "parse_small": 1.5, "audit": 0.5, "workers": 1.7, "big_cli": 0.5, "big_inproc": 0.8}
NOISE = (0.3, 0.5, 0.6, 0.7)


def children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def self_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def run_cpu(cmd: list[str]) -> float:
    """CPU time of one child process running `cmd` (its output discarded); raises if it fails badly."""
    before = children_cpu()
    proc = subprocess.run(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
    check_exit(" ".join(cmd), proc.returncode, proc.stderr)
    return children_cpu() - before


def check_exit(label: str, returncode: int, stderr: bytes) -> None:
    """Raise when a command failed badly; 1 is findings at or above --fail-on, still a full run."""
    if returncode not in (0, 1):
        raise RuntimeError(f"{label} exited {returncode}: {stderr.decode()[-500:]}")


def audit_command(files: list[str], db: Path, jobs: int) -> list[str]:
    return [str(BIN / "logscope"), "audit", *files, "--db", str(db), "--jobs", str(jobs)]


def inproc_cpu(fn: Callable[[], Any]) -> float:
    """CPU seconds of `fn()` in this process, after a full collection: what an earlier measurement left
    for the collector (a parsed log's reference cycles) must not be walked on this one's time (a
    tensor-row parse measured 18 % slower after the CLI stages of a 20 MB log, and not after a collection)."""
    gc.collect()
    before = self_cpu()
    fn()
    return self_cpu() - before


def interleaved(fns: dict[str, Callable[[], float]], repeat: int) -> dict[str, list[float]]:
    """Each measuring function `repeat` times, round-robin; all figures per name."""
    out: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(repeat):
        for name, fn in fns.items():
            out[name].append(fn())
    return out


def load() -> float:
    return os.getloadavg()[0]


# ----------------------------------------------------------------------------------------------- 1


def startup(repeat: int) -> dict[str, Any]:
    logscope_bin = str(BIN / "logscope")
    commands = {
        "floor": [sys.executable, "-c", "import pandas, pyarrow"],
        "help": [logscope_bin, "--help"],
        "parse_small": [logscope_bin, "parse", str(FIXTURE)],
    }
    run_cpu(commands["parse_small"])  # fills the compiled-grammar cache
    load0 = load()
    runs = interleaved({name: (lambda c=cmd: run_cpu(c)) for name, cmd in commands.items()}, repeat)
    best = {name: min(times) for name, times in runs.items()}
    return {
        "commands": {
            name: " ".join(Path(c).name if i == 0 else c for i, c in enumerate(cmd))
            for name, cmd in commands.items()
        },
        "runs_s": runs,
        "best_s": best,
        "ratio": {name: best[name] / best["floor"] for name in ("help", "parse_small")},
        "load": [load0, load()],
    }


# ----------------------------------------------------------------------------------------------- 2


def ci_corpus(n_files: int) -> list[Path]:
    """`n_files` generated CI build logs; file i is always seed 2000 + i, so a larger corpus extends a
    smaller one (only the missing files are generated)."""
    folder = OUT / "ci-corpus"
    key = {"generator_version": GENERATOR_VERSION, "noise": list(NOISE), "seed": 2000}
    meta = folder / "meta.json"
    paths = [folder / f"ci-{i:03d}" / "build.log" for i in range(n_files)]
    if not meta.is_file() or {k: v for k, v in json.loads(meta.read_text()).items() if k != "files"} != key:
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        meta.write_text(json.dumps(key))
    for i, path in enumerate(paths):
        if not path.is_file():
            generate_log(path, builds=1, seed=2000 + i, noise_ratio=NOISE[i % len(NOISE)])
    return paths


def stage_breakdown(paths: list[Path]) -> dict[str, float]:
    """CPU seconds of each stage of `logscope.analyze`, summed over `paths` (one pass, in this process)."""
    from logscope.collector import collector_paused

    total = {"detect": 0.0, "parse": 0.0, "derive": 0.0, "rules": 0.0}
    for path in paths:
        with collector_paused():  # as the audit runs each file
            seconds = _stages(path)
        for stage, value in zip(total, seconds, strict=True):
            total[stage] += value
    return total


def _stages(path: Path) -> tuple[float, float, float, float]:
    """CPU seconds of detect, parse, derive and rules of one file."""
    from logscope.analysis.derived import add_derived_memory
    from logscope.analysis.mcu import add_mcu_memory
    from logscope.api import _drained
    from logscope.detect import detect_blocks
    from logscope.io import LogStream
    from logscope.parsers.mcu import parse_mcu_blocks
    from logscope.parsers.rknn import parse_rknn_blocks
    from logscope.rules import analyze_log, resolve_config

    t0 = self_cpu()
    stream = LogStream(path)
    blocks = iter(stream)
    detection, head = detect_blocks(blocks)
    t1 = self_cpu()
    if detection.family == "mcu":
        log = parse_mcu_blocks(stream, _drained(head, blocks))
        t2 = self_cpu()
        add_mcu_memory(log)
    else:
        log = parse_rknn_blocks(stream, _drained(head, blocks))
        t2 = self_cpu()
        add_derived_memory(log)
    t3 = self_cpu()
    analyze_log(log, resolve_config(None, path))
    t4 = self_cpu()
    return t1 - t0, t2 - t1, t3 - t2, t4 - t3


def audit_bench(n_files: int, repeat: int, worker_files: int) -> dict[str, Any]:
    import logscope
    from logscope.audit import AuditOptions, audit

    paths = ci_corpus(n_files)
    size = sum(p.stat().st_size for p in paths)
    work = OUT / "fixed-costs-audit"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    logscope.analyze(FIXTURE)  # imports and grammars: once per process, not per file
    names = [str(p) for p in paths]
    counter = iter(range(10**6))

    def scan() -> float:
        return inproc_cpu(lambda: [scan_records(p) for p in names])

    def audit_cpu() -> float:
        db = work / f"a{next(counter)}.duckdb"
        seconds = inproc_cpu(lambda: audit(names, db, AuditOptions(jobs=1)))
        db.unlink(missing_ok=True)
        return seconds

    def audit_wall(jobs: int, files: list[str]) -> Callable[[], float]:
        """Elapsed seconds of `logscope audit --jobs N` in a fresh process: the pool's start is paid on
        every run, as a user pays it (in this process a fork server would outlive the first run)."""

        def run() -> float:
            db = work / f"w{next(counter)}.duckdb"
            t0 = time.perf_counter()
            proc = subprocess.run(
                audit_command(files, db, jobs),
                cwd=ROOT,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                check=False,
            )
            seconds = time.perf_counter() - t0
            check_exit(f"logscope audit --jobs {jobs}", proc.returncode, proc.stderr)
            db.unlink(missing_ok=True)
            return seconds

        return run

    def audit_halves(files: list[str]) -> float:
        """Elapsed seconds of two `logscope audit --jobs 1` processes started at once, each on half of
        `files` and writing its own store: a split of the work with nothing shared (no pool, no single
        writer, no results sent between processes), each process paying its own start: what 2 cores give
        a split of this audit without the pool, set beside the pool's figure (which can beat it: the pool
        imports and opens the store once)."""
        halves = (files[: len(files) // 2], files[len(files) // 2 :])
        dbs = [work / f"h{next(counter)}.duckdb" for _ in halves]
        t0 = time.perf_counter()
        procs = [
            subprocess.Popen(
                audit_command(half, db, 1),
                cwd=ROOT,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
            )
            for half, db in zip(halves, dbs, strict=True)
        ]
        errors = [proc.communicate()[1] for proc in procs]
        seconds = time.perf_counter() - t0
        for proc, err in zip(procs, errors, strict=True):
            check_exit("logscope audit --jobs 1 (half)", proc.returncode, err)
        for db in dbs:
            db.unlink(missing_ok=True)
        return seconds

    load0 = load()
    cpu = interleaved({"scan": scan, "audit_jobs1": audit_cpu}, repeat)
    load1 = load()
    stages = min((stage_breakdown(paths) for _ in range(repeat)), key=lambda s: sum(s.values()))
    best = {name: min(times) for name, times in cpu.items()}
    per_file = {stage: seconds / len(paths) for stage, seconds in stages.items()}
    per_file["store"] = max(0.0, best["audit_jobs1"] / len(paths) - sum(per_file.values()))
    load2 = load()
    many = [str(p) for p in ci_corpus(worker_files)]
    wall = interleaved(
        {"jobs1": audit_wall(1, many), "jobs2": audit_wall(2, many), "halves": lambda: audit_halves(many)},
        repeat,
    )
    # The same over four times the logs: the difference between the two sizes is what the extra logs
    # cost, without the start both runs pay (the marginal speed-up of a long audit).
    more = [str(p) for p in ci_corpus(4 * worker_files)]
    wall_more = interleaved({"jobs1": audit_wall(1, more), "jobs2": audit_wall(2, more)}, repeat)
    shutil.rmtree(work, ignore_errors=True)
    return {
        "files": len(paths),
        "mb": size / 1e6,
        "runs_cpu_s": cpu,
        "best_cpu_s": best,
        "ratio": best["scan"] / best["audit_jobs1"],
        "scan_mb_s": size / 1e6 / best["scan"],
        "audit_mb_s": size / 1e6 / best["audit_jobs1"],
        "per_file_ms": {k: v * 1000 for k, v in per_file.items()},
        "wall_s": wall,
        "speedup": min(wall["jobs1"]) / min(wall["jobs2"]),
        "speedup_halves": min(wall["jobs1"]) / min(wall["halves"]),
        "wall_more_s": wall_more,
        "more_files": len(more),
        "speedup_more": min(wall_more["jobs1"]) / min(wall_more["jobs2"]),
        "speedup_marginal": (min(wall_more["jobs1"]) - min(wall["jobs1"]))
        / max(1e-9, min(wall_more["jobs2"]) - min(wall["jobs2"])),
        "worker_files": len(many),
        "worker_mb": sum(os.path.getsize(p) for p in many) / 1e6,
        "load": [load0, load1, load2, load()],
    }


# ----------------------------------------------------------------------------------------------- 3


def big_inputs(mb: float) -> list[tuple[str, Path]]:
    """The big logs of `mb` MB: fixture 09 repeated, the largest real compiler log of the corpus repeated,
    and a generated verbose log (cached in benchmarks/out/)."""
    OUT.mkdir(parents=True, exist_ok=True)
    out = []
    for name, source in (("fixture09_repeated", FIXTURE), ("corpus_largest_repeated", largest_corpus_log())):
        path = OUT / f"{name}-x{mb:g}MB.log"
        text = source.read_bytes() if source.suffix != ".gz" else gzip.decompress(source.read_bytes())
        copies = max(1, int(mb * 1e6 / len(text)))
        if not path.is_file() or path.stat().st_size != len(text) * copies:
            path.write_bytes(text * copies)
        out.append((name, path))
    verbose = OUT / f"verbose-{mb:g}MB.log"
    meta = verbose.with_suffix(".meta.json")
    key = {"generator_version": GENERATOR_VERSION, "mb": mb, "noise": 0.5, "seed": 0}
    if not verbose.is_file() or not meta.is_file() or json.loads(meta.read_text()) != key:
        generate_log(verbose, target_mb=mb, noise_ratio=0.5, seed=0)
        meta.write_text(json.dumps(key))
    out.append(("generated_verbose", verbose))
    return out


def largest_corpus_log() -> Path:
    """The largest log of the compiler corpus (real rknn-toolkit2 output), by uncompressed size; ties
    by path, so the choice is the same on every machine."""
    logs = sorted((ROOT / "fixtures" / "rknn-compiler").rglob("*.log.gz"))
    return max(logs, key=lambda p: (gzip_size(p), str(p)))


def gzip_size(path: Path) -> int:
    """The uncompressed size a single-member gzip file records in its last 4 bytes (ISIZE), read
    without reading the file."""
    with open(path, "rb") as fh:
        fh.seek(-4, os.SEEK_END)
        return int.from_bytes(fh.read(4), "little")


def big_logs(sizes: list[float], repeat: int) -> dict[str, Any]:
    import logscope

    logscope.parse(FIXTURE)
    cli = [str(BIN / "logscope"), "parse", "--format", "json"]
    out: dict[str, Any] = {}
    for mb in sizes:
        for name, path in big_inputs(mb):
            load0 = load()
            runs = interleaved(
                {
                    "scan": lambda p=path: inproc_cpu(lambda: scan_records(p)),
                    "inproc": lambda p=path: inproc_cpu(lambda: logscope.parse(p)),
                    "cli": lambda p=path: run_cpu([*cli, str(p)]),
                },
                repeat,
            )
            best = {k: min(v) for k, v in runs.items()}
            out[f"{name} {mb:g} MB"] = {
                "path": str(path.relative_to(ROOT)),
                "mb": path.stat().st_size / 1e6,
                "runs_s": runs,
                "best_s": best,
                "ratio_inproc": best["scan"] / best["inproc"],
                "ratio_cli": best["scan"] / best["cli"],
                "stages_s": cli_stages(path),
                "load": [load0, load()],
            }
    return out


def cli_stages(path: Path) -> dict[str, float]:
    """CPU seconds of what `logscope parse --format json` does after start-up, stage by stage, in this
    process (one run): parse (with the derived figures), rules (`analyze_log`), json (`iter_json`, the
    pieces the command writes: the summary of every build, then the text, into the null device). Each
    runs with the collector paused, as the command runs it."""
    import logscope
    from logscope.collector import collector_paused
    from logscope.render.summary import iter_json
    from logscope.rules import analyze_log, resolve_config

    with collector_paused(), open(os.devnull, "w", encoding="utf-8") as sink:
        t0 = self_cpu()
        log = logscope.parse(path)
        t1 = self_cpu()
        analyze_log(log, resolve_config(None, path))
        t2 = self_cpu()
        sink.writelines(iter_json([log]))
        t3 = self_cpu()
    builds = len(log.frames["builds"])
    return {"parse": t1 - t0, "rules": t2 - t1, "json": t3 - t2, "builds": builds}


# ----------------------------------------------------------------------------------------------- 4


def kind_inputs(lines_per_kind: int) -> dict[str, Path]:
    """One log per line kind (see the module docstring, part 4), cached in benchmarks/out/kinds/.

    The pieces are found by what the lines say (table headers, pass markers, the native warning), not
    by line numbers, and every repeated line is a real line of the source log."""
    folder = OUT / "kinds"
    folder.mkdir(parents=True, exist_ok=True)
    fixture = FIXTURE.read_text(encoding="utf-8").split("\n")
    layer_header = next(i for i, line in enumerate(fixture) if "ID   OpType" in line)
    tensor_headers = [i for i, line in enumerate(fixture) if "ID  User" in line]  # feature, then const
    tensor_header = tensor_headers[-1]
    table_end = next(i for i, line in enumerate(fixture) if "Total Weight Memory Size" in line) - 2
    layers = [x for x in fixture[layer_header + 1 : tensor_headers[0]] if _is_row(x)]
    consts = [x for x in fixture[tensor_header + 1 : table_end] if _is_row(x)]
    passes = [x for x in fixture[:layer_header] if ">>>>>> start:" in x or "<<<<<<<< end:" in x]
    noise = [x for x in fixture[:layer_header] if x.startswith("D RKNN: [") and _is_native_noise(x)]
    head, tail = fixture[:layer_header], fixture[table_end:]
    corpus = gzip.decompress(largest_corpus_log().read_bytes()).decode("utf-8").split("\n")
    first_warning = next(i for i, line in enumerate(corpus) if _is_tensor_warning(line))
    warnings = [x for x in corpus if _is_tensor_warning(x)]
    plans = {
        "tensor_rows": (head, [fixture[tensor_header]], consts, tail),
        "layer_rows": (head, [fixture[layer_header]], layers, tail),
        "native_noise": (head, [], noise, tail),
        "pass_markers": (head, [], passes, tail),
        "native_messages": (corpus[:first_warning], [], warnings, ["I rknn building done."]),
    }
    out = {}
    for kind, (before, header, body, after) in plans.items():
        path = folder / f"{kind}-{lines_per_kind}.log"
        if not path.is_file():
            repeated = [body[i % len(body)] for i in range(lines_per_kind)]
            path.write_text("\n".join([*before, *header, *repeated, *after]) + "\n", encoding="utf-8")
        out[kind] = path
    return out


def _is_row(line: str) -> bool:
    """A table row of fixture 09: `D RKNN: [hh:mm:ss.mmm] ` then the row's numeric id."""
    body = line.partition("] ")[2]
    return line.startswith("D RKNN: [") and body[:1].isdigit()


def _is_native_noise(line: str) -> bool:
    """fixture 09's native chatter inside the OpEmit pass (`not need tranpose`, `emit tp0`, ...)."""
    body = line.partition("] ")[2]
    return body.startswith(("emit ", "not need tranpose", "finish initComputeZoneMap"))


def _is_tensor_warning(line: str) -> bool:
    return line.startswith("W RKNN: [") and "] tensor name: " in line


def kinds_bench(lines_per_kind: int, repeat: int) -> dict[str, Any]:
    import logscope

    out: dict[str, Any] = {}
    for kind, path in kind_inputs(lines_per_kind).items():
        logscope.parse(path)  # grammars and imports, once
        lines = path.read_bytes().count(b"\n")
        runs = interleaved(
            {
                "scan": lambda p=path: inproc_cpu(lambda: scan_records(p)),
                "inproc": lambda p=path: inproc_cpu(lambda: logscope.parse(p)),
            },
            repeat,
        )
        best = {k: min(v) for k, v in runs.items()}
        out[kind] = {
            "path": str(path.relative_to(ROOT)),
            "lines": lines,
            "runs_s": runs,
            "us_per_line": {k: v * 1e6 / lines for k, v in best.items()},
            "ratio_inproc": best["scan"] / best["inproc"],
        }
    return out


# ------------------------------------------------------------------------------------------ report


def verdict(value: float, target: float, higher: bool = True) -> str:
    ok = value >= target if higher else value <= target
    return "OK" if ok else "MISSED"


def best_of(runs: list[float]) -> str:
    """A figure's best run in seconds, and the range of its runs beside it: on a machine whose speed
    varies by the minute (the same loop 1.06-1.71 s of CPU within ten minutes was seen), the range says
    how far the best of N can be trusted."""
    return f"{min(runs):.2f} s [{min(runs):.2f}-{max(runs):.2f}]"


def report(results: dict[str, Any]) -> None:
    m = results["machine"]
    say = print
    say(
        f"\nlogscope fixed costs  {m['date']}  nproc={m['nproc']}  Python {m['python']}  "
        f"(CPU, best of {results.get('args', {}).get('repeat', 'N')} runs; [range of the runs])"
    )
    if "startup" in results:
        s = results["startup"]
        say(f"start-up (load {s['load'][0]:.1f} -> {s['load'][1]:.1f}):")
        say(f"  floor `python -c 'import pandas, pyarrow'`  {s['best_s']['floor']:.3f} s")
        for name, label in (("help", "logscope --help"), ("parse_small", "logscope parse 09")):
            r, target = s["ratio"][name], TARGETS[name]
            say(
                f"  {label:34} {s['best_s'][name]:.3f} s = {r:.2f}x floor "
                f"(target <= {target}x)  {verdict(r, target, False)}"
            )
    if "audit" in results:
        a = results["audit"]
        say(
            f"audit of {a['files']} CI build logs, {a['mb']:.1f} MB "
            f"(load {a['load'][0]:.1f} -> {a['load'][-1]:.1f}):"
        )
        runs = a["runs_cpu_s"]
        say(f"  regex scan {best_of(runs['scan'])} ({a['scan_mb_s']:.1f} MB/s)")
        say(
            f"  audit --jobs 1 {best_of(runs['audit_jobs1'])} "
            f"({a['audit_mb_s']:.1f} MB/s): ratio {a['ratio']:.3f} "
            f"(target >= {TARGETS['audit']})  {verdict(a['ratio'], TARGETS['audit'])}"
        )
        pf = a["per_file_ms"]
        say(
            "  per file, ms CPU: "
            + ", ".join(f"{k} {v:.1f}" for k, v in pf.items())
            + f" (total {sum(pf.values()):.1f})"
        )
        w = a["wall_s"]
        say(
            f"  elapsed over {a['worker_files']} logs ({a['worker_mb']:.0f} MB): "
            f"--jobs 1 {best_of(w['jobs1'])}, "
            f"--jobs 2 {best_of(w['jobs2'])}: "
            f"speed-up {a['speedup']:.2f}x (target >= {TARGETS['workers']}x)  "
            f"{verdict(a['speedup'], TARGETS['workers'])}"
        )
        if "halves" in w:
            say(
                f"  two --jobs 1 processes at once, half the logs each, own store: {best_of(w['halves'])}: "
                f"{a['speedup_halves']:.2f}x (a 2-way split with nothing shared; the pool gets "
                f"{a['speedup'] / a['speedup_halves']:.0%} of its speed-up)"
            )
        m, marginal = a["wall_more_s"], a["speedup_marginal"]
        extra = a["more_files"] - a["worker_files"]
        say(
            f"  over {a['more_files']} logs: --jobs 1 {best_of(m['jobs1'])}, "
            f"--jobs 2 {best_of(m['jobs2'])}: speed-up {a['speedup_more']:.2f}x; "
            f"the {extra} extra logs "
            f"alone (start-up cancelled): {marginal:.2f}x  {verdict(marginal, TARGETS['workers'])}"
        )
    for name, b in results.get("big", {}).items():
        runs = b["runs_s"]
        say(
            f"big log {name} ({b['mb']:.1f} MB, load {b['load'][0]:.1f} -> {b['load'][1]:.1f}): "
            f"scan {best_of(runs['scan'])}"
        )
        say(
            f"  logscope.parse {best_of(runs['inproc'])} = {b['ratio_inproc']:.2f} "
            f"(target >= {TARGETS['big_inproc']})  {verdict(b['ratio_inproc'], TARGETS['big_inproc'])}"
        )
        say(
            f"  CLI parse --format json {best_of(runs['cli'])} = {b['ratio_cli']:.2f} "
            f"(target >= {TARGETS['big_cli']})  {verdict(b['ratio_cli'], TARGETS['big_cli'])}"
        )
        st = b["stages_s"]
        say(
            f"  in process, {st['builds']:.0f} builds: parse {st['parse']:.2f} s, rules {st['rules']:.2f} s, "
            f"json {st['json']:.2f} s"
        )
    if "kinds" in results:
        say("per line kind, logscope.parse in process (us per line, logscope / scan = ratio):")
        for kind, k in results["kinds"].items():
            us = k["us_per_line"]
            say(
                f"  {kind:16} {us['inproc']:.2f} / {us['scan']:.2f} = {k['ratio_inproc']:.2f}"
                f"  ({k['lines']} lines)"
            )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--audit-files", type=int, default=40)
    ap.add_argument("--worker-files", type=int, default=160, help="logs of the 2-workers-vs-1 comparison")
    ap.add_argument("--big-mb", default="20,100", help="sizes of the big logs, MB, comma-separated")
    ap.add_argument("--kind-lines", type=int, default=100_000, help="lines of each per-kind log")
    ap.add_argument("--only", default="startup,audit,big,kinds")
    args = ap.parse_args(argv)
    parts = set(args.only.split(","))
    results: dict[str, Any] = {"machine": machine(), "args": vars(args)}
    failed = False
    # Every part runs the command in fresh processes: their bytecode compiled first, as an installed
    # wheel has it (with PYTHONDONTWRITEBYTECODE set, each process would compile logscope's sources).
    compileall.compile_dir(ROOT / "logscope", quiet=1)
    try:
        if "startup" in parts:
            results["startup"] = startup(args.repeat)
        if "audit" in parts:
            results["audit"] = audit_bench(args.audit_files, args.repeat, args.worker_files)
        if "big" in parts:
            results["big"] = big_logs([float(x) for x in args.big_mb.split(",")], args.repeat)
        if "kinds" in parts:
            results["kinds"] = kinds_bench(args.kind_lines, args.repeat)
    except Exception:
        import traceback

        results["error"] = traceback.format_exc()
        print(results["error"], file=sys.stderr)
        failed = True
    results["machine"]["loadavg_at_end"] = os.getloadavg()
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "fixed_costs.json").write_text(json.dumps(results, indent=2, default=str))
    report(results)
    print(f"results: {(OUT / 'fixed_costs.json').relative_to(ROOT)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
