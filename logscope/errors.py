"""logscope's own exceptions.

Everything a user can cause (a bad file, a bad option) surfaces as a subclass of
:class:`LogscopeError`, so the CLI can turn it into a one-line message and exit code 2
instead of a traceback.
"""

from __future__ import annotations


class LogscopeError(Exception):
    """Base class of every error logscope raises on purpose."""


class InputError(LogscopeError):
    """The input cannot be read as a log: missing, binary, corrupt archive, too large."""


class ConfigError(LogscopeError):
    """A configuration value or command-line option is invalid."""


class OutputError(LogscopeError):
    """An output that must not be written: one of the command's own inputs, or an existing file
    without `--force`."""


def note_where(exc: BaseException, *, line: int | None = None, rule: str | None = None) -> None:
    """Record on an unexpected exception where logscope was when it happened: the input line being read,
    the rule being run. The innermost record wins (a parser notes the line before any caller could). The
    CLI's internal-error line names them (`x.log:12`); `--debug` shows them as notes under the traceback.
    Never raises: it runs while another exception is propagating."""
    try:
        where: dict[str, object] = exc.__dict__.setdefault("logscope_where", {})
        for key, value in (("line", line), ("rule", rule)):
            if value is not None and key not in where:
                where[key] = value
                exc.add_note(
                    f"logscope: while at input {key} {value}"
                    if key == "line"
                    else f"logscope: in rule {value}"
                )
    except (AttributeError, TypeError):  # an exception type without a __dict__
        pass


def where_of(exc: BaseException) -> dict[str, object]:
    """What `note_where` recorded on `exc` (empty when nothing was)."""
    where = getattr(exc, "logscope_where", None)
    return where if isinstance(where, dict) else {}
