"""A generated section of a Markdown file, between a start and an end marker line: read it (to check it is
current) and write it (replacing the old one, or appended when the markers are not there yet)."""

from __future__ import annotations

from pathlib import Path


def read_section(doc: Path, start: str, end: str) -> str:
    """The section, markers included; "" when the file has none."""
    text = doc.read_text()
    if start not in text or end not in text:
        return ""
    return text[text.index(start) : text.index(end) + len(end)]


def write_section(doc: Path, start: str, end: str, section: str) -> None:
    text = doc.read_text()
    if start in text and end in text:
        text = text[: text.index(start)] + section + text[text.index(end) + len(end) :]
    else:
        text = text.rstrip("\n") + "\n\n" + section + "\n"
    doc.write_text(text)
