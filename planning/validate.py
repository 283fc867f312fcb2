"""Independent validator of memory plans.

Shares no code with the planners on purpose: conflicts are recomputed here
naively, pair by pair, from the buffers' intervals and explicit ``conflicts``
(never through ``Problem.conflict_graph`` or ``placement.py``), so a bug in
the planners' conflict sweep or offset arithmetic cannot hide itself.

A plan is valid when every buffer is placed exactly once, in one of its
candidate pools, at a non-negative offset aligned to
``max(buffer.alignment, pool.alignment)``, ending within the pool's
``size_limit`` (and within ``pool_sizes`` when those are given), and no two
conflicting buffers of the same pool share a byte -- except a pair of an
``Overlap`` (``problem.overlaps``), which may share bytes when the target
starts at most ``max_shift`` bytes after the source's start.
"""

from __future__ import annotations

from collections.abc import Mapping

from usmp.planning.model import Buffer, Plan, Problem


class PlanValidationError(ValueError):
    """A plan violates the problem; ``violations`` lists every reason."""

    def __init__(self, violations: list[str]):
        self.violations = violations
        super().__init__(
            f"invalid memory plan ({len(violations)} violation(s)):\n  "
            + "\n  ".join(violations)
        )


def _conflict(a: Buffer, b: Buffer) -> bool:
    if a.size == 0 or b.size == 0:
        return False  # occupies no byte
    if b.name in a.conflicts or a.name in b.conflicts:
        return True
    both_live = a.start < a.end and b.start < b.end
    return both_live and a.start < b.end and b.start < a.end


def validate_plan(
    problem: Problem, plan: Plan, pool_sizes: Mapping[str, int] | None = None
) -> list[str]:
    """Human-readable violations of ``plan`` (empty when valid)."""
    violations: list[str] = []
    pools = {p.name: p for p in problem.pools}
    names = [b.name for b in problem.buffers]
    seen: set[str] = set()
    for n in names:
        if n in seen:
            violations.append(f"buffer '{n}' is declared more than once")
        seen.add(n)
    for extra in sorted(set(plan.placements) - seen):
        violations.append(f"placement for unknown buffer '{extra}'")

    placed: list[tuple[Buffer, str, int]] = []
    for b in problem.buffers:
        p = plan.placements.get(b.name)
        if p is None:
            violations.append(f"buffer '{b.name}' ({b.size} B) is not placed")
            continue
        allowed = b.pools or tuple(pools)
        if p.pool not in pools:
            violations.append(f"buffer '{b.name}' placed in unknown pool '{p.pool}'")
            continue
        if p.pool not in allowed:
            violations.append(
                f"buffer '{b.name}' placed in pool '{p.pool}', "
                f"not one of its candidates ({', '.join(allowed)})"
            )
        pool = pools[p.pool]
        if p.offset < 0:
            violations.append(f"buffer '{b.name}' at negative offset {p.offset}")
        alignment = max(b.alignment, pool.alignment, 1)
        if p.offset % alignment:
            violations.append(
                f"buffer '{b.name}' at offset {p.offset} in '{p.pool}' "
                f"is not aligned to {alignment} B"
            )
        end = p.offset + b.size
        if pool.size_limit is not None and end > pool.size_limit:
            violations.append(
                f"buffer '{b.name}' [{p.offset}, {end}) exceeds pool '{p.pool}' "
                f"limit of {pool.size_limit} B"
            )
        if pool_sizes is not None and end > pool_sizes.get(p.pool, 0):
            violations.append(
                f"buffer '{b.name}' [{p.offset}, {end}) exceeds the "
                f"{pool_sizes.get(p.pool, 0)} B given for pool '{p.pool}'"
            )
        placed.append((b, p.pool, p.offset))

    shifts: dict[tuple[str, str], tuple[int, int | None]] = {}
    for o in problem.overlaps:
        shifts[(o.source, o.target)] = (o.max_shift, o.min_shift)

    def overlap_allows(source: str, target: str, shift: int) -> bool:
        """Does an overlap allow ``target`` at ``source`` + ``shift``?"""
        if (source, target) not in shifts:
            return False
        below, above = shifts[(source, target)]
        return shift <= below or (above is not None and shift >= above)

    for x, y in _sharing_bytes(placed):
        (a, pool_a, off_a), (b, _, off_b) = placed[x], placed[y]
        if not _conflict(a, b):
            continue
        if overlap_allows(a.name, b.name, off_b - off_a) or overlap_allows(
            b.name, a.name, off_a - off_b
        ):
            continue
        violations.append(
            f"conflicting buffers '{a.name}' [{off_a}, {off_a + a.size}) and "
            f"'{b.name}' [{off_b}, {off_b + b.size}) overlap in pool '{pool_a}'"
        )
    return violations


def _sharing_bytes(placed: list[tuple[Buffer, str, int]]) -> list[tuple[int, int]]:
    """The pairs ``(x, y)``, ``x < y``, of ``placed`` in one pool sharing a
    byte (``max(starts) < min(ends)``), in order: each buffer is compared
    with those starting at or after its start and before its end, in
    address order (the pairs of buffers apart in memory, most of them, are
    never visited: they cannot violate the plan whatever their lifetimes)."""
    order = sorted(range(len(placed)), key=lambda i: (placed[i][1], placed[i][2]))
    pairs: list[tuple[int, int]] = []
    for k, x in enumerate(order):
        a, pool, start = placed[x]
        end = start + a.size
        for y in order[k + 1 :]:
            b, pool_b, off_b = placed[y]
            if pool_b != pool or off_b >= end:
                break
            pairs.append((min(x, y), max(x, y)))
    return sorted(pairs)


def check_plan(
    problem: Problem, plan: Plan, pool_sizes: Mapping[str, int] | None = None
) -> None:
    """Raise :class:`PlanValidationError` listing every violation of ``plan``."""
    violations = validate_plan(problem, plan, pool_sizes)
    if violations:
        raise PlanValidationError(violations)
