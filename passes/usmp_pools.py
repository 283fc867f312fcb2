"""Memory pools of ``usmp``: where they come from and who may use them.

Not a pass: the helpers the ``usmp-*`` passes share to resolve the ordered
list of ``#tir.pool_info`` a module is planned against.

Pools come, in order of precedence, from

1. a pass option ``pools="..."`` (syntax below),
2. the module attribute ``tir.pools`` (an ``ArrayAttr`` of ``#tir.pool_info``),
3. the defaults: one unbounded workspace pool ``global_workspace`` and one
   unbounded constant pool ``global_const`` (alignment 16, accessible by the
   host target ``c`` and every other target the module's functions run on),
   and, for a module with state (``tir.allocate_state``), one unbounded
   persistent pool ``global_state``.

If the given pools have no workspace pool (or no constant pool, or no
persistent pool when the module has state), the default one of that kind is
appended, so a model with weights always has somewhere to put them.

Option syntax (the RFC's ``--usmp-workspace-pools`` / ``--usmp-parameter-pools``
in one string)::

    pools := pool ("," pool)*
    pool  := NAME ":" KIND [":" SIZE] (":" KEY "=" VALUE)*
    KIND  := "workspace" | "constant" | "persistent"
    SIZE  := bytes, 0 = unbounded (also accepted as size=N)
    KEY   := "size" | "align" | "access"
    access=TARGET/MODE("+"TARGET/MODE)*   MODE := rw | ro

    e.g. pools="dtcm:workspace:1000,sram:workspace,flash:constant:access=c/ro+npu/ro"

Omitted fields: size unbounded, align 16, access ``c/rw`` for a workspace pool
and ``c/ro`` for a constant pool. The order given is the fallback order: a
buffer goes to its first candidate pool that has room.

Target access: a workspace buffer may only go to a pool every target that
touches it can read *and write* (``rw``); a constant only to a pool those
targets can read (``ro`` or ``rw``). A function's target is its ``tir.target``
string attribute (default ``c``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from xdsl.dialects.builtin import ArrayAttr, ModuleOp, StringAttr
from xdsl.dialects.func import FuncOp

from usmp.dialects.tir import (
    ACCESS_KINDS,
    POOL_KINDS,
    POOLS,
    AccessMode,
    AllocateStateOp,
    PoolInfoAttr,
    PoolKind,
)
from usmp.dialects.tir import TARGET as TARGET_ATTR
from usmp.passes.usmp_ir import ModuleOps

DEFAULT_TARGET = "c"
DEFAULT_WORKSPACE_POOL = "global_workspace"
DEFAULT_CONSTANT_POOL = "global_const"
DEFAULT_PERSISTENT_POOL = "global_state"
DEFAULT_ALIGNMENT = 16

POOLS_SYNTAX = (
    "NAME:KIND[:SIZE][:align=N][:access=TARGET/rw|ro+...], comma separated; "
    "KIND is workspace, constant or persistent, SIZE in bytes (0 = unbounded); e.g. "
    '"sram:workspace:65536,flash:constant"'
)

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
POOL_NAME_SYNTAX = (
    "a pool name is a C identifier: a letter or '_', then letters, digits or "
    "'_' (it names the pool's C array, struct field and macros)"
)


def case_clash(name: str, seen: Iterable[str]) -> str | None:
    """A name in ``seen`` that differs from ``name`` only in letter case (the
    pools' macros ``TVM_<MODEL>_<POOL>_...`` would be one name)."""
    return next((s for s in seen if s != name and s.upper() == name.upper()), None)


class PoolSpecError(ValueError):
    """A ``pools`` option that does not follow ``POOLS_SYNTAX``."""


def parse_pools_option(text: str) -> list[PoolInfoAttr]:
    """Parse the ``pools`` option string into ordered ``#tir.pool_info``s.

    Raises ``PoolSpecError`` whose message ends with the accepted syntax."""
    try:
        return _parse_pools(text)
    except PoolSpecError as e:
        raise PoolSpecError(
            f"bad pools option: {e}; accepted: {POOLS_SYNTAX}"
        ) from None


def _parse_pools(text: str) -> list[PoolInfoAttr]:
    pools: list[PoolInfoAttr] = []
    seen: set[str] = set()
    items = [item.strip() for item in text.split(",")]
    if not text.strip() or any(not item for item in items):
        raise PoolSpecError(f"'{text}' has an empty entry")
    for item in items:
        fields = [f.strip() for f in item.split(":")]
        if len(fields) < 2:
            raise PoolSpecError(f"pool '{item}': missing kind")
        name, kind, *rest = fields
        if not _NAME.fullmatch(name):
            raise PoolSpecError(
                f"pool '{item}': '{name}' is not a valid pool name; {POOL_NAME_SYNTAX}"
            )
        if name in seen:
            raise PoolSpecError(f"pool '{name}' is given twice")
        if (other := case_clash(name, seen)) is not None:
            raise PoolSpecError(
                f"pools '{other}' and '{name}' differ only in letter case; their "
                "C macros (TVM_<MODEL>_<POOL>_..._BUFFER_SIZE) would be one name"
            )
        seen.add(name)
        if kind not in POOL_KINDS:
            raise PoolSpecError(
                f"pool '{name}': kind '{kind}' is not one of {', '.join(POOL_KINDS)}"
            )
        size, align = 0, DEFAULT_ALIGNMENT
        access: list[tuple[str, AccessMode]] | None = None
        for position, field in enumerate(rest):
            key, eq, value = field.partition("=")
            if not eq:
                if position != 0:
                    raise PoolSpecError(
                        f"pool '{name}': '{field}' is not KEY=VALUE (size, align or "
                        "access); only the size may be given bare, right after the kind"
                    )
                key, value = "size", field
            if key == "size":
                size = _parse_int(name, key, value)
            elif key == "align":
                align = _parse_int(name, key, value)
                if align <= 0 or align & (align - 1):
                    raise PoolSpecError(
                        f"pool '{name}': align={value} is not a positive power of two"
                    )
            elif key == "access":
                access = _parse_access(name, value)
            else:
                raise PoolSpecError(
                    f"pool '{name}': unknown key '{key}' "
                    "(expected size, align or access)"
                )
        if access is None:
            access = [(DEFAULT_TARGET, default_access(PoolKind(kind)))]
        pools.append(PoolInfoAttr(name, kind, size, align, access))
    return pools


def _parse_int(pool: str, key: str, value: str) -> int:
    if not (value.isascii() and value.isdigit()):
        raise PoolSpecError(
            f"pool '{pool}': {key} '{value}' is not a non-negative integer (bytes)"
        )
    return int(value)


def _parse_access(pool: str, value: str) -> list[tuple[str, AccessMode]]:
    entries: list[tuple[str, AccessMode]] = []
    for entry in value.split("+"):
        target, slash, mode = entry.partition("/")
        if not slash or not target or mode not in ACCESS_KINDS:
            raise PoolSpecError(
                f"pool '{pool}': access entry '{entry}' is not TARGET/MODE with MODE "
                f"one of {', '.join(ACCESS_KINDS)} (e.g. access=c/rw+npu/ro)"
            )
        entries.append((target, AccessMode(mode)))
    return entries


def default_access(kind: PoolKind) -> AccessMode:
    """The host target's access to a pool of ``kind`` when none is given."""
    return AccessMode.RO if kind is PoolKind.CONSTANT else AccessMode.RW


def default_pool(
    kind: PoolKind, targets: Sequence[str] = (DEFAULT_TARGET,)
) -> PoolInfoAttr:
    """The default pool of ``kind``, accessible by every target in
    ``targets`` (TVM's default pools serve every target of the module)."""
    name = {
        PoolKind.WORKSPACE: DEFAULT_WORKSPACE_POOL,
        PoolKind.CONSTANT: DEFAULT_CONSTANT_POOL,
        PoolKind.PERSISTENT: DEFAULT_PERSISTENT_POOL,
    }[kind]
    return PoolInfoAttr(
        name, kind, 0, DEFAULT_ALIGNMENT, [(t, default_access(kind)) for t in targets]
    )


def module_targets(module: ModuleOp, ops: ModuleOps | None = None) -> list[str]:
    """The host target ``c``, then every other target that runs a function of
    ``module`` (a function's ``tir.target``, a call's virtual device), in
    order of appearance (``ops``: ``ModuleOps.of(module)`` if the caller
    has it)."""
    from usmp.dialects.device import VirtualDeviceAttr
    from usmp.dialects.tir import VIRTUAL_DEVICE

    targets = [DEFAULT_TARGET]
    for op in (ops or ModuleOps.of(module)).placed:
        target = None
        if isinstance(op, FuncOp):
            target = op.attributes.get(TARGET_ATTR)
            target = target.data if isinstance(target, StringAttr) else None
        elif isinstance(device := op.attributes.get(VIRTUAL_DEVICE), VirtualDeviceAttr):
            target = device.target.data or None
        if target is not None and target not in targets:
            targets.append(target)
    return targets


def resolve_pools(
    module: ModuleOp, option: str | None, ops: ModuleOps | None = None
) -> list[PoolInfoAttr]:
    """The ordered pools to plan ``module`` against (option > attr > defaults;
    ``ops``: ``ModuleOps.of(module)`` if the caller has it).

    Raises ``PoolSpecError`` for a malformed option."""
    if option:
        pools = parse_pools_option(option)
    else:
        attr = module.attributes.get(POOLS)
        pools = list(attr) if isinstance(attr, ArrayAttr) else []  # pyright: ignore
        pools = [p for p in pools if isinstance(p, PoolInfoAttr)]
    names = {p.pool_name.data for p in pools}
    kinds = [PoolKind.WORKSPACE, PoolKind.CONSTANT]
    ops = ops or ModuleOps.of(module)
    if any(isinstance(op, AllocateStateOp) for op in ops.allocations):
        kinds.append(PoolKind.PERSISTENT)
    targets: list[str] | None = None
    for kind in kinds:
        if not any(p.kind.data is kind for p in pools):
            targets = targets or module_targets(module, ops)
            default = default_pool(kind, targets)
            if default.pool_name.data not in names:
                pools.append(default)
    return pools


def module_pools(module: ModuleOp) -> list[PoolInfoAttr]:
    """The pools recorded on ``module`` (``tir.pools``), in order."""
    attr = module.attributes.get(POOLS)
    if not isinstance(attr, ArrayAttr):
        return []
    return [p for p in attr if isinstance(p, PoolInfoAttr)]  # pyright: ignore


def set_module_pools(module: ModuleOp, pools: Iterable[PoolInfoAttr]) -> None:
    module.attributes[POOLS] = ArrayAttr(list(pools))


def with_size(pool: PoolInfoAttr, size: int) -> PoolInfoAttr:
    """``pool`` with its ``size`` replaced (the planned size)."""
    return PoolInfoAttr(
        pool.pool_name.data,
        pool.kind.data,
        size,
        pool.alignment.data,
        list(pool.access_map().items()),
    )


def function_target(func: FuncOp) -> str:
    attr = func.attributes.get(TARGET_ATTR)
    return attr.data if isinstance(attr, StringAttr) else DEFAULT_TARGET


def can_hold(pool: PoolInfoAttr, kind: str, targets: Iterable[str]) -> bool:
    """May a buffer of ``kind`` touched by ``targets`` live in ``pool``?"""
    if pool.kind.data != kind:
        return False
    access = pool.access_map()
    if pool.kind.data is not PoolKind.CONSTANT:
        return all(access.get(t) is AccessMode.RW for t in targets)
    return all(t in access for t in targets)


def describe_pool(pool: PoolInfoAttr) -> str:
    limit = pool.size.data
    access = ", ".join(f"{t}/{a}" for t, a in pool.access_map().items()) or "none"
    return (
        f"'{pool.pool_name.data}' ({pool.kind.data}, "
        f"{'unbounded' if not limit else f'{limit} B'}, access {access})"
    )


def ordered_for_arguments(
    pools: Sequence[PoolInfoAttr], used: Iterable[str]
) -> list[str]:
    """Names of the ``used`` pools in argument order: workspace pools, then
    persistent pools, then constant pools, each in the order of ``pools``."""
    used = set(used)
    names = [
        p.pool_name.data
        for kind in (PoolKind.WORKSPACE, PoolKind.PERSISTENT, PoolKind.CONSTANT)
        for p in pools
        if p.kind.data is kind
    ]
    return [n for n in names if n in used]
