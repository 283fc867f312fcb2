"""MiniMalloc's search in C (``minimalloc_search.c``), built on first use.

The C file is the Python search of ``minimalloc_solver`` node for node (same
nodes, same order, same offsets; tests compare them), about a hundred times
faster. It is compiled once per source version with the system's C compiler
(``$CC``, else ``cc``/``gcc``: the project needs one for its output anyway)
into ``$XDG_CACHE_HOME/usmp-opt`` (default ``~/.cache/usmp-opt``; the temp
directory when that is not writable) and loaded with ``ctypes``. Without a
compiler, or with ``USMP_NATIVE_PLANNER=0`` in the environment, :func:`load`
returns ``None`` and the Python search runs instead: same plans, slower.
:func:`compiled` builds and loads any of the package's C files this way
(``placement_native`` uses it for the decode).
"""

from __future__ import annotations

import ctypes
import os
import platform
import shutil
import tempfile
import threading
import zlib
from array import array
from collections.abc import Sequence
from functools import cache
from pathlib import Path

SOURCE = Path(__file__).with_name("minimalloc_search.c")
# Values beyond this would overflow the C side's 64-bit arithmetic (the
# Python side has no limit): such problems stay in Python.
LIMIT = 1 << 60

# Above ``DEEP`` buffers the search runs in a thread with a stack of
# ``STACK_BASE + STACK_PER_BUFFER * n`` bytes (a level of recursion takes a
# few hundred bytes of C stack).
DEEP = 5_000
STACK_BASE = 8 << 20
STACK_PER_BUFFER = 1024

_i64p = ctypes.POINTER(ctypes.c_int64)
_intp = ctypes.POINTER(ctypes.c_int)


def _cache_dirs() -> list[Path]:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return [Path(base) / "usmp-opt", Path(tempfile.gettempdir()) / "usmp-opt"]


def _compiler() -> str | None:
    cc = os.environ.get("CC")
    if cc and shutil.which(cc):
        return cc
    return shutil.which("cc") or shutil.which("gcc")


def _build(source: Path, target: Path, cc: str) -> bool:
    import subprocess  # only to build: most runs find the library cached

    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(suffix=".so", dir=target.parent)
    os.close(fd)
    try:
        proc = subprocess.run(
            [cc, "-O2", "-std=c99", "-shared", "-fPIC", str(source), "-o", tmp],
            capture_output=True,
            check=False,
        )
        if proc.returncode != 0:
            return False
        os.replace(tmp, target)  # atomic: concurrent builders agree
        return True
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def _version(text: bytes) -> str:
    """The source's version in a library's name: its CRC-32 and length (a
    key that changes with the file, not a security check; ``zlib`` is
    loaded already, where ``hashlib`` would load OpenSSL: 2-3 ms of every
    compile)."""
    return f"{zlib.crc32(text):08x}{len(text):x}"


@cache
def compiled(source: Path) -> ctypes.CDLL | None:
    """The shared library built from the C file ``source`` (once per source
    version, cached on disk: see the module doc), or ``None`` (no compiler,
    or ``USMP_NATIVE_PLANNER=0``)."""
    if os.environ.get("USMP_NATIVE_PLANNER", "1") == "0":
        return None
    name = f"{source.stem}-{_version(source.read_bytes())}-{platform.machine()}.so"
    cc = _compiler()
    for directory in _cache_dirs():
        target = directory / name
        try:
            if not target.exists():
                if cc is None or not _build(source, target, cc):
                    continue
            return ctypes.CDLL(str(target))
        except OSError:
            continue
    return None


@cache
def load() -> ctypes.CDLL | None:
    """The compiled search (built if needed), or ``None`` (see module doc)."""
    lib = compiled(SOURCE)
    if lib is not None:
        lib.mm_solve.restype = ctypes.c_int
        lib.mm_solve.argtypes = [
            ctypes.c_int,
            ctypes.c_int,
            _i64p,
            _i64p,
            _i64p,
            _i64p,
            _intp,
            _intp,
            _intp,
            _intp,
            _intp,
            _intp,
            ctypes.c_int,
            ctypes.c_int64,
            ctypes.c_double,
            ctypes.c_int64,
            _i64p,
            _i64p,
        ]
        return lib
    return None


def i64_array(values: Sequence[int]) -> ctypes.Array[ctypes.c_int64]:
    data = array("q", values or [0])  # one C loop, not an argument per value
    return (ctypes.c_int64 * len(data)).from_buffer(data)


def int_array(values: Sequence[int]) -> ctypes.Array[ctypes.c_int]:
    data = array("i", values or [0])
    return (ctypes.c_int * len(data)).from_buffer(data)


def csr(rows: Sequence[Sequence[int]]) -> tuple[list[int], list[int]]:
    start = [0]
    flat: list[int] = []
    for row in rows:
        flat.extend(row)
        start.append(len(flat))
    return start, flat


class Prepared:
    """A pool problem's arrays for :func:`run`, built once for many probes."""

    def __init__(
        self,
        sizes: Sequence[int],
        alignments: Sequence[int],
        width: Sequence[int],
        area: Sequence[int],
        lo: Sequence[int],
        hi: Sequence[int],
        neighbours: Sequence[Sequence[int]],
        sections: Sequence[Sequence[int]],
        decompose: bool,
    ):
        nbr_start, nbr = csr(neighbours)
        sec_start, sec = csr(sections)
        self.n = len(sizes)
        self.n_sec = len(sections)
        self.arrays = (
            i64_array(sizes),
            i64_array(alignments),
            i64_array(width),
            i64_array(area),
            int_array(lo),
            int_array(hi),
            int_array(nbr_start),
            int_array(nbr),
            int_array(sec_start),
            int_array(sec),
        )
        self.decompose = int(decompose)


def run(
    lib: ctypes.CDLL,
    prepared: Prepared,
    capacity: int,
    deadline: float | None,
    max_nodes: int | None,
) -> tuple[int, list[int], int, int]:
    """(status 0 found / 1 infeasible / 3 stopped, offsets, nodes, backtracks).

    ``capacity`` must be below ``LIMIT``."""
    n = prepared.n
    solution = (ctypes.c_int64 * max(n, 1))()
    stats = (ctypes.c_int64 * 2)()
    status = [0]

    def call() -> None:
        status[0] = lib.mm_solve(
            n,
            prepared.n_sec,
            *prepared.arrays,
            prepared.decompose,
            capacity,
            -1.0 if deadline is None else deadline,
            -1 if max_nodes is None else max_nodes,
            solution,
            stats,
        )

    if n <= DEEP:
        call()
    else:
        # The search recurses once per placed buffer: a thread with a stack
        # to match (the main thread's 8 MiB hold about 20,000 levels).
        old = threading.stack_size(STACK_BASE + STACK_PER_BUFFER * n)
        try:
            worker = threading.Thread(target=call)
            worker.start()
            worker.join()
        finally:
            threading.stack_size(old)
    return status[0], list(solution[:n]), stats[0], stats[1]


def fits(sizes: Sequence[int], area: Sequence[int]) -> bool:
    """Whether the C side's 64-bit arithmetic holds this problem."""
    return sum(sizes) < LIMIT and max(area, default=0) < LIMIT
