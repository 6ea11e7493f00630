"""Regenerate tests/rules/golden_findings.json: every rule over every fixture (`make golden-findings`).

Review the diff: each finding must be one you would defend to the log's author (see
tests/rules/GOLDEN_REVIEW.md); when one is not, tune the rule, never this file.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

import logscope  # noqa: E402
from logscope.rules import Config  # noqa: E402

GOLDEN = ROOT / "tests" / "rules" / "golden_findings.json"


def fixtures() -> list[Path]:
    """Every real log (RKNN and MCU) and every synthetic one."""
    found = [
        p
        for folder in ("rknn", "mcu", "synthetic")
        for p in sorted((ROOT / "fixtures" / folder).iterdir())
        if p.suffix in (".log", ".txt")
    ]
    return found


def findings_of(path: Path) -> list[dict[str, Any]]:
    """Default rules and options (no configuration file): what a user gets out of the box."""
    log = logscope.analyze(path, Config())
    out = []
    for finding in log.findings:
        data = finding.to_dict()
        data.pop("source")  # independent of where the checkout lives
        out.append(data)
    return json.loads(json.dumps(out))


def main() -> None:
    golden = {path.name: findings_of(path) for path in fixtures()}
    GOLDEN.write_text(
        json.dumps(golden, indent=1, ensure_ascii=False, sort_keys=True) + "\n", encoding="utf-8"
    )
    total = sum(len(v) for v in golden.values())
    logs = sum(1 for v in golden.values() if v)
    print(f"{GOLDEN.relative_to(ROOT)}: {total} findings over {logs} of {len(golden)} logs")


if __name__ == "__main__":
    main()
