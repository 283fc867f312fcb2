"""Input zero points folded into the bias, at compile time (DSP lowering).

``sum((x - zp) * w) = sum(x * w) - zp * sum(w)`` (mod 2**32, as i32 adds
wrap), so a primitive function's ``add(conv2d(x, w, zp), b)`` (or ``dense``)
whose weights and bias are known constants is the same as ``add(conv2d(x,
w, 0), b')`` with ``b' = b - zp * sum(w)`` per output channel, provided
every tap of every window lies inside the input (no padding: a skipped
padded tap contributes 0 on the left, ``-zp * w`` would be missing on the
right). ``fold_input_offsets`` rewrites the relay function so, before it is
lowered: the bias becomes a ``relay.constant`` of the function (its
parameter, now unused, is dropped with the others,
``constant_args.drop_unused_constant_arguments``), and the DSP kernels then
read the input bytes without an offset (``ops_nn_dsp``: one constant
register and one instruction fewer per input word on a Cortex-M). Bytes of
the constant pool do not change.

Only for ``int8 x int8`` with weight zero point 0; anything else is left as
it is.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import numpy.typing as npt
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    BytesAttr,
    DenseIntOrFPElementsAttr,
    IntegerAttr,
    TensorType,
    i8,
    i32,
    i64,
)
from xdsl.ir import SSAValue

from usmp.dialects import relay
from usmp.dialects.relay_ops import AddOp, Conv2DOp, DenseOp
from usmp.lowering.constant_args import constant_array
from usmp.lowering.kernel import element_type, shape_of


def _values(
    value: SSAValue, bound: Mapping[SSAValue, relay.ConstantOp]
) -> npt.NDArray[np.generic] | None:
    owner = value.owner
    if not isinstance(owner, relay.ConstantOp):
        owner = bound.get(value)
    return None if owner is None else constant_array(owner.value)


def _weight_sums(
    op: Conv2DOp | DenseOp, weights: npt.NDArray[np.generic]
) -> npt.NDArray[np.int64]:
    """Per output channel (unit), the sum of its weights."""
    w = weights.astype(np.int64)
    if isinstance(op, DenseOp):
        return w.sum(axis=1)
    axis = op.kernel_layout.index("O")
    return np.moveaxis(w, axis, 0).reshape(w.shape[axis], -1).sum(axis=1)


def fold_input_offsets(
    primitive: func.FuncOp, constants: Mapping[int, relay.ConstantOp]
) -> int:
    """Fold the input zero point of each eligible accumulation of
    ``primitive`` (module note) into its bias; ``constants``: parameters
    bound to constants at every call. The number folded."""
    block = primitive.body.block
    bound: dict[SSAValue, relay.ConstantOp] = {
        block.args[i]: c for i, c in constants.items()
    }
    folded = 0
    for op in list(block.ops):
        if not isinstance(op, Conv2DOp | DenseOp):
            continue
        zp = op.input_zero_point
        if zp == 0 or op.kernel_zero_point != 0:
            continue
        if element_type(op.data) != i8 or element_type(op.weight) != i8:
            continue
        if isinstance(op, Conv2DOp) and (any(op.padding) or op.data_layout != "NHWC"):
            continue
        uses = list(op.result.uses)
        if len(uses) != 1 or not isinstance(add := uses[0].operation, AddOp):
            continue
        bias = add.rhs if add.lhs is op.result else add.lhs
        channels = shape_of(op.result)[-1]
        if shape_of(bias) not in (
            (channels,),
            (1,) * (len(shape_of(op.result)) - 1) + (channels,),
        ):
            continue
        weights, values = _values(op.weight, bound), _values(bias, bound)
        if weights is None or values is None or element_type(bias) != i32:
            continue
        sums = _weight_sums(op, weights)
        new = values.reshape(-1).astype(np.int64) - zp * sums
        wrapped = ((new + (1 << 31)) % (1 << 32) - (1 << 31)).astype("<i4")
        t = bias.type
        assert isinstance(t, TensorType)
        constant = relay.ConstantOp(
            DenseIntOrFPElementsAttr(t, BytesAttr(wrapped.tobytes()))
        )
        constant.location = add.location
        constant.result.name_hint = bias.name_hint or "bias_folded"
        block.insert_op_before(constant, add)
        add.operands = [constant.result if v is bias else v for v in add.operands]
        op.properties["input_zero_point"] = IntegerAttr(0, i64)
        folded += 1
    return folded
