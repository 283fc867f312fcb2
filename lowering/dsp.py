"""Arm DSP arithmetic in the loop nests: ``usmp_*`` helper calls and packed
byte reads.

The DSP kernels (``ops_nn_dsp.py``) compute with the instructions of Arm's
DSP extension through ``emitc.call_opaque`` of small helpers, each one C
function of the prelude the C library defines (``PRELUDE``): the ACLE
intrinsic (``<arm_acle.h>``) or the instruction itself (inline assembly)
where the C compiler targets the extension (``__ARM_FEATURE_DSP``), the same
arithmetic in portable C elsewhere, so the same generated C runs bit for bit
on any host (the tests run it on x86 under ASan/UBSan). A 16-bit *pair* is
an ``i32`` whose low and high halves are two signed 16-bit lanes:

==========================  ===================================================
``usmp_sxtb16(x)``          pair (byte 0, byte 2) of ``x``, sign-extended
``usmp_sxtb16_ror8(x)``     pair (byte 1, byte 3)
``usmp_sxtab16(a, x)``      ``a`` + pair (byte 0, byte 2), lane by lane (mod 2^16)
``usmp_sxtab16_ror8(a, x)`` ``a`` + pair (byte 1, byte 3)
``usmp_smlad(a, b, c)``     ``c + a.lo * b.lo + a.hi * b.hi`` (mod 2^32)
``usmp_smlabb(a, b, c)``    ``c + a.lo * b.lo``
``usmp_smlatt(a, b, c)``    ``c + a.hi * b.hi``
``usmp_smmulr(a, b)``       ``(a * b + 2^31) >> 32`` (64-bit product)
``usmp_ssat8(x)``           ``x`` clamped to ``[-128, 127]`` (``ssat #8``)
``usmp_ssat16(x)``          ``x`` clamped to ``[-32768, 32767]``
``usmp_read_s8x4(p)``       the bytes ``p[0..3]`` as one word, ``p[0]`` lowest
==========================  ===================================================

A word of four consecutive bytes of a buffer is built in the IR from four
``memref.load``s (``pack_s8x4``: ``b0 | b1 << 8 | b2 << 16 | b3 << 24`` in
``arith``), so the kernel stays plain loads on its buffers (the overlap
analysis traces every byte it reads) and means the same everywhere; the
root of the pack carries ``PACKED`` and ``convert-to-emitc`` turns such a
tree into one ``usmp_read_s8x4(&buffer[index])`` (a single unaligned
``ldr`` on a Cortex-M; ``packed_loads`` checks the tree first).

The requantisation helpers (``requant.py``, ``usmp_mbqm*``, on every
target) use the same mechanism: ``PURE_HELPERS`` are the calls the kernel
builder and dead-code erasure treat as pure ops, ``PRELUDES`` the C each
helper set needs, emitted only when the code calls one of them
(``preludes``).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING

from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import IntegerAttr, StringAttr, UnitAttr, i32
from xdsl.ir import Operation, SSAValue

from usmp.lowering import requant

if TYPE_CHECKING:  # loops.py imports this module
    from usmp.lowering.loops import KernelBuilder

PACKED = "usmp.packed_s8x4"
"""Unit attribute on the ``arith.ori`` that completes a packed byte read."""

READ_S8X4 = "usmp_read_s8x4"

ARITHMETIC = frozenset(
    {
        "usmp_sxtb16",
        "usmp_sxtb16_ror8",
        "usmp_sxtab16",
        "usmp_sxtab16_ror8",
        "usmp_smlad",
        "usmp_smlabb",
        "usmp_smlatt",
        "usmp_smmulr",
        "usmp_ssat8",
        "usmp_ssat16",
    }
)
"""The helpers without side effects (arguments and result ``i32``)."""

HELPERS = ARITHMETIC | {READ_S8X4}
"""Every name the prelude defines."""

PRELUDE = r"""/* Arm DSP helpers (usmp-opt): the instructions where the compiler targets
   Arm's DSP extension, the same arithmetic in C elsewhere. A pair is two
   signed 16-bit lanes of a 32-bit word. */
#if defined(__ARM_FEATURE_DSP) && __ARM_FEATURE_DSP == 1 && defined(__GNUC__)
#include <arm_acle.h>
#define USMP_DSP 1
#endif
static inline int32_t usmp_read_s8x4(const int8_t* p) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  int32_t v;
  memcpy(&v, p, 4);
  return v;
#else
  return (int32_t)((uint32_t)(uint8_t)p[0] | (uint32_t)(uint8_t)p[1] << 8 |
                   (uint32_t)(uint8_t)p[2] << 16 | (uint32_t)(uint8_t)p[3] << 24);
#endif
}
#ifdef USMP_DSP
static inline int32_t usmp_sxtb16(int32_t x) {
  return (int32_t)__sxtb16((uint32_t)x);
}
static inline int32_t usmp_sxtb16_ror8(int32_t x) {
  uint32_t r;
  __asm__("sxtb16 %0, %1, ror #8" : "=r"(r) : "r"(x));
  return (int32_t)r;
}
static inline int32_t usmp_sxtab16(int32_t a, int32_t x) {
  return (int32_t)__sxtab16((uint32_t)a, (uint32_t)x);
}
static inline int32_t usmp_sxtab16_ror8(int32_t a, int32_t x) {
  uint32_t r;
  __asm__("sxtab16 %0, %1, %2, ror #8" : "=r"(r) : "r"(a), "r"(x));
  return (int32_t)r;
}
static inline int32_t usmp_smlad(int32_t a, int32_t b, int32_t c) {
  return __smlad((uint32_t)a, (uint32_t)b, c);
}
static inline int32_t usmp_smlabb(int32_t a, int32_t b, int32_t c) {
  return __smlabb(a, b, c);
}
static inline int32_t usmp_smlatt(int32_t a, int32_t b, int32_t c) {
  return __smlatt(a, b, c);
}
static inline int32_t usmp_smmulr(int32_t a, int32_t b) {
  int32_t r;
  __asm__("smmulr %0, %1, %2" : "=r"(r) : "r"(a), "r"(b));
  return r;
}
static inline int32_t usmp_ssat8(int32_t x) { return __ssat(x, 8); }
static inline int32_t usmp_ssat16(int32_t x) { return __ssat(x, 16); }
#else
static inline int32_t usmp_lane(uint32_t x, int shift) {
  return (int32_t)(int16_t)(uint16_t)(x >> shift);
}
static inline int32_t usmp_pair(int32_t lo, int32_t hi) {
  return (int32_t)(((uint32_t)lo & 0xFFFFu) | ((uint32_t)hi & 0xFFFFu) << 16);
}
static inline int32_t usmp_sxtb16(int32_t x) {
  uint32_t u = (uint32_t)x;
  return usmp_pair((int8_t)(uint8_t)u, (int8_t)(uint8_t)(u >> 16));
}
static inline int32_t usmp_sxtb16_ror8(int32_t x) {
  return usmp_sxtb16((int32_t)((uint32_t)x >> 8));
}
static inline int32_t usmp_sxtab16(int32_t a, int32_t x) {
  int32_t b = usmp_sxtb16(x);
  return usmp_pair(usmp_lane((uint32_t)a, 0) + usmp_lane((uint32_t)b, 0),
                   usmp_lane((uint32_t)a, 16) + usmp_lane((uint32_t)b, 16));
}
static inline int32_t usmp_sxtab16_ror8(int32_t a, int32_t x) {
  return usmp_sxtab16(a, (int32_t)((uint32_t)x >> 8));
}
static inline int32_t usmp_smlad(int32_t a, int32_t b, int32_t c) {
  uint32_t lo = (uint32_t)(usmp_lane((uint32_t)a, 0) * usmp_lane((uint32_t)b, 0));
  uint32_t hi = (uint32_t)(usmp_lane((uint32_t)a, 16) * usmp_lane((uint32_t)b, 16));
  return (int32_t)((uint32_t)c + lo + hi);
}
static inline int32_t usmp_smlabb(int32_t a, int32_t b, int32_t c) {
  uint32_t p = (uint32_t)(usmp_lane((uint32_t)a, 0) * usmp_lane((uint32_t)b, 0));
  return (int32_t)((uint32_t)c + p);
}
static inline int32_t usmp_smlatt(int32_t a, int32_t b, int32_t c) {
  uint32_t p = (uint32_t)(usmp_lane((uint32_t)a, 16) * usmp_lane((uint32_t)b, 16));
  return (int32_t)((uint32_t)c + p);
}
static inline int32_t usmp_smmulr(int32_t a, int32_t b) {
  return (int32_t)(((int64_t)a * b + 0x80000000LL) >> 32);
}
static inline int32_t usmp_ssat8(int32_t x) {
  return x < -128 ? -128 : x > 127 ? 127 : x;
}
static inline int32_t usmp_ssat16(int32_t x) {
  return x < -32768 ? -32768 : x > 32767 ? 32767 : x;
}
#endif
"""
"""The C defining ``HELPERS`` (C99 and C++, ``-Wall -Wextra -pedantic``
clean; needs ``<stdint.h>`` and ``<string.h>`` before it)."""


PURE_HELPERS = ARITHMETIC | requant.HELPERS
"""Every helper call without side effects: the DSP arithmetic and the
requantisation helpers (``requant.py``)."""

PRELUDE_HELPERS = HELPERS | requant.HELPERS
"""Every helper a prelude defines for the generated code to call."""

PRELUDES = ((HELPERS, PRELUDE), (requant.HELPERS, requant.PRELUDE))
"""Each prelude, after the helpers it defines, in the order the C emits
them."""


def preludes(called: Collection[str]) -> list[str]:
    """The preludes defining a helper of ``called`` (names of called C
    functions), in ``PRELUDES`` order: a prelude is emitted only when used."""
    return [text for names, text in PRELUDES if not names.isdisjoint(called)]


def is_arithmetic_call(op: Operation) -> bool:
    """An ``emitc.call_opaque`` of a helper of ``PURE_HELPERS``: no effect
    but its result (the builder places and shares it like a pure op,
    dead-code erasure removes it when unused)."""
    if op.name != "emitc.call_opaque":
        return False
    callee = op.properties.get("callee")
    return isinstance(callee, StringAttr) and callee.data in PURE_HELPERS


def call(b: KernelBuilder, name: str, *args: SSAValue) -> SSAValue:
    """``emitc.call_opaque name(args) : i32`` of a helper of ``ARITHMETIC``,
    placed and shared like a pure op (``KernelBuilder.emit``)."""
    assert name in ARITHMETIC, name
    return b.emit(requant.helper_call(name, args))


def pack_s8x4(b: KernelBuilder, values: Sequence[SSAValue]) -> SSAValue:
    """The ``i32`` word of four ``i8`` (``values[0]`` lowest), marked
    ``PACKED``; ``convert-to-emitc`` reads it with one ``usmp_read_s8x4``
    when the four are loads of consecutive elements (``packed_loads``)."""
    assert len(values) == 4
    word: SSAValue | None = None
    for k, v in enumerate(values):
        part = b.emit(arith.ExtUIOp(v, i32))
        if k:
            part = b.emit(arith.ShLIOp(part, b.const(8 * k, i32)))
        if word is None:
            word = part
            continue
        ori = arith.OrIOp(word, part)
        if k == 3:
            ori.attributes[PACKED] = UnitAttr()
        word = b.emit(ori)
    assert word is not None
    return word


def _constant(value: SSAValue) -> int | None:
    op = value.owner
    if isinstance(op, arith.ConstantOp) and isinstance(op.value, IntegerAttr):
        return op.value.value.data
    return None


def _offset(index: SSAValue, base: SSAValue) -> int | None:
    """``index - base`` when ``index`` is ``base`` or ``base + constant``
    (or both constants), else None."""
    if index is base:
        return 0
    a, c = _constant(index), _constant(base)
    if a is not None and c is not None:
        return a - c
    op = index.owner
    if isinstance(op, arith.AddiOp):
        for x, y in ((op.lhs, op.rhs), (op.rhs, op.lhs)):
            if x is base and (n := _constant(y)) is not None:
                return n
    return None


def _leaf(value: SSAValue, shift: int) -> memref.LoadOp | None:
    """The ``i8`` load ``value`` zero-extends and shifts left by ``shift``."""
    op = value.owner
    if shift:
        if not isinstance(op, arith.ShLIOp) or _constant(op.rhs) != shift:
            return None
        op = op.lhs.owner
    if not isinstance(op, arith.ExtUIOp):
        return None
    load = op.input.owner
    return load if isinstance(load, memref.LoadOp) else None


def packed_loads(root: Operation) -> list[memref.LoadOp] | None:
    """The four loads of a ``PACKED`` word (``pack_s8x4``), when they read
    consecutive elements of one buffer along its last dimension (the other
    indices the same values), else None."""
    if PACKED not in root.attributes or not isinstance(root, arith.OrIOp):
        return None
    parts: list[SSAValue] = []
    op: Operation = root
    while isinstance(op, arith.OrIOp) and len(parts) < 3:
        parts.append(op.rhs)
        owner = op.lhs.owner
        if not isinstance(owner, Operation):
            return None
        if len(parts) == 3:
            parts.append(op.lhs)
        op = owner
    if len(parts) != 4:
        return None
    loads = [_leaf(v, 8 * k) for k, v in zip(range(3, -1, -1), parts, strict=True)]
    loads.reverse()
    if any(x is None for x in loads):
        return None
    first = loads[0]
    assert first is not None
    for k, load in enumerate(loads):
        assert load is not None
        if load.memref is not first.memref:
            return None
        *outer, last = load.indices
        *outer0, last0 = first.indices
        if list(outer) != list(outer0) or _offset(last, last0) != k:
            return None
    return [x for x in loads if x is not None]
