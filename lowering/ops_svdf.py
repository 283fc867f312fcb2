"""``relay.svdf`` -> loops (TFLite Micro's SVDF, bit-exact with
``usmp.oracle.svdf``).

The primitive function holding an SVDF (``fuse-ops`` outlines it alone)
becomes a prim func with the arguments ``(x, weights_feature, weights_time,
bias, state, output)``; ``state`` is the persistent state, updated in
place::

    for b: for j < M*F - 1: state[b, j] = state[b, j + 1]     (shift left)
    for b: for f: state[b, f*M + M - 1] = proj(wf[f] . x[b])  (this step)
    for b: for u:
      acc = bias[u]
      for r < rank: acc += wt[u*rank + r] . state[b, (u*rank + r)*M :][:M]
      out[b, u] = act(acc)                    (int: requantised to i8)

TFLite Micro keeps the time products in a scratch buffer of B*F int32 (and
the sums in another of B*U); here each unit's ``rank`` products are summed
in registers in TFLM's order (bias first, then filter by filter), so the
operator needs no scratch at all. Integer arithmetic as TFLM: i32 dot
products, ``MultiplyByQuantizedMultiplier``, the projection clamped to the
state type before the state zero point is added and the store narrows it
(as the tflite-micro release the tests run), the output clamped to i8.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import math
from xdsl.dialects.builtin import f32, i32, i64
from xdsl.ir import SSAValue

from usmp.diagnostics import located_error
from usmp.dialects.relay_svdf import SvdfOp
from usmp.lowering import fixed_point as fx
from usmp.lowering.kernel import FusedKernel, element_type, shape_of
from usmp.lowering.loops import Ix


def _float_activation(k: FusedKernel, y: SSAValue, name: str) -> SSAValue:
    b = k.b
    if name == "NONE":
        return y
    if name == "RELU":
        return b.max(y, b.const(0.0, f32))
    if name == "RELU6":
        return b.min(b.max(y, b.const(0.0, f32)), b.const(6.0, f32))
    if name == "RELU_N1_TO_1":
        return b.min(b.max(y, b.const(-1.0, f32)), b.const(1.0, f32))
    if name == "TANH":
        return b.emit(math.TanhOp(y))
    raise NotImplementedError(name)


def lower_svdf(k: FusedKernel, op: SvdfOp, out: SSAValue) -> None:
    """Emit the loops of ``op``: the state shifted and extended in place,
    the output stored into ``out`` (see the module doc)."""
    b = k.b
    state = k.buffers.get(op.state)
    if state is None:
        raise located_error(
            op,
            "relay.svdf: the state operand must be an argument of the primitive "
            "function (a relay.state passed by fuse-ops)",
        )
    batch, n_input = shape_of(op.data)
    n_filter, n_memory = shape_of(op.weights_time)
    rank = op.rank
    n_unit = n_filter // rank
    quantized = op.quantized
    acc_type = i32 if quantized else f32
    state_type = element_type(op.state)

    # shift the history left by one (ascending: in place)
    def shift(ivs: list[Ix]) -> None:
        row, j = ivs
        b.store(b.load(state, [row, b.iadd(j, 1)]), state, [row, j])

    if n_memory * n_filter > 1:
        b.loop_nest([batch, n_memory * n_filter - 1], shift)

    # this step's feature projection into the last column of each filter
    def project(ivs: list[Ix]) -> None:
        row, f = ivs

        def taps(t: list[Ix], accs: Sequence[SSAValue]):  # noqa: ANN202
            v = b.convert(k.at(op.data, [row, t[0]]), acc_type)
            if quantized and op.input_zero_point:
                v = fx.sub(b, v, op.input_zero_point)
            w = b.convert(k.at(op.weights_feature, [f, t[0]]), acc_type)
            return [b.add(accs[0], b.mul(w, v))]

        (dot,) = b.reduce([(0, n_input)], [b.const(0, acc_type)], taps)
        if quantized:
            bits = state_type.width.data  # pyright: ignore[reportAttributeAccessIssue]
            lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
            v = fx.multiply_by_quantized_multiplier(
                b, dot, op.multiplier_1, op.shift_1, True
            )
            v = b.min(b.max(v, b.const(lo, i32)), b.const(hi, i32))
            if op.state_zero_point:
                v = fx.add(b, v, op.state_zero_point)
            dot = b.convert(v, state_type)
        last = b.iadd(b.imul(f, n_memory), n_memory - 1)
        b.store(dot, state, [row, last])

    b.loop_nest([batch, n_filter], project)

    # time products summed per unit, bias first, then the activation; the
    # integer sums wrap in i32 in TFLM (i16 x i16 products over the memory
    # can exceed it): exact in i64, truncated once (the same value mod 2^32)
    sum_type = i64 if quantized else f32

    def unit(ivs: list[Ix]) -> None:
        row, u = ivs
        acc = b.convert(k.at(op.bias, [u]), sum_type)
        for r in range(rank):
            f = b.iadd(b.imul(u, rank), r) if rank > 1 else u

            def taps(t: list[Ix], accs: Sequence[SSAValue], f: Ix = f):  # noqa: ANN202
                s = b.convert(
                    b.load(state, [row, b.iadd(b.imul(f, n_memory), t[0])]), acc_type
                )
                if quantized and op.state_zero_point:
                    s = fx.sub(b, s, op.state_zero_point)
                w = b.convert(k.at(op.weights_time, [f, t[0]]), acc_type)
                return [b.add(accs[0], b.convert(b.mul(w, s), sum_type))]

            (dot,) = b.reduce([(0, n_memory)], [b.const(0, sum_type)], taps)
            acc = b.add(acc, dot)
        if quantized:
            y = fx.multiply_by_quantized_multiplier(
                b, b.convert(acc, i32), op.multiplier_2, op.shift_2, True
            )
            if op.output_zero_point:
                y = fx.add(b, y, op.output_zero_point)
            y = b.min(b.max(y, b.const(-128, i32)), b.const(127, i32))
            b.store(b.convert(y, element_type(op.result)), out, [row, u])
        else:
            b.store(_float_activation(k, acc, op.activation), out, [row, u])

    b.loop_nest([batch, n_unit], unit)
