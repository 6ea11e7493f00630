"""Family detection by evidence: a minimum, an early decision that says where, and a clear refusal."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

import logscope
from logscope.cli import app
from logscope.detect import DECISIVE, HEAD, detect
from logscope.errors import InputError
from logscope.io import decode_bytes, read_log
from tests.conftest import FIXTURES

VERBOSE = FIXTURES / "rknn" / "09-build-verbose-mobilenetv1-rv1106-tk2-1.5.2-simulator.log"


def _text(lines: list[str], name: str = "<t>"):  # type: ignore[no-untyped-def]
    return decode_bytes(("\n".join(lines) + "\n").encode(), name)


# ESP-IDF's log format: `L (ms) tag: message`, L in E W I D V; an application's own lines, no memory output.
ESP_APP = [
    "I (312) cpu_start: Starting scheduler on PRO CPU.",
    "I (322) main_task: Calling app_main()",
    "W (332) app: sensor not found, retrying",
]


@pytest.mark.parametrize(
    "lines",
    [
        ESP_APP,
        [line.replace("I (", "D (") for line in ESP_APP],  # other levels
        ["E (1024) wifi:connect failed", "I (2048) app: done"],  # no space after the tag's colon
        [*ESP_APP, "", "  ", *ESP_APP],  # blanks and repeats
    ],
    ids=["three-lines", "debug-level", "no-space", "repeated"],
)
def test_an_esp_idf_application_log_is_neither_family(lines):
    detection = detect(_text(lines))
    assert detection.family is None and detection.scores == {"rknn": 0, "mcu": 0}
    with pytest.raises(InputError) as err:
        logscope.parse_text(_text(lines, "app.log"))
    message = str(err.value)
    assert "app.log" in message and "RKNN" in message and "MCU" in message
    assert "ESP-IDF log line" in message and "line 1 `" in message


def test_the_cli_refuses_it_with_exit_2_naming_both_families(tmp_path):
    log = tmp_path / "app.log"
    log.write_text("\n".join(ESP_APP) + "\n")
    result = CliRunner().invoke(app, ["parse", str(log)])
    assert result.exit_code == 2
    out = result.output
    assert "neither an RKNN-Toolkit or RKNN runtime log nor MCU memory output" in out
    assert "Traceback" not in out


def test_the_same_lines_with_a_heap_trace_are_mcu():
    lines = [*ESP_APP, "I (1122) kws: Op[0] CONV_2D: delta=+15.62KiB, total=46.88KiB"]
    detection = detect(_text(lines))
    assert detection.family == "mcu" and detection.first["mcu"].line == 4
    assert logscope.parse_text(_text(lines)).kind == "mcu-heap-trace"


def test_a_traceback_that_names_the_toolkit_is_rknn_evidence():
    lines = [
        "E Catch exception when building RKNN model!",
        "E Traceback (most recent call last):",
        'E   File "rknn/base/RKNNlib/RKNNnet.py", line 672, in rknn.base.RKNNlib.RKNNnet.load_input_meta',
        "E AssertionError",
    ]
    detection = detect(_text(lines))
    assert detection.family == "rknn" and detection.scores["rknn"] == 2
    # The same traceback from another program is not.
    other = [line.replace("RKNN", "ONNX").replace("rknn", "onnx") for line in lines]
    assert detect(_text(other)).family is None


def test_a_verbose_log_is_decided_within_its_first_lines_and_says_where():
    text = read_log(VERBOSE)
    detection = detect(text)
    assert detection.family == "rknn" and detection.scores == {"rknn": DECISIVE, "mcu": 0}
    assert detection.decided_at is not None and detection.sampled < 100
    assert f"decided at line {detection.decided_at}" in detection.explain()
    # Reading every head line instead decides the same.
    assert detect(text, head=HEAD).family == detect(text, head=10**6).family == "rknn"


def test_one_evidence_line_is_the_minimum():
    assert detect(_text(["just words", "E RKNN: failed to submit!"])).family == "rknn"
    assert detect(_text(["just words", "more words"])).family is None


def test_an_empty_text_is_not_refused():
    detection = detect(_text([]))
    assert detection.family == "rknn" and detection.sampled == 0


def test_evidence_after_a_long_prologue_in_another_block_is_found():
    """The search beyond the head goes on in later blocks of a stream, and hands every block back."""
    from logscope.detect import detect_blocks

    prologue = [f"app: sample {i}" for i in range(HEAD + 10)]
    blocks = [
        (prologue[:1500], list(range(1, 1501))),
        (prologue[1500:], list(range(1501, len(prologue) + 1))),
        (["Op[0] Conv2D: delta=+12000, total=45000"], [len(prologue) + 1]),
    ]
    detection, taken = detect_blocks(iter(blocks))
    assert detection.family == "mcu" and detection.first["mcu"].line == len(prologue) + 1
    assert taken == blocks


def test_streamed_and_read_detections_agree_on_every_fixture():
    for path in sorted((FIXTURES / "rknn").glob("*.log"))[:20]:
        streamed = logscope.parse(path).summary()
        read = logscope.parse_text(read_log(path)).summary()
        assert json.dumps(streamed, sort_keys=True) == json.dumps(read, sort_keys=True), path.name
