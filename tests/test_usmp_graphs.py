# ruff: noqa: E501  (MLIR source text)
"""Tir modules (the form ``aot-lower-main`` produces) for the usmp tests.

(The graph library lives in a test module so that it is itself tested: the
tests at the end check that every graph parses, verifies and runs.)

Hand-written graphs covering the planner's situations, and a generator of
random graphs: operators with scratch of varied sizes and widths, called once
or several times, constants, aliasing views, copies to outputs. Operators
compute integer arithmetic in scf loops so that xDSL's interpreter
(``usmp.oracle.tir_interpreter``) can run them before and after ``usmp``.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field


def elementwise_op(
    name: str,
    in_lengths: list[int],
    out_length: int,
    scratch: list[tuple[int, str]],
    coefficients: list[int],
    bias: int,
) -> str:
    """``out[i] = trunc(sum_j c_j * in_j[i % len_j] + bias)``, staged through
    each scratch buffer (``(length, int type)``, length >= out_length) in turn:
    every scratch is written for all its elements and read back, so a plan
    that lets it overlap a live buffer changes the result."""
    args = [f"%in{j}: memref<{n}xi8>" for j, n in enumerate(in_lengths)]
    args.append(f"%out: memref<{out_length}xi8>")
    lines = [f"func.func @{name}({', '.join(args)}) attributes {{tir.prim_func}} {{"]
    lines += [
        "  %c0 = arith.constant 0 : index",
        "  %c1 = arith.constant 1 : index",
        f"  %n = arith.constant {out_length} : index",
    ]
    for k, (length, ty) in enumerate(scratch):
        lines.append(
            f'  %s{k} = tir.allocate {{name_hint = "scratch{k}"}} : memref<{length}x{ty}>'
        )
    # stage 0: the sum, in i32, into the first scratch (or straight out)
    lines.append("  scf.for %i = %c0 to %n step %c1 {")
    lines.append(f"    %acc0 = arith.constant {bias} : i32")
    acc = "%acc0"
    for j, n in enumerate(in_lengths):
        lines += [
            f"    %len{j} = arith.constant {n} : index",
            f"    %idx{j} = arith.remsi %i, %len{j} : index",
            f"    %v{j} = memref.load %in{j}[%idx{j}] : memref<{n}xi8>",
            f"    %w{j} = arith.extsi %v{j} : i8 to i32",
            f"    %k{j} = arith.constant {coefficients[j]} : i32",
            f"    %p{j} = arith.muli %w{j}, %k{j} : i32",
            f"    %acc{j + 1} = arith.addi {acc}, %p{j} : i32",
        ]
        acc = f"%acc{j + 1}"
    if scratch:
        length, ty = scratch[0]
        lines.append(_convert(acc, "i32", ty, "%t"))
        lines.append(f"    memref.store %t, %s0[%i] : memref<{length}x{ty}>")
    else:
        lines.append(f"    %t = arith.trunci {acc} : i32 to i8")
        lines.append(f"    memref.store %t, %out[%i] : memref<{out_length}xi8>")
    lines.append("  }")
    # fill the tail of each scratch, then chain scratch k -> k+1 -> out
    for k, (length, ty) in enumerate(scratch):
        lines += [
            f"  %tail{k} = arith.constant {length} : index",
            f"  %fill{k} = arith.constant {k + 3} : {ty}",
            f"  scf.for %i = %n to %tail{k} step %c1 {{",
            f"    memref.store %fill{k}, %s{k}[%i] : memref<{length}x{ty}>",
            "  }",
        ]
    for k, (length, ty) in enumerate(scratch):
        last = k == len(scratch) - 1
        dest, dest_len, dest_ty = (
            ("%out", out_length, "i8")
            if last
            else (f"%s{k + 1}", scratch[k + 1][0], scratch[k + 1][1])
        )
        lines += [
            "  scf.for %i = %c0 to %n step %c1 {",
            f"    %x = memref.load %s{k}[%i] : memref<{length}x{ty}>",
            f"    %back = arith.subi %tail{k}, %c1 : index",
            "    %j = arith.subi %back, %i : index",
            f"    %y = memref.load %s{k}[%j] : memref<{length}x{ty}>",
            f"    %z = arith.addi %x, %y : {ty}",
        ]
        lines.append(_convert("%z", ty, dest_ty, "%r"))
        lines += [
            f"    memref.store %r, {dest}[%i] : memref<{dest_len}x{dest_ty}>",
            "  }",
        ]
    lines += ["  func.return", "}"]
    return "\n".join(lines)


def _width(ty: str) -> int:
    return int(ty[1:])


def _convert(value: str, src: str, dst: str, result: str) -> str:
    if _width(src) > _width(dst):
        return f"    {result} = arith.trunci {value} : {src} to {dst}"
    if _width(src) < _width(dst):
        return f"    {result} = arith.extsi {value} : {src} to {dst}"
    return f"    {result} = arith.addi {value}, {value} : {src}"


@dataclass
class _Graph:
    functions: dict[str, str] = field(default_factory=dict[str, str])
    body: list[str] = field(default_factory=list[str])


def random_graph(seed: int, n_ops: int = 6) -> str:
    """A random straight-line model in aot-lower-main's form (see module doc)."""
    rng = random.Random(seed)
    g = _Graph()
    lengths = [rng.choice((4, 6, 8, 12)) for _ in range(rng.randint(1, 2))]
    inputs = [(f"%in{i}", n) for i, n in enumerate(lengths)]
    available: list[tuple[str, int]] = list(inputs)
    templates: list[tuple[list[tuple[int, str]], list[int], int]] = [
        (
            [(0, rng.choice(("i16", "i32"))) for _ in range(rng.randint(0, 2))],
            [rng.randint(-3, 3) or 1 for _ in range(2)],
            rng.randint(-5, 5),
        )
        for _ in range(3)
    ]
    constants: list[tuple[str, int]] = []
    for c in range(rng.randint(0, 2)):
        n = rng.choice((3, 5, 8))
        values = ", ".join(str(rng.randint(-20, 20)) for _ in range(n))
        g.body.append(
            f'  %constant_{c} = tir.allocate_const {{name_hint = "constant_{c}", '
            f"value = dense<[{values}]> : tensor<{n}xi8>}} : memref<{n}xi8>"
        )
        constants.append((f"%constant_{c}", n))
    allocs: list[str] = []
    calls: list[str] = []
    n_out = rng.randint(1, 2)
    results: list[tuple[str, int]] = []
    for k in range(n_ops):
        arity = rng.randint(1, 2)
        pool = available[-3:] + constants
        operands = [rng.choice(pool) for _ in range(arity)]
        out_len = rng.choice((4, 8, 12, 16))
        t = rng.randrange(len(templates))
        scratch_kinds, coeffs, bias = templates[t]
        scratch = [(out_len + rng.choice((0, 4, 8)), ty) for _, ty in scratch_kinds]
        key = (tuple(n for _, n in operands), out_len, t)
        name = "op_" + "_".join(map(str, (*key[0], out_len, t)))
        if name not in g.functions:
            g.functions[name] = elementwise_op(
                name, [n for _, n in operands], out_len, scratch, coeffs[:arity], bias
            )
        value = f"%sid_{k}"
        allocs.append(
            f'  {value} = tir.allocate {{name_hint = "sid_{k}"}} : memref<{out_len}xi8>'
        )
        types = ", ".join(f"memref<{n}xi8>" for _, n in operands)
        calls.append(
            f"  tir.call @{name}({', '.join(v for v, _ in operands)}, {value}) : "
            f"({types}, memref<{out_len}xi8>) -> ()"
        )
        available.append((value, out_len))
        results.append((value, out_len))
    outputs = results[-n_out:]
    out_args = [f"%output{i}: memref<{n}xi8>" for i, (_, n) in enumerate(outputs)]
    copies = [
        f'  "memref.copy"({v}, %output{i}) : (memref<{n}xi8>, memref<{n}xi8>) -> ()'
        for i, (v, n) in enumerate(outputs)
    ]
    args = [f"{v}: memref<{n}xi8>" for v, n in inputs] + out_args
    in_names = ", ".join(f'"in{i}"' for i in range(len(inputs)))
    out_names = ", ".join(f'"output{i}"' for i in range(len(outputs)))
    main = [
        f"func.func @tvmgen_default___tvm_main__({', '.join(args)}) attributes "
        f"{{tir.prim_func, tir.main, tir.input_names = [{in_names}], "
        f"tir.output_names = [{out_names}]}} {{",
        *g.body,
        *allocs,
        *calls,
        *copies,
        "  func.return",
        "}",
    ]
    return "builtin.module {\n" + "\n".join([*g.functions.values(), *main]) + "\n}\n"


def _op(
    name: str, n_in: int, length: int, scratch: list[tuple[int, str]], k: int
) -> str:
    return elementwise_op(name, [length] * n_in, length, scratch, [k, -k - 1][:n_in], k)


def _main(args: str, body: str, n_in: int = 1, n_out: int = 1) -> str:
    ins = ", ".join(f'"in{i}"' for i in range(n_in))
    outs = ", ".join(f'"output{i}"' for i in range(n_out))
    return (
        f"func.func @tvmgen_default___tvm_main__({args}) attributes {{tir.prim_func, "
        f"tir.main, tir.input_names = [{ins}], tir.output_names = [{outs}]}} {{\n"
        f"{body}\n  func.return\n}}"
    )


def _module(*parts: str, attrs: str = "") -> str:
    return f"builtin.module{attrs} {{\n" + "\n".join(parts) + "\n}\n"


CHAIN = _module(
    _op("conv", 1, 8, [(8, "i32")], 2),
    _op("relu", 1, 8, [], 3),
    _main(
        "%x: memref<8xi8>, %y: memref<8xi8>",
        """  %w = tir.allocate_const {name_hint = "constant_0", value = dense<[1, -2, 3, -4, 5, -6, 7, -8]> : tensor<8xi8>} : memref<8xi8>
  %sid_0 = tir.allocate {name_hint = "sid_0"} : memref<8xi8>
  %sid_1 = tir.allocate {name_hint = "sid_1"} : memref<8xi8>
  tir.call @conv(%x, %sid_0) : (memref<8xi8>, memref<8xi8>) -> ()
  tir.call @relu(%sid_0, %sid_1) : (memref<8xi8>, memref<8xi8>) -> ()
  tir.call @conv(%sid_1, %y) : (memref<8xi8>, memref<8xi8>) -> ()""",
    ),
)
"""A chain; @conv (with scratch) is called at the first and the last step."""

DIAMOND = _module(
    _op("left", 1, 8, [(12, "i16")], 1),
    _op("right", 1, 8, [(8, "i32"), (16, "i16")], 2),
    _op("join", 2, 8, [(8, "i16")], 3),
    _main(
        "%x: memref<8xi8>, %y: memref<8xi8>",
        """  %sid_0 = tir.allocate {name_hint = "sid_0"} : memref<8xi8>
  %sid_1 = tir.allocate {name_hint = "sid_1"} : memref<8xi8>
  %sid_2 = tir.allocate {name_hint = "sid_2"} : memref<8xi8>
  tir.call @left(%x, %sid_0) : (memref<8xi8>, memref<8xi8>) -> ()
  tir.call @right(%x, %sid_1) : (memref<8xi8>, memref<8xi8>) -> ()
  tir.call @join(%sid_0, %sid_1, %sid_2) : (memref<8xi8>, memref<8xi8>, memref<8xi8>) -> ()
  tir.call @join(%sid_2, %sid_0, %y) : (memref<8xi8>, memref<8xi8>, memref<8xi8>) -> ()""",
    ),
)
"""A diamond whose branches both stay live until the join."""

NESTED = _module(
    _op("leaf", 1, 4, [(8, "i32")], 2),
    """func.func @wrapper(%a: memref<2x2xi8>, %b: memref<4xi8>) attributes {tir.prim_func} {
  %flat = memref.reinterpret_cast %a to offset: [0], sizes: [4], strides: [1] : memref<2x2xi8> to memref<4xi8>
  %tmp = tir.allocate {name_hint = "tmp"} : memref<4xi8>
  tir.call @leaf(%flat, %tmp) : (memref<4xi8>, memref<4xi8>) -> ()
  tir.call @leaf(%tmp, %b) : (memref<4xi8>, memref<4xi8>) -> ()
  func.return
}""",
    _main(
        "%x: memref<4xi8>, %y: memref<4xi8>",
        """  %sid_0 = tir.allocate {name_hint = "sid_0"} : memref<4xi8>
  %sid_1 = tir.allocate {name_hint = "sid_1"} : memref<4xi8>
  tir.call @leaf(%x, %sid_0) : (memref<4xi8>, memref<4xi8>) -> ()
  %view = memref.reinterpret_cast %sid_0 to offset: [0], sizes: [2, 2], strides: [2, 1] : memref<4xi8> to memref<2x2xi8>
  tir.call @wrapper(%view, %sid_1) : (memref<2x2xi8>, memref<4xi8>) -> ()
  "memref.copy"(%sid_1, %y) : (memref<4xi8>, memref<4xi8>) -> ()""",
    ),
)
"""An operator calling another (scratch in both), a reshape alias, a copy."""

MULTI_POOL = _module(
    _op("wide", 1, 16, [(16, "i32")], 1),
    _op("narrow", 2, 16, [(20, "i16")], 2),
    _main(
        "%x: memref<16xi8>, %y0: memref<16xi8>, %y1: memref<16xi8>",
        """  %c = tir.allocate_const {name_hint = "constant_0", value = dense<[3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9, 3]> : tensor<16xi8>} : memref<16xi8>
  %sid_0 = tir.allocate {name_hint = "sid_0"} : memref<16xi8>
  %sid_1 = tir.allocate {name_hint = "sid_1"} : memref<16xi8>
  %sid_2 = tir.allocate {name_hint = "sid_2"} : memref<16xi8>
  tir.call @wide(%x, %sid_0) : (memref<16xi8>, memref<16xi8>) -> ()
  tir.call @narrow(%sid_0, %c, %sid_1) : (memref<16xi8>, memref<16xi8>, memref<16xi8>) -> ()
  tir.call @narrow(%sid_1, %sid_0, %sid_2) : (memref<16xi8>, memref<16xi8>, memref<16xi8>) -> ()
  tir.call @wide(%sid_2, %y0) : (memref<16xi8>, memref<16xi8>) -> ()
  tir.call @narrow(%sid_2, %c, %y1) : (memref<16xi8>, memref<16xi8>, memref<16xi8>) -> ()""",
        n_out=2,
    ),
    attrs=' attributes {tir.pools = [#tir.pool_info<"dtcm", workspace, size = 96, '
    'access = {c = "rw"}>, #tir.pool_info<"sram", workspace, access = {c = "rw"}>, '
    '#tir.pool_info<"flash", constant, alignment = 4, access = {c = "ro"}>]}',
)
"""Two workspace pools (the first too small for everything) and a constant pool."""

GRAPHS = {
    "chain": CHAIN,
    "diamond": DIAMOND,
    "nested": NESTED,
    "multi_pool": MULTI_POOL,
}


# -- the library's own tests ---------------------------------------------------

import numpy as np  # noqa: E402
import pytest  # noqa: E402


@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_hand_written_graphs_run(name: str) -> None:
    from tests.test_usmp import parse, run_main

    module = parse(GRAPHS[name])
    outputs = run_main(module, seed=0)
    assert outputs and all(o.size for o in outputs)


def test_random_graphs_are_deterministic_and_run() -> None:
    from tests.test_usmp import parse, run_main

    assert random_graph(3) == random_graph(3)
    assert random_graph(3) != random_graph(4)
    outputs = run_main(parse(random_graph(3)), seed=1)
    # no output element is the poison value everywhere: every output was written
    assert all(not np.all(o == -1) for o in outputs)
