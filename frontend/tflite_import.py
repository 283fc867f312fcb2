"""TFLite flatbuffer -> relay MLIR module.

``import_tflite(path)`` returns a ``builtin.module`` holding
``func.func @main(%inputs...) -> (outputs...)`` whose body is relay ops
(``usmp.dialects.relay_ops`` / ``relay_tflite_ops``) in the model's operator
order, ending in ``func.return``. Arguments are named after the TFLite input
tensors (sanitised); the original names are kept in
``relay.input_tensor_names`` / ``relay.output_tensor_names``.

What is refused, with a ``TFLiteImportError`` naming the operator and its
index: custom operators (e.g. TFLM's audio front end, an Ethos-U command
stream), builtin operators without a converter (``tflite_ops.CONVERTERS``),
hybrid operators (float activations with int8 weights) and type
combinations a converter does not support. A dynamic dimension (``-1`` in
``shape_signature``) is imported at its stored size, as TFLite Micro runs it
(the stored batch of the models here is 1); the reader warns about dynamic
dimensions other than the batch.

Weights stay in the module as ``dense<...>`` attributes; xDSL prints those
with more than 100 elements as one hex string (``dense<"0x...">``), which
parses fast. (xDSL 0.74's ``dense_resource`` blobs live in a process-wide
table on the builtin dialect and get renamed when a second module with the
same keys is parsed in the same process, so they are not used.)
``print_module(..., elide_weights_over=N)`` prints large weights as
``dense_resource<__elided__>`` for reading.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence
from pathlib import Path

import numpy as np
from xdsl.dialects.builtin import (
    ArrayAttr,
    DictionaryAttr,
    FloatAttr,
    IntegerAttr,
    ModuleOp,
    NameLoc,
    StringAttr,
    TensorType,
    UnknownLoc,
    f32,
    i64,
)
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Block, Region, SSAValue
from xdsl.utils.exceptions import VerifyException

from usmp.dialects.relay import (
    INPUT_QUANTIZATION,
    INPUT_TENSOR_NAMES,
    OUTPUT_QUANTIZATION,
    OUTPUT_TENSOR_NAMES,
)
from usmp.frontend import quantization as q
from usmp.frontend.builder import RelayBuilder, sanitize_name, tensor_type
from usmp.frontend.tflite_custom import CustomOp, check_custom_codes, convert_custom
from usmp.frontend.tflite_fold import fold_weights
from usmp.frontend.tflite_ops import CONVERTERS
from usmp.frontend.tflite_reader import (
    Model,
    Operator,
    Tensor,
    TFLiteImportError,
    read_model,
    read_model_file,
)

__all__ = ["TFLiteImportError", "import_tflite", "import_tflite_bytes", "import_model"]


def import_tflite(path: str | Path, custom_ops: Sequence[CustomOp] = ()) -> ModuleOp:
    """Import the ``.tflite`` file at ``path``."""
    return import_model(read_model_file(path), custom_ops=custom_ops)


def import_tflite_bytes(
    data: bytes, name: str = "model.tflite", custom_ops: Sequence[CustomOp] = ()
) -> ModuleOp:
    """Import a ``.tflite`` flatbuffer held in memory (``name`` is used in
    diagnostics and locations)."""
    return import_model(read_model(data, name), custom_ops=custom_ops)


def import_model(
    model: Model,
    outputs: Sequence[int] | None = None,
    custom_ops: Sequence[CustomOp] = (),
    *,
    verify: bool = True,
) -> ModuleOp:
    """Import ``model``; ``outputs`` (tensor indices, default the model's
    outputs) selects what ``@main`` returns: intermediate activations can be
    returned to compare a model layer by layer. ``custom_ops`` supply the C
    kernels of CUSTOM operators (``frontend/tflite_custom.py``).

    The module is verified before it is returned; ``verify=False`` leaves
    that to a caller that verifies it next anyway (``usmp-compile``'s
    ``diagnostics.verify_located``, whose errors name the operator): the
    body is one block ending in ``func.return``, so the per-op verification
    is all the module-level one adds."""
    model = fold_weights(model)
    check_custom_codes(model, custom_ops)
    kernels = {c.name: c for c in custom_ops}
    check_supported(model, kernels)
    output_indices = tuple(model.outputs if outputs is None else outputs)
    _check_listed_once(model, output_indices)
    inputs = [model.tensors[i] for i in model.inputs]
    block = Block(arg_types=[_io_type(model, t) for t in inputs])
    builder = RelayBuilder(model, block)
    for arg, t in zip(block.args, inputs, strict=True):
        arg.name_hint = sanitize_name(t.name, f"input{t.index}")
        builder.bind(t, arg)
    for op in model.operators:
        builder.begin(op)
        try:
            if op.opcode == "CUSTOM":
                convert_custom(builder, kernels[op.custom_code or ""])
            else:
                CONVERTERS[op.opcode](builder)
        except (q.ScaleError, ArithmeticError) as e:
            # scales for which TFLite Micro's Prepare is undefined
            raise model.op_error(op, scale_problem(model, op, str(e))) from None
        except (VerifyException, ValueError) as e:
            # a relay op's verifier (attribute ranges) or TFLite's
            # requantisation arithmetic refusing the operator's parameters
            raise model.op_error(op, str(e)) from None
        for index in op.outputs:
            if index not in builder.values and not _unused_handle(model, index):
                raise model.op_error(op, f"output tensor #{index} was not produced")
    builder.begin(None)  # what follows belongs to no operator
    results: list[SSAValue] = []
    for index in output_indices:
        t = model.tensors[index]
        if index in builder.values:
            results.append(builder.values[index])
        elif t.data is not None:  # an output that is a constant
            results.append(builder.tensor_constant(t))
        else:
            raise model.error(
                f"output tensor '{t.name}' is not computed by any operator"
            )
    block.add_op(ReturnOp(*results))
    output_tensors = [model.tensors[i] for i in output_indices]
    func = FuncOp(
        "main",
        ([a.type for a in block.args], [r.type for r in results]),
        Region(block),
    )
    # errors about main as a whole (its I/O names) name the model
    func.location = NameLoc(StringAttr(model.name), UnknownLoc())
    func.attributes[INPUT_TENSOR_NAMES] = ArrayAttr(StringAttr(t.name) for t in inputs)
    func.attributes[OUTPUT_TENSOR_NAMES] = ArrayAttr(
        StringAttr(t.name) for t in output_tensors
    )
    io_quantization = [_io_quantization(t) for t in (*inputs, *output_tensors)]
    if any(io_quantization):  # a float model's main gets none
        func.attributes[INPUT_QUANTIZATION] = ArrayAttr(io_quantization[: len(inputs)])
        func.attributes[OUTPUT_QUANTIZATION] = ArrayAttr(io_quantization[len(inputs) :])
    module = ModuleOp([func])
    if not verify:
        return module
    try:
        module.verify()
    except VerifyException as e:  # a converter emitted invalid IR: a bug here
        raise model.error(
            f"internal error: the imported module does not verify: {e}"
        ) from e
    return module


def _unused_handle(model: Model, index: int) -> bool:
    """A resource tensor (a VAR_HANDLE's output) has no value when subgraph 0
    never reads or assigns its variable."""
    return model.tensors[index].type_name == "RESOURCE"


def scale_problem(model: Model, op: Operator, why: str) -> str:
    """The message of a ``ScaleError`` in ``op``'s conversion: the tensors of
    the operator whose scales are not finite positive numbers (the usual
    culprits), why TFLite Micro's computation is undefined, and what is
    required."""
    odd = []
    for what, indices in (("input", op.inputs), ("output", op.outputs)):
        for k, index in enumerate(indices):
            quant = model.tensors[index].quantization if index >= 0 else None
            if quant is None:
                continue
            bad = [s for s in quant.scales if not (math.isfinite(s) and s > 0)]
            if bad:
                t = model.tensors[index]
                odd.append(
                    f"{what} {k} '{t.name}' (tensor {index}) has quantisation "
                    f"scale {bad[0]}"
                )
    culprits = "; ".join(odd) + ": " if odd else ""
    return (
        f"{culprits}{why}; TFLite Micro's result is undefined there, so the "
        "operator needs finite, positive scales"
    )


def _check_listed_once(model: Model, outputs: Sequence[int]) -> None:
    """Each tensor is a model input or output at most once: the C interface
    has one field per input and output, named after its tensor."""
    seen: dict[int, str] = {}
    for kind, indices in (("input", model.inputs), ("output", outputs)):
        for index in indices:
            if index in seen:
                t = model.tensors[index]
                twice = (
                    f"twice as a model {kind}"
                    if seen[index] == kind
                    else ("as a model input and as a model output")
                )
                raise model.error(
                    f"tensor {index} ('{t.name}') is listed {twice}; each model "
                    "input and output must be a distinct tensor (the C interface "
                    "names one field after each)"
                )
            seen[index] = kind


def check_supported(model: Model, kernels: Collection[str] = ()) -> None:
    """Refuse custom operators without a kernel (``kernels``: the custom
    codes the user supplies) and unconverted operators before building
    anything: the error names the first one and counts the others."""
    unsupported = [
        op
        for op in model.operators
        if op.opcode not in CONVERTERS
        and not (op.opcode == "CUSTOM" and (op.custom_code or "") in kernels)
    ]
    if not unsupported:
        _check_no_variables(model)
        return
    first = unsupported[0]
    if first.opcode == "CUSTOM":
        why = _custom_reason(first)
    else:
        why = (
            "this builtin operator is not supported; supported operators: "
            + ", ".join(sorted(CONVERTERS))
        )
    others = unsupported[1:]
    if others:
        listed = ", ".join(f"{op.index} ({op.display_name})" for op in others[:8])
        more = f", and {len(others) - 8} more" if len(others) > 8 else ""
        why += f" [{len(others)} other unsupported operator(s): {listed}{more}]"
    raise model.op_error(first, why)


_STATE_INPUTS = {"UNIDIRECTIONAL_SEQUENCE_LSTM": (18, 19), "SVDF": (4,)}
"""Operator inputs that are variable tensors the converter handles."""


def _check_no_variables(model: Model) -> None:
    """Variable (state) tensors keep values between invocations: only the
    operator inputs of ``_STATE_INPUTS`` may be one (a ``relay.state`` the
    operator updates in place)."""
    for op in model.operators:
        allowed = {
            op.inputs[p] for p in _STATE_INPUTS.get(op.opcode, ()) if p < len(op.inputs)
        }
        for index in (*op.inputs, *op.outputs):
            if index >= 0 and model.tensors[index].is_variable and index not in allowed:
                raise model.op_error(
                    op,
                    f"tensor {index} '{model.tensors[index].name}' is a variable "
                    "(state) tensor; variable tensors are not supported",
                )


def _custom_reason(op: Operator) -> str:
    code = op.custom_code or ""
    if code == "ethos-u":
        what = "an Arm Ethos-U NPU command stream (compiled by Vela), not CPU code"
    elif code.startswith("Signal"):
        what = "a TFLite Micro signal-processing (audio front end) kernel"
    else:
        what = "an application-defined kernel"
    return (
        f"custom operator '{code}' ({what}) has no kernel: supply its C function "
        f"with --custom-op {code}=path/to/kernel.h[:function] (usmp.CustomOp in "
        "Python)"
    )


def _io_quantization(t: Tensor) -> DictionaryAttr:
    """``relay.input_quantization``'s entry for model input/output ``t``:
    its scale (float32) and zero point when it is an integer tensor quantised
    per tensor, else ``{}`` (a float tensor; a per-channel one, which the
    interface header does not describe; a scale that is not positive and
    finite in float32, which TFLite Micro runs but no header can state)."""
    quant = t.quantization
    if (
        quant is None
        or quant.per_channel
        or t.dtype is None
        or t.dtype.kind not in "iu"
    ):
        return DictionaryAttr({})
    with np.errstate(over="ignore"):  # 1e39 is inf in float32: no warning
        scale = float(np.float32(quant.scale))
    if not 0 < scale < math.inf:  # NaN too
        return DictionaryAttr({})
    return DictionaryAttr(
        {
            "scale": FloatAttr(quant.scale, f32),
            "zero_point": IntegerAttr(quant.zero_point, i64),
        }
    )


def _io_type(model: Model, t: Tensor) -> TensorType:
    """The tensor type of a model input/output: its stored shape, as TFLite
    Micro runs it (a dynamic dimension in ``shape_signature``, the batch's or
    another's, is the stored size; the reader warns about the others)."""
    if t.dtype is None:
        raise model.error(
            f"model input/output '{t.name}' has unsupported type {t.type_name}"
        )
    try:
        return tensor_type(t.dtype, t.shape)
    except KeyError:
        raise model.error(
            f"model input/output '{t.name}' has unsupported type {t.type_name}"
        ) from None
