"""Hostile names through every command and format: each output stays inert.

One list of hostile strings (markup, template syntax, Markdown table breakers, terminal escape sequences
in their 7-bit and 8-bit forms, a bidi override, NUL, spreadsheet formulas) is planted in the tensor
names, layer names, messages and op names of a real RKNN build log and a heap trace, then every command
and format is run. Inert means: no control character reaches a terminal stream (text, JSON, Markdown,
error lines), JSON still decodes to the exact text, no CSV cell would be evaluated by a spreadsheet,
Markdown tables keep their columns and carry no raw HTML, the HTML report has no script, no event
attribute and no external resource, and every file written stays inside the output folder.
"""

from __future__ import annotations

import csv
import json
import re
import shutil
from html.parser import HTMLParser
from pathlib import Path

import pytest
from typer.testing import CliRunner

from logscope.cli import app
from logscope.inert import csv_cell, markdown_text, visible_controls

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
RKNN_LOG = FIXTURES / "rknn" / "09-build-verbose-mobilenetv1-rv1106-tk2-1.5.2-simulator.log"
HEAP_LOG = FIXTURES / "synthetic" / "heap-trace-stm32-uart-bytes-leak.txt"

# Names without spaces go into whitespace-separated table columns; the full list goes into messages.
HOSTILE_NAMES = [
    "<script>alert(1)</script>",
    '"><img/src=x/onerror=alert(1)>',
    "{{7*7}}",
    "a|b|c",
    "`rm`-rf",
    "\x1b[31mred\x1b[0m",
    "\x1b]0;pwned\x07",
    "\x9b31mcsi",
    "\x9d0;osc\x9c",
    "\u202egnp.exe",
    '=HYPERLINK("http://evil.example","x")',
    "+cmd|'/c calc'!A0",
    "-2+3",
    "@SUM(A1:A9)",
    "$\\frac{x$",
]
HOSTILE_MESSAGES = [
    *HOSTILE_NAMES,
    "nul\x00byte",  # only after the first 64 KiB: a NUL before makes the file binary (refused)
    '"><img src=x onerror=alert(document.domain)>',
    "\ttab-led",
    "| col | col |",
    "```\ncode\n```",
]

# What a terminal would act on: C0 controls but tab and newline, DEL, C1, bidi overrides and isolates.
TERMINAL_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _hostile_rknn(path: Path) -> Path:
    """The MobileNet build log with hostile tensor and layer names and hostile warnings and errors."""
    text = RKNN_LOG.read_text(encoding="utf-8")
    for i, name in enumerate(HOSTILE_NAMES):
        # feature tensors `Relu6__5:0` ... and the perf/layer names `Conv:MobilenetV1/...`
        text = text.replace(
            f"Relu6__{5 + 2 * i}:0 ", name + " " * max(1, len(f"Relu6__{5 + 2 * i}:0 ") - len(name))
        )
    text = text.replace("Conv:MobilenetV1/MobilenetV1/Conv2d_8_pointwise/Relu6", "Conv:" + HOSTILE_NAMES[0])
    text = text.replace("Conv:MobilenetV1/MobilenetV1/Conv2d_9_depthwise/Relu6", "Conv:" + HOSTILE_NAMES[5])
    lines = text.split("\n")
    extra = []
    # controls first: the text summary shows the first five errors
    for message in sorted(HOSTILE_MESSAGES, key=lambda m: TERMINAL_UNSAFE.search(m) is None):
        flat = message.replace("\n", " ")
        extra += [f"W build: {flat}", f"E build: {flat}"]
    # A NUL in the first 64 KiB makes the whole file "binary" (refused): the hostile lines go after it.
    padding = [f"I padding line {i} " + "." * 100 for i in range(max(0, 65536 - len(text)) // 100 + 1)]
    lines[-1:-1] = padding + extra
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


def _hostile_heap(path: Path) -> Path:
    """The STM32 heap trace with hostile op names and a hostile model name."""
    text = HEAP_LOG.read_text(encoding="utf-8")
    for op, name in zip(("Conv2D", "ReLU", "MaxPool", "Reshape"), HOSTILE_NAMES[4:8], strict=True):
        text = text.replace(f"] {op}:", f"] {name.replace(' ', '_')}:")
    text = text.replace("cnn_small_int8", HOSTILE_NAMES[0])
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("hostile")
    return {
        "rknn": _hostile_rknn(root / "hostile-build.log"),
        "heap": _hostile_heap(root / "hostile-heap.txt"),
    }


def _run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def _assert_terminal_inert(text: str, where: str) -> None:
    bad = TERMINAL_UNSAFE.search(text)
    assert bad is None, (
        f"{where}: control character {bad.group()!r}: {text[bad.start() - 40 : bad.start() + 40]!r}"
    )


def _assert_markdown_inert(text: str, where: str) -> None:
    _assert_terminal_inert(text, where)
    for tag in ("<script", "<img", 'onerror="', "<a ", "<iframe"):
        assert tag not in text.lower(), f"{where}: raw HTML {tag!r}"
    # every table row has the header's number of cells: an unescaped `|` would add one
    rows: list[list[str]] = []
    for line in [*text.splitlines(), ""]:
        if line.startswith("|"):
            cells = re.split(r"(?<!\\)\|", line.strip())
            rows.append(cells)
        elif rows:
            assert all(len(r) == len(rows[0]) for r in rows), f"{where}: table lost its columns: {rows}"
            rows = []


def _assert_csv_inert(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    _assert_terminal_inert(text, str(path))
    with path.open(newline="", encoding="utf-8") as handle:
        for row in csv.reader(handle):
            for cell in row:
                if cell.startswith(("=", "+", "-", "@", "\t", "\r")):
                    float(cell)  # only a number may start with a sign; anything else is a formula


class _HtmlAudit(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, list[tuple[str, str | None]]]] = []
        self.scripts: list[tuple[str | None, str]] = []  # (type, text)
        self._in_script: str | bool | None = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, attrs))
        if tag == "script":
            self._in_script = dict(attrs).get("type")
            self.scripts.append((dict(attrs).get("type"), ""))

    def handle_endtag(self, tag: str) -> None:
        if tag == "script":
            self._in_script = False

    def handle_data(self, data: str) -> None:
        if self._in_script is not False and self.scripts:
            kind, text = self.scripts[-1]
            self.scripts[-1] = (kind, text + data)


def _assert_html_inert(text: str, where: str = "html") -> None:
    """No script from the log: the page's own scripts only (no `src`, no log text in them), log data
    only as JSON inside `<script type="application/json">`; no event attribute, no external resource."""
    _assert_terminal_inert(text, where)
    for raw in ("<script>alert", "<img/src=x", "<img src=x", "</script><"):
        assert raw not in text, f"{where}: raw {raw!r}"
    audit = _HtmlAudit()
    audit.feed(text)
    for tag, attrs in audit.tags:
        assert tag not in ("iframe", "object", "embed", "link"), tag
        for name, value in attrs:
            assert not name.startswith("on"), (where, tag, name)
            if name in ("src", "href"):
                assert (value or "").startswith(("data:", "#")), (where, tag, name, value)
    for kind, body in audit.scripts:
        if kind == "application/json":
            _json_strings(json.loads(body))
        else:
            for name in HOSTILE_MESSAGES:
                assert name not in body, (where, name)


def _json_strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in (*_json_strings(k), *_json_strings(v))]
    if isinstance(value, list):
        return [s for v in value for s in _json_strings(v)]
    return []


def _assert_json_inert(text: str, where: str, expect: str | None = None) -> None:
    _assert_terminal_inert(text, where)
    strings = _json_strings(json.loads(text))
    if expect is not None:  # JSON is data: the exact hostile text decodes back
        assert any(expect in s for s in strings), f"{where}: {expect!r} lost"


def _files_inside(folder: Path) -> list[Path]:
    found = sorted(p for p in folder.rglob("*") if p.is_file())
    for p in found:
        assert p.resolve().is_relative_to(folder.resolve()), p
    return found


# ------------------------------------------------------------------------------------ the policy


def test_visible_controls_shows_every_terminal_control() -> None:
    assert visible_controls("\x1b[31m") == "\\x1b[31m"
    assert visible_controls("\x9b2J\x9d0;t\x9c") == "\\u009b2J\\u009d0;t\\u009c"
    assert visible_controls("a\u202eb\x00c\x7f") == "a\\u202eb\\x00c\\u007f"
    assert visible_controls("tab\tand\nnewline stay") == "tab\tand\nnewline stay"
    for name in HOSTILE_MESSAGES:
        _assert_terminal_inert(visible_controls(name), repr(name))


def test_csv_cell_neutralises_formulas_only_in_text() -> None:
    assert csv_cell('=HYPERLINK("x")') == '\'=HYPERLINK("x")'
    assert [csv_cell(v) for v in ("+1", "-1", "@A", "\tx", "\rx")] == ["'+1", "'-1", "'@A", "'\tx", "'\\x0dx"]
    assert csv_cell(-5) == -5 and csv_cell("conv 1") == "conv 1" and csv_cell(None) is None


def test_markdown_text_keeps_table_columns() -> None:
    for name in HOSTILE_MESSAGES:
        _assert_markdown_inert(f"| a | {markdown_text(name)} |\n|---|---|", repr(name))


# ------------------------------------------------------------------------------------ every command


def test_parse_text_json_markdown_are_inert(hostile: dict[str, Path]) -> None:
    for log in hostile.values():
        code, out, err = _run("parse", str(log))
        assert code in (0, 1), err
        _assert_terminal_inert(out + err, f"parse text {log.name}")
        code, out, err = _run("parse", str(log), "-f", "markdown")
        _assert_markdown_inert(out, f"parse markdown {log.name}")
        code, out, err = _run("parse", str(log), "-f", "json")
        _assert_json_inert(out, f"parse json {log.name}")
    # the planted names reach the output (shown, not dropped) and decode back exactly from JSON
    code, out, _ = _run("parse", str(hostile["rknn"]))
    # (7-bit ESC sequences are removed on reading, with a note; 8-bit ones and bidi are kept and shown)
    assert "\\u009b31mcsi" in out and "\\u202egnp.exe" in out and "removed" in out
    code, out, _ = _run("parse", str(hostile["rknn"]), "-f", "json")
    _assert_json_inert(out, "parse json", expect=HOSTILE_NAMES[1])


def test_frames_csv_and_parquet(hostile: dict[str, Path], tmp_path: Path) -> None:
    import pandas as pd

    for log in hostile.values():
        folder = tmp_path / f"{log.stem}-csv"
        code, _, err = _run("parse", str(log), "--frames-out", str(folder), "--frames-format", "csv")
        assert code in (0, 1), err
        files = _files_inside(folder)
        assert files
        for path in files:
            _assert_csv_inert(path)
    # the CSV shows the formula as text; Parquet keeps the exact text (it is data, not a spreadsheet)
    tensors = (tmp_path / "hostile-build-csv" / "tensors.csv").read_text(encoding="utf-8")
    assert "'=HYPERLINK(" in tensors and "'@SUM(A1:A9)" in tensors and "'-2+3" in tensors
    folder = tmp_path / "parquet"
    _run("parse", str(hostile["rknn"]), "--frames-out", str(folder))
    _files_inside(folder)
    names = set(pd.read_parquet(folder / "tensors.parquet")["name"])
    assert '=HYPERLINK("http://evil.example","x")' in names and "\x9b31mcsi" in names


def test_reports_html_markdown_json(hostile: dict[str, Path], tmp_path: Path) -> None:
    logs = [str(p) for p in hostile.values()]
    for args in ([], ["--static"]):
        code, _, err = _run("report", *logs, "-o", str(tmp_path / "r.html"), "--force", *args)
        assert code == 0, err
        _assert_terminal_inert(err, "report stderr")
        _assert_html_inert((tmp_path / "r.html").read_text(encoding="utf-8"), f"report html {args}")
    for args in ([], ["--compact"]):
        out_dir = tmp_path / f"md{len(args)}"
        out_dir.mkdir()
        code, _, err = _run("report", *logs, "-o", str(out_dir / "r.md"), *args)
        assert code == 0, err
        _files_inside(out_dir)
        _assert_markdown_inert((out_dir / "r.md").read_text(encoding="utf-8"), f"report md {args}")
    code, _, err = _run("report", *logs, "-o", str(tmp_path / "r.json"))
    assert code == 0, err
    _assert_json_inert(
        (tmp_path / "r.json").read_text(encoding="utf-8"), "report json", expect="\u202egnp.exe"
    )


@pytest.mark.parametrize("kind", ["memory", "address-map", "breakdown", "fragmentation", "perf"])
def test_plots(hostile: dict[str, Path], tmp_path: Path, kind: str) -> None:
    for log in hostile.values():
        out = tmp_path / "plots" / f"{log.stem}-{kind}.png"
        out.parent.mkdir(exist_ok=True)
        code, stdout, err = _run("plot", str(log), "-k", kind, "-o", str(out))
        assert code in (0, 2), err  # 2: the log has nothing for this plot, said in one line
        _assert_terminal_inert(stdout + err, f"plot {kind}")
        if code == 0:
            assert out.read_bytes().startswith(b"\x89PNG")
    _files_inside(tmp_path / "plots")


def test_diff(hostile: dict[str, Path]) -> None:
    old, new = str(RKNN_LOG), str(hostile["rknn"])
    code, out, err = _run("diff", old, new)
    assert code == 0, err
    _assert_terminal_inert(out + err, "diff text")
    assert "\\u009d0;osc\\u009c" in out  # the hostile messages are listed, shown escaped
    _, out, _ = _run("diff", old, new, "-f", "markdown")
    _assert_markdown_inert(out, "diff markdown")
    _, out, _ = _run("diff", old, new, "-f", "json")
    _assert_json_inert(out, "diff json", expect="\x9b31mcsi")


def test_diff_pages(hostile: dict[str, Path], tmp_path: Path) -> None:
    old, new = str(RKNN_LOG), str(hostile["rknn"])
    code, _, err = _run("diff", old, new, "-o", str(tmp_path / "d.html"))
    assert code == 0, err
    _assert_html_inert((tmp_path / "d.html").read_text(encoding="utf-8"), "diff html")
    md = tmp_path / "md"
    md.mkdir()
    code, _, err = _run("diff", old, new, "-o", str(md / "d.md"))
    assert code == 0, err
    _files_inside(md)
    _assert_markdown_inert((md / "d.md").read_text(encoding="utf-8"), "diff md")


def test_ci_formats(hostile: dict[str, Path]) -> None:
    """SARIF stays JSON with the exact text; GitHub annotations cannot start a new workflow command;
    JUnit is well-formed XML (raw controls would make it invalid)."""
    import xml.etree.ElementTree as ET

    for log in hostile.values():
        _, out, _ = _run("parse", str(log), "-f", "sarif")
        _assert_json_inert(out, "sarif")
        _, out, _ = _run("parse", str(log), "-f", "github")
        _assert_terminal_inert(out, "github")
        assert all(line.startswith("::") for line in out.splitlines() if line), out[:500]
        _, out, _err = _run("parse", str(log), "-f", "junit")
        _assert_terminal_inert(out, "junit")
        ET.fromstring(out)


def test_audit_and_trend(hostile: dict[str, Path], tmp_path: Path) -> None:
    import duckdb

    folder = tmp_path / "logs"
    folder.mkdir()
    for path in hostile.values():
        shutil.copy(path, folder / path.name)
    (folder / "=HYPERLINK(x)\u202e.log").write_bytes(b"\x00\x01 binary \x9b\xff")
    db = tmp_path / "a.duckdb"
    code, out, err = _run("audit", str(folder), "--db", str(db), "-v")
    assert code == 0, err
    _assert_terminal_inert(out + err, "audit")
    _, out, err = _run("audit", str(folder), "--db", str(db), "-f", "json", "--force")
    _assert_json_inert(out, "audit json")
    with duckdb.connect(str(db), read_only=True) as con:  # the store keeps the exact text: it is data
        names = {row[0] for row in con.execute("SELECT message FROM messages").fetchall()}
    assert "\x9b31mcsi" in names
    for fmt in ("text", "json", "csv"):
        code, out, err = _run("trend", "--db", str(db), "--by", "path", "-f", fmt)
        assert code == 0, err
        if fmt == "json":
            _assert_json_inert(out, "trend json")
        else:
            _assert_terminal_inert(out + err, f"trend {fmt}")
    csv_path = tmp_path / "trend.csv"
    _run("trend", "--db", str(db), "--by", "path", "-o", str(csv_path))
    _assert_csv_inert(csv_path)


def test_error_lines_are_inert(tmp_path: Path) -> None:
    missing = tmp_path / "\x1b]0;pwned\x07\u202e.log"
    code, out, err = _run("parse", str(missing))
    assert code == 2
    _assert_terminal_inert(out + err, "missing file error")
    assert "\\x1b]0;pwned" in err
