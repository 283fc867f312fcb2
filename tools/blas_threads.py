"""How the commands' processes use NumPy's BLAS: ``single_threaded_blas()``.

NumPy's wheels bundle OpenBLAS, which starts one thread per core when
NumPy is imported; each extra thread spins waiting for work before it
sleeps. A compile multiplies no large matrices (its arrays are constants,
traces and byte replays: element-wise work), so the threads only cost CPU
time: on a 2-core machine ``import numpy`` takes 0.13 CPU s with them and
0.07 without, and a hello_world compile 0.06-0.15 CPU s more (more cores,
more threads). ``OPENBLAS_NUM_THREADS=1`` read when OpenBLAS loads keeps it
in the calling thread; a value the user set is kept.

Only for the console entry points (a process that does one job and ends;
the Python API leaves the caller's threads alone), called before anything
imports NumPy: OpenBLAS reads the variable once, when it is loaded. Child
processes inherit it (the C compiler ignores it)."""

from __future__ import annotations

import os

BLAS_THREADS = "OPENBLAS_NUM_THREADS"


def single_threaded_blas() -> None:
    """One BLAS thread unless the environment says otherwise (module doc)."""
    os.environ.setdefault(BLAS_THREADS, "1")
