"""Build C on the host and run a compiled model's example application.

``build(files, flags)`` compiles sources into an executable, cached by
content (a test suite builds the same library many times); ``run_example``
runs a ``usmp-compile`` output's example (``example/main.c``, the firmware
kit) on numpy inputs and reads back the outputs it writes. ``usmp.Library``
runs models with them; the test helpers (``usmp.testing``) reuse them.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path

import numpy as np

HOST_CFLAGS = ("-O2", "-Wall", "-Wextra", "-Werror", "-pedantic")
CACHE = Path(tempfile.gettempdir()) / "usmp-run-c"
"""Where ``build`` keeps its executables, by content."""
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


class CRunError(RuntimeError):
    """C that did not build, or a program that failed (the message has its
    output)."""


def build(
    files: dict[str, str],
    flags: Sequence[str],
    compiler: str = "gcc",
    libraries: Sequence[str] = (),
) -> Path:
    """Compile ``files`` (name -> text; every ``.c`` but ``translated.c`` is a
    source) into an executable linked with ``libraries`` (archives, after
    the sources), cached by content; its path."""
    key = (compiler, tuple(flags), sorted(files.items()))
    digest = hashlib.sha256(
        repr(key + ((tuple(libraries),) if libraries else ())).encode()
    )
    folder = CACHE / digest.hexdigest()[:24]
    exe = folder / "model"
    if exe.exists():
        return exe
    CACHE.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(dir=CACHE))
    for name, text in files.items():
        (work / name).parent.mkdir(parents=True, exist_ok=True)
        (work / name).write_text(text)
    sources = [name for name in files if name.endswith(".c") and name != "translated.c"]
    result = subprocess.run(
        [
            compiler,
            *flags,
            "-I",
            str(work),
            *(str(work / s) for s in sources),
            *libraries,
            "-o",
            str(work / "model"),
            "-lm",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    if result.returncode != 0:
        shutil.rmtree(work, ignore_errors=True)
        raise CRunError(f"{compiler} failed:\n{result.stderr}")
    try:
        work.rename(folder)
    except OSError:  # built concurrently by another process
        shutil.rmtree(work, ignore_errors=True)
    return exe


CMSIS_NN_SUPPORT = ("arm_nntables.c", "arm_q7_to_q15_with_offset.c")
"""CMSIS-NN support sources its s8 kernels need (with every ``*_s8*.c``:
what the kit's Makefile builds, ``usmp.tools.firmware_kit``)."""


def cmsis_nn_sources(root: Path) -> list[Path]:
    """CMSIS-NN's s8 sources under ``root`` (its folder: ``Include/``,
    ``Source/``), as the kit's Makefile selects them."""
    source = root / "Source"
    found = {*source.glob("*/*_s8.c"), *source.glob("*/*_s8_*.c")}
    found |= {source / "NNSupportFunctions" / n for n in CMSIS_NN_SUPPORT}
    return sorted(p for p in found if p.exists())


def cmsis_nn_archive(root: Path, compiler: str = "gcc") -> Path:
    """CMSIS-NN (``root``: its folder) built for the host with ``compiler``
    (``-O2``: its portable C, ``ARM_MATH_DSP`` undefined) into a static
    archive, cached by the sources' content; ``CRunError`` if it fails."""
    sources = cmsis_nn_sources(root)
    if not sources:
        raise CRunError(f"{root}: no CMSIS-NN sources (expected Source/*/*_s8.c)")
    digest = hashlib.sha256(compiler.encode())
    for path in sources:
        digest.update(path.name.encode() + path.read_bytes())
    archive = CACHE / f"cmsis-nn-{digest.hexdigest()[:16]}" / "libcmsis_nn.a"
    if archive.exists():
        return archive
    CACHE.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(dir=CACHE))
    objects = []
    for path in sources:
        obj = work / f"{path.stem}.o"
        command = [compiler, "-O2", "-std=c99", "-I", str(root / "Include")]
        result = subprocess.run(
            [*command, "-c", str(path), "-o", str(obj)],
            capture_output=True,
            text=True,
            check=False,
        )
        if result.returncode != 0:
            shutil.rmtree(work, ignore_errors=True)
            raise CRunError(f"{compiler} failed on {path}:\n{result.stderr}")
        objects.append(str(obj))
    subprocess.run(["ar", "rcs", str(work / archive.name), *objects], check=True)
    try:
        work.rename(archive.parent)
    except OSError:  # built concurrently by another process
        shutil.rmtree(work, ignore_errors=True)
    return archive


def run_command(command: Sequence[str], cwd: Path) -> str:
    """Run ``command`` in ``cwd``; its standard output (``CRunError`` with
    everything it printed if it fails)."""
    result = subprocess.run(
        list(command), cwd=cwd, capture_output=True, text=True, check=False
    )
    if result.returncode != 0:
        raise CRunError(
            f"{' '.join(command)} failed ({result.returncode}):\n"
            f"{result.stdout}{result.stderr}"
        )
    return result.stdout


def interface(out: Path) -> dict:
    """``c_interface`` of the output's ``metadata.json``."""
    return json.loads((out / "metadata.json").read_text())["c_interface"]


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
        stdout = run_command(
            [str(exe), "-r", str(runs), "-o", prefix, *paths], Path(tmp)
        )
        outputs = [
            np.frombuffer(
                Path(f"{prefix}{k}.bin").read_bytes(), dtype=C_TYPES[t["c_type"]]
            )
            .reshape(t["shape"])
            .copy()
            for k, t in enumerate(io["outputs"])
        ]
    return outputs, stdout
