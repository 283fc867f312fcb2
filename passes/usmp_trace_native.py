"""The replay's byte enumeration in C (``usmp_trace_scatter.c``), built on
first use.

``_Tracer.light_result`` (``usmp_kernel_trace``) enumerates every access of
a kernel: per iteration that runs, its time and its element address,
scattered into a per-element array (the first time, the last time, or only
whether it is touched). :func:`scatter` does that for one access in C, with
no array the size of the iterations (the numpy path builds time and address
grids and scatters them with ``ufunc.at``): the same values, bit for bit
(tests compare the two paths), several times faster. Built and cached like
MiniMalloc's search (``planning/minimalloc_native.compiled``); :func:`load`
returns ``None`` without a C compiler, or with ``USMP_NATIVE_REPLAY=0`` (or
``USMP_NATIVE_PLANNER=0``) in the environment: the numpy path runs then.
"""

from __future__ import annotations

import ctypes
import os
from collections.abc import Sequence
from functools import cache
from pathlib import Path

import numpy as np
import numpy.typing as npt

from usmp.planning.minimalloc_native import compiled

SOURCE = Path(__file__).with_name("usmp_trace_scatter.c")

FIRST, LAST, MARK = 0, 1, 2
"""``mode`` of :func:`scatter`: keep the smallest time, the largest, or mark
the element (a ``np.bool_`` target)."""

MAX_AXES = 32
MAX_TERMS = 32
MAX_ACCESSES = 16
"""The C side's limits (``usmp_trace_scatter.c``): more axes or terms, and
the caller takes the numpy path; more accesses, and they go in several
calls."""

_INT64 = (-(1 << 63), (1 << 63) - 1)

_p = ctypes.c_void_p
_i64 = ctypes.c_int64
_int = ctypes.c_int


NATIVE_REPLAY = "USMP_NATIVE_REPLAY"
"""The environment variable that, set to ``0``, keeps the replay's C files
(this module's and ``usmp_trace_origins``') unused: numpy runs instead."""


def replay_library(source: Path) -> ctypes.CDLL | None:
    """One of the replay's C files compiled and loaded
    (``minimalloc_native.compiled``), or ``None`` (no compiler, or
    ``NATIVE_REPLAY`` set to ``0``)."""
    if os.environ.get(NATIVE_REPLAY, "1") == "0":
        return None
    return compiled(source)


@cache
def load() -> ctypes.CDLL | None:
    """The compiled scatter (built if needed), or ``None`` (module doc)."""
    lib = replay_library(SOURCE)
    if lib is None:
        return None
    fn = lib.rt_scatter
    fn.restype = ctypes.c_int
    fn.argtypes = [
        _int,  # accesses
        _int,  # d
        _p,  # shape
        _p,  # t0 per access
        _p,  # tstep
        _int,  # n_terms
        _p,  # data
        _p,  # start
        _p,  # strides
        _p,  # coef
        _p,  # offset per access
        _p,  # mask (NULL: all run)
        _i64,  # mask length
        _p,  # mask strides
        _i64,  # n
        _int,  # mode
        _int,  # width
        _p,  # target
    ]
    return lib


def _fits(v: int) -> bool:
    return _INT64[0] <= v <= _INT64[1]


def _order(
    shape: Sequence[int],
    terms: Sequence[tuple[npt.NDArray[np.int64], int]],
    mask: npt.NDArray[np.bool_] | None,
) -> list[int]:
    """The axes with more than one iteration, in the order the C side nests
    them (the last innermost: its hot loop). The order the iterations are
    visited in does not change the result, only the speed: the axes the
    mask varies along outside (checked once for all the iterations inside
    them), then by how far an iteration moves the address, the nearest
    innermost (the cache), the longest innermost among equals."""

    def step(a: int) -> int:
        moved = 0
        for t, s in terms:
            if t.shape[a] > 1:
                at = [0] * t.ndim
                v0 = int(t[tuple(at)])
                at[a] = 1
                moved += abs((int(t[tuple(at)]) - v0) * s)
        return moved

    def masked(a: int) -> bool:
        return mask is not None and mask.shape[a] > 1

    kept = [a for a in range(len(shape)) if shape[a] > 1]
    return sorted(kept, key=lambda a: (not masked(a), -step(a), shape[a]))


Access = tuple[int, int, Sequence[tuple[npt.NDArray[np.int64], int]]]
"""``(t0, offset, terms)`` of one access (see :func:`scatter`)."""


def scatter(
    lib: ctypes.CDLL,
    target: npt.NDArray[np.generic],
    mode: int,
    shape: Sequence[int],
    tstep: Sequence[int],
    mask: npt.NDArray[np.bool_] | None,
    accesses: Sequence[Access],
) -> bool:
    """Scatter accesses of one loop nest into ``target`` (contiguous;
    ``np.int32`` or ``np.int64`` times for ``FIRST``/``LAST``, ``np.bool_``
    for ``MARK``).

    The iterations are ``shape`` (one axis per enclosing loop); one runs
    where ``mask`` (broadcasting to ``shape``; None: all) holds; for each
    access ``(t0, offset, terms)``, its time is ``t0 + sum(k * tstep)``; its
    element address ``offset + sum(t * s)`` over ``terms`` (arrays
    broadcasting to ``shape``, int64 arithmetic wrapping as numpy's; the
    accesses' terms of the same shapes and multipliers ``s``); addresses
    outside ``target`` are skipped. False (``target`` untouched) where the
    C side cannot take them (too many axes or terms, terms that differ in
    shape, a value past 64 bits, a time past ``target``'s type): the
    caller's numpy path then."""
    if not accesses:
        return True
    d = len(shape)
    terms = accesses[0][2]
    if d > MAX_AXES or len(terms) > MAX_TERMS or not target.flags.c_contiguous:
        return False
    if not all(_fits(s) for _, s in terms) or not all(_fits(t) for t in tstep):
        return False
    if (mode == MARK) != (target.dtype == np.bool_):
        return False
    if mode != MARK and target.dtype not in (np.int32, np.int64):
        return False
    forms = [(t.shape, s) for t, s in terms]
    for t, _ in terms:
        if (
            t.ndim != d
            or t.dtype != np.int64
            or any(m != 1 and m != shape[a] for a, m in enumerate(t.shape))
        ):
            return False
    if mask is not None and (
        mask.ndim != d
        or any(m != 1 and m != shape[a] for a, m in enumerate(mask.shape))
    ):
        return False
    for t0, offset, other in accesses:
        if (
            not (_fits(t0) and _fits(offset))
            or [(t.shape, s) for t, s in other] != forms
        ):
            return False
        if any(t.dtype != np.int64 for t, _ in other):
            return False
    calls = _calls(target, mode, shape, tstep, mask, accesses)
    for call in calls:
        args = [a.ctypes.data if isinstance(a, np.ndarray) else a for a in call]
        if lib.rt_scatter(*args) != 0:
            # (a batch before it is scattered already: minima, maxima and
            # marks taken again by the numpy path give the same result)
            return False
    return True


Argument = int | npt.NDArray[np.generic] | None
"""An argument of ``rt_scatter``: an integer, an array (its data pointer),
or None (a NULL pointer)."""


def _calls(
    target: npt.NDArray[np.generic],
    mode: int,
    shape: Sequence[int],
    tstep: Sequence[int],
    mask: npt.NDArray[np.bool_] | None,
    accesses: Sequence[Access],
) -> list[list[Argument]]:
    """The arguments of the ``rt_scatter`` calls :func:`scatter` makes (one
    per ``MAX_ACCESSES`` accesses), checked by it before."""
    d = len(shape)
    terms = accesses[0][2]
    axes = _order(shape, terms, mask)
    k = len(axes)
    shape_a = np.array([shape[a] for a in axes] or [1], np.int64)
    tstep_a = np.array([tstep[a] for a in axes] or [0], np.int64)
    starts = [0]
    strides = np.zeros((max(len(terms), 1), max(k, 1)), np.int64)
    for i, (t, _) in enumerate(terms):
        starts.append(starts[-1] + t.size)
        # (the C-ordered strides of a term of this shape)
        step = 1
        for a in reversed(range(d)):
            if t.shape[a] != 1 and a in axes:
                strides[i, axes.index(a)] = step
            step *= t.shape[a]
    start = np.array(starts, np.int64)
    coef = np.array([s for _, s in terms] or [0], np.int64)
    mask_a: npt.NDArray[np.bool_] | None = None
    mstrides = np.zeros(max(k, 1), np.int64)
    if mask is not None:
        mask_a = np.ascontiguousarray(mask, np.bool_)
        for j, a in enumerate(axes):
            if mask_a.shape[a] != 1:
                mstrides[j] = mask_a.strides[a]
    calls: list[list[Argument]] = []
    for lo in range(0, len(accesses), MAX_ACCESSES):
        batch = accesses[lo : lo + MAX_ACCESSES]
        values = [t.reshape(-1) for _, _, ts in batch for t, _ in ts]
        data = np.concatenate(values) if values else np.zeros(1, np.int64)
        calls.append(
            [
                len(batch),
                k,
                shape_a,
                np.array([t0 for t0, _, _ in batch], np.int64),
                tstep_a,
                len(terms),
                data,
                start,
                strides,
                coef,
                np.array([offset for _, offset, _ in batch], np.int64),
                mask_a,
                0 if mask_a is None else mask_a.size,
                mstrides,
                target.size,
                mode,
                target.itemsize,
                target,
            ]
        )
    return calls
