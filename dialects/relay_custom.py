"""``relay.custom_call``: a TFLite CUSTOM operator whose C kernel the user
supplies (``usmp-compile --custom-op NAME=kernel.h[:function]``).

The op is opaque to the compiler: its result type is the one the model
records for the operator's output (nothing is inferred), ``fuse-ops``
outlines it alone (``OPAQUE``), ``lower-ops`` lowers it whole to a
``tir.custom_call`` of the user's function (``lowering/ops_custom.py``), and
``usmp`` gives its inputs and output disjoint bytes (the overlap analysis
cannot see into user C). It is ``Pure``: the kernel must compute its output
from its inputs and options only, as TFLite's kernel contract says.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import (
    ArrayAttr,
    DictionaryAttr,
    StringAttr,
    TensorType,
)
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    ParsePropInAttrDict,
    prop_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from usmp.dialects.op_definition import op_definition
from usmp.dialects.relay_fusion import Fusion, OpPattern


@op_definition
class CustomCallOp(IRDLOperation):
    """A user-supplied kernel (a TFLite CUSTOM operator).

    Syntax::

        %y = relay.custom_call %x, %w {code = "ClipScale", function = "clip_scale",
               header = "kernels/clip_scale.h", options = "0a0b",
               quantization = [{scale = array<f32: 0.5>, zero_point = array<i64: 3>,
                                axis = 0 : i64}, {}, {...}]}
           : (tensor<1x4xi8>, tensor<4xi8>) -> tensor<1x4xi8>

    ``code`` is the TFLite custom code, ``function`` the C function,
    ``header`` the header declaring it, ``options`` the operator's custom
    options (hex), ``quantization`` one dictionary per input then output
    (``{}``: not quantised).
    """

    name = "relay.custom_call"

    traits = traits_def(Pure(), Fusion(OpPattern.OPAQUE, "custom"))

    inputs = var_operand_def(TensorType)
    result = result_def(TensorType)
    code = prop_def(StringAttr)
    function = prop_def(StringAttr)
    header = prop_def(StringAttr)
    options = prop_def(StringAttr, default_value=StringAttr(""))
    quantization = prop_def(ArrayAttr[DictionaryAttr])

    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$inputs attr-dict `:` functional-type($inputs, $result)"

    def __init__(
        self,
        inputs: Sequence[SSAValue],
        result_type: Attribute,
        *,
        code: str,
        function: str,
        header: str,
        options: bytes,
        quantization: Sequence[DictionaryAttr],
    ):
        super().__init__(
            operands=[inputs],
            result_types=[result_type],
            properties={
                "code": StringAttr(code),
                "function": StringAttr(function),
                "header": StringAttr(header),
                "options": StringAttr(options.hex()),
                "quantization": ArrayAttr(quantization),
            },
        )

    @property
    def option_bytes(self) -> bytes:
        return bytes.fromhex(self.options.data)

    def verify_(self) -> None:
        n = len(self.inputs) + 1
        if len(self.quantization.data) != n:
            raise VerifyException(
                f"relay.custom_call: quantization has {len(self.quantization.data)} "
                f"entries, expected {n} (one per input, then the output)"
            )
        try:
            bytes.fromhex(self.options.data)
        except ValueError:
            raise VerifyException(
                "relay.custom_call: options must be hexadecimal bytes"
            ) from None
        if not self.function.data.isidentifier() or not self.function.data.isascii():
            raise VerifyException(
                f"relay.custom_call: function '{self.function.data}' is not a C "
                "identifier"
            )


CUSTOM_OPS: list[type[IRDLOperation]] = [CustomCallOp]
