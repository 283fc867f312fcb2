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

import json
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ARM_GCC = "arm-none-eabi-gcc"
CORTEX_M4_CFLAGS = ("-mcpu=cortex-m4", "-mthumb", "-Os")
HOST_CFLAGS = ("-O2", "-Wall", "-Wextra", "-Werror", "-pedantic")
C_TYPES = {
    "int8_t": np.int8,
    "uint8_t": np.uint8,
    "int16_t": np.int16,
    "uint16_t": np.uint16,
    "int32_t": np.int32,
    "uint32_t": np.uint32,
    "int64_t": np.int64,
    "uint64_t": np.uint64,
    "float": np.float32,
    "double": np.float64,
    "bool": np.bool_,
}
"""numpy dtype of each C element type ``metadata.json`` names."""


class KitError(RuntimeError):
    """A kit did not build or its example failed (message has the output)."""


def _run(command: Sequence[str], cwd: Path) -> str:
    result = subprocess.run(
        list(command), cwd=cwd, capture_output=True, text=True, check=False
    )
    if result.returncode != 0:
        raise KitError(
            f"{' '.join(command)} failed ({result.returncode}):\n"
            f"{result.stdout}{result.stderr}"
        )
    return result.stdout


def interface(out: Path) -> dict:
    """``c_interface`` of the output's ``metadata.json``."""
    return json.loads((out / "metadata.json").read_text())["c_interface"]


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


def run_example(
    exe: Path, out: Path, inputs: Sequence[np.ndarray], runs: int = 1
) -> tuple[list[np.ndarray], str]:
    """Run the example binary of output ``out`` on ``inputs``: the outputs
    (read back from the files it writes, typed and shaped as
    ``metadata.json`` says) and what it printed."""
    io = interface(out)
    with tempfile.TemporaryDirectory(prefix="usmp-example-") as tmp:
        paths = []
        for k, (x, t) in enumerate(zip(inputs, io["inputs"], strict=True)):
            path = Path(tmp) / f"input{k}.bin"
            data = np.ascontiguousarray(x, dtype=C_TYPES[t["c_type"]]).tobytes()
            path.write_bytes(data)
            paths.append(str(path))
        prefix = str(Path(tmp) / "output")
        stdout = _run([str(exe), "-r", str(runs), "-o", prefix, *paths], Path(tmp))
        outputs = [
            np.frombuffer(
                Path(f"{prefix}{k}.bin").read_bytes(), dtype=C_TYPES[t["c_type"]]
            )
            .reshape(t["shape"])
            .copy()
            for k, t in enumerate(io["outputs"])
        ]
    return outputs, stdout


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
