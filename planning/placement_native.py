"""``placement.decode`` in C (``placement_decode.c``), built on first use.

The same placements as the Python function (tests compare them), without
listing every conflicting pair: the C side finds a buffer's conflicts from
the live intervals (a segment tree over the start times) and the explicit
conflicts, so a decode of a dense problem costs O(n log n) memory and C
time per conflict instead of Python time. Built and cached like the search
(``minimalloc_native.compiled``); :func:`native_decoder` returns ``None``
without a compiler (or with ``USMP_NATIVE_PLANNER=0``), or when a value
would overflow the C side's 64-bit arithmetic: ``placement.decode`` then.
"""

from __future__ import annotations

import ctypes
import time
from collections.abc import Sequence
from functools import cache
from pathlib import Path

from usmp.planning.minimalloc_native import LIMIT, compiled, csr, i64_array, int_array
from usmp.planning.minimalloc_solver import OutOfTime
from usmp.planning.model import PlanningError
from usmp.planning.placement import Indexed, OffsetRule

SOURCE = Path(__file__).with_name("placement_decode.c")
RULES: dict[OffsetRule, int] = {"after_conflicts": 0, "first_fit": 1, "best_fit": 2}

_i64p = ctypes.POINTER(ctypes.c_int64)
_intp = ctypes.POINTER(ctypes.c_int)


@cache
def load() -> ctypes.CDLL | None:
    """The compiled decode (built if needed), or ``None``."""
    lib = compiled(SOURCE)
    if lib is None:
        return None
    lib.pd_decode.restype = ctypes.c_int
    lib.pd_decode.argtypes = [
        ctypes.c_int,  # n
        ctypes.c_int,  # rule
        _intp,  # order
        ctypes.c_int,  # n_order
        _i64p,  # sizes
        _i64p,  # starts
        _i64p,  # ends
        _i64p,  # buffer alignments
        _intp,  # candidates (CSR)
        _intp,
        _i64p,  # candidate alignments
        _i64p,  # pool limits (-1: none)
        _i64p,  # pool alignments
        _intp,  # explicit conflicts (CSR)
        _intp,
        _intp,  # allowed overlaps (CSR) and their forbidden intervals
        _intp,
        _i64p,
        _i64p,
        _intp,  # out: pools
        _i64p,  # out: offsets
        _i64p,  # out: tried ends of the failing buffer
        ctypes.c_double,  # CPU seconds it may take (< 0: no limit)
    ]
    return lib


class NativeDecoder:
    """An indexed problem's arrays for ``pd_decode``, built once for many
    orders; :meth:`decode` is ``placement.decode(ix, order, rule)``."""

    def __init__(self, ix: Indexed, lib: ctypes.CDLL):
        self.ix = ix
        self.lib = lib
        b = ix.buffers
        n = len(b)
        self.n = n
        forbidden: list[list[tuple[int, int, int]]] = [[] for _ in range(n)]
        for (i, j), (lo, hi) in sorted(ix.forbidden.items()):
            forbidden[i].append((j, lo, hi))
        cand_start, cand = csr(ix.candidates)
        xc_start, xc = csr(ix.explicit)
        fb_start, fb = csr([[j for j, _, _ in row] for row in forbidden])
        limits = ix.limits
        self.arrays = (
            i64_array(ix.sizes),
            i64_array([x.start for x in b]),
            i64_array([x.end for x in b]),
            i64_array([x.alignment for x in b]),
            int_array(cand_start),
            int_array(cand),
            i64_array([a for row in ix.alignments for a in row]),
            # a limit no offset can reach is no limit (and may not fit 64 bits)
            i64_array([-1 if x is None or x >= LIMIT else x for x in limits]),
            i64_array([p.alignment for p in ix.problem.pools]),
            int_array(xc_start),
            int_array(xc),
            int_array(fb_start),
            int_array(fb),
            i64_array([lo for row in forbidden for _, lo, _ in row]),
            i64_array([hi for row in forbidden for _, _, hi in row]),
        )
        self.most_candidates = max((len(c) for c in ix.candidates), default=0)

    def decode(
        self, order: Sequence[int], rule: OffsetRule, deadline: float | None = None
    ) -> tuple[list[int], list[int]]:
        """Per-buffer (pool index, offset); :class:`PlanningError` for the
        first buffer that fits no candidate (as ``placement.decode``);
        :class:`OutOfTime` once ``deadline`` (a ``time.process_time()``
        value) has passed."""
        n = self.n
        budget = -1.0 if deadline is None else max(deadline - time.process_time(), 0.0)
        pools = (ctypes.c_int * max(n, 1))()
        offsets = (ctypes.c_int64 * max(n, 1))()
        tried = (ctypes.c_int64 * max(self.most_candidates, 1))()
        failed = self.lib.pd_decode(
            n,
            RULES[rule],
            int_array(order),
            len(order),
            *self.arrays,
            pools,
            offsets,
            tried,
            budget,
        )
        if failed == -3:
            raise OutOfTime
        if failed == -2:
            raise MemoryError("placement_decode.c: out of memory")
        if failed >= 0:
            ix = self.ix
            i = order[failed]
            raise PlanningError(
                ix.names[i],
                ix.sizes[i],
                (
                    (ix.problem.pools[pool].name, ix.limits[pool], tried[k])
                    for k, pool in enumerate(ix.candidates[i])
                ),
            )
        return list(pools[:n]), list(offsets[:n])


def _fits(ix: Indexed) -> bool:
    """Whether every offset and end the decode computes fits 64 bits: they
    stay below the sum of the sizes and alignments (and the shifts)."""
    b = ix.buffers
    reach = (
        sum(ix.sizes)
        + sum(max(row, default=1) for row in ix.alignments)
        + sum(x.alignment for x in b)
        + sum(abs(lo) + abs(hi) for lo, hi in ix.forbidden.values())
    )
    times = max((max(abs(x.start), abs(x.end)) for x in b), default=0)
    return reach < LIMIT and times < LIMIT


def native_decoder(ix: Indexed) -> NativeDecoder | None:
    """The C decode for ``ix``, or ``None`` (no compiler, or values beyond
    64 bits): use ``placement.decode`` then."""
    lib = load()
    if lib is None or not _fits(ix):
        return None
    return NativeDecoder(ix, lib)
