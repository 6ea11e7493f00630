"""Python's cyclic garbage collector, paused while one log is read, checked and stored.

Reading a log allocates hundreds of thousands of containers that stay alive (row tuples, lists, frames'
object cells) and makes almost no cyclic garbage. With the collector on, every 700 allocations start a
young collection that walks what was allocated since, every tenth of those a middle one, and now and then a
full one that walks every object of the process (pandas, pyarrow and numpy included). Paused for one log,
each object is examined at most once, by the first young collection after the pause; what a log leaves
behind is the log itself, freed by reference counting.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collector_paused() -> Iterator[None]:
    """The collector off inside the block, and back as it was after it (a nested pause leaves it off)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
