"""CMSIS-NN calls for the ``cmsis-nn`` target (``--target cmsis-nn,c``).

TVM's CMSIS-NN integration (``relay/backend/contrib/cmsisnn``) partitions
int8 operators into functions of the ``cmsis-nn`` compiler
(``partition_for_cmsisnn``), lowers each to a ``tir.call_extern`` of one
CMSIS-NN function with its scalars and buffers flattened
(``relay_to_tir.cc``) and prints C that packs them into CMSIS-NN's structs
(``tir_to_runtime.cc``). Here, the same three steps:

* ``match(primitive, core)``: a primitive function ``fuse-ops`` made (one
  TFLite operator: ``relay.conv2d`` + bias ``relay.add`` +
  ``relay.fixed_point_multiply`` + zero point ``relay.add`` + ``relay.clip``
  + ``relay.cast``; ``relay.dense`` likewise; ``relay.avg_pool2d`` /
  ``relay.max_pool2d`` (+ ``relay.clip``); ``relay.quantized_softmax``) as
  one ``CmsisNNCall``, or the reason CMSIS-NN cannot take it (the operator
  then stays on our own kernels);
* ``lower_cmsis_nn``: its tir prim func: the per-channel multipliers and
  shifts as ``tir.allocate_const`` (the values ``relay.fixed_point_multiply``
  carries: TFLite's ``QuantizeMultiplier`` of each channel, what TFLite
  Micro's CMSIS-NN kernels compute in ``Prepare``), the scratch buffer of
  ``arm_*_get_buffer_size`` as a ``tir.allocate`` (planned by ``usmp`` with
  the rest of the workspace: live only during the call), and one
  ``tir.call_extern``;
* ``c_call``: the C of a ``tir.call_extern`` (``convert-to-emitc``).

Scratch sizes are CMSIS-NN's ``*_get_buffer_size`` evaluated in Python as its
source computes them (CMSIS-NN at ``../shared/third_party/CMSIS-NN``) for the
core: ``none`` (no DSP: ``ARM_MATH_DSP`` undefined, e.g. the host's gcc or a
Cortex-M0), ``dsp`` (``ARM_MATH_DSP``: Cortex-M4/M7/M33...), ``mve``
(``ARM_MATH_MVEI``: Helium, Cortex-M52/M55/M85). The generated C checks with
``#error`` that it is compiled for the core its sizes assume.

On ``mve`` one choice depends on the C compiler: a depthwise convolution
with one input channel becomes a convolution above
``CONVERT_DW_CONV_WITH_ONE_INPUT_CH_AND_OUTPUT_CH_ABOVE_THRESHOLD`` output
channels, 1 with gcc or clang, 8 with Arm Compiler 6 (``__ARMCC_VERSION``).
Sizes are planned for gcc/clang; the C of a call whose size Arm Compiler 6
would compute otherwise stops with ``#error`` there. ``arm_fully_connected_s8`` on
``mve`` reads each output row's kernel sum from ``ctx->buf`` (TFLite
Micro's ``Prepare`` fills it with ``arm_vector_sum_s8``): here a constant
table computed at compile time (``kernel_sums``), not in the workspace.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.dialects import func
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    MemRefType,
    StringAttr,
    TensorType,
    UnitAttr,
    i8,
    i32,
)
from xdsl.ir import Block, Operation, Region, SSAValue

from usmp.diagnostics import located_error
from usmp.dialects import relay, tir
from usmp.dialects.relay_nn_ops import (
    AvgPool2DOp,
    Conv2DOp,
    DataLayout,
    DenseOp,
    KernelLayout,
    MaxPool2DOp,
)
from usmp.dialects.relay_ops import AddOp, CastOp, ClipOp
from usmp.dialects.relay_quant_ops import FixedPointMultiplyOp
from usmp.dialects.relay_tflite_ops import QuantizedSoftmaxOp
from usmp.lowering.target import TargetFeatures

TARGET = "cmsis-nn"
"""The target name (TVM's ``cmsis-nn``)."""

MVE_CPUS = ("cortex-m52", "cortex-m55", "cortex-m85")
"""Cortex-M CPUs with Helium (MVE): CMSIS-NN's ``ARM_MATH_MVEI`` kernels."""

CORE = "cmsis_nn.core"
"""Function attribute of a partitioned function: the CMSIS-NN build its
scratch sizes are for (``none``, ``dsp`` or ``mve``)."""

CH_IN_BLOCK_MVE = 124
"""``arm_nnsupportfunctions.h``: input channels per block of the MVE
depthwise kernel."""

DW_TO_CONV_THRESHOLD = 1
"""``CONVERT_DW_CONV_WITH_ONE_INPUT_CH_AND_OUTPUT_CH_ABOVE_THRESHOLD`` with
gcc or clang (Arm Compiler 6: ``DW_TO_CONV_THRESHOLD_ARMCC``)."""

DW_TO_CONV_THRESHOLD_ARMCC = 8

ARMCC_GUARD = "defined(__ARMCC_VERSION) && (__ARMCC_VERSION >= 6010050)"
"""When ``arm_nnsupportfunctions.h`` takes Arm Compiler 6's threshold."""

KERNEL_SUMS = "cmsis_nn.kernel_sums"
"""Function attribute of a dense partitioned for ``mve``: its kernel sums
(``kernel_sums``), computed by ``partition-cmsis-nn`` from the constant
weights and bias main passes it."""


def core_of(mcpu: str) -> str:
    """``none``, ``dsp`` or ``mve``: which of CMSIS-NN's builds ``mcpu``
    gets (its ``ARM_MATH_DSP``, ``ARM_MATH_MVEI``)."""
    name, *extensions = mcpu.strip().lower().split("+")
    if name in MVE_CPUS and "nomve" not in extensions:
        return "mve"
    return "dsp" if TargetFeatures.of(mcpu).dsp else "none"


@dataclass
class CmsisNNCall:
    """One CMSIS-NN call: ``callee``, the scratch bytes, the scalars of
    ``tir.call_extern`` (first the scratch size, see ``c_call``),
    which primitive function arguments it passes (``args``, indices, ``-1``
    for the output) and the constant tables it adds, by name (per-channel
    multipliers and shifts; on ``mve`` a dense's kernel sums, which are then
    ``ctx->buf``)."""

    callee: str
    scratch: int
    scalars: list[int]
    args: list[int]
    tables: list[tuple[str, list[int]]]


def _ops(primitive: func.FuncOp) -> list[Operation]:
    return [
        op
        for op in primitive.body.block.ops
        if not isinstance(op, relay.ConstantOp | func.ReturnOp)
    ]


def _scalar_constant(value: SSAValue) -> int | None:
    owner = value.owner
    if not isinstance(owner, relay.ConstantOp):
        return None
    attr = owner.value
    if not isinstance(attr, DenseIntOrFPElementsAttr):
        return None
    values = attr.get_values()
    if len(values) != 1 or not isinstance(values[0], int):
        return None
    return values[0]


def _shape(value: SSAValue) -> tuple[int, ...]:
    t = value.type
    assert isinstance(t, TensorType)
    return tuple(t.get_shape())


def _element(value: SSAValue) -> object:
    t = value.type
    assert isinstance(t, TensorType)
    return t.get_element_type()


def _arg_index(primitive: func.FuncOp, value: SSAValue) -> int | None:
    for i, arg in enumerate(primitive.body.block.args):
        if arg is value:
            return i
    return None


@dataclass
class _Epilogue:
    """Bias, requantisation, output zero point and activation range."""

    bias: int | None
    multiplier: tuple[int, ...]
    shift: tuple[int, ...]
    output_offset: int
    act_min: int
    act_max: int


def _epilogue(
    primitive: func.FuncOp, anchor: Operation, rest: list[Operation]
) -> _Epilogue | str:
    """The ops after a conv2d/dense: ``add(bias)? fixed_point_multiply
    add(zp)? clip cast`` on i32, ending in i8."""
    value = anchor.results[0]
    bias: int | None = None
    ops = list(rest)
    if ops and isinstance(ops[0], AddOp) and ops[0].operands[0] is value:
        index = _arg_index(primitive, ops[0].operands[1])
        if index is None or len(_shape(ops[0].operands[1])) != 1:
            return "its bias is not a per-channel argument"
        bias, value = index, ops[0].results[0]
        ops.pop(0)
    if not ops or not isinstance(fpm := ops[0], FixedPointMultiplyOp):
        return "it has no requantisation (fixed_point_multiply)"
    if fpm.data is not value or _element(value) != i32:
        return "its requantisation is not on the i32 accumulator"
    value = fpm.results[0]
    ops.pop(0)
    offset = 0
    if ops and isinstance(ops[0], AddOp) and ops[0].operands[0] is value:
        zp = _scalar_constant(ops[0].operands[1])
        if zp is None:
            return "its output zero point is not a scalar constant"
        offset, value = zp, ops[0].results[0]
        ops.pop(0)
    if len(ops) != 2 or not isinstance(clip := ops[0], ClipOp):
        return "it does not end in clip + cast to i8"
    cast = ops[1]
    if not isinstance(cast, CastOp) or _element(cast.results[0]) != i8:
        return "it does not end in clip + cast to i8"
    if clip.operands[0] is not value or cast.operands[0] is not clip.results[0]:
        return "it does not end in clip + cast to i8"
    lo, hi = clip.a_min, clip.a_max
    if lo != int(lo) or hi != int(hi) or not -128 <= lo <= hi <= 127:
        return f"its activation range [{lo}, {hi}] is not within int8"
    return _Epilogue(bias, fpm.multiplier, fpm.shift, offset, int(lo), int(hi))


def _is_1x1(
    pad: tuple[int, int], dil: tuple[int, int], f: Sequence[int], c: int
) -> bool:
    return pad == (0, 0) and f[1] == 1 and f[2] == 1 and dil == (1, 1) and c == f[3]


def _is_1_x_n(
    stride: tuple[int, int],
    dil: tuple[int, int],
    in_dims: Sequence[int],
    f: Sequence[int],
) -> bool:
    """``arm_nn_is_convolve_1_x_n``."""
    c = in_dims[3]
    return (
        in_dims[1] == 1
        and dil[0] == 1
        and f[1] == 1
        and (stride[0] * c) % 4 == 0
        and (c == f[3])
    )


def _cdiv(a: int, b: int) -> int:
    """C's ``a / b`` on ``int32_t`` (truncating toward zero)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def _crem(a: int, b: int) -> int:
    """C's ``a % b``."""
    return a - b * _cdiv(a, b)


def _conv_mve_size(in_dims: Sequence[int], f_dims: Sequence[int]) -> int:
    """``arm_convolve_s8_get_buffer_size_mve``: four im2col columns padded to
    whole 16-byte vectors."""
    cols = in_dims[3] * f_dims[2] * f_dims[1]
    return 4 * ((cols + 15) // 16) * 16


def _conv_1_x_n_mve_size(
    stride_w: int, pad_w: int, in_dims: Sequence[int], f_dims: Sequence[int], out_w: int
) -> int:
    """``arm_convolve_1_x_n_s8_get_buffer_size_mve``."""
    c, in_w, k_w = in_dims[3], in_dims[2], f_dims[2]
    total_pad = (out_w - 1) * stride_w + k_w - in_w
    asym = _crem(total_pad, 2)
    right = max(1, _cdiv(pad_w + asym + stride_w - 1, stride_w)) if pad_w + asym else 0
    left = max(1, _cdiv(pad_w + stride_w - 1, stride_w)) if pad_w else 0
    no_pad = max(out_w - (right + left), 0)
    if right + no_pad + left != out_w:
        return _conv_mve_size(in_dims, f_dims)
    pad_left = pad_w * c
    pad_right = right * c if asym else pad_left
    elem_left = k_w * c
    return max(elem_left + pad_left, elem_left - c + pad_right)


def conv_buffer_size(
    core: str,
    stride: tuple[int, int],
    pad: tuple[int, int],
    dil: tuple[int, int],
    in_dims: Sequence[int],
    f_dims: Sequence[int],
    out_w: int,
) -> int:
    """``arm_convolve_wrapper_s8_get_buffer_size`` (``none``: its portable
    branch; ``dsp``: ``_get_buffer_size_dsp``; ``mve``: ``_mve``; gcc: no
    ARMCC buffer for the DSP 1x1 fast path). Dims NHWC; ``stride``/``pad``/
    ``dil`` as (w, h); ``out_w`` the output's width."""
    in_c = in_dims[3]
    if _is_1x1(pad, dil, f_dims, in_c):
        return 0  # 1x1 (fast or not): no buffer with gcc, none on MVE
    if core == "mve":
        if _is_1_x_n(stride, dil, in_dims, f_dims):
            return _conv_1_x_n_mve_size(stride[0], pad[0], in_dims, f_dims, out_w)
        return _conv_mve_size(in_dims, f_dims)
    rhs_cols = f_dims[2] * f_dims[1] * in_c
    aligned = rhs_cols + (4 - rhs_cols % 4) % 4
    return 2 * aligned * 2  # arm_convolve_s8_get_buffer_size (also 1 x n)


def dw_to_conv(
    core: str, in_c: int, out_c: int, threshold: int = DW_TO_CONV_THRESHOLD
) -> bool:
    """Whether ``arm_depthwise_conv_wrapper_s8`` runs a depthwise convolution
    as a convolution (MVE, one input channel, more output channels than
    ``threshold``: the compiler's, see the module note)."""
    return core == "mve" and in_c == 1 and out_c > threshold


def depthwise_buffer_size(
    core: str,
    stride: tuple[int, int],
    pad: tuple[int, int],
    dil: tuple[int, int],
    in_dims: Sequence[int],
    f_dims: Sequence[int],
    out_dims: Sequence[int],
    threshold: int = DW_TO_CONV_THRESHOLD,
) -> int:
    """``arm_depthwise_conv_wrapper_s8_get_buffer_size`` compiled for
    ``core`` (``f_dims`` 1HWC; on ``mve`` with gcc/clang's ``threshold``)."""
    out_c = out_dims[3]
    if dw_to_conv(core, in_dims[3], out_c, threshold):
        # arm_deptwise_conv_s8_one_in_ch_get_buffer_size_mve: the convolution's
        # scratch, then the transposed weights
        conv_f = [f_dims[3], f_dims[1], f_dims[2], f_dims[0]]
        size = conv_buffer_size(core, stride, pad, dil, in_dims, conv_f, out_dims[2])
        return size + f_dims[0] * f_dims[1] * f_dims[2] * f_dims[3]
    if not (in_dims[3] == out_c and in_dims[0] == 1 and dil == (1, 1)):
        return 0
    if core == "mve":  # arm_depthwise_conv_s8_opt_get_buffer_size_mve
        return 4 * CH_IN_BLOCK_MVE * f_dims[2] * f_dims[1]
    if f_dims[2] == 3 and f_dims[1] == 3 and pad[1] <= 1 and pad[0] <= 1:
        return 0
    if core == "dsp":
        return in_dims[3] * f_dims[2] * f_dims[1] * 2
    return 0


def avgpool_buffer_size(core: str, channels: int) -> int:
    """``arm_avgpool_s8_get_buffer_size``: ``ch_src * 4`` with DSP, else 0
    (also on MVE)."""
    return channels * 4 if core == "dsp" else 0


def fully_connected_buffer_size(core: str, units: int) -> int:
    """``arm_fully_connected_s8_get_buffer_size``: on MVE the kernel sums
    (one ``int32_t`` per output unit), else 0."""
    return units * 4 if core == "mve" else 0


def _wrap32(v: int) -> int:
    return (v + 2**31) % 2**32 - 2**31


def kernel_sums(
    weights: Sequence[Sequence[int]],
    bias: Sequence[int] | None,
    lhs_offset: int,
    rhs_offset: int,
) -> list[int]:
    """``arm_vector_sum_s8(buf, cols, rows, weights, lhs_offset, rhs_offset,
    bias)``: per row ``bias + lhs_offset * (sum(row) + cols * rhs_offset)``
    in ``int32_t`` (wrapping, as the Cortex-M does)."""
    out = []
    for r, row in enumerate(weights):
        total = int(sum(row)) + (len(row) * rhs_offset if rhs_offset else 0)
        b = int(bias[r]) if bias is not None else 0
        out.append(_wrap32(b + total * lhs_offset))
    return out


def _conv(primitive: func.FuncOp, conv: Conv2DOp, core: str) -> CmsisNNCall | str:
    if conv.data_layout != DataLayout.NHWC:
        return "its data layout is not NHWC"
    x, w = conv.operands
    if _element(x) != i8 or _element(w) != i8:
        return "it is not int8 (CMSIS-NN's s8 kernels)"
    if conv.kernel_zero_point != 0:
        return "its weights have a zero point"
    n, in_h, in_w, in_c = _shape(x)
    out = _shape(conv.results[0])
    _, out_h, out_w, out_c = out
    xi, wi = _arg_index(primitive, x), _arg_index(primitive, w)
    if xi is None or wi is None:
        return "its input or weights are computed inside the group"
    top, left, _, _ = conv.padding
    sh, sw = conv.strides
    dh, dw = conv.dilation
    rest = _ops(primitive)[1:]
    epi = _epilogue(primitive, conv, rest)
    if isinstance(epi, str):
        return epi
    if epi.bias is None:
        return "it has no bias"
    mult = list(epi.multiplier) * (out_c if len(epi.multiplier) == 1 else 1)
    shift = list(epi.shift) * (out_c if len(epi.shift) == 1 else 1)
    if len(mult) != out_c or len(shift) != out_c:
        return "its requantisation is not per output channel"
    head = [-conv.input_zero_point, epi.output_offset]
    tail = [sw, sh, left, top, dw, dh, epi.act_min, epi.act_max]
    in_dims = [n, in_h, in_w, in_c]
    if conv.groups == 1 and conv.kernel_layout == KernelLayout.OHWI:
        o, kh, kw, i = _shape(w)
        if i != in_c or n != 1:
            return "it is grouped or batched"
        f_dims = [o, kh, kw, i]
        size = conv_buffer_size(
            core, (sw, sh), (left, top), (dw, dh), in_dims, f_dims, out_w
        )
        callee = "arm_convolve_wrapper_s8"
        params = [*head, *tail]
    elif conv.groups == in_c and conv.kernel_layout == KernelLayout.HWIO:
        kh, kw, one, o = _shape(w)
        if one != 1 or o != out_c or out_c % in_c:
            return "it is grouped but not depthwise"
        f_dims = [1, kh, kw, out_c]
        size = depthwise_buffer_size(
            core, (sw, sh), (left, top), (dw, dh), in_dims, f_dims, out
        )
        callee = "arm_depthwise_conv_wrapper_s8"
        params = [*head, out_c // in_c, *tail]
    else:
        return f"its groups ({conv.groups}) and kernel layout are not CMSIS-NN's"
    dims = [*in_dims, *f_dims, 1, 1, 1, out_c, *out]
    tables = [("cmsis_nn_multiplier", mult), ("cmsis_nn_shift", shift)]
    return CmsisNNCall(
        callee, size, [size, *params, *dims], [xi, wi, epi.bias, -1], tables
    )


def _dense(primitive: func.FuncOp, dense: DenseOp, core: str) -> CmsisNNCall | str:
    x, w = dense.operands
    if _element(x) != i8 or _element(w) != i8:
        return "it is not int8 (CMSIS-NN's s8 kernels)"
    xi, wi = _arg_index(primitive, x), _arg_index(primitive, w)
    if xi is None or wi is None:
        return "its input or weights are computed inside the group"
    units, depth = _shape(w)
    batches = _shape(x)[0]
    epi = _epilogue(primitive, dense, _ops(primitive)[1:])
    if isinstance(epi, str):
        return epi
    if epi.bias is None:
        return "it has no bias"
    if len(set(epi.multiplier)) != 1 or len(set(epi.shift)) != 1:
        return (
            "its requantisation is per channel (arm_fully_connected_s8 is per tensor)"
        )
    params = [-dense.input_zero_point, -dense.kernel_zero_point, epi.output_offset]
    params += [epi.act_min, epi.act_max, epi.multiplier[0], epi.shift[0]]
    dims = [batches, 1, 1, depth, depth, 1, 1, units, 1, 1, 1, units]
    dims += [batches, 1, 1, units]
    size = fully_connected_buffer_size(core, units)
    tables: list[tuple[str, list[int]]] = []
    sums = primitive.attributes.get(KERNEL_SUMS)
    if size and isinstance(sums, DenseIntOrFPElementsAttr):
        values = [v for v in sums.get_values() if isinstance(v, int)]
        if len(values) != units:
            return f"its {KERNEL_SUMS} has {len(values)} values, not {units}"
        tables.append(("cmsis_nn_kernel_sums", values))
    return CmsisNNCall(
        "arm_fully_connected_s8",
        0,
        [0, *params, *dims],  # no scratch (tir.CallExternOp.written_operands)
        [xi, wi, epi.bias, -1],
        tables,
    )


def needs_kernel_sums(call: CmsisNNCall, core: str) -> bool:
    """Whether ``call`` reads kernel sums (a dense on ``mve``)."""
    return call.callee == "arm_fully_connected_s8" and core == "mve"


def dense_kernel_sums(primitive: func.FuncOp, call: relay.CallOp) -> list[int] | str:
    """The kernel sums ``arm_fully_connected_s8`` reads on ``mve`` for one
    call of a dense ``primitive`` (``match`` took it): ``arm_vector_sum_s8``
    of the constant weights and bias ``call`` passes, with the input's and
    the weights' offsets (what TFLite Micro's ``Prepare`` computes), or why
    they are not known at compile time."""
    dense = _ops(primitive)[0]
    assert isinstance(dense, DenseOp)
    epi = _epilogue(primitive, dense, _ops(primitive)[1:])
    assert isinstance(epi, _Epilogue) and epi.bias is not None
    wi = _arg_index(primitive, dense.operands[1])
    assert wi is not None
    values: list[list[int]] = []
    for index in (wi, epi.bias):
        owner = call.operands[index].owner
        if not isinstance(owner, relay.ConstantOp) or not isinstance(
            attr := owner.value, DenseIntOrFPElementsAttr
        ):
            return (
                "its weights or bias are not constants (its kernel sums for "
                "MVE are computed at compile time)"
            )
        raw = attr.get_values()
        ints = [v for v in raw if isinstance(v, int)]
        if len(ints) != len(raw):
            return "its weights or bias are not integers"
        values.append(ints)
    units, depth = _shape(dense.operands[1])
    weights, bias = values
    if len(weights) != units * depth or len(bias) != units:
        return "its constant weights or bias do not have its shape"
    rows = [weights[r * depth : (r + 1) * depth] for r in range(units)]
    return kernel_sums(rows, bias, -dense.input_zero_point, -dense.kernel_zero_point)


def _pool(
    primitive: func.FuncOp, pool: AvgPool2DOp | MaxPool2DOp, core: str
) -> CmsisNNCall | str:
    x = pool.data
    if _element(x) != i8 or pool.layout != DataLayout.NHWC:
        return "it is not an int8 NHWC pooling"
    if isinstance(pool, AvgPool2DOp) and pool.count_include_pad:
        return "it counts padded positions (CMSIS-NN does not)"
    xi = _arg_index(primitive, x)
    rest = _ops(primitive)[1:]
    lo, hi = -128, 127
    if rest:
        clip = rest[0]
        if (
            len(rest) != 1
            or not isinstance(clip, ClipOp)
            or clip.operands[0] is not pool.results[0]
        ):
            return "ops other than a clip follow it"
        if clip.a_min != int(clip.a_min) or clip.a_max != int(clip.a_max):
            return "its activation range is not integral"
        lo, hi = max(lo, int(clip.a_min)), min(hi, int(clip.a_max))
    if xi is None:
        return "its input is computed inside the group"
    n, in_h, in_w, c = _shape(x)
    _, out_h, out_w, _ = _shape(pool.results[0])
    if n != 1:
        return "it is batched"
    fh, fw = pool.pool_size
    sh, sw = pool.strides
    top, left, _, _ = pool.padding
    if isinstance(pool, AvgPool2DOp):
        callee, size = "arm_avgpool_s8", avgpool_buffer_size(core, c)
    else:
        callee, size = "arm_max_pool_s8", 0
    params = [sw, sh, left, top, lo, hi]
    dims = [n, in_h, in_w, c, 1, fh, fw, 1, n, out_h, out_w, c]
    return CmsisNNCall(callee, size, [size, *params, *dims], [xi, -1], [])


def _softmax(primitive: func.FuncOp, softmax: QuantizedSoftmaxOp) -> CmsisNNCall | str:
    x = softmax.data
    shape = _shape(x)
    if _element(x) != i8 or softmax.output_bits != 8 or len(_ops(primitive)) != 1:
        return "it is not an int8 softmax alone"
    if softmax.axis not in (-1, len(shape) - 1):
        return "its axis is not the last"
    xi = _arg_index(primitive, x)
    if xi is None:
        return "its input is computed inside the group"
    rows = 1
    for d in shape[:-1]:
        rows *= d
    params = [rows, shape[-1], softmax.input_multiplier, softmax.input_left_shift]
    params.append(softmax.diff_min)
    return CmsisNNCall("arm_softmax_s8", 0, [0, *params], [xi, -1], [])


def match(primitive: func.FuncOp, core: str) -> CmsisNNCall | str:
    """The CMSIS-NN call computing ``primitive``, or why there is none."""
    ops = _ops(primitive)
    if not ops:
        return "it is empty"
    anchor = ops[0]
    if isinstance(anchor, Conv2DOp):
        return _conv(primitive, anchor, core)
    if isinstance(anchor, DenseOp):
        return _dense(primitive, anchor, core)
    if isinstance(anchor, AvgPool2DOp | MaxPool2DOp):
        return _pool(primitive, anchor, core)
    if isinstance(anchor, QuantizedSoftmaxOp):
        return _softmax(primitive, anchor)
    return f"CMSIS-NN has no kernel for {anchor.name} here"


def lower_partitioned(primitive: func.FuncOp) -> func.FuncOp:
    """``lower_cmsis_nn`` of a function ``partition-cmsis-nn`` marked; a
    located error if it is not (or no longer) one CMSIS-NN call."""
    core = primitive.attributes[CORE]
    assert isinstance(core, StringAttr)
    found = match(primitive, core.data)
    if isinstance(found, str):
        raise located_error(
            primitive,
            f"@{primitive.sym_name.data} is marked for CMSIS-NN ({CORE}) but "
            f"CMSIS-NN cannot compute it: {found}",
        )
    if needs_kernel_sums(found, core.data) and not found.tables:
        raise located_error(
            primitive,
            f"@{primitive.sym_name.data} is marked for CMSIS-NN's MVE build but has "
            f"no {KERNEL_SUMS} (partition-cmsis-nn computes them)",
        )
    return lower_cmsis_nn(primitive, found, core.data)


def _memref(t: object) -> MemRefType:
    assert isinstance(t, TensorType)
    return MemRefType(t.get_element_type(), t.get_shape())


def lower_cmsis_nn(primitive: func.FuncOp, call: CmsisNNCall, core: str) -> func.FuncOp:
    """The tir prim func of a partitioned ``primitive`` (module note)."""
    block = primitive.body.block
    in_types = [_memref(a.type) for a in block.args]
    ret = block.last_op
    assert isinstance(ret, func.ReturnOp)
    out_type = _memref(ret.operands[0].type)
    entry = Block(arg_types=[*in_types, out_type])
    ops: list[Operation] = []
    buffers: list[SSAValue] = []
    if call.scratch:
        scratch = tir.AllocateOp(MemRefType(i8, [call.scratch]), "cmsis_nn_scratch")
        ops.append(scratch)
        buffers.append(scratch.result)
    for name, values in call.tables:
        t = TensorType(i32, [len(values)])
        table = tir.AllocateConstOp(
            MemRefType(i32, [len(values)]),
            name,
            DenseIntOrFPElementsAttr.from_list(t, values),
        )
        ops.append(table)
        buffers.append(table.result)
    for i in call.args:
        buffers.append(entry.args[i] if i >= 0 else entry.args[-1])
    extern = tir.CallExternOp(call.callee, buffers, call.scalars)
    extern.attributes[CORE] = StringAttr(core)
    ops += [extern, func.ReturnOp()]
    for op in ops:
        op.location = ret.location
    entry.add_ops(ops)
    lowered = func.FuncOp(
        primitive.sym_name.data,
        ([*in_types, out_type], []),
        Region(entry),
        visibility=primitive.sym_visibility,
    )
    lowered.attributes.update(
        (name, attr)
        for name, attr in primitive.attributes.items()
        if name not in (relay.PRIMITIVE, CORE, KERNEL_SUMS)
    )
    lowered.attributes[tir.PRIM_FUNC] = UnitAttr()
    lowered.location = primitive.location
    return lowered


def _dims(d: Sequence[int]) -> str:
    return "{" + ", ".join(map(str, d)) + "}"


def _pair(a: int, b: int) -> str:
    return f"{{{a}, {b}}}"


def _compiler_dependent(callee: str, s: Sequence[int]) -> bool:
    """Whether Arm Compiler 6's MVE build would run this call with another
    scratch (a depthwise convolution of one input channel whose output
    channels are between the two thresholds, see the module note)."""
    if callee != "arm_depthwise_conv_wrapper_s8":
        return False
    d = s[11:]  # after the 3 + 8 parameters: in, filter, bias, out dims
    in_c, out_c = d[3], d[15]
    gcc = dw_to_conv("mve", in_c, out_c)
    return gcc != dw_to_conv("mve", in_c, out_c, DW_TO_CONV_THRESHOLD_ARMCC)


def c_call(callee: str, scalars: Sequence[int], core: str) -> list[str]:
    """The C lines of ``tir.call_extern callee``, each an ``emitc.verbatim``
    format: ``{}`` stands for the next buffer argument's pointer, in the
    order ``lower_cmsis_nn`` passes them (scratch when its size, the first
    scalar, is not 0; for a dense on ``mve`` its kernel sums; multipliers and
    shifts; inputs; output)."""
    size, *s = scalars
    if core == "mve":
        lines = [
            "#if !defined(ARM_MATH_MVEI)",
            '#error "CMSIS-NN scratch sizes were planned for the mve build: '
            'compile this file for a CPU with Helium (MVE, ARM_MATH_MVEI)"',
            "#endif",
        ]
        if _compiler_dependent(callee, s):
            lines += [
                f"#if {ARMCC_GUARD}",
                '#error "CMSIS-NN scratch sizes were planned for gcc or clang: '
                "Arm Compiler 6 runs this depthwise convolution otherwise "
                '(CONVERT_DW_CONV_WITH_ONE_INPUT_CH_AND_OUTPUT_CH_ABOVE_THRESHOLD)"',
                "#endif",
            ]
    else:
        mve_or_dsp = "!" if core == "dsp" else ""
        lines = [
            f"#if defined(ARM_MATH_MVEI) || {mve_or_dsp}defined(ARM_MATH_DSP)",
            f'#error "CMSIS-NN scratch sizes were planned for the {core} build: '
            f"compile this file for a CPU {'with' if core == 'dsp' else 'without'} "
            'the DSP extension, without MVE (ARM_MATH_DSP, ARM_MATH_MVEI)"',
            "#endif",
        ]
    sums = 0
    if callee == "arm_fully_connected_s8":  # MVE: the kernel sums are ctx->buf
        sums = fully_connected_buffer_size(core, s[7 + 15])
    if sums:
        lines.append(f"cmsis_nn_context ctx = {{(void*)@, {sums}}};")
    elif size:
        lines.append(f"cmsis_nn_context ctx = {{@, {size}}};")
    else:
        lines.append("cmsis_nn_context ctx = {NULL, 0};")
    if callee in ("arm_convolve_wrapper_s8", "arm_depthwise_conv_wrapper_s8"):
        dw = callee == "arm_depthwise_conv_wrapper_s8"
        head = s[:3] if dw else s[:2]
        sw, sh, pw, ph, dlw, dlh, lo, hi = s[len(head) : len(head) + 8]
        d = s[len(head) + 8 :]
        kind = "cmsis_nn_dw_conv_params" if dw else "cmsis_nn_conv_params"
        lines += [
            f"const {kind} params = {{{', '.join(map(str, head))}, {_pair(sw, sh)}, "
            f"{_pair(pw, ph)}, {_pair(dlw, dlh)}, {_pair(lo, hi)}}};",
            "const cmsis_nn_per_channel_quant_params quant = {@, @};",
            f"const cmsis_nn_dims in_dims = {_dims(d[0:4])}, f_dims = {_dims(d[4:8])}, "
            f"b_dims = {_dims(d[8:12])}, out_dims = {_dims(d[12:16])};",
            f"(void){callee}(&ctx, &params, &quant, &in_dims, @, &f_dims, @, "
            "&b_dims, @, &out_dims, @);",
        ]
    elif callee == "arm_fully_connected_s8":
        in_off, f_off, out_off, lo, hi, mult, shift = s[:7]
        d = s[7:]
        lines += [
            f"const cmsis_nn_fc_params params = {{{in_off}, {f_off}, {out_off}, "
            f"{_pair(lo, hi)}}};",
            f"const cmsis_nn_per_tensor_quant_params quant = {{{mult}, {shift}}};",
            f"const cmsis_nn_dims in_dims = {_dims(d[0:4])}, f_dims = {_dims(d[4:8])}, "
            f"b_dims = {_dims(d[8:12])}, out_dims = {_dims(d[12:16])};",
            f"(void){callee}(&ctx, &params, &quant, &in_dims, @, &f_dims, @, "
            "&b_dims, @, &out_dims, @);",
        ]
    elif callee in ("arm_avgpool_s8", "arm_max_pool_s8"):
        sw, sh, pw, ph, lo, hi = s[:6]
        d = s[6:]
        lines += [
            f"const cmsis_nn_pool_params params = {{{_pair(sw, sh)}, {_pair(pw, ph)}, "
            f"{_pair(lo, hi)}}};",
            f"const cmsis_nn_dims in_dims = {_dims(d[0:4])}, f_dims = {_dims(d[4:8])}, "
            f"out_dims = {_dims(d[8:12])};",
            f"(void){callee}(&ctx, &params, &in_dims, @, &f_dims, &out_dims, @);",
        ]
    elif callee == "arm_softmax_s8":
        rows, cols, mult, shift, diff_min = s
        lines = [f"arm_softmax_s8(@, {rows}, {cols}, {mult}, {shift}, {diff_min}, @);"]
    else:
        raise ValueError(f"tir.call_extern: no C for {callee}")
    return [line.replace("{", "{{").replace("@", "{}") for line in lines]


CALLEES = (
    "arm_convolve_wrapper_s8",
    "arm_depthwise_conv_wrapper_s8",
    "arm_fully_connected_s8",
    "arm_avgpool_s8",
    "arm_max_pool_s8",
    "arm_softmax_s8",
)
