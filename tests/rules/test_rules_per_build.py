"""Rules that compute every build's figures at once report what a loop over builds reported: MEM005 on a
log of many builds exactly what it reports on each build alone (the whole-log arrays must not mix
builds), VER001 each build-side version from its first build, in the order a loop over builds then
roles found them."""

from __future__ import annotations

import random

import numpy as np
import pandas as pd
import pytest

from benchmarks.generate import generate_log
from logscope import parse
from logscope.frames import empty_frame
from logscope.model import ParsedLog
from logscope.rules import Config, run_rules
from logscope.rules._common import as_int, as_str, forget_frames
from logscope.rules.mem005_channel_padding_waste import _sums
from logscope.rules.ver001_version_mismatch import BUILD_COLUMNS, LINE_COLUMNS, versions_of


def _findings(log, codes):
    return [f.to_dict() for f in run_rules(log, Config(select=tuple(codes)))]


@pytest.mark.parametrize("seed", [3, 11])
def test_mem005_on_many_builds_is_each_build_alone(tmp_path, seed):
    path = tmp_path / "many.log"
    generate_log(path, builds=6, seed=seed, noise_ratio=0.2)
    whole = _findings(parse(path), ["MEM005"])
    assert whole, "the generated log has channel padding to report"
    text = path.read_text().splitlines(keepends=True)
    log = parse(path)
    starts = [int(v) for v in log.frames["builds"]["start_line"].tolist()]
    per_build = []
    for index, start in enumerate(starts):
        end = starts[index + 1] - 1 if index + 1 < len(starts) else len(text)
        # The build's lines in place (the others blanked): the same line numbers, one build.
        alone = tmp_path / f"build{index}.log"
        alone.write_text("".join(line if start <= n <= end else "\n" for n, line in enumerate(text, 1)))
        for finding in _findings(parse(alone), ["MEM005"]):
            finding["build_index"] = index
            finding["source"] = str(path)
            per_build.append(finding)
    assert whole == per_build


def test_sums_are_exact_past_int64():
    values = np.array([2**62, 2**62, 5, 2**62 - 1, 1], dtype=np.int64)
    heads = np.array([0, 3], dtype=np.int64)
    assert _sums(values, heads) == [2**63 + 5, 2**62]
    small = np.array([1, 2, 3, 4], dtype=np.int64)
    assert _sums(small, np.array([0, 1, 3])) == [1, 5, 4]
    assert _sums(small, np.array([], dtype=np.int64)) == []


def _versions_by_loop(builds: pd.DataFrame) -> tuple[list[tuple[str, tuple[str, int | None]]], set[str]]:
    """What `versions_of` reads from the builds frame, as a loop over builds, then roles."""
    found: dict[str, tuple[str, int | None]] = {}
    blocks: set[str] = set()
    for row in builds.to_dict("records"):
        version = as_str(row.get("toolkit_version"))
        if version and "script_toolkit" not in found:
            found["script_toolkit"] = (version, as_int(row.get("start_line")))
        for role, column in BUILD_COLUMNS.items():
            value = as_str(row.get(column)) if column in builds.columns else None
            if value and role not in found:
                found[role] = (value, as_int(row.get(LINE_COLUMNS[role])))
                blocks.add(role)
    return list(found.items()), blocks


@pytest.mark.parametrize("seed", range(8))
def test_ver001_build_versions_in_loop_order(seed):
    rng = random.Random(seed)
    count = rng.randint(1, 7)
    columns = ["toolkit_version", *BUILD_COLUMNS.values()]
    data: dict[str, list] = {
        c: [rng.choice([None, None, "", f"{rng.randint(1, 2)}.{i}.0"]) for i in range(count)] for c in columns
    }
    lines = {
        c: [rng.choice([None, rng.randint(1, 99)]) for _ in range(count)]
        for c in {*LINE_COLUMNS.values(), "start_line"}
    }
    builds = empty_frame("builds")
    frame = pd.DataFrame({**data, **lines, "build_index": list(range(count))})
    builds = pd.concat([builds, frame], ignore_index=True).astype(builds.dtypes.to_dict())
    if seed % 3 == 0:  # a frame without some board-side columns
        builds = builds.drop(columns=["driver_version", "api_version"])
    log = ParsedLog(
        source="x.log",
        kind="rknn-build",
        frames={"builds": builds, "messages": empty_frame("messages")},
        line_counts={},
    )
    forget_frames()
    blocks: set[str] = set()
    found = versions_of(log, blocks)
    forget_frames()
    assert (list(found.items()), blocks) == _versions_by_loop(builds)
