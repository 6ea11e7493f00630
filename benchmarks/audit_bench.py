"""`make bench` (audit part): `logscope audit` of 2,000 generated build logs with 1 and 2 workers.

Corpus: benchmarks/generate.py (the verbose RKNN-Toolkit2 1.5.2 build-log generator of run.py), one build
per file, seed = file number, noise-line ratio cycling through 0.1 / 0.2 / 0.3 / 0.5, so the files hold
200-900 layers and weigh ~0.15-0.9 MB each, as a verbose CI build log does. Every fourth file is gzipped,
as CI archives often are. Cached in benchmarks/out/audit-corpus/ (regenerated when the parameters or the
generator version change).

Figures, all from this one process and run:
- **speed-up** = time(--jobs 1) / time(--jobs 2), target >= 1.7 on 2 cores. `--jobs 1` audits in this
  process; `--jobs 2` uses a pool of 2 worker processes plus this process as the writer. To expose both
  to the same machine load, the corpus is cut into `--rounds` chunks and each chunk is audited with 1
  job, then 2 jobs (two databases, each growing chunk by chunk); each side's time is the sum of its rounds,
  pool start-up included.
- **files/s** of each.
- **re-audit ratio** = time to re-run over the whole unchanged corpus / time of the first audit with the
  same jobs, target <= 5 %. Also measured with `--rehash` (every file hashed, nothing trusted to mtime).
- the two databases must hold the same rows (checked, table by table).
Load averages are recorded at the start and end of every run: other jobs on the machine slow both sides.
Nothing is asserted on timings; a missed target prints MISSED. Exit 1 only if an audit fails.
"""

from __future__ import annotations

import argparse
import datetime as dt
import gzip
import json
import os
import platform
import shutil
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run as `python benchmarks/audit_bench.py`
    sys.path.insert(0, str(ROOT))

from benchmarks.generate import GENERATOR_VERSION, generate_log  # noqa: E402

OUT = ROOT / "benchmarks" / "out"
CORPUS = OUT / "audit-corpus"
NOISE = (0.1, 0.2, 0.3, 0.5)
SPEEDUP_TARGET = 1.7
REAUDIT_TARGET = 0.05


def corpus(n_files: int) -> tuple[list[Path], dict[str, Any]]:
    """The generated logs (cached) and their size statistics."""
    key = {"generator_version": GENERATOR_VERSION, "files": n_files, "noise": list(NOISE), "gzip_every": 4}
    meta_path = CORPUS / "meta.json"
    if meta_path.is_file():
        meta = json.loads(meta_path.read_text())
        paths = [CORPUS / name for name in meta.get("files", [])]
        if meta.get("key") == key and all(p.is_file() for p in paths):
            return paths, meta["stats"]
    if CORPUS.exists():
        shutil.rmtree(CORPUS)
    CORPUS.mkdir(parents=True)
    t0 = time.perf_counter()
    print(f"generating {n_files} logs in {CORPUS.relative_to(ROOT)} ...", flush=True)
    paths, sizes, raw = [], [], []
    for i in range(n_files):
        path = CORPUS / f"ci-{i:05d}" / "build.log"
        stats = generate_log(path, builds=1, seed=1000 + i, noise_ratio=NOISE[i % len(NOISE)])
        raw.append(int(stats["bytes"]))
        if i % 4 == 3:
            gz = path.with_suffix(".log.gz")
            gz.write_bytes(gzip.compress(path.read_bytes(), compresslevel=6, mtime=0))
            path.unlink()
            path = gz
        paths.append(path)
        sizes.append(path.stat().st_size)
    ordered = sorted(raw)
    stats = {
        "files": n_files,
        "gzipped": sum(p.suffix == ".gz" for p in paths),
        "log_mb_total": round(sum(raw) / 1e6, 1),
        "log_kb_min": round(ordered[0] / 1e3, 1),
        "log_kb_median": round(ordered[len(ordered) // 2] / 1e3, 1),
        "log_kb_max": round(ordered[-1] / 1e3, 1),
        "disk_mb_total": round(sum(sizes) / 1e6, 1),
        "generate_seconds": round(time.perf_counter() - t0, 1),
    }
    meta_path.write_text(
        json.dumps({"key": key, "stats": stats, "files": [str(p.relative_to(CORPUS)) for p in paths]})
    )
    return paths, stats


def timed_audit(paths: list[str], db: Path, jobs: int, rehash: bool = False) -> dict[str, Any]:
    from logscope.audit import AuditOptions, audit

    load0 = os.getloadavg()
    cpu0 = time.process_time()
    t0 = time.perf_counter()
    report = audit(paths, db, AuditOptions(jobs=jobs, rehash=rehash))
    seconds = time.perf_counter() - t0
    cpu = time.process_time() - cpu0
    # The time each file took inside its worker (parse + rules + rows, the `parse_seconds` column): with
    # free cores it is the same for 1 and 2 jobs; when other jobs hold a core it grows.
    from logscope.audit import Store

    with Store(db, read_only=True) as store:
        row = store.con.execute(
            "SELECT coalesce(sum(parse_seconds), 0) FROM files WHERE parsed_at >= ?",
            [dt.datetime.now(dt.UTC).replace(tzinfo=None) - dt.timedelta(seconds=seconds + 1)],
        ).fetchone()
    return {
        "file_seconds": float(row[0]) if row else 0.0,
        "writer_cpu_seconds": cpu,
        "jobs": jobs,
        "rehash": rehash,
        "files": len(paths),
        "audited": report.audited,
        "unchanged": report.unchanged,
        "known": report.known,
        "statuses": dict(report.statuses),
        "seconds": seconds,
        "loadavg_start": load0,
        "loadavg_end": os.getloadavg(),
    }


def table_counts(db: Path) -> dict[str, int]:
    from logscope.audit import Store

    with Store(db, read_only=True) as store:
        return store.counts()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="logscope audit benchmark (make bench)")
    ap.add_argument("--files", type=int, default=2000, help="generated logs to audit")
    ap.add_argument("--rounds", type=int, default=8, help="chunks, each audited with 1 then 2 jobs")
    ap.add_argument("--reaudit-repeat", type=int, default=3, help="re-audit runs (best is kept)")
    args = ap.parse_args(argv)

    OUT.mkdir(parents=True, exist_ok=True)
    files, stats = corpus(args.files)
    work = OUT / "audit-bench"
    if work.exists():
        shutil.rmtree(work)
    work.mkdir()
    dbs = {1: work / "jobs1.duckdb", 2: work / "jobs2.duckdb"}
    import logscope

    logscope.analyze(
        ROOT / "fixtures" / "rknn" / "09-build-verbose-mobilenetv1-rv1106-tk2-1.5.2-simulator.log"
    )
    results: dict[str, Any] = {
        "machine": {
            "date": dt.datetime.now().astimezone().isoformat(timespec="seconds"),
            "nproc": len(os.sched_getaffinity(0)),
            "python": platform.python_version(),
            "loadavg_at_start": os.getloadavg(),
        },
        "corpus": stats,
        "rounds": [],
    }
    names = [str(p) for p in files]
    size = -(-len(names) // args.rounds)
    t_start = time.perf_counter()
    failed = False
    try:
        for r in range(args.rounds):
            chunk = names[r * size : (r + 1) * size]
            for jobs in (1, 2):
                run = timed_audit(chunk, dbs[jobs], jobs)
                run["round"] = r
                results["rounds"].append(run)
                print(
                    f"round {r} jobs {jobs}: {run['audited']} files in {run['seconds']:.1f} s "
                    f"({run['audited'] / run['seconds']:.2f} files/s), load {run['loadavg_start'][0]:.2f} -> "
                    f"{run['loadavg_end'][0]:.2f}",
                    flush=True,
                )
        first = {j: sum(x["seconds"] for x in results["rounds"] if x["jobs"] == j) for j in (1, 2)}
        audited = {j: sum(x["audited"] for x in results["rounds"] if x["jobs"] == j) for j in (1, 2)}
        results["first"] = {
            str(j): {"seconds": first[j], "files": audited[j], "files_per_s": audited[j] / first[j]}
            for j in (1, 2)
        }
        results["speedup"] = first[1] / first[2]
        per_file = {
            j: sum(x["file_seconds"] for x in results["rounds"] if x["jobs"] == j) / max(1, audited[j])
            for j in (1, 2)
        }
        results["per_file_seconds"] = {str(j): per_file[j] for j in (1, 2)}
        results["contention"] = per_file[2] / per_file[1] if per_file[1] else None
        counts = {j: table_counts(dbs[j]) for j in (1, 2)}
        results["rows"] = {str(j): counts[j] for j in (1, 2)}
        results["rows_equal"] = counts[1] == counts[2]
        reaudit: dict[str, Any] = {}
        for label, jobs, rehash in (("jobs1", 1, False), ("jobs2", 2, False), ("jobs2_rehash", 2, True)):
            runs = [timed_audit(names, dbs[jobs], jobs, rehash) for _ in range(args.reaudit_repeat)]
            best = min(x["seconds"] for x in runs)
            reaudit[label] = {
                "runs_s": [x["seconds"] for x in runs],
                "best_s": best,
                "ratio": best / first[jobs],
                "audited": [x["audited"] for x in runs],
                "skipped": [x["unchanged"] + x["known"] for x in runs],
            }
        results["reaudit"] = reaudit
        results["db_mb"] = {str(j): round(dbs[j].stat().st_size / 1e6, 1) for j in (1, 2)}
    except Exception:
        import traceback

        results["error"] = traceback.format_exc()
        failed = True
    results["wall_seconds"] = round(time.perf_counter() - t_start, 1)
    results["machine"]["loadavg_at_end"] = os.getloadavg()
    out = OUT / "audit_results.json"
    out.write_text(json.dumps(results, indent=2, default=str))
    report(results, out)
    return 1 if failed else 0


def report(results: dict[str, Any], out: Path) -> None:
    m, c = results["machine"], results["corpus"]
    print()
    print(f"logscope audit benchmark  {m['date']}  nproc={m['nproc']}  Python {m['python']}")
    print(
        f"corpus: {c['files']} logs ({c['gzipped']} gzipped), {c['log_mb_total']} MB of log text, "
        f"{c['disk_mb_total']} MB on disk; per log {c['log_kb_min']} / {c['log_kb_median']} / "
        f"{c['log_kb_max']} KB (min / median / max)"
    )
    if "error" in results:
        print("ERROR:\n" + results["error"])
        return
    for j in ("1", "2"):
        f = results["first"][j]
        rate = f"{f['files_per_s']:6.2f} files/s"
        print(f"  first audit, --jobs {j}: {f['seconds']:8.1f} s  {rate}  ({f['files']} files)")
    pf = results["per_file_seconds"]
    print(
        f"  time per file inside the worker: {pf['1']:.3f} s (jobs 1), {pf['2']:.3f} s (jobs 2): "
        f"x{results['contention']:.2f} (1.00 = two free cores)"
    )
    verdict = "OK" if results["speedup"] >= SPEEDUP_TARGET else "MISSED"
    print(f"  speed-up jobs 1 -> 2 = {results['speedup']:.2f}x   (target >= {SPEEDUP_TARGET}x)   {verdict}")
    for label, r in results["reaudit"].items():
        verdict = "OK" if r["ratio"] <= REAUDIT_TARGET else "MISSED"
        runs = ", ".join(f"{x:.2f}" for x in r["runs_s"])
        print(
            f"  re-audit {label:13} best {r['best_s']:6.2f} s ({runs}) = {r['ratio']:.2%} of the first run "
            f"(target <= {REAUDIT_TARGET:.0%})   {verdict}"
        )
    print(f"  rows equal between the two databases: {results['rows_equal']}  {results['rows']['2']}")
    loads = [x["loadavg_start"][0] for x in results["rounds"]] + [
        x["loadavg_end"][0] for x in results["rounds"]
    ]
    print(
        f"  load average (1 min) during the runs: {min(loads):.2f} - {max(loads):.2f}; "
        f"at start {m['loadavg_at_start'][0]:.2f}, at end {m['loadavg_at_end'][0]:.2f}"
    )
    print(f"results: {out.relative_to(ROOT)}  (wall {results['wall_seconds']} s)")


if __name__ == "__main__":
    sys.exit(main())
