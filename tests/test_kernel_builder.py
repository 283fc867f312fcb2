"""``usmp.lowering.loops.KernelBuilder``'s memo: a value remembered in a
block is found from every block nested in it (keys hashed once per lookup,
``_Hashed``), by an equal key that is another object, and not once the
block is closed."""

from __future__ import annotations

from xdsl.dialects import arith
from xdsl.dialects.builtin import i32
from xdsl.ir import Block

from usmp.lowering.loops import KernelBuilder


def test_remembered_values_are_found_in_nested_blocks() -> None:
    entry = Block(arg_types=[i32])
    b = KernelBuilder(entry)
    x = entry.args[0]
    b.remember((x, (1, 2)), x)
    inner, innermost = Block(arg_types=[i32]), Block()
    with b.at(inner):
        y = inner.args[0]
        b.remember((y, (0,)), y)
        with b.at(innermost):
            assert b.lookup((x, (1, 2))) is x  # an equal tuple, another object
            assert b.lookup((y, (0,))) is y
            assert b.lookup((x, (2, 1))) is None
    assert b.lookup((y, (0,))) is None  # the block is closed
    assert b.lookup((x, (1, 2))) is x


def test_equal_pure_ops_are_emitted_once_in_nested_blocks() -> None:
    entry = Block(arg_types=[i32, i32])
    b = KernelBuilder(entry)
    p, q = entry.args
    first = b.emit(arith.AddiOp(p, q))
    body = Block()
    with b.at(body), b.at(Block()):
        assert b.emit(arith.AddiOp(p, q)) is first  # hoisted and shared
        assert b.emit(arith.MuliOp(p, q)) is not first
    assert len(list(entry.ops)) == 2
