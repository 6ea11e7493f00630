"""The compiler's feature table for a transformer block, predicted from the ONNX model
(`logscope.reference.rknn_transformer_tables`, data learned by tools/corpus/rknn_transformer_templates.py).

Measured on the corpus `transformer` builds (T 49, D 64, 4 heads), which the learner never reads: every
predicted table equals the logged one row for row, and the total is the logged one wherever the replay's
placement reproduces the build. The development builds it was learned from are checked too (rows and
totals), and the attention-scratch table against the sweep logs it was read from."""

from __future__ import annotations

import gzip
import json
import re
import sys
from functools import cache
from pathlib import Path
from typing import Any

import pytest

import logscope
from logscope.reference import ReferenceOptions, analyze_model
from logscope.reference.graph import RefGraph, build_graph
from logscope.reference.rknn import RknnOptions, emulate_rknn
from logscope.reference.rknn_transformer_data import TEMPLATES
from logscope.reference.rknn_transformer_tables import (
    ATTENTION_SCRATCH,
    attention_scratch,
    in_domain,
    match_block,
    predict_table,
)

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "fixtures" / "rknn-compiler"
sys.path.insert(0, str(ROOT / "tools" / "corpus"))
import rknn_models  # noqa: E402


def _manifest(folder: str) -> list[dict[str, Any]]:
    return [b for b in json.loads((CORPUS / folder / "manifest.json").read_text())["builds"] if b["built"]]


@cache
def _graph(model: str) -> RefGraph:
    return build_graph(rknn_models.build(model, "zeros"))


def _logged(folder: str, build: dict[str, Any]) -> tuple[list[tuple[Any, ...]], int]:
    log = logscope.parse(CORPUS / folder / build["log"])
    t = log.frames["tensors"]
    rows = t[t["table"] == "feature"]
    listed = [
        (int(r.op_id), r.user_op, r.name, r.orig_shape, r.data_format, int(r.size_bytes))
        for r in rows.itertuples(index=False)
    ]
    return listed, int(rows["end_offset"].max() - rows["start_offset"].min())


def _predicted(build: dict[str, Any]) -> tuple[list[tuple[Any, ...]], int] | None:
    table = predict_table(_graph(build["model"]), build["target"], build["dtype"], build["toolkit"])
    if table is None:
        return None
    rows = table[0]
    listed = [
        (int(r.op_id), r.user_op, r.name, r.orig_shape, r.data_format, int(r.size_bytes))
        for r in rows.itertuples(index=False)
    ]
    options = RknnOptions(target=build["target"], dtype=build["dtype"], toolkit=build["toolkit"])
    return listed, emulate_rknn(_graph(build["model"]), [], options).total


@pytest.fixture(scope="module")
def corpus_results() -> dict[str, tuple[bool, bool] | None]:
    """build id -> (rows equal, total equal), or None when the build is not predicted."""
    out: dict[str, tuple[bool, bool] | None] = {}
    for b in _manifest("."):
        if b["model"] != "transformer":
            continue
        predicted = _predicted(b)
        if predicted is None:
            out[b["id"]] = None
            continue
        rows, total = _logged(".", b)
        out[b["id"]] = (predicted[0] == rows, predicted[1] == total)
    return out


def test_corpus_transformer_tables_are_the_logged_ones(corpus_results):
    """32 of the 50 corpus builds are predicted (wide targets: rk3588, rk3576, rv1126b, rk3562, rv1106,
    rv1103, every toolkit); each predicted table equals the log's, op, name, shape, layout and size."""
    predicted = {k: v for k, v in corpus_results.items() if v is not None}
    assert len(corpus_results) == 50 and len(predicted) == 32
    assert all(rows for rows, _ in predicted.values())
    not_predicted = {k.split("/")[1].split("-")[1] for k, v in corpus_results.items() if v is None}
    assert not_predicted == {"rk3566", "rk3568", "rv1103b", "rv1106b", "rk2118"}


def test_corpus_transformer_totals(corpus_results):
    """Every one of them to the byte (26 with the log replay's single-pass lifetimes, 30 with the
    attention inputs' writers, 32 with rk3562 fp16's unlisted scratch)."""
    exact = {k for k, v in corpus_results.items() if v is not None and v[1]}
    assert len(exact) == 32


def test_reference_command_predicts_the_corpus_total():
    """The same prediction through `analyze_model` (what `logscope reference` and `check` run)."""
    model = rknn_models.build("transformer", "zeros")
    result = analyze_model(model, ReferenceOptions(dtype="int8", target="rk3576", toolkit="2.5.0"))
    build = next(b for b in _manifest(".") if b["id"] == "2.5.0/transformer-rk3576-int8")
    assert result.totals["rknn_bytes"] == _logged(".", build)[1] == 131_008


def _development_builds() -> list[tuple[str, dict[str, Any]]]:
    out = []
    folders = ("transformer-dev", "transformer-heldout", "transformer-sweep", "transformer-sweep-targets")
    for folder in folders:
        for i, b in enumerate(_manifest(folder)):
            if folder.startswith("transformer-sweep") and i % 4:
                continue  # every fourth sweep build: the learner checks all of them
            out.append((folder, b))
    return out


def _check_development_builds(builds: list[tuple[str, dict[str, Any]]]) -> tuple[int, int]:
    """(predicted, exact) over `builds`: rows equal wherever predicted, totals equal except where the
    placement is not reproduced: fp16 on rk3562 and on rk3588 before 2.3.2."""
    predicted = exact = 0
    for folder, b in builds:
        got = _predicted(b)
        if got is None:
            continue
        rows, total = _logged(folder, b)
        predicted += 1
        assert got[0] == rows, b["id"]
        if got[1] == total:
            exact += 1
        else:
            assert (b["target"], b["dtype"]) in {("rk3562", "fp16"), ("rk3588", "fp16")}, b["id"]
    return predicted, exact


def test_every_third_development_build_is_reproduced():
    """Every third build the tables were learned from: 116 predicted, 108 totals exact (the whole set is
    the slow test below)."""
    assert _check_development_builds(_development_builds()[::3]) == (116, 108)


@pytest.mark.slow
def test_development_builds_are_reproduced():
    """Every build the tables were learned from: 384 predicted, 368 totals exact (the 16 others are fp16
    on rk3562 (12) and on rk3588 before 2.3.2 (4))."""
    assert _check_development_builds(_development_builds()) == (384, 368)


def test_attention_scratch_table_is_the_sweeps():
    """Every entry of ATTENTION_SCRATCH is the exSDPAttention scratch of the sweep build at that u."""
    seen = 0
    for b in _manifest("transformer-sweep-targets"):
        with gzip.open(CORPUS / "transformer-sweep-targets" / b["log"], "rt") as fh:
            text = fh.read()
        match = re.search(r"exSDPAttention\s+\S+_exSecondary\s.*\s(0x[0-9a-f]+)\s*$", text, re.M)
        assert match is not None
        tokens = b["input_shapes"]["input"][1]
        assert attention_scratch(b["toolkit"], b["target"], b["dtype"], tokens) == int(match.group(1), 16)
        seen += 1
    assert seen == 432 and len(ATTENTION_SCRATCH) == 7


def test_attention_scratch_outside_the_measured_range():
    assert attention_scratch("2.5.0", "rk3576", "int8", 32) is None
    assert attention_scratch("2.5.0", "rk3576", "int8", 129) is None
    assert attention_scratch("2.5.0", "rk3566", "int8", 49) is None  # no exSDPAttention there
    assert attention_scratch("2.5.0", "rk3588", "int8", 200) is None


def test_match_block_reads_the_block():
    block = match_block(_graph("transformer"))
    assert block is not None
    assert (block.tokens, block.width, block.heads, block.mlp) == (49, 64, 4, 256)
    names = block.names()
    assert (names["q_mm.out"], names["kt_tp"], names["y"]) == ("MatMul5_o0", "Transpose25", "Add54_o0")


@pytest.mark.parametrize("model", ["lstm", "mobilenet_v1", "yolo_320"])
def test_match_block_refuses_other_models(model):
    assert match_block(_graph(model)) is None


def test_match_block_refuses_a_changed_block():
    """A block whose GELU is not the Erf form is not the block the tables were learned for."""
    import onnx

    proto = rknn_models.build("transformer", "zeros")
    nodes = list(proto.graph.node)
    erf = next(n for n in nodes if n.op_type == "Erf")
    erf.op_type = "Tanh"
    del proto.graph.node[:]
    proto.graph.node.extend(nodes)
    assert match_block(build_graph(onnx.ModelProto.FromString(proto.SerializeToString()))) is None


@pytest.mark.parametrize(
    ("toolkit", "target", "tokens", "width", "heads", "expected"),
    [
        ("2.5.0", "rk3576", 49, 64, 4, True),
        ("2.5.0", "rk3576", 32, 64, 4, False),  # below the measured scratch range
        ("2.5.0", "rk3576", 49, 32, 4, False),  # head width 8
        ("2.5.0", "rk3576", 49, 48, 2, False),  # head width 24
        ("2.5.0", "rk3588", 64, 64, 4, False),  # rk3588 lists other rows when 16 divides T
        ("2.5.0", "rk3588", 49, 48, 3, False),  # and when 32 does not divide D
        ("2.3.0", "rk3588", 64, 64, 4, True),
    ],
)
def test_in_domain(toolkit, target, tokens, width, heads, expected):
    assert in_domain(toolkit, target, tokens, width, heads) is expected


def test_not_predicted_outside_the_tables():
    graph = _graph("transformer")
    assert predict_table(graph, "rk3566", "int8", "2.5.0") is None  # exMatMul kernels: no template
    assert predict_table(graph, "rk3576", "int8", "1.6.0") is None  # no toolkit learned
    assert predict_table(_graph("tf_t16_d64_h4"), "rk3576", "int8", "2.5.0") is None  # T below 33
    assert predict_table(graph, "rk3576", "int8", None) is not None  # no version named: the newest


def test_templates_cover_what_the_corpus_has():
    """Every toolkit x wide-target x dtype combination with development builds has a template."""
    assert len(TEMPLATES) == 34
    assert all(t["builds"] >= 4 for t in TEMPLATES.values())


@pytest.mark.slow
def test_templates_are_current():
    """The generated data module is what the learner writes from the committed corpus (about a minute)."""
    import rknn_transformer_templates

    assert rknn_transformer_templates.main(["--check"]) == 0


def test_the_reference_says_whether_the_block_is_predicted():
    """`logscope reference` notes what its RKNN figure of a transformer block is, and why when it is only
    the ONNX-tensor estimate."""
    model = rknn_models.build("transformer", "zeros")

    def note(target: str) -> str:
        result = analyze_model(model, ReferenceOptions(dtype="int8", target=target, toolkit="2.5.0"))
        (text,) = [n for n in result.notes if "transformer block" in n]
        return text

    assert "feature table is predicted row by row" in note("rk3576")
    assert "not predicted: no table is learned for 2.5.0 rk3566 int8" in note("rk3566")
    assert not [n for n in analyze_model(rknn_models.build("lstm", "zeros")).notes if "transformer" in n]
    # attention in another form (the scale as a Div): said, not silently estimated
    other = rknn_models.build("transformer", "zeros")
    scale = next(n for n in other.graph.node if n.op_type == "Mul" and n.input[0].startswith("MatMul"))
    scale.op_type = "Div"
    notes = analyze_model(other, ReferenceOptions(dtype="int8", target="rk3576", toolkit="2.5.0")).notes
    assert [n for n in notes if "not in the one form whose compiler tables are learned" in n]


def test_check_reads_a_rounded_printed_total_as_reproduced(tmp_path):
    """2.5.0 prints the internal total in KiB (127.938KB = 131,009 B rounded); `check` says the table's
    span, 131,008 B, is the emulation's, rather than reporting a 1-byte difference."""
    from logscope.reference import check_log_against_model

    log_path = tmp_path / "build.log"
    with gzip.open(CORPUS / "2.5.0" / "transformer-rk3576-int8.log.gz", "rt") as fh:
        log_path.write_text(fh.read())
    model = rknn_models.build("transformer", "zeros")
    check = check_log_against_model(logscope.parse(log_path), model, target="rk3576")
    summary = check.frames["check_summary"]
    pool = summary[summary["item"] == "feature pool (RKNN emulation)"].iloc[0]
    assert (pool["log_value"], pool["reference_value"]) == (131_009, 131_008)
    assert pool["likely_cause"].startswith("reproduced by the emulation: the feature table spans 131,008 B")
