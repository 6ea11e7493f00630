"""Build the RKNN compiler corpus: models x targets x toolkit versions x {int8, fp16}, real build logs.

Run by hand (`make corpus`), never by the tests: the tests read what this writes into
`fixtures/rknn-compiler/` (one gzipped log per build and `manifest.json`).

    python tools/corpus/rknn.py setup [--toolkit 2.5.0 ...]    # install (git-ignored, see below)
    python tools/corpus/rknn.py build [--toolkit V ...] [--model M ...] [--target T ...] [--dtype D ...]

Install layout (all git-ignored under tools/corpus/): rknn-toolkit2 imports torch at import time and
pins torch<=2.4.0; torch 2.4.0 from PyPI brings about 3 GB of CUDA libraries that the compiler never
uses. So one venv, `.venv-base`, holds torch and the common dependencies (`requirements-base.txt`), and
each toolkit version is installed with `--no-deps` into its own folder `.tk-<version>` from
`requirements-<version>.txt`, put first on PYTHONPATH when that version runs. A version whose own pins
differ from the base (2.2.0 pins onnx 1.14.1 / onnxruntime 1.16.0) gets them in its folder.

Each build runs in one worker process per toolkit version (the import costs seconds); its stdout and
stderr are redirected at the file-descriptor level into the build's log, so the compiler's native
output is captured too. The script itself writes only lines starting with `[corpus]` into a log (one
per API step, with the return code); everything else in a log is the toolkit's. The manifest records
the compiler's own totals, read from the log with the plain regexes below (independent of logscope).
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
OUT = ROOT / "fixtures" / "rknn-compiler"
#: The extra model sets of rknn_models, each built into its own folder by `build --heldout` (or one
#: of them with `--set FOLDER`).
EXTRA_SETS = {
    "recurrent-dev": "RECURRENT_DEV",
    "heldout-recurrent": "HELDOUT",
    "transformer-dev": "TRANSFORMER_DEV",
    "transformer-sweep": "TRANSFORMER_SWEEP",
    "transformer-sweep-targets": "TRANSFORMER_SWEEP_TARGETS",
    "maxpool-dev": "MAXPOOL_DEV",
    "transformer-heldout": "TRANSFORMER_HELDOUT",
}
BASE = HERE / ".venv-base"
VERSIONS = ("2.5.0", "2.3.2", "2.3.0", "2.2.0")
DTYPES = ("int8", "fp16")
MARK = "[corpus]"


# Models whose int8 build also runs accuracy_analysis on the simulator (rk3588 only).
ACCURACY_MODELS = ("chain_75", "dw_odd", "unet_128", "transformer")

# 2.3.x prints bytes (`Total Internal Memory Size: 244352`), 2.5.0 KiB with three decimals (`238.625KB`).
TOTAL_RE = {
    "weight": re.compile(r"Total Weight Memory Size:\s*([\d.]+\s*[KMG]?B?)"),
    "internal": re.compile(r"Total Internal Memory Size:\s*([\d.]+\s*[KMG]?B?)"),
}
UNIT = {"": 1, "B": 1, "KB": 1024, "MB": 1024**2, "GB": 1024**3}


def venv_python() -> Path:
    return BASE / "bin" / "python"


def tk_dir(version: str) -> Path:
    return HERE / f".tk-{version}"


# --- setup ------------------------------------------------------------------------------------------


def setup(versions: list[str]) -> None:
    if not venv_python().exists():
        subprocess.run([sys.executable, "-m", "venv", str(BASE)], check=True)
        subprocess.run([str(venv_python()), "-m", "pip", "install", "-q", "--upgrade", "pip"], check=True)
    subprocess.run(
        [str(venv_python()), "-m", "pip", "install", "-q", "-r", str(HERE / "requirements-base.txt")],
        check=True,
    )
    for v in versions:
        subprocess.run(
            [
                str(venv_python()),
                "-m",
                "pip",
                "install",
                "-q",
                "--no-deps",
                "--upgrade",
                "--target",
                str(tk_dir(v)),
                "-r",
                str(HERE / f"requirements-{v}.txt"),
            ],
            check=True,
        )


# --- the worker (runs inside a toolkit environment) ---------------------------------------------------


def _unbuffer_libc() -> None:
    """The compiler prints through C stdio, which buffers when stdout is a file: without this its
    lines would land after the Python lines that follow them, or in the next build's log."""
    import ctypes

    libc = ctypes.CDLL(None)
    for stream in ("stdout", "stderr"):
        libc.setvbuf(ctypes.c_void_p.in_dll(libc, stream), None, 2, 0)  # _IONBF


def _redirect(path: Path) -> tuple[int, int]:
    sys.stdout.flush()
    sys.stderr.flush()
    saved = (os.dup(1), os.dup(2))
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.close(fd)
    return saved


def _restore(saved: tuple[int, int]) -> None:
    sys.stdout.flush()
    sys.stderr.flush()
    os.dup2(saved[0], 1)
    os.dup2(saved[1], 2)
    os.close(saved[0])
    os.close(saved[1])


def _step(name: str, fn: Any, *args: Any, **kwargs: Any) -> int:
    try:
        ret = fn(*args, **kwargs)
    except Exception as exc:  # the toolkit raises on some refusals; the log keeps its own message
        print(
            f"{MARK} {name} raised {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}",
            flush=True,
        )
        return -2
    code = int(ret) if isinstance(ret, int) else 0
    print(f"{MARK} {name} ret={code}", flush=True)
    return code


def worker(jobs_file: Path) -> None:
    """Run the builds listed in `jobs_file` (JSON) and write one result line per build to stdout's
    replacement file `results`; logs go where each job says."""
    # This file is named rknn.py too: its folder must not shadow the toolkit's package.
    sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != HERE]
    from rknn.api import RKNN  # type: ignore[import-not-found]

    _unbuffer_libc()
    jobs = json.loads(jobs_file.read_text())
    results = []
    for job in jobs:
        log = Path(job["log"])
        t0 = time.process_time()
        saved = _redirect(log)
        steps: dict[str, int] = {}
        try:
            rknn = RKNN(verbose=True)
            steps["config"] = _step("config", rknn.config, target_platform=job["target"])
            if steps["config"] == 0:
                steps["load_onnx"] = _step("load_onnx", rknn.load_onnx, model=job["model"])
            if steps.get("load_onnx") == 0:
                quant = job["dtype"] == "int8"
                steps["build"] = _step(
                    "build", rknn.build, do_quantization=quant, dataset=job["dataset"] if quant else None
                )
            if steps.get("build") == 0 and job.get("accuracy"):
                steps["accuracy_analysis"] = _step(
                    "accuracy_analysis",
                    rknn.accuracy_analysis,
                    inputs=job["samples"],
                    output_dir=job["snapshot"],
                    target=None,
                )
            rknn.release()
        finally:
            _restore(saved)
        results.append({"id": job["id"], "steps": steps, "cpu_s": round(time.process_time() - t0, 2)})
        print(json.dumps(results[-1]), flush=True)


# --- the orchestrator -------------------------------------------------------------------------------


_TABLES = {
    "Network Layer Information Table": "layers",
    "Feature Tensor Information Table": "feature_tensors",
    "Const Tensor Information Table": "const_tensors",
}
_NATIVE = re.compile(r"^[DIWE] RKNN: (?:\[[\d:.]+\] )?(?P<body>.*)$")
_LAYER_ROW = re.compile(r"^\d+ +\S+ +[A-Z][A-Z0-9]* +[A-Z]{2,4} ")
_FUSION = re.compile(r"^[DI] {5}[A-Za-z_]\w*: (?:remove node|add node|\[)")
_ACCURACY = re.compile(r"^\[[A-Za-z][\w.]*\] \S+")


def _counts(text: str) -> dict[str, Any]:
    """What a reader must find in a log, counted here with plain regexes (independent of logscope):
    rows of the three compiler tables, fuse_ops/quant_optimizer result lines, accuracy-table rows, and
    whether the toolkit printed `rknn building done.`."""
    counts = {"layers": 0, "feature_tensors": 0, "const_tensors": 0, "fusion_results": 0, "accuracy_rows": 0}
    table = None
    accuracy = False
    for line in text.splitlines():
        m = _NATIVE.match(line)
        if m:
            body = m.group("body").strip()
            title = _TABLES.get(body)
            if title:
                table = title
            elif table == "layers" and _LAYER_ROW.match(body):
                counts["layers"] += 1
            elif table in ("feature_tensors", "const_tensors") and "| 0x" in body and body[:1].isdigit():
                counts[table] += 1
            continue
        if _FUSION.match(line):
            counts["fusion_results"] += 1
        elif line.startswith("layer_name "):
            accuracy = True
        elif accuracy and _ACCURACY.match(line) and not line.startswith(MARK):
            counts["accuracy_rows"] += 1
    # 2.2.0 still prints `I rknn buiding done.` (sic), as 1.x did.
    counts["status"] = "done" if re.search(r"^I rknn bui(?:l)?ding done\.", text, re.M) else "failed"
    return counts


def refresh(out: Path = OUT) -> None:
    """Recompute the log-derived manifest fields (totals, counts, lines) from the committed logs."""
    path = out / "manifest.json"
    data = json.loads(path.read_text())
    for b in data["builds"]:
        with gzip.open(out / b["log"], "rt", errors="replace") as fh:
            text = fh.read()
        b["totals"] = _totals(text)
        b["counts"] = _counts(text)
        b["lines"] = text.count("\n")
    path.write_text(json.dumps(data, indent=1) + "\n")
    print(f"manifest: {len(data['builds'])} builds refreshed", flush=True)


def _totals(text: str) -> dict[str, Any]:
    """The compiler's printed totals: the text as printed and its value in bytes (rounded to the byte
    for a KiB figure, whose three decimals do not always resolve single bytes)."""
    out: dict[str, Any] = {}
    for key, rx in TOTAL_RE.items():
        found = rx.findall(text)
        if not found:
            out[key] = None
            continue
        printed = found[-1].strip()
        m = re.fullmatch(r"([\d.]+)\s*([KMG]?B?)", printed)
        value = round(float(m.group(1)) * UNIT[m.group(2)]) if m else None
        out[key] = {"printed": printed, "bytes": value, "count": len(found)}
    return out


def _write_model(name: str, work: Path) -> dict[str, Any]:
    import numpy as np

    sys.path.insert(0, str(HERE))
    import rknn_models

    model = rknn_models.build(name)
    path = work / f"{name}.onnx"
    data = model.SerializeToString()
    path.write_bytes(data)
    shapes = rknn_models.input_shapes(model)
    rng = np.random.default_rng(0)
    samples = []
    for inp, dims in shapes.items():
        concrete = [d if isinstance(d, int) else 4 for d in dims]
        sample = work / f"{name}.{inp}.npy"
        arr = rng.random(concrete, dtype=np.float32)  # the toolkit wants .npy samples in the model's layout
        np.save(sample, arr)
        samples.append(str(sample))
    dataset = work / f"{name}.dataset.txt"
    dataset.write_text(" ".join(samples) + "\n")
    return {
        "path": str(path),
        "sha256": hashlib.sha256(data).hexdigest(),
        "opset": {o.domain or "ai.onnx": o.version for o in model.opset_import},
        "input_shapes": shapes,
        "dataset": str(dataset),
        "samples": samples,
        "refused_expected": rknn_models.spec(name).refused,
    }


def _run_jobs(version: str, jobs: list[dict[str, Any]], work: Path) -> dict[str, dict[str, Any]]:
    """Run the jobs in worker processes; a build that kills its worker (the compiler aborts on some
    targets) is recorded with the signal and the worker restarts after it."""
    env = dict(os.environ, PYTHONPATH=str(tk_dir(version)), PYTHONHASHSEED="0", PYTHONUNBUFFERED="1")
    env.pop("PYTHONSTARTUP", None)
    print(f"toolkit {version}: {len(jobs)} builds", flush=True)
    results: dict[str, dict[str, Any]] = {}
    pending = list(jobs)
    while pending:
        jobs_file = work / f"jobs-{version}.json"
        jobs_file.write_text(json.dumps(pending))
        proc = subprocess.run(
            ["nice", "-n", "10", str(venv_python()), str(Path(__file__).resolve()), "worker", str(jobs_file)],
            env=env,
            cwd=work,
            stdout=subprocess.PIPE,
            text=True,
        )
        for line in proc.stdout.splitlines():
            if line.startswith("{"):
                r = json.loads(line)
                results[r["id"]] = r
        pending = [j for j in pending if j["id"] not in results]
        if proc.returncode != 0 and pending:
            dead = pending.pop(0)
            results[dead["id"]] = {"id": dead["id"], "steps": {"process": proc.returncode}, "cpu_s": None}
            print(f"  {dead['id']}: worker exited with {proc.returncode}", flush=True)
        elif proc.returncode != 0:
            break
    print(f"toolkit {version}: {len(results)} done", flush=True)
    return results


def build(
    versions: list[str],
    models: list[str] | None,
    targets: list[str] | None,
    dtypes: list[str],
    out: Path = OUT,
) -> None:
    sys.path.insert(0, str(HERE))
    import rknn_models

    out.mkdir(parents=True, exist_ok=True)
    manifest_path = out / "manifest.json"
    manifest: dict[str, dict[str, Any]] = {}
    if manifest_path.exists():
        manifest = {b["id"]: b for b in json.loads(manifest_path.read_text())["builds"]}
    names = models or list(rknn_models.MODELS)
    with tempfile.TemporaryDirectory(prefix="rknn-corpus-") as tmp:
        work = Path(tmp)
        info = {n: _write_model(n, work) for n in names}
        for version in versions:
            accepted = targets or list(TARGETS_BY_VERSION[version])
            jobs = []
            for name in names:
                spec = rknn_models.spec(name)
                for target in accepted:
                    if spec.refused and target != "rk3588":
                        continue  # a refusal is the same everywhere: one target is enough
                    for dtype in dtypes:
                        if spec.refused and dtype != "int8":
                            continue
                        bid = f"{version}/{name}-{target}-{dtype}"
                        log = work / f"{version}-{name}-{target}-{dtype}.log"
                        jobs.append(
                            {
                                "id": bid,
                                "model": info[name]["path"],
                                "target": target,
                                "dtype": dtype,
                                "dataset": info[name]["dataset"],
                                "samples": info[name]["samples"],
                                "accuracy": dtype == "int8"
                                and target == "rk3588"
                                and name in ACCURACY_MODELS,
                                "snapshot": str(work / f"snapshot-{version}-{name}"),
                                "log": str(log),
                                "name": name,
                            }
                        )
            results = _run_jobs(version, jobs, work)
            for job in jobs:
                r = results[job["id"]]
                text = Path(job["log"]).read_text(errors="replace")
                rel = Path(version) / f"{job['name']}-{job['target']}-{job['dtype']}.log.gz"
                dest = out / rel
                dest.parent.mkdir(parents=True, exist_ok=True)
                with gzip.GzipFile(dest, "wb", mtime=0) as fh:
                    fh.write(text.encode())
                steps = r["steps"]
                m = info[job["name"]]
                manifest[job["id"]] = {
                    "id": job["id"],
                    "log": str(rel),
                    "model": job["name"],
                    "model_sha256": m["sha256"],
                    "opset": m["opset"],
                    "input_shapes": m["input_shapes"],
                    "target": job["target"],
                    "toolkit": version,
                    "dtype": job["dtype"],
                    "config": {
                        "target_platform": job["target"],
                        "do_quantization": job["dtype"] == "int8",
                        "dataset": "one random sample" if job["dtype"] == "int8" else None,
                    },
                    "accuracy_analysis": job["accuracy"],
                    "steps": steps,
                    "return_code": next((v for v in steps.values() if v != 0), 0),
                    "built": steps.get("build") == 0,
                    "totals": _totals(text),
                    "counts": _counts(text),
                    "lines": text.count("\n"),
                    "cpu_s": r["cpu_s"],
                }
            builds = sorted(manifest.values(), key=lambda b: b["id"])
            manifest_path.write_text(json.dumps({"schema_version": 1, "builds": builds}, indent=1) + "\n")
            print(f"manifest: {len(builds)} builds", flush=True)


# Targets each version accepts: the `target_platform` list of `RKNN.config()`'s docstring in each
# wheel (rknn/api/rknn.py, "currently support ..."); 2.5.0 adds rv1126b.
_TARGETS_23 = (
    "rv1103",
    "rv1103b",
    "rv1106",
    "rv1106b",
    "rk2118",
    "rk3562",
    "rk3566",
    "rk3568",
    "rk3576",
    "rk3588",
)
TARGETS_BY_VERSION: dict[str, tuple[str, ...]] = {
    "2.5.0": (*_TARGETS_23, "rv1126b"),
    "2.3.2": _TARGETS_23,
    "2.3.0": _TARGETS_23,
    "2.2.0": _TARGETS_23,
}


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("setup")
    s.add_argument("--toolkit", action="append", choices=VERSIONS)
    b = sub.add_parser("build")
    b.add_argument("--toolkit", action="append", choices=VERSIONS)
    b.add_argument("--model", action="append")
    b.add_argument("--target", action="append")
    b.add_argument("--dtype", action="append", choices=DTYPES)
    b.add_argument(
        "--heldout",
        action="store_true",
        help="build the extra sets of rknn_models (RECURRENT_DEV, HELDOUT, TRANSFORMER_DEV, "
        "TRANSFORMER_SWEEP, TRANSFORMER_SWEEP_TARGETS, MAXPOOL_DEV; every version unless --toolkit) "
        "into fixtures/rknn-compiler/<set>/",
    )
    b.add_argument("--set", action="append", choices=list(EXTRA_SETS), help="with --heldout: only these")
    sub.add_parser("manifest", help="recompute the log-derived manifest fields from the committed logs")
    w = sub.add_parser("worker")
    w.add_argument("jobs", type=Path)
    args = p.parse_args(argv)
    if args.cmd == "setup":
        setup(args.toolkit or list(VERSIONS))
    elif args.cmd == "build" and args.heldout:
        sys.path.insert(0, str(HERE))
        import rknn_models

        for folder, attr in EXTRA_SETS.items():
            if args.set and folder not in args.set:
                continue
            models = args.model or list(getattr(rknn_models, attr))
            build(
                args.toolkit or list(VERSIONS), models, args.target, args.dtype or list(DTYPES), OUT / folder
            )
    elif args.cmd == "build":
        build(args.toolkit or ["2.5.0", "2.3.2"], args.model, args.target, args.dtype or list(DTYPES))
    elif args.cmd == "manifest":
        refresh()
    else:
        worker(args.jobs)


if __name__ == "__main__":
    main()
