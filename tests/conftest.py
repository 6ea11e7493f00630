from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "fixtures"
RKNN = FIXTURES / "rknn"
MOBILENET = RKNN / "09-build-verbose-mobilenetv1-rv1106-tk2-1.5.2-simulator.log"


@pytest.fixture(scope="session")
def mobilenet_log():
    import logscope

    return logscope.parse(MOBILENET)
