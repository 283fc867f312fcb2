"""Operators on constants folded before conversion: the weight formats
TFLite Micro refuses but converters write.

``fold_weights(model)`` returns the model with every ``DEQUANTIZE`` of a
``FLOAT16`` constant into ``FLOAT32`` and every ``DENSIFY`` of a constant
(the reader already densified the sparse tensor, ``tflite_sparsity``)
replaced by its output tensor holding the folded value, and those operators
left out (the others keep their indices, so diagnostics still name the
file's operators). float16 -> float32 is exact (numpy's conversion, as
LiteRT's ``DEQUANTIZE``); densifying only places the stored values. A
``DEQUANTIZE`` of a float16 activation, or a ``DENSIFY`` of one, stays for
its converter to refuse by name.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from usmp.frontend.tflite_reader import Model, Operator, Tensor

__all__ = ["fold_weights"]


def _folded(model: Model, op: Operator, tensors: list[Tensor]) -> Tensor | None:
    """The output tensor of ``op`` with its folded value, or ``None`` if
    ``op`` is not a foldable operator on a constant."""
    if op.opcode not in ("DEQUANTIZE", "DENSIFY") or len(op.outputs) != 1:
        return None
    if not op.inputs or op.inputs[0] < 0:
        return None
    x, out = tensors[op.inputs[0]], tensors[op.outputs[0]]
    if x.data is None:
        return None
    if op.opcode == "DEQUANTIZE":
        if (x.type_name, out.type_name) != ("FLOAT16", "FLOAT32"):
            return None
        value = x.data.astype(np.float32)
    else:
        if x.type_name != out.type_name:
            raise model.op_error(
                op,
                f"output '{out.name}' is {out.type_name}, the input {x.type_name}; "
                "DENSIFY keeps the type",
            )
        value = x.data
    if tuple(value.shape) != out.shape:
        raise model.op_error(
            op,
            f"output '{out.name}' has shape {list(out.shape)}, the constant "
            f"'{x.name}' {list(value.shape)}",
        )
    value.setflags(write=False)
    return replace(out, data=value)


def fold_weights(model: Model) -> Model:
    """``model`` with its float16 and sparse weights folded (see the module)."""
    tensors = list(model.tensors)
    kept: list[Operator] = []
    for op in model.operators:
        folded = _folded(model, op, tensors)
        if folded is None:
            kept.append(op)
        else:
            tensors[folded.index] = folded
    if len(kept) == len(model.operators):
        return model
    return replace(model, tensors=tuple(tensors), operators=tuple(kept))
