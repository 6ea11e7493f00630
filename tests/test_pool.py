"""The feature-map pool (`logscope.analysis.pool`): the figures the rules, plots and report share.

Anchors: [09] pool 1,756,160 B = `Total Internal Memory Size` (line 279), lower bound 1,204,224 B at
step 3; [29] lower bound 1,605,632 B (reference-anchors A9), pool 2,157,568 B (line 41) with the graph
input and output outside it. Invariant on every fixture and on generated logs: lower bound <=
occupancy <= high-water <= span at every step.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd
import pytest

import logscope
from logscope.analysis.pool import (
    FeaturePool,
    factorised_codes,
    feature_builds,
    feature_pool,
    feature_pools,
)
from logscope.frames import build_frame
from tests.conftest import FIXTURES, MOBILENET, RKNN, ROOT

SRAM_LOG = RKNN / "29-doc-rknpu2-sram-runtime-log-level3-rk3588.log"
CONV_LOG = RKNN / "01-runtime-verbose-conv2d-rk3588-232.log"


def pool_of(path: Path, build: int | None = 0) -> FeaturePool:
    pool = feature_pool(logscope.parse(path).frames, build)
    assert pool is not None
    return pool


def frames_of(rows: list[tuple], internal: int | None = None) -> dict[str, pd.DataFrame]:
    """A feature table from (op_id, name, start, end, line) rows, build 0."""
    records = [
        {
            "build_index": 0,
            "table": "feature",
            "op_id": op,
            "user_op": "Conv",
            "name": name,
            "dtype": "INT8",
            "start_offset": start,
            "end_offset": end,
            "size_bytes": end - start,
            "line": line,
        }
        for op, name, start, end, line in rows
    ]
    frames = {"tensors": build_frame("tensors", records)}
    if internal is not None:
        frames["memory"] = build_frame(
            "memory",
            [{"build_index": 0, "source": "build-log", "internal_bytes": internal, "internal_line": 99}],
        )
    return frames


def assert_invariants(pool: FeaturePool, where: str) -> None:
    steps = pool.steps
    assert pool.lower_bound_bytes is None or pool.lower_bound_bytes <= pool.span_bytes, where
    if steps.empty:
        return
    assert pool.occupied_peak_bytes is not None and pool.occupied_peak_bytes <= pool.span_bytes, where
    lower, occupied = steps["lower_bound_bytes"], steps["occupied_bytes"]
    high = steps["high_water_bytes"]
    assert (lower <= occupied).all(), where
    assert (occupied <= high).all(), where
    assert (high <= pool.span_bytes).all(), where
    assert int(lower.max()) == pool.lower_bound_bytes, where
    assert int(occupied.max()) == pool.occupied_peak_bytes, where


# ------------------------------------------------------------------------------------------- anchors


def test_09_pool_matches_the_printed_total_and_the_bound_is_ops_3_and_4():
    pool = pool_of(MOBILENET)
    assert (pool.span_bytes, pool.internal_bytes, pool.internal_line) == (1756160, 1756160, 279)
    assert pool.matches_total is True
    assert pool.start_offset == 0x454680 and pool.span_bytes == 0x601280 - 0x454680
    assert (len(pool.rows), len(pool.outside)) == (36, 0)
    assert (pool.first_line, pool.last_line) == pool.table_lines == (177, 212)
    assert pool.sum_bytes == 5377762
    # Op 3 reads Relu6__7:0 (line 179) and writes Relu6__9:0 (line 180), which op 4 reads.
    assert (pool.lower_bound_bytes, pool.lower_bound_step) == (1204224, 3)
    assert pool.lower_bound_tensors == ("Relu6__7:0", "Relu6__9:0")
    assert pool.lower_bound_lines == (179, 180)
    assert pool.lower_bound_ops == (3, 4)
    assert (pool.occupied_peak_bytes, pool.occupied_peak_step) == (1204224, 3)
    assert int(pool.steps["high_water_bytes"].max()) == 1756160


def test_29_runtime_pool_leaves_input_and_output_outside():
    pool = pool_of(SRAM_LOG)
    assert (pool.span_bytes, pool.internal_bytes, pool.internal_line) == (2157568, 2157568, 41)
    assert pool.matches_total is True
    assert list(pool.outside["name"]) == ["input0", "output57"]
    assert list(pool.outside["line"]) == [7, 37]
    assert len(pool.outside_tensors) == 2 and len(pool.rows) == 29
    assert pool.table_lines == (7, 37) and (pool.first_line, pool.last_line) == (8, 36)
    # reference-anchors A9: output4 + output6 while op 3 runs.
    assert (pool.lower_bound_bytes, pool.lower_bound_step) == (1605632, 3)
    assert pool.lower_bound_tensors == ("output4", "output6")
    assert pool.lower_bound_lines == (9, 10)


def test_01_single_conv():
    pool = pool_of(CONV_LOG)
    assert (pool.span_bytes, pool.internal_bytes, pool.internal_line) == (896, 896, 24)
    assert (pool.lower_bound_bytes, pool.lower_bound_step) == (880, 1)


def test_rules_report_the_pool_figures():
    log = logscope.analyze(MOBILENET)
    pool = feature_pool(log.frames, 0)
    assert pool is not None
    (finding,) = [f for f in log.findings if f.code == "MEM001"]
    evidence = finding.evidence
    assert evidence["pool_span_bytes"] == pool.span_bytes
    assert evidence["tensor_sum_bytes"] == pool.sum_bytes
    assert evidence["lower_bound_bytes"] == pool.lower_bound_bytes == 1204224
    assert evidence["lower_bound_step"] == 3
    assert evidence["lower_bound_ops"] == [3, 4]
    assert evidence["lower_bound_lines"] == [179, 180]


# ------------------------------------------------------------------------------------- invariants


def fixture_logs() -> list[Path]:
    return sorted(
        p
        for folder in ("rknn", "synthetic")
        for p in (FIXTURES / folder).iterdir()
        if p.suffix in (".log", ".txt")
    )


def test_bound_and_occupancy_never_exceed_the_span_on_any_fixture():
    seen = 0
    for path in fixture_logs():
        log = logscope.parse(path)
        for build, pool in feature_pools(log.frames).items():
            seen += 1
            assert_invariants(pool, f"{path.name} build {build}")
            # Real allocators never place two live tensors in overlapping bytes here: the liveness read
            # from the consumer IDs agrees with every real plan, so bound and occupancy coincide.
            steps = pool.steps
            assert (steps["lower_bound_bytes"] == steps["occupied_bytes"]).all(), path.name
    assert seen == 3  # [01], [09], [29]


@pytest.fixture(scope="module")
def generated(tmp_path_factory) -> logscope.ParsedLog:
    sys.path.insert(0, str(ROOT))
    from benchmarks.generate import generate_log

    path = tmp_path_factory.mktemp("pool") / "seed3.log"
    generate_log(path, builds=3, seed=3, noise_ratio=0.0)
    return logscope.parse(path)


def old_rules_bound(rows: pd.DataFrame) -> int:
    """The rules' bound before logscope.analysis.pool: sum(Size) of tensors consumed by op j or j+1."""
    by_op: dict[int, dict[str, int]] = {}
    for op, name, size in zip(rows["op_id"], rows["name"], rows["size_bytes"], strict=True):
        by_op.setdefault(int(op), {})[str(name)] = int(size)
    return max(sum((by_op[j] | by_op.get(j + 1, {})).values()) for j in by_op)


def test_generated_log_bound_and_occupancy_stay_under_the_span(generated):
    pools = feature_pools(generated.frames)
    assert sorted(pools) == [0, 1, 2]
    for build, pool in pools.items():
        assert pool.matches_total is True  # the generator prints the table's span as the total
        assert_invariants(pool, f"generated build {build}")
    # Its tables list a tensor once per consumer, each time at a new address, and overlap tensors
    # live together: the old sum claimed more than the pool the log fits them in.
    assert old_rules_bound(pools[0].rows) == 14745600 > pools[0].span_bytes == 12288000
    assert pools[0].lower_bound_bytes == 12288000
    # The plot engineer's case, build 2: the sum of the tensors live at step 7 is 4.59 MiB in 3.06 MiB.
    two = pools[2]
    live = two.live_tensors(7)
    assert int(live["size_bytes"].sum()) == 4816896 > two.span_bytes == 3211264
    assert (two.occupied_peak_bytes, two.occupied_peak_step) == (3211264, 5)
    assert two.lower_bound_bytes is not None and two.lower_bound_bytes <= 3211264


def test_generated_log_plots_and_rules_read_the_same_pool(generated):
    from logscope.plots.data import feature_curve
    from logscope.rules._pool import feature_pool as rules_pool

    for build in feature_builds(generated.frames):
        curve = feature_curve(generated, build)
        assert curve is not None
        assert curve.pool is rules_pool(generated, build)
        assert curve.peak_bytes == curve.pool.occupied_peak_bytes <= curve.pool.span_bytes
        assert int(curve.frame["lower_bound_bytes"].max()) == curve.pool.lower_bound_bytes


# ------------------------------------------------------------------------------------------ aliases


def test_concat_inputs_inside_their_output_count_once():
    frames = frames_of(
        [
            (1, "input", 0, 100, 1),
            (2, "a", 100, 150, 2),
            (2, "b", 150, 200, 3),
            (3, "cat", 100, 200, 4),
        ]
    )
    pool = feature_pool(frames, 0)
    assert pool is not None
    assert list(pool.steps["step"]) == [0, 1, 2, 3]
    assert list(pool.steps["occupied_bytes"]) == [100, 200, 100, 100]
    # Step 2: a + b (read by op 2) and cat (written by op 2) share [100, 200): 100 B, not 200.
    assert list(pool.steps["lower_bound_bytes"]) == [100, 200, 100, 100]
    assert (pool.lower_bound_bytes, pool.lower_bound_step) == (200, 1)
    assert pool.lower_bound_tensors == ("input", "a", "b")
    assert pool.sum_bytes == 300 and pool.span_bytes == 200


def test_a_tensor_listed_at_two_addresses_is_one_tensor_for_the_bound():
    # `x` is read by ops 2 and 3 and listed at two addresses (as generated logs do): two ranges held,
    # one tensor needed.
    frames = frames_of([(2, "x", 0, 100, 1), (3, "x", 100, 200, 2), (3, "y", 200, 250, 3)])
    pool = feature_pool(frames, 0)
    assert pool is not None
    assert len(pool.tensors) == 3 and pool.sum_bytes == 250
    steps = pool.steps.set_index("step")
    assert int(steps.loc[2, "occupied_bytes"]) == 250  # both copies of x and y
    assert int(steps.loc[2, "lower_bound_bytes"]) == 150  # x once, y
    assert pool.lower_bound_bytes == 150 and pool.lower_bound_tensors == ("x", "y")


def test_a_tensor_listed_for_each_consumer_at_one_address_lives_across_them():
    frames = frames_of([(2, "x", 0, 100, 1), (5, "x", 0, 100, 2), (4, "y", 100, 150, 3)])
    pool = feature_pool(frames, 0)
    assert pool is not None
    assert len(pool.tensors) == 2 and pool.sum_bytes == 150
    (x,) = pool.tensors[pool.tensors["name"] == "x"].itertuples()
    assert (x.op_first, x.op_last, x.ops, x.lines) == (1, 5, (2, 5), (1, 2))
    # The old "consumed by j or j+1" set missed x at steps 3-4; its lifetime keeps it.
    assert (pool.lower_bound_bytes, pool.lower_bound_step) == (150, 3)


def test_partly_overlapping_live_tensors_bound_takes_the_heaviest_disjoint_set():
    # All live at step 1: a [0,100) and c [200,400) are disjoint; b [50,250) overlaps both.
    frames = frames_of([(2, "a", 0, 100, 1), (2, "b", 50, 250, 2), (2, "c", 200, 400, 3)])
    pool = feature_pool(frames, 0)
    assert pool is not None
    steps = pool.steps.set_index("step")
    assert int(steps.loc[1, "occupied_bytes"]) == 400
    assert int(steps.loc[1, "lower_bound_bytes"]) == 300  # a + c, not b alone (200) nor all three (500)
    assert pool.lower_bound_tensors == ("a", "c") and pool.lower_bound_lines == (1, 3)


# ---------------------------------------------------------------------------------- pool boundaries


def test_rows_below_the_printed_total_are_outside_the_pool():
    frames = frames_of([(1, "in", 0, 100, 1), (2, "t", 1000, 1100, 2), (3, "u", 1100, 1300, 3)], 300)
    pool = feature_pool(frames, 0)
    assert pool is not None
    assert list(pool.outside["name"]) == ["in"] and list(pool.rows["name"]) == ["t", "u"]
    assert (pool.start_offset, pool.span_bytes, pool.matches_total) == (1000, 300, True)
    assert pool.internal_line == 99 and pool.table_lines == (1, 3)


def test_a_total_no_row_fits_in_keeps_every_row_and_does_not_match():
    frames = frames_of([(1, "big", 0, 500, 1)], 100)
    pool = feature_pool(frames, 0)
    assert pool is not None
    assert len(pool.rows) == 1 and pool.outside.empty
    assert (pool.span_bytes, pool.matches_total) == (500, False)


def test_rows_without_a_consumer_count_in_the_span_but_in_no_step():
    frames = frames_of([(None, "orphan", 0, 100, 1), (2, "t", 100, 150, 2)])
    pool = feature_pool(frames, 0)
    assert pool is not None
    assert (pool.span_bytes, pool.sum_bytes) == (150, 150)
    assert list(pool.steps["step"]) == [1, 2] and pool.lower_bound_bytes == 50
    only = feature_pool(frames_of([(None, "orphan", 0, 100, 1)]), 0)
    assert only is not None and only.steps.empty
    assert (only.lower_bound_bytes, only.lower_bound_step, only.occupied_peak_bytes) == (None, None, None)


def test_no_feature_table_no_pool():
    assert feature_pools({}) == {}
    assert (
        feature_pool(logscope.parse(RKNN / "02-eval-memory-yolov8-1920-rk3588-tk2-1.6.log").frames, 0) is None
    )


def test_one_pass_step_figures_equal_the_union_and_the_bound_on_random_live_sets():
    """`_step_figures` answers a step in one pass when the live ranges are distinct names, End >= Start
    and pairwise disjoint, else falls back: either way its figures are `_union`'s and `_disjoint_max`'s."""
    import random

    from logscope.analysis.pool import _disjoint_max, _step_figures, _union

    rng = random.Random(15)
    fast = 0
    for _ in range(3000):
        n = rng.randint(0, 8)
        start = [rng.choice([0, 16, 32, 64, 100]) + rng.randint(0, 40) for _ in range(n)]
        end = [s + rng.choice([0, 4, 16, 32, 64]) for s in start]
        if rng.random() < 0.1 and n:  # a cut or mangled row: End below Start
            end[0] = start[0] - rng.randint(1, 10)
        names = [rng.choice("abcdefghij") if rng.random() < 0.8 else f"n{i}" for i in range(n)]
        active = rng.sample(range(n), rng.randint(0, n))
        ordered = all(e >= s for s, e in zip(start, end, strict=True))
        occupied, high = _union(active, start, end)
        expected = (occupied, high, _disjoint_max(active, start, end, names)[0])
        assert _step_figures(active, start, end, names, ordered) == expected, (active, start, end, names)
        fast += ordered and len({names[i] for i in active}) == len(active)
    assert fast > 500  # the one-pass path was exercised, not only the fallback


def test_frames_are_built_on_first_use_from_the_same_rows():
    pool = pool_of(MOBILENET)
    assert pool.row_count == len(pool.rows) and list(pool.outside["line"]) == list(pool.outside_lines)
    assert (pool.first_line, pool.last_line) == (int(pool.rows["line"].min()), int(pool.rows["line"].max()))
    assert pool.row_positions == [int(i) for i in pool.rows.index]
    assert pool.rows is pool.rows and pool.steps is pool.steps  # built once


def test_the_busiest_step_without_the_sweep_is_the_sweeps_on_random_tables():
    """The pool finds its lower-bound step by judging steps in order of their plain live sum (a cap on
    the bound) and stops early; on random tables (tensors listed twice, aliased ranges, rows without a
    consumer, rows out of line order, rows outside a printed total, End below Start) it is the first
    step of the full sweep's largest bound, and the rows the rules read are the `rows` frame's."""
    import random

    rng = random.Random(2026)
    early = 0
    for case in range(300):
        rows = []
        for line in rng.sample(range(1, 200), rng.randint(1, 30)):
            start = rng.choice([0, 64, 128, 256, 512]) + rng.randint(0, 3) * 16
            end = start + rng.choice([16, 32, 64, 128])
            if rng.random() < 0.03:  # a mangled row: End below Start
                end = start - 8
            op = None if rng.random() < 0.1 else rng.randint(1, 25)
            rows.append((op, rng.choice("abcdefgh") if rng.random() < 0.7 else f"t{line}", start, end, line))
        if rng.random() < 0.3 and len(rows) > 1:  # a tensor listed again for another consumer
            op, name, start, end, line = rows[0]
            rows.append((rng.randint(1, 25), name, start, end, 300 + case % 50))
        frames = frames_of(rows, rng.choice([None, None, 400, 700]))
        pool = feature_pool(frames, 0)
        assert pool is not None
        resident = pool.resident_rows()
        assert resident.line == [int(v) for v in pool.rows["line"]], case
        assert resident.name == pool.rows["name"].fillna("").tolist(), case
        assert resident.position == pool.row_positions, case
        positions, lines = pool.resident_arrays()
        assert positions.tolist() == resident.position and lines.tolist() == resident.line, case
        steps = pool.steps
        if steps.empty:
            assert pool.lower_bound_step is None and pool.lower_bound_bytes is None, case
            continue
        bounds = [int(v) for v in steps["lower_bound_bytes"]]
        expected_step = int(steps["step"].iloc[bounds.index(max(bounds))])
        assert (pool.lower_bound_bytes, pool.lower_bound_step) == (max(bounds), expected_step), case
        early += len(steps) > 3
    assert early > 100  # many tables had steps to skip


# ------------------------------------------------------------------ every build at once, as one by one


def _extents_one_by_one(tensors: pd.DataFrame, internals: dict) -> list[tuple]:
    """The per-build loop the pool's extents were computed with before every build was computed at once
    (`pool._grouped_extents`): (index, start_offset, span, sum, table span, resident flags, first line)."""
    import numpy as np

    from logscope.analysis.pool import tensor_arrays, text_cells

    arrays = tensor_arrays(tensors)
    positions = np.flatnonzero(arrays.usable)
    if not len(positions):
        return []
    null = ~arrays.build.known[positions]
    keys = np.where(null, np.inf, arrays.build.values[positions].astype("float64"))
    start, end, size, line = (
        c.values[positions] for c in (arrays.start, arrays.end, arrays.size, arrays.line)
    )
    names = text_cells(tensors["name"], positions)
    order = np.argsort(keys, kind="stable")
    out = []
    with np.errstate(invalid="ignore"):
        groups = np.split(order, np.flatnonzero(np.diff(keys[order])) + 1)
    for group in groups:
        key = keys[group[0]]
        index = None if key == np.inf else int(key)
        internal = internals.get(index, (None, None))[0]
        g_start, g_end = start[group], end[group]
        max_end, min_start = g_end.max(), g_start.min()
        if internal is not None and float(max_end) - float(min_start) > float(internal):
            resident = g_start.astype("float64") >= float(max_end) - float(internal)
            if not resident.any():
                resident[:] = True
        else:
            resident = np.ones(len(group), dtype=bool)
        pool_start = g_start[resident].min()
        first: dict = {}
        for i, flag in enumerate(resident.tolist()):
            key3 = (names[group[i]], int(g_start[i]), int(g_end[i]))
            if flag and key3 not in first:
                first[key3] = int(size[group][i])
        out.append(
            (
                index,
                int(pool_start),
                int(max_end - pool_start),
                sum(first.values()),
                int(max_end - min_start),
                resident.tolist(),
                int(line[group].min()),
            )
        )
    return out


def _random_tensors(rng, builds: int, rows: int, huge: bool = False) -> tuple[pd.DataFrame, pd.DataFrame]:
    records = []
    for line in range(1, rows + 1):
        start = rng.choice([0, 64, 128, 4096]) + rng.randint(0, 5) * 16
        end = start + rng.choice([16, 32, 64, 128])
        if huge and rng.random() < 0.3:  # sums past int64 (spliced digits)
            start, end = rng.randint(0, 2**40), 2**62 + rng.randint(0, 2**40)
        records.append(
            {
                "build_index": None if rng.random() < 0.05 else rng.randint(0, builds - 1),
                "table": rng.choice(["feature", "feature", "feature", "const", None]),
                "op_id": None if rng.random() < 0.1 else rng.randint(1, 30),
                "name": rng.choice([None, "", "a", "b", "c", "d", f"t{line}"]),
                "start_offset": None if rng.random() < 0.05 else start,
                "end_offset": None if rng.random() < 0.05 else end,
                "size_bytes": None if rng.random() < 0.05 else end - start,
                "logical_bytes": None if rng.random() < 0.3 else rng.randint(0, 200),
                "padding_bytes": None if rng.random() < 0.3 else rng.randint(-20, 150),
                "line": rng.randint(1, 5 * rows),
            }
        )
    memory = build_frame(
        "memory",
        [
            {
                "build_index": b,
                "source": "build-log",
                "internal_bytes": rng.choice([None, 60, 200, 5000]),
                "internal_line": 7,
            }
            for b in [*range(builds), None]
            if rng.random() < 0.7
        ],
    )
    return build_frame("tensors", records), memory


def test_every_build_at_once_reads_as_the_loop_over_builds_on_random_tables():
    """The extents of all builds at once (`build_extents`, `pool_extents`) equal the former loop over
    builds on random tables: several builds, rows without a build (each its own group, as `np.split`
    made them), rows outside a printed total, names missing or empty (one tensor: ""), tensors listed
    again, sizes whose sum passes int64; and the rows of each build are the loop's."""
    import random

    from logscope.analysis import pool

    rng = random.Random(1515)
    for case in range(200):
        tensors, memory = _random_tensors(rng, rng.randint(1, 6), rng.randint(1, 60), huge=case % 10 == 0)
        internals = pool.printed_internals(memory)
        expected = _extents_one_by_one(tensors, internals)
        pool._EXTENTS.clear()
        got = list(pool.build_extents(tensors, internals))
        assert [
            (i, e.start_offset, e.span_bytes, e.sum_bytes, e.table_span_bytes, r.resident, min(r.line))
            for i, r, e in got
        ] == expected, case
        assert pool.pool_extents(tensors, internals) == [
            (i, e, min(r.line)) for i, r, e in got if i is not None
        ], case


def test_derived_table_figures_read_as_the_loop_over_builds_on_random_tables():
    """`derived._table_figures` (every build at once, `reduceat`) gives each build what the former loop
    over builds gave it: logical and padding sums of the feature rows, the const span and sum."""
    import random

    import numpy as np

    from logscope.analysis.derived import _table_figures
    from logscope.analysis.pool import tensor_arrays

    rng = random.Random(77)
    for case in range(200):
        tensors, _ = _random_tensors(rng, rng.randint(1, 6), rng.randint(1, 60))
        arrays = tensor_arrays(tensors)
        got: dict = {}
        _table_figures(tensors, arrays, got, [])
        expected: dict = {}
        sized = arrays.size.known & arrays.build.known
        pad, known, size = arrays.padding.values, arrays.padding.known, arrays.size.values
        sound = known & (pad >= 0) & (pad <= size)
        for mask, kind in ((sized & arrays.feature, "feature"), (sized & arrays.const, "const")):
            for build in sorted(set(arrays.build.values[mask].tolist())):
                rows = np.flatnonzero(mask & (arrays.build.values == build))
                figures = expected.setdefault(build, {})
                if kind == "feature":
                    logical = rows[arrays.logical.known[rows]]
                    figures["logical_feature_bytes"] = (
                        int(arrays.logical.values[logical].sum()) if len(logical) else None
                    )
                    good = rows[sound[rows]]
                    figures["padding_bytes"] = int(pad[good].sum()) if len(good) else None
                else:
                    starts = rows[arrays.start.known[rows]]
                    ends = rows[arrays.end.known[rows]]
                    figures["const_span_bytes"] = (
                        int(arrays.end.values[ends].max() - arrays.start.values[starts].min())
                        if len(starts) and len(ends)
                        else None
                    )
                    figures["const_sum_bytes"] = int(size[rows].sum())
        assert got == expected, case


def test_masked_columns_read_alike_through_their_parts_and_the_public_path(monkeypatch):
    """`column_cells` and `tensor_arrays` read masked columns through their values and mask; with that
    path off (another pandas) the public `tolist` / `to_numpy` give the same cells and arrays."""
    import random

    import numpy as np

    from logscope.analysis import pool

    rng = random.Random(5)
    tensors, memory = _random_tensors(rng, 4, 80)
    fast_cells = {c: pool.column_cells(memory, c) for c in memory.columns}
    fast = pool.tensor_arrays(tensors)
    assert pool.masked_parts(pool.column_array(tensors, "line")) is not None  # the private path is used
    monkeypatch.setattr(pool, "_MASKED_PARTS", False)
    assert {c: pool.column_cells(memory, c) for c in memory.columns} == fast_cells
    assert fast_cells == {c: memory[c].tolist() for c in memory.columns}
    slow = pool.tensor_arrays(tensors)
    for name, column in fast._asdict().items():
        pairs = (
            zip(column, getattr(slow, name), strict=True)
            if isinstance(column, tuple)
            else [(column, getattr(slow, name))]
        )
        for a, b in pairs:
            assert a.dtype == b.dtype and np.array_equal(a, b), name


def test_name_codes_group_names_as_the_cells_read():
    """The Arrow dictionary codes of the names (`_name_codes`) and the fallback's (`factorised_codes`)
    group the same rows: equal names, a missing name and "" together."""
    import numpy as np

    from logscope.analysis import pool

    tensors = build_frame(
        "tensors", [{"name": n, "line": i} for i, n in enumerate(["a", None, "", "b", "a", None])]
    )
    positions = np.arange(len(tensors))
    arrow = pool._name_codes(pool.column_array(tensors, "name"), positions).tolist()
    series = tensors["name"].astype(object)  # (another storage: the fallback)
    assert pool._name_codes(series.array, positions).tolist() == [0, 1, 1, 2, 0, 1]
    fallback = pool.factorised_codes(pool.text_cells(tensors["name"], positions)).tolist()
    assert arrow == fallback == [0, 1, 1, 2, 0, 1]


def _tables_alike(rows, members: list[int], where: str) -> None:
    """The tensors read from the rows' `first_of` are the ones hashing each (name, Start, End) finds."""
    import numpy as np

    from logscope.analysis.pool import _TensorTable

    hashed = _TensorTable(rows, members, hashed=True)
    table = _TensorTable(rows, members)
    assert list(table.firsts) == list(hashed.firsts), where
    # (the first tensors built one by one, the rest from `later`, listed when they run out)
    assert [table[i] for i in range(len(table))] == [hashed[i] for i in range(len(hashed))], where
    assert table.later == hashed.later, where
    for got, expected in zip(table.columns(), hashed.columns(), strict=True):
        assert got.dtype == expected.dtype and np.array_equal(got, expected), where


def _first_rows_by_hashing(rows) -> list[int]:
    """Each row's key's first resident row (frame order), -1 outside: the dict the pool once built."""
    keys = list(zip(rows.name, rows.start, rows.end, strict=True))
    first: dict = {}
    for i, key in enumerate(keys):
        if rows.resident[i]:
            first.setdefault(key, i)
    return [first[key] if flag else -1 for key, flag in zip(keys, rows.resident, strict=True)]


def test_tensors_from_sorted_codes_are_the_hashed_keys_on_random_tables_and_fixtures(generated):
    """`_Rows.first_of` and `tensor_count` (from the codes sorted for `sum_bytes`) name the same first row
    of each (name, Start, End) as hashing the keys, and the tensor table read from them equals the one
    built by hashing: on random tables (missing and empty names, tensors listed again, rows outside a
    printed total, several builds), on every fixture with a feature table and on a generated log."""
    import random

    from logscope.analysis import pool

    rng = random.Random(77)
    checked = 0
    sources = []
    for case in range(200):
        tensors, memory = _random_tensors(rng, rng.randint(1, 4), rng.randint(1, 60))
        if case % 2:  # rows in line order, as a log lists them, some tensors listed again further on
            again = tensors.sample(n=min(len(tensors), 6), random_state=case)
            again = again.assign(line=again["line"] + 5 * len(tensors), op_id=again["op_id"].fillna(0) + 3)
            tensors = pd.concat([tensors, again]).sort_values("line", kind="stable").reset_index(drop=True)
        sources.append((tensors, memory))
    for path in fixture_logs():
        frames = logscope.parse(path).frames
        sources.append((frames["tensors"], frames["memory"]))
    sources.append((generated.frames["tensors"], generated.frames["memory"]))
    for case, (tensors, memory) in enumerate(sources):
        internals = pool.printed_internals(memory)
        pool._EXTENTS.clear()
        for index, rows, _ in pool.build_extents(tensors, internals):
            where = f"{case} build {index}"
            assert rows.all_resident == all(rows.resident), where
            assert rows.in_line_order == (rows.order == list(range(len(rows.line)))), where
            assert rows.first_of.tolist() == _first_rows_by_hashing(rows), where
            keys = zip(rows.name, rows.start, rows.end, strict=True)
            resident_keys = {k for k, f in zip(keys, rows.resident, strict=True) if f}
            assert rows.tensor_count == len(resident_keys), where
            members = [i for i in rows.order if rows.resident[i]]
            _tables_alike(rows, members, where)
            checked += members == list(range(len(rows.name))) and rows.tensor_count < len(rows.name)
    assert checked > 60  # many builds took the sorted-codes path


def test_text_cells_of_the_array_read_as_the_series():
    """`_text_cells` (the column's array, cells returned as Arrow gives them when none is missing) reads
    what `text_cells` of the Series reads, with and without missing names, Arrow-backed or object."""
    import numpy as np

    from logscope.analysis.pool import _text_cells, text_cells

    for names in (["a", "b", "a", "c"], ["a", None, "", "c"]):
        for dtype in ("string[pyarrow]", object):
            column = pd.Series(names, dtype=dtype)
            for positions in (np.array([0, 1, 2, 3]), np.array([3, 1]), [2]):
                expected = text_cells(column, positions)
                assert _text_cells(column.array, positions) == expected
                assert expected == ["" if names[p] is None else names[p] for p in positions]


def test_mem007_reads_names_through_the_pools_codes_as_through_the_names(generated, monkeypatch):
    """MEM007 groups a build's rows by the pool's codes of their names (`resident_name_codes`); coding
    the names themselves, as it does when a row is unnamed, gives the same findings: on a generated log
    with Concat layers in every build and on every fixture. `_first_consumers` equals the former dicts
    (each name's smallest ID, its first row) on random codes."""
    import random

    import numpy as np

    from logscope.analysis.pool import FeaturePool
    from logscope.rules import Config, run_rules
    from logscope.rules import mem007_concat_not_in_place as mem007

    logs = [generated, *(logscope.parse(path) for path in fixture_logs())]
    expected = [run_rules(log, Config(select=("MEM007",))) for log in logs]
    assert sum(len(found) for found in expected) >= 10
    with monkeypatch.context() as patch:
        patch.setattr(
            FeaturePool, "resident_name_codes", lambda fp: factorised_codes(fp.resident_rows().name)
        )
        for log, found in zip(logs, expected, strict=True):
            assert run_rules(log, Config(select=("MEM007",))) == found

    rng = random.Random(5)
    for _ in range(300):
        count = rng.randint(0, 40)
        codes = [rng.randint(0, 8) for _ in range(count)]
        ids = [rng.choice([-1, *range(10)]) for _ in range(count)]
        consumer, is_first = mem007._first_consumers(np.array(codes, dtype=np.int64), np.array(ids))
        smallest = {}
        for code, op in zip(codes, ids, strict=True):
            if op >= 0:
                smallest[code] = min(op, smallest.get(code, op))
        assert consumer.tolist() == [smallest.get(code, -1) for code in codes]
        assert is_first.tolist() == [codes.index(code) == i for i, code in enumerate(codes)]


def test_feature_rows_kept_with_the_extents_are_the_table_compared_afresh():
    """`feature_rows` gives the flags kept with the frame's extents, or compares the table column when
    none are kept for that frame: the same flags (a missing table is not "feature"), on random tables
    and every fixture."""
    import random

    import numpy as np

    from logscope.analysis import pool

    rng = random.Random(8)
    frames = [_random_tensors(rng, 2, rng.randint(1, 40))[0] for _ in range(50)]
    frames += [logscope.parse(path).frames["tensors"] for path in fixture_logs()]
    for case, tensors in enumerate(frames):
        if tensors.empty:
            continue
        expected = (tensors["table"] == "feature").fillna(False).to_numpy(dtype=bool)
        pool._EXTENTS.clear()
        assert np.array_equal(pool.feature_rows(tensors), expected), case
        list(pool.build_extents(tensors, {}))
        kept = pool._EXTENTS["last"][2]
        assert np.array_equal(pool.feature_rows(tensors), expected), case
        assert kept is None or pool.feature_rows(tensors) is kept.arrays.feature, case


# ------------------------------------------------------------------ the plain builds' bounds at once


def _pool_figures(pool: FeaturePool) -> tuple:
    """Every figure of a pool and what its readers take (frames, lists, arrays), as plain values."""
    positions, lines = pool.resident_arrays()
    return (
        pool.build_index,
        pool.start_offset,
        pool.span_bytes,
        pool.sum_bytes,
        pool.internal_bytes,
        pool.internal_line,
        pool.matches_total,
        pool.lower_bound_bytes,
        pool.lower_bound_step,
        pool.lower_bound_tensors,
        pool.lower_bound_lines,
        pool.lower_bound_ops,
        pool.row_count,
        pool.first_line,
        pool.last_line,
        pool.outside_lines,
        pool.row_positions,
        positions.tolist(),
        lines.tolist(),
        tuple(pool.resident_rows()),
        pool.resident_name_codes().tolist(),
        pool.occupied_peak_bytes,
        pool.occupied_peak_step,
        pool.steps.to_dict("list"),
        pool.rows.to_dict("list"),
        pool.tensors.astype(str).to_dict("list"),
    )


def _pools_both_ways(frames, monkeypatch) -> tuple[dict, dict, int]:
    """(figures per build with every build batched where it can be, the same by the loop alone, how
    many pools the batch made)."""
    from logscope.analysis import pool as pool_module

    figures = []
    batched = 0
    for threshold in (1, 10**9):
        monkeypatch.setattr(pool_module, "BATCH_GROUPS", threshold)
        pool_module._CACHE.clear()
        pools = feature_pools(frames)
        if threshold == 1:
            batched = sum(p._group is not None for p in pools.values())
        figures.append({b: _pool_figures(p) for b, p in pools.items()})
    pool_module._CACHE.clear()
    return figures[0], figures[1], batched


def test_batched_bounds_are_the_loops_on_fixtures_and_generated_logs(generated, monkeypatch):
    batched = 0
    for frames in [logscope.parse(p).frames for p in fixture_logs()] + [generated.frames]:
        at_once, by_loop, made = _pools_both_ways(frames, monkeypatch)
        assert list(at_once) == list(by_loop)
        assert at_once == by_loop
        batched += made
    assert batched >= 2  # [09] and [01] are plain builds; the generated log lists tensors again


def test_batched_bounds_are_the_loops_on_many_builds_of_a_fixture(tmp_path, monkeypatch):
    """Several builds in one file, as a log that converts a model again and again has them."""
    text = (RKNN / "09-build-verbose-mobilenetv1-rv1106-tk2-1.5.2-simulator.log").read_text(encoding="utf-8")
    path = tmp_path / "three.log"
    path.write_text(text * 3, encoding="utf-8")
    at_once, by_loop, made = _pools_both_ways(logscope.parse(path).frames, monkeypatch)
    assert at_once == by_loop and sorted(at_once) == [0, 1, 2]
    assert made == 3


def _plain_builds(rng, builds: int) -> pd.DataFrame:
    """Feature tables of several builds, most plain (a chain of tensors, each consumed once, lines
    rising), some bent the ways that keep a build out of the batch or make its busiest step's live
    tensors overlap, share a name or have none: End below Start, a missing or huge ID, a row repeated
    for a second consumer, lines out of order, a row without a build, a Size near the int64 limit."""
    records = []
    line = 1
    for build in range(builds):
        bend = rng.choice(
            ["none"] * 6
            + [
                "overlap",
                "same-name",
                "no-name",
                "end<start",
                "no-id",
                "huge-id",
                "again",
                "lines",
                "null-build",
                "tie",
                "huge-size",
            ]
        )
        offset = 0
        for op in range(1, rng.randint(1, 12) + 1):
            size = rng.choice([16, 32, 64, 128]) if bend != "tie" else 64
            start = offset
            if bend == "overlap" and rng.random() < 0.3:
                start = max(0, offset - 8)
            end = start + size
            if bend == "end<start" and rng.random() < 0.2:
                end = start - 8
            if bend == "huge-size" and rng.random() < 0.2:  # a spliced line: sums could pass int64
                end = start + 2**62
            name = f"t{op}"
            if bend == "same-name" and rng.random() < 0.4:
                name = "t1"
            if bend == "no-name" and rng.random() < 0.4:
                name = ""
            op_id = op
            if bend == "no-id" and rng.random() < 0.2:
                op_id = None
            if bend == "huge-id" and rng.random() < 0.2:
                op_id = 5_000_000
            records.append(
                {
                    "build_index": None if bend == "null-build" and rng.random() < 0.3 else build,
                    "table": "feature",
                    "op_id": op_id,
                    "user_op": "Conv",
                    "name": name,
                    "dtype": "INT8",
                    "start_offset": start,
                    "end_offset": end,
                    "size_bytes": end - start,
                    "line": line if bend != "lines" else line + rng.choice([0, -3, 5]),
                }
            )
            if bend == "again" and rng.random() < 0.3:
                again = dict(records[-1], op_id=op + 1, line=line + 1)
                records.append(again)
                line += 1
            line += 1
            offset = end if rng.random() < 0.7 else 0  # a chain, or back to the pool start (ping-pong)
        line += 5
    return build_frame("tensors", records)


def test_batched_bounds_are_the_loops_on_random_builds(monkeypatch):
    import random

    rng = random.Random(707)
    batched = left = 0
    for case in range(150):
        builds = rng.randint(1, 12)
        frames = {"tensors": _plain_builds(rng, builds)}
        if rng.random() < 0.3:
            frames["memory"] = build_frame(
                "memory",
                [
                    {
                        "build_index": b,
                        "source": "build-log",
                        "internal_bytes": rng.choice([40, 5000]),
                        "internal_line": 2,
                    }
                    for b in range(builds)
                ],
            )
        at_once, by_loop, made = _pools_both_ways(frames, monkeypatch)
        assert list(at_once) == list(by_loop), case
        assert at_once == by_loop, case
        batched += made
        left += len(at_once) - made
    assert batched > 300 and left > 100  # both ways taken, many times
