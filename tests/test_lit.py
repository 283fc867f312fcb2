"""Run the FileCheck (lit) suite under pytest so that its result counts."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

from tests.mlir_tools import mlir_bin

FILECHECK_DIR = Path(__file__).parent / "filecheck"


def test_lit_suite() -> None:
    env = dict(os.environ)
    bindir = Path(sys.executable).parent
    env["PATH"] = f"{bindir}{os.pathsep}{env.get('PATH', '')}"
    if (mlir := mlir_bin()) is not None:
        env["MLIR_BIN"] = str(mlir)
    lit = shutil.which("lit", path=env["PATH"])
    assert lit is not None, "lit is not installed (pip install -e '.[dev]')"
    result = subprocess.run(
        [lit, "-v", str(FILECHECK_DIR)],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    report = result.stdout + result.stderr
    assert result.returncode == 0, report
    assert "Passed" in report, report
