"""Rule configuration: which rules run, their options and severities, the target preset.

Read from `[tool.logscope]` in a `pyproject.toml` or from the top level of a `logscope.toml`, found
by walking up from the log's folder (then from the working folder), or given with `--config`:

```toml
[tool.logscope]
fail-on = "warning"            # info | warning | error
target = "rk3588"              # a preset from logscope.rules.targets
sram = "320KiB"                # MCU SRAM budget (overrides the preset's)
select = ["MEM", "ALC001"]     # codes, names or family prefixes; default: every rule
ignore = ["atypical-memory-breakdown"]

[tool.logscope.rules.MEM001]   # a code or a name
severity = "error"
warn_below = 0.8
```

Validation is strict: an unknown key, rule, option, severity or target is a `ConfigError` that names
it and where it came from (the CLI turns it into exit code 2). Every number is checked against its
range (`option_range`): finite (TOML has `nan` and `inf`), never negative, and at most a sane maximum,
so a threshold cannot silently switch a rule off and a 400-digit value cannot overflow later. The
file itself must be UTF-8 TOML of at most 1 MiB (a UTF-16 copy or a stray `\xff` byte is an error that
says so) and nest at most `MAX_TOML_DEPTH` tables deep.
"""

from __future__ import annotations

import dataclasses
import math
import os
import re
import tomllib
import types
import typing
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

from logscope.errors import ConfigError
from logscope.rules._common import PROVENANCE
from logscope.rules.finding import Severity
from logscope.rules.registry import RULES, Rule, get_rule, rules_matching
from logscope.rules.targets import PRESET_KEYS, TARGETS, target_preset

CONFIG_FILES = ("logscope.toml", "pyproject.toml")
TOP_LEVEL_KEYS = {"fail-on", "target", "sram", "select", "ignore", "rules"}
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(B|KB|KiB|K|MB|MiB|M|GB|GiB|G)?\s*$", re.IGNORECASE)
_UNITS = {"b": 1, "k": 1024, "kb": 1024, "kib": 1024, "m": 1024**2, "mb": 1024**2, "mib": 1024**2}
_UNITS |= {"g": 1024**3, "gb": 1024**3, "gib": 1024**3}

# Sane maxima: a memory size (an SRAM budget, a `*_bytes` option) of at most 1 TiB, a count of at most a
# billion, a ratio or rate of at most a million; shares (`*_share`) are fractions of 1.
MAX_SIZE_BYTES = 1 << 40
MAX_COUNT = 10**9
MAX_RATIO = 1e6
# Config files are small; a bigger one, or one nested deeper than this, is not a logscope config.
MAX_CONFIG_BYTES = 1 << 20
MAX_TOML_DEPTH = 32


def parse_size(text: str | int) -> int:
    """`"320KiB"` -> 327680. KB/MB are binary, as in the RKNN and MCU logs logscope reads.

    Sizes are whole bytes from 0 to `MAX_SIZE_BYTES` (1 TiB); the number is read exactly (a 400-digit
    value is out of range, not an overflow)."""
    accepted = f"accepted: 0 to {MAX_SIZE_BYTES} bytes, e.g. 320KiB, 10MiB, 65536"
    if isinstance(text, bool):
        raise ValueError(f"not a size: {text!r} ({accepted})")
    if isinstance(text, int):
        value = text
    else:
        match = _SIZE.match(str(text))
        if not match:
            raise ValueError(f"not a size: {_short(text)} ({accepted})")
        number, unit = Fraction(match.group(1)), (match.group(2) or "b").lower()
        value = round(number * _UNITS[unit])
    if not 0 <= value <= MAX_SIZE_BYTES:
        raise ValueError(f"{_short(text)} is out of range ({accepted})")
    return value


def _short(value: Any) -> str:
    """A value for a message: a 400-digit number is cut, not printed whole."""
    text = repr(value)
    return text if len(text) <= 40 else f"{text[:20]}...{text[-8:]} ({len(text)} characters)"


def option_range(name: str, kind: type) -> tuple[float, float]:
    """The accepted range of a rule option (and of a command-line number of the same kind)."""
    if name.endswith("_bytes"):
        return 0, MAX_SIZE_BYTES
    if kind is float:
        return (0.0, 1.0) if name.endswith("_share") else (0.0, MAX_RATIO)
    return 0, MAX_COUNT


def check_number(value: Any, where: str, minimum: float, maximum: float, *, integer: bool = False) -> Any:
    """`value` if it is a finite number (an integer with `integer`) in [minimum, maximum], else a
    `ConfigError` naming `where` (the file and key, or the option) and the accepted range."""
    accepted = f"accepted: {_bound(minimum)} to {_bound(maximum)}"
    kind = "an integer" if integer else "a number"
    ok_type = isinstance(value, int) if integer else isinstance(value, int | float)
    if isinstance(value, bool) or not ok_type:
        raise ConfigError(f"{where}: expected {kind}, got {_short(value)} ({accepted})")
    if isinstance(value, float) and not math.isfinite(value):
        raise ConfigError(f"{where}: {value!r} is not a finite number ({accepted})")
    if not minimum <= value <= maximum:
        raise ConfigError(f"{where}: {_short(value)} is out of range ({accepted})")
    return value


def _bound(value: float) -> str:
    return f"{value:g}" if isinstance(value, float) and not value.is_integer() else str(int(value))


@dataclass(frozen=True)
class RuleSettings:
    severity: Severity | None = None
    options: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Config:
    """Resolved settings; `Config()` runs every rule with its defaults."""

    select: tuple[str, ...] | None = None
    ignore: tuple[str, ...] = ()
    rules: Mapping[str, RuleSettings] = field(default_factory=dict)  # keyed by rule code
    target: str | None = None
    sram_bytes: int | None = None
    fail_on: Severity = Severity.error
    origin: str | None = None  # the file it came from, for messages
    sram_origin: str | None = None  # where sram_bytes came from: "--sram" or the file's `sram`

    def is_enabled(self, rule: Rule) -> bool:
        if self.select is not None and not any(rule in rules_matching(s) for s in self.select):
            return False
        return not any(rule in rules_matching(s) for s in self.ignore)

    def enabled_rules(self) -> list[Rule]:
        return [rule for rule in RULES if self.is_enabled(rule)]

    def preset(self) -> dict[str, Any]:
        values = target_preset(self.target) if self.target else {}
        if self.sram_bytes is not None:
            values["sram_bytes"] = self.sram_bytes
        return values

    def options_for(self, rule: Rule) -> Any:
        """The rule's OPTIONS: defaults, then the target preset, then the user's values. A field
        declared with `provenance("x")` receives where option `x` came from, for the finding to say."""
        settings = self.rules.get(rule.code, RuleSettings())
        names = {f.name for f in rule.option_fields()}
        preset = self.preset()
        values = {k: v for k, v in preset.items() if k in names and k in PRESET_KEYS and v is not None}
        sources = {k: self._preset_source(k) for k in values}
        sources |= {k: f"{self.origin or 'the configuration'} [rules.{rule.code}]" for k in settings.options}
        values.update(settings.options)
        for f in dataclasses.fields(rule.options_type):
            of = f.metadata.get(PROVENANCE)
            if of is None:
                continue
            if of in sources:
                values[f.name] = sources[of]
            elif self.target and of in preset:
                values[f.name] = (
                    f"logscope's built-in default; logscope.targets has no figure for {self.target}"
                )
            else:
                values[f.name] = "logscope's built-in default"
        return rule.options_type(**values)

    def _preset_source(self, key: str) -> str:
        if key == "sram_bytes" and self.sram_origin is not None:
            return self.sram_origin
        return f"target {self.target} (logscope.targets)"

    def severity_for(self, rule: Rule) -> Severity | None:
        settings = self.rules.get(rule.code)
        return settings.severity if settings else None

    def with_overrides(
        self,
        *,
        select: Sequence[str] | None = None,
        ignore: Sequence[str] | None = None,
        target: str | None = None,
        sram: str | None = None,
        fail_on: str | None = None,
    ) -> Config:
        """Command-line values on top: `--select` replaces the file's list, `--ignore` extends it."""
        changes: dict[str, Any] = {}
        if select:
            changes["select"] = tuple(_selectors(select, "--select"))
        if ignore:
            changes["ignore"] = self.ignore + tuple(_selectors(ignore, "--ignore"))
        if target is not None:
            changes["target"] = _target(target, "--target")
        if sram is not None:
            changes["sram_bytes"] = _size(sram, "--sram")
            changes["sram_origin"] = "--sram"
        if fail_on is not None:
            changes["fail_on"] = _severity(fail_on, "--fail-on")
        return dataclasses.replace(self, **changes)


def find_config(start: Path) -> Path | None:
    """The first `logscope.toml`, or `pyproject.toml` with a `[tool.logscope]` table, in `start` or
    a parent folder.

    The folder is resolved once and walked up as text (`os.path`): the library and the benchmarks ask
    this for every log, and resolving twice and a `Path` per candidate cost more than the stats."""
    folder = start if start.is_dir() else start.parent
    directory = str(folder.resolve())
    while True:
        for name in CONFIG_FILES:
            candidate = os.path.join(directory, name)
            if not os.path.isfile(candidate):
                continue
            path = Path(candidate)
            if name == "logscope.toml" or "logscope" in _tool_table(_read_toml(path), path):
                return path
        parent = os.path.dirname(directory)
        if parent == directory:  # the root
            return None
        directory = parent


def load_config(path: Path) -> Config:
    """Read and validate one configuration file."""
    data = _read_toml(path)
    if path.name == "pyproject.toml":
        table = _tool_table(data, path).get("logscope")
        if table is None:
            raise ConfigError(f"{path}: no [tool.logscope] table")
        if not isinstance(table, Mapping):
            raise ConfigError(f"{path}: tool.logscope must be a table, not {_short(table)}")
        return config_from_mapping(table, f"{path} [tool.logscope]")
    return config_from_mapping(data, str(path))


def resolve_config(explicit: Path | None, log_path: Path | None = None, cwd: Path | None = None) -> Config:
    """`--config` if given, else the file found upward from the log, else upward from `cwd`, else
    the defaults."""
    if explicit is not None:
        if not explicit.is_file():
            raise ConfigError(f"config file not found: {explicit}")
        return load_config(explicit)
    for start in (log_path, cwd or Path.cwd()):
        if start is None:
            continue
        found = find_config(start)
        if found is not None:
            return load_config(found)
    return Config()


def config_from_mapping(data: Mapping[str, Any], origin: str = "config") -> Config:
    """Validate a `[tool.logscope]`-shaped mapping into a `Config`."""
    unknown = sorted(set(data) - TOP_LEVEL_KEYS)
    if unknown:
        raise ConfigError(
            f"{origin}: unknown key {unknown[0]!r} (known: {', '.join(sorted(TOP_LEVEL_KEYS))})"
        )
    values: dict[str, Any] = {"origin": origin}
    if "fail-on" in data:
        values["fail_on"] = _severity(data["fail-on"], f"{origin}: fail-on")
    if "target" in data:
        values["target"] = _target(data["target"], f"{origin}: target")
    if "sram" in data:
        values["sram_bytes"] = _size(data["sram"], f"{origin}: sram")
        values["sram_origin"] = f"{origin}: sram"
    if "select" in data:
        values["select"] = tuple(
            _selectors(_string_list(data["select"], f"{origin}: select"), f"{origin}: select")
        )
    if "ignore" in data:
        values["ignore"] = tuple(
            _selectors(_string_list(data["ignore"], f"{origin}: ignore"), f"{origin}: ignore")
        )
    rules = data.get("rules", {})
    if not isinstance(rules, Mapping):
        raise ConfigError(f"{origin}: rules must be a table of rule tables")
    settings: dict[str, RuleSettings] = {}
    for key, table in rules.items():
        try:
            rule = get_rule(str(key))
        except KeyError:
            raise ConfigError(f"{origin}: unknown rule {key!r} (see `logscope rules`)") from None
        if not isinstance(table, Mapping):
            raise ConfigError(f"{origin}: rules.{key} must be a table")
        settings[rule.code] = _rule_settings(rule, table, f"{origin}: rules.{key}")
    values["rules"] = settings
    return Config(**values)


def _rule_settings(rule: Rule, table: Mapping[str, Any], where: str) -> RuleSettings:
    fields = {f.name: f for f in rule.option_fields()}
    hints = typing.get_type_hints(rule.options_type)
    severity = None
    options: dict[str, Any] = {}
    for raw_key, value in table.items():
        key = str(raw_key).replace("-", "_")
        if key == "severity":
            severity = _severity(value, f"{where}.severity")
            continue
        if key not in fields:
            known = ", ".join(["severity", *fields]) or "severity"
            raise ConfigError(
                f"{where}: unknown option {raw_key!r} for {rule.code} {rule.name} (known: {known})"
            )
        options[key] = _coerce(value, hints[key], key, f"{where}.{raw_key}")
    return RuleSettings(severity=severity, options=options)


def _tool_table(data: Mapping[str, Any], path: Path) -> Mapping[str, Any]:
    """`[tool]` of a pyproject.toml; `tool = "logscope"` (a string, not a table) is an error."""
    tool = data.get("tool", {})
    if not isinstance(tool, Mapping):
        raise ConfigError(f"{path}: tool must be a table ([tool.logscope]), not {_short(tool)}")
    return tool


def _coerce(value: Any, annotation: Any, name: str, where: str) -> Any:
    """Check a TOML value against an option's type; sizes (`*_bytes`) also accept `"10MiB"`."""
    args = typing.get_args(annotation)
    optional = type(None) in args
    base = next((a for a in args if a is not type(None)), annotation) if optional else annotation
    origin = typing.get_origin(base)
    try:
        if value is None and optional:
            return None
        if base is bool:
            if isinstance(value, bool):
                return value
        elif base is int:
            if name.endswith("_bytes") and isinstance(value, str | int) and not isinstance(value, bool):
                return _size(value, where)  # a TOML integer is bytes; a string needs its unit
            if isinstance(value, int) and not isinstance(value, bool):
                return check_number(value, where, *option_range(name, int), integer=True)
        elif base is float:
            if isinstance(value, int | float) and not isinstance(value, bool):
                return float(check_number(value, where, *option_range(name, float)))
        elif base is str:
            if isinstance(value, str):
                return value
        elif (origin is tuple or (isinstance(base, types.GenericAlias) and origin is tuple)) and (
            isinstance(value, list | tuple) and all(isinstance(v, str) for v in value)
        ):
            return tuple(value)
    except ValueError as exc:
        raise ConfigError(f"{where}: {exc}") from None
    raise ConfigError(f"{where}: expected {_type_name(annotation)}, got {value!r}")


def _type_name(annotation: Any) -> str:
    return getattr(annotation, "__name__", None) or str(annotation).replace("typing.", "")


def _read_toml(path: Path) -> dict[str, Any]:
    """The TOML at `path`; every way it can be wrong is a one-line `ConfigError` naming the file."""
    try:
        with path.open("rb") as handle:
            raw = handle.read(MAX_CONFIG_BYTES + 1)
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror or exc}") from None
    if len(raw) > MAX_CONFIG_BYTES:
        raise ConfigError(f"{path}: larger than {MAX_CONFIG_BYTES} bytes, not a logscope configuration")
    parsed = _PARSED.get(raw)
    if parsed is not None:  # the same bytes parse to the same tables (callers only read them)
        return parsed
    parsed = _parse_toml(path, raw)
    if len(_PARSED) >= 16:
        _PARSED.clear()
    _PARSED[raw] = parsed
    return parsed


# An audit resolves the configuration once per folder of logs: each walks up to the same
# pyproject.toml, read every time (a file may change) but parsed once per content.
_PARSED: dict[bytes, dict[str, Any]] = {}


def _parse_toml(path: Path, raw: bytes) -> dict[str, Any]:
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")) or (len(raw) > 1 and b"\x00" in raw[:2]):
        raise ConfigError(f"{path}: UTF-16 text; TOML files are UTF-8 (save it as UTF-8)")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise ConfigError(
            f"{path}: not UTF-8 (byte 0x{raw[exc.start]:02x} on line {line}); TOML files are UTF-8"
        ) from None
    depth = _nesting(text)
    if depth > MAX_TOML_DEPTH:
        raise ConfigError(f"{path}: nested {depth} levels deep (accepted: at most {MAX_TOML_DEPTH})")
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {_first_line(str(exc))}") from None
    except RecursionError:
        raise ConfigError(f"{path}: nested too deeply (accepted: at most {MAX_TOML_DEPTH} levels)") from None


def _nesting(text: str) -> int:
    """An upper bound of how deep arrays and inline tables nest (brackets counted outside nothing
    smarter than a running count: strings with brackets only make it larger, never smaller than the
    truth), so `a = [[[[...]]]]` is refused before the parser recurses through it."""
    depth = deepest = 0
    for char in text:
        if char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth = max(0, depth - 1)
    return deepest


def _first_line(text: str) -> str:
    lines = text.strip().splitlines()
    return lines[0] if lines else text


def _severity(value: Any, where: str) -> Severity:
    try:
        return Severity.parse(str(value))
    except ValueError as exc:
        raise ConfigError(f"{where}: {exc}") from None


def _target(value: Any, where: str) -> str:
    name = str(value).strip().lower()
    if name not in TARGETS:
        raise ConfigError(f"{where}: unknown target {value!r} (known: {', '.join(sorted(TARGETS))})")
    return name


SIZE_FORMS = "320KiB, 320KB, 1.5MiB, 2M or 327680B (KB/MB are binary)"


def _size(value: Any, where: str) -> int:
    """A budget: a string needs its unit, `320` alone is refused rather than read as 320 B."""
    try:
        size = parse_size(value)
    except (ValueError, TypeError) as exc:
        raise ConfigError(f"{where}: {exc}; write it as {SIZE_FORMS}") from None
    if isinstance(value, str) and re.fullmatch(r"\s*\d+(\.\d+)?\s*", value):
        raise ConfigError(f"{where}: {_short(value.strip())} has no unit; write it as {SIZE_FORMS}")
    return size


def _string_list(value: Any, where: str) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return list(value)
    raise ConfigError(f"{where}: expected a list of rule codes or names")


def _selectors(values: Iterable[str], where: str) -> list[str]:
    """Split comma-separated entries and check each names at least one rule."""
    out: list[str] = []
    for value in values:
        for part in str(value).split(","):
            part = part.strip()
            if not part:
                continue
            if not rules_matching(part):
                raise ConfigError(f"{where}: unknown rule {part!r} (see `logscope rules`)")
            out.append(part)
    return out
