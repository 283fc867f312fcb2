"""``usmp.printing.ExactPrinter`` prints large dense constants in the hex
form without unpacking their elements, and integer ``array<...>``s as one
string: the text is xDSL's own, byte for byte, for every case its splat
and size tests tell apart."""

from __future__ import annotations

from io import StringIO

import numpy as np
import pytest
from xdsl.dialects.builtin import (
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    Float32Type,
    Float64Type,
    IntegerType,
    Signedness,
    TensorType,
)
from xdsl.ir import Attribute
from xdsl.printer import Printer

from usmp.printing import (  # pyright: ignore[reportPrivateUsage]
    ExactPrinter,
    _hex_form,
    hex_upper,
)


def _text(printer: type[Printer], attr: Attribute) -> str:
    stream = StringIO()
    printer(stream=stream).print_attribute(attr)
    return stream.getvalue()


def _dense(
    element: Attribute, values: list[int] | list[float]
) -> DenseIntOrFPElementsAttr:
    type_ = TensorType(element, [len(values)])
    return DenseIntOrFPElementsAttr.from_list(type_, values)  # pyright: ignore[reportCallIssue, reportArgumentType]


_I8 = IntegerType(8)
_CASES = [
    (_dense(_I8, list(range(-64, 64))), True),  # 128 elements: hex
    (_dense(_I8, [3] * 128), False),  # splat
    (_dense(_I8, [1, 2] * 50), False),  # 100 elements: a list
    (_dense(IntegerType(32), [7] * 200 + [8]), True),
    (_dense(IntegerType(16, Signedness.UNSIGNED), list(range(300))), True),
    (_dense(IntegerType(64), [1 << 40] * 101), False),
    (_dense(Float32Type(), [0.5 * k for k in range(150)]), True),
    (_dense(Float32Type(), [0.0, -0.0] * 60), False),  # equal values: a splat
    (_dense(Float64Type(), [1.0] * 120), False),
    (_dense(Float64Type(), [float("nan")] * 120), True),  # NaN != NaN
]


@pytest.mark.parametrize(("attr", "hexed"), _CASES)
def test_large_constants_print_as_xdsl_prints_them(
    attr: DenseIntOrFPElementsAttr, hexed: bool
) -> None:
    assert _hex_form(attr) is hexed
    text = _text(ExactPrinter, attr)
    assert text == _text(Printer, attr)
    assert text.startswith('dense<"0x') is hexed


def test_other_element_types_are_left_to_xdsl() -> None:
    attr = _dense(IntegerType(1), [0, 1] * 60)  # xDSL's hex form, its own test
    assert not _hex_form(attr)
    assert _text(ExactPrinter, attr) == _text(Printer, attr)


def test_hex_form_is_the_data() -> None:
    values = np.arange(-100, 100, dtype=np.int8)
    attr = _dense(_I8, values.tolist())
    expected = f'dense<"0x{values.tobytes().hex().upper()}"> : tensor<200xi8>'
    assert _text(ExactPrinter, attr) == expected


@pytest.mark.parametrize("n", [1, 15, 16, 17, 32, 33, 1000, 65536, 65538, 131089])
@pytest.mark.parametrize("signed", [True, False])
def test_c_initializer_of_bytes_is_its_lines(n: int, signed: bool) -> None:
    """The C brace initializer of a byte array (``initializer_body``: numpy
    over a table of the spellings, a chunk at a time; sizes around the
    chunk of 65,536 bytes) is ``initializer``'s lines, each indented and
    ended by a newline, with any indent; other element types go through
    the lines."""
    from usmp.lowering.c_printer_expr import initializer, initializer_body

    rng = np.random.default_rng(n)
    sign = Signedness.SIGNLESS if signed else Signedness.UNSIGNED
    data = rng.integers(-128 if signed else 0, 128 if signed else 256, n)
    cases = [(IntegerType(8, sign), data.tolist())]
    if n <= 1000:
        cases.append((IntegerType(32), (data * 1000).tolist()))
    for element, values in cases:
        attr = _dense(element, values)
        lines = "".join(f"  {line}\n" for line in initializer(attr))
        assert initializer_body(attr) == lines
        wide = "".join(f"\t    {line}\n" for line in initializer(attr))
        assert initializer_body(attr, "\t    ") == wide
        flush = "".join(f"{line}\n" for line in initializer(attr))
        assert initializer_body(attr, "") == flush


@pytest.mark.parametrize(
    "signed,indent,template",
    [
        (False, "  ", True),
        (False, "", True),
        (False, "\t    ", False),
        (True, "  ", False),
    ],
)
def test_byte_text_paths_agree(signed: bool, indent: str, template: bool) -> None:
    """The hex bytes of the pools with an even indent are spelled into a
    template line (``_template_text``); other spellings and indents take
    ``_record_text``; both spell the same text, around the chunk's size."""
    from usmp.lowering.c_printer_expr import (
        _SIGNED_BYTES,  # pyright: ignore[reportPrivateUsage]
        _UNSIGNED_BYTES,  # pyright: ignore[reportPrivateUsage]
        _record_text,  # pyright: ignore[reportPrivateUsage]
        _template_text,  # pyright: ignore[reportPrivateUsage]
    )

    table = _SIGNED_BYTES if signed else _UNSIGNED_BYTES
    data = np.random.default_rng(7).integers(0, 256, 65536 + 40, np.uint8).tobytes()
    for n in (0, 1, 16, 31, 65536, 65536 + 40):
        pieces = _template_text(data[:n], table, indent)
        assert (pieces is not None) is template
        if pieces is not None:
            assert "".join(pieces) == "".join(_record_text(data[:n], table, indent))


_U8 = IntegerType(8, Signedness.UNSIGNED)
_ARRAYS = [
    DenseArrayBase.from_list(IntegerType(32), [1, -2, 2**31 - 1, -(2**31)]),
    DenseArrayBase.from_list(IntegerType(64), [0] * 300),
    DenseArrayBase.from_list(IntegerType(64), []),
    DenseArrayBase.from_list(_U8, [0, 255, 7]),
    DenseArrayBase.from_list(IntegerType(16, Signedness.SIGNED), [-5, 5]),
    DenseArrayBase.from_list(IntegerType(1), [1, 0, 1]),  # true/false: xDSL's
    DenseArrayBase.from_list(Float32Type(), [0.5, -1.25]),  # xDSL's
]


@pytest.mark.parametrize("attr", _ARRAYS)
def test_dense_arrays_print_as_xdsl_prints_them(attr: DenseArrayBase) -> None:
    """``array<...>`` properties (per-channel multipliers and shifts) print
    as one string: xDSL's text, byte for byte, in an attribute dictionary
    too."""
    from xdsl.dialects.builtin import DictionaryAttr

    assert _text(ExactPrinter, attr) == _text(Printer, attr)
    nested = DictionaryAttr({"a": attr, "b": attr})
    assert _text(ExactPrinter, nested) == _text(Printer, nested)


_TYPES_MODULE = """\
builtin.module {
  func.func @f(%a : tensor<1x2x3xi8>, %b : memref<4x4xf32, strided<[4, 1], offset: ?>>, %c : memref<4x4xf32, strided<[4, 1], offset: ?>>) -> (tensor<1x2x3xi8>, i32) {
    %x = "test.op"(%a, %a) : (tensor<1x2x3xi8>, tensor<1x2x3xi8>) -> tensor<1x2x3xi8>
    %y = "test.op"() ({
      %z = "test.op"(%b) {t = tensor<1x2x3xi8>, f = (i32, tensor<1x2x3xi8>) -> i32} : (memref<4x4xf32, strided<[4, 1], offset: ?>>) -> i32
      "test.op"(%z) : (i32) -> ()
    }) : () -> i32
    func.return %x, %y : tensor<1x2x3xi8>, i32
  }
}
"""


def test_types_print_as_xdsl_prints_them() -> None:
    """A type's text is built once per printer: a module repeating types,
    nested ones, in attributes, function types and an indented region,
    prints as xDSL's printer prints it (no dense constant in it)."""
    from xdsl.context import Context
    from xdsl.dialects.builtin import Builtin
    from xdsl.dialects.func import Func
    from xdsl.dialects.memref import MemRef
    from xdsl.dialects.test import Test
    from xdsl.parser import Parser

    ctx = Context()
    for dialect in (Builtin, Func, MemRef, Test):
        ctx.load_dialect(dialect)
    module = Parser(ctx, _TYPES_MODULE).parse_module()
    texts: list[str] = []
    for printer in (Printer, ExactPrinter):
        stream = StringIO()
        printer(stream=stream).print_op(module)
        texts.append(stream.getvalue())
    assert texts[1] == texts[0]
    assert texts[0].count("tensor<1x2x3xi8>") == 8


@pytest.mark.parametrize("n", [0, 1, 255, 4095, 4096, 4097, 70001])
def test_hex_text_is_bytes_hex_upper(n: int) -> None:
    """``hex_upper`` (NumPy's table from 4 KiB on: the suite has loaded
    NumPy) is ``bytes.hex().upper()``, and so is the constant's text."""
    data = bytes(np.random.default_rng(n).integers(0, 256, n, dtype=np.uint8))
    data += bytes(range(256)) if n > 256 else b""  # every byte value
    assert hex_upper(data) == data.hex().upper()
    if len(data) > 100:
        attr = DenseIntOrFPElementsAttr.from_list(
            TensorType(_I8, [len(data)]),
            np.frombuffer(data, np.int8).tolist(),  # pyright: ignore[reportArgumentType]
        )
        assert _text(ExactPrinter, attr) == _text(Printer, attr)
