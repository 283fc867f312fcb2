"""What the generated C can address: limits the verifiers and the parser check.

The C printer lowers MLIR's ``index`` to ``ptrdiff_t`` (``lowering/
c_printer_expr.py``), so every element and byte offset of a buffer must fit a
``ptrdiff_t`` of the 32-bit microcontrollers the code is for: a tensor or
memref may hold at most ``MAX_BUFFER_BYTES`` bytes. Pool and buffer
alignments are powers of two up to ``MAX_ALIGNMENT`` (a page; C's
``_Alignas``/``aligned`` beyond it is implementation-defined).
"""

from __future__ import annotations

import math

from xdsl.dialects.builtin import (
    AnyFloat,
    FixedBitwidthType,
    IndexType,
    IntegerType,
    MemRefType,
    TensorType,
    VectorType,
)
from xdsl.ir import Attribute
from xdsl.utils.exceptions import VerifyException

MAX_BUFFER_BYTES = 2**31 - 1
"""``PTRDIFF_MAX`` of a 32-bit target: the largest byte size of one buffer."""

MAX_ALIGNMENT = 4096
"""The largest alignment (bytes) of a pool or buffer."""


def element_bytes(t: Attribute) -> int:
    """Bytes one element of type ``t`` takes in C (at least 1)."""
    if isinstance(t, IntegerType):
        return max(1, (t.width.data + 7) // 8)
    if isinstance(t, IndexType):
        return 8
    if isinstance(t, AnyFloat):
        return max(1, t.bitwidth // 8)
    if isinstance(t, FixedBitwidthType):
        return max(1, t.compile_time_size)
    return 1


def static_byte_size(t: Attribute) -> int | None:
    """Bytes of a statically shaped tensor, memref or vector type, else None."""
    if not isinstance(t, TensorType | MemRefType | VectorType):
        return None
    shape = tuple(t.get_shape())  # pyright: ignore[reportUnknownArgumentType]
    if any(d < 0 for d in shape):
        return None
    return math.prod(shape) * element_bytes(t.get_element_type())


def buffer_size_error(t: Attribute) -> str | None:
    """What is wrong with the byte size of type ``t`` (None if it fits)."""
    size = static_byte_size(t)
    if size is None or size <= MAX_BUFFER_BYTES:
        return None
    return (
        f"{t} holds {size} bytes; the generated C indexes buffers with "
        f"ptrdiff_t, so at most {MAX_BUFFER_BYTES} bytes (2^31-1) are accepted"
    )


def check_buffer_size(t: Attribute, what: str) -> None:
    """Raise ``VerifyException`` if ``t`` is larger than the C code can index."""
    if (error := buffer_size_error(t)) is not None:
        raise VerifyException(f"{what}: {error}")


def check_nonempty(t: Attribute, what: str) -> None:
    """Raise ``VerifyException`` if the shaped type ``t`` has a zero dimension
    (a zero-sized buffer is not C99)."""
    if isinstance(t, TensorType | MemRefType) and 0 in tuple(t.get_shape()):  # pyright: ignore[reportUnknownArgumentType]
        raise VerifyException(
            f"{what}: {t} has a zero dimension; every dimension must be >= 1 "
            "(C99 has no zero-sized arrays)"
        )


def alignment_error(alignment: int) -> str | None:
    """What is wrong with an alignment in bytes (None if it is accepted)."""
    if alignment <= 0 or alignment & (alignment - 1) or alignment > MAX_ALIGNMENT:
        return (
            f"alignment {alignment} is not accepted; expected a power of two "
            f"from 1 to {MAX_ALIGNMENT}"
        )
    return None
