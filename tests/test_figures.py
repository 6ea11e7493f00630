"""One value per figure: every fixture through every output, each figure compared by name.

The outputs are the JSON summary (the reference), the text and Markdown summaries, the report's JSON,
Markdown and HTML headline, the memory plot and address map facts, and `diff` of a build against
itself (JSON and text). Each names a figure by its `logscope.figures` label (or key in JSON); the test
reads every (build, figure) pair an output prints and requires the one value of the JSON summary.
Then the invariants: every figure that breaks one is reported, and the ones that hold, hold.
"""

from __future__ import annotations

import html
import json
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import logscope
from logscope.analysis.diff import diff_builds
from logscope.analysis.pool import feature_pools
from logscope.figures import BY_KEY, FIGURES, format_value
from logscope.plots.data import address_layout
from logscope.render.diff import diff_dict, render_diff_text
from logscope.render.summary import render_markdown, render_text
from logscope.report import build_report
from logscope.report.render import render_html, render_json
from logscope.report.render import render_markdown as render_report_markdown
from logscope.rules import Config, analyze_log

FIXTURES = Path(__file__).parent.parent / "fixtures"
# The model-family sets of the compiler corpus (the recurrent ones, 656 builds, the transformer ones,
# 1,264 builds, and the rk2118 MaxPool sweep, 106: the same log format as the corpus's own builds) are
# checked by tests/test_rknn_rewrites.py, tests/test_rknn_transformer_corpus.py and
# tests/test_rknn_profiles_corpus.py; rendering every output for each of them here would triple this test.
FAMILY_SETS = (
    "recurrent-dev",
    "heldout-recurrent",
    "transformer-dev",
    "transformer-sweep",
    "transformer-sweep-targets",
    "maxpool-dev",
    "transformer-heldout",
)
_ALL_LOGS = sorted(
    p
    for p in FIXTURES.rglob("*")
    if p.is_file() and p.name != "SOURCES.md" and not set(FAMILY_SETS) & set(p.parts)
)
# The compiler corpus's own builds (918 logs of one format, many the same model on another target) are
# sampled: every third build of each toolkit version's folder, every version kept.
# tests/test_compiler_corpus.py parses and checks every one; here each costs an analysis and every output.
_CORPUS = FIXTURES / "rknn-compiler"
LOGS = [
    p
    for p in _ALL_LOGS
    if _CORPUS not in p.parents or p.parent == _CORPUS or sorted(p.parent.iterdir()).index(p) % 3 == 0
]
BY_LABEL = {f.label: f.key for f in BY_KEY.values()}


@pytest.fixture(scope="module")
def analysed() -> dict[str, logscope.ParsedLog]:
    out = {}
    for path in LOGS:
        try:
            out[path.name] = analyze_log(logscope.parse(path), Config())
        except logscope.InputError:
            continue
    return out


def _expected(log: logscope.ParsedLog) -> dict[tuple[int, str], str]:
    """(build, key) -> the value as printed, from the JSON summary."""
    out = {}
    for b in log.summary()["builds"]:
        primary = b["memory_sources"][0] if b["memory_sources"] else {}
        for key, value in {**primary, **b["memory"], **b["derived"]}.items():
            if key in BY_KEY and value is not None:
                out[(b["index"], key)] = format_value(key, value)
    for index, pool in feature_pools(log.frames).items():  # the pool figures, from their one definition
        if index is not None and pool.occupied_peak_bytes is not None:
            out[(index, "live_peak_bytes")] = format_value("live_peak_bytes", pool.occupied_peak_bytes)
        if index is not None and pool.lower_bound_bytes is not None:
            out[(index, "lower_bound_bytes")] = format_value("lower_bound_bytes", pool.lower_bound_bytes)
    return out


def _collect(seen: dict[tuple[int, str], set[str]], build: int, label: str, value: str) -> None:
    key = BY_LABEL.get(label)
    if key is not None:
        seen.setdefault((build, key), set()).add(value.strip())


def _from_text(text: str) -> dict[tuple[int, str], set[str]]:
    seen: dict[tuple[int, str], set[str]] = {}
    build = None
    labels = "|".join(re.escape(label) for label in BY_LABEL)
    row = re.compile(rf"^  ({labels})\s+(.+?)\s+\[")
    for line in text.splitlines():
        if m := re.match(r"^build (-?\d+) \(", line):
            build = int(m.group(1))
        elif build is not None and (m := row.match(line)):
            _collect(seen, build, m.group(1), m.group(2))
    return seen


def _from_markdown(text: str) -> dict[tuple[int, str], set[str]]:
    seen: dict[tuple[int, str], set[str]] = {}
    build = None
    for line in text.splitlines():
        if m := re.match(r"^### build (-?\d+):", line):
            build = int(m.group(1))
        elif build is not None and line.startswith("| "):
            cells = [c.strip() for c in line.strip("|").split(" | ")]
            if len(cells) >= 2:
                _collect(seen, build, cells[0], html.unescape(cells[1].split("<br>")[0]))
    return seen


def _from_headline(pairs: list[tuple[str, str]], builds: list[int]) -> dict[tuple[int, str], set[str]]:
    """Report headline rows: 'build N: label' when the log has several builds, else the label."""
    seen: dict[tuple[int, str], set[str]] = {}
    for label, value in pairs:
        m = re.match(r"^build (-?\d+): (.+)$", label)
        if m:
            _collect(seen, int(m.group(1)), m.group(2), value)
        elif len(builds) == 1 and label in BY_LABEL:
            _collect(seen, builds[0], label, value)
        else:
            assert label not in BY_LABEL, f"figure {label!r} of a multi-build log without its build"
    return seen


class _Rows(HTMLParser):
    """(first cell, second cell) of every row of the report's headline tables."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[tuple[str, str]] = []
        self._in_headline = False
        self._cells: list[str] | None = None
        self._text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "table":
            self._in_headline = "headline" in (dict(attrs).get("class") or "")
        elif tag == "tr" and self._in_headline:
            self._cells = []
        elif tag == "td" and self._cells is not None:
            self._text = []

    def handle_endtag(self, tag: str) -> None:
        if tag == "td" and self._cells is not None:
            self._cells.append("".join(self._text))
        elif tag == "tr" and self._cells is not None:
            if len(self._cells) >= 2:
                self.rows.append((self._cells[0], self._cells[1]))
            self._cells = None
        elif tag == "table":
            self._in_headline = False

    def handle_data(self, data: str) -> None:
        self._text.append(data)


def _check(name: str, output: str, expected: dict[tuple[int, str], str], seen: dict[Any, set[str]]) -> None:
    for (build, key), values in seen.items():
        assert len(values) == 1, f"{name}: build {build} {key} printed with {len(values)} values: {values}"
        want = expected.get((build, key), "—")
        (got,) = values
        assert got == want, f"{name}: build {build} {key} is {got!r}, the JSON summary says {want!r}"


@pytest.mark.parametrize("path", LOGS, ids=lambda p: p.name)
def test_every_output_prints_one_value_per_figure(path: Path, analysed: dict[str, Any]) -> None:
    log = analysed.get(path.name)
    if log is None:
        pytest.skip("not a log (rejected with InputError)")
    expected = _expected(log)
    builds = [b["index"] for b in log.summary()["builds"]]
    _check("text", "", expected, _from_text(render_text(log)))
    _check("markdown", "", expected, _from_markdown(render_markdown(log)))

    report = build_report([log])
    headline = [(h["label"], h["value"]) for h in json.loads(render_json(report))["files"][0]["headline"]]
    _check("report json", "", expected, _from_headline(headline, builds))
    md_rows = []
    for line in render_report_markdown(report).splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
        if line.startswith("| ") and len(cells) == 3:
            md_rows.append(
                (html.unescape(cells[0].replace("\\", "")), html.unescape(cells[1].replace("\\", "")))
            )
    _check("report markdown", "", expected, _from_headline(md_rows, builds))
    parser = _Rows()
    parser.feed(render_html(report))
    _check("report html", "", expected, _from_headline(parser.rows, builds))

    # Plots: the span they draw is the pool span of the JSON summary, for every build with a pool.
    for index, pool in feature_pools(log.frames).items():
        assert format_value("feature_pool_bytes", pool.span_bytes) == expected[(index, "feature_pool_bytes")]
        assert format_value("feature_sum_bytes", pool.sum_bytes) == expected[(index, "feature_sum_bytes")]
        layout = address_layout(log, index)
        assert layout is not None and layout.span_bytes == pool.span_bytes
    for spec in report.files[0].plots:
        if spec.kind == "memory" and "pool_bytes" in spec.facts:
            index = spec.facts["build_index"]
            assert (
                format_value("feature_pool_bytes", spec.facts["pool_bytes"])
                == expected[(index, "feature_pool_bytes")]
            )

    # diff of each build against itself: every memory figure with its one value, by key and by label.
    for index in builds[:3]:
        diff = diff_builds(log, log, index, index)
        for change in diff_dict(diff)["memory"] + diff_dict(diff)["reuse"]:
            if change["name"] in BY_KEY:
                assert format_value(change["name"], change["old"]) == expected.get(
                    (index, change["name"]), "—"
                )
        for line in render_diff_text(diff).splitlines():
            m = re.match(r"^   (.{25}) (.+?) -> ", line)
            if m and m.group(1).strip() in BY_LABEL:
                key = BY_LABEL[m.group(1).strip()]
                assert m.group(2).strip() == expected.get((index, key), "—"), (index, key, line)


# ----------------------------------------------------------------------------------------- invariants


@pytest.mark.parametrize("path", LOGS, ids=lambda p: p.name)
def test_invariants_hold_or_are_reported(path: Path, analysed: dict[str, Any]) -> None:
    log = analysed.get(path.name)
    if log is None:
        pytest.skip("not a log")
    checks = log.frames["figure_checks"]
    reported = {(c["build_index"], c["figure"], c["line"]) for c in checks.to_dict("records")}
    tensors = log.frames["tensors"]
    feature = tensors[
        (tensors["table"] == "feature") & tensors["padding_bytes"].notna() & tensors["size_bytes"].notna()
    ]
    for row in feature.itertuples(index=False):
        sound = 0 <= row.padding_bytes <= row.size_bytes
        assert sound or (row.build_index, "padding_bytes", row.line) in reported, (row.name, row.line)
    memory = log.frames["memory"]
    for row in memory.to_dict("records"):
        span, total = row["feature_pool_bytes"], row["feature_sum_bytes"]
        if not pd.isna(span) and not pd.isna(total) and span > total:
            assert any(c[0] == row["build_index"] and c[1] == "computed_reuse_rate" for c in reported)
        padding = row["padding_bytes"]
        if not pd.isna(padding):
            own = feature[feature["build_index"] == row["build_index"]]
            good = own[(own["padding_bytes"] >= 0) & (own["padding_bytes"] <= own["size_bytes"])]
            assert padding == int(good["padding_bytes"].sum())  # the total is its parts
            assert padding <= int(own["size_bytes"].sum())
    for pool in feature_pools(log.frames).values():
        if pool.lower_bound_bytes is not None:
            assert pool.lower_bound_bytes <= pool.span_bytes
    # Every reported check is printed beside its figure in the text summary.
    text = render_text(log)
    for check in checks.to_dict("records"):
        assert check["reason"] in text


def test_the_two_pool_spans_of_29_are_two_figures(analysed: dict[str, Any]) -> None:
    """The pool span and the span of every feature row differ on [29]: two labels, two values."""
    log = analysed["29-doc-rknpu2-sram-runtime-log-level3-rk3588.log"]
    derived = log.summary()["builds"][0]["derived"]
    assert derived["feature_pool_bytes"] == 2157568 == log.summary()["builds"][0]["memory"]["internal_bytes"]
    assert derived["feature_table_span_bytes"] == 2362368
    assert derived["computed_reuse_rate"] == pytest.approx(1 - 2157568 / 5456896)
    text = render_text(log)
    assert "feature pool span          2.06 MiB (2157568 B)" in text
    assert "feature table span         2.25 MiB (2362368 B)" in text


def test_padding_of_01_and_09_is_reported_not_summed(analysed: dict[str, Any]) -> None:
    one = analysed["01-runtime-verbose-conv2d-rk3588-232.log"].frames["figure_checks"]
    assert sorted(one["line"]) == [13, 13, 14] and set(one["figure"]) == {
        "padding_bytes",
        "computed_reuse_rate",
    }
    nine = analysed["09-build-verbose-mobilenetv1-rv1106-tk2-1.5.2-simulator.log"]
    assert nine.summary()["builds"][0]["derived"]["padding_bytes"] == 167537  # = the padding table's total
    (check,) = nine.frames["figure_checks"].to_dict("records")
    assert check["line"] == 211 and "-2016 B" in check["reason"]


def test_mutated_padding_is_reported() -> None:
    """Under mutation: a row whose padding grows past its Size, or below zero, is reported and left out."""
    path = FIXTURES / "rknn" / "29-doc-rknpu2-sram-runtime-log-level3-rk3588.log"
    log = logscope.parse(path)
    before = log.summary()["builds"][0]["derived"]["padding_bytes"]
    tensors = log.frames["tensors"].copy()
    first = tensors.index[(tensors["table"] == "feature") & (tensors["padding_bytes"] > 0)][0]
    tensors.loc[first, "padding_bytes"] = int(tensors.loc[first, "size_bytes"]) + 1
    from logscope.analysis.derived import derive_memory

    derived, checks = derive_memory(tensors, log.frames["memory"])
    assert [c["line"] for c in checks] == [int(tensors.loc[first, "line"])]
    assert derived[0]["padding_bytes"] == before - int(log.frames["tensors"].loc[first, "padding_bytes"])


def test_every_figure_has_a_unique_label_and_a_definition() -> None:
    assert len({f.label for f in FIGURES}) == len(FIGURES)
    for f in FIGURES:
        assert f.definition and f.unit in ("B", "ratio") and f.source in ("log", "derived")
        assert f.source == "log" or f.formula, f.key


def test_multi_build_log_names_every_build(tmp_path: Path) -> None:
    """A generated 5-build log: every figure of the report's summary names its build, the builds left
    out are named in a note, the breakdown plot says how many bars it drew, and each figure still
    has one value in every output."""
    import sys

    sys.path.insert(0, str(FIXTURES.parent))
    from benchmarks.generate import generate_log

    path = tmp_path / "five.log"
    generate_log(path, builds=5, seed=3)
    log = analyze_log(logscope.parse(path), Config())
    report = build_report([log])
    headline = [(h.label, h.value, h.where) for h in report.files[0].headline]
    (note,) = [h for h in headline if h[0] == "builds"]
    assert "5 builds; 3 shown, 2 left out (builds 2–3)" in note[1]
    shown = {int(m.group(1)) for label, _, _ in headline if (m := re.match(r"^build (\d+)", label))}
    assert shown == {0, 1, 4}  # the first two, and the build the memory plot draws
    for label, _, _ in headline:
        assert label == "builds" or re.match(r"^build \d+", label), label
    expected = _expected(log)
    builds = [b["index"] for b in log.summary()["builds"]]
    _check("report", "", expected, _from_headline([(h[0], h[1]) for h in headline], builds))
    _check("text", "", expected, _from_text(render_text(log)))
    tables = {t.key: t for t in report.files[0].tables}
    assert tables["largest_tensors"].columns[0] == "build"


def test_figures_doc_is_current() -> None:
    from logscope.figures import render_figures_markdown

    doc = FIXTURES.parent / "docs" / "figures.md"
    assert doc.read_text(encoding="utf-8") == render_figures_markdown(), "run `make docs`"


def test_mutated_total_is_reported() -> None:
    """weight + internal + other = total within the printing rounding ([02]: 1 B apart); 1 MiB is not."""
    from logscope.analysis.derived import _totals_checks

    log = logscope.parse(FIXTURES / "rknn" / "02-eval-memory-yolov8-1920-rk3588-tk2-1.6.log")
    memory = log.frames["memory"]
    assert _totals_checks(memory) == [] and log.frames["figure_checks"].empty
    grown = memory.copy()
    grown.loc[grown.index[0], "total_bytes"] += 1024**2
    (check,) = _totals_checks(grown)
    assert check["figure"] == "total_bytes" and check["line"] == 8 and "(-1048575 B)" in check["reason"]


def test_a_memory_row_without_a_build_goes_last() -> None:
    """A memory row without a build index (no parser writes one) neither fails the derived figures
    (comparing <NA>) nor takes a build's figures: it sorts after every build's rows."""
    from logscope.analysis.derived import add_derived_memory
    from logscope.frames import build_frame

    log = logscope.parse(FIXTURES / "rknn" / "09-build-verbose-mobilenetv1-rv1106-tk2-1.5.2-simulator.log")
    memory = log.frames["memory"]
    for extra in ("build-log", "derived"):  # the row-keeping path, then the rebuilding one (a new row)
        rows = [dict(zip(memory.columns, values, strict=True)) for values in memory.astype(object).values]
        rows = [{k: (None if v is pd.NA else v) for k, v in r.items()} for r in rows]
        log.frames["memory"] = build_frame("memory", [{"source": extra, "weight_bytes": 5}, *rows])
        add_derived_memory(log)
        out = log.frames["memory"]
        assert out["build_index"].isna().tolist() == [False] * len(rows) + [True]
        assert out["feature_pool_bytes"].tolist()[:-1] == [1756160] * len(rows)
        assert out["feature_pool_bytes"].isna().tolist()[-1]
