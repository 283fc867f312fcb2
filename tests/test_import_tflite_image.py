"""GATHER, RESIZE_NEAREST_NEIGHBOR and RESIZE_BILINEAR on single-operator
models: every option TFLite Micro's kernels honour, compared with TFLite
Micro through the oracle (every tensor) and through the C path (fuse-ops,
lower-ops, aot-lower-main, usmp, gcc), bit for bit for integers; plus the
refusals of what TFLM refuses.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.test_import_tflite_layout import _q, check, refusal
from tests.test_import_tflite_synthetic import ModelBuilder
from usmp.frontend.tflite_import import import_tflite_bytes
from usmp.frontend.tflite_ops_image import nearest_indices
from usmp.frontend.tflite_reader import read_model
from usmp.lowering.ops_image import bilinear_axis
from usmp.testing.run_c import run_module, run_pipeline
from usmp.testing.tflm_reference import difference, random_inputs, run_tflm
from usmp.tools.c_library import build_library

Built = tuple[ModelBuilder, list[int], list[int]]

# ---------------------------------------------------------------------- GATHER


def gather_model(
    shape: tuple[int, ...],
    positions: np.ndarray,
    axis: int,
    batch_dims: int,
    dtype: str,
    constant: bool = True,
) -> Built:
    m = ModelBuilder()
    q = _q(dtype, 0.1, 3)
    x = m.tensor(shape, dtype, **q)
    i = m.tensor(positions.shape, "int32", positions if constant else None)
    a = axis % len(shape)
    b = batch_dims % positions.ndim if batch_dims < 0 else batch_dims
    out = (*shape[:a], *positions.shape[b:], *shape[a + 1 :])
    y = m.tensor(out, dtype, **q)
    m.op(
        "GATHER", [x, i], [y], ("GatherOptions", dict(Axis=axis, BatchDims=batch_dims))
    )
    return m, [x] if constant else [x, i], [y]


GATHERS = [
    ((5, 3), np.array([4, 0, 2, 2]), 0, 0),
    ((2, 5, 3), np.array([[4, 0], [1, 1], [3, 2]]), 1, 0),  # 2-d positions
    ((2, 3, 4), np.array([3, 0]), -1, 0),  # negative axis, last axis
    ((2, 5, 3), np.array([[4, 0, 1], [2, 2, 0]]), 1, 1),  # batch_dims
    ((2, 5, 3), np.array([[4, 0, 1], [2, 2, 0]]), 1, -1),  # batch_dims from the end
    ((1, 6), np.array([5]), 1, 0),  # size-1 dims
]


@pytest.mark.parametrize("dtype", ["int8", "float32"])
@pytest.mark.parametrize(("shape", "positions", "axis", "batch_dims"), GATHERS)
def test_gather_matches_tflite_micro(
    shape: tuple[int, ...],
    positions: np.ndarray,
    axis: int,
    batch_dims: int,
    dtype: str,
) -> None:
    text = check(gather_model(shape, positions, axis, batch_dims, dtype))
    assert "relay.gather" in text


def test_gather_with_runtime_positions_matches_tflite_micro() -> None:
    """Positions that are a model input: read at run time (and clamped, which
    TFLM's in-range inputs never see)."""
    positions = np.array([[3, 0, 1], [2, 2, 0]], np.int32)
    m, inputs, outputs = gather_model((2, 4, 3), positions, 1, 1, "int8", False)
    data = m.build(inputs, outputs)
    module = import_tflite_bytes(data)
    x = np.arange(-12, 12, dtype=np.int8).reshape(2, 4, 3)
    for p in (positions, positions[::-1].copy()):
        (want,) = run_tflm(data, [x, p], outputs)
        (got,) = run_module(
            module, [x, p], passes="fuse-ops,lower-ops,aot-lower-main,usmp"
        )
        assert difference(got, want) is None
    wild = np.array([[-5, 9, 1], [2, 100, 0]], np.int32)
    (got,) = run_module(
        module, [x, wild], passes="fuse-ops,lower-ops,aot-lower-main,usmp"
    )
    np.testing.assert_array_equal(got[0], x[0][[0, 3, 1]])
    np.testing.assert_array_equal(got[1], x[1][[2, 3, 0]])


def test_gather_refuses_what_tflite_micro_refuses() -> None:
    m = ModelBuilder()
    x = m.tensor((5, 3), "float32")
    i = m.tensor((2,), "int64", np.array([1, 2]))
    y = m.tensor((2, 3), "float32")
    m.op("GATHER", [x, i], [y], ("GatherOptions", dict(Axis=0)))
    assert refusal((m, [x], [y])).endswith(
        "operator 0 (GATHER): positions 't1' are INT64; TFLite Micro's GATHER takes "
        "INT32 positions only"
    )
    assert refusal(gather_model((5, 3), np.array([1, 5]), 0, 0, "int8")).endswith(
        "operator 0 (GATHER): positions [5] are outside 0..4, the dimension 0 of "
        "'t0' [5, 3]"
    )
    assert "takes FLOAT32, INT8" in refusal(
        gather_model((5, 3), np.array([1]), 0, 0, "int16")
    )
    assert "batch_dims 1 is out of range" in refusal(
        gather_model((2, 5), np.array([[1], [0]]), 0, 1, "int8")
    )


# ---------------------------------------------------------------------- RESIZE


def resize_model(
    opcode: str,
    shape: tuple[int, ...],
    size: tuple[int, int],
    dtype: str,
    align_corners: bool,
    half_pixel_centers: bool,
) -> Built:
    m = ModelBuilder()
    q = _q(dtype, 0.05, -7) if dtype != "int16" else _q("int8", 0.01, 0)
    x = m.tensor(shape, dtype, **q)
    s = m.tensor((2,), "int32", np.array(size))
    y = m.tensor((shape[0], *size, shape[3]), dtype, **q)
    kind = (
        "ResizeBilinearOptions"
        if opcode == "RESIZE_BILINEAR"
        else "ResizeNearestNeighborOptions"
    )
    options = dict(AlignCorners=align_corners, HalfPixelCenters=half_pixel_centers)
    m.op(opcode, [x, s], [y], (kind, options))
    return m, [x], [y]


RESIZES = [
    ((1, 3, 4, 2), (5, 7)),  # up, odd factors
    ((2, 6, 5, 3), (4, 2)),  # down, batch 2
    ((1, 1, 1, 3), (3, 2)),  # from one pixel
    ((1, 4, 4, 1), (1, 8)),  # to one row
]
MODES = [(False, False), (True, False), (False, True)]


NEAREST = [  # every shape in int8; float32 and int16 on the first
    (dtype, *resize)
    for dtype in ("int8", "float32", "int16")
    for resize in (RESIZES if dtype == "int8" else RESIZES[:1])
]


@pytest.mark.parametrize(("align", "half"), [*MODES, (True, True)])
@pytest.mark.parametrize(("dtype", "shape", "size"), NEAREST)
def test_resize_nearest_neighbor_matches_tflite_micro(
    shape: tuple[int, ...], size: tuple[int, int], dtype: str, align: bool, half: bool
) -> None:
    built = resize_model("RESIZE_NEAREST_NEIGHBOR", shape, size, dtype, align, half)
    text = check(built)
    assert "relay.gather" in text


@pytest.mark.parametrize(("align", "half"), MODES)
@pytest.mark.parametrize(("shape", "size"), RESIZES)
@pytest.mark.parametrize("dtype", ["int8", "float32"])
def test_resize_bilinear_matches_tflite_micro(
    shape: tuple[int, ...], size: tuple[int, int], dtype: str, align: bool, half: bool
) -> None:
    text = check(resize_model("RESIZE_BILINEAR", shape, size, dtype, align, half))
    assert "relay.resize_bilinear" in text


def test_resize_of_the_same_size_is_an_alias() -> None:
    built = resize_model(
        "RESIZE_NEAREST_NEIGHBOR", (1, 3, 4, 2), (3, 4), "int8", False, False
    )
    text = check(built)
    assert "relay.gather" not in text


def test_resize_coordinates_are_tflites() -> None:
    """Hand-computed TFLite values: 3 -> 5 rows."""
    assert nearest_indices(3, 5, False, False).tolist() == [0, 0, 1, 1, 2]
    assert nearest_indices(3, 5, True, False).tolist() == [0, 1, 1, 2, 2]
    assert nearest_indices(3, 5, False, True).tolist() == [0, 0, 1, 2, 2]
    ys = bilinear_axis(3, 5, False, True, integer=True)
    # scale_10 = (3072 + 2) // 5 = 614; y * 614 + 307 - 512
    assert ys.lower.tolist() == [0, 0, 0, 1, 2]
    assert ys.upper.tolist() == [0, 1, 1, 2, 2]
    assert ys.weight.tolist() == [-205, 409, 1023, 613, 203]


def test_resize_refuses_what_tflite_micro_refuses() -> None:
    both = resize_model("RESIZE_BILINEAR", (1, 3, 4, 2), (5, 7), "int8", True, True)
    assert refusal(both).endswith(
        "operator 0 (RESIZE_BILINEAR): align_corners and half_pixel_centers are "
        "both set; TFLite Micro requires align_corners = false when "
        "half_pixel_centers = true"
    )
    int16 = resize_model("RESIZE_BILINEAR", (1, 3, 4, 2), (5, 7), "int16", False, False)
    assert refusal(int16).endswith(
        "operator 0 (RESIZE_BILINEAR): input 't0' is INT16; TFLite Micro's kernel "
        "takes FLOAT32, INT8"
    )
    m = ModelBuilder()
    x = m.tensor((1, 3, 4, 2), "float32")
    s = m.tensor((2,), "int32")
    y = m.tensor((1, 5, 7, 2), "float32")
    m.op("RESIZE_NEAREST_NEIGHBOR", [x, s], [y])
    assert refusal((m, [x, s], [y])).endswith(
        "operator 0 (RESIZE_NEAREST_NEIGHBOR): size 't1' must be a constant INT32 "
        "tensor (TFLite Micro supports no other)"
    )


# ------------------------------------------------------------ copy runs (C)


def _operators_c(built: Built) -> str:
    m, inputs, outputs = built
    module = run_pipeline(
        import_tflite_bytes(m.build(inputs, outputs)),
        "fuse-ops,lower-ops,aot-lower-main,usmp",
    )
    files = build_library(module).files
    return "".join(v for k, v in files.items() if k.endswith("_operators.c"))


@pytest.mark.parametrize(
    ("built", "copy"),
    [
        # rows of 3 (axis 0) and of 3 after a batch dimension: one memmove each
        (gather_model((5, 3), np.array([4, 0, 2, 2]), 0, 0, "int8"), "3)"),
        (gather_model((2, 5, 3), np.array([[4, 0], [1, 2]]), 1, 1, "float32"), "12)"),
        # NHWC nearest: a memmove of the channels per output pixel
        (
            resize_model(
                "RESIZE_NEAREST_NEIGHBOR", (1, 3, 4, 5), (5, 7), "int8", False, False
            ),
            "5)",
        ),
    ],
)
def test_gather_copies_contiguous_runs_with_memmove(built: Built, copy: str) -> None:
    """The innermost contiguous run of a gather is one ``memmove`` (TFLM
    ``memcpy``s rows; an element loop is 5x slower, benchmarks/gather.py),
    and the result is still TFLM's (also under ASan/UBSan)."""
    c = _operators_c(built)
    assert "memmove(" in c and c.count("memmove(") == 1, c
    assert c.split("memmove(")[1].split("\n")[0].endswith(copy + ";"), c
    m, inputs, outputs = built
    data = m.build(inputs, outputs)
    values = random_inputs(read_model(data, "synthetic.tflite"), 0)
    (want,) = run_tflm(data, values, outputs)
    (got,) = run_module(
        import_tflite_bytes(data),
        values,
        passes="fuse-ops,lower-ops,aot-lower-main,usmp",
        sanitize=True,
    )
    assert difference(got, want) is None


def test_gather_on_the_last_axis_keeps_its_element_loop() -> None:
    """No contiguous run on the source side: no memmove."""
    c = _operators_c(gather_model((2, 3, 4), np.array([3, 0]), -1, 0, "int8"))
    assert "memmove" not in c and "memcpy" not in c
