"""A builder of small ``.tflite`` files (the flatbuffer object API of the
``tflite`` package), for tests and benchmarks that need models nobody
shipped: ``ModelBuilder().tensor(...)``, ``.op(OPCODE, inputs, outputs,
(OptionsTable, {Field: value}))``, ``.build(inputs, outputs)``. Option
fields may be ints, lists (vectors) or strings. ``.subgraph()`` starts
another subgraph (e.g. the init subgraph of ``CALL_ONCE``); a tensor may be
stored sparse (``Sparse``)."""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Any

import flatbuffers
import numpy as np
from tflite.BuiltinOperator import BuiltinOperator
from tflite.BuiltinOptions import BuiltinOptions

_TYPES = {
    "float32": 0,
    "float16": 1,
    "int16": 7,
    "int32": 2,
    "int64": 4,
    "int8": 9,
    "uint8": 3,
    "resource": 13,
}
_INDEX_VECTORS = {"int32": 1, "uint16": 2, "uint8": 3}


@dataclass(frozen=True)
class Sparse:
    """TFLite sparsity metadata of a constant: ``dims`` in traversal order,
    each ``("dense", size)`` or ``("csr", segments, indices, vector_type)``
    (``vector_type``: ``int32``, ``uint16`` or ``uint8``)."""

    traversal_order: list[int]
    dims: list[tuple[Any, ...]]
    block_map: list[int] | None = None


def _table(name: str) -> Any:
    return importlib.import_module(f"tflite.{name}")


@dataclass
class ModelBuilder:
    """A single-subgraph .tflite model, written with the flatbuffer builder."""

    tensors: list[dict[str, Any]] = field(default_factory=list)
    buffers: list[bytes] = field(default_factory=lambda: [b""])
    operators: list[dict[str, Any]] = field(default_factory=list)
    opcodes: list[tuple[str, str | None]] = field(default_factory=list)
    extra_subgraph: bool = False
    more: list[ModelBuilder] = field(default_factory=list["ModelBuilder"])
    """Subgraphs 1, 2, ... (``subgraph()``)."""
    io: tuple[list[int], list[int]] = ([], [])
    """Inputs and outputs of a subgraph made by ``subgraph()``."""

    def subgraph(self) -> ModelBuilder:
        """A builder of the next subgraph (index ``len(self.more)`` after the
        call), sharing this model's buffers and operator codes."""
        sub = ModelBuilder(buffers=self.buffers, opcodes=self.opcodes)
        self.more.append(sub)
        return sub

    def tensor(
        self,
        shape: tuple[int, ...],
        dtype: str,
        data: np.ndarray | None = None,
        scale: float | list[float] | None = None,
        zero_point: int | list[int] = 0,
        axis: int = 0,
        signature: tuple[int, ...] | None = None,
        variable: bool = False,
        sparse: Sparse | None = None,
    ) -> int:
        """A tensor; with ``sparse``, ``data`` holds the stored values only."""
        buffer = 0
        if data is not None:
            self.buffers.append(np.ascontiguousarray(data, dtype=dtype).tobytes())
            buffer = len(self.buffers) - 1
        scales = None if scale is None else np.atleast_1d(np.asarray(scale, np.float32))
        zps = (
            None
            if scale is None
            else np.broadcast_to(
                np.asarray(zero_point, np.int64),
                scales.shape,  # type: ignore[union-attr]
            )
        )
        self.tensors.append(
            dict(
                shape=shape,
                dtype=dtype,
                buffer=buffer,
                scales=scales,
                zps=zps,
                axis=axis,
                signature=signature,
                variable=variable,
                sparse=sparse,
                name=f"t{len(self.tensors)}",
            )
        )
        return len(self.tensors) - 1

    def op(
        self,
        opcode: str,
        inputs: list[int],
        outputs: list[int],
        options: tuple[str, dict[str, Any]] | None = None,
        custom: str | None = None,
        custom_options: bytes = b"",
    ) -> None:
        key = (opcode, custom)
        if key not in self.opcodes:
            self.opcodes.append(key)
        self.operators.append(
            dict(
                opcode=self.opcodes.index(key),
                inputs=inputs,
                outputs=outputs,
                options=options,
                custom_options=custom_options,
            )
        )

    def build(self, inputs: list[int], outputs: list[int]) -> bytes:
        b = flatbuffers.Builder(1024)

        def ints(values: Any, dtype: Any = np.int32) -> int:
            return b.CreateNumpyVector(np.asarray(values, dtype=dtype))

        def offsets(start: Any, items: list[int]) -> int:
            start(b, len(items))
            for item in reversed(items):
                b.PrependUOffsetTRelative(item)
            return b.EndVector()

        buffer_offsets = []
        for data in self.buffers:
            vec = None
            if data:  # 16-byte aligned, written in one slice
                b.StartVector(1, len(data), 16)
                b.head -= len(data)
                b.Bytes[b.head : b.head + len(data)] = data
                vec = b.EndVector()
            _table("Buffer").BufferStart(b)
            if vec is not None:
                _table("Buffer").BufferAddData(b, vec)
            buffer_offsets.append(_table("Buffer").BufferEnd(b))
        tensor_offsets = [self._tensor(b, t, ints) for t in self.tensors]
        operator_offsets = [self._operator(b, op, ints) for op in self.operators]
        subgraph = self._subgraph(
            b, tensor_offsets, operator_offsets, inputs, outputs, ints, offsets
        )
        subgraphs = [subgraph]
        for sub in self.more:
            tensors = [self._tensor(b, t, ints) for t in sub.tensors]
            operators = [self._operator(b, op, ints) for op in sub.operators]
            subgraphs.append(
                self._subgraph(b, tensors, operators, *sub.io, ints, offsets)
            )
        if self.extra_subgraph:
            subgraphs.append(self._subgraph(b, [], [], [], [], ints, offsets))
        code_offsets = []
        for opcode, custom in self.opcodes:
            name = b.CreateString(custom) if custom else None
            value = getattr(BuiltinOperator, opcode)
            _table("OperatorCode").OperatorCodeStart(b)
            _table("OperatorCode").OperatorCodeAddDeprecatedBuiltinCode(
                b, min(value, 127)
            )
            _table("OperatorCode").OperatorCodeAddBuiltinCode(b, value)
            _table("OperatorCode").OperatorCodeAddVersion(b, 1)
            if name is not None:
                _table("OperatorCode").OperatorCodeAddCustomCode(b, name)
            code_offsets.append(_table("OperatorCode").OperatorCodeEnd(b))
        codes = offsets(_table("Model").ModelStartOperatorCodesVector, code_offsets)
        graphs = offsets(_table("Model").ModelStartSubgraphsVector, subgraphs)
        buffers = offsets(_table("Model").ModelStartBuffersVector, buffer_offsets)
        description = b.CreateString("usmp-opt test model")
        _table("Model").ModelStart(b)
        _table("Model").ModelAddVersion(b, 3)
        _table("Model").ModelAddOperatorCodes(b, codes)
        _table("Model").ModelAddSubgraphs(b, graphs)
        _table("Model").ModelAddDescription(b, description)
        _table("Model").ModelAddBuffers(b, buffers)
        b.Finish(_table("Model").ModelEnd(b), file_identifier=b"TFL3")
        return bytes(b.Output())

    @staticmethod
    def _tensor(b: Any, t: dict[str, Any], ints: Any) -> int:
        name = b.CreateString(t["name"])
        shape = ints(t["shape"])
        signature = ints(t["signature"]) if t["signature"] is not None else None
        quant = None
        if t["scales"] is not None:
            scales = b.CreateNumpyVector(t["scales"])
            zps = b.CreateNumpyVector(np.asarray(t["zps"], np.int64))
            Q = _table("QuantizationParameters")
            Q.QuantizationParametersStart(b)
            Q.QuantizationParametersAddScale(b, scales)
            Q.QuantizationParametersAddZeroPoint(b, zps)
            Q.QuantizationParametersAddQuantizedDimension(b, t["axis"])
            quant = Q.QuantizationParametersEnd(b)
        sparsity = _sparsity(b, t["sparse"], ints) if t["sparse"] else None
        T = _table("Tensor")
        T.TensorStart(b)
        T.TensorAddShape(b, shape)
        if signature is not None:
            T.TensorAddShapeSignature(b, signature)
        T.TensorAddType(b, _TYPES[t["dtype"]])
        T.TensorAddBuffer(b, t["buffer"])
        T.TensorAddName(b, name)
        if quant is not None:
            T.TensorAddQuantization(b, quant)
        if t["variable"]:
            T.TensorAddIsVariable(b, True)
        if sparsity is not None:
            T.TensorAddSparsity(b, sparsity)
        return T.TensorEnd(b)

    @staticmethod
    def _operator(b: Any, op: dict[str, Any], ints: Any) -> int:
        options = None
        if op["options"] is not None:
            kind, fields = op["options"]
            module = _table(kind)
            # vector fields (a list, e.g. SqueezeDims) are written before the table
            fields = {
                k: ints(v)
                if isinstance(v, list)
                else b.CreateString(v)
                if isinstance(v, str)
                else v
                for k, v in fields.items()
            }
            getattr(module, f"{kind}Start")(b)
            for key, value in fields.items():
                getattr(module, f"{kind}Add{key}")(b, value)
            options = (getattr(BuiltinOptions, kind), getattr(module, f"{kind}End")(b))
        inputs, outputs = ints(op["inputs"]), ints(op["outputs"])
        custom = op.get("custom_options", b"")
        custom_vec = ints(list(custom), np.uint8) if custom else None
        Op = _table("Operator")
        Op.OperatorStart(b)
        Op.OperatorAddOpcodeIndex(b, op["opcode"])
        Op.OperatorAddInputs(b, inputs)
        Op.OperatorAddOutputs(b, outputs)
        if options is not None:
            Op.OperatorAddBuiltinOptionsType(b, options[0])
            Op.OperatorAddBuiltinOptions(b, options[1])
        if custom_vec is not None:
            Op.OperatorAddCustomOptions(b, custom_vec)
        return Op.OperatorEnd(b)

    @staticmethod
    def _subgraph(
        b: Any,
        tensors: list[int],
        operators: list[int],
        inputs: list[int],
        outputs: list[int],
        ints: Any,
        offsets: Any,
    ) -> int:
        S = _table("SubGraph")
        t = offsets(S.SubGraphStartTensorsVector, tensors)
        o = offsets(S.SubGraphStartOperatorsVector, operators)
        i, out = ints(inputs), ints(outputs)
        S.SubGraphStart(b)
        S.SubGraphAddTensors(b, t)
        S.SubGraphAddInputs(b, i)
        S.SubGraphAddOutputs(b, out)
        S.SubGraphAddOperators(b, o)
        return S.SubGraphEnd(b)


def _sparsity(b: Any, sparse: Sparse, ints: Any) -> int:
    """The ``SparsityParameters`` table of ``sparse``."""
    D = _table("DimensionMetadata")
    dims: list[int] = []
    for dim in sparse.dims:
        if dim[0] == "dense":
            D.DimensionMetadataStart(b)
            D.DimensionMetadataAddFormat(b, 0)
            D.DimensionMetadataAddDenseSize(b, dim[1])
            dims.append(D.DimensionMetadataEnd(b))
            continue
        _, segments, indices, kind = dim
        vector = _table(f"{kind.capitalize()}Vector")
        name = f"{kind.capitalize()}Vector"
        tables = []
        for values in (segments, indices):
            data = ints(values, np.dtype(kind))
            getattr(vector, f"{name}Start")(b)
            getattr(vector, f"{name}AddValues")(b, data)
            tables.append(getattr(vector, f"{name}End")(b))
        D.DimensionMetadataStart(b)
        D.DimensionMetadataAddFormat(b, 1)
        D.DimensionMetadataAddArraySegmentsType(b, _INDEX_VECTORS[kind])
        D.DimensionMetadataAddArraySegments(b, tables[0])
        D.DimensionMetadataAddArrayIndicesType(b, _INDEX_VECTORS[kind])
        D.DimensionMetadataAddArrayIndices(b, tables[1])
        dims.append(D.DimensionMetadataEnd(b))
    S = _table("SparsityParameters")
    order = ints(sparse.traversal_order)
    block_map = ints(sparse.block_map) if sparse.block_map else None
    S.SparsityParametersStartDimMetadataVector(b, len(dims))
    for d in reversed(dims):
        b.PrependUOffsetTRelative(d)
    dim_vector = b.EndVector()
    S.SparsityParametersStart(b)
    S.SparsityParametersAddTraversalOrder(b, order)
    if block_map is not None:
        S.SparsityParametersAddBlockMap(b, block_map)
    S.SparsityParametersAddDimMetadata(b, dim_vector)
    return S.SparsityParametersEnd(b)
