"""Executor of tir-level IR (after ``aot-lower-main``, and after ``usmp``).

``run_tir_main(module, inputs)`` runs the AOT entry point (the function
carrying ``tir.main``) on xDSL's interpreter and returns its outputs as numpy
arrays. Upstream xDSL interprets ``func``/``arith``/``memref`` load, store and
alloc/``scf``/``math``; this module adds:

* ``tir.allocate``: a fresh buffer filled with a poison byte (``0xFF``: NaN
  for floats, -1 for integers) so that reading storage nobody wrote shows;
* ``tir.allocate_const``: a buffer holding the constant (``dense`` or
  ``dense_resource``);
* ``tir.call``: runs the callee's body, or a Python function from
  ``externals`` (given numpy views of the buffers, writing its outputs in
  place) for operators that are only declared; every call type behaves the
  same;
* ``memref.copy``, ``memref.reinterpret_cast`` and ``memref.view``;
* the ``arith`` casts and min/max lowered operators use (``ArithExtraFunctions``)
  and ``math.round`` (``MathExtraFunctions``);
* the requantisation helpers' calls, ``emitc.call_opaque "usmp_mbqm*"``
  (``RequantFunctions``).

Floats are Python floats (double precision) between ops, as upstream keeps
them; ``arith.truncf`` rounds to its result type, so narrowing shows where the
IR asks for it.

Buffers are xDSL ``ShapedArray``s over ``bytearray``s; a view or a
reinterpret cast shares its source's bytes (offset included), so the
aliasing the planner introduces is real: two buffers placed at overlapping
pool offsets do clobber each other here, as in C.

Arguments of the entry: the inputs (``tir.input_names``), the outputs
(``tir.output_names``), then one byte buffer per pool (``tir.pool_args``).
A pool whose name is a ``memref.global`` with an initial value (a constant
pool) starts with that data; a workspace pool starts poisoned.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from math import prod
from typing import Any

import numpy as np
import numpy.typing as npt
from xdsl.dialects import arith, func, math, memref
from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseIntOrFPElementsAttr,
    DenseResourceAttr,
    IndexType,
    IntegerType,
    MemRefType,
    ModuleOp,
    ShapedType,
    StringAttr,
    i8,
)
from xdsl.interpreter import (
    Interpreter,
    InterpreterFunctions,
    PythonValues,
    impl,
    register_impls,
)
from xdsl.interpreters.arith import ArithFunctions
from xdsl.interpreters.builtin import BuiltinFunctions, xtype_for_el_type
from xdsl.interpreters.func import FuncFunctions
from xdsl.interpreters.math import MathFunctions
from xdsl.interpreters.memref import MemRefFunctions
from xdsl.interpreters.scf import ScfFunctions
from xdsl.interpreters.shaped_array import ShapedArray
from xdsl.interpreters.utils.ptr import RawPtr, TypedPtr
from xdsl.ir import Attribute
from xdsl.utils.comparisons import to_signed

from usmp.dialects import emitc, tir
from usmp.oracle.quantization import (
    multiply_by_quantized_multiplier,
    round_half_away_from_zero,
)
from usmp.oracle.values import (
    builtin_resource_blob,
    dense_to_numpy,
    numpy_dtype,
    resource_blob_to_numpy,
)

POISON = 0xFF
"""Byte that fills every buffer nobody has written yet."""

External = Callable[[Sequence[npt.NDArray[Any]]], None]
"""A Python operator: receives numpy views of its buffers, inputs then
outputs (then pools), and writes its outputs in place."""


class TirExecutionError(Exception):
    """The program cannot be run (missing function, bad arguments, ...)."""


# ------------------------------------------------------------- buffers


def _element_dtype(element_type: Attribute) -> np.dtype[Any]:
    if isinstance(element_type, IndexType):
        return np.dtype("<i8")
    dtype = numpy_dtype(element_type)
    if dtype == np.bool_:  # xDSL packs i1 as one signed byte
        return np.dtype(np.int8)
    return dtype.newbyteorder("<")


def new_buffer(type_: MemRefType, fill: int = POISON) -> ShapedArray[Any]:
    """A fresh buffer of ``type_`` whose bytes are all ``fill``."""
    shape = list(type_.get_shape())
    xtype = xtype_for_el_type(type_.get_element_type(), 64)
    raw = RawPtr(bytearray([fill]) * (prod(shape) * xtype.compile_time_size))
    return ShapedArray(TypedPtr(raw, xtype=xtype), shape)


def buffer_from_numpy(array: npt.ArrayLike, type_: MemRefType) -> ShapedArray[Any]:
    """A fresh buffer of ``type_`` holding ``array`` (shape must match)."""
    dtype = _element_dtype(type_.get_element_type())
    value = np.asarray(array)
    shape = tuple(type_.get_shape())
    if value.shape != shape:
        raise TirExecutionError(f"array of shape {value.shape} given for {type_}")
    buffer = new_buffer(type_)
    numpy_view(buffer)[...] = value.astype(dtype)
    return buffer


def numpy_view(buffer: ShapedArray[Any]) -> npt.NDArray[Any]:
    """A writable numpy array sharing ``buffer``'s bytes (no copy)."""
    ptr = buffer.data_ptr
    dtype = _element_dtype(ptr.xtype)
    return np.frombuffer(
        ptr.raw.memory, dtype=dtype, count=buffer.size, offset=ptr.raw.offset
    ).reshape(buffer.shape)


def _retyped(
    source: ShapedArray[Any], byte_offset: int, type_: MemRefType, shape: Sequence[int]
) -> ShapedArray[Any]:
    xtype = xtype_for_el_type(type_.get_element_type(), 64)
    view = ShapedArray(
        TypedPtr(source.data_ptr.raw + byte_offset, xtype=xtype), list(shape)
    )
    end = source.data_ptr.raw.offset + byte_offset + view.size * xtype.compile_time_size
    if end > len(source.data_ptr.raw.memory):
        raise TirExecutionError(
            f"view of {type_} at byte {byte_offset} runs past the end of its source"
        )
    return view


def constant_value(
    value: DenseIntOrFPElementsAttr | DenseResourceAttr,
) -> npt.NDArray[Any]:
    if isinstance(value, DenseIntOrFPElementsAttr):
        return dense_to_numpy(value)
    key = value.resource_handle.data
    blob = builtin_resource_blob(key)
    if blob is None:
        raise TirExecutionError(f"dense_resource<{key}> has no blob in the module")
    return resource_blob_to_numpy(blob, value.type)


# ------------------------------------------------------------- interpreter


@register_impls
class TirFunctions(InterpreterFunctions):
    """Interpretation of the ``tir`` ops."""

    def __init__(self, externals: Mapping[str, External] | None = None):
        self.externals = dict(externals or {})

    @impl(tir.AllocateOp)
    def run_allocate(
        self, interpreter: Interpreter, op: tir.AllocateOp, args: PythonValues
    ) -> PythonValues:
        assert isinstance(op.result.type, MemRefType)
        return (new_buffer(op.result.type),)

    @impl(tir.AllocateConstOp)
    def run_allocate_const(
        self, interpreter: Interpreter, op: tir.AllocateConstOp, args: PythonValues
    ) -> PythonValues:
        assert isinstance(op.result.type, MemRefType)
        return (buffer_from_numpy(constant_value(op.value), op.result.type),)

    @impl(tir.CallOp)
    def run_call(
        self, interpreter: Interpreter, op: tir.CallOp, args: PythonValues
    ) -> PythonValues:
        name = op.callee.string_value()
        if name in self.externals:
            self.externals[name]([numpy_view(a) for a in args])
            return ()
        callee = interpreter.get_op_for_symbol(name)
        if isinstance(callee, func.FuncOp) and not callee.body.blocks:
            raise TirExecutionError(
                f"@{name} is only declared; pass its Python implementation in "
                "`externals`"
            )
        interpreter.call_op(callee, args)
        return ()


@register_impls
class DeviceHookFunctions(InterpreterFunctions):
    """``tir.device_hook``: the application's device API; the interpreter
    has no device to switch, so a hook does nothing."""

    @impl(tir.DeviceHookOp)
    def run_device_hook(
        self, interpreter: Interpreter, op: tir.DeviceHookOp, args: PythonValues
    ) -> PythonValues:
        return ()


@register_impls
class MemRefViewFunctions(InterpreterFunctions):
    """``memref`` ops upstream xDSL does not interpret, with real aliasing."""

    @impl(memref.CopyOp)
    def run_copy(
        self, interpreter: Interpreter, op: memref.CopyOp, args: PythonValues
    ) -> PythonValues:
        source, destination = args
        numpy_view(destination)[...] = numpy_view(source)
        return ()

    @impl(memref.ReinterpretCastOp)
    def run_reinterpret_cast(
        self, interpreter: Interpreter, op: memref.ReinterpretCastOp, args: PythonValues
    ) -> PythonValues:
        source = args[0]
        result = op.result.type
        assert isinstance(result, MemRefType)
        if op.offsets or op.sizes or op.strides:
            raise TirExecutionError("dynamic reinterpret_cast is not supported")
        (offset,) = op.static_offsets.get_values()
        shape = op.static_sizes.get_values()
        strides = op.static_strides.get_values()
        if tuple(strides) != ShapedType.strides_for_shape(shape):
            raise TirExecutionError(
                f"reinterpret_cast with non row-major strides {list(strides)}"
            )
        itemsize = xtype_for_el_type(result.get_element_type(), 64).compile_time_size
        return (_retyped(source, offset * itemsize, result, shape),)

    @impl(memref.ViewOp)
    def run_view(
        self, interpreter: Interpreter, op: memref.ViewOp, args: PythonValues
    ) -> PythonValues:
        source, byte_shift, *sizes = args
        result = op.result.type
        assert isinstance(result, MemRefType)
        dynamic = iter(sizes)
        shape = [next(dynamic) if d < 0 else d for d in result.get_shape()]
        return (_retyped(source, byte_shift, result, shape),)


@register_impls
class ArithExtraFunctions(InterpreterFunctions):
    """``arith`` ops lowered operators use that upstream xDSL does not
    interpret. Integers are kept as signed Python ints (upstream's convention)."""

    @impl(arith.DivfOp)
    def run_divf(
        self, interpreter: Interpreter, op: arith.DivfOp, args: PythonValues
    ) -> PythonValues:
        """IEEE division in the result type: an f32 quotient is rounded to
        f32 (quantize's ``x / scale`` must round exactly as C's float
        division at the ties)."""
        dtype = _float_dtype(op.result.type)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            return (float(dtype.type(args[0]) / dtype.type(args[1])),)

    @impl(arith.NegfOp)
    def run_negf(
        self, interpreter: Interpreter, op: arith.NegfOp, args: PythonValues
    ) -> PythonValues:
        return (-args[0],)

    @impl(arith.MaxSIOp)
    def run_maxsi(
        self, interpreter: Interpreter, op: arith.MaxSIOp, args: PythonValues
    ) -> PythonValues:
        return (max(args[0], args[1]),)

    @impl(arith.MinSIOp)
    def run_minsi(
        self, interpreter: Interpreter, op: arith.MinSIOp, args: PythonValues
    ) -> PythonValues:
        return (min(args[0], args[1]),)

    @impl(arith.ExtSIOp)
    def run_extsi(
        self, interpreter: Interpreter, op: arith.ExtSIOp, args: PythonValues
    ) -> PythonValues:
        return (int(args[0]),)

    @impl(arith.ExtUIOp)
    def run_extui(
        self, interpreter: Interpreter, op: arith.ExtUIOp, args: PythonValues
    ) -> PythonValues:
        width = _int_width(op.input.type)
        return (int(args[0]) & ((1 << width) - 1),)

    @impl(arith.TruncIOp)
    def run_trunci(
        self, interpreter: Interpreter, op: arith.TruncIOp, args: PythonValues
    ) -> PythonValues:
        width = _int_width(op.result.type)
        return (to_signed(int(args[0]) & ((1 << width) - 1), width),)

    @impl(arith.SIToFPOp)
    def run_sitofp(
        self, interpreter: Interpreter, op: arith.SIToFPOp, args: PythonValues
    ) -> PythonValues:
        """Nearest value of the result type (an i32 above 2**24 rounds in f32)."""
        return (float(_float_dtype(op.result.type).type(args[0])),)

    @impl(arith.FPToSIOp)
    def run_fptosi(
        self, interpreter: Interpreter, op: arith.FPToSIOp, args: PythonValues
    ) -> PythonValues:
        return (int(args[0]),)  # rounds toward zero

    @impl(arith.ExtFOp)
    def run_extf(
        self, interpreter: Interpreter, op: arith.ExtFOp, args: PythonValues
    ) -> PythonValues:
        return (float(args[0]),)  # exact: every narrower float is a double

    @impl(arith.TruncFOp)
    def run_truncf(
        self, interpreter: Interpreter, op: arith.TruncFOp, args: PythonValues
    ) -> PythonValues:
        """Round to the nearest value of the result type (ties to even;
        overflow gives infinity), as IEEE conversion does."""
        dtype = _float_dtype(op.result.type)
        with np.errstate(over="ignore"):
            return (float(dtype.type(args[0])),)


@register_impls
class MathExtraFunctions(InterpreterFunctions):
    """``math`` ops lowered operators use that upstream xDSL does not
    interpret."""

    @impl(math.RoundOp)
    def run_round(
        self, interpreter: Interpreter, op: math.RoundOp, args: PythonValues
    ) -> PythonValues:
        """Nearest integer, ties away from zero (C ``round``)."""
        return (float(round_half_away_from_zero(args[0])),)


@register_impls
class RequantFunctions(InterpreterFunctions):
    """The requantisation helpers lowered kernels call
    (``emitc.call_opaque "usmp_mbqm*"``, ``usmp/lowering/requant.py``):
    TFLite's ``MultiplyByQuantizedMultiplier``; the third argument is the
    right shift (``_right``), the left shift (``_left``) or the signed
    shift. The oracle always saturates, as the ``_sat`` helpers do; the
    others are only called where the multiplier is not ``INT32_MIN``."""

    @impl(emitc.CallOpaqueOp)
    def run_call_opaque(
        self, interpreter: Interpreter, op: emitc.CallOpaqueOp, args: PythonValues
    ) -> PythonValues:
        name = op.callee.data
        if not name.startswith("usmp_mbqm") or len(args) != 3:
            raise TirExecutionError(f"cannot interpret a call of '{name}'")
        x, m, s = (int(v) for v in args)
        shift = -s if "_right" in name else s
        return (int(multiply_by_quantized_multiplier(x, m, shift)),)


def _float_dtype(type_: Attribute) -> np.dtype[Any]:
    try:
        dtype = numpy_dtype(type_)
    except TypeError:
        dtype = None
    if dtype is None or dtype.kind != "f":
        raise TirExecutionError(f"expected f16, f32 or f64, got {type_}")
    return dtype


def _int_width(type_: Attribute) -> int:
    if isinstance(type_, IntegerType):
        return type_.width.data
    raise TirExecutionError(f"expected an integer type, got {type_}")


def make_interpreter(
    module: ModuleOp,
    externals: Mapping[str, External] | None = None,
    extra_functions: Sequence[InterpreterFunctions] = (),
) -> Interpreter:
    """An xDSL interpreter for ``module`` with upstream and tir semantics
    (``extra_functions`` may add or override op implementations)."""
    interpreter = Interpreter(module, index_bitwidth=64)
    for functions in (
        ArithFunctions(),
        ArithExtraFunctions(),
        BuiltinFunctions(),
        FuncFunctions(),
        MathFunctions(),
        MathExtraFunctions(),
        MemRefFunctions(),
        ScfFunctions(),
        TirFunctions(externals),
        DeviceHookFunctions(),
        MemRefViewFunctions(),
        RequantFunctions(),
    ):
        interpreter.register_implementations(functions)
    for functions in extra_functions:
        interpreter.register_implementations(functions, override=True)
    return interpreter


# ------------------------------------------------------------- entry point


def _entry(module: ModuleOp, entry: str | None) -> func.FuncOp:
    functions = [f for f in module.ops if isinstance(f, func.FuncOp)]
    if entry is not None:
        found = [f for f in functions if f.sym_name.data == entry]
    else:
        found = [f for f in functions if tir.MAIN_FUNC in f.attributes]
    if len(found) != 1:
        what = f"@{entry}" if entry else "function with 'tir.main'"
        raise TirExecutionError(f"expected exactly one {what}, found {len(found)}")
    return found[0]


def _names(fn: func.FuncOp, attr: str) -> list[str]:
    value = fn.attributes.get(attr)
    if not isinstance(value, ArrayAttr):
        return []
    return [v.data for v in value.data if isinstance(v, StringAttr)]


def _pool_buffer(module: ModuleOp, name: str, type_: MemRefType) -> ShapedArray[Any]:
    for op in module.ops:
        if isinstance(op, memref.GlobalOp) and op.sym_name.data == name:
            value = op.initial_value
            if isinstance(value, DenseIntOrFPElementsAttr | DenseResourceAttr):
                data = constant_value(value)
                return buffer_from_numpy(data.reshape(type_.get_shape()), type_)
    return new_buffer(type_)


def run_tir_main(
    module: ModuleOp,
    inputs: Sequence[npt.ArrayLike] | Mapping[str, npt.ArrayLike],
    *,
    externals: Mapping[str, External] | None = None,
    entry: str | None = None,
    extra_functions: Sequence[InterpreterFunctions] = (),
) -> list[npt.NDArray[Any]]:
    """Run the AOT entry point of ``module``; return its outputs.

    ``inputs``: one array per input, in order or by name (``tir.input_names``).
    ``externals``: Python implementations of declared operators.
    ``entry``: the function to run (default: the one carrying ``tir.main``).
    ``extra_functions``: more xDSL interpreter functions (added or overriding).
    """
    fn = _entry(module, entry)
    arg_types = list(fn.function_type.inputs.data)
    input_names = _names(fn, tir.INPUT_NAMES)
    output_names = _names(fn, tir.OUTPUT_NAMES)
    pool_names = _names(fn, tir.POOL_ARGS)
    n_in, n_out = len(input_names), len(output_names)
    if n_in + n_out + len(pool_names) != len(arg_types):
        raise TirExecutionError(
            f"@{fn.sym_name.data} takes {len(arg_types)} arguments but names "
            f"{n_in} inputs, {n_out} outputs and {len(pool_names)} pools"
        )
    if isinstance(inputs, Mapping):
        missing = [n for n in input_names if n not in inputs]
        if missing or len(inputs) != n_in:
            raise TirExecutionError(
                f"inputs {sorted(inputs)} do not match the model's {input_names}"
            )
        ordered = [inputs[n] for n in input_names]
    else:
        ordered = list(inputs)
        if len(ordered) != n_in:
            raise TirExecutionError(
                f"{len(ordered)} inputs given, the model takes {n_in}"
            )

    def memref_type(i: int) -> MemRefType:
        t = arg_types[i]
        if not isinstance(t, MemRefType):
            raise TirExecutionError(f"argument {i} of the entry is {t}, not a memref")
        return t

    args: list[ShapedArray[Any]] = []
    for i, value in enumerate(ordered):
        args.append(buffer_from_numpy(value, memref_type(i)))
    outputs = [new_buffer(memref_type(n_in + i)) for i in range(n_out)]
    args.extend(outputs)
    for i, name in enumerate(pool_names):
        t = memref_type(n_in + n_out + i)
        if t.get_element_type() != i8:
            raise TirExecutionError(
                f"pool argument {name} is {t}, expected memref<Nxi8>"
            )
        args.append(_pool_buffer(module, name, t))
    make_interpreter(module, externals, extra_functions).call_op(fn, tuple(args))
    return [numpy_view(o).copy() for o in outputs]
