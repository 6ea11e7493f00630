"""The Python API as a notebook user meets it: docs/python-api.md runs, block by block, in order."""

from __future__ import annotations

import contextlib
import io
import os
import re

import pytest

import logscope
from tests.conftest import MOBILENET, ROOT


def test_the_python_api_page_runs() -> None:
    page = (ROOT / "docs" / "python-api.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", page, re.DOTALL)
    assert len(blocks) >= 5
    namespace: dict[str, object] = {}
    here = os.getcwd()
    os.chdir(ROOT)
    try:
        for block in blocks:
            with contextlib.redirect_stdout(io.StringIO()):
                exec(compile(block, "docs/python-api.md", "exec"), namespace)
    finally:
        os.chdir(here)


def test_repr_is_short_and_html_is_a_summary() -> None:
    log = logscope.analyze(MOBILENET)
    assert len(repr(log)) < 160 and "4 findings" in repr(log)
    html = log._repr_html_()
    assert "<table>" in html and "feature pool span" in html and len(html) < 4000
    assert "QNT001" in html


def test_findings_frame_types() -> None:
    frame = logscope.analyze(MOBILENET).findings_frame
    assert str(frame["line"].dtype) == "Int64" and frame["code"].tolist()
    empty = logscope.parse(MOBILENET).findings_frame
    assert empty.empty and "code" in empty.columns


def test_parse_text_of_a_string_and_of_nothing() -> None:
    with pytest.raises(logscope.InputError):
        logscope.parse_text("")
    log = logscope.parse_text(MOBILENET.read_text(encoding="utf-8"))
    assert log.summary()["builds"][0]["memory"]["internal_bytes"] == 1756160
