"""Where the real MLIR 22 tools are (Debian's mlir-22-tools)."""

import os
import shutil
from pathlib import Path


def mlir_bin() -> Path | None:
    """Folder holding ``mlir-opt``/``mlir-translate`` from MLIR 22, if installed."""
    candidates = [os.environ.get("MLIR_BIN", ""), "/usr/lib/llvm-22/bin"]
    for folder in candidates:
        if folder and (Path(folder) / "mlir-opt").exists():
            return Path(folder)
    found = shutil.which("mlir-opt-22")
    return Path(found).parent if found else None
