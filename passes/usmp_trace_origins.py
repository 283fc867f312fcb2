"""The replay's origin checks and writes in C (``usmp_trace_origins.c``),
built on first use.

``_Replay.check`` compares, for the bytes a step reads, each physical
byte's origin with the one its logical byte expects; ``_Replay.write``
records a step's writes in both memories. In numpy each is several passes
over the bytes with a temporary array per pass (indices built from a range,
the expected origins, the comparison masks); :func:`check` and
:func:`write` make one pass in C with none. Both return ``False`` (nothing
written) where the C side cannot take the arguments (no compiler, an index
array of another type, an index outside its memory): the caller's numpy
path runs then, and it also words every failed check (``check`` only says
whether one failed). Built and cached like MiniMalloc's search
(``planning/minimalloc_native.compiled``); :func:`load` returns ``None``
with ``USMP_NATIVE_REPLAY=0`` (or ``USMP_NATIVE_PLANNER=0``).
"""

from __future__ import annotations

import ctypes
from functools import cache
from pathlib import Path

import numpy as np
import numpy.typing as npt

from usmp.passes.usmp_trace_native import replay_library

SOURCE = Path(__file__).with_name("usmp_trace_origins.c")

Bytes = npt.NDArray[np.int64] | slice
"""A range of byte indices (``slice(lo, hi)``) or an ascending index array
(``usmp_replay.Bytes``)."""

_p = ctypes.c_void_p
_i64 = ctypes.c_int64
_SHARED = [_p, _i64, _p, _i64, _i64, _i64, _p, _i64, _p, _p]
"""logical, its size, physical, its size, n, l0, lidx, p0, pidx, mask."""


@cache
def load() -> ctypes.CDLL | None:
    """The compiled checks (built if needed), or ``None`` (module doc)."""
    lib = replay_library(SOURCE)
    if lib is None:
        return None
    lib.rt_check.restype = _i64
    lib.rt_check.argtypes = _SHARED
    lib.rt_write.restype = ctypes.c_int
    lib.rt_write.argtypes = [*_SHARED, ctypes.c_int32]
    return lib


def _side(x: Bytes) -> tuple[int, int | None, int] | None:
    """``(start, index array pointer or None, count)`` of ``x``, or None
    where the C side cannot take it."""
    if isinstance(x, slice):
        lo, hi = x.start, x.stop
        integers = (int, np.integer)
        if x.step is not None or not (
            isinstance(lo, integers) and isinstance(hi, integers)
        ):
            return None
        lo, hi = int(lo), int(hi)
        if lo < 0 or hi < lo:
            return None
        return lo, None, hi - lo
    if (
        not isinstance(x, np.ndarray)
        or x.dtype != np.int64
        or x.ndim != 1
        or not x.flags.c_contiguous
    ):
        return None
    return 0, x.ctypes.data, x.size


def _arguments(
    logical_memory: npt.NDArray[np.int32],
    physical_memory: npt.NDArray[np.int64],
    logical: Bytes,
    phys: Bytes,
    mask: npt.NDArray[np.bool_] | None,
) -> list[int | None] | None:
    if logical_memory.dtype != np.int32 or physical_memory.dtype != np.int64:
        return None
    if not (logical_memory.flags.c_contiguous and physical_memory.flags.c_contiguous):
        return None
    a, b = _side(logical), _side(phys)
    if a is None or b is None or a[2] != b[2]:
        return None
    n = a[2]
    if mask is not None and (
        mask.dtype != np.bool_
        or mask.ndim != 1
        or mask.size != n
        or not mask.flags.c_contiguous
    ):
        return None
    return [
        logical_memory.ctypes.data,
        logical_memory.size,
        physical_memory.ctypes.data,
        physical_memory.size,
        n,
        a[0],
        a[1],
        b[0],
        b[1],
        None if mask is None else mask.ctypes.data,
    ]


def check(
    lib: ctypes.CDLL,
    logical_memory: npt.NDArray[np.int32],
    physical_memory: npt.NDArray[np.int64],
    logical: Bytes,
    phys: Bytes,
    mask: npt.NDArray[np.bool_] | None = None,
) -> bool:
    """Whether every byte pair (``logical[k]``, ``phys[k]``; where ``mask``
    holds) whose logical byte has a stamp holds at the physical byte the
    origin ``stamp * 2**32 + logical index``. False also where the C side
    cannot take the arguments (module doc): the numpy path decides then."""
    args = _arguments(logical_memory, physical_memory, logical, phys, mask)
    return args is not None and lib.rt_check(*args) == 0


def write(
    lib: ctypes.CDLL,
    logical_memory: npt.NDArray[np.int32],
    physical_memory: npt.NDArray[np.int64],
    logical: Bytes,
    phys: Bytes,
    stamp: int,
    mask: npt.NDArray[np.bool_] | None = None,
) -> bool:
    """Stamp the logical bytes ``logical`` (where ``mask`` holds) with
    ``stamp`` and their physical bytes ``phys`` with the origin ``stamp *
    2**32 + logical index``; False (nothing written) where the C side
    cannot take the arguments (module doc)."""
    if not 0 <= stamp < 1 << 31:
        return False
    args = _arguments(logical_memory, physical_memory, logical, phys, mask)
    return args is not None and lib.rt_write(*args, stamp) == 0
