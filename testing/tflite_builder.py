"""A builder of small single-subgraph ``.tflite`` files (the flatbuffer object
API of the ``tflite`` package), for tests and benchmarks that need models
nobody shipped: ``ModelBuilder().tensor(...)``, ``.op(OPCODE, inputs,
outputs, (OptionsTable, {Field: value}))``, ``.build(inputs, outputs)``."""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Any

import flatbuffers
import numpy as np
from tflite.BuiltinOperator import BuiltinOperator
from tflite.BuiltinOptions import BuiltinOptions

_TYPES = {"float32": 0, "int16": 7, "int32": 2, "int64": 4, "int8": 9, "uint8": 3}


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
    ) -> int:
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
        return T.TensorEnd(b)

    @staticmethod
    def _operator(b: Any, op: dict[str, Any], ints: Any) -> int:
        options = None
        if op["options"] is not None:
            kind, fields = op["options"]
            module = _table(kind)
            # vector fields (a list, e.g. SqueezeDims) are written before the table
            fields = {
                k: ints(v) if isinstance(v, list) else v for k, v in fields.items()
            }
            getattr(module, f"{kind}Start")(b)
            for key, value in fields.items():
                getattr(module, f"{kind}Add{key}")(b, value)
            options = (getattr(BuiltinOptions, kind), getattr(module, f"{kind}End")(b))
        inputs, outputs = ints(op["inputs"]), ints(op["outputs"])
        Op = _table("Operator")
        Op.OperatorStart(b)
        Op.OperatorAddOpcodeIndex(b, op["opcode"])
        Op.OperatorAddInputs(b, inputs)
        Op.OperatorAddOutputs(b, outputs)
        if options is not None:
            Op.OperatorAddBuiltinOptionsType(b, options[0])
            Op.OperatorAddBuiltinOptions(b, options[1])
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
