"""``--target cmsis-nn,c``: int8 operators as CMSIS-NN calls (host gcc).

Each operator kind CMSIS-NN takes is compiled alone through usmp-compile's
pipeline with ``--target cmsis-nn,c``, built with gcc against CMSIS-NN's
portable C (``../shared/third_party/CMSIS-NN``) and compared with TFLite
Micro bit for bit; the C must call the CMSIS-NN function (else the
comparison would test our own kernels). Operators or parameters CMSIS-NN
does not take stay on our kernels, still bit-exact. The scratch sizes
computed in Python are checked against CMSIS-NN's own ``*_get_buffer_size``
functions (their ``_dsp`` and ``_mve`` variants for a DSP or Helium core),
compiled on the host. The Cortex-M4 run of KWS, the Cortex-M55 (MVE) runs
and the MVE-compiled size functions and kernel sums are in
``tests/test_cortex_m.py``.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import usmp
from tests.test_import_tflite_synthetic import RELU, SAME, VALID, ModelBuilder
from usmp.frontend.tflite_import import import_model
from usmp.frontend.tflite_reader import read_model
from usmp.lowering import cmsis_nn
from usmp.testing.compare_tflm import pipeline
from usmp.testing.cortex_m import THIRD_PARTY
from usmp.testing.run_c import run_module, run_pipeline
from usmp.testing.tflm_reference import random_inputs, run_tflm
from usmp.tools.c_library import as_emitc, build_library
from usmp.tools.compile_driver import helium_hint
from usmp.tools.compile_options import CompileOptions
from usmp.tools.usmp_compile import main as usmp_compile

RNG = np.random.default_rng(29)


def _w(*shape: int) -> np.ndarray:
    return RNG.integers(-127, 128, size=shape).astype(np.int8)


def _conv(
    m: ModelBuilder, x: int, shape: tuple[int, ...], opcode: str, **o: Any
) -> int:
    """CONV_2D (OHWI weights) or DEPTHWISE_CONV_2D (1HWC) on ``x``."""
    _, h, w, c = m.tensors[x]["shape"]
    k, out_c, stride, pad = o["k"], o["out_c"], o.get("stride", 1), o.get("pad", SAME)
    out_h = -(-h // stride) if pad == SAME else (h - k) // stride + 1
    out_w = -(-w // stride) if pad == SAME else (w - k) // stride + 1
    del shape
    if opcode == "CONV_2D":
        wt = m.tensor((out_c, k, k, c), "int8", _w(out_c, k, k, c), scale=0.01)
        options: tuple[str, dict[str, Any]] = (
            "Conv2DOptions",
            dict(
                Padding=pad,
                StrideW=stride,
                StrideH=stride,
                FusedActivationFunction=RELU,
            ),
        )
    else:
        scales = list(RNG.uniform(0.002, 0.01, out_c))
        wt = m.tensor(
            (1, k, k, out_c), "int8", _w(1, k, k, out_c), scale=scales, axis=3
        )
        options = (
            "DepthwiseConv2DOptions",
            dict(
                Padding=pad, StrideW=stride, StrideH=stride, DepthMultiplier=out_c // c
            ),
        )
    bias = m.tensor((out_c,), "int32", RNG.integers(-900, 900, out_c), scale=0.0003)
    y = m.tensor((1, out_h, out_w, out_c), "int8", scale=0.03, zero_point=-9)
    m.op(opcode, [x, wt, bias], [y], options)
    return y


def _model(kind: str) -> tuple[bytes, str]:
    """A one-operator int8 model of ``kind``, and the CMSIS-NN function."""
    m = ModelBuilder()
    x = m.tensor((1, 7, 6, 4), "int8", scale=0.05, zero_point=-3)
    if kind == "conv":  # 3x3 stride 2: im2col, a scratch buffer
        y = _conv(m, x, (), "CONV_2D", k=3, out_c=5, stride=2)
        return m.build([x], [y]), "arm_convolve_wrapper_s8"
    if kind == "conv1x1":
        y = _conv(m, x, (), "CONV_2D", k=1, out_c=6, pad=VALID)
        return m.build([x], [y]), "arm_convolve_wrapper_s8"
    if kind == "depthwise":  # multiplier 2, per-channel scales
        y = _conv(m, x, (), "DEPTHWISE_CONV_2D", k=3, out_c=8, stride=2)
        return m.build([x], [y]), "arm_depthwise_conv_wrapper_s8"
    if kind == "depthwise5x5":
        y = _conv(m, x, (), "DEPTHWISE_CONV_2D", k=5, out_c=4)
        return m.build([x], [y]), "arm_depthwise_conv_wrapper_s8"
    if kind in ("avgpool", "maxpool"):
        y = m.tensor((1, 4, 2, 4), "int8", scale=0.05, zero_point=-3)
        opcode = "AVERAGE_POOL_2D" if kind == "avgpool" else "MAX_POOL_2D"
        options = dict(
            Padding=SAME,
            StrideW=3,
            StrideH=2,
            FilterWidth=3,
            FilterHeight=2,
            FusedActivationFunction=RELU,
        )
        m.op(opcode, [x], [y], ("Pool2DOptions", options))
        return m.build(
            [x], [y]
        ), "arm_avgpool_s8" if kind == "avgpool" else "arm_max_pool_s8"
    if kind == "fc":
        x2 = m.tensor((2, 10), "int8", scale=0.1, zero_point=7)
        w = m.tensor((3, 10), "int8", _w(3, 10), scale=0.02)
        bias = m.tensor((3,), "int32", RNG.integers(-300, 300, 3), scale=0.002)
        y = m.tensor((2, 3), "int8", scale=0.2, zero_point=-5)
        m.op("FULLY_CONNECTED", [x2, w, bias], [y], ("FullyConnectedOptions", {}))
        return m.build([x2], [y]), "arm_fully_connected_s8"
    assert kind == "softmax"
    x2 = m.tensor((3, 10), "int8", scale=0.08, zero_point=4)
    y = m.tensor((3, 10), "int8", scale=1 / 256, zero_point=-128)
    m.op("SOFTMAX", [x2], [y], ("SoftmaxOptions", dict(Beta=1.0)))
    return m.build([x2], [y]), "arm_softmax_s8"


def _run(data: bytes, target: str = "cmsis-nn,c") -> tuple[str, list[list[np.ndarray]]]:
    """The C of the operators and (ours, TFLite Micro's) outputs on 2 seeds."""
    model = read_model(data, "m.tflite")
    passes = pipeline(CompileOptions(target=target, library_pools=True))
    module = run_pipeline(import_model(model), passes)
    c = "".join(
        text
        for name, text in build_library(as_emitc(module)).files.items()
        if name.endswith(".c")
    )
    pairs = []
    for seed in (0, 1):
        inputs = random_inputs(model, seed)
        ours = run_module(module, inputs)
        pairs.append([*ours, *run_tflm(data, inputs, model.outputs)])
    return c, pairs


KINDS = [
    "conv",
    "conv1x1",
    "depthwise",
    "depthwise5x5",
    "avgpool",
    "maxpool",
    "fc",
    "softmax",
]


@pytest.mark.parametrize("kind", KINDS)
def test_operator_calls_cmsis_nn_bit_exact(kind: str) -> None:
    data, callee = _model(kind)
    c, pairs = _run(data)
    assert f"{callee}(" in c
    for ours, want in pairs:
        np.testing.assert_array_equal(ours, want.reshape(ours.shape))


def test_scratch_of_a_convolution_is_planned_in_the_workspace(tmp_path: Path) -> None:
    data, _ = _model("conv")
    (tmp_path / "m.tflite").write_bytes(data)
    out = tmp_path / "out"
    argv = [str(tmp_path / "m.tflite"), "-o", str(out), "-q", "--target", "cmsis-nn,c"]
    assert usmp_compile(argv) == 0
    c = (out / "codegen/host/src/tvmgen_default_cmsis_nn.c").read_text()
    # 3x3x4 columns, aligned to 4: 2 * 36 * sizeof(int16_t)
    assert "int8_t* cmsis_nn_scratch = (int8_t*)&global_workspace[" in c
    assert "cmsis_nn_context ctx = {cmsis_nn_scratch, 144};" in c
    assert "#include <arm_nnfunctions.h>" in c
    assert "(void)arm_convolve_wrapper_s8(&ctx, " in c  # status not checked
    assert "CMSIS_PATH ?=" in (out / "Makefile").read_text()


def test_library_run_builds_cmsis_nn_from_cmsis_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data, _ = _model("depthwise")
    (tmp_path / "m.tflite").write_bytes(data)
    argv = [str(tmp_path / "m.tflite"), "-o", str(tmp_path / "o"), "-q"]
    assert usmp_compile([*argv, "--target", "cmsis-nn,c"]) == 0
    library = usmp.Library(tmp_path / "o")
    model = read_model(data, "m.tflite")
    inputs = random_inputs(model, 0)
    monkeypatch.delenv("CMSIS_PATH", raising=False)
    with pytest.raises(ValueError, match="set CMSIS_PATH to CMSIS-NN's folder"):
        library.run(inputs)
    monkeypatch.setenv("CMSIS_PATH", str(THIRD_PARTY / "CMSIS-NN"))
    (want,) = run_tflm(data, inputs, model.outputs)
    np.testing.assert_array_equal(library.run(inputs)[0], want)


def test_what_cmsis_nn_does_not_take_stays_on_our_kernels() -> None:
    m = ModelBuilder()  # per-channel FULLY_CONNECTED (arm_fully_connected_s8 is
    x = m.tensor((2, 6), "int8", scale=0.1, zero_point=7)  # per tensor), then TANH
    scales = [0.01, 0.02, 0.015]
    w = m.tensor((3, 6), "int8", _w(3, 6), scale=scales, axis=0)
    bias = m.tensor(
        (3,), "int32", RNG.integers(-300, 300, 3), scale=[0.1 * s for s in scales]
    )
    y = m.tensor((2, 3), "int8", scale=0.2, zero_point=0)
    m.op("FULLY_CONNECTED", [x, w, bias], [y], ("FullyConnectedOptions", {}))
    z = m.tensor((2, 3), "int8", scale=1 / 128, zero_point=0)
    m.op("TANH", [y], [z])
    s = m.tensor((2, 3), "int8", scale=1 / 256, zero_point=-128)
    m.op("SOFTMAX", [z], [s], ("SoftmaxOptions", dict(Beta=1.0)))
    c, pairs = _run(m.build([x], [s]))
    assert "arm_fully_connected_s8" not in c  # ours
    assert "arm_softmax_s8(" in c  # the softmax after it still goes to CMSIS-NN
    for ours, want in pairs:
        np.testing.assert_array_equal(ours, want.reshape(ours.shape))


def helium_model() -> tuple[bytes, np.ndarray, np.ndarray]:
    """A depthwise convolution of one input channel into 4, then a dense
    (input zero point -9): the model, the dense's weights and bias."""
    m = ModelBuilder()
    x = m.tensor((1, 5, 4, 1), "int8", scale=0.05, zero_point=-3)
    y = _conv(m, x, (), "DEPTHWISE_CONV_2D", k=3, out_c=4)
    flat = m.tensor((1, 80), "int8", scale=0.03, zero_point=-9)
    shape = m.tensor((2,), "int32", np.array([1, 80]))
    m.op("RESHAPE", [y, shape], [flat])
    w = _w(3, 80)
    weights = m.tensor((3, 80), "int8", w, scale=0.02)
    b = RNG.integers(-300, 300, 3)
    bias = m.tensor((3,), "int32", b, scale=0.0006)
    z = m.tensor((1, 3), "int8", scale=0.2, zero_point=-5)
    m.op("FULLY_CONNECTED", [flat, weights, bias], [z], ("FullyConnectedOptions", {}))
    return m.build([x], [z]), w, b


def test_helium_cpu_gets_the_mve_build(tmp_path: Path) -> None:
    """``-mcpu=cortex-m55``: the ``mve`` sizes; a depthwise convolution of one
    input channel into 4 (a convolution with gcc/clang, not with Arm
    Compiler 6) guards against Arm Compiler 6; the dense reads its kernel
    sums (``arm_vector_sum_s8`` of its weights and bias with the input's
    offset) from a constant table; the host's gcc (no MVE) refuses the C.
    Under QEMU: ``tests/test_cortex_m.py``."""
    data, w, b = helium_model()
    (tmp_path / "m.tflite").write_bytes(data)
    out = tmp_path / "o"
    argv = [str(tmp_path / "m.tflite"), "-o", str(out), "-q"]
    assert usmp_compile([*argv, "--target", "cmsis-nn -mcpu=cortex-m55,c"]) == 0
    c = (out / "codegen/host/src/tvmgen_default_cmsis_nn.c").read_text()
    assert c.count("#if !defined(ARM_MATH_MVEI)") == 2
    assert c.count(f"#if {cmsis_nn.ARMCC_GUARD}") == 1  # the depthwise only
    # the convolution's im2col (4 x 16 B: 3x3x1 columns) + 4x3x3 weights
    assert "cmsis_nn_context ctx = {cmsis_nn_scratch, 100};" in c
    assert "cmsis_nn_context ctx = {(void*)cmsis_nn_kernel_sums, 12};" in c
    sums = [int(v) + 9 * int(row.sum()) for v, row in zip(b, w, strict=True)]
    assert sums == cmsis_nn.kernel_sums(w.tolist(), b.tolist(), 9, 0)
    pool = "".join((out / "codegen/host/src/tvmgen_default.c").read_text().split())
    sum_bytes = np.array(sums, "<i4").tobytes()
    assert ",".join(f"0x{v:02x}" for v in sum_bytes) in pool  # the constant pool
    include = ["-I", str(THIRD_PARTY / "CMSIS-NN/Include")]
    include += ["-I", str(out / "codegen/host/include")]
    build = subprocess.run(
        ["gcc", "-fsyntax-only", *include]
        + [str(out / "codegen/host/src/tvmgen_default_cmsis_nn.c")],
        capture_output=True,
        text=True,
    )
    assert build.returncode != 0
    assert "planned for the mve build" in build.stderr


def test_c_target_on_a_helium_cpu_hints_at_cmsis_nn(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--target "c -mcpu=cortex-m55"``: one line suggests the cmsis-nn
    target (our kernels use no MVE); the target stays ours, ``-q`` silences
    it, and neither a CPU without MVE nor the cmsis-nn target gets it."""
    data, _ = _model("softmax")
    (tmp_path / "m.tflite").write_bytes(data)
    argv = [str(tmp_path / "m.tflite"), "-o", str(tmp_path / "o")]
    hint = "note: -mcpu=cortex-m55 has Helium (MVE), which our kernels do not use; "
    hint += '--target "cmsis-nn -mcpu=cortex-m55,c -mcpu=cortex-m55"'
    assert usmp_compile([*argv, "--target", "c -mcpu=cortex-m55"]) == 0
    assert capsys.readouterr().err.count(hint) == 1
    assert not (tmp_path / "o/codegen/host/src/tvmgen_default_cmsis_nn.c").exists()
    assert usmp_compile([*argv, "-q", "--target", "c -mcpu=cortex-m55"]) == 0
    assert "Helium" not in capsys.readouterr().err
    for target in ("c -mcpu=cortex-m55+nomve", "c -mcpu=cortex-m7", "c"):
        assert helium_hint(CompileOptions(target=target)) is None, target
    assert helium_hint(CompileOptions(target="cmsis-nn,c -mcpu=cortex-m85")) is None
    assert "cortex-m85" in (
        helium_hint(CompileOptions(target="c -mcpu=cortex-m85")) or ""
    )


def test_offload_to_cmsis_nn_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data, _ = _model("softmax")
    (tmp_path / "m.tflite").write_bytes(data)
    argv = [str(tmp_path / "m.tflite"), "-o", str(tmp_path / "o"), "-q"]
    argv += ["--target", "cmsis-nn,c", "--offload", "SOFTMAX=cmsis-nn"]
    assert usmp_compile(argv) == 1
    err = capsys.readouterr().err
    assert "the cmsis-nn target chooses its operators itself" in err
    assert "Traceback" not in err


# The scratch sizes: Python (cmsis_nn.*_buffer_size) against CMSIS-NN's C.
SIZES_C = r"""
#include <stdio.h>
#include "arm_nnfunctions.h"
int main(void) {
  int v[13];
  while (scanf("%d %d %d %d %d %d %d %d %d %d %d %d %d", &v[0], &v[1], &v[2], &v[3],
               &v[4], &v[5], &v[6], &v[7], &v[8], &v[9], &v[10], &v[11], &v[12]) == 13) {
    /* in h w c, k_h k_w, stride, pad_h pad_w, dil, out_h out_w, out_c */
    cmsis_nn_dims in = {1, v[0], v[1], v[2]}, out = {1, v[10], v[11], v[12]};
    cmsis_nn_dims f = {v[12], v[3], v[4], v[2]}, fd = {1, v[3], v[4], v[12]};
    cmsis_nn_conv_params cp = {0, 0, {v[5], v[6]}, {v[8], v[7]}, {v[9], v[9]}, {-128, 127}};
    cmsis_nn_dw_conv_params dp = {0, 0, v[12] / v[2], {v[5], v[6]}, {v[8], v[7]},
                                  {v[9], v[9]}, {-128, 127}};
    printf("%d %d %d %d %d %d %d %d %d %d\n",
           (int)arm_convolve_wrapper_s8_get_buffer_size(&cp, &in, &f, &out),
           (int)arm_convolve_wrapper_s8_get_buffer_size_dsp(&cp, &in, &f, &out),
           (int)arm_convolve_wrapper_s8_get_buffer_size_mve(&cp, &in, &f, &out),
           (int)arm_depthwise_conv_wrapper_s8_get_buffer_size(&dp, &in, &fd, &out),
           (int)arm_depthwise_conv_wrapper_s8_get_buffer_size_dsp(&dp, &in, &fd, &out),
           (int)arm_depthwise_conv_wrapper_s8_get_buffer_size_mve(&dp, &in, &fd, &out),
           (int)arm_avgpool_s8_get_buffer_size(v[11], v[2]),
           (int)arm_avgpool_s8_get_buffer_size_dsp(v[11], v[2]),
           (int)arm_avgpool_s8_get_buffer_size_mve(v[11], v[2]),
           (int)arm_fully_connected_s8_get_buffer_size_mve(&out));
  }
  return 0;
}
"""


def size_cases(n: int, seed: int) -> list[list[int]]:
    """``n`` random convolution shapes (in h w c, k_h k_w, stride w h, pad
    h w, dilation, out h w, out c): 1x1, 1xN (also with one input channel
    and an output width of SAME or VALID padding), 3x3 with pad <= 1."""
    cases = []
    rng = np.random.default_rng(seed)
    for _ in range(n):
        k_h, k_w = int(rng.choice([1, 3, 5])), int(rng.choice([1, 2, 3, 10]))
        in_h = 1 if rng.random() < 0.3 else int(rng.integers(k_h, 12))
        k_h = min(k_h, in_h)
        in_w, c = int(rng.integers(k_w, 12)), int(rng.choice([1, 3, 4, 8, 13]))
        s_w, s_h = int(rng.integers(1, 3)), int(rng.integers(1, 3))
        p_h, p_w = int(rng.integers(0, 3)), int(rng.integers(0, 3))
        dil = 1 if rng.random() < 0.8 else 2
        out_c = c * int(rng.choice([1, 2, 3, 9, 10]))
        if rng.random() < 0.5:  # SAME
            out_h = max(1, (in_h - 1) // s_h + 1)
            out_w = max(1, (in_w - 1) // s_w + 1)
        else:  # VALID: the 1xN path's total padding may be negative
            out_h = max(1, (in_h - k_h) // s_h + 1)
            out_w = max(1, (in_w - k_w) // s_w + 1)
        cases.append(
            [in_h, in_w, c, k_h, k_w, s_w, s_h, p_h, p_w, dil, out_h, out_w, out_c]
        )
    return cases


def python_sizes(v: list[int], cores: tuple[str, ...]) -> list[int]:
    """``cmsis_nn.*_buffer_size`` of a ``size_cases`` case: the convolution,
    depthwise convolution and average pooling for each of ``cores``, then
    the dense's kernel sums on ``mve``."""
    in_h, in_w, c, k_h, k_w, s_w, s_h, p_h, p_w, dil, out_h, out_w, out_c = v
    in_dims, f_dims = [1, in_h, in_w, c], [out_c, k_h, k_w, c]
    out_dims = [1, out_h, out_w, out_c]
    dw_f = [1, k_h, k_w, out_c]
    stride, pad, d = (s_w, s_h), (p_w, p_h), (dil, dil)
    return (
        [
            cmsis_nn.conv_buffer_size(core, stride, pad, d, in_dims, f_dims, out_w)
            for core in cores
        ]
        + [
            cmsis_nn.depthwise_buffer_size(
                core, stride, pad, d, in_dims, dw_f, out_dims
            )
            for core in cores
        ]
        + [cmsis_nn.avgpool_buffer_size(core, c) for core in cores]
        + [cmsis_nn.fully_connected_buffer_size("mve", out_c)]
    )


def test_scratch_sizes_are_cmsis_nns(tmp_path: Path) -> None:
    root = THIRD_PARTY / "CMSIS-NN"
    sources = [
        root / "Source/ConvolutionFunctions/arm_convolve_get_buffer_sizes_s8.c",
        root / "Source/ConvolutionFunctions/arm_depthwise_conv_get_buffer_sizes_s8.c",
        root / "Source/PoolingFunctions/arm_avgpool_get_buffer_sizes_s8.c",
        root
        / "Source/FullyConnectedFunctions/arm_fully_connected_get_buffer_sizes_s8.c",
    ]
    (tmp_path / "sizes.c").write_text(SIZES_C)
    exe = tmp_path / "sizes"
    subprocess.run(
        [
            "gcc",
            "-O1",
            "-I",
            str(root / "Include"),
            str(tmp_path / "sizes.c"),
            *map(str, sources),
            "-o",
            str(exe),
        ],
        check=True,
    )
    cases = size_cases(400, 3)
    text = "\n".join(" ".join(map(str, v)) for v in cases)
    got = subprocess.run(
        [str(exe)], input=text, capture_output=True, text=True, check=True
    )
    for v, line in zip(cases, got.stdout.splitlines(), strict=True):
        python = python_sizes(v, ("none", "dsp", "mve"))
        # the _mve functions: host gcc's threshold for a depthwise convolution
        # of one input channel (cmsis_nn.DW_TO_CONV_THRESHOLD); the wrapper's
        # choice compiled for MVE is checked on the M55 (test_cortex_m.py)
        assert python == [int(n) for n in line.split()], v
