"""The ``device`` dialect: where values live, shared by ``relay`` and ``tir``.

It holds one attribute, ``#device.virtual_device`` (TVM's ``VirtualDevice``).
``plan-devices`` puts it on relay values, ``aot-lower-main`` carries it onto
tir calls, allocations and copies (``tir.virtual_device`` & co.), and USMP reads
its target to choose pools. Neither IR level owns it, so it lives in a dialect
of its own: a tir module that records devices parses without the relay
dialect, and ``usmp.dialects.tir`` does not import ``usmp.dialects.relay``.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import IntAttr, StringAttr
from xdsl.ir import Attribute, Dialect, ParametrizedAttribute
from xdsl.irdl import irdl_attr_definition
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException


@irdl_attr_definition
class VirtualDeviceAttr(ParametrizedAttribute):
    """Where a value lives and is computed (TVM ``VirtualDevice``).

    Syntax::

        #device.virtual_device<"cpu", 0, target = "c", scope = "global">

    Device type (a name such as ``cpu``), virtual device id, target name and
    memory scope. An empty target or scope means "not constrained".
    """

    name = "device.virtual_device"

    device_type: StringAttr
    device_id: IntAttr
    target: StringAttr
    memory_scope: StringAttr

    def __init__(
        self,
        device_type: str = "cpu",
        device_id: int = 0,
        target: str = "c",
        memory_scope: str = "global",
    ):
        super().__init__(
            StringAttr(device_type),
            IntAttr(device_id),
            StringAttr(target),
            StringAttr(memory_scope),
        )

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            device_type = parser.parse_str_literal("device type")
            parser.parse_punctuation(",")
            device_id = parser.parse_integer(allow_boolean=False)
            target, scope = "", ""
            while parser.parse_optional_punctuation(",") is not None:
                key = parser.parse_identifier("target or scope")
                parser.parse_punctuation("=")
                value = parser.parse_str_literal(key)
                if key == "target":
                    target = value
                elif key == "scope":
                    scope = value
                else:
                    parser.raise_error(
                        f"unknown virtual_device key '{key}' (expected target or scope)"
                    )
        return (
            StringAttr(device_type),
            IntAttr(device_id),
            StringAttr(target),
            StringAttr(scope),
        )

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            printer.print_string_literal(self.device_type.data)
            printer.print_string(f", {self.device_id.data}")
            if self.target.data:
                printer.print_string(", target = ")
                printer.print_string_literal(self.target.data)
            if self.memory_scope.data:
                printer.print_string(", scope = ")
                printer.print_string_literal(self.memory_scope.data)

    def verify(self) -> None:
        if self.device_id.data < 0:
            raise VerifyException("virtual_device: device id must be >= 0")


DEVICE = Dialect("device", [], [VirtualDeviceAttr])
