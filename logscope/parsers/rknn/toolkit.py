"""The Python toolkit logger (`W build: ...`): banner, build start and end, target, optimiser results,
progress bars, the WARN summary and the quantisation outlier table."""

from __future__ import annotations

import re

from logscope.parsers.grammar import Fields
from logscope.parsers.rknn.compiler import CompilerOutput
from logscope.parsers.rknn.values import _parse_nodes

_TQDM_FRAME = re.compile(
    r"(?P<stage>[A-Z][A-Za-z]*(?: \d+)?) ?: +(?P<pct>\d+)%\|[^|]*\| *(?P<done>\d+)/(?P<total>\d+)"
    r"(?: \[[^\]]*?(?:, *(?P<rate>[\d.]+)(?P<unit>it/s|s/it))?\])?"
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
        parsed = _parse_nodes(f["body"] or "")
        if parsed is None:
            self._unparsed(number, line, "malformed node list")
            return
        self._structural()
        build = self._current(number)
        removed, added = parsed
        section = self.fuse_section or "fuse_ops"
        if section == "quant_optimizer":  # `adjust_relu: [...]` lists the nodes the rule acted on
            removed, added = parsed[0] + parsed[1], []
        row = {
            "build_index": build.index,
            "section": section,
            "rule": f["rule"],
            "removed_nodes": removed,
            "added_nodes": added,
            "line": number,
        }
        self.rows["fusions"].append(row)
        self.open_fusion = row

    def _fuse_cont(self, f: Fields, line: str, number: int) -> None:
        parsed = _parse_nodes(f["body"] or "")
        if parsed is None or self.open_fusion is None:
            self._unparsed(number, line, "add-node list without a fusion rule before it")
            return
        self._structural()
        self.open_fusion["added_nodes"] = self.open_fusion["added_nodes"] + parsed[1]

    def _fold_remove(self, f: Fields, line: str, number: int) -> None:
        parsed = _parse_nodes(f["body"] or "")
        if parsed is None:
            self._unparsed(number, line, "malformed node list")
            return
        self._structural()
        build = self._current(number)
        self.rows["fusions"].append(
            {
                "build_index": build.index,
                "section": "fold_constant",
                "rule": "fold_constant",
                "removed_nodes": parsed[0] + parsed[1],
                "added_nodes": [],
                "line": number,
            }
        )

    def _progress(self, f: Fields, line: str, number: int) -> None:
        """tqdm bars are counted as noise; only the final frame of each bar is kept (stage timings)."""
        self.counts["noise"] += 1
        self.open_message = None
        frames = list(_TQDM_FRAME.finditer(line))
        if not frames:
            return
        last = frames[-1]
        rate = float(last["rate"]) if last["rate"] else None
        if rate and last["unit"] == "s/it":
            rate = 1.0 / rate if rate else None
        build = self._current(number)
        row = {
            "build_index": build.index,
            "stage": last["stage"],
            "percent": int(last["pct"]),
            "done": int(last["done"]),
            "total": int(last["total"]),
            "rate_per_s": rate,
            "line": number,
        }
        prev = self.last_progress
        if (
            prev is not None
            and prev["stage"] == row["stage"]
            and prev["percent"] < 100
            and prev["line"] >= number - 1
        ):
            prev.update(row)  # the 0% and 100% frames of one bar on separate lines [45]
        else:
            self.rows["progress"].append(row)
            self.last_progress = row

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
