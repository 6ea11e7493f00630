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


def test_frames_not_made_yet_read_as_the_empty_frames_they_stand_for():
    """A parsed log's empty frames are made when read (`model.Frames`); every way of reading the
    frames (item, get, in, iteration, items, values, dict(), {**}, copy, pickle, pop, setdefault,
    comparison) sees every declared frame, empty and of its schema, in the order an eager parse added
    them, and never the placeholder."""
    import copy
    import pickle

    import pandas as pd

    from logscope.frames import SCHEMAS
    from logscope.model import _PENDING, Frames

    def fresh() -> Frames:
        frames = logscope.parse(MOBILENET).frames
        assert isinstance(frames, Frames)
        return frames

    frames = fresh()
    assert list(frames) == list(dict.keys(frames)) and set(frames) == set(SCHEMAS) | set(frames)
    assert any(v is _PENDING for v in dict.values(frames))  # some are not made yet
    assert frames["perf"].empty and list(frames["perf"].columns) == list(SCHEMAS["perf"])
    assert frames.get("perf_ranking").empty and frames.get("nope") is None and "accuracy" in frames
    for read in (
        lambda f: list(f.values()),
        lambda f: [v for _, v in f.items()],
        lambda f: list(dict(f).values()),
        lambda f: list({**f}.values()),
        lambda f: list(f.copy().values()),
        lambda f: list(pickle.loads(pickle.dumps(f)).values()),
        lambda f: list(copy.copy(f).values()),
        lambda f: [f.pop(name) for name in list(f)],
        lambda f: [f.setdefault(name) for name in list(f)],
    ):
        got = read(fresh())
        assert len(got) == len(fresh()) and all(isinstance(v, pd.DataFrame) for v in got)
    made = fresh()._made()
    assert all(v is not _PENDING for v in dict.values(made))
    assert [(k, list(v.columns)) for k, v in made.items()] == [
        (k, list(v.columns)) for k, v in pickle.loads(pickle.dumps(fresh())).items()
    ]
    one, other = fresh(), fresh()
    assert one["perf"] is one["perf"] and one["perf"] is not other["perf"]  # each log's own frames
    # `filled` names the frames with rows, as reading them all would, without making a pending one
    frames = fresh()
    pending = [name for name, v in dict.items(frames) if v is _PENDING]
    assert frames.filled() == {name for name, frame in fresh().items() if len(frame) > 0}
    assert [name for name, v in dict.items(frames) if v is _PENDING] == pending


def test_memory_rows_left_unbuilt_give_the_frame_built_before_the_derived_figures():
    """The parse leaves the memory frame's rows unbuilt (`Frames.build_later`) and the derived figures
    build it once from them; a memory frame built before they run (read by then) gets its derived
    columns replaced instead: the same memory and figure_checks frames either way, also where a build
    gets a `derived` row of its own."""
    import functools

    import pandas as pd

    from logscope.analysis.derived import add_derived_memory
    from logscope.api import _drained
    from logscope.detect import detect_blocks
    from logscope.io import decode_bytes
    from logscope.model import Frames
    from logscope.parsers.rknn import parse_rknn_blocks

    text = MOBILENET.read_text(encoding="utf-8")
    cut = "\n".join(line for line in text.split("\n") if "Memory" not in line and "Predict" not in line)

    def parse(source: str) -> logscope.ParsedLog:
        read = decode_bytes(source.encode("utf-8"), "<text>")
        blocks = iter([(read.lines, read.numbers)])
        _, head = detect_blocks(blocks)
        return parse_rknn_blocks(read, _drained(head, blocks))

    for source in (text, cut + "\n" + text, cut):
        parsed = functools.partial(parse, source)

        lazy = parsed()
        assert isinstance(lazy.frames, Frames)
        if source is not cut:  # (a log without a memory line has no row: an empty frame)
            assert lazy.frames.unbuilt("memory") and "memory" in lazy.frames.filled()
        add_derived_memory(lazy)
        built = parsed()
        assert len(built.frames["memory"]) == (source is not cut) and built.frames.unbuilt("memory") is None
        add_derived_memory(built)
        plain = parsed()
        plain.frames = dict(plain.frames)  # a log whose frames are a plain dict: every frame made
        add_derived_memory(plain)
        for name in ("memory", "figure_checks"):
            for other in (built, plain):
                pd.testing.assert_frame_equal(lazy.frames[name], other.frames[name], check_exact=True)
        assert lazy.frames.unbuilt("memory") is None  # built when read
    assert "derived" in lazy.frames["memory"]["source"].tolist()
