"""``usmp_convert_pool_allocations.view_ops`` builds the ops xDSL's
constructors build: same fields, same text, verified."""

from __future__ import annotations

from io import StringIO

from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import IndexType, IntegerAttr, MemRefType, i8, i32
from xdsl.ir import Block, Operation
from xdsl.printer import Printer

from usmp.passes.usmp_convert_pool_allocations import view_ops


def _fields(op: Operation) -> dict[str, object]:
    return {
        "class": type(op),
        "operands": list(op.operands),
        "result_types": [r.type for r in op.results],
        "properties": list(op.properties.items()),
        "attributes": list(op.attributes.items()),
        "regions": len(op.regions),
        "successors": list(op.successors),
    }


def _text(ops: tuple[Operation, ...]) -> str:
    block = Block(arg_types=[MemRefType(i8, [4096])])
    stream = StringIO()
    for op in ops:
        op.verify()
        Printer(stream=stream).print_op(op)
    del block
    return stream.getvalue()


def test_view_ops_are_the_constructors_ops() -> None:
    pool = Block(arg_types=[MemRefType(i8, [4096])]).args[0]
    for offset, type_ in ((0, MemRefType(i8, [16])), (96, MemRefType(i32, [2, 8]))):
        ours = view_ops(pool, offset, type_)
        off = arith.ConstantOp(IntegerAttr(offset, IndexType()))
        xdsl = (off, memref.ViewOp(pool, off, [], type_))
        assert _fields(ours[0]) == _fields(xdsl[0])
        assert _fields(ours[1])["operands"] == [pool, ours[0].result]
        for a, b in zip(ours, xdsl, strict=True):
            fa, fb = _fields(a), _fields(b)
            del fa["operands"], fb["operands"]
            assert fa == fb
        assert _text(ours) == _text(xdsl)
        assert [u.operation for u in ours[0].result.uses] == [ours[1]]
