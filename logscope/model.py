"""The parsed log: what any parser returns and every later stage reads."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from logscope.frames import SCHEMAS, empty_frame, plain_value

SCHEMA_VERSION = 1

# The byte figures a log states about a build (the `memory` frame; docs/formats.md defines each).
MEMORY_FIGURES = (
    "weight_bytes",
    "internal_bytes",
    "other_bytes",
    "total_bytes",
    "model_bytes",
    "activation_bytes",
    "scratch_bytes",
)
# JSON keys of the per-build memory object, in order; values come from the `memory` frame.
MEMORY_KEYS = (*MEMORY_FIGURES, "reuse_rate", "peak_layer")
# eval_memory() of toolkit 1 reports maximum and total allocation per pool (fixture [12]).
EVAL_MEMORY_KEYS = (
    "system_max_bytes",
    "system_total_bytes",
    "npu_max_bytes",
    "npu_total_bytes",
    "max_total_bytes",
)
# What a board said about itself and the model it ran; a disagreement is the rules engine's business.
VERSION_KEYS = (
    "runtime_version",
    "driver_version",
    "api_version",
    "server_version",
    "proxy_runtime_version",
    "model_toolkit_version",
    "model_compiler_version",
    "model_format_version",
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
                        for k in ("weight", "internal", "activation", "scratch", "total", "model")
                    }
                    | {"reuse_rate": _plain(primary["reuse_line"]) if primary is not None else None},
                    "derived": {k: _plain(primary[k]) if primary is not None else None for k in DERIVED_KEYS},
                    "memory_sources": [
                        {"source": _plain(m["source"])}
                        | {k: _plain(m[k]) for k in (*MEMORY_KEYS, *EVAL_MEMORY_KEYS)}
                        for _, m in mem_rows.iterrows()
                    ],
                    "versions": {k: _plain(getattr(row, k)) for k in VERSION_KEYS},
                    "perf": _perf_summary(self.frames, idx),
                    "counts": counts.get(idx, _zero_counts()),
                }
            )
        out = {
            "schema_version": SCHEMA_VERSION,
            "source": self.source,
            "kind": self.kind,
            "unparsed_lines": self.unparsed_lines,
            "line_counts": dict(self.line_counts),
            "builds": out_builds,
            "findings": [f.to_dict() if hasattr(f, "to_dict") else f for f in self.findings],
        }
        if self.kind.startswith("mcu"):  # MCU logs add their runs; RKNN keys stay as they are
            out |= _mcu_summary(self.frames)
        return out


def _zero_counts() -> dict[str, int]:
    return {
        "layers": 0,
        "feature_tensors": 0,
        "const_tensors": 0,
        "fusions": 0,
        "warnings": 0,
        "errors": 0,
        "perf_layers": 0,
        "allocations": 0,
        "failed_allocations": 0,
        "tensor_attrs": 0,
    }


def _perf_summary(frames: dict[str, pd.DataFrame], build_index: Any) -> dict[str, Any] | None:
    """Totals of a build's perf table (as printed, with their lines), its slowest layers, and the op
    types of its ranking table as printed: the first five rows and every row with CPU time."""
    perf = frames["perf"][frames["perf"]["build_index"] == build_index]
    totals = frames["perf_totals"][frames["perf_totals"]["build_index"] == build_index]
    ranking = frames["perf_ranking"][frames["perf_ranking"]["build_index"] == build_index]
    if not len(perf) and not len(totals) and not len(ranking):
        return None
    total = totals.to_dict("records")[0] if len(totals) else None  # per column: ints stay ints
    timed = perf[perf["time_us"].notna()].sort_values(["time_us", "line"], ascending=[False, True])
    return {
        "total_time_us": _plain(total["total_time_us"]) if total is not None else None,
        "fps": _plain(total["fps"]) if total is not None else None,
        "rw_kb": _plain(total["rw_kb"]) if total is not None else None,
        "lines": [_plain(total["time_line"]), _plain(total["rw_line"])]
        if total is not None
        else [None, None],
        "rows_time_us": _plain(perf["time_us"].sum()) if len(perf) else None,
        "slowest": [
            {
                "layer_id": _plain(r.layer_id),
                "op_type": _plain(r.op_type),
                "time_us": _plain(r.time_us),
                "full_name": _plain(r.full_name),
                "line": _plain(r.line),
            }
            for r in timed.head(5).itertuples()
        ],
        "ranking": [
            {
                "op_type": _plain(r.op_type),
                "cpu_time_us": _plain(r.cpu_time_us),
                "npu_time_us": _plain(r.npu_time_us),
                "total_time_us": _plain(r.total_time_us),
                "time_ratio_pct": _plain(r.time_ratio_pct),
                "line": _plain(r.line),
            }
            for r in ranking.sort_values("line")
            .loc[lambda t: (t["line"].rank(method="first") <= 5) | (t["cpu_time_us"].fillna(0) > 0)]
            .itertuples()
        ],
    }


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
    allocations = frames["allocations"]
    bump(frames["perf"], "perf_layers")
    bump(allocations, "allocations", allocations["status"] == "allocated")
    bump(allocations, "failed_allocations", allocations["status"] == "failed")
    bump(frames["tensor_attrs"], "tensor_attrs")
    return out


_plain = plain_value  # one definition, in logscope.frames


# ---------------------------------------------------------------------- MCU logs
_MCU_COUNTED = {
    "ops": "ops",
    "buffers": "buffers",
    "events": "events",
    "arena": "arena",
    "mcu_layers": "layers",
    "curve": "curve",
}


def _mcu_summary(frames: dict[str, pd.DataFrame]) -> dict[str, Any]:
    """`formats` (every printer seen, in order) and one `runs` entry per run, each with its `memory`."""
    runs, memory = frames["mcu_runs"], frames["mcu_memory"]
    derived = {row["run_index"]: row for row in memory.to_dict("records")}
    counts = {key: frames[name].groupby("run_index").size().to_dict() for name, key in _MCU_COUNTED.items()}
    formats: dict[str, None] = {}
    out_runs = []
    for run in runs.to_dict("records"):
        idx = run["run_index"]
        m = derived.get(idx, {})
        run_formats = [f for f in (_plain(run["formats"]) or "").split(",") if f]
        formats.update(dict.fromkeys(run_formats))
        peak_op = None
        if _plain(m.get("peak_op_index")) is not None or _plain(m.get("peak_op_name")) is not None:
            peak_op = {
                "index": _plain(m.get("peak_op_index")),
                "name": _plain(m.get("peak_op_name")),
                "type": _plain(m.get("peak_op_type")),
                "line": _plain(m.get("peak_line")),
            }
        reported = None
        if _plain(run["reported_bytes"]) is not None:
            reported = {
                "label": _plain(run["reported_label"]),
                "bytes": _plain(run["reported_bytes"]),
                "line": _plain(run["reported_line"]),
            }
        events = None
        if _plain(m.get("alloc_count")) is not None:
            leak, blocks = _plain(m.get("leak_bytes")), _plain(m.get("leak_blocks"))
            said, said_blocks = _plain(run["reported_leak_bytes"]), _plain(run["reported_leak_blocks"])
            events = {
                "allocations": _plain(m.get("alloc_count")),
                "frees": _plain(m.get("free_count")),
                "alloc_bytes": _plain(m.get("alloc_bytes")),
                "free_bytes": _plain(m.get("free_bytes")),
                "unmatched_frees": _plain(m.get("unmatched_frees")),
                "leak_bytes": leak,
                "leak_blocks": blocks,
                "reported_leak_bytes": said,
                "reported_leak_blocks": said_blocks,
                "reported_allocations": _plain(run["reported_alloc_count"]),
                "reported_frees": _plain(run["reported_free_count"]),
                "balanced": None if said is None else (leak == said and said_blocks in (None, blocks)),
            }
        out_runs.append(
            {
                "index": _plain(idx),
                "family": _plain(run["family"]),
                "formats": run_formats,
                "tool_version": _plain(run["tool_version"]),
                "model_name": _plain(run["model_name"]),
                "lines": [_plain(run["start_line"]), _plain(run["end_line"])],
                "status": None
                if _plain(run["status"]) is None
                else {
                    "status": _plain(run["status"]),
                    "reason": _plain(run["status_reason"]),
                    "line": _plain(run["status_line"]),
                    "message": _plain(run["status_message"]),
                    "fault": _plain(run["fault"]),
                    "fault_line": _plain(run["fault_line"]),
                },
                "memory": {
                    "peak_bytes": _plain(m.get("peak_bytes")),
                    "peak_op": peak_op,
                    "derivation": _plain(m.get("derivation")),
                    "baseline_bytes": _plain(m.get("baseline_bytes")),
                    "final_bytes": _plain(m.get("final_bytes")),
                    "budget_bytes": _plain(m.get("budget_bytes")),
                    "over_budget_bytes": _plain(m.get("over_budget_bytes")),
                    "headroom_bytes": _plain(m.get("headroom_bytes")),
                    "reported": reported,
                },
                "memory_lines": {
                    "peak_bytes": _plain(m.get("peak_line")),
                    "baseline_bytes": _plain(run["baseline_line"]),
                    "budget_bytes": _plain(run["budget_line"]),
                    "over_budget_bytes": _plain(run["over_budget_line"]),
                },
                "events": events,
                "counts": {key: int(counts[key].get(idx, 0)) for key in _MCU_COUNTED.values()},
            }
        )
    return {"formats": list(formats), "runs": out_runs}
