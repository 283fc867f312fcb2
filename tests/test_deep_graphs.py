"""Graphs as deep as they are large compile to C that runs (issue 24).

A chain of operators is as deep as it is long, so no step of the compiler may
recurse along def-use chains or expression trees: ``lower-ops`` computes the
elements a fused group reads deepest first from an explicit stack
(``FusedKernel.at``), the C printer names an expression before it nests more
than ``MAX_EXPRESSION_DEPTH`` operators. Each case builds a chain, compiles
it as ``usmp-compile`` does, builds the C with gcc, runs it and compares it
with numpy. ``benchmarks/deep_chains.py`` sweeps longer chains and times
them.
"""

from __future__ import annotations

import contextlib
import io
import re
import sys
from pathlib import Path

import numpy as np
import pytest

import usmp
from usmp.lowering.c_printer import MAX_EXPRESSION_DEPTH
from usmp.testing.run_c import run_pipeline
from usmp.testing.scale_graphs import chain_graph, chain_reference, operator_count
from usmp.tools.usmp_compile import main as usmp_compile

X = np.arange(-128, 128, 4, dtype=np.int8).reshape(1, 4, 4, 4)
STRICT_O0 = ("-O0", "-Wall", "-Wextra", "-Werror", "-pedantic")


def _chain(n: int, t: str, step: str, extra: str = "") -> str:
    """``@main(%x: t{extra})``: ``n`` ops ``step`` (``{v}``: the previous
    value, ``{t}``: the type) in a chain from ``%x``."""
    lines = [f"func.func @main(%x: {t}{extra}) -> {t} {{"]
    previous = "%x"
    for i in range(n):
        lines.append(f"  %{i} = " + step.format(v=previous, t=t))
        previous = f"%{i}"
    return "\n".join([*lines, f"  func.return {previous} : {t}", "}", ""])


def _relu_chain(n: int) -> str:
    return _chain(n, "tensor<1x64xi8>", "relay.relu {v} : {t} -> {t}")


def test_200_chained_int8_relus(tmp_path: Path) -> None:
    """The issue's case: 200 relus, one fused group (fuse-ops' default depth
    is 256), failed in lower-ops with a RecursionError."""
    source = tmp_path / "relus.mlir"
    source.write_text(_relu_chain(200))
    assert usmp_compile([str(source), "-o", str(tmp_path / "out"), "-q"]) == 0
    (y,) = usmp.Library(tmp_path / "out").run([X.reshape(1, 64)])
    np.testing.assert_array_equal(y, np.maximum(X.reshape(1, 64), 0))


def test_3000_operators_in_one_primitive_function() -> None:
    """3,000 elementwise operators fused into one function (fuse-ops with a
    depth limit above the chain's): one loop nest whose body is the whole
    chain; the output is bit-exact (every step is a bijection of int8).
    3,000 is three times Python's recursion limit, so a recursion along
    the chain fails here as at 10,000 (3 CPU s instead of 8;
    ``benchmarks/deep_chains.py`` runs 10,000 and more). The chain's clips
    read each value twice, so its C statements stay short by themselves:
    the expression depth limit is tested on a chain of single uses below."""
    n = 3_000
    assert n > 2 * sys.getrecursionlimit()
    module = chain_graph(n)
    fused = run_pipeline(module, "plan-devices,fuse-ops{max_depth=20000}")
    primitives = [f for f in fused.ops if "relay.primitive" in f.attributes]
    assert len(primitives) == 1
    assert operator_count(primitives[0]) >= n
    lib = usmp.compile(fused)
    (y,) = lib.run([X], cflags=STRICT_O0)  # gcc -O2 is slow on one long function
    np.testing.assert_array_equal(y, chain_reference(module, X))


def _add_chain(n: int) -> str:
    t = "tensor<1x64xf32>"
    return _chain(n, t, "relay.add {v}, %y : ({t}, {t}) -> {t}", f", %y: {t}")


def test_a_chain_of_single_uses_is_cut_into_bounded_expressions(
    tmp_path: Path,
) -> None:
    """150 float adds, each value used once, in one fused function: inlined
    whole they would be one C expression 150 operators deep (C99 only
    promises 63 nesting levels of parenthesized expressions, and compilers
    recurse on the tree); the C printer names a value every
    ``MAX_EXPRESSION_DEPTH`` operators. The sum is computed in the model's
    order, so the output is bit-exact with numpy's adds one at a time."""
    n = 150
    assert n > 4 * MAX_EXPRESSION_DEPTH
    source = tmp_path / "adds.mlir"
    source.write_text(_add_chain(n))
    lib = usmp.compile(source)
    body = lib.source("codegen/host/src/tvmgen_default_operators.c")
    statements = [line for line in body.splitlines() if " + " in line]
    longest = max(line.count(" + ") for line in statements)
    assert longest <= MAX_EXPRESSION_DEPTH + 1, longest
    assert sum(line.count(" + ") for line in statements) == n  # nothing lost
    x = np.linspace(-3, 3, 64, dtype=np.float32).reshape(1, 64)
    y = np.full((1, 64), 0.1, dtype=np.float32)
    (got,) = lib.run([x, y], cflags=STRICT_O0)
    want = x
    for _ in range(n):
        want = want + y
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("depth", [4, 256])
def test_chain_in_groups_wraps_like_the_oracle(depth: int) -> None:
    """The chain in groups of ``depth`` operators (one C function each): an
    int8 sum inlined into a wider expression must wrap to int8 first, as
    relay's int8 arithmetic does (``(int32_t)(x + 7)`` computed 127 + 7 as
    134, not -122; found by this chain in groups of 4)."""
    module = chain_graph(1_500 if depth > 4 else 60)
    grouped = run_pipeline(module, f"plan-devices,fuse-ops{{max_depth={depth}}}")
    lib = usmp.compile(grouped)
    (y,) = lib.run([X])
    np.testing.assert_array_equal(y, chain_reference(module, X))


@pytest.mark.parametrize("pattern", ["relu", "add"])
def test_fused_chain_of_each_kind(tmp_path: Path, pattern: str) -> None:
    """Chains of one operator kind through ``usmp-compile`` with its default
    fusion (groups of 256): relus (no inlining: each value is read twice)
    and float adds (each value inlined into the next)."""
    t = "tensor<1x8xf32>" if pattern == "add" else "tensor<1x8xi8>"
    lines = [f"func.func @main(%x: {t}) -> {t} {{"]
    if pattern == "add":
        lines.append("  %c = relay.constant dense<0.25> : tensor<f32>")
    previous = "%x"
    n = 1000
    for i in range(n):
        if pattern == "add":
            lines.append(
                f"  %{i} = relay.add {previous}, %c : ({t}, tensor<f32>) -> {t}"
            )
        else:
            lines.append(f"  %{i} = relay.relu {previous} : {t} -> {t}")
        previous = f"%{i}"
    lines += [f"  func.return {previous} : {t}", "}", ""]
    source = tmp_path / "chain.mlir"
    source.write_text("\n".join(lines))
    assert usmp_compile([str(source), "-o", str(tmp_path / "out"), "-q"]) == 0
    x = np.arange(-4, 4, dtype=np.float32 if pattern == "add" else np.int8)
    (y,) = usmp.Library(tmp_path / "out").run([x.reshape(1, 8)])
    expected = x + np.float32(0.25 * n) if pattern == "add" else np.maximum(x, 0)
    np.testing.assert_array_equal(y.ravel(), expected)


def _pad_chain(n: int) -> str:
    lines = [f"func.func @main(%x: tensor<1x4xi8>) -> tensor<1x{4 + n}xi8> {{"]
    previous, width = "%x", 4
    for i in range(n):
        lines.append(
            f"  %{i} = relay.pad {previous} {{pad_width = array<i64: 0, 0, 1, 0>, "
            f"pad_value = {i % 7}.0 : f64}} : tensor<1x{width}xi8> -> "
            f"tensor<1x{width + 1}xi8>"
        )
        previous, width = f"%{i}", width + 1
    lines += [f"  func.return {previous} : tensor<1x{width}xi8>", "}", ""]
    return "\n".join(lines)


def test_nested_conditional_reads_have_a_located_limit(tmp_path: Path) -> None:
    """A pad reads its operand only inside the padding test, so a chain of
    pads in one group nests (C ``if`` in ``if``): 60 compile and run; past
    ``MAX_NESTED_REQUESTS`` it is an error at the operator, not a
    RecursionError."""
    source = tmp_path / "pads.mlir"
    source.write_text(_pad_chain(60))
    assert usmp_compile([str(source), "-o", str(tmp_path / "out"), "-q"]) == 0
    x = np.arange(1, 5, dtype=np.int8).reshape(1, 4)
    (y,) = usmp.Library(tmp_path / "out").run([x])
    expected = [float(59 - k) % 7 for k in range(60)] + [1, 2, 3, 4]
    np.testing.assert_array_equal(y.ravel(), np.array(expected, np.int8))
    source.write_text(_pad_chain(100))
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        status = usmp_compile([str(source), "-o", str(tmp_path / "out2"), "-q"])
    assert status == 1
    assert re.match(
        rf"{re.escape(str(source))}:\d+:3: error: 'relay.pad' is reached "
        "through more than 64 nested operators",
        err.getvalue(),
    ), err.getvalue()
