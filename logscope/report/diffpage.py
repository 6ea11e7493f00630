"""`logscope diff OLD NEW -o diff.html|diff.md`: two builds compared visually.

HTML: the figure table with deltas and the regressions marked, both memory curves overlaid, both
builds' address maps, the per-layer delta table (target, time, read/write, tensor bytes, padding),
and both builds' findings, drawn by the same page script as the interactive report. Markdown: the
text diff (`render_diff_markdown`) with the new build's memory plot, the old build's curve overlaid,
written beside it as PNG.

Layers are matched as `analysis.diff` matches them (by full name, else id and op type, repeated keys
numbered), so the table and the text diff cannot disagree on which layer is which.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import pandas as pd
from jinja2 import Environment, StrictUndefined

from logscope.analysis.diff import BuildDiff, FigureChange, layer_key, numbered, plain, records
from logscope.inert import html_finalize
from logscope.model import ParsedLog
from logscope.plots import figure_bytes, plot_memory
from logscope.plots.data import feature_curve
from logscope.render.diff import render_diff_markdown
from logscope.report.content import build_report, logscope_version
from logscope.report.interactive import log_data
from logscope.units import human_bytes

LAYER_ROWS = 300  # changed layers listed in the HTML table (largest changes first)


@dataclass(frozen=True)
class LayerDelta:
    layer: str
    op_type: str | None
    old_target: str | None
    new_target: str | None
    old_time_us: float | None
    new_time_us: float | None
    old_rw_kb: float | None
    new_rw_kb: float | None
    old_tensor_bytes: int | None
    new_tensor_bytes: int | None
    old_padding_bytes: int | None
    new_padding_bytes: int | None
    old_line: int | None
    new_line: int | None

    @property
    def tensor_delta(self) -> int:
        return (self.new_tensor_bytes or 0) - (self.old_tensor_bytes or 0)

    @property
    def time_delta(self) -> float:
        return (self.new_time_us or 0) - (self.old_time_us or 0)

    @property
    def changed(self) -> bool:
        return (
            self.old_target != self.new_target
            or self.old_time_us != self.new_time_us
            or self.old_rw_kb != self.new_rw_kb
            or self.old_tensor_bytes != self.new_tensor_bytes
            or self.old_padding_bytes != self.new_padding_bytes
        )


def layer_deltas(old_log: ParsedLog, new_log: ParsedLog, diff: BuildDiff) -> list[LayerDelta]:
    """Every layer present in both builds that changed, the largest change in tensor bytes first
    (then in time). Tensor and padding bytes sum the feature-table rows the layer consumes."""
    old = _layer_rows(old_log, diff.old.build_index)
    new = _layer_rows(new_log, diff.new.build_index)
    out = []
    for key in old.keys() & new.keys():
        a, b = old[key], new[key]
        delta = LayerDelta(
            layer=key[0],
            op_type=b["op_type"] or a["op_type"],
            old_target=a["target"],
            new_target=b["target"],
            old_time_us=a["time_us"],
            new_time_us=b["time_us"],
            old_rw_kb=a["rw_kb"],
            new_rw_kb=b["rw_kb"],
            old_tensor_bytes=a["tensor_bytes"],
            new_tensor_bytes=b["tensor_bytes"],
            old_padding_bytes=a["padding_bytes"],
            new_padding_bytes=b["padding_bytes"],
            old_line=a["line"],
            new_line=b["line"],
        )
        if delta.changed:
            out.append(delta)
    out.sort(key=lambda d: (-abs(d.tensor_delta), -abs(d.time_delta), d.new_line or 0))
    return out


def _layer_rows(log: ParsedLog, build: int) -> dict[tuple[str, int], dict[str, Any]]:
    layers = log.frames["layers"]
    layers = layers[layers["build_index"] == build]
    tensors = log.frames["tensors"]
    tensors = tensors[(tensors["build_index"] == build) & (tensors["table"] == "feature")]
    sizes = tensors.groupby("op_id")["size_bytes"].sum(min_count=1)
    padding = tensors.groupby("op_id")["padding_bytes"].sum(min_count=1)
    rows = []
    for row in records(layers):
        layer_id = plain(row.get("layer_id"))
        rows.append(
            {
                "key": layer_key(row),
                "op_type": plain(row.get("op_type")),
                "target": plain(row.get("target")),
                "time_us": plain(row.get("time_us")),
                "rw_kb": plain(row.get("rw_kb")),
                "tensor_bytes": plain(sizes.get(layer_id)) if layer_id is not None else None,
                "padding_bytes": plain(padding.get(layer_id)) if layer_id is not None else None,
                "line": plain(row.get("line")),
            }
        )
    return numbered(rows, lambda r: r["key"])


# -------------------------------------------------------------------------------------------- HTML


def _figure_rows(diff: BuildDiff, fail_pct: float) -> list[dict[str, Any]]:
    regressions = {c.name for c in diff.regressions(fail_pct)}
    rows = []
    for change in diff.memory + diff.reuse:
        rows.append(
            {
                "name": change.name,
                "old": _figure_text(change.name, change.old),
                "new": _figure_text(change.name, change.new),
                "delta": _delta_text(change),
                "regression": change.name in regressions,
            }
        )
    return rows


def _figure_text(name: str, value: Any) -> str:
    if value is None:
        return "—"
    if name.endswith("_bytes") and isinstance(value, int):
        return human_bytes(value)
    if name.endswith("_rate") and isinstance(value, int | float):
        return f"{value * 100:.1f} %"
    return str(value)


def _delta_text(change: FigureChange) -> str:
    delta, pct = change.delta, change.change_pct
    if delta is None:
        return "—" if change.old == change.new else "changed"
    if change.name.endswith("_rate"):
        text = f"{delta * 100:+.1f} points"
    elif isinstance(delta, int) and change.name.endswith("_bytes"):
        text = f"{delta:+,} B"
    else:
        text = f"{delta:+,}"
    return text + (f" ({pct:+.1f} %)" if pct is not None else "")


def render_diff_html(
    old_log: ParsedLog, new_log: ParsedLog, diff: BuildDiff, fail_pct: float | None = None
) -> str:
    """The comparison page: self-contained and offline, under the same CSP as the report."""
    from logscope.report.render import page_scripts, report_css

    threshold = 0.0 if fail_pct is None else fail_pct
    report = build_report([old_log, new_log] if new_log is not old_log else [old_log])
    old_file, new_file = report.files[0], report.files[-1]
    sides = []
    for index, (file, build, label) in enumerate(
        ((old_file, diff.old.build_index, "old"), (new_file, diff.new.build_index, "new"))
    ):
        data = log_data(file, index)
        data["views"] = [v for v in data["views"] if v.get("build") == build]
        for view in data["views"]:
            view["label"] = f"{label}: {view['label']}"
        data["findings"] = [f for f in data["findings"] if f["build"] in (None, build)]
        data["name"] = f"{label}: {file.name}"
        sides.append(data)
    scripts = page_scripts({"version": report.version, "logs": sides})
    environment = Environment(
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        finalize=html_finalize,
    )
    template = environment.from_string(
        resources.files("logscope.report").joinpath("templates/diff.html.j2").read_text("utf-8")
    )
    deltas = layer_deltas(old_log, new_log, diff)
    return template.render(
        diff=diff,
        version=logscope_version(),
        css=report_css(),
        sides=[(diff.old, sides[0]), (diff.new, sides[1])],
        figures=_figure_rows(diff, threshold),
        threshold=threshold,
        threshold_given=fail_pct is not None,
        regressions=diff.regressions(threshold),
        deltas=deltas[:LAYER_ROWS],
        deltas_total=len(deltas),
        bytes=lambda v: "—" if v is None else human_bytes(v),
        num=lambda v: "—" if v is None else f"{v:,}",
        **scripts,
    )


# ---------------------------------------------------------------------------------------- Markdown


def write_diff_markdown(
    old_log: ParsedLog, new_log: ParsedLog, diff: BuildDiff, path: Path, fail_pct: float | None = None
) -> list[Path]:
    """`diff.md` and, when both builds have a feature table, `diff-memory.png` beside it: the new
    build's memory plot with the old build's live curve overlaid."""
    text = render_diff_markdown(diff, fail_pct)
    written = []
    old_curve = feature_curve(old_log, diff.old.build_index)
    new_curve = feature_curve(new_log, diff.new.build_index)
    if old_curve is not None and new_curve is not None:
        image = path.with_name(f"{path.stem}-memory.png")
        reference = pd.DataFrame(
            {
                "step": old_curve.frame["layer"].astype("int64"),
                "live_bytes": old_curve.frame["occupied_bytes"].astype("int64"),
            }
        )
        figure = plot_memory(
            new_log,
            build=diff.new.build_index,
            reference=reference,
            reference_label=f"old: build {diff.old.build_index} live bytes",
        )
        image.write_bytes(figure_bytes(figure, "png", 90))
        text += f"\n### Memory over layers\n\n![new build, old build overlaid]({image.name})\n"
        written.append(image)
    path.write_text(text, encoding="utf-8")
    return [path, *written]


def write_diff(
    old_log: ParsedLog, new_log: ParsedLog, diff: BuildDiff, path: str | Path, fail_pct: float | None = None
) -> list[Path]:
    """Write the comparison as `path`'s suffix says (.html or .md); returns every file written."""
    from logscope.report import ReportError

    target = Path(path)
    suffix = target.suffix.lower()
    if suffix in (".html", ".htm"):
        target.write_text(render_diff_html(old_log, new_log, diff, fail_pct), encoding="utf-8")
        return [target]
    if suffix in (".md", ".markdown"):
        return write_diff_markdown(old_log, new_log, diff, target, fail_pct)
    raise ReportError(f"{target}: diff writes .html or .md, not {target.suffix or 'no suffix'!r}")


__all__ = ["LayerDelta", "layer_deltas", "render_diff_html", "write_diff", "write_diff_markdown"]
