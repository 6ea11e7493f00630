"""Imported once by the local pool's fork server: workers forked from it start with logscope imported and
its grammars compiled, instead of paying ~2 s each (and again for every new pool)."""

from __future__ import annotations

import contextlib

from logscope.api import parse_text
from logscope.audit import worker  # noqa: F401 - the module the workers run
from logscope.io import decode_bytes

_WARM_UP = b"""W __init__: rknn-toolkit2 version: 1.5.2+b642f30c
I rknn building ...
I RKNN: librknnc version: 1.5.2 (c6b7b351a@2023-08-23T15:34:44)
D RKNN: [15:13:15.953] Total Weight Memory Size: 4447296
D RKNN: [15:13:15.953] Total Internal Memory Size: 1756160
I rknn buiding done.
"""

# Compile the grammars now; should this fail, the workers only compile them themselves.
with contextlib.suppress(Exception):
    parse_text(decode_bytes(_WARM_UP, "<warm-up>"))
