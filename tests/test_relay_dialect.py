"""The relay dialect against its contract (docs/relay-ops.md) and its Python API.

FileCheck covers the textual forms (tests/filecheck/dialects/relay); this file
covers what text cannot: that every operator and property of the contract
exists, that the inferring builders produce the types the verifiers accept,
and that the plain-Python shape functions agree with a brute-force count of
window positions.
"""

import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.dialects.builtin import (
    DenseArrayBase,
    ModuleOp,
    TensorType,
    f32,
    i8,
    i16,
    i32,
    i64,
)
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Attribute, Block, Operation, Region
from xdsl.irdl import IRDLOperation
from xdsl.utils.exceptions import VerifyException

from usmp.dialects import relay_ops as R
from usmp.dialects.relay import STRUCTURAL_OPS, Relay
from usmp.dialects.relay_base import tensor_of, ui8
from usmp.dialects.relay_props import property_values, typed_accessors
from usmp.dialects.relay_shapes import (
    ShapeError,
    conv2d_output_shape,
    pool2d_output_shape,
)

CONTRACT = Path(__file__).resolve().parent.parent / "docs" / "relay-ops.md"


def _contract_rows() -> list[tuple[list[str], list[str]]]:
    """(op names, property names) of every row of the contract's table."""
    rows = []
    for line in CONTRACT.read_text().splitlines():
        cells = [c.strip() for c in line.split("|")[1:-1]]
        if len(cells) != 4 or not cells[0].startswith("`relay."):
            continue
        names = re.findall(r"`(relay\.\w+)`", cells[0])
        props = re.findall(r"`(\w+)`", cells[2])
        rows.append((names, props))
    return rows


def test_every_contract_op_and_property_exists() -> None:
    ops = {op.name: op for op in Relay.operations if issubclass(op, IRDLOperation)}
    rows = _contract_rows()
    assert len(rows) > 15
    for names, props in rows:
        for name in names:
            assert name in ops, f"{name} of the contract is not in the relay dialect"
        for prop in props:
            owners = [
                n for n in names if prop in ops[n].get_irdl_definition().properties
            ]
            assert owners, f"property {prop} of {names} is missing"
    contract_names = {n for names, _ in rows for n in names}
    assert {op.name for op in [*STRUCTURAL_OPS, *R.OPERATOR_OPS]} == contract_names


def _block(*types: TensorType) -> Block:
    return Block(arg_types=types)


def t(shape: list[int], el: Attribute = i8) -> TensorType:
    return TensorType(el, shape)


def _built_ops() -> list[tuple[Operation, TensorType]]:
    b = _block(
        t([1, 8, 8, 4]),
        t([3, 3, 1, 8]),
        t([1, 8, 8, 4], f32),
        t([1, 4], i32),
        t([2, 16]),
        t([10, 16]),
        t([2, 3, 3, 4]),
    )
    x, dw, f, y, d, dwt, tw = b.args
    return [
        (
            R.Conv2DOp(x, dw, padding=(1, 1, 1, 1), groups=4, input_zero_point=-128),
            t([1, 8, 8, 8], i32),
        ),
        (
            R.Conv2DTransposeOp(x, tw, strides=(2, 2), padding=(1, 1, 0, 0)),
            t([1, 16, 16, 2], i32),
        ),
        (R.DenseOp(d, dwt, kernel_zero_point=1), t([2, 10], i32)),
        (R.AddOp(y, y), t([1, 4], i32)),
        (R.SubtractOp(y, y), t([1, 4], i32)),
        (R.MultiplyOp(f, f), t([1, 8, 8, 4], f32)),
        (R.MaximumOp(x, x), t([1, 8, 8, 4])),
        (R.MinimumOp(x, x), t([1, 8, 8, 4])),
        (R.RightShiftOp(y, y), t([1, 4], i32)),
        (R.DivideOp(f, f), t([1, 8, 8, 4], f32)),
        (R.SigmoidOp(f), t([1, 8, 8, 4], f32)),
        (R.TanhOp(f), t([1, 8, 8, 4], f32)),
        (R.ExpOp(f), t([1, 8, 8, 4], f32)),
        (R.LogOp(f), t([1, 8, 8, 4], f32)),
        (R.SqrtOp(f), t([1, 8, 8, 4], f32)),
        (R.RsqrtOp(f), t([1, 8, 8, 4], f32)),
        (R.ClipOp(y, -128, 127), t([1, 4], i32)),
        (R.ReluOp(f), t([1, 8, 8, 4], f32)),
        (R.MaxPool2DOp(x, (2, 2), strides=(2, 2)), t([1, 4, 4, 4])),
        (
            R.AvgPool2DOp(f, (3, 3), padding=(1, 1, 1, 1), count_include_pad=True),
            t([1, 8, 8, 4], f32),
        ),
        (R.GlobalAvgPool2DOp(x), t([1, 1, 1, 4])),
        (R.MeanOp(f, (1, 2), keepdims=True), t([1, 1, 1, 4], f32)),
        (R.SumOp(y, (-1,)), t([1], i32)),
        (R.MaxOp(x, (1, 2), keepdims=True), t([1, 1, 1, 4])),
        (R.MinOp(f, (0, 3)), t([8, 8], f32)),
        (R.ArgMaxOp(x, -1, i32), t([1, 8, 8], i32)),
        (R.ArgMinOp(f, 1, i32), t([1, 8, 4], i32)),
        (R.ReshapeOp(x, (1, 256)), t([1, 256])),
        (R.BroadcastToOp(y, (3, 1, 4)), t([3, 1, 4], i32)),
        (R.TransposeOp(x, (0, 3, 1, 2)), t([1, 4, 8, 8])),
        (
            R.StridedSliceOp(x, (0, 7, 0, 1), (1, -1, 8, 4), (1, -2, 3, 2)),
            t([1, 4, 3, 2]),
        ),
        (R.PadOp(x, (0, 0, 1, 1, 2, 2, 0, 0), -128), t([1, 10, 12, 4])),
        (R.ConcatenateOp([x, x], -1), t([1, 8, 8, 8])),
        (R.SoftmaxOp(f), t([1, 8, 8, 4], f32)),
        (R.CastOp(y, i8), t([1, 4])),
        (R.FixedPointMultiplyOp(y, [1 << 30] * 4, [-3], axis=1), t([1, 4], i32)),
        (R.QuantizeOp(f, 0.5, -1), t([1, 8, 8, 4])),
        (R.QuantizeOp(f, 0.5, 128, ui8), t([1, 8, 8, 4], ui8)),
        (R.DequantizeOp(x, 0.5, 3), t([1, 8, 8, 4], f32)),
    ]


def test_builders_infer_the_result_type() -> None:
    built = _built_ops()
    assert {type(op) for op, _ in built} == set(R.OPERATOR_OPS)
    for op, expected in built:
        op.verify()
        assert op.results[0].type == expected, op.name


def test_builders_with_defaults_print_no_properties() -> None:
    body = _block(t([1, 8, 8, 4]), t([3, 3, 4, 2]), t([1, 4], f32))
    x, w, f = body.args
    ops = [
        R.Conv2DOp(x, w),
        R.AvgPool2DOp(x, (2, 2)),
        R.GlobalAvgPool2DOp(x),
        R.SoftmaxOp(f),
        R.PadOp(f, (0, 0, 1, 1)),
    ]
    body.add_ops([*ops, ReturnOp()])
    fn = FuncOp("f", ((x.type, w.type, f.type), ()), Region(body))
    module = ModuleOp([fn])
    module.verify()
    text = str(module)
    assert "relay.conv2d %0, %1 : (" in text
    assert "relay.avg_pool2d %0 {pool_size = array<i64: 2, 2>} :" in text
    assert "relay.global_avg_pool2d %0 :" in text
    assert "relay.softmax %2 :" in text
    assert "relay.pad %2 {pad_width = array<i64: 0, 0, 1, 1>} :" in text


def test_accessors_return_python_values() -> None:
    x, w = _block(t([1, 3, 9, 9], f32), t([4, 3, 3, 3], f32)).args
    op = R.Conv2DOp(
        x,
        w,
        strides=(2, 1),
        padding=(1, 0, 1, 0),
        dilation=(1, 2),
        data_layout="NCHW",
        kernel_layout="OIHW",
    )
    assert op.strides == (2, 1)
    assert op.padding == (1, 0, 1, 0)
    assert op.dilation == (1, 2)
    assert op.groups == 1
    assert (op.data_layout, op.kernel_layout) == ("NCHW", "OIHW")
    assert op.result.type == t([1, 4, 5, 5], f32)
    (y,) = _block(t([1, 4], i32)).args
    fpm = R.FixedPointMultiplyOp(y, [7, 8, 9, 10], [-1, 2, 0, 1], axis=-1)
    assert fpm.multiplier == (7, 8, 9, 10)
    assert fpm.shift == (-1, 2, 0, 1)
    assert fpm.axis == -1
    q = R.QuantizeOp(R.DequantizeOp(y, 0.25, 7).result, 0.25, 7, i16)
    assert (q.scale, q.zero_point) == (0.25, 7)


def test_builder_rejects_invalid_input_with_the_verifier_message() -> None:
    x, w = _block(t([1, 8, 8, 4]), t([3, 3, 4, 2], f32)).args
    with pytest.raises(VerifyException, match=r"relay\.conv2d: operand element types"):
        R.Conv2DOp(x, w)
    assert not x.uses and not w.uses  # the failed builder left no use behind


def test_typed_properties_are_declared_once() -> None:
    x, w = _block(t([1, 8, 8, 4], f32), t([3, 3, 4, 2], f32)).args
    op = R.Conv2DOp(x, w, groups=None)  # None: the declared default
    assert property_values(op) == {
        "strides": (1, 1),
        "padding": (0, 0, 0, 0),
        "dilation": (1, 1),
        "groups": 1,
        "data_layout": "NHWC",
        "kernel_layout": "HWIO",
        "input_zero_point": 0,
        "kernel_zero_point": 0,
    }
    op.strides = (2, 2)  # assigning stores the attribute
    assert op.properties["strides"] == DenseArrayBase.from_list(i64, [2, 2])
    with pytest.raises(VerifyException, match="result type"):
        op.verify()
    for op_type in R.OPERATOR_OPS:
        declared = set(op_type.get_irdl_definition().properties)
        assert set(typed_accessors(op_type)) == declared, op_type.name
    with pytest.raises(
        VerifyException, match=r"relay\.transpose: axes \[0, 1\] is not"
    ):
        R.TransposeOp(x, (0, 1))
    with pytest.raises(VerifyException, match="lhs must be a tensor, got i8"):
        tensor_of("relay.add", "lhs", i8)


def _window_starts(size: int, k: int, s: int, d: int, before: int, after: int) -> int:
    """Number of window positions whose (dilated) extent fits the padded input."""
    extent = (k - 1) * d + 1
    starts = range(-before, size + after - extent + 1, s)
    return len(starts)


@settings(max_examples=150, deadline=None)
@given(
    h=st.integers(1, 12),
    w=st.integers(1, 12),
    k=st.tuples(st.integers(1, 4), st.integers(1, 4)),
    s=st.tuples(st.integers(1, 3), st.integers(1, 3)),
    d=st.tuples(st.integers(1, 3), st.integers(1, 3)),
    pad=st.tuples(*[st.integers(0, 3)] * 4),
    groups=st.sampled_from([1, 2, 4]),
)
def test_conv2d_output_shape_counts_window_positions(
    h: int,
    w: int,
    k: tuple[int, int],
    s: tuple[int, int],
    d: tuple[int, int],
    pad: tuple[int, int, int, int],
    groups: int,
) -> None:
    oh = _window_starts(h, k[0], s[0], d[0], pad[0], pad[2])
    ow = _window_starts(w, k[1], s[1], d[1], pad[1], pad[3])
    data, weight = (2, h, w, 4), (k[0], k[1], 4 // groups, 6 if groups < 4 else 8)
    kwargs: dict[str, Any] = dict(strides=s, padding=pad, dilation=d, groups=groups)
    if oh == 0 or ow == 0:
        with pytest.raises(ShapeError, match="does not fit"):
            conv2d_output_shape(data, weight, **kwargs)
    else:
        assert conv2d_output_shape(data, weight, **kwargs) == (2, oh, ow, weight[3])


@settings(max_examples=100, deadline=None)
@given(
    h=st.integers(1, 10),
    k=st.integers(1, 4),
    s=st.integers(1, 3),
    pad=st.tuples(st.integers(0, 3), st.integers(0, 3)),
)
def test_pool2d_windows_always_overlap_the_input(
    h: int, k: int, s: int, pad: tuple[int, int]
) -> None:
    padding = (pad[0], 0, pad[1], 0)
    if max(pad) >= k or h + sum(pad) < k:
        with pytest.raises(ShapeError):
            pool2d_output_shape((1, h, 1, 1), (k, 1), strides=(s, 1), padding=padding)
        return
    shape = pool2d_output_shape((1, h, 1, 1), (k, 1), strides=(s, 1), padding=padding)
    assert shape == (1, _window_starts(h, k, s, 1, *pad), 1, 1)
    for i in range(shape[1]):
        start = i * s - pad[0]
        assert start < h and start + k > 0, "a window sees only padding"


@pytest.mark.parametrize(
    "values",
    [(), (1, -2, 3), (2**31 - 1, -(2**31)), (2**31,), (2**32 - 1,), [np.int64(-7)]],
)
def test_array_properties_are_xdsls_arrays(values: tuple[int, ...]) -> None:
    """An ``i32`` array property built from Python values (packed at once
    when they are in the signed range) is xDSL's ``from_list``'s attribute:
    the unsigned half of the range is normalized to negative values, one
    out of range is refused."""
    from xdsl.dialects.builtin import DenseArrayBase, i32

    from usmp.dialects.relay_props import I32S

    assert I32S.to_attr(values) == DenseArrayBase.from_list(i32, list(values))
    with pytest.raises(ValueError, match="out of range"):
        I32S.to_attr((*values, 2**32))
