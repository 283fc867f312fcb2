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

The flags become ``CompileOptions.pools`` (``pools_from_flags``: the syntax;
``usmp.tools.compile_options.check_pools``: the rest). ``resolve_pools``
fills in what a pool leaves out: targets default to ``c``, a workspace
pool's access to ``rw`` and a parameter pool's to ``ro``; alignment
defaults to ``--workspace-byte-alignment`` / ``--constant-byte-alignment``
(themselves defaulting to usmp's ``DEFAULT_ALIGNMENT``). The resolved pools
are ``usmp``'s ``pools`` option (``pools_option``).

Plain Python: every problem is a :class:`PoolFlagError` whose message names
the flag and what it accepts.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from usmp.passes.usmp_pools import (
    DEFAULT_ALIGNMENT,
    DEFAULT_CONSTANT_POOL,
    DEFAULT_WORKSPACE_POOL,
    POOL_NAME_SYNTAX,
)
from usmp.tools.compile_options import C_IDENTIFIER, Pool, PoolError, check_pools

PoolFlagError = PoolError
"""A pool flag that does not follow the syntax above (or a pool that cannot
be planned into as given)."""

_POOL_FLAG = re.compile(r"--usmp-(workspace|parameter|persistent)-pool-(.+)")
_POOL_KEYS = ("target", "size", "align")
_FLAG_KINDS = {
    "workspace": "workspace",
    "parameter": "constant",
    "persistent": "persistent",
}

PoolSpecs = dict[tuple[str, str], str]
"""Per-pool SPEC strings by (``workspace`` | ``parameter`` | ``persistent``,
pool name)."""


@dataclass(frozen=True)
class PoolFlag:
    """One pool as planned: in the terms of ``#tir.pool_info``."""

    name: str
    kind: str
    """``workspace``, ``constant`` or ``persistent``."""
    size: int
    """Bytes; 0 = unbounded."""
    alignment: int
    access: tuple[tuple[str, str], ...]
    """(target, ``rw`` | ``ro``) pairs."""


def split_pool_flags(argv: Sequence[str]) -> tuple[list[str], PoolSpecs]:
    """Take ``--usmp-{workspace,parameter,persistent}-pool-NAME[=]SPEC`` out
    of ``argv`` (their names are open-ended, which argparse cannot declare):
    the other arguments, and the SPECs by (flag kind, pool name)."""
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


def pools_from_flags(
    workspace_pools: str | None,
    parameter_pools: str | None,
    specs: PoolSpecs,
    persistent_pools: str | None = None,
) -> tuple[Pool, ...]:
    """The RFC's pool flags as ordered pools (workspace pools first, then
    parameter pools, then persistent pools), checked."""
    pools: list[Pool] = []
    listed: dict[str, str] = {}
    for flag_kind, names in (
        ("workspace", workspace_pools),
        ("parameter", parameter_pools),
        ("persistent", persistent_pools),
    ):
        for name in _names(names, flag_kind):
            listed.setdefault(name, flag_kind)
            spec = specs.get((flag_kind, name), "")
            pools.append(_pool(name, _FLAG_KINDS[flag_kind], spec))
    check_pools(pools)
    for flag_kind, name in specs:
        if listed.get(name) != flag_kind:
            valid = [n for n, k in listed.items() if k == flag_kind]
            raise PoolFlagError(
                f"--usmp-{flag_kind}-pool-{name}: '{name}' is not in "
                f"--usmp-{flag_kind}-pools (listed: {', '.join(valid) or 'none'})"
            )
    return tuple(pools)


def resolve_pools(
    pools: Sequence[Pool], workspace_alignment: int, constant_alignment: int
) -> list[PoolFlag]:
    """``pools`` with their defaults filled in (module note). Without pools,
    non-default alignments still apply: to usmp's default pools, made
    explicit."""
    if not pools:
        if (workspace_alignment, constant_alignment) == (
            DEFAULT_ALIGNMENT,
            DEFAULT_ALIGNMENT,
        ):
            return []
        return [
            PoolFlag(
                DEFAULT_WORKSPACE_POOL,
                "workspace",
                0,
                workspace_alignment,
                (("c", "rw"),),
            ),
            PoolFlag(
                DEFAULT_CONSTANT_POOL, "constant", 0, constant_alignment, (("c", "ro"),)
            ),
        ]
    resolved: list[PoolFlag] = []
    for pool in pools:
        kind = pool.pool_kind
        mode = "ro" if kind == "constant" else "rw"
        alignment = pool.alignment
        if alignment is None:
            alignment = (
                constant_alignment if kind == "constant" else workspace_alignment
            )
        access = tuple(
            (target.strip(), given or mode)
            for target, _, given in (t.strip().partition(":") for t in pool.targets)
        )
        resolved.append(
            PoolFlag(pool.name, kind, pool.size, alignment, access or (("c", mode),))
        )
    return resolved


def pools_option(pools: Sequence[PoolFlag]) -> str:
    """``pools`` as ``usmp``'s ``pools`` option
    (``NAME:KIND:SIZE:align=N:access=T/rw+...``, ``usmp.passes.usmp_pools``)."""
    return ",".join(
        f"{p.name}:{p.kind}:{p.size}:align={p.alignment}:access="
        + "+".join(f"{t}/{m}" for t, m in p.access)
        for p in pools
    )


def parse_pool_flags(
    workspace_pools: str | None,
    parameter_pools: str | None,
    specs: PoolSpecs,
    workspace_alignment: int,
    constant_alignment: int,
    persistent_pools: str | None = None,
) -> list[PoolFlag]:
    """The pool flags as checked, resolved pools (``pools_from_flags`` then
    ``resolve_pools``)."""
    pools = pools_from_flags(workspace_pools, parameter_pools, specs, persistent_pools)
    return resolve_pools(pools, workspace_alignment, constant_alignment)


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


def _pool(name: str, kind: str, spec: str) -> Pool:
    size = 0
    alignment: int | None = None
    targets: tuple[str, ...] = ()
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
            targets = tuple(t.strip() for t in value.split(","))
        elif not (value.isascii() and value.isdigit()):
            raise PoolFlagError(f"{where}: {key}='{value}' is not a number of bytes")
        elif key == "size":
            size = int(value)
        else:
            alignment = int(value)
    return Pool(name, kind, size, alignment, targets)
