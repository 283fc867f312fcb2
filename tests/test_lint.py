"""The house style is checked, not hoped for: ``ruff check`` (pyflakes,
pycodestyle, isort, pyupgrade, bugbear) and ``ruff format --check`` over the
whole repository, as configured in ``pyproject.toml``. (pyright, the type
checker, takes about 20 s of CPU: run it by hand with
``.venv/bin/pyright --pythonpath .venv/bin/python``.)"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("command", [["check"], ["format", "--check"]])
def test_ruff(command: list[str]) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "ruff", *command, "."],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
