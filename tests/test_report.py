"""Diagnosis reports: every real fixture reports; HTML is parsed back for structure and escaping."""

from __future__ import annotations

import base64
import json
import re
from functools import cache
from html.parser import HTMLParser
from pathlib import Path

import pytest

import logscope
from logscope.io import decode_bytes
from logscope.model import ParsedLog
from logscope.report import (
    ReportError,
    build_report,
    md_text,
    render_compact,
    render_html,
    render_json,
    render_markdown,
    report_dict,
    write_report,
)
from logscope.rules import Config, analyze_log
from tests.conftest import FIXTURES, MOBILENET

FIXTURE_FILES = sorted(
    p
    for folder in ("rknn", "mcu")  # the real fixtures; synthetic ones are used by name
    for p in (FIXTURES / folder).iterdir()
    if p.name != "SOURCES.md"
)
HEAP_LOG = FIXTURES / "synthetic" / "heap-trace-stm32-uart-bytes-leak.txt"
EVENTS_LOG = FIXTURES / "mcu" / "18-espidf-sysview-host-heap-log-timestamped.txt"
INJECTED = "<img/src=x/onerror=alert(1)>"


@cache
def analyzed(path: Path) -> ParsedLog | None:
    try:
        return analyze_log(logscope.parse(path), Config())
    except logscope.InputError:  # fixtures that are not logs are rejected by `parse`, not by the report
        return None


class Page(HTMLParser):
    """Tags, attributes and text of a page, as a browser's tokenizer sees them."""

    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []
        self.headings: list[tuple[str, str]] = []
        self._heading: str | None = None
        self.feed(html)
        self.close()

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        if tag in ("h2", "h3", "h4"):
            self._heading = tag
            self.headings.append((tag, ""))

    def handle_endtag(self, tag):
        if tag == self._heading:
            self._heading = None

    def handle_data(self, data):
        self.text.append(data)
        if self._heading:
            tag, text = self.headings[-1]
            self.headings[-1] = (tag, text + data)

    def all(self, tag: str) -> list[dict[str, str | None]]:
        return [attrs for name, attrs in self.tags if name == tag]


def markdown_tables_are_rectangular(text: str) -> None:
    """Every table row has as many cells as its header: no name from a log split a cell."""
    width = None
    for line in text.splitlines():
        if not line.startswith("|"):
            width = None
            continue
        cells = len(re.findall(r"(?<!\\)\|", line)) - 1
        if width is None:
            width = cells
        assert cells == width, line


# ------------------------------------------------------------------------------ every fixture


@pytest.mark.parametrize("path", FIXTURE_FILES, ids=lambda p: p.name[:40])
def test_every_fixture_reports(path):
    log = analyzed(path)
    if log is None:
        pytest.skip("not a log")
    report = build_report([log])
    data = json.loads(render_json(report))
    (entry,) = data["files"]
    assert data["schema_version"] == 1 and entry["sha256"] == log.sha256
    assert entry["verdict"]["level"] in {"error", "warning", "info", "ok"}
    assert len(entry["findings"]) == len(log.findings)
    assert entry["provenance"]["sha256"] == log.sha256
    for figure in entry["headline"]:
        assert figure["from"] is not None
    compact = render_compact(report)
    assert len(compact.splitlines()) <= 60 and "![" not in compact
    markdown = render_markdown(report)
    assert markdown.startswith("# logscope report")
    markdown_tables_are_rectangular(markdown)
    markdown_tables_are_rectangular(compact)


def test_all_fixtures_in_one_compact_report_stay_short():
    logs = [log for log in map(analyzed, FIXTURE_FILES) if log is not None]
    compact = render_compact(build_report(logs))
    lines = compact.splitlines()
    assert len(lines) <= 60 and "more files" in lines[-1]
    # The worst files come first.
    assert "| error |" in lines[4]


# ------------------------------------------------------------------------------------------- HTML


@pytest.fixture(scope="module")
def mobilenet_html() -> str:
    """The static page (`--static`): PNG plots, no script. The interactive page: test_report_interactive."""
    return render_html(build_report([analyzed(MOBILENET)]), interactive=False)


def test_html_structure_summary_first(mobilenet_html):
    page = Page(mobilenet_html)
    assert len(page.all("html")) == 1 and not page.all("script") and not page.all("link")
    (csp,) = [m for m in page.all("meta") if m.get("http-equiv") == "Content-Security-Policy"]
    assert "default-src 'none'" in (csp["content"] or "")
    h3 = [text.strip() for tag, text in page.headings if tag == "h3"]
    assert h3 == ["Summary", "Top findings", "Plots", "Tables", "Provenance"]
    h4 = [text.strip() for tag, text in page.headings if tag == "h4"]
    assert {"Largest tensors", "Padding overhead (native − logical shape bytes)", "Fusions"} <= set(h4)
    assert "Op-type distribution" in h4 and any(h.startswith("Layers with the most read/write") for h in h4)
    text = " ".join(page.text)
    # Summary: verdict, the peak and the pool with their lines, findings with evidence and hints.
    assert "1.15 MiB (1204224 B)" in text and "layer 3 ConvClip (line 136)" in text
    assert "1.67 MiB (1756160 B)" in text and "build-log, line 279" in text
    assert "MEM001" in text and "Hint:" in text
    # Evidence as labelled values with units, not internal keys: MEM001's reuse_rate is "reuse 67.3 %".
    assert "reuse_rate" not in text and "67.3 %" in text and "rows_outside_pool_lines" not in text
    assert "071345547ed223b0e57d4ccb0458ef2023c4564fc9787e5447d96ffd497ec2f9" in text  # provenance
    assert "feature-tensor table lines 177–212; Total Internal Memory Size line 279" in text


def test_html_is_self_contained(mobilenet_html):
    page = Page(mobilenet_html)
    images = page.all("img")
    assert len(images) == 4  # memory, address map, breakdown, perf
    for image in images:
        src = image["src"] or ""
        assert src.startswith("data:image/png;base64,")
        assert base64.b64decode(src.split(",", 1)[1])[:8] == b"\x89PNG\r\n\x1a\n"
    links = [a["href"] for a in page.all("a")]
    assert all((href or "").startswith("#") for href in links)
    assert "http://" not in mobilenet_html and "https://" not in mobilenet_html


def test_html_of_several_files_has_an_index():
    report = build_report([analyzed(MOBILENET), analyzed(HEAP_LOG)])
    page = Page(render_html(report, interactive=False))
    assert [text for tag, text in page.headings if tag == "h2"] == [MOBILENET.name, HEAP_LOG.name]
    assert [a["href"] for a in page.all("a")] == ["#log-1", "#log-2"]
    text = " ".join(page.text)
    assert "OVER BUDGET by" in text and "3.76 KiB (3848 B)" in text  # run 2 of the heap trace
    assert "1 error" in text


# -------------------------------------------------------------------------------------- escaping


@pytest.fixture(scope="module")
def injected_log() -> ParsedLog:
    """[09] with two tensor names replaced by markup and pipes, read through the real parser."""
    text = MOBILENET.read_text(encoding="utf-8")
    text = text.replace("Relu6__9:0", INJECTED).replace("Relu6__15:0", "a|b|c")
    log = logscope.parse_text(decode_bytes(text.encode("utf-8"), "<b>evil</b>|name.log"))
    tensors = log.frames["tensors"]
    assert INJECTED in set(tensors["name"]) and "a|b|c" in set(tensors["name"])
    layers = log.frames["layers"]
    layers.loc[layers.index[3], "full_name"] = "<script>alert(2)</script>|x"
    return analyze_log(log, Config())


def test_html_escapes_everything_from_the_log(injected_log):
    html = render_html(build_report([injected_log]), interactive=False)
    page = Page(html)
    assert not page.all("script")
    assert all((img["src"] or "").startswith("data:image/png;base64,") for img in page.all("img"))
    assert not [attrs for _, attrs in page.tags if any(k.startswith("on") for k in attrs)]
    text = "".join(page.text)
    assert INJECTED in text and "<script>alert(2)</script>|x" in text and "<b>evil</b>|name.log" in text
    assert "<img/src" not in html and "<script>alert" not in html and "<b>evil" not in html


def test_markdown_escapes_and_keeps_tables_whole(injected_log):
    report = build_report([injected_log])
    for text in (render_markdown(report), render_compact(report)):
        assert "<img" not in text and "<script" not in text and "<b>" not in text
        markdown_tables_are_rectangular(text)
    markdown = render_markdown(report)
    assert (
        "&lt;img/src=x/onerror=alert\\(1\\)&gt;" in markdown
        or "&lt;img/src=x/onerror=alert(1)&gt;" in markdown
    )
    assert "a&#124;b&#124;c" in markdown
    assert md_text("x|y*z_<w>`") == "x&#124;y\\*z\\_&lt;w&gt;\\`"


def test_json_keeps_the_raw_names(injected_log):
    data = report_dict(build_report([injected_log]))
    (largest,) = [t for t in data["files"][0]["tables"] if t["key"] == "largest_tensors"]
    assert INJECTED in [row[3] for row in largest["rows"]]


# -------------------------------------------------------------------------------------- writing


def test_write_report_by_suffix(tmp_path):
    report = build_report([analyzed(EVENTS_LOG)])
    written = write_report(report, tmp_path / "r.md")
    assert [p.name for p in written] == ["r.md", "r-1-memory.png", "r-1-fragmentation.png"]
    markdown = (tmp_path / "r.md").read_text()
    assert (
        "![Memory over ops](r-1-memory.png)" in markdown
        and "![Fragmentation](r-1-fragmentation.png)" in markdown
    )
    assert write_report(report, tmp_path / "c.md", compact=True) == [tmp_path / "c.md"]
    assert (
        json.loads((write_report(report, tmp_path / "r.json")[0]).read_text())["files"][0]["plots"][1][
            "facts"
        ]["worst_largest_free_bytes"]
        == 16580
    )
    with pytest.raises(ReportError, match=r"use \.html, \.md or \.json"):
        write_report(report, tmp_path / "r.pdf")
    with pytest.raises(ReportError, match="--compact"):
        write_report(report, tmp_path / "r.html", compact=True)


def test_memory_caption_promises_a_budget_line_only_when_one_is_drawn():
    no_budget = analyzed(FIXTURES / "synthetic" / "heap-trace-issue-example.txt")
    (spec,) = [p for p in build_report([no_budget]).files[0].plots if p.kind == "memory"]
    assert "no SRAM budget is stated in the log or given (--sram), so none is drawn" in spec.caption
    (spec,) = [p for p in build_report([analyzed(HEAP_LOG)]).files[0].plots if p.kind == "memory"]
    assert "the dashed line is the SRAM budget" in spec.caption
    (spec,) = [p for p in build_report([no_budget], budget_bytes=65536).files[0].plots if p.kind == "memory"]
    assert "the dashed line is the SRAM budget" in spec.caption
