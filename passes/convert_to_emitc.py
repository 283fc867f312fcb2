"""``convert-to-emitc``: lower a planned program to MLIR 22's ``emitc`` dialect.

What it does
    Rewrites every ``func.func`` into an ``emitc.func`` whose body holds only
    emitc ops, and every ``memref.global`` into an ``emitc.global`` (one
    rewrite pattern per source op and a type converter, as MLIR's
    ``*ToEmitC``; see ``lowering/convert_to_emitc.py``); the module
    is then a C program that ``usmp-opt -t c`` prints as C99 and that
    ``mlir-translate --mlir-to-cpp`` (MLIR 22) also accepts. Unlike MLIR's
    own ``convert-to-emitc`` it lowers ``memref.view`` (pool offsets) and
    static ``memref.alloc``/``alloca`` (local arrays), adds the includes the
    code needs, and keeps TVM's interface facts (``tir.main``,
    ``tir.input_names``, ``tir.output_names``, ``tir.pool_args``) on the
    functions.

Requires
    The output of ``usmp`` (or any module of the same form): prim funcs whose
    bodies use ``scf.for``/``scf.if``, ``arith``, ``math``, ``memref``
    (load/store/view/copy/subview/reshapes/get_global) and ``tir.call``
    (``unpacked``: a C call; ``cpacked``/``packed``: TVM's packed calling
    conventions, ``lowering/convert_to_emitc_packed.py``, the callee taking
    the packed signature and the caller returning the first non-zero status);
    pools as trailing ``memref<Nxi8>`` arguments named in
    ``tir.pool_args`` and described in the module's ``tir.pools``; constant
    pool data in ``memref.global "private" constant @<pool>``. Static shapes
    only. A ``tir.allocate``/``tir.allocate_const`` left over (usmp not run),
    a dynamically sized buffer, a packed call passing a non-buffer or a
    function called both packed and cpacked, or an op without a C form is a
    located error.

IR afterwards
    ``emitc.include`` of ``stdbool.h``/``stddef.h``/``stdint.h`` (plus
    ``string.h``/``math.h`` when used), then the globals and functions in
    their original order. Types: ``index`` -> ``!emitc.ptrdiff_t``; memref ->
    ``!emitc.ptr<elem>`` (argument attribute ``usmp.memref`` keeps the memref
    type); workspace pool -> ``!emitc.ptr<ui8>``; constant pool ->
    ``!emitc.ptr<!emitc.opaque<"const uint8_t">>``. The module attribute
    ``tir.pools`` becomes ``usmp.pools`` (builtin dictionaries: name, kind,
    size, alignment) and the constant pool global carries ``usmp.pool`` and
    ``usmp.alignment``, so no ``tir`` attribute value is left for MLIR tools
    to choke on.

Idempotence
    A converted module has no ``func.func``/``memref.global``/``tir.pools``
    left; running the pass again changes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from usmp.dialects.tir import POOLS
from usmp.lowering.convert_to_emitc import convert_module


def needs_conversion(module: ModuleOp) -> bool:
    """Whether ``module`` still holds anything convert-to-emitc rewrites
    (a top-level op outside emitc, or the ``tir.pools`` attribute)."""
    all_emitc = all(op.dialect_name() == "emitc" for op in module.ops)
    return not all_emitc or POOLS in module.attributes


@dataclass(frozen=True)
class ConvertToEmitcPass(ModulePass):
    """Lower functions, globals and pools of a planned module to emitc."""

    name = "convert-to-emitc"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if needs_conversion(op):
            convert_module(op)
