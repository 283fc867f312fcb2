"""Real MLIR 22 must accept what usmp-opt prints.

Every positive FileCheck input is run through ``usmp-opt --print-op-generic``
(with the pass pipeline of the file's first ``RUN`` line, so pass outputs are
checked too) and the result is parsed by ``mlir-opt --allow-unregistered-dialect`` (relay
and tir are not MLIR dialects; their ops and attributes are parsed opaquely).
In CI (``CI`` set) a missing ``mlir-opt`` is a failure, not a skip.
"""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.mlir_tools import mlir_bin

FILECHECK_DIR = Path(__file__).parent / "filecheck"
POSITIVE_TESTS = sorted(
    p
    for p in FILECHECK_DIR.rglob("*.mlir")
    if "invalid" not in p.name and "inputs" not in p.parts
)


def _pipeline(path: Path) -> list[str]:
    """The ``-p`` argument of the first ``// RUN: usmp-opt`` line, if any."""
    for line in path.read_text().splitlines():
        if line.startswith("// RUN: usmp-opt"):
            match = re.search(r"(?:-p|--passes)[ =]('[^']*'|\"[^\"]*\"|\S+)", line)
            return ["-p", match.group(1).strip("'\"")] if match else []
    return []


def _mlir_opt() -> Path:
    folder = mlir_bin()
    if folder is None:
        if os.environ.get("CI"):
            pytest.fail(
                "mlir-opt (MLIR 22) is required in CI: apt-get install mlir-22-tools"
            )
        pytest.skip("mlir-opt (MLIR 22) not installed")
    return folder / "mlir-opt"


@pytest.mark.parametrize(
    "path",
    POSITIVE_TESTS,
    ids=[str(p.relative_to(FILECHECK_DIR)) for p in POSITIVE_TESTS],
)
def test_generic_form_parses_with_mlir_opt(path: Path) -> None:
    mlir_opt = _mlir_opt()
    ours = subprocess.run(
        [
            sys.executable,
            "-m",
            "usmp.tools.usmp_opt",
            str(path),
            "--split-input-file",
            "--print-op-generic",
            *_pipeline(path),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert ours.returncode == 0, ours.stderr
    theirs = subprocess.run(
        [str(mlir_opt), "--allow-unregistered-dialect", "--split-input-file", "-"],
        input=ours.stdout,
        capture_output=True,
        text=True,
        check=False,
    )
    assert theirs.returncode == 0, theirs.stderr
