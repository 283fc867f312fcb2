"""The Arm DSP kernels (``lower-ops{mcpu=cortex-m4}``) on the host: the same
generated C, its ``usmp_*`` helpers in portable C, bit for bit.

* every fused group of the int8 models (the per-tensor check of
  ``test_models_per_tensor``, lowered for the Cortex-M4), built with gcc
  under ASan/UBSan: every group result equals the numpy oracle;
* random conv2d / depthwise / dense groups (shapes, strides, padding, zero
  points, jam widths) against the oracle, and the portable helpers against
  the instructions' definitions (Arm ARM) on random words;
* the lowering itself: which kernels take the DSP path, the weights
  re-laid out (and their parameter dropped), the workspace of every model
  unchanged (the overlap analysis traces the new kernels).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.test_models_per_tensor import (
    assert_same,
    expose_group_results,
    model_inputs,
)
from usmp.dialects.emitc import CallOpaqueOp
from usmp.frontend.tflite_import import import_model
from usmp.frontend.tflite_reader import read_model_file
from usmp.lowering.target import TargetFeatures
from usmp.oracle.relay_interpreter import evaluate
from usmp.testing.run_c import (
    c_int32_table,
    run_module,
    run_pipeline,
    sanitized_output,
)
from usmp.testing.shared_models import MODELS_DIR
from usmp.tools.c_library import as_emitc, load

M4 = "lower-ops{mcpu=cortex-m4},aot-lower-main,usmp"
INT8_MODELS = [
    "mlperf_tiny/kws_ref_model.tflite",
    "mlperf_tiny/vww_96_int8.tflite",
    "mlperf_tiny/pretrainedResnet_quant.tflite",
    "mlperf_tiny/ad01_int8.tflite",
    "mlperf_tiny/model_ToyCar_quant_fullint.tflite",
    "tflite_micro/micro_speech_quantized.tflite",
    "tflite_micro/hello_world_int8.tflite",
]


# VWW's 29 groups under ASan/UBSan take 17 s; their kernels are the same
# DSP kernels as KWS's and ResNet-8's (which run sanitised), so VWW runs
# without the sanitisers, for its own shapes.
UNSANITISED = {"mlperf_tiny/vww_96_int8.tflite"}


@pytest.mark.parametrize("name", INT8_MODELS)
def test_every_group_result_matches_oracle(name: str) -> None:
    path = MODELS_DIR / name
    model = read_model_file(path)
    module = expose_group_results(import_model(model))
    lowered = as_emitc(run_pipeline(module, M4))  # once for every input
    for kind, inputs in model_inputs(name, model).items():
        wanted = evaluate(module, inputs)
        got = run_module(lowered, inputs, sanitize=name not in UNSANITISED)
        labels = [f"result {k}" for k in range(len(wanted))]
        assert_same(f"{name} on {kind} input (cortex-m4)", got, wanted, labels)


@pytest.mark.parametrize(
    ("mcpu", "dsp"),
    [
        ("", False),
        ("cortex-m0plus", False),
        ("cortex-m3", False),
        ("cortex-m4", True),
        ("Cortex-M7", True),
        ("cortex-m33", True),
        ("cortex-m33+nodsp", False),
        ("cortex-m55", True),
        ("cortex-a53", False),
    ],
)
def test_target_features(mcpu: str, dsp: bool) -> None:
    assert TargetFeatures.of(mcpu).dsp is dsp


def _lanes(x: int) -> tuple[int, int]:
    lo, hi = x & 0xFFFF, (x >> 16) & 0xFFFF
    return (lo - (lo >> 15 << 16), hi - (hi >> 15 << 16))


def _bytes(x: int) -> list[int]:
    return [((x >> (8 * k)) & 0xFF) - (((x >> (8 * k)) & 0x80) << 1) for k in range(4)]


def _s32(x: int) -> int:
    x &= 0xFFFFFFFF
    return x - (1 << 32) if x >> 31 else x


def _pair(lo: int, hi: int) -> int:
    return _s32((lo & 0xFFFF) | (hi & 0xFFFF) << 16)


def _reference(name: str, a: int, b: int, c: int) -> int:
    """The Arm ARM's definition of each helper's instruction."""
    if name == "usmp_sxtb16":
        return _pair(_bytes(a)[0], _bytes(a)[2])
    if name == "usmp_sxtb16_ror8":
        return _pair(_bytes(a)[1], _bytes(a)[3])
    if name in ("usmp_sxtab16", "usmp_sxtab16_ror8"):
        k = 0 if name == "usmp_sxtab16" else 1
        lo, hi = _lanes(a)
        return _pair(lo + _bytes(b)[k], hi + _bytes(b)[k + 2])
    if name == "usmp_smlad":
        (a0, a1), (b0, b1) = _lanes(a), _lanes(b)
        return _s32(c + a0 * b0 + a1 * b1)
    if name == "usmp_smlabb":
        return _s32(c + _lanes(a)[0] * _lanes(b)[0])
    if name == "usmp_smlatt":
        return _s32(c + _lanes(a)[1] * _lanes(b)[1])
    if name == "usmp_smmulr":
        return _s32((a * b + (1 << 31)) >> 32)
    if name == "usmp_ssat8":
        return max(-128, min(127, a))
    assert name == "usmp_ssat16"
    return max(-32768, min(32767, a))


HELPER_ARITY = {
    "usmp_sxtb16": 1,
    "usmp_sxtb16_ror8": 1,
    "usmp_sxtab16": 2,
    "usmp_sxtab16_ror8": 2,
    "usmp_smlad": 3,
    "usmp_smlabb": 3,
    "usmp_smlatt": 3,
    "usmp_smmulr": 2,
    "usmp_ssat8": 1,
    "usmp_ssat16": 1,
}


def test_portable_helpers_match_the_instructions(tmp_path) -> None:  # noqa: ANN001
    """The prelude's portable C (what x86 runs) computes each instruction
    exactly as the Arm ARM defines it, on edge and random words."""
    from usmp.lowering.dsp import ARITHMETIC, PRELUDE

    assert set(HELPER_ARITY) == ARITHMETIC
    rng = np.random.default_rng(0)
    edges = [0, 1, -1, 127, -128, 32767, -32768, 2**31 - 1, -(2**31), 0x7F80FF01]
    words = edges + [int(v) for v in rng.integers(-(2**31), 2**31, 200)]
    cases = [
        (name, a, b, c)
        for name in sorted(HELPER_ARITY)
        for a in words[:60]
        for b, c in zip(words[60:100], words[100:140], strict=True)
    ]

    # the words as tables and a loop per helper: the cases in the same order
    # (a program of one printf per case took gcc with ASan ~9 s to build)
    lines = [
        "#include <stdint.h>",
        "#include <stdio.h>",
        "#include <string.h>",
        PRELUDE,
        c_int32_table("A", words[:60]),
        c_int32_table("B", words[60:100]),
        c_int32_table("C", words[100:140]),
        "int main(void) {",
        "  int i, j;",
    ]
    for name in sorted(HELPER_ARITY):
        args = ", ".join(["A[i]", "B[j]", "C[j]"][: HELPER_ARITY[name]])
        lines += [
            "  for (i = 0; i < 60; ++i)",
            "    for (j = 0; j < 40; ++j)",
            f'      printf("%ld\\n", (long){name}({args}));',
        ]
    lines += ["  return 0;", "}"]
    got = sanitized_output(lines, tmp_path, "helpers")
    want = [_reference(*case) for case in cases]
    bad = [(case, g, w) for case, g, w in zip(cases, got, want, strict=True) if g != w]
    assert not bad, bad[:5]


@st.composite
def conv_groups(draw: st.DrawFn) -> tuple[str, list[np.ndarray]]:
    """A relay module: an int8 conv2d (regular or depthwise) or dense with
    bias, per-channel requantisation and clip, and its input."""
    kind = draw(st.sampled_from(["conv", "depthwise", "dense"]))
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    izp = draw(st.integers(-128, 127))
    if kind == "dense":
        depth = draw(st.integers(1, 40))
        units = draw(st.sampled_from([1, 2, 3, 4, 8, 12]))
        x_shape, w_shape, out_shape = [2, depth], [units, depth], [2, units]
        channels = units
        attrs = f"input_zero_point = {izp} : i64"
        op = "relay.dense"
    else:
        h, w = draw(st.integers(1, 9)), draw(st.integers(1, 9))
        kh, kw = draw(st.integers(1, 4)), draw(st.integers(1, 4))
        sh, sw = draw(st.integers(1, 3)), draw(st.integers(1, 3))
        pads = [draw(st.integers(0, k - 1)) for k in (kh, kw, kh, kw)]
        cin = draw(st.sampled_from([1, 3, 4, 8, 12]))
        if kind == "depthwise":
            channels, groups = cin, cin
            w_shape = [kh, kw, 1, cin]
            layout = "HWIO"
        else:
            channels, groups = draw(st.sampled_from([1, 2, 4, 8, 12])), 1
            w_shape = [channels, kh, kw, cin]
            layout = "OHWI"
        oh = (h + pads[0] + pads[2] - kh) // sh + 1
        ow = (w + pads[1] + pads[3] - kw) // sw + 1
        if oh < 1 or ow < 1:
            oh, ow, pads = 1, 1, [0, 0, 0, 0]
            h, w = kh, kw
        x_shape, out_shape = [1, h, w, cin], [1, oh, ow, channels]
        attrs = (
            f"strides = array<i64: {sh}, {sw}>, "
            f"padding = array<i64: {', '.join(map(str, pads))}>, "
            f"groups = {groups} : i64, kernel_layout = #relay<kernel_layout {layout}>, "
            f"input_zero_point = {izp} : i64"
        )
        op = "relay.conv2d"
    weights = rng.integers(-127, 128, w_shape).astype(np.int8)
    bias = rng.integers(-5000, 5000, channels).astype(np.int32)
    mult = [int(v) for v in rng.integers(1 << 30, (1 << 31) - 1, channels)]
    shift = [-int(v) for v in rng.integers(1, 12, channels)]

    def tensor(shape: list[int], t: str) -> str:
        return f"tensor<{'x'.join(map(str, shape))}x{t}>"

    def dense(values: np.ndarray) -> str:
        data = np.ascontiguousarray(values).astype(values.dtype.newbyteorder("<"))
        return f'dense<"0x{data.tobytes().hex().upper()}">'

    axis = len(out_shape) - 1
    text = f"""
func.func @main(%x: {tensor(x_shape, "i8")}) -> {tensor(out_shape, "i8")} {{
  %w = relay.constant {dense(weights)} : {tensor(w_shape, "i8")}
  %b = relay.constant {dense(bias)} : {tensor([channels], "i32")}
  %c = {op} %x, %w {{{attrs}}} : ({tensor(x_shape, "i8")}, {tensor(w_shape, "i8")}) -> {tensor(out_shape, "i32")}
  %a = relay.add %c, %b : ({tensor(out_shape, "i32")}, {tensor([channels], "i32")}) -> {tensor(out_shape, "i32")}
  %m = relay.fixed_point_multiply %a {{multiplier = array<i32: {", ".join(map(str, mult))}>, shift = array<i32: {", ".join(map(str, shift))}>, axis = {axis} : i64}} : {tensor(out_shape, "i32")} -> {tensor(out_shape, "i32")}
  %z = relay.clip %m {{a_min = -128.0 : f64, a_max = 127.0 : f64}} : {tensor(out_shape, "i32")} -> {tensor(out_shape, "i32")}
  %r = relay.cast %z : {tensor(out_shape, "i32")} -> {tensor(out_shape, "i8")}
  func.return %r : {tensor(out_shape, "i8")}
}}
"""
    x = rng.integers(-128, 128, x_shape).astype(np.int8)
    return text, [x]


@settings(max_examples=15, deadline=None)
@given(conv_groups())
def test_random_groups_match_oracle(case: tuple[str, list[np.ndarray]]) -> None:
    text, inputs = case
    module = load(text)
    wanted = evaluate(module, inputs)
    got = run_module(module, inputs, passes=f"fuse-ops,{M4}", sanitize=True)
    assert_same("random group", got, wanted, ["output"])


def test_mlir_translate_builds_the_dsp_library() -> None:
    """MLIR 22's ``mlir-translate --mlir-to-cpp`` accepts the DSP module
    (intrinsic calls, the helpers' prelude as ``emitc.verbatim``) and its C
    runs like ours, under ASan/UBSan."""
    from tests.mlir_tools import missing_tool, mlir_bin

    folder = mlir_bin()
    if folder is None or not (folder / "mlir-translate").exists():
        missing_tool("mlir-translate (MLIR 22)", "apt-get install mlir-22-tools")
    path = MODELS_DIR / INT8_MODELS[0]
    model = read_model_file(path)
    module = import_model(model)
    inputs = model_inputs(INT8_MODELS[0], model)["structured"]
    passes = f"fuse-ops,{M4}"
    ours = run_module(module, inputs, passes=passes, sanitize=True)
    theirs = run_module(
        module, inputs, passes=passes, sanitize=True, emitter="mlir-translate"
    )
    assert [a.tobytes() for a in ours] == [a.tobytes() for a in theirs]


@pytest.mark.parametrize(
    ("name", "workspace"),
    [
        ("mlperf_tiny/kws_ref_model.tflite", 8448),
        ("mlperf_tiny/vww_96_int8.tflite", 37280),
        ("mlperf_tiny/pretrainedResnet_quant.tflite", 32768),
    ],
)
def test_workspace_unchanged(name: str, workspace: int, compiled_model) -> None:  # noqa: ANN001
    """The DSP kernels keep the portable ones' access order where it matters:
    the overlap analysis traces them and the planned workspace (I/O inside)
    is the portable figure. Constants grow only by what the DSP lowering
    adds on purpose: the depthwise weights as 16-bit pairs (twice their
    bytes), two i32 per requantised channel (rounding constants, folded
    input offsets) and each table's alignment; the re-laid out weights of
    convolutions and dense layers take their original bytes."""
    import json

    path = MODELS_DIR / name
    sizes = []
    # the compiles of the memory bar (test_models_compile: the default target
    # is "c") and of test_compile_pipeline's DSP case (conftest.py)
    for flags in (
        ("--use-workspace-io",),
        ("--target", "c -mcpu=cortex-m4", "--use-workspace-io"),
    ):
        out = compiled_model(name, *flags)
        summary = json.loads((out / "metadata.json").read_text())["memory_summary"]
        sizes.append(summary)
    portable, dsp = sizes
    assert portable["workspace_bytes"] == dsp["workspace_bytes"] == workspace
    model = read_model_file(path)
    allowed = 0
    for op in model.operators:
        if op.opcode not in ("CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED"):
            continue
        channels = model.tensors[op.outputs[0]].shape[-1]
        allowed += 2 * 4 * channels + 3 * 16
        if op.opcode == "DEPTHWISE_CONV_2D":
            weights = model.tensors[op.inputs[1]]
            allowed += int(np.prod(weights.shape))
    assert portable["constant_bytes"] < dsp["constant_bytes"]
    assert dsp["constant_bytes"] <= portable["constant_bytes"] + allowed


def test_offloaded_groups_keep_portable_kernels(tmp_path) -> None:  # noqa: ANN001
    """``-mcpu`` is the host target's option: a group offloaded to another
    target (``--target "accel,c -mcpu=cortex-m4"``) is lowered portably,
    the host's groups with the DSP kernels."""
    from usmp.lowering.dsp import HELPERS
    from usmp.tools.usmp_compile import main as usmp_compile

    path = MODELS_DIR / INT8_MODELS[0]
    out = tmp_path / "kws"
    argv = [str(path), "-o", str(out), "-q", "--module-name", "kws"]
    argv += ["--target", "accel,c -mcpu=cortex-m4", "--offload", "CONV_2D=accel"]
    assert usmp_compile(argv) == 0
    src = out / "codegen/host/src"
    assert "usmp_smlabb(" in (src / "tvmgen_kws_operators.c").read_text()
    accel = (src / "tvmgen_kws_accel.c").read_text()
    assert not [name for name in HELPERS if name in accel]
    assert "usmp_mbqm_right(" in accel  # portable requantisation


def test_dead_accumulation_is_erased() -> None:
    """A DSP accumulation nobody reads (the epilogue clamps to one value,
    the i8 minimum) is erased with its helper calls (``dead_code``), while
    the same group with the full i8 range keeps them; both equal the oracle
    under ASan/UBSan with ``-Werror`` (no variable set but not used)."""
    weights = (np.arange(72, dtype=np.int8) - 36).reshape(3, 3, 1, 8)
    calls = {}
    for a_max in (-128, 127):
        text = f"""
func.func @main(%x: tensor<1x3x3x8xi8>) -> tensor<1x3x3x8xi8> {{
  %w = relay.constant dense<"0x{weights.tobytes().hex().upper()}"> : tensor<3x3x1x8xi8>
  %c = relay.conv2d %x, %w {{padding = array<i64: 1, 1, 1, 1>, groups = 8 : i64, kernel_layout = #relay<kernel_layout HWIO>, input_zero_point = 5 : i64}} : (tensor<1x3x3x8xi8>, tensor<3x3x1x8xi8>) -> tensor<1x3x3x8xi32>
  %m = relay.fixed_point_multiply %c {{multiplier = array<i32: 1073741824>, shift = array<i32: -3>, axis = 3 : i64}} : tensor<1x3x3x8xi32> -> tensor<1x3x3x8xi32>
  %z = relay.clip %m {{a_min = -128.0 : f64, a_max = 127.0 : f64}} : tensor<1x3x3x8xi32> -> tensor<1x3x3x8xi32>
  %r = relay.cast %z : tensor<1x3x3x8xi32> -> tensor<1x3x3x8xi8>
  %e = relay.clip %r {{a_min = -128.0 : f64, a_max = {a_max}.0 : f64}} : tensor<1x3x3x8xi8> -> tensor<1x3x3x8xi8>
  func.return %e : tensor<1x3x3x8xi8>
}}
"""
        lowered = run_pipeline(load(text), f"fuse-ops,{M4}")
        calls[a_max] = {
            op.callee.data for op in lowered.walk() if isinstance(op, CallOpaqueOp)
        }
        inputs = [np.arange(72, dtype=np.int8).reshape(1, 3, 3, 8)]
        wanted = evaluate(load(text), inputs)
        got = run_module(load(text), inputs, passes=f"fuse-ops,{M4}", sanitize=True)
        assert_same(f"clip to [-128, {a_max}]", got, wanted, ["output"])
    assert {"usmp_smlabb", "usmp_ssat8"} <= calls[127]
    assert not calls[-128]
