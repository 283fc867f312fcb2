"""O(1) symbol lookups for the call verifiers of ``relay.call`` and ``tir.call``.

xDSL's ``SymbolTable.lookup_symbol`` scans the symbol table's block, so
verifying every call of a module with thousands of functions that way is
quadratic, and the module is verified around every pass. ``lookup_symbol``
below answers from one ``name -> op`` index per symbol-table op instead.

The index is a side table (``_INDEX``) keyed weakly by the symbol-table op:
nothing is stored on the IR, and a module that is no longer referenced drops
its index with it (the index refers to the symbols through weak references,
so it never keeps its own key alive). It is a cache, never a source of
truth: a hit is used only if the op found is still a direct child of that
table and still carries that name; on a miss or a stale hit the index is
rebuilt (one scan) and consulted again. IR edits therefore need no
invalidation, and a lookup costs O(1) except right after the table changed.
"""

from __future__ import annotations

from collections.abc import Sequence
from weakref import ReferenceType, WeakKeyDictionary, ref

from xdsl.dialects import func
from xdsl.dialects.builtin import StringAttr, SymbolRefAttr
from xdsl.ir import Attribute, Block, Operation
from xdsl.traits import SymbolTable
from xdsl.utils.exceptions import VerifyException

_INDEX: WeakKeyDictionary[Operation, dict[str, ReferenceType[Operation]]] = (
    WeakKeyDictionary()
)
"""Per symbol-table op: its symbols by name (first definition wins, as in
``SymbolTable.lookup_symbol``). See the module docstring."""


def _symbol_name(op: Operation) -> str | None:
    name = op.get_attr_or_prop("sym_name")
    return name.data if isinstance(name, StringAttr) else None


def _table_block(table: Operation) -> Block | None:
    if len(table.regions) != 1 or len(table.regions[0].blocks) != 1:
        return None  # malformed; the SymbolTable verifier reports it
    return table.regions[0].blocks[0]


def _rebuild(table: Operation, block: Block) -> dict[str, ReferenceType[Operation]]:
    index: dict[str, ReferenceType[Operation]] = {}
    for op in block.ops:
        if (name := _symbol_name(op)) is not None:
            index.setdefault(name, ref(op))
    _INDEX[table] = index
    return index


def lookup_symbol(op: Operation, name: str) -> Operation | None:
    """The op defining symbol ``name`` in the symbol table closest to ``op``
    (``op`` itself excluded), or None. O(1) when the table has not changed
    since the last lookup in it."""
    table = op.parent_op()
    while table is not None and not table.has_trait(SymbolTable):
        table = table.parent_op()
    if table is None or (block := _table_block(table)) is None:
        return None
    index = _INDEX.get(table)
    if index is not None and (entry := index.get(name)) is not None:
        found = entry()
        if found is not None and found.parent is block and _symbol_name(found) == name:
            return found
    found_ref = _rebuild(table, block).get(name)
    return None if found_ref is None else found_ref()


def lookup_function(op: Operation, callee: SymbolRefAttr) -> func.FuncOp:
    """The ``func.func`` ``op`` calls, or a ``VerifyException`` naming what is
    wrong (no such symbol, or a symbol that is not a function)."""
    name = callee.string_value()
    found = lookup_symbol(op, name)
    if found is None:
        raise VerifyException(
            f"{op.name} to @{name}, which is not a function of the module"
        )
    if not isinstance(found, func.FuncOp):
        raise VerifyException(
            f"{op.name} to @{name}, which is a '{found.name}', not a func.func"
        )
    return found


def type_list(types: Sequence[Attribute]) -> str:
    """``(t1, t2)``, for messages."""
    return "(" + ", ".join(str(t) for t in types) + ")"
