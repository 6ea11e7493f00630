"""Regenerate tests/golden/*.json from fixtures/rknn/*.log; a reviewer reads the diff before commit.

MCU traces (fixtures/mcu/*.txt and fixtures/synthetic/heap-trace-*.txt) go to tests/golden/mcu/.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import logscope  # noqa: E402


def golden_summary(path: Path) -> dict[str, object]:
    summary = logscope.parse(path).summary()
    summary["source"] = path.name  # independent of where the checkout lives
    return summary


def mcu_fixtures() -> list[Path]:
    """The MCU traces with a golden summary in tests/golden/mcu/."""
    return sorted((ROOT / "fixtures" / "mcu").glob("*.txt")) + sorted(
        (ROOT / "fixtures" / "synthetic").glob("heap-trace-*.txt")
    )


def main() -> None:
    out = ROOT / "tests" / "golden"
    out.mkdir(exist_ok=True)
    fixtures = sorted((ROOT / "fixtures" / "rknn").glob("*.log")) + sorted(
        (ROOT / "fixtures" / "synthetic").glob("*.log")
    )
    for path in fixtures:
        target = out / f"{path.stem}.json"
        target.write_text(
            json.dumps(golden_summary(path), indent=1, ensure_ascii=False, sort_keys=True) + "\n"
        )
        print(target.relative_to(ROOT))
    mcu_out = out / "mcu"
    mcu_out.mkdir(exist_ok=True)
    for path in mcu_fixtures():
        target = mcu_out / f"{path.stem}.json"
        target.write_text(
            json.dumps(golden_summary(path), indent=1, ensure_ascii=False, sort_keys=True) + "\n"
        )
        print(target.relative_to(ROOT))


if __name__ == "__main__":
    main()
