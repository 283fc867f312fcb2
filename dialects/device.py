"""The ``device`` dialect: where values live, shared by ``relay`` and ``tir``.

It holds one attribute, ``#device.virtual_device`` (TVM's ``VirtualDevice``).
``plan-devices`` puts it on relay values, ``aot-lower-main`` carries it onto
tir calls, allocations and copies (``tir.virtual_device`` & co.), and USMP reads
its target to choose pools. Neither IR level owns it, so it lives in a dialect
of its own: a tir module that records devices parses without the relay
dialect, and ``usmp.dialects.tir`` does not import ``usmp.dialects.relay``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from xdsl.dialects.builtin import IntAttr, StringAttr
from xdsl.ir import Attribute, Dialect, ParametrizedAttribute
from xdsl.irdl import irdl_attr_definition
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

UNSET_ID = -1
"""``device_id`` of a virtual device whose id is not constrained."""

MAX_DEVICE_ID = 2**31 - 1
"""The largest device id: DLPack's ``DLDevice.device_id`` is an ``int32_t``."""


_STORAGE_SCOPE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z0-9_]+)*")


def storage_scope_error(scope: str) -> str | None:
    """Why ``scope`` is not a storage scope (``None`` if it is one): TVM's
    spelling, dot-separated identifiers (``global``, ``local``,
    ``global.texture``, a memory's name such as ``sram``)."""
    if _STORAGE_SCOPE.fullmatch(scope):
        return None
    return (
        f"scope '{scope}' is not a storage scope, expected identifiers "
        "separated by '.' (e.g. global, local, global.texture, sram)"
    )


@irdl_attr_definition
class VirtualDeviceAttr(ParametrizedAttribute):
    """Where a value lives and is computed (TVM ``VirtualDevice``).

    Syntax::

        #device.virtual_device<"cpu", 0, target = "c", scope = "global">
        #device.virtual_device<"npu">                  // any id, target, scope
        #device.virtual_device<id = 1, scope = "sram">  // any device type, target
        #device.virtual_device<>                        // fully unconstrained

    Device type (a name such as ``cpu``), virtual device id, target name and
    memory scope. Every field may be left unset (an empty string, id -1):
    as in TVM, unset fields are wildcards. ``join`` unifies two partially
    known devices field by field (they conflict only on a field both know and
    disagree on); ``default_from`` fills the unset fields from a default.
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
    def unconstrained(cls) -> VirtualDeviceAttr:
        return cls("", UNSET_ID, "", "")

    def _fields(self) -> tuple[str, int, str, str]:
        return (
            self.device_type.data,
            self.device_id.data,
            self.target.data,
            self.memory_scope.data,
        )

    @staticmethod
    def _is_set(field: str | int) -> bool:
        return field not in ("", UNSET_ID)

    def is_fully_constrained(self) -> bool:
        return all(self._is_set(f) for f in self._fields())

    def is_unconstrained(self) -> bool:
        return not any(self._is_set(f) for f in self._fields())

    def join(self, other: VirtualDeviceAttr) -> VirtualDeviceAttr | None:
        """The device satisfying both (TVM ``VirtualDevice::Join``), or None
        when a field both know differs."""
        if other is self:
            return self
        mine_fields, their_fields = self._fields(), other._fields()
        joined: list[str | int] = []
        for mine, theirs in zip(mine_fields, their_fields, strict=True):
            if self._is_set(mine) and self._is_set(theirs) and mine != theirs:
                return None
            joined.append(mine if self._is_set(mine) else theirs)
        # attributes are immutable values: an operand that already is the
        # join is returned rather than rebuilt (the usual case in a plan)
        if tuple(joined) == mine_fields:
            return self
        if tuple(joined) == their_fields:
            return other
        return VirtualDeviceAttr(*joined)  # pyright: ignore[reportArgumentType]

    def default_from(self, default: VirtualDeviceAttr) -> VirtualDeviceAttr:
        """This device with its unset fields taken from ``default`` (TVM
        ``VirtualDevice::Default``): the default's target only when the device
        types agree (a target compiles for one kind of device)."""
        kind, ident, target, scope = self._fields()
        d_kind, d_ident, d_target, d_scope = default._fields()
        kind = kind or d_kind
        if not target and kind == d_kind:
            target = d_target
        fields = (
            kind,
            ident if self._is_set(ident) else d_ident,
            target,
            scope or d_scope,
        )
        if fields == self._fields():  # fully set already: no new attribute
            return self
        return VirtualDeviceAttr(*fields)

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        kind, ident, strings = "", UNSET_ID, {"target": "", "scope": ""}

        def checked_id(value: int) -> int:
            if value < 0:
                parser.raise_error(
                    "virtual_device: device id must be >= 0 (omit it for any id)"
                )
            if value > MAX_DEVICE_ID:
                parser.raise_error(
                    f"virtual_device: device id {value} is more than {MAX_DEVICE_ID} "
                    "(DLDevice's int32_t)"
                )
            return value

        def parse_entry(key: str) -> None:
            nonlocal ident
            parser.parse_punctuation("=")
            if key == "id":
                ident = checked_id(parser.parse_integer(allow_boolean=False))
            elif key in strings:
                strings[key] = parser.parse_str_literal(key)
            else:
                parser.raise_error(
                    f"unknown virtual_device key '{key}' (expected target or scope)"
                )

        with parser.in_angle_brackets():
            more = False
            if (literal := parser.parse_optional_str_literal()) is not None:
                kind = literal
                if parser.parse_optional_punctuation(",") is not None:
                    value = parser.parse_optional_integer(allow_boolean=False)
                    more = value is None
                    if value is not None:
                        ident = checked_id(value)
                        more = parser.parse_optional_punctuation(",") is not None
            elif (key := parser.parse_optional_identifier()) is not None:
                parse_entry(key)
                more = parser.parse_optional_punctuation(",") is not None
            while more:
                parse_entry(parser.parse_identifier("target, scope or id"))
                more = parser.parse_optional_punctuation(",") is not None
        return (
            StringAttr(kind),
            IntAttr(ident),
            StringAttr(strings["target"]),
            StringAttr(strings["scope"]),
        )

    def print_parameters(self, printer: Printer) -> None:
        kind, ident, target, scope = self._fields()
        with printer.in_angle_brackets():
            sep = ""
            if kind:
                printer.print_string_literal(kind)
                if self._is_set(ident):
                    printer.print_string(f", {ident}")
                sep = ", "
            elif self._is_set(ident):
                printer.print_string(f"id = {ident}")
                sep = ", "
            for key, value in (("target", target), ("scope", scope)):
                if value:
                    printer.print_string(f"{sep}{key} = ")
                    printer.print_string_literal(value)
                    sep = ", "

    def verify(self) -> None:
        if not UNSET_ID <= self.device_id.data <= MAX_DEVICE_ID:
            raise VerifyException(
                f"virtual_device: device id {self.device_id.data} is out of range; "
                f"expected 0..{MAX_DEVICE_ID} (DLDevice's int32_t)"
            )
        scope = self.memory_scope.data
        if scope and (error := storage_scope_error(scope)) is not None:
            raise VerifyException(f"virtual_device: {error}")


DEVICE = Dialect("device", [], [VirtualDeviceAttr])
