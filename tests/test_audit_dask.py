"""`--engine dask`: the same per-file function on a dask.distributed LocalCluster (loopback) writes the same
rows as the local engine. Skipped when the `[dask]` extra is not installed."""

from __future__ import annotations

import pandas as pd
import pytest

from logscope.audit import AuditOptions, audit
from tests.conftest import FIXTURES, RKNN
from tests.test_audit import content

pytest.importorskip("distributed")


def test_dask_local_cluster_writes_the_same_rows_as_local(tmp_path):
    paths = [
        str(RKNN / "09-build-verbose-mobilenetv1-rv1106-tk2-1.5.2-simulator.log"),
        str(RKNN / "29-doc-rknpu2-sram-runtime-log-level3-rk3588.log"),
        str(RKNN / "41-tutorial-clip-npu-layer-const-table-abridged-tk2-2.3.2.log"),
        str(RKNN / "34-issue-rl-tk2-44-android-logcat-malloc-npu-rk3568.log"),
        str(FIXTURES / "synthetic" / "compact-summary-yolov5s.log"),
        str(FIXTURES / "mcu" / "11-stedgeai-v1-analyze-report-mnist-h750.txt"),
    ]
    bad = tmp_path / "binary.log"
    bad.write_bytes(bytes(range(256)) * 8)
    paths.append(str(bad))
    local_db, dask_db = tmp_path / "local.duckdb", tmp_path / "dask.duckdb"
    local = audit(paths, local_db, AuditOptions(jobs=1))
    remote = audit(paths, dask_db, AuditOptions(engine="dask", jobs=2))
    assert local.statuses == remote.statuses == {"ok": 6, "rejected": 1}
    assert local.rows == remote.rows
    a, b = content(local_db), content(dask_db)
    assert a.keys() == b.keys()
    for name in a:
        pd.testing.assert_frame_equal(a[name], b[name], obj=name)
    again = audit(paths, dask_db, AuditOptions(engine="dask", jobs=2))
    assert again.unchanged == len(paths) and again.audited == 0
