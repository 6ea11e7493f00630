"""Target presets for `--target`: what a rule may need to know about the chip the log came from.

The figures and their sources live in `logscope.targets` (shared with the reference analyzer).
A preset fills option fields of the same name (`sram_bytes`, `int8_channel_block`, ...) in every
rule that declares them, unless the user set that option explicitly for the rule.
"""

from __future__ import annotations

from typing import Any

from logscope.targets import CHANNEL_BLOCKS, CHIPS


def _preset(chip: str, facts: dict[str, Any]) -> dict[str, Any]:
    if chip.startswith("stm32"):
        return dict(facts)
    blocks = CHANNEL_BLOCKS.get(chip, {})
    return {
        "int8_channel_block": blocks.get("int8"),
        "float16_channel_block": blocks.get("fp16"),
        "int16_channel_block": blocks.get("int16"),
        # MEM002's activation budget: no chip has a published figure yet, so the rule keeps its default
        # and says the target gave none.
        "budget_bytes": facts.get("activation_budget_bytes"),
    } | {k: v for k, v in facts.items() if k != "activation_budget_bytes"}


TARGETS: dict[str, dict[str, Any]] = {chip: _preset(chip, facts) for chip, facts in CHIPS.items()}

PRESET_KEYS = (
    "int8_channel_block",
    "float16_channel_block",
    "int16_channel_block",
    "npu_cores",
    "sram_bytes",
    "budget_bytes",
)


def target_preset(name: str) -> dict[str, Any]:
    """The preset for `name` (case-insensitive); raises `KeyError` for an unknown target."""
    return dict(TARGETS[name.strip().lower()])
