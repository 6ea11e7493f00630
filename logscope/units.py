"""Byte figures for people: one formatter for every renderer and rule message."""

from __future__ import annotations


def human_bytes(value: int | None, missing: str = "—") -> str:
    """`1756160` -> `1.67 MiB (1756160 B)`: the exact figure always stays visible."""
    if value is None:
        return missing
    try:
        size = float(value)
    except OverflowError:  # past 1.8e308: no unit makes it readable, the exact figure still is
        return f"{value} B"
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(size) < 1024 or unit == "GiB":
            return f"{value} B" if unit == "B" else f"{size:.2f} {unit} ({value} B)"
        size /= 1024
    return f"{value} B"  # pragma: no cover - the loop always returns
