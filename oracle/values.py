"""Conversions between xDSL attributes/types and numpy values.

* ``numpy_dtype(element_type)``: ``i8 -> int8``, ``i16 -> int16``,
  ``i32 -> int32``, ``i64 -> int64``, ``ui8 -> uint8`` (signless integers
  are signed, as in TFLite), ``i1 -> bool``, ``f16/f32/f64 -> float16/32/64``.
* ``dense_to_numpy(attr)``: a ``dense<...>`` attribute as an array of its
  type's shape and dtype (splats expanded).
* ``resource_blob_to_numpy(blob, type)``: an MLIR resource blob
  (``"0x" + 4-byte little-endian alignment + raw little-endian data``) as an
  array of ``type``.
* ``builtin_resource_blob(key)``: the blob xDSL's parser stored for
  ``dense_resource<key>`` (the ``{-# dialect_resources: {builtin: ...} #-}``
  section), or ``None``.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
from xdsl.dialect_interfaces.op_asm import OpAsmDialectInterface
from xdsl.dialects.builtin import (
    Builtin,
    DenseIntOrFPElementsAttr,
    Float16Type,
    Float32Type,
    Float64Type,
    IntegerType,
    Signedness,
    TensorType,
)
from xdsl.ir import Attribute


def numpy_dtype(element_type: Attribute) -> np.dtype:
    """The numpy dtype holding values of an MLIR element type.

    Raises ``TypeError`` for element types the oracle has no numpy
    counterpart for (index, bf16, complex, odd bit widths)."""
    if isinstance(element_type, IntegerType):
        width = element_type.width.data
        if width == 1:
            return np.dtype(np.bool_)
        if width not in (8, 16, 32, 64):
            raise TypeError(f"no numpy dtype for {element_type} (widths 1/8/16/32/64)")
        unsigned = element_type.signedness.data == Signedness.UNSIGNED
        return np.dtype(f"{'u' if unsigned else 'i'}{width // 8}")
    if isinstance(element_type, Float16Type):
        return np.dtype(np.float16)
    if isinstance(element_type, Float32Type):
        return np.dtype(np.float32)
    if isinstance(element_type, Float64Type):
        return np.dtype(np.float64)
    raise TypeError(f"no numpy dtype for element type {element_type}")


def tensor_dtype_and_shape(t: Attribute) -> tuple[np.dtype, tuple[int, ...]]:
    if not isinstance(t, TensorType):
        raise TypeError(f"expected a ranked tensor type, got {t}")
    shape = tuple(t.get_shape())
    if any(d < 0 for d in shape):
        raise TypeError(f"{t} has a dynamic dimension; the oracle needs static shapes")
    return numpy_dtype(t.element_type), shape


def _from_raw_bytes(
    data: bytes, dtype: np.dtype, shape: tuple[int, ...]
) -> npt.NDArray[np.generic]:
    count = int(np.prod(shape, dtype=np.int64))
    if dtype == np.bool_:
        # i1 is stored one byte per element (xDSL: 0 / -1, MLIR blobs: 0 / 1)
        raw = np.frombuffer(data, dtype=np.uint8) != 0
    else:
        raw = np.frombuffer(data, dtype=dtype.newbyteorder("<")).astype(dtype)
    if raw.size == 1 and count != 1:  # splat
        return np.full(shape, raw[0], dtype=dtype)
    if raw.size != count:
        raise ValueError(
            f"data holds {raw.size} elements but the shape {shape} needs {count}"
        )
    return raw.reshape(shape).copy()


def dense_to_numpy(attr: DenseIntOrFPElementsAttr) -> npt.NDArray[np.generic]:
    """The value of a ``dense<...>`` attribute (xDSL stores it as raw
    little-endian bytes of the element type)."""
    dtype, shape = tensor_dtype_and_shape(attr.type)
    return _from_raw_bytes(attr.data.data, dtype, shape)


def resource_blob_to_numpy(blob: str | bytes, t: Attribute) -> npt.NDArray[np.generic]:
    """Decode an MLIR ``dense_resource`` blob for tensor type ``t``.

    ``blob`` is the hex string of the textual format (``"0x04000000..."``,
    whose first 4 bytes are the alignment) or the raw data bytes without the
    alignment header."""
    dtype, shape = tensor_dtype_and_shape(t)
    if isinstance(blob, str):
        if not blob.startswith("0x"):
            raise ValueError(
                f"resource blob must be a hex string starting with 0x, "
                f"got {blob[:16]!r}"
            )
        raw = bytes.fromhex(blob[2:])
        if len(raw) < 4:
            raise ValueError(
                "resource blob is shorter than its 4-byte alignment header"
            )
        data = raw[4:]
    else:
        data = bytes(blob)
    count = int(np.prod(shape, dtype=np.int64))
    if len(data) != count * dtype.itemsize:
        raise ValueError(
            f"resource blob holds {len(data)} bytes but {t} needs "
            f"{count * dtype.itemsize}"
        )
    return _from_raw_bytes(data, dtype, shape)


def builtin_resource_blob(key: str) -> str | None:
    """The hex blob xDSL's parser stored for ``dense_resource<key>``.

    xDSL keeps blobs in the builtin dialect's ``OpAsmDialectInterface``,
    shared by the whole process; an empty or missing entry gives ``None``.
    """
    interface = Builtin.get_interface(OpAsmDialectInterface)
    if interface is None:
        return None
    blob = interface.lookup(key)
    return blob or None
