"""Transformer blocks in the compiler corpus: the feature-table replay measured on builds made after its
rules were fixed (fixtures/rknn-compiler/transformer-dev/, transformer-sweep/), and the facts about the
exSDPAttention scratch buffer that docs/reference.md states (why the block's total is not predicted)."""

from __future__ import annotations

import itertools
import json
import re
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

import logscope
from logscope.reference import replay_log

CORPUS = Path(__file__).resolve().parent.parent / "fixtures" / "rknn-compiler"
DEV = CORPUS / "transformer-dev"
SWEEP = CORPUS / "transformer-sweep"
MODEL_RE = re.compile(r"tf_t(\d+)_d(\d+)_h(\d+)")


def _builds(folder: Path) -> list[dict[str, Any]]:
    return [b for b in json.loads((folder / "manifest.json").read_text())["builds"] if b["built"]]


def _replayed(folder: Path, build: dict[str, Any]) -> tuple[int, int, Any]:
    """(logged total, replayed total, feature rows) of one build."""
    log = logscope.parse(folder / build["log"])
    tensors = log.frames["tensors"]
    rows = tensors[tensors["table"] == "feature"].reset_index(drop=True)
    logged = int(rows["end_offset"].max() - rows["start_offset"].min())
    return logged, replay_log(rows, logged, layers=log.frames["layers"]).total, rows


def _sdpa_scratch(rows: Any) -> int | None:
    """The exSDPAttention op's `_exSecondary` buffer, if the build has that op."""
    hit = rows[(rows["user_op"] == "exSDPAttention") & rows["name"].str.endswith("_exSecondary")]
    return int(hit["size_bytes"].iloc[0]) if len(hit) else None


@pytest.fixture(scope="module")
def sweep() -> dict[int, tuple[int, int, int | None]]:
    out = {}
    for b in _builds(SWEEP):
        match = MODEL_RE.fullmatch(b["model"])
        assert match is not None
        logged, replayed, rows = _replayed(SWEEP, b)
        out[int(match.group(1))] = (logged, replayed, _sdpa_scratch(rows))
    return out


def test_sweep_is_replayed_exactly(sweep):
    """Every odd token count 1-127 (rk3588 int8, 2.5.0): the replay's total is the log's."""
    assert sorted(sweep) == list(range(1, 128, 2))
    assert all(replayed == logged for logged, replayed, _ in sweep.values())


def test_sdpa_scratch_steps_with_tokens_padded_to_4(sweep):
    """The attention scratch depends on T only through align(T, 4) (T = 4k+1 and 4k+3 agree) and grows
    with it, from 2,240 B (T <= 4) to 143,552 B (T 125-128); its jumps where align(T, 32) steps (T 31 ->
    33: 10,432 -> 19,264 B) are what no low-order formula in the aligned token counts reproduces."""
    scratch = {t: v[2] for t, v in sweep.items()}
    assert all(scratch[t] == scratch[t + 2] for t in range(1, 128, 4))
    steps = [scratch[t] for t in range(1, 128, 4)]
    assert all(a is not None and b is not None and a < b for a, b in itertools.pairwise(steps))
    assert (scratch[1], scratch[31], scratch[33], scratch[127]) == (2_240, 10_432, 19_264, 143_552)


def test_sdpa_scratch_ignores_width_and_heads():
    """At T 49, the five widths/head counts (D 32, 64, 128; 2, 4, 8 heads) of every 2.5.0 rk3588, rk3576
    and rv1106 build share one scratch size per target and dtype; it differs between targets."""
    sizes: dict[tuple[str, str], set[int | None]] = defaultdict(set)
    for b in _builds(DEV):
        match = MODEL_RE.fullmatch(b["model"])
        assert match is not None
        if (
            b["toolkit"] != "2.5.0"
            or b["target"] not in ("rk3588", "rk3576", "rv1106")
            or match.group(1) != "49"
        ):
            continue
        sizes[(b["target"], b["dtype"])].add(_sdpa_scratch(_replayed(DEV, b)[2]))
    assert sizes == {
        ("rk3588", "int8"): {30_912},
        ("rk3588", "fp16"): {41_664},
        ("rk3576", "int8"): {107_904},
        ("rk3576", "fp16"): {123_264},
        ("rv1106", "int8"): {26_368},
    }


@pytest.mark.slow
def test_dev_builds_replayed():
    """The replay on all 256 finished transformer-dev builds (2.5.0 and 2.3.2): 201 totals exact."""
    exact = sum(logged == replayed for logged, replayed, _ in (_replayed(DEV, b) for b in _builds(DEV)))
    assert exact == 201
