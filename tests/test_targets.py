"""logscope/targets.py: every target the compiler accepts is known, with a source for every value and a
reason for every unknown one; checked against the compiler corpus's manifests."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from logscope.reference.rknn import check_target
from logscope.rules.targets import target_preset
from logscope.targets import (
    ACCEPTED_TARGETS,
    CHANNEL_BLOCK_SOURCES,
    CHANNEL_BLOCKS,
    CHIP_SOURCES,
    CHIPS,
    COMPILER_TARGETS,
)

CORPUS = Path(__file__).resolve().parent.parent / "fixtures" / "rknn-compiler"
MANIFESTS = sorted(CORPUS.rglob("manifest.json"))


def _builds() -> list[dict]:
    return [b for m in MANIFESTS for b in json.loads(m.read_text())["builds"]]


def test_every_target_of_the_corpus_manifests_is_known():
    builds = _builds()
    assert len(MANIFESTS) >= 6 and builds
    targets = {b["target"] for b in builds}
    assert targets <= set(COMPILER_TARGETS)
    for t in targets:
        assert t in CHANNEL_BLOCKS and t in CHIPS and t in CHANNEL_BLOCK_SOURCES, t
        assert check_target(t.upper()) == t
        assert target_preset(t)["int8_channel_block"] == CHANNEL_BLOCKS[t].get("int8")
    # each build's target is one its toolkit version accepts
    for b in builds:
        assert b["target"] in ACCEPTED_TARGETS[b["toolkit"]], b["id"]


def test_the_corpus_covers_what_each_version_accepts():
    """The main corpus was built for every accepted target of 2.5.0; of 2.3.2's, all but rv1126b (its
    docstring lists it and it builds, found after the corpus was made); 2.2.0/2.3.0 for five."""
    main = json.loads((CORPUS / "manifest.json").read_text())["builds"]
    by_version: dict[str, set[str]] = {}
    for b in main:
        by_version.setdefault(b["toolkit"], set()).add(b["target"])
    assert by_version["2.5.0"] == set(ACCEPTED_TARGETS["2.5.0"])
    assert by_version["2.3.2"] == set(ACCEPTED_TARGETS["2.3.2"]) - {"rv1126b"}
    assert (
        by_version["2.2.0"] <= set(ACCEPTED_TARGETS["2.2.0"]) and "rv1126b" not in ACCEPTED_TARGETS["2.3.0"]
    )


def test_every_compiler_target_has_blocks_cores_and_sram_entries():
    for t in COMPILER_TARGETS:
        assert CHANNEL_BLOCKS[t], t  # at least the dtype the compiler builds
        assert set(CHIPS[t]) == {"npu_cores", "sram_bytes"}, t


@pytest.mark.parametrize("chip", sorted(CHIPS))
def test_every_value_has_a_source_and_every_unknown_a_reason(chip):
    sources = CHIP_SOURCES[chip]
    assert set(sources) == set(CHIPS[chip]), chip
    for key, value in CHIPS[chip].items():
        text = sources[key]
        assert len(text) > 20, (chip, key)
        if value is None:
            assert text.startswith(("no ", "more than one")), (chip, key)
        else:
            assert not text.startswith("no "), (chip, key)


def test_what_the_sources_fix():
    assert CHIPS["rk3588"]["npu_cores"] == 3
    assert CHIPS["rk3576"]["npu_cores"] is None  # multi-core, number not in any source here
    assert all(CHIPS[t]["npu_cores"] == 1 for t in COMPILER_TARGETS if t not in ("rk3588", "rk3576"))
    assert [t for t in COMPILER_TARGETS if CHIPS[t]["sram_bytes"] is not None] == ["rk3588"]
    assert CHANNEL_BLOCKS["rk2118"] == {"fp16": 4}  # int8 aborts in the compiler: unknown, absent
