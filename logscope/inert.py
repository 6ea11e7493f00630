"""One policy that keeps text taken from a log or a model inert wherever logscope writes it.

Nothing in a log or a model is trusted: tensor names, messages, versions and paths are whatever the
file says, and a crafted file can carry terminal escape sequences, spreadsheet formulas, Markdown or
HTML. Each output boundary applies the function for its medium:

- terminal text (and every text, JSON or Markdown stream written by the CLI): `visible_controls`
  shows each control character as an escape (``\\x1b``, ``\\u009b``, ``\\u202e``) instead of emitting
  it, so a log can neither recolour the terminal, move the cursor, set the window title (ESC, CSI,
  OSC, in their 7-bit and 8-bit C1 forms) nor reorder what is shown (bidi overrides, Trojan Source);
- CSV cells: `csv_cell` prefixes a cell a spreadsheet would evaluate (leading ``=``, ``+``, ``-``,
  ``@``, tab or carriage return) with an apostrophe, so the cell stays text, and shows its controls;
- Markdown: `markdown_text` turns HTML characters into entities, backslash-escapes Markdown
  punctuation and backticks, writes ``|`` as ``&#124;`` so a table keeps its columns, and flattens line
  breaks;
- HTML: Jinja2 autoescaping, with `visible_controls` as the template's finalize step.

JSON keeps the exact text (it is data) but goes through `visible_controls` too: JSON already escapes
C0 controls, and the remaining ones (DEL, C1, bidi) become ``\\uXXXX`` escapes that decode to the
same string, so a JSON document printed on a terminal is as inert as the text output.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

# C0 controls except tab and newline (a carriage return can overwrite what a line showed), DEL, the C1
# block (U+0080-U+009F: 8-bit CSI U+009B and OSC U+009D among them), and the invisible characters that
# reorder or hide text: bidi marks, embeddings, overrides and isolates, zero-width and BOM characters,
# and the Unicode line and paragraph separators.
_CONTROL = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u2069\ufeff]"
)


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    # C0 as Python writes it (`\x1b`); everything else as `\uXXXX`, which is also a valid JSON escape.
    return f"\\x{code:02x}" if code < 0x20 else f"\\u{code:04x}"


def visible_controls(text: str) -> str:
    """`text` with every control, bidi and invisible formatting character shown as an escape."""
    return _CONTROL.sub(_escape, text)


def has_controls(text: str) -> bool:
    """Whether `visible_controls` would change `text`."""
    return _CONTROL.search(text) is not None


# A spreadsheet (Excel, LibreOffice, Google Sheets) evaluates a cell that starts with one of these.
CSV_FORMULA_LEADS = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(value: Any) -> Any:
    """A CSV cell that stays text in a spreadsheet: a string starting with a formula character gets an
    apostrophe in front (`=1+1` -> `'=1+1`, the OWASP recommendation) and its control characters shown
    as escapes (CSV files get printed on terminals too; Parquet keeps the exact text). Only text cells
    are touched: a numeric column's `-5` is a number, never a formula."""
    if not isinstance(value, str):
        return value
    if value.startswith(CSV_FORMULA_LEADS):
        value = "'" + value
    return visible_controls(value)


_MD_SPECIAL = re.compile(r"([\\`*_\[\]~])")


def markdown_text(value: Any) -> str:
    """Text made inert in Markdown (GitHub, GitLab, Jira): HTML characters as entities, Markdown
    punctuation and backticks backslash-escaped, `|` as `&#124;` so it never splits a table cell, line
    breaks flattened, control characters visible. None is an em dash."""
    if value is None:
        return "—"
    text = " ".join(visible_controls(str(value)).split())
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("|", "&#124;")
    return _MD_SPECIAL.sub(r"\\\1", text)


def csv_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy of `frame` whose text cells go through `csv_cell`; numeric columns are left alone."""
    import pandas as pd

    out = frame.copy()
    for column in out.columns:
        if out[column].dtype == object or isinstance(out[column].dtype, pd.StringDtype):
            out[column] = out[column].map(csv_cell, na_action="ignore")
    return out


def html_finalize(value: Any) -> Any:
    """Jinja2's `finalize` for logscope's HTML pages: text from a log has its control and bidi characters
    shown as escapes before autoescaping; markup the page itself marked safe (inline JSON whose `<` is
    already `\\u003c`) keeps its type, so it is not escaped twice."""
    from markupsafe import Markup

    if isinstance(value, Markup):
        return Markup(visible_controls(str(value)))
    return visible_controls(value) if isinstance(value, str) else value
