"""The C of ``convert-to-emitc`` computes what the MLIR ops mean.

Each test builds one entry function applying many ops elementwise to edge
values, emits C, runs it under ASan/UBSan and compares with numpy models of
MLIR's semantics: integers bit for bit, floats exactly where C99 guarantees
it (arithmetic, comparisons with NaN) and within 1e-6 for libm calls.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from usmp.testing.run_c import run_module

N = 64


def module(inputs: list[tuple[str, str]], outputs: list[tuple[str, str, str]]) -> str:
    """An entry function over ``N`` elements: ``outputs`` are (name, element
    type, body computing ``%r`` from ``%<input name>``)."""
    args = [f"%{n}_in: memref<{N}x{t}>" for n, t in inputs]
    args += [f"%out_{n}: memref<{N}x{t}>" for n, t, _ in outputs]
    loads = "".join(
        f"    %{n} = memref.load %{n}_in[%i] : memref<{N}x{t}>\n" for n, t in inputs
    )
    bodies = ""
    for n, t, body in outputs:
        for temp in set(re.findall(r"(%[a-z]\w*) =", body)):  # unique per output
            body = re.sub(re.escape(temp) + r"\b", f"{temp}_{n}", body)
        bodies += "    " + body.replace("\n", "\n    ") + "\n"
        bodies += f"    memref.store %r_{n}, %out_{n}[%i] : memref<{N}x{t}>\n"
    names = ", ".join(f'"{n}"' for n, _ in inputs)
    outs = ", ".join(f'"out_{n}"' for n, _, _ in outputs)
    attrs = (
        f"tir.prim_func, tir.main, tir.input_names = [{names}], "
        f"tir.output_names = [{outs}]"
    )
    return f"""
func.func @tvmgen_sem___tvm_main__({", ".join(args)}) attributes {{{attrs}}} {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %cn = arith.constant {N} : index
  scf.for %i = %c0 to %cn step %c1 {{
{loads}{bodies}  }}
  func.return
}}
"""


def edge_i32(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    special = np.array(
        [0, 1, -1, 7, -7, 2**31 - 1, -(2**31), 100, -100, 3], dtype=np.int64
    )
    a = np.concatenate(
        [special, rng.integers(-(2**31), 2**31, N - len(special))]
    ).astype(np.int32)
    b = rng.permutation(
        np.concatenate([special[::-1], rng.integers(-1000, 1000, N - len(special))])
    )
    b = b.astype(np.int32)
    b[b == 0] = 5  # division by zero is undefined in both MLIR and C
    b[(a == -(2**31)) & (b == -1)] = 2  # so is INT_MIN / -1
    return a, b


def floor_div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.floor_divide(a.astype(np.int64), b).astype(np.int32)


def trunc_div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    q = np.abs(a.astype(np.int64)) // np.abs(b.astype(np.int64))
    return (np.sign(a.astype(np.int64)) * np.sign(b) * q).astype(np.int32)


def test_integer_division_and_remainder() -> None:
    a, b = edge_i32(np.random.default_rng(0))
    ops = ["divsi", "remsi", "floordivsi", "ceildivsi", "divui", "remui", "ceildivui"]
    text = module(
        [("a", "i32"), ("b", "i32")],
        [(op, "i32", f"%r = arith.{op} %a, %b : i32") for op in ops],
    )
    got = dict(zip(ops, run_module(text, [a, b], sanitize=True), strict=True))
    a64, b64 = a.astype(np.int64), b.astype(np.int64)
    ua, ub = a.view(np.uint32).astype(np.uint64), b.view(np.uint32).astype(np.uint64)
    q = trunc_div(a, b)
    expected = {
        "divsi": q,
        "remsi": (a64 - q.astype(np.int64) * b64).astype(np.int32),
        "floordivsi": floor_div(a, b),
        "ceildivsi": (-np.floor_divide(-a64, b64)).astype(np.int32),
        "divui": (ua // ub).astype(np.uint32).view(np.int32),
        "remui": (ua % ub).astype(np.uint32).view(np.int32),
        "ceildivui": ((ua + ub - 1) // ub).astype(np.uint32).view(np.int32),
    }
    for op in ops:
        np.testing.assert_array_equal(got[op], expected[op], err_msg=op)


def test_shifts_min_max_compare() -> None:
    a, b = edge_i32(np.random.default_rng(1))
    s = (b & 31).astype(np.int32)
    outputs = [
        ("shli", "i32", "%s = arith.andi %b, %c31 : i32\n%r = arith.shli %a, %s : i32"),
        (
            "shrsi",
            "i32",
            "%s = arith.andi %b, %c31 : i32\n%r = arith.shrsi %a, %s : i32",
        ),
        (
            "shrui",
            "i32",
            "%s = arith.andi %b, %c31 : i32\n%r = arith.shrui %a, %s : i32",
        ),
        ("maxsi", "i32", "%r = arith.maxsi %a, %b : i32"),
        ("minui", "i32", "%r = arith.minui %a, %b : i32"),
        ("xor", "i32", "%r = arith.xori %a, %b : i32"),
    ]
    predicates = ["eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge"]
    outputs += [(p, "i1", f"%r = arith.cmpi {p}, %a, %b : i32") for p in predicates]
    text = module([("a", "i32"), ("b", "i32")], outputs).replace(
        "  %c0 = arith.constant 0 : index",
        "  %c31 = arith.constant 31 : i32\n  %c0 = arith.constant 0 : index",
    )
    got = dict(
        zip(
            [o[0] for o in outputs],
            run_module(text, [a, b], sanitize=True),
            strict=True,
        )
    )
    ua, ub = a.view(np.uint32), b.view(np.uint32)
    np.testing.assert_array_equal(
        got["shli"], (ua << s.astype(np.uint32)).view(np.int32)
    )
    np.testing.assert_array_equal(got["shrsi"], a >> s)
    np.testing.assert_array_equal(
        got["shrui"], (ua >> s.astype(np.uint32)).view(np.int32)
    )
    np.testing.assert_array_equal(got["maxsi"], np.maximum(a, b))
    np.testing.assert_array_equal(got["minui"], np.minimum(ua, ub).view(np.int32))
    np.testing.assert_array_equal(got["xor"], a ^ b)
    for p in predicates:
        x, y = (ua, ub) if p[0] == "u" else (a, b)
        name = {"eq": "equal", "ne": "not_equal"}.get(p) or {
            "lt": "less",
            "le": "less_equal",
            "gt": "greater",
            "ge": "greater_equal",
        }[p[1:]]
        np.testing.assert_array_equal(got[p], getattr(np, name)(x, y), err_msg=p)


def test_casts() -> None:
    rng = np.random.default_rng(2)
    a = np.concatenate(
        [[0, -1, 127, -128, 255, 65535, -(2**31)], rng.integers(-(2**31), 2**31, N - 7)]
    ).astype(np.int32)
    f = np.concatenate(
        [[0.5, -0.5, 1.99, -1.99, 100.0, -3e4, 0.0], rng.uniform(-1000, 1000, N - 7)]
    ).astype(np.float32)
    outputs = [
        ("trunc8", "i8", "%r = arith.trunci %a : i32 to i8"),
        (
            "extui",
            "i32",
            "%t = arith.trunci %a : i32 to i8\n%r = arith.extui %t : i8 to i32",
        ),
        (
            "extsi",
            "i32",
            "%t = arith.trunci %a : i32 to i8\n%r = arith.extsi %t : i8 to i32",
        ),
        ("bit", "i1", "%r = arith.trunci %a : i32 to i1"),
        (
            "extbit",
            "i32",
            "%t = arith.trunci %a : i32 to i1\n%r = arith.extsi %t : i1 to i32",
        ),
        ("sitofp", "f32", "%r = arith.sitofp %a : i32 to f32"),
        ("uitofp", "f64", "%r = arith.uitofp %a : i32 to f64"),
        ("fptosi", "i32", "%r = arith.fptosi %f : f32 to i32"),
        (
            "fptoui",
            "i8",
            "%w = math.absf %f : f32\n%m = arith.minimumf %w, %c255 : f32\n"
            "%r = arith.fptoui %m : f32 to i8",
        ),
        (
            "index",
            "i64",
            "%x = arith.index_cast %a : i32 to index\n%r = arith.index_cast %x : index to i64",  # noqa: E501
        ),
    ]
    text = module([("a", "i32"), ("f", "f32")], outputs).replace(
        "  %c0 = arith.constant 0 : index",
        "  %c255 = arith.constant 255.0 : f32\n  %c0 = arith.constant 0 : index",
    )
    got = dict(
        zip(
            [o[0] for o in outputs],
            run_module(text, [a, f], sanitize=True),
            strict=True,
        )
    )
    np.testing.assert_array_equal(got["trunc8"], a.astype(np.int8))
    np.testing.assert_array_equal(got["extui"], a.astype(np.uint8).astype(np.int32))
    np.testing.assert_array_equal(got["extsi"], a.astype(np.int8).astype(np.int32))
    np.testing.assert_array_equal(got["bit"], (a & 1).astype(bool))
    np.testing.assert_array_equal(got["extbit"], -(a & 1))
    np.testing.assert_array_equal(got["sitofp"], a.astype(np.float32))
    np.testing.assert_array_equal(got["uitofp"], a.view(np.uint32).astype(np.float64))
    np.testing.assert_array_equal(got["fptosi"], np.trunc(f).astype(np.int32))
    np.testing.assert_array_equal(
        got["fptoui"], np.minimum(np.abs(f), 255).astype(np.uint8).view(np.int8)
    )
    np.testing.assert_array_equal(got["index"], a.astype(np.int64))


def test_float_comparisons_and_nan() -> None:
    rng = np.random.default_rng(3)
    special = np.array(
        [0.0, -0.0, np.nan, 1.0, -np.inf, np.inf, np.nan, 2.5], dtype=np.float32
    )
    a = np.concatenate([special, rng.standard_normal(N - len(special))]).astype(
        np.float32
    )
    b = np.concatenate([special[::-1], rng.standard_normal(N - len(special))]).astype(
        np.float32
    )
    b[8:16] = a[8:16]  # some equal pairs
    predicates = [
        "false",
        "oeq",
        "ogt",
        "oge",
        "olt",
        "ole",
        "one",
        "ord",
        "ueq",
        "ugt",
        "uge",
        "ult",
        "ule",
        "une",
        "uno",
        "true",
    ]
    outputs = [(p, "i1", f"%r = arith.cmpf {p}, %a, %b : f32") for p in predicates]
    outputs += [
        ("maximumf", "f32", "%r = arith.maximumf %a, %b : f32"),
        ("minimumf", "f32", "%r = arith.minimumf %a, %b : f32"),
        ("maxnumf", "f32", "%r = arith.maxnumf %a, %b : f32"),
        (
            "select",
            "f32",
            "%c = arith.cmpf olt, %a, %b : f32\n%r = arith.select %c, %a, %b : f32",
        ),
        ("negf", "f32", "%r = arith.negf %a : f32"),
        ("divf", "f32", "%r = arith.divf %a, %b : f32"),
    ]
    got = dict(
        zip(
            [o[0] for o in outputs],
            run_module(module([("a", "f32"), ("b", "f32")], outputs), [a, b]),
            strict=True,
        )
    )
    with np.errstate(invalid="ignore", divide="ignore"):
        unordered = np.isnan(a) | np.isnan(b)
        ordered = {
            "eq": a == b,
            "gt": a > b,
            "ge": a >= b,
            "lt": a < b,
            "le": a <= b,
            "ne": (a < b) | (a > b),
        }
        for p in predicates:
            if p in ("false", "true"):
                want = np.full(N, p == "true")
            elif p == "ord":
                want = ~unordered
            elif p == "uno":
                want = unordered
            elif p[0] == "o":
                want = ordered[p[1:]] & ~unordered
            else:
                want = ordered[p[1:]] | unordered
            np.testing.assert_array_equal(got[p], want, err_msg=p)
        np.testing.assert_array_equal(got["maximumf"], np.maximum(a, b))
        np.testing.assert_array_equal(got["minimumf"], np.minimum(a, b))
        np.testing.assert_array_equal(got["maxnumf"], np.fmax(a, b))
        np.testing.assert_array_equal(got["select"], np.where(a < b, a, b))
        np.testing.assert_array_equal(got["negf"], -a)
        np.testing.assert_array_equal(got["divf"], a / b)


@pytest.mark.parametrize("element", ["f32", "f64"])
def test_math_functions(element: str) -> None:
    dtype = np.float32 if element == "f32" else np.float64
    x = np.random.default_rng(4).uniform(0.1, 4.0, N).astype(dtype)
    x[:6] = [0.5, 1.5, 2.5, -0.5, -2.5, 3.5]
    ops = {
        "exp": np.exp,
        "log": np.log,
        "tanh": np.tanh,
        "floor": np.floor,
        "ceil": np.ceil,
        "round": lambda v: np.sign(v) * np.floor(np.abs(v) + 0.5),
        "roundeven": np.round,
        "absf": np.abs,
        "erf": None,
        "rsqrt": lambda v: 1 / np.sqrt(np.abs(v)),
    }
    outputs = []
    for op in ops:
        operand = "%x"
        if op == "rsqrt":
            outputs.append(
                (
                    op,
                    element,
                    f"%y = math.absf %x : {element}\n%r = math.rsqrt %y : {element}",
                )
            )
            continue
        if op == "log":
            outputs.append(
                (
                    op,
                    element,
                    f"%y = math.absf %x : {element}\n%r = math.log %y : {element}",
                )
            )
            continue
        outputs.append((op, element, f"%r = math.{op} {operand} : {element}"))
    got = dict(
        zip(ops, run_module(module([("x", element)], outputs), [x]), strict=True)
    )
    import math

    for op, ref in ops.items():
        want = (
            np.vectorize(math.erf)(x)
            if ref is None
            else ref(np.abs(x) if op == "log" else x)
        )
        exact = op in ("floor", "ceil", "round", "roundeven", "absf")
        np.testing.assert_allclose(
            got[op], want.astype(dtype), rtol=0 if exact else 1e-6, err_msg=op
        )


def test_special_float_constants() -> None:
    x = np.array([1.0, -2.0, np.inf, np.nan] * (N // 4), dtype=np.float32)
    outputs = [
        (
            "inf",
            "f32",
            "%inf = arith.constant 0x7F800000 : f32\n"
            "%r = arith.minimumf %x, %inf : f32",
        ),
        (
            "ninf",
            "f32",
            "%m = arith.constant 0xFF800000 : f32\n%r = arith.maximumf %x, %m : f32",
        ),
        (
            "nan",
            "i1",
            "%n = arith.constant 0x7FC00000 : f32\n%r = arith.cmpf uno, %x, %n : f32",
        ),
        (
            "big",
            "i64",
            "%b = arith.constant -9223372036854775808 : i64\n"
            "%z = arith.constant 0 : i64\n%r = arith.addi %b, %z : i64",
        ),
    ]
    got = run_module(module([("x", "f32")], outputs), [x])
    np.testing.assert_array_equal(got[0], np.minimum(x, np.float32(np.inf)))
    np.testing.assert_array_equal(got[1], np.maximum(x, np.float32(-np.inf)))
    np.testing.assert_array_equal(got[2], np.ones(N, dtype=bool))
    np.testing.assert_array_equal(got[3], np.full(N, -(2**63), dtype=np.int64))
