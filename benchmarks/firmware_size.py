"""Cortex-M4 footprint of every supported model's C library.

    python benchmarks/firmware_size.py [--models NAME ...] [--cflags FLAGS]

Each supported model in ``shared/models`` is compiled with ``usmp-compile``
(module name = the file's stem), then its static library is built with the
kit's own Makefile by ``arm-none-eabi-gcc -mcpu=cortex-m4 -mthumb -Os``
(``usmp.testing.firmware.cross_compile``) and measured:

* ``text``/``data``/``bss``: ``arm-none-eabi-size`` of the library;
* ``code``: text without the constant pool, ``const``: the constant pool
  (``static const``, so in text);
* ``flash`` = text + data (code + constants);
* ``stack``: the deepest call chain's frames (``-fstack-usage``: run ->
  entry -> the largest operator frame; libm's ``expf`` not counted);
* ``RAM`` = data + bss (the workspace pool) + stack.

Inputs and outputs are the application's buffers and are not counted (the
``ws+io`` column of ``benchmarks/models.py`` has them inside the workspace).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from usmp.lowering.c_names import sanitize
from usmp.testing.firmware import (
    CORTEX_M4_CFLAGS,
    KitError,
    arm_gcc_available,
    cross_compile,
)
from usmp.testing.shared_models import MODELS_DIR, SUPPORTED_MODELS
from usmp.tools.usmp_compile import main as usmp_compile

COLUMNS = (
    "model",
    "code",
    "const",
    "text",
    "data",
    "bss",
    "stack",
    "flash",
    "RAM",
)


def measure(model: Path, work: Path, cflags: list[str]) -> list[str]:
    name = sanitize(model.stem)
    out = work / name
    if usmp_compile([str(model), "-o", str(out), "-q", "--module-name", name]) != 0:
        return [model.stem, *["compile failed"] + [""] * (len(COLUMNS) - 2)]
    try:
        s = cross_compile(out, cflags)
    except KitError as e:
        print(e, file=sys.stderr)
        return [model.stem, *["build failed"] + [""] * (len(COLUMNS) - 2)]
    values = (s.code, s.constants, s.text, s.data, s.bss, s.stack, s.flash, s.ram)
    return [model.stem, *(f"{v:,}" for v in values)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--models", nargs="*", help="model file stems (default all)")
    parser.add_argument(
        "--cflags",
        default=" ".join(CORTEX_M4_CFLAGS),
        help=f"target flags (default: {' '.join(CORTEX_M4_CFLAGS)})",
    )
    args = parser.parse_args(argv)
    if not arm_gcc_available():
        print("arm-none-eabi-gcc is not installed (scripts/setup.sh)", file=sys.stderr)
        return 1
    models = [MODELS_DIR / m for m in SUPPORTED_MODELS]
    if args.models:
        models = [m for m in models if m.stem in args.models]
    print("| " + " | ".join(COLUMNS) + " |")
    print("|---|" + "--:|" * (len(COLUMNS) - 1))
    with tempfile.TemporaryDirectory(prefix="usmp-firmware-") as tmp:
        for model in models:
            row = measure(model, Path(tmp), args.cflags.split())
            print("| " + " | ".join(row) + " |", flush=True)
    print(
        f"\n(bytes; arm-none-eabi-gcc {args.cflags}; flash = text + data, "
        "RAM = data + bss + stack)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
