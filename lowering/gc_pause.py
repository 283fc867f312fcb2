"""``cyclic_gc_paused()``: Python's cyclic garbage collector off while a pass
rewrites a module.

The IR is one large cyclic graph, and a rewrite allocates enough objects to
trigger full collections that scan all of it: a quarter of convert-to-emitc's
time on the larger models, and 3.7 of lower-ops' 14 CPU s on a
10,000-operator graph (``benchmarks/compile_time.py``). Reference counting
still frees what is not cyclic; cyclic garbage waits for the next
collection after the pass. Nests: an inner pause leaves the collector as the
outer one wants it.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def cyclic_gc_paused() -> Iterator[None]:
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
