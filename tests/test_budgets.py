"""Budgets say where they come from: the built-in default, a target preset, --sram or the config."""

from __future__ import annotations

from pathlib import Path

import pytest

import logscope
from logscope.errors import ConfigError
from logscope.rules import Config, get_rule
from logscope.rules.config import config_from_mapping

COMPACT = Path(__file__).parent.parent / "fixtures" / "synthetic" / "compact-summary-yolov5s.log"


def _mem002(config: Config) -> object:
    return config.options_for(get_rule("MEM002"))


def test_mem002_budget_source() -> None:
    assert _mem002(Config()).budget_source == "logscope's built-in default"  # type: ignore[attr-defined]
    chip = _mem002(Config().with_overrides(target="rk3588"))
    assert chip.budget_source == "logscope's built-in default; logscope.targets has no figure for rk3588"  # type: ignore[attr-defined]
    own = config_from_mapping({"rules": {"MEM002": {"budget_bytes": "64MiB"}}}, "logscope.toml")
    options = _mem002(own)
    assert options.budget_bytes == 64 * 1024**2 and options.budget_source == "logscope.toml [rules.MEM002]"  # type: ignore[attr-defined]


def test_the_source_is_not_an_option() -> None:
    with pytest.raises(ConfigError, match="budget_source"):
        config_from_mapping({"rules": {"MEM002": {"budget_source": "me"}}}, "logscope.toml")


def test_sram_source_and_unit() -> None:
    assert Config().with_overrides(sram="320KiB").sram_origin == "--sram"
    assert config_from_mapping({"sram": "1MiB"}, "x.toml").sram_origin == "x.toml: sram"
    for bare in ("320", " 320 ", "1.5"):
        with pytest.raises(ConfigError, match="has no unit; write it as 320KiB"):
            Config().with_overrides(sram=bare)
    with pytest.raises(ConfigError, match="not a size"):
        Config().with_overrides(sram="lots")


def test_a_finding_names_its_budget(tmp_path: Path) -> None:
    text = COMPACT.read_text().replace("peak exceeds 10MB", "is large")  # no warning of its own
    log = tmp_path / "c.log"
    log.write_text(text)
    config = config_from_mapping({"rules": {"MEM002": {"budget_bytes": "1MiB"}}}, "logscope.toml")
    findings = [f for f in logscope.analyze(log, config).findings if f.code == "MEM002"]
    assert findings, "the 8.56 MB activation is above a 1 MiB budget"
    assert "(logscope.toml [rules.MEM002])" in findings[0].message
    assert findings[0].evidence["budget_source"] == "logscope.toml [rules.MEM002]"


def test_targets_include_the_toolkit_1_chips() -> None:
    for chip in ("rv1126", "rk1808"):
        assert Config().with_overrides(target=chip).target == chip


def test_a_rule_budget_string_needs_a_unit() -> None:
    with pytest.raises(ConfigError, match=r"rules.MEM002.budget_bytes: '64' has no unit"):
        config_from_mapping({"rules": {"MEM002": {"budget_bytes": "64"}}}, "logscope.toml")
    assert (
        _mem002(config_from_mapping({"rules": {"MEM002": {"budget_bytes": 65536}}}, "t")).budget_bytes
        == 65536
    )  # type: ignore[attr-defined]


def test_mcu001_names_where_its_sram_budget_came_from() -> None:
    trace = Path(__file__).parent.parent / "fixtures" / "synthetic" / "heap-trace-stm32-uart-bytes-leak.txt"
    for config, source in (
        (Config().with_overrides(sram="1KiB"), "--sram"),
        (config_from_mapping({"sram": "1KiB"}, "x.toml"), "x.toml: sram"),
    ):
        findings = [f for f in logscope.analyze(trace, config).findings if f.code == "MCU001"]
        assert findings, source
        assert findings[0].message.endswith(f"budget from {source}"), findings[0].message
    options = Config().with_overrides(target="stm32f746").options_for(get_rule("MCU001"))
    assert options.sram_source == "target stm32f746 (logscope.targets)"  # type: ignore[attr-defined]
