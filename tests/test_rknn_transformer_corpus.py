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

import numpy as np
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
def sweep() -> dict[tuple[str, int], tuple[int, int, int | None]]:
    """(toolkit, T) -> (logged total, replayed total, attention scratch) of the rk3588 int8 sweep."""
    out = {}
    for b in _builds(SWEEP):
        match = MODEL_RE.fullmatch(b["model"])
        assert match is not None
        logged, replayed, rows = _replayed(SWEEP, b)
        out[(b["toolkit"], int(match.group(1)))] = (logged, replayed, _sdpa_scratch(rows))
    return out


def _align(value: int, block: int) -> int:
    return -(-value // block) * block


def test_sweep_is_replayed_exactly(sweep):
    """Every odd token count 1-127 (rk3588 int8, 2.5.0 and 2.3.2): the replay's total is the log's."""
    assert sorted(sweep) == [(v, t) for v in ("2.3.2", "2.5.0") for t in range(1, 128, 2)]
    assert all(replayed == logged for logged, replayed, _ in sweep.values())


def test_sdpa_scratch_steps_with_tokens_padded_to_4(sweep):
    """The attention scratch depends on T only through align(T, 4) (T = 4k+1 and 4k+3 agree) and grows
    with it (2.5.0: from 2,240 B at T <= 4 to 143,552 B at T 125-128)."""
    for version in ("2.3.2", "2.5.0"):
        scratch = {t: sweep[(version, t)][2] for t in range(1, 128, 2)}
        assert all(scratch[t] == scratch[t + 2] for t in range(1, 128, 4))
        steps = [scratch[t] for t in range(1, 128, 4)]
        assert all(a is not None and b is not None and a < b for a, b in itertools.pairwise(steps))
    assert (sweep[("2.5.0", 1)][2], sweep[("2.5.0", 127)][2]) == (2_240, 143_552)


def test_sdpa_scratch_formula_on_rk3588_int8(sweep):
    """For T >= 33 on rk3588 int8 the scratch is 2 u w + k u a8 + 2 u a16 + 32 u + 64 w + 192 bytes
    (u, a8, a16, w = T aligned to 4, 8, 16, 32; k = 4 in 2.5.0, 6 in 2.3.2), at all 48 such sweep
    points; below T 33 it is smaller than that (another tiling), at every sweep point."""
    for (version, t), (_, _, scratch) in sweep.items():
        u, a8, a16, w = (_align(t, b) for b in (4, 8, 16, 32))
        k = 4 if version == "2.5.0" else 6
        formula = 2 * u * w + k * u * a8 + 2 * u * a16 + 32 * u + 64 * w + 192
        assert scratch is not None
        assert scratch == formula if t >= 33 else scratch < formula


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


TERMS = {
    "u*w": (4, 32),
    "u*a8": (4, 8),
    "u*a16": (4, 16),
    "a8*w": (8, 32),
    "a16*w": (16, 32),
    "u*u": (4, 4),
    "w*w": (32, 32),
    "u": (4,),
    "a8": (8,),
    "a16": (16,),
    "w": (32,),
    "1": (),
}


def _fits(points: dict[int, int]) -> list[tuple[str, ...]]:
    """The combinations of up to six TERMS (T aligned to the listed blocks, multiplied) whose
    least-squares coefficients, rounded to quarters, give every point exactly."""
    ts = sorted(points)
    cols = {n: [float(np.prod([_align(t, b) for b in blocks])) for t in ts] for n, blocks in TERMS.items()}
    y = np.array([points[t] for t in ts], float)
    out = []
    for r in range(1, 7):
        for combo in itertools.combinations(TERMS, r):
            m = np.array([cols[n] for n in combo]).T
            coef, _, rank, _ = np.linalg.lstsq(m, y, rcond=None)
            if rank == r and np.abs(m @ (np.round(coef * 4) / 4) - y).max() < 0.5:
                out.append(combo)
    return out


@pytest.mark.slow
def test_sdpa_scratch_form_is_rk3588_int8_only():
    """T 33-125 on rk3576, rv1126b, rk3562, rv1106 and rk3588 fp16 (2.5.0, 2.3.2): no combination of up
    to six TERMS reproduces the scratch; on rk3588 int8 the documented one does."""
    folder = CORPUS / "transformer-sweep-targets"
    points: dict[tuple[str, str, str], dict[int, int]] = defaultdict(dict)
    for b in _builds(folder):
        match = MODEL_RE.fullmatch(b["model"])
        assert match is not None
        scratch = _sdpa_scratch(_replayed(folder, b)[2])
        if scratch is not None:
            points[(b["toolkit"], b["target"], b["dtype"])][int(match.group(1))] = scratch
    fitted = {key for key, p in points.items() if _fits(p)}
    assert fitted == {("2.5.0", "rk3588", "int8"), ("2.3.2", "rk3588", "int8")}
    assert len(points) == 18
