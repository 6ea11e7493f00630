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
"""

from logscope.api import analyze, parse, parse_text
from logscope.errors import ConfigError, InputError, LogscopeError
from logscope.figures import FIGURES
from logscope.model import ParsedLog, concat
from logscope.reference import ReferenceOptions, ReferenceResult
from logscope.reference import analyze_model as reference
from logscope.rules import Finding, Severity

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
    "analyze",
    "concat",
    "parse",
    "parse_text",
    "reference",
]
__version__ = "0.1.0"
