"""Composition with MLIR 22 and with C/C++ toolchains.

* ``mlir-translate --mlir-to-cpp`` accepts every module ``convert-to-emitc``
  produces here, its C compiles, and it computes exactly what usmp-opt's own
  printer's C computes (and what the relay oracle says).
* Every file of a model library compiles on its own with ``gcc -std=c99
  -Wall -Wextra -Werror -pedantic`` and as C++ with ``g++``, and the files
  link together.

In CI (``CI`` set) a missing ``mlir-translate`` is a failure, not a skip.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pytest

from tests.c.models import float_mlp, int8_convnet
from tests.mlir_tools import missing_tool, mlir_bin
from usmp.oracle.relay_interpreter import evaluate
from usmp.testing.run_c import run_module, run_pipeline
from usmp.tools.c_library import load, write_library

FILECHECK = Path(__file__).parent / "filecheck"
PIPELINE = "fuse-ops,lower-ops,aot-lower-main,usmp"


def _require_mlir_translate() -> None:
    folder = mlir_bin()
    if folder is None or not (folder / "mlir-translate").exists():
        missing_tool("mlir-translate (MLIR 22)", "apt-get install mlir-22-tools")


CASES = {
    "int8_convnet": (int8_convnet(seed=7), PIPELINE),
    "float_mlp": (float_mlp(seed=7), PIPELINE),
    "int8_convnet_workspace_io": (
        int8_convnet(seed=8),
        PIPELINE.replace("usmp", "usmp{use_workspace_io=true}"),
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_mlir_translate_agrees_with_our_printer(case: str) -> None:
    _require_mlir_translate()
    (text, inputs), passes = CASES[case]
    ours = run_module(text, inputs, passes=passes, sanitize=True)
    theirs = run_module(
        text, inputs, passes=passes, sanitize=True, emitter="mlir-translate"
    )
    oracle = evaluate(load(text), inputs)
    for a, b, want in zip(ours, theirs, oracle, strict=True):
        np.testing.assert_array_equal(
            a, b
        )  # same C semantics, same compiler: identical
        if want.dtype.kind == "f":
            np.testing.assert_allclose(a, want, rtol=1e-5, atol=1e-6)
        else:
            np.testing.assert_array_equal(a, want)


def test_mlir_translate_on_hand_written_post_usmp_module() -> None:
    _require_mlir_translate()
    text = (FILECHECK / "lowering" / "c_printer.mlir").read_text()
    x = np.array([[1.5, -5.0, 2.0, -8.0]], dtype=np.float32)
    ours = run_module(text, [x], sanitize=True)
    theirs = run_module(text, [x], emitter="mlir-translate")
    relu_sum = np.maximum(x + np.array([1, 2, 3, 4], dtype=np.float32), 0).sum()
    np.testing.assert_array_equal(ours[0], theirs[0])
    np.testing.assert_array_equal(ours[0], [[relu_sum]])


@pytest.mark.parametrize(
    "compiler",
    [
        ["gcc", "-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic"],
        ["g++", "-x", "c++", "-std=c++11", "-Wall", "-Wextra", "-Werror", "-pedantic"],
    ],
)
def test_library_files_compile_alone_and_link(
    tmp_path: Path, compiler: list[str]
) -> None:
    text, _ = int8_convnet(seed=9)
    module = run_pipeline(
        load(text),
        PIPELINE.replace("usmp", 'usmp{pools="sram:workspace,flash:constant"}'),
    )
    library = write_library(module, tmp_path / "lib", user_pools=["flash"])
    assert set(library.files) == {
        "tvmgen_default.h",
        "tvmgen_default.c",
        "tvmgen_default_operators.c",
        "tvmgen_default_aot_main.c",
        "tvmgen_default_parameters.h",
    }
    objects = []
    for name in library.files:
        if name.endswith(".c"):
            obj = tmp_path / f"{name}.o"
            result = subprocess.run(
                [*compiler, "-c", str(tmp_path / "lib" / name), "-o", str(obj)],
                capture_output=True,
                text=True,
                check=False,
            )
            assert result.returncode == 0, f"{name}:\n{result.stderr}"
            objects.append(str(obj))
    # a C application against the (possibly C++-compiled) library
    app = tmp_path / "app.c"
    app.write_text(
        '#include "tvmgen_default.h"\n#include "tvmgen_default_parameters.h"\n'
        "static const uint8_t flash[TVM_DEFAULT_FLASH_PARAMETER_BUFFER_SIZE] =\n"
        "    TVM_DEFAULT_FLASH_PARAMETER_DATA;\n"
        "int main(void) {\n  static int8_t image[108], output[5];\n"
        "  TVMInputs_default in = {image};\n  TVMOutputs_default out = {output};\n"
        "  TVMParameters_default params = {flash};\n"
        "  return tvmgen_default_run(&in, &out, &params);\n}\n"
    )
    result = subprocess.run(
        [
            "gcc",
            "-std=c99",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-pedantic",
            "-I",
            str(tmp_path / "lib"),
            "-c",
            str(app),
            "-o",
            str(tmp_path / "app.o"),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    linker = "g++" if compiler[0] == "g++" else "gcc"
    result = subprocess.run(
        [linker, str(tmp_path / "app.o"), *objects, "-o", str(tmp_path / "app"), "-lm"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert subprocess.run([str(tmp_path / "app")], check=False).returncode == 0
