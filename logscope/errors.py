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
