"""What each terminal of `grammars/mcu.lark` means: its family, its format, and how it is counted.

Terminal names start with their family (`TFLM_`, `NNOM_`, ...), so the tables below are prefix rules.
`format_of` names the printer a line comes from (`tflm-allocator`, `vela-per-layer`, ...); `family` is
the tool family (`tflm`, `vela`, ...) that the parsed log's kind is named after (`mcu-tflm`).

`WEAK` terminals are shapes that other text can take too (table rules, shell prompts, `key, 123`
rows, file:line backtrace frames, catch-alls). They never count as evidence in format detection
(`logscope.detect`), whatever the assembler later makes of them in context.
"""

from __future__ import annotations

import functools

# (terminal-name prefix, family, format); the first matching prefix wins, so longer prefixes come first.
_PREFIXES: tuple[tuple[str, str, str], ...] = (
    ("HEAP_BANNER_", "board", "boot-banner"),
    ("HEAP_", "heap-trace", "heap-trace"),
    ("TFLM_ALLOC_", "tflm", "tflm-allocator"),
    ("TFLM_ARENA_USED", "tflm", "tflm-app-print"),
    ("TFLM_CALL_", "tflm", "tflm-app-print"),
    ("TFLM_ARENA_", "tflm", "tflm-allocator"),
    ("TFLM_PLAN_", "tflm", "tflm-planner"),
    ("TFLM_PROF_", "tflm", "tflm-profiler"),
    ("TFLM_BENCH_", "tflm", "tflm-benchmark"),
    ("TFLM_OPLIST_", "tflm", "tflm-benchmark"),
    ("NNOM_STAT_", "nnom", "nnom-stat"),
    ("NNOM_SUMMARY", "nnom", "nnom-stat"),
    ("NNOM_", "nnom", "nnom-compile"),
    ("ESPH_DUMP_", "esp-idf-heap", "esp-idf-heap-trace-dump"),
    ("ESPH_CAPS_", "esp-idf-heap", "esp-idf-heap-caps"),
    ("ESPH_LEAK_CHECK", "esp-idf-heap", "esp-idf-unit-test-leak-check"),
    ("ESPH_", "esp-idf-heap", "esp-idf-host-heap-log"),
    ("MBED_FAULT_", "mbed", "mbed-fault"),
    ("MBED_ERROR_", "mbed", "mbed-fault"),
    ("MBED_", "mbed", "mbed-mem-trace"),
    ("UNITY_", "unity", "unity-test"),
    ("VELA_LAYER_", "vela", "vela-per-layer"),
    ("VELA_CSV_", "vela", "vela-per-layer"),
    ("VELA_SUBGRAPH", "vela", "vela-per-layer"),
    ("VELA_", "vela", "vela-summary"),
    ("ST_", "st-ai", "st-report"),
    ("ESPDL_", "esp-dl", "esp-dl-profile"),
    ("TINY_", "tinyengine", "tinyengine-header"),
)

WEAK = frozenset(
    {
        "",
        "OTHER",
        "ESP_MSG",
        "RULE",
        "BORDER",
        "SIM_NOISE",
        "RTOS_NOISE",
        "C_LINE",
        "SHELL",
        "APP_MARKER",
        "TFLM_PROF_TAG_ROW",
        "TFLM_OPLIST_CONT",
        "TFLM_OPLIST_PROSE",
        "NNOM_SUMMARY",
        "ESPH_BACKTRACE",
        "ESPH_DECODED",
        "ST_IO",
        "ST_V1_CONT",
        "ST_CLAYER_TENSOR",
        "ST_WARNING",
        "VELA_CONSTRAINT",
        "MBED_FAULT_REGISTER",
        "MBED_ERROR_FIELD",
        "UNITY_RESULT",
        "UNITY_SUMMARY",
        "UNITY_VERDICT",
        "TFLM_CALL_FAILED",
    }
)

# Known lines that carry nothing logscope reports: counted, never stored.
NOISE = frozenset(
    {
        "RULE",
        "BORDER",
        "SIM_NOISE",
        "RTOS_NOISE",
        "C_LINE",
        "TFLM_BENCH_NOTE",
        "TFLM_OPLIST_PROSE",
        "TFLM_BENCH_ARENA_HEADER",
        "TFLM_BENCH_ALLOC_HEADER",
        "ESPH_DECODED",
        "ESPH_HOST_NOISE",
        "VELA_METRIC",
        "VELA_CONFIG",
        "ST_NOTE",
        "ST_HEADER",
        "ST_BAR_ROW",
        "ST_N6_RANGE",
        "ST_EPOCH_ROW",
        "ST_V1_CONT",
        "ST_V5_MODEL_LINE",
        "ESPDL_MEM_HEADER",
        "ESPDL_MODULE_HEADER",
        "ESPDL_LOCATION",
    }
)
# Formats that describe the platform around a run (its crash report, its boot banner), not what ran:
# they do not decide a run's family.
PLATFORM_FORMATS = frozenset({"mbed-fault", "boot-banner"})
# Other programs' lines: shell prompts and other components' ESP-IDF log lines.
FOREIGN = frozenset({"SHELL", "ESP_MSG"})


@functools.cache
def format_of(terminal: str) -> tuple[str, str] | None:
    """(family, format) of a terminal, or None for the shared terminals."""
    for prefix, family, fmt in _PREFIXES:
        if terminal.startswith(prefix):
            return family, fmt
    return None


def is_evidence(terminal: str) -> bool:
    """Does a line of this kind show that the text is MCU output? (used by format detection)"""
    return terminal not in WEAK and format_of(terminal) is not None
