"""logscope: reads what NPU compilers and MCU runtimes print about memory.

Public API: `parse(path) -> ParsedLog`, `ParsedLog`, `LogscopeError`, `InputError`.
"""

from logscope.api import parse, parse_text
from logscope.errors import ConfigError, InputError, LogscopeError
from logscope.model import ParsedLog

__all__ = ["ConfigError", "InputError", "LogscopeError", "ParsedLog", "parse", "parse_text"]
__version__ = "0.1.0"
