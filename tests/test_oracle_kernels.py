"""The oracle's numpy kernels (usmp.oracle.kernels) against hand-computed
results and against straightforward loop implementations written here."""

import itertools
from typing import Any

import numpy as np
import pytest

from usmp.oracle import kernels as K
from usmp.oracle.kernels import KernelError

RNG = np.random.default_rng(20240607)


def i8(shape: tuple[int, ...]) -> np.ndarray:
    return RNG.integers(-128, 128, shape, dtype=np.int8)


# ----------------------------------------------------------------- conv2d


def loop_conv2d_nhwc_hwio(
    x: np.ndarray,
    w: np.ndarray,
    strides: tuple[int, int],
    padding: tuple[int, int, int, int],
    dilation: tuple[int, int],
    groups: int,
    izp: int,
    kzp: int,
) -> np.ndarray:
    """Direct definition: one output element at a time, skipping padding."""
    n, h, wd, cin = x.shape
    kh, kw, cg, cout = w.shape
    top, left, bottom, right = padding
    oh = (h + top + bottom - (kh - 1) * dilation[0] - 1) // strides[0] + 1
    ow = (wd + left + right - (kw - 1) * dilation[1] - 1) // strides[1] + 1
    out = np.zeros((n, oh, ow, cout), dtype=np.int64)
    per_group = cout // groups
    for b, y, xx, o in itertools.product(range(n), range(oh), range(ow), range(cout)):
        g = o // per_group
        acc = 0
        for i, j, c in itertools.product(range(kh), range(kw), range(cg)):
            iy = y * strides[0] + i * dilation[0] - top
            ix = xx * strides[1] + j * dilation[1] - left
            if 0 <= iy < h and 0 <= ix < wd:
                acc += (int(x[b, iy, ix, g * cg + c]) - izp) * (
                    int(w[i, j, c, o]) - kzp
                )
        out[b, y, xx, o] = acc
    return out


CONV_CASES = [
    # (input NHWC, kernel HWIO, strides, padding, dilation, groups, izp, kzp)
    ((1, 5, 5, 3), (3, 3, 3, 4), (1, 1), (0, 0, 0, 0), (1, 1), 1, 0, 0),
    ((1, 6, 7, 2), (3, 3, 2, 3), (2, 2), (1, 1, 1, 1), (1, 1), 1, -128, 0),
    ((2, 7, 6, 2), (3, 2, 2, 2), (1, 2), (0, 1, 2, 0), (2, 1), 1, 5, -3),
    ((1, 6, 6, 4), (3, 3, 1, 4), (1, 1), (1, 1, 1, 1), (1, 1), 4, -1, 0),  # depthwise
    ((1, 5, 5, 2), (3, 3, 1, 6), (2, 1), (1, 0, 1, 2), (1, 2), 2, 7, 2),  # mult 3
    ((1, 4, 4, 6), (1, 1, 3, 4), (1, 1), (0, 0, 0, 0), (1, 1), 2, 0, 0),  # grouped
    ((1, 96 // 8, 96 // 8, 3), (3, 3, 3, 8), (2, 2), (0, 0, 1, 1), (1, 1), 1, -128, 0),
]


def conv_case(case: tuple) -> tuple[np.ndarray, np.ndarray, dict[str, Any]]:
    """Random NHWC input and HWIO kernel of a CONV_CASES row, and the
    conv2d keyword arguments it gives."""
    xs, ws, strides, padding, dilation, groups, izp, kzp = case
    kw = dict(
        strides=strides,
        padding=padding,
        dilation=dilation,
        groups=groups,
        input_zero_point=izp,
        kernel_zero_point=kzp,
    )
    return i8(xs), i8(ws), kw


@pytest.mark.parametrize("case", CONV_CASES)
def test_conv2d_int8_matches_loops(case: tuple) -> None:
    x, w, kw = conv_case(case)
    got = K.conv2d(x, w, **kw)
    want = loop_conv2d_nhwc_hwio(x, w, *case[2:])
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("case", CONV_CASES[:5])
def test_conv2d_layouts_agree(case: tuple) -> None:
    x, w, kw = conv_case(case)
    ref = K.conv2d(x, w, **kw)
    ohwi = K.conv2d(x, w.transpose(3, 0, 1, 2), kernel_layout="OHWI", **kw)
    nchw = K.conv2d(
        x.transpose(0, 3, 1, 2),
        w.transpose(3, 2, 0, 1),
        data_layout="NCHW",
        kernel_layout="OIHW",
        **kw,
    )
    np.testing.assert_array_equal(ohwi, ref)
    np.testing.assert_array_equal(nchw, ref.transpose(0, 3, 1, 2))


def test_conv2d_hand_computed_with_zero_point_padding() -> None:
    # x - zp = [[0,1,2],[3,4,5],[6,7,8]]; 2x2 kernel of ones; pad top/left by 1.
    # Padded positions contribute 0, i.e. the input is padded with its zero point.
    x = (np.arange(1, 10, dtype=np.int8)).reshape(1, 3, 3, 1)
    w = np.ones((2, 2, 1, 1), dtype=np.int8)
    got = K.conv2d(x, w, padding=(1, 1, 0, 0), input_zero_point=1)
    want = [[0, 1, 3], [3, 8, 12], [9, 20, 24]]
    np.testing.assert_array_equal(got[0, :, :, 0], want)


def test_conv2d_float() -> None:
    x = np.arange(16, dtype=np.float32).reshape(1, 4, 4, 1) / 4
    w = np.array([[1.0, -1.0], [0.5, 2.0]], dtype=np.float32).reshape(2, 2, 1, 1)
    got = K.conv2d(x, w, strides=(2, 2))
    # window at (0,0): 0*1 + .25*-1 + 1*.5 + 1.25*2 = 2.75; weights sum to 2.5, a
    # step right adds .5 to every input (+1.25), a step down adds 2 (+5)
    assert got.dtype == np.float32
    np.testing.assert_allclose(
        got[0, :, :, 0].astype(np.float64), [[2.75, 4.0], [7.75, 9.0]]
    )


def test_conv2d_int32_accumulator_wraps() -> None:
    # 127 * 127 * 140000 > 2^31: the accumulator wraps like C int32
    k = 140_000
    x = np.full((1, 1, 1, k), 127, dtype=np.int8)
    w = np.full((1, 1, k, 1), 127, dtype=np.int8)
    exact = 127 * 127 * k
    got = int(K.conv2d(x, w)[0, 0, 0, 0])
    assert got == (exact + 2**31) % 2**32 - 2**31


def test_conv2d_rejects_bad_groups_and_layouts() -> None:
    with pytest.raises(KernelError, match="groups=3"):
        K.conv2d(i8((1, 4, 4, 4)), i8((3, 3, 1, 4)), groups=3)
    with pytest.raises(KernelError, match="kernel_layout 'HWOX'"):
        K.conv2d(i8((1, 4, 4, 4)), i8((3, 3, 4, 4)), kernel_layout="HWOX")
    with pytest.raises(KernelError, match="does not fit"):
        K.conv2d(i8((1, 2, 2, 1)), i8((3, 3, 1, 1)))


# ------------------------------------------------------------------ dense


def test_dense_int8_with_zero_points() -> None:
    x = np.array([[1, 2, 3], [-1, 0, 4]], dtype=np.int8)
    w = np.array([[1, 0, -1], [2, 2, 2]], dtype=np.int8)
    got = K.dense(x, w, input_zero_point=1, kernel_zero_point=-1)
    # (x-1) = [[0,1,2],[-2,-1,3]], (w+1) = [[2,1,0],[3,3,3]]
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, [[1, 9], [-5, 0]])


def test_dense_matches_loops() -> None:
    x, w = i8((3, 17)), i8((5, 17))
    want = [
        [
            sum((int(x[b, k]) + 7) * (int(w[n, k]) - 2) for k in range(17))
            for n in range(5)
        ]
        for b in range(3)
    ]
    np.testing.assert_array_equal(
        K.dense(x, w, input_zero_point=-7, kernel_zero_point=2), want
    )


def test_dense_int32_wraps_exactly() -> None:
    # (2^31 - 1)^2 = 2^62 - 2^32 + 1 = 1 (mod 2^32): too big for float64
    x = np.array([[2**31 - 1]], dtype=np.int32)
    assert int(K.dense(x, x)[0, 0]) == 1
    # 2^30 * 2 + 2^30 * 0 = 2^31 wraps to -2^31
    a = np.array([[2**30, 2**30]], dtype=np.int32)
    b = np.array([[2, 0]], dtype=np.int32)
    assert int(K.dense(a, b)[0, 0]) == -(2**31)


def test_dense_float() -> None:
    x = np.array([[1.0, 2.0]], dtype=np.float32)
    w = np.array([[0.5, 0.25], [-1.0, 3.0]], dtype=np.float32)
    got = K.dense(x, w)
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, [[1.0, 5.0]])


def test_dense_rejects_shape_mismatch() -> None:
    with pytest.raises(KernelError, match=r"\(B, K\)"):
        K.dense(i8((1, 3)), i8((2, 4)))


# ------------------------------------------------------------ elementwise


def test_int8_arithmetic_wraps() -> None:
    a = np.array([100, -100, 16, 127], dtype=np.int8)
    b = np.array([100, 100, 16, -128], dtype=np.int8)
    np.testing.assert_array_equal(K.add(a, b), [-56, 0, 32, -1])
    np.testing.assert_array_equal(K.subtract(a, b), [0, 56, 0, -1])
    np.testing.assert_array_equal(K.multiply(a, b), [16, -16, 0, -128])
    assert K.add(a, b).dtype == np.int8


def test_int32_multiply_keeps_low_bits() -> None:
    a = np.array([65536, 65537, -(2**31)], dtype=np.int32)
    # 2^32 -> 0; 65537^2 = 2^32 + 2^17 + 1 -> 131073; -2^31 * -1 -> -2^31
    b = np.array([65536, 65537, -1], dtype=np.int32)
    np.testing.assert_array_equal(K.multiply(a, b), [0, 131073, -(2**31)])


def test_broadcasting_and_min_max() -> None:
    a = np.array([[1], [5]], dtype=np.int32)
    b = np.array([0, 3, 9], dtype=np.int32)
    np.testing.assert_array_equal(K.add(a, b), [[1, 4, 10], [5, 8, 14]])
    np.testing.assert_array_equal(K.maximum(a, b), [[1, 3, 9], [5, 5, 9]])
    np.testing.assert_array_equal(K.minimum(a, b), [[0, 1, 1], [0, 3, 5]])
    f = K.subtract(
        np.array([1.5], dtype=np.float32), np.array([[0.25], [2.0]], dtype=np.float32)
    )
    assert f.dtype == np.float32
    np.testing.assert_array_equal(f, [[1.25], [-0.5]])


def test_elementwise_rejects_mixed_types_and_bad_shapes() -> None:
    with pytest.raises(KernelError, match="differ"):
        K.add(np.array([1], dtype=np.int8), np.array([1], dtype=np.int32))
    with pytest.raises(KernelError, match="broadcast"):
        K.add(np.zeros(3, np.int8), np.zeros(2, np.int8))


def test_right_shift_is_arithmetic() -> None:
    x = np.array([5, -5, -1, -(2**31), 7], dtype=np.int32)
    s = np.array([1, 1, 31, 31, 0], dtype=np.int32)
    np.testing.assert_array_equal(K.right_shift(x, s), [2, -3, -1, -1, 7])
    with pytest.raises(KernelError, match=r"\[0, 31\]"):
        K.right_shift(x, np.full(5, 32, dtype=np.int32))
    with pytest.raises(KernelError, match="integer"):
        K.right_shift(np.array([1], dtype=np.float32), np.array([1], dtype=np.float32))


def test_clip_and_relu() -> None:
    x = np.array([-128, -5, 0, 20, 127], dtype=np.int8)
    np.testing.assert_array_equal(
        K.clip(x, a_min=-5.5, a_max=20.5), [-5, -5, 0, 20, 20]
    )
    np.testing.assert_array_equal(
        K.clip(
            np.array([-(2**31), 2**31 - 1], dtype=np.int32), a_min=-128.0, a_max=127.0
        ),
        [-128, 127],
    )
    np.testing.assert_array_equal(K.relu(x), [0, 0, 0, 20, 127])
    f = K.clip(np.array([-1.0, 0.3, 7.0], dtype=np.float32), a_min=0.0, a_max=6.0)
    assert f.dtype == np.float32
    np.testing.assert_array_equal(f, np.array([0.0, 0.3, 6.0], dtype=np.float32))
    np.testing.assert_array_equal(
        K.relu(np.array([-0.5, 0.5], dtype=np.float32)), [0.0, 0.5]
    )


# ---------------------------------------------------------------- pooling


def loop_pool(x, size, strides, padding, reduce):  # noqa: ANN001, ANN201
    n, h, w, c = x.shape
    top, left, bottom, right = padding
    oh = (h + top + bottom - size[0]) // strides[0] + 1
    ow = (w + left + right - size[1]) // strides[1] + 1
    out = np.zeros((n, oh, ow, c), dtype=np.int64)
    for b, y, xx, ch in itertools.product(range(n), range(oh), range(ow), range(c)):
        vals = [
            int(x[b, iy, ix, ch])
            for iy in range(y * strides[0] - top, y * strides[0] - top + size[0])
            for ix in range(xx * strides[1] - left, xx * strides[1] - left + size[1])
            if 0 <= iy < h and 0 <= ix < w
        ]
        out[b, y, xx, ch] = reduce(vals)
    return out


def c_rounded_mean(vals: list[int]) -> int:
    acc, n = sum(vals), len(vals)
    num = acc + n // 2 if acc > 0 else acc - n // 2
    return abs(num) // n * (1 if num >= 0 else -1)


@pytest.mark.parametrize(
    ("size", "strides", "padding"),
    [
        ((2, 2), (2, 2), (0, 0, 0, 0)),
        ((3, 3), (1, 1), (1, 1, 1, 1)),
        ((3, 2), (2, 1), (0, 1, 2, 0)),
    ],
)
def test_pools_match_loops(size, strides, padding) -> None:  # noqa: ANN001
    x = i8((1, 6, 5, 3))
    kw = dict(pool_size=size, strides=strides, padding=padding)
    np.testing.assert_array_equal(
        K.max_pool2d(x, **kw), loop_pool(x, size, strides, padding, max)
    )
    np.testing.assert_array_equal(
        K.avg_pool2d(x, **kw), loop_pool(x, size, strides, padding, c_rounded_mean)
    )
    assert K.avg_pool2d(x, **kw).dtype == np.int8


def test_max_pool_ignores_padding() -> None:
    x = np.full((1, 2, 2, 1), -100, dtype=np.int8)
    got = K.max_pool2d(x, pool_size=(2, 2), padding=(1, 1, 1, 1))
    np.testing.assert_array_equal(got, np.full((1, 3, 3, 1), -100))
    f = K.max_pool2d(x.astype(np.float32), pool_size=(2, 2), padding=(1, 1, 0, 0))
    np.testing.assert_array_equal(f[0, :, :, 0], [[-100, -100], [-100, -100]])


def test_avg_pool_rounding_and_count_include_pad() -> None:
    # [[1, 2], [2, 2]]: sum 7 / 4 = 1.75 -> 2; [[-1, -2], [-2, -1]]: -6/4 -> -2
    x = np.array([[1, 2, -1, -2], [2, 2, -2, -1]], dtype=np.int8).reshape(1, 2, 4, 1)
    got = K.avg_pool2d(x, pool_size=(2, 2), strides=(2, 2))
    np.testing.assert_array_equal(got[0, 0, :, 0], [2, -2])
    # pad right by 1 with a 1x2 window: the last window holds one element
    y = np.array([[3, 4, 5]], dtype=np.int8).reshape(1, 1, 3, 1)
    kw: dict[str, Any] = dict(pool_size=(1, 2), strides=(1, 2), padding=(0, 0, 0, 1))
    np.testing.assert_array_equal(K.avg_pool2d(y, **kw)[0, 0, :, 0], [4, 5])  # 3.5->4
    np.testing.assert_array_equal(
        K.avg_pool2d(y, count_include_pad=True, **kw)[0, 0, :, 0],
        [4, 3],  # 5/2->3
    )
    f = K.avg_pool2d(y.astype(np.float32), **kw)
    np.testing.assert_array_equal(f[0, 0, :, 0], [3.5, 5.0])


def test_pool_nchw_layout() -> None:
    x = i8((1, 6, 6, 2))
    kw: dict[str, Any] = dict(pool_size=(3, 3), strides=(2, 2), padding=(1, 1, 1, 1))
    for pool in (K.max_pool2d, K.avg_pool2d):
        nchw = pool(x.transpose(0, 3, 1, 2), layout="NCHW", **kw)
        np.testing.assert_array_equal(nchw, pool(x, **kw).transpose(0, 3, 1, 2))


def test_global_avg_pool_and_mean() -> None:
    # channel 0: 1 + 2 = 3 / 2 = 1.5 -> 2; channel 1: -1 - 2 -> -1.5 -> -2
    x = np.array([[1, -1], [2, -2]], dtype=np.int8).reshape(1, 1, 2, 2)
    got = K.global_avg_pool2d(x)
    assert got.shape == (1, 1, 1, 2) and got.dtype == np.int8
    np.testing.assert_array_equal(got.reshape(-1), [2, -2])
    nchw = K.global_avg_pool2d(x.transpose(0, 3, 1, 2), layout="NCHW")
    assert nchw.shape == (1, 2, 1, 1)
    np.testing.assert_array_equal(nchw.reshape(-1), [2, -2])
    m = K.mean(np.arange(24, dtype=np.int32).reshape(2, 3, 4), axis=(-1, 0))
    # mean over axes 0 and 2 of j-th middle slice: (4j..4j+3, 12+4j..) -> 7.5+4j
    np.testing.assert_array_equal(m, [8, 12, 16])
    mf = K.mean(np.array([[1, 2], [4, 8]], dtype=np.float32), axis=(1,), keepdims=True)
    np.testing.assert_array_equal(mf, [[1.5], [6.0]])


# ------------------------------------------------------------ data movement


def test_reshape_transpose_pad_concatenate() -> None:
    x = np.arange(6, dtype=np.int8).reshape(2, 3)
    np.testing.assert_array_equal(K.reshape(x, (3, 2)), [[0, 1], [2, 3], [4, 5]])
    np.testing.assert_array_equal(K.transpose(x, axes=(1, 0)), [[0, 3], [1, 4], [2, 5]])
    np.testing.assert_array_equal(K.transpose(x), x.T)
    p = K.pad(x, pad_width=(1, 0, 0, 2), pad_value=-128.0)
    assert p.dtype == np.int8
    np.testing.assert_array_equal(
        p, [[-128] * 5, [0, 1, 2, -128, -128], [3, 4, 5, -128, -128]]
    )
    pf = K.pad(np.array([1.0], dtype=np.float32), pad_width=(1, 1), pad_value=0.5)
    np.testing.assert_array_equal(pf, [0.5, 1.0, 0.5])
    c = K.concatenate([x, np.array([[9], [9]], dtype=np.int8)], axis=-1)
    np.testing.assert_array_equal(c, [[0, 1, 2, 9], [3, 4, 5, 9]])
    with pytest.raises(KernelError, match="pad_value 0.5"):
        K.pad(x, pad_width=(0, 0, 0, 0), pad_value=0.5)
    with pytest.raises(KernelError, match="4 non-negative"):
        K.pad(x, pad_width=(1, 1))
    with pytest.raises(KernelError, match="permutation"):
        K.transpose(x, axes=(0, 0))


def test_softmax() -> None:
    # [0, ln 3] -> [1/4, 3/4]; invariant to shifts (up to float32 rounding of
    # 100 + ln 3)
    x = np.array([[0.0, np.log(3.0)], [100.0, 100.0 + np.log(3.0)]], dtype=np.float32)
    got = K.softmax(x)
    assert got.dtype == np.float32
    np.testing.assert_allclose(
        got.astype(np.float64), [[0.25, 0.75], [0.25, 0.75]], rtol=1e-5
    )
    col = K.softmax(np.array([[0.0], [0.0]], dtype=np.float32), axis=0)
    np.testing.assert_array_equal(col, [[0.5], [0.5]])
    with pytest.raises(KernelError, match="float"):
        K.softmax(np.array([1], dtype=np.int8))


# ------------------------------------------------------ casts/quantization


def test_cast() -> None:
    np.testing.assert_array_equal(
        K.cast(np.array([300, -129, 127, -128], dtype=np.int32), np.int8),
        [44, 127, 127, -128],
    )
    np.testing.assert_array_equal(
        K.cast(np.array([200, 5], dtype=np.uint8), np.int8), [-56, 5]
    )
    np.testing.assert_array_equal(
        K.cast(np.array([-1], dtype=np.int8), np.uint8), [255]
    )
    np.testing.assert_array_equal(
        K.cast(np.array([-2.7, 2.7, -0.5, 127.9], dtype=np.float32), np.int8),
        [-2, 2, 0, 127],
    )
    f = K.cast(np.array([-128, 5], dtype=np.int8), np.float32)
    assert f.dtype == np.float32
    np.testing.assert_array_equal(f, [-128.0, 5.0])
    with pytest.raises(KernelError, match="does not fit"):
        K.cast(np.array([128.0], dtype=np.float32), np.int8)
    with pytest.raises(KernelError, match="does not fit"):
        K.cast(np.array([np.nan], dtype=np.float32), np.int32)


def test_fixed_point_multiply_per_tensor_and_per_axis() -> None:
    x = np.array([[[[100, -7]], [[5, -5]]]], dtype=np.int32)  # (1, 2, 1, 2)
    per_tensor = K.fixed_point_multiply(x, multiplier=[1 << 30], shift=[-1])
    # * 0.25 with double rounding: 25; srdhm(-7)=-3 then -1.5->-2; 5 -> 3 -> 2;
    # -5 -> -2 -> -1
    np.testing.assert_array_equal(per_tensor.reshape(-1), [25, -2, 2, -1])
    per_axis = K.fixed_point_multiply(
        x, multiplier=[1 << 30, 3 << 29], shift=[0, 1], axis=3
    )
    # channel 0 * 0.5: 50, 2.5 -> 3; channel 1 * 1.5: -10.5 -> -10, -7.5 -> -7
    np.testing.assert_array_equal(per_axis.reshape(-1), [50, -10, 3, -7])
    on_h = K.fixed_point_multiply(
        x, multiplier=[1 << 30, 1 << 30], shift=[0, -1], axis=1
    )
    np.testing.assert_array_equal(on_h.reshape(-1), [50, -3, 2, -1])
    # per-axis multipliers with one shift for all channels
    mixed = K.fixed_point_multiply(x, multiplier=[1 << 30, 3 << 29], shift=[1], axis=3)
    # channel 0 * 1: 100, 5; channel 1 * 1.5: -10.5 -> -10, -7.5 -> -7
    np.testing.assert_array_equal(mixed.reshape(-1), [100, -10, 5, -7])
    with pytest.raises(KernelError, match="size 2"):
        K.fixed_point_multiply(x, multiplier=[1, 2, 3], shift=[0, 0, 0], axis=3)
    with pytest.raises(KernelError, match="int32"):
        K.fixed_point_multiply(np.array([1], dtype=np.int8), multiplier=[1], shift=[0])


def test_quantize_rounds_half_away_and_clamps() -> None:
    x = np.array([0.5, -0.5, 2.5, -2.5, 1000.0, -1000.0, 0.26], dtype=np.float32)
    got = K.quantize(x, scale=1.0, zero_point=0)
    assert got.dtype == np.int8
    np.testing.assert_array_equal(got, [1, -1, 3, -3, 127, -128, 0])
    q = K.quantize(
        np.array([0.0, 0.1, 1.0], dtype=np.float32), scale=0.1, zero_point=-128
    )
    np.testing.assert_array_equal(q, [-128, -127, -118])
    u = K.quantize(
        np.array([-1.0, 0.0, 300.0], dtype=np.float32),
        scale=1.0,
        zero_point=3,
        dtype=np.uint8,
    )
    np.testing.assert_array_equal(u, [2, 3, 255])


def test_dequantize() -> None:
    got = K.dequantize(
        np.array([-128, 0, 127], dtype=np.int8), scale=0.5, zero_point=-128
    )
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, [0.0, 64.0, 127.5])
