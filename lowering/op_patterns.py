"""Fusion patterns of the relay operators (TVM's ``TOpPattern``), by op name.

``fuse-ops`` decides what to fuse from these patterns alone; ``lower-ops``
uses the same table to find a group's anchor. The order matters: TVM
compares patterns with ``<=`` (``ELEMWISE < BROADCAST < INJECTIVE <
COMM_REDUCE < OUT_ELEMWISE_FUSABLE < TUPLE < OPAQUE``).

Differences from TVM's registry, all in favour of memory:

* ``relay.softmax`` (and the TFLite int8 ``relay.quantized_softmax``) and
  the reductions ``relay.mean``/``sum``/``max``/``min`` are ``COMM_REDUCE``:
  cheap elementwise producers fuse into them (TVM's reduce rule) *and*
  ``fuse-ops`` lets them take an elementwise epilogue like
  ``OUT_ELEMWISE_FUSABLE`` anchors, so an int8 softmax (``dequantize ->
  softmax -> quantize``) or an int8 mean (``cast -> sum ->
  fixed_point_multiply -> ... -> cast``) is one loop nest that never
  materialises its f32 / i32 intermediate.
* The integer-requantisation pieces TVM only sees after QNN canonicalisation
  (``quantize``, ``dequantize``, ``fixed_point_multiply``) are ``ELEMWISE``.

The relay structural ops (``call``, ``tuple``, ``on_device``, ...) and any op
not listed are ``OPAQUE``: never fused.
"""

from __future__ import annotations

from enum import IntEnum


class OpPattern(IntEnum):
    """TVM's ``OpPatternKind``."""

    ELEMWISE = 0
    BROADCAST = 1
    INJECTIVE = 2
    COMM_REDUCE = 3
    OUT_ELEMWISE_FUSABLE = 4
    TUPLE = 7
    OPAQUE = 8


# op name -> (pattern, TVM operator name used in fused function names)
_OPERATORS: dict[str, tuple[OpPattern, str]] = {
    "relay.conv2d": (OpPattern.OUT_ELEMWISE_FUSABLE, "nn.conv2d"),
    "relay.conv2d_transpose": (OpPattern.OUT_ELEMWISE_FUSABLE, "nn.conv2d_transpose"),
    "relay.dense": (OpPattern.OUT_ELEMWISE_FUSABLE, "nn.dense"),
    "relay.max_pool2d": (OpPattern.OUT_ELEMWISE_FUSABLE, "nn.max_pool2d"),
    "relay.avg_pool2d": (OpPattern.OUT_ELEMWISE_FUSABLE, "nn.avg_pool2d"),
    "relay.global_avg_pool2d": (
        OpPattern.OUT_ELEMWISE_FUSABLE,
        "nn.global_avg_pool2d",
    ),
    "relay.mean": (OpPattern.COMM_REDUCE, "mean"),
    "relay.sum": (OpPattern.COMM_REDUCE, "sum"),
    "relay.max": (OpPattern.COMM_REDUCE, "max"),
    "relay.min": (OpPattern.COMM_REDUCE, "min"),
    "relay.argmax": (OpPattern.COMM_REDUCE, "argmax"),
    "relay.argmin": (OpPattern.COMM_REDUCE, "argmin"),
    "relay.softmax": (OpPattern.COMM_REDUCE, "nn.softmax"),
    "relay.quantized_softmax": (OpPattern.COMM_REDUCE, "qnn.softmax"),
    "relay.quantized_softmax_i16": (OpPattern.COMM_REDUCE, "qnn.softmax"),
    "relay.quantized_l2_normalize": (OpPattern.COMM_REDUCE, "l2_normalize"),
    "relay.add": (OpPattern.BROADCAST, "add"),
    "relay.subtract": (OpPattern.BROADCAST, "subtract"),
    "relay.multiply": (OpPattern.BROADCAST, "multiply"),
    "relay.maximum": (OpPattern.BROADCAST, "maximum"),
    "relay.minimum": (OpPattern.BROADCAST, "minimum"),
    "relay.right_shift": (OpPattern.BROADCAST, "right_shift"),
    "relay.clip": (OpPattern.ELEMWISE, "clip"),
    "relay.relu": (OpPattern.ELEMWISE, "nn.relu"),
    "relay.cast": (OpPattern.ELEMWISE, "cast"),
    "relay.fixed_point_multiply": (OpPattern.ELEMWISE, "fixed_point_multiply"),
    "relay.quantize": (OpPattern.ELEMWISE, "qnn.quantize"),
    "relay.dequantize": (OpPattern.ELEMWISE, "qnn.dequantize"),
    "relay.reshape": (OpPattern.INJECTIVE, "reshape"),
    "relay.transpose": (OpPattern.INJECTIVE, "transpose"),
    "relay.broadcast_to": (OpPattern.BROADCAST, "broadcast_to"),
    "relay.strided_slice": (OpPattern.INJECTIVE, "strided_slice"),
    "relay.pad": (OpPattern.INJECTIVE, "nn.pad"),
    "relay.concatenate": (OpPattern.INJECTIVE, "concatenate"),
    "relay.divide": (OpPattern.BROADCAST, "divide"),
    "relay.sigmoid": (OpPattern.ELEMWISE, "sigmoid"),
    "relay.tanh": (OpPattern.ELEMWISE, "tanh"),
    "relay.exp": (OpPattern.ELEMWISE, "exp"),
    "relay.log": (OpPattern.ELEMWISE, "log"),
    "relay.sqrt": (OpPattern.ELEMWISE, "sqrt"),
    "relay.rsqrt": (OpPattern.ELEMWISE, "rsqrt"),
    "relay.gather": (OpPattern.INJECTIVE, "take"),
    "relay.resize_bilinear": (OpPattern.INJECTIVE, "image.resize2d"),
    "relay.lstm": (OpPattern.OPAQUE, "lstm"),
    "relay.svdf": (OpPattern.OPAQUE, "svdf"),
    "relay.table_lookup": (OpPattern.ELEMWISE, "table_lookup"),
    "relay.quantized_sigmoid": (OpPattern.ELEMWISE, "qnn.sigmoid"),
    "relay.quantized_tanh": (OpPattern.ELEMWISE, "qnn.tanh"),
    "relay.quantized_rsqrt": (OpPattern.ELEMWISE, "qnn.rsqrt"),
    "relay.quantized_divide": (OpPattern.BROADCAST, "qnn.divide"),
    "relay.dynamic_quantize": (OpPattern.COMM_REDUCE, "dynamic_quantize"),
    "relay.dynamic_quantize_scale": (OpPattern.COMM_REDUCE, "dynamic_quantize_scale"),
    "relay.dynamic_quantize_zero_point": (
        OpPattern.COMM_REDUCE,
        "dynamic_quantize_zero_point",
    ),
}

ANCHOR_PATTERNS = (OpPattern.COMM_REDUCE, OpPattern.OUT_ELEMWISE_FUSABLE)
"""Patterns of the ops that anchor a fused group (at most one per group)."""


def op_pattern(op_name: str) -> OpPattern:
    """The fusion pattern of a relay operator (``OPAQUE`` if not an operator)."""
    entry = _OPERATORS.get(op_name)
    return entry[0] if entry is not None else OpPattern.OPAQUE


def is_operator(op_name: str) -> bool:
    """Whether ``op_name`` is a relay operator of the contract."""
    return op_name in _OPERATORS


def tvm_name(op_name: str) -> str:
    """TVM's name of a relay operator, as it appears in fused function names
    (``relay.conv2d`` -> ``nn_conv2d``)."""
    entry = _OPERATORS.get(op_name)
    name = entry[1] if entry is not None else op_name.split(".", 1)[-1]
    return name.replace(".", "_")


def operator_names() -> tuple[str, ...]:
    """Every relay operator with a pattern, in a stable order."""
    return tuple(_OPERATORS)
