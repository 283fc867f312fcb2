"""The MLIR printer of usmp-opt: xDSL's ``Printer``, exact for float data.

xDSL prints the elements of a ``dense<...>`` of up to 100 elements from
their Python float values; a float cannot carry every bit pattern (a
signalling f32 NaN is quieted on the way, an f16 or bf16 NaN loses its
payload), so such a constant would print as other bits than it holds.
``ExactPrinter`` prints those constants in MLIR's hexadecimal string form,
``dense<"0x...">``, which MLIR, xDSL and ``usmp.parsing`` read byte for byte
(every other attribute prints as xDSL prints it). This is the one module
that extends xDSL's printer; ``usmp-opt``'s ``mlir`` target, ``usmp-compile``
and the importer's printing use it.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from functools import cache
from io import StringIO
from typing import IO, Any

from xdsl.context import Context
from xdsl.dialects.builtin import (
    AnyFloat,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    Float32Type,
    Float64Type,
    IntegerType,
    ModuleOp,
)
from xdsl.ir import Attribute, TypeAttribute
from xdsl.printer import Printer
from xdsl.targets.mlir import MLIRTarget


def _inexact(attr: DenseIntOrFPElementsAttr) -> bool:
    """Whether xDSL's element-wise printing would change ``attr``'s bits."""
    if not isinstance(attr.get_element_type(), AnyFloat) or len(attr) > 100:
        return False  # integers print exactly; xDSL prints > 100 as hex bytes
    again = DenseIntOrFPElementsAttr.from_list(attr.type, attr.get_values())  # pyright: ignore[reportArgumentType, reportCallIssue]
    return again.data.data != attr.data.data


def _wide_integers(attr: DenseArrayBase) -> bool:
    """Whether ``attr`` holds integers xDSL prints as numbers (every width
    but ``i1``'s, which prints ``true``/``false``)."""
    element = attr.elt_type
    return isinstance(element, IntegerType) and element.width.data != 1


_NUMPY_DTYPES = {Float32Type: "float32", Float64Type: "float64"}


def _hex_form(attr: DenseIntOrFPElementsAttr) -> bool:
    """Whether xDSL prints ``attr`` as ``dense<"0x...">``: more than 100
    elements, not a splat. Decided on the bytes (xDSL unpacks every element
    into a Python value, twice, to find out: 0.25 CPU s of MobileNetV2's
    weights); other element types go to xDSL's own test."""
    n = len(attr)
    if n <= 100:
        return False
    data = attr.data.data
    element = attr.get_element_type()
    if isinstance(element, IntegerType) and element.width.data in (8, 16, 32, 64):
        width = element.width.data // 8
        return len(data) == n * width and data != data[:width] * n
    dtype = _NUMPY_DTYPES.get(type(element))
    if dtype is None:
        return False
    # numpy only here: a usmp-opt run that prints no large float constant
    # (most FileCheck RUN lines) does not import it (0.08 of its ~0.3 CPU s)
    import numpy as np

    if len(data) != n * np.dtype(dtype).itemsize:
        return False
    values = np.frombuffer(data, dtype)
    # xDSL's splat test compares the Python floats: -0.0 == 0.0, NaN != NaN
    return not bool((values == values[0]).all())


_NUMPY_HEX_BYTES = 1 << 12
"""From this many bytes ``hex_upper`` converts with NumPy, if loaded."""


def hex_upper(data: bytes) -> str:
    """``data.hex().upper()``, the text of ``dense<"0x...">``. A large
    constant goes through a table of the texts of every two bytes with
    NumPy, when the process has loaded it (MobileNetV2's relay prints 3.5 MB
    of weights: a third of the instructions of ``hex`` then ``upper``); a
    run that has not does not load it for this."""
    if "numpy" not in sys.modules or len(data) < _NUMPY_HEX_BYTES:
        return data.hex().upper()
    import numpy as np

    even = len(data) & ~1
    pairs = np.frombuffer(data, "<u2", even // 2)
    text = str(_hex_quads().take(pairs).tobytes(), "latin-1")
    return text + data[even:].hex().upper()


@cache
def _hex_quads() -> Any:
    """``hex_upper``'s table: the four ASCII digits of every two bytes (read
    as a little-endian ``uint16``), as one little-endian ``uint32``."""
    import numpy as np

    digits = b"0123456789ABCDEF"
    two = np.array(
        [digits[k >> 4] | digits[k & 15] << 8 for k in range(256)], dtype="<u4"
    )
    both = np.arange(1 << 16)
    return (two[both & 255] | two[both >> 8] << 16).astype("<u4")


@dataclass(eq=False, repr=False)
class ExactPrinter(Printer):
    """xDSL's printer; float constants whose values would not print their
    bits print as ``dense<"0x...">`` (see the module note), and large
    constants print in that form without unpacking their elements (what
    xDSL prints for them).

    A type's text is built once per printer and reused: a module repeats a
    few types on every op (MobileNetV2's relay, 524 ops, prints 1,100
    tensor types through xDSL's element-by-element printing, a third of
    the printing's CPU). A type prints the same wherever it appears (it
    holds no SSA value or block, and xDSL prints no aliases)."""

    _type_texts: dict[Attribute, str] = field(
        default_factory=dict[Attribute, str], init=False
    )

    def print_string(self, text: str, *, indent: int | None = None) -> None:
        """xDSL's ``print_string``; a text without a line break (nearly all)
        goes to the stream in one ``write`` (``print`` writes the text and
        an empty end, through keyword handling, 25,000 times for
        MobileNetV2's relay)."""
        stream = self.stream
        if stream is None or "\n" in text:
            super().print_string(text, indent=indent)
            return
        self._current_column += len(text)
        stream.write(text)

    def print_attribute(self, attribute: Attribute) -> None:
        if isinstance(attribute, TypeAttribute):
            text = self._type_texts.get(attribute)
            if text is not None:
                self.print_string(text)
                return
            stream, column = self.stream, self._current_column
            self.stream = captured = StringIO()
            try:
                self._print_attribute(attribute)
            finally:
                self.stream = stream
            text = captured.getvalue()
            if "\n" in text:  # printed as laid out (indented), not kept
                print(text, end="", file=stream)
                return
            self._type_texts[attribute] = text
            self._current_column = column
            self.print_string(text)
            return
        self._print_attribute(attribute)

    def _print_attribute(self, attribute: Attribute) -> None:
        if type(attribute) is DenseArrayBase and _wide_integers(attribute):
            # xDSL's text, as one string (it prints each element and comma
            # on its own: a fifth of the CPU of printing MobileNetV2's relay)
            self.print_string("array<")
            self.print_attribute(attribute.elt_type)
            values = attribute.get_values()  # pyright: ignore[reportAttributeAccessIssue]
            if values:
                self.print_string(": " + ", ".join(map(str, values)))
            self.print_string(">")
            return
        if isinstance(attribute, DenseIntOrFPElementsAttr) and (
            _hex_form(attribute) or _inexact(attribute)
        ):
            self.print_string('dense<"0x')
            self.print_string(hex_upper(attribute.data.data))
            self.print_string('"> : ')
            self.print_attribute(attribute.get_type())
            return
        super().print_attribute(attribute)


@dataclass(frozen=True)
class ExactMLIRTarget(MLIRTarget):
    """xDSL's ``mlir`` target (the same options) printing with
    ``ExactPrinter``."""

    def emit(self, ctx: Context, module: ModuleOp, output: IO[str]) -> None:
        if self.syntax_highlight:  # a terminal view: xDSL's colours
            super().emit(ctx, module, output)
            return
        printer = ExactPrinter(
            stream=output,
            print_generic_format=self.print_generic_format,
            print_properties_as_attributes=self.print_properties_as_attributes,
            print_debuginfo=self.print_debuginfo,
        )
        printer.print_op(module)
        printer.print_metadata(ctx.loaded_dialects)
        print("\n", file=output)
