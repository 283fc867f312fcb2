"""TVM's ``tvmc compile --workspace-pools`` flags, as ``usmp-tvmc`` takes them.

The spellings and meaning are those of TVM 0.19's
``python/tvm/driver/tvmc/workspace_pools.py``::

    --workspace-pools=sram,flash                        pools, in fallback order
    --workspace-pools-targets=sram:c,accel              POOL:TARGET[,TARGET...]
    --workspace-pools-size-hint-bytes=sram:65536        POOL:BYTES (-1 = no limit)
    --workspace-pools-clock-frequency-hz=sram:500       POOL:INT
    --workspace-pools-read-bandwidth-bytes-per-cycle=sram:8
    --workspace-pools-write-bandwidth-bytes-per-cycle=sram:4
    --workspace-pools-read-latency-cycles=sram:50
    --workspace-pools-write-latency-cycles=sram:9001
    --workspace-pools-target-burst-bytes=sram:c:2       POOL:TARGET:BYTES

Each companion flag may be repeated, one pool per occurrence; a later
occurrence for the same pool replaces an earlier one (TVM keeps the last).
Every pool must name its targets (TVM: ``No target specified for Workspace
Pool``), each one of the ``--target`` kinds. Defaults are TVM's: ``-1`` for
the size hint, clock frequency and bandwidths, ``0`` for the latencies, no
burst sizes.

What usmp does with them: the pools become workspace pools in the given
order (``#tir.pool_info``), read-write for every listed target; the size hint
is the pool's size limit, as TVM's planners use it (``-1``: unbounded). The
clock, bandwidth, latency and burst properties are kept (they reach
``metadata.json``) but, as in TVM's own USMP algorithms, do not steer the
plan. Where TVM differs, usmp is stricter: a value that is not an integer or
means nothing for its property (a size hint of 0, a negative latency, burst
or bandwidth other than -1 for unknown, more than an int64), a pool name that
is not a C identifier or is listed twice, and a target that is not one of
``--target``'s are errors that name the flag (TVM raises a Python traceback
or accepts them); a companion flag for a pool
not in ``--workspace-pools`` is ignored, as in TVM, with a warning.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from usmp.passes.usmp_pools import POOL_NAME_SYNTAX
from usmp.tools.pool_flags import C_IDENTIFIER
from usmp.tools.pool_flags import PoolFlagError as TvmcPoolError

__all__ = ["TvmcPool", "TvmcPoolError", "add_workspace_pool_args", "workspace_pools"]

# flag suffix -> (TVM's PoolInfoProperties field, default)
_PROPERTIES: dict[str, tuple[str, int]] = {
    "size-hint-bytes": ("size_hint_bytes", -1),
    "clock-frequency-hz": ("clock_frequency_hz", -1),
    "read-bandwidth-bytes-per-cycle": ("read_bandwidth_bytes_per_cycle", -1),
    "write-bandwidth-bytes-per-cycle": ("write_bandwidth_bytes_per_cycle", -1),
    "read-latency-cycles": ("read_latency_cycles", 0),
    "write-latency-cycles": ("write_latency_cycles", 0),
}
_EXAMPLES = {
    "targets": "sram:c",
    "size-hint-bytes": "sram:65536",
    "clock-frequency-hz": "sram:70000000",
    "read-bandwidth-bytes-per-cycle": "sram:4",
    "write-bandwidth-bytes-per-cycle": "sram:4",
    "read-latency-cycles": "sram:2",
    "write-latency-cycles": "sram:2",
    "target-burst-bytes": "sram:c:8",
}


@dataclass(frozen=True)
class TvmcPool:
    """One ``WorkspacePoolInfo`` of the command line (TVM's field names)."""

    pool_name: str
    targets: tuple[str, ...]
    size_hint_bytes: int = -1
    clock_frequency_hz: int = -1
    read_bandwidth_bytes_per_cycle: int = -1
    write_bandwidth_bytes_per_cycle: int = -1
    read_latency_cycles: int = 0
    write_latency_cycles: int = 0
    target_burst_bytes: tuple[tuple[str, int], ...] = field(default=())

    def as_json(self) -> dict[str, object]:
        return {
            "pool_name": self.pool_name,
            "targets": list(self.targets),
            **{name: getattr(self, name) for name, _ in _PROPERTIES.values()},
            "target_burst_bytes": dict(self.target_burst_bytes),
        }

    def usmp_spec(self) -> str:
        """The pool as ``usmp-compile``'s per-pool SPEC
        (``usmp.tools.pool_flags``): every target read-write, the size hint
        as the size limit."""
        spec = "target=" + ",".join(f"{t}:rw" for t in self.targets)
        if self.size_hint_bytes != -1:
            spec += f";size={self.size_hint_bytes}"
        return spec


def add_workspace_pool_args(parser: argparse.ArgumentParser) -> None:
    """``--workspace-pools`` and its companions, spelled as tvmc does."""
    group = parser.add_argument_group("workspace pools (tvmc)")
    group.add_argument(
        "--workspace-pools",
        metavar="POOL[,POOL...]",
        help="workspace pools in fallback order, e.g. --workspace-pools=sram,flash",
    )
    for suffix in ("targets", *_PROPERTIES, "target-burst-bytes"):
        group.add_argument(
            f"--workspace-pools-{suffix}",
            action="append",
            metavar="VALUE",
            help=f"e.g. --workspace-pools-{suffix}={_EXAMPLES[suffix]} (repeatable)",
        )


def workspace_pools(
    args: argparse.Namespace,
    targets: Sequence[str],
    warn: Callable[[str], None],
) -> list[TvmcPool]:
    """The pools of ``--workspace-pools`` with their companion flags;
    ``targets`` are the ``--target`` kinds a pool may name."""
    listed = _pool_names(args.workspace_pools)
    values: dict[str, dict[str, str]] = {}
    for suffix in ("targets", *_PROPERTIES):
        values[suffix] = {}
        for entry in getattr(args, _dest(suffix)) or []:
            pool, value = _split(suffix, entry, 2)
            values[suffix][pool] = value
    bursts: dict[str, dict[str, int]] = {}
    for entry in getattr(args, _dest("target-burst-bytes")) or []:
        pool, target, value = _split("target-burst-bytes", entry, 3)
        flag = f"--workspace-pools-target-burst-bytes={entry}"
        _check_target(target, targets, flag)
        bursts.setdefault(pool, {})[target] = _property(
            "target-burst-bytes", _integer(value, flag), flag
        )
    for suffix, by_pool in [*values.items(), ("target-burst-bytes", bursts)]:
        for pool in by_pool:
            if pool not in listed:
                warn(
                    f"--workspace-pools-{suffix}: pool '{pool}' is not in "
                    f"--workspace-pools ({', '.join(listed) or 'none'}); ignored, "
                    "as tvmc does"
                )
    if not listed:
        return []
    pools: list[TvmcPool] = []
    for name in listed:
        pool_targets = _pool_targets(name, values["targets"].get(name), targets)
        properties: dict[str, int] = {}
        for suffix, (attr, default) in _PROPERTIES.items():
            text = values[suffix].get(name)
            flag = f"--workspace-pools-{suffix}={name}:{text}"
            properties[attr] = (
                default
                if text is None
                else _property(suffix, _integer(text, flag), flag)
            )
        pools.append(
            TvmcPool(
                name,
                pool_targets,
                **properties,
                target_burst_bytes=tuple(sorted(bursts.get(name, {}).items())),
            )
        )
    return pools


def _dest(suffix: str) -> str:
    return f"workspace_pools_{suffix.replace('-', '_')}"


def _split(suffix: str, entry: str | None, parts: int) -> tuple[str, ...]:
    flag = f"--workspace-pools-{suffix}"
    shape = "POOL:TARGET:VALUE" if parts == 3 else "POOL:VALUE"
    if entry is None:
        raise TvmcPoolError(f"{flag} needs a value {shape} (e.g. {_EXAMPLES[suffix]})")
    items = entry.split(":", maxsplit=parts - 1)
    if len(items) != parts or not all(i.strip() for i in items):
        raise TvmcPoolError(
            f"{flag}={entry}: expected {shape} (e.g. {flag}={_EXAMPLES[suffix]})"
        )
    return tuple(i.strip() for i in items)


def _pool_names(text: str | None) -> list[str]:
    if text is None:
        return []
    names = [n.strip() for n in text.split(",")]
    for name in names:
        if not C_IDENTIFIER.fullmatch(name):
            raise TvmcPoolError(
                f"--workspace-pools={text}: '{name}' is not a valid pool name; "
                f"{POOL_NAME_SYNTAX}"
            )
    return names


def _pool_targets(
    name: str, text: str | None, targets: Sequence[str]
) -> tuple[str, ...]:
    if text is None:
        raise TvmcPoolError(
            f'no target specified for workspace pool "{name}" (as in tvmc, every '
            f"pool needs one); add --workspace-pools-targets={name}:"
            f"{','.join(targets[-1:])}"
        )
    flag = f"--workspace-pools-targets={name}:{text}"
    chosen: list[str] = []
    for target in (t.strip() for t in text.split(",")):
        _check_target(target, targets, flag)
        if target not in chosen:
            chosen.append(target)
    return tuple(chosen)


def _check_target(target: str, targets: Sequence[str], flag: str) -> None:
    if target not in targets:
        raise TvmcPoolError(
            f"{flag}: target '{target}' is not one of --target's ({', '.join(targets)})"
        )


_INT64_MAX = 2**63 - 1
"""TVM holds every pool property in an ``int64``."""


def _property(suffix: str, value: int, flag: str) -> int:
    """``value`` if it means something for the property ``suffix``: a size
    hint, clock or bandwidth is positive or -1 (unknown / no limit), a
    latency is >= 0, a burst is >= 1; all fit TVM's int64."""
    if suffix.endswith("latency-cycles"):
        low, unknown, what = 0, None, "a number of cycles >= 0"
    elif suffix == "target-burst-bytes":
        low, unknown, what = 1, None, "a positive number of bytes"
    elif suffix == "size-hint-bytes":
        low, unknown, what = 1, -1, "a positive number of bytes, or -1 for no limit"
    else:
        low, unknown, what = 1, -1, "a positive number, or -1 for unknown"
    if value != unknown and not low <= value <= _INT64_MAX:
        raise TvmcPoolError(f"{flag}: expected {what} (at most {_INT64_MAX})")
    return value


def _integer(text: str, flag: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise TvmcPoolError(f"{flag}: '{text}' is not an integer") from None
