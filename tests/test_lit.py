"""Run the FileCheck (lit) suite under pytest so that its result counts: in
``SHARDS`` parts (lit's ``--num-shards``), one test each, so pytest-xdist
spreads them over its workers (the whole suite was the longest test)."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.mlir_tools import mlir_bin

FILECHECK_DIR = Path(__file__).parent / "filecheck"
SHARDS = 4


@pytest.mark.parametrize("shard", range(1, SHARDS + 1))
def test_lit_suite(shard: int) -> None:
    env = dict(os.environ)
    bindir = Path(sys.executable).parent
    env["PATH"] = f"{bindir}{os.pathsep}{env.get('PATH', '')}"
    if (mlir := mlir_bin()) is not None:
        env["MLIR_BIN"] = str(mlir)
    lit = shutil.which("lit", path=env["PATH"])
    assert lit is not None, "lit is not installed (pip install -e '.[dev]')"
    result = subprocess.run(
        [lit, "-v", "-j1", f"--num-shards={SHARDS}", f"--run-shard={shard}"]
        + [str(FILECHECK_DIR)],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    report = result.stdout + result.stderr
    assert result.returncode == 0, report
    assert "Passed" in report, report
