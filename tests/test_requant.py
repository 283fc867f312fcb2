"""The requantisation helpers (``usmp/lowering/requant.py``): the prelude's C
compiled under ASan/UBSan and compared with the oracle (TFLite's
``MultiplyByQuantizedMultiplier``) on edge and random values, inlined and
folded by gcc, and emitted only when the code calls them."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from usmp.lowering.requant import HELPERS, PRELUDE
from usmp.oracle.quantization import multiply_by_quantized_multiplier as oracle
from usmp.testing.run_c import c_int32_table, sanitized_output

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc")

INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1
EDGES = [0, 1, -1, 2, -2, 3, -3, 127, -128, 255, -256, 2**15, -(2**15)]
EDGES += [2**30, -(2**30), 2**30 - 1, 2**30 + 1, INT32_MAX, INT32_MIN]
EDGES += [INT32_MIN + 1, INT32_MAX - 1]
MULTIPLIERS = [INT32_MIN, INT32_MAX, 2**30, 2**30 + 1, 1395864371, 1518500250]
MULTIPLIERS += [1, 0, -1, -(2**30), -1395864371, INT32_MIN + 1]
SHIFTS = list(range(-31, 31))
"""The oracle's shift range (TFLite's QuantizeMultiplier)."""


def _values() -> list[int]:
    rng = np.random.default_rng(0)
    wide = rng.integers(INT32_MIN, INT32_MAX, 24, endpoint=True)
    # accumulator-sized values, and exact ties of the rounding division
    small = rng.integers(-(2**20), 2**20, 16)
    ties = [(2 * k + 1) << 6 for k in range(-4, 4)]
    return EDGES + [int(v) for v in (*wide, *small)] + ties


def _cases(helper: str) -> tuple[list[int], list[int]]:
    """The multipliers and the signed shifts ``helper`` accepts (``_right``:
    1..31 to the right, ``_right0``: 0..31)."""
    saturating = helper.endswith("_sat")
    ms = MULTIPLIERS if saturating else [m for m in MULTIPLIERS if m != INT32_MIN]
    if "_right0" in helper:
        return ms, [s for s in SHIFTS if s <= 0]
    if "_right" in helper:
        return ms, [s for s in SHIFTS if s < 0]
    if "_left" in helper:
        return ms, [s for s in SHIFTS if s >= 0]
    return ms, SHIFTS


def _argument(helper: str, shift: int) -> int:
    return -shift if "_right" in helper else shift


def test_helpers_match_the_oracle(tmp_path: Path) -> None:
    """Every helper, every shift it takes, edge and random operands and
    multipliers (``INT32_MIN`` only for the ``_sat`` ones): the C (built
    with ``-Werror -pedantic`` and sanitizers, so no undefined behaviour)
    equals TFLite's ``MultiplyByQuantizedMultiplier``."""
    xs = _values()
    lines = [
        "#include <stdint.h>",
        "#include <stdio.h>",
        PRELUDE,
        c_int32_table("X", xs),
        "int main(void) {",
        "  unsigned i, j;",
    ]
    want: list[np.ndarray] = []
    for helper in sorted(HELPERS):
        ms, shifts = _cases(helper)
        args = [_argument(helper, s) for s in shifts]
        lines += [
            "  {",
            f"    {c_int32_table('M', ms)}",
            f"    {c_int32_table('S', args)}",
            "    for (i = 0; i < sizeof M / sizeof *M; ++i)",
            "      for (j = 0; j < sizeof S / sizeof *S; ++j) {",
            "        unsigned k;",
            "        for (k = 0; k < sizeof X / sizeof *X; ++k)",
            f'          printf("%ld\\n", (long){helper}(X[k], M[i], S[j]));',
            "      }",
            "  }",
        ]
        m = np.array(ms, dtype=np.int64)[:, None, None]
        s = np.array(shifts, dtype=np.int64)[None, :, None]
        x = np.array(xs, dtype=np.int64)[None, None, :]
        want.append(np.asarray(oracle(x, m, s), dtype=np.int64).ravel())
    lines += ["  return 0;", "}"]
    got = np.array(sanitized_output(lines, tmp_path, "requant"), dtype=np.int64)
    expected = np.concatenate(want)
    assert got.shape == expected.shape
    bad = np.flatnonzero(got != expected)
    assert not bad.size, [(int(i), int(got[i]), int(expected[i])) for i in bad[:5]]


@pytest.mark.parametrize("compiler", ["gcc", "g++"])
def test_prelude_is_clean_c_and_cpp(tmp_path: Path, compiler: str) -> None:
    if shutil.which(compiler) is None:
        pytest.skip(f"needs {compiler}")
    source = tmp_path / ("p.c" if compiler == "gcc" else "p.cpp")
    source.write_text(
        "#include <stdint.h>\n" + PRELUDE + "int32_t f(int32_t x, int32_t m, "
        "int32_t s) {\n  return "
        + " ^ ".join(f"{h}(x, m, s)" for h in sorted(HELPERS))
        + ";\n}\n"
    )
    std = "-std=c99" if compiler == "gcc" else "-std=c++11"
    subprocess.run(
        [compiler, std, "-Wall", "-Wextra", "-Werror", "-pedantic", "-c", str(source)]
        + ["-o", str(tmp_path / "p.o")],
        check=True,
    )


def test_constant_arguments_fold_into_straight_code(tmp_path: Path) -> None:
    """gcc inlines a helper whose multiplier and shift are immediates (the
    per-tensor case): no call, no branch, and the shift amounts folded."""
    source = tmp_path / "f.c"
    source.write_text(
        "#include <stdint.h>\n" + PRELUDE + "int32_t f(int32_t x) {\n"
        "  return usmp_mbqm_right(x, 1395864371, 8);\n}\n"
        "int32_t g(int32_t x) {\n  return usmp_mbqm_left(x, 1073741824, 2);\n}\n"
    )
    asm = tmp_path / "f.s"
    subprocess.run(
        ["gcc", "-std=c99", "-O2", "-S", "-fno-asynchronous-unwind-tables"]
        + [str(source), "-o", str(asm)],
        check=True,
    )
    body = [
        line.split()[0]
        for line in asm.read_text().splitlines()
        if line.startswith("\t") and not line.startswith("\t.")
    ]
    assert "call" not in body
    assert not [op for op in body if op.startswith("j")], body
