"""The interactive report in a real browser: headless Chromium driven by Playwright.

Checked: the page loads with no console error and no request beyond its own file; hovering the
memory curve and the address map shows the figures and lines; a click shows the layer's tensors and
the log's own lines; the findings filters work; a 5,000-layer build draws its 1,500 largest tensors and
says so; zooming the address map brings back every tensor in view. How long a page takes to draw is not
asserted: a timed assertion fails on a loaded machine (this one drew in 3.2 s once under the suite's own
load, against a 3 s bound), and performance figures belong to the benchmarks.

Needs Chromium (Debian's `chromium` package; `LOGSCOPE_CHROMIUM` names another binary) and the
`playwright` package (test extra); without them the tests are skipped with the reason. `.ci/run`
installs Chromium where it can (as root with apt-get), so CI runs them.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from logscope.report import build_report, render_html
from tests.conftest import MOBILENET, ROOT
from tests.test_report import analyzed

sys.path.insert(0, str(ROOT / "benchmarks"))
import report_browser_bench
from report_browser_bench import ARGS, chromium_binary

CHROMIUM = chromium_binary()
playwright_api = pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no Chromium binary (apt-get install chromium)")


class Session:
    """One page with its console errors and every request it made."""

    def __init__(self, browser, path: Path) -> None:
        self.page = browser.new_page(viewport={"width": 1200, "height": 900})
        self.errors: list[str] = []
        self.requests: list[str] = []
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))

        def route(route):
            self.requests.append(route.request.url)
            if route.request.url.startswith("file://"):
                route.continue_()
            else:
                route.abort()

        self.page.route("**/*", route)
        self.page.goto(path.as_uri())
        self.page.wait_for_selector("body[data-ready=true]", timeout=30_000)

    def point(self, selector: str, x: float, y: float) -> tuple[float, float]:
        """The page coordinates of data point (x, y) of the Plotly chart `selector`."""
        return self.page.evaluate(
            """([sel, x, y]) => {
                const gd = document.querySelector(sel), L = gd._fullLayout;
                gd.scrollIntoView({ block: "center" });
                const box = gd.getBoundingClientRect();
                return [box.left + L._size.l + L.xaxis.l2p(x), box.top + L._size.t + L.yaxis.l2p(y)];
            }""",
            [selector, x, y],
        )

    def hover_text(self, selector: str) -> str:
        return self.page.eval_on_selector(selector, "gd => gd.querySelector('.hoverlayer').textContent")


@pytest.fixture(scope="module")
def browser():
    with playwright_api.sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield chromium
        chromium.close()


@pytest.fixture(scope="module")
def bench_pages(tmp_path_factory) -> dict[str, Path]:
    """The browser benchmark's two pages (fixture 09 and a generated 5,000-layer build), made once for
    the tests that load them."""
    return report_browser_bench.write_pages(tmp_path_factory.mktemp("bench-pages"))


@pytest.fixture(scope="module")
def mobilenet(browser, tmp_path_factory) -> Session:
    path = tmp_path_factory.mktemp("report") / "mobilenet.html"
    path.write_text(render_html(build_report([analyzed(MOBILENET)])), encoding="utf-8")
    return Session(browser, path)


def test_loads_offline_without_errors(mobilenet):
    assert mobilenet.errors == []
    assert [u for u in mobilenet.requests if not u.startswith("file://")] == []
    assert len(mobilenet.requests) == 1  # the page itself: every script and style is inline


def test_hover_and_click_on_the_memory_curve(mobilenet):
    page = mobilenet.page
    s = mobilenet.point(".memory-chart", 3, 0.5)
    page.mouse.move(*s)
    page.wait_for_timeout(200)
    text = mobilenet.hover_text(".memory-chart")
    assert "layer 3 · ConvClip" in text and "1.15 MiB (1,204,224 B)" in text and "line 136" in text
    assert "Relu6__7:0" in text and "Relu6__9:0" in text
    page.mouse.click(*s)
    panel = page.locator(".layer-panel")
    panel.locator("h4").wait_for()
    assert panel.locator("h4").inner_text().startswith("layer 3 · ConvClip")
    live = panel.locator("table.live-tensors").inner_text()
    assert "Relu6__7:0" in live and "Relu6__9:0" in live
    quoted = panel.locator("pre.excerpt").inner_text()
    assert "136" in quoted and "ConvClip" in quoted  # the layer row, as the log prints it


def test_hover_on_the_address_map_names_the_tensor(mobilenet):
    page = mobilenet.page
    data = page.evaluate("JSON.parse(document.getElementById('logscope-data').textContent)")
    t = data["logs"][0]["views"][0]["tensors"]
    j = t["name"].index("Relu6__9:0")
    mid_x = (t["first"][j] + t["last"][j]) / 2
    mid_y = (t["rel_start"][j] + t["size"][j] / 2) / (1024 * 1024)  # the axis is in MiB
    page.mouse.move(*mobilenet.point(".address-map", mid_x, mid_y))
    page.wait_for_timeout(200)
    text = mobilenet.hover_text(".address-map")
    assert "Relu6__9:0" in text and f"[0x{t['start'][j]:x}, 0x{t['end'][j]:x})" in text
    assert f"line {t['line'][j]}" in text


def test_findings_filters(mobilenet):
    page = mobilenet.page
    count = page.locator(".f-count")
    assert count.inner_text() == "showing 4 of 4 findings in 4 group(s)"
    page.select_option(".f-severity", "warning")
    assert count.inner_text() == "showing 2 of 4 findings in 2 group(s)"
    assert page.locator("details.group").count() == page.locator("details.group.level-warning").count() == 2
    page.select_option(".f-rule", "MEM001")
    assert count.inner_text() == "showing 1 of 4 findings in 1 group(s)"
    evidence = page.locator("details.group .finding table.kv").inner_text()
    assert "1.67 MiB (1,756,160 B)" in evidence or "1.67 MiB (1756160 B)" in evidence
    page.select_option(".f-severity", "")
    page.select_option(".f-rule", "")


def test_a_5000_layer_build_draws_its_largest_tensors_and_zooms(browser, bench_pages):
    session = Session(browser, bench_pages["layers5000"])
    assert session.errors == []
    note = session.page.locator(".map-note")
    assert note.inner_text().startswith("Showing the 1,500 largest of")
    session.page.evaluate(
        "Plotly.relayout(document.querySelector('.address-map'), {'xaxis.range': [100, 160]})"
    )
    for _ in range(100):  # wait_for_function evaluates a string, which the page's CSP forbids
        if note.inner_text().endswith("tensors in view."):
            break
        session.page.wait_for_timeout(50)
    shown = session.page.evaluate(
        "document.querySelector('.address-map').data.reduce((n, t) => n + t.x.length, 0)"
    )
    assert 0 < shown < 1500 and note.inner_text() == f"{shown:,} tensors in view."


def test_diff_page_overlays_both_builds(browser, tmp_path):
    from logscope.analysis.diff import diff_builds
    from logscope.report.diffpage import render_diff_html
    from tests.conftest import RKNN

    old = analyzed(MOBILENET)
    new = analyzed(RKNN / "29-doc-rknpu2-sram-runtime-log-level3-rk3588.log")
    path = tmp_path / "diff.html"
    path.write_text(render_diff_html(old, new, diff_builds(old, new)), encoding="utf-8")
    session = Session(browser, path)
    assert session.errors == [] and len(session.requests) == 1
    names = session.page.evaluate("document.getElementById('compare-chart').data.map(t => t.name)")
    assert len(names) == 2 and names[0].startswith("old: ") and names[1].startswith("new: ")
    assert session.page.locator(".address-map").count() == 2  # both builds' maps


def test_the_browser_benchmark_measures_both_pages(browser, bench_pages):
    """`benchmarks/report_browser_bench.py` (part of `make bench`) measures: both pages load without a
    page error and every figure is a positive time. What the figures are is the benchmark's to report."""
    results = report_browser_bench.measure(browser, bench_pages, 1)
    assert set(results["runs_ms"]) == {"fixture09", "layers5000"}
    assert all(len(ms) == 1 and ms[0] > 0 for ms in results["runs_ms"].values())
    assert results["bytes"]["layers5000"] > results["bytes"]["fixture09"] > 0
    assert results["ratio"] == results["best_ms"]["layers5000"] / results["best_ms"]["fixture09"]
