"""Reference interpreter of relay-level IR (the numpy oracle).

``evaluate(module, inputs)`` runs ``func.func @main`` op by op on numpy
values and returns its results; every other stage of the compiler is checked
against it (int8 arithmetic bit-exact, float within a tolerance).

What it accepts: a ``builtin.module`` (or one ``func.func``) whose functions
hold relay ops in a single block ending in ``func.return``. ``relay.call``
evaluates the callee's body (primitive functions, recursively);
``relay.constant`` reads ``dense<...>`` values and ``dense_resource<...>``
blobs; ``relay.state`` is the state's array (``states``, below);
``relay.on_device`` / ``relay.device_copy`` are the identity; every
operator of ``docs/relay-ops.md`` is computed by ``usmp.oracle.kernels``
(the TFLite-specific ``relay.quantized_softmax`` by
``usmp.oracle.tflite_kernels``, ``relay.table_lookup`` and the int16
``relay.quantized_sigmoid`` / ``relay.quantized_tanh`` by
``usmp.oracle.tflite_activations``).

Design: one small handler per op class in the ``_HANDLERS`` table; an
operator's properties come from its class's typed accessors
(``relay_props.property_values``: the declared defaults, no second list of
names here) and go to the numpy kernel as keyword arguments of the same
names; the kernels themselves know nothing of the IR. After each op the
computed value is checked against the op's result type.
Errors in the IR (unknown op, bad properties, unsupported callee, a value
that contradicts its type) are ``LocatedError`` diagnostics at the op.

State: ``evaluate(..., states=d)`` keeps every ``relay.state`` in the
caller's dict ``d`` (by state name; created from its initial value when
missing), so consecutive calls with the same dict carry the state over and
``d.clear()`` resets it; without ``states`` each call starts from the
initial values. ``relay.state`` evaluates to that very array, and a stateful
operator's handler (``relay_state.STATE_OPERANDS``) updates it in place, as
the generated C does.

Values: ``numpy.ndarray`` for tensors (dtype from the element type, see
``usmp.oracle.values``), Python tuples for ``tuple<...>``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, TypeAlias

import numpy as np
from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    DenseResourceAttr,
    FloatAttr,
    IntAttr,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    StringAttr,
    SymbolRefAttr,
    TensorType,
    TupleType,
    UnitAttr,
    UnregisteredOp,
)
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Attribute, Operation, SSAValue

from usmp.diagnostics import located_error
from usmp.dialects.relay import (
    INPUT_TENSOR_NAMES,
    CallOp,
    ConstantOp,
    DeviceCopyOp,
    OnDeviceOp,
    TupleGetItemOp,
    TupleOp,
)
from usmp.dialects.relay_base import RelayOperator
from usmp.dialects.relay_custom import CustomCallOp
from usmp.dialects.relay_hybrid_ops import (
    DynamicQuantizeOp,
    DynamicQuantizeScaleOp,
    DynamicQuantizeZeroPointOp,
)
from usmp.dialects.relay_image_ops import GatherOp, ResizeBilinearOp
from usmp.dialects.relay_lstm import LstmOp
from usmp.dialects.relay_nn_ops import (
    ArgMaxOp,
    ArgMinOp,
    AvgPool2DOp,
    Conv2DOp,
    Conv2DTransposeOp,
    DenseOp,
    GlobalAvgPool2DOp,
    MaxOp,
    MaxPool2DOp,
    MeanOp,
    MinOp,
    SumOp,
)
from usmp.dialects.relay_ops import (
    AddOp,
    BroadcastToOp,
    CastOp,
    ClipOp,
    ConcatenateOp,
    DivideOp,
    ExpOp,
    LogOp,
    MaximumOp,
    MinimumOp,
    MultiplyOp,
    PadOp,
    ReluOp,
    ReshapeOp,
    RightShiftOp,
    RsqrtOp,
    SigmoidOp,
    SoftmaxOp,
    SqrtOp,
    StridedSliceOp,
    SubtractOp,
    TanhOp,
    TransposeOp,
)
from usmp.dialects.relay_props import property_values
from usmp.dialects.relay_quant_ops import DequantizeOp, FixedPointMultiplyOp, QuantizeOp
from usmp.dialects.relay_state import AssignStateOp, ReadStateOp, StateOp
from usmp.dialects.relay_svdf import SvdfOp
from usmp.dialects.relay_tflite_ops import (
    QuantizedDivideOp,
    QuantizedL2NormalizeOp,
    QuantizedRsqrtOp,
    QuantizedSigmoidOp,
    QuantizedSoftmaxInt16Op,
    QuantizedSoftmaxOp,
    QuantizedTanhOp,
    TableLookupOp,
)
from usmp.dialects.tir import PRIM_FUNC
from usmp.oracle import (
    hybrid,
    image_kernels,
    kernels,
    lstm,
    svdf,
    tflite_activations,
    tflite_kernels,
)
from usmp.oracle.kernels import KernelError
from usmp.oracle.tflite_kernels import TFLiteKernelError
from usmp.oracle.values import (
    builtin_resource_blob,
    dense_to_numpy,
    numpy_dtype,
    resource_blob_to_numpy,
    tensor_dtype_and_shape,
)

Value: TypeAlias = "np.ndarray | tuple[Value, ...]"
Handler: TypeAlias = "Callable[[Operation, list[Value], _Interpreter], Value]"


def evaluate(
    module_or_func: ModuleOp | FuncOp,
    inputs: Sequence[Any] | Mapping[str, Any],
    entry: str = "main",
    *,
    resources: Mapping[str, str | bytes] | None = None,
    states: dict[str, np.ndarray] | None = None,
    custom_kernels: Mapping[str, Callable[..., np.ndarray]] | None = None,
) -> list[np.ndarray]:
    """Run ``entry`` (or the given function) on ``inputs``; return its results.

    ``inputs`` lists one array per argument, or maps argument names (the
    ``relay.input_tensor_names`` attribute of the function, else the SSA
    names of its arguments) to arrays. Arrays must have the argument's shape;
    a different dtype is accepted only if converting it loses nothing.
    Tuple results are flattened into the returned list.

    ``resources`` maps ``dense_resource`` keys to blobs (MLIR hex strings
    ``"0x<alignment><data>"`` or raw bytes) and takes precedence over the
    blobs xDSL's parser stored.

    ``custom_kernels`` maps a ``relay.custom_call``'s custom code to a numpy
    reference of the user's kernel, ``fn(*inputs, options=bytes,
    quantization=[dict per input, then output]) -> output``; a custom call
    without one is a located error (the oracle cannot run user C).
    """
    if isinstance(module_or_func, FuncOp):
        func = module_or_func
        parent = func.parent_op()
        module = parent if isinstance(parent, ModuleOp) else None
    else:
        module = module_or_func
        func = None
    functions = _function_table(module) if module is not None else {}
    if func is None:
        func = functions.get(entry)
        if func is None:
            raise located_error(
                module_or_func,
                f"no function @{entry} to evaluate (functions: "
                f"{', '.join('@' + n for n in functions) or 'none'})",
            )
    else:
        functions.setdefault(func.sym_name.data, func)
    interpreter = _Interpreter(
        functions,
        MappingProxyType(dict(resources or {})),
        states=states if states is not None else {},
        custom_kernels=MappingProxyType(dict(custom_kernels or {})),
    )
    results = interpreter.call(func, _bind_inputs(func, inputs), func)
    return [a for r in results for a in _flatten(r)]


# ------------------------------------------------------------ interpreter


@dataclass
class _Interpreter:
    functions: Mapping[str, FuncOp]
    resources: Mapping[str, str | bytes]
    call_stack: list[str] = field(default_factory=list[str])
    states: dict[str, np.ndarray] = field(default_factory=dict[str, np.ndarray])
    custom_kernels: Mapping[str, Callable[..., np.ndarray]] = field(
        default_factory=dict[str, Callable[..., np.ndarray]]
    )

    def call(self, func: FuncOp, args: list[Value], site: Operation) -> list[Value]:
        name = func.sym_name.data
        if name in self.call_stack:
            raise located_error(
                site, f"recursive call of @{name} ({' -> '.join(self.call_stack)})"
            )
        if not func.body.blocks:
            raise located_error(
                site, f"@{name} is a declaration; it has no body to evaluate"
            )
        if len(func.body.blocks) != 1:
            raise located_error(
                func,
                f"@{name} has {len(func.body.blocks)} blocks; relay functions have one",
            )
        block = func.body.block
        if len(args) != len(block.args):
            raise located_error(
                site, f"@{name} takes {len(block.args)} arguments, got {len(args)}"
            )
        env: dict[SSAValue, Value] = {}
        for arg, value in zip(block.args, args, strict=True):
            _check_value(value, arg.type, site, f"argument {arg.index} of @{name}")
            env[arg] = value
        self.call_stack.append(name)
        try:
            for op in block.ops:
                if isinstance(op, ReturnOp):
                    return [env[v] for v in op.arguments]
                self._run(op, env)
        finally:
            self.call_stack.pop()
        raise located_error(func, f"@{name} does not end in func.return")

    def _run(self, op: Operation, env: dict[SSAValue, Value]) -> None:
        name = op_name(op)
        handler = _HANDLERS.get(type(op))
        if handler is None:
            raise located_error(
                op,
                f"the relay oracle has no semantics for '{name}' "
                f"(it evaluates: {', '.join(_HANDLED_NAMES)}, func.return)",
            )
        if len(op.results) != (0 if name in _NO_RESULT else 1):
            raise located_error(
                op, f"'{name}' has {len(op.results)} results, expected 1"
            )
        args = [env[v] for v in op.operands]
        try:
            value = handler(op, args, self)
        except (KernelError, TFLiteKernelError, TypeError) as e:
            raise located_error(op, f"'{name}': {e}") from None
        if not op.results:
            return
        if isinstance(value, np.generic):  # numpy scalar from a rank-0 tensor
            value = np.asarray(value)
        _check_value(value, op.results[0].type, op, f"the result of '{name}'")
        env[op.results[0]] = value


def op_name(op: Operation) -> str:
    """The op's name, also for ops parsed (generic syntax) before their class
    was registered."""
    if isinstance(op, UnregisteredOp):
        return op.op_name.data
    return op.name


def _function_table(module: ModuleOp) -> dict[str, FuncOp]:
    return {op.sym_name.data: op for op in module.ops if isinstance(op, FuncOp)}


# ----------------------------------------------------------- values/types


def _flatten(v: Value) -> list[np.ndarray]:
    if isinstance(v, tuple):
        return [a for x in v for a in _flatten(x)]
    return [v]


def _describe(v: Value) -> str:
    if isinstance(v, tuple):
        return f"tuple<{', '.join(map(_describe, v))}>"
    return f"array of shape {v.shape} and dtype {v.dtype}"


def _check_value(v: Value, t: Attribute, op: Operation, what: str) -> None:
    """Fail with a located error unless ``v`` is a value of type ``t``."""
    if isinstance(t, TupleType):
        if not isinstance(v, tuple) or len(v) != len(t.types):
            raise located_error(op, f"{what} is {_describe(v)}, but its type is {t}")
        for i, (x, xt) in enumerate(zip(v, t.types, strict=True)):
            _check_value(x, xt, op, f"field {i} of {what}")
        return
    try:
        dtype, shape = tensor_dtype_and_shape(t)
    except TypeError as e:
        raise located_error(op, f"{what}: {e}") from None
    if not isinstance(v, np.ndarray) or v.dtype != dtype or v.shape != shape:
        raise located_error(
            op, f"oracle computed {_describe(v)} for {what}, but its type is {t}"
        )


def _coerce_input(v: Any, t: Attribute, func: FuncOp, what: str) -> Value:
    if isinstance(t, TupleType):
        if not isinstance(v, Sequence) or len(v) != len(t.types):
            raise located_error(
                func, f"{what} must be a tuple of {len(t.types)} values ({t})"
            )
        return tuple(
            _coerce_input(x, xt, func, f"field {i} of {what}")
            for i, (x, xt) in enumerate(zip(v, t.types, strict=True))
        )
    try:
        dtype, shape = tensor_dtype_and_shape(t)
    except TypeError as e:
        raise located_error(func, f"{what}: {e}") from None
    a = np.asarray(v)
    if a.shape != shape:
        raise located_error(func, f"{what} has shape {a.shape}, but its type is {t}")
    if a.dtype != dtype:
        c = a.astype(dtype)
        if not np.array_equal(c.astype(a.dtype), a):
            raise located_error(
                func, f"{what} has dtype {a.dtype} whose values do not fit {t} exactly"
            )
        a = c
    return a.copy()


def input_names(func: FuncOp) -> list[str]:
    """Argument names of ``func``: ``relay.input_tensor_names`` if present,
    else the SSA names (``arg<i>`` for unnamed arguments)."""
    attr = func.attributes.get(INPUT_TENSOR_NAMES)
    if isinstance(attr, ArrayAttr):
        return [a.data for a in attr.data if isinstance(a, StringAttr)]
    if not func.body.blocks:
        return [f"arg{i}" for i in range(len(func.function_type.inputs))]
    return [a.name_hint or f"arg{a.index}" for a in func.body.block.args]


def _bind_inputs(
    func: FuncOp, inputs: Sequence[Any] | Mapping[str, Any]
) -> list[Value]:
    types = list(func.function_type.inputs.data)
    if isinstance(inputs, Mapping):
        names = input_names(func)
        missing = [n for n in names if n not in inputs]
        extra = [n for n in inputs if n not in names]
        if missing or extra or len(names) != len(types):
            raise located_error(
                func,
                f"inputs by name must be exactly {names} "
                f"(missing {missing}, unexpected {extra})",
            )
        ordered = [inputs[n] for n in names]
    else:
        ordered = list(inputs)
        names = [f"input {i}" for i in range(len(ordered))]
    if len(ordered) != len(types):
        raise located_error(
            func, f"@{func.sym_name.data} takes {len(types)} inputs, got {len(ordered)}"
        )
    return [
        _coerce_input(v, t, func, f"input '{n}'")
        for v, t, n in zip(ordered, types, names, strict=True)
    ]


# ------------------------------------------------------------- properties

_REQUIRED: Any = object()


def _py(attr: Attribute) -> Any:
    """A property's Python value (arrays -> tuples, i1 -> bool)."""
    match attr:
        case DenseArrayBase():
            # get_values() is overloaded per element kind; the pattern leaves
            # the element type a union, which the element type itself unpacks.
            return attr.elt_type.unpack(attr.data.data, len(attr))
        case IntegerAttr():
            v = attr.value.data
            if isinstance(attr.type, IntegerType) and attr.type.width.data == 1:
                return v != 0
            return v
        case FloatAttr():
            return float(attr.value.data)
        case IntAttr():
            return attr.data
        case StringAttr():
            return attr.data
        case ArrayAttr():
            return tuple(_py(a) for a in attr.data)
        case DenseIntOrFPElementsAttr():
            return dense_to_numpy(attr)
        case SymbolRefAttr():
            return attr.string_value()
        case UnitAttr():
            return True
        case _:
            return attr


def _raw_prop(op: Operation, name: str) -> Attribute | None:
    attr = op.properties.get(name)
    return op.attributes.get(name) if attr is None else attr


def prop(op: Operation, name: str, default: Any = _REQUIRED) -> Any:
    """Property ``name`` of ``op`` as a Python value, or ``default``."""
    attr = _raw_prop(op, name)
    if attr is None:
        if default is _REQUIRED:
            raise located_error(op, f"'{op_name(op)}' needs the property '{name}'")
        return default
    return _py(attr)


def _result_dtype(op: Operation) -> np.dtype:
    t = op.results[0].type
    if not isinstance(t, TensorType):
        raise TypeError(f"result type {t} is not a tensor")
    return numpy_dtype(t.element_type)


def _tensor_args(
    op: Operation, args: list[Value], n: int | None = None
) -> list[np.ndarray]:
    if n is not None and len(args) != n:
        raise located_error(op, f"'{op_name(op)}' takes {n} operands, got {len(args)}")
    for i, a in enumerate(args):
        if not isinstance(a, np.ndarray):
            raise located_error(op, f"operand {i} of '{op_name(op)}' must be a tensor")
    return args  # type: ignore[return-value]


# --------------------------------------------------------------- handlers


def _constant(op: Operation, args: list[Value], it: _Interpreter) -> Value:
    value = _raw_prop(op, "value")
    if isinstance(value, DenseIntOrFPElementsAttr):
        return dense_to_numpy(value)
    if isinstance(value, DenseResourceAttr):
        key = value.resource_handle.data
        blob = it.resources.get(key)
        if blob is None:
            blob = builtin_resource_blob(key)
        if blob is None:
            raise located_error(
                op,
                f"dense_resource<{key}> has no data: the module has no "
                f"'{{-# dialect_resources: {{builtin: {{{key}: \"0x...\"}}}} #-}}' "
                f"entry for it (note: xDSL renames resource keys that were already "
                f"parsed in this process, leaving the new key empty); pass the blob "
                f"with evaluate(..., resources={{'{key}': ...}})",
            )
        try:
            return resource_blob_to_numpy(blob, value.type)
        except ValueError as e:
            raise located_error(op, f"dense_resource<{key}>: {e}") from None
    raise located_error(
        op, "relay.constant needs a dense<...> or dense_resource<...> value"
    )


def _state(op: Operation, args: list[Value], it: _Interpreter) -> Value:
    """The state's array itself (stateful operators update it in place)."""
    assert isinstance(op, StateOp)
    name = op.state_name.data
    if name not in it.states:
        it.states[name] = dense_to_numpy(op.value).copy()
    return it.states[name]


def _read_state(op: Operation, args: list[Value], it: _Interpreter) -> Value:
    """A copy of the state as it is now (a later assignment does not change
    it)."""
    (state,) = _tensor_args(op, args, 1)
    return state.copy()


def _assign_state(op: Operation, args: list[Value], it: _Interpreter) -> Value:
    """The state's array overwritten in place with the value (no result)."""
    state, value = _tensor_args(op, args, 2)
    state[...] = value
    return state


_NO_RESULT = frozenset({"relay.assign_state"})
"""Ops evaluated for their effect on a state (their handler's value is
dropped)."""


def _svdf(op: Operation, args: list[Value], it: _Interpreter) -> Value:
    tensors = _tensor_args(op, args, 5)
    return svdf.svdf(*tensors, **property_values(op))


def _call(op: Operation, args: list[Value], it: _Interpreter) -> Value:
    callee = prop(op, "callee")
    func = it.functions.get(callee)
    if func is None:
        raise located_error(op, f"relay.call: no function @{callee} in the module")
    if PRIM_FUNC in func.attributes:
        raise located_error(
            op,
            f"relay.call: @{callee} is a tir prim func (memrefs); the relay oracle "
            f"evaluates relay functions only (evaluate before lower-ops)",
        )
    results = it.call(func, args, op)
    if len(results) != 1:
        return tuple(results)
    return results[0]


def _tuple(op: Operation, args: list[Value], it: _Interpreter) -> Value:
    return tuple(args)


def _tuple_get_item(op: Operation, args: list[Value], it: _Interpreter) -> Value:
    (t,) = args
    index = prop(op, "index")
    if not isinstance(t, tuple) or not 0 <= index < len(t):
        raise located_error(op, f"relay.tuple_get_item: index {index} out of range")
    return t[index]


def _identity(op: Operation, args: list[Value], it: _Interpreter) -> Value:
    if len(args) != 1:
        raise located_error(op, f"'{op_name(op)}' takes 1 operand, got {len(args)}")
    return args[0]


def _properties(op: Operation) -> dict[str, Any]:
    """The typed properties of a relay operator as Python values."""
    if not isinstance(op, RelayOperator):
        raise located_error(
            op, f"'{op_name(op)}' is not a registered relay operator (no properties)"
        )
    return property_values(op)


def _kernel(fn: Callable[..., np.ndarray], arity: int | None) -> Handler:
    """Handler calling ``fn(*operands, **properties)``."""

    def handler(op: Operation, args: list[Value], it: _Interpreter) -> Value:
        return fn(*_tensor_args(op, args, arity), **_properties(op))

    return handler


def _custom_call(op: Operation, args: list[Value], it: _Interpreter) -> Value:
    """A user kernel: its numpy reference from ``evaluate(custom_kernels=)``."""
    assert isinstance(op, CustomCallOp)
    code = op.code.data
    fn = it.custom_kernels.get(code)
    if fn is None:
        raise located_error(
            op,
            f"relay.custom_call '{code}': the oracle has no reference of this user "
            "kernel (pass evaluate(..., custom_kernels={code: fn}))",
        )
    quantization = [
        {key: _py(value) for key, value in q.data.items()} for q in op.quantization.data
    ]
    result = fn(
        *_tensor_args(op, args, None),
        options=bytes.fromhex(op.options.data),
        quantization=quantization,
    )
    return np.asarray(result, dtype=_result_dtype(op))


def _lstm(op: Operation, args: list[Value], it: _Interpreter) -> Value:
    assert isinstance(op, LstmOp)
    x, *rest = _tensor_args(op, args, 15)
    params = property_values(op)
    quantization = None
    if op.quantized:
        quantization = lstm.LstmQuantization(
            input_zero_point=params["input_zero_point"],
            hidden_zero_point=params["hidden_zero_point"],
            gate_multipliers=params["gate_multipliers"],
            gate_shifts=params["gate_shifts"],
            mul_multipliers=params["mul_multipliers"],
            mul_shifts=params["mul_shifts"],
            cell_scale_power=params["cell_scale_power"],
            cell_clip=params["quantized_cell_clip"],
        )
    output, hidden, cell = lstm.lstm(
        x,
        rest[0:8],
        rest[8:12],
        rest[12],
        rest[13],
        time_major=params["time_major"],
        cell_activation=params["cell_activation"],
        cell_clip=params["cell_clip"],
        quantization=quantization,
    )
    np.copyto(rest[12], hidden)  # the state operands, updated in place
    np.copyto(rest[13], cell)
    return output


def _reshape(op: Operation, args: list[Value], it: _Interpreter) -> Value:
    (x,) = _tensor_args(op, args, 1)
    t = op.results[0].type
    if not isinstance(t, TensorType):
        raise located_error(op, "relay.reshape: the result must be a tensor")
    return kernels.reshape(x, tuple(t.get_shape()))


def _broadcast_to(op: Operation, args: list[Value], it: _Interpreter) -> Value:
    (x,) = _tensor_args(op, args, 1)
    t = op.results[0].type
    if not isinstance(t, TensorType):
        raise located_error(op, "relay.broadcast_to: the result must be a tensor")
    return np.broadcast_to(x, tuple(t.get_shape())).copy()


def _resize_bilinear(op: Operation, args: list[Value], it: _Interpreter) -> Value:
    (x,) = _tensor_args(op, args, 1)
    t = op.results[0].type
    if not isinstance(t, TensorType):
        raise located_error(op, "relay.resize_bilinear: the result must be a tensor")
    _, height, width, _ = t.get_shape()
    return image_kernels.resize_bilinear(x, (height, width), **_properties(op))


def _quantized_rsqrt(op: Operation, args: list[Value], it: _Interpreter) -> Value:
    (x,) = _tensor_args(op, args, 1)
    p = _properties(op)
    return tflite_activations.quantized_rsqrt(x, 0, 0, p["multiplier"], p["shift"])


def _concatenate(op: Operation, args: list[Value], it: _Interpreter) -> Value:
    return kernels.concatenate(_tensor_args(op, args), **_properties(op))


def _cast(op: Operation, args: list[Value], it: _Interpreter) -> Value:
    (x,) = _tensor_args(op, args, 1)
    return kernels.cast(x, _result_dtype(op))


def _affine(fn: Callable[..., np.ndarray]) -> Handler:
    """Handler of ``relay.quantize`` / ``relay.dequantize``: ``fn(x, scale,
    zero_point)`` into the result's element type."""

    def handler(op: Operation, args: list[Value], it: _Interpreter) -> Value:
        (x,) = _tensor_args(op, args, 1)
        return fn(x, **_properties(op), dtype=_result_dtype(op))

    return handler


_HANDLERS: Mapping[type[Operation], Handler] = MappingProxyType(
    {
        ConstantOp: _constant,
        StateOp: _state,
        ReadStateOp: _read_state,
        AssignStateOp: _assign_state,
        SvdfOp: _svdf,
        CallOp: _call,
        TupleOp: _tuple,
        TupleGetItemOp: _tuple_get_item,
        OnDeviceOp: _identity,
        DeviceCopyOp: _identity,
        Conv2DOp: _kernel(kernels.conv2d, 2),
        Conv2DTransposeOp: _kernel(kernels.conv2d_transpose, 2),
        DenseOp: _kernel(kernels.dense, 2),
        AddOp: _kernel(kernels.add, 2),
        SubtractOp: _kernel(kernels.subtract, 2),
        MultiplyOp: _kernel(kernels.multiply, 2),
        DivideOp: _kernel(kernels.divide, 2),
        MaximumOp: _kernel(kernels.maximum, 2),
        MinimumOp: _kernel(kernels.minimum, 2),
        RightShiftOp: _kernel(kernels.right_shift, 2),
        ClipOp: _kernel(kernels.clip, 1),
        ReluOp: _kernel(kernels.relu, 1),
        MaxPool2DOp: _kernel(kernels.max_pool2d, 1),
        AvgPool2DOp: _kernel(kernels.avg_pool2d, 1),
        GlobalAvgPool2DOp: _kernel(kernels.global_avg_pool2d, 1),
        MeanOp: _kernel(kernels.mean, 1),
        SumOp: _kernel(kernels.sum_, 1),
        ArgMaxOp: _affine(kernels.argmax),
        ArgMinOp: _affine(kernels.argmin),
        MaxOp: _kernel(kernels.max_, 1),
        MinOp: _kernel(kernels.min_, 1),
        ReshapeOp: _reshape,
        BroadcastToOp: _broadcast_to,
        TransposeOp: _kernel(kernels.transpose, 1),
        StridedSliceOp: _kernel(kernels.strided_slice, 1),
        PadOp: _kernel(kernels.pad, 1),
        ConcatenateOp: _concatenate,
        SoftmaxOp: _kernel(kernels.softmax, 1),
        SigmoidOp: _kernel(kernels.sigmoid, 1),
        TanhOp: _kernel(kernels.tanh, 1),
        ExpOp: _kernel(kernels.exp, 1),
        LogOp: _kernel(kernels.log, 1),
        SqrtOp: _kernel(kernels.sqrt, 1),
        RsqrtOp: _kernel(kernels.rsqrt, 1),
        CastOp: _cast,
        FixedPointMultiplyOp: _kernel(kernels.fixed_point_multiply, 1),
        QuantizeOp: _affine(kernels.quantize),
        DequantizeOp: _affine(kernels.dequantize),
        # TFLite-specific operators (dialects/relay_tflite_ops.py)
        QuantizedSoftmaxOp: _kernel(tflite_kernels.quantized_softmax, 1),
        QuantizedDivideOp: _kernel(tflite_kernels.quantized_divide, 2),
        # data-dependent indexing (dialects/relay_image_ops.py)
        GatherOp: _kernel(image_kernels.gather, 2),
        ResizeBilinearOp: _resize_bilinear,
        LstmOp: _lstm,
        CustomCallOp: _custom_call,
        QuantizedSoftmaxInt16Op: _kernel(tflite_activations.softmax_int16, 1),
        TableLookupOp: _kernel(tflite_activations.table_lookup, 2),
        QuantizedRsqrtOp: _quantized_rsqrt,
        QuantizedL2NormalizeOp: _kernel(tflite_activations.l2_normalize_int8, 1),
        QuantizedSigmoidOp: _kernel(tflite_activations.logistic_int16, 1),
        QuantizedTanhOp: _kernel(tflite_activations.tanh_int16, 1),
        # dynamic-range quantisation (dialects/relay_hybrid_ops.py)
        DynamicQuantizeOp: _kernel(hybrid.dynamic_quantize, 1),
        DynamicQuantizeScaleOp: _kernel(hybrid.dynamic_quantize_scale, 1),
        DynamicQuantizeZeroPointOp: _kernel(hybrid.dynamic_quantize_zero_point, 1),
    }
)
"""Op class -> handler: every relay op of ``docs/relay-ops.md`` (the
semantics of an op is registered by its op class; ``tests/test_op_facts.py``
checks that every op of the dialect has one)."""
_HANDLED_NAMES = sorted(kind.name for kind in _HANDLERS)
