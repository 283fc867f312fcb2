"""TRANSPOSE, SQUEEZE, EXPAND_DIMS, MEAN and SUM on single-operator models
written with the flatbuffer builder (``test_import_tflite_synthetic``):
every operator's output compared with TFLite Micro through the oracle
(``compare_with_tflm``, every tensor) and through the C path (fuse-ops,
lower-ops, aot-lower-main, usmp, gcc), bit for bit for int8; plus the
aliases (no copy) and the refusals.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

import usmp
from tests.test_import_tflite_synthetic import _TYPES, ModelBuilder
from tests.test_models import compare_with_tflm
from usmp.frontend.tflite_import import import_tflite_bytes
from usmp.frontend.tflite_ops_layout import keeps_memory_order, mean_multiplier
from usmp.frontend.tflite_reader import TFLiteImportError, read_model
from usmp.testing.run_c import run_module, run_pipeline
from usmp.testing.tflm_reference import TFLMError, difference, random_inputs, run_tflm

Built = tuple[ModelBuilder, list[int], list[int]]


def _q(dtype: str, scale: float, zero_point: int) -> dict[str, Any]:
    return dict(scale=scale, zero_point=zero_point) if dtype == "int8" else {}


def c_matches_tflm(built: Built, seeds: tuple[int, ...] = (0, 1)) -> str:
    """Our C (gcc) == TFLite Micro on seeded inputs; the relay module's text."""
    m, inputs, outputs = built
    data = m.build(inputs, outputs)
    module = import_tflite_bytes(data)
    model = read_model(data, "synthetic.tflite")
    for seed in seeds:
        values = random_inputs(model, seed)
        got = run_module(
            module, values, passes="fuse-ops,lower-ops,aot-lower-main,usmp"
        )
        want = run_tflm(data, values, outputs)
        for g, w in zip(got, want, strict=True):
            assert difference(g, w) is None, f"seed {seed}: {difference(g, w)}"
    return str(import_tflite_bytes(data))


def check(built: Built) -> str:
    m, inputs, outputs = built
    compare_with_tflm(m.build(inputs, outputs), "synthetic.tflite")
    return c_matches_tflm(built)


def refusal(built: Built) -> str:
    m, inputs, outputs = built
    with pytest.raises(TFLiteImportError) as info:
        import_tflite_bytes(m.build(inputs, outputs), "crafted.tflite")
    return str(info.value)


# ------------------------------------------------------------------ TRANSPOSE


def transpose_model(shape: tuple[int, ...], perm: list[int], dtype: str) -> Built:
    m = ModelBuilder()
    q = _q(dtype, 0.05, -3)
    x = m.tensor(shape, dtype, **q)
    p = m.tensor((len(perm),), "int32", np.array(perm))
    y = m.tensor(tuple(shape[a] for a in perm), dtype, **q)
    m.op("TRANSPOSE", [x, p], [y])
    return m, [x], [y]


TRANSPOSES = [
    ((3, 5), [1, 0]),
    ((2, 3, 4), [2, 0, 1]),
    ((1, 4, 5, 3), [0, 3, 1, 2]),  # NHWC -> NCHW
    ((2, 3, 1, 4, 2), [4, 2, 0, 3, 1]),  # rank 5, TFLM's limit
]


@pytest.mark.parametrize("dtype", ["int8", "float32", "int16"])
@pytest.mark.parametrize(("shape", "perm"), TRANSPOSES)
def test_transpose_matches_tflite_micro(
    shape: tuple[int, ...], perm: list[int], dtype: str
) -> None:
    text = check(transpose_model(shape, perm, dtype))
    assert "relay.transpose" in text


def test_rank_6_transpose_c_matches_the_oracle() -> None:
    """TFLite allows rank 6, TFLite Micro's kernel stops at 5: numpy decides."""
    m, inputs, outputs = transpose_model((2, 1, 3, 2, 2, 3), [5, 3, 1, 0, 4, 2], "int8")
    module = import_tflite_bytes(m.build(inputs, outputs))
    (x,) = random_inputs(read_model(m.build(inputs, outputs)), seed=0)
    (got,) = run_module(module, [x], passes="fuse-ops,lower-ops,aot-lower-main,usmp")
    np.testing.assert_array_equal(got, x.transpose(5, 3, 1, 0, 4, 2))


def test_transpose_refuses_rank_7() -> None:
    assert refusal(
        transpose_model((1,) * 7, [6, 5, 4, 3, 2, 1, 0], "float32")
    ).endswith(
        "operator 0 (TRANSPOSE): input rank 7 is not supported (at most 6, as TFLite)"
    )


@pytest.mark.parametrize(
    ("shape", "perm"), [((1, 1, 4, 6), [0, 2, 1, 3]), ((1, 5, 1), [2, 0, 1])]
)
def test_transpose_of_size_one_axes_is_an_alias(
    shape: tuple[int, ...], perm: list[int]
) -> None:
    assert keeps_memory_order(shape, perm)
    text = check(transpose_model(shape, perm, "int8"))
    assert "relay.transpose" not in text and "relay.reshape" in text


def test_keeps_memory_order() -> None:
    assert keeps_memory_order((1, 3, 1, 4), [2, 1, 0, 3])
    assert not keeps_memory_order((1, 3, 1, 4), [0, 3, 2, 1])
    assert not keeps_memory_order((2, 3), [1, 0])


def test_transpose_refuses_a_bad_permutation() -> None:
    m, inputs, outputs = transpose_model((2, 3, 4), [0, 1, 2], "float32")
    m.buffers[-1] = np.array([0, 2, 2], np.int32).tobytes()
    assert refusal((m, inputs, outputs)).endswith(
        "operator 0 (TRANSPOSE): permutation [0, 2, 2] is not a permutation of "
        "0..2 (the input has rank 3)"
    )


def test_transpose_refuses_a_computed_permutation() -> None:
    m = ModelBuilder()
    x = m.tensor((2, 3), "float32")
    p = m.tensor((2,), "int32")
    y = m.tensor((3, 2), "float32")
    m.op("TRANSPOSE", [x, p], [y])
    assert refusal((m, [x, p], [y])).endswith(
        "operator 0 (TRANSPOSE): permutation 't1' must be a constant tensor"
    )


def test_transpose_refuses_a_requantisation() -> None:
    m = ModelBuilder()
    x = m.tensor((2, 3), "int8", scale=0.1, zero_point=0)
    p = m.tensor((2,), "int32", np.array([1, 0]))
    y = m.tensor((3, 2), "int8", scale=0.2, zero_point=0)
    m.op("TRANSPOSE", [x, p], [y])
    assert "TRANSPOSE copies raw values: the output 't2' must be quantised" in (
        refusal((m, [x], [y]))
    )


# ------------------------------------------------------- SQUEEZE, EXPAND_DIMS


def squeeze_expand_model(dtype: str) -> Built:
    """SQUEEZE with and without dimensions, EXPAND_DIMS with a negative axis,
    chained after a TRANSPOSE so the aliases see a computed tensor."""
    m = ModelBuilder()
    q = _q(dtype, 0.07, 5)
    x = m.tensor((1, 3, 1, 4), dtype, **q)
    p = m.tensor((4,), "int32", np.array([0, 3, 2, 1]))
    t = m.tensor((1, 4, 1, 3), dtype, **q)
    m.op("TRANSPOSE", [x, p], [t])
    s1 = m.tensor((1, 4, 3), dtype, **q)
    m.op("SQUEEZE", [t], [s1], ("SqueezeOptions", dict(SqueezeDims=[-2])))
    s2 = m.tensor((4, 3), dtype, **q)
    m.op("SQUEEZE", [s1], [s2], ("SqueezeOptions", {}))
    axis = m.tensor((), "int32", np.array(-2))
    e = m.tensor((4, 1, 3), dtype, **q)
    m.op("EXPAND_DIMS", [s2, axis], [e])
    return m, [x], [e]


@pytest.mark.parametrize("dtype", ["int8", "float32"])
def test_squeeze_expand_dims_match_tflite_micro(dtype: str) -> None:
    text = check(squeeze_expand_model(dtype))
    assert text.count("relay.reshape") == 3


def test_squeeze_refuses_a_dimension_larger_than_one() -> None:
    m = ModelBuilder()
    x = m.tensor((1, 3), "float32")
    y = m.tensor((3,), "float32")
    m.op("SQUEEZE", [x], [y], ("SqueezeOptions", dict(SqueezeDims=[1])))
    assert refusal((m, [x], [y])).endswith(
        "operator 0 (SQUEEZE): squeeze dimension 1 has size 3 in [1, 3], expected 1"
    )


def test_expand_dims_refuses_an_axis_out_of_range() -> None:
    m = ModelBuilder()
    x = m.tensor((2, 3), "float32")
    axis = m.tensor((1,), "int32", np.array([3]))
    y = m.tensor((2, 3, 1), "float32")
    m.op("EXPAND_DIMS", [x, axis], [y])
    assert refusal((m, [x], [y])).endswith(
        "operator 0 (EXPAND_DIMS): axis 3 is out of range for output rank 3"
    )


# ------------------------------------------------------------------ MEAN, SUM


def reduce_model(
    opcode: str,
    dtype: str,
    shape: tuple[int, ...],
    axes: list[int],
    keepdims: bool,
    out_q: tuple[float, int] = (0.05, -10),
) -> Built:
    m = ModelBuilder()
    x = m.tensor(shape, dtype, **_q(dtype, 0.05, -10))
    a = m.tensor((len(axes),), "int32", np.array(axes))
    reduced = {d % len(shape) for d in axes}
    out_shape = tuple(
        1 if i in reduced else s
        for i, s in enumerate(shape)
        if keepdims or i not in reduced
    )
    y = m.tensor(out_shape, dtype, **_q(dtype, *out_q))
    m.op(opcode, [x, a], [y], ("ReducerOptions", dict(KeepDims=keepdims)))
    return m, [x], [y]


REDUCTIONS = [
    # shape, axes, keepdims, output (scale, zero point) for int8
    ((1, 5, 7, 3), [1, 2], True, (0.05, -10)),  # same quantisation
    ((2, 5, 7, 3), [1, -2], False, (0.03, 4)),  # global pooling of MobileNet
    ((3, 300), [1], False, (0.02, 0)),  # a large count: shift folding
    ((2, 9, 4), [0, 2, 0], True, (0.5, -128)),  # duplicate axis
    ((4, 6), [-1], False, (0.05, 127)),
]


@pytest.mark.parametrize("dtype", ["int8", "float32"])
@pytest.mark.parametrize("opcode", ["MEAN", "SUM"])
@pytest.mark.parametrize(("shape", "axes", "keepdims", "out_q"), REDUCTIONS)
def test_reduction_matches_tflite_micro(
    opcode: str,
    dtype: str,
    shape: tuple[int, ...],
    axes: list[int],
    keepdims: bool,
    out_q: tuple[float, int],
) -> None:
    if opcode == "SUM" and dtype == "int8":
        out_q = (out_q[0] * 20, out_q[1])  # the sum's range
    m, inputs, outputs = reduce_model(opcode, dtype, shape, axes, keepdims, out_q)
    compare_with_tflm(m.build(inputs, outputs), "synthetic.tflite")


@pytest.mark.parametrize(
    ("opcode", "dtype", "case"),
    [
        ("MEAN", "int8", 1),
        ("MEAN", "int8", 2),
        ("SUM", "int8", 3),
        ("MEAN", "float32", 0),
        ("SUM", "float32", 4),
    ],
)
def test_reduction_c_matches_tflite_micro(opcode: str, dtype: str, case: int) -> None:
    shape, axes, keepdims, out_q = REDUCTIONS[case]
    if opcode == "SUM" and dtype == "int8":
        out_q = (out_q[0] * 20, out_q[1])
    text = c_matches_tflm(reduce_model(opcode, dtype, shape, axes, keepdims, out_q))
    assert ("relay.sum" if dtype == "int8" or opcode == "SUM" else "relay.mean") in text


def test_int8_mean_is_one_kernel_without_scratch() -> None:
    """cast -> sum -> requantisation is one loop nest: no i32 buffer."""
    m, inputs, outputs = reduce_model("MEAN", "int8", (1, 6, 6, 8), [1, 2], True)
    module = import_tflite_bytes(m.build(inputs, outputs))
    lowered = str(run_pipeline(module, "fuse-ops,lower-ops"))
    assert lowered.count("tir.prim_func") == 1
    assert "memref.alloc" not in lowered and "tir.allocate" not in lowered


def test_mean_multiplier_folds_the_count() -> None:
    # TFLM: shift' = min(floor(log2 n), 32, 31 + shift)
    assert mean_multiplier(1 << 30, 0, 35) == (((1 << 30) << 5) // 35, -5)
    assert mean_multiplier(1 << 30, -28, 1 << 10) == (1 << 30 << 3 >> 10, -31)


@pytest.mark.parametrize("opcode", ["MEAN", "SUM"])
@pytest.mark.parametrize("case", [0, 1, 2])
def test_int16_reduction_matches_tflite_micro(opcode: str, case: int) -> None:
    """16x8 models: int16 activations, zero point 0, the same rescaling."""
    shape, axes, keepdims, _ = REDUCTIONS[case]
    m = ModelBuilder()
    x = m.tensor(shape, "int16", scale=0.001)
    a = m.tensor((len(axes),), "int32", np.array(axes))
    out = tuple(
        1 if d in axes or d - len(shape) in axes else s for d, s in enumerate(shape)
    )
    if not keepdims:
        out = tuple(
            s
            for d, s in enumerate(shape)
            if d not in axes and d - len(shape) not in axes
        )
    y = m.tensor(out, "int16", scale=0.0007 if opcode == "MEAN" else 0.02)
    m.op(opcode, [x, a], [y], ("ReducerOptions", dict(KeepDims=keepdims)))
    check((m, [x], [y]))


def test_int32_mean_is_refused() -> None:
    m = ModelBuilder()
    x = m.tensor((2, 4), "int32")
    a = m.tensor((1,), "int32", np.array([1]))
    y = m.tensor((2,), "int32")
    m.op("MEAN", [x, a], [y], ("ReducerOptions", {}))
    assert refusal((m, [x], [y])).endswith(
        "operator 0 (MEAN): unsupported types INT32 -> INT32 (supported: "
        "FLOAT32 -> FLOAT32, INT8 -> INT8, INT16 -> INT16)"
    )


def test_mean_refuses_computed_axes() -> None:
    m = ModelBuilder()
    x = m.tensor((2, 4), "float32")
    a = m.tensor((1,), "int32")
    y = m.tensor((2,), "float32")
    m.op("MEAN", [x, a], [y], ("ReducerOptions", {}))
    assert refusal((m, [x, a], [y])).endswith(
        "operator 0 (MEAN): axis 't1' must be a constant tensor"
    )


# ------------------------------------------------------- STRIDED_SLICE, SLICE


def strided_slice_model(
    dtype: str,
    shape: tuple[int, ...],
    begin: list[int],
    end: list[int],
    strides: list[int],
    out_shape: tuple[int, ...],
    **masks: int,
) -> Built:
    m = ModelBuilder()
    q = _q(dtype, 0.02, 7)
    x = m.tensor(shape, dtype, **q)
    bt = m.tensor((len(begin),), "int32", np.array(begin))
    et = m.tensor((len(end),), "int32", np.array(end))
    st = m.tensor((len(strides),), "int32", np.array(strides))
    y = m.tensor(out_shape, dtype, **q)
    m.op("STRIDED_SLICE", [x, bt, et, st], [y], ("StridedSliceOptions", masks))
    return m, [x], [y]


STRIDED_SLICES: list[tuple[Any, ...]] = [
    # shape, begin, end, strides, output shape, masks
    ((6, 7), [1, 0], [5, 7], [2, 3], (2, 3), {}),
    ((6, 7), [-1, 5], [-7, 0], [-2, -1], (3, 5), {}),  # negative strides
    ((6, 7), [100, 2], [-100, 3], [-1, 1], (6, 1), {}),  # clamping
    (
        (1, 5, 4, 3),
        [0, 9, 1, 0],
        [0, 0, 0, 2],
        [1, -2, 1, 1],
        (1, 2, 3, 2),
        dict(BeginMask=0b0011, EndMask=0b0101),
    ),
    (
        (2, 5, 4),
        [1, -2, 0],
        [0, 0, 4],
        [1, 1, 1],
        (2, 4),
        dict(ShrinkAxisMask=0b001, EndMask=0b010),
    ),
    ((3, 4, 5), [-1, 0, 2], [0, 4, 0], [1, 1, 1], (4,), dict(ShrinkAxisMask=0b101)),
]


@pytest.mark.parametrize("dtype", ["int8", "float32"])
@pytest.mark.parametrize("case", range(len(STRIDED_SLICES)))
def test_strided_slice_matches_tflite_micro(dtype: str, case: int) -> None:
    shape, begin, end, strides, out_shape, masks = STRIDED_SLICES[case]
    check(strided_slice_model(dtype, shape, begin, end, strides, out_shape, **masks))


def test_full_slice_is_an_alias() -> None:
    built = strided_slice_model(
        "int8", (2, 3, 4), [0, 0, 0], [2, 3, 4], [1, 1, 1], (2, 3, 4)
    )
    assert "relay.strided_slice" not in check(built)


@pytest.mark.parametrize(
    ("masks", "message"),
    [
        (dict(EllipsisMask=1), "ellipsis_mask 1 and new_axis_mask 0 must be 0"),
        (dict(Offset=True), "offset = true is not supported"),
    ],
)
def test_strided_slice_refuses_masks_tflm_ignores(
    masks: dict[str, Any], message: str
) -> None:
    built = strided_slice_model(
        "float32", (4, 4), [0, 0], [2, 2], [1, 1], (2, 2), **masks
    )
    assert message in refusal(built)


def test_strided_slice_refuses_an_empty_slice() -> None:
    built = strided_slice_model("float32", (4, 4), [3, 0], [1, 4], [1, 1], (0, 4))
    assert "operator 0 (STRIDED_SLICE): the slice of [4, 4] is empty" in refusal(built)


def slice_model(
    dtype: str, shape: tuple[int, ...], begin: list[int], size: list[int]
) -> Built:
    m = ModelBuilder()
    q = _q(dtype, 0.02, -7)
    x = m.tensor(shape, dtype, **q)
    bt = m.tensor((len(begin),), "int32", np.array(begin))
    st = m.tensor((len(size),), "int32", np.array(size))
    out = tuple(
        s - b if n == -1 else n for s, b, n in zip(shape, begin, size, strict=True)
    )
    y = m.tensor(out, dtype, **q)
    m.op("SLICE", [x, bt, st], [y])
    return m, [x], [y]


@pytest.mark.parametrize("dtype", ["int8", "float32"])
def test_slice_matches_tflite_micro(dtype: str) -> None:
    check(slice_model(dtype, (1, 6, 5, 4), [0, 2, 1, 1], [1, -1, 3, 2]))


def test_slice_refuses_a_size_past_the_end() -> None:
    assert "operator 0 (SLICE): axis 1: begin 4 and size 3 are outside 0..6" in refusal(
        slice_model("float32", (2, 6), [0, 4], [2, 3])
    )


# ------------------------------------------------- a chain through usmp-compile


def test_chain_through_usmp_compile_matches_tflite_micro(tmp_path: Path) -> None:
    """TRANSPOSE (NCHW -> NHWC), int8 MEAN over H and W, SQUEEZE-free
    EXPAND_DIMS, STRIDED_SLICE with a negative stride: ``usmp.compile``
    (what ``usmp-compile`` runs), the firmware kit's example built with gcc
    and run, every output equal to TFLite Micro's."""
    m = ModelBuilder()
    q = dict(scale=0.04, zero_point=-5)
    x = m.tensor((1, 6, 5, 4), "int8", **q)
    p = m.tensor((4,), "int32", np.array([0, 2, 3, 1]))
    t = m.tensor((1, 5, 4, 6), "int8", **q)
    m.op("TRANSPOSE", [x, p], [t])
    axes = m.tensor((2,), "int32", np.array([1, 2]))
    mean = m.tensor((1, 6), "int8", scale=0.01, zero_point=3)
    m.op("MEAN", [t, axes], [mean], ("ReducerOptions", dict(KeepDims=False)))
    axis = m.tensor((), "int32", np.array(0))
    e = m.tensor((1, 1, 6), "int8", scale=0.01, zero_point=3)
    m.op("EXPAND_DIMS", [mean, axis], [e])
    b, en, st = (
        m.tensor((3,), "int32", np.array(v))
        for v in ([0, 0, -1], [1, 1, 0], [1, 1, -2])
    )
    y = m.tensor((1, 1, 3), "int8", scale=0.01, zero_point=3)
    m.op("STRIDED_SLICE", [e, b, en, st], [y], ("StridedSliceOptions", {}))
    data = m.build([x], [t, y])
    path = tmp_path / "chain.tflite"
    path.write_bytes(data)
    lib = usmp.compile(path, output_dir=tmp_path / "out")
    model = read_model(data, path.name)
    for seed in (0, 1):
        values = random_inputs(model, seed)
        got = lib.run(values)
        want = run_tflm(data, values, [t, y])
        for g, w in zip(got, want, strict=True):
            np.testing.assert_array_equal(g, w)


# -------------------------------------------------------- REDUCE_MAX, REDUCE_MIN


@pytest.mark.parametrize("dtype", ["int8", "float32"])
@pytest.mark.parametrize("opcode", ["REDUCE_MAX", "REDUCE_MIN"])
@pytest.mark.parametrize("case", [0, 1, 3])
def test_extremum_reduction_matches_tflite_micro(
    opcode: str, dtype: str, case: int
) -> None:
    shape, axes, keepdims, _ = REDUCTIONS[case]
    m = ModelBuilder()
    q = _q(dtype, 0.05, -10)
    x = m.tensor(shape, dtype, **q)
    a = m.tensor((len(axes),), "int32", np.array(axes))
    reduced = {d % len(shape) for d in axes}
    out = tuple(
        1 if d in reduced else s
        for d, s in enumerate(shape)
        if keepdims or d not in reduced
    )
    y = m.tensor(out, dtype, **q)
    m.op(opcode, [x, a], [y], ("ReducerOptions", dict(KeepDims=keepdims)))
    text = check((m, [x], [y]))
    assert ("relay.max" if opcode == "REDUCE_MAX" else "relay.min") in text


def test_int16_reduce_max_is_refused() -> None:
    m = ModelBuilder()
    x = m.tensor((2, 4), "int16", scale=0.01)
    a = m.tensor((1,), "int32", np.array([1]))
    y = m.tensor((2,), "int16", scale=0.01)
    m.op("REDUCE_MAX", [x, a], [y], ("ReducerOptions", {}))
    assert refusal((m, [x], [y])).endswith(
        "operator 0 (REDUCE_MAX): unsupported type INT16 (FLOAT32 or INT8, as "
        "TFLite Micro's kernel)"
    )


def test_int8_reduce_max_refuses_a_requantisation() -> None:
    m, inputs, outputs = reduce_model("REDUCE_MAX", "int8", (2, 4), [1], False)
    m.tensors[outputs[0]]["zps"] = np.array([3])
    assert "REDUCE_MAX copies raw values" in refusal((m, inputs, outputs))


# ------------------------------------------------- SPLIT, SPLIT_V, UNPACK, PACK


def split_model(dtype: str) -> Built:
    """SPLIT in 3 along axis -1, SPLIT_V (2, -1, 1) along axis 1, UNPACK
    along axis 0 and PACK of the unpacked rows along a new axis 1."""
    m = ModelBuilder()
    q = _q(dtype, 0.03, 2)
    x = m.tensor((2, 5, 6), dtype, **q)
    axis = m.tensor((), "int32", np.array(-1))
    parts = [m.tensor((2, 5, 2), dtype, **q) for _ in range(3)]
    m.op("SPLIT", [axis, x], parts, ("SplitOptions", dict(NumSplits=3)))
    sizes = m.tensor((3,), "int32", np.array([2, -1, 1]))
    axis1 = m.tensor((1,), "int32", np.array([1]))
    pieces = [m.tensor((2, n, 6), dtype, **q) for n in (2, 2, 1)]
    m.op("SPLIT_V", [x, sizes, axis1], pieces, ("SplitVOptions", dict(NumSplits=3)))
    rows = [m.tensor((5, 6), dtype, **q) for _ in range(2)]
    m.op("UNPACK", [x], rows, ("UnpackOptions", dict(Num=2, Axis=0)))
    packed = m.tensor((5, 2, 6), dtype, **q)
    m.op("PACK", rows, [packed], ("PackOptions", dict(ValuesCount=2, Axis=-2)))
    return m, [x], [*parts, *pieces, packed]


@pytest.mark.parametrize("dtype", ["int8", "float32"])
def test_split_unpack_pack_match_tflite_micro(dtype: str) -> None:
    check(split_model(dtype))


def test_split_refuses_an_uneven_split() -> None:
    m = ModelBuilder()
    x = m.tensor((2, 5), "float32")
    axis = m.tensor((), "int32", np.array(1))
    parts = [m.tensor((2, 2), "float32") for _ in range(2)]
    m.op("SPLIT", [axis, x], parts, ("SplitOptions", dict(NumSplits=2)))
    assert refusal((m, [x], parts)).endswith(
        "operator 0 (SPLIT): num_splits 2 does not divide dimension 1 of [2, 5]"
    )


# ------------------------------------------------ SPACE_TO_DEPTH, DEPTH_TO_SPACE


@pytest.mark.parametrize("dtype", ["int8", "float32"])
def test_space_depth_match_tflite_micro(dtype: str) -> None:
    """SPACE_TO_DEPTH then DEPTH_TO_SPACE (block 2, then 3 on another
    tensor): reshape -> transpose -> reshape, one loop nest each."""
    m = ModelBuilder()
    q = _q(dtype, 0.05, -1)
    x = m.tensor((1, 4, 6, 3), dtype, **q)
    s = m.tensor((1, 2, 3, 12), dtype, **q)
    m.op("SPACE_TO_DEPTH", [x], [s], ("SpaceToDepthOptions", dict(BlockSize=2)))
    z = m.tensor((2, 2, 1, 18), dtype, **q)
    d = m.tensor((2, 6, 3, 2), dtype, **q)
    m.op("DEPTH_TO_SPACE", [z], [d], ("DepthToSpaceOptions", dict(BlockSize=3)))
    text = check((m, [x, z], [s, d]))
    assert text.count("relay.transpose") == 2


@pytest.mark.parametrize(
    ("opcode", "options", "shapes"),
    [
        ("SPACE_TO_DEPTH", "SpaceToDepthOptions", ((1, 4, 4, 2), (1, 2, 2, 8))),
        ("DEPTH_TO_SPACE", "DepthToSpaceOptions", ((1, 2, 2, 8), (1, 4, 4, 2))),
    ],
)
def test_int16_space_depth_is_refused_as_tflite_micro(opcode, options, shapes) -> None:
    """TFLite Micro's kernels take FLOAT32 and INT8 only (and fail on this
    model); the importer says so at the operator."""
    m = ModelBuilder()
    x = m.tensor(shapes[0], "int16", scale=0.001, zero_point=0)
    y = m.tensor(shapes[1], "int16", scale=0.001, zero_point=0)
    m.op(opcode, [x], [y], (options, dict(BlockSize=2)))
    data = m.build([x], [y])
    with pytest.raises(TFLMError):  # its message: only float32 and int8
        run_tflm(data, [np.zeros(shapes[0], np.int16)], [y])
    assert refusal((m, [x], [y])).endswith(
        f"operator 0 ({opcode}): input 't0' is INT16; supported: FLOAT32, INT8 "
        f"(TFLite Micro's {opcode.lower()}.cc accepts no other type)"
    )


def test_space_to_depth_refuses_an_uneven_block() -> None:
    m = ModelBuilder()
    x = m.tensor((1, 4, 5, 3), "float32")
    y = m.tensor((1, 2, 2, 12), "float32")
    m.op("SPACE_TO_DEPTH", [x], [y], ("SpaceToDepthOptions", dict(BlockSize=2)))
    assert refusal((m, [x], [y])).endswith(
        "operator 0 (SPACE_TO_DEPTH): height 4 and width 5 must be multiples of 2"
    )


# --------------------------------------------------------------- BROADCAST_TO


@pytest.mark.parametrize("dtype", ["int8", "float32"])
def test_broadcast_to_matches_tflite_micro(dtype: str) -> None:
    m = ModelBuilder()
    q = _q(dtype, 0.1, 4)
    x = m.tensor((3, 1, 4), dtype, **q)
    shape = m.tensor((4,), "int32", np.array([2, 3, 5, 4]))
    y = m.tensor((2, 3, 5, 4), dtype, **q)
    m.op("BROADCAST_TO", [x, shape], [y])
    assert "relay.broadcast_to" in check((m, [x], [y]))


def test_broadcast_to_refuses_an_incompatible_shape() -> None:
    m = ModelBuilder()
    x = m.tensor((3, 2), "float32")
    shape = m.tensor((2,), "int32", np.array([3, 4]))
    y = m.tensor((3, 4), "float32")
    m.op("BROADCAST_TO", [x, shape], [y])
    assert refusal((m, [x], [y])).endswith(
        "operator 0 (BROADCAST_TO): [3, 2] does not broadcast to [3, 4]"
    )


# ------------------------------------------------------------ ARG_MAX, ARG_MIN


@pytest.mark.parametrize("dtype", ["int8", "float32"])
@pytest.mark.parametrize("opcode", ["ARG_MAX", "ARG_MIN"])
@pytest.mark.parametrize(
    ("shape", "axis", "out_type"),
    [((2, 7, 3), 1, "int32"), ((3, 9), -1, "int32"), ((4, 1, 2), 1, "int32")],
)
def test_arg_extremum_matches_tflite_micro(
    opcode: str, dtype: str, shape: tuple[int, ...], axis: int, out_type: str
) -> None:
    m = ModelBuilder()
    x = m.tensor(shape, dtype, **_q(dtype, 0.1, 0))
    a = m.tensor((1,), "int32", np.array([axis]))
    out = tuple(s for d, s in enumerate(shape) if d != axis % len(shape))
    y = m.tensor(out, out_type)
    kind = "ArgMaxOptions" if opcode == "ARG_MAX" else "ArgMinOptions"
    m.op(opcode, [x, a], [y], (kind, dict(OutputType=_TYPES[out_type])))
    check((m, [x], [y]))


def test_arg_max_refuses_int64_indices() -> None:
    m = ModelBuilder()
    x = m.tensor((3, 9), "float32")
    a = m.tensor((1,), "int32", np.array([1]))
    y = m.tensor((3,), "int64")
    m.op("ARG_MAX", [x, a], [y], ("ArgMaxOptions", dict(OutputType=4)))
    assert refusal((m, [x], [y])).endswith(
        "operator 0 (ARG_MAX): output 't2' is INT64; only INT32 indices are supported"
    )


def test_arg_max_takes_the_first_of_equal_maxima() -> None:
    m = ModelBuilder()
    x = m.tensor((2, 6), "int8", np.array([[1, 5, 5, 0, 5, 2], [-128] * 6]))
    a = m.tensor((1,), "int32", np.array([1]))
    y = m.tensor((2,), "int32")
    m.op("ARG_MAX", [x, a], [y], ("ArgMaxOptions", dict(OutputType=2)))
    z = m.tensor((2,), "int32")
    m.op("ARG_MIN", [x, a], [z], ("ArgMinOptions", dict(OutputType=2)))
    data = m.build([], [y, z])
    module = import_tflite_bytes(data)
    got = run_module(module, [], passes="fuse-ops,lower-ops,aot-lower-main,usmp")
    want = run_tflm(data, [], [y, z])
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(g, w)
    np.testing.assert_array_equal(got[0], [1, 0])
    np.testing.assert_array_equal(got[1], [3, 0])
