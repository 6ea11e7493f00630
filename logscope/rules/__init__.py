"""The rules engine: one module per rule, an explicit registry, the engine that stamps and sorts.

`run_rules(log, config)` returns the findings; `analyze_log(log, config)` stores them on the log.
"""

from logscope.rules.config import Config, find_config, load_config, resolve_config
from logscope.rules.engine import analyze_log, run_rules, worst_severity
from logscope.rules.finding import Finding, Severity
from logscope.rules.registry import RULES, Rule, get_rule

__all__ = [
    "RULES",
    "Config",
    "Finding",
    "Rule",
    "Severity",
    "analyze_log",
    "find_config",
    "get_rule",
    "load_config",
    "resolve_config",
    "run_rules",
    "worst_severity",
]
