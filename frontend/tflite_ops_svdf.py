"""SVDF -> ``relay.svdf`` (``dialects/relay_svdf.py``).

``tflite_ops`` imports this module, which registers its converter. What
TFLite Micro's kernel supports is imported, the rest refused with the
operator's index: float32 throughout, or int8 input / feature weights /
output with int16 (or int8) time weights and state and an int32 bias
(``svdf_common.cc``: ``PrepareSvdf``). The activation state (input 4) is a
TFLite variable tensor: a ``relay.state`` the op updates in place, starting
from TFLM's reset value (``RelayBuilder.state``). The integer parameters are
``PrepareSvdf``'s: ``effective_scale_1 = input · weights_feature / state`` and
``effective_scale_2 = state · weights_time / output`` in double
(``quantization.svdf_multipliers``), through ``QuantizeMultiplier``.
A missing bias is a zero constant (TFLM's kernel reads a zero bias then).
"""

from __future__ import annotations

import numpy as np

from usmp.dialects.relay_svdf import FusedActivation, SvdfOp
from usmp.frontend import quantization as q
from usmp.frontend.builder import RelayBuilder
from usmp.frontend.tflite_ops import register
from usmp.frontend.tflite_reader import Tensor

_NAMES = ("input", "weights_feature", "weights_time", "bias", "activation_state")


def _scale(b: RelayBuilder, t: Tensor, what: str) -> tuple[float, int]:
    qt = t.quantization
    if qt is None or not qt.scales:
        raise b.error(f"{what} '{t.name}' is not quantized (int8 SVDF needs scales)")
    if len(qt.scales) != 1:
        raise b.error(
            f"{what} '{t.name}' is quantized per channel; SVDF needs per tensor"
        )
    return qt.scales[0], qt.zero_points[0] if qt.zero_points else 0


def convert_svdf(b: RelayBuilder) -> None:
    x = b.required_input(0)
    wf = b.required_input(1)
    wt = b.required_input(2)
    bias = b.input_tensor(3)
    state = b.required_input(4)
    out = b.output_tensor(0)
    opts = b.operator.options
    rank = int(opts.Rank()) if opts is not None else 1
    act = q.Activation(opts.FusedActivationFunction() if opts is not None else 0)
    if not state.is_variable:
        raise b.error(
            f"input 4 (activation state) '{state.name}' must be a variable tensor"
        )
    types = tuple(t.type_name for t in (x, wf, wt, state, out))
    if types == ("FLOAT32",) * 5:
        quantized = False
    elif (
        types[:2] == ("INT8", "INT8")
        and types[2] in ("INT16", "INT8")
        and types[3] == types[2]
        and types[4] == "INT8"
    ):
        quantized = True
    else:
        raise b.error(
            "unsupported types "
            + ", ".join(
                f"{n} {t}"
                for n, t in zip(
                    (*_NAMES[:3], *_NAMES[4:], "output"), types, strict=True
                )
            )
            + " (TFLite Micro's SVDF: all FLOAT32, or INT8 input, weights_feature "
            "and output with INT16 or INT8 weights_time and activation_state)"
        )
    for t, n in ((x, 2), (wf, 2), (wt, 2), (state, 2), (out, 2)):
        if len(t.shape) != n:
            raise b.error(f"tensor '{t.name}' must have rank {n}, got {list(t.shape)}")
    n_filter = wf.shape[0]
    if rank < 1 or n_filter % rank:
        raise b.error(f"rank {rank} must be >= 1 and divide the {n_filter} filters")
    n_unit = n_filter // rank
    if bias is None:
        bias_value = b.constant(
            np.zeros((n_unit,), np.int32 if quantized else np.float32), "svdf_bias"
        )
    else:
        expected = "INT32" if quantized else "FLOAT32"
        if bias.type_name != expected:
            raise b.error(
                f"bias '{bias.name}' is {bias.type_name}, expected {expected}"
            )
        bias_value = b.tensor_constant(bias)
    props: dict[str, object] = {"rank": rank}
    if quantized:
        sx, zx = _scale(b, x, "input")
        sf, _ = _scale(b, wf, "weights_feature")
        st, _ = _scale(b, wt, "weights_time")
        ss, zs = _scale(b, state, "activation_state")
        so, zo = _scale(b, out, "output")
        (m1, s1), (m2, s2) = q.svdf_multipliers(sx, sf, st, ss, so)
        props.update(
            input_zero_point=zx,
            state_zero_point=zs,
            output_zero_point=zo,
            multiplier_1=m1,
            shift_1=s1,
            multiplier_2=m2,
            shift_2=s2,
        )
    else:
        if act.name not in FusedActivation.__members__:
            raise b.error(
                f"fused activation {act.name} is not supported (TFLite Micro's "
                f"float SVDF: {', '.join(FusedActivation)})"
            )
        props["activation"] = FusedActivation(act.name)
    result = b.emit(
        SvdfOp(
            b.value(x),
            b.tensor_constant(wf),
            b.tensor_constant(wt),
            bias_value,
            b.state(state),
            **props,
        )
    )
    b.bind(out, result)


register({"SVDF": convert_svdf})
