"""usmp-opt: an xDSL-based ahead-of-time compiler that plans every tensor of a
tiny neural network into statically sized memory pools and emits C99.

The import package is ``usmp``; its sub-packages live in the repository's
top-level folders (``dialects/`` is ``usmp.dialects``, ``passes/`` is
``usmp.passes``, and so on; see ``pyproject.toml``).

The Python API (``usmp.api``): ``usmp.compile(model, usmp.CompileOptions(...))``
(or its fields as keywords, ``pools=..., algorithm=...``) returns a
``usmp.Library`` (plan, files, ``run``); imported on first use, so
``import usmp.dialects`` and the commands do not pay for it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from usmp.api import CompileError as CompileError
    from usmp.api import CompileOptions as CompileOptions
    from usmp.api import CustomOp as CustomOp
    from usmp.api import Library as Library
    from usmp.api import Placement as Placement
    from usmp.api import Plan as Plan
    from usmp.api import Pool as Pool
    from usmp.api import PoolPlan as PoolPlan
    from usmp.api import compile as compile  # noqa: A004

__all__ = [
    "CompileError",
    "CompileOptions",
    "CustomOp",
    "Library",
    "Placement",
    "Plan",
    "Pool",
    "PoolPlan",
    "compile",
]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from usmp import api

        return getattr(api, name)
    raise AttributeError(f"module 'usmp' has no attribute '{name}'")
