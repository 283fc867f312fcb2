"""``usmp.tools.allocator``: the console commands raise glibc's malloc
thresholds (in a process of its own here: the suite's keeps the defaults)."""

from __future__ import annotations

import platform
import subprocess
import sys

_PROBE = """
from usmp.tools.allocator import keep_freed_memory
print(keep_freed_memory())
"""


def test_thresholds_are_set_on_glibc_only() -> None:
    run = subprocess.run(
        [sys.executable, "-c", _PROBE], capture_output=True, text=True, check=True
    )
    glibc = sys.platform.startswith("linux") and platform.libc_ver()[0] == "glibc"
    assert run.stdout.strip() == str(glibc)
