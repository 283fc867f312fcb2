"""One way to build an op without xDSL's IRDL constructor, for the hot
paths of the lowering."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

from xdsl.dialects.builtin import UNKNOWN_LOC
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import IRDLOperation

_Op = TypeVar("_Op", bound=IRDLOperation)


def create(
    cls: type[_Op],
    operands: Sequence[SSAValue],
    result_type: Attribute | None = None,
    **properties: Attribute,
) -> _Op:
    """``cls`` with these operands, result type and properties, built with
    xDSL's ``create``: the IRDL constructor's argument handling costs twice
    the op itself (xDSL 0.74), and the element builders of ``lower-ops`` and
    the patterns of ``convert-to-emitc`` create one op per scalar operation
    of every kernel. Nothing is checked here; the module is verified after
    the last step with ``--verify-final`` (always in the test suite) and
    after every step with ``--verify-each``. The location is given (xDSL's
    default, unknown; the caller sets the op's own), so that xDSL does not
    import it once per op (``_unknown_loc``)."""
    return cls.create(
        operands=operands,
        result_types=() if result_type is None else (result_type,),
        properties=properties,
        location=UNKNOWN_LOC,
    )
