"""Bit patterns of the float types (f16, bf16, f32, f64).

MLIR writes a float whose decimal form would not read back exactly (NaNs,
infinities) as a hexadecimal integer literal: the type's bit pattern
(``0x7FC00000 : f32``). The parser reads those bits (``usmp.parsing``); the C
emitters ask here which of them C99 can spell: every finite value and both
infinities (``INFINITY``), and of the NaNs only ``NAN``, the quiet NaN with
no payload and the sign bit clear (its bits on every IEEE target gcc and
clang support). A NaN with a payload or a sign is kept exactly in constant
data (bytes), and is refused where it would have to be a C literal.
"""

from __future__ import annotations

import struct

from xdsl.dialects.builtin import AnyFloat, BFloat16Type


def float_bits(value: float, t: AnyFloat) -> int | None:
    """The bit pattern of ``value`` stored in ``t`` (None for a float type
    other than f16, bf16, f32 and f64)."""
    if isinstance(t, BFloat16Type):
        return struct.unpack("<I", struct.pack("<f", value))[0] >> 16
    fmt = {16: ("<e", "<H"), 32: ("<f", "<I"), 64: ("<d", "<Q")}.get(t.bitwidth)
    if fmt is None:
        return None
    return struct.unpack(fmt[1], struct.pack(fmt[0], value))[0]


def _mantissa_bits(t: AnyFloat) -> int:
    if isinstance(t, BFloat16Type):
        return 7
    return {16: 10, 32: 23, 64: 52}[t.bitwidth]


def exponent_mask(t: AnyFloat) -> int:
    """The exponent bits of ``t``: all set in an infinity or a NaN."""
    m = _mantissa_bits(t)
    return ((1 << (t.bitwidth - 1 - m)) - 1) << m


def is_nan_bits(bits: int, t: AnyFloat) -> bool:
    """Whether ``bits`` is a NaN of ``t`` (exponent all ones, mantissa not
    zero)."""
    mask = exponent_mask(t)
    return bits & mask == mask and bits & ((1 << _mantissa_bits(t)) - 1) != 0


def c_nan_bits(t: AnyFloat) -> int:
    """The bits of C's ``NAN`` in ``t``: quiet, no payload, sign clear."""
    return exponent_mask(t) | 1 << (_mantissa_bits(t) - 1)


def c_nan_error(bits: int, t: AnyFloat) -> str | None:
    """Why the NaN ``bits`` cannot be a C99 literal (None if it is not a NaN
    or is C's ``NAN``)."""
    if not is_nan_bits(bits, t) or bits == c_nan_bits(t):
        return None
    digits = t.bitwidth // 4
    return (
        f"the NaN 0x{bits:0{digits}X} ({t}) has a sign or payload C99 cannot "
        f"write: C's NAN is the quiet NaN 0x{c_nan_bits(t):0{digits}X}, the only "
        "NaN a C constant can be (constant data in a pool keeps any bit pattern)"
    )
