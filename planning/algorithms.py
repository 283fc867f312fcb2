"""Registry of the memory planning algorithms (``Problem -> Plan``).

``get_algorithm(name, time_limit=...)`` is the only lookup the IR side
needs; ``ALGORITHMS`` is an immutable mapping built once at import (no
registration side effects). Only ``optimal`` takes a time limit (CPU seconds;
the others are bounded by deterministic work budgets).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from usmp.planning.best_fit import best_fit
from usmp.planning.greedy import greedy_by_conflicts, greedy_by_size
from usmp.planning.hill_climb import hill_climb
from usmp.planning.model import Algorithm, Plan, Problem

DEFAULT_ALGORITHM = "best_fit"


def optimal(problem: Problem) -> Plan:
    """``exact.optimal`` (its default time limit), the module imported on
    the first call: a default compile plans with ``best_fit``."""
    from usmp.planning.exact import optimal as search

    return search(problem)


ALGORITHMS: Mapping[str, Algorithm] = MappingProxyType(
    {
        "greedy_by_size": greedy_by_size,
        "greedy_by_conflicts": greedy_by_conflicts,
        "hill_climb": hill_climb,
        "best_fit": best_fit,
        "optimal": optimal,
    }
)


TIMED_ALGORITHMS = ("optimal",)


def get_algorithm(name: str, *, time_limit: float | None = None) -> Algorithm:
    """The algorithm called ``name``; ``ValueError`` lists the valid names.

    ``time_limit`` (seconds, > 0) configures ``optimal``; it is an error for
    the others."""
    try:
        algorithm = ALGORITHMS[name]
    except KeyError:
        raise ValueError(
            f"unknown memory planning algorithm '{name}'; "
            f"valid: {', '.join(ALGORITHMS)}"
        ) from None
    if time_limit is None:
        return algorithm
    if name not in TIMED_ALGORITHMS:
        raise ValueError(
            f"a planning time limit applies only to algorithm "
            f"{' or '.join(TIMED_ALGORITHMS)}, not '{name}'"
        )
    if not time_limit > 0:
        raise ValueError(f"planning time limit must be > 0 seconds, got {time_limit}")
    from usmp.planning.exact import Optimal

    return Optimal(time_limit=time_limit)
