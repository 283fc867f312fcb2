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

Option
    ``user_pools``: the pools the application provides (the USMP RFC's
    U2/U3; ``usmp-compile`` names the pools of its ``--usmp-*-pools`` flags
    unless ``--library-pools``): their ``usmp.pools`` entries get ``user =
    true`` and the library (``usmp-opt -t c-library``, ``usmp-compile``)
    takes them in ``TVMWorkspaces_<m>``/``TVMParameters_<m>`` instead of
    defining them. A named pool the plan left empty (the entry function
    does not take it) is not part of the interface; a name that is no pool
    of the module is an error. ``-t c`` (one translation unit) and the
    ``usmp.library`` ops for ``mlir-translate`` stay U1.

Option
    ``profile``: wrap every operator call of the entry function in calls of
    the weak hooks ``tvmgen_<m>_profile_begin/end(op_index)`` and give the
    library a table of the operators (``usmp-compile --profile``; see
    ``lowering/profile.py``). Off (the default), the C is unchanged.

Idempotence
    A converted module has no ``func.func``/``memref.global``/``tir.pools``
    left; running the pass again changes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import (
    ArrayAttr,
    BoolAttr,
    DictionaryAttr,
    ModuleOp,
    StringAttr,
)
from xdsl.ir import Attribute
from xdsl.passes import ModulePass

from usmp.diagnostics import located_error
from usmp.dialects import emitc, tir
from usmp.dialects.tir import POOLS
from usmp.lowering.convert_to_emitc import POOLS_ATTR, convert_module
from usmp.lowering.convert_to_emitc_common import USER_POOL_KEY
from usmp.lowering.profile import insert_profile_hooks
from usmp.passes.progress import report


def needs_conversion(module: ModuleOp) -> bool:
    """Whether ``module`` still holds anything convert-to-emitc rewrites
    (a top-level op outside emitc, or the ``tir.pools`` attribute)."""
    all_emitc = all(op.dialect_name() == "emitc" for op in module.ops)
    return not all_emitc or POOLS in module.attributes


@dataclass(frozen=True)
class ConvertToEmitcPass(ModulePass):
    """Lower functions, globals and pools of a planned module to emitc."""

    name = "convert-to-emitc"

    user_pools: tuple[str, ...] = ()
    """Pools the application provides (U2/U3); the others the library defines."""

    profile: bool = False
    """Call the profile hooks around every operator call (lowering/profile.py)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if needs_conversion(op):
            if self.profile:
                insert_profile_hooks(op)
            convert_module(op, lambda k, n, name: report("conversion", k, n, name))
        if self.user_pools:
            mark_user_pools(op, self.user_pools)


def mark_user_pools(module: ModuleOp, names: tuple[str, ...]) -> None:
    """Mark the ``usmp.pools`` entries of ``names`` that the entry function
    takes as provided by the application (the pass option)."""
    pools = module.attributes.get(POOLS_ATTR)
    entries: list[DictionaryAttr] = []
    if isinstance(pools, ArrayAttr):
        entries = [e for e in pools.data if isinstance(e, DictionaryAttr)]
    known = [_string(e.data.get("name")) for e in entries]
    unknown = [n for n in names if n not in known]
    if unknown:
        raise located_error(
            module,
            f"convert-to-emitc: user pool(s) {', '.join(unknown)} are not pools of "
            f"the module (pools: {', '.join(known) or 'none'})",
        )
    taken: set[str] = set()
    for f in module.ops:
        if isinstance(f, emitc.FuncOp) and tir.MAIN_FUNC in f.attributes:
            args = f.attributes.get(tir.POOL_ARGS)
            if isinstance(args, ArrayAttr):
                taken.update(_string(a) for a in args.data)
    module.attributes[POOLS_ATTR] = ArrayAttr(
        DictionaryAttr({**e.data, USER_POOL_KEY: BoolAttr.from_bool(True)})
        if name in names and name in taken
        else e
        for e, name in zip(entries, known, strict=True)
    )


def _string(attr: Attribute | None) -> str:
    return attr.data if isinstance(attr, StringAttr) else ""
