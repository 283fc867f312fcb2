"""External tools the tests need: where the real MLIR 22 tools are
(Debian's mlir-22-tools), and what a test does when one is missing."""

import os
import shutil
from pathlib import Path
from typing import NoReturn

import pytest


def mlir_bin() -> Path | None:
    """Folder holding ``mlir-opt``/``mlir-translate`` from MLIR 22, if installed."""
    candidates = [os.environ.get("MLIR_BIN", ""), "/usr/lib/llvm-22/bin"]
    for folder in candidates:
        if folder and (Path(folder) / "mlir-opt").exists():
            return Path(folder)
    found = shutil.which("mlir-opt-22")
    return Path(found).parent if found else None


def missing_tool(tool: str, install: str) -> NoReturn:
    """``tool`` is not installed: a failure in CI (``CI`` set, where
    ``scripts/setup.sh`` installs it with ``install``), a skip elsewhere."""
    if os.environ.get("CI"):
        pytest.fail(f"{tool} is required in CI: {install}")
    pytest.skip(f"{tool} not installed")
