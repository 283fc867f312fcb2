"""Build and run a model's C on numpy inputs (a test and benchmark harness).

    from usmp.testing.run_c import run_module
    outputs = run_module(mlir_text_or_module, [x], sanitize=True)

``run_module`` takes a module after ``usmp`` (or after ``convert-to-emitc``;
``passes="aot-lower-main,usmp"`` runs a pipeline first), writes its C library
(U1: the library defines its pools), a small ``main`` that reads the inputs
from files, calls ``tvmgen_<model>_run`` and writes the outputs, builds it
with gcc and runs it. Builds are cached by the hash of everything that goes
into them, under ``$TMPDIR/usmp-run-c/``.

``emitter="mlir-translate"`` builds the same module from MLIR 22's
``mlir-translate --mlir-to-cpp`` output instead of usmp-opt's printer (the
emitc module is the whole library: pools, I/O structs and ``run``; the same
harness calls it): the composition check of the two C paths.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from xdsl.dialects.builtin import (
    Float32Type,
    Float64Type,
    IntegerType,
    ModuleOp,
    Signedness,
)

from usmp.lowering.metadata import ModelInterface, Tensor
from usmp.lowering.metadata_devices import stub_devices
from usmp.tools.c_library import as_emitc, build_library, load
from usmp.tools.host_run import CRunError, build

DEFAULT_CFLAGS = (
    "-std=c99",
    "-O1",
    "-Wall",
    "-Wextra",
    "-Werror",
    "-pedantic",
    "-Wvla",
)
SANITIZE_FLAGS = (
    "-fsanitize=address,undefined",
    "-fno-sanitize-recover=all",
    "-fno-omit-frame-pointer",
    "-g",
)


def c_int32_table(name: str, values: Sequence[int]) -> str:
    """A C99 ``static const int32_t name[]`` of ``values`` (``INT32_MIN``
    spelled so, as its literal is not an ``int32_t`` constant)."""
    items = ", ".join("INT32_MIN" if v == -(2**31) else str(v) for v in values)
    return f"static const int32_t {name}[{len(values)}] = {{{items}}};"


def sanitized_output(lines: Sequence[str], work: Path, name: str) -> list[int]:
    """The integers a C99 program (``lines``) prints, built with
    ``-Werror -pedantic`` and ASan/UBSan (any undefined behaviour aborts it)
    in ``work``."""
    source = work / f"{name}.c"
    source.write_text("\n".join(lines) + "\n")
    exe = work / name
    flags = [*DEFAULT_CFLAGS, *SANITIZE_FLAGS]
    subprocess.run(["gcc", *flags, str(source), "-o", str(exe)], check=True)
    out = subprocess.run([str(exe)], check=True, capture_output=True, text=True)
    return [int(v) for v in out.stdout.split()]


def dtype_of(t: Tensor) -> np.dtype:
    element = t.type.get_element_type()
    if isinstance(element, Float32Type):
        return np.dtype(np.float32)
    if isinstance(element, Float64Type):
        return np.dtype(np.float64)
    assert isinstance(element, IntegerType)
    width = element.width.data
    if width == 1:
        return np.dtype(np.bool_)
    unsigned = element.signedness.data == Signedness.UNSIGNED
    return np.dtype(f"{'u' if unsigned else ''}int{width}")


def run_pipeline(module: ModuleOp, passes: str) -> ModuleOp:
    """``module`` (cloned) after the pass pipeline ``passes`` (usmp-opt syntax)."""
    from xdsl.passes import PassPipeline
    from xdsl.transforms import get_all_passes as upstream

    from usmp.dialects import new_context
    from usmp.passes import get_all_passes

    ctx = new_context()
    available = {**upstream(), **get_all_passes()}
    module = module.clone()
    PassPipeline.parse_spec(available, passes).apply(ctx, module)
    return module


_IO_PRELUDE = (
    "#include <stdio.h>",
    "#include <string.h>",
    "",
    "static int io(const char* path, void* data, size_t n, int write) {",
    '  FILE* f = fopen(path, write ? "wb" : "rb");',
    "  size_t done;",
    "  if (f == NULL) return 1;",
    "  done = write ? fwrite(data, 1, n, f) : fread(data, 1, n, f);",
    "  fclose(f);",
    "  return done != n;",
    "}",
    "",
)
"""The harnesses' includes and their file reader/writer ``io``."""


def harness(m: ModelInterface, runs: int = 1) -> str:
    """A C main: ``prog in0.bin .. out0.bin ..`` calling ``run`` ``runs``
    times in a row on the same inputs (state carries over); the outputs are
    the last run's."""
    lines = list(_IO_PRELUDE)
    tensors = [*m.inputs, *m.outputs]
    devices, device_args = stub_devices(m)
    lines += devices
    for k, t in enumerate(tensors):
        lines.append(
            f"static {t.c_element} t{k}[{max(1, t.nbytes // dtype_of(t).itemsize)}];"
        )
    lines += ["", "int main(int argc, char** argv) {"]
    lines.append(f"  if (argc != {len(tensors) + 1}) return 2;")
    for k in range(len(m.inputs)):
        lines.append(f"  if (io(argv[{k + 1}], t{k}, sizeof t{k}, 0)) return 3;")
    ins = [f"t{k}" for k in range(len(m.inputs))]
    outs = [f"t{k}" for k in range(len(m.inputs), len(tensors))]
    if m.states:  # a model with state starts from its initial value
        lines.append(f"  {m.symbol('init')}();")
    loop = [f"  for (int r = 0; r < {runs}; ++r) {{"] if runs > 1 else []
    end = ["  }"] if runs > 1 else []
    if m.io_in_workspace:
        lines.append(f"  {m.typedef('Inputs')} in = {m.symbol('map_inputs')}();")
        lines.append(f"  {m.typedef('Outputs')} out = {m.symbol('map_outputs')}();")
        lines += ["  (void)in;", "  (void)out;", *loop]
        for k, t in enumerate(m.inputs):
            lines.append(f"  memcpy(in.{t.c_name}, t{k}, sizeof t{k});")
        lines.append(
            f"  if ({m.symbol('run')}({', '.join(device_args)}) != 0) return 5;"
        )
        lines += end
        for k, t in enumerate(m.outputs, len(m.inputs)):
            lines.append(f"  memcpy(t{k}, out.{t.c_name}, sizeof t{k});")
    else:
        lines.append(f"  {m.typedef('Inputs')} in = {{{', '.join(ins) or '0'}}};")
        lines.append(f"  {m.typedef('Outputs')} out = {{{', '.join(outs) or '0'}}};")
        run_args = ", ".join(["&in", "&out", *device_args])
        lines += loop
        lines.append(f"  if ({m.symbol('run')}({run_args}) != 0) return 5;")
        lines += end
    for k in range(len(m.inputs), len(tensors)):
        lines.append(f"  if (io(argv[{k + 1}], t{k}, sizeof t{k}, 1)) return 4;")
    lines += ["  return 0;", "}", ""]
    return "\n".join(lines)


def sequence_harness(m: ModelInterface, steps: int, resets: Sequence[int]) -> str:
    """A C main: ``prog in0.bin .. out0.bin ..`` where each input file holds
    ``steps`` consecutive inputs: ``init`` (a model with state), then ``run``
    once per step, ``init`` again before each step in ``resets``; each output
    file gets the ``steps`` outputs one after the other."""
    if m.io_in_workspace:
        raise ValueError("sequence_harness: I/O in the workspace is not supported")
    lines = list(_IO_PRELUDE)
    tensors = [*m.inputs, *m.outputs]
    devices, device_args = stub_devices(m)
    lines += devices
    counts = [max(1, t.nbytes // dtype_of(t).itemsize) for t in tensors]
    for k, (t, n) in enumerate(zip(tensors, counts, strict=True)):
        lines.append(f"static {t.c_element} t{k}[{steps}][{n}];")
    reset = " || ".join(f"s == {r}" for r in resets) or "0"
    lines += ["", "int main(int argc, char** argv) {", "  int s;"]
    lines.append(f"  if (argc != {len(tensors) + 1}) return 2;")
    for k in range(len(m.inputs)):
        lines.append(f"  if (io(argv[{k + 1}], t{k}, sizeof t{k}, 0)) return 3;")
    if m.states:
        lines.append(f"  {m.symbol('init')}();")
    lines.append(f"  for (s = 0; s < {steps}; ++s) {{")
    ins = [f"t{k}[s]" for k in range(len(m.inputs))]
    outs = [f"t{k}[s]" for k in range(len(m.inputs), len(tensors))]
    if m.states:
        lines.append(f"    if ({reset}) {m.symbol('init')}();")
    lines.append(f"    {{ {m.typedef('Inputs')} in = {{{', '.join(ins) or '0'}}};")
    lines.append(f"      {m.typedef('Outputs')} out = {{{', '.join(outs) or '0'}}};")
    run_args = ", ".join(["&in", "&out", *device_args])
    lines.append(f"      {m.symbol('run')}({run_args}); }}")
    lines.append("  }")
    for k in range(len(m.inputs), len(tensors)):
        lines.append(f"  if (io(argv[{k + 1}], t{k}, sizeof t{k}, 1)) return 4;")
    lines += ["  return 0;", "}", ""]
    return "\n".join(lines)


def run_module_sequence(
    module_or_text: ModuleOp | str,
    steps: Sequence[Sequence[np.ndarray]],
    *,
    resets: Sequence[int] = (),
    cflags: Sequence[str] = DEFAULT_CFLAGS,
    sanitize: bool = False,
    passes: str = "",
) -> list[list[np.ndarray]]:
    """Run a model with state on a sequence of inputs, one ``run`` per step
    (``init`` first, and again before each step in ``resets``): the outputs
    of every step. The state carries over from one step to the next."""
    module = load(module_or_text) if isinstance(module_or_text, str) else module_or_text
    if passes:
        module = run_pipeline(module, passes)
    module = as_emitc(module)
    library = build_library(module)
    m = library.interface
    files = dict(library.files)
    files["harness.c"] = f'#include "{library.file("header")}"\n' + sequence_harness(
        m, len(steps), resets
    )
    arrays: list[np.ndarray] = []
    for k, t in enumerate(m.inputs):
        arrays.append(np.stack([_checked_input(t, step[k]) for step in steps]))
    include, libraries = _library(files)
    flags = [*cflags, *(SANITIZE_FLAGS if sanitize else ()), *include]
    outputs = _execute(build(files, flags, libraries=libraries), arrays, m)
    per_output = [
        np.frombuffer(data, dtype=dtype_of(t)).reshape(
            (len(steps), *t.type.get_shape())
        )
        for data, t in zip(outputs, m.outputs, strict=True)
    ]
    return [[o[s].copy() for o in per_output] for s in range(len(steps))]


def _library(
    files: dict[str, str], compiler: str = "gcc"
) -> tuple[list[str], list[str]]:
    """Include flags and archives of the libraries the C calls: CMSIS-NN's
    host build when an operator calls it (``--target cmsis-nn,c``)."""
    if not any("arm_nnfunctions.h" in text for text in files.values()):
        return [], []
    from usmp.testing.cmsis_nn_program import cmsis_nn_host_flags

    return cmsis_nn_host_flags(compiler)


def _checked_input(t: Tensor, x: np.ndarray) -> np.ndarray:
    """``x`` as a contiguous array, or a ValueError naming the input ``t``
    when its dtype or size is not the input's."""
    x = np.asarray(x)
    if x.dtype != dtype_of(t) or x.size * x.itemsize != t.nbytes:
        raise ValueError(
            f"input '{t.name}' must be {dtype_of(t)} of shape "
            f"{list(t.type.get_shape())}, got {x.dtype} of shape {list(x.shape)}"
        )
    return np.ascontiguousarray(x)


def _execute(exe: Path, arrays: Sequence[np.ndarray], m: ModelInterface) -> list[bytes]:
    """Run a harness executable on the input files written from ``arrays``:
    the bytes it wrote to each output file."""
    with tempfile.TemporaryDirectory(prefix="usmp-run-") as tmp:
        paths = [Path(tmp) / f"{k}.bin" for k in range(len(m.inputs) + len(m.outputs))]
        for path, x in zip(paths, arrays, strict=False):
            path.write_bytes(x.tobytes())
        result = subprocess.run(
            [str(exe), *map(str, paths)],
            capture_output=True,
            text=True,
            check=False,
            timeout=600,
        )
        if result.returncode != 0:
            raise CRunError(f"{exe} exited with {result.returncode}:\n{result.stderr}")
        return [path.read_bytes() for path in paths[len(m.inputs) :]]


def _sources(module: ModuleOp, emitter: str) -> tuple[ModelInterface, dict[str, str]]:
    library = build_library(module)
    m = library.interface
    if emitter == "usmp":
        files = {k: v for k, v in library.files.items() if k.endswith((".c", ".h"))}
        files["harness.c"] = f'#include "{library.file("header")}"\n' + harness(m)
        return m, files
    if emitter != "mlir-translate":
        raise ValueError(f"emitter '{emitter}' is not one of usmp, mlir-translate")
    # convert-to-emitc's module is the whole library: mlir-translate's C
    # defines the pools, the I/O structs and run itself
    translated = translate_with_mlir(module)
    main = f'#include "translated.c"\n{harness(m)}'
    runtime = {k: v for k, v in library.files.items() if "/" in k}  # TVM's headers
    return m, {**runtime, "translated.c": translated, "harness.c": main}


def translate_with_mlir(module: ModuleOp, generic: bool = False) -> str:
    """``mlir-translate --mlir-to-cpp`` (MLIR 22) of the converted module, fed
    as usmp-opt prints it (custom syntax, or ``generic``)."""
    import io

    from xdsl.printer import Printer

    tool = _mlir_translate()
    text = io.StringIO()
    Printer(stream=text, print_generic_format=generic).print_op(as_emitc(module))
    result = subprocess.run(
        [tool, "--mlir-to-cpp"],
        input=text.getvalue(),
        capture_output=True,
        text=True,
        check=False,
    )
    if result.returncode != 0:
        raise CRunError(f"mlir-translate rejected the emitc module:\n{result.stderr}")
    return result.stdout


def _mlir_translate() -> str:
    for folder in (os.environ.get("MLIR_BIN", ""), "/usr/lib/llvm-22/bin"):
        if folder and (Path(folder) / "mlir-translate").exists():
            return str(Path(folder) / "mlir-translate")
    found = shutil.which("mlir-translate-22") or shutil.which("mlir-translate")
    if found is None:
        raise CRunError(
            "mlir-translate (MLIR 22) is not installed (apt-get install mlir-22-tools)"
        )
    return found


def run_module(
    module_or_text: ModuleOp | str,
    inputs: Sequence[np.ndarray],
    *,
    cflags: Sequence[str] = DEFAULT_CFLAGS,
    sanitize: bool = False,
    passes: str = "",
    emitter: str = "usmp",
    compiler: str = "gcc",
) -> list[np.ndarray]:
    """Run the model on ``inputs`` (one array per model input, in order, of
    the input's dtype and size) and return its outputs."""
    module = load(module_or_text) if isinstance(module_or_text, str) else module_or_text
    if passes:
        module = run_pipeline(module, passes)
    module = as_emitc(module)
    m, files = _sources(module, emitter)
    if len(inputs) != len(m.inputs):
        raise ValueError(
            f"model '{m.model}' takes {len(m.inputs)} inputs, got {len(inputs)}"
        )
    arrays = [_checked_input(t, x) for t, x in zip(m.inputs, inputs, strict=True)]
    include, libraries = _library(files, compiler)
    flags = [*cflags, *(SANITIZE_FLAGS if sanitize else ()), *include]
    outputs = _execute(build(files, flags, compiler, libraries), arrays, m)
    return [
        np.frombuffer(data, dtype=dtype_of(t)).reshape(t.type.get_shape()).copy()
        for data, t in zip(outputs, m.outputs, strict=True)
    ]
