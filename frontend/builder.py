"""Emission state of the TFLite importer: the block of ``@main`` being built,
the SSA value of every TFLite tensor, constants and the requantisation chain.

Converters (``tflite_ops``) see a ``RelayBuilder``: they look tensors up
(``value``), create constants (``constant``, ``tensor_constant``), append
relay ops (``emit``, which stamps the location of the TFLite operator being
converted) and bind the operator's outputs (``bind``). The builder holds no
knowledge of particular TFLite operators.

Locations: an op emitted for TFLite operator ``k`` (say a CONV_2D) of
``model.tflite`` gets ``loc("CONV_2D"("model.tflite":k:0))`` (a ``NameLoc``
around a ``FileLineColLoc``): the "line" is the TFLite operator index
(0-based) and column 0 means "no column", so later passes' diagnostics read
``model.tflite:12 (CONV_2D): error: ...`` for operator 12. The op that
computes a TFLite tensor (the value ``bind`` receives) is also named after
that tensor (a weight's constant too), as MLIR's own TFLite importer does:
``loc("conv1/Relu"("CONV_2D"("model.tflite":12:0)))``; the passes carry the
location to the tensor's allocation, so the memory report and the TFLite
Micro plan know which TFLite tensor each buffer holds
(``usmp.diagnostics.tensor_location``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt
from xdsl.dialects.builtin import (
    BytesAttr,
    DenseIntOrFPElementsAttr,
    FileLineColLoc,
    IntAttr,
    IntegerType,
    NameLoc,
    Signedness,
    StringAttr,
    TensorType,
    f32,
    i8,
    i16,
    i32,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue

from usmp.dialects.relay import ConstantOp
from usmp.dialects.relay_base import tensor_type as relay_tensor_type
from usmp.dialects.relay_ops import (
    AddOp,
    CastOp,
    ClipOp,
    FixedPointMultiplyOp,
)
from usmp.frontend.tflite_reader import Model, Operator, Tensor

ui8 = IntegerType(8, Signedness.UNSIGNED)

_ELEMENT_TYPES: dict[str, Attribute] = {
    "float32": f32,
    "int8": i8,
    "int16": i16,
    "int32": i32,
    "int64": i64,
    "uint8": ui8,
}

_INT_RANGES = {
    "int8": (-128, 127),
    "int16": (-32768, 32767),
    "int32": (-(2**31), 2**31 - 1),
    "uint8": (0, 255),
}


def element_type(dtype: np.dtype[Any]) -> Attribute:
    """The relay element type of a numpy dtype (``KeyError`` if none)."""
    return _ELEMENT_TYPES[np.dtype(dtype).name]


def numpy_dtype(element: Attribute) -> np.dtype[Any]:
    """The numpy dtype of a relay element type (``KeyError`` if none)."""
    for name, t in _ELEMENT_TYPES.items():
        if t == element:
            return np.dtype(name)
    raise KeyError(f"no numpy dtype for {element}")


def dense_values(attr: DenseIntOrFPElementsAttr) -> npt.NDArray[Any]:
    """The values of a ``dense<...>`` attribute of a relay element type."""
    t = attr.type
    assert isinstance(t, TensorType)
    dtype = numpy_dtype(t.element_type).newbyteorder("<")
    values = np.frombuffer(attr.data.data, dtype=dtype)
    shape = tuple(t.get_shape())
    if values.size == 1 and math.prod(shape) != 1:  # splat
        return np.full(shape, values[0], dtype=dtype)
    return values.reshape(shape)


def int_range(dtype: np.dtype[Any]) -> tuple[int, int]:
    return _INT_RANGES[np.dtype(dtype).name]


def tensor_type(dtype: np.dtype[Any], shape: tuple[int, ...]) -> TensorType:
    return relay_tensor_type(element_type(dtype), shape)


def sanitize_name(name: str, fallback: str) -> str:
    """An SSA name hint from a TFLite tensor name: its first ``;``-separated
    part, non-identifier characters replaced by ``_``."""
    first = name.split(";", 1)[0]
    cleaned = re.sub(r"[^A-Za-z0-9_]", "_", first).strip("_")
    if not cleaned:
        return fallback
    if cleaned[0].isdigit():
        cleaned = f"t{cleaned}"
    return cleaned


def dense_attr(array: npt.NDArray[Any]) -> DenseIntOrFPElementsAttr:
    """A ``dense<...>`` attribute holding ``array`` (raw little-endian bytes:
    xDSL prints arrays over 100 elements as ``dense<"0x...">``)."""
    data = np.ascontiguousarray(array, dtype=array.dtype.newbyteorder("<"))
    type_: Any = tensor_type(array.dtype, tuple(array.shape))
    return DenseIntOrFPElementsAttr(type_, BytesAttr(_bytes_of(data)))


def _bytes_of(data: npt.NDArray[Any]) -> bytes:
    """``data.tobytes()`` (C order); the ``bytes`` object ``data`` views, if
    it views all of one (``bytes`` are immutable: the attribute can share
    them). A constant of a ``.tflite`` model is such a view (the reader's
    ``np.frombuffer`` of its buffer, reshaped): not copying MobileNetV2's
    3.5 MB of weights a second time saves their copy and page faults."""
    root: Any = data
    while isinstance(root, np.ndarray) and root.base is not None:
        root = root.base
    if (
        type(root) is bytes
        and len(root) == data.nbytes
        and data.flags.c_contiguous
        and data.ctypes.data == np.frombuffer(root, np.uint8).ctypes.data
    ):
        return root
    return data.tobytes()


@dataclass
class RelayBuilder:
    """Appends relay ops for one model to ``block`` (the body of ``@main``)."""

    model: Model
    block: Block
    values: dict[int, SSAValue] = field(default_factory=dict[int, SSAValue])
    _constants: dict[tuple[int, str], SSAValue] = field(
        default_factory=dict[tuple[int, str], SSAValue]
    )
    _scalars: dict[tuple[int | float, str], SSAValue] = field(
        default_factory=dict[tuple[int | float, str], SSAValue]
    )
    _operator: Operator | None = None
    _location: NameLoc | None = None
    """The current operator's location, built once for all its ops
    (attributes are immutable: its ops can share one)."""
    _states: dict[str, SSAValue] = field(default_factory=dict[str, SSAValue])

    # -- operators -------------------------------------------------------------

    def begin(self, op: Operator | None) -> None:
        """Start converting TFLite operator ``op`` (sets the location of the
        ops emitted next; ``None``: ops outside any operator)."""
        self._operator = op
        self._location = None

    @property
    def operator(self) -> Operator:
        assert self._operator is not None, "begin() not called"
        return self._operator

    def error(self, message: str) -> Exception:
        """A diagnostic naming the current operator and its index."""
        if self._operator is None:
            return self.model.error(message)
        return self.model.op_error(self._operator, message)

    def emit(self, op: Operation) -> SSAValue:
        """Append ``op`` (located at the current operator); its result."""
        self.emit_effect(op)
        return op.results[0]

    def emit_effect(self, op: Operation) -> None:
        """Append ``op``, which has no result (an assignment of a state)."""
        if self._operator is not None:
            if self._location is None:
                self._location = NameLoc(
                    StringAttr(self._operator.display_name),
                    FileLineColLoc(
                        StringAttr(self.model.name),
                        IntAttr(self._operator.index),
                        IntAttr(0),
                    ),
                )
            op.location = self._location
        self.block.add_op(op)

    # -- tensors ---------------------------------------------------------------

    def tensor(self, index: int) -> Tensor:
        return self.model.tensors[index]

    def input_tensor(self, position: int) -> Tensor | None:
        """The operator's ``position``-th input, ``None`` if omitted."""
        inputs = self.operator.inputs
        if position >= len(inputs) or inputs[position] < 0:
            return None
        return self.tensor(inputs[position])

    def required_input(self, position: int) -> Tensor:
        t = self.input_tensor(position)
        if t is None:
            raise self.error(f"input {position} is missing")
        return t

    def output_tensor(self, position: int = 0) -> Tensor:
        outputs = self.operator.outputs
        if position >= len(outputs):
            raise self.error(
                f"output {position} is missing (the operator has {len(outputs)} "
                "outputs)"
            )
        return self.tensor(outputs[position])

    def value(self, t: Tensor) -> SSAValue:
        """The SSA value of tensor ``t`` (constants are materialised once)."""
        if t.index in self.values:
            return self.values[t.index]
        if t.data is not None:
            return self.tensor_constant(t)
        raise self.error(
            f"input tensor '{t.name}' (#{t.index}) is neither a model input, a "
            "constant nor computed by an earlier operator"
        )

    def bind(self, t: Tensor, value: SSAValue) -> None:
        """``value`` holds tensor ``t``; an op this operator emitted for it is
        named after the tensor (see the module doc)."""
        self.values[t.index] = value
        self._name_after(value, t)

    def _name_after(self, value: SSAValue, t: Tensor) -> None:
        """Name the op computing ``value`` after tensor ``t`` if this operator
        emitted it (an alias of an earlier tensor keeps that one's name)."""
        owner = value.owner
        if (
            self._operator is not None
            and isinstance(owner, Operation)
            and isinstance(owner.location, NameLoc)
            and isinstance(owner.location.location, FileLineColLoc)
            and owner.location.location.line.data == self._operator.index
        ):
            owner.location = NameLoc(StringAttr(t.name), owner.location)

    def state(self, t: Tensor) -> SSAValue:
        """The ``relay.state`` of variable tensor ``t`` (one per tensor), with
        TFLite Micro's reset value: the zero point for int8, else 0."""
        if t.index in self.values:
            return self.values[t.index]
        from usmp.dialects.relay_state import StateOp

        if not t.is_variable or t.dtype is None:
            raise self.error(f"tensor '{t.name}' (#{t.index}) is not a variable")
        zero = 0
        if t.dtype == np.int8 and t.quantization is not None:
            zero = t.quantization.zero_point
        initial = np.full(t.shape, zero, dtype=t.dtype)
        value = self.emit(StateOp(t.name, dense_attr(initial)))
        self._name_after(value, t)
        self.values[t.index] = value
        return value

    def named_state(self, name: str, initial: DenseIntOrFPElementsAttr) -> SSAValue:
        """The ``relay.state`` called ``name`` (a resource variable), made at
        its first request with the initial value ``initial``."""
        if name not in self._states:
            from usmp.dialects.relay_state import StateOp

            self._states[name] = self.emit(StateOp(name, initial))
        return self._states[name]

    # -- constants -------------------------------------------------------------

    def constant(self, array: npt.NDArray[Any], name: str | None = None) -> SSAValue:
        """A fresh ``relay.constant`` holding ``array``."""
        value = self.emit(ConstantOp(dense_attr(array)))
        if name:
            value.name_hint = name
        return value

    def scalar(self, value: int | float, dtype: str) -> SSAValue:
        """A rank-0 constant (broadcast operand of elementwise ops), one per
        ``(value, dtype)`` in the module."""
        key = (value, dtype)
        if key not in self._scalars:
            self._scalars[key] = self.constant(np.array(value, dtype=dtype))
        return self._scalars[key]

    def tensor_constant(
        self,
        t: Tensor,
        layout: str = "",
        transform: Callable[[npt.NDArray[Any]], npt.NDArray[Any]] | None = None,
    ) -> SSAValue:
        """The constant of TFLite tensor ``t``, optionally re-laid out by
        ``transform(array) -> array`` (cached per ``(tensor, layout)``)."""
        key = (t.index, layout)
        if key in self._constants:
            return self._constants[key]
        if t.data is None:
            raise self.error(f"tensor '{t.name}' (#{t.index}) must be a constant")
        array = t.data if transform is None else transform(t.data)
        if array.dtype.name not in _ELEMENT_TYPES:
            only = (
                "; FLOAT16 constants are supported as the input of DEQUANTIZE "
                "(folded into FLOAT32)"
                if t.type_name == "FLOAT16"
                else ""
            )
            raise self.error(
                f"constant tensor '{t.name}' (#{t.index}) has type {t.type_name}, "
                f"which this operator does not take{only}"
            )
        value = self.constant(
            np.ascontiguousarray(array), sanitize_name(t.name, f"cst{t.index}")
        )
        self._name_after(value, t)
        self._constants[key] = value
        return value

    # -- requantisation --------------------------------------------------------

    def requantize_i32(
        self,
        acc: SSAValue,
        multipliers: list[int],
        shifts: list[int],
        axis: int,
        output_zero_point: int,
        activation_min: int,
        activation_max: int,
        output_dtype: np.dtype[Any],
    ) -> SSAValue:
        """TFLite's output stage of an int32 (or, 16x8, int64) accumulator:
        ``fixed_point_multiply -> add(output_zp) -> clip(act) -> cast``.
        Per-tensor parameters are collapsed to length-1 arrays."""
        if len(multipliers) != len(shifts):
            raise ValueError("one shift per multiplier expected")
        # one (multiplier, shift) pair for every channel: min and max are C
        # loops, a set of pairs a tuple per channel
        if (
            multipliers
            and min(multipliers) == max(multipliers)
            and min(shifts) == max(shifts)
        ):
            multipliers, shifts = multipliers[:1], shifts[:1]
        x = self.emit(FixedPointMultiplyOp(acc, multipliers, shifts, axis=axis))
        if output_zero_point != 0:
            x = self.emit(AddOp(x, self.scalar(output_zero_point, "int32")))
        x = self.emit(ClipOp(x, float(activation_min), float(activation_max)))
        return self.emit(CastOp(x, element_type(output_dtype)))
