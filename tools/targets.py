"""Output targets of ``usmp-opt`` (``-t NAME``) beyond xDSL's ``mlir``."""

from collections.abc import Callable
from typing import IO

from xdsl.dialects.builtin import ModuleOp

Emitter = Callable[[ModuleOp, IO[str]], None]


def get_all_targets() -> dict[str, Emitter]:
    """The project's targets, by name (filled in as targets land)."""

    def emit_c(module: ModuleOp, out: IO[str]) -> None:
        from usmp.tools.c_library import emit_c

        emit_c(module, out)

    return {"c": emit_c}
