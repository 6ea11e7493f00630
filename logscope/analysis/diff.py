"""Build-to-build comparison: what changed between two builds of the same model.

`diff_builds(old_log, new_log, old_index, new_index)` compares two builds (of two logs, or two builds of
one log) from their frames alone: versions and compiler settings, memory by category and reuse, layers
whose target changed (NPU -> CPU), fusions gained and lost, tensors whose native size changed, warnings and
errors that are new or gone, and findings when the logs carry them. `BuildDiff.regressions(pct)` lists the
memory figures that grew by more than `pct` percent (and the reuse rates that fell by more), for CI gates.

Matching: layers by their full name (RKNN's `Conv:/model.0/conv/Conv`), else by (id, op type); tensors by
(table, name); fusions by (section, rule, removed nodes); messages by (level, category, text with numbers
masked, so `size: 59187712` and `size: 60000000` are the same warning).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from logscope.errors import InputError
from logscope.figures import MEMORY_FIELDS, REUSE_FIELDS
from logscope.model import MEMORY_FIGURES, ParsedLog

DIFF_SCHEMA_VERSION = 1

# Build fields compared (those the builds frame has); the toolkit-upgrade case is a change in these.
VERSION_FIELDS = (
    "kind",
    "status",
    "toolkit_product",
    "toolkit_version",
    "compiler_version",
    "target_platform",
    "runtime_version",
    "driver_version",
    "api_version",
    "model_toolkit_version",
    "model_compiler_version",
)
# What --fail-on-regression gates on: growth of these (percent of the old value) ...
REGRESSION_FIELDS = (*MEMORY_FIGURES, "feature_pool_bytes")
# ... and a fall of these (percent of the old rate).
_NUMBER = re.compile(r"0x[0-9a-fA-F]+|\d+(?:\.\d+)?")
_BUILD_REF = re.compile(r"^(?P<path>.+)#(?P<index>-?\d+)$")


@dataclass(frozen=True)
class FigureChange:
    """One figure on both sides; `change_pct` is relative to the old value (None when it is 0 or missing)."""

    name: str
    old: Any
    new: Any

    @property
    def delta(self) -> float | int | None:
        if not (_numeric(self.old) and _numeric(self.new)):
            return None
        return self.new - self.old

    @property
    def change_pct(self) -> float | None:
        if not (_numeric(self.old) and _numeric(self.new)) or self.old == 0:
            return None
        return float((self.new - self.old) / abs(self.old) * 100.0)

    @property
    def changed(self) -> bool:
        return self.old != self.new

    def to_dict(self) -> dict[str, Any]:
        pct = self.change_pct
        return {
            "name": self.name,
            "old": self.old,
            "new": self.new,
            "delta": self.delta,
            "change_pct": None if pct is None else round(pct, 3),
        }


def _numeric(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


@dataclass(frozen=True)
class BuildSide:
    source: str
    build_index: int
    lines: tuple[int | None, int | None]


@dataclass
class BuildDiff:
    old: BuildSide
    new: BuildSide
    versions: list[FigureChange] = field(default_factory=list)  # every field either side has
    settings: list[FigureChange] = field(default_factory=list)  # changed compiler settings only
    memory: list[FigureChange] = field(default_factory=list)
    reuse: list[FigureChange] = field(default_factory=list)
    memory_source: tuple[str | None, str | None] = (None, None)
    layer_counts: tuple[int, int] = (0, 0)
    layer_targets: list[dict[str, Any]] = field(default_factory=list)
    layers_added: list[str] = field(default_factory=list)
    layers_removed: list[str] = field(default_factory=list)
    target_counts: dict[str, tuple[int, int]] = field(default_factory=dict)
    fusion_counts: list[FigureChange] = field(default_factory=list)  # per (section/rule), changed only
    fusions_gained: list[dict[str, Any]] = field(default_factory=list)
    fusions_lost: list[dict[str, Any]] = field(default_factory=list)
    tensor_counts: tuple[int, int] = (0, 0)
    tensors_resized: list[dict[str, Any]] = field(default_factory=list)
    tensors_added: list[str] = field(default_factory=list)
    tensors_removed: list[str] = field(default_factory=list)
    messages_new: list[dict[str, Any]] = field(default_factory=list)
    messages_gone: list[dict[str, Any]] = field(default_factory=list)
    findings_compared: bool = False
    findings_new: list[dict[str, Any]] = field(default_factory=list)
    findings_gone: list[dict[str, Any]] = field(default_factory=list)

    @property
    def version_changes(self) -> list[FigureChange]:
        return [c for c in self.versions if c.changed]

    def regressions(self, pct: float) -> list[FigureChange]:
        """Memory figures grown by more than `pct` % of the old value, reuse rates fallen by more."""
        out = [
            c
            for c in self.memory
            if c.name in REGRESSION_FIELDS and (p := c.change_pct) is not None and p > pct
        ]
        out += [c for c in self.reuse if (p := c.change_pct) is not None and p < -pct]
        return out


# ---------------------------------------------------------------------------------------- references


def split_build_ref(text: str, exists: Any = None) -> tuple[str, int | None]:
    """`"build.log#1"` -> ("build.log", 1); a path that exists as written is never split."""
    import os

    check = exists or os.path.exists
    match = _BUILD_REF.match(text)
    if match is None or check(text):
        return text, None
    return match.group("path"), int(match.group("index"))


def pick_build(log: ParsedLog, index: int | None) -> int:
    """The build index to compare: `index` (negative counts from the end), else the last build with
    memory figures, else the last build. Raises `InputError` when the log has no such build."""
    builds = log.frames["builds"]
    indexes = [int(i) for i in builds["build_index"].dropna()]
    if not indexes:
        raise InputError(f"{log.source}: no RKNN build or session in this log to compare")
    if index is not None:
        if index < 0 and -index <= len(indexes):
            return indexes[index]
        if index in indexes:
            return index
        raise InputError(f"{log.source}: no build #{index} (builds: {', '.join(map(str, indexes))})")
    with_memory = set(log.frames["memory"]["build_index"].dropna().astype(int))
    candidates = [i for i in indexes if i in with_memory]
    return (candidates or indexes)[-1]


# ---------------------------------------------------------------------------------------- the diff


def diff_builds(
    old_log: ParsedLog, new_log: ParsedLog, old_index: int | None = None, new_index: int | None = None
) -> BuildDiff:
    """Compare build `old_index` of `old_log` with build `new_index` of `new_log` (see `pick_build`)."""
    oi, ni = pick_build(old_log, old_index), pick_build(new_log, new_index)
    ob, nb = _row(old_log.frames["builds"], oi), _row(new_log.frames["builds"], ni)
    diff = BuildDiff(
        BuildSide(old_log.source, oi, (plain(ob.get("start_line")), plain(ob.get("end_line")))),
        BuildSide(new_log.source, ni, (plain(nb.get("start_line")), plain(nb.get("end_line")))),
    )
    for name in VERSION_FIELDS:
        if name in ob or name in nb:
            a, b = plain(ob.get(name)), plain(nb.get(name))
            if a is not None or b is not None:
                diff.versions.append(FigureChange(name, a, b))
    diff.settings = _settings(ob.get("settings"), nb.get("settings"))
    _memory(diff, old_log, new_log, oi, ni)
    _layers(diff, _build_rows(old_log, "layers", oi), _build_rows(new_log, "layers", ni))
    _fusions(diff, _build_rows(old_log, "fusions", oi), _build_rows(new_log, "fusions", ni))
    _tensors(diff, _build_rows(old_log, "tensors", oi), _build_rows(new_log, "tensors", ni))
    _messages(diff, _build_rows(old_log, "messages", oi), _build_rows(new_log, "messages", ni))
    if old_log.findings or new_log.findings:
        diff.findings_compared = True
        old_f = [f for f in old_log.findings if getattr(f, "build_index", None) in (None, oi)]
        new_f = [f for f in new_log.findings if getattr(f, "build_index", None) in (None, ni)]
        diff.findings_new, diff.findings_gone = _findings(old_f, new_f)
    return diff


def records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """A frame's rows as dicts with string keys (what the keyed comparisons and `layer_key` read)."""
    return [{str(k): v for k, v in row.items()} for row in frame.to_dict("records")]


def _row(frame: pd.DataFrame, index: int) -> dict[str, Any]:
    rows = records(frame[frame["build_index"] == index])
    return rows[0] if rows else {}


def _build_rows(log: ParsedLog, name: str, index: int) -> pd.DataFrame:
    frame = log.frames[name]
    return frame[frame["build_index"] == index]


def plain(value: Any) -> Any:
    """A cell as a plain Python value: NA and NaN are None, numpy scalars become Python numbers."""
    if value is None or value is pd.NA:
        return None
    if hasattr(value, "item") and not isinstance(value, str | bytes):
        value = value.item()
    if isinstance(value, float) and value != value:
        return None
    return value


def _settings(old: Any, new: Any) -> list[FigureChange]:
    a = old if isinstance(old, dict) else {}
    b = new if isinstance(new, dict) else {}
    return [FigureChange(str(k), a.get(k), b.get(k)) for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)]


def _memory(diff: BuildDiff, old_log: ParsedLog, new_log: ParsedLog, oi: int, ni: int) -> None:
    a = _build_rows(old_log, "memory", oi)
    b = _build_rows(new_log, "memory", ni)
    # The first row of a build is the one its summary reports; compare like with like when both logs
    # have a row from the same source (a build log's table vs a compact [Allocate] summary differ).
    rows_a, rows_b = records(a), records(b)
    pair: tuple[dict[str, Any], dict[str, Any]] | None = None
    for ra in rows_a:
        same = [rb for rb in rows_b if rb.get("source") == ra.get("source")]
        if same:
            pair = (ra, same[0])
            break
    if pair is None:
        pair = (rows_a[0] if rows_a else {}, rows_b[0] if rows_b else {})
    ma, mb = pair
    diff.memory_source = (plain(ma.get("source")), plain(mb.get("source")))
    for name in MEMORY_FIELDS:
        x, y = plain(ma.get(name)), plain(mb.get(name))
        if name == "activation_bytes" and (x, y) == (
            plain(ma.get("internal_bytes")),
            plain(mb.get("internal_bytes")),
        ):
            continue  # a build log's "activation" is its "internal" figure (docs/formats.md): shown once
        if x is not None or y is not None:
            diff.memory.append(FigureChange(name, x, y))
    for name in REUSE_FIELDS:
        x, y = plain(ma.get(name)), plain(mb.get(name))
        if x is not None or y is not None:
            diff.reuse.append(FigureChange(name, x, y))


def numbered(rows: Iterable[dict[str, Any]], key: Any) -> dict[tuple[Any, ...], dict[str, Any]]:
    """Rows by key; repeated keys get an occurrence number so that none is lost."""
    seen: Counter[Any] = Counter()
    out = {}
    for row in rows:
        k = key(row)
        out[(k, seen[k])] = row
        seen[k] += 1
    return out


def layer_key(row: dict[str, Any]) -> str:
    name = plain(row.get("full_name"))
    return str(name) if name else f"#{plain(row.get('layer_id'))} {plain(row.get('op_type'))}"


def _layers(diff: BuildDiff, old: pd.DataFrame, new: pd.DataFrame) -> None:
    a = numbered(records(old), layer_key)
    b = numbered(records(new), layer_key)
    diff.layer_counts = (len(old), len(new))
    targets = sorted({str(t) for t in pd.concat([old["target"], new["target"]]).dropna()})
    diff.target_counts = {
        t: (int((old["target"] == t).sum()), int((new["target"] == t).sum())) for t in targets
    }
    for key in a.keys() & b.keys():
        ra, rb = a[key], b[key]
        ta, tb = plain(ra.get("target")), plain(rb.get("target"))
        if ta is not None and tb is not None and ta != tb:
            diff.layer_targets.append(
                {
                    "layer": key[0],
                    "op_type": plain(rb.get("op_type")),
                    "old_target": ta,
                    "new_target": tb,
                    "old_line": plain(ra.get("line")),
                    "new_line": plain(rb.get("line")),
                }
            )
    # Moves to the CPU first (the costly direction), then by line in the new log.
    diff.layer_targets.sort(key=lambda d: (str(d["new_target"]).upper() != "CPU", d["new_line"] or 0))
    diff.layers_added = sorted(k[0] for k in b.keys() - a.keys())
    diff.layers_removed = sorted(k[0] for k in a.keys() - b.keys())


def _fusion_key(row: dict[str, Any]) -> tuple[Any, ...]:
    nodes = row.get("removed_nodes")
    nodes = tuple(nodes) if isinstance(nodes, list | tuple) else ()
    return (plain(row.get("section")), plain(row.get("rule")), nodes)


def _fusions(diff: BuildDiff, old: pd.DataFrame, new: pd.DataFrame) -> None:
    a = Counter(_fusion_key(r) for r in records(old))
    b = Counter(_fusion_key(r) for r in records(new))

    def listed(counter: Counter[tuple[Any, ...]]) -> list[dict[str, Any]]:
        return [
            {"section": s, "rule": r, "removed_nodes": list(n), "count": c}
            for (s, r, n), c in sorted(
                counter.items(), key=lambda kv: (str(kv[0][0]), str(kv[0][1]), kv[0][2])
            )
        ]

    diff.fusions_gained = listed(b - a)
    diff.fusions_lost = listed(a - b)
    rules_a = Counter(f"{s}/{r}" for (s, r, _n), c in a.items() for _ in range(c))
    rules_b = Counter(f"{s}/{r}" for (s, r, _n), c in b.items() for _ in range(c))
    diff.fusion_counts = [
        FigureChange(k, rules_a.get(k, 0), rules_b.get(k, 0))
        for k in sorted(set(rules_a) | set(rules_b))
        if rules_a.get(k, 0) != rules_b.get(k, 0)
    ]


def _tensor_bytes(row: dict[str, Any]) -> int | None:
    value = plain(row.get("native_bytes"))
    return value if value is not None else plain(row.get("size_bytes"))


def _tensors(diff: BuildDiff, old: pd.DataFrame, new: pd.DataFrame) -> None:
    def key(row: dict[str, Any]) -> tuple[Any, Any]:
        return (plain(row.get("table")), plain(row.get("name")))

    a = numbered(records(old), key)
    b = numbered(records(new), key)
    diff.tensor_counts = (len(old), len(new))
    for k in a.keys() & b.keys():
        ra, rb = a[k], b[k]
        sa, sb = _tensor_bytes(ra), _tensor_bytes(rb)
        if sa is None or sb is None or sa == sb:
            continue
        diff.tensors_resized.append(
            {
                "table": k[0][0],
                "name": k[0][1],
                "old_bytes": sa,
                "new_bytes": sb,
                "delta_bytes": sb - sa,
                "old_native_shape": plain(ra.get("native_shape")) or plain(ra.get("orig_shape")),
                "new_native_shape": plain(rb.get("native_shape")) or plain(rb.get("orig_shape")),
                "old_line": plain(ra.get("line")),
                "new_line": plain(rb.get("line")),
            }
        )
    # A feature tensor is listed once per consumer: one entry per distinct change.
    unique = {(d["table"], d["name"], d["old_bytes"], d["new_bytes"]): d for d in diff.tensors_resized}
    diff.tensors_resized = sorted(unique.values(), key=lambda d: (-abs(d["delta_bytes"]), str(d["name"])))
    diff.tensors_added = sorted(f"{k[0][0]}:{k[0][1]}" for k in b.keys() - a.keys())
    diff.tensors_removed = sorted(f"{k[0][0]}:{k[0][1]}" for k in a.keys() - b.keys())


def _message_key(row: dict[str, Any]) -> tuple[Any, ...]:
    text = " ".join(str(plain(row.get("message")) or "").split())
    return (plain(row.get("level")), plain(row.get("category")), _NUMBER.sub("#", text))


def _messages(diff: BuildDiff, old: pd.DataFrame, new: pd.DataFrame) -> None:
    def relevant(frame: pd.DataFrame) -> list[dict[str, Any]]:
        return [r for r in records(frame) if plain(r.get("level")) in ("W", "E")]

    a, b = relevant(old), relevant(new)
    keys_a, keys_b = {_message_key(r) for r in a}, {_message_key(r) for r in b}

    def listed(rows: list[dict[str, Any]], other: set[tuple[Any, ...]]) -> list[dict[str, Any]]:
        out, seen = [], set()
        for r in rows:
            k = _message_key(r)
            if k in other or k in seen:
                continue
            seen.add(k)
            out.append(
                {
                    "level": plain(r.get("level")),
                    "category": plain(r.get("category")),
                    "message": plain(r.get("message")),
                    "line": plain(r.get("line")),
                }
            )
        return out

    diff.messages_new = listed(b, keys_a)
    diff.messages_gone = listed(a, keys_b)


def _findings(old: list[Any], new: list[Any]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    def key(f: Any) -> tuple[Any, ...]:
        return (f.code, f.subject)

    def listed(rows: list[Any], other: set[tuple[Any, ...]]) -> list[dict[str, Any]]:
        out, seen = [], set()
        for f in rows:
            if key(f) in other or key(f) in seen:
                continue
            seen.add(key(f))
            d = f.to_dict()
            out.append({k: d.get(k) for k in ("code", "name", "severity", "subject", "message", "line")})
        return out

    keys_old, keys_new = {key(f) for f in old}, {key(f) for f in new}
    return listed(new, keys_old), listed(old, keys_new)
