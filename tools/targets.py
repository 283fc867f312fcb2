"""Output targets of ``usmp-opt`` (``-t NAME``) beyond xDSL's ``mlir``.

* ``c``: the model as one C translation unit (every pool defined, U1);
* ``c-library``: every file ``usmp-compile`` writes from the IR (the
  library's headers and sources under ``codegen/host/``, the firmware kit),
  in LLVM's ``split-file`` format (``//--- <path>`` before each file): what
  ``usmp-compile`` writes, byte for byte, when given its pipeline
  (``usmp-compile --dump-pipeline``).
"""

from collections.abc import Callable
from typing import IO

from xdsl.dialects.builtin import ModuleOp

Emitter = Callable[[ModuleOp, IO[str]], None]


def get_all_targets() -> dict[str, Emitter]:
    """The project's targets, by name (filled in as targets land)."""

    def emit_c(module: ModuleOp, out: IO[str]) -> None:
        from usmp.tools.c_library import emit_c

        emit_c(module, out)

    def emit_c_library(module: ModuleOp, out: IO[str]) -> None:
        from usmp.tools.c_library import build_library
        from usmp.tools.firmware_kit import output_files, split_file

        out.write(split_file(output_files(build_library(module))))

    return {"c": emit_c, "c-library": emit_c_library}
