"""The C printer's per-kind shortcuts write what the per-op rules wrote:
comparisons and ``emitc.apply`` through renders built once per predicate or
operator, and operand-free inlined values (constants, literals, globals)
rendered once and reused at every use."""

from __future__ import annotations

import pytest
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser

from usmp.dialects import emitc, new_context
from usmp.lowering.c_printer import FunctionPrinter, print_function

_COMPARISONS = """
emitc.func @compare(%a: i32, %b: i32, %p: !emitc.ptr<i32>) -> i32 {
  %k = "emitc.constant"() <{value = -5 : i32}> : () -> i32
  %eq = emitc.cmp eq, %a, %k : (i32, i32) -> i1
  %ne = emitc.cmp ne, %a, %k : (i32, i32) -> i1
  %lt = emitc.cmp lt, %a, %b : (i32, i32) -> i1
  %le = emitc.cmp le, %k, %b : (i32, i32) -> i1
  %gt = emitc.cmp gt, %a, %k : (i32, i32) -> i1
  %ge = emitc.cmp ge, %a, %b : (i32, i32) -> i1
  %x1 = emitc.logical_and %eq, %ne : i1, i1
  %x2 = emitc.logical_and %lt, %le : i1, i1
  %x3 = emitc.logical_and %gt, %ge : i1, i1
  %x4 = emitc.logical_or %x1, %x2 : i1, i1
  %all = emitc.logical_or %x4, %x3 : i1, i1
  %c = emitc.cast %all : i1 to i32
  %s = emitc.add %c, %k : (i32, i32) -> i32
  %t = emitc.add %s, %k : (i32, i32) -> i32
  %v = "emitc.variable"() <{value = #emitc.opaque<"">}> : () -> !emitc.lvalue<i32>
  emitc.assign %t : i32 to %v : !emitc.lvalue<i32>
  %addr = emitc.apply "&"(%v) : (!emitc.lvalue<i32>) -> !emitc.ptr<i32>
  %deref = emitc.apply "*"(%addr) : (!emitc.ptr<i32>) -> i32
  %r = emitc.mul %deref, %k : (i32, i32) -> i32
  emitc.return %r : i32
}
"""


def _function(text: str) -> emitc.FuncOp:
    module = Parser(new_context(), text).parse_module()
    assert isinstance(module, ModuleOp)
    (f,) = module.ops
    assert isinstance(f, emitc.FuncOp)
    return f


def test_every_comparison_and_apply_is_written_with_its_operator() -> None:
    lines = print_function(_function(_COMPARISONS)).splitlines()
    for line in (
        "bool eq = a == -5;",
        "bool ne = a != -5;",
        "bool lt = a < b;",
        "bool le = -5 <= b;",
        "bool gt = a > -5;",
        "bool ge = a >= b;",
        "int32_t s = c - 5;",
        "int32_t* addr = &v;",
        "int32_t deref = *addr;",
        "int32_t r = deref * -5;",
    ):
        assert f"  {line}" in lines


def test_a_constant_read_at_many_places_is_rendered_once() -> None:
    f = _function(_COMPARISONS)
    printer = FunctionPrinter(f, None)
    text = "\n".join(printer.print())
    (constant,) = [op for op in f.body.block.ops if isinstance(op, emitc.ConstantOp)]
    assert text.count("-5") == 5  # each use (and ``- 5`` at two more)
    assert text.count("- 5") == 2
    # one rendering kept for the constant, none for the values it is read by
    assert list(printer.leaves) == [id(constant.result)]


def test_an_unknown_predicate_number_is_still_refused() -> None:
    f = _function(_COMPARISONS.replace("cmp eq", "cmp three_way"))
    with pytest.raises(KeyError):
        print_function(f)


_READS = """
emitc.func @reads(%p: !emitc.ptr<i32>, %q: !emitc.ptr<!emitc.ptrdiff_t>) -> i32 {
  %0 = "emitc.constant"() <{value = 0 : index}> : () -> !emitc.ptrdiff_t
  %1 = "emitc.constant"() <{value = 1 : index}> : () -> !emitc.ptrdiff_t
  %2 = emitc.subscript %p[%0] : (!emitc.ptr<i32>, !emitc.ptrdiff_t) -> !emitc.lvalue<i32>
  %3 = emitc.load %2 : !emitc.lvalue<i32>
  %4 = emitc.subscript %p[%1] : (!emitc.ptr<i32>, !emitc.ptrdiff_t) -> !emitc.lvalue<i32>
  %5 = emitc.load %4 : !emitc.lvalue<i32>
  %6 = emitc.add %5, %5 : (i32, i32) -> i32
  emitc.assign %6 : i32 to %2 : !emitc.lvalue<i32>
  %7 = emitc.subscript %p[%1] : (!emitc.ptr<i32>, !emitc.ptrdiff_t) -> !emitc.lvalue<i32>
  %8 = emitc.load %7 : !emitc.lvalue<i32>
  %9 = emitc.mul %3, %8 : (i32, i32) -> i32
  %10 = emitc.call_opaque "effect"(%9) : (i32) -> i32
  %11 = emitc.call_opaque "fabs"(%10) : (i32) -> i32
  %12 = emitc.subscript %q[%0] : (!emitc.ptr<!emitc.ptrdiff_t>, !emitc.ptrdiff_t) -> !emitc.lvalue<!emitc.ptrdiff_t>
  %13 = emitc.load %12 : !emitc.lvalue<!emitc.ptrdiff_t>
  %14 = emitc.subscript %p[%13] : (!emitc.ptr<i32>, !emitc.ptrdiff_t) -> !emitc.lvalue<i32>
  %15 = emitc.load %14 : !emitc.lvalue<i32>
  %16 = emitc.add %11, %15 : (i32, i32) -> i32
  emitc.return %16 : i32
}
"""


def test_a_read_is_inlined_only_where_no_write_comes_before_its_use() -> None:
    """``p[0]`` is read before ``p[0]`` is written and used after: declared
    where it is read; ``p[1]`` read twice: declared; read once right before
    its use: inlined; the result of a call with effects: declared, even
    used by the next op (the call itself writes); the index ``q[0]`` used
    by a subscript: declared (the subscript prints at its own use)."""
    lines = print_function(_function(_READS)).splitlines()
    assert lines[1:] == [
        "  int32_t v = p[0];",
        "  int32_t v_1 = p[1];",
        "  p[0] = v_1 + v_1;",
        "  int32_t v_2 = effect(v * p[1]);",
        "  ptrdiff_t v_3 = q[0];",
        "  return fabs(v_2) + p[v_3];",
        "}",
    ]


_CALLS = """
emitc.func @callee(%a: i32) -> i32 {
  emitc.return %a : i32
}
emitc.global @table : !emitc.array<4xi32>
emitc.func @caller(%a: i32) -> i32 {
  %g = emitc.get_global @table : !emitc.array<4xi32>
  %r = emitc.call @callee(%a) : (i32) -> i32
  emitc.return %r : i32
}
"""


def test_a_printer_is_freed_without_the_cyclic_collector() -> None:
    """A compile pauses the cyclic collector (``lowering/gc_pause``): a
    printer that refers to itself (a table of its own bound methods, say)
    would keep every function's names, lines and expressions to the end
    (on a 3,000-operator graph, +28 MB). After printing, the last reference
    to a printer must free it."""
    import gc
    import weakref

    module = Parser(new_context(), _CALLS).parse_module()
    caller = list(module.ops)[-1]
    assert isinstance(caller, emitc.FuncOp)
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        printer = FunctionPrinter(caller, None)
        text = "\n".join(printer.print())
        alive = weakref.ref(printer)
        del printer
        assert alive() is None, "the printer outlived its last reference"
    finally:
        if was_enabled:
            gc.enable()
    assert "callee(a)" in text
