"""Errors of the reference analyzer. All are `LogscopeError`s, so the CLI answers them with exit code 2."""

from __future__ import annotations

from logscope.errors import ConfigError, LogscopeError


class ModelError(LogscopeError):
    """The ONNX model cannot be analysed."""


class ModelFormatError(ModelError):
    """Not an ONNX model, or a malformed graph (undefined inputs, cycles, duplicate outputs)."""


class UnsafeModelError(ModelError):
    """The model points outside its own folder (external data path escaping it, symlink tricks)."""


class ModelTooLargeError(ModelError):
    """The model, its external data or its graph exceeds a load limit (`LoadLimits`)."""


class ShapeError(ModelError):
    """A shape cannot be resolved: a dynamic input dimension without a value, a bad `--input-shape`."""


class ReferenceOptionError(ConfigError):
    """An option of the reference analysis is invalid (unknown target, dtype or quirk)."""
