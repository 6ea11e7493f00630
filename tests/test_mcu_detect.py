"""Format detection: every fixture goes to its family's parser, and the JSON says which kind it is."""

from __future__ import annotations

import json

import pytest

import logscope
from logscope.detect import HEAD, detect
from logscope.errors import InputError
from logscope.io import decode_bytes, read_log
from tests.conftest import FIXTURES
from tests.regenerate_golden import mcu_fixtures

RKNN_LOGS = sorted((FIXTURES / "rknn").glob("*.log")) + sorted((FIXTURES / "synthetic").glob("*.log"))
KINDS = {
    "01": "mcu-tflm",
    "02": "mcu-tflm",
    "04": "mcu-tflm",
    "05": "mcu-tflm",
    "06": "mcu-tflm",
    "07": "mcu-tflm",
    "08": "mcu-st-ai",
    "09": "mcu-st-ai",
    "10": "mcu-st-ai",
    "11": "mcu-st-ai",
    "12": "mcu-vela",
    "13": "mcu-vela",
    "14": "mcu-vela",
    "16": "mcu-esp-idf-heap",
    "18": "mcu-esp-idf-heap",
    "19": "mcu-nnom",
    "20": "mcu-nnom",
    "21": "mcu-nnom",
    "22": "mcu-esp-dl",
    "23": "mcu-esp-dl",
    "24": "mcu-tinyengine",
    "25": "mcu-esp-idf-heap",
    "26": "mcu-tflm",
    "27": "mcu-mbed",
    "28": "mcu-tflm",
    "29": "mcu-tflm",
    "30": "mcu-tflm",
    "31": "mcu-tflm",
}


@pytest.mark.parametrize("path", RKNN_LOGS, ids=lambda p: p.stem[:40])
def test_rknn_logs_are_detected_as_rknn(path):
    detection = detect(read_log(path))
    assert detection.family == "rknn" and detection.scores["mcu"] == 0


@pytest.mark.parametrize("path", mcu_fixtures(), ids=lambda p: p.stem[:40])
def test_mcu_traces_are_detected_with_their_kind(path):
    detection = detect(read_log(path))
    assert detection.family == "mcu" and detection.scores["rknn"] == 0
    kind = logscope.parse(path).kind
    assert kind == KINDS.get(path.stem[:2], "mcu-heap-trace")


def test_streamed_and_read_paths_agree():
    for path in mcu_fixtures():
        streamed = logscope.parse(path).summary()
        read = logscope.parse_text(read_log(path)).summary()
        assert json.dumps(streamed, sort_keys=True) == json.dumps(read, sort_keys=True), path.name


def test_trace_after_a_long_application_prologue_is_still_found():
    prologue = [f"app: sensor sample {i} = {i * 7 % 113}" for i in range(HEAD + 500)]
    text = "\n".join(
        [*prologue, "Op[0] Conv2D: delta=+12000, total=45000", "Op[1] ReLU: delta=0, total=45000"]
    )
    log = logscope.parse_text(decode_bytes(text.encode(), "<prologue>"))
    assert log.kind == "mcu-heap-trace" and log.summary()["runs"][0]["memory"]["peak_bytes"] == 45000
    assert log.line_counts["unparsed"] == len(prologue)


def test_prose_is_still_not_a_log():
    with pytest.raises(InputError):
        logscope.parse_text(decode_bytes(b"nothing to see here\njust words\n", "<prose>"))


def test_more_rknn_evidence_wins():
    text = (
        "I rknn building ...\nD RKNN: [10:00:00.000] RKNN is invoked\nI rknn building done.\n"
        "Op[0] A: delta=1, total=1\n"
    )
    assert detect(decode_bytes(text.encode(), "<mixed>")).family == "rknn"
