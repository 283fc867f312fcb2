"""The replay's byte enumeration in C (``usmp_trace_native``,
``usmp_trace_scatter.c``) against the numpy path it replaces and against a
direct numpy replay of its contract: the same ``ByteSets`` bit for bit on
every kernel of shared models, on random kernels and on edge cases (narrow
and wide times, ``never``, addresses outside a buffer, masked iterations,
unknown addresses, wrapping address arithmetic, several accesses at once);
the C built once with ASan/UBSan; the numpy path where no compiler is."""

from __future__ import annotations

import random
import shutil
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest
from xdsl.dialects import func
from xdsl.dialects.builtin import MemRefType, ModuleOp

from usmp.dialects import new_context
from usmp.parsing import LocatingParser
from usmp.passes import usmp_kernel_trace, usmp_trace_native
from usmp.passes.usmp_kernel_trace import ByteSets, trace_light
from usmp.passes.usmp_trace_native import FIRST, LAST, MARK, scatter
from usmp.testing.symbolic_oracle import random_kernel

pytestmark = pytest.mark.skipif(
    usmp_trace_native.load() is None, reason="needs a C compiler"
)

FIELDS = ("last_read", "first_read", "first_write", "read", "written")


def _same(a: ByteSets, b: ByteSets) -> None:
    assert (a.mode, a.never) == (b.mode, b.never)
    for name in FIELDS:
        x, y = getattr(a, name), getattr(b, name)
        assert (x is None) == (y is None), name
        if x is not None:
            assert x.dtype == y.dtype, name
            np.testing.assert_array_equal(x, y, err_msg=name)


def _kernels(module: ModuleOp) -> list[func.FuncOp]:
    return [
        f
        for f in module.ops
        if isinstance(f, func.FuncOp) and f.body.blocks and f.sym_name.data != "main"
    ]


def _count_native(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many accesses the C side scattered (``[0]``), counted."""
    done = [0]
    real = usmp_kernel_trace.scatter

    def counted(*args: object, **kwargs: object) -> bool:
        ok = real(*args, **kwargs)  # pyright: ignore[reportArgumentType]
        done[0] += len(args[-1]) if ok else 0  # pyright: ignore[reportArgumentType]
        return ok

    monkeypatch.setattr(usmp_kernel_trace, "scatter", counted)
    return done


def _compare(f: func.FuncOp, exacts: list[frozenset[int]] | None = None) -> int:
    """Native and numpy ``trace_light`` of ``f`` compared, with no argument
    asked for exactly and with all (the buffers compared)."""
    args = [i for i, a in enumerate(f.args) if isinstance(a.type, MemRefType)]
    compared = 0
    for exact in exacts or [frozenset(), frozenset(args)]:
        native = trace_light(f, args, exact, native=True)
        slow = trace_light(f, args, exact, native=False)
        assert (native is None) == (slow is None)
        if native is None or slow is None:
            continue
        assert native.sets.keys() == slow.sets.keys()
        assert native.unfollowed == slow.unfollowed
        for i in native.sets:
            _same(native.sets[i], slow.sets[i])
            compared += 1
    return compared


@pytest.mark.parametrize("narrow", [True, False])
@pytest.mark.parametrize(
    "model",
    [
        "mlperf_tiny/kws_ref_model.tflite",
        "mlperf_tiny/vww_96_int8.tflite",
        "mlperf_tiny/ad01_int8.tflite",
        "tflite_micro/micro_speech_quantized.tflite",
    ],
)
def test_shared_model_kernels_native_and_numpy_agree(
    model: str, narrow: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every kernel of a model (padded windows, masks, free loops, several
    loads of one nest), times in ``np.int32`` and in ``np.int64``."""
    from usmp.frontend.tflite_import import import_tflite
    from usmp.testing.run_c import run_pipeline
    from usmp.testing.shared_models import MODELS_DIR

    if not narrow:
        monkeypatch.setattr(usmp_kernel_trace, "_time_dtype", lambda span: np.int64)
    done = _count_native(monkeypatch)
    module = run_pipeline(
        import_tflite(MODELS_DIR / model),
        "plan-devices,fold-explicit-padding,fuse-ops,lower-ops",
    )
    compared = sum(_compare(f) for f in _kernels(module))
    assert compared and done[0]


@pytest.mark.parametrize("batch", range(3))
def test_random_kernels_native_and_numpy_agree(
    batch: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Random loop nests (``symbolic_oracle.random_kernel``: affine loads and
    stores, guards, backwards loops, two element sizes)."""
    done = _count_native(monkeypatch)
    for seed in range(100 * batch, 100 * batch + 100):
        text = random_kernel(random.Random(seed))
        module = LocatingParser(new_context(), text, "k.mlir").parse_module()
        for f in _kernels(module):
            _compare(f)
    assert done[0]


_EDGES = """
func.func @edges(%a: memref<10xi8>, %b: memref<6xi32>, %c: memref<7xi8>, %d: memref<5xi8>) attributes {tir.prim_func} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  %cm3 = arith.constant -3 : index
  %big = arith.constant 4611686018427387904 : index
  %v = arith.constant 7 : i8
  %w = arith.constant 9 : i32
  scf.for %i = %c0 to %c5 step %c1 {
    scf.for %j = %c0 to %c4 step %c1 {
      %m = arith.muli %i, %c3 : index
      %s = arith.addi %m, %j : index
      %o = arith.addi %s, %cm3 : index
      %x = memref.load %a[%o] : memref<10xi8>
      %r = arith.remsi %s, %c4 : index
      %q = arith.addi %r, %i : index
      %g = arith.cmpi sge, %j, %c1 : index
      scf.if %g {
        memref.store %w, %b[%q] : memref<6xi32>
      } else {
        %y = memref.load %b[%j] : memref<6xi32>
      }
      %lt = arith.cmpi slt, %i, %c3 : index
      scf.if %lt {
        %z = memref.load %c[%s] : memref<7xi8>
        memref.store %v, %c[%i] : memref<7xi8>
      }
      %u = arith.index_cast %x : i8 to index
      %h = arith.muli %big, %c4 : index
      %e = arith.addi %h, %j : index
      memref.store %v, %d[%e] : memref<5xi8>
    }
    %dd = memref.load %d[%i] : memref<5xi8>
    %uu = arith.index_cast %dd : i8 to index
    memref.store %v, %a[%uu] : memref<10xi8>
  }
  func.return
}
"""
"""Out-of-buffer addresses below and above (``%a``), a non-affine address
(``remsi``) under a condition with an ``else`` (``%b``, i32 elements), a
mask on the outer loop (``%c``, read and written: ``rw``), an address whose
arithmetic wraps past 64 bits (``%d``: ``2^62 * 4 + j`` is ``j``), an
unknown (data-dependent) address (``%a`` written)."""


@pytest.mark.parametrize("narrow", [True, False])
def test_edge_cases_native_and_numpy_agree(
    narrow: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not narrow:
        monkeypatch.setattr(usmp_kernel_trace, "_time_dtype", lambda span: np.int64)
    done = _count_native(monkeypatch)
    module = LocatingParser(new_context(), _EDGES, "edges.mlir").parse_module()
    (f,) = _kernels(module)
    args = frozenset(range(4))
    exacts = [frozenset[int](), args, frozenset({0, 2})]
    assert _compare(f, exacts) >= 8
    light = trace_light(f, args, args)
    assert light is not None
    never = light.sets[1].never
    assert never == (np.iinfo(np.int32 if narrow else np.int64).max)
    assert {i: s.mode for i, s in light.sets.items()} == {
        0: "rw",
        1: "rw",
        2: "rw",
        3: "rw",
    }
    # (%d: written at j = 0..3 through the wrapping address, never at 4)
    d = light.sets[3]
    assert d.first_write is not None and d.first_write[4] == never
    assert (d.first_write[:4] != never).all()
    assert done[0]


def _reference(
    target: npt.NDArray[np.generic],
    mode: int,
    shape: tuple[int, ...],
    tstep: list[int],
    mask: npt.NDArray[np.bool_] | None,
    accesses: list[tuple[int, int, list[tuple[npt.NDArray[np.int64], int]]]],
) -> npt.NDArray[np.generic]:
    """``scatter``'s contract in plain numpy (every iteration a grid cell)."""
    out = target.copy()
    grid = np.indices(shape, dtype=np.int64) if shape else np.zeros((0,), np.int64)
    runs = np.ones(shape, bool) if mask is None else np.broadcast_to(mask, shape)
    for t0, offset, terms in accesses:
        time = np.full(shape, t0, np.int64)
        for a, s in enumerate(tstep):
            time = time + grid[a] * s
        addr = np.full(shape, offset, np.int64)
        with np.errstate(over="ignore"):
            for t, s in terms:
                addr = addr + np.broadcast_to(t, shape) * np.int64(s)
        keep = runs & (addr >= 0) & (addr < out.size)
        at, when = addr[keep], time[keep].astype(out.dtype)
        if mode == MARK:
            out[at] = True
        elif mode == FIRST:
            np.minimum.at(out, at, when)
        else:
            np.maximum.at(out, at, when)
    return out


def _random_case(rng: np.random.Generator) -> tuple[object, ...]:
    d = int(rng.integers(0, 5))
    shape = tuple(int(rng.integers(1, 6)) for _ in range(d))
    mode = int(rng.integers(0, 3))
    dtype = np.bool_ if mode == MARK else (np.int32, np.int64)[int(rng.integers(0, 2))]
    n = int(rng.integers(0, 200))
    never = np.iinfo(dtype).max if dtype != np.bool_ else 0  # pyright: ignore
    fill = {FIRST: never, LAST: -1, MARK: False}[mode]
    target = np.full(n, fill, dtype)
    if mode != MARK and rng.random() < 0.5:  # some times there already
        target[:] = rng.integers(-1, 50, n)
    tstep = [int(rng.integers(0, 7)) for _ in range(d)]
    forms = []
    for _ in range(int(rng.integers(0, 4))):
        tshape = tuple(m if rng.random() < 0.5 else 1 for m in shape)
        coefs = [1, 1, 1, -1, 2, 3, 7, 1 << 62, -(1 << 61)]
        forms.append((tshape, coefs[int(rng.integers(0, len(coefs)))]))
    accesses = []
    for _ in range(int(rng.integers(1, 20))):
        terms = []
        for tshape, s in forms:
            if rng.random() < 0.7:  # affine along each axis
                t = np.zeros(tshape, np.int64)
                for a, m in enumerate(tshape):
                    if m > 1:
                        k = np.arange(m, dtype=np.int64).reshape(
                            (1,) * a + (m,) + (1,) * (len(tshape) - a - 1)
                        )
                        t = t + k * int(rng.choice([1, 1, 0, 2, -1, 3]))
            else:
                t = rng.integers(-4, 12, tshape).astype(np.int64)
            terms.append((t + int(rng.integers(-3, 4)), s))
        accesses.append((int(rng.integers(0, 100)), int(rng.integers(-5, 60)), terms))
    mask = None
    if rng.random() < 0.6:
        mshape = tuple(m if rng.random() < 0.6 else 1 for m in shape)
        mask = rng.random(mshape) < 0.7
    return target, mode, shape, tstep, mask, accesses


def _window_case(rng: np.random.Generator) -> tuple[object, ...]:
    """A padded window's reads, as lowered kernels make them: iterations
    ``(h, w, c, kh)``, the row ``h + kh - pad`` (kh's step and h's stride),
    the column ``w``, ``lanes`` channels per ``c`` (one access per lane and
    per column offset), the padding as a mask on ``(h, w)`` or, for some,
    on every axis."""
    h, w, c, k = (int(rng.integers(1, m)) for m in (7, 7, 9, 4))
    lanes, stride = int(rng.integers(1, 5)), int(rng.integers(1, 3))
    pad = int(rng.integers(0, 2))
    channels = c * lanes
    mode = int(rng.integers(0, 3))
    dtype = np.bool_ if mode == MARK else (np.int32, np.int64)[int(rng.integers(0, 2))]
    fill = {FIRST: np.iinfo(dtype).max if mode != MARK else 0, LAST: -1, MARK: 0}[mode]  # pyright: ignore
    rows = h * stride + k
    target = np.full(rows * w * channels + int(rng.integers(0, 3)), fill, dtype)
    hh = np.arange(h, dtype=np.int64).reshape(h, 1, 1, 1) * stride
    kh = np.arange(k, dtype=np.int64).reshape(1, 1, 1, k)
    row = hh + kh - pad
    col = np.arange(w, dtype=np.int64).reshape(1, w, 1, 1)
    lane = np.arange(c, dtype=np.int64).reshape(1, 1, c, 1) * lanes
    accesses = [
        (
            int(rng.integers(0, 50)),
            x * channels,
            [(row, w * channels), (col, channels), (lane + j, 1)],
        )
        for j in range(lanes)
        for x in range(int(rng.integers(1, 4)))
    ]
    mask: npt.NDArray[np.bool_] | None = None
    if rng.random() < 0.7:
        ok = (row >= 0) & (row < rows - 1)
        mask = np.broadcast_to(ok & (col < w - pad), (h, w, 1, k)).copy()
        if rng.random() < 0.5:
            mask = mask.any(axis=3, keepdims=True)  # pyright: ignore
    shape = (h, w, c, k)
    tstep = [int(v) for v in rng.integers(0, 9, 4)]
    return target, mode, shape, tstep, mask, accesses


def _edge_cases() -> list[tuple[object, ...]]:
    """Affine blocks that leave the buffer below 0 or at its end, from a
    first iteration inside it (no unchecked row may write past it)."""
    cases: list[tuple[object, ...]] = []
    k5 = np.arange(5, dtype=np.int64)
    rows = np.arange(3, dtype=np.int64).reshape(3, 1)
    cols = np.arange(4, dtype=np.int64).reshape(1, 4)
    for mode, dtype in ((FIRST, np.int32), (LAST, np.int64), (MARK, np.bool_)):
        fill = {FIRST: np.iinfo(np.int32).max, LAST: -1, MARK: 0}[mode]
        for shape, terms, offset, n in (
            ((5,), [(k5, -1)], 2, 10),
            ((5,), [(k5, 1)], 7, 10),
            ((5,), [(k5, 3)], 1, 10),
            ((3, 4), [(rows, 4), (cols, -1)], 2, 12),
            ((3, 4), [(rows, -4), (cols, 1)], 9, 12),
            ((3, 4), [(rows, 4), (cols, 1)], 0, 12),
        ):
            target = np.full(n, fill, dtype)
            tstep = [4, 1][: len(shape)]
            cases.append((target, mode, shape, tstep, None, [(3, offset, terms)]))
    return cases


@pytest.mark.parametrize("seed", range(4))
def test_scatter_is_its_contract(seed: int) -> None:
    """Random loop nests straight into ``scatter`` (affine and arbitrary
    term values, wrapping multipliers, masks varying along some axes,
    addresses in and out of the buffer, up to 19 accesses: more than a C
    call takes), against the grid replay of ``_reference``."""
    lib = usmp_trace_native.load()
    assert lib is not None
    rng = np.random.default_rng(seed)
    cases = [
        (_random_case if n % 2 else _window_case)(rng) for n in range(400)
    ] + _edge_cases()
    for target, mode, shape, tstep, mask, accesses in cases:
        expected = _reference(target, mode, shape, tstep, mask, accesses)  # pyright: ignore[reportArgumentType]
        # (in a larger array: a write past the target shows beside it)
        n = target.size  # type: ignore[attr-defined]
        dtype = target.dtype  # type: ignore[attr-defined]
        # (what any write changes: the largest value below first times, -1
        # below last times, False beside marks)
        fill = {FIRST: np.iinfo(dtype).max if mode != MARK else 0, LAST: -1}
        guard = fill.get(mode, 0)  # pyright: ignore
        guarded = np.full(n + 16, guard, dtype)
        inner = guarded[8 : 8 + n]
        inner[:] = target
        assert scatter(lib, inner, mode, shape, tstep, mask, accesses)  # pyright: ignore[reportArgumentType]
        np.testing.assert_array_equal(inner, expected)
        assert (guarded[:8] == guard).all() and (guarded[8 + n :] == guard).all()


def test_scatter_leaves_what_it_cannot_take_to_numpy() -> None:
    """Terms that differ between the accesses, a time past ``np.int32``, a
    value past 64 bits: False, the target untouched."""
    lib = usmp_trace_native.load()
    assert lib is not None
    t = np.arange(3, dtype=np.int64)
    target = np.full(4, np.iinfo(np.int32).max, np.int32)
    before = target.copy()
    assert not scatter(
        lib, target, FIRST, (3,), [1], None, [(0, 0, [(t, 1)]), (0, 0, [(t, 2)])]
    )
    assert not scatter(lib, target, FIRST, (3,), [1 << 31], None, [(0, 0, [(t, 1)])])
    assert not scatter(lib, target, FIRST, (3,), [1], None, [(0, 1 << 64, [(t, 1)])])
    assert not scatter(lib, target, FIRST, (3,), [1 << 64], None, [(0, 0, [(t, 1)])])
    np.testing.assert_array_equal(target, before)
    assert scatter(lib, target, FIRST, (3,), [1], None, [(0, 0, [(t, 1)])])
    assert target.tolist() == [0, 1, 2, np.iinfo(np.int32).max]


def test_without_a_compiler_the_numpy_path_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No compiler on the path and no cached library: ``compiled`` gives
    None (no exception); ``USMP_NATIVE_REPLAY=0``: ``load`` gives None, and
    the trace is the same."""
    from usmp.planning import minimalloc_native

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("CC", "/nonexistent/cc")
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(
        minimalloc_native.tempfile, "gettempdir", lambda: str(tmp_path / "tmp")
    )
    build = minimalloc_native.compiled.__wrapped__  # (uncached)
    assert build(usmp_trace_native.SOURCE) is None
    monkeypatch.undo()
    module = LocatingParser(new_context(), _EDGES, "edges.mlir").parse_module()
    (f,) = _kernels(module)
    with_c = trace_light(f, range(4), range(4))
    monkeypatch.setenv("USMP_NATIVE_REPLAY", "0")
    usmp_trace_native.load.cache_clear()
    try:
        assert usmp_trace_native.load() is None
        without = trace_light(f, range(4), range(4))
    finally:
        monkeypatch.undo()
        usmp_trace_native.load.cache_clear()
    assert with_c is not None and without is not None
    for i in with_c.sets:
        _same(with_c.sets[i], without.sets[i])


@pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc")
def test_the_c_is_clean_under_sanitizers(tmp_path: Path) -> None:
    """``usmp_trace_scatter.c`` built with ``-Werror -pedantic`` and
    ASan/UBSan, driven with random cases (``_random_case``, the arguments
    ``scatter`` passes) and with inconsistent arguments (rejected: status 1,
    nothing written): every result is the reference's."""
    from usmp.testing.run_c import sanitized_output

    rng = np.random.default_rng(7)
    lines = [f'#include "{usmp_trace_native.SOURCE}"', "#include <stdio.h>"]
    body: list[str] = []
    expected: list[int] = []
    cases = 0
    drawn = [(_random_case if n % 2 else _window_case)(rng) for n in range(80)]
    for target, mode, shape, tstep, mask, accesses in drawn + _edge_cases():
        if not target.size:  # type: ignore[attr-defined]
            continue
        want = _reference(target, mode, shape, tstep, mask, accesses)  # pyright: ignore[reportArgumentType]
        calls = usmp_trace_native._calls(target, mode, shape, tstep, mask, accesses)  # pyright: ignore[reportPrivateUsage, reportArgumentType]
        ctype = {1: "unsigned char", 4: "int32_t", 8: "int64_t"}[target.itemsize]  # type: ignore[attr-defined]
        name = f"t{cases}"
        values = ", ".join(str(int(v)) for v in target)  # type: ignore[attr-defined]
        lines.append(f"static {ctype} {name}[{target.size}] = {{{values}}};")  # type: ignore[attr-defined]
        for k, call in enumerate(calls):
            args: list[str] = []
            for j, a in enumerate(call):
                if a is target:
                    args.append(name)
                elif isinstance(a, np.ndarray):
                    arr = f"{name}_{k}_{j}"
                    el = "unsigned char" if a.dtype == np.bool_ else "int64_t"
                    flat = ", ".join(str(int(v)) for v in a.reshape(-1))
                    lines.append(
                        f"static const {el} {arr}[{max(a.size, 1)}] = {{{flat or 0}}};"
                    )
                    args.append(arr)
                elif a is None:
                    args.append("NULL")
                else:
                    args.append(f"{int(a)}")
            body.append(f'  printf("%d\\n", rt_scatter({", ".join(args)}));')
            expected.append(0)
        body.append(f"  for (i = 0; i < {target.size}; i++)")  # type: ignore[attr-defined]
        body.append(f'    printf("%lld\\n", (long long){name}[i]);')
        expected.extend(int(v) for v in want)
        cases += 1
    # inconsistent: a term's index past its values (stride 5 over 3 values),
    # a time past int32, a mask shorter than its strides
    lines.append(
        "static const int64_t sh[1] = {3}, st1[1] = {1}, big[1] = {1LL << 40};"
    )
    lines.append("static const int64_t zero[1] = {0}, start[2] = {0, 3};")
    lines.append(
        "static const int64_t vals[3] = {0, 1, 2}, five[1] = {5}, one[1] = {1};"
    )
    lines.append("static const unsigned char m1[1] = {1};")
    lines.append("static int32_t out[4] = {9, 9, 9, 9};")
    for call in (
        "rt_scatter(1, 1, sh, zero, st1, 1, vals, start, five, one, zero, NULL, 0, zero, 4, 0, 4, out)",
        "rt_scatter(1, 1, sh, zero, big, 1, vals, start, st1, one, zero, NULL, 0, zero, 4, 0, 4, out)",
        "rt_scatter(1, 1, sh, zero, st1, 1, vals, start, st1, one, zero, m1, 1, one, 4, 0, 4, out)",
        "rt_scatter(17, 1, sh, zero, st1, 1, vals, start, st1, one, zero, NULL, 0, zero, 4, 0, 4, out)",
    ):
        body.append(f'  printf("%d\\n", {call});')
        expected.append(1)
    body.append('  for (i = 0; i < 4; i++) printf("%d\\n", out[i]);')
    expected.extend([9, 9, 9, 9])
    lines += ["int main(void) {", "  int i;", *body, "  return 0;", "}"]
    assert sanitized_output(lines, tmp_path, "scatter") == expected
