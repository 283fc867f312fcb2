"""Custom operators (issue 28, item 3): ``usmp-compile --custom-op
NAME=kernel.h[:function]`` supplies the C kernel of a TFLite CUSTOM operator.

The model: an int8 CONV_2D, a CUSTOM "ScaleShiftClip" (per-channel int8
scale and int32 bias as constant inputs, a shift and a bound in its custom
options, the input and output zero points from its descriptors), then a
FULLY_CONNECTED. The generated C (built by the kit's Makefile with the user's
header and .c) matches the numpy oracle with a numpy reference of the kernel
on every tensor, and TFLite Micro on the builtin operators around it.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import usmp
from usmp.frontend.tflite_import import import_tflite_bytes
from usmp.frontend.tflite_reader import TFLiteImportError
from usmp.oracle.relay_interpreter import evaluate
from usmp.testing.tflite_builder import ModelBuilder
from usmp.tools import usmp_compile
from usmp.tools.host_run import CRunError

CODE = "ScaleShiftClip"
OPTIONS = bytes([3, 90])  # shift, bound

HEADER = """\
#ifndef SCALE_SHIFT_CLIP_H_
#define SCALE_SHIFT_CLIP_H_
#include "tvmgen_custom_op.h"
int32_t scale_shift_clip(const tvmgen_custom_tensor_t* inputs, int32_t n_inputs,
                         tvmgen_custom_tensor_t* outputs, int32_t n_outputs,
                         const uint8_t* options, int32_t options_len);
#endif
"""

SOURCE = """\
#include "scale_shift_clip.h"

/* y = clamp(((x - zp_x) * w[c] + b[c]) >> shift + zp_y, -bound, bound) */
int32_t scale_shift_clip(const tvmgen_custom_tensor_t* inputs, int32_t n_inputs,
                         tvmgen_custom_tensor_t* outputs, int32_t n_outputs,
                         const uint8_t* options, int32_t options_len) {
  const tvmgen_custom_tensor_t* x = &inputs[0];
  const int8_t* xd = (const int8_t*)x->data;
  const int8_t* w = (const int8_t*)inputs[1].data;
  const int32_t* b = (const int32_t*)inputs[2].data;
  int8_t* y = (int8_t*)outputs[0].data;
  int32_t channels, n = 1, i, d;
  if (n_inputs != 3 || n_outputs != 1 || options_len != 2) return 7;
  if (x->type != TVMGEN_CUSTOM_INT8 || inputs[2].type != TVMGEN_CUSTOM_INT32) return 8;
  channels = x->shape[x->rank - 1];
  for (d = 0; d < x->rank; ++d) n *= x->shape[d];
  if (outputs[0].bytes != n || inputs[1].shape[0] != channels) return 9;
  /* the weights are quantised per channel (axis 0) */
  if (inputs[1].quantized_dimension != 0 || inputs[1].scales == 0 ||
      inputs[1].scales[2] != 0.125f || inputs[1].zero_points[3] != 0 ||
      inputs[1].scale != 0.5f) return 10;
  for (i = 0; i < n; ++i) {
    int32_t c = i % channels;
    int32_t acc = (xd[i] - x->zero_point) * w[c] + b[c];
    int32_t v = (acc >> options[0]) + outputs[0].zero_point;
    if (v > options[1]) v = options[1];
    if (v < -options[1]) v = -options[1];
    y[i] = (int8_t)v;
  }
  return 0;
}
"""


def scale_shift_clip(
    x: np.ndarray, w: np.ndarray, b: np.ndarray, *, options: bytes, quantization: Any
) -> np.ndarray:
    """The numpy reference of the kernel above."""
    zp_x = quantization[0]["zero_point"][0]
    zp_y = quantization[3]["zero_point"][0]
    acc = (x.astype(np.int32) - zp_x) * w.astype(np.int32) + b
    v = (acc >> options[0]) + zp_y
    return np.clip(v, -options[1], options[1]).astype(np.int8)


def _conv(m: ModelBuilder, rng: np.random.Generator) -> tuple[int, int]:
    """The model's first operator (CONV_2D, per-channel weights): its input
    and output tensors."""
    x = m.tensor((1, 6, 6, 2), "int8", scale=0.05, zero_point=-3)
    cw = m.tensor(
        (4, 3, 3, 2),
        "int8",
        rng.integers(-127, 128, (4, 3, 3, 2)),
        scale=[0.01, 0.02, 0.015, 0.03],
        zero_point=[0, 0, 0, 0],
    )
    cb = m.tensor(
        (4,), "int32", rng.integers(-500, 500, 4), scale=[5e-4, 1e-3, 7.5e-4, 1.5e-3]
    )
    y = m.tensor((1, 4, 4, 4), "int8", scale=0.1, zero_point=2)
    m.op(
        "CONV_2D",
        [x, cw, cb],
        [y],
        (
            "Conv2DOptions",
            {
                "Padding": 1,
                "StrideW": 1,
                "StrideH": 1,
                "DilationWFactor": 1,
                "DilationHFactor": 1,
            },
        ),
    )
    return x, y


def model() -> tuple[bytes, list[int]]:
    """conv -> CUSTOM -> fully connected; returns the file and the tensors
    (conv output, custom output, model output)."""
    rng = np.random.default_rng(28)
    m = ModelBuilder()
    x, y = _conv(m, rng)
    sw = m.tensor(
        (4,),
        "int8",
        np.array([5, -3, 7, 2]),
        scale=[0.5, 0.25, 0.125, 1.0],
        zero_point=[0, 0, 0, 0],
    )
    sb = m.tensor((4,), "int32", np.array([40, -8, 0, 100]))
    z = m.tensor((1, 4, 4, 4), "int8", scale=0.2, zero_point=-1)
    m.op("CUSTOM", [y, sw, sb], [z], custom=CODE, custom_options=OPTIONS)
    fw = m.tensor((5, 64), "int8", rng.integers(-127, 128, (5, 64)), scale=0.01)
    fb = m.tensor((5,), "int32", rng.integers(-300, 300, 5), scale=0.002)
    out = m.tensor((1, 5), "int8", scale=0.3, zero_point=4)
    m.op("FULLY_CONNECTED", [z, fw, fb], [out], ("FullyConnectedOptions", {}))
    return m.build([x], [out]), [y, z, out]


def kernel_files(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "scale_shift_clip.h").write_text(HEADER)
    (folder / "scale_shift_clip.c").write_text(SOURCE)
    return folder / "scale_shift_clip.h"


def _compile(tmp_path: Path, data: bytes, **options: Any) -> Any:
    path = tmp_path / "m.tflite"
    path.write_bytes(data)
    header = kernel_files(tmp_path / "kernels")
    return usmp.compile(
        str(path),
        custom_ops=[f"{CODE}={header}:scale_shift_clip"],
        output_dir=str(tmp_path / "out"),
        **options,
    )


def test_custom_kernel_matches_the_reference(tmp_path: Path) -> None:
    """The kit (the user's header and .c shipped and built by its Makefile)
    computes what the oracle computes with the kernel's numpy reference."""
    data, _ = model()
    lib = _compile(tmp_path, data)
    files = {str(p) for p in lib.files}
    assert "codegen/host/include/scale_shift_clip.h" in files
    assert "codegen/host/src/scale_shift_clip.c" in files
    header = (tmp_path / "out/codegen/host/include/tvmgen_custom_op.h").read_text()
    assert "typedef int32_t (*tvmgen_custom_op_fn)" in header
    module = import_tflite_bytes(
        data, "m.tflite", [usmp.CustomOp(CODE, str(tmp_path / "kernels/x.h"), "f")]
    )
    rng = np.random.default_rng(3)
    for _ in range(3):
        x = rng.integers(-128, 128, (1, 6, 6, 2)).astype(np.int8)
        (got,) = lib.run([x])
        (want,) = evaluate(module, [x], custom_kernels={CODE: scale_shift_clip})
        np.testing.assert_array_equal(got, want)


def test_every_tensor_matches(tmp_path: Path) -> None:
    """The conv output (TFLite Micro on the model cut before the custom op),
    the custom op's output and the model output, each returned by the C."""
    from usmp.frontend.tflite_import import import_model
    from usmp.frontend.tflite_reader import read_model

    data, (y, z, out) = model()
    custom = usmp.CustomOp(
        CODE, str(kernel_files(tmp_path / "kernels")), "scale_shift_clip"
    )
    module = import_model(read_model(data, "m.tflite"), [y, z, out], [custom])
    lib = usmp.compile(module, custom_ops=[custom], output_dir=str(tmp_path / "out"))
    x = np.random.default_rng(5).integers(-128, 128, (1, 6, 6, 2)).astype(np.int8)
    got = lib.run([x])
    want = evaluate(module, [x], custom_kernels={CODE: scale_shift_clip})
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(g, w)
    from usmp.testing.tflm_reference import run_tflm

    (tflm_y,) = run_tflm(_conv_model(), [x], [3])  # the builtin part alone
    np.testing.assert_array_equal(got[0], tflm_y.reshape(got[0].shape))


def _conv_model() -> bytes:
    """The model's first operator alone (same tensors, same weights)."""
    m = ModelBuilder()
    x, y = _conv(m, np.random.default_rng(28))
    return m.build([x], [y])


def test_input_and_output_never_share_bytes(tmp_path: Path) -> None:
    """USMP gives the custom op's input and output disjoint bytes (the
    overlap analysis cannot see into user C); with RELU around it, whose
    kernels let an output overlap the input they read last."""
    data, _ = model()
    lib = _compile(tmp_path, data)
    plan = lib.plan.pool("global_workspace")
    # the workspace holds the custom op's input and output only (the model's
    # input and output are the application's)
    (a0, a1), (b0, b1) = sorted((p.offset, p.offset + p.size) for p in plan.buffers)
    assert a1 <= b0
    m = ModelBuilder()
    x = m.tensor((1, 64), "int8", scale=0.1, zero_point=2)
    y = m.tensor((1, 64), "int8", scale=0.1, zero_point=2)
    z = m.tensor((1, 64), "int8", scale=0.1, zero_point=2)
    w = m.tensor((4,), "int8", np.array([5, -3, 7, 2]))
    b = m.tensor((4,), "int32", np.array([40, -8, 0, 100]))
    q = m.tensor((1, 64), "int8", scale=0.1, zero_point=2)
    m.op("RELU", [x], [y])
    m.op("CUSTOM", [y, w, b], [z], custom=CODE, custom_options=OPTIONS)
    m.op("RELU", [z], [q])
    header = kernel_files(tmp_path / "kernels")
    custom = usmp.compile(
        _write(tmp_path / "c.tflite", m.build([x], [q])),
        custom_ops=[usmp.CustomOp(CODE, str(header), "scale_shift_clip")],
        output_dir=str(tmp_path / "c"),
    )
    assert custom.plan.workspace_bytes == 128  # y and z disjoint
    # the kernel refuses this shape (64 channels, 4 weights): its status stops
    # the run and is run's status
    with pytest.raises(CRunError, match="run returned 9"):
        custom.run([np.zeros((1, 64), np.int8)])


def _write(path: Path, data: bytes) -> str:
    path.write_bytes(data)
    return str(path)


def _usmp_compile(tmp_path: Path, capsys: Any, *flags: str) -> tuple[int, str]:
    """``usmp-compile`` (its ``main``, in this process): status, stderr."""
    data, _ = model()
    (tmp_path / "m.tflite").write_bytes(data)
    argv = [str(tmp_path / "m.tflite"), "-o", str(tmp_path / "out"), "-q", *flags]
    status = usmp_compile.main(argv)
    return status, capsys.readouterr().err


def test_cli_builds_the_kit(tmp_path: Path, capsys: Any) -> None:
    header = kernel_files(tmp_path / "kernels")
    flag = f"{CODE}={header}:scale_shift_clip"
    status, err = _usmp_compile(tmp_path, capsys, "--custom-op", flag)
    assert status == 0, err
    make = subprocess.run(
        ["make", "-s", "example"],
        cwd=tmp_path / "out",
        capture_output=True,
        text=True,
        check=False,
    )
    assert make.returncode == 0, make.stderr


def test_usmp_opt_reproduces_the_kit(tmp_path: Path) -> None:
    """``usmp-import-tflite --custom-op ... | usmp-opt -p <pipeline> -t
    c-library`` writes usmp-compile's library and kit, the user's header and
    .c included (``usmp.testing.reproduce``)."""
    from usmp.testing.reproduce import reproduce

    data, _ = model()
    header = kernel_files(tmp_path / "kernels")
    flags = ["--custom-op", f"{CODE}={header}:scale_shift_clip"]
    assert reproduce(Path(_write(tmp_path / "m.tflite", data)), flags, tmp_path) == []


def test_cli_refuses_a_custom_operator_without_kernel(
    tmp_path: Path, capsys: Any
) -> None:
    status, err = _usmp_compile(tmp_path, capsys)
    assert status == 1
    assert "Traceback" not in err
    assert (
        f"m.tflite: error: operator 1 (CUSTOM '{CODE}'): custom operator '{CODE}' "
        "(an application-defined kernel) has no kernel: supply its C function with "
        f"--custom-op {CODE}=path/to/kernel.h[:function]"
    ) in err


@pytest.mark.parametrize(
    ("flag", "message"),
    [
        ("{k}/missing.h", "is not NAME=path/to/kernel.h[:function]"),
        (CODE + "={k}/missing.h", "cannot read the header"),
        (CODE + "={k}/scale_shift_clip.c", "is not a header (.h)"),
        (CODE + "={h}:other_fn", "does not declare the function 'other_fn'"),
    ],
)
def test_option_refusals(tmp_path: Path, flag: str, message: str) -> None:
    """Checked by the options, before the model is read (the CLI prints the
    same message)."""
    header = kernel_files(tmp_path / "kernels")
    with pytest.raises(usmp.CompileError, match=re.escape(message)):
        usmp.CompileOptions(custom_ops=[flag.format(h=header, k=header.parent)])


def test_unknown_code_names_the_model_codes(tmp_path: Path) -> None:
    data, _ = model()
    header = kernel_files(tmp_path / "kernels")
    with pytest.raises(usmp.CompileError) as e:
        usmp.compile(
            _write(tmp_path / "m.tflite", data),
            custom_ops=[f"Other={header}:scale_shift_clip"],
            output_dir=str(tmp_path / "out"),
        )
    assert (
        f"m.tflite: error: --custom-op Other={header}:scale_shift_clip: the model has "
        f"no CUSTOM operator with custom code 'Other'; its custom codes are '{CODE}'"
    ) in str(e.value)


def test_dynamic_output_shape_is_refused() -> None:
    m = ModelBuilder()
    x = m.tensor((1, 4), "int8", scale=0.1)
    y = m.tensor((1, 4), "int8", scale=0.1, signature=(1, -1))
    m.op("CUSTOM", [x], [y], custom=CODE)
    with pytest.raises(TFLiteImportError) as e:
        import_tflite_bytes(
            m.build([x], [y]), "d.tflite", [usmp.CustomOp(CODE, "k.h", "f")]
        )
    assert str(e.value).startswith(
        f"d.tflite: error: operator 0 (CUSTOM '{CODE}'): output tensor"
    )
    assert "has a dynamic shape (shape_signature [1, -1])" in str(e.value)
