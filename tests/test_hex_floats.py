"""MLIR's hexadecimal float form, read bit for bit and carried to the C.

In a float context a hexadecimal integer literal is the type's bit pattern
(MLIR's ``parseFloatFromIntegerLiteral``): ``dense<[0x7FC00000]> :
tensor<1xf32>`` is a NaN, not 2143289088.0 (what xDSL reads). The bytes of a
dense attribute hold every pattern, NaN payloads included; the C gets them
through the constant pool's bytes, infinities and C's own ``NAN`` as
``<math.h>`` macros, and a NaN C cannot spell as a literal is a located
error. The printed form reads back in real ``mlir-opt`` (MLIR 22) with the
same bits.
"""

from __future__ import annotations

import math
import struct
import subprocess
from pathlib import Path

import numpy as np
import pytest
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, ModuleOp
from xdsl.utils.exceptions import ParseError

import usmp
from tests.mlir_tools import missing_tool, mlir_bin
from usmp.dialects import new_context
from usmp.parsing import LocatingParser
from usmp.tools.usmp_opt import main as usmp_opt


def _constant(text: str) -> DenseIntOrFPElementsAttr:
    ctx = new_context()
    source = f"func.func @f() {{\n  %0 = arith.constant {text}\n  func.return\n}}\n"
    module = LocatingParser(ctx, source, "hex.mlir").parse_module()
    op = next(o for o in module.walk() if o.name == "arith.constant")
    value = op.properties["value"]
    assert isinstance(value, DenseIntOrFPElementsAttr)
    return value


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # f32: quiet NaN, NaN with payload, signalling NaN, +-inf, a number
        (
            "dense<[0x7FC00000, 0x7FC00001, 0x7F800001, 0x7F800000, 0xFF800000, 1.0]>"
            " : tensor<6xf32>",
            struct.pack(
                "<6I",
                0x7FC00000,
                0x7FC00001,
                0x7F800001,
                0x7F800000,
                0xFF800000,
                0x3F800000,
            ),
        ),
        ("dense<0x7FC00000> : tensor<3xf32>", struct.pack("<3I", *[0x7FC00000] * 3)),
        (
            "dense<[[0x7F800000], [2.0]]> : tensor<2x1xf32>",
            struct.pack("<2I", 0x7F800000, 0x40000000),
        ),
        (
            "dense<[0x7E01, 0xFFFF, 0x3C00]> : tensor<3xf16>",
            struct.pack("<3H", 0x7E01, 0xFFFF, 0x3C00),
        ),
        (
            "dense<[0x7FC1, 0xFF80]> : tensor<2xbf16>",
            struct.pack("<2H", 0x7FC1, 0xFF80),
        ),
        (
            "dense<[0x7FF8000000000001, 0xFFF0000000000000]> : tensor<2xf64>",
            struct.pack("<2Q", 0x7FF8000000000001, 0xFFF0000000000000),
        ),
        # integers: a hexadecimal literal is the value
        ("dense<[0x10, 0xFF, -0x2]> : tensor<3xi8>", bytes([16, 255, 254])),
    ],
    ids=["f32", "f32-splat", "f32-nested", "f16", "bf16", "f64", "i8"],
)
def test_hex_literals_are_bit_patterns(text: str, expected: bytes) -> None:
    assert _constant(text).data.data == expected


def test_bf16_decimal_range_is_bf16s() -> None:
    """bf16 has f32's exponent: 1.0e5 is a bf16 (it was refused with f16's
    largest value, 65504); above 0x7F7F is out of range, with the bits of
    infinity to write instead."""
    assert _constant("dense<[1.0e5]> : tensor<1xbf16>").data.data == bytes.fromhex(
        "c347"
    )
    ctx = new_context()
    source = "func.func @f() {\n  %0 = arith.constant 3.4e38 : bf16\n  func.return\n}\n"
    with pytest.raises(
        ParseError, match="write infinity as the hexadecimal bit pattern 0x7F80"
    ):
        LocatingParser(ctx, source, "bf.mlir").parse_module()


def test_scalar_hex_float_is_exact() -> None:
    ctx = new_context()
    source = (
        "func.func @f() {\n  %0 = arith.constant 0x7FC00001 : f32\n"
        "  %1 = arith.constant 0xFFF8000000000002 : f64\n  func.return\n}\n"
    )
    module = LocatingParser(ctx, source, "hex.mlir").parse_module()
    a, b = (o.properties["value"] for o in module.walk() if o.name == "arith.constant")
    assert struct.pack("<f", a.value.data) == struct.pack("<I", 0x7FC00001)  # pyright: ignore
    assert struct.pack("<d", b.value.data) == struct.pack("<Q", 0xFFF8000000000002)  # pyright: ignore


MAIN = """\
func.func @main(%x: tensor<1x4xf32>) -> tensor<1x4xf32> {{
  %c = relay.constant {constant} : tensor<4xf32>
  %0 = relay.add %x, %c : (tensor<1x4xf32>, tensor<4xf32>) -> tensor<1x4xf32>
  func.return %0 : tensor<1x4xf32>
}}
"""


@pytest.mark.parametrize(
    ("constant", "expected"),
    [
        (
            "dense<[0x7F800000, 0xFF800000, 0x7FC00001, 0x3F800000]>",
            [math.inf, -math.inf, math.nan, 2.0],
        ),
        ("dense<0x7F800000>", [math.inf] * 4),  # a splat: an immediate (INFINITY)
        ("dense<0xFFC00000>", [math.nan] * 4),  # a NaN splat: constant data
    ],
    ids=["table", "inf-splat", "nan-splat"],
)
def test_hex_constants_reach_the_c(constant: str, expected: list[float]) -> None:
    """``x + c`` with c infinities and NaNs, compiled as usmp-compile does,
    built with gcc and run (the C adds the constant, not 2.1e9)."""
    ctx = new_context()
    module = LocatingParser(
        ctx, MAIN.format(constant=constant), "m.mlir"
    ).parse_module()
    lib = usmp.compile(module)
    (y,) = lib.run([np.ones((1, 4), np.float32)])
    np.testing.assert_array_equal(y.ravel(), np.array(expected, np.float32))
    if "0x7FC00001" in constant:  # the payload is in the constant pool's bytes
        pool = lib.source("codegen/host/src/tvmgen_default.c")
        assert "0x01, 0x00, 0xc0, 0x7f" in pool


@pytest.mark.parametrize(
    "value", ["0x7FC00001", "0xFFC00000"], ids=["payload", "negative"]
)
def test_c_refuses_a_nan_it_cannot_spell(value: str, tmp_path: Path) -> None:
    """A scalar NaN other than C's ``NAN`` cannot be a C literal: a located
    error, not a silent ``NAN``."""
    source = tmp_path / "nan.mlir"
    source.write_text(
        "func.func @f(%out: memref<1xf32>) attributes {tir.prim_func} {\n"
        "  %c0 = arith.constant 0 : index\n"
        f"  %n = arith.constant {value} : f32\n"
        "  memref.store %n, %out[%c0] : memref<1xf32>\n"
        "  func.return\n}\n"
    )
    status = usmp_opt([str(source), "-p", "convert-to-emitc", "-t", "c"])
    assert status == 1


def test_c_array_initializer_includes_math_h(tmp_path: Path) -> None:
    """A float global with an infinity is written with INFINITY: the file
    includes <math.h> and gcc builds it."""
    source = tmp_path / "global.mlir"
    source.write_text(
        'memref.global "private" constant @table : memref<2xf32> = '
        "dense<[0x7F800000, 0x7FC00000]>\n"
        "func.func @f(%out: memref<2xf32>) attributes {tir.prim_func} {\n"
        "  %c0 = arith.constant 0 : index\n"
        "  %t = memref.get_global @table : memref<2xf32>\n"
        "  %a = memref.load %t[%c0] : memref<2xf32>\n"
        "  memref.store %a, %out[%c0] : memref<2xf32>\n"
        "  func.return\n}\n"
    )
    out = tmp_path / "global.c"
    assert (
        usmp_opt([str(source), "-p", "convert-to-emitc", "-t", "c", "-o", str(out)])
        == 0
    )
    text = out.read_text()
    assert "#include <math.h>" in text and "INFINITY, NAN" in text
    subprocess.run(
        ["gcc", "-std=c99", "-c", str(out), "-o", str(tmp_path / "global.o")],
        check=True,
    )


def test_mlir_opt_round_trip_keeps_the_bits(tmp_path: Path) -> None:
    """usmp-opt's output reads in mlir-opt, whose output reads back here with
    the same bytes (NaN payloads, a signalling NaN and infinities of f16,
    bf16, f32, f64: those a Python float would change print as bytes)."""
    folder = mlir_bin()
    if folder is None:
        missing_tool("mlir-opt (MLIR 22)", "apt-get install mlir-22-tools")
    texts = [
        "dense<[0x7FC00001, 0x7F800000, 0xFF800000, 1.5]> : tensor<4xf32>",
        "dense<[0x7F800001, 2.0]> : tensor<2xf32>",
        "dense<[0x7E01, 0xFC00, 0x3C00]> : tensor<3xf16>",
        "dense<[0x7FC1, 0x3F80]> : tensor<2xbf16>",
        "dense<[0x7FF8000000000003, 0xFFF0000000000000]> : tensor<2xf64>",
        "dense<0x7FC00000> : tensor<2xf32>",
    ]
    source = tmp_path / "a.mlir"
    source.write_text(
        "func.func @f() {\n"
        + "".join(f"  %{i} = arith.constant {t}\n" for i, t in enumerate(texts))
        + "  func.return\n}\n"
    )
    ours = tmp_path / "ours.mlir"
    assert usmp_opt([str(source), "-o", str(ours)]) == 0
    theirs = subprocess.run(
        [str(folder / "mlir-opt"), str(ours)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    back = LocatingParser(new_context(), theirs, "b.mlir").parse_module()
    expected = [_constant(t).data.data for t in texts]
    assert _bytes(back) == expected
    again = LocatingParser(new_context(), ours.read_text(), "o.mlir").parse_module()
    assert _bytes(again) == expected


def _bytes(module: ModuleOp) -> list[bytes]:
    return [
        o.properties["value"].data.data  # pyright: ignore
        for o in module.walk()
        if o.name == "arith.constant"
    ]
