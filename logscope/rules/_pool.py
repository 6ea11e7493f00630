"""The feature-map pool for the rules (MEM001, MEM002, MEM006): a view of `logscope.analysis.pool`.

Every definition (pool-resident rows, span, sum, printed total, the per-step occupancy and the live
lower bound) is in that module's docstring; the rules read the same `FeaturePool` the memory plot,
the address map and the report draw.
"""

from __future__ import annotations

from logscope.analysis.pool import FeaturePool
from logscope.analysis.pool import feature_pools as _feature_pools
from logscope.model import ParsedLog

__all__ = ["FeaturePool", "feature_pool", "feature_pools"]


def feature_pools(log: ParsedLog) -> dict[int | None, FeaturePool]:
    """The pool of every build with usable feature rows, keyed by build index (computed once per log)."""
    return _feature_pools(log.frames)


def feature_pool(log: ParsedLog, build_index: int | None) -> FeaturePool | None:
    """The pool of `build_index`, or None when the build has no usable feature rows."""
    return _feature_pools(log.frames).get(build_index)
