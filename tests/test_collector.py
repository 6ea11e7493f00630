"""The collector is paused only while a log is read, and left as the caller had it."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest

import logscope
from logscope.collector import collector_paused

FIXTURE = (
    Path(__file__).resolve().parents[1]
    / "fixtures"
    / "rknn"
    / "09-build-verbose-mobilenetv1-rv1106-tk2-1.5.2-simulator.log"
)


@pytest.fixture
def collector_on():
    was = gc.isenabled()
    gc.enable()
    yield
    if not was:
        gc.disable()


def test_paused_inside_and_back_after(collector_on):
    with collector_paused():
        assert not gc.isenabled()
        with collector_paused():  # nested: still off, and the outer pause ends it
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()


def test_back_after_an_exception(collector_on):
    with pytest.raises(RuntimeError), collector_paused():
        raise RuntimeError("a parser bug")
    assert gc.isenabled()


def test_a_caller_that_turned_it_off_keeps_it_off(collector_on):
    gc.disable()
    with collector_paused():
        pass
    assert not gc.isenabled()


def test_parse_and_analyze_leave_it_on(collector_on):
    assert logscope.analyze(FIXTURE).findings is not None
    assert gc.isenabled()
    logscope.parse(FIXTURE)
    assert gc.isenabled()
    with pytest.raises(logscope.InputError):
        logscope.parse_text("")
    assert gc.isenabled()
