"""logscope: reads what NPU compilers and MCU runtimes print about memory.

Public API:
- `analyze(path, config=None) -> ParsedLog`: the entry point that matches `logscope parse` (read,
  detect, parse, derive the figures, run the rules); `log.findings` holds the findings.
- `parse(path)` / `parse_text("...")`: the same without the rules; `-` reads standard input.
- `ParsedLog`: `summary()` (the JSON contract), `frames`, `table(name)` (typed, with `source`),
  `findings_frame`; `concat(logs, name)` stacks one frame of many logs.
- `reference(model, options) -> ReferenceResult` (ONNX reference analysis, `logscope.reference`).
- `Finding`, `Severity`, `LogscopeError`, `InputError`, `ConfigError`; `FIGURES` (label, unit and
  definition of every memory figure).

The names are imported on first use (PEP 562): `import logscope` and `logscope --help` do not pay for
pandas, the parsers or the reference analyzer.
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import TYPE_CHECKING, Any

from logscope._version import __version__ as __version__

if TYPE_CHECKING:
    from logscope.api import analyze, parse, parse_text
    from logscope.errors import ConfigError, InputError, LogscopeError
    from logscope.figures import FIGURES
    from logscope.model import ParsedLog, concat
    from logscope.reference import ReferenceOptions, ReferenceResult
    from logscope.reference import analyze_model as reference
    from logscope.rules import Finding, Severity

# public name -> (module, attribute)
_LAZY = {
    "analyze": ("logscope.api", "analyze"),
    "parse": ("logscope.api", "parse"),
    "parse_text": ("logscope.api", "parse_text"),
    "ConfigError": ("logscope.errors", "ConfigError"),
    "InputError": ("logscope.errors", "InputError"),
    "LogscopeError": ("logscope.errors", "LogscopeError"),
    "ParsedLog": ("logscope.model", "ParsedLog"),
    "concat": ("logscope.model", "concat"),
    "FIGURES": ("logscope.figures", "FIGURES"),
    "ReferenceOptions": ("logscope.reference", "ReferenceOptions"),
    "ReferenceResult": ("logscope.reference", "ReferenceResult"),
    "reference": ("logscope.reference", "analyze_model"),
    "Finding": ("logscope.rules", "Finding"),
    "Severity": ("logscope.rules", "Severity"),
}

__all__ = [
    "FIGURES",
    "ConfigError",
    "Finding",
    "InputError",
    "LogscopeError",
    "ParsedLog",
    "ReferenceOptions",
    "ReferenceResult",
    "Severity",
    "__version__",
    "analyze",
    "concat",
    "parse",
    "parse_text",
    "reference",
]


def __getattr__(name: str) -> Any:
    try:
        module, attribute = _LAZY[name]
    except KeyError:
        raise AttributeError(f"module 'logscope' has no attribute {name!r}") from None
    value = getattr(importlib.import_module(module), attribute)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_LAZY])


class _Package(types.ModuleType):
    """The package object: `logscope.reference` stays the function `analyze_model` when the subpackage
    `logscope.reference` is imported (the import system would set the attribute to the subpackage)."""

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "reference" and isinstance(value, types.ModuleType):
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
