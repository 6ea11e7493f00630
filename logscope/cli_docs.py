"""docs/cli.md, generated from the typer app itself, so the reference cannot drift from the code.

`python -m logscope.cli_docs > docs/cli.md` regenerates it; tests/test_cli_docs.py checks it is current.
"""

from __future__ import annotations

import sys
from typing import Any

import typer

from logscope.cli import app

_HEADER = """# Command-line reference

Generated from the code by `python -m logscope.cli_docs > docs/cli.md` (`make docs`); a test fails when
it is out of date. Exit codes everywhere: 0 success, 1 findings at or above `--fail-on` (or a regression
over the threshold), 2 usage, input or configuration error (one line on stderr, never a traceback).

Outputs (`report -o` and a Markdown report's images, `plot -o`, `trend -o`, `--plot`, each frame file of
`--frames-out`) are never written over an input of the same command: a log, `--onnx`, `--config` or
`--db`, compared by device and inode, so a link or `./x/../log` is caught too; the error names both,
and `--force` does not change it. An output file that exists and is not an input is only replaced with
`--force`. `--frames-out` of several logs writes `DIR/<file name>/`, or `DIR/<n>-<file name>/` (n from 1,
in argument order) for every log when two share a file name. The audit database (`audit --db`) is not
an output in this sense: it is only ever opened if it is logscope's own (docs/audit.md). Numbers are
checked against their range: `--sram` and sizes 0 to 1 TiB, `--alignment` 1 to 1 MiB, `--threshold`
and `--fail-on-regression` 0 to 1e6 (never `nan`, `inf` or negative), `--jobs` 1 to 1024.

Environment: `LOGSCOPE_CACHE_DIR` is the folder where the compiled line grammars and the facts proven
about their regexes are kept (default `$XDG_CACHE_HOME/logscope`, else `~/.cache/logscope`; `off`, `no`,
`0` or empty turn the cache off, and every process then builds the grammars again, about half a second of
CPU). Deleting the folder is always safe. Severities are coloured on a terminal only: `NO_COLOR` or
`TERM=dumb` turn colour off, `FORCE_COLOR` turns it on in a pipe.
"""


# typer vendors its own click, so the command tree is read by duck typing, not isinstance.
def _type_name(param: Any, ctx: Any) -> str:
    if getattr(param, "is_flag", False):
        return "flag"
    kind = param.type
    choices = getattr(kind, "choices", None)
    if choices:
        base = "|".join(str(getattr(c, "value", c)) for c in choices)
    else:
        name = str(getattr(kind, "name", "") or kind).lower()
        base = {"text": "str", "string": "str", "integer": "int", "boolean": "bool"}.get(name, name)
    # Read from the parameter itself rather than typer's own type display, which changes between releases.
    return f"list[{base}]" if getattr(param, "multiple", False) or param.nargs == -1 else base


def _default(param: Any) -> str:
    value = param.default
    if value is None or value is False or callable(value) or (getattr(param, "is_flag", False) and not value):
        return ""
    if isinstance(value, (list, tuple)):
        return ", ".join(str(v) for v in value) if value else ""
    return str(getattr(value, "value", value))


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def render_cli_markdown() -> str:
    """The whole reference: one section per command, its arguments and options as a table."""
    group: Any = typer.main.get_command(app)
    out = [_HEADER]
    ctx = group.context_class(group)
    for name in sorted(group.list_commands(ctx)):
        command = group.get_command(ctx, name)
        if command is None or command.hidden:
            continue
        usage = " ".join(command.collect_usage_pieces(ctx))
        out.append(f"## `logscope {name}`\n")
        out.append(f"```\nlogscope {name} {usage}\n```\n")
        if command.help:
            out.append(command.help.strip() + "\n")
        rows = []
        for param in command.params:
            if param.param_type_name == "argument":
                names = f"`{param.name.upper()}`"
                help_text = getattr(param, "help", None) or ""
            elif param.param_type_name == "option":
                if param.hidden:
                    continue
                names = ", ".join(f"`{n}`" for n in (*param.opts, *param.secondary_opts))
                help_text = param.help or ""
            else:
                continue
            kind, default = _type_name(param, ctx), _cell(_default(param))
            rows.append(f"| {names} | {_cell(kind)} | {default} | {_cell(help_text)} |")
        if rows:
            out.append("| argument / option | type | default | meaning |\n|---|---|---|---|")
            out.append("\n".join(rows) + "\n")
    return "\n".join(out)


if __name__ == "__main__":
    sys.stdout.write(render_cli_markdown())
