"""The engine (skip, stamp, sort) and the configuration (discovery, validation, presets)."""

from __future__ import annotations

import dataclasses
import inspect
from pathlib import Path

import pytest

import logscope
from logscope.errors import ConfigError
from logscope.rules import Config, Finding, Severity, analyze_log, run_rules
from logscope.rules.config import config_from_mapping, find_config, load_config, parse_size, resolve_config
from logscope.rules.engine import applicable, sort_findings
from logscope.rules.registry import get_rule
from tests.conftest import MOBILENET, RKNN

ARGB = RKNN / "05-build-argb-abort-tqdm-tk2-2.0.0b0.log"


def test_engine_stamps_code_name_source_and_severity(mobilenet_log):
    findings = run_rules(mobilenet_log)
    assert findings
    for f in findings:
        rule = get_rule(f.code)
        assert f.name == rule.name and f.source == mobilenet_log.source and f.severity is not None
    reuse = next(f for f in findings if f.code == "MEM001")
    assert reuse.severity is Severity.warning


def test_config_severity_overrides_every_finding_of_a_rule(mobilenet_log):
    config = config_from_mapping({"rules": {"low-memory-reuse": {"severity": "error"}}})
    reuse = [f for f in run_rules(mobilenet_log, config) if f.code == "MEM001"]
    assert reuse and all(f.severity is Severity.error for f in reuse)


def test_rules_without_their_frames_are_skipped():
    log = logscope.parse(ARGB)  # messages and builds only: no tables
    assert not applicable(get_rule("MEM005"), log)
    assert [f.code for f in run_rules(log)] == ["BLD001"]


def test_sort_is_deterministic_and_by_line():
    a = Finding(message="b", line=5, code="X001")
    b = Finding(message="a", line=2, code="Y001")
    c = Finding(message="c", line=None, code="A001")
    assert sort_findings([a, c, b]) == [b, a, c] == sort_findings([c, b, a])


def test_run_twice_gives_the_same_findings(mobilenet_log):
    assert [f.to_dict() for f in run_rules(mobilenet_log)] == [f.to_dict() for f in run_rules(mobilenet_log)]


def test_to_dict_keys(mobilenet_log):
    """The JSON contract's keys, in order: the same in the summary, `FINDING_KEYS` and the findings frame."""
    from logscope.schemas import FINDING_KEYS

    log = analyze_log(mobilenet_log, Config())
    data = log.summary()["findings"][0]
    expected = (
        "code",
        "name",
        "severity",
        "message",
        "source",
        "line",
        "lines",
        "build_index",
        "subject",
        "evidence",
        "hint",
    )
    assert tuple(data) == expected == FINDING_KEYS
    assert tuple(log.findings_frame.columns) == expected


def test_select_ignore_by_code_name_and_family(mobilenet_log):
    only_mem = config_from_mapping({"select": ["MEM"]})
    assert {f.code[:3] for f in run_rules(mobilenet_log, only_mem)} == {"MEM"}
    no_reuse = config_from_mapping({"ignore": ["low-memory-reuse", "QNT003"]})
    codes = {f.code for f in run_rules(mobilenet_log, no_reuse)}
    assert "MEM001" not in codes and "QNT003" not in codes and "QNT001" in codes
    cli = Config().with_overrides(select=["MEM001,QNT001"], ignore=["QNT001"])
    assert {f.code for f in run_rules(mobilenet_log, cli)} == {"MEM001"}


@pytest.mark.parametrize(
    ("data", "named"),
    [
        ({"rules": {"MEM999": {}}}, "'MEM999'"),
        ({"rules": {"low-memory-reuse": {"warn_belw": 0.5}}}, "'warn_belw'"),
        ({"rules": {"MEM001": {"warn_below": "high"}}}, "warn_below"),
        ({"rules": {"MEM001": {"severity": "fatal"}}}, "'fatal'"),
        ({"select": ["NOPE"]}, "'NOPE'"),
        ({"target": "rk9999"}, "'rk9999'"),
        ({"sram": "lots"}, "'lots'"),
        ({"fail_on": "error"}, "'fail_on'"),
    ],
)
def test_invalid_config_names_the_culprit(data, named):
    with pytest.raises(ConfigError, match=named):
        config_from_mapping(data, "test.toml")


def test_options_are_typed_and_sizes_parsed():
    config = config_from_mapping({"rules": {"MEM002": {"budget_bytes": "2MiB"}, "MEM001": {"warn_below": 1}}})
    assert config.options_for(get_rule("MEM002")).budget_bytes == 2 * 1024 * 1024
    assert config.options_for(get_rule("MEM001")).warn_below == 1.0
    assert parse_size("320KiB") == 327680 and parse_size("10MB") == 10 * 1024 * 1024 and parse_size(64) == 64


def test_target_preset_fills_options_unless_set():
    @dataclasses.dataclass(frozen=True)
    class Opts:
        sram_bytes: int | None = None
        int8_channel_block: int | None = None

    rule = dataclasses.replace(get_rule("MEM001"), options_type=Opts)
    config = Config(target="rk3566")
    assert config.options_for(rule) == Opts(sram_bytes=None, int8_channel_block=8)
    assert Config(target="rk3588").with_overrides(sram="320KiB").options_for(rule).sram_bytes == 327680


def test_config_found_upward_from_the_log(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.logscope]\nfail-on = "warning"\nignore = ["MEM004"]\n')
    nested = tmp_path / "a" / "b"
    nested.mkdir(parents=True)
    (nested / "pyproject.toml").write_text("[project]\nname = 'x'\n")  # no [tool.logscope]: keep looking
    log = nested / "build.log"
    log.write_bytes(MOBILENET.read_bytes())
    assert find_config(log) == tmp_path / "pyproject.toml"
    config = resolve_config(None, log, cwd=nested)
    assert config.fail_on is Severity.warning and config.ignore == ("MEM004",)
    (nested / "logscope.toml").write_text('fail-on = "info"\n')
    assert resolve_config(None, log).fail_on is Severity.info


def test_explicit_config_file(tmp_path):
    path = tmp_path / "logscope.toml"
    path.write_text("[rules.MEM001]\nwarn_below = 0.5\n")
    assert load_config(path).options_for(get_rule("MEM001")).warn_below == 0.5
    with pytest.raises(ConfigError, match="not found"):
        resolve_config(tmp_path / "missing.toml")
    bad = tmp_path / "bad.toml"
    bad.write_text("this is = = not toml")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_config(bad)


def test_analyze_api(tmp_path):
    log = logscope.analyze(ARGB, Config())
    assert [f.code for f in log.findings] == ["BLD001"]
    assert log.summary()["findings"][0]["line"] == 8


def test_finding_init_takes_the_declared_fields_in_order_with_their_defaults() -> None:
    """`Finding.__init__` is written out (one `__dict__` update, for speed) beside the declared fields:
    both must name the same fields, in the same order, with the same defaults."""
    declared = dataclasses.fields(Finding)
    parameters = list(inspect.signature(Finding.__init__).parameters.values())[1:]
    assert [p.name for p in parameters] == [f.name for f in declared]
    for parameter, declared_field in zip(parameters, declared, strict=True):
        if declared_field.default is not dataclasses.MISSING:
            assert parameter.default == declared_field.default, declared_field.name
        elif declared_field.default_factory is not dataclasses.MISSING:
            made = Finding("m")
            assert getattr(made, declared_field.name) == declared_field.default_factory()
            assert getattr(made, declared_field.name) is not getattr(Finding("m"), declared_field.name)
        else:
            assert parameter.default is inspect.Parameter.empty, declared_field.name


def _find_config_by_paths(start: Path) -> Path | None:
    """The walk `find_config` made with `Path` objects (each parent resolved and joined as a Path)."""
    folder = start if start.is_dir() else start.parent
    for candidate in (folder.resolve(), *folder.resolve().parents):
        for name in ("logscope.toml", "pyproject.toml"):
            path = candidate / name
            if path.is_file() and (name == "logscope.toml" or "logscope" in path.read_text()):
                return path
    return None


def test_find_config_walks_the_resolved_folders_as_the_path_walk_did(tmp_path):
    """The text walk up the resolved folder finds what the walk over `Path.parents` found: through a
    symbolic link, from a file or a folder, past a pyproject.toml without [tool.logscope], a folder
    named like a config file, and nothing up to the root."""
    real = tmp_path / "real" / "deep" / "er"
    real.mkdir(parents=True)
    (tmp_path / "real" / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    (tmp_path / "real" / "deep" / "logscope.toml").mkdir()  # a folder: not a config file
    (tmp_path / "link").symlink_to(real)
    starts = [real, real / "build.log", tmp_path / "link" / "build.log", tmp_path / "link", tmp_path / "real"]
    for start in starts:
        assert find_config(start) == _find_config_by_paths(start), start
    (tmp_path / "logscope.toml").write_text("")
    for start in starts:
        assert find_config(start) == _find_config_by_paths(start) == tmp_path.resolve() / "logscope.toml"
    assert find_config(Path("/")) == _find_config_by_paths(Path("/"))
