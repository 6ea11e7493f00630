"""`trend` compares builds of one model by default: a different model is another series, never a
regression of the first."""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path

from logscope.audit import AuditOptions, audit, compute_trend
from tests.conftest import MOBILENET, RKNN

R29 = RKNN / "29-doc-rknpu2-sram-runtime-log-level3-rk3588.log"


def _write(path: Path, text: str, day: int) -> None:
    path.write_text(text)
    stamp = dt.datetime(2024, 5, day, tzinfo=dt.UTC).timestamp()
    os.utime(path, (stamp, stamp))


def test_trend_groups_by_model(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    text = MOBILENET.read_text().replace("2023-12-22 15:13:10", "# no date here")
    _write(logs / "a-mobilenet.log", text, 1)
    _write(logs / "b-other-model.log", R29.read_text(), 2)  # a different model, 2,157,568 B
    grown = text.replace("Total Internal Memory Size: 1756160", "Total Internal Memory Size: 1931776")
    _write(logs / "c-mobilenet.log", grown + "\n", 3)
    db = tmp_path / "a.duckdb"
    audit([str(logs)], db, AuditOptions())
    by_model = compute_trend(db)
    assert by_model.by == "model"
    groups = by_model.points.groupby("group")["path"].apply(lambda p: sorted(Path(x).name for x in p))
    assert sorted(groups.tolist()) == [["a-mobilenet.log", "c-mobilenet.log"], ["b-other-model.log"]]
    (regression,) = by_model.regressions.itertuples(index=False)
    assert Path(regression.path).name == "c-mobilenet.log" and regression.previous_value == 1756160
    one_group = compute_trend(db, by="all")
    assert one_group.points["group"].nunique() == 1
    # One series across models: the other model is compared with mobilenet (what `--by all` asks).
    assert Path(one_group.points.iloc[1]["path"]).name == "b-other-model.log"
