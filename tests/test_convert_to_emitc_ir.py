"""``usmp.lowering.create.create`` (the op builder of lower-ops and
convert-to-emitc) makes the op xDSL's
``Operation.create`` makes (every field, the IRDL defaults, the operands'
use lists, in their order), ``replace_uses`` leaves the IR and the use
lists that ``SSAValue.replace_all_uses_with`` leaves and ``remove_op``
those of ``Block.detach_op`` and ``Operation.drop_all_references``; written
against xDSL's own methods, so an xDSL whose op layout differs fails here."""

from __future__ import annotations

from io import StringIO
from typing import Any, cast

import pytest
from xdsl.dialects import arith
from xdsl.dialects.builtin import (
    UNKNOWN_LOC,
    IntegerAttr,
    IntegerType,
    StringAttr,
    UnrealizedConversionCastOp,
    f32,
    i1,
    i32,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.printer import Printer

from usmp.dialects import emitc
from usmp.dialects.emitc_expressions import CMP_PREDICATES
from usmp.lowering.convert_to_emitc_ir import (
    append_op,
    insert_at,
    insert_before,
    remove_op,
    replace_uses,
    transplant,
)
from usmp.lowering.create import create


def _xdsl_create(
    cls: type[Operation],
    operands: list[SSAValue],
    result: Attribute | None,
    **properties: Attribute,
) -> Operation:
    """The op as xDSL's own ``Operation.create`` builds it."""
    return cls.create(
        operands=operands,
        result_types=() if result is None else (result,),
        properties=properties,
        location=UNKNOWN_LOC,
    )


def _fields(op: Operation) -> dict[str, Any]:
    return {
        "class": type(op),
        "operands": list(op.operands),
        "uses": [(u.operation, u.index) for u in op._operand_uses],  # pyright: ignore[reportPrivateUsage]
        "result types": [r.type for r in op.results],
        "results": [(r.op, r.index, r.name_hint, r.first_use) for r in op.results],
        "properties": op.properties,
        "attributes": op.attributes,
        "location": op.location,
        "successors": list(op.successors),
        "regions": op.regions,
        "parent": op.parent,
    }


def _same(a: Operation, b: Operation) -> None:
    fa, fb = _fields(a), _fields(b)
    fa["uses"] = [(b if o is a else o, k) for o, k in fa["uses"]]
    fa["results"] = [(b if o is a else o, *rest) for o, *rest in fa["results"]]
    assert fa == fb


_CASES: list[tuple[type[Operation], int, Attribute | None, dict[str, Attribute]]] = [
    (emitc.AddOp, 2, i32, {}),
    (
        emitc.CmpOp,
        2,
        i1,
        {"predicate": IntegerAttr(CMP_PREDICATES.index("lt"), i64)},
    ),
    (emitc.AssignOp, 2, None, {}),
    (
        emitc.VariableOp,
        0,
        emitc.LValueType(i32),
        {"value": emitc.OpaqueAttr(StringAttr(""))},
    ),
    (UnrealizedConversionCastOp, 1, i32, {}),
    (arith.AddiOp, 2, i32, {}),  # a default property: overflowFlags
    (arith.AddfOp, 2, f32, {"fastmath": arith.FastMathFlagsAttr("fast")}),
    (arith.MaxSIOp, 2, i32, {}),
    # a given property before the default one (fastmath), as xDSL orders them
    (arith.CmpfOp, 2, i1, {"predicate": IntegerAttr(1, i64)}),
]


@pytest.mark.parametrize("case", range(len(_CASES)))
def test_build_is_xdsl_create(case: int) -> None:
    cls, n, result, properties = _CASES[case]
    block = Block(arg_types=[i32, i32])
    operands: list[SSAValue] = list(block.args[:n])
    if cls is emitc.AssignOp:
        variable = create(emitc.VariableOp, (), emitc.LValueType(i32), **_CASES[3][3])
        operands = [variable.results[0], block.args[0]]
    ours = create(cls, operands, result, **properties)  # pyright: ignore[reportArgumentType]
    xdsl = _xdsl_create(cls, operands, result, **properties)
    _same(ours, xdsl)
    assert list(ours.properties) == list(xdsl.properties)  # the same order
    if cls is arith.AddiOp:
        assert "overflowFlags" in ours.properties
    for value in operands:  # both ops are users, each once per operand
        user_ops = [u.operation for u in value.uses]
        assert user_ops.count(ours) == user_ops.count(xdsl) == operands.count(value)
    # the same use lists, in the same order and links, built by each alone
    lists: list[list[tuple[int, int]]] = []
    for build in (create, _xdsl_create):
        values: list[SSAValue] = list(Block(arg_types=[i32, i32]).args)
        for _ in range(3):
            build(arith.AddiOp, [values[0], values[1]], i32)
        built = build(arith.AddiOp, [values[1], values[1]], i32)
        users: dict[int, int] = {}
        listed: list[tuple[int, int]] = []
        for value in values:
            previous = None
            for use in value.uses:
                assert use._prev_use is previous  # pyright: ignore[reportPrivateUsage]
                previous = use
                key = users.setdefault(id(use.operation), len(users))
                listed.append((key, use.index))
        assert [u.index for u in built._operand_uses] == [0, 1]  # pyright: ignore[reportPrivateUsage]
        lists.append(listed)
    assert lists[0] == lists[1]


def _chain() -> tuple[Block, list[Operation]]:
    """%c = const; %s = %c + %c; %t = %s * %c (``%c`` used three times)."""
    c = arith.ConstantOp.from_int_and_width(1, i32)
    s = arith.AddiOp(c, c)
    t = arith.MuliOp(s, c)
    return Block([c, s, t]), [c, s, t]


def _assert_linked(block: Block, walked: list[Operation]) -> None:
    """``walked`` (``block``'s ops in order) linked as xDSL links a block's
    ops: parents, neighbours, first and last."""
    assert [o.parent for o in walked] == [block] * len(walked)
    assert [o.prev_op for o in walked] == [None, *walked[:-1]]
    assert [o.next_op for o in walked] == [*walked[1:], None]
    assert (block.first_op, block.last_op) == (walked[0], walked[-1])


@pytest.mark.parametrize("named", [False, True])
def test_replace_uses_is_replace_all_uses_with(named: bool) -> None:
    texts: list[str] = []
    orders: list[list[tuple[str, int]]] = []
    for replace in (replace_uses, SSAValue.replace_all_uses_with):
        block, (c, s, t) = _chain()
        c.results[0].name_hint = "c"
        new = arith.ConstantOp.from_int_and_width(2, i32)
        if named:
            new.results[0].name_hint = "two"
        block.insert_op_before(new, c)
        replace(c.results[0], new.results[0])
        assert c.results[0].first_use is None
        uses = [(u.operation, u.index) for u in new.results[0].uses]
        assert sorted(uses, key=lambda u: (id(u[0]), u[1])) == sorted(
            [(s, 0), (s, 1), (t, 1)], key=lambda u: (id(u[0]), u[1])
        )
        assert list(s.operands) == [new.results[0]] * 2
        order = [(u.operation.name, u.index) for u in new.results[0].uses]
        orders.append(order)
        assert (
            [u._prev_use for u in new.results[0].uses]
            == [  # pyright: ignore[reportPrivateUsage]
                None,
                *list(new.results[0].uses)[:-1],
            ]
        )
        assert list(t.operands) == [s.results[0], new.results[0]]
        assert new.results[0].name_hint == ("two" if named else "c")
        c.detach()
        c.erase()
        text = StringIO()
        Printer(stream=text).print_block(block)
        texts.append(text.getvalue())
    assert texts[0] == texts[1]
    assert orders[0] == orders[1]


@pytest.mark.parametrize("at", [0, 1, 2])
def test_insert_before_links_as_xdsl(at: int) -> None:
    """``insert_before`` leaves the block's order and links as
    ``Block.insert_ops_before`` does, before the first, a middle and the
    last op; an op with a region goes through xDSL's checked insertion; an
    op already in a block is refused."""
    from xdsl.dialects import scf

    orders: list[list[str]] = []
    for insert in (insert_before, Block.insert_ops_before):
        block, ops = _chain()
        new: list[Operation] = [
            arith.ConstantOp.from_int_and_width(k, i32) for k in (7, 8)
        ]
        new.insert(1, scf.ExecuteRegionOp([], Region(Block())))
        if insert is insert_before:
            insert_before(block, new, ops[at])
        else:
            block.insert_ops_before(new, ops[at])
        walked = list(block.ops)
        assert walked == [*ops[:at], *new, *ops[at:]]
        _assert_linked(block, walked)
        orders.append([o.name for o in walked])
    assert orders[0] == orders[1]
    block, ops = _chain()
    with pytest.raises(ValueError, match="already in a block"):
        insert_before(block, [ops[0]], ops[2])


def _load_every_dialect() -> None:
    """Every dialect the compiler uses (``new_context``) and every module of
    ``usmp.dialects``: the relay dialect registers some of its ops' modules
    only when they are first looked up."""
    import importlib
    import pkgutil

    from usmp import dialects
    from usmp.dialects import new_context

    new_context()
    for module in pkgutil.iter_modules(dialects.__path__):
        importlib.import_module(f"{dialects.__name__}.{module.name}")


def test_exact_class_tests_are_on_final_classes() -> None:
    """The conversion and the C printer test these classes with ``type(x)
    is C`` (an ``isinstance`` against an xDSL class is an ABC check): it is
    the same test only while nothing derives from them, with every dialect
    loaded."""
    from xdsl.dialects.builtin import MemRefType, StringAttr

    _load_every_dialect()

    def derived(cls: type) -> list[type]:
        return [d for s in cls.__subclasses__() for d in (s, *derived(s))]

    for cls in (
        MemRefType,
        StringAttr,
        UnrealizedConversionCastOp,
        emitc.ArrayType,
        emitc.OpaqueAttr,
        emitc.SizeT,
        emitc.ConstantOp,
        emitc.ApplyOp,
    ):
        assert derived(cls) == [], cls


@pytest.mark.parametrize("at", [0, 3, 5])
def test_remove_op_is_detach_and_drop(at: int) -> None:
    """``remove_op`` unlinks the first, a middle or the last op of a block
    (each without users) and its uses as ``Block.detach_op`` and
    ``drop_all_references`` do: the same block links, the same use lists
    (order and links) of every value, and the op holds no uses; an op of
    another block is refused."""
    seen: list[tuple[list[int], list[list[tuple[int, int]]]]] = []
    for remove in (remove_op, None):
        unused, a, b = (arith.ConstantOp.from_int_and_width(k, i32) for k in (0, 1, 2))
        ops: list[Operation] = [unused, a, b]
        ops += [arith.AddiOp(a, b), arith.AddiOp(b, a), arith.AddiOp(a, a)]
        block = Block(ops)
        victim = ops[at]
        if remove is None:
            block.detach_op(victim)
            victim.drop_all_references()
        else:
            remove(block, victim)
        walked = list(block.ops)
        assert [o.prev_op for o in walked] == [None, *walked[:-1]]
        assert [o.next_op for o in walked] == [*walked[1:], None]
        assert (block.first_op, block.last_op) == (walked[0], walked[-1])
        assert victim.parent is None and victim.prev_op is victim.next_op is None
        assert victim._operand_uses == ()  # pyright: ignore[reportPrivateUsage]
        names = {id(o): k for k, o in enumerate(ops)}
        uses: list[list[tuple[int, int]]] = []
        for o in walked:
            for r in o.results:
                listed = list(r.uses)
                links = [u._prev_use for u in listed]  # pyright: ignore[reportPrivateUsage]
                assert links == [None, *listed][: len(listed)]
                uses.append([(names[id(u.operation)], u.index) for u in listed])
        seen.append(([names[id(o)] for o in walked], uses))
    assert seen[0] == seen[1]
    assert len(seen[0][0]) == 5
    _, ops = _chain()
    with pytest.raises(ValueError, match="different block"):
        remove_op(Block(), ops[1])


@pytest.mark.parametrize("loop", ["scf", "scf_iter_args", "emitc"])
def test_create_with_regions_is_the_constructor(loop: str) -> None:
    """``create_with_regions`` builds the loop the dialect's constructor
    builds (``lower-ops``' ``scf.for``, ``convert-to-emitc``'s
    ``emitc.for``): every field but the region, which it takes as the
    constructor takes it (attached to the op, the same block), and the same
    text."""
    from xdsl.dialects import scf
    from xdsl.dialects.builtin import IndexType

    from usmp.lowering.create import create_with_regions

    index = IndexType()
    bounds = list(Block(arg_types=[index, index, index]).args)
    inits: list[SSAValue] = list(Block(arg_types=[i32, f32]).args)
    if loop != "scf_iter_args":
        inits = []
    ops: list[Operation] = []
    blocks: list[Block] = []
    for ours in (True, False):
        block = Block(arg_types=[index, *(v.type for v in inits)])
        if loop == "emitc":
            block.add_op(emitc.YieldOp())
            region = Region(block)
            op: Operation = (
                create_with_regions(emitc.ForOp, bounds, (), [region])
                if ours
                else emitc.ForOp(bounds[0], bounds[1], bounds[2], region)
            )
        else:
            block.add_op(scf.YieldOp(*block.args[1:]))
            op = (
                create_with_regions(
                    scf.ForOp,
                    [*bounds, *inits],
                    [v.type for v in inits],
                    [Region(block)],
                )
                if ours
                else scf.ForOp(bounds[0], bounds[1], bounds[2], inits, block)
            )
        ops.append(op)
        blocks.append(block)
    fields = [_fields(op) for op in ops]
    for f, op in zip(fields, ops, strict=True):
        f["uses"] = [("op" if o is op else o, k) for o, k in f["uses"]]
        f["results"] = [("op" if o is op else o, *rest) for o, *rest in f["results"]]
        (region,) = f.pop("regions")
        assert region.parent is op and list(region.blocks) == [blocks[ops.index(op)]]
    assert fields[0] == fields[1]
    assert list(ops[0].properties) == list(ops[1].properties)
    texts = []
    for op in ops:
        op.verify()
        text = StringIO()
        Printer(stream=text).print_op(op)
        texts.append(text.getvalue())
    assert texts[0] == texts[1]


@pytest.mark.parametrize(
    "kind",
    ["shli", "andi", "xori", "divsi", "extui", "select", "cmpi_slt", "cmpi_sge"],
)
def test_create_is_the_arith_constructor(kind: str) -> None:
    """The ``arith`` ops ``lower-ops``' fixed-point arithmetic builds with
    ``create`` (``lowering/fixed_point.py``) equal the ones the dialect's
    constructors build, field by field (properties in the same order)."""
    from usmp.lowering.loops import cmpi

    c, x, y = Block(arg_types=[i1, i64, i64]).args
    ops: dict[str, tuple[Operation, Operation]] = {
        "shli": (create(arith.ShLIOp, (x, y), i64), arith.ShLIOp(x, y)),
        "andi": (create(arith.AndIOp, (x, y), i64), arith.AndIOp(x, y)),
        "xori": (create(arith.XOrIOp, (x, y), i64), arith.XOrIOp(x, y)),
        "divsi": (create(arith.DivSIOp, (x, y), i64), arith.DivSIOp(x, y)),
        "extui": (create(arith.ExtUIOp, (c,), i64), arith.ExtUIOp(c, i64)),
        "select": (create(arith.SelectOp, (c, x, y), i64), arith.SelectOp(c, x, y)),
        "cmpi_slt": (cmpi("slt", x, y), arith.CmpiOp(x, y, "slt")),
        "cmpi_sge": (cmpi("sge", x, y), arith.CmpiOp(x, y, "sge")),
    }
    ours, xdsl = ops[kind]
    _same(ours, xdsl)
    assert list(ours.properties) == list(xdsl.properties)


@pytest.mark.parametrize(
    "cls,at,swap",
    [
        (emitc.AddOp, 1, False),
        (emitc.AddOp, 0, False),
        (arith.AddiOp, 2, False),
        (emitc.AddOp, 1, True),
        (emitc.AddOp, 0, True),
    ],
)
def test_transplant_is_create_replace_and_remove(
    cls: type[emitc.AddOp] | type[arith.AddiOp], at: int, swap: bool
) -> None:
    """``transplant`` leaves what xDSL's ``Operation.create``, insertion
    before the op, ``replace_all_uses_with`` and ``detach`` + ``erase``
    leave: the same text, the new op's fields (its IRDL defaults, the
    attributes given after them, the source op's location), the same users
    of every value and consistent block and use links; the old op holds
    nothing. Its result's use list keeps its order, and so do its
    operands' with the same operands (xDSL's puts the new uses first); with
    other operands (``swap``: ``b, a``) their lists are xDSL's. The op
    replaced is the first op or one in the middle."""
    from xdsl.dialects.builtin import FileLineColLoc, IntAttr

    hint: dict[str, Attribute] = {"usmp.name": StringAttr("sum")}
    seen: list[tuple[str, dict[str, Any]]] = []
    for ours in (True, False):
        args = Block(arg_types=[i32, i32])
        a, b = args.args
        ops: list[Operation] = [arith.AddiOp(a, b), arith.MuliOp(a, b)]
        ops.append(arith.SubiOp(ops[0], ops[1]))
        ops.append(arith.AddiOp(ops[2], ops[at]))
        ops.append(arith.MuliOp(ops[at], ops[at]))
        ops.append(arith.SubiOp(a, ops[at]))  # a's use after the op's
        block = Block(ops)
        old = ops[at]
        where = StringAttr("m.tflite")
        old.location = FileLineColLoc(where, IntAttr(3), IntAttr(4))
        old.results[0].name_hint = "x"
        operands: list[SSAValue] = list(old.operands)
        result = old.results[0]
        if swap:
            operands = [b, a]
        uses_before = [[(u.operation, u.index) for u in v.uses] for v in (a, b)]
        if ours:
            new = transplant(old, cls, hint, operands if swap else None)
            assert result.owner is new and new.results[0] is result
            assert tuple(old.operands) == () and tuple(old.results) == ()
            assert old._operand_uses == ()  # pyright: ignore[reportPrivateUsage]
            for v, before in zip((a, b), uses_before, strict=True):
                after = [(u.operation, u.index) for u in v.uses]
                if not swap:
                    assert after == [(new if o is old else o, k) for o, k in before]
        else:
            new = _xdsl_create(cls, operands, i32)
            new.location = old.location
            new.attributes.update(hint)
            block.insert_op_before(new, old)
            result.replace_all_uses_with(new.results[0])
            old.detach()
            old.erase()
        assert old.parent is None and old.prev_op is old.next_op is None
        walked = list(block.ops)
        assert walked[at] is new and len(walked) == 6
        assert [o.prev_op for o in walked] == [None, *walked[:-1]]
        assert [o.next_op for o in walked] == [*walked[1:], None]
        assert (block.first_op, block.last_op) == (walked[0], walked[-1])
        users: list[list[tuple[int, int]]] = []
        for v in [a, b, *(r for o in walked for r in o.results)]:
            listed = list(v.uses)
            links = [u._prev_use for u in listed]  # pyright: ignore[reportPrivateUsage]
            assert links == [None, *listed][: len(listed)]
            assert all(u.operation.operands[u.index] is v for u in listed)
            users.append(sorted((walked.index(u.operation), u.index) for u in listed))
        for k, (v, use) in enumerate(zip(new.operands, new._operand_uses, strict=True)):  # pyright: ignore[reportPrivateUsage]
            assert (use.operation, use.index) == (new, k) and v is operands[k]
        fields = _fields(new)
        fields["uses"] = [k for _, k in fields["uses"]]
        values = [a, b, *(o.results[0] for o in walked)]
        fields["operands"] = [values.index(v) for v in fields["operands"]]
        fields["results"] = [(r.index, r.name_hint) for r in new.results]
        fields["parent"] = fields["parent"] is block
        fields["users"] = users
        if swap:  # in order: the new uses first, as xDSL's create puts them
            fields["argument uses"] = [
                [(walked.index(u.operation), u.index) for u in v.uses] for v in (a, b)
            ]
        text = StringIO()
        Printer(stream=text).print_block(block)
        seen.append((text.getvalue(), fields))
    assert seen[0][0] == seen[1][0]
    assert seen[0][1] == seen[1][1]
    if cls is arith.AddiOp:
        assert "overflowFlags" in seen[0][1]["properties"]
    assert seen[0][1]["attributes"] == hint


@pytest.mark.parametrize("size", [0, 1, 3])
def test_append_op_links_as_add_op(size: int) -> None:
    """``append_op`` leaves the block's order and links as ``Block.add_op``
    does, on an empty block and after one or more ops; an op with a region
    goes through xDSL's checked insertion; an op already in a block is
    refused."""
    from xdsl.dialects import scf

    orders: list[list[str]] = []
    for append in (append_op, Block.add_op):
        ops: list[Operation] = [
            arith.ConstantOp.from_int_and_width(k, i32) for k in range(size)
        ]
        block = Block(ops)
        new: list[Operation] = [
            arith.ConstantOp.from_int_and_width(7, i32),
            scf.ExecuteRegionOp([], Region(Block())),
            arith.ConstantOp.from_int_and_width(8, i32),
        ]
        for op in new:
            append(block, op)
        walked = list(block.ops)
        assert walked == [*ops, *new]
        _assert_linked(block, walked)
        orders.append([o.name for o in walked])
    assert orders[0] == orders[1]
    block, ops = _chain()
    with pytest.raises(ValueError, match="already"):
        append_op(block, ops[0])


def test_the_printer_reads_the_fields_behind_name_hint_and_the_unique_use() -> None:
    """The C printer's inlining analysis reads ``_name`` for ``name_hint``,
    and ``first_use``/``_next_use``/``_operation`` for ``get_unique_use``'s
    use and its ``operation``: the same, for values of no, one and two
    uses, named and not."""
    block, (c, s, t) = _chain()
    s.results[0].name_hint = "s"
    for op in (c, s, t):
        value = op.results[0]
        assert value._name == value.name_hint  # pyright: ignore[reportPrivateUsage]
        use = value.first_use
        unique = None if use is None or use._next_use is not None else use  # pyright: ignore[reportPrivateUsage]
        assert unique is value.get_unique_use()
        if unique is not None:
            assert unique._operation is unique.operation  # pyright: ignore[reportPrivateUsage]
    assert [op.results[0].get_unique_use() is None for op in (c, s, t)] == [
        True,
        False,
        True,
    ]
    assert s.results[0]._name == "s"  # pyright: ignore[reportPrivateUsage]


def test_field_reads_are_the_named_operands() -> None:
    """Where lower-ops, convert-to-emitc and the C printer unpack an op's
    operand and result fields instead of reading its named descriptors
    (a Python call and a match each), the fields hold the named values in
    that order, with nothing before or after them: relay's binary
    operators, memref.load/store, scf.for, arith.extsi/trunci,
    unrealized casts, emitc.assign and emitc.for (every subclass too)."""
    from xdsl.dialects import memref, scf
    from xdsl.dialects.builtin import IndexType, MemRefType, TensorType, i8, i32

    from usmp.dialects.relay_ops import BinaryElementwiseOp

    _load_every_dialect()  # their subclasses too

    def values(*types: Attribute) -> list[SSAValue]:
        return list(Block(arg_types=types).args)

    t = TensorType(i32, [2])
    m = MemRefType(i32, [2, 3])
    index = IndexType()

    def derived(cls: type) -> list[type]:
        return [cls, *(d for s in cls.__subclasses__() for d in derived(s))]

    binaries = [c for c in derived(BinaryElementwiseOp) if c is not BinaryElementwiseOp]
    assert binaries
    for cls in binaries:
        definition = cls.get_irdl_definition()
        assert [name for name, _ in definition.operands] == ["lhs", "rhs"], cls
        assert [name for name, _ in definition.results] == ["result"], cls
        op = cls.create(operands=values(t, t), result_types=[t])
        lhs, rhs = op._operands  # pyright: ignore[reportPrivateUsage]
        (result,) = op.results
        assert (lhs, rhs, result) == (op.lhs, op.rhs, op.result), cls

    mem, i, j = values(m, index, index)
    load = memref.LoadOp.get(mem, [i, j])
    memref_value, *indices = load._operands  # pyright: ignore[reportPrivateUsage]
    assert (memref_value, indices) == (load.memref, list(load.indices))

    (x,) = values(i32)
    store = memref.StoreOp.get(x, mem, [i, j])
    value, memref_value, *indices = store._operands  # pyright: ignore[reportPrivateUsage]
    assert (value, memref_value, indices) == (
        store.value,
        store.memref,
        list(store.indices),
    )

    lb, ub, step, init = values(index, index, index, i32)
    loop = scf.ForOp(lb, ub, step, [init], Block(arg_types=(index, i32)))
    (region,) = loop.regions
    assert region is loop.body
    *bounds, carried = loop._operands  # pyright: ignore[reportPrivateUsage]
    assert bounds == [loop.lb, loop.ub, loop.step]
    assert [carried] == list(loop.iter_args)
    assert list(loop.results) == list(loop.res)

    (narrow,) = values(i8)
    for op in (arith.ExtSIOp(narrow, i32), arith.TruncIOp(x, i8)):
        (operand,) = op._operands  # pyright: ignore[reportPrivateUsage]
        (result,) = op.results
        assert (operand, result) == (op.input, op.result)

    cast = UnrealizedConversionCastOp.get([x], [m])
    (source,) = cast._operands  # pyright: ignore[reportPrivateUsage]
    assert [source] == list(cast.inputs)

    (var,) = values(emitc.LValueType(i32))
    assign = emitc.AssignOp(var, x)
    assert tuple(assign._operands) == (assign.var, assign.value)  # pyright: ignore[reportPrivateUsage]

    body = Block(arg_types=(emitc.PtrDiffT(),))
    body.add_op(emitc.YieldOp())
    lb, ub, step = values(emitc.PtrDiffT(), emitc.PtrDiffT(), emitc.PtrDiffT())
    c_loop = emitc.ForOp(lb, ub, step, Region(body))
    assert tuple(c_loop._operands) == (  # pyright: ignore[reportPrivateUsage]
        c_loop.lowerBound,
        c_loop.upperBound,
        c_loop.step,
    )
    for cls in (memref.LoadOp, memref.StoreOp, scf.ForOp, emitc.AssignOp, emitc.ForOp):
        assert derived(cls) == [cls], cls


def test_shared_attributes_equal_the_constructors() -> None:
    """``loops.integer_attr`` and ``pointer_to`` build each attribute once
    for all kernels: equal to the constructor's, and the same object when
    asked again (what ``element_pointer``'s identity test relies on)."""
    from xdsl.dialects.builtin import IndexType, IntegerAttr, i8, i32

    from usmp.lowering.convert_to_emitc_common import TYPES, ConversionState, pointer_to
    from usmp.lowering.loops import integer_attr

    for value, type_ in ((3, i32), (-128, i8), (7, IndexType())):
        attr = integer_attr(value, type_)
        assert attr == IntegerAttr(value, type_)
        assert integer_attr(value, type_) is attr
    assert integer_attr(1, i32) != integer_attr(1, i8)
    pointer = pointer_to(i8)
    assert pointer == emitc.PointerType(i8)
    assert pointer_to(i8) is pointer
    assert ConversionState().pointer_type(i8) is pointer
    from xdsl.dialects.builtin import MemRefType

    assert TYPES.convert_type(MemRefType(i8, [4]), emitc.YieldOp()) is pointer


def _dead_code_function() -> Block:
    """A body whose dead values die in a chain across blocks: an unused sum
    of two constants; a loop whose body reads one constant into a dead
    product and stores another (live); a dead ``&x`` of a variable; a
    branch-free nest two loops deep whose inner dead sum uses the outer
    induction variable and a constant only it uses."""
    from xdsl.dialects.builtin import IndexType

    from usmp.lowering.convert_to_emitc_common import variable_op
    from usmp.lowering.create import create_with_regions

    index = emitc.PtrDiffT()

    def const(n: int, type_: Attribute = i32) -> Operation:
        width = IndexType() if type_ is index else cast(IntegerType, type_)
        attr = IntegerAttr(n, width)
        return create(emitc.ConstantOp, (), type_, value=attr)

    def loop(body: list[Operation], iv: Block) -> Operation:
        for op in body:
            iv.add_op(op)
        iv.add_op(emitc.YieldOp())
        return create_with_regions(emitc.ForOp, bounds, (), [Region(iv)])

    c1, c2, c3, c4 = const(1), const(2), const(3), const(4)
    lb, ub, step = const(0, index), const(8, index), const(1, index)
    bounds = [lb.results[0], ub.results[0], step.results[0]]
    lvalue = emitc.LValueType(i32)
    var = variable_op(lvalue)
    unused_sum = create(emitc.AddOp, (c1.results[0], c2.results[0]), i32)
    body = Block(arg_types=(index,))
    product = create(emitc.MulOp, (c3.results[0], c3.results[0]), i32)
    store = create(emitc.AssignOp, (var.results[0], c2.results[0]))
    first = loop([product, store], body)
    pointer = create(
        emitc.ApplyOp,
        (var.results[0],),
        emitc.PointerType(i32),
        applicableOperator=StringAttr("&"),
    )
    inner = Block(arg_types=(index,))
    outer = Block(arg_types=(index,))
    inner_sum = create(emitc.AddOp, (outer.args[0], c4.results[0]), index)
    nest = loop([loop([inner_sum], inner)], outer)
    ops = [c1, c2, c3, c4, lb, ub, step, var, unused_sum, first, pointer, nest]
    return Block(ops)


def test_erase_dead_values_follows_the_reversed_walk() -> None:
    """``erase_dead_values`` follows the links from each block's last op
    (an op's nested blocks before the op): it erases what erasing in the
    order of ``reversed(list(walk_ops(block)))`` erases, dead chains
    across blocks included, and leaves the same ops."""
    from usmp.lowering.convert_to_emitc import _dead, erase_dead_values
    from usmp.lowering.walk import walk_ops

    def text(block: Block) -> str:
        stream = StringIO()
        Printer(stream).print_block(block)
        return stream.getvalue()

    expected = _dead_code_function()
    for op in reversed(list(walk_ops(expected))):
        if _dead(op):
            op.detach()
            op.erase()
    block = _dead_code_function()
    before = len(list(walk_ops(block)))
    erase_dead_values(block)
    assert text(block) == text(expected)
    kept = [op.name for op in walk_ops(block)]
    assert len(kept) < before - 5
    assert "emitc.apply" not in kept and "emitc.mul" not in kept
    assert kept.count("emitc.constant") == 4  # c2 (stored), the bounds


def test_layouts_are_computed_once_per_type() -> None:
    """``ConversionState.layout`` is ``static_layout``, once per type
    object (an equal type built again is computed again: the key is its
    identity), and a dynamic layout is still the located error."""
    from xdsl.dialects.builtin import DYNAMIC_INDEX, MemRefType, StridedLayoutAttr, i8
    from xdsl.utils.exceptions import DiagnosticException

    from usmp.lowering.convert_to_emitc_common import ConversionState, static_layout

    at = emitc.YieldOp()
    state = ConversionState()
    for type_ in (
        MemRefType(i8, [2, 3]),
        MemRefType(i8, [2, 3], StridedLayoutAttr([8, 1], 5)),
    ):
        layout = state.layout(type_, at)
        assert layout == static_layout(type_, at)
        assert state.layout(type_, at) is layout
        again = MemRefType(i8, type_.get_shape(), type_.layout)
        assert state.layout(again, at) == layout
        assert state.layout(again, at) is not layout
    dynamic = MemRefType(i8, [DYNAMIC_INDEX, 3])
    with pytest.raises(DiagnosticException, match="dynamic shape"):
        state.layout(dynamic, at)


@pytest.mark.parametrize("n", [0, 1, 3])
def test_helper_call_is_the_constructor(n: int) -> None:
    """The helpers' calls (requantisation, DSP arithmetic) built with
    ``create`` equal ``emitc.CallOpaqueOp``'s, field by field (no ``args``
    or ``template_args``), and print the same; one callee per name."""
    from usmp.lowering.requant import helper_call

    args = list(Block(arg_types=[i32] * n).args)
    ours = helper_call("usmp_mbqm_right", args)
    theirs = emitc.CallOpaqueOp("usmp_mbqm_right", args, [i32])
    texts = []
    for op in (ours, theirs):
        text = StringIO()
        Printer(stream=text).print_op(op)
        texts.append(text.getvalue())
    assert texts[0] == texts[1]
    _same(ours, theirs)
    assert helper_call("usmp_mbqm_right", args).callee is ours.callee


@pytest.mark.parametrize("at", [0, 1, 2, None])
def test_insert_at_links_as_the_rewriter(at: int | None) -> None:
    """``insert_at`` leaves the block as ``Rewriter.insert_op`` does, before
    each op of the block and at its end (``at`` None), an op with a region
    included."""
    from xdsl.dialects import scf
    from xdsl.rewriter import InsertPoint, Rewriter

    orders: list[list[str]] = []
    for rewriter in (False, True):
        block, ops = _chain()
        point = InsertPoint.at_end(block) if at is None else InsertPoint.before(ops[at])
        new: list[Operation] = [
            arith.ConstantOp.from_int_and_width(7, i32),
            scf.ExecuteRegionOp([], Region(Block())),
        ]
        for op in new:
            if rewriter:
                Rewriter.insert_op(op, point)
            else:
                insert_at(point, op)
        walked = list(block.ops)
        k = len(ops) if at is None else at
        assert walked == [*ops[:k], *new, *ops[k:]]
        _assert_linked(block, walked)
        orders.append([o.name for o in walked])
    assert orders[0] == orders[1]


def test_element_types_are_found_once_per_type() -> None:
    """``ConversionState.element_types``: the pointer to the element type
    (``pointer_to``'s) and its lvalue, once per type object, and the type
    errors of ``convert_scalar_type``."""
    from xdsl.dialects.builtin import Float16Type, MemRefType, i8
    from xdsl.utils.exceptions import DiagnosticException

    from usmp.lowering.convert_to_emitc_common import ConversionState, pointer_to

    at = emitc.YieldOp()
    state = ConversionState()
    for element in (i8, i32):
        type_ = MemRefType(element, [2, 3])
        pointer, lvalue = state.element_types(type_, at)
        assert pointer is pointer_to(element)
        assert lvalue == emitc.LValueType(element)
        assert state.element_types(type_, at)[1] is lvalue
        again = MemRefType(element, [2, 3])
        assert state.element_types(again, at) == (pointer, lvalue)
    with pytest.raises(DiagnosticException, match="no C99 equivalent"):
        state.element_types(MemRefType(Float16Type(), [2]), at)
