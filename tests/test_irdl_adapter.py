"""usmp's one use of a private xDSL name, ``xdsl.irdl.operations.
_PropertyFieldDef`` (``dialects/irdl_adapter.py``): these tests fail, naming
it, when an xDSL upgrade renames, moves or changes it."""

from __future__ import annotations

from importlib.metadata import version

from xdsl.dialects.builtin import IntegerAttr, StringAttr, i64
from xdsl.irdl import IRDLOperation, irdl_op_definition, prop_def

from usmp.dialects import irdl_adapter
from usmp.dialects.relay_nn_ops import Conv2DOp

FIX = (
    f"xDSL {version('xdsl')} changed xdsl.irdl.operations._PropertyFieldDef, "
    "which dialects/irdl_adapter.py subclasses (usmp's only private xDSL "
    "name): update the adapter"
)


def test_prop_def_makes_the_private_field_the_adapter_extends() -> None:
    field = prop_def(StringAttr)
    assert type(field) is irdl_adapter.PRIVATE_BASE, (
        f"{FIX}: prop_def returns {type(field).__qualname__}"
    )


def test_a_property_field_is_an_irdl_property_with_its_default() -> None:
    @irdl_op_definition
    class ProbeOp(IRDLOperation):
        name = "test.probe"
        count = irdl_adapter.PropertyField(IntegerAttr, IntegerAttr(3, i64))

    op_def = ProbeOp.get_irdl_definition()
    assert "count" in op_def.properties, f"{FIX}: the field is no property"
    assert op_def.properties["count"].default_value == IntegerAttr(3, i64), FIX
    op = ProbeOp.create()
    op.verify()
    assert op.count == IntegerAttr(3, i64), FIX


def test_the_typed_relay_properties_are_properties() -> None:
    op_def = Conv2DOp.get_irdl_definition()
    assert {"strides", "groups", "data_layout"} <= set(op_def.properties), FIX
