"""Registry of the memory planning algorithms (``Problem -> Plan``).

``get_algorithm(name)`` is the only lookup the IR side needs; ``ALGORITHMS``
is an immutable mapping built once at import (no registration side effects).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from usmp.planning.best_fit import best_fit
from usmp.planning.greedy import greedy_by_conflicts, greedy_by_size
from usmp.planning.hill_climb import hill_climb
from usmp.planning.model import Algorithm

DEFAULT_ALGORITHM = "best_fit"

ALGORITHMS: Mapping[str, Algorithm] = MappingProxyType(
    {
        "greedy_by_size": greedy_by_size,
        "greedy_by_conflicts": greedy_by_conflicts,
        "hill_climb": hill_climb,
        "best_fit": best_fit,
    }
)


def get_algorithm(name: str) -> Algorithm:
    """The algorithm called ``name``; ``ValueError`` lists the valid names."""
    try:
        return ALGORITHMS[name]
    except KeyError:
        raise ValueError(
            f"unknown memory planning algorithm '{name}'; "
            f"valid: {', '.join(ALGORITHMS)}"
        ) from None
