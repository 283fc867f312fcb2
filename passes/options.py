"""Numeric pass options read as the type their field declares.

xDSL's pipeline syntax (``pass{key=value}``) lexes ``-1`` as an integer,
``0.5`` as a float and ``1e300``, ``inf``, ``nan`` as bare words, and a pass
is built only if each value already has its field's type: ``budget=1`` for
a ``float`` option was refused ("Incompatible types: given (1,), expected
<class 'float'>"), and no option could be written ``inf``. ``TypedOptions``
converts a pass's numeric values first: an integer or a float spelling
(``1e300``, ``inf``, ``-inf``, ``nan``, any case) for a ``float`` option, an
integer for an ``int`` one; anything else is an error naming the pass, the
option and the value. Whether the number is acceptable (finite, positive, in
range) is the pass's own ``__post_init__``'s to say.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, get_type_hints

from xdsl.passes import ModulePass
from xdsl.utils.arg_spec import ArgSpec, ParameterType

if TYPE_CHECKING:  # typing.Self is Python 3.11+
    from typing_extensions import Self

_FLOAT = re.compile(
    r"[-+]?(?:inf|infinity|nan|[0-9]+(?:\.[0-9]*)?(?:e[-+]?[0-9]+)?)", re.IGNORECASE
)


def _typed(pass_name: str, key: str, value: ParameterType, t: Any) -> ParameterType:
    if isinstance(value, bool):
        return value  # xDSL says a bool is not a number
    if t is int:
        if isinstance(value, int):
            return value
        raise ValueError(
            f"{pass_name}: option {key}={value} is not an integer; {key} takes a "
            "whole number"
        )
    if isinstance(value, str):
        if not _FLOAT.fullmatch(value):
            raise ValueError(f"{pass_name}: option {key}={value} is not a number")
        value = float(value)
    return float(value) if t is float else value


def typed_spec(cls: type[ModulePass], spec: ArgSpec) -> ArgSpec:
    """``spec`` with the values of ``cls``'s ``int``, ``float`` and
    ``int | float`` options converted (see the module note)."""
    hints = get_type_hints(cls)
    parameters: dict[str, tuple[ParameterType, ...]] = {}
    for key, values in spec.normalize_parameter_names().parameters.items():
        t = hints.get(key)
        numeric = t in (int, float) or t == int | float
        parameters[key] = (
            tuple(_typed(spec.name, key, v, t) for v in values) if numeric else values
        )
    return ArgSpec(spec.name, parameters)


class TypedOptions(ModulePass):
    """A pass whose numeric options are read as their fields' types when it
    is built from a pipeline (``typed_spec``)."""

    @classmethod
    def from_pass_spec(cls, spec: ArgSpec) -> Self:
        return super().from_pass_spec(typed_spec(cls, spec))
