"""Writing frames to disk for users who want the raw tables (pandas, DuckDB, a spreadsheet)."""

from __future__ import annotations

import json
from pathlib import Path

from logscope.model import ParsedLog
from logscope.outputs import frame_file


def write_frames(log: ParsedLog, folder: Path, fmt: str) -> list[Path]:
    """Write every frame as `<name>.parquet` or `<name>.csv` into `folder`; returns the paths."""
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for name, frame in log.frames.items():
        out = frame.copy()
        for column in out.columns:
            if out[column].dtype == object:  # lists and dicts: JSON text keeps CSV and Parquet simple
                out[column] = out[column].map(
                    lambda v: None if v is None else json.dumps(v, ensure_ascii=False)
                )
        path = frame_file(folder, name, fmt)
        if fmt == "csv":
            out.to_csv(path, index=False)
        else:
            out.to_parquet(path, index=False)
        written.append(path)
    return written
