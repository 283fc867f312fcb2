"""The firmware kit in every ``usmp-compile`` output (``usmp.tools.firmware_kit``):

* the example application builds with the kit's Makefile and with its
  CMakeLists.txt, reads the inputs from files and gives TFLite Micro's
  outputs on a real model (KWS int8, bit for bit);
* two models compiled separately link into one executable (every file and
  symbol is ``tvmgen_<model>``-prefixed) and both run correctly;
* the example covers application-provided pools (U2/U3) and I/O inside the
  workspace; bad input files are refused with a message;
* the library cross-compiles for a Cortex-M4 (``arm-none-eabi-gcc -mcpu=
  cortex-m4 -mthumb -Os``): its bss is the workspace, its text holds the
  constant pool (skipped only where the compiler is missing outside CI).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from tests.mlir_tools import missing_tool
from usmp.frontend.tflite_reader import read_model_file
from usmp.testing.firmware import (
    arm_gcc_available,
    cmake_example,
    cross_compile,
    make_example,
    run_example,
)
from usmp.testing.shared_models import MODELS_DIR
from usmp.testing.tflm_reference import difference, random_inputs, run_tflm
from usmp.tools.usmp_compile import main as usmp_compile

KWS = MODELS_DIR / "mlperf_tiny/kws_ref_model.tflite"
SINE = MODELS_DIR / "tflite_micro/hello_world_int8.tflite"
FLOAT_MLP = MODELS_DIR / "tflite_micro/hello_world_float.tflite"


def _compile(model: Path, out: Path, *flags: str) -> Path:
    assert usmp_compile([str(model), "-o", str(out), "-q", *flags]) == 0
    return out


@pytest.fixture(scope="module")
def kws(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _compile(KWS, tmp_path_factory.mktemp("kit") / "kws", "--module-name", "kws")


@pytest.fixture(scope="module")
def sine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("kit") / "sine"
    return _compile(SINE, out, "--module-name", "sine")


def _tflm(model: Path, inputs: list[np.ndarray]) -> list[np.ndarray]:
    m = read_model_file(model)
    return run_tflm(model.read_bytes(), inputs, list(m.outputs))


def _assert_matches(got: list[np.ndarray], want: list[np.ndarray]) -> None:
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert difference(g, w) is None, difference(g, w)


def test_output_tree(kws: Path) -> None:
    for relative in (
        "CMakeLists.txt",
        "Makefile",
        "example/main.c",
        "codegen/host/include/tvmgen_kws.h",
        "codegen/host/src/tvmgen_kws.c",
        "codegen/host/src/tvmgen_kws_operators.c",
        "codegen/host/src/tvmgen_kws_aot_main.c",
    ):
        assert (kws / relative).is_file(), relative
    header = (kws / "codegen/host/include/tvmgen_kws.h").read_text()
    for line in (
        "#ifndef TVMGEN_KWS_H_",
        "#define TVMGEN_KWS_INPUT_1_SIZE 490",
        "#define TVMGEN_KWS_IDENTITY_SIZE 12",
        "#define TVMGEN_KWS_WORKSPACE_SIZE 8448",
        "#define TVMGEN_KWS_GLOBAL_WORKSPACE_WORKSPACE_POOL_SIZE 8448",
        "#define TVMGEN_KWS_GLOBAL_CONST_CONSTANT_POOL_SIZE 27248",
        "#define TVM_KWS_GLOBAL_WORKSPACE_WORKSPACE_BUFFER_SIZE 8448",
        "int32_t tvmgen_kws_run(TVMInputs_kws* inputs, TVMOutputs_kws* outputs);",
    ):
        assert line in header, line


@pytest.mark.parametrize("build", ["make", "cmake"])
def test_example_matches_tflite_micro(kws: Path, build: str) -> None:
    if shutil.which(build) is None:
        pytest.fail(f"{build} is required (scripts/setup.sh installs it)")
    exe = make_example(kws) if build == "make" else cmake_example(kws)
    model = read_model_file(KWS)
    for seed in (0, 1):
        inputs = random_inputs(model, seed)
        got, printed = run_example(exe, kws, inputs, runs=2)
        want = _tflm(KWS, inputs)
        _assert_matches(got, want)
        values = " ".join(str(v) for v in got[0].reshape(-1))
        assert f"output 0 Identity int8_t[1][12]: {values}\n" in printed
        assert "us per run (2 runs, CPU time)" in printed


def _compile_flags(source_dir: Path, build: Path, *define: str) -> dict[str, str]:
    """Configure with CMake (no build): source file name -> its compile
    command, from compile_commands.json."""
    import json

    subprocess.run(
        [
            "cmake",
            "-S",
            str(source_dir),
            "-B",
            str(build),
            "-DCMAKE_EXPORT_COMPILE_COMMANDS=ON",
            *define,
        ],
        check=True,
        capture_output=True,
        text=True,
    )
    entries = json.loads((build / "compile_commands.json").read_text())
    return {Path(e["file"]).name: e["command"] for e in entries}


def test_cmake_builds_optimised_by_default(kws: Path, tmp_path: Path) -> None:
    """Configured with no build type, the kit compiles at -O2 as its Makefile
    does (CMake's own default has no optimisation: KWS ran 15x slower); a
    build type given on the command line wins, and inside a parent project
    the parent's build type and flags are left alone."""
    if shutil.which("cmake") is None:
        pytest.fail("cmake is required (scripts/setup.sh installs it)")
    default = _compile_flags(kws, tmp_path / "default")
    assert default and all(" -O2 " in c for c in default.values()), default
    small = _compile_flags(kws, tmp_path / "small", "-DCMAKE_BUILD_TYPE=MinSizeRel")
    assert all(" -Os " in c and " -O2 " not in c for c in small.values()), small
    parent = tmp_path / "app"
    parent.mkdir()
    (parent / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.13)\nproject(app LANGUAGES C)\n"
        f"add_subdirectory({kws} kws)\n"
    )
    inside = _compile_flags(parent, tmp_path / "parent", "-DCMAKE_BUILD_TYPE=Debug")
    assert inside and all(" -O2 " not in c and " -g" in c for c in inside.values())


def test_two_models_link_into_one_executable(
    kws: Path, sine: Path, tmp_path: Path
) -> None:
    """Both models' static libraries and headers in one program: no file or
    symbol clash, and each model computes what TFLite Micro does."""
    for out in (kws, sine):
        subprocess.run(["make", "-s", "BUILD=build"], cwd=out, check=True)
    app = tmp_path / "app.c"
    app.write_text(
        """\
#include <stdio.h>
#include "tvmgen_kws.h"
#include "tvmgen_sine.h"

static int8_t speech[TVMGEN_KWS_INPUT_1_SIZE], scores[TVMGEN_KWS_IDENTITY_SIZE];
static int8_t x[1], y[1];

int main(void) {
  TVMInputs_kws kws_in = { speech };
  TVMOutputs_kws kws_out = { scores };
  TVMInputs_sine sine_in = { x };
  TVMOutputs_sine sine_out = { y };
  size_t i;
  if (fread(speech, 1, sizeof speech, stdin) != sizeof speech) return 3;
  if (fread(x, 1, sizeof x, stdin) != sizeof x) return 3;
  if (tvmgen_kws_run(&kws_in, &kws_out) != 0) return 1;
  if (tvmgen_sine_run(&sine_in, &sine_out) != 0) return 1;
  for (i = 0; i < sizeof scores; ++i) printf("%d ", scores[i]);
  printf("\\n%d\\n", y[0]);
  return 0;
}
"""
    )
    exe = tmp_path / "app"
    subprocess.run(
        [
            "gcc",
            "-std=c99",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-pedantic",
            f"-I{kws / 'codegen/host/include'}",
            f"-I{sine / 'codegen/host/include'}",
            str(app),
            str(kws / "build/libtvmgen_kws.a"),
            str(sine / "build/libtvmgen_sine.a"),
            "-lm",
            "-o",
            str(exe),
        ],
        check=True,
    )
    speech = random_inputs(read_model_file(KWS), 3)
    x = random_inputs(read_model_file(SINE), 3)
    result = subprocess.run(
        [str(exe)],
        input=speech[0].tobytes() + x[0].tobytes(),
        capture_output=True,
        check=True,
    )
    scores, y = result.stdout.decode().splitlines()
    _assert_matches(
        [np.array([int(v) for v in scores.split()], np.int8).reshape(1, 12)],
        _tflm(KWS, speech),
    )
    _assert_matches([np.array([[int(y)]], np.int8)], _tflm(SINE, x))


@pytest.mark.parametrize(
    "flags",
    [
        # U3: the application provides a workspace and a parameter pool
        ["--usmp-workspace-pools=sram", "--usmp-parameter-pools=flash"],
        # I/O inside an application-provided workspace
        ["--usmp-workspace-pools=sram", "--use-workspace-io"],
        # I/O inside the library's workspace
        ["--use-workspace-io"],
    ],
    ids=["u3", "workspace_io_user", "workspace_io_library"],
)
def test_example_covers_every_interface(tmp_path: Path, flags: list[str]) -> None:
    out = _compile(FLOAT_MLP, tmp_path / "out", *flags)
    exe = make_example(out)
    model = read_model_file(FLOAT_MLP)
    inputs = random_inputs(model, 5)
    got, _ = run_example(exe, out, inputs)
    _assert_matches(got, _tflm(FLOAT_MLP, inputs))


def test_example_refuses_bad_input_files(kws: Path, tmp_path: Path) -> None:
    exe = make_example(kws)
    short = tmp_path / "short.bin"
    short.write_bytes(b"\0" * 489)
    result = subprocess.run(
        [str(exe), str(short)], capture_output=True, text=True, check=False
    )
    assert result.returncode == 1
    assert result.stderr == f"{short}: input 'input_1' must be exactly 490 bytes\n"
    result = subprocess.run([str(exe)], capture_output=True, text=True, check=False)
    assert result.returncode == 2
    assert "usage:" in result.stderr and "input_1.bin" in result.stderr


def test_cross_compiles_for_cortex_m4(kws: Path) -> None:
    if not arm_gcc_available():
        missing_tool(
            "arm-none-eabi-gcc",
            "apt-get install gcc-arm-none-eabi libnewlib-arm-none-eabi",
        )
    size = cross_compile(kws)
    assert size.workspace == 8448 and size.constants == 27248
    assert size.bss == size.workspace  # the library's only RAM is its pool
    assert size.data == 0
    assert size.code > 0  # the constant pool is read-only data in text
    assert 0 < size.stack < 1024
    arm = subprocess.run(
        ["arm-none-eabi-objdump", "-f", str(kws / "build-cortex-m4/libtvmgen_kws.a")],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "elf32-littlearm" in arm.stdout


def test_example_help_and_unknown_options(kws: Path) -> None:
    """``--help`` prints the usage (it was read as an input file); an unknown
    option is a usage error, not a file name."""
    exe = make_example(kws)
    shown = subprocess.run([str(exe), "--help"], capture_output=True, text=True)
    assert shown.returncode == 0
    assert shown.stdout.startswith("usage: ") and "input_1.bin" in shown.stdout
    bad = subprocess.run([str(exe), "-x", "in.bin"], capture_output=True, text=True)
    assert bad.returncode == 2
    assert "unknown option -x" in bad.stderr and bad.stderr.count("usage: ") == 1
