"""``relay.lstm`` -> one loop nest (TFLite Micro's LSTM, bit-exact with
``usmp.oracle.lstm``).

The primitive function holding an LSTM (``fuse-ops`` outlines it alone)
becomes a prim func with the arguments ``(operands..., output, hidden,
cell)``::

    hidden, cell = the state operands (updated in place; scratch copies
                                 of constant start values)
    for b in batch:                              (rows are independent)
      for t in time:
        for j in units:
          4 input FCs   (one pass over x[b, t, :], four accumulators)
          4 recurrent FCs (one pass over hidden[b, :], four accumulators)
          gates, cell[b, j] updated in place, h_j -> scratch[j]
        for j in units: hidden[b, j] = output[b, t, j] = scratch[j]

Every gate value is a scalar in registers: TFLM's four gate buffers (B*S
int16 or float each) do not exist. The one scratch buffer is the new hidden
state of a step (S elements), since every unit's recurrent FC reads the old
one during the step: a ``tir.allocate`` inside the prim func, planned by
``usmp`` like any operator scratch (live during the call only). Reading the
inputs before writing ``hidden`` / ``cell`` makes the function correct when
the state outputs alias the state inputs (a persistent state updated in
place).

Integer arithmetic per unit, as TFLM: each FC accumulates
``(x - zp) * w`` in i32 (16x8, int16 data: in i64, requantised with the
64-bit ``MultiplyByQuantizedMultiplier``), adds the bias (input FC),
requantises to Q3.12 and saturates to i16; the two are added with i16
saturation; sigmoid / tanh are TFLM's int16 table kernels
(``sigmoid_table_uint16`` stored as i16 ``value - 32768`` in a 512-byte
``tir.allocate_const``); the products are requantised and saturated
(``MultiplyByQuantizedMultiplier``). Float: f32, TFLite's logistic cut-offs
and libm ``tanhf``.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import arith, math
from xdsl.dialects.builtin import f32, i8, i16, i32, i64
from xdsl.ir import SSAValue

from usmp.dialects import tir
from usmp.dialects.relay_lstm import GATES, LstmOp
from usmp.lowering import fixed_point as fx
from usmp.lowering.kernel import FusedKernel, element_type, memref_of, shape_of
from usmp.lowering.loops import INDEX, Ix
from usmp.lowering.ops_quant import _int_table  # pyright: ignore[reportPrivateUsage]
from usmp.tflite_tables import SIGMOID_TABLE_UINT16


def _clamp(k: FusedKernel, x: SSAValue, lo: int, hi: int) -> SSAValue:
    b = k.b
    return b.min(b.max(x, b.const(lo, i32)), b.const(hi, i32))


class _Int16Activations:
    """TFLM's int16 LOGISTIC / TANH (``reference_integer_ops``) on i32 scalars."""

    def __init__(self, k: FusedKernel):
        self.k = k
        table = [v - 32768 for v in SIGMOID_TABLE_UINT16]  # as int16
        self.table = k.table("sigmoid_table", _int_table("<i2", i16, table))

    def _entry(self, index: SSAValue) -> SSAValue:
        b = self.k.b
        at = b.emit(arith.IndexCastOp(index, INDEX))
        return fx.add(b, b.convert(b.load(self.table, [at]), i32), 32768)

    def _interpolate(self, x: SSAValue, multiplier: int, shift: int, bits: int):  # noqa: ANN202
        b = self.k.b
        if multiplier == 0:
            multiplier, shift = 3 << shift, 0
        v = b.mul(x, b.const(multiplier, i32))
        if shift > 0:
            v = b.shrsi(fx.add(b, v, 1 << (shift - 1)), b.const(shift, i32))
        negative = fx.cmp(b, "slt", v, 0)
        magnitude = fx.select(b, negative, fx.sub(b, 0, v), v)
        uh = b.shrsi(magnitude, b.const(bits, i32))
        saturated = fx.cmp(b, "sge", uh, 255)
        uh = b.min(uh, b.const(254, i32))
        ua = self._entry(uh)
        ub = self._entry(fx.add(b, uh, 1))
        ut = b.emit(arith.AndIOp(magnitude, b.const((1 << bits) - 1, i32)))
        result = fx.add(b, b.shl(ua, bits), b.mul(ut, fx.sub(b, ub, ua)))
        return v, negative, saturated, result

    def sigmoid(self, x: SSAValue, multiplier: int = 0, shift: int = 0) -> SSAValue:
        b = self.k.b
        _, negative, saturated, r = self._interpolate(x, multiplier, shift, 9)
        r = fx.select(b, saturated, 0x7FFF << 10, r)
        positive = fx.add(b, r, 1 << 9)
        negative_r = fx.sub(b, (1 << 25) + (1 << 9) - 1, r)
        r = fx.select(b, negative, negative_r, positive)
        return b.shrsi(r, b.const(10, i32))

    def tanh(self, x: SSAValue, multiplier: int = 0, shift: int = 0) -> SSAValue:
        b = self.k.b
        _, negative, saturated, r = self._interpolate(x, multiplier, shift, 8)
        r = fx.select(b, saturated, 0xFFFF << 8, r)
        positive = fx.add(b, r, -(1 << 23) + (1 << 7))
        negative_r = fx.sub(b, (1 << 23) + (1 << 7) - 1, r)
        r = fx.select(b, negative, negative_r, positive)
        return b.shrsi(r, b.const(8, i32))


def _float_sigmoid(k: FusedKernel, x: SSAValue) -> SSAValue:
    """TFLite's float ``Logistic``: 1 above 16.619047, ``exp(x)`` below -9,
    else ``1 / (1 + exp(-x))``; one ``expf`` (``exp(x)`` as ``1 / exp(-x)``:
    both branches are computed, and a division costs less than an ``expf``)."""
    b = k.b
    one = b.const(1.0, f32)
    e = b.exp(b.emit(arith.NegfOp(x)))
    mid = b.emit(arith.DivfOp(one, b.add(one, e)))
    low = b.emit(arith.CmpfOp(x, b.const(-9.0, f32), "olt"))
    high = b.emit(arith.CmpfOp(x, b.const(16.619047164916992, f32), "ogt"))
    out = b.emit(arith.SelectOp(low, b.emit(arith.DivfOp(one, e)), mid))
    return b.emit(arith.SelectOp(high, one, out))


def _tanh(k: FusedKernel, x: SSAValue) -> SSAValue:
    return k.b.emit(math.TanhOp(x))


def _state_buffer(k: FusedKernel, value: SSAValue, name: str) -> SSAValue:
    """The buffer the LSTM updates for a state operand: the argument itself
    (a persistent state, updated in place), else (a constant start value)
    operator scratch filled from it at every call."""
    buffer = k.buffers.get(value)
    if buffer is not None:
        return buffer
    scratch = k.b.hoist(tir.AllocateOp(memref_of(value.type), name))
    k.b.loop_nest(
        list(shape_of(value)), lambda ivs: k.b.store(k.at(value, ivs), scratch, ivs)
    )
    return scratch


def lower_lstm(k: FusedKernel, op: LstmOp, out: SSAValue) -> None:
    """Emit the loop nest of ``op`` storing its output sequence into ``out``
    and its final states into its state operands (see the module doc)."""
    b = k.b
    hidden = _state_buffer(k, op.hidden_state, "lstm_hidden_state")
    cell = _state_buffer(k, op.cell_state, "lstm_cell_state")
    x = op.data
    weights = (*op.input_weights, *op.recurrent_weights)
    biases = op.gate_biases
    d0, d1, n_input = shape_of(x)
    batch, steps = (d1, d0) if op.time_major else (d0, d1)
    units = shape_of(weights[0])[0]
    quantized = op.quantized
    wide = quantized and element_type(x) == i16  # 16x8: int64 sums
    acc_type = (i64 if wide else i32) if quantized else f32
    h_min, h_max = (-32768, 32767) if wide else (-128, 127)

    def requantize(acc: SSAValue, m: int, s: int) -> SSAValue:
        """A gate FC's sum to Q3.12 (i32, not yet saturated)."""
        if wide:
            return fx.multiply_by_reduced_multiplier(
                b, acc, fx.reduced_multiplier(m), 15 - s
            )
        return fx.multiply_by_quantized_multiplier(b, acc, m, s, True)

    def unravel(flat: Ix, dims: Sequence[int]) -> list[Ix]:
        """The index of element ``flat`` (row-major) of a ``dims`` array."""
        index: list[Ix] = []
        for k in range(len(dims) - 1, -1, -1):
            if all(d == 1 for d in dims[:k]):  # the outer dims are all 1
                index.append(flat if dims[k] > 1 else 0)
                index.extend(0 for _ in range(k))
                break
            index.append(b.irem(flat, dims[k]))
            flat = b.idiv(flat, dims[k])
        return index[::-1]

    def state_index(value: SSAValue, row: Ix, j: Ix) -> list[Ix]:
        """Index of element (row, j) of a state of any shape (B*S elements)."""
        shape = shape_of(value)
        if shape[-1] == units:
            return [*unravel(row, shape[:-1]), j]
        return unravel(b.iadd(b.imul(row, units), j), shape)

    activations = _Int16Activations(k) if quantized else None
    zero = b.const(0, acc_type)

    def data_index(row: Ix, t: Ix, i: Ix) -> list[Ix]:
        return [t, row, i] if op.time_major else [row, t, i]

    def step(row: Ix, t: Ix) -> None:
        def unit(j: Ix) -> None:
            def input_taps(taps: list[Ix], accs: Sequence[SSAValue]) -> list[SSAValue]:
                v = b.convert(k.at(x, data_index(row, t, taps[0])), acc_type)
                if quantized and op.input_zero_point:
                    v = fx.sub(b, v, op.input_zero_point)
                return [
                    b.add(a, b.mul(v, b.convert(k.at(w, [j, taps[0]]), acc_type)))
                    for a, w in zip(accs, weights[:4], strict=True)
                ]

            def recurrent_taps(
                taps: list[Ix], accs: Sequence[SSAValue]
            ) -> list[SSAValue]:
                v = b.convert(
                    b.load(hidden, state_index(hidden, row, taps[0])), acc_type
                )
                if quantized and op.hidden_zero_point:
                    v = fx.sub(b, v, op.hidden_zero_point)
                return [
                    b.add(a, b.mul(v, b.convert(k.at(w, [j, taps[0]]), acc_type)))
                    for a, w in zip(accs, weights[4:], strict=True)
                ]

            from_input = b.reduce([(0, n_input)], [zero] * 4, input_taps)
            from_hidden = b.reduce([(0, units)], [zero] * 4, recurrent_taps)
            gates: list[SSAValue] = []
            for g, name in enumerate(GATES):
                bias = k.at(biases[g], [j])
                if quantized:
                    m, s = op.gate_multipliers, op.gate_shifts
                    a = requantize(b.add(from_input[g], bias), m[g], s[g])
                    r = requantize(from_hidden[g], m[4 + g], s[4 + g])
                    pre = _clamp(
                        k,
                        fx.add(
                            b, _clamp(k, a, -32768, 32767), _clamp(k, r, -32768, 32767)
                        ),
                        -32768,
                        32767,
                    )
                    assert activations is not None
                    if name == "cell" and op.cell_activation == "tanh":
                        gates.append(activations.tanh(pre))
                    else:
                        gates.append(activations.sigmoid(pre))
                else:
                    pre = b.add(b.add(from_input[g], bias), from_hidden[g])
                    if name == "cell" and op.cell_activation == "tanh":
                        gates.append(_tanh(k, pre))
                    else:
                        gates.append(_float_sigmoid(k, pre))
            i_gate, f_gate, c_gate, o_gate = gates
            at_cell = state_index(cell, row, j)
            c = b.load(cell, at_cell)
            if quantized:
                m, s = op.mul_multipliers, op.mul_shifts
                c32 = b.convert(c, i32)
                kept = _clamp(
                    k,
                    fx.multiply_by_quantized_multiplier(
                        b, b.mul(f_gate, c32), m[0], s[0], True
                    ),
                    -32768,
                    32767,
                )
                added = _clamp(
                    k,
                    fx.multiply_by_quantized_multiplier(
                        b, b.mul(i_gate, c_gate), m[1], s[1], True
                    ),
                    -32768,
                    32767,
                )
                c32 = _clamp(k, fx.add(b, kept, added), -32768, 32767)
                if op.quantized_cell_clip > 0:
                    clip = op.quantized_cell_clip
                    c32 = _clamp(k, c32, -clip, clip)
                b.store(b.convert(c32, i16), cell, at_cell)
                shift = 12 + op.cell_scale_power
                multiplier = 0
                if shift < 0:
                    shift, multiplier = -shift, 3
                assert activations is not None
                t_cell = activations.tanh(c32, multiplier, shift)
                h = fx.multiply_by_quantized_multiplier(
                    b, b.mul(t_cell, o_gate), m[2], s[2], True
                )
                h = _clamp(k, fx.add(b, h, op.hidden_zero_point), h_min, h_max)
                b.store(
                    b.convert(h, i16 if wide else i8),
                    out,
                    [*data_index(row, t, 0)[:2], j],
                )
            else:
                c = b.add(b.mul(f_gate, c), b.mul(i_gate, c_gate))
                if op.cell_clip > 0:
                    clip = op.cell_clip
                    c = b.max(b.min(c, b.const(clip, f32)), b.const(-clip, f32))
                b.store(c, cell, at_cell)
                b.store(
                    b.mul(_tanh(k, c), o_gate), out, [*data_index(row, t, 0)[:2], j]
                )

        b.loop_nest([units], lambda ivs: unit(ivs[0]))

        def publish(ivs: list[Ix]) -> None:
            v = b.load(out, [*data_index(row, t, 0)[:2], ivs[0]])
            b.store(v, hidden, state_index(hidden, row, ivs[0]))

        b.loop_nest([units], publish)

    b.loop_nest([batch, steps], lambda ivs: step(ivs[0], ivs[1]))
