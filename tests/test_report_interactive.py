"""The interactive HTML report without a browser: its data equals the library's figures, it is inert
and offline by construction, and a 5,000-layer build stays under 5 MB.

The same pages in a real browser (hover, click, filters, no request, load time): test_report_browser.py.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import sys

import pytest

from logscope.plots.data import feature_pool
from logscope.report import build_report, render_html
from logscope.report.interactive import evidence_fields, report_data, script_json
from tests.conftest import MOBILENET, ROOT
from tests.test_report import HEAP_LOG, INJECTED, Page, analyzed, injected_log  # noqa: F401

sys.path.insert(0, str(ROOT / "benchmarks"))
from generate import generate_log

DATA = re.compile(r'<script type="application/json" id="logscope-data">(.*?)</script>', re.S)


def page_data(html: str) -> dict:
    (raw,) = DATA.findall(html)
    return json.loads(raw)


@pytest.fixture(scope="module")
def mobilenet_page() -> str:
    return render_html(build_report([analyzed(MOBILENET)]))


def test_data_holds_the_figures_of_the_log(mobilenet_page):
    """The fixture's own figures: pool 1,756,160 B (line 279), peak 1,204,224 B at layer 3 (line 136)."""
    (log,) = page_data(mobilenet_page)["logs"]
    (view,) = log["views"]
    assert view["span"]["bytes"] == 1756160 and "line 279" in view["span"]["label"]
    assert view["peak"] == {"bytes": 1204224, "layer": 3, "line": 136}
    curve = view["curve"]
    assert curve["x"] == list(range(34)) and max(curve["occupied"]) == 1204224
    assert len(view["tensors"]["name"]) == 36 and sum(view["tensors"]["inside"]) == 36
    # Layer 3's row is line 136 of the log, quoted as it is, and its live tensors are named.
    layers = view["layers"]
    k = layers["id"].index(3)
    assert layers["line"][k] == 136 and layers["op_type"][k] == "ConvClip"
    assert log["excerpts"]["136"].split()[:3] == MOBILENET.read_text().splitlines()[135].split()[:3]
    names = {view["tensors"]["name"][j] for j in curve["live"][3]}
    assert names == {"Relu6__7:0", "Relu6__9:0"}
    assert [f["code"] for f in log["findings"]] == [f.code for f in analyzed(MOBILENET).findings]


def test_csp_allows_exactly_the_page_scripts_and_no_network(mobilenet_page):
    page = Page(mobilenet_page)
    (csp,) = [m["content"] for m in page.all("meta") if m.get("http-equiv") == "Content-Security-Policy"]
    assert "default-src 'none'" in csp and "connect-src" not in csp  # default-src 'none' forbids fetches
    hashes = set(re.findall(r"'sha256-([A-Za-z0-9+/=]+)'", csp))
    scripts = re.findall(r"<script>(.*?)</script>", mobilenet_page, re.S)
    assert len(scripts) == 2 and hashes == {
        base64.b64encode(hashlib.sha256(s.encode()).digest()).decode() for s in scripts
    }
    assert not page.all("link") and not [s for s in page.all("script") if s.get("src")]
    assert not [a for _, a in page.tags if any(k.startswith("on") for k in a)]


def test_log_text_is_json_data_only(injected_log):  # noqa: F811
    html = render_html(build_report([injected_log]))
    assert "<img/src" not in html and "<script>alert" not in html and "<b>evil" not in html
    data = page_data(html)
    (log,) = data["logs"]
    assert INJECTED in log["views"][0]["tensors"]["name"]
    assert "<script>alert(2)</script>|x" in log["views"][0]["layers"]["full_name"]
    assert log["source"] == "<b>evil</b>|name.log"
    assert not [a for _, a in Page(html).tags if any(k.startswith("on") for k in a)]


def test_script_json_cannot_close_its_element():
    text = script_json({"a": "</script><!-- \u2028 &"})
    assert "<" not in text and ">" not in text and "\u2028" not in text
    assert json.loads(text) == {"a": "</script><!-- \u2028 &"}


def test_evidence_reads_as_labelled_values():
    fields = evidence_fields(
        {
            "pool_bytes": 1756160,
            "pool_line": 279,
            "reuse_rate": 0.673,
            "rows_outside_pool_lines": [],
            "time_ratio_pct": 64.2,
            "time_us": 1200,
            "table_lines": list(range(177, 213)),
            "subject": None,
        }
    )
    assert fields == [
        ("pool", "1.67 MiB (1756160 B) · line 279"),
        ("reuse", "67.3 %"),
        ("time ratio", "64.2 %"),
        ("time", "1,200 µs"),
        ("table", "lines 177, 178, 179, 180, 181, 182, 183, 184, 185, 186, 187, 188, … (36 lines)"),
    ]


def test_several_logs_side_by_side():
    html = render_html(build_report([analyzed(MOBILENET), analyzed(HEAP_LOG)]))
    page = Page(html)
    assert 'id="compare-chart"' in html
    text = " ".join(page.text)
    assert "Side by side" in text and "1.67 MiB (1756160 B)" in text
    data = page_data(html)
    assert [len(log["views"]) for log in data["logs"]] == [1, 3]  # 1 build, 3 heap-trace runs


def test_a_5000_layer_build_stays_under_5_mb(tmp_path):
    path = tmp_path / "big.log"
    stats = generate_log(path, builds=1, layers=5000, noise_ratio=0.2, seed=5)
    assert stats["layer"] == 5000
    log = analyzed(path)
    html = render_html(build_report([log]))
    assert len(html.encode()) < 5_000_000
    (view,) = page_data(html)["logs"][0]["views"]
    pool = feature_pool(log)
    # One entry per tensor (a name at an address), however many consumer rows the table lists for it.
    assert len(view["curve"]["x"]) == 5000
    assert len(view["tensors"]["name"]) == len(pool.tensors) + len(pool.outside_tensors) > 5000
    assert report_data(build_report([log]))["logs"][0]["views"][0]["peak"]["bytes"] == max(
        view["curve"]["occupied"]
    )
