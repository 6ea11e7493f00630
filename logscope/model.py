"""The parsed log: what any parser returns and every later stage reads."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from logscope.frames import SCHEMAS, empty_frame

SCHEMA_VERSION = 1

# JSON keys of the per-build memory object, in order; values come from the `memory` frame.
MEMORY_KEYS = (
    "weight_bytes",
    "internal_bytes",
    "other_bytes",
    "total_bytes",
    "model_bytes",
    "activation_bytes",
    "scratch_bytes",
    "reuse_rate",
    "peak_layer",
)
DERIVED_KEYS = (
    "feature_pool_bytes",
    "feature_sum_bytes",
    "computed_reuse_rate",
    "const_span_bytes",
    "const_sum_bytes",
    "padding_bytes",
    "logical_feature_bytes",
)


@dataclass
class ParsedLog:
    """A log read into frames. `frames` always holds every frame in `SCHEMAS` (possibly empty)."""

    source: str
    kind: str
    frames: dict[str, pd.DataFrame]
    line_counts: dict[str, int]
    encoding: str = "utf-8"
    compression: str | None = None
    sha256: str = ""
    size_bytes: int = 0
    notes: tuple[str, ...] = ()
    findings: list[Any] = field(default_factory=list)

    def __post_init__(self) -> None:
        for name in SCHEMAS:
            self.frames.setdefault(name, empty_frame(name))

    def frame(self, name: str) -> pd.DataFrame:
        return self.frames[name]

    @property
    def unparsed_lines(self) -> int:
        return self.line_counts.get("unparsed", 0)

    def summary(self) -> dict[str, Any]:
        """The stable JSON contract (`schema_version` 1): keys are never renamed, unknown is null."""
        builds = self.frames["builds"]
        memory = self.frames["memory"]
        counts = _counts_by_build(self.frames)
        out_builds = []
        for row in builds.itertuples(index=False):
            idx = row.build_index
            mem_rows = memory[memory["build_index"] == idx]
            primary = mem_rows.iloc[0] if len(mem_rows) else None
            out_builds.append(
                {
                    "index": _plain(idx),
                    "kind": _plain(row.kind),
                    "toolkit_product": _plain(row.toolkit_product),
                    "toolkit_version": _plain(row.toolkit_version),
                    "compiler_version": _plain(row.compiler_version),
                    "target_platform": _plain(row.target_platform),
                    "status": _plain(row.status),
                    "status_reason": _plain(row.status_reason),
                    "lines": [_plain(row.start_line), _plain(row.end_line)],
                    "memory": {k: _plain(primary[k]) if primary is not None else None for k in MEMORY_KEYS}
                    | {"source": _plain(primary["source"]) if primary is not None else None},
                    "memory_lines": {
                        f"{k}_bytes": _plain(primary[f"{k}_line"]) if primary is not None else None
                        for k in ("weight", "internal", "activation", "scratch", "total")
                    }
                    | {"reuse_rate": _plain(primary["reuse_line"]) if primary is not None else None},
                    "derived": {k: _plain(primary[k]) if primary is not None else None for k in DERIVED_KEYS},
                    "memory_sources": [
                        {"source": _plain(m["source"])} | {k: _plain(m[k]) for k in MEMORY_KEYS}
                        for _, m in mem_rows.iterrows()
                    ],
                    "counts": counts.get(idx, _zero_counts()),
                }
            )
        return {
            "schema_version": SCHEMA_VERSION,
            "source": self.source,
            "kind": self.kind,
            "unparsed_lines": self.unparsed_lines,
            "line_counts": dict(self.line_counts),
            "builds": out_builds,
            "findings": [f.to_dict() if hasattr(f, "to_dict") else f for f in self.findings],
        }


def _zero_counts() -> dict[str, int]:
    return {"layers": 0, "feature_tensors": 0, "const_tensors": 0, "fusions": 0, "warnings": 0, "errors": 0}


def _counts_by_build(frames: dict[str, pd.DataFrame]) -> dict[Any, dict[str, int]]:
    out: dict[Any, dict[str, int]] = {}

    def bump(frame: pd.DataFrame, key: str, mask: Any = None) -> None:
        sel = frame if mask is None else frame[mask]
        for idx, n in sel.groupby("build_index", dropna=True).size().items():
            out.setdefault(idx, _zero_counts())[key] = int(n)

    tensors, messages = frames["tensors"], frames["messages"]
    bump(frames["layers"], "layers")
    bump(tensors, "feature_tensors", tensors["table"] == "feature")
    bump(tensors, "const_tensors", tensors["table"] == "const")
    bump(frames["fusions"], "fusions")
    bump(messages, "warnings", messages["level"] == "W")
    bump(messages, "errors", messages["level"] == "E")
    return out


def _plain(value: Any) -> Any:
    """pandas/numpy scalars to JSON-able Python values; NA and NaN become None."""
    if value is None or value is pd.NA:
        return None
    if hasattr(value, "item"):
        value = value.item()
    if isinstance(value, float) and math.isnan(value):
        return None
    return value
