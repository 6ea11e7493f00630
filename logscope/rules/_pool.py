"""The feature-map pool for the rules (MEM001, MEM002, MEM006, MEM007): a view of
`logscope.analysis.pool`, and the memory frame's cells per build beside it.

Every definition (pool-resident rows, span, sum, printed total, the per-step occupancy and the live
lower bound) is in that module's docstring; the rules read the same `FeaturePool` the memory plot,
the address map and the report draw.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from logscope.analysis.pool import FeaturePool, text_cells
from logscope.analysis.pool import feature_pools as _feature_pools
from logscope.model import ParsedLog
from logscope.rules._common import as_int
from logscope.rules._common import columns as frame_columns

__all__ = ["FeaturePool", "cells_by_build", "feature_pool", "feature_pools", "text_cells"]


def cells_by_build(frame: pd.DataFrame, columns: tuple[str, ...]) -> dict[int | None, list[tuple[Any, ...]]]:
    """The cells of `columns` of every row of `frame`, per build index (None: rows outside any build),
    frame order within a build; builds in order of first row. The columns are read whole, once (as
    `tolist` gives them): a log with hundreds of builds pays no pandas call per build. They are the
    engine run's shared `Columns` lists (MEM001 and MEM002 read the same memory columns)."""
    out: dict[int | None, list[tuple[Any, ...]]] = {}
    if not len(frame):
        return out
    shared = frame_columns(frame)
    builds = [as_int(b) for b in shared["build_index"]]
    for build, cells in zip(builds, zip(*(shared[c] for c in columns), strict=True), strict=True):
        rows = out.get(build)
        if rows is None:
            out[build] = [cells]
        else:
            rows.append(cells)
    return out


def feature_pools(log: ParsedLog) -> dict[int | None, FeaturePool]:
    """The pool of every build with usable feature rows, keyed by build index (computed once per log)."""
    return _feature_pools(log.frames)


def feature_pool(log: ParsedLog, build_index: int | None) -> FeaturePool | None:
    """The pool of `build_index`, or None when the build has no usable feature rows."""
    return _feature_pools(log.frames).get(build_index)
