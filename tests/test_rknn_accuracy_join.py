"""The accuracy_analysis table joined per layer with the layer table (`accuracy_layers`,
logscope/parsers/rknn/accuracy_join.py): measured on every corpus build that ran accuracy_analysis, and
built from the two tables' formats (fused chains, names neither table shares, missing tables)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

import logscope
from logscope.parsers.rknn.accuracy_join import MATCH_LEVELS, match_level

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "fixtures" / "rknn-compiler"
BUILDS = [b for b in json.loads((CORPUS / "manifest.json").read_text())["builds"] if b["accuracy_analysis"]]


@pytest.fixture(scope="module")
def joined():
    return {b["id"]: logscope.parse(CORPUS / b["log"]).frames for b in BUILDS}


def test_every_accuracy_row_and_layer_is_in_the_join_once(joined):
    assert len(BUILDS) == 16
    for bid, frames in joined.items():
        acc, layers, j = frames["accuracy"], frames["layers"], frames["accuracy_layers"]
        rows = j[j["match"] != "missing"]
        assert rows["line"].tolist() == acc["line"].tolist(), bid
        assert rows["layer_name"].tolist() == acc["layer_name"].tolist(), bid
        assert rows["entire_cos"].equals(acc["entire_cos"]), bid
        joined_lines = set(rows["layer_line"].dropna()) | set(j.loc[j["match"] == "missing", "layer_line"])
        assert joined_lines == set(layers["line"]), bid  # every layer joined or listed as missing
        # a chain (the rows up to the one with its values) joins one layer, and one of its rows names
        # that layer at the level the join says
        for _, chain in rows[rows["match"] != "unmatched"].groupby("value_line"):
            assert chain["layer_line"].nunique() == 1 and chain["match"].nunique() == 1, bid
            name = str(chain["layer_full_name"].iloc[0]).split(":", 1)[1]
            levels = [match_level(r.layer_name, name, r.op_type, r.layer_op_type) for r in chain.itertuples()]
            assert MATCH_LEVELS.index(chain["match"].iloc[0]) == min(v for v in levels if v is not None), bid


def test_how_many_rows_join_on_the_corpus(joined):
    """The figures docs/formats.md states: 340 of 389 accuracy rows join a layer; 27 layers have no row."""
    counts: Counter[str] = Counter()
    by_family: dict[str, Counter[str]] = {}
    for b in BUILDS:
        c = Counter(joined[b["id"]]["accuracy_layers"]["match"].tolist())
        counts.update(c)
        by_family.setdefault("transformer" if b["model"] == "transformer" else "cnn", Counter()).update(c)
    rows = sum(v for k, v in counts.items() if k != "missing")
    assert rows == 389 and rows - counts["unmatched"] == 340 and counts["missing"] == 27
    assert dict(counts) == {
        "tensor": 227,
        "op": 44,
        "name": 32,
        "graph": 32,
        "prefix": 5,
        "unmatched": 49,
        "missing": 27,
    }
    cnn = by_family["cnn"]
    assert sum(cnn.values()) - cnn["missing"] == 297 and cnn["unmatched"] == 18 and cnn["missing"] == 4
    # every CNN row left unmatched is a dtype convert or a chain the layer table fused into another op
    for b in BUILDS:
        if b["model"] == "transformer":
            continue
        j = joined[b["id"]]["accuracy_layers"]
        left = set(j.loc[j["match"] == "unmatched", "layer_name"])
        assert left <= {"input_int8", "Conv32_o0", "Relu33_o0", "Sigmoid53_o0_int8"}, b["id"]


def test_a_fused_chain_joins_through_its_row_with_values(joined):
    j = joined["2.5.0/chain_75-rk3588-int8"]["accuracy_layers"]
    conv, relu = (j[j["layer_name"] == n].iloc[0] for n in ("Conv3_o0", "Relu4_o0"))
    assert conv["layer_full_name"] == relu["layer_full_name"] == "Conv:Conv3"
    assert conv["value_line"] == relu["value_line"] == relu["line"] == conv["line"] + 1
    assert str(conv["entire_cos"]) == "<NA>" and relu["entire_cos"] == pytest.approx(0.99998)
    pools = j[j["layer_name"].isin(["GlobalAveragePool18_2conv0", "GlobalAveragePool18_o0"])]
    assert pools["layer_full_name"].tolist() == [
        "Conv:GlobalAveragePool18_2conv0",
        "Conv:GlobalAveragePool18_2conv1",
    ]
    head = j[j["layer_name"].str.startswith("Gemm22", na=False)]
    assert head["layer_full_name"].tolist() == [
        "Conv:Gemm22#2",
        "Reshape:Gemm22_o0_mm_tp_rs",
        "OutputOperator:Gemm22_o0",
    ]


_PREFIX = "D RKNN: [14:26:07.347] "
_RULE = _PREFIX + "-" * 100


def _layer_row(i: int, op: str, inputs: str, output: str, name: str) -> str:
    return f"{_PREFIX}{i:<4} {op:<18} INT8     NPU    {inputs:<40} {output:<22} 0/0/0  0  {name}"


_LAYERS = "\n".join(
    [
        _PREFIX + "Network Layer Information Table",
        _RULE,
        f"{_PREFIX}ID   OpType             DataType Target InputShape{' ' * 31}OutputShape"
        "            Cycles(DDR/NPU/Total)    RW(KB)       FullName",
        _RULE,
        _layer_row(0, "InputOperator", "\\", "(1,3,75,75)", "InputOperator:input"),
        _layer_row(1, "ConvRelu", "(1,3,75,75),(16,3,3,3),(16)", "(1,16,75,75)", "Conv:Conv3"),
        _layer_row(2, "MaxPool", "(1,16,75,75)", "(1,16,37,37)", "MaxPool:MaxPool5"),
        _layer_row(3, "OutputOperator", "(1,16,37,37)", "\\", "OutputOperator:MaxPool5_o0"),
        _RULE,
        "",
    ]
)
_ACCURACY = """\
layer_name                                     simulator_error
                                           entire              single
                                        cos      euc        cos      euc
------------------------------------------------------------------------------
[Input] input                         1.00000 | 0.00000   1.00000 | 0.00000
[exDataConvert] input_int8            1.00000 | 0.14673   1.00000 | 0.14673
[Conv] Conv3_o0
[Relu] Relu4_o0                       0.99998 | 0.69109   0.99998 | 0.69109
[MaxPool] MaxPool5_o0                 0.99995 | 0.15511   0.99999 | 0.05244
"""


def _join(tmp_path: Path, text: str):
    path = tmp_path / "excerpt.log"
    path.write_text(text)
    log = logscope.parse(path)
    assert log.unparsed_lines == 0
    return log.frames["accuracy_layers"]


def test_an_excerpt_joins_chain_names_and_lists_the_layer_without_a_row(tmp_path):
    j = _join(tmp_path, _LAYERS + _ACCURACY)
    assert j["match"].tolist() == ["graph", "unmatched", "tensor", "tensor", "tensor", "missing"]
    assert j["layer_full_name"].tolist()[2:] == [
        "Conv:Conv3",
        "Conv:Conv3",
        "MaxPool:MaxPool5",
        "OutputOperator:MaxPool5_o0",
    ]
    missing = j.iloc[-1]
    assert missing["line"] == missing["layer_line"] == 8 and str(missing["layer_name"]) == "<NA>"
    assert j.iloc[3]["layer_line"] == 6 and j.iloc[3]["line"] == 17


def test_without_a_layer_table_every_row_is_unmatched(tmp_path):
    j = _join(tmp_path, _ACCURACY)
    assert j["match"].tolist() == ["unmatched"] * 5
    assert j["layer_line"].isna().all() and j["line"].tolist() == [5, 6, 7, 8, 9]


def test_without_an_accuracy_table_the_join_is_empty(tmp_path):
    j = _join(tmp_path, _LAYERS)
    assert j.empty and list(j.columns)[-1] == "line"


def test_names_neither_table_shares_and_a_cut_chain(tmp_path):
    """A row renamed past recognition stays unmatched; a value-less row at the end of the table (the
    chain cut off) is a group of its own and still joins by name."""
    text = (
        _LAYERS
        + _ACCURACY.replace("[MaxPool] MaxPool5_o0 ", "[MaxPool] Pool_x9_tail").rstrip("\n")
        + "\n[Conv] Conv3_o0\n"
    )
    j = _join(tmp_path, text)
    assert j["match"].tolist() == [
        "graph",
        "unmatched",
        "tensor",
        "tensor",
        "unmatched",
        "tensor",
        "missing",
        "missing",
    ]
    last = j.iloc[5]
    assert last["layer_name"] == "Conv3_o0" and last["value_line"] == last["line"] == 19
    assert set(j.loc[j["match"] == "missing", "layer_full_name"]) == {
        "MaxPool:MaxPool5",
        "OutputOperator:MaxPool5_o0",
    }


def test_the_layer_table_before_the_accuracy_table_is_the_one_joined(tmp_path):
    second = _LAYERS.replace("MaxPool:MaxPool5", "MaxPool:MaxPool6").replace("MaxPool5_o0", "MaxPool6_o0")
    j = _join(tmp_path, _LAYERS + second + _ACCURACY.replace("MaxPool5_o0", "MaxPool6_o0"))
    row = j[j["layer_name"] == "MaxPool6_o0"].iloc[0]
    assert row["layer_full_name"] == "MaxPool:MaxPool6" and row["layer_line"] > 9


@pytest.mark.parametrize(
    ("tensor", "layer", "op_type", "layer_op_type", "level"),
    [
        ("input_rs#1", "input_rs#1", "Reshape", "Reshape", "name"),
        ("Conv3_o0", "Conv3", "Conv", "ConvRelu", "tensor"),
        ("MatMul35#2", "MatMul35#2_ConvAdd", "Conv", "ConvAdd", "prefix"),
        ("Gemm22_o0_mm", "Gemm22_o0_mm_tp_rs", "Conv", "Reshape", None),  # a rewrite suffix, another op
        ("MatMul30_o0_sdpa", "MatMul30_2sdpa", "exSDPAttention", "exSDPAttention", "op"),
        ("Sigmoid53_o0_int8", "Sigmoid53_o0", "Sigmoid", "OutputOperator", None),  # graph output: name only
        ("Conv12_o0", "Conv1", "Conv", "ConvRelu", None),  # Conv12 is not Conv1
        ("", "Conv3", "Conv", "Conv", None),
    ],
)
def test_match_levels(tensor, layer, op_type, layer_op_type, level):
    got = match_level(tensor, layer, op_type, layer_op_type)
    assert (MATCH_LEVELS[got] if got is not None else None) == level
