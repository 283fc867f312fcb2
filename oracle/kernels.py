"""Reference numpy kernels: one pure function per relay operator.

The semantics are those of ``docs/relay-ops.md``; each function documents
them exactly. Conventions shared by all kernels:

* Inputs are numpy arrays of the operator's element type (``int8`` for
  ``i8``, ``int32`` for ``i32``, ``uint8`` for ``ui8``, ``float32`` for
  ``f32``); results have the dtype of the relay result type.
* Integer arithmetic is exact and then wraps to the result width (two's
  complement), like the C the compiler emits; integer accumulations are
  computed exactly and reduced modulo 2**32 into int32.
* Float accumulations (conv2d, dense, pooling, mean, softmax) are done in
  float64 and rounded once to float32, so the oracle is at least as accurate
  as any float32 implementation it is compared with (compare floats with a
  tolerance).
* Invalid arguments (bad layouts, shapes, shift amounts, out-of-range float
  to int casts, ...) raise ``KernelError``; the relay interpreter turns it
  into a located diagnostic at the op.
"""

from __future__ import annotations

import typing
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
from numpy.lib.stride_tricks import sliding_window_view

from usmp.oracle.quantization import (
    multiply_by_quantized_multiplier,
    multiply_by_quantized_multiplier_int64,
    round_half_away_from_zero,
    rounding_divide,
)

Array = npt.NDArray[np.generic]

# float64 represents every integer below 2**53 exactly: integer dot products
# whose worst-case magnitude stays below it run through BLAS in float64.
_EXACT_F64 = 2**53


class KernelError(ValueError):
    """Invalid operator arguments (the message says what would be accepted)."""


# --------------------------------------------------------------- helpers


def _is_int(a: Array) -> bool:
    return a.dtype.kind in "iu"


def _int_limits(dtype: np.dtype[Any]) -> tuple[int, int]:
    """(min, max) of an integer ``dtype`` (callers check the kind first)."""
    # numpy's stubs type iinfo over np.dtype[np.integer]; the callers' kind
    # check is what establishes that (``cast`` below is the relay operator).
    info = np.iinfo(typing.cast("np.dtype[np.integer[Any]]", dtype))
    return info.min, info.max


def _is_float(a: Array) -> bool:
    return a.dtype.kind == "f"


def wrap(values: npt.ArrayLike, dtype: npt.DTypeLike) -> Array:
    """Integers reduced modulo 2**bits into ``dtype`` (two's complement)."""
    return np.asarray(values).astype(np.int64).astype(dtype)


def _int_matmul(a: Array, b: Array) -> Array:
    """Exact (batched) matmul of int64 arrays; through float64 BLAS when that
    is exact."""
    k = a.shape[-1]
    amax = int(np.abs(a).max(initial=0))
    bmax = int(np.abs(b).max(initial=0))
    if k * amax * bmax < _EXACT_F64:
        return np.matmul(a.astype(np.float64), b.astype(np.float64)).astype(np.int64)
    return np.matmul(a, b)


def _layout_perm(layout: str, canonical: str, what: str) -> list[int]:
    """Axes that transpose an array in ``layout`` to ``canonical`` order."""
    if sorted(layout) != sorted(canonical):
        raise KernelError(
            f"{what} '{layout}' is not a permutation of '{canonical}' "
            f"(e.g. {canonical!r})"
        )
    return [layout.index(c) for c in canonical]


def _to_layout(x: Array, layout: str, canonical: str, what: str) -> Array:
    return np.transpose(x, _layout_perm(layout, canonical, what))


def _from_layout(x: Array, layout: str, canonical: str) -> Array:
    return np.transpose(x, [canonical.index(c) for c in layout])


def _pair(v: Sequence[int], name: str) -> tuple[int, int]:
    if len(v) != 2:
        raise KernelError(f"{name} must have 2 values (height, width), got {list(v)}")
    return int(v[0]), int(v[1])


def _padding4(v: Sequence[int]) -> tuple[int, int, int, int]:
    if len(v) != 4 or min(v) < 0:
        raise KernelError(
            f"padding must be 4 non-negative values (top, left, bottom, right), "
            f"got {list(v)}"
        )
    return int(v[0]), int(v[1]), int(v[2]), int(v[3])


def _windows(
    x: Array,
    window: tuple[int, int],
    strides: tuple[int, int],
    dilation: tuple[int, int],
) -> Array:
    """NHWC ``x`` -> view (N, OH, OW, C, KH, KW) of the (dilated) windows."""
    (kh, kw), (sh, sw), (dh, dw) = window, strides, dilation
    eh, ew = (kh - 1) * dh + 1, (kw - 1) * dw + 1
    if x.shape[1] < eh or x.shape[2] < ew:
        raise KernelError(
            f"window {kh}x{kw} (dilated {eh}x{ew}) does not fit the padded "
            f"input {x.shape[1]}x{x.shape[2]}"
        )
    v = sliding_window_view(x, (eh, ew), axis=(1, 2))
    return v[:, ::sh, ::sw, :, ::dh, ::dw]


def _check_positive(v: tuple[int, int], name: str) -> None:
    if min(v) < 1:
        raise KernelError(f"{name} must be positive, got {list(v)}")


# ------------------------------------------------------------ conv / dense


def _accumulator(exact: Array, data: Array) -> Array:
    """An integer conv2d / dense sum in its accumulator type: int64 for int16
    data (16x8), else int32 (modulo 2**32)."""
    return wrap(exact, np.int64 if data.dtype == np.int16 else np.int32)


def conv2d(
    data: Array,
    weight: Array,
    *,
    strides: Sequence[int] = (1, 1),
    padding: Sequence[int] = (0, 0, 0, 0),
    dilation: Sequence[int] = (1, 1),
    groups: int = 1,
    data_layout: str = "NHWC",
    kernel_layout: str = "HWIO",
    input_zero_point: int = 0,
    kernel_zero_point: int = 0,
) -> Array:
    """2-D grouped convolution (cross-correlation), ``relay.conv2d``.

    In NHWC / HWIO terms (other layouts are transposed to these: any
    permutation of ``NHWC`` for data, of ``HWIO`` for the kernel)::

        out[n, y, x, o] = sum_{i, j, c}
            (in_pad[n, y*sh + i*dh, x*sw + j*dw, g*Cg + c] - input_zp)
          * (w[i, j, c, o] - kernel_zp)

    where ``g = o // (Cout / groups)``, ``Cg = Cin / groups``, ``w`` has shape
    (KH, KW, Cg, Cout), and ``in_pad`` is the input padded by ``padding`` =
    (top, left, bottom, right) with ``input_zp`` (padded positions
    contribute 0). ``OH = (H + top + bottom - ((KH-1)*dh + 1)) // sh + 1``.
    Depthwise is ``groups == Cin`` (channel multiplier ``Cout / Cin``).

    Float inputs give float32 (accumulated in float64); integer inputs give
    int32, the exact sum reduced modulo 2**32, or int64 for int16 data.
    """
    if data.dtype != weight.dtype and not (_is_int(data) and _is_int(weight)):
        raise KernelError(f"conv2d: data {data.dtype} and weight {weight.dtype} differ")
    if data.ndim != 4 or weight.ndim != 4:
        raise KernelError(
            f"conv2d: data and weight must be 4-D, got shapes {data.shape} and "
            f"{weight.shape}"
        )
    sh, sw = _pair(strides, "strides")
    dh, dw = _pair(dilation, "dilation")
    _check_positive((sh, sw), "strides")
    _check_positive((dh, dw), "dilation")
    top, left, bottom, right = _padding4(padding)
    x = _to_layout(data, data_layout, "NHWC", "data_layout")
    w = _to_layout(weight, kernel_layout, "HWIO", "kernel_layout")
    n, _, _, cin = x.shape
    kh, kw, cg, cout = w.shape
    if groups < 1 or cin % groups or cout % groups or cg != cin // groups:
        raise KernelError(
            f"conv2d: groups={groups} does not fit Cin={cin}, Cout={cout} and a kernel "
            f"with {cg} input channels (need Cin % groups == Cout % groups == 0 and "
            f"kernel I == Cin / groups)"
        )

    integer = _is_int(data)
    acc_t = np.int64 if integer else np.float64
    xs = x.astype(acc_t) - input_zero_point
    ws = w.astype(acc_t) - kernel_zero_point
    xs = np.pad(xs, ((0, 0), (top, bottom), (left, right), (0, 0)))
    win = _windows(xs, (kh, kw), (sh, sw), (dh, dw))  # N, OH, OW, Cin, KH, KW
    oh, ow = win.shape[1], win.shape[2]
    co_g = cout // groups
    # patches: (groups, N*OH*OW, KH*KW*Cg); weights: (groups, KH*KW*Cg, Cout/g)
    patches = win.reshape(n, oh, ow, groups, cg, kh, kw)
    patches = patches.transpose(3, 0, 1, 2, 5, 6, 4).reshape(
        groups, n * oh * ow, kh * kw * cg
    )
    wmat = ws.reshape(kh, kw, cg, groups, co_g).transpose(3, 0, 1, 2, 4)
    wmat = wmat.reshape(groups, kh * kw * cg, co_g)
    if integer:
        out = _int_matmul(patches, wmat)
    else:
        out = np.matmul(patches, wmat)
    out = out.transpose(1, 0, 2).reshape(n, oh, ow, cout)
    result = _accumulator(out, data) if integer else out.astype(np.float32)
    return _from_layout(result, data_layout, "NHWC")


def conv2d_transpose(
    data: Array,
    weight: Array,
    *,
    strides: Sequence[int] = (1, 1),
    padding: Sequence[int] = (0, 0, 0, 0),
    output_padding: Sequence[int] = (0, 0),
    input_zero_point: int = 0,
    kernel_zero_point: int = 0,
) -> Array:
    """2-D transposed convolution, ``relay.conv2d_transpose``: NHWC data,
    OHWI weight::

        full[n, iy*sh + i, ix*sw + j, o] += (x[n, iy, ix, c] - input_zp)
                                            * (w[o, i, j, c] - kernel_zp)

    then ``out = full[:, top : top + OH, left : left + OW]`` with
    ``OH = (H - 1)*sh + KH - top - bottom + output_padding[0]`` (positions
    past ``full``'s end are 0). Accumulator types as ``conv2d``.
    """
    if data.dtype != weight.dtype and not (_is_int(data) and _is_int(weight)):
        raise KernelError(
            f"conv2d_transpose: data {data.dtype} and weight {weight.dtype} differ"
        )
    if data.ndim != 4 or weight.ndim != 4 or data.shape[3] != weight.shape[3]:
        raise KernelError(
            "conv2d_transpose: expected data (N, H, W, C) and weight (O, KH, KW, C), "
            f"got {data.shape} and {weight.shape}"
        )
    sh, sw = _pair(strides, "strides")
    _check_positive((sh, sw), "strides")
    top, left, bottom, right = _padding4(padding)
    ph, pw = _pair(output_padding, "output_padding")
    n, h, w, _ = data.shape
    cout, kh, kw, _ = weight.shape
    oh = (h - 1) * sh + kh - top - bottom + ph
    ow = (w - 1) * sw + kw - left - right + pw
    if oh < 1 or ow < 1:
        raise KernelError(f"conv2d_transpose: padding {list(padding)} leaves no output")
    integer = _is_int(data)
    acc_t = np.int64 if integer else np.float64
    xs = data.astype(acc_t) - input_zero_point
    ws = weight.astype(acc_t) - kernel_zero_point
    full: Array = np.zeros(
        (n, max((h - 1) * sh + kh, top + oh), max((w - 1) * sw + kw, left + ow), cout),
        acc_t,
    )
    for i in range(kh):
        for j in range(kw):
            wt = ws[:, i, j, :].T
            tap = _int_matmul(xs, wt) if integer else xs @ wt  # (N, H, W, O)
            region = full[
                :, i : i + (h - 1) * sh + 1 : sh, j : j + (w - 1) * sw + 1 : sw
            ]
            np.add(region, tap, out=region)  # a view of full
    out = full[:, top : top + oh, left : left + ow]
    return _accumulator(out, data) if integer else out.astype(np.float32)


def dense(
    data: Array,
    weight: Array,
    *,
    input_zero_point: int = 0,
    kernel_zero_point: int = 0,
) -> Array:
    """Fully connected layer, ``relay.dense``: data (B, K), weight (N, K)::

        out[b, n] = sum_k (data[b, k] - input_zp) * (weight[n, k] - kernel_zp)

    Float32 result for floats (float64 accumulation), int32 (exact sum
    modulo 2**32) for integers, int64 for int16 data.
    """
    if data.ndim != 2 or weight.ndim != 2 or data.shape[1] != weight.shape[1]:
        raise KernelError(
            f"dense: expected data (B, K) and weight (N, K), got {data.shape} and "
            f"{weight.shape}"
        )
    if _is_int(data) != _is_int(weight):
        raise KernelError(f"dense: data {data.dtype} and weight {weight.dtype} differ")
    if _is_int(data):
        xs = data.astype(np.int64) - input_zero_point
        ws = weight.astype(np.int64) - kernel_zero_point
        return _accumulator(_int_matmul(xs, ws.T), data)
    xs = data.astype(np.float64) - input_zero_point
    ws = weight.astype(np.float64) - kernel_zero_point
    return (xs @ ws.T).astype(np.float32)


# ------------------------------------------------------------ elementwise


def _binary(lhs: Array, rhs: Array, name: str) -> None:
    if lhs.dtype != rhs.dtype:
        raise KernelError(f"{name}: operand types differ ({lhs.dtype} vs {rhs.dtype})")
    try:
        np.broadcast_shapes(lhs.shape, rhs.shape)
    except ValueError:
        raise KernelError(
            f"{name}: shapes {lhs.shape} and {rhs.shape} do not broadcast"
        ) from None


def _int_or_float(
    lhs: Array, rhs: Array, name: str, op: Callable[[Array, Array], Array]
) -> Array:
    _binary(lhs, rhs, name)
    if _is_int(lhs):
        return wrap(op(lhs.astype(np.int64), rhs.astype(np.int64)), lhs.dtype)
    return np.asarray(op(lhs, rhs)).astype(lhs.dtype)


def add(lhs: Array, rhs: Array) -> Array:
    """``lhs + rhs`` with numpy broadcasting; integers wrap."""
    return _int_or_float(lhs, rhs, "add", np.add)


def subtract(lhs: Array, rhs: Array) -> Array:
    """``lhs - rhs`` with numpy broadcasting; integers wrap."""
    return _int_or_float(lhs, rhs, "subtract", np.subtract)


def multiply(lhs: Array, rhs: Array) -> Array:
    """``lhs * rhs`` with numpy broadcasting; integers wrap (low bits of the
    exact product)."""
    return _int_or_float(lhs, rhs, "multiply", np.multiply)


def divide(lhs: Array, rhs: Array) -> Array:
    """``lhs / rhs`` (floats) with numpy broadcasting, in the operand type."""
    return _int_or_float(lhs, rhs, "divide", np.divide)


def sigmoid(x: Array) -> Array:
    """TFLite's float ``Logistic`` in f32: 1 above 16.619047, ``exp(x)``
    below -9, else ``1 / (1 + exp(-x))``."""
    x = np.asarray(x, np.float32)
    with np.errstate(over="ignore"):
        mid = np.float32(1) / (np.float32(1) + np.exp(-x))
    out = np.where(x < np.float32(-9.0), np.exp(x), mid)
    return np.where(x > np.float32(16.619047164916992), np.float32(1), out).astype(
        np.float32
    )


def tanh(x: Array) -> Array:
    """``tanh`` in f32."""
    return np.tanh(np.asarray(x, np.float32))


def exp(x: Array) -> Array:
    """``exp`` in f32."""
    with np.errstate(over="ignore"):
        return np.exp(np.asarray(x, np.float32))


def log(x: Array) -> Array:
    """Natural logarithm in f32 (``-inf`` at 0, NaN below)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.log(np.asarray(x, np.float32))


def sqrt(x: Array) -> Array:
    """``sqrt`` in f32 (NaN below 0)."""
    with np.errstate(invalid="ignore"):
        return np.sqrt(np.asarray(x, np.float32))


def rsqrt(x: Array) -> Array:
    """``1 / sqrt(x)`` in f32, as TFLite (``inf`` at 0, NaN below)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.float32(1) / np.sqrt(np.asarray(x, np.float32))


def maximum(lhs: Array, rhs: Array) -> Array:
    """Elementwise maximum with broadcasting (NaN propagates for floats)."""
    return _int_or_float(lhs, rhs, "maximum", np.maximum)


def minimum(lhs: Array, rhs: Array) -> Array:
    """Elementwise minimum with broadcasting (NaN propagates for floats)."""
    return _int_or_float(lhs, rhs, "minimum", np.minimum)


def right_shift(lhs: Array, rhs: Array) -> Array:
    """Arithmetic ``lhs >> rhs`` (rounds toward minus infinity), integers
    only, broadcasting. Shift amounts must lie in ``[0, bits)`` (anything
    else is undefined behaviour in C and rejected)."""
    _binary(lhs, rhs, "right_shift")
    if not _is_int(lhs):
        raise KernelError(f"right_shift: integer operands required, got {lhs.dtype}")
    bits = lhs.dtype.itemsize * 8
    if rhs.size and (rhs.min() < 0 or int(rhs.max()) >= bits):
        raise KernelError(
            f"right_shift: shift amounts must be in [0, {bits - 1}] for {lhs.dtype}, "
            f"got range [{rhs.min()}, {rhs.max()}]"
        )
    return wrap(lhs.astype(np.int64) >> rhs.astype(np.int64), lhs.dtype)


def clip(x: Array, *, a_min: float, a_max: float) -> Array:
    """``min(max(x, a_min), a_max)`` in the type of ``x``. For integers the
    bounds act as the integers ``ceil(a_min)`` and ``floor(a_max)``."""
    if a_min > a_max:
        raise KernelError(f"clip: a_min {a_min} is greater than a_max {a_max}")
    if _is_int(x):
        lo, hi = np.ceil(a_min), np.floor(a_max)
        low, high = _int_limits(x.dtype)
        lo, hi = max(lo, low), min(hi, high)
        return np.asarray(np.clip(x.astype(np.int64), int(lo), int(hi))).astype(x.dtype)
    return np.asarray(np.clip(x, x.dtype.type(a_min), x.dtype.type(a_max)), x.dtype)


def relu(x: Array) -> Array:
    """``max(x, 0)``."""
    return np.asarray(np.maximum(x, x.dtype.type(0)))


# ---------------------------------------------------------------- pooling


def _pool_windows(
    x: Array,
    pool_size: Sequence[int],
    strides: Sequence[int],
    padding: Sequence[int],
    fill: float | int,
    name: str,
) -> tuple[Array, Array]:
    """(windows of x padded with ``fill``, windows of the validity mask)."""
    if x.ndim != 4:
        raise KernelError(f"{name}: expected a 4-D input, got shape {x.shape}")
    ph, pw = _pair(pool_size, "pool_size")
    sh, sw = _pair(strides, "strides")
    _check_positive((ph, pw), "pool_size")
    _check_positive((sh, sw), "strides")
    top, left, bottom, right = _padding4(padding)
    pads = ((0, 0), (top, bottom), (left, right), (0, 0))
    xp = np.pad(x, pads, constant_values=fill)
    valid = np.pad(np.ones((1, *x.shape[1:3], 1), dtype=np.int64), pads)
    wins = _windows(xp, (ph, pw), (sh, sw), (1, 1))
    counts = _windows(valid, (ph, pw), (sh, sw), (1, 1)).sum(axis=(-2, -1))
    if counts.size and counts.min() == 0:
        raise KernelError(f"{name}: a pooling window lies entirely in the padding")
    return wins, counts


def max_pool2d(
    x: Array,
    *,
    pool_size: Sequence[int],
    strides: Sequence[int] = (1, 1),
    padding: Sequence[int] = (0, 0, 0, 0),
    layout: str = "NHWC",
) -> Array:
    """Max pooling; padded positions are ignored (never the maximum).
    ``OH = (H + top + bottom - PH) // SH + 1``."""
    xn = _to_layout(x, layout, "NHWC", "layout")
    fill = _int_limits(x.dtype)[0] if _is_int(x) else -np.inf
    wins, _ = _pool_windows(xn, pool_size, strides, padding, fill, "max_pool2d")
    return _from_layout(wins.max(axis=(-2, -1)).astype(x.dtype), layout, "NHWC")


def _average(total: Array, counts: Array, dtype: np.dtype) -> Array:
    """Sum / count: float64 then rounded to ``dtype``, or, for integers, the
    TFLite rounding division of the int32 accumulator."""
    if dtype.kind == "f":
        return np.asarray(np.true_divide(total, counts)).astype(dtype)
    return np.asarray(rounding_divide(wrap(total, np.int32), counts)).astype(dtype)


def avg_pool2d(
    x: Array,
    *,
    pool_size: Sequence[int],
    strides: Sequence[int] = (1, 1),
    padding: Sequence[int] = (0, 0, 0, 0),
    layout: str = "NHWC",
    count_include_pad: bool = False,
) -> Array:
    """Average pooling. The divisor is the number of non-padded elements of
    the window (``count_include_pad`` false, TFLite) or ``PH*PW``. Floats:
    float64 mean rounded to float32. Integers: int32 sum divided with
    ``rounding_divide`` (half away from zero, TFLite ``AveragePool``)."""
    xn = _to_layout(x, layout, "NHWC", "layout")
    acc_t = np.int64 if _is_int(x) else np.float64
    wins, counts = _pool_windows(
        xn.astype(acc_t), pool_size, strides, padding, 0, "avg_pool2d"
    )
    if count_include_pad:
        counts = np.full_like(counts, wins.shape[-2] * wins.shape[-1])
    out = _average(wins.sum(axis=(-2, -1)), counts, x.dtype)
    return _from_layout(out, layout, "NHWC")


def global_avg_pool2d(x: Array, *, layout: str = "NHWC") -> Array:
    """Mean over H and W, keeping them as size-1 dims ((N,1,1,C) for NHWC);
    rounding as ``avg_pool2d``."""
    perm = _layout_perm(layout, "NHWC", "layout")
    if x.ndim != 4:
        raise KernelError(
            f"global_avg_pool2d: expected a 4-D input, got shape {x.shape}"
        )
    return mean(x, axis=(perm[1], perm[2]), keepdims=True)


def mean(x: Array, *, axis: Sequence[int], keepdims: bool = False) -> Array:
    """Mean over ``axis`` (negative axes count from the end). Floats: float64
    mean rounded to the input type; integers: int32 sum divided by the
    element count with ``rounding_divide``."""
    axes = tuple(sorted(_normalize_axis(a, x.ndim, "mean") for a in axis))
    if len(set(axes)) != len(axes):
        raise KernelError(f"mean: repeated axis in {list(axis)}")
    count = int(np.prod([x.shape[a] for a in axes], dtype=np.int64))
    if count == 0:
        raise KernelError("mean: reducing over an empty dimension")
    acc_t = np.int64 if _is_int(x) else np.float64
    total = x.astype(acc_t).sum(axis=axes, keepdims=keepdims)
    return _average(np.asarray(total), np.asarray(count), x.dtype)


def sum_(x: Array, *, axis: Sequence[int], keepdims: bool = False) -> Array:
    """Sum over ``axis`` (negative axes count from the end) in the input's
    type: integers wrap (two's complement); floats are summed in float64 and
    rounded to the input type."""
    axes = tuple(sorted(_normalize_axis(a, x.ndim, "sum") for a in axis))
    if len(set(axes)) != len(axes):
        raise KernelError(f"sum: repeated axis in {list(axis)}")
    acc_t = np.int64 if _is_int(x) else np.float64
    total = np.asarray(x.astype(acc_t).sum(axis=axes, keepdims=keepdims))
    return total.astype(x.dtype)  # integers: keeps the low bits (wraps)


def _extremum(
    x: Array, axis: Sequence[int], keepdims: bool, name: str, largest: bool
) -> Array:
    axes = tuple(sorted(_normalize_axis(a, x.ndim, name) for a in axis))
    if len(set(axes)) != len(axes):
        raise KernelError(f"{name}: repeated axis in {list(axis)}")
    fn = np.max if largest else np.min
    return np.asarray(fn(x, axis=axes, keepdims=keepdims)).astype(x.dtype)


def max_(x: Array, *, axis: Sequence[int], keepdims: bool = False) -> Array:
    """Largest element over ``axis`` (negative axes count from the end)."""
    return _extremum(x, axis, keepdims, "max", largest=True)


def min_(x: Array, *, axis: Sequence[int], keepdims: bool = False) -> Array:
    """Smallest element over ``axis`` (negative axes count from the end)."""
    return _extremum(x, axis, keepdims, "min", largest=False)


def argmax(x: Array, *, axis: int, dtype: np.dtype) -> Array:
    """Index of the first largest element along ``axis`` (numpy takes the
    first of equal maxima, as TFLite's strict comparison)."""
    return np.argmax(x, axis=_normalize_axis(axis, x.ndim, "argmax")).astype(dtype)


def argmin(x: Array, *, axis: int, dtype: np.dtype) -> Array:
    """Index of the first smallest element along ``axis``."""
    return np.argmin(x, axis=_normalize_axis(axis, x.ndim, "argmin")).astype(dtype)


# ----------------------------------------------------------- data movement


def _normalize_axis(axis: int, ndim: int, name: str) -> int:
    if not -ndim <= axis < ndim:
        raise KernelError(f"{name}: axis {axis} is out of range for rank {ndim}")
    return axis % ndim


def reshape(x: Array, shape: Sequence[int]) -> Array:
    """Same elements (row-major order), new shape."""
    if int(np.prod(shape, dtype=np.int64)) != x.size:
        raise KernelError(f"reshape: cannot reshape {x.shape} to {tuple(shape)}")
    return x.reshape(tuple(shape)).copy()


def strided_slice(
    x: Array, *, begin: Sequence[int], end: Sequence[int], strides: Sequence[int]
) -> Array:
    """Elements ``begin + i * stride`` of every axis, ``i < ceil((end - begin)
    / stride)`` (absolute positions; strides may be negative)."""
    if not len(begin) == len(end) == len(strides) == x.ndim:
        raise KernelError(f"strided_slice: expected {x.ndim} begin/end/strides")
    picks = []
    for d, (b, e, s) in enumerate(zip(begin, end, strides, strict=True)):
        if s == 0:
            raise KernelError(f"strided_slice: stride of axis {d} is 0")
        index = np.arange(b, e, s)
        if index.size == 0 or index.min() < 0 or index.max() >= x.shape[d]:
            raise KernelError(f"strided_slice: axis {d} selects {list(index)}")
        picks.append(index)
    return x[np.ix_(*picks)].copy()


def transpose(x: Array, *, axes: Sequence[int] | None = None) -> Array:
    """``numpy.transpose``; no / empty ``axes`` reverses the dimensions."""
    if not axes:
        return np.transpose(x).copy()
    if sorted(_normalize_axis(a, x.ndim, "transpose") for a in axes) != list(
        range(x.ndim)
    ):
        raise KernelError(
            f"transpose: axes {list(axes)} is not a permutation of rank {x.ndim}"
        )
    return np.transpose(x, [a % x.ndim for a in axes]).copy()


def pad(x: Array, *, pad_width: Sequence[int], pad_value: float = 0.0) -> Array:
    """Constant padding; ``pad_width`` = (before0, after0, before1, after1,
    ...), one pair per dimension, non-negative. ``pad_value`` converted to
    the element type (it must be representable exactly for integers)."""
    if len(pad_width) != 2 * x.ndim or min(pad_width, default=0) < 0:
        raise KernelError(
            f"pad: pad_width must be {2 * x.ndim} non-negative values (before, after "
            f"per dimension), got {list(pad_width)}"
        )
    value: float | int = pad_value
    if _is_int(x):
        low, high = _int_limits(x.dtype)
        if pad_value != int(pad_value) or not low <= pad_value <= high:
            raise KernelError(f"pad: pad_value {pad_value} is not a {x.dtype} value")
        value = int(pad_value)
    pairs = [(int(pad_width[2 * i]), int(pad_width[2 * i + 1])) for i in range(x.ndim)]
    return np.pad(x, pairs, constant_values=value).astype(x.dtype)


def concatenate(xs: Sequence[Array], *, axis: int) -> Array:
    """``numpy.concatenate`` along ``axis`` (negative counts from the end)."""
    if not xs:
        raise KernelError("concatenate: needs at least one operand")
    dtypes = {a.dtype for a in xs}
    if len(dtypes) != 1:
        raise KernelError(
            f"concatenate: operand types differ ({sorted(map(str, dtypes))})"
        )
    ax = _normalize_axis(axis, xs[0].ndim, "concatenate")
    try:
        return np.concatenate(xs, axis=ax)
    except ValueError as e:
        raise KernelError(f"concatenate: {e}") from None


# ---------------------------------------------------------------- softmax


def softmax(x: Array, *, axis: int = -1) -> Array:
    """``exp(x - max) / sum(exp(x - max))`` along ``axis``; float only
    (computed in float64, rounded to the input type)."""
    if not _is_float(x):
        raise KernelError(f"softmax: float input required, got {x.dtype}")
    ax = _normalize_axis(axis, x.ndim, "softmax")
    xd = x.astype(np.float64)
    e = np.exp(xd - xd.max(axis=ax, keepdims=True))
    return (e / e.sum(axis=ax, keepdims=True)).astype(x.dtype)


# ------------------------------------------------------ casts / quantization


def cast(x: Array, dtype: npt.DTypeLike) -> Array:
    """Element type conversion:

    * int -> int: two's complement truncation to the target width (wraps);
    * int -> float: round to nearest (exact for ``|x| <= 2**24`` in float32);
    * float -> int: round toward zero; NaN or values outside the target
      range are rejected (undefined behaviour in C);
    * float -> float: round to nearest.
    """
    target = np.dtype(dtype)
    if _is_float(x) and target.kind in "iu":
        t = np.trunc(x.astype(np.float64))
        low, high = _int_limits(target)
        bad = ~np.isfinite(t) | (t < low) | (t > high)
        if bad.any():
            raise KernelError(
                f"cast: {x.dtype} value {x[bad].flat[0]} does not fit {target} "
                f"(float to int casts must be in range)"
            )
        return np.asarray(t).astype(target)
    if _is_int(x) and target.kind in "iu":
        return wrap(x, target)
    if target == np.bool_ or x.dtype == np.bool_:
        raise KernelError(
            f"cast: casts from/to i1 are not relay operators ({x.dtype} -> {target})"
        )
    return x.astype(target)


def fixed_point_multiply(
    x: Array,
    *,
    multiplier: Sequence[int] | Array,
    shift: Sequence[int] | Array,
    axis: int = -1,
) -> Array:
    """TFLite requantisation of an int32 tensor:
    ``multiply_by_quantized_multiplier(x, multiplier, shift)`` (gemmlowp
    double rounding), or of an int64 one (16x8 accumulators):
    ``multiply_by_quantized_multiplier_int64``; the result is int32.
    ``multiplier`` and ``shift`` each hold one value (for the whole tensor)
    or ``x.shape[axis]`` values, entry ``c`` applying to the slice ``c``
    along ``axis`` (per-channel)."""
    if x.dtype not in (np.int32, np.int64):
        raise KernelError(
            f"fixed_point_multiply: int32 or int64 input required, got {x.dtype}"
        )
    params = []
    for what, values in (("multiplier", multiplier), ("shift", shift)):
        v = np.asarray(values, dtype=np.int64).reshape(-1)
        if v.size == 0:
            raise KernelError(f"fixed_point_multiply: {what} is empty")
        if v.size != 1:
            if x.ndim == 0:
                raise KernelError(
                    f"fixed_point_multiply: per-axis {what} needs a ranked input"
                )
            ax = _normalize_axis(axis, x.ndim, "fixed_point_multiply")
            if x.shape[ax] != v.size:
                raise KernelError(
                    f"fixed_point_multiply: {v.size} per-axis {what} values but "
                    f"dimension {ax} of the input has size {x.shape[ax]}"
                )
            bshape = [1] * x.ndim
            bshape[ax] = v.size
            v = v.reshape(bshape)
        else:
            v = v.reshape(())
        params.append(v)
    try:
        if x.dtype == np.int64:
            return multiply_by_quantized_multiplier_int64(x, params[0], params[1])
        return multiply_by_quantized_multiplier(x, params[0], params[1])
    except ValueError as e:
        raise KernelError(f"fixed_point_multiply: {e}") from None


def quantize(
    x: Array, *, scale: float, zero_point: int, dtype: npt.DTypeLike = np.int8
) -> Array:
    """TFLite ``AffineQuantize``:
    ``clamp(round_half_away(x / scale) + zero_point)`` to the range of
    ``dtype``, the division in float32 as TFLite Micro's reference kernel
    does (``val / static_cast<float>(scale)``, ``TfLiteRound``): a double
    division rounds differently next to the ties ``(k + 0.5) * scale``."""
    target = np.dtype(dtype)
    if not _is_float(x) or target.kind not in "iu":
        raise KernelError(f"quantize: float -> integer only, got {x.dtype} -> {target}")
    if scale == 0 or np.isnan(scale):
        raise KernelError(f"quantize: scale must be a number other than 0, got {scale}")
    with np.errstate(over="ignore"):
        q = x.astype(np.float32) / np.float32(scale)
    if not np.isfinite(q).all():
        raise KernelError("quantize: input holds NaN or infinity")
    low, high = _int_limits(target)
    r = round_half_away_from_zero(q).astype(np.float64) + zero_point
    return np.asarray(np.clip(r, low, high)).astype(target)


def dequantize(
    x: Array, *, scale: float, zero_point: int, dtype: npt.DTypeLike = np.float32
) -> Array:
    """TFLite ``Dequantize``: ``static_cast<float>(scale) * (x - zero_point)``
    in float32 (the difference converted to float32 first)."""
    if not _is_int(x):
        raise KernelError(f"dequantize: integer input required, got {x.dtype}")
    centered = (np.asarray(x, dtype=np.int64) - zero_point).astype(np.float32)
    return np.asarray(np.float32(scale) * centered).astype(dtype)
