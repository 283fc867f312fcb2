"""What a relay op declares about its place in the pipeline, as traits.

Every relay op carries exactly one of:

* ``Fusion(pattern, tvm_name)``: it is an *operator*. ``pattern`` is TVM's
  ``TOpPattern`` (what ``fuse-ops`` may fuse it with; ``lower-ops`` finds a
  group's anchor by it); ``tvm_name`` is TVM's name of the operator, as it
  appears in fused function names (``nn.conv2d`` -> ``..._fused_nn_conv2d``).
  Every operator has a lowering (``usmp.lowering``, registered by its op
  class), a numpy semantics in the oracle (``usmp.oracle``, the same) and a
  row in ``docs/relay-ops.md``; ``tests/test_op_facts.py`` checks all of it.
* ``Structural()``: graph plumbing (constants, calls, tuples, devices,
  state): never fused, never lowered by ``lower-ops``; ``aot-lower-main``
  turns what is left of them in ``main`` into tir.

``RelayOnly()`` marks an operator no TFLite builtin converts to: it exists
for relay MLIR input (TVM's op set), so the importer need not emit it.

The order of ``OpPattern`` matters: TVM compares patterns with ``<=``
(``ELEMWISE < BROADCAST < INJECTIVE < COMM_REDUCE < OUT_ELEMWISE_FUSABLE <
TUPLE < OPAQUE``). Differences from TVM's registry, all in favour of memory:

* ``relay.softmax`` (and the TFLite ``relay.quantized_softmax``) and the
  reductions ``relay.mean``/``sum``/``max``/``min`` are ``COMM_REDUCE``:
  cheap elementwise producers fuse into them (TVM's reduce rule) *and*
  ``fuse-ops`` lets them take an elementwise epilogue like
  ``OUT_ELEMWISE_FUSABLE`` anchors, so an int8 softmax (``dequantize ->
  softmax -> quantize``) or an int8 mean (``cast -> sum ->
  fixed_point_multiply -> ... -> cast``) is one loop nest that never
  materialises its f32 / i32 intermediate.
* The integer-requantisation pieces TVM only sees after QNN canonicalisation
  (``quantize``, ``dequantize``, ``fixed_point_multiply``) are ``ELEMWISE``.

Ops without ``Fusion`` (structural ones, any other dialect's, unregistered
ones) are ``OPAQUE`` to ``fuse-ops``: never fused.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum

from xdsl.ir import Operation
from xdsl.traits import OpTrait


class OpPattern(IntEnum):
    """TVM's ``OpPatternKind``."""

    ELEMWISE = 0
    BROADCAST = 1
    INJECTIVE = 2
    COMM_REDUCE = 3
    OUT_ELEMWISE_FUSABLE = 4
    TUPLE = 7
    OPAQUE = 8


ANCHOR_PATTERNS = (OpPattern.COMM_REDUCE, OpPattern.OUT_ELEMWISE_FUSABLE)
"""Patterns of the ops that anchor a fused group (at most one per group)."""


@dataclass(frozen=True)
class Fusion(OpTrait):
    """A relay operator: its fusion pattern and TVM name (module note)."""

    pattern: OpPattern
    tvm_name: str


@dataclass(frozen=True)
class Structural(OpTrait):
    """A relay op that is graph plumbing, not an operator (module note)."""


@dataclass(frozen=True)
class RelayOnly(OpTrait):
    """An operator no TFLite builtin converts to (module note)."""


def op_pattern(op: Operation | type[Operation]) -> OpPattern:
    """The fusion pattern of an op (``OPAQUE`` if it is no relay operator)."""
    fusion = op.get_trait(Fusion)
    return fusion.pattern if fusion is not None else OpPattern.OPAQUE


def is_operator(op: Operation | type[Operation]) -> bool:
    """Whether ``op`` is a relay operator (it declares ``Fusion``)."""
    return op.get_trait(Fusion) is not None


def tvm_name(op: Operation) -> str:
    """TVM's name of a relay operator, as it appears in fused function names
    (``relay.conv2d`` -> ``nn_conv2d``)."""
    fusion = op.get_trait(Fusion)
    name = fusion.tvm_name if fusion is not None else op.name.split(".", 1)[-1]
    return name.replace(".", "_")
