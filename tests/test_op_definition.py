"""``op_definition`` (``dialects/op_definition.py``): xDSL's
``irdl_op_definition`` with the assembly format compiled on first use.

Every format of the project's dialects compiles (a broken one would
otherwise fail only when an op of its kind is first parsed or printed);
loading the dialects compiles none; parsing and printing compile each used
format once and give xDSL's text; the definition is xDSL's (the format
kept on the op definition and the class, the check against a format and a
``print`` of one's own)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from xdsl.dialects.builtin import i32
from xdsl.ir import Operation
from xdsl.irdl import IRDLOperation, operand_def, result_def
from xdsl.irdl.declarative_assembly_format import FormatProgram
from xdsl.printer import Printer
from xdsl.utils.exceptions import PyRDLOpDefinitionError

from usmp.dialects import get_all_dialects, new_context
from usmp.dialects.op_definition import op_definition
from usmp.parsing import LocatingParser
from usmp.testing.format_spy import FORMAT_SPY

OURS = ("device", "relay", "tir", "emitc")
CHAIN = Path(__file__).parent.parent / "examples" / "chain.mlir"


def _formatted_ops() -> list[type[IRDLOperation]]:
    dialects = get_all_dialects()
    return [
        op
        for name in OURS
        for op in dialects[name]().operations
        if issubclass(op, IRDLOperation)
        and op.get_irdl_definition().assembly_format is not None
    ]


def test_every_format_of_the_dialects_compiles() -> None:
    ops = _formatted_ops()
    assert len(ops) > 50
    for op in ops:
        op_def = op.get_irdl_definition()
        assert op_def.assembly_format is not None
        FormatProgram.from_str(op_def.assembly_format, op_def)


def test_loading_the_dialects_compiles_no_format() -> None:
    """In a process of its own (xDSL's dialects loaded first: their formats
    are compiled by xDSL's decorator)."""
    out = subprocess.run(
        [
            sys.executable,
            "-c",
            "import xdsl.dialects.arith, xdsl.dialects.emitc, xdsl.dialects.func\n"
            "import xdsl.dialects.math, xdsl.dialects.memref, xdsl.dialects.scf\n"
            + FORMAT_SPY
            + "from usmp.dialects import get_all_dialects\n"
            "for name in ('device', 'relay', 'tir', 'emitc'):\n"
            "    get_all_dialects()[name]()\n"
            "print(compiled)\n",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    assert out.stdout.split() == ["[]"]


def test_parsing_and_printing_give_xdsls_text() -> None:
    """chain.mlir (relay, tir and upstream ops in custom syntax) parses and
    prints as before: printing what was printed gives the same text."""
    ctx = new_context()
    text = CHAIN.read_text()
    module = LocatingParser(ctx, text, str(CHAIN)).parse_module()
    printed = str(module)
    again = LocatingParser(new_context(), printed, "again").parse_module()
    assert str(again) == printed
    assert "relay.call" in printed or "tir." in printed


def test_a_format_and_a_print_of_its_own_are_refused() -> None:
    with pytest.raises(PyRDLOpDefinitionError, match="Cannot define both"):

        @op_definition
        class Both(IRDLOperation):  # pyright: ignore[reportUnusedClass]
            name = "test.both"
            x = operand_def(i32)
            assembly_format = "$x attr-dict `:` type($x)"

            def print(self, printer: Printer) -> None:
                Operation.print(self, printer)


def test_a_broken_format_fails_at_first_use() -> None:
    @op_definition
    class Broken(IRDLOperation):
        name = "test.broken"
        out = result_def(i32)
        assembly_format = "attr-dict `:` $nothing"

    assert Broken.get_irdl_definition().assembly_format == "attr-dict `:` $nothing"
    with pytest.raises(PyRDLOpDefinitionError, match="assembly format"):
        Broken.build(result_types=[i32]).print(Printer())


def test_an_inherited_format_stays_inherited() -> None:
    class Base(IRDLOperation):
        x = operand_def(i32)
        assembly_format = "$x attr-dict `:` type($x)"

    @op_definition
    class Derived(Base):
        name = "test.derived"

    assert "assembly_format" not in Derived.__dict__
    assert Derived.assembly_format == Base.assembly_format
    assert Derived.get_irdl_definition().assembly_format == Base.assembly_format


def _print_chain(defer: bool) -> str:
    """``chain.mlir`` parsed and printed in a process of its own, xDSL's
    formats deferred (``compile_formats_on_first_use``) or not; the probe
    also prints the formats compiled before the parse."""
    return subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys\n"
            "from usmp.dialects.op_definition import compile_formats_on_first_use\n"
            f"if {defer}:\n"
            "    assert compile_formats_on_first_use()\n"
            "    assert compile_formats_on_first_use()  # again: no change\n"
            + FORMAT_SPY
            + "import xdsl.dialects.arith, xdsl.dialects.math, xdsl.dialects.memref\n"
            "import xdsl.dialects.scf, xdsl.dialects.func, xdsl.dialects.emitc\n"
            "print(len(compiled))\n"
            "from usmp.dialects import new_context\n"
            "from usmp.parsing import LocatingParser\n"
            f"text = open({str(CHAIN)!r}).read()\n"
            "print(LocatingParser(new_context(), text, 'chain').parse_module())\n",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout


def test_xdsl_formats_deferred_compile_none_and_print_the_same() -> None:
    deferred, eager = _print_chain(True), _print_chain(False)
    count, text = deferred.split("\n", 1)
    eager_count, eager_text = eager.split("\n", 1)
    assert count == "0"
    assert int(eager_count) > 50  # xDSL compiles every format on import
    assert "arith." in text and "memref." in text
    assert text == eager_text
