"""The relay reference interpreter (usmp.oracle.relay_interpreter) on whole
modules parsed from MLIR text."""

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp

from usmp.diagnostics import LocatedError, verify_located
from usmp.dialects import new_context
from usmp.oracle import kernels as K
from usmp.oracle.relay_interpreter import evaluate, input_names
from usmp.parsing import LocatingParser


def parse(src: str, verify: bool = True) -> ModuleOp:
    ctx = new_context(allow_unregistered=True)
    module = LocatingParser(ctx, src, "test.mlir").parse_module()
    if verify:
        verify_located(module)
    return module


# ------------------------------------------------------------ whole modules

INT8_CONV_CHAIN = """
func.func @main(%x: tensor<1x2x2x1xi8>) -> tensor<1x2x2x2xi8> {
  %w = relay.constant dense<[[[[2, -3]]]]> : tensor<1x1x1x2xi8>
  %b = relay.constant dense<[10, 1]> : tensor<2xi32>
  %zp = relay.constant dense<-3> : tensor<i32>
  %0 = relay.conv2d %x, %w {input_zero_point = 1 : i64} : (tensor<1x2x2x1xi8>, tensor<1x1x1x2xi8>) -> tensor<1x2x2x2xi32>
  %1 = relay.add %0, %b : (tensor<1x2x2x2xi32>, tensor<2xi32>) -> tensor<1x2x2x2xi32>
  %2 = relay.fixed_point_multiply %1 {multiplier = array<i32: 1073741824, 1073741824>, shift = array<i32: 0, -1>, axis = 3 : i64} : tensor<1x2x2x2xi32> -> tensor<1x2x2x2xi32>
  %3 = relay.add %2, %zp : (tensor<1x2x2x2xi32>, tensor<i32>) -> tensor<1x2x2x2xi32>
  %4 = relay.clip %3 {a_min = -10.0 : f64, a_max = 4.0 : f64} : tensor<1x2x2x2xi32> -> tensor<1x2x2x2xi32>
  %5 = relay.cast %4 : tensor<1x2x2x2xi32> -> tensor<1x2x2x2xi8>
  func.return %5 : tensor<1x2x2x2xi8>
}
"""


def test_int8_conv_requantization_chain() -> None:
    x = np.array([1, 2, 3, 4], dtype=np.int8).reshape(1, 2, 2, 1)
    (out,) = evaluate(parse(INT8_CONV_CHAIN), [x])
    # x - 1 = [0, 1, 2, 3]; conv: ch0 = 2(x-1) = [0, 2, 4, 6], ch1 = -3(x-1)
    # + bias: ch0 [10, 12, 14, 16], ch1 [1, -2, -5, -8]
    # * 0.5: ch0 [5, 6, 7, 8]; * 0.25 (double rounding): ch1 [1, -1, -1, -2]
    # - 3: ch0 [2, 3, 4, 5], ch1 [-2, -4, -4, -5]; clip to [-10, 4]
    assert out.dtype == np.int8
    np.testing.assert_array_equal(
        out.reshape(4, 2), [[2, -2], [3, -4], [4, -4], [4, -5]]
    )


CALLS_AND_TUPLES = """
func.func @fused_add_relu(%a: tensor<4xi8>, %b: tensor<4xi8>) -> tensor<4xi8> attributes {relay.primitive} {
  %0 = relay.add %a, %b : (tensor<4xi8>, tensor<4xi8>) -> tensor<4xi8>
  %1 = relay.relu %0 : tensor<4xi8> -> tensor<4xi8>
  func.return %1 : tensor<4xi8>
}
func.func @fused_pair(%a: tensor<4xi8>) -> (tensor<4xi8>, tensor<4xi8>) attributes {relay.primitive} {
  %0 = relay.subtract %a, %a : (tensor<4xi8>, tensor<4xi8>) -> tensor<4xi8>
  func.return %a, %0 : tensor<4xi8>, tensor<4xi8>
}
func.func @main(%x: tensor<4xi8>, %y: tensor<4xi8>) -> (tensor<4xi8>, tuple<tensor<4xi8>, tensor<4xi8>>) {
  %0 = relay.on_device %x {virtual_device = #device.virtual_device<"cpu", 0>} : tensor<4xi8>
  %1 = relay.call @fused_add_relu(%0, %y) : (tensor<4xi8>, tensor<4xi8>) -> tensor<4xi8>
  %2 = relay.device_copy %1 {src = #device.virtual_device<"cpu", 0>, dst = #device.virtual_device<"npu", 0>} : tensor<4xi8>
  %3 = relay.tuple(%2, %y) : (tensor<4xi8>, tensor<4xi8>) -> tuple<tensor<4xi8>, tensor<4xi8>>
  %4 = relay.tuple_get_item %3[1] : tuple<tensor<4xi8>, tensor<4xi8>> -> tensor<4xi8>
  %5 = relay.call @fused_pair(%4) : (tensor<4xi8>) -> tuple<tensor<4xi8>, tensor<4xi8>>
  func.return %2, %5 : tensor<4xi8>, tuple<tensor<4xi8>, tensor<4xi8>>
}
"""


def test_calls_tuples_and_devices() -> None:
    module = parse(CALLS_AND_TUPLES)
    x = np.array([100, -5, 3, 0], dtype=np.int8)
    y = np.array([100, 2, -7, 0], dtype=np.int8)
    results = evaluate(module, {"x": x, "y": y})
    # add wraps (200 -> -56) before relu; the tuple result is flattened
    assert [r.tolist() for r in results] == [
        [0, 0, 0, 0],
        [100, 2, -7, 0],
        [0, 0, 0, 0],
    ]
    results_by_position = evaluate(module, [x, y])
    assert all(
        np.array_equal(a, b) for a, b in zip(results, results_by_position, strict=True)
    )
    # evaluating a primitive function on its own
    fused = next(iter(module.ops))
    (r,) = evaluate(fused, [x, y])  # type: ignore[arg-type]
    np.testing.assert_array_equal(r, [0, 0, 0, 0])
    (r,) = evaluate(module, [x, x], entry="fused_add_relu")
    np.testing.assert_array_equal(r, [0, 0, 6, 0])


def test_dense_resource_constants() -> None:
    module = parse(
        """
func.func @main(%x: tensor<2xi32>) -> tensor<2xi32> {
  %c = relay.constant dense_resource<oracle_test_blob_i32> : tensor<2xi32>
  %r = relay.add %x, %c : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi32>
  func.return %r : tensor<2xi32>
}
{-#
  dialect_resources: {
    builtin: {
      oracle_test_blob_i32: "0x0400000001000000FEFFFFFF"
    }
  }
#-}
"""
    )
    (r,) = evaluate(module, [np.array([10, 10], dtype=np.int32)])
    np.testing.assert_array_equal(r, [11, 8])  # blob = [1, -2] little endian
    # an explicit blob (raw bytes) overrides the parsed one
    (r,) = evaluate(
        module,
        [np.array([10, 10], dtype=np.int32)],
        resources={"oracle_test_blob_i32": np.array([5, 6], dtype=np.int32).tobytes()},
    )
    np.testing.assert_array_equal(r, [15, 16])


def test_float_network() -> None:
    module = parse(
        """
func.func @main(%x: tensor<1x4x4x1xf32>) -> tensor<1x2xf32> {
  %w = relay.constant dense<1.0> : tensor<2x2x1x2xf32>
  %fw = relay.constant dense<[[1.0, 0.0], [0.0, 0.0]]> : tensor<2x2xf32>
  %0 = relay.conv2d %x, %w {strides = array<i64: 2, 2>} : (tensor<1x4x4x1xf32>, tensor<2x2x1x2xf32>) -> tensor<1x2x2x2xf32>
  %1 = relay.relu %0 : tensor<1x2x2x2xf32> -> tensor<1x2x2x2xf32>
  %2 = relay.max_pool2d %1 {pool_size = array<i64: 2, 2>} : tensor<1x2x2x2xf32> -> tensor<1x1x1x2xf32>
  %3 = relay.reshape %2 : tensor<1x1x1x2xf32> -> tensor<1x2xf32>
  %4 = relay.dense %3, %fw : (tensor<1x2xf32>, tensor<2x2xf32>) -> tensor<1x2xf32>
  %5 = relay.softmax %4 : tensor<1x2xf32> -> tensor<1x2xf32>
  func.return %5 : tensor<1x2xf32>
}
"""
    )
    x = np.full((1, 4, 4, 1), 0.25, dtype=np.float32)
    x[0, 0, 0, 0] = np.log(3.0) - 0.75
    (out,) = evaluate(module, [x])
    # every 2x2 window sums to 1 except the first, which sums to ln 3; the max
    # is ln 3 in both channels; dense keeps channel 0 -> softmax([ln 3, 0])
    np.testing.assert_allclose(out, [[0.75, 0.25]], rtol=1e-6)


# --------------------------------------------- properties reach the kernels

X_I8 = np.arange(-64, 64, dtype=np.int8).reshape(1, 4, 4, 8)
X_F32 = (np.arange(64, dtype=np.float32).reshape(1, 4, 4, 4) - 20.0) / 8
X_I32 = np.arange(-40, 40, dtype=np.int32).reshape(1, 4, 4, 5) * 1000

OP_CASES = [
    (
        "relay.max_pool2d %x {pool_size = array<i64: 3, 3>, strides = array<i64: 2, 1>, padding = array<i64: 1, 0, 1, 2>} : tensor<1x4x4x8xi8> -> tensor<1x2x4x8xi8>",
        X_I8,
        lambda x: K.max_pool2d(
            x, pool_size=(3, 3), strides=(2, 1), padding=(1, 0, 1, 2)
        ),
    ),
    (
        "relay.avg_pool2d %x {pool_size = array<i64: 3, 3>, padding = array<i64: 1, 1, 1, 1>, count_include_pad = true} : tensor<1x4x4x8xi8> -> tensor<1x4x4x8xi8>",
        X_I8,
        lambda x: K.avg_pool2d(
            x, pool_size=(3, 3), padding=(1, 1, 1, 1), count_include_pad=True
        ),
    ),
    (
        "relay.avg_pool2d %x {pool_size = array<i64: 2, 2>, layout = #relay<data_layout NCHW>} : tensor<1x4x4x4xf32> -> tensor<1x4x3x3xf32>",
        X_F32,
        lambda x: K.avg_pool2d(x, pool_size=(2, 2), layout="NCHW"),
    ),
    (
        "relay.global_avg_pool2d %x : tensor<1x4x4x8xi8> -> tensor<1x1x1x8xi8>",
        X_I8,
        K.global_avg_pool2d,
    ),
    (
        "relay.mean %x {axis = array<i64: -1, 1>, keepdims = true} : tensor<1x4x4x4xf32> -> tensor<1x1x4x1xf32>",
        X_F32,
        lambda x: K.mean(x, axis=(-1, 1), keepdims=True),
    ),
    (
        "relay.sum %x {axis = array<i64: 1, 2>} : tensor<1x4x4x8xi8> -> tensor<1x8xi8>",
        X_I8,
        lambda x: x.sum(axis=(1, 2), dtype=np.int8),
    ),
    (
        "relay.argmax %x {axis = -1 : i64} : tensor<1x4x4x8xi8> -> tensor<1x4x4xi32>",
        X_I8,
        lambda x: x.argmax(axis=-1).astype(np.int32),
    ),
    (
        "relay.argmin %x {axis = 1 : i64} : tensor<1x4x4x4xf32> -> tensor<1x4x4xi32>",
        X_F32,
        lambda x: x.argmin(axis=1).astype(np.int32),
    ),
    (
        "relay.max %x {axis = array<i64: -1>, keepdims = true} : tensor<1x4x4x8xi8> -> tensor<1x4x4x1xi8>",
        X_I8,
        lambda x: x.max(axis=-1, keepdims=True),
    ),
    (
        "relay.min %x {axis = array<i64: 0, 2>} : tensor<1x4x4x4xf32> -> tensor<4x4xf32>",
        X_F32,
        lambda x: x.min(axis=(0, 2)),
    ),
    (
        "relay.transpose %x {axes = array<i64: 0, 3, 1, 2>} : tensor<1x4x4x8xi8> -> tensor<1x8x4x4xi8>",
        X_I8,
        lambda x: x.transpose(0, 3, 1, 2),
    ),
    (
        "relay.broadcast_to %x : tensor<1x4x4x8xi8> -> tensor<2x1x4x4x8xi8>",
        X_I8,
        lambda x: np.broadcast_to(x, (2, 1, 4, 4, 8)),
    ),
    (
        "relay.strided_slice %x {begin = array<i64: 0, 3, 0, 7>, end = array<i64: 1, -1, 4, 8>, strides = array<i64: 1, -2, 3, 3>} : tensor<1x4x4x8xi8> -> tensor<1x2x2x1xi8>",
        X_I8,
        lambda x: x[:, 3::-2, 0:4:3, 7:8],
    ),
    (
        "relay.pad %x {pad_width = array<i64: 0, 0, 1, 0, 0, 2, 0, 0>, pad_value = -128.0 : f64} : tensor<1x4x4x8xi8> -> tensor<1x5x6x8xi8>",
        X_I8,
        lambda x: np.pad(x, ((0, 0), (1, 0), (0, 2), (0, 0)), constant_values=-128),
    ),
    (
        "relay.softmax %x {axis = 1 : i64} : tensor<1x4x4x4xf32> -> tensor<1x4x4x4xf32>",
        X_F32,
        lambda x: K.softmax(x, axis=1),
    ),
    (
        "relay.clip %x {a_min = -3.0 : f64, a_max = 2.5 : f64} : tensor<1x4x4x4xf32> -> tensor<1x4x4x4xf32>",
        X_F32,
        lambda x: np.clip(x, -3.0, 2.5),
    ),
    (
        "relay.fixed_point_multiply %x {multiplier = array<i32: 1073741824, 1395864371, 1, 2, 3>, shift = array<i32: -7>, axis = 3 : i64} : tensor<1x4x4x5xi32> -> tensor<1x4x4x5xi32>",
        X_I32,
        lambda x: K.fixed_point_multiply(
            x, multiplier=[1073741824, 1395864371, 1, 2, 3], shift=[-7], axis=3
        ),
    ),
    (
        "relay.quantize %x {scale = 0.25 : f64, zero_point = 128 : i64} : tensor<1x4x4x4xf32> -> tensor<1x4x4x4xui8>",
        X_F32,
        lambda x: K.quantize(x, scale=0.25, zero_point=128, dtype=np.uint8),
    ),
    (
        "relay.dequantize %x {scale = 0.5 : f64, zero_point = -1 : i64} : tensor<1x4x4x8xi8> -> tensor<1x4x4x8xf32>",
        X_I8,
        lambda x: (x.astype(np.float32) + 1) * 0.5,
    ),
    (
        "relay.cast %x : tensor<1x4x4x5xi32> -> tensor<1x4x4x5xi8>",
        X_I32,
        lambda x: x.astype(np.int8),
    ),
]


@pytest.mark.parametrize(("op", "x", "reference"), OP_CASES)
def test_unary_op_properties(op: str, x: np.ndarray, reference) -> None:  # noqa: ANN001
    in_type = op.rsplit(":", 1)[1].split("->")[0].strip()
    out_type = op.rsplit("->", 1)[1].strip()
    module = parse(
        f"""
func.func @main(%x: {in_type}) -> {out_type} {{
  %0 = {op}
  func.return %0 : {out_type}
}}
"""
    )
    (got,) = evaluate(module, [x])
    want = reference(x)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


def test_conv2d_properties_and_layouts() -> None:
    module = parse(
        """
func.func @main(%x: tensor<1x4x7x7xi8>, %w: tensor<8x1x3x3xi8>) -> tensor<1x8x3x3xi32> {
  %0 = relay.conv2d %x, %w {strides = array<i64: 2, 2>, padding = array<i64: 0, 1, 1, 2>, dilation = array<i64: 1, 2>, groups = 4 : i64, data_layout = #relay<data_layout NCHW>, kernel_layout = #relay<kernel_layout OIHW>, input_zero_point = -3 : i64, kernel_zero_point = 2 : i64} : (tensor<1x4x7x7xi8>, tensor<8x1x3x3xi8>) -> tensor<1x8x3x3xi32>
  func.return %0 : tensor<1x8x3x3xi32>
}
"""
    )
    rng = np.random.default_rng(7)
    x = rng.integers(-128, 128, (1, 4, 7, 7), dtype=np.int8)
    w = rng.integers(-128, 128, (8, 1, 3, 3), dtype=np.int8)
    (got,) = evaluate(module, [x, w])
    want = K.conv2d(
        x.transpose(0, 2, 3, 1),
        w.transpose(2, 3, 1, 0),
        strides=(2, 2),
        padding=(0, 1, 1, 2),
        dilation=(1, 2),
        groups=4,
        input_zero_point=-3,
        kernel_zero_point=2,
    ).transpose(0, 3, 1, 2)
    np.testing.assert_array_equal(got, want)


def test_binary_ops_and_concatenate() -> None:
    module = parse(
        """
func.func @main(%a: tensor<2x3xi32>, %b: tensor<3xi32>, %s: tensor<1xi32>) -> (tensor<2x3xi32>, tensor<2x3xi32>, tensor<2x3xi32>, tensor<2x3xi32>, tensor<2x3xi32>, tensor<2x3xi32>, tensor<3x3xi32>) {
  %0 = relay.add %a, %b : (tensor<2x3xi32>, tensor<3xi32>) -> tensor<2x3xi32>
  %1 = relay.subtract %a, %b : (tensor<2x3xi32>, tensor<3xi32>) -> tensor<2x3xi32>
  %2 = relay.multiply %a, %b : (tensor<2x3xi32>, tensor<3xi32>) -> tensor<2x3xi32>
  %3 = relay.maximum %a, %b : (tensor<2x3xi32>, tensor<3xi32>) -> tensor<2x3xi32>
  %4 = relay.minimum %a, %b : (tensor<2x3xi32>, tensor<3xi32>) -> tensor<2x3xi32>
  %5 = relay.right_shift %a, %s : (tensor<2x3xi32>, tensor<1xi32>) -> tensor<2x3xi32>
  %r = relay.reshape %b : tensor<3xi32> -> tensor<1x3xi32>
  %6 = relay.concatenate %r, %a {axis = 0 : i64} : (tensor<1x3xi32>, tensor<2x3xi32>) -> tensor<3x3xi32>
  func.return %0, %1, %2, %3, %4, %5, %6 : tensor<2x3xi32>, tensor<2x3xi32>, tensor<2x3xi32>, tensor<2x3xi32>, tensor<2x3xi32>, tensor<2x3xi32>, tensor<3x3xi32>
}
"""
    )
    a = np.array([[1, -8, 2**31 - 1], [4, 5, -6]], dtype=np.int32)
    b = np.array([2, 3, 1], dtype=np.int32)
    s = np.array([1], dtype=np.int32)
    r = evaluate(module, [a, b, s])
    np.testing.assert_array_equal(r[0], [[3, -5, -(2**31)], [6, 8, -5]])
    np.testing.assert_array_equal(r[1], [[-1, -11, 2**31 - 2], [2, 2, -7]])
    np.testing.assert_array_equal(r[2], [[2, -24, 2**31 - 1], [8, 15, -6]])
    np.testing.assert_array_equal(r[3], [[2, 3, 2**31 - 1], [4, 5, 1]])
    np.testing.assert_array_equal(r[4], [[1, -8, 1], [2, 3, -6]])
    np.testing.assert_array_equal(r[5], [[0, -4, 2**30 - 1], [2, 2, -3]])
    np.testing.assert_array_equal(r[6], [[2, 3, 1], [1, -8, 2**31 - 1], [4, 5, -6]])


def test_divide_is_float_division_in_f32() -> None:
    module = parse(
        """
func.func @main(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<2x3xf32> {
  %0 = relay.divide %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}
"""
    )
    a = np.array([[1, -8, 0.1], [4, 5, -6]], dtype=np.float32)
    b = np.array([3, 0.7, -7], dtype=np.float32)
    (got,) = evaluate(module, [a, b])
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, a / b)


def test_generic_syntax() -> None:
    module = parse(
        """
func.func @main(%x: tensor<1x3x3x1xi8>, %w: tensor<2x2x1x1xi8>) -> tensor<1x3x3x1xi32> {
  %0 = "relay.conv2d"(%x, %w) <{padding = array<i64: 1, 1, 0, 0>, input_zero_point = 1 : i64}> : (tensor<1x3x3x1xi8>, tensor<2x2x1x1xi8>) -> tensor<1x3x3x1xi32>
  func.return %0 : tensor<1x3x3x1xi32>
}
"""
    )
    x = np.arange(1, 10, dtype=np.int8).reshape(1, 3, 3, 1)
    (got,) = evaluate(module, [x, np.ones((2, 2, 1, 1), dtype=np.int8)])
    np.testing.assert_array_equal(got[0, :, :, 0], [[0, 1, 3], [3, 8, 12], [9, 20, 24]])


# ---------------------------------------------------------------- inputs


def test_input_names_and_conversion() -> None:
    module = parse(
        """
func.func @main(%a: tensor<2xi8>, %b: tensor<2xi8>) -> tensor<2xi8> attributes {relay.input_tensor_names = ["input_1", "input_2"]} {
  %0 = relay.subtract %a, %b : (tensor<2xi8>, tensor<2xi8>) -> tensor<2xi8>
  func.return %0 : tensor<2xi8>
}
"""
    )
    main = next(iter(module.ops))
    assert input_names(main) == ["input_1", "input_2"]  # type: ignore[arg-type]
    # Python ints convert when they fit
    (r,) = evaluate(module, {"input_2": [1, 2], "input_1": [5, -128]})
    np.testing.assert_array_equal(r, [4, 126])
    with pytest.raises(LocatedError, match=r"missing \['input_2'\]"):
        evaluate(module, {"input_1": [1, 2]})
    with pytest.raises(LocatedError, match="do not fit"):
        evaluate(module, [[1, 300], [0, 0]])
    with pytest.raises(LocatedError, match=r"shape \(3,\)"):
        evaluate(module, [[1, 2, 3], [0, 0]])
    with pytest.raises(LocatedError, match="takes 2 inputs, got 1"):
        evaluate(module, [[1, 2]])
    with pytest.raises(LocatedError, match="no function @nope"):
        evaluate(module, [[1, 2], [1, 2]], entry="nope")


# ---------------------------------------------------------------- errors


def test_unknown_op_is_located() -> None:
    module = parse(
        """func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = "relay.frobnicate"(%x) : (tensor<2xf32>) -> tensor<2xf32>
  func.return %0 : tensor<2xf32>
}
"""
    )
    with pytest.raises(LocatedError) as info:
        evaluate(module, [np.zeros(2, np.float32)])
    assert str(info.value).startswith("test.mlir:2:")
    assert "no semantics for 'relay.frobnicate'" in str(info.value)


def test_kernel_errors_are_located() -> None:
    module = parse(
        """func.func @main(%x: tensor<2xi32>, %s: tensor<2xi32>) -> tensor<2xi32> {
  %0 = relay.right_shift %x, %s : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi32>
  func.return %0 : tensor<2xi32>
}
"""
    )
    # a constant shift out of range is a verifier error; one that arrives as an
    # input is the kernel's, located at the op
    with pytest.raises(
        LocatedError, match=r"test.mlir:2:.*'relay.right_shift'.*\[0, 31\]"
    ):
        evaluate(module, [np.zeros(2, np.int32), np.full(2, 40, np.int32)])


def test_result_type_mismatch_is_located() -> None:
    # not verified: the op claims an element type its semantics cannot give
    module = parse(
        """func.func @main(%x: tensor<4xi8>) -> tensor<2x2xi32> {
  %0 = relay.reshape %x : tensor<4xi8> -> tensor<2x2xi32>
  func.return %0 : tensor<2x2xi32>
}
""",
        verify=False,
    )
    with pytest.raises(
        LocatedError, match=r"test.mlir:2:.*dtype int8.*tensor<2x2xi32>"
    ):
        evaluate(module, [np.zeros(4, np.int8)])


def test_missing_resource_blob_and_bad_callee() -> None:
    module = parse(
        """func.func private @ext(tensor<2xi8>) -> tensor<2xi8>
func.func @main(%x: tensor<2xi8>) -> tensor<2xi8> {
  %c = relay.constant dense_resource<oracle_test_no_blob> : tensor<2xi8>
  func.return %c : tensor<2xi8>
}
func.func @calls_decl(%x: tensor<2xi8>) -> tensor<2xi8> {
  %0 = relay.call @ext(%x) : (tensor<2xi8>) -> tensor<2xi8>
  func.return %0 : tensor<2xi8>
}
"""
    )
    x = np.zeros(2, np.int8)
    with pytest.raises(
        LocatedError, match=r"test.mlir:3:.*oracle_test_no_blob.*resources="
    ):
        evaluate(module, [x])
    with pytest.raises(LocatedError, match=r"test.mlir:7:.*@ext is a declaration"):
        evaluate(module, [x], entry="calls_decl")
