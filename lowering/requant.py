"""Requantisation as one C helper call: ``usmp_mbqm*``.

TFLite's ``MultiplyByQuantizedMultiplier`` (gemmlowp double rounding) on an
i32 operand is ``emitc.call_opaque`` of a small ``static inline`` C99
function of the prelude (``PRELUDE``) instead of ~13 ``arith`` ops, so every
step after ``lower-ops`` handles one op per requantisation and the C reads
``usmp_mbqm_right(acc, 1518500250, 7)``. The lowering's knowledge stays in
the choice of helper (a constant argument is folded by the C compiler once
the call is inlined):

===============================  ============================================
``usmp_mbqm_right(x, m, r)``     shift ``-r < 0`` (``r`` in 1..31): SRDHM,
                                 then ``RoundingDivideByPOT(., r)``
``usmp_mbqm_right0(x, m, r)``    the same for ``r`` in 0..31 (a table of
                                 right shifts holding a 0)
``usmp_mbqm_left(x, m, l)``      shift ``l >= 0`` (``l`` in 0..31): ``x << l``
                                 (wrapping), then SRDHM
``usmp_mbqm(x, m, s)``           signed shift ``s`` (-31..31), both
                                 directions derived at run time
``usmp_mbqm_right_sat`` ...      the same three with ``_sat``: SRDHM
                                 saturates ``INT32_MIN * INT32_MIN`` (only
                                 when a multiplier can be ``INT32_MIN``)
===============================  ============================================

SRDHM (``SaturatingRoundingDoublingHighMul``) is ``h = (x * m + 2**30) >>
31`` in 64 bits, equal to gemmlowp's nudge and truncating division
(``fixed_point._doubling_high_mul_wide`` proves it). ``RoundingDivideByPOT``
works on that 64-bit ``h`` (an i32 value, or ``2**31`` before saturation):
``floor((h + half) / 2**r)`` with ``half = 2**(r-1)`` for ``h >= 0`` and
``2**(r-1) - 1`` for ``h < 0`` (ties away from zero), 0 for ``r = 0``. With
``sign = h >> 63`` (0 or -1; an arithmetic shift, as every ``arith.shrsi``
the C printer writes), ``half = 2**(r-1) + sign`` for ``r >= 1``
(``usmp_mbqm_right``: a constant ``r`` folds to one add, as cheap as the old
``arith`` expansion on a Cortex-M) and ``(2**r + sign) >> 1`` for any ``r``
in 0..31 (``usmp_mbqm_right0``, ``usmp_mbqm``). The sum cannot overflow in
64 bits, so there is no remainder test, and the result is truncated to i32
once. The helpers are pure: ``dsp.is_arithmetic_call`` lets the kernel
builder place and share them, and dead-code erasure remove them, like
``arith`` ops.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from xdsl.dialects.builtin import StringAttr, i32
from xdsl.ir import SSAValue

from usmp.dialects import emitc
from usmp.lowering.create import create

if TYPE_CHECKING:  # loops.py imports dsp.py, which imports this module
    from usmp.lowering.loops import KernelBuilder

HELPERS = frozenset(
    f"usmp_mbqm{kind}{sat}"
    for kind in ("", "_right", "_right0", "_left")
    for sat in ("", "_sat")
)
"""The requantisation helpers (arguments and result ``i32``, no effects)."""

INTERNAL = frozenset(
    {"usmp_srdhm64", "usmp_srdhm64_sat", "usmp_rdbpot64", "usmp_rdbpot64_1"}
)
"""Names the prelude defines for its own use."""

_BASE = r"""/* Requantisation helpers (usmp-opt): TFLite's
   MultiplyByQuantizedMultiplier with gemmlowp's double rounding. */
static inline int64_t usmp_srdhm64(int32_t x, int32_t m) {
  return ((int64_t)x * m + ((int64_t)1 << 30)) >> 31;
}
static inline int64_t usmp_srdhm64_sat(int32_t x, int32_t m) {
  return x == INT32_MIN && m == INT32_MIN ? INT32_MAX : usmp_srdhm64(x, m);
}
static inline int32_t usmp_rdbpot64(int64_t h, int32_t e) {
  return (int32_t)((h + ((((int64_t)1 << e) + (h >> 63)) >> 1)) >> e);
}
static inline int32_t usmp_rdbpot64_1(int64_t h, int32_t e) {
  return (int32_t)((h + ((int64_t)1 << (e - 1)) + (h >> 63)) >> e);
}
"""
_HELPER_TEMPLATE = """\
static inline int32_t usmp_mbqm_right{sat}(int32_t x, int32_t m, int32_t r) {{
  return usmp_rdbpot64_1(usmp_srdhm64{sat}(x, m), r);
}}
static inline int32_t usmp_mbqm_right0{sat}(int32_t x, int32_t m, int32_t r) {{
  return usmp_rdbpot64(usmp_srdhm64{sat}(x, m), r);
}}
static inline int32_t usmp_mbqm_left{sat}(int32_t x, int32_t m, int32_t l) {{
  return (int32_t)usmp_srdhm64{sat}((int32_t)((uint32_t)x << l), m);
}}
static inline int32_t usmp_mbqm{sat}(int32_t x, int32_t m, int32_t s) {{
  int32_t l = s > 0 ? s : 0;
  return usmp_rdbpot64(usmp_srdhm64{sat}((int32_t)((uint32_t)x << l), m), l - s);
}}
"""
"""The four helpers, with ``{sat}`` ``""`` or ``"_sat"`` (the SRDHM that
saturates)."""
PRELUDE = _BASE + "".join(_HELPER_TEMPLATE.format(sat=sat) for sat in ("", "_sat"))
"""The C defining ``HELPERS`` (C99 and C++, ``-Wall -Wextra -pedantic``
clean, no undefined behaviour for shifts in 0..31; needs ``<stdint.h>``)."""


def call(b: KernelBuilder, name: str, *args: SSAValue) -> SSAValue:
    """``emitc.call_opaque name(args) : i32`` of a helper of ``HELPERS``,
    placed and shared like a pure op (``KernelBuilder.emit``)."""
    assert name in HELPERS, name
    return b.emit(helper_call(name, args))


_CALLEES: dict[str, StringAttr] = {}
"""The callee attribute of each helper name called so far."""


def helper_call(name: str, args: Sequence[SSAValue]) -> emitc.CallOpaqueOp:
    """``emitc.CallOpaqueOp(name, args, [i32])``, built with ``create``
    (every requantisation is one: the IRDL constructor costs five times
    the op) with one callee attribute per name; tests/
    test_convert_to_emitc_ir.py compares it with the constructor's."""
    callee = _CALLEES.get(name)
    if callee is None:
        callee = _CALLEES[name] = StringAttr(name)
    return create(emitc.CallOpaqueOp, args, i32, callee=callee)
