"""Findings of an audit run read back from the store, for the CI formats (SARIF, GitHub, JUnit).

An audit skips files whose content is already stored, so the findings of a run are not all in memory:
they are read from the `findings` table through `paths` (the path as discovered) and `files` (the
content). Every path of the run is listed, a path without findings too, in the order discovered, and
each path's findings in the order the rules engine sorted them when they were stored.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence

import pyarrow as pa

from logscope.io import display_path
from logscope.render.ci import LogFindings
from logscope.rules import Finding, Severity

from .store import Store


def stored_findings(db: str | os.PathLike[str], paths: Sequence[str]) -> list[LogFindings]:
    """One `LogFindings` per path of `paths`, with the findings stored for the content it holds."""
    by_path: dict[str, list[Finding]] = {path: [] for path in paths}
    with Store(db, read_only=True) as store:
        con = store.con
        # Joined on the exact bytes of each path: names need not be UTF-8 (docs/audit.md).
        keys = pa.array([os.fsencode(path) for path in by_path], pa.binary())
        con.register("_run_paths", pa.table({"path_bytes": keys}))
        try:
            rows = con.execute(
                "SELECT p.path_bytes, f.build_index, f.code, f.name, f.severity, f.message, f.line, f.lines, "
                "f.subject, f.evidence, f.hint "
                "FROM _run_paths r JOIN paths p ON p.path_bytes = r.path_bytes "
                "JOIN files fi ON fi.sha256 = p.sha256 "
                "JOIN findings f ON f.file_id = fi.file_id "
                "ORDER BY f.file_id, f.rowid"
            ).fetchall()
        finally:
            con.unregister("_run_paths")
    for path_bytes, build, code, name, severity, message, line, lines, subject, evidence, hint in rows:
        path = os.fsdecode(bytes(path_bytes))
        by_path[path].append(
            Finding(
                message=message,
                line=line,
                lines=tuple(json.loads(lines)) if lines else (),
                subject=subject,
                evidence=json.loads(evidence) if evidence else {},
                hint=hint,
                severity=Severity.parse(severity) if severity else None,
                build_index=build,
                code=code,
                name=name,
                source=display_path(path),
            )
        )
    return [LogFindings(display_path(path), findings) for path, findings in by_path.items()]
