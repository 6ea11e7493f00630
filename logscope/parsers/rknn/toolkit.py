"""The Python toolkit logger (`W build: ...`): banner, build start and end, target, optimiser results,
progress bars, the WARN summary and the quantisation outlier table."""

from __future__ import annotations

import re
from collections.abc import Sequence

from logscope.parsers.grammar import Fields
from logscope.parsers.rknn.bulk import joined_run
from logscope.parsers.rknn.compiler import CompilerOutput
from logscope.parsers.rknn.state import _ROW_COLUMNS
from logscope.parsers.rknn.table_runs import RowReader, optional_groups_as_branches
from logscope.parsers.rknn.values import _parse_nodes

# The node lists of a fusion result as the toolkit prints them (`remove node = ['a', 'b'], add node = ['c']`,
# a `remove node` list alone, or a bare `['a']`), quotes without escapes, `', '` between names: read by one
# match and two splits.
_PLAIN_NAMES = r"((?:'[^'\\\n]*'(?:, '[^'\\\n]*')*)?)"
_PLAIN_NODES = re.compile(
    rf"remove node = \[{_PLAIN_NAMES}\](?:, add node = \[{_PLAIN_NAMES}\])?|\[{_PLAIN_NAMES}\]"
)


def _nodes(body: str) -> tuple[list[str], list[str]] | None:
    """`values._parse_nodes(body)`, the lists printed plainly read without its general reading (5 us a
    line, half of a fusion result's cost; the largest real compiler log prints 92 per build, a fifth of
    them a `remove node` list with no `add node` list after it).

    Exact: on a body this regex matches whole, the general reading takes the same clauses (a `remove
    node` list, then an `add node` list if any; or one bare list: removed nodes) and each name is a
    quoted string with no quote or backslash inside, so the names are the text between the list's first
    and last quotes split at `', '` (which no name can hold). Any other body goes to `_parse_nodes`."""
    m = _PLAIN_NODES.fullmatch(body)
    if m is None:
        return _parse_nodes(body)
    removed, added, bare = m.groups()
    if bare is not None:
        return (bare[1:-1].split("', '") if bare else []), []
    return (removed[1:-1].split("', '") if removed else []), (added[1:-1].split("', '") if added else [])


# Fusion results read as one run at most (a run goes on from where one stops).
_FUSION_RUN = 1024
# Where a `fusions` row (a list in the schema's column order) holds its added nodes.
_ADDED_NODES = _ROW_COLUMNS["fusions"].index("added_nodes")

_TQDM_PATTERN = (
    r"(?P<stage>[A-Z][A-Za-z]*(?: \d+)?) ?: +(?P<pct>\d+)%\|[^|]*\| *(?P<done>\d+)/(?P<total>\d+)"
    r"(?: \[[^\]]*?(?:, *(?P<rate>[\d.]+)(?P<unit>it/s|s/it))?\])?"
)
# Its optional groups as branches (`table_runs.optional_groups_as_branches`: the same regex, a fifth
# cheaper on a bar's line, where the rate's group was entered at each character of the lazy bracket).
_TQDM_FRAME = re.compile(optional_groups_as_branches(_TQDM_PATTERN))
# Its groups, in the order `_progress` reads them (one `group` call).
_TQDM_FIELDS = ("stage", "pct", "done", "total", "rate", "unit")

# accuracy_analysis cells: `cos | euc` pairs, simulator entire / single, then runtime entire / single.
_ACCURACY_PAIR = re.compile(r"(-?\d+(?:\.\d+)?) \| (-?\d+(?:\.\d+)?)")
_ACCURACY_COLUMNS = (
    "entire_cos",
    "entire_euc",
    "single_cos",
    "single_euc",
    "runtime_entire_cos",
    "runtime_entire_euc",
    "runtime_single_cos",
    "runtime_single_euc",
)


class ToolkitLogger(CompilerOutput):
    """Lines of the Python toolkit logger."""

    def _banner(self, f: Fields, line: str, number: int) -> None:
        self._structural()
        if f.get("level") == "E" and self.builds:
            return  # 2.x echoes the banner at E after a WARN summary: same build, not an error
        build = self._segment("TOOLKIT_BANNER", number)
        if (
            build.toolkit_version and build.toolkit_version != f["version"]
        ):  # another toolkit: another process
            build = self._new_build(number, inherit=False)
        build.toolkit_product, build.toolkit_version = f["product"], f["version"]

    def _build_start(self, f: Fields, line: str, number: int) -> None:
        self._structural()
        build = self._segment("BUILD_START", number)
        build.build_start_line = number

    def _build_done(self, f: Fields, line: str, number: int) -> None:
        self._structural()
        build = self._current(number)
        build.done_line = number
        self.table = None

    def _target(self, f: Fields, line: str, number: int) -> None:
        self._structural()
        build = self._current(number)
        build.target_platform = (f.get("target") or f.get("target2") or "").lower() or None

    def _warn_summary(self, f: Fields, line: str, number: int) -> None:
        self._structural()
        count = f.get("count") or f.get("count1")
        self._current(number).warn_summary_count = int(count) if count else None

    def _fuse_header(self, f: Fields, line: str, number: int) -> None:
        self._structural()
        self._current(number)
        self.fuse_section = (f["section"] or "").replace(" ", "_")

    def _fuse_result(self, f: Fields, line: str, number: int) -> None:
        self._fuse_results((f["rule"],), (f["body"] or "",), (line,), (number,))

    def _fuse_results(
        self,
        rules: Sequence[str | None],
        bodies: Sequence[str],
        lines: Sequence[str],
        numbers: Sequence[int],
    ) -> None:
        """Fusion results in line order: one (`classify`'s path) or a run of them read joined
        (`_fusion_run`). Rows are lists in the `fusions` schema's column order (`_ROW_COLUMNS`); the
        last one stays open for an `add node` list wrapped onto the next line (`_fuse_cont`)."""
        append = self.rows["fusions"].append
        section = self.fuse_section or "fuse_ops"
        acted_on = section == "quant_optimizer"  # `adjust_relu: [...]` lists the nodes the rule acted on
        row = None
        index = -1  # the build's, once a row is read (the first opens one if there is none)
        read = 0
        for rule, body, line, number in zip(rules, bodies, lines, numbers, strict=True):
            parsed = _nodes(body)
            if parsed is None:
                self._unparsed(number, line, "malformed node list")
                continue
            if index < 0:
                index = self._current(number).index
            read += 1
            removed, added = parsed
            if acted_on:
                removed, added = removed + added, []
            row = [index, section, rule, removed, added, number]
            append(row)
        self.counts["structural"] += read
        if row is not None:
            self.open_fusion = row

    def _fusion_run(self, read: RowReader, lines: list[str], numbers: list[int], start: int) -> int:
        """Fusion results from `lines[start]` on, right after one the ordinary path has read (`bulk.
        fusion_reader`, which takes a line exactly when `classify` reads it as one): how many lines it
        took. Each is what `feed` and `_fuse_result` make of it, in order: no cut perf row can be
        waiting (the first line flushed it), and the lines change no context the loop reads."""
        if self.wrapped_perf is not None:
            return 0
        rows = joined_run(read, lines, start, _FUSION_RUN)
        if not rows:
            return 0
        _, rules, bodies = zip(*rows, strict=True)
        stop = start + len(rows)
        self._fuse_results(rules, bodies, lines[start:stop], numbers[start:stop])
        self.last_fed = numbers[stop - 1]
        self.open_message = None
        return len(rows)

    def _fuse_cont(self, f: Fields, line: str, number: int) -> None:
        parsed = _nodes(f["body"] or "")
        if parsed is None or self.open_fusion is None:
            self._unparsed(number, line, "add-node list without a fusion rule before it")
            return
        self._structural()
        self.open_fusion[_ADDED_NODES] = self.open_fusion[_ADDED_NODES] + parsed[1]

    def _fold_remove(self, f: Fields, line: str, number: int) -> None:
        parsed = _nodes(f["body"] or "")
        if parsed is None:
            self._unparsed(number, line, "malformed node list")
            return
        self._structural()
        build = self._current(number)
        self.rows["fusions"].append(
            [build.index, "fold_constant", "fold_constant", parsed[0] + parsed[1], [], number]
        )

    def _progress(self, f: Fields, line: str, number: int) -> None:
        """tqdm bars are counted as noise; only the final frame of each bar is kept (stage timings)."""
        self.counts["noise"] += 1
        self.open_message = None
        frames = list(_TQDM_FRAME.finditer(line))
        if not frames:
            return
        stage, percent, done, total, rate_text, unit = frames[-1].group(*_TQDM_FIELDS)
        rate = float(rate_text) if rate_text else None
        if rate and unit == "s/it":
            rate = 1.0 / rate if rate else None
        builds = self.builds
        row = {
            "build_index": (builds[-1] if builds else self._current(number)).index,
            "stage": stage,
            "percent": int(percent),
            "done": int(done),
            "total": int(total),
            "rate_per_s": rate,
            "line": number,
        }
        prev = self.last_progress
        if (
            prev is not None
            and prev["stage"] == stage
            and prev["percent"] < 100
            and prev["line"] >= number - 1
        ):
            prev.update(row)  # the 0% and 100% frames of one bar on separate lines [45]
        else:
            self.rows["progress"].append(row)
            self.last_progress = row

    def _accuracy_row(self, f: Fields, line: str, number: int) -> None:
        if self.table != "accuracy":
            self._other(f, line, number)
            return
        values = [float(v) for pair in _ACCURACY_PAIR.findall(f.get("values") or "") for v in pair]
        if f.get("values") and len(values) not in (4, 8):
            self._unparsed(number, line, "accuracy row with an unexpected number of values")
            return
        self._structural()
        row: dict[str, object] = {
            "build_index": self._current(number).index,
            "op_type": f["op_type"],
            "layer_name": f["name"],
            "line": number,
        }
        # A fused member (`[Conv] Conv3_o0` before its `[Relu]`) prints no values: its cells stay NA.
        row.update(zip(_ACCURACY_COLUMNS, values, strict=False))
        self.rows["accuracy"].append(row)

    def _outlier_row(self, f: Fields, line: str, number: int) -> None:
        if self.table != "outlier":
            self._other(f, line, number)
            return
        self._structural()
        build = self._current(number)
        self.rows["outliers"].append(
            {
                "build_index": build.index,
                "const_name": f["name"],
                "abs_mean": float(f["abs_mean"] or "nan"),
                "abs_std": float(f["abs_std"] or "nan"),
                "outlier_value": float(f["outlier"] or "nan"),
                "line": number,
            }
        )
