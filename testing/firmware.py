"""Build a ``usmp-compile`` output's firmware kit, as a user would.

``make_example(out)`` builds the example with the kit's own Makefile (host
``cc``); ``cmake_example(out)`` with its CMakeLists.txt; ``run_example``
runs an example binary on numpy inputs and returns the outputs it wrote.
``cross_compile(out)`` builds the static library for a Cortex-M4 with
``arm-none-eabi-gcc -mcpu=cortex-m4 -mthumb -Os`` through the same Makefile
and measures it: text/data/bss (``arm-none-eabi-size``) and a stack estimate
(``-fstack-usage``: the deepest frame of ``run``'s file + the entry
function's + the deepest operator's; the call chain is run -> main ->
operator, operators call only libm).
"""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from usmp.tools.host_run import (
    C_TYPES,
    HOST_CFLAGS,
    CRunError,
    interface,
    run_command,
    run_example,
)

__all__ = [
    "C_TYPES",
    "HOST_CFLAGS",
    "KitError",
    "cmake_example",
    "cross_compile",
    "interface",
    "make_example",
    "run_example",
]

ARM_GCC = "arm-none-eabi-gcc"
CORTEX_M4_CFLAGS = ("-mcpu=cortex-m4", "-mthumb", "-Os")

# building on the host and running the example: usmp.tools.host_run
KitError = CRunError
_run = run_command


def make_example(
    out: Path, build: str = "build", cflags: Sequence[str] = HOST_CFLAGS
) -> Path:
    """``make example`` in ``out``; the example binary."""
    _run(["make", "-s", "example", f"BUILD={build}", f"CFLAGS={' '.join(cflags)}"], out)
    return out / build / f"tvmgen_{interface(out)['model']}_example"


def cmake_example(out: Path, build: str = "cmake-build") -> Path:
    """Configure and build ``out`` with CMake; the example binary."""
    flags = " ".join(HOST_CFLAGS)
    _run(["cmake", "-S", ".", "-B", build, f"-DCMAKE_C_FLAGS={flags}"], out)
    _run(["cmake", "--build", build], out)
    return out / build / f"tvmgen_{interface(out)['model']}_example"


def arm_gcc_available() -> bool:
    return shutil.which(ARM_GCC) is not None


@dataclass(frozen=True)
class FirmwareSize:
    """A model's static library for one target, as ``size`` counts it."""

    text: int
    """Code and read-only data (the constant pool is ``const``: it is here)."""
    data: int
    bss: int
    """Zero-initialised RAM: the workspace pools the library defines."""
    stack: int
    """Deepest call chain's frames (run -> entry -> operator), bytes."""
    constants: int
    workspace: int

    @property
    def flash(self) -> int:
        return self.text + self.data

    @property
    def ram(self) -> int:
        return self.data + self.bss + self.stack

    @property
    def code(self) -> int:
        """``text`` without the constant pool."""
        return self.text - self.constants


def cross_compile(
    out: Path,
    cflags: Sequence[str] = CORTEX_M4_CFLAGS,
    build: str = "build-cortex-m4",
    gcc: str = ARM_GCC,
) -> FirmwareSize:
    """Build the library in ``out`` with ``gcc`` and ``cflags`` (the kit's
    Makefile, ``-fstack-usage`` added) and measure it."""
    prefix = gcc.removesuffix("gcc")
    flags = [*cflags, "-Wall", "-Wextra", "-Werror", "-fstack-usage"]
    _run(
        [
            "make",
            "-s",
            f"CC={gcc}",
            f"AR={prefix}ar",
            f"CFLAGS={' '.join(flags)}",
            f"BUILD={build}",
        ],
        out,
    )
    io = interface(out)
    library = out / build / io["library"]
    sizes = _run([f"{prefix}size", "-t", str(library)], out)
    total = sizes.strip().splitlines()[-1].split()
    text, data, bss = (int(v) for v in total[:3])
    stack = 0
    for su in sorted((out / build).rglob("*.su")):
        frames = [int(line.split("\t")[1]) for line in su.read_text().splitlines()]
        stack += max(frames, default=0)
    pools = io["pools"]
    return FirmwareSize(
        text,
        data,
        bss,
        stack,
        sum(p["size"] for p in pools if p["kind"] == "constant"),
        sum(p["size"] for p in pools if p["kind"] == "workspace"),
    )
