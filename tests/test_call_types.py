"""TVM's AOT call types end to end: ``aot-lower-main{call_type=...}`` through
``convert-to-emitc`` to C that gcc builds and runs.

* every call type computes KWS int8 bit for bit as TFLite Micro does, under
  AddressSanitizer and UBSan, with the shipped runtime header;
* a packed operator's non-zero status is what the model's ``run`` returns,
  and nothing after it runs; a packed function refuses wrong arguments;
* the library's files build with ``-std=c99 -Wall -Wextra -Werror
  -pedantic`` (and as C++), with the kit's Makefile;
* ``usmp-compile``'s flags select the call type as TVM's executor options did.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pytest

from usmp.frontend.tflite_import import import_model
from usmp.frontend.tflite_reader import read_model_file
from usmp.testing.run_c import (
    DEFAULT_CFLAGS,
    SANITIZE_FLAGS,
    build,
    run_module,
    run_pipeline,
)
from usmp.testing.shared_models import MODELS_DIR
from usmp.testing.tflm_reference import random_inputs, run_tflm
from usmp.tools.c_library import build_library, load

KWS = MODELS_DIR / "mlperf_tiny/kws_ref_model.tflite"
HELLO = MODELS_DIR / "tflite_micro/hello_world_int8.tflite"
CALL_TYPES = ("unpacked", "cpacked", "packed")


def _pipeline(call_type: str) -> str:
    return f"fuse-ops,lower-ops,aot-lower-main{{call_type={call_type}}},usmp"


@pytest.mark.parametrize("call_type", CALL_TYPES)
def test_kws_matches_tflm(call_type: str) -> None:
    model = read_model_file(KWS)
    inputs = random_inputs(model, seed=3)
    ours = run_module(
        import_model(model), inputs, passes=_pipeline(call_type), sanitize=True
    )
    want = run_tflm(KWS.read_bytes(), inputs, list(model.outputs))
    for got, ref in zip(ours, want, strict=True):
        np.testing.assert_array_equal(got, ref.reshape(got.shape))


# Two operators, the first external: its C comes from the test, so it can
# fail. @second must not run after @first fails.
FAILING = """
func.func private @first(memref<4xi8>, memref<4xi8>) attributes {tir.prim_func}
func.func @second(%a: memref<4xi8>, %b: memref<4xi8>) attributes {tir.prim_func} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.for %i = %c0 to %c4 step %c1 {
    %x = memref.load %a[%i] : memref<4xi8>
    memref.store %x, %b[%i] : memref<4xi8>
  }
  func.return
}
func.func @main(%x: tensor<4xi8>) -> tensor<4xi8> {
  %y = relay.call @first(%x) : (tensor<4xi8>) -> tensor<4xi8>
  %z = relay.call @second(%y) : (tensor<4xi8>) -> tensor<4xi8>
  func.return %z : tensor<4xi8>
}
"""

FIRST = """
#include <tvm/runtime/c_runtime_api.h>
int32_t first(TVMValue* args, int* type_codes, int num_args,
              TVMValue* out_ret_value, int* out_ret_tcode, void* resource_handle) {
  int8_t* a = (int8_t*)((DLTensor*)args[0].v_handle)->data;
  int8_t* b = (int8_t*)((DLTensor*)args[1].v_handle)->data;
  DLTensor* t = (DLTensor*)args[0].v_handle;
  (void)out_ret_value; (void)out_ret_tcode; (void)resource_handle;
  if (num_args != 2 || type_codes[0] != kTVMDLTensorHandle || t->ndim != 1 ||
      t->shape[0] != 4 || t->dtype.code != kDLInt || t->dtype.bits != 8) {
    return 99;  /* the arguments are not what main should pass */
  }
  b[0] = a[0]; b[1] = a[1]; b[2] = a[2]; b[3] = a[3];
  return a[0] == 42 ? 7 : 0;  /* input 42 fails with status 7 */
}
"""

MAIN = """
#include <stdio.h>
#include "tvmgen_default.h"
int main(void) {
  int8_t x[4] = {X0, 2, 3, 4};
  int8_t y[4] = {0, 0, 0, 0};
  TVMInputs_default in = {x};
  TVMOutputs_default out = {y};
  int32_t status = tvmgen_default_run(&in, &out);
  printf("%d %d %d %d %d\\n", (int)status, y[0], y[1], y[2], y[3]);
  return 0;
}
"""


@pytest.mark.parametrize("call_type", ["cpacked", "packed"])
@pytest.mark.parametrize("x0", [1, 42])
def test_packed_status_propagates(call_type: str, x0: int) -> None:
    module = run_pipeline(
        load(FAILING), f"aot-lower-main{{call_type={call_type}}},usmp"
    )
    library = build_library(module)
    files = dict(library.files)
    files["first.c"] = FIRST
    files["main.c"] = MAIN.replace("X0", str(x0))
    exe = build(files, [*DEFAULT_CFLAGS, *SANITIZE_FLAGS])
    out = subprocess.run([str(exe)], capture_output=True, text=True, check=True)
    if x0 == 42:  # first fails: run returns its status, second never runs
        assert out.stdout.split() == ["7", "0", "0", "0", "0"]
    else:
        assert out.stdout.split() == ["0", "1", "2", "3", "4"]


WRONG_ARGS = """
#include <stdio.h>
#include <tvm/runtime/c_runtime_api.h>
int32_t second(TVMValue* args, int* type_codes, int num_args,
               TVMValue* out_ret_value, int* out_ret_tcode, void* resource_handle);
int32_t first(TVMValue* args, int* type_codes, int num_args,
              TVMValue* out_ret_value, int* out_ret_tcode, void* resource_handle) {
  (void)args; (void)type_codes; (void)num_args; (void)out_ret_value;
  (void)out_ret_tcode; (void)resource_handle;
  return 0;
}
int main(void) {
  TVMValue args[2];
  int codes[2] = {kTVMDLTensorHandle, kTVMNullptr};
  TVMValue ret;
  int ret_code;
  args[0].v_handle = NULL;
  args[1].v_handle = NULL;
  printf("%d %d\\n", (int)second(args, codes, 1, &ret, &ret_code, NULL),
         (int)second(args, codes, 2, &ret, &ret_code, NULL));
  return 0;
}
"""


def test_packed_function_refuses_wrong_arguments() -> None:
    module = run_pipeline(load(FAILING), "aot-lower-main{call_type=cpacked},usmp")
    library = build_library(module)
    files = {k: v for k, v in library.files.items() if "operators" in k or "/" in k}
    files["main.c"] = WRONG_ARGS
    out = subprocess.run(
        [str(build(files, DEFAULT_CFLAGS))], capture_output=True, text=True, check=True
    )
    assert out.stdout.split() == ["-1", "-1"]  # wrong count, wrong type code


@pytest.mark.parametrize("call_type", ["cpacked", "packed"])
def test_kit_builds_with_runtime_header(call_type: str, tmp_path: Path) -> None:
    """``usmp-compile --interface-api packed`` ships the runtime headers; every
    library file builds alone as strict C99 and as C++, and the kit's
    Makefile builds the library and its example."""
    from usmp.tools.usmp_compile import main

    out = tmp_path / "hello"
    args = [str(HELLO), "-o", str(out), "-q"]
    assert main([*args, "--interface-api", "packed", "--call-type", call_type]) == 0
    include = out / "codegen/host/include"
    assert (include / "tvm/runtime/c_runtime_api.h").is_file()
    assert (include / "dlpack/dlpack.h").is_file()
    for source in sorted((out / "codegen/host/src").glob("*.c")):
        for compiler in (["gcc", "-std=c99"], ["g++", "-x", "c++"]):
            subprocess.run(
                [*compiler, "-Wall", "-Wextra", "-Werror", "-pedantic", "-I", include]
                + ["-c", source, "-o", tmp_path / "x.o"],
                check=True,
            )
    subprocess.run(["make", "-s", "-C", out, "example"], check=True)


RUN_MODEL = """
#include <stdio.h>
#include "tvmgen_kws.h"
static int8_t input[490] = {INPUT};
static int8_t output[12];
int main(void) {
  int64_t in_shape[4] = {1, 49, 10, 1};
  int64_t out_shape[2] = {1, 12};
  DLTensor tensors[2];
  TVMValue args[2];
  int codes[2] = {kTVMDLTensorHandle, kTVMDLTensorHandle};
  TVMValue ret;
  int ret_code;
  int k;
  int32_t wrong;
  tensors[0].data = input;
  tensors[0].device.device_type = kDLCPU;
  tensors[0].device.device_id = 0;
  tensors[0].ndim = 4;
  tensors[0].dtype.code = kDLInt;
  tensors[0].dtype.bits = 8;
  tensors[0].dtype.lanes = 1;
  tensors[0].shape = in_shape;
  tensors[0].strides = NULL;
  tensors[0].byte_offset = 0;
  tensors[1] = tensors[0];
  tensors[1].data = output;
  tensors[1].ndim = 2;
  tensors[1].shape = out_shape;
  args[0].v_handle = &tensors[0];
  args[1].v_handle = &tensors[1];
  out_shape[1] = 11;  /* not the model's output shape: refused */
  wrong = tvmgen_kws_run_model(args, codes, 2, &ret, &ret_code, NULL);
  out_shape[1] = 12;
  printf("%d %d %d\\n", (int)wrong,
         (int)tvmgen_kws_run_model(args, codes, 1, &ret, &ret_code, NULL),
         (int)tvmgen_kws_run_model(args, codes, 2, &ret, &ret_code, NULL));
  for (k = 0; k < 12; ++k) printf("%d ", output[k]);
  printf("\\n");
  return 0;
}
"""


@pytest.mark.parametrize("unpacked", ["1", "0"])
def test_packed_entry_point_matches_tflm(unpacked: str, tmp_path: Path) -> None:
    """``--interface-api packed``: TVM's packed entry ``tvmgen_<m>_run_model``
    takes DLTensors (refusing a wrong count or shape with -1) and computes
    KWS as TFLite Micro does, with unpacked or cpacked operator calls."""
    from usmp.tools.usmp_compile import main

    out = tmp_path / "kws"
    args = [str(KWS), "-o", str(out), "--module-name", "kws", "-q"]
    flags = ["--interface-api", "packed", "--use-unpacked-api", unpacked]
    assert main([*args, *flags]) == 0
    model = read_model_file(KWS)
    inputs = random_inputs(model, seed=5)
    (want,) = run_tflm(KWS.read_bytes(), inputs, list(model.outputs))
    files = {
        str(p.relative_to(out / "codegen/host/include")): p.read_text()
        for p in (out / "codegen/host/include").rglob("*.h")
    }
    files.update(
        {p.name: p.read_text() for p in (out / "codegen/host/src").glob("*.c")}
    )
    values = ", ".join(str(v) for v in inputs[0].reshape(-1))
    files["main.c"] = RUN_MODEL.replace("INPUT", values)
    exe = build(files, [*DEFAULT_CFLAGS, *SANITIZE_FLAGS])
    lines = subprocess.run(
        [str(exe)], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    assert lines[0].split() == ["-1", "-1", "0"]
    assert [int(v) for v in lines[1].split()] == want.reshape(-1).tolist()


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (
            ["--use-unpacked-api", "0"],
            "--interface-api c needs --use-unpacked-api 1",
        ),
        (
            [
                "--interface-api",
                "packed",
                "--call-type",
                "packed",
                "--use-unpacked-api",
                "1",
            ],
            "--call-type packed contradicts --use-unpacked-api 1",
        ),
        (["--call-type", "cpacked"], "--interface-api c needs --use-unpacked-api 1"),
    ],
)
def test_calling_convention_flags_are_checked(
    flags: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from usmp.tools.usmp_compile import main

    assert main([str(KWS), "-o", str(tmp_path / "out"), "-q", *flags]) == 1
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert not (tmp_path / "out").exists()


def test_mlir_translate_emits_cpacked_calls() -> None:
    """MLIR 22's C emitter takes the cpacked module too (``packed`` needs
    the function table, which only usmp-opt's printer writes)."""
    from tests.c.models import int8_convnet
    from tests.mlir_tools import missing_tool, mlir_bin

    folder = mlir_bin()
    if folder is None or not (folder / "mlir-translate").exists():
        missing_tool("mlir-translate (MLIR 22)", "apt-get install mlir-22-tools")
    text, inputs = int8_convnet(seed=9)
    passes = _pipeline("cpacked")
    ours = run_module(text, inputs, passes=passes, sanitize=True)
    theirs = run_module(
        text, inputs, passes=passes, sanitize=True, emitter="mlir-translate"
    )
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_array_equal(a, b)


def test_api_runs_packed_calls() -> None:
    """``usmp.compile(interface_api=..., call_type=...)`` as the flags; the
    library's struct API runs the packed operators."""
    import usmp

    x = [np.array([[37]], np.int8)]
    plain = usmp.compile(HELLO).run(x)
    packed = usmp.compile(HELLO, interface_api="packed", call_type="packed")
    assert "tvmgen_default_run_model" in packed.header
    np.testing.assert_array_equal(packed.run(x)[0], plain[0])
    with pytest.raises(usmp.CompileError, match="--use-unpacked-api 1"):
        usmp.compile(HELLO, call_type="cpacked")
