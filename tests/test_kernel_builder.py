"""``usmp.lowering.loops.KernelBuilder``'s memo: a value remembered in a
block is found from every block nested in it (one memo for all open
blocks, each key hashed once per lookup), by an equal key that is another
object, and not once the block is closed."""

from __future__ import annotations

from xdsl.dialects import arith
from xdsl.dialects.builtin import f32, i32
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


def test_a_nested_block_shadows_and_closing_it_restores() -> None:
    """A key remembered again in a nested block is that block's value
    there and in blocks nested in it; closing the block gives the enclosing
    block's value back (twice over, in order, for a key remembered twice in
    one block); a pure op hoisted to the entry while blocks are open stays
    found after they close."""
    entry = Block(arg_types=[i32, i32, i32])
    b = KernelBuilder(entry)
    x, y, z = entry.args
    b.remember(("k",), x)
    with b.at(Block()):
        b.remember(("k",), y)
        b.remember(("k",), z)
        with b.at(Block()):
            assert b.lookup(("k",)) is z
            b.remember(("k",), x)
            assert b.lookup(("k",)) is x
            hoisted = b.emit(arith.AddiOp(x, y))  # placed in the entry block
            assert hoisted.owner.parent is entry
        assert b.lookup(("k",)) is z
        assert b.lookup(("m",)) is None
    assert b.lookup(("k",)) is x
    assert b.emit(arith.AddiOp(x, y)) is hoisted
    with b.at(Block()):
        b.remember(("n",), y)
    assert b.lookup(("n",)) is None


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


def test_ops_undefined_for_some_operands_stay_where_they_are_emitted() -> None:
    """Invariant pure ops leave the loop body for the entry block; a
    division or shift by a value that may be 0 or too wide, and a float to
    integer conversion, stay in the body (``_may_trap``), which may run
    zero times or under a guard."""
    entry = Block(arg_types=[i32, i32, f32])
    b = KernelBuilder(entry)
    p, q, x = entry.args
    three = b.const(3, i32)
    body = Block()
    with b.at(body):
        hoisted = [
            b.emit(arith.AddiOp(p, q)),
            b.emit(arith.DivSIOp(p, three)),
            b.emit(arith.ShLIOp(p, three)),
        ]
        kept = [
            b.emit(arith.DivSIOp(p, q)),
            b.emit(arith.RemUIOp(p, q)),
            b.emit(arith.ShRSIOp(p, q)),
            b.emit(arith.ShLIOp(p, b.const(32, i32))),
            b.emit(arith.FPToSIOp(x, i32)),
        ]
    assert all(v.owner.parent is entry for v in hoisted)
    assert all(v.owner.parent is body for v in kept)


def test_ops_equal_in_name_and_operands_differ_in_the_rest() -> None:
    """The memo's key hashes an op's name and operands and compares the
    rest (properties, attributes, result types) only when those match:
    ops differing in a predicate, a property, an attribute or a result
    type are each emitted; an equal one is reused (and erased)."""
    from xdsl.dialects.builtin import IntegerAttr, UnitAttr, i64

    from usmp.lowering.loops import cmpi

    entry = Block(arg_types=[i32, i32])
    b = KernelBuilder(entry)
    p, q = entry.args
    lt, ge = b.emit(cmpi("slt", p, q)), b.emit(cmpi("sge", p, q))
    assert lt is not ge and b.emit(cmpi("slt", p, q)) is lt
    marked = arith.AddiOp(p, q)
    marked.attributes["usmp.mark"] = UnitAttr()
    plain, mark = b.emit(arith.AddiOp(p, q)), b.emit(marked)
    assert plain is not mark
    wide = arith.ConstantOp(IntegerAttr(1, i64))
    one32, one64 = b.emit(arith.ConstantOp(IntegerAttr(1, i32))), b.emit(wide)
    assert one32 is not one64
    again = arith.ConstantOp(IntegerAttr(1, i64))
    assert b.emit(again) is one64 and again.parent is None
    assert len(list(entry.ops)) == 6


def test_constants_are_shared_by_equal_type_and_value() -> None:
    """``const`` finds a type's constants by the type object's identity
    first: an equal type built apart shares them, integers wrap to their
    width (``index`` does not), floats are told apart by their f32 value,
    and each constant is hoisted once, in order of first use."""
    from xdsl.dialects.builtin import IndexType, IntegerType, Signedness, f64

    entry = Block()
    b = KernelBuilder(entry)
    seven = b.const(7, IntegerType(32))
    assert b.const(7, IntegerType(32)) is seven  # another, equal type object
    assert b.const(7, i32) is seven
    assert b.const(7 + 2**32, i32) is seven  # modulo 2**32
    assert b.const(255, IntegerType(8)) is b.const(-1, IntegerType(8))
    u8 = IntegerType(8, Signedness.UNSIGNED)
    assert b.const(-1, u8) is b.const(255, u8)
    assert b.const(-1, u8) is not b.const(-1, IntegerType(8))
    big = b.const(2**40, IndexType())
    assert b.const(2**40, IndexType()) is big and b.const(0, IndexType()) is not big
    assert b.const(7, IntegerType(64)) is not seven
    assert b.const(0.1, f32) is b.const(0.1000000001, f32)  # one f32 value
    assert b.const(0.1, f64) is not b.const(0.1000000001, f64)
    assert b.const(7.0, f32) is not seven
    b.finish()
    values = [str(op.value) for op in entry.ops]  # pyright: ignore
    assert values[:3] == ["7 : i32", "-1 : i8", "255 : ui8"]
    assert len(values) == 10


def test_a_new_key_remembered_is_taken_out_when_its_block_closes() -> None:
    """``remember_new`` (a key no open block has) is found in nested
    blocks and gone once its block closes."""
    entry = Block(arg_types=[i32])
    b = KernelBuilder(entry)
    x = entry.args[0]
    with b.at(Block()):
        b.remember_new(("k",), x)
        with b.at(Block()):
            assert b.lookup(("k",)) is x
        assert b.lookup(("k",)) is x
    assert b.lookup(("k",)) is None


def test_conversions_by_type_pair() -> None:
    """``convert``'s ops for each kind of pair (unsigned values are seen
    as signless, converted with the unsigned ops, and seen as unsigned
    again), planned once per pair of type objects: an equal type built
    apart converts nothing, and the same pair again emits the same ops."""
    from xdsl.dialects.builtin import IntegerType, Signedness, f64, i8

    u8 = IntegerType(8, Signedness.UNSIGNED)
    cases = [
        (u8, i32, ["builtin.unrealized_conversion_cast", "arith.extui"]),
        (i32, u8, ["arith.trunci", "builtin.unrealized_conversion_cast"]),
        (u8, f32, ["builtin.unrealized_conversion_cast", "arith.uitofp"]),
        (f32, u8, ["arith.fptosi", "builtin.unrealized_conversion_cast"]),
        (i8, i32, ["arith.extsi"]),
        (i32, f32, ["arith.sitofp"]),
        (f32, f64, ["arith.extf"]),
        (f64, f32, ["arith.truncf"]),
        (i8, IntegerType(8), []),
    ]
    entry = Block(arg_types=[source for source, _, _ in cases])
    b = KernelBuilder(entry)  # one builder: one plan per pair of types
    for x, (source, target, names) in zip(entry.args, cases, strict=True):
        before = len(list(entry.ops))
        y = b.convert(x, target)
        assert y.type == target
        emitted = [op.name for op in list(entry.ops)[before:]]
        assert emitted == names, (source, target)
        again = b.convert(x, type(target).new(target.parameters))  # equal type
        pure = all(name.startswith("arith.") for name in names)
        assert again is y if pure else again.type == target


def test_static_indices_are_the_shared_index_constants() -> None:
    """``index``: an int is ``const(int, index)`` (cached by value), an
    ``index`` value is itself."""
    from xdsl.dialects.builtin import IndexType

    entry = Block(arg_types=[IndexType()])
    b = KernelBuilder(entry)
    five = b.index(5)
    assert b.const(5, IndexType()) is five and b.index(5) is five
    assert b.index(0) is b.const(0, IndexType()) is not five
    assert b.index(entry.args[0]) is entry.args[0]
    assert b.index(2**40) is b.const(2**40, IndexType())
