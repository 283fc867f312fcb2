#!/usr/bin/env bash
# Set up a fresh machine: MLIR 22 tools (for the composition tests), the
# Cortex-M cross compiler and make/cmake (for the firmware kit tests), QEMU's
# Arm system emulator (Cortex-M runs: tests/test_cortex_m.py,
# benchmarks/cortex_m.py), a venv
# with usmp-opt installed in editable mode with its dev extras (again only
# when pyproject.toml changed since: .venv/.usmp-opt-installed).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
UPDATED=""
apt_install() {
  if [ -z "$UPDATED" ]; then $SUDO apt-get update -qq; UPDATED=1; fi
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "$@" >/dev/null
}
if ! command -v /usr/lib/llvm-22/bin/mlir-opt >/dev/null 2>&1; then
  apt_install mlir-22-tools gcc g++
fi
if ! command -v arm-none-eabi-gcc >/dev/null 2>&1 || ! command -v cmake >/dev/null 2>&1 \
    || ! command -v make >/dev/null 2>&1; then
  apt_install gcc-arm-none-eabi libnewlib-arm-none-eabi binutils-arm-none-eabi make cmake
fi
if ! command -v qemu-system-arm >/dev/null 2>&1; then
  apt_install qemu-system-arm
fi
if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv
fi
# The project is installed editable, so edits to its modules need no
# reinstall; only a change to pyproject.toml (dependencies, packages, scripts)
# does. The stamp holds pyproject.toml's hash as of the last install.
STAMP=.venv/.usmp-opt-installed
HASH="$(sha256sum pyproject.toml | cut -d' ' -f1)"
if [ ! -x .venv/bin/usmp-opt ] || [ ! -f "$STAMP" ] || [ "$(cat "$STAMP")" != "$HASH" ]; then
  .venv/bin/pip install -q --upgrade pip >/dev/null
  .venv/bin/pip install -q -e '.[dev]'
  echo "$HASH" > "$STAMP"
fi
# Byte-compile the project's own modules (only those changed since the last
# time; about a second from nothing). Where PYTHONDONTWRITEBYTECODE is set
# (this machine, some CI images) Python never caches them itself, and every
# usmp-opt process (the lit suite starts hundreds) would compile the modules
# it imports again: 1.1 instead of 0.75 CPU s for a lowering RUN line.
.venv/bin/python -m compileall -q -j 0 usmp dialects passes lowering planning \
  oracle frontend tools testing >/dev/null
