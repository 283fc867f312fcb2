"""``tir.custom_call``: the call of a user's C kernel inside the prim func
``lower-ops`` makes of a ``relay.custom_call``.

Its memref operands are the kernel's inputs, then its output; the kernel
reads and writes them in an order nobody here knows, so the kernel tracer
leaves them out (no overlap is allowed between them) and the byte replay
counts every byte of each as read and written throughout the call.
``convert-to-emitc`` builds one ``tvmgen_custom_tensor_t`` descriptor per
operand and calls ``function`` with them and the options; a non-zero status
is returned from the operator and from ``run``
(``lowering/convert_to_emitc_custom.py``).
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import (
    ArrayAttr,
    DictionaryAttr,
    IntegerAttr,
    MemRefType,
    StringAttr,
    i64,
)
from xdsl.ir import SSAValue
from xdsl.irdl import (
    IRDLOperation,
    ParsePropInAttrDict,
    prop_def,
    var_operand_def,
)
from xdsl.utils.exceptions import VerifyException

from usmp.dialects.op_definition import op_definition

CUSTOM_HEADER = "tir.custom_header"
"""Prim func (and emitc function) attribute: the header declaring the user
kernel the function calls (the C library includes it and ships it)."""
RETURNS_STATUS = "tir.returns_status"
"""Prim func attribute: the operator returns an ``int32_t`` status, which
its caller checks (a user kernel can fail)."""


@op_definition
class CustomCallOp(IRDLOperation):
    """``tir.custom_call "fn"(%in0, %in1, %out) {code = "X", inputs = 2 : i64,
    header = "k.h", options = "0a", quantization = [...]} : (memref<..>, ...)``
    """

    name = "tir.custom_call"

    function = prop_def(StringAttr)
    args = var_operand_def(MemRefType)
    code = prop_def(StringAttr)
    header = prop_def(StringAttr)
    inputs = prop_def(IntegerAttr)
    options = prop_def(StringAttr)
    quantization = prop_def(ArrayAttr[DictionaryAttr])

    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$function `(` $args `)` attr-dict `:` type($args)"

    def __init__(
        self,
        function: str,
        args: Sequence[SSAValue],
        n_inputs: int,
        *,
        code: str,
        header: str,
        options: str,
        quantization: ArrayAttr[DictionaryAttr],
    ):
        super().__init__(
            operands=[args],
            properties={
                "function": StringAttr(function),
                "code": StringAttr(code),
                "header": StringAttr(header),
                "inputs": IntegerAttr(n_inputs, i64),
                "options": StringAttr(options),
                "quantization": quantization,
            },
        )

    @property
    def n_inputs(self) -> int:
        return self.inputs.value.data

    def verify_(self) -> None:
        n = self.n_inputs
        if not 0 <= n < len(self.args):
            raise VerifyException(
                f"tir.custom_call: inputs = {n}, but it has {len(self.args)} "
                "operand(s); expected the inputs, then at least one output"
            )
        if len(self.quantization.data) != len(self.args):
            raise VerifyException(
                f"tir.custom_call: quantization has {len(self.quantization.data)} "
                f"entries, expected {len(self.args)} (one per operand)"
            )
