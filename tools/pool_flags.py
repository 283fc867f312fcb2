"""The USMP RFC's tvmc pool flags, as ``usmp-compile`` accepts them.

    --usmp-workspace-pools=sram,dtcm      workspace pools, in fallback order
    --usmp-parameter-pools=flash          parameter (constant) pools, in order
    --usmp-persistent-pools=state         persistent pools (a model's state), in order
    --usmp-workspace-pool-NAME=SPEC       one per listed pool, optional
    --usmp-parameter-pool-NAME=SPEC
    --usmp-persistent-pool-NAME=SPEC

    SPEC := ITEM (";" ITEM)*
    ITEM := "target=" TARGET[":rw"|":ro"] ("," TARGET[":rw"|":ro"])*
          | "size=" BYTES                 0 = unbounded (the default)
          | "align=" BYTES                a power of two

Targets default to ``c``, a workspace pool's access to ``rw`` and a
parameter pool's to ``ro``; alignment defaults to ``--workspace-byte-alignment``
/ ``--constant-byte-alignment`` (themselves defaulting to usmp's
``DEFAULT_ALIGNMENT``). The pools become the module's ``tir.pools``
(``#tir.pool_info``, see ``usmp.dialects.tir``) before ``usmp`` runs.

Plain Python apart from :func:`pool_info_attrs`: every problem is a
:class:`PoolFlagError` whose message names the flag and what it accepts.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from usmp.dialects.limits import MAX_BUFFER_BYTES, alignment_error
from usmp.dialects.tir import AccessMode, PoolInfoAttr, PoolKind
from usmp.passes.usmp_pools import (
    DEFAULT_ALIGNMENT,
    DEFAULT_CONSTANT_POOL,
    DEFAULT_WORKSPACE_POOL,
    POOL_NAME_SYNTAX,
    case_clash,
    default_access,
)

C_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

_POOL_FLAG = re.compile(r"--usmp-(workspace|parameter|persistent)-pool-(.+)")
_POOL_KEYS = ("target", "size", "align")

PoolSpecs = dict[tuple[str, str], str]
"""Per-pool SPEC strings by (``workspace`` | ``parameter``, pool name)."""


class PoolFlagError(Exception):
    """A pool flag that does not follow the syntax above."""


@dataclass(frozen=True)
class PoolFlag:
    """One pool of the command line, in the terms of ``#tir.pool_info``."""

    name: str
    kind: PoolKind
    size: int
    """Bytes; 0 = unbounded."""
    alignment: int
    access: tuple[tuple[str, AccessMode], ...]
    """(target, access) pairs."""


def is_power_of_two(value: int) -> bool:
    return value > 0 and not value & (value - 1)


def split_pool_flags(argv: Sequence[str]) -> tuple[list[str], PoolSpecs]:
    """Take ``--usmp-{workspace,parameter}-pool-NAME[=]SPEC`` out of ``argv``
    (their names are open-ended, which argparse cannot declare): the other
    arguments, and the SPECs by (flag kind, pool name)."""
    rest: list[str] = []
    specs: PoolSpecs = {}
    items = list(argv)
    i = 0
    while i < len(items):
        flag, eq, value = items[i].partition("=")
        match = _POOL_FLAG.fullmatch(flag)
        if match is None:
            rest.append(items[i])
            i += 1
            continue
        if not eq:
            if i + 1 >= len(items):
                raise PoolFlagError(
                    f'{flag} needs a value (e.g. "target=c;size=65536")'
                )
            value = items[i + 1]
            i += 1
        if not C_IDENTIFIER.fullmatch(match.group(2)):
            raise PoolFlagError(
                f"{flag}: '{match.group(2)}' is not a valid pool name; "
                f"{POOL_NAME_SYNTAX}"
            )
        key = (match.group(1), match.group(2))
        if key in specs:
            raise PoolFlagError(f"{flag} is given twice")
        specs[key] = value
        i += 1
    return rest, specs


def parse_pool_flags(
    workspace_pools: str | None,
    parameter_pools: str | None,
    specs: PoolSpecs,
    workspace_alignment: int,
    constant_alignment: int,
    persistent_pools: str | None = None,
) -> list[PoolFlag]:
    """The RFC's pool flags as ordered pools (workspace pools first, then
    parameter pools, then persistent pools)."""
    pools: list[PoolFlag] = []
    listed: dict[str, str] = {}
    for flag_kind, names in (
        ("workspace", workspace_pools),
        ("parameter", parameter_pools),
        ("persistent", persistent_pools),
    ):
        for name in _names(names, flag_kind):
            if name in listed:
                raise PoolFlagError(f"pool '{name}' is listed twice")
            if (other := case_clash(name, listed)) is not None:
                raise PoolFlagError(
                    f"pools '{other}' and '{name}' differ only in letter case; "
                    "their C macros (TVM_<MODEL>_<POOL>_..._BUFFER_SIZE) would be "
                    "one name"
                )
            listed[name] = flag_kind
            spec = specs.get((flag_kind, name), "")
            kind = {
                "workspace": PoolKind.WORKSPACE,
                "parameter": PoolKind.CONSTANT,
                "persistent": PoolKind.PERSISTENT,
            }[flag_kind]
            default_align = (
                constant_alignment if kind is PoolKind.CONSTANT else workspace_alignment
            )
            pools.append(_pool(name, kind, spec, default_align))
    for flag_kind, name in specs:
        if listed.get(name) != flag_kind:
            valid = [n for n, k in listed.items() if k == flag_kind]
            raise PoolFlagError(
                f"--usmp-{flag_kind}-pool-{name}: '{name}' is not in "
                f"--usmp-{flag_kind}-pools (listed: {', '.join(valid) or 'none'})"
            )
    return pools


def with_default_alignment(
    pools: list[PoolFlag], workspace_alignment: int, constant_alignment: int
) -> list[PoolFlag]:
    """Without pool flags, non-default alignments still apply: to usmp's
    default pools, made explicit."""
    alignments = (workspace_alignment, constant_alignment)
    if pools or alignments == (DEFAULT_ALIGNMENT, DEFAULT_ALIGNMENT):
        return pools
    return [
        PoolFlag(
            DEFAULT_WORKSPACE_POOL,
            PoolKind.WORKSPACE,
            0,
            workspace_alignment,
            (("c", AccessMode.RW),),
        ),
        PoolFlag(
            DEFAULT_CONSTANT_POOL,
            PoolKind.CONSTANT,
            0,
            constant_alignment,
            (("c", AccessMode.RO),),
        ),
    ]


def pool_info_attrs(pools: Sequence[PoolFlag]) -> list[PoolInfoAttr]:
    """The pools as the module attribute ``tir.pools`` holds them."""
    return [PoolInfoAttr(p.name, p.kind, p.size, p.alignment, p.access) for p in pools]


def _names(text: str | None, flag_kind: str) -> list[str]:
    if text is None:
        return []
    names = [n.strip() for n in text.split(",")]
    for n in names:
        if not C_IDENTIFIER.fullmatch(n):
            raise PoolFlagError(
                f"--usmp-{flag_kind}-pools: '{n}' is not a valid pool name; "
                f"{POOL_NAME_SYNTAX}"
            )
    return names


def _pool(name: str, kind: PoolKind, spec: str, alignment: int) -> PoolFlag:
    size = 0
    default_mode = default_access(kind)
    access: list[tuple[str, AccessMode]] = [("c", default_mode)]
    where = f"pool '{name}'"
    for item in filter(None, (s.strip() for s in spec.split(";"))):
        key, eq, value = item.partition("=")
        key = key.strip()
        if not eq or key not in _POOL_KEYS:
            raise PoolFlagError(
                f"{where}: '{item}' is not KEY=VALUE with KEY one of "
                f'{", ".join(_POOL_KEYS)} (e.g. "target=c:rw;size=65536;align=16")'
            )
        value = value.strip()
        if key == "target":
            access = [_access(entry, default_mode, where) for entry in value.split(",")]
        elif not (value.isascii() and value.isdigit()):
            raise PoolFlagError(f"{where}: {key}='{value}' is not a number of bytes")
        elif key == "size":
            size = int(value)
        else:
            alignment = int(value)
    if (error := alignment_error(alignment)) is not None:
        raise PoolFlagError(f"{where}: {error}")
    if size > MAX_BUFFER_BYTES:
        raise PoolFlagError(
            f"{where}: size={size} is larger than the generated C can index; "
            f"expected at most {MAX_BUFFER_BYTES} bytes (0 = unbounded)"
        )
    return PoolFlag(name, kind, size, alignment, tuple(access))


def _access(entry: str, default_mode: AccessMode, where: str) -> tuple[str, AccessMode]:
    """``TARGET[:rw|:ro]`` as (target, mode)."""
    target, colon, mode = entry.strip().partition(":")
    mode = mode if colon else default_mode
    if not target or mode not in tuple(AccessMode):
        raise PoolFlagError(f"{where}: target entry '{entry}' is not TARGET[:rw|:ro]")
    return target, AccessMode(mode)
