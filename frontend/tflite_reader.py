"""A typed, read-only view of a ``.tflite`` flatbuffer (subgraph 0).

Built on the maintained ``tflite`` PyPI package (the generated flatbuffer
accessors). The rest of the importer sees only the frozen dataclasses below:
tensors with their numpy dtype, shape, quantisation and constant data;
operators with their opcode name, inputs/outputs and builtin options (the
``tflite.*Options`` table, already initialised).

Nothing is read before ``tflite_verify.verify_structure`` has checked that
every table, vector and string the reader touches lies inside the file;
then the decoded values are checked here: operator code, tensor and buffer
indices in range, buffer bytes inside the file and matching the tensor's
shape and type, quantisation vectors of matching lengths, builtin options of
the operator's own kind. Errors in the file (damaged flatbuffer, several
subgraphs, an index out of range...) are ``TFLiteImportError``: a located
diagnostic naming the model file and the operator or tensor.

What TFLite Micro reads differently from the letter of the schema is read
as TFLite Micro reads it, never refused, and ``Model.warnings`` says so:
subgraphs after the first (``Invoke`` runs subgraph 0), builtin options of
another kind than the opcode's (the defaults), a buffer larger than its
tensor (the tensor's bytes from its start), a ``shape_signature`` that does
not fit the shape (ignored), a dynamic dimension of a model input or output
(the stored size). Quantisation is read as TFLite Micro's allocator reads it
(``_read_quantization``). Tensors without a name (TFLite allows them) are
named ``tensor_<index>``; for a model input or output, whose name becomes a
C field of the generated interface, a warning says so.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

import flatbuffers
import flatbuffers.number_types as fbn
import flatbuffers.table
import numpy as np
import numpy.typing as npt

from usmp.diagnostics import LocatedError
from usmp.frontend.tflite_schema import schema_class
from usmp.frontend.tflite_verify import TFLiteImportError, verify_structure

__all__ = [
    "Model",
    "Operator",
    "Quantization",
    "Subgraph",
    "Tensor",
    "TFLiteImportError",
    "damaged_model_errors",
    "read_model",
    "read_model_file",
]


def _enum_names(cls: type) -> MappingProxyType[int, str]:
    return MappingProxyType(
        {
            v: k
            for k, v in vars(cls).items()
            if not k.startswith("_") and isinstance(v, int)
        }
    )


_OPCODE_NAMES = _enum_names(schema_class("BuiltinOperator"))
_OPTIONS_NAMES = _enum_names(schema_class("BuiltinOptions"))
_TENSOR_TYPE_NAMES = _enum_names(schema_class("TensorType"))
_NO_OPTIONS = schema_class("BuiltinOptions").NONE

_NUMPY_DTYPES: MappingProxyType[str, np.dtype[Any]] = MappingProxyType(
    {
        "FLOAT32": np.dtype("<f4"),
        "FLOAT16": np.dtype("<f2"),
        "FLOAT64": np.dtype("<f8"),
        "INT8": np.dtype("i1"),
        "UINT8": np.dtype("u1"),
        "INT16": np.dtype("<i2"),
        "UINT16": np.dtype("<u2"),
        "INT32": np.dtype("<i4"),
        "UINT32": np.dtype("<u4"),
        "INT64": np.dtype("<i8"),
        "UINT64": np.dtype("<u8"),
        "BOOL": np.dtype("?"),
    }
)


_VOFFSET = struct.Struct("<H")
_UOFFSET_MAX = fbn.UOffsetTFlags.max_val


class _Table(flatbuffers.table.Table):
    """A ``flatbuffers`` table that decodes its vtable once.

    The generated accessors find each field through ``Offset``, which reads
    the vtable's position and length again on every call (three ``Get``s:
    half the reader's CPU on MobileNetV2's 181 tensors). This one reads
    them the first time, the same bytes in the same order, then only the
    field's slot, so it reads what ``Table`` reads and fails where it fails
    (``verify_structure`` has checked the bytes first); ``Get`` is
    ``Table.Get`` without its two inner calls."""

    __slots__ = ("_vtable", "_vtable_end")

    def __init__(self, buf: Any, pos: int):
        super().__init__(buf, pos)
        self._vtable: int | None = None
        self._vtable_end = 0

    def Offset(self, vtableOffset: int) -> int:  # noqa: N802,N803 -- flatbuffers'
        vtable = self._vtable
        if vtable is None:
            vtable = self.Pos - self.Get(fbn.SOffsetTFlags, self.Pos)
            self._vtable_end = self.Get(fbn.VOffsetTFlags, vtable)
            self._vtable = vtable
        if vtableOffset < self._vtable_end:
            return _VOFFSET.unpack_from(self.Bytes, vtable + vtableOffset)[0]
        return 0

    def Get(self, flags: Any, off: int) -> Any:  # noqa: N802 -- flatbuffers'
        """``Table.Get`` (its range check, its value) in one call."""
        if not 0 <= off <= _UOFFSET_MAX:
            fbn.enforce_number(off, fbn.UOffsetTFlags)  # raises as ``Table.Get``
        return flags.py_type(flags.packer_type.unpack_from(self.Bytes, off)[0])


def _fast(table: Any) -> Any:
    """``table`` (a generated ``tflite`` object, or ``None``) reading
    through ``_Table``."""
    if table is not None:
        tab = table._tab  # pyright: ignore[reportPrivateUsage]
        table._tab = _Table(tab.Bytes, tab.Pos)  # pyright: ignore[reportPrivateUsage]
    return table


@dataclass(frozen=True)
class Quantization:
    """Affine quantisation of a tensor: ``real = scale * (q - zero_point)``.

    ``scales``/``zero_points`` hold one value (per tensor) or one per
    channel, as many zero points as scales. ``axis`` is the file's
    ``quantized_dimension``, unchecked (``_read_quantization``): a converter
    that uses per-channel scales checks it against the tensor's shape.
    Scales are float32 values.
    """

    scales: tuple[float, ...]
    zero_points: tuple[int, ...]
    axis: int

    @property
    def per_channel(self) -> bool:
        return len(self.scales) > 1

    @property
    def scale(self) -> float:
        """The per-tensor scale (the first one for per-channel tensors)."""
        return self.scales[0]

    @property
    def zero_point(self) -> int:
        return self.zero_points[0]


@dataclass(frozen=True)
class Tensor:
    index: int
    name: str
    type_name: str
    """TFLite ``TensorType`` name: ``FLOAT32``, ``INT8``, ..."""
    shape: tuple[int, ...]
    shape_signature: tuple[int, ...] | None
    quantization: Quantization | None
    data: npt.NDArray[Any] | None
    """Constant contents (read-only, shaped), ``None`` for activations."""
    is_variable: bool
    sparse: bool = False
    """The file stores the constant sparse (``data`` is densified)."""

    @property
    def dtype(self) -> np.dtype[Any] | None:
        return _NUMPY_DTYPES.get(self.type_name)

    @property
    def is_constant(self) -> bool:
        return self.data is not None


@dataclass(frozen=True)
class Operator:
    index: int
    opcode: str
    """``BuiltinOperator`` name (``CONV_2D``), or ``CUSTOM``."""
    custom_code: str | None
    version: int
    inputs: tuple[int, ...]
    """Tensor indices; -1 marks an omitted optional input."""
    outputs: tuple[int, ...]
    options: Any
    """The initialised ``tflite.<X>Options`` table, or ``None``."""
    intermediates: tuple[int, ...]
    subgraph: int = 0
    """The subgraph holding the operator (0: the one ``Invoke`` runs)."""
    custom_options: bytes = b""
    """A CUSTOM operator's ``custom_options`` bytes (a flexbuffer, as the
    converter wrote it; passed through to a user kernel)."""

    @property
    def display_name(self) -> str:
        if self.opcode == "CUSTOM":
            return f"CUSTOM '{self.custom_code}'"
        return self.opcode


@dataclass(frozen=True)
class Subgraph:
    """A subgraph other than the first (its operators know their subgraph)."""

    index: int
    tensors: tuple[Tensor, ...]
    operators: tuple[Operator, ...]
    inputs: tuple[int, ...]
    outputs: tuple[int, ...]


@dataclass(frozen=True)
class Model:
    name: str
    """File name used in diagnostics and locations."""
    description: str
    tensors: tuple[Tensor, ...]
    operators: tuple[Operator, ...]
    inputs: tuple[int, ...]
    outputs: tuple[int, ...]
    warnings: tuple[str, ...] = ()
    """``<model>: warning: ...`` lines about what the reader made up (names)
    or read as TFLite Micro reads it (see the module doc)."""
    subgraphs: tuple[Subgraph, ...] = ()
    """The subgraphs after the first (``subgraphs[k - 1]`` is subgraph k):
    what ``CALL_ONCE`` runs (the initialisation of resource variables)."""

    def error(self, message: str) -> TFLiteImportError:
        return TFLiteImportError(self.name, message)

    def op_error(self, op: Operator, message: str) -> TFLiteImportError:
        graph = f"subgraph {op.subgraph}, " if op.subgraph else ""
        return TFLiteImportError(
            self.name, f"{graph}operator {op.index} ({op.display_name}): {message}"
        )


def read_model(data: bytes, name: str = "model.tflite") -> Model:
    """Parse a ``.tflite`` flatbuffer (its first subgraph: TFLite Micro's
    ``Invoke`` runs subgraph 0; the others run only from control-flow
    operators, which the importer refuses by name)."""
    verify_structure(data, name)
    model = _fast(schema_class("Model").GetRootAs(data, 0))
    notes: list[str] = []
    n_subgraphs = model.SubgraphsLength()
    if n_subgraphs == 0:
        raise TFLiteImportError(name, "the model has no subgraph")
    graphs = [_read_subgraph(model, k, data, name, notes) for k in range(n_subgraphs)]
    tensors, operators = graphs[0].tensors, graphs[0].operators
    inputs, outputs = graphs[0].inputs, graphs[0].outputs
    initialisers = {
        int(op.options.InitSubgraphIndex())
        for op in operators
        if op.opcode == "CALL_ONCE" and op.options is not None
    }
    others = [k for k in range(1, n_subgraphs) if k not in initialisers]
    if others:
        notes.append(
            f"the model has {n_subgraphs} subgraphs; subgraph 0 is compiled (TFLite "
            "Micro runs the others only from control-flow operators such as IF and "
            "WHILE, or CALL_ONCE)"
        )
    description = model.Description()
    return Model(
        name=name,
        description=description.decode("utf-8", "replace") if description else "",
        tensors=tensors,
        operators=operators,
        inputs=inputs,
        outputs=outputs,
        warnings=tuple(f"{name}: warning: {note}" for note in notes)
        + _name_warnings(name, tensors, inputs, outputs)
        + _dynamic_warnings(name, tensors, inputs, outputs),
        subgraphs=tuple(graphs[1:]),
    )


def _read_subgraph(
    model: Any, k: int, data: bytes, name: str, notes: list[str]
) -> Subgraph:
    graph = _fast(model.Subgraphs(k))
    if graph is None:
        raise TFLiteImportError(name, f"damaged model: subgraph {k} is missing")
    prefix = f"subgraph {k}, " if k else ""
    n_tensors = graph.TensorsLength()
    n_buffers = model.BuffersLength()
    tensors = tuple(
        _read_tensor(
            model, _fast(graph.Tensors(i)), i, data, name, n_buffers, notes, prefix
        )
        for i in range(n_tensors)
    )
    operators = tuple(
        _read_operator(model, _fast(graph.Operators(i)), i, name, n_tensors, notes, k)
        for i in range(graph.OperatorsLength())
    )
    inputs = _ints(graph.InputsAsNumpy() if graph.InputsLength() else ())
    outputs = _ints(graph.OutputsAsNumpy() if graph.OutputsLength() else ())
    for what, indices in (("input", inputs), ("output", outputs)):
        for i, index in enumerate(indices):
            if not 0 <= index < n_tensors:
                owner = f"subgraph {k}" if k else "model"
                raise TFLiteImportError(
                    name,
                    f"{owner} {what} {i} refers to tensor {index}; the subgraph has "
                    f"{n_tensors} tensors (0..{n_tensors - 1})",
                )
    _check_producers(name, tensors, operators, inputs, prefix)
    return Subgraph(k, tensors, operators, inputs, outputs)


@contextmanager
def damaged_model_errors(path: str | Path) -> Iterator[None]:
    """The last line of defence of the command-line tools: an unexpected
    exception while reading or importing ``path`` (a check the reader and the
    converters lack) becomes ``<model>: error: damaged or unsupported model
    (<detail>)`` instead of a traceback."""
    try:
        yield
    except LocatedError:
        raise
    except Exception as e:  # noqa: BLE001 -- see the docstring
        raise TFLiteImportError(
            Path(path).name,
            f"damaged or unsupported model ({type(e).__name__}: {e})",
        ) from e


def read_model_file(path: str | Path) -> Model:
    p = Path(path)
    try:
        data = p.read_bytes()
    except OSError as e:
        raise TFLiteImportError(
            str(path), f"cannot read the file: {e.strerror}"
        ) from None
    return read_model(data, p.name)


def _ints(values: Any) -> tuple[int, ...]:
    """Python ints of a flatbuffer vector (a numpy array of integers, or
    ``()``), converted by numpy (``tolist``: per-channel zero points are
    one per channel of every quantized tensor)."""
    if isinstance(values, np.ndarray):
        return tuple(values.astype(np.int64, copy=False).tolist())
    return tuple(int(v) for v in values)


MAX_TENSOR_ELEMENTS = (1 << 31) - 1
"""A larger tensor cannot be indexed by the generated C (int32 loops)."""


def _read_tensor(
    model: Any,
    t: Any,
    index: int,
    data: bytes,
    name: str,
    n_buffers: int,
    notes: list[str],
    prefix: str = "",
) -> Tensor:
    """Tensor ``index``. A ``shape_signature`` that does not fit the shape is
    dropped with a note in ``notes`` (TFLite Micro reads only the shape); a
    sparse constant is densified (``tflite_sparsity``)."""
    raw = t.Name()
    tensor_name = raw.decode("utf-8", "replace") if raw else ""
    where = prefix + f"tensor {index}" + (f" '{tensor_name}'" if tensor_name else "")
    type_name = _TENSOR_TYPE_NAMES.get(t.Type(), f"type {t.Type()}")
    shape = _ints(t.ShapeAsNumpy()) if t.ShapeLength() else ()
    signature = _ints(t.ShapeSignatureAsNumpy()) if t.ShapeSignatureLength() else None
    if any(d < 0 for d in shape):
        raise TFLiteImportError(
            name, f"{where}: shape {list(shape)} has a negative dimension"
        )
    if math.prod(shape) > MAX_TENSOR_ELEMENTS:
        raise TFLiteImportError(
            name,
            f"{where}: shape {list(shape)} has {math.prod(shape)} elements; at most "
            f"{MAX_TENSOR_ELEMENTS} are supported",
        )
    if signature is not None and (
        len(signature) != len(shape)
        or any(s != d and s != -1 for s, d in zip(signature, shape, strict=True))
    ):
        notes.append(
            f"{where}: shape_signature {list(signature)} does not match shape "
            f"{list(shape)}; ignored (TFLite Micro reads the shape)"
        )
        signature = None
    buffer_index = int(t.Buffer())
    if buffer_index >= n_buffers and not (buffer_index == 0 and n_buffers == 0):
        raise TFLiteImportError(
            name,
            f"{where}: buffer index {buffer_index} is out of range (the model has "
            f"{n_buffers} buffers)",
        )
    sparsity = t.Sparsity()
    if sparsity is not None:
        values = _read_buffer(
            model, buffer_index, type_name, None, data, name, where, notes
        )
        dense = (
            None if values is None else _densify(values, shape, sparsity, name, where)
        )
    else:
        dense = _read_buffer(
            model, buffer_index, type_name, shape, data, name, where, notes
        )
    return Tensor(
        index=index,
        name=tensor_name or f"tensor_{index}",
        type_name=type_name,
        shape=shape,
        shape_signature=signature,
        quantization=_read_quantization(
            _fast(t.Quantization()), type_name, name, where
        ),
        data=dense,
        is_variable=bool(t.IsVariable()),
        sparse=sparsity is not None,
    )


def _densify(
    values: npt.NDArray[Any],
    shape: tuple[int, ...],
    sparsity: Any,
    name: str,
    where: str,
) -> npt.NDArray[Any]:
    """The dense constant of a sparse tensor (TFLite's ``DENSIFY`` done while
    reading: every operator sees the dense tensor)."""
    from usmp.frontend.tflite_sparsity import densify, read_sparsity

    try:
        return densify(values, shape, read_sparsity(sparsity))
    except ValueError as e:
        raise TFLiteImportError(
            name, f"{where}: sparse constant of shape {list(shape)}: {e}"
        ) from None


_ZERO_POINT_RANGES = MappingProxyType(
    {"INT8": (-128, 127), "UINT8": (0, 255), "INT16": (-32768, 32767)}
)
_INT32_RANGE = (-(1 << 31), (1 << 31) - 1)


def _read_quantization(
    q: Any, type_name: str, name: str, where: str
) -> Quantization | None:
    """The tensor's quantisation as TFLite Micro reads it
    (``micro_allocator.cc``): present only when the file holds scales *and*
    zero points; a zero-point vector of another length than the scales (one
    value: TFLite Micro's short form for weights) gives every channel its
    first zero point. ``quantized_dimension`` is kept as stored and not
    checked here: TFLite Micro reads it only where a kernel uses per-channel
    scales (the weights of the convolutions and FULLY_CONNECTED), and ignores
    it elsewhere (``person_detect.tflite``'s 1-d biases say dimension 3), so
    the converters that use per-channel scales check it. Scales are not
    checked either (TFLite Micro loads 0, negative, NaN and infinite ones):
    an operator that computes with a scale refuses it where TFLite Micro's
    result is undefined (``quantization.ScaleError``)."""
    if q is None or q.ScaleLength() == 0 or q.ZeroPointLength() == 0:
        return None
    # every NaN is the one ``math.nan`` object, so that equal quantisations
    # compare equal (tuples compare identical elements as equal)
    stored = q.ScaleAsNumpy()
    scales = tuple(stored.astype(np.float64).tolist())  # float32 -> float: exact
    if np.isnan(stored).any():
        scales = tuple(math.nan if s != s else s for s in scales)
    zps = _ints(q.ZeroPointAsNumpy())
    if len(zps) != len(scales):
        zps = (zps[0],) * len(scales)
    axis = int(q.QuantizedDimension())
    lo, hi = _ZERO_POINT_RANGES.get(type_name, _INT32_RANGE)
    if zps and not lo <= min(zps) <= max(zps) <= hi:
        raise TFLiteImportError(
            name,
            f"{where}: zero points {_summary(zps)} out of range for {type_name} "
            f"(expected {lo}..{hi})",
        )
    return Quantization(scales=scales, zero_points=zps, axis=axis)


def _summary(values: tuple[float, ...] | tuple[int, ...]) -> str:
    shown = ", ".join(repr(v) for v in values[:4])
    return f"[{shown}{', ...' if len(values) > 4 else ''}]"


def _read_buffer(
    model: Any,
    buffer_index: int,
    type_name: str,
    shape: tuple[int, ...] | None,
    data: bytes,
    name: str,
    where: str,
    notes: list[str],
) -> npt.NDArray[Any] | None:
    """The constant contents of a tensor: its shape's worth of bytes from the
    start of its buffer (a larger buffer is noted in ``notes``: TFLite Micro
    reads just those bytes), ``None`` for an activation; ``shape=None``: the
    whole buffer as a vector (the stored values of a sparse tensor)."""
    if buffer_index == 0:
        return None  # buffer 0 is the empty sentinel: an activation
    buf = _fast(model.Buffers(buffer_index))
    offset, size = int(buf.Offset()), int(buf.Size())
    if offset > 1:  # large models keep buffers after the flatbuffer
        if offset + size > len(data):
            raise TFLiteImportError(
                name,
                f"{where}: buffer {buffer_index} holds bytes {offset}..{offset + size} "
                f"but the file has {len(data)} bytes (truncated?)",
            )
        raw: bytes | npt.NDArray[Any] = data[offset : offset + size]
    elif buf.DataLength() > 0:
        raw = buf.DataAsNumpy()
    else:
        return None
    dtype = _NUMPY_DTYPES.get(type_name)
    if dtype is None:
        raise TFLiteImportError(
            name, f"{where}: constant tensor has unsupported type {type_name}"
        )
    nbytes = len(raw)
    if shape is None:
        if nbytes % dtype.itemsize:
            raise TFLiteImportError(
                name,
                f"{where}: buffer {buffer_index} holds {nbytes} bytes, not a whole "
                f"number of {type_name} values",
            )
        return np.frombuffer(bytes(raw), dtype=dtype)
    count = math.prod(shape)
    needed = count * dtype.itemsize
    if nbytes < needed:
        raise TFLiteImportError(
            name,
            f"{where}: buffer {buffer_index} holds {nbytes} bytes but shape "
            f"{list(shape)} of {type_name} needs {needed}",
        )
    if nbytes > needed:
        notes.append(
            f"{where}: buffer {buffer_index} holds {nbytes} bytes, shape "
            f"{list(shape)} of {type_name} needs {needed}; the first {needed} are "
            "the tensor (as TFLite Micro reads them)"
        )
    return np.frombuffer(bytes(raw[:needed]), dtype=dtype).reshape(shape)


def _read_operator(
    model: Any,
    op: Any,
    index: int,
    name: str,
    n_tensors: int,
    notes: list[str],
    subgraph: int = 0,
) -> Operator:
    n_codes = model.OperatorCodesLength()
    code_index = int(op.OpcodeIndex())
    if code_index >= n_codes:
        raise TFLiteImportError(
            name,
            f"operator {index}: opcode index {code_index} is out of range (the model "
            f"has {n_codes} operator codes)",
        )
    code = _fast(model.OperatorCodes(code_index))
    # BuiltinCode() superseded DeprecatedBuiltinCode() (int8) at 127 ops; the
    # larger of the two is the real code for files written by either schema.
    opcode_value = max(int(code.BuiltinCode()), int(code.DeprecatedBuiltinCode()))
    opcode = _OPCODE_NAMES.get(opcode_value, f"BUILTIN_{opcode_value}")
    custom = code.CustomCode()
    custom_code = custom.decode("utf-8", "replace") if custom else None
    display = f"CUSTOM '{custom_code}'" if opcode == "CUSTOM" else opcode
    where = (
        f"subgraph {subgraph}, " if subgraph else ""
    ) + f"operator {index} ({display})"
    inputs = _ints(op.InputsAsNumpy()) if op.InputsLength() else ()
    outputs = _ints(op.OutputsAsNumpy()) if op.OutputsLength() else ()
    intermediates = _ints(op.IntermediatesAsNumpy()) if op.IntermediatesLength() else ()
    for what, indices, lowest in (
        ("input", inputs, -1),
        ("output", outputs, 0),
        ("intermediate", intermediates, 0),
    ):
        for k, t in enumerate(indices):
            if not lowest <= t < n_tensors:
                omitted = " or -1 for an omitted input" if lowest < 0 else ""
                raise TFLiteImportError(
                    name,
                    f"{where}: {what} {k} refers to tensor {t}; the subgraph has "
                    f"{n_tensors} tensors (expected 0..{n_tensors - 1}{omitted})",
                )
    return Operator(
        index=index,
        opcode=opcode,
        custom_code=custom_code,
        version=int(code.Version()),
        inputs=inputs,
        outputs=outputs,
        options=_read_options(op, opcode, where, notes),
        intermediates=intermediates,
        subgraph=subgraph,
        custom_options=(
            op.CustomOptionsAsNumpy().tobytes()
            if opcode == "CUSTOM" and op.CustomOptionsLength()
            else b""
        ),
    )


_OPTIONS_OF_OPCODE = MappingProxyType(
    {
        "AVERAGE_POOL_2D": "Pool2DOptions",
        "MAX_POOL_2D": "Pool2DOptions",
        "L2_POOL_2D": "Pool2DOptions",
        "MAXIMUM": "MaximumMinimumOptions",
        "MINIMUM": "MaximumMinimumOptions",
        "MEAN": "ReducerOptions",
        "SUM": "ReducerOptions",
        "REDUCE_MAX": "ReducerOptions",
        "REDUCE_MIN": "ReducerOptions",
        "REDUCE_PROD": "ReducerOptions",
        "REDUCE_ANY": "ReducerOptions",
    }
)
_OPTIONS_BY_KEY = MappingProxyType(
    {k.replace("_", "").lower(): k for k in _OPTIONS_NAMES.values()}
)


def expected_options(opcode: str) -> str | None:
    """The ``BuiltinOptions`` table a builtin operator carries (schema naming:
    ``CONV_2D`` -> ``Conv2DOptions``), ``None`` if it has none."""
    if opcode in _OPTIONS_OF_OPCODE:
        return _OPTIONS_OF_OPCODE[opcode]
    return _OPTIONS_BY_KEY.get(opcode.replace("_", "").lower() + "options")


def _empty_table() -> tuple[bytes, int]:
    """A flatbuffer holding one table with no fields (every accessor returns
    the schema's default) and its position."""
    builder = flatbuffers.Builder(0)
    builder.StartObject(0)
    builder.Finish(builder.EndObject())
    data = bytes(builder.Output())
    return data, int.from_bytes(data[:4], "little")


def _read_options(op: Any, opcode: str, where: str, notes: list[str]) -> Any:
    """The operator's builtin options, of the kind its opcode expects; a
    missing table reads as the schema's defaults, and so does a table of
    another kind (noted in ``notes``), as TFLite Micro's parsers read it
    (``builtin_options_as_<Kind>()`` is null)."""
    expected = expected_options(opcode)
    if expected is None:
        return None
    kind = int(op.BuiltinOptionsType())
    table = op.BuiltinOptions()
    options = schema_class(expected)()
    if kind != _NO_OPTIONS and table is not None:
        if _OPTIONS_NAMES.get(kind) == expected:
            options.Init(table.Bytes, table.Pos)
            return options
        found = _OPTIONS_NAMES.get(kind, f"options type {kind}")
        notes.append(
            f"{where}: builtin options are {found}, not {expected}; the defaults "
            f"of {expected} are used (as TFLite Micro reads them)"
        )
    options.Init(*_empty_table())
    return options


def _check_producers(
    name: str,
    tensors: tuple[Tensor, ...],
    operators: tuple[Operator, ...],
    inputs: tuple[int, ...],
    prefix: str = "",
) -> None:
    """Every tensor is written at most once: by one operator, and never a
    model input or a constant (``prefix`` names the subgraph)."""
    producer: dict[int, int] = {}
    for op in operators:
        for t in op.outputs:
            tensor = tensors[t]
            written = (
                f"operator {producer[t]}"
                if t in producer
                else "the model input"
                if t in inputs
                else "a constant"
                if tensor.data is not None
                else None
            )
            if written is not None and not tensor.is_variable:
                raise TFLiteImportError(
                    name,
                    f"{prefix}operator {op.index} ({op.display_name}): output "
                    f"tensor {t} "
                    f"'{tensor.name}' is already {written}; every tensor has one "
                    "producer",
                )
            producer[t] = op.index


def _name_warnings(
    name: str,
    tensors: tuple[Tensor, ...],
    inputs: tuple[int, ...],
    outputs: tuple[int, ...],
) -> tuple[str, ...]:
    return tuple(
        f"{name}: warning: model {what} tensor {index} has no name; it is called "
        f"'{tensors[index].name}'"
        for what, indices in (("input", inputs), ("output", outputs))
        for index in indices
        if tensors[index].name == f"tensor_{index}"
    )


def _dynamic_warnings(
    name: str,
    tensors: tuple[Tensor, ...],
    inputs: tuple[int, ...],
    outputs: tuple[int, ...],
) -> tuple[str, ...]:
    """A model input or output whose ``shape_signature`` marks a dimension
    after the first (the batch) dynamic: TFLite Micro runs the stored shape,
    and so does the compiled model."""
    seen: set[int] = set()
    found: list[str] = []
    for index in (*inputs, *outputs):
        t = tensors[index]
        signature = t.shape_signature
        if index in seen or signature is None or all(d >= 0 for d in signature[1:]):
            continue
        seen.add(index)
        found.append(
            f"{name}: warning: tensor '{t.name}' has a dynamic dimension "
            f"({list(signature)}); compiled at its stored shape {list(t.shape)}, "
            "as TFLite Micro runs it"
        )
    return tuple(found)
