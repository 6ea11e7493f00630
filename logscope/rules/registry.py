"""The explicit list of rules. A rule is added here, by hand, or it does not run.

Each module in `RULE_MODULES` declares `CODE` (family letters + three digits, never reused), `NAME`
(kebab-case, states the problem), `SEVERITY`, `NEEDS` (frames that must be non-empty, `"a|b"` for
either), `OPTIONS` (a frozen dataclass with defaults) and a pure `check(log, options) ->
Iterator[Finding]`; its module docstring is its documentation.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from logscope.model import ParsedLog
from logscope.rules import (
    alc001_allocation_failure,
    alc002_fd_exhaustion,
    bld001_fatal_error,
    bld002_compiler_error,
    fus001_unfused_conv_activation,
    fus002_few_fusions,
    log001_unparsed_table_rows,
    mcu001_sram_overrun,
    mcu002_transient_scratch_spike,
    mcu003_heap_leak,
    mcu004_alignment_overhead,
    mcu005_arena_too_small,
    mcu006_run_failed,
    mcu007_ops_on_cpu,
    mem001_low_memory_reuse,
    mem002_activation_peak_over_budget,
    mem003_high_scratch_share,
    mem004_atypical_memory_breakdown,
    mem005_channel_padding_waste,
    mem006_allocator_slack,
    mem007_concat_not_in_place,
    npu001_cpu_fallback,
    npu002_low_mac_usage,
    npu003_bandwidth_bound_layer,
    qnt001_quantization_outliers,
    qnt002_values_clamped,
    qnt003_hybrid_dtype_fallback,
    ref001_pool_above_reference,
    ref002_missed_fusion,
    ref003_weight_size_mismatch,
    ref004_trace_model_mismatch,
    ref005_arena_below_prediction,
    ver001_version_mismatch,
)
from logscope.rules.finding import Finding, Severity

RULE_MODULES: tuple[ModuleType, ...] = (
    mem001_low_memory_reuse,
    mem002_activation_peak_over_budget,
    mem003_high_scratch_share,
    mem004_atypical_memory_breakdown,
    mem005_channel_padding_waste,
    mem006_allocator_slack,
    mem007_concat_not_in_place,
    fus001_unfused_conv_activation,
    fus002_few_fusions,
    npu001_cpu_fallback,
    npu002_low_mac_usage,
    npu003_bandwidth_bound_layer,
    alc001_allocation_failure,
    alc002_fd_exhaustion,
    bld001_fatal_error,
    bld002_compiler_error,
    ver001_version_mismatch,
    qnt001_quantization_outliers,
    qnt002_values_clamped,
    qnt003_hybrid_dtype_fallback,
    mcu001_sram_overrun,
    mcu002_transient_scratch_spike,
    mcu003_heap_leak,
    mcu004_alignment_overhead,
    mcu005_arena_too_small,
    mcu006_run_failed,
    mcu007_ops_on_cpu,
    log001_unparsed_table_rows,
    # Cross-check rules: NEEDS check_* frames, present only after `logscope check LOG --onnx MODEL`.
    ref001_pool_above_reference,
    ref002_missed_fusion,
    ref003_weight_size_mismatch,
    # MCU cross-check rules: after `logscope check TRACE --model MODEL.tflite`.
    ref004_trace_model_mismatch,
    ref005_arena_below_prediction,
)

_CODE = re.compile(r"^([A-Z]{2,4})(\d{3})$")
_NAME = re.compile(r"^[a-z][a-z0-9]*(?:-[a-z0-9]+)*$")


@dataclass(frozen=True)
class Rule:
    """A rule module's declarations, checked once at import."""

    code: str
    name: str
    severity: Severity
    needs: tuple[str, ...]
    options_type: type
    check: Callable[[ParsedLog, Any], Iterator[Finding]]
    doc: str
    module: ModuleType

    @property
    def family(self) -> str:
        match = _CODE.match(self.code)
        assert match is not None
        return match.group(1)

    @property
    def summary(self) -> str:
        """The first line of the docstring: what goes wrong, in one sentence."""
        return self.doc.strip().splitlines()[0].strip()

    def option_fields(self) -> tuple[dataclasses.Field[Any], ...]:
        return dataclasses.fields(self.options_type)

    def default_options(self) -> Any:
        return self.options_type()


def _load(module: ModuleType) -> Rule:
    code, name = module.CODE, module.NAME
    if not _CODE.match(code):
        raise ValueError(f"{module.__name__}: CODE {code!r} is not family letters + 3 digits")
    if not _NAME.match(name):
        raise ValueError(f"{module.__name__}: NAME {name!r} is not kebab-case")
    options_type = module.OPTIONS
    if not (dataclasses.is_dataclass(options_type) and isinstance(options_type, type)):
        raise ValueError(f"{module.__name__}: OPTIONS must be a dataclass type")
    return Rule(
        code=code,
        name=name,
        severity=module.SEVERITY,
        needs=tuple(module.NEEDS),
        options_type=options_type,
        check=module.check,
        doc=module.__doc__ or "",
        module=module,
    )


RULES: tuple[Rule, ...] = tuple(_load(m) for m in RULE_MODULES)
_BY_KEY: dict[str, Rule] = {r.code.lower(): r for r in RULES} | {r.name: r for r in RULES}


def get_rule(key: str) -> Rule:
    """The rule whose code (any case) or name is `key`; raises `KeyError`."""
    return _BY_KEY[key.strip().lower()]


def rules_matching(selector: str) -> list[Rule]:
    """Rules a selector names: a code (`MEM001`), a name (`low-memory-reuse`) or a code prefix
    (`MEM`, `MEM00`). Empty when nothing matches."""
    key = selector.strip()
    if key.lower() in _BY_KEY:
        return [_BY_KEY[key.lower()]]
    upper = key.upper()
    if upper and upper[0].isalpha():
        return [r for r in RULES if r.code.startswith(upper)]
    return []
