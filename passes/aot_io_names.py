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
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.dialects import func
from xdsl.dialects.builtin import ArrayAttr, StringAttr

from usmp.diagnostics import located_error
from usmp.dialects.relay import INPUT_TENSOR_NAMES, OUTPUT_TENSOR_NAMES


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
