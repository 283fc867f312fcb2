"""Names of the model's inputs and outputs for ``aot-lower-main``.

They become C identifiers (fields of ``TVMInputs_<model>``/``TVMOutputs_<model>``),
so they are sanitised as TVM's ``SanitizeName`` does (every character that is
not an ASCII letter or digit becomes ``_``; a leading digit additionally gets a
``_`` prefix, which C needs). Sanitising is the only change ever made: two
names that become the same identifier are an error naming both, never a
silent rename.

* Inputs: ``relay.input_tensor_names`` on main if present, else each
  argument's SSA name (``%serving_default_x`` -> ``serving_default_x``), else
  ``input`` (one unnamed input) / ``input<i>``.
* Outputs: ``relay.output_tensor_names`` on main if present, else ``output``
  for a single tensor and ``output0..N-1`` for several (TVM's naming).

Their quantisation (``relay.input_quantization``/``relay.output_quantization``,
optional) is checked here too (``io_quantization``): one entry per tensor,
``{}`` or ``{scale, zero_point}`` with a positive finite float32 scale and a
zero point the tensor's integer type holds.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.dialects import func
from xdsl.dialects.builtin import (
    ArrayAttr,
    DictionaryAttr,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    MemRefType,
    Signedness,
    StringAttr,
    TensorType,
    f32,
    i64,
)
from xdsl.ir import Attribute

from usmp.diagnostics import located_error
from usmp.dialects.relay import (
    INPUT_QUANTIZATION,
    INPUT_TENSOR_NAMES,
    OUTPUT_QUANTIZATION,
    OUTPUT_TENSOR_NAMES,
)


def sanitize_name(name: str) -> str:
    """A C identifier for ``name`` (TVM's ``SanitizeName``, plus a ``_`` before
    a leading digit)."""
    sanitized = "".join(c if c.isascii() and c.isalnum() else "_" for c in name)
    return f"_{sanitized}" if sanitized[:1].isdigit() else sanitized


@dataclass(frozen=True)
class IONames:
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]


def _names_attr(
    main: func.FuncOp, attr: str, count: int, what: str
) -> list[str] | None:
    value = main.attributes.get(attr)
    if value is None:
        return None
    if not isinstance(value, ArrayAttr) or not all(
        isinstance(v, StringAttr) for v in value.data
    ):
        raise located_error(main, f"'{attr}' must be an array of strings, got {value}")
    names = [v.data for v in value.data if isinstance(v, StringAttr)]
    if len(names) != count:
        raise located_error(
            main,
            f"'{attr}' names {len(names)} {what}(s), but main has {count} "
            f"{what}(s) (tuples count one per tensor)",
        )
    if any(not n for n in names):
        raise located_error(main, f"'{attr}' contains an empty name")
    return names


def io_names(main: func.FuncOp, num_inputs: int, num_outputs: int) -> IONames:
    """Sanitised, unique input and output names of the relay ``main``."""
    raw_inputs = _names_attr(main, INPUT_TENSOR_NAMES, num_inputs, "input")
    if raw_inputs is None:
        args = main.body.block.args
        raw_inputs = [
            arg.name_hint or ("input" if num_inputs == 1 else f"input{i}")
            for i, arg in enumerate(args)
        ]
    raw_outputs = _names_attr(main, OUTPUT_TENSOR_NAMES, num_outputs, "output")
    if raw_outputs is None:
        raw_outputs = (
            ["output"]
            if num_outputs == 1
            else [f"output{i}" for i in range(num_outputs)]
        )
    inputs = [sanitize_name(n) for n in raw_inputs]
    outputs = [sanitize_name(n) for n in raw_outputs]
    _check_unique(
        main,
        [("input", r, s) for r, s in zip(raw_inputs, inputs, strict=True)]
        + [("output", r, s) for r, s in zip(raw_outputs, outputs, strict=True)],
    )
    return IONames(tuple(inputs), tuple(outputs))


def _check_unique(main: func.FuncOp, names: Sequence[tuple[str, str, str]]) -> None:
    seen: dict[str, tuple[str, str]] = {}
    for kind, raw, sanitized in names:
        if sanitized in seen:
            other_kind, other_raw = seen[sanitized]
            how = (
                f"both become '{sanitized}' once sanitised for C"
                if raw != other_raw or raw != sanitized
                else "are the same"
            )
            raise located_error(
                main,
                f"{other_kind} name '{other_raw}' and {kind} name '{raw}' {how}; "
                "model input and output names must be distinct C identifiers and "
                "are never renamed silently (rename one of them)",
            )
        seen[sanitized] = (kind, raw)


@dataclass(frozen=True)
class IOQuantization:
    """The checked ``relay.input_quantization``/``relay.output_quantization``
    of main (scale as an f32 attribute, zero point i64), for the entry."""

    inputs: ArrayAttr[DictionaryAttr]
    outputs: ArrayAttr[DictionaryAttr]


def io_quantization(
    main: func.FuncOp,
    input_types: Sequence[Attribute],
    output_types: Sequence[Attribute],
) -> IOQuantization | None:
    """The quantisation of main's inputs and (flattened) outputs, whose types
    are ``input_types``/``output_types``; None when main has neither
    attribute (a missing one: nothing quantised on that side)."""
    if INPUT_QUANTIZATION not in main.attributes and (
        OUTPUT_QUANTIZATION not in main.attributes
    ):
        return None
    return IOQuantization(
        _quantization_attr(main, INPUT_QUANTIZATION, input_types, "input"),
        _quantization_attr(main, OUTPUT_QUANTIZATION, output_types, "output"),
    )


def _quantization_attr(
    main: func.FuncOp, attr: str, types: Sequence[Attribute], what: str
) -> ArrayAttr[DictionaryAttr]:
    value = main.attributes.get(attr)
    if value is None:
        return ArrayAttr(DictionaryAttr({}) for _ in types)
    if not isinstance(value, ArrayAttr) or not all(
        isinstance(v, DictionaryAttr) for v in value.data
    ):
        raise located_error(
            main, f"'{attr}' must be an array of dictionaries, got {value}"
        )
    entries = [v for v in value.data if isinstance(v, DictionaryAttr)]
    if len(entries) != len(types):
        raise located_error(
            main,
            f"'{attr}' has {len(entries)} entries, but main has {len(types)} "
            f"{what}(s) (tuples count one per tensor)",
        )
    return ArrayAttr(
        _quantization_entry(main, f"'{attr}' entry {i} ({what} {i})", e, t)
        for i, (e, t) in enumerate(zip(entries, types, strict=True))
    )


def _quantization_entry(
    main: func.FuncOp, where: str, entry: DictionaryAttr, type_: Attribute
) -> DictionaryAttr:
    """``entry`` checked: ``{}``, or the scale (rounded to float32) and zero
    point of a tensor of integer type."""
    d = entry.data
    if not d:
        return entry
    if set(d) != {"scale", "zero_point"}:
        raise located_error(
            main,
            f"{where} must be {{}} or {{scale = <float>, zero_point = <integer>}}, "
            f"got {entry}",
        )
    scale, zero_point = d["scale"], d["zero_point"]
    if not isinstance(scale, FloatAttr) or not isinstance(zero_point, IntegerAttr):
        raise located_error(
            main,
            f"{where}: scale must be a float and zero_point an integer, got {entry}",
        )
    value = float(scale.value.data)
    try:
        rounded = struct.unpack("<f", struct.pack("<f", value))[0]
    except OverflowError:
        rounded = math.inf
    if not (math.isfinite(rounded) and rounded > 0):
        raise located_error(
            main, f"{where}: scale must be positive and finite in float32, got {value}"
        )
    element = (
        type_.get_element_type()
        if isinstance(type_, MemRefType | TensorType)
        else type_
    )
    if not isinstance(element, IntegerType):
        raise located_error(
            main, f"{where}: a quantised tensor must have an integer type, not {type_}"
        )
    bits = element.width.data
    if element.signedness.data == Signedness.UNSIGNED:
        low, high = 0, 2**bits - 1
    else:
        low, high = -(2 ** (bits - 1)), 2 ** (bits - 1) - 1
    zp = zero_point.value.data
    if not low <= zp <= high:
        raise located_error(
            main,
            f"{where}: zero_point {zp} is outside the range of {element} "
            f"[{low}, {high}]",
        )
    return DictionaryAttr(
        {"scale": FloatAttr(rounded, f32), "zero_point": IntegerAttr(zp, i64)}
    )
