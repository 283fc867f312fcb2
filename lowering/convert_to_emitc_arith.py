"""``arith`` and ``math`` to ``emitc``: one pattern per op (ops that lower
alike share one pattern parametrised by a table).

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
    UnrealizedConversionCastOp,
    i1,
)
from xdsl.dialects.emitc import EmitC_BinaryOperation
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.pattern_rewriter import (
    PatternRewriter,
    RewritePattern,
    op_type_rewrite_pattern,
)

from usmp.diagnostics import located_error
from usmp.dialects import emitc
from usmp.dialects.float_bits import c_nan_error, float_bits
from usmp.lowering.convert_to_emitc_common import (
    PREDICATE_ATTRS,
    ConversionState,
    EmitcPattern,
    OpLowering,
    cmp_op,
    conditional_op,
    convert_type,
    float_suffix,
    unsigned_type,
)
from usmp.lowering.create import create

_CMPI = ("eq", "ne", "lt", "le", "gt", "ge", "lt", "le", "gt", "ge")
"""``arith.cmpi`` predicate value -> emitc.cmp predicate (6.. are unsigned)."""


def cast(lw: OpLowering, value: SSAValue, type_: Attribute) -> SSAValue:
    """``(type_) value``, or ``value`` itself when it has that type already."""
    if value.type == type_:
        return value
    return lw.result(create(emitc.CastOp, (value,), type_))


def replace_by_cast(lw: OpLowering, value: SSAValue, type_: Attribute) -> None:
    """``lw.replace(cast(lw, value, type_))``, the cast built by ``replace_by``."""
    if value.type == type_:
        lw.replace(value)
    else:
        lw.replace_by(emitc.CastOp, (value,), type_)


def constant_of_type(lw: OpLowering, value: int | float, type_: Attribute) -> SSAValue:
    if isinstance(type_, emitc.PtrDiffT):
        return lw.index(int(value))
    if isinstance(type_, AnyFloat):
        return lw.constant(FloatAttr(float(value), type_), type_)
    assert isinstance(type_, IntegerType)
    return lw.constant(IntegerAttr(int(value), type_), type_)


def zero(lw: OpLowering, type_: Attribute) -> SSAValue:
    return constant_of_type(lw, 0, type_)


def call(
    lw: OpLowering, callee: str, args: Sequence[SSAValue], type_: Attribute
) -> SSAValue:
    lw.include("math.h")
    return lw.result(emitc.CallOpaqueOp(callee, args, [type_]))


_BINARY: dict[type[Operation], tuple[type[EmitC_BinaryOperation], bool]] = {
    arith.AddiOp: (emitc.AddOp, False),
    arith.SubiOp: (emitc.SubOp, False),
    arith.MuliOp: (emitc.MulOp, False),
    arith.DivSIOp: (emitc.DivOp, False),
    arith.RemSIOp: (emitc.RemOp, False),
    arith.DivUIOp: (emitc.DivOp, True),
    arith.RemUIOp: (emitc.RemOp, True),
    arith.AndIOp: (emitc.BitwiseAndOp, False),
    arith.OrIOp: (emitc.BitwiseOrOp, False),
    arith.XOrIOp: (emitc.BitwiseXorOp, False),
    arith.ShRSIOp: (emitc.BitwiseRightShiftOp, False),
    arith.ShRUIOp: (emitc.BitwiseRightShiftOp, True),
    arith.AddfOp: (emitc.AddOp, False),
    arith.SubfOp: (emitc.SubOp, False),
    arith.MulfOp: (emitc.MulOp, False),
    arith.DivfOp: (emitc.DivOp, False),
}
"""Source op -> (emitc operator, computed in the unsigned type)."""


class BinaryOpLowering(EmitcPattern):
    """An arith binary op as the C operator of ``_BINARY``."""

    op_classes = tuple(_BINARY)

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if (entry := _BINARY.get(type(op))) is None:
            return
        cls, unsigned = entry
        lw = self.lowering(op, rewriter)
        # (the fields: ``results[0]`` and the ``operands`` view are Python
        # calls per element)
        (result,) = op.results
        type_ = convert_type(result.type, op)
        lhs, rhs = op._operands  # pyright: ignore[reportPrivateUsage]
        if unsigned:
            utype = unsigned_type(type_)
            operands = (cast(lw, lhs, utype), cast(lw, rhs, utype))
            replace_by_cast(lw, lw.result(create(cls, operands, utype)), type_)
        else:
            lw.replace_by(cls, (lhs, rhs), type_)


class ShLIOpLowering(EmitcPattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.ShLIOp, rewriter: PatternRewriter) -> None:
        lw = self.lowering(op, rewriter)
        type_ = convert_type(op.result.type, op)
        utype = unsigned_type(type_)
        lhs, rhs = (cast(lw, v, utype) for v in op.operands)
        shifted = lw.result(create(emitc.BitwiseLeftShiftOp, (lhs, rhs), utype))
        replace_by_cast(lw, shifted, type_)


_ROUNDING_DIV: dict[type[Operation], tuple[bool, bool]] = {
    arith.FloorDivSIOp: (True, False),
    arith.CeilDivSIOp: (False, False),
    arith.CeilDivUIOp: (False, True),
}
"""Source op -> (rounds toward -inf (else +inf), unsigned)."""


class RoundingDivOpLowering(EmitcPattern):
    """``a / b`` rounded toward -inf (floor) or +inf (ceil) from C's ``/``, ``%``."""

    op_classes = tuple(_ROUNDING_DIV)

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if (entry := _ROUNDING_DIV.get(type(op))) is None:
            return
        floor, unsigned = entry
        lw = self.lowering(op, rewriter)
        type_ = convert_type(op.results[0].type, op)
        work = unsigned_type(type_) if unsigned else type_
        a, b = (cast(lw, v, work) for v in op.operands)
        q = lw.result(emitc.DivOp(a, b, work))
        r = lw.result(emitc.RemOp(a, b, work))
        inexact = lw.result(cmp_op("ne", r, zero(lw, work)))
        if unsigned:
            adjust = inexact
        else:
            r_neg = lw.result(cmp_op("lt", r, zero(lw, work)))
            b_neg = lw.result(cmp_op("lt", b, zero(lw, work)))
            signs = lw.result(cmp_op("ne" if floor else "eq", r_neg, b_neg))
            adjust = lw.result(emitc.LogicalAndOp(inexact, signs))
        one = constant_of_type(lw, 1, work)
        step = emitc.SubOp(q, one, work) if floor else emitc.AddOp(q, one, work)
        adjusted = lw.result(conditional_op(adjust, lw.result(step), q))
        replace_by_cast(lw, adjusted, type_)


class CmpiOpLowering(EmitcPattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.CmpiOp, rewriter: PatternRewriter) -> None:
        lw = self.lowering(op, rewriter)
        pred = op.predicate.value.data
        lhs, rhs = op.lhs, op.rhs
        if pred >= 6:
            utype = unsigned_type(lhs.type)
            lhs, rhs = cast(lw, lhs, utype), cast(lw, rhs, utype)
        predicate = PREDICATE_ATTRS[_CMPI[pred]]
        lw.replace_by(emitc.CmpOp, (lhs, rhs), i1, predicate=predicate)


_CMPF_SIMPLE = {"oeq": "eq", "ogt": "gt", "oge": "ge", "olt": "lt", "ole": "le"}
_CMPF_SIMPLE["une"] = "ne"
_CMPF_UNORDERED = {"ugt": "le", "uge": "lt", "ult": "ge", "ule": "gt"}
"""Unordered predicate -> the ordered converse whose failure it is."""


class CmpfOpLowering(EmitcPattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.CmpfOp, rewriter: PatternRewriter) -> None:
        lw = self.lowering(op, rewriter)
        a, b = op.lhs, op.rhs
        name = arith.CMPF_COMPARISON_OPERATIONS[op.predicate.value.data]

        def cmp(p: str, x: SSAValue, y: SSAValue) -> SSAValue:
            return lw.result(cmp_op(p, x, y))

        def negate(v: SSAValue) -> SSAValue:
            return lw.result(emitc.LogicalNotOp(v))

        def either(x: SSAValue, y: SSAValue) -> SSAValue:
            return lw.result(emitc.LogicalOrOp(x, y))

        if name in _CMPF_SIMPLE:
            result = cmp(_CMPF_SIMPLE[name], a, b)
        elif name in _CMPF_UNORDERED:  # unordered, or the ordered converse fails
            result = negate(cmp(_CMPF_UNORDERED[name], a, b))
        elif name in ("one", "ueq"):
            lt_or_gt = either(cmp("lt", a, b), cmp("gt", a, b))
            result = lt_or_gt if name == "one" else negate(lt_or_gt)
        elif name == "ord":
            result = lw.result(emitc.LogicalAndOp(cmp("eq", a, a), cmp("eq", b, b)))
        elif name == "uno":
            result = either(cmp("ne", a, a), cmp("ne", b, b))
        else:  # "false" / "true"
            result = lw.constant(IntegerAttr(int(name == "true"), i1), i1)
        lw.replace(result)


class SelectOpLowering(EmitcPattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.SelectOp, rewriter: PatternRewriter) -> None:
        lw = self.lowering(op, rewriter)
        cond, t, f = (lw.value(v) for v in op.operands)
        lw.replace_by(emitc.ConditionalOp, (cond, t, f), t.type)


_MIN_MAX: dict[type[Operation], tuple[str, bool]] = {
    arith.MaxSIOp: ("gt", False),
    arith.MinSIOp: ("lt", False),
    arith.MaxUIOp: ("gt", True),
    arith.MinUIOp: ("lt", True),
}
"""Source op -> (predicate choosing the first operand, unsigned)."""


class MinMaxIOpLowering(EmitcPattern):
    """``(a > b) ? a : b`` (``<`` for min; compared unsigned for ``*ui``)."""

    op_classes = tuple(_MIN_MAX)

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if (entry := _MIN_MAX.get(type(op))) is None:
            return
        predicate, unsigned = entry
        lw = self.lowering(op, rewriter)
        a, b = op.operands
        if a is b:  # max(a, a) is a; C's `a > a` is a -Wtautological-compare error
            lw.replace(a)
            return
        x, y = (
            (cast(lw, v, unsigned_type(v.type)) for v in (a, b)) if unsigned else (a, b)
        )
        take_a = lw.result(cmp_op(predicate, x, y))
        lw.replace_by(emitc.ConditionalOp, (take_a, a, b), a.type)


_NAN_PROPAGATING = {arith.MaximumfOp: "gt", arith.MinimumfOp: "lt"}


class MinMaxFOpLowering(EmitcPattern):
    """``maximumf``/``minimumf``: ``(a > b || a != a) ? a : b`` (NaN wins)."""

    op_classes = tuple(_NAN_PROPAGATING)

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if (predicate := _NAN_PROPAGATING.get(type(op))) is None:
            return
        lw = self.lowering(op, rewriter)
        a, b = op.operands
        if a is b:  # also for NaN; and no self-comparison in the C
            lw.replace(a)
            return
        better = lw.result(cmp_op(predicate, a, b))
        a_nan = lw.result(cmp_op("ne", a, a))
        take_a = lw.result(emitc.LogicalOrOp(better, a_nan))
        lw.replace(lw.result(conditional_op(take_a, a, b)))


_CASTS: dict[type[Operation], tuple[bool, bool]] = {
    arith.ExtUIOp: (True, False),
    arith.SIToFPOp: (False, False),
    arith.UIToFPOp: (True, False),
    arith.FPToSIOp: (False, False),
    arith.FPToUIOp: (False, True),
    arith.ExtFOp: (False, False),
    arith.TruncFOp: (False, False),
    arith.IndexCastOp: (False, False),
}
"""Source op -> (through the unsigned source type, through the unsigned
result type)."""


class CastOpLowering(EmitcPattern):
    """A conversion as C casts (through the unsigned type where ``_CASTS`` says)."""

    op_classes = tuple(_CASTS)

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if (entry := _CASTS.get(type(op))) is None:
            return
        via_unsigned_source, via_unsigned_result = entry
        lw = self.lowering(op, rewriter)
        value = op.operands[0]
        type_ = convert_type(op.results[0].type, op)
        if via_unsigned_source and not isinstance(value.type, AnyFloat):
            value = cast(lw, value, unsigned_type(value.type))
        if via_unsigned_result:
            value = cast(lw, value, unsigned_type(type_))
        lw.replace(cast(lw, value, type_))


class ScalarReinterpretLowering(EmitcPattern):
    """``builtin.unrealized_conversion_cast`` between a signless and an
    unsigned integer of one width (``lower-ops``' way of keeping ``arith``
    signless on ``ui8`` data): a C conversion (``uint8_t`` <-> ``int8_t``,
    modulo 2^8). Casts of memrefs are the conversion's own materialisations
    and are left alone."""

    @op_type_rewrite_pattern
    def match_and_rewrite(
        self, op: UnrealizedConversionCastOp, rewriter: PatternRewriter
    ) -> None:
        if len(op.inputs) != 1 or len(op.outputs) != 1:
            return
        source, target = op.inputs[0].type, op.outputs[0].type
        if not (isinstance(source, IntegerType) and isinstance(target, IntegerType)):
            return
        lw = self.lowering(op, rewriter)
        replace_by_cast(lw, op.inputs[0], convert_type(target, op))


class ExtSIOpLowering(EmitcPattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.ExtSIOp, rewriter: PatternRewriter) -> None:
        lw = self.lowering(op, rewriter)
        (value,) = op._operands  # (``input``'s and ``result``'s fields)  # pyright: ignore[reportPrivateUsage]
        (result,) = op.results
        type_ = convert_type(result.type, op)
        if value.type == i1:  # sign extension of one bit: -1 or 0
            minus_one = constant_of_type(lw, -1, type_)
            lw.replace(lw.result(conditional_op(value, minus_one, zero(lw, type_))))
        else:
            replace_by_cast(lw, value, type_)


class TruncIOpLowering(EmitcPattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.TruncIOp, rewriter: PatternRewriter) -> None:
        lw = self.lowering(op, rewriter)
        (value,) = op._operands  # (``input``'s and ``result``'s fields)  # pyright: ignore[reportPrivateUsage]
        (result,) = op.results
        if result.type == i1:  # keep the low bit, as MLIR does
            one = constant_of_type(lw, 1, value.type)
            low = lw.result(emitc.BitwiseAndOp(value, one, value.type))
            value = lw.result(cmp_op("ne", low, zero(lw, value.type)))
        replace_by_cast(lw, value, convert_type(result.type, op))


class ConstantOpLowering(EmitcPattern):
    """A scalar constant: the function's ``emitc.constant`` of that value."""

    @op_type_rewrite_pattern
    def match_and_rewrite(
        self, op: arith.ConstantOp, rewriter: PatternRewriter
    ) -> None:
        lw = self.lowering(op, rewriter)
        value = op.value
        if isinstance(value, IntegerAttr) and isinstance(value.type, IndexType):
            lw.replace(lw.index(value.value.data))
        elif isinstance(value, IntegerAttr | FloatAttr) and not isinstance(
            value, DenseIntOrFPElementsAttr
        ):
            type_ = convert_type(value.type, op)
            if isinstance(value, FloatAttr) and not math_.isfinite(value.value.data):
                bits = float_bits(value.value.data, value.type)
                if bits is not None and (error := c_nan_error(bits, value.type)):
                    raise located_error(op, error)
                lw.include("math.h")  # INFINITY, NAN
            lw.replace(lw.constant(value, type_))
        else:
            raise located_error(
                op,
                "only scalar constants can be emitted as C values (no vector "
                "constants)",
            )


class NegfOpLowering(EmitcPattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.NegfOp, rewriter: PatternRewriter) -> None:
        lw = self.lowering(op, rewriter)
        lw.replace(lw.result(emitc.UnaryMinusOp(op.operand)))


_LIBM: dict[type[Operation], str] = {
    arith.MaxnumfOp: "fmax",
    arith.MinnumfOp: "fmin",
    math.AbsFOp: "fabs",
    math.PowFOp: "pow",
    math.Atan2Op: "atan2",
    math.CopySignOp: "copysign",
    math.FmaOp: "fma",
    math.RoundEvenOp: "nearbyint",
    **{
        getattr(math, cls): c_name
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
"""Source op -> C99 ``<math.h>`` function (``f`` appended for ``float``)."""


class LibmCallLowering(EmitcPattern):
    """A float op computed by a ``<math.h>`` function (``_LIBM``)."""

    op_classes = tuple(_LIBM)

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if (name := _LIBM.get(type(op))) is None:
            return
        type_ = op.results[0].type
        if not isinstance(type_, AnyFloat):
            raise located_error(
                op, f"'{op.name}' on {type_}: only f32/f64 are supported"
            )
        lw = self.lowering(op, rewriter)
        lw.replace(call(lw, name + float_suffix(type_), op.operands, type_))


class RsqrtOpLowering(EmitcPattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: math.RsqrtOp, rewriter: PatternRewriter) -> None:
        lw = self.lowering(op, rewriter)
        type_ = op.result.type
        root = call(lw, "sqrt" + float_suffix(type_), [op.operand], type_)
        one = constant_of_type(lw, 1.0, type_)
        lw.replace(lw.result(emitc.DivOp(one, root, type_)))


class AbsIOpLowering(EmitcPattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: math.AbsIOp, rewriter: PatternRewriter) -> None:
        lw = self.lowering(op, rewriter)
        x = op.operand
        negative = lw.result(cmp_op("lt", x, zero(lw, x.type)))
        minus = lw.result(emitc.UnaryMinusOp(x))
        lw.replace(lw.result(conditional_op(negative, minus, x)))


def arith_patterns(state: ConversionState) -> list[RewritePattern]:
    """The arith and math patterns, the most frequent ops first."""
    return [
        BinaryOpLowering(state),
        ConstantOpLowering(state),
        CastOpLowering(state),
        ScalarReinterpretLowering(state),
        CmpiOpLowering(state),
        SelectOpLowering(state),
        ExtSIOpLowering(state),
        TruncIOpLowering(state),
        MinMaxIOpLowering(state),
        ShLIOpLowering(state),
        RoundingDivOpLowering(state),
        CmpfOpLowering(state),
        MinMaxFOpLowering(state),
        NegfOpLowering(state),
        LibmCallLowering(state),
        RsqrtOpLowering(state),
        AbsIOpLowering(state),
    ]
