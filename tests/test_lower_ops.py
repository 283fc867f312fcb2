"""Run fuse-ops + lower-ops output and compare it with the relay oracle.

``check_lowering(text, inputs)`` parses a relay ``main``, evaluates it with
the numpy oracle, runs ``fuse-ops`` and ``lower-ops``, executes the result
and compares: integers bit for bit, floats within a tolerance.

Execution does not depend on ``aot-lower-main``: main (after fuse-ops) is
walked op by op in Python — constants to arrays, ``relay.reshape`` to a numpy
reshape, each ``relay.call`` runs the lowered prim func on xDSL's interpreter
(``usmp.oracle.tir_interpreter.make_interpreter``) with fresh buffers (inputs,
then poisoned outputs, so an element the loop nest forgets shows). A failure
is therefore a lowering bug, not a storage-planning one.

Float sums are compared with a tolerance there (the interpreter does not
round like C); ``test_float_reductions_sum_taps_in_order`` runs the C and
checks their order bit for bit.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest
from xdsl.dialects import func
from xdsl.dialects.builtin import MemRefType, ModuleOp, TensorType
from xdsl.interpreter import Interpreter
from xdsl.ir import Operation, SSAValue
from xdsl.parser import Parser

from usmp.dialects import new_context, relay, tir
from usmp.dialects.relay_ops import ReshapeOp
from usmp.oracle.relay_interpreter import evaluate
from usmp.oracle.tir_interpreter import (
    buffer_from_numpy,
    make_interpreter,
    new_buffer,
    numpy_view,
)
from usmp.oracle.values import dense_to_numpy, numpy_dtype
from usmp.passes.fuse_ops import FuseOpsPass
from usmp.passes.lower_ops import LowerOpsPass
from usmp.testing.run_c import run_module


def parse(text: str) -> ModuleOp:
    module = Parser(new_context(), text).parse_module()
    module.verify()
    return module


def lower(module: ModuleOp, max_depth: int = 256) -> ModuleOp:
    ctx = new_context()
    FuseOpsPass(max_depth=max_depth).apply(ctx, module)
    module.verify()
    LowerOpsPass().apply(ctx, module)
    module.verify()
    return module


def run_main(module: ModuleOp, inputs: Sequence[npt.NDArray[Any]]) -> list[np.ndarray]:
    """Execute a main whose calls go to tir prim funcs (see module doc)."""
    functions = {f.sym_name.data: f for f in module.ops if isinstance(f, func.FuncOp)}
    main = functions["main"]
    interpreter = make_interpreter(module)
    values: dict[SSAValue, Any] = dict(zip(main.args, inputs, strict=True))
    for op in main.body.block.ops:
        if isinstance(op, func.ReturnOp):
            return [np.asarray(values[v]) for v in op.arguments]
        values[op.results[0]] = _run_op(op, values, functions, interpreter)
    raise AssertionError("main has no return")


def _run_op(
    op: Operation,
    values: dict[SSAValue, Any],
    functions: dict[str, func.FuncOp],
    interpreter: Interpreter,
) -> Any:
    if isinstance(op, relay.ConstantOp):
        return dense_to_numpy(op.value)  # type: ignore[arg-type]
    if isinstance(op, ReshapeOp):
        t = op.result.type
        assert isinstance(t, TensorType)
        return np.asarray(values[op.data]).reshape(tuple(t.get_shape()))
    if isinstance(op, relay.CallOp):
        callee = functions[op.callee.string_value()]
        assert tir.PRIM_FUNC in callee.attributes, (
            f"@{callee.sym_name.data} not lowered"
        )
        types = list(callee.function_type.inputs.data)
        args = [
            buffer_from_numpy(values[v], t)  # type: ignore[arg-type]
            for v, t in zip(op.args, types, strict=False)
        ]
        outputs = [new_buffer(t) for t in types[len(args) :]]  # type: ignore[arg-type]
        interpreter.call_op(callee, (*args, *outputs))
        results = [numpy_view(b).copy() for b in outputs]
        return results[0] if len(results) == 1 else tuple(results)
    if isinstance(op, relay.TupleGetItemOp):
        return values[op.tuple][op.index.value.data]
    raise AssertionError(f"unexpected op in lowered main: {op.name}")


def check_lowering(
    text: str,
    inputs: Sequence[npt.NDArray[Any]],
    *,
    max_depth: int = 256,
    rtol: float = 1e-5,
    atol: float = 1e-5,
) -> ModuleOp:
    """Oracle(text) == run(lower(text)); returns the lowered module."""
    module = parse(text)
    expected = evaluate(module, list(inputs))
    lowered = lower(module, max_depth)
    got = run_main(lowered, inputs)
    assert len(got) == len(expected)
    for g, e in zip(got, expected, strict=True):
        assert g.dtype == e.dtype and g.shape == e.shape, (
            g.dtype,
            g.shape,
            e.dtype,
            e.shape,
        )
        if e.dtype.kind == "f":
            np.testing.assert_allclose(g, e, rtol=rtol, atol=atol)
        else:
            np.testing.assert_array_equal(g, e)
    return lowered


# ----------------------------------------------------------- IR text helpers


def tensor(shape: Sequence[int], element: str) -> str:
    dims = "".join(f"{d}x" for d in shape)
    return f"tensor<{dims}{element}>"


def dense(values: npt.NDArray[Any]) -> str:
    """``dense<...>`` literal of an array (nested brackets, exact values)."""
    a = np.asarray(values)

    def fmt(v: Any) -> str:
        if a.dtype.kind == "f":
            return f"{float(v):.9e}"
        return str(int(v))

    def nest(x: npt.NDArray[Any]) -> str:
        if x.ndim == 0:
            return fmt(x)
        return "[" + ", ".join(nest(r) for r in x) + "]"

    return f"dense<{nest(a)}>"


def constant(name: str, values: npt.NDArray[Any], element: str) -> str:
    return (
        f"  {name} = relay.constant {dense(values)} : {tensor(values.shape, element)}\n"
    )


def random_array(
    rng: np.random.Generator, shape: Sequence[int], element: str
) -> npt.NDArray[Any]:
    dtype = numpy_dtype(_element_type(element))
    if dtype.kind == "f":
        return rng.standard_normal(shape).astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(
        info.min, info.max, size=shape, endpoint=True, dtype=np.int64
    ).astype(dtype)


def _element_type(element: str) -> Any:
    t = parse(f"func.func @f(%a: tensor<{element}>) {{ func.return }}")
    f = next(iter(t.ops))
    assert isinstance(f, func.FuncOp)
    ty = f.function_type.inputs.data[0]
    assert isinstance(ty, TensorType)
    return ty.element_type


def memref_types(module: ModuleOp, name: str) -> list[MemRefType]:
    for f in module.ops:
        if isinstance(f, func.FuncOp) and f.sym_name.data == name:
            return list(f.function_type.inputs.data)  # type: ignore[arg-type]
    raise KeyError(name)


# ================================================================ tests
#
# Every case: random attributes (hypothesis, derandomised, few examples: the
# machine is shared) and random data (seeded numpy), oracle vs lowered.

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

CASES = settings(
    max_examples=12,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)

CONV_LAYOUTS = [("NHWC", "HWIO"), ("NHWC", "OHWI"), ("NCHW", "OIHW")]


def _attrs(items: dict[str, str]) -> str:
    body = ", ".join(f"{k} = {v}" for k, v in items.items())
    return f" {{{body}}}" if body else ""


def _i64s(values: Sequence[int]) -> str:
    return f"array<i64: {', '.join(map(str, values))}>"


def _i32s(values: Sequence[int] | npt.NDArray[np.integer]) -> str:
    return f"array<i32: {', '.join(map(str, values))}>"


class Graph:
    """A relay main under construction (text)."""

    def __init__(self, rng: np.random.Generator):
        self.rng = rng
        self.args: list[str] = []
        self.inputs: list[npt.NDArray[Any]] = []
        self.lines: list[str] = []
        self.n = 0

    def fresh(self) -> str:
        self.n += 1
        return f"%v{self.n}"

    def input(
        self, shape: Sequence[int], element: str
    ) -> tuple[str, tuple[int, ...], str]:
        name = f"%in{len(self.args)}"
        self.args.append(f"{name}: {tensor(shape, element)}")
        self.inputs.append(random_array(self.rng, shape, element))
        return name, tuple(shape), element

    def const(
        self, values: npt.NDArray[Any], element: str
    ) -> tuple[str, tuple[int, ...], str]:
        name = self.fresh()
        self.lines.append(constant(name, values, element))
        return name, tuple(values.shape), element

    def op(
        self,
        name: str,
        operands: Sequence[tuple[str, tuple[int, ...], str]],
        shape: Sequence[int],
        element: str,
        attrs: dict[str, str] | None = None,
        fmt: str = "unary",
    ) -> tuple[str, tuple[int, ...], str]:
        r = self.fresh()
        out = tensor(shape, element)
        ins = [tensor(s, e) for _, s, e in operands]
        names = ", ".join(v for v, _, _ in operands)
        a = _attrs(attrs or {})
        if fmt == "unary":
            sig = f"{ins[0]} -> {out}"
        else:
            sig = f"({', '.join(ins)}) -> {out}"
        self.lines.append(f"  {r} = relay.{name} {names}{a} : {sig}\n")
        return r, tuple(shape), element

    def text(self, *results: tuple[str, tuple[int, ...], str]) -> str:
        outs = ", ".join(tensor(s, e) for _, s, e in results)
        rets = ", ".join(v for v, _, _ in results)
        types = ", ".join(tensor(s, e) for _, s, e in results)
        return (
            f"func.func @main({', '.join(self.args)}) -> ({outs}) {{\n"
            + "".join(self.lines)
            + f"  func.return {rets} : {types}\n}}\n"
        )


def requantize(
    g: Graph,
    acc: tuple[str, tuple[int, ...], str],
    channel_axis: int,
    per_channel: bool,
) -> tuple[str, tuple[int, ...], str]:
    """bias add, fixed_point_multiply, output zero point, clip, cast to i8."""
    rng = g.rng
    shape = acc[1]
    channels = shape[channel_axis]
    bias_shape = [channels] + [1] * (len(shape) - 1 - channel_axis)
    bias = g.const(rng.integers(-2000, 2000, size=bias_shape).astype(np.int32), "i32")
    v = g.op("add", [acc, bias], shape, "i32", fmt="binary")
    n = channels if per_channel else 1
    multiplier = rng.integers(1 << 30, (1 << 31) - 1, size=n)
    shift = rng.integers(-12, 3, size=n)
    v = g.op(
        "fixed_point_multiply",
        [v],
        shape,
        "i32",
        {
            "multiplier": _i32s(multiplier),
            "shift": _i32s(shift),
            "axis": f"{channel_axis} : i64",
        },
    )
    zp = g.const(np.array(int(rng.integers(-20, 20)), dtype=np.int32), "i32")
    v = g.op("add", [v, zp], shape, "i32", fmt="binary")
    v = g.op(
        "clip", [v], shape, "i32", {"a_min": "-128.0 : f64", "a_max": "127.0 : f64"}
    )
    return g.op("cast", [v], shape, "i8")


@st.composite
def conv_attrs(draw: st.DrawFn) -> dict[str, Any]:
    layout, kernel_layout = draw(st.sampled_from(CONV_LAYOUTS))
    cin = draw(st.integers(1, 4))
    kind = draw(st.sampled_from(["full", "depthwise", "grouped"]))
    groups = {"full": 1, "depthwise": cin, "grouped": 2 if cin % 2 == 0 else 1}[kind]
    cout = groups * draw(st.integers(1, 2 if groups > 1 else 4))
    kh, kw = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    strides = (draw(st.integers(1, 2)), draw(st.integers(1, 2)))
    dilation = (draw(st.integers(1, 2)), draw(st.integers(1, 2)))
    padding = tuple(draw(st.integers(0, 2)) for _ in range(4))
    eh, ew = (kh - 1) * dilation[0] + 1, (kw - 1) * dilation[1] + 1
    h = draw(st.integers(max(1, eh - padding[0] - padding[2]), eh + 3))
    w = draw(st.integers(max(1, ew - padding[1] - padding[3]), ew + 3))
    return dict(
        layout=layout,
        kernel_layout=kernel_layout,
        cin=cin,
        cout=cout,
        groups=groups,
        kh=kh,
        kw=kw,
        strides=strides,
        dilation=dilation,
        padding=padding,
        h=h,
        w=w,
        seed=draw(st.integers(0, 2**16)),
    )


def _conv(g: Graph, a: dict[str, Any], element: str, zps: tuple[int, int] = (0, 0)):
    layout, kernel_layout = a["layout"], a["kernel_layout"]
    cg = a["cin"] // a["groups"]
    dims = {"H": a["kh"], "W": a["kw"], "I": cg, "O": a["cout"]}
    x_shape = (
        (1, a["h"], a["w"], a["cin"])
        if layout == "NHWC"
        else (1, a["cin"], a["h"], a["w"])
    )
    x = g.input(x_shape, element)
    w = g.const(random_array(g.rng, [dims[d] for d in kernel_layout], element), element)
    eh = (a["kh"] - 1) * a["dilation"][0] + 1
    ew = (a["kw"] - 1) * a["dilation"][1] + 1
    top, left, bottom, right = a["padding"]
    oh = (a["h"] + top + bottom - eh) // a["strides"][0] + 1
    ow = (a["w"] + left + right - ew) // a["strides"][1] + 1
    out = (1, oh, ow, a["cout"]) if layout == "NHWC" else (1, a["cout"], oh, ow)
    attrs = {
        "strides": _i64s(a["strides"]),
        "padding": _i64s(a["padding"]),
        "dilation": _i64s(a["dilation"]),
        "groups": f"{a['groups']} : i64",
        "data_layout": f"#relay<data_layout {layout}>",
        "kernel_layout": f"#relay<kernel_layout {kernel_layout}>",
    }
    if zps != (0, 0):
        attrs["input_zero_point"] = f"{zps[0]} : i64"
        attrs["kernel_zero_point"] = f"{zps[1]} : i64"
    acc = "i32" if element == "i8" else "f32"
    return g.op("conv2d", [x, w], out, acc, attrs, fmt="binary")


@CASES
@given(conv_attrs(), st.booleans())
def test_conv2d_int8_requantized(a: dict[str, Any], per_channel: bool) -> None:
    g = Graph(np.random.default_rng(a["seed"]))
    zps = (int(g.rng.integers(-128, 128)), int(g.rng.integers(-3, 4)))
    acc = _conv(g, a, "i8", zps)
    out = requantize(g, acc, 3 if a["layout"] == "NHWC" else 1, per_channel)
    check_lowering(g.text(out), g.inputs)


@CASES
@given(conv_attrs())
def test_conv2d_f32_bias_relu(a: dict[str, Any]) -> None:
    g = Graph(np.random.default_rng(a["seed"]))
    acc = _conv(g, a, "f32")
    channel_axis = 3 if a["layout"] == "NHWC" else 1
    shape = acc[1]
    bias_shape = [shape[channel_axis]] + [1] * (3 - channel_axis)
    bias = g.const(g.rng.standard_normal(bias_shape).astype(np.float32), "f32")
    v = g.op("add", [acc, bias], shape, "f32", fmt="binary")
    out = g.op("relu", [v], shape, "f32")
    check_lowering(g.text(out), g.inputs)


@pytest.mark.parametrize("kernel_layout", ["HWIO", "OHWI"])
@pytest.mark.parametrize("cin", [6, 8])
def test_conv2d_unrolled_channel_loop(kernel_layout: str, cin: int) -> None:
    """More input channels than a fully unrolled loop takes: along HWIO's
    strided I the channel loop runs 3 (6 channels) or 4 (8) taps per
    iteration, along OHWI's contiguous I it stays rolled; exact either way."""
    a = dict(
        layout="NHWC",
        kernel_layout=kernel_layout,
        cin=cin,
        cout=3,
        groups=1,
        kh=3,
        kw=2,
        strides=(1, 2),
        dilation=(1, 1),
        padding=(1, 0, 1, 1),
        h=4,
        w=5,
    )
    g = Graph(np.random.default_rng(cin))
    acc = _conv(g, a, "i8", (-7, 0))
    out = requantize(g, acc, 3, per_channel=True)
    check_lowering(g.text(out), g.inputs)


@pytest.mark.parametrize(("strides", "dilation"), [((1, 1), (1, 1)), ((2, 1), (1, 2))])
def test_depthwise_interior_and_border(
    strides: tuple[int, int], dilation: tuple[int, int]
) -> None:
    """Depthwise 3x3 with padding on an input large enough for both kinds of
    output: windows inside the input (static tap bounds, unrolled) and
    windows over the border (clamped bounds)."""
    a = dict(
        layout="NHWC",
        kernel_layout="HWIO",
        cin=2,
        cout=2,
        groups=2,
        kh=3,
        kw=3,
        strides=strides,
        dilation=dilation,
        padding=(1, 2, 1, 0),
        h=6,
        w=7,
    )
    g = Graph(np.random.default_rng(sum(strides) + sum(dilation)))
    acc = _conv(g, a, "i8", (5, 0))
    out = requantize(g, acc, 3, per_channel=True)
    check_lowering(g.text(out), g.inputs)


@CASES
@given(
    st.integers(1, 3),
    st.integers(1, 12),
    st.integers(1, 6),
    st.booleans(),
    st.integers(0, 2**16),
)
def test_dense_int8_requantized(
    batch: int, depth: int, units: int, per_channel: bool, seed: int
) -> None:
    g = Graph(np.random.default_rng(seed))
    x = g.input((batch, depth), "i8")
    w = g.const(random_array(g.rng, (units, depth), "i8"), "i8")
    izp = int(g.rng.integers(-128, 128))
    acc = g.op(
        "dense",
        [x, w],
        (batch, units),
        "i32",
        {"input_zero_point": f"{izp} : i64"},
        fmt="binary",
    )
    check_lowering(g.text(requantize(g, acc, 1, per_channel)), g.inputs)


@CASES
@given(st.integers(1, 3), st.integers(1, 12), st.integers(1, 6), st.integers(0, 2**16))
def test_dense_f32(batch: int, depth: int, units: int, seed: int) -> None:
    g = Graph(np.random.default_rng(seed))
    x = g.input((batch, depth), "f32")
    w = g.const(random_array(g.rng, (units, depth), "f32"), "f32")
    v = g.op("dense", [x, w], (batch, units), "f32", fmt="binary")
    out = g.op(
        "clip",
        [v],
        (batch, units),
        "f32",
        {"a_min": "-1.5 : f64", "a_max": "2.0 : f64"},
    )
    check_lowering(g.text(out), g.inputs)


@st.composite
def pool_attrs(draw: st.DrawFn) -> dict[str, Any]:
    ph, pw = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    # padding smaller than the window, so no window lies entirely in padding
    padding = (
        draw(st.integers(0, ph - 1)),
        draw(st.integers(0, pw - 1)),
        draw(st.integers(0, ph - 1)),
        draw(st.integers(0, pw - 1)),
    )
    return dict(
        pool_size=(ph, pw),
        strides=(draw(st.integers(1, 2)), draw(st.integers(1, 2))),
        padding=padding,
        h=draw(st.integers(max(1, ph - padding[0] - padding[2]), ph + 3)),
        w=draw(st.integers(max(1, pw - padding[1] - padding[3]), pw + 3)),
        c=draw(st.integers(1, 3)),
        layout=draw(st.sampled_from(["NHWC", "NCHW"])),
        element=draw(st.sampled_from(["i8", "f32"])),
        count_include_pad=draw(st.booleans()),
        seed=draw(st.integers(0, 2**16)),
    )


@CASES
@given(pool_attrs(), st.sampled_from(["max_pool2d", "avg_pool2d"]))
def test_pool2d(a: dict[str, Any], kind: str) -> None:
    g = Graph(np.random.default_rng(a["seed"]))
    nhwc = a["layout"] == "NHWC"
    x = g.input(
        (1, a["h"], a["w"], a["c"]) if nhwc else (1, a["c"], a["h"], a["w"]),
        a["element"],
    )
    (ph, pw), (sh, sw), (top, left, bottom, right) = (
        a["pool_size"],
        a["strides"],
        a["padding"],
    )
    oh = (a["h"] + top + bottom - ph) // sh + 1
    ow = (a["w"] + left + right - pw) // sw + 1
    out = (1, oh, ow, a["c"]) if nhwc else (1, a["c"], oh, ow)
    attrs = {
        "pool_size": _i64s(a["pool_size"]),
        "strides": _i64s(a["strides"]),
        "padding": _i64s(a["padding"]),
        "layout": f"#relay<data_layout {a['layout']}>",
    }
    if kind == "avg_pool2d":
        attrs["count_include_pad"] = "true" if a["count_include_pad"] else "false"
    v = g.op(kind, [x], out, a["element"], attrs)
    check_lowering(g.text(v), g.inputs)


@CASES
@given(
    st.sampled_from(["i8", "i16", "i32", "f32"]),
    st.lists(st.integers(1, 4), min_size=1, max_size=4),
    st.data(),
)
def test_mean_and_global_avg_pool(
    element: str, shape: list[int], data: st.DataObject
) -> None:
    g = Graph(np.random.default_rng(data.draw(st.integers(0, 2**16))))
    x = g.input(shape, element)
    rank = len(shape)
    axes = data.draw(
        st.lists(
            st.integers(-rank, rank - 1),
            min_size=1,
            max_size=rank,
            unique_by=lambda a: a % rank,
        )
    )
    keepdims = data.draw(st.booleans())
    out = [1 if d in {a % rank for a in axes} else s for d, s in enumerate(shape)]
    if not keepdims:
        out = [s for d, s in enumerate(shape) if d not in {a % rank for a in axes}]
    results = [
        g.op(
            "mean",
            [x],
            out,
            element,
            {"axis": _i64s(axes), "keepdims": str(keepdims).lower()},
        )
    ]
    if rank == 4:
        layout = data.draw(st.sampled_from(["NHWC", "NCHW"]))
        pooled = (
            [shape[0], 1, 1, shape[3]]
            if layout == "NHWC"
            else [shape[0], shape[1], 1, 1]
        )
        results.append(
            g.op(
                "global_avg_pool2d",
                [x],
                pooled,
                element,
                {"layout": f"#relay<data_layout {layout}>"},
            )
        )
    check_lowering(g.text(*results), g.inputs)


BINARY = ["add", "subtract", "multiply", "maximum", "minimum"]


@st.composite
def broadcast_shapes(draw: st.DrawFn) -> tuple[list[int], list[int], list[int]]:
    out = draw(st.lists(st.integers(1, 4), min_size=0, max_size=4))

    def operand() -> list[int]:
        keep = draw(st.integers(0, len(out)))
        dims = out[len(out) - keep :]
        return [d if draw(st.booleans()) else 1 for d in dims]

    lhs, rhs = operand(), operand()
    return lhs, rhs, list(np.broadcast_shapes(tuple(lhs), tuple(rhs)))


@CASES
@given(
    broadcast_shapes(),
    st.sampled_from(BINARY),
    st.sampled_from(["i8", "i16", "i32", "f32"]),
    st.integers(0, 2**16),
)
def test_binary_broadcasting(
    shapes: tuple[list[int], list[int], list[int]], kind: str, element: str, seed: int
) -> None:
    lhs_shape, rhs_shape, out = shapes
    g = Graph(np.random.default_rng(seed))
    a = g.input(lhs_shape, element)
    b = g.input(rhs_shape, element)
    v = g.op(kind, [a, b], out, element, fmt="binary")
    check_lowering(g.text(v), g.inputs)


@CASES
@given(broadcast_shapes(), st.sampled_from(["i8", "i16", "i32"]), st.integers(0, 2**16))
def test_right_shift_relu_clip(
    shapes: tuple[list[int], list[int], list[int]], element: str, seed: int
) -> None:
    lhs_shape, rhs_shape, out = shapes
    g = Graph(np.random.default_rng(seed))
    bits = {"i8": 8, "i16": 16, "i32": 32}[element]
    a = g.input(lhs_shape, element)
    dtype = g.inputs[-1].dtype
    amounts = g.const(g.rng.integers(0, bits, size=rhs_shape).astype(dtype), element)
    v = g.op("right_shift", [a, amounts], out, element, fmt="binary")
    r = g.op("relu", [v], out, element)
    c = g.op(
        "clip", [v], out, element, {"a_min": "-7.5 : f64", "a_max": "1.0e+10 : f64"}
    )
    check_lowering(g.text(r, c), g.inputs)


CASTS = [
    ("i32", "i8"),
    ("i8", "i32"),
    ("i16", "i8"),
    ("i8", "i16"),
    ("i32", "f32"),
    ("i8", "f32"),
    ("f32", "i32"),
    ("f32", "i8"),
]


@CASES
@given(
    st.sampled_from(CASTS),
    st.lists(st.integers(1, 4), max_size=3),
    st.integers(0, 2**16),
)
def test_cast(types: tuple[str, str], shape: list[int], seed: int) -> None:
    source, target = types
    g = Graph(np.random.default_rng(seed))
    x = g.input(shape, source)
    if source == "f32":  # float -> int must be in range: scale into it
        g.inputs[-1] = (g.inputs[-1] * 50).astype(np.float32)
    v = g.op("cast", [x], shape, target)
    check_lowering(g.text(v), g.inputs)


@CASES
@given(st.lists(st.integers(1, 4), min_size=1, max_size=4), st.data())
def test_transpose_reshape_pad_fused(shape: list[int], data: st.DataObject) -> None:
    """add -> transpose -> reshape -> pad: one injective group, one loop nest."""
    g = Graph(np.random.default_rng(data.draw(st.integers(0, 2**16))))
    element = data.draw(st.sampled_from(["i8", "f32"]))
    x = g.input(shape, element)
    y = g.input(shape[-1:], element)
    v = g.op("add", [x, y], shape, element, fmt="binary")
    axes = data.draw(st.permutations(range(len(shape))))
    t_shape = [shape[a] for a in axes]
    v = g.op("transpose", [v], t_shape, element, {"axes": _i64s(axes)})
    total = int(np.prod(t_shape))
    r_shape = data.draw(
        st.sampled_from([[total], [1, total], t_shape[::-1], [total, 1, 1]])
    )
    if int(np.prod(r_shape)) != total:
        r_shape = [total]
    v = g.op("reshape", [v], r_shape, element)
    widths = [data.draw(st.integers(0, 2)) for _ in range(2 * len(r_shape))]
    p_shape = [d + widths[2 * i] + widths[2 * i + 1] for i, d in enumerate(r_shape)]
    value = data.draw(st.sampled_from([0, -3, 7]))
    v = g.op(
        "pad",
        [v],
        p_shape,
        element,
        {"pad_width": _i64s(widths), "pad_value": f"{value}.0 : f64"},
    )
    lowered = check_lowering(g.text(v), g.inputs)
    assert _prim_funcs(lowered) == 1


def _prim_funcs(module: ModuleOp) -> int:
    return sum(
        1
        for f in module.ops
        if isinstance(f, func.FuncOp) and tir.PRIM_FUNC in f.attributes
    )


@CASES
@given(st.lists(st.integers(1, 3), min_size=1, max_size=3), st.data())
def test_concatenate(shape: list[int], data: st.DataObject) -> None:
    g = Graph(np.random.default_rng(data.draw(st.integers(0, 2**16))))
    element = data.draw(st.sampled_from(["i8", "i32", "f32"]))
    rank = len(shape)
    axis = data.draw(st.integers(-rank, rank - 1))
    parts = []
    for _ in range(data.draw(st.integers(1, 4))):
        s = list(shape)
        s[axis % rank] = data.draw(st.integers(1, 3))
        x = g.input(s, element)
        # an elementwise producer fuses into the concatenate
        parts.append(
            g.op("maximum", [x, g.input(s, element)], s, element, fmt="binary")
        )
    out = list(shape)
    out[axis % rank] = sum(p[1][axis % rank] for p in parts)
    v = g.op(
        "concatenate", parts, out, element, {"axis": f"{axis} : i64"}, fmt="binary"
    )
    lowered = check_lowering(g.text(v), g.inputs)
    assert _prim_funcs(lowered) == 1


@CASES
@given(st.lists(st.integers(1, 4), min_size=1, max_size=3), st.data())
def test_fixed_point_multiply(shape: list[int], data: st.DataObject) -> None:
    g = Graph(np.random.default_rng(data.draw(st.integers(0, 2**16))))
    x = g.input(shape, "i32")
    # the extremes of the gemmlowp arithmetic: INT32_MIN inputs and multipliers
    flat = g.inputs[-1].reshape(-1)
    flat[: max(1, flat.size // 4)] = np.iinfo(np.int32).min
    rank = len(shape)
    axis = data.draw(st.integers(-rank, rank - 1))
    n = data.draw(st.sampled_from([1, shape[axis % rank]]))
    multiplier = [
        data.draw(st.sampled_from([-(2**31), 2**31 - 1, 1 << 30, 1518500250, 0]))
        for _ in range(n)
    ]
    shift = [data.draw(st.integers(-31, 30)) for _ in range(n)]
    v = g.op(
        "fixed_point_multiply",
        [x],
        shape,
        "i32",
        {
            "multiplier": _i32s(multiplier),
            "shift": _i32s(shift),
            "axis": f"{axis} : i64",
        },
    )
    check_lowering(g.text(v), g.inputs)


@pytest.mark.parametrize(
    "shift",
    [[-3, -9, -1], [2, 0, 5], [-4, 3, 0], [-6, -6, -6]],
    ids=["right", "left", "both", "one"],
)
def test_fixed_point_multiply_per_channel_shifts(shift: list[int]) -> None:
    """Each kind of per-channel shift table (all right shifts, all left
    shifts, both, one shift) with per-channel multipliers, against the
    reference: the kernel's plan, made once per operator, picks the table
    and the direction."""
    g = Graph(np.random.default_rng(7))
    shape = [2, 3]
    x = g.input(shape, "i32")
    g.inputs[-1][:] = np.array([[-(2**31), -77777, 5], [123456789, 3, -1]])
    v = g.op(
        "fixed_point_multiply",
        [x],
        shape,
        "i32",
        {
            "multiplier": _i32s([1518500250, 1 << 30, 2**31 - 1]),
            "shift": _i32s(shift),
            "axis": "1 : i64",
        },
    )
    check_lowering(g.text(v), g.inputs)


@pytest.mark.parametrize(
    ("multiplier", "shift"),
    [
        ([1518500250], [-3, -9, 2]),
        ([1518500250, 1 << 30, -(2**31)], [-5]),
        ([1 << 30, 1 << 30, 1 << 30], [-2, -2, -2]),
    ],
    ids=["one-multiplier", "one-shift", "uniform-per-channel"],
)
def test_fixed_point_multiply_one_value_beside_per_channel(
    multiplier: list[int], shift: list[int]
) -> None:
    """``multiplier`` and ``shift`` each hold one value or one per channel
    (the verifier checks them apart): one per-tensor beside a per-channel
    other, or per-channel values all equal, lower as the reference
    computes them (the plan reads each on its own)."""
    g = Graph(np.random.default_rng(11))
    shape = [2, 3]
    x = g.input(shape, "i32")
    g.inputs[-1][:] = np.array([[-(2**31), -77777, 5], [123456789, 3, -1]])
    v = g.op(
        "fixed_point_multiply",
        [x],
        shape,
        "i32",
        {
            "multiplier": _i32s(multiplier),
            "shift": _i32s(shift),
            "axis": "1 : i64",
        },
    )
    check_lowering(g.text(v), g.inputs)


@CASES
@given(st.lists(st.integers(1, 4), min_size=1, max_size=3), st.data())
def test_quantize_dequantize(shape: list[int], data: st.DataObject) -> None:
    g = Graph(np.random.default_rng(data.draw(st.integers(0, 2**16))))
    element = data.draw(st.sampled_from(["i8", "i16", "i32"]))
    scale = data.draw(st.sampled_from([0.5, 0.0078125, 0.1, 3.0, 1e-3]))
    zp = data.draw(st.integers(-100, 100))
    q = g.input(shape, element)
    real = g.op(
        "dequantize",
        [q],
        shape,
        "f32",
        {"scale": f"{scale!r} : f64", "zero_point": f"{zp} : i64"},
    )
    x = g.input(shape, "f32")
    g.inputs[-1] = (g.inputs[-1] * 100).astype(np.float32)
    # halves exercise round-half-away-from-zero
    g.inputs[-1].reshape(-1)[:1] = np.float32(2.5 * scale)
    target = data.draw(st.sampled_from(["i8", "i16", "i32"]))
    quant = g.op(
        "quantize",
        [x],
        shape,
        target,
        {"scale": f"{scale!r} : f64", "zero_point": f"{zp} : i64"},
    )
    check_lowering(g.text(real, quant), g.inputs)


@CASES
@given(st.lists(st.integers(1, 5), min_size=1, max_size=3), st.data())
def test_int8_softmax_is_one_group(shape: list[int], data: st.DataObject) -> None:
    """dequantize -> softmax -> quantize: one loop nest, no f32 tensor."""
    g = Graph(np.random.default_rng(data.draw(st.integers(0, 2**16))))
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    q = g.input(shape, "i8")
    real = g.op(
        "dequantize",
        [q],
        shape,
        "f32",
        {"scale": "0.0625 : f64", "zero_point": "-3 : i64"},
    )
    sm = g.op("softmax", [real], shape, "f32", {"axis": f"{axis} : i64"})
    out = g.op(
        "quantize",
        [sm],
        shape,
        "i8",
        {"scale": "0.00390625 : f64", "zero_point": "-128 : i64"},
    )
    lowered = check_lowering(g.text(out, sm), g.inputs, rtol=1e-5, atol=1e-6)
    assert _prim_funcs(lowered) == 2  # softmax is also an output: its own group


def _rescale_input(g: Graph, v: tuple[str, tuple[int, ...], str]):
    """The i32 side of a TFLite int8 ADD input: widen, centre, scale up."""
    shape = v[1]
    w = g.op("cast", [v], shape, "i32")
    zp = g.const(np.array(int(g.rng.integers(-10, 10)), dtype=np.int32), "i32")
    w = g.op("subtract", [w, zp], shape, "i32", fmt="binary")
    w = g.op(
        "right_shift",
        [w, g.const(np.array(0, dtype=np.int32), "i32")],
        shape,
        "i32",
        fmt="binary",
    )
    m = int(g.rng.integers(1 << 30, (1 << 31) - 1))
    return g.op(
        "fixed_point_multiply",
        [w],
        shape,
        "i32",
        {"multiplier": _i32s([m]), "shift": _i32s([-1])},
    )


@settings(CASES, max_examples=5)
@given(st.integers(2, 4), st.integers(1, 3), st.integers(0, 2**16))
def test_int8_residual_block(size: int, channels: int, seed: int) -> None:
    """Two requantised convolutions joined by an int8 add: bit-exact, and
    only i8 tensors cross group boundaries (no widened i32 intermediate)."""
    g = Graph(np.random.default_rng(seed))
    x = g.input((1, size, size, channels), "i8")
    a = dict(
        layout="NHWC",
        kernel_layout="HWIO",
        cin=channels,
        cout=channels,
        groups=1,
        kh=3,
        kw=3,
        strides=(1, 1),
        dilation=(1, 1),
        padding=(1, 1, 1, 1),
        h=size,
        w=size,
    )
    a8 = requantize(g, _conv_on(g, x, a), 3, True)
    b8 = requantize(g, _conv_on(g, a8, a), 3, True)
    shortcut = dict(a, kh=1, kw=1, padding=(0, 0, 0, 0))  # projection, as ResNet
    c8 = requantize(g, _conv_on(g, a8, shortcut), 3, True)
    s = g.op(
        "add",
        [_rescale_input(g, b8), _rescale_input(g, c8)],
        b8[1],
        "i32",
        fmt="binary",
    )
    out = requantize(g, s, 3, False)
    lowered = check_lowering(g.text(out), g.inputs)
    main = next(
        f
        for f in lowered.ops
        if isinstance(f, func.FuncOp) and f.sym_name.data == "main"
    )
    crossing = [
        op.results[0].type for op in main.body.block.ops if isinstance(op, relay.CallOp)
    ]
    assert all(str(t).endswith("xi8>") for t in crossing), crossing


def _conv_on(g: Graph, x: tuple[str, tuple[int, ...], str], a: dict[str, Any]):
    w = g.const(
        random_array(g.rng, (a["kh"], a["kw"], a["cin"], a["cout"]), "i8"), "i8"
    )
    attrs = {
        "padding": _i64s(a["padding"]),
        "input_zero_point": f"{int(g.rng.integers(-128, 128))} : i64",
    }
    return g.op("conv2d", [x, w], (*x[1][:3], a["cout"]), "i32", attrs, fmt="binary")


@settings(CASES, max_examples=5)
@given(st.integers(1, 2), st.integers(1, 16), st.data())
def test_quantized_softmax(rows: int, length: int, data: st.DataObject) -> None:
    """TFLite's int8 softmax (gemmlowp fixed point), bit-exact."""
    g = Graph(np.random.default_rng(data.draw(st.integers(0, 2**16))))
    x = g.input((rows, length), "i8")
    attrs = {
        "input_multiplier": f"{data.draw(st.integers(1 << 30, (1 << 31) - 1))} : i64",
        "input_left_shift": f"{data.draw(st.integers(18, 26))} : i64",
        "diff_min": f"{data.draw(st.integers(-300, -1))} : i64",
    }
    v = g.op("quantized_softmax", [x], (rows, length), "i8", attrs)
    check_lowering(g.text(v), g.inputs)


def _sequential_dense(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """f32 dense summing the taps in order, one f32 rounding per step."""
    acc = np.zeros((x.shape[0], w.shape[0]), np.float32)
    for d in range(x.shape[1]):
        acc = (acc + (x[:, d : d + 1] * w[:, d]).astype(np.float32)).astype(np.float32)
    return acc


def _sequential_conv(x: np.ndarray, w: np.ndarray, pad: int) -> np.ndarray:
    """f32 NHWC x HWIO conv2d (stride 1) summing the taps in (kh, kw, ci)
    order, one f32 rounding per step; padded taps add +0.0 (exact)."""
    kh, kw, cin, _ = w.shape
    xp = np.pad(x, ((0, 0), (pad, pad), (pad, pad), (0, 0)))
    oh, ow = xp.shape[1] - kh + 1, xp.shape[2] - kw + 1
    acc = np.zeros((1, oh, ow, w.shape[3]), np.float32)
    for i in range(kh):
        for j in range(kw):
            for c in range(cin):
                tap = xp[:, i : i + oh, j : j + ow, c : c + 1] * w[i, j, c]
                acc = (acc + tap.astype(np.float32)).astype(np.float32)
    return acc


def test_float_reductions_sum_taps_in_order() -> None:
    """Jammed (4 output channels / units per reduction) and unrolled float
    reductions keep every sum's order: the C is bit for bit a sequential f32
    sum per output element."""
    g = Graph(np.random.default_rng(7))
    w_values = random_array(g.rng, (8, 24), "f32")
    wc_values = random_array(g.rng, (3, 3, 6, 8), "f32")
    x = g.input((2, 24), "f32")
    xc = g.input((1, 5, 4, 6), "f32")
    w = g.const(w_values, "f32")
    wc = g.const(wc_values, "f32")
    d = g.op("dense", [x, w], (2, 8), "f32", fmt="binary")
    pad = {"padding": _i64s((1, 1, 1, 1))}
    c = g.op("conv2d", [xc, wc], (1, 5, 4, 8), "f32", pad, fmt="binary")
    dense, conv = run_module(
        g.text(d, c), g.inputs, passes="fuse-ops,lower-ops,aot-lower-main,usmp"
    )
    expected_dense = _sequential_dense(g.inputs[0], w_values)
    expected_conv = _sequential_conv(g.inputs[1], wc_values, 1)
    np.testing.assert_array_equal(dense.view(np.uint32), expected_dense.view(np.uint32))
    np.testing.assert_array_equal(conv.view(np.uint32), expected_conv.view(np.uint32))


def test_an_unexpected_failure_is_reported_at_its_function(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A lowering that fails unexpectedly raises its error with the module
    printed in a note, the primitive function it was lowering marked, as
    xDSL's pattern walker does (``rewrite_in_order`` replaced the walker in
    lower-ops)."""
    from usmp.lowering.prim_func import LowerPrimitiveFunction

    def fail(*_: object) -> None:
        raise ValueError("lowering failed on purpose")

    g = Graph(np.random.default_rng(0))
    a = g.input([2, 3], "i8")
    b = g.input([2, 3], "i8")
    module = parse(g.text(g.op("add", [a, b], [2, 3], "i8", fmt="binary")))
    ctx = new_context()
    FuseOpsPass().apply(ctx, module)
    monkeypatch.setattr(LowerPrimitiveFunction, "match_and_rewrite", fail)
    with pytest.raises(ValueError, match="lowering failed on purpose") as info:
        LowerOpsPass().apply(ctx, module)
    lines = "\n".join(getattr(info.value, "__notes__", [])).splitlines()
    at = lines.index("  | Error while applying pattern: lowering failed on purpose")
    # the mark is under the op it is about: the primitive function's header
    assert '"func.func"() <{sym_name = "tvmgen_default_fused_add"' in lines[at - 2]
