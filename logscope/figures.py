"""The table of figures: one label, unit and definition per memory figure logscope prints.

The JSON summary (`ParsedLog.summary()`, keys `memory` / `derived`), the text and Markdown summaries,
the HTML / Markdown / JSON report, the plots, `diff`, `trend` and the audit store's `build_metrics`
view all name a figure by its `key` (a column of the `memory` frame) and print its `label`, `unit`
and `definition` from here. Two figures never share a label.

`source` says where the value comes from: `log` (read from the line in the `line_column` of the
memory frame, printed as "<memory source> line N") or `derived` (computed from the tensor tables by
`logscope.analysis.derived` or `logscope.analysis.pool`; the definition is the computation).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from logscope.units import human_bytes


@dataclass(frozen=True)
class Figure:
    key: str  # memory-frame column and JSON key
    label: str  # what every output calls it
    unit: str  # "B" (bytes) or "ratio" (0..1, printed as a percentage)
    definition: str  # the log line it is read from, or the computation
    source: str  # "log" or "derived"
    line_column: str | None = None  # memory-frame column holding the line of a `log` figure
    formula: str = ""  # the definition in at most 40 characters, for text tables (derived figures)


FIGURES: tuple[Figure, ...] = (
    Figure("weight_bytes", "weight", "B", "Total Weight Memory Size / Weight Memory", "log", "weight_line"),
    Figure(
        "internal_bytes",
        "internal (feature maps)",
        "B",
        "Total Internal Memory Size / Internal Tensor Memory",
        "log",
        "internal_line",
    ),
    Figure(
        "activation_bytes", "activation (feature maps)", "B", "Activation memory", "log", "activation_line"
    ),
    Figure("scratch_bytes", "scratch (op internal)", "B", "Scratch memory", "log", "scratch_line"),
    Figure("other_bytes", "other", "B", "Other Memory", "log", None),
    Figure("total_bytes", "total", "B", "Total Memory / Total memory", "log", "total_line"),
    Figure("model_bytes", "model file", "B", "current model size / model size", "log", "model_line"),
    Figure("reuse_rate", "reuse rate (log)", "ratio", "Memory reuse rate as printed", "log", "reuse_line"),
    Figure(
        "system_max_bytes", "system max (eval)", "B", "eval_memory(): System memory maximum allocation", "log"
    ),
    Figure("npu_max_bytes", "NPU max (eval)", "B", "eval_memory(): NPU memory maximum allocation", "log"),
    Figure(
        "max_total_bytes", "max total (eval)", "B", "eval_memory(): Total memory maximum allocation", "log"
    ),
    Figure(
        "feature_pool_bytes",
        "feature pool span",
        "B",
        "max(End) - min(Start) over the pool-resident feature rows (rows below a printed Total Internal "
        "Memory Size are outside the pool)",
        "derived",
        formula="max(End) - min(Start), pool rows",
    ),
    Figure(
        "feature_table_span_bytes",
        "feature table span",
        "B",
        "max(End) - min(Start) over every feature row, rows outside the pool included",
        "derived",
        formula="max(End) - min(Start), all feature rows",
    ),
    Figure(
        "feature_sum_bytes",
        "feature sum (no reuse)",
        "B",
        "sum(Size) over the pool-resident feature tensors, each name at an address once",
        "derived",
        formula="sum(Size), pool tensors",
    ),
    Figure(
        "computed_reuse_rate",
        "computed reuse",
        "ratio",
        "1 - feature pool span / feature sum",
        "derived",
        formula="1 - pool span / feature sum",
    ),
    Figure(
        "padding_bytes",
        "channel padding",
        "B",
        "sum(native - logical shape bytes) over feature rows with 0 <= padding <= Size",
        "derived",
        formula="native - logical shape bytes",
    ),
    Figure(
        "logical_feature_bytes",
        "logical feature bytes",
        "B",
        "sum(OrigShape bytes) of feature rows",
        "derived",
        formula="sum(OrigShape bytes)",
    ),
    Figure(
        "const_span_bytes",
        "const table span",
        "B",
        "max(End) - min(Start) of the const table",
        "derived",
        formula="max(End) - min(Start), const table",
    ),
    Figure(
        "const_sum_bytes",
        "const sum",
        "B",
        "sum(Size) of the const table",
        "derived",
        formula="sum(Size), const table",
    ),
)

#: Figures of the feature pool computed at render time (`logscope.analysis.pool.FeaturePool`).
POOL_FIGURES: tuple[Figure, ...] = (
    Figure(
        "live_peak_bytes",
        "live feature maps at peak",
        "B",
        "the largest sum over layers of the address ranges of the live feature tensors (shared ranges once)",
        "derived",
        formula="live tensors' ranges at the peak layer",
    ),
    Figure(
        "lower_bound_bytes",
        "live lower bound",
        "B",
        "the heaviest set of live tensors with disjoint address ranges, each tensor once, at any layer",
        "derived",
        formula="disjoint live tensors, each once",
    ),
)

BY_KEY: dict[str, Figure] = {f.key: f for f in (*FIGURES, *POOL_FIGURES)}
LOG_KEYS: tuple[str, ...] = tuple(f.key for f in FIGURES if f.source == "log")
DERIVED_KEYS: tuple[str, ...] = tuple(f.key for f in FIGURES if f.source == "derived")

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
# Memory figures compared between builds (`diff`, the audit's `build_metrics`), reported figures first,
# then those derived from the tensor tables.
MEMORY_FIELDS = (*MEMORY_FIGURES, *(k for k in DERIVED_KEYS if k.endswith("_bytes")))
REUSE_FIELDS = ("reuse_rate", "computed_reuse_rate")


def figure(key: str) -> Figure:
    """The figure named `key`; KeyError for an unknown one."""
    return BY_KEY[key]


def format_value(key: str, value: int | float | None) -> str:
    """The value as every text output prints it: bytes humanised, ratios as percentages."""
    if value is None:
        return "—"
    if BY_KEY[key].unit == "ratio":
        return f"{float(value) * 100:.1f}%"
    return human_bytes(int(value))


# Figures the summaries leave to the JSON and --frames-out (inputs of other figures, not findings).
_SUMMARY_SKIP = frozenset({"logical_feature_bytes", "const_span_bytes", "const_sum_bytes"})


def memory_rows(build: Mapping[str, Any]) -> list[tuple[str, str, str, list[str]]]:
    """(label, value, provenance, broken invariants) rows for one build's memory: every figure of
    `logscope.figures.FIGURES` the build has, labelled and defined there."""
    rows: list[tuple[str, str, str, list[str]]] = []
    mem, derived, lines = build["memory"], build["derived"], build["memory_lines"]
    source = mem.get("source")
    primary = build["memory_sources"][0] if build["memory_sources"] else {}
    values = {**{k: primary.get(k) for k in primary}, **mem, **derived}
    checks: dict[str, list[str]] = {}
    for check in build.get("checks", []):
        at = f" (line {check['line']})" if check["line"] is not None else ""
        checks.setdefault(check["figure"], []).append(f"{check['invariant']} broken{at}: {check['reason']}")
    for fig in FIGURES:
        value = values.get(fig.key)
        if (value is None and fig.key not in checks) or fig.key in _SUMMARY_SKIP:
            continue
        if fig.key == "activation_bytes" and mem.get("internal_bytes") is not None:
            continue  # the same figure as RKNN's "internal"
        if fig.key == "feature_table_span_bytes" and value == derived.get("feature_pool_bytes"):
            continue  # no row outside the pool: the same bytes as the pool span
        if fig.source == "log":
            line = lines.get(fig.key)
            where = f"{source} line {line}" if line is not None else str(source)
        else:
            where = fig.formula
        rows.append((fig.label, format_value(fig.key, value), where, checks.get(fig.key, [])))
        if fig.key == "reuse_rate" and mem.get("peak_layer"):
            rows.append(("peak layer", str(mem["peak_layer"]), str(source), []))
    return rows


assert len({f.label for f in BY_KEY.values()}) == len(BY_KEY), "two figures share a label"


def render_figures_markdown() -> str:
    """docs/figures.md: the table above, for people (`python -m logscope.figures > docs/figures.md`)."""
    out = [
        "# Figures",
        "",
        "<!-- Generated by `python -m logscope.figures > docs/figures.md` (make docs); do not edit -->",
        "",
        "Every memory figure logscope prints, with the one label every output (text, Markdown, JSON",
        "summary, report, plots, `diff`, `trend`, the audit store's `build_metrics`) gives it. `key` is",
        "the column of the `memory` frame and the JSON key (under `memory` or `derived` of a build).",
        "A figure that breaks an invariant (padding per tensor 0 <= padding <= Size, pool span <= the",
        "sum of sizes, weight + internal + other = total) is listed in the build's `checks` with the",
        "reason and the line, and printed beside the figure.",
        "",
        "| key | label | unit | from | definition |",
        "|---|---|---|---|---|",
    ]
    for f in (*FIGURES, *POOL_FIGURES):
        source = "log" if f.source == "log" else "derived"
        out.append(f"| `{f.key}` | {f.label} | {f.unit} | {source} | {f.definition} |")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    import sys

    sys.stdout.write(render_figures_markdown())
