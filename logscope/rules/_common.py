"""Small helpers shared by rule modules: plain values, byte formatting, shapes, message lookups.

Rules may not import `logscope.render` (layering), so the byte formatter lives here too.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import field
from typing import Any

import pandas as pd

from logscope.frames import plain_value
from logscope.model import ParsedLog
from logscope.units import human_bytes

MiB = 1024 * 1024
KiB = 1024


plain = plain_value  # one definition, in logscope.frames


def as_int(value: Any) -> int | None:
    value = plain(value)
    return None if value is None else int(value)


def as_float(value: Any) -> float | None:
    value = plain(value)
    return None if value is None else float(value)


def as_str(value: Any) -> str | None:
    value = plain(value)
    return None if value is None else str(value)


def fmt_bytes(value: int | None) -> str:
    return human_bytes(value, missing="unknown")


def pct(value: float | None, digits: int = 1) -> str:
    return "unknown" if value is None else f"{value * 100:.{digits}f}%"


_SHAPE = re.compile(r"^\(\s*(-?\d+(?:\s*,\s*-?\d+)*)\s*\)$")


def parse_shape(text: Any) -> tuple[int, ...] | None:
    """`"(1,32,112,112)"` -> `(1, 32, 112, 112)`; anything else (NA, `\\`, `...`) -> None."""
    text = as_str(text)
    if text is None:
        return None
    match = _SHAPE.match(text.strip())
    if not match:
        return None
    return tuple(int(part) for part in match.group(1).split(","))


def build_indices(*frames: pd.DataFrame) -> list[int | None]:
    """Sorted build indices present in any of `frames` (None for rows outside a build)."""
    seen: set[int | None] = set()
    for frame in frames:
        if "build_index" in frame.columns:
            seen.update(as_int(v) for v in frame["build_index"].unique())
    return sorted(seen, key=lambda v: (v is None, v or 0))


def rows_of_build(frame: pd.DataFrame, build_index: int | None) -> pd.DataFrame:
    if build_index is None:
        return frame[frame["build_index"].isna()]
    return frame[frame["build_index"] == build_index]


def messages_in(log: ParsedLog, categories: Iterable[str]) -> pd.DataFrame:
    """The `messages` rows whose category is one of `categories`, in line order."""
    messages = log.frames["messages"]
    wanted = set(categories)
    mask = messages["category"].isin(wanted).fillna(False).astype(bool)
    return messages[mask].sort_values("line")


def first_line(text: Any) -> str:
    """The first line of a (possibly multi-line) message, trimmed to 160 characters."""
    value = as_str(text) or ""
    head = value.splitlines()[0] if value else ""
    return head if len(head) <= 160 else head[:157] + "..."


def line_range(lines: Iterable[Any]) -> tuple[int, ...]:
    """Sorted, de-duplicated line numbers (NA dropped)."""
    return tuple(sorted({int(v) for v in (as_int(x) for x in lines) if v is not None}))


def grouped(frame: pd.DataFrame) -> Iterator[tuple[int | None, pd.DataFrame]]:
    """(build_index, rows) per build, in build order; rows outside any build come last."""
    if frame.empty:
        return
    groups = {as_int(k): rows for k, rows in frame.groupby("build_index", sort=False, dropna=False)}
    for build_index in sorted(groups, key=lambda v: (v is None, v or 0)):
        yield build_index, groups[build_index]


def printed_perf_total(log: ParsedLog, build_index: int | None) -> tuple[int | None, int | None]:
    """The build's printed total perf time (µs) and its line, from `perf_totals`; (None, None) if none."""
    totals = log.frames.get("perf_totals")
    if totals is None or totals.empty:
        return None, None
    for row in rows_of_build(totals, build_index).itertuples(index=False):
        value = as_int(row.total_time_us)
        if value:
            return value, as_int(row.time_line)
    return None, None


PROVENANCE = "provenance"  # dataclass field metadata: the option whose source the field receives


def provenance(option: str, default: str = "logscope's built-in default") -> Any:
    """An Options field that is not an option: `Config.options_for` fills it with where `option` came
    from (the built-in default, a `--target` preset, `--sram`, or the configuration file)."""
    return field(default=default, metadata={PROVENANCE: option})
