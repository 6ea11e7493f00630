"""logscope: reads what NPU compilers and MCU runtimes print about memory.

Public API: `parse(path) -> ParsedLog`, `analyze(path, config) -> ParsedLog` (parse + rules),
`ParsedLog`, `Finding`, `Severity`, `LogscopeError`, `InputError`, `ConfigError`;
`reference(model, options) -> ReferenceResult` (ONNX reference analysis, `logscope.reference`).
"""

from logscope.api import analyze, parse, parse_text
from logscope.errors import ConfigError, InputError, LogscopeError
from logscope.model import ParsedLog
from logscope.reference import ReferenceOptions, ReferenceResult
from logscope.reference import analyze_model as reference
from logscope.rules import Finding, Severity

__all__ = [
    "ConfigError",
    "Finding",
    "InputError",
    "LogscopeError",
    "ParsedLog",
    "ReferenceOptions",
    "ReferenceResult",
    "Severity",
    "analyze",
    "parse",
    "parse_text",
    "reference",
]
__version__ = "0.1.0"
