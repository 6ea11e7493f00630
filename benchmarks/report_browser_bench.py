"""`make bench` (interactive report): how long headless Chromium takes to draw a 5,000-layer build's page,
against the page of fixture 09 (34 layers) drawn in the same browser.

Each page is the self-contained HTML of `logscope report` (`build_report` + `render_html`) of one analysed
log: fixture 09, and a generated verbose build of 5,000 layers (`benchmarks/generate.py`, 20 % noise lines,
seed 5), whose address map holds more tensors than the page draws at once (the 1,500 largest, the rest
when zoomed in). A figure is the page's `performance.now()` when it marks itself ready (`body[data-ready]`,
set once every chart is drawn): milliseconds from the start of navigation, in a new tab each time, the
two pages interleaved, best of `--repeat`. The ratio big / small says what the large build costs beyond
what any page costs (parsing the Plotly library the page embeds, laying the page out). Nothing is
asserted.

Needs the `playwright` package (test extra) and a Chromium binary (Debian's `chromium`;
`LOGSCOPE_CHROMIUM` names another); without them it says so and exits 0.

Usage: python benchmarks/report_browser_bench.py [--repeat N]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run as `python benchmarks/report_browser_bench.py`
    sys.path.insert(0, str(ROOT))

from benchmarks.generate import generate_log  # noqa: E402

OUT = ROOT / "benchmarks" / "out" / "report-browser"
FIXTURE = ROOT / "fixtures" / "rknn" / "09-build-verbose-mobilenetv1-rv1106-tk2-1.5.2-simulator.log"
# As the browser tests start it: no sandbox (root in a container), no GPU, nothing fetched in the background.
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
]


def chromium_binary() -> str | None:
    return os.environ.get("LOGSCOPE_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")


def write_pages(out: Path = OUT) -> dict[str, Path]:
    """The two pages (and the generated log), written to `out` (benchmarks/out/report-browser/)."""
    from logscope import analyze
    from logscope.report import build_report, render_html

    out.mkdir(parents=True, exist_ok=True)
    big_log = out / "layers-5000.log"
    generate_log(big_log, builds=1, layers=5000, noise_ratio=0.2, seed=5)
    pages = {}
    for name, log in (("fixture09", FIXTURE), ("layers5000", big_log)):
        page = out / f"{name}.html"
        page.write_text(render_html(build_report([analyze(log)])), encoding="utf-8")
        pages[name] = page
    return pages


def ready_ms(browser: Any, page_path: Path) -> float:
    """Milliseconds from navigation start until the page marks itself ready, in a new tab; raises if the
    page reports an error (a figure of a broken page would mean nothing)."""
    page = browser.new_page(viewport={"width": 1200, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    try:
        page.goto(page_path.as_uri())
        page.wait_for_selector("body[data-ready=true]", timeout=60_000)
        ms = float(page.evaluate("performance.now()"))
    finally:
        page.close()
    if errors:
        raise RuntimeError(f"{page_path.name}: {errors[0]}")
    return ms


def measure(browser: Any, pages: dict[str, Path], repeat: int) -> dict[str, Any]:
    """Each page's ms to ready `repeat` times, interleaved, after one untimed load each (the browser's
    own first start); the best of each, the pages' sizes and the ratio of the bests."""
    for path in pages.values():
        ready_ms(browser, path)
    runs: dict[str, list[float]] = {name: [] for name in pages}
    for _ in range(repeat):
        for name, path in pages.items():
            runs[name].append(ready_ms(browser, path))
    best = {name: min(ms) for name, ms in runs.items()}
    sizes = {name: path.stat().st_size for name, path in pages.items()}
    ratio = best["layers5000"] / best["fixture09"]
    return {"runs_ms": runs, "best_ms": best, "bytes": sizes, "ratio": ratio}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args(argv)
    binary = chromium_binary()
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        print("report in a browser: skipped, the playwright package is not installed")
        return 0
    if binary is None:
        print("report in a browser: skipped, no Chromium binary (apt-get install chromium)")
        return 0
    pages = write_pages()
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=binary, args=ARGS)
        try:
            results = measure(browser, pages, args.repeat)
        finally:
            browser.close()
    (OUT / "results.json").write_text(json.dumps(results, indent=2))
    print(f"report in a browser (headless Chromium, ms to ready, best of {args.repeat}; [range]):")
    for name, label in (("fixture09", "fixture 09, 34 layers"), ("layers5000", "5,000 layers")):
        ms, size = results["runs_ms"][name], results["bytes"][name]
        print(f"  {label:22} {size / 1e6:.1f} MB page  {min(ms):.0f} ms [{min(ms):.0f}-{max(ms):.0f}]")
    print(f"  5,000 layers / fixture 09 = {results['ratio']:.2f}")
    print(f"results: {(OUT / 'results.json').relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
