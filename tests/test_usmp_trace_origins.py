"""The replay's origin checks and writes in C (``usmp_trace_origins``,
``usmp_trace_origins.c``) against the numpy path of ``_Replay.check`` and
``_Replay.write``: the same verdicts and the same memories, bit for bit, on
random memories and byte sets (ranges, index arrays, masks; stamps, bytes
with no value yet, poison, wrong indices, wrong stamps); arguments the C
side cannot take refused with nothing written; the same violations, word
for word, from whole replays of real plans and of every invalid one of
``usmp_replay_invalid.mlir``; the C built once with ASan/UBSan."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

from usmp.dialects import new_context
from usmp.parsing import LocatingParser
from usmp.passes import usmp_replay, usmp_trace_origins
from usmp.passes.usmp_replay import replay_violations
from usmp.passes.usmp_trace_origins import Bytes

pytestmark = pytest.mark.skipif(
    usmp_trace_origins.load() is None, reason="needs a C compiler"
)

STAMP = 1 << 32
FILECHECK = Path(__file__).parent / "filecheck" / "passes"


def _reference_ok(
    logical_memory: npt.NDArray[np.int32],
    physical_memory: npt.NDArray[np.int64],
    logical: npt.NDArray[np.int64],
    phys: npt.NDArray[np.int64],
) -> bool:
    """The contract of ``check``, in numpy on whole 64-bit origins."""
    stamps = logical_memory[logical].astype(np.int64)
    expected = stamps * STAMP + logical
    return bool(((expected == physical_memory[phys]) | (stamps == -1)).all())


def _memories(
    rng: np.random.Generator, n: int
) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.int64]]:
    logical = rng.integers(-1, 5, n).astype(np.int32)
    physical = logical.astype(np.int64) * STAMP + np.arange(n)
    physical[logical == -1] = usmp_replay.POISON
    return logical, physical


def _place(
    logical_memory: npt.NDArray[np.int32],
    physical_memory: npt.NDArray[np.int64],
    li: npt.NDArray[np.int64],
    pi: npt.NDArray[np.int64],
) -> None:
    """The physical bytes ``pi`` holding the origins of the logical bytes
    ``li`` (poison where those have no value yet): every check passes."""
    stamps = logical_memory[li].astype(np.int64)
    physical_memory[pi] = np.where(
        stamps == -1, usmp_replay.POISON, stamps * STAMP + li
    )


def _spoil(
    rng: np.random.Generator, physical: npt.NDArray[np.int64], kind: int
) -> None:
    """One kind of wrong origin at a few random bytes (0: none)."""
    at = rng.choice(physical.size, min(3, physical.size), replace=False)
    if kind == 1:
        physical[at] += 1  # the right stamp, a wrong index
    elif kind == 2:
        physical[at] += STAMP  # a wrong stamp, the right index
    elif kind == 3:
        physical[at] = usmp_replay.POISON


def _bytes(
    rng: np.random.Generator, n: int, span: int
) -> tuple[Bytes, npt.NDArray[np.int64]]:
    """A range or an ascending index array within ``[0, n)`` (and its
    indices); ``span`` of them."""
    if rng.random() < 0.5:
        lo = int(rng.integers(0, n - span + 1))
        return slice(lo, lo + span), np.arange(lo, lo + span)
    picked = np.sort(rng.choice(n, span, replace=False)).astype(np.int64)
    return picked, picked


@pytest.mark.parametrize("seed", range(40))
def test_check_and_write_are_numpys(seed: int) -> None:
    """On random memories and byte sets, ``check`` gives the reference's
    verdict and ``write`` leaves both memories as numpy's assignment does."""
    lib = usmp_trace_origins.load()
    assert lib is not None
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 300))
    verdicts: list[bool] = []
    for _ in range(20):
        logical_memory, physical_memory = _memories(rng, n)
        span = int(rng.integers(0, n + 1))
        logical, li = _bytes(rng, n, span)
        phys, pi = _bytes(rng, n, span)
        _place(logical_memory, physical_memory, li, pi)
        _spoil(rng, physical_memory, int(rng.integers(0, 4)))
        mask = rng.random(span) < 0.6 if rng.random() < 0.5 else None
        if mask is not None:
            li, pi = li[mask], pi[mask]
        want = _reference_ok(logical_memory, physical_memory, li, pi)
        got = usmp_trace_origins.check(
            lib,
            logical_memory,
            physical_memory,
            logical,
            phys,
            mask,
        )
        assert got == want
        verdicts.append(want)
        stamp = int(rng.integers(0, 1 << 31))
        lm, pm = logical_memory.copy(), physical_memory.copy()
        lm[li] = stamp
        pm[pi] = li + stamp * STAMP
        assert usmp_trace_origins.write(
            lib,
            logical_memory,
            physical_memory,
            logical,
            phys,
            stamp,
            mask,
        )
        np.testing.assert_array_equal(logical_memory, lm)
        np.testing.assert_array_equal(physical_memory, pm)
    assert any(verdicts) and not all(verdicts)  # (both verdicts drawn)


def test_what_the_c_side_cannot_take_is_refused_untouched() -> None:
    """Indices outside a memory, ranges of different lengths, index arrays
    of another type, a negative stamp, a mask of another length: False,
    nothing written (the numpy path decides, and raises where it did)."""
    lib = usmp_trace_origins.load()
    assert lib is not None
    rng = np.random.default_rng(1)
    logical_memory, physical_memory = _memories(rng, 16)
    lm, pm = logical_memory.copy(), physical_memory.copy()
    bad: list[tuple[Any, Any, Any]] = [
        (slice(10, 17), slice(0, 7), None),  # past the logical memory
        (slice(0, 7), slice(10, 17), None),  # past the physical one
        (np.array([1, 16]), np.array([0, 1]), None),
        (np.array([1, 2]), np.array([-1, 1]), None),  # (numpy would wrap)
        (slice(-2, 0), slice(0, 2), None),
        (slice(0, 3), slice(0, 2), None),
        (np.array([1, 2], np.int32), np.array([0, 1]), None),
        (slice(0, 2), slice(0, 2), np.array([True])),
    ]
    for logical, phys, mask in bad:
        got = (
            usmp_trace_origins.check(
                lib,
                logical_memory,
                physical_memory,
                logical,
                phys,
                mask,
            ),
            usmp_trace_origins.write(
                lib,
                logical_memory,
                physical_memory,
                logical,
                phys,
                3,
                mask,
            ),
        )
        assert got == (False, False), (logical, phys, mask)
    assert not usmp_trace_origins.write(
        lib, logical_memory, physical_memory, slice(0, 2), slice(0, 2), -1
    )
    # an index outside, but masked out: taken (numpy would not look at it)
    assert usmp_trace_origins.write(
        lib,
        logical_memory,
        physical_memory,
        np.array([1, 99]),
        np.array([2, 99]),
        3,
        np.array([True, False]),
    )
    lm[1], pm[2] = 3, 3 * STAMP + 1
    np.testing.assert_array_equal(logical_memory, lm)
    np.testing.assert_array_equal(physical_memory, pm)


def _invalid_modules() -> list[str]:
    text = (FILECHECK / "usmp_replay_invalid.mlir").read_text()
    return [s for s in text.split("// -----") if "func.func" in s]


@pytest.mark.parametrize("index", range(len(_invalid_modules())))
def test_invalid_plans_get_the_same_violations(index: int) -> None:
    """Every invalid plan of ``usmp_replay_invalid.mlir``: the same
    violations, word for word, with the C checks as with numpy only."""
    text = _invalid_modules()[index]
    found: list[list[str]] = []
    for native in (True, False):
        module = LocatingParser(new_context(), text, "r.mlir").parse_module()
        try:
            found.append(replay_violations(module, native=native))
        except Exception as e:  # (a malformed plan: the same error)
            found.append([f"{type(e).__name__}: {e}"])
    assert found[0] and found[0] == found[1]


def test_real_plans_and_a_broken_one_are_judged_the_same(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """KWS planned (overlaps on, I/O in the workspace): no violation either
    way, and the C side passes checks (it is used); the plan broken (an
    output placed on the input its operator reads): the same violations."""
    from tests.test_usmp_replay import _kws_planned  # pyright: ignore[reportPrivateUsage]

    lib = usmp_trace_origins.load()
    calls = [0]
    real = usmp_trace_origins.check

    def counted(*args: Any) -> bool:
        ok = real(*args)
        calls[0] += ok
        return ok

    monkeypatch.setattr(usmp_trace_origins, "check", counted)
    module = _kws_planned()
    assert replay_violations(module) == []
    assert calls[0] > 10 and lib is not None
    assert replay_violations(module, native=False) == []
    from xdsl.dialects import memref

    from usmp.dialects.tir import CallOp
    from usmp.passes.usmp_ir import find_main

    dense = [o for o in find_main(module).walk() if isinstance(o, CallOp)][-2]
    source = dense.operands[0].owner.operands[0].owner  # pyright: ignore
    target = dense.operands[-1].owner
    assert isinstance(source, memref.ViewOp) and isinstance(target, memref.ViewOp)
    target.operands[1] = source.byte_shift
    broken = replay_violations(module)
    assert broken and broken == replay_violations(module, native=False)


@pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc")
def test_the_c_is_clean_under_sanitizers(tmp_path: Path) -> None:
    """``usmp_trace_origins.c`` built with ``-Werror -pedantic`` and
    ASan/UBSan, driven with random ranges, index arrays and masks and with
    arguments it must refuse: every result is the reference's."""
    from usmp.testing.run_c import sanitized_output

    rng = np.random.default_rng(3)
    lines = [f'#include "{usmp_trace_origins.SOURCE}"', "#include <stdio.h>"]
    body: list[str] = []
    expected: list[int] = []
    n = 24
    for case in range(30):
        logical_memory, physical_memory = _memories(rng, n)
        span = int(rng.integers(0, n + 1))
        logical, li = _bytes(rng, n, span)
        phys, pi = _bytes(rng, n, span)
        _place(logical_memory, physical_memory, li, pi)
        _spoil(rng, physical_memory, case % 4)
        mask = rng.random(span) < 0.6 if case % 3 == 0 else None
        ok = _reference_ok(
            logical_memory,
            physical_memory,
            li if mask is None else li[mask],
            pi if mask is None else pi[mask],
        )
        name = f"c{case}"
        lines.append(
            f"static int32_t {name}_l[{n}] = "
            f"{{{', '.join(str(int(v)) for v in logical_memory)}}};"
        )
        lines.append(
            f"static int64_t {name}_p[{n}] = "
            f"{{{', '.join(f'{int(v)}LL' for v in physical_memory)}}};"
        )

        def side(x: object, values: npt.NDArray[np.int64], array: str) -> str:
            if isinstance(x, slice):
                return f"{x.start}, NULL"
            lines.append(
                f"static const int64_t {array}[{max(values.size, 1)}] = "
                f"{{{', '.join(str(int(v)) for v in values) or 0}}};"
            )
            return f"0, {array}"

        m = "NULL"
        if mask is not None:
            lines.append(
                f"static const unsigned char {name}_m[{max(span, 1)}] = "
                f"{{{', '.join(str(int(v)) for v in mask) or 0}}};"
            )
            m = f"{name}_m"
        args = (
            f"{name}_l, {n}, {name}_p, {n}, {span}, {side(logical, li, name + '_li')}, "
            f"{side(phys, pi, name + '_pi')}, {m}"
        )
        body.append(f'  printf("%lld\\n", (long long)rt_check({args}));')
        expected.append(0 if ok else 1)
        stamp = int(rng.integers(0, 1 << 31))
        body.append(f'  printf("%d\\n", rt_write({args}, {stamp}));')
        expected.append(0)
        sel_l = li if mask is None else li[mask]
        sel_p = pi if mask is None else pi[mask]
        logical_memory[sel_l] = stamp
        physical_memory[sel_p] = sel_l + stamp * STAMP
        body.append(f"  for (i = 0; i < {n}; i++)")
        body.append(
            f'    printf("%lld %lld\\n", (long long){name}_l[i], '
            f"(long long){name}_p[i]);"
        )
        for a, b in zip(logical_memory, physical_memory, strict=True):
            expected += [int(a), int(b)]
    # refused: past either memory, an index array entry outside, a negative
    # stamp, a negative count
    lines.append("static int32_t rl[4] = {1, 1, 1, 1};")
    lines.append("static int64_t rp[4] = {7, 7, 7, 7};")
    lines.append("static const int64_t out[2] = {0, 4};")
    for call in (
        "rt_check(rl, 4, rp, 4, 3, 2, NULL, 0, NULL, NULL)",
        "rt_check(rl, 4, rp, 4, 2, 0, NULL, 0, out, NULL)",
        "rt_write(rl, 4, rp, 4, 3, 0, NULL, 2, NULL, NULL, 5)",
        "rt_write(rl, 4, rp, 4, 2, 0, out, 0, NULL, NULL, 5)",
        "rt_write(rl, 4, rp, 4, 2, 0, NULL, 0, NULL, NULL, -3)",
        "rt_write(rl, 4, rp, 4, -1, 0, NULL, 0, NULL, NULL, 5)",
    ):
        body.append(f'  printf("%lld\\n", (long long){call});')
        expected.append(-1)
    body.append(
        '  for (i = 0; i < 4; i++) printf("%d %lld\\n", rl[i], (long long)rp[i]);'
    )
    expected += [1, 7] * 4
    lines += ["int main(void) {", "  int i;", *body, "  return 0;", "}"]
    assert sanitized_output(lines, tmp_path, "origins") == expected
