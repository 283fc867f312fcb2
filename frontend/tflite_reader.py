"""A typed, read-only view of a ``.tflite`` flatbuffer (subgraph 0).

Built on the maintained ``tflite`` PyPI package (the generated flatbuffer
accessors). The rest of the importer sees only the frozen dataclasses below:
tensors with their numpy dtype, shape, quantisation and constant data;
operators with their opcode name, inputs/outputs and builtin options (the
``tflite.*Options`` table, already initialised).

Errors in the file (bad flatbuffer, several subgraphs, unknown tensor type)
are ``TFLiteImportError``: a located diagnostic naming the model file.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

import numpy as np
import numpy.typing as npt
import tflite
from tflite.BuiltinOperator import BuiltinOperator
from tflite.BuiltinOptions import BuiltinOptions

from usmp.diagnostics import LocatedError


class TFLiteImportError(LocatedError):
    """The model cannot be imported; ``str()`` is ``<model>: error: <why>``."""


def _enum_names(cls: type) -> MappingProxyType[int, str]:
    return MappingProxyType(
        {
            v: k
            for k, v in vars(cls).items()
            if not k.startswith("_") and isinstance(v, int)
        }
    )


_OPCODE_NAMES = _enum_names(BuiltinOperator)
_OPTIONS_NAMES = _enum_names(BuiltinOptions)
_TENSOR_TYPE_NAMES = _enum_names(tflite.TensorType)

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


@dataclass(frozen=True)
class Quantization:
    """Affine quantisation of a tensor: ``real = scale * (q - zero_point)``.

    ``scales``/``zero_points`` hold one value (per tensor) or one per index of
    dimension ``axis`` (per channel). Scales are float32 values.
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

    @property
    def display_name(self) -> str:
        if self.opcode == "CUSTOM":
            return f"CUSTOM '{self.custom_code}'"
        return self.opcode


@dataclass(frozen=True)
class Model:
    name: str
    """File name used in diagnostics and locations."""
    description: str
    tensors: tuple[Tensor, ...]
    operators: tuple[Operator, ...]
    inputs: tuple[int, ...]
    outputs: tuple[int, ...]

    def error(self, message: str) -> TFLiteImportError:
        return TFLiteImportError(self.name, message)

    def op_error(self, op: Operator, message: str) -> TFLiteImportError:
        return TFLiteImportError(
            self.name, f"operator {op.index} ({op.display_name}): {message}"
        )


def read_model(data: bytes, name: str = "model.tflite") -> Model:
    """Parse a ``.tflite`` flatbuffer (its first and only subgraph)."""
    try:
        if len(data) < 8 or data[4:8] != b"TFL3":
            raise ValueError("not a TFLite flatbuffer (file identifier 'TFL3' missing)")
        model = tflite.Model.GetRootAs(data, 0)
        n_subgraphs = model.SubgraphsLength()
    except (ValueError, IndexError, TypeError) as e:
        raise TFLiteImportError(name, f"cannot read the model: {e}") from None
    if n_subgraphs != 1:
        raise TFLiteImportError(
            name,
            f"the model has {n_subgraphs} subgraphs; only single-subgraph models are "
            "supported (control flow such as WHILE/IF is not)",
        )
    graph = model.Subgraphs(0)
    if graph is None:
        raise TFLiteImportError(name, "cannot read the model: subgraph 0 is missing")
    tensors = tuple(
        _read_tensor(model, graph.Tensors(i), i, data, name)
        for i in range(graph.TensorsLength())
    )
    operators = tuple(
        _read_operator(model, graph.Operators(i), i)
        for i in range(graph.OperatorsLength())
    )
    description = model.Description()
    return Model(
        name=name,
        description=description.decode("utf-8", "replace") if description else "",
        tensors=tensors,
        operators=operators,
        inputs=_ints(graph.InputsAsNumpy() if graph.InputsLength() else ()),
        outputs=_ints(graph.OutputsAsNumpy() if graph.OutputsLength() else ()),
    )


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
    """Python ints of a flatbuffer vector (a numpy array, or ``()``)."""
    return tuple(int(v) for v in values)


def _read_tensor(model: Any, t: Any, index: int, data: bytes, name: str) -> Tensor:
    type_name = _TENSOR_TYPE_NAMES.get(t.Type(), f"type {t.Type()}")
    shape = _ints(t.ShapeAsNumpy()) if t.ShapeLength() else ()
    signature = _ints(t.ShapeSignatureAsNumpy()) if t.ShapeSignatureLength() else None
    raw = t.Name()
    tensor_name = raw.decode("utf-8", "replace") if raw else ""
    return Tensor(
        index=index,
        name=tensor_name,
        type_name=type_name,
        shape=shape,
        shape_signature=signature,
        quantization=_read_quantization(t.Quantization()),
        data=_read_buffer(model, t.Buffer(), type_name, shape, data, name, tensor_name),
        is_variable=bool(t.IsVariable()),
    )


def _read_quantization(q: Any) -> Quantization | None:
    if q is None or q.ScaleLength() == 0:
        return None
    scales = tuple(float(s) for s in q.ScaleAsNumpy())
    zps = _ints(q.ZeroPointAsNumpy()) if q.ZeroPointLength() else (0,) * len(scales)
    return Quantization(
        scales=scales, zero_points=zps, axis=int(q.QuantizedDimension())
    )


def _read_buffer(
    model: Any,
    buffer_index: int,
    type_name: str,
    shape: tuple[int, ...],
    data: bytes,
    name: str,
    tensor_name: str,
) -> npt.NDArray[Any] | None:
    if buffer_index <= 0 or buffer_index >= model.BuffersLength():
        return None  # buffer 0 is the empty sentinel: an activation
    buf = model.Buffers(buffer_index)
    offset, size = int(buf.Offset()), int(buf.Size())
    if offset > 1:  # large models keep buffers after the flatbuffer
        raw: bytes | npt.NDArray[Any] = data[offset : offset + size]
    elif buf.DataLength() > 0:
        raw = buf.DataAsNumpy()
    else:
        return None
    dtype = _NUMPY_DTYPES.get(type_name)
    if dtype is None:
        raise TFLiteImportError(
            name, f"constant tensor '{tensor_name}' has unsupported type {type_name}"
        )
    values = np.frombuffer(bytes(raw), dtype=dtype)
    count = int(np.prod(shape, dtype=np.int64)) if shape else 1
    if values.size != count:
        raise TFLiteImportError(
            name,
            f"constant tensor '{tensor_name}' holds {values.size} values but its shape "
            f"{list(shape)} needs {count}",
        )
    return values.reshape(shape)


def _read_operator(model: Any, op: Any, index: int) -> Operator:
    code = model.OperatorCodes(op.OpcodeIndex())
    # BuiltinCode() superseded DeprecatedBuiltinCode() (int8) at 127 ops; the
    # larger of the two is the real code for files written by either schema.
    opcode_value = max(int(code.BuiltinCode()), int(code.DeprecatedBuiltinCode()))
    opcode = _OPCODE_NAMES.get(opcode_value, f"BUILTIN_{opcode_value}")
    custom = code.CustomCode()
    return Operator(
        index=index,
        opcode=opcode,
        custom_code=custom.decode("utf-8", "replace") if custom else None,
        version=int(code.Version()),
        inputs=_ints(op.InputsAsNumpy()) if op.InputsLength() else (),
        outputs=_ints(op.OutputsAsNumpy()) if op.OutputsLength() else (),
        options=_read_options(op),
        intermediates=_ints(op.IntermediatesAsNumpy())
        if op.IntermediatesLength()
        else (),
    )


def _read_options(op: Any) -> Any:
    kind = op.BuiltinOptionsType()
    table = op.BuiltinOptions()
    if kind == BuiltinOptions.NONE or table is None:
        return None
    cls = getattr(tflite, _OPTIONS_NAMES.get(kind, ""), None)
    if cls is None:
        return None
    options = cls()
    options.Init(table.Bytes, table.Pos)
    return options
