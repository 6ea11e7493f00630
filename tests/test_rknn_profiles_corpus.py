"""Rules of logscope/reference/rknn_profiles.py read off a few builds, checked on every corpus build
with the pattern (and against the builds without it), and the rk2118 MaxPool sweep
(fixtures/rknn-compiler/maxpool-dev/) whose findings docs/reference.md states."""

from __future__ import annotations

import gzip
import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest

import logscope
from logscope.reference import ReferenceOptions, analyze_model
from logscope.reference.rknn import RknnOptions, emulate_rknn

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "fixtures" / "rknn-compiler"
MAXPOOL = CORPUS / "maxpool-dev"
sys.path.insert(0, str(ROOT / "tools" / "corpus"))

import rknn_models  # noqa: E402


def _builds(folder: Path) -> list[dict[str, Any]]:
    return [b for b in json.loads((folder / "manifest.json").read_text())["builds"] if b["built"]]


def _text(folder: Path, b: dict[str, Any]) -> str:
    with gzip.open(folder / b["log"], "rt", errors="replace") as fh:
        return fh.read()


def _feature_rows(folder: Path, b: dict[str, Any]) -> Any:
    t = logscope.parse(folder / b["log"]).frames["tensors"]
    return t[t["table"] == "feature"]


@pytest.fixture(scope="module")
def graphs(tmp_path_factory) -> dict[str, Any]:
    folder = tmp_path_factory.mktemp("profiles")
    out = {}
    for name in ("multi_io", "unet_128", "yolo_320", "yolo_640", "fpn_lite"):
        path = folder / f"{name}.onnx"
        path.write_bytes(rknn_models.build(name, "zeros").SerializeToString())
        out[name] = analyze_model(path, ReferenceOptions(dtype="fp16"))
    return out


def _plan(ref: Any, b: dict[str, Any]) -> Any:
    options = RknnOptions(target=b["target"], dtype=b["dtype"], toolkit=b["toolkit"])
    return emulate_rknn(ref.graph, ref.fusions, options)


def test_concat_bypass_is_where_the_log_prints_it(graphs):
    """`Concat bypass node` appears in exactly the builds the profile writes the Concat in place for;
    every multi_io build (the only model with a Concat of conv outputs read by it alone) agrees."""
    printed = {b["id"] for b in _builds(CORPUS) if "Concat bypass node" in _text(CORPUS, b)}
    assert printed == {"2.5.0/multi_io-rk3576-fp16", "2.5.0/multi_io-rv1126b-fp16"}
    multi_io = [b for b in _builds(CORPUS) if b["model"] == "multi_io"]
    assert len(multi_io) == 50
    for b in multi_io:
        plan = _plan(graphs["multi_io"], b)
        bypassed = {t.name for t in plan.tensors if t.quirk == "concat-bypass"}
        assert bool(bypassed) == (b["id"] in printed), b["id"]
        rows = _feature_rows(CORPUS, b)
        assert plan.total == int(rows["end_offset"].max() - rows["start_offset"].min()), b["id"]
        if bypassed:  # the first input listed with the Concat's offset and size, the second inside it
            concat = rows[rows["name"] == "Concat9_o0"].iloc[0]
            first = rows[rows["name"] == "Relu4_o0"].iloc[0]
            assert (first.start_offset, first.size_bytes) == (concat.start_offset, concat.size_bytes)
            sizes = {t.name: t.native_bytes for t in plan.tensors}
            assert sizes["Relu8_o0"] == 0 and sizes["Concat9_o0"] == int(concat.size_bytes)


def test_rk2118_runs_the_concat_conv_split_as_conv_then_add(graphs):
    """2.5.0 on rk2118: `Conv:<x>_conv` right after x's writer and an Add of the two convs, in every log
    with the pattern; the emulation's step order names the same ops."""
    builds = [
        b
        for b in _builds(CORPUS)
        if b["target"] == "rk2118"
        and b["toolkit"] == "2.5.0"
        and b["model"] in graphs
        and b["model"] != "multi_io"
    ]
    assert {b["model"] for b in builds} == {"unet_128", "yolo_320", "yolo_640", "fpn_lite"}
    for b in builds:
        layers = logscope.parse(CORPUS / b["log"]).frames["layers"]
        names = [str(n).split(":", 1)[-1].strip() for n in layers["full_name"]]
        plan = _plan(graphs[b["model"]], b)
        x_convs = [
            s
            for s in plan.steps
            if s.op_type == "Conv" and s.name.endswith("_conv") and "Resize" not in s.name
        ]
        adds = [
            s
            for s in plan.steps
            if s.op_type in ("Add", "AddRelu") and any(i.endswith("_conv") for i in s.inputs)
        ]
        assert len(x_convs) == 1 and len(adds) == 1, b["id"]
        x = x_convs[0]
        assert x.name in names, b["id"]
        writer = plan.steps[x.index - 1]
        assert x.inputs[0] in writer.outputs, b["id"]  # run right after x is written
        # in the log too: the layer before `<x>_conv` outputs x's shape, and `<x>_conv` reads it
        shape = "(" + ",".join(map(str, graphs[b["model"]].graph.tensors[x.inputs[0]].shape)) + ")"
        i = names.index(x.name)
        assert layers["output_shape"].iloc[i - 1] == shape, b["id"]
        assert str(layers["input_shapes"].iloc[i]).startswith(shape), b["id"]
    exact = [
        b["id"]
        for b in builds
        if _plan(graphs[b["model"]], b).total
        == int((rows := _feature_rows(CORPUS, b))["end_offset"].max() - rows["start_offset"].min())
    ]
    # yolo_320's peak is set by its SPPF MaxPools (not modelled, test below); the other three are exact
    assert sorted(exact) == [
        "2.5.0/fpn_lite-rk2118-fp16",
        "2.5.0/unet_128-rk2118-fp16",
        "2.5.0/yolo_640-rk2118-fp16",
    ]


_POOL_ROW = re.compile(
    r"\s(?P<name>\S+)\s+FLOAT16\s+NC1HWC2\s+\(1,(?P<c>\d+),(?P<h>\d+),(?P<w>\d+)\)\s+\S+\s*\|"
    r"\s*\S+?\*?\s*\S*\s+0x(?P<size>[0-9a-f]+)\s*$"
)


def _pool_tensors(text: str) -> dict[str, tuple[int, int, int, int]]:
    """{name: (channels, H, W, size)} of the MaxPool inputs and outputs in the last feature table."""
    table = text[text.rfind("Feature Tensor Information Table") :]
    out = {}
    for line in table.splitlines():
        m = _POOL_ROW.search(line)
        if m and re.fullmatch(r"Relu4_o0|MaxPool\d+_o0", m["name"]):
            out[m["name"]] = (int(m["c"]), int(m["h"]), int(m["w"]), int(m["size"], 16))
    return out


def test_the_maxpool_sweep_shows_what_the_docs_say():
    """rk2118 stores a MaxPool's tensors at 10 x their channels (times the 4-aligned plane, 2 B), plus
    whole rows of W only for a tensor larger than 64 KiB (but not every such tensor): the same in 2.3.2
    and 2.5.0, and never on an output read by no MaxPool."""
    builds = _builds(MAXPOOL)
    assert len(builds) == 106 and {b["target"] for b in builds} == {"rk2118"}
    large_without = set()
    by_model: dict[str, dict[str, Any]] = {}
    for b in builds:
        tensors = _pool_tensors(_text(MAXPOOL, b))
        assert tensors, b["id"]
        by_model.setdefault(b["model"], {})[b["toolkit"]] = tensors
        for name, (c, h, w, size) in tensors.items():
            plane = -(-h * w // 4) * 4
            extra = size - 10 * c * plane * 2
            assert extra >= 0 and extra % (2 * c * w) == 0, (b["id"], name)
            if name == "MaxPool6_o0":  # the last pool's output, read by no MaxPool
                assert extra == 0, b["id"]
            if extra:
                assert c * h * w * 2 > 65_536, (b["id"], name)
            elif c * h * w * 2 > 65_536 and name == "Relu4_o0":
                large_without.add(b["model"])
    assert all(v["2.3.2"] == v["2.5.0"] for v in by_model.values())
    assert large_without == {
        f"mp_k5_c{c}_s{s}"
        for c, s in [(128, 36), (128, "36x24"), (128, "36x40"), (128, 40), (256, 40), (64, 40)]
    }
    extra_rows = {
        h: (size - 10 * c * -(-h * w // 4) * 4 * 2) // (2 * c * w)
        for m, v in by_model.items()
        if m.startswith("mp_k5_c128_") and "x" not in m
        for (c, h, w, size) in [v["2.5.0"]["Relu4_o0"]]
    }
    # extra rows per channel against H (C 128, kernel 5): not a formula logscope knows
    assert extra_rows == {
        8: 0,
        10: 0,
        12: 0,
        13: 0,
        16: 0,
        18: 20,
        20: 30,
        22: 20,
        24: 30,
        26: 20,
        28: 20,
        30: 20,
        32: 30,
        36: 0,
        40: 0,
    }


def test_the_maxpool_sweep_parses_with_nothing_unparsed_but_the_script_lines():
    for b in _builds(MAXPOOL):
        log = logscope.parse(MAXPOOL / b["log"])
        script_lines = sum(line.startswith("[corpus]") for line in _text(MAXPOOL, b).splitlines())
        assert log.unparsed_lines == script_lines, b["id"]
        assert len(log.frames["layers"]) == b["counts"]["layers"], b["id"]
