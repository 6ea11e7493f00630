"""Imported once by the local pool's fork server: workers forked from it start with logscope imported and
its grammars compiled, instead of paying ~2 s each (and again for every new pool).

When the auditing process exits, the server exits too (Python's fork server raises SystemExit once its
last client is gone), and the interpreter's finalization then runs full collections over everything this
import loaded (pandas, pyarrow, numpy, Lark) and frees it piece by piece: 0.13-0.15 s of elapsed time
after the auditing process had ended, which a caller reading the command's output through a pipe waits
for (the server holds the same stderr). Frozen at exit (`gc.freeze`), as the `logscope` command freezes
its own objects, those collections find nothing to walk. The server holds no file, socket or database
whose finalizer would have to run: its workers, forked from it, leave through `os._exit` and never run
this handler.
"""

from __future__ import annotations

import atexit
import contextlib
import gc

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

atexit.register(gc.freeze)
