"""Table-driven activations (``LowerTableLookup``).

* ``relay.table_lookup``: ``table[x - min]``, the 8-bit input widened to
  i32, offset, cast to ``index``: one load from the table (a constant
  operand, planned in the constant pool) per element.
* ``relay.quantized_sigmoid`` / ``relay.quantized_tanh``: TFLite Micro's
  int16 LOGISTIC / TANH (``reference_integer_ops``), bit-exact with
  ``usmp.oracle.tflite_activations``. Per element: ``v = (x * m + round) >>
  s``; ``|v|`` split into a table index (``|v| >> f``, ``f`` = 9 for the
  sigmoid, 8 for tanh, clamped to 254 so that both loads stay in bounds) and
  an ``f``-bit fraction; ``(ua << f) + frac * (ub - ua)`` from two loads of
  TFLite's ``sigmoid_table_uint16`` (a hoisted ``tir.allocate_const`` of 256
  i32 values: one per function, planned in the constant pool), replaced by
  the saturation value from index 255 on; then the sign's rounding and the
  final shift to Q0.15, all branch-free (``arith.select``). The C++ mixes
  uint32 and int32; every value here is in ``[-2**25, 2**25]``, so i32
  arithmetic gives the same bits.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import ClassVar

from xdsl.dialects import arith
from xdsl.dialects.builtin import IndexType, IntegerType, i16, i32
from xdsl.ir import Operation, SSAValue

from usmp.dialects.relay_tflite_ops import (
    QuantizedSigmoidOp,
    QuantizedTanhOp,
    TableLookupOp,
)
from usmp.lowering import fixed_point as fx
from usmp.lowering.kernel import ElementPattern, FusedKernel, Handler, Reads
from usmp.lowering.loops import Ix
from usmp.lowering.ops_elementwise import unary_reads
from usmp.lowering.ops_quant import _int_table  # pyright: ignore[reportPrivateUsage]
from usmp.lowering.ops_tflite import quantized_rsqrt
from usmp.lowering.scalar import int_bounds
from usmp.oracle.tflite_activations import SIGMOID_TABLE_UINT16


def _as_index(k: FusedKernel, value: SSAValue) -> SSAValue:
    return k.b.emit(arith.IndexCastOp(value, IndexType()))


def table_lookup(k: FusedKernel, op: Operation, index: Sequence[Ix]) -> SSAValue:
    assert isinstance(op, TableLookupOp)
    x = k.at(op.data, index)
    assert isinstance(x.type, IntegerType)
    low, _ = int_bounds(x.type)
    offset = fx.sub(k.b, k.b.convert(x, i32), low)
    return k.at(op.table, [_as_index(k, offset)])


# op -> (fraction bits, saturated value, mirrored for v < 0: base - value,
# else value + offset; final right shift), as reference_integer_ops
_INT16_KERNELS = {
    "relay.quantized_sigmoid": (9, 0x7FFF << 10, (1 << 25) + (1 << 9) - 1, 1 << 9, 10),
    "relay.quantized_tanh": (
        8,
        0xFFFF << 8,
        (1 << 23) + (1 << 7) - 1,
        (1 << 7) - (1 << 23),
        8,
    ),
}


def quantized_sigmoid_or_tanh(
    k: FusedKernel, op: Operation, index: Sequence[Ix]
) -> SSAValue:
    assert isinstance(op, QuantizedSigmoidOp | QuantizedTanhOp)
    bits, saturation, base, offset, final_shift = _INT16_KERNELS[op.name]
    b = k.b
    multiplier, shift = op.input_multiplier, op.input_left_shift
    if multiplier == 0:  # power of two case
        multiplier, shift = 3 << shift, 0
    x = b.convert(k.at(op.data, index), i32)
    v = b.mul(x, b.const(multiplier, i32))
    if shift:
        v = b.shrsi(fx.add(b, v, 1 << (shift - 1)), b.const(shift, i32))
    negative = fx.cmp(b, "slt", v, 0)
    magnitude = fx.select(b, negative, fx.sub(b, 0, v), v)
    high = b.shrsi(magnitude, b.const(bits, i32))
    position = _as_index(k, b.min(high, b.const(254, i32)))
    table = k.table(
        "sigmoid_table_uint16", _int_table("<i4", i32, SIGMOID_TABLE_UINT16.tolist())
    )
    ua = b.load(table, [position])
    ub = b.load(table, [b.iadd(position, 1)])
    fraction = b.emit(arith.AndIOp(magnitude, b.const((1 << bits) - 1, i32)))
    value = fx.add(b, b.shl(ua, bits), b.mul(fraction, fx.sub(b, ub, ua)))
    value = fx.select(b, fx.cmp(b, "sgt", high, 254), saturation, value)
    rounded = fx.select(b, negative, fx.sub(b, base, value), fx.add(b, value, offset))
    return b.convert(b.shrsi(rounded, b.const(final_shift, i32)), i16)


class LowerTableLookup(ElementPattern):
    """An element of ``table_lookup``, ``quantized_sigmoid``,
    ``quantized_tanh`` or ``quantized_rsqrt`` (``ops_tflite``)."""

    handlers: ClassVar[Mapping[str, Handler]] = MappingProxyType(
        {
            "relay.table_lookup": table_lookup,
            "relay.quantized_sigmoid": quantized_sigmoid_or_tanh,
            "relay.quantized_tanh": quantized_sigmoid_or_tanh,
            "relay.quantized_rsqrt": quantized_rsqrt,
        }
    )
    reads: ClassVar[Mapping[str, Reads]] = MappingProxyType(
        dict.fromkeys(handlers, unary_reads)
    )
