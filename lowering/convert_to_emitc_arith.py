"""``arith`` and ``math`` to ``emitc``: one small handler per op.

Semantics kept exact where C differs from MLIR:

* unsigned operations (``divui``, ``remui``, ``shrui``, ``cmpi ult``...,
  ``extui``, ``uitofp``, ``fptoui``) cast their operands to the unsigned type
  of the same width and the result back;
* ``shli`` shifts in the unsigned type (shifting a negative signed value left
  is undefined in C);
* ``floordivsi``/``ceildivsi``/``ceildivui`` are expanded from C's truncating
  ``/`` and ``%``;
* ``trunci`` to ``i1`` keeps the low bit (a C cast to ``bool`` would test for
  non-zero); ``extsi`` from ``i1`` gives ``-1``/``0``;
* ``cmpf`` ordered/unordered predicates are built from C's comparisons (which
  are ordered, except ``!=``); ``maximumf``/``minimumf`` propagate NaN.

Signless ``addi``/``subi``/``muli`` are C's signed arithmetic, as in TVM's C
code: the operator lowering never relies on signed wrap-around (tests build
the C with ``-fsanitize=undefined``, which would report it).
"""

from __future__ import annotations

import math as math_
from collections.abc import Sequence

from xdsl.dialects import arith, math
from xdsl.dialects.builtin import (
    AnyFloat,
    DenseIntOrFPElementsAttr,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    i1,
)
from xdsl.dialects.emitc import EmitC_BinaryOperation
from xdsl.ir import Attribute, Operation, SSAValue

from usmp.diagnostics import located_error
from usmp.dialects import emitc
from usmp.lowering.convert_to_emitc import (
    FunctionLowering,
    Handler,
    convert_type,
    float_suffix,
    unsigned_type,
)

_CMPI = ("eq", "ne", "lt", "le", "gt", "ge", "lt", "le", "gt", "ge")
"""``arith.cmpi`` predicate value -> emitc.cmp predicate (6.. are unsigned)."""


def cast(fl: FunctionLowering, value: SSAValue, type_: Attribute) -> SSAValue:
    """``(type_) value``, or ``value`` itself when it has that type already."""
    if value.type == type_:
        return value
    return fl.result(emitc.CastOp(value, type_))


def zero(fl: FunctionLowering, type_: Attribute) -> SSAValue:
    return constant_of_type(fl, 0, type_)


def constant_of_type(
    fl: FunctionLowering, value: int | float, type_: Attribute
) -> SSAValue:
    if isinstance(type_, emitc.PtrDiffT):
        return fl.index(int(value))
    if isinstance(type_, AnyFloat):
        return fl.constant(FloatAttr(float(value), type_), type_)
    assert isinstance(type_, IntegerType)
    return fl.constant(IntegerAttr(int(value), type_), type_)


def call(
    fl: FunctionLowering, callee: str, args: Sequence[SSAValue], type_: Attribute
) -> SSAValue:
    fl.include("math.h")
    return fl.result(emitc.CallOpaqueOp(callee, args, [type_]))


def _binary(cls: type[EmitC_BinaryOperation], unsigned: bool = False) -> Handler:
    def handler(fl: FunctionLowering, op: Operation) -> None:
        type_ = convert_type(op.results[0].type, op)
        lhs, rhs = (fl.value(v) for v in op.operands)
        if unsigned:
            utype = unsigned_type(type_)
            result = fl.result(cls(cast(fl, lhs, utype), cast(fl, rhs, utype), utype))
            fl.bind(op.results[0], cast(fl, result, type_))
        else:
            fl.bind(op.results[0], fl.result(cls(lhs, rhs, type_)))

    return handler


def _shli(fl: FunctionLowering, op: Operation) -> None:
    type_ = convert_type(op.results[0].type, op)
    utype = unsigned_type(type_)
    lhs, rhs = (cast(fl, fl.value(v), utype) for v in op.operands)
    shifted = fl.result(emitc.BitwiseLeftShiftOp(lhs, rhs, utype))
    fl.bind(op.results[0], cast(fl, shifted, type_))


def _div_adjusted(
    fl: FunctionLowering, op: Operation, floor: bool, unsigned: bool
) -> None:
    """``a / b`` rounded toward -inf (floor) or +inf (ceil) from C's ``/``, ``%``."""
    type_ = convert_type(op.results[0].type, op)
    work = unsigned_type(type_) if unsigned else type_
    a, b = (cast(fl, fl.value(v), work) for v in op.operands)
    q = fl.result(emitc.DivOp(a, b, work))
    r = fl.result(emitc.RemOp(a, b, work))
    inexact = fl.result(emitc.CmpOp("ne", r, zero(fl, work)))
    if unsigned:
        adjust = inexact
    else:
        r_neg = fl.result(emitc.CmpOp("lt", r, zero(fl, work)))
        b_neg = fl.result(emitc.CmpOp("lt", b, zero(fl, work)))
        signs = fl.result(emitc.CmpOp("ne" if floor else "eq", r_neg, b_neg))
        adjust = fl.result(emitc.LogicalAndOp(inexact, signs))
    one = constant_of_type(fl, 1, work)
    step = emitc.SubOp(q, one, work) if floor else emitc.AddOp(q, one, work)
    adjusted = fl.result(emitc.ConditionalOp(adjust, fl.result(step), q))
    fl.bind(op.results[0], cast(fl, adjusted, type_))


def _cmpi(fl: FunctionLowering, op: arith.CmpiOp) -> None:
    pred = op.predicate.value.data
    lhs, rhs = fl.value(op.lhs), fl.value(op.rhs)
    if pred >= 6:
        utype = unsigned_type(lhs.type)
        lhs, rhs = cast(fl, lhs, utype), cast(fl, rhs, utype)
    fl.bind(op.result, fl.result(emitc.CmpOp(_CMPI[pred], lhs, rhs)))


def _cmpf(fl: FunctionLowering, op: arith.CmpfOp) -> None:
    a, b = fl.value(op.lhs), fl.value(op.rhs)
    name = arith.CMPF_COMPARISON_OPERATIONS[op.predicate.value.data]

    def cmp(p: str, x: SSAValue, y: SSAValue) -> SSAValue:
        return fl.result(emitc.CmpOp(p, x, y))

    def negate(v: SSAValue) -> SSAValue:
        return fl.result(emitc.LogicalNotOp(v))

    def either(x: SSAValue, y: SSAValue) -> SSAValue:
        return fl.result(emitc.LogicalOrOp(x, y))

    simple = {
        "oeq": "eq",
        "ogt": "gt",
        "oge": "ge",
        "olt": "lt",
        "ole": "le",
        "une": "ne",
    }
    unordered = {"ugt": "le", "uge": "lt", "ult": "ge", "ule": "gt"}
    if name in simple:
        result = cmp(simple[name], a, b)
    elif name in unordered:  # true if unordered or the ordered converse fails
        result = negate(cmp(unordered[name], a, b))
    elif name in ("one", "ueq"):
        lt_or_gt = either(cmp("lt", a, b), cmp("gt", a, b))
        result = lt_or_gt if name == "one" else negate(lt_or_gt)
    elif name == "ord":
        result = fl.result(emitc.LogicalAndOp(cmp("eq", a, a), cmp("eq", b, b)))
    elif name == "uno":
        result = either(cmp("ne", a, a), cmp("ne", b, b))
    else:  # "false" / "true"
        result = fl.constant(IntegerAttr(int(name == "true"), i1), i1)
    fl.bind(op.result, result)


def _select(fl: FunctionLowering, op: arith.SelectOp) -> None:
    cond, t, f = (fl.value(v) for v in op.operands)
    fl.bind(op.result, fl.result(emitc.ConditionalOp(cond, t, f)))


def _min_max(predicate: str, unsigned: bool = False) -> Handler:
    def handler(fl: FunctionLowering, op: Operation) -> None:
        a, b = (fl.value(v) for v in op.operands)
        if a is b:  # max(a, a) is a; C's `a > a` is a -Wtautological-compare error
            fl.bind(op.results[0], a)
            return
        x, y = (
            (cast(fl, v, unsigned_type(v.type)) for v in (a, b)) if unsigned else (a, b)
        )
        take_a = fl.result(emitc.CmpOp(predicate, x, y))
        fl.bind(op.results[0], fl.result(emitc.ConditionalOp(take_a, a, b)))

    return handler


def _nan_propagating(predicate: str) -> Handler:
    """``maximumf``/``minimumf``: ``(a > b || a != a) ? a : b`` (NaN wins)."""

    def handler(fl: FunctionLowering, op: Operation) -> None:
        a, b = (fl.value(v) for v in op.operands)
        if a is b:  # also for NaN; and no self-comparison in the C
            fl.bind(op.results[0], a)
            return
        better = fl.result(emitc.CmpOp(predicate, a, b))
        a_nan = fl.result(emitc.CmpOp("ne", a, a))
        take_a = fl.result(emitc.LogicalOrOp(better, a_nan))
        fl.bind(op.results[0], fl.result(emitc.ConditionalOp(take_a, a, b)))

    return handler


def _cast(
    via_unsigned_source: bool = False, via_unsigned_result: bool = False
) -> Handler:
    def handler(fl: FunctionLowering, op: Operation) -> None:
        value = fl.value(op.operands[0])
        type_ = convert_type(op.results[0].type, op)
        if via_unsigned_source and not isinstance(value.type, AnyFloat):
            value = cast(fl, value, unsigned_type(value.type))
        if via_unsigned_result:
            value = cast(fl, value, unsigned_type(type_))
        fl.bind(op.results[0], cast(fl, value, type_))

    return handler


def _extsi(fl: FunctionLowering, op: arith.ExtSIOp) -> None:
    value = fl.value(op.input)
    type_ = convert_type(op.result.type, op)
    if value.type == i1:  # sign extension of one bit: -1 or 0
        minus_one = constant_of_type(fl, -1, type_)
        fl.bind(
            op.result, fl.result(emitc.ConditionalOp(value, minus_one, zero(fl, type_)))
        )
    else:
        fl.bind(op.result, cast(fl, value, type_))


def _trunci(fl: FunctionLowering, op: arith.TruncIOp) -> None:
    value = fl.value(op.input)
    if op.result.type == i1:  # keep the low bit, as MLIR does
        low = fl.result(
            emitc.BitwiseAndOp(value, constant_of_type(fl, 1, value.type), value.type)
        )
        value = fl.result(emitc.CmpOp("ne", low, zero(fl, value.type)))
    fl.bind(op.result, cast(fl, value, convert_type(op.result.type, op)))


def _constant(fl: FunctionLowering, op: arith.ConstantOp) -> None:
    value = op.value
    if isinstance(value, IntegerAttr) and isinstance(value.type, IndexType):
        fl.bind(op.result, fl.index(value.value.data))
    elif isinstance(value, IntegerAttr | FloatAttr) and not isinstance(
        value, DenseIntOrFPElementsAttr
    ):
        type_ = convert_type(value.type, op)
        if isinstance(value, FloatAttr) and not math_.isfinite(value.value.data):
            fl.include("math.h")  # INFINITY, NAN
        fl.bind(op.result, fl.constant(value, type_))
    else:
        raise located_error(
            op, "only scalar constants can be emitted as C values (no vector constants)"
        )


def _negf(fl: FunctionLowering, op: arith.NegfOp) -> None:
    fl.bind(op.result, fl.result(emitc.UnaryMinusOp(fl.value(op.operand))))


def _libm(name: str) -> Handler:
    """A C99 ``<math.h>`` function, ``name`` + ``f`` for ``float``."""

    def handler(fl: FunctionLowering, op: Operation) -> None:
        type_ = op.results[0].type
        if not isinstance(type_, AnyFloat):
            raise located_error(
                op, f"'{op.name}' on {type_}: only f32/f64 are supported"
            )
        args = [fl.value(v) for v in op.operands]
        fl.bind(op.results[0], call(fl, name + float_suffix(type_), args, type_))

    return handler


def _rsqrt(fl: FunctionLowering, op: math.RsqrtOp) -> None:
    type_ = op.result.type
    root = call(fl, "sqrt" + float_suffix(type_), [fl.value(op.operand)], type_)
    one = constant_of_type(fl, 1.0, type_)
    fl.bind(op.result, fl.result(emitc.DivOp(one, root, type_)))


def _absi(fl: FunctionLowering, op: math.AbsIOp) -> None:
    x = fl.value(op.operand)
    negative = fl.result(emitc.CmpOp("lt", x, zero(fl, x.type)))
    minus = fl.result(emitc.UnaryMinusOp(x))
    fl.bind(op.result, fl.result(emitc.ConditionalOp(negative, minus, x)))


HANDLERS: dict[type[Operation], Handler] = {
    arith.ConstantOp: _constant,
    arith.AddiOp: _binary(emitc.AddOp),
    arith.SubiOp: _binary(emitc.SubOp),
    arith.MuliOp: _binary(emitc.MulOp),
    arith.DivSIOp: _binary(emitc.DivOp),
    arith.RemSIOp: _binary(emitc.RemOp),
    arith.DivUIOp: _binary(emitc.DivOp, unsigned=True),
    arith.RemUIOp: _binary(emitc.RemOp, unsigned=True),
    arith.FloorDivSIOp: lambda fl, op: _div_adjusted(
        fl, op, floor=True, unsigned=False
    ),
    arith.CeilDivSIOp: lambda fl, op: _div_adjusted(
        fl, op, floor=False, unsigned=False
    ),
    arith.CeilDivUIOp: lambda fl, op: _div_adjusted(fl, op, floor=False, unsigned=True),
    arith.AndIOp: _binary(emitc.BitwiseAndOp),
    arith.OrIOp: _binary(emitc.BitwiseOrOp),
    arith.XOrIOp: _binary(emitc.BitwiseXorOp),
    arith.ShLIOp: _shli,
    arith.ShRSIOp: _binary(emitc.BitwiseRightShiftOp),
    arith.ShRUIOp: _binary(emitc.BitwiseRightShiftOp, unsigned=True),
    arith.CmpiOp: _cmpi,
    arith.CmpfOp: _cmpf,
    arith.SelectOp: _select,
    arith.MaxSIOp: _min_max("gt"),
    arith.MinSIOp: _min_max("lt"),
    arith.MaxUIOp: _min_max("gt", unsigned=True),
    arith.MinUIOp: _min_max("lt", unsigned=True),
    arith.MaximumfOp: _nan_propagating("gt"),
    arith.MinimumfOp: _nan_propagating("lt"),
    arith.MaxnumfOp: _libm("fmax"),
    arith.MinnumfOp: _libm("fmin"),
    arith.AddfOp: _binary(emitc.AddOp),
    arith.SubfOp: _binary(emitc.SubOp),
    arith.MulfOp: _binary(emitc.MulOp),
    arith.DivfOp: _binary(emitc.DivOp),
    arith.NegfOp: _negf,
    arith.ExtSIOp: _extsi,
    arith.ExtUIOp: _cast(via_unsigned_source=True),
    arith.TruncIOp: _trunci,
    arith.SIToFPOp: _cast(),
    arith.UIToFPOp: _cast(via_unsigned_source=True),
    arith.FPToSIOp: _cast(),
    arith.FPToUIOp: _cast(via_unsigned_result=True),
    arith.ExtFOp: _cast(),
    arith.TruncFOp: _cast(),
    arith.IndexCastOp: _cast(),
    math.RsqrtOp: _rsqrt,
    math.AbsIOp: _absi,
    math.AbsFOp: _libm("fabs"),
    math.PowFOp: _libm("pow"),
    math.Atan2Op: _libm("atan2"),
    math.CopySignOp: _libm("copysign"),
    math.FmaOp: _libm("fma"),
    math.RoundEvenOp: _libm("nearbyint"),
    **{
        getattr(math, cls): _libm(c_name)
        for cls, c_name in (
            ("ExpOp", "exp"),
            ("Exp2Op", "exp2"),
            ("ExpM1Op", "expm1"),
            ("LogOp", "log"),
            ("Log2Op", "log2"),
            ("Log10Op", "log10"),
            ("Log1pOp", "log1p"),
            ("SqrtOp", "sqrt"),
            ("CbrtOp", "cbrt"),
            ("TanhOp", "tanh"),
            ("SinhOp", "sinh"),
            ("CoshOp", "cosh"),
            ("SinOp", "sin"),
            ("CosOp", "cos"),
            ("TanOp", "tan"),
            ("AtanOp", "atan"),
            ("AsinOp", "asin"),
            ("AcosOp", "acos"),
            ("AsinhOp", "asinh"),
            ("AcoshOp", "acosh"),
            ("AtanhOp", "atanh"),
            ("ErfOp", "erf"),
            ("FloorOp", "floor"),
            ("CeilOp", "ceil"),
            ("RoundOp", "round"),
            ("TruncOp", "trunc"),
        )
    },
}
