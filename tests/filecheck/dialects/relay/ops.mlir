// RUN: usmp-opt %s --split-input-file | usmp-opt --split-input-file | FileCheck %s
// RUN: usmp-opt %s --split-input-file --print-op-generic | usmp-opt --split-input-file | FileCheck %s

// Structural ops.

// CHECK-LABEL: func.func @constant
// CHECK: relay.constant dense<[1, -2]> : tensor<2xi8>
// CHECK: relay.constant dense<5.000000e-01> : tensor<2x2xf32>
// CHECK: relay.constant dense_resource<conv_w> : tensor<8x3x3x1xi8>
func.func @constant() -> tensor<2xi8> {
  %0 = relay.constant dense<[1, -2]> : tensor<2xi8>
  %1 = relay.constant dense<0.5> : tensor<2x2xf32>
  %2 = relay.constant dense_resource<conv_w> : tensor<8x3x3x1xi8>
  func.return %0 : tensor<2xi8>
}

// -----

// Hexadecimal literals of a float type are its bit patterns (MLIR's form for
// NaNs and infinities), and read back as such; of an integer type, values.
// CHECK-LABEL: func.func @hex_floats
// CHECK: relay.constant dense<[0x7fc00001, 0x7f800000, 1.000000e+00, 0xff800000]> : tensor<4xf32>
// CHECK: relay.constant dense<0x7ff0000000000000> : tensor<2xf64>
// CHECK: relay.constant dense<[1.000000e+00, 0x7e00]> : tensor<2xf16>
// CHECK: relay.constant dense<[16, -1]> : tensor<2xi8>
func.func @hex_floats() -> tensor<4xf32> {
  %0 = relay.constant dense<[0x7FC00001, 0x7F800000, 1.0, 0xFF800000]> : tensor<4xf32>
  %1 = relay.constant dense<0x7FF0000000000000> : tensor<2xf64>
  %2 = relay.constant dense<[0x3C00, 0x7E00]> : tensor<2xf16>
  %3 = relay.constant dense<[0x10, 0xFF]> : tensor<2xi8>
  func.return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @call_tuple
// CHECK: %[[C:.*]] = relay.call @fused(%{{.*}}, %{{.*}}) : (tensor<4xi8>, tensor<4xi8>) -> tensor<4xi8>
// CHECK: %[[T:.*]] = relay.tuple(%[[C]], %{{.*}}) : (tensor<4xi8>, tensor<2xf32>) -> tuple<tensor<4xi8>, tensor<2xf32>>
// CHECK: relay.tuple_get_item %[[T]][1] : tuple<tensor<4xi8>, tensor<2xf32>> -> tensor<2xf32>
// CHECK: relay.tuple() : () -> tuple<>
func.func @fused(%a: tensor<4xi8>, %b: tensor<4xi8>) -> tensor<4xi8> attributes {relay.primitive} {
  %0 = relay.add %a, %b : (tensor<4xi8>, tensor<4xi8>) -> tensor<4xi8>
  func.return %0 : tensor<4xi8>
}
func.func @call_tuple(%a: tensor<4xi8>, %f: tensor<2xf32>) -> tensor<2xf32> {
  %0 = relay.call @fused(%a, %a) : (tensor<4xi8>, tensor<4xi8>) -> tensor<4xi8>
  %1 = relay.tuple(%0, %f) : (tensor<4xi8>, tensor<2xf32>) -> tuple<tensor<4xi8>, tensor<2xf32>>
  %2 = relay.tuple_get_item %1[1] : tuple<tensor<4xi8>, tensor<2xf32>> -> tensor<2xf32>
  %3 = relay.tuple() : () -> tuple<>
  func.return %2 : tensor<2xf32>
}

// -----

// CHECK-LABEL: func.func @devices
// CHECK: relay.on_device %{{.*}} {virtual_device = #device.virtual_device<"cpu", 0, target = "c", scope = "global">, constrain_result = true} : tensor<4xf32>
// CHECK: relay.on_device %{{.*}} {virtual_device = #device.virtual_device<"npu", 1>, constrain_body = false} : tensor<4xf32>
// CHECK: relay.on_device %{{.*}} {virtual_device = #device.virtual_device<"npu">} : tensor<4xf32>
// CHECK: relay.device_copy %{{.*}} {src = #device.virtual_device<"cpu", 0, target = "c">, dst = #device.virtual_device<"npu", 0, scope = "sram">} : tensor<4xf32>
// CHECK: relay.device_copy %{{.*}} {src = #device.virtual_device<id = 1, target = "c">, dst = #device.virtual_device<>} : tensor<4xf32>
func.func @devices(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = relay.on_device %x {virtual_device = #device.virtual_device<"cpu", 0, target = "c", scope = "global">, constrain_result = true} : tensor<4xf32>
  %1 = relay.on_device %0 {virtual_device = #device.virtual_device<"npu", 1>, constrain_result = false, constrain_body = false} : tensor<4xf32>
  %p = relay.on_device %1 {virtual_device = #device.virtual_device<"npu">, constrain_body = true} : tensor<4xf32>
  %2 = relay.device_copy %p {src = #device.virtual_device<"cpu", 0, target = "c">, dst = #device.virtual_device<"npu", 0, scope = "sram">} : tensor<4xf32>
  %3 = relay.device_copy %2 {src = #device.virtual_device<id = 1, target = "c">, dst = #device.virtual_device<>} : tensor<4xf32>
  func.return %3 : tensor<4xf32>
}

// -----

// Convolution and dense. Properties equal to their default are not printed.

// CHECK-LABEL: func.func @conv2d
// CHECK: relay.conv2d %{{.*}}, %{{.*}} : (tensor<1x8x8x3xf32>, tensor<3x3x3x4xf32>) -> tensor<1x6x6x4xf32>
// CHECK: relay.conv2d %{{.*}}, %{{.*}} {strides = array<i64: 2, 2>, padding = array<i64: 0, 0, 1, 1>, input_zero_point = -128 : i64, kernel_zero_point = 1 : i64} : (tensor<1x8x8x3xi8>, tensor<3x3x3x4xi8>) -> tensor<1x4x4x4xi32>
// CHECK: relay.conv2d %{{.*}}, %{{.*}} {padding = array<i64: 2, 2, 2, 2>, dilation = array<i64: 2, 2>} : (tensor<1x8x8x3xf32>, tensor<3x3x3x4xf32>) -> tensor<1x8x8x4xf32>
// CHECK: relay.conv2d %{{.*}}, %{{.*}} {kernel_layout = #relay<kernel_layout OHWI>} : (tensor<1x8x8x3xf32>, tensor<4x1x1x3xf32>) -> tensor<1x8x8x4xf32>
// CHECK: relay.conv2d %{{.*}}, %{{.*}} {data_layout = #relay<data_layout NCHW>, kernel_layout = #relay<kernel_layout OIHW>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
func.func @conv2d(%x: tensor<1x8x8x3xf32>, %w: tensor<3x3x3x4xf32>, %q: tensor<1x8x8x3xi8>, %qw: tensor<3x3x3x4xi8>, %wo: tensor<4x1x1x3xf32>, %xc: tensor<1x3x8x8xf32>, %wc: tensor<4x3x3x3xf32>) {
  %0 = relay.conv2d %x, %w {strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilation = array<i64: 1, 1>, groups = 1 : i64, data_layout = #relay<data_layout NHWC>, kernel_layout = #relay<kernel_layout HWIO>, input_zero_point = 0 : i64, kernel_zero_point = 0 : i64} : (tensor<1x8x8x3xf32>, tensor<3x3x3x4xf32>) -> tensor<1x6x6x4xf32>
  %1 = relay.conv2d %q, %qw {strides = array<i64: 2, 2>, padding = array<i64: 0, 0, 1, 1>, input_zero_point = -128 : i64, kernel_zero_point = 1 : i64} : (tensor<1x8x8x3xi8>, tensor<3x3x3x4xi8>) -> tensor<1x4x4x4xi32>
  %2 = relay.conv2d %x, %w {padding = array<i64: 2, 2, 2, 2>, dilation = array<i64: 2, 2>} : (tensor<1x8x8x3xf32>, tensor<3x3x3x4xf32>) -> tensor<1x8x8x4xf32>
  %3 = relay.conv2d %x, %wo {kernel_layout = #relay<kernel_layout OHWI>} : (tensor<1x8x8x3xf32>, tensor<4x1x1x3xf32>) -> tensor<1x8x8x4xf32>
  %4 = relay.conv2d %xc, %wc {data_layout = #relay<data_layout NCHW>, kernel_layout = #relay<kernel_layout OIHW>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  func.return
}

// -----

// Depthwise (groups = Cin, channel multiplier 2) and grouped convolution.

// CHECK-LABEL: func.func @conv2d_groups
// CHECK: relay.conv2d %{{.*}}, %{{.*}} {padding = array<i64: 1, 1, 1, 1>, groups = 4 : i64} : (tensor<1x8x8x4xi8>, tensor<3x3x1x8xi8>) -> tensor<1x8x8x8xi32>
// CHECK: relay.conv2d %{{.*}}, %{{.*}} {groups = 2 : i64} : (tensor<1x8x8x4xi8>, tensor<1x1x2x6xi8>) -> tensor<1x8x8x6xi32>
func.func @conv2d_groups(%x: tensor<1x8x8x4xi8>, %dw: tensor<3x3x1x8xi8>, %gw: tensor<1x1x2x6xi8>) {
  %0 = relay.conv2d %x, %dw {padding = array<i64: 1, 1, 1, 1>, groups = 4 : i64} : (tensor<1x8x8x4xi8>, tensor<3x3x1x8xi8>) -> tensor<1x8x8x8xi32>
  %1 = relay.conv2d %x, %gw {groups = 2 : i64} : (tensor<1x8x8x4xi8>, tensor<1x1x2x6xi8>) -> tensor<1x8x8x6xi32>
  func.return
}

// -----

// CHECK-LABEL: func.func @dense
// CHECK: relay.dense %{{.*}}, %{{.*}} : (tensor<2x16xf32>, tensor<10x16xf32>) -> tensor<2x10xf32>
// CHECK: relay.dense %{{.*}}, %{{.*}} {input_zero_point = 5 : i64, kernel_zero_point = -3 : i64} : (tensor<1x16xi8>, tensor<10x16xi8>) -> tensor<1x10xi32>
func.func @dense(%x: tensor<2x16xf32>, %w: tensor<10x16xf32>, %q: tensor<1x16xi8>, %qw: tensor<10x16xi8>) {
  %0 = relay.dense %x, %w : (tensor<2x16xf32>, tensor<10x16xf32>) -> tensor<2x10xf32>
  %1 = relay.dense %q, %qw {input_zero_point = 5 : i64, kernel_zero_point = -3 : i64} : (tensor<1x16xi8>, tensor<10x16xi8>) -> tensor<1x10xi32>
  func.return
}

// -----

// Broadcasting binary operators.

// CHECK-LABEL: func.func @binary
// CHECK: relay.add %{{.*}}, %{{.*}} : (tensor<1x4x4x8xi32>, tensor<8xi32>) -> tensor<1x4x4x8xi32>
// CHECK: relay.subtract %{{.*}}, %{{.*}} : (tensor<8xi32>, tensor<1x4x4x8xi32>) -> tensor<1x4x4x8xi32>
// CHECK: relay.multiply %{{.*}}, %{{.*}} : (tensor<2x1xf32>, tensor<1x3xf32>) -> tensor<2x3xf32>
// CHECK: relay.maximum %{{.*}}, %{{.*}} : (tensor<ui8>, tensor<4xui8>) -> tensor<4xui8>
// CHECK: relay.minimum %{{.*}}, %{{.*}} : (tensor<4xi16>, tensor<4xi16>) -> tensor<4xi16>
// CHECK: relay.right_shift %{{.*}}, %{{.*}} : (tensor<1x4x4x8xi32>, tensor<1xi32>) -> tensor<1x4x4x8xi32>
// CHECK: relay.divide %{{.*}}, %{{.*}} : (tensor<2x1xf32>, tensor<1x3xf32>) -> tensor<2x3xf32>
func.func @binary(%a: tensor<1x4x4x8xi32>, %b: tensor<8xi32>, %c: tensor<2x1xf32>, %d: tensor<1x3xf32>, %e: tensor<ui8>, %f: tensor<4xui8>, %g: tensor<4xi16>, %s: tensor<1xi32>) {
  %0 = relay.add %a, %b : (tensor<1x4x4x8xi32>, tensor<8xi32>) -> tensor<1x4x4x8xi32>
  %1 = relay.subtract %b, %a : (tensor<8xi32>, tensor<1x4x4x8xi32>) -> tensor<1x4x4x8xi32>
  %2 = relay.multiply %c, %d : (tensor<2x1xf32>, tensor<1x3xf32>) -> tensor<2x3xf32>
  %3 = relay.maximum %e, %f : (tensor<ui8>, tensor<4xui8>) -> tensor<4xui8>
  %4 = relay.minimum %g, %g : (tensor<4xi16>, tensor<4xi16>) -> tensor<4xi16>
  %5 = relay.right_shift %a, %s : (tensor<1x4x4x8xi32>, tensor<1xi32>) -> tensor<1x4x4x8xi32>
  %6 = relay.divide %c, %d : (tensor<2x1xf32>, tensor<1x3xf32>) -> tensor<2x3xf32>
  func.return
}

// -----

// CHECK-LABEL: func.func @unary
// CHECK: relay.clip %{{.*}} {a_min = -1.280000e+02 : f64, a_max = 1.270000e+02 : f64} : tensor<1x8xi32> -> tensor<1x8xi32>
// CHECK: relay.relu %{{.*}} : tensor<1x8xf32> -> tensor<1x8xf32>
// CHECK: relay.softmax %{{.*}} : tensor<1x8xf32> -> tensor<1x8xf32>
// CHECK: relay.softmax %{{.*}} {axis = 0 : i64} : tensor<1x8xf32> -> tensor<1x8xf32>
// CHECK: relay.cast %{{.*}} : tensor<1x8xi32> -> tensor<1x8xi8>
// CHECK: relay.cast %{{.*}} : tensor<1x8xf32> -> tensor<1x8xi32>
func.func @unary(%x: tensor<1x8xi32>, %f: tensor<1x8xf32>) {
  %0 = relay.clip %x {a_min = -128.0 : f64, a_max = 127.0 : f64} : tensor<1x8xi32> -> tensor<1x8xi32>
  %1 = relay.relu %f : tensor<1x8xf32> -> tensor<1x8xf32>
  %2 = relay.softmax %f {axis = -1 : i64} : tensor<1x8xf32> -> tensor<1x8xf32>
  %3 = relay.softmax %f {axis = 0 : i64} : tensor<1x8xf32> -> tensor<1x8xf32>
  %4 = relay.cast %x : tensor<1x8xi32> -> tensor<1x8xi8>
  %5 = relay.cast %f : tensor<1x8xf32> -> tensor<1x8xi32>
  func.return
}

// -----

// Pooling and reductions.

// CHECK-LABEL: func.func @pool
// CHECK: relay.max_pool2d %{{.*}} {pool_size = array<i64: 2, 2>, strides = array<i64: 2, 2>} : tensor<1x8x8x4xi8> -> tensor<1x4x4x4xi8>
// CHECK: relay.max_pool2d %{{.*}} {pool_size = array<i64: 3, 3>, padding = array<i64: 1, 1, 1, 1>, layout = #relay<data_layout NCHW>} : tensor<1x4x8x8xf32> -> tensor<1x4x8x8xf32>
// CHECK: relay.avg_pool2d %{{.*}} {pool_size = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 0, 0, 1, 1>} : tensor<1x8x8x4xi8> -> tensor<1x4x4x4xi8>
// CHECK: relay.avg_pool2d %{{.*}} {pool_size = array<i64: 3, 3>, padding = array<i64: 1, 1, 1, 1>, count_include_pad = true} : tensor<1x8x8x4xi8> -> tensor<1x8x8x4xi8>
// CHECK: relay.global_avg_pool2d %{{.*}} : tensor<1x8x8x4xi8> -> tensor<1x1x1x4xi8>
// CHECK: relay.global_avg_pool2d %{{.*}} {layout = #relay<data_layout NCHW>} : tensor<1x4x8x8xf32> -> tensor<1x4x1x1xf32>
// CHECK: relay.mean %{{.*}} {axis = array<i64: 1, 2>} : tensor<1x8x8x4xi8> -> tensor<1x4xi8>
// CHECK: relay.mean %{{.*}} {axis = array<i64: -1>, keepdims = true} : tensor<1x4x8x8xf32> -> tensor<1x4x8x1xf32>
// CHECK: relay.sum %{{.*}} {axis = array<i64: 0, -1>} : tensor<1x8x8x4xi8> -> tensor<8x8xi8>
// CHECK: relay.sum %{{.*}} {axis = array<i64: 2>, keepdims = true} : tensor<1x4x8x8xf32> -> tensor<1x4x1x8xf32>
// CHECK: relay.argmax %{{.*}} {axis = -1 : i64} : tensor<1x8x8x4xi8> -> tensor<1x8x8xi32>
// CHECK: relay.argmin %{{.*}} {axis = 1 : i64} : tensor<1x4x8x8xf32> -> tensor<1x8x8xi32>
// CHECK: relay.max %{{.*}} {axis = array<i64: 3>} : tensor<1x8x8x4xi8> -> tensor<1x8x8xi8>
// CHECK: relay.min %{{.*}} {axis = array<i64: 1, 2>, keepdims = true} : tensor<1x4x8x8xf32> -> tensor<1x1x1x8xf32>
func.func @pool(%x: tensor<1x8x8x4xi8>, %c: tensor<1x4x8x8xf32>) {
  %0 = relay.max_pool2d %x {pool_size = array<i64: 2, 2>, strides = array<i64: 2, 2>} : tensor<1x8x8x4xi8> -> tensor<1x4x4x4xi8>
  %1 = relay.max_pool2d %c {pool_size = array<i64: 3, 3>, padding = array<i64: 1, 1, 1, 1>, layout = #relay<data_layout NCHW>} : tensor<1x4x8x8xf32> -> tensor<1x4x8x8xf32>
  %2 = relay.avg_pool2d %x {pool_size = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 0, 0, 1, 1>, count_include_pad = false} : tensor<1x8x8x4xi8> -> tensor<1x4x4x4xi8>
  %3 = relay.avg_pool2d %x {pool_size = array<i64: 3, 3>, padding = array<i64: 1, 1, 1, 1>, count_include_pad = true} : tensor<1x8x8x4xi8> -> tensor<1x8x8x4xi8>
  %4 = relay.global_avg_pool2d %x : tensor<1x8x8x4xi8> -> tensor<1x1x1x4xi8>
  %5 = relay.global_avg_pool2d %c {layout = #relay<data_layout NCHW>} : tensor<1x4x8x8xf32> -> tensor<1x4x1x1xf32>
  %6 = relay.mean %x {axis = array<i64: 1, 2>, keepdims = false} : tensor<1x8x8x4xi8> -> tensor<1x4xi8>
  %7 = relay.mean %c {axis = array<i64: -1>, keepdims = true} : tensor<1x4x8x8xf32> -> tensor<1x4x8x1xf32>
  %8 = relay.sum %x {axis = array<i64: 0, -1>, keepdims = false} : tensor<1x8x8x4xi8> -> tensor<8x8xi8>
  %9 = relay.sum %c {axis = array<i64: 2>, keepdims = true} : tensor<1x4x8x8xf32> -> tensor<1x4x1x8xf32>
  %12 = relay.argmax %x {axis = -1 : i64} : tensor<1x8x8x4xi8> -> tensor<1x8x8xi32>
  %13 = relay.argmin %c {axis = 1 : i64} : tensor<1x4x8x8xf32> -> tensor<1x8x8xi32>
  %10 = relay.max %x {axis = array<i64: 3>} : tensor<1x8x8x4xi8> -> tensor<1x8x8xi8>
  %11 = relay.min %c {axis = array<i64: 1, 2>, keepdims = true} : tensor<1x4x8x8xf32> -> tensor<1x1x1x8xf32>
  func.return
}

// -----

// Data movement.

// CHECK-LABEL: func.func @layout
// CHECK: relay.reshape %{{.*}} : tensor<1x1x1x64xi8> -> tensor<1x64xi8>
// CHECK: relay.transpose %{{.*}} {axes = array<i64: 0, 3, 1, 2>} : tensor<1x1x1x64xi8> -> tensor<1x64x1x1xi8>
// CHECK: relay.pad %{{.*}} {pad_width = array<i64: 0, 0, 1, 2, 0, 0, 3, 0>} : tensor<1x1x1x64xi8> -> tensor<1x4x1x67xi8>
// CHECK: relay.pad %{{.*}} {pad_width = array<i64: 0, 0, 1, 1>, pad_value = -1.280000e+02 : f64} : tensor<1x64xi8> -> tensor<1x66xi8>
// CHECK: relay.concatenate %{{.*}}, %{{.*}} {axis = -1 : i64} : (tensor<1x64xi8>, tensor<1x66xi8>) -> tensor<1x130xi8>
// CHECK: relay.concatenate %{{.*}} {axis = 0 : i64} : (tensor<1x64xi8>) -> tensor<1x64xi8>
// CHECK: relay.broadcast_to %{{.*}} : tensor<1x64xi8> -> tensor<3x2x64xi8>
// CHECK: relay.strided_slice %{{.*}} {begin = array<i64: 0, 63>, end = array<i64: 1, -1>, strides = array<i64: 1, -3>} : tensor<1x64xi8> -> tensor<1x22xi8>
func.func @layout(%x: tensor<1x1x1x64xi8>) {
  %0 = relay.reshape %x : tensor<1x1x1x64xi8> -> tensor<1x64xi8>
  %1 = relay.transpose %x {axes = array<i64: 0, 3, 1, 2>} : tensor<1x1x1x64xi8> -> tensor<1x64x1x1xi8>
  %2 = relay.pad %x {pad_width = array<i64: 0, 0, 1, 2, 0, 0, 3, 0>, pad_value = 0.0 : f64} : tensor<1x1x1x64xi8> -> tensor<1x4x1x67xi8>
  %3 = relay.pad %0 {pad_width = array<i64: 0, 0, 1, 1>, pad_value = -128.0 : f64} : tensor<1x64xi8> -> tensor<1x66xi8>
  %4 = relay.concatenate %0, %3 {axis = -1 : i64} : (tensor<1x64xi8>, tensor<1x66xi8>) -> tensor<1x130xi8>
  %5 = relay.concatenate %0 {axis = 0 : i64} : (tensor<1x64xi8>) -> tensor<1x64xi8>
  %7 = relay.broadcast_to %0 : tensor<1x64xi8> -> tensor<3x2x64xi8>
  %6 = relay.strided_slice %0 {begin = array<i64: 0, 63>, end = array<i64: 1, -1>, strides = array<i64: 1, -3>} : tensor<1x64xi8> -> tensor<1x22xi8>
  func.return
}

// -----

// 16x8: i16 data with i8 weights accumulate in i64; fixed_point_multiply
// takes the i64 sums to i32.

// CHECK-LABEL: func.func @conv_16x8
// CHECK: relay.conv2d %{{.*}}, %{{.*}} {kernel_layout = #relay<kernel_layout OHWI>} : (tensor<1x8x8x2xi16>, tensor<4x3x3x2xi8>) -> tensor<1x6x6x4xi64>
// CHECK: relay.dense %{{.*}}, %{{.*}} : (tensor<2x8xi16>, tensor<3x8xi8>) -> tensor<2x3xi64>
// CHECK: relay.fixed_point_multiply %{{.*}} {multiplier = array<i32: 1073741824>, shift = array<i32: 7>} : tensor<2x3xi64> -> tensor<2x3xi32>
func.func @conv_16x8(%x: tensor<1x8x8x2xi16>, %w: tensor<4x3x3x2xi8>, %d: tensor<2x8xi16>, %dw: tensor<3x8xi8>) {
  %0 = relay.conv2d %x, %w {kernel_layout = #relay<kernel_layout OHWI>} : (tensor<1x8x8x2xi16>, tensor<4x3x3x2xi8>) -> tensor<1x6x6x4xi64>
  %1 = relay.dense %d, %dw : (tensor<2x8xi16>, tensor<3x8xi8>) -> tensor<2x3xi64>
  %2 = relay.fixed_point_multiply %1 {multiplier = array<i32: 1073741824>, shift = array<i32: 7>} : tensor<2x3xi64> -> tensor<2x3xi32>
  func.return
}

// -----

// Requantization.

// CHECK-LABEL: func.func @quant
// CHECK: relay.fixed_point_multiply %{{.*}} {multiplier = array<i32: 1073741824>, shift = array<i32: -7>} : tensor<1x4x4x2xi32> -> tensor<1x4x4x2xi32>
// CHECK: relay.fixed_point_multiply %{{.*}} {multiplier = array<i32: 1073741824, 1395864371>, shift = array<i32: -7, 2>, axis = 3 : i64} : tensor<1x4x4x2xi32> -> tensor<1x4x4x2xi32>
// CHECK: relay.fixed_point_multiply %{{.*}} {multiplier = array<i32: 1, 2, 3, 4>, shift = array<i32: 0>, axis = 1 : i64} : tensor<1x4x4x2xi32> -> tensor<1x4x4x2xi32>
// CHECK: relay.quantize %{{.*}} {scale = 5.000000e-01 : f64, zero_point = -1 : i64} : tensor<1x4xf32> -> tensor<1x4xi8>
// CHECK: relay.quantize %{{.*}} {scale = 2.500000e-01 : f64, zero_point = 128 : i64} : tensor<1x4xf32> -> tensor<1x4xui8>
// CHECK: relay.dequantize %{{.*}} {scale = 5.000000e-01 : f64, zero_point = -1 : i64} : tensor<1x4xi8> -> tensor<1x4xf32>
// CHECK: relay.dequantize %{{.*}} {scale = 1.000000e-03 : f64, zero_point = 0 : i64} : tensor<1x4xi16> -> tensor<1x4xf32>
// CHECK: relay.quantize %{{.*}} {scale = -5.000000e-01 : f64, zero_point = 0 : i64} : tensor<1x4xf32> -> tensor<1x4xi8>
// CHECK: relay.dequantize %{{.*}} {scale = -5.000000e-01 : f64, zero_point = 0 : i64} : tensor<1x4xi8> -> tensor<1x4xf32>
// CHECK: relay.dequantize %{{.*}} {scale = 0.000000e+00 : f64, zero_point = 0 : i64} : tensor<1x4xi8> -> tensor<1x4xf32>
func.func @quant(%x: tensor<1x4x4x2xi32>, %f: tensor<1x4xf32>, %h: tensor<1x4xi16>) {
  %0 = relay.fixed_point_multiply %x {multiplier = array<i32: 1073741824>, shift = array<i32: -7>} : tensor<1x4x4x2xi32> -> tensor<1x4x4x2xi32>
  %1 = relay.fixed_point_multiply %x {multiplier = array<i32: 1073741824, 1395864371>, shift = array<i32: -7, 2>, axis = 3 : i64} : tensor<1x4x4x2xi32> -> tensor<1x4x4x2xi32>
  %2 = relay.fixed_point_multiply %x {multiplier = array<i32: 1, 2, 3, 4>, shift = array<i32: 0>, axis = 1 : i64} : tensor<1x4x4x2xi32> -> tensor<1x4x4x2xi32>
  %3 = relay.quantize %f {scale = 0.5 : f64, zero_point = -1 : i64} : tensor<1x4xf32> -> tensor<1x4xi8>
  %4 = relay.quantize %f {scale = 0.25 : f64, zero_point = 128 : i64} : tensor<1x4xf32> -> tensor<1x4xui8>
  %5 = relay.dequantize %3 {scale = 0.5 : f64, zero_point = -1 : i64} : tensor<1x4xi8> -> tensor<1x4xf32>
  %6 = relay.dequantize %h {scale = 0.001 : f64, zero_point = 0 : i64} : tensor<1x4xi16> -> tensor<1x4xf32>
  // any scale TFLite Micro computes with: a negative one; 0 where it multiplies
  %7 = relay.quantize %f {scale = -0.5 : f64, zero_point = 0 : i64} : tensor<1x4xf32> -> tensor<1x4xi8>
  %8 = relay.dequantize %7 {scale = -0.5 : f64, zero_point = 0 : i64} : tensor<1x4xi8> -> tensor<1x4xf32>
  %9 = relay.dequantize %7 {scale = 0.0 : f64, zero_point = 0 : i64} : tensor<1x4xi8> -> tensor<1x4xf32>
  func.return
}

// -----

// Data-dependent indexing (dialects/relay_image_ops.py).

// CHECK-LABEL: func.func @image(
// CHECK: relay.gather %{{.*}}, %{{.*}} {axis = 1 : i64} : (tensor<2x5x3xi8>, tensor<4xi32>) -> tensor<2x4x3xi8>
// CHECK: relay.gather %{{.*}}, %{{.*}} {axis = -1 : i64, batch_dims = 1 : i64} : (tensor<2x5x3xi8>, tensor<2x4xi32>) -> tensor<2x5x4xi8>
// CHECK: relay.resize_bilinear %{{.*}} {align_corners = true} : tensor<1x2x5x3xi8> -> tensor<1x4x4x3xi8>
func.func @image(%x: tensor<2x5x3xi8>, %i: tensor<4xi32>, %j: tensor<2x4xi32>, %y: tensor<1x2x5x3xi8>) {
  %0 = relay.gather %x, %i {axis = 1 : i64} : (tensor<2x5x3xi8>, tensor<4xi32>) -> tensor<2x4x3xi8>
  %1 = relay.gather %x, %j {axis = -1 : i64, batch_dims = 1 : i64} : (tensor<2x5x3xi8>, tensor<2x4xi32>) -> tensor<2x5x4xi8>
  %2 = relay.resize_bilinear %y {align_corners = true} : tensor<1x2x5x3xi8> -> tensor<1x4x4x3xi8>
  func.return
}

// -----

// A stateful recurrent operator (dialects/relay_lstm.py).

// CHECK-LABEL: func.func @lstm(
// CHECK: relay.lstm(%{{.*}}) {time_major = true, cell_clip = 2.500000e+00 : f64} : (tensor<3x1x2xf32>, {{.*}}, tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<3x1x4xf32>
func.func @lstm(%x: tensor<3x1x2xf32>, %w: tensor<4x2xf32>, %r: tensor<4x4xf32>, %b: tensor<4xf32>, %h: tensor<1x4xf32>, %c: tensor<1x4xf32>) {
  %0 = relay.lstm(%x, %w, %w, %w, %w, %r, %r, %r, %r, %b, %b, %b, %b, %h, %c) {time_major = true, cell_clip = 2.5 : f64} : (tensor<3x1x2xf32>, tensor<4x2xf32>, tensor<4x2xf32>, tensor<4x2xf32>, tensor<4x2xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<3x1x4xf32>
  // CHECK: relay.lstm(%{{.*}}) {time_major = true, cell_activation = #relay<cell_activation sigmoid>}
  %1 = relay.lstm(%x, %w, %w, %w, %w, %r, %r, %r, %r, %b, %b, %b, %b, %h, %c) {time_major = true, cell_activation = #relay<cell_activation sigmoid>} : (tensor<3x1x2xf32>, tensor<4x2xf32>, tensor<4x2xf32>, tensor<4x2xf32>, tensor<4x2xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<3x1x4xf32>
  func.return
}

// -----

// CHECK-LABEL: func.func @svdf
// CHECK: relay.svdf %{{.*}} {activation = #relay<fused_activation RELU6>}
func.func @svdf(%x: tensor<1x3xf32>, %wf: tensor<4x3xf32>, %wt: tensor<4x2xf32>, %b: tensor<4xf32>, %s: tensor<1x8xf32>) {
  %0 = relay.svdf %x, %wf, %wt, %b, %s {activation = #relay<fused_activation RELU6>} : (tensor<1x3xf32>, tensor<4x3xf32>, tensor<4x2xf32>, tensor<4xf32>, tensor<1x8xf32>) -> tensor<1x4xf32>
  func.return
}

// -----

// CHECK-LABEL: func.func @conv2d_transpose
// CHECK: relay.conv2d_transpose %{{.*}}, %{{.*}} {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 0, 0>} : (tensor<1x4x4x8xi8>, tensor<3x3x3x8xi8>) -> tensor<1x8x8x3xi32>
// CHECK: relay.conv2d_transpose %{{.*}}, %{{.*}} {output_padding = array<i64: 1, 0>} : (tensor<1x4x4x8xf32>, tensor<3x1x1x8xf32>) -> tensor<1x5x4x3xf32>
func.func @conv2d_transpose(%x: tensor<1x4x4x8xi8>, %w: tensor<3x3x3x8xi8>, %f: tensor<1x4x4x8xf32>, %g: tensor<3x1x1x8xf32>) {
  %0 = relay.conv2d_transpose %x, %w {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 0, 0>} : (tensor<1x4x4x8xi8>, tensor<3x3x3x8xi8>) -> tensor<1x8x8x3xi32>
  %1 = relay.conv2d_transpose %f, %g {output_padding = array<i64: 1, 0>} : (tensor<1x4x4x8xf32>, tensor<3x1x1x8xf32>) -> tensor<1x5x4x3xf32>
  func.return
}

// -----

// TFLite's integer LOGISTIC / TANH, int16 SOFTMAX and int8 L2_NORMALIZATION.

// CHECK-LABEL: func.func @tflite_activations
// CHECK: relay.table_lookup %{{.*}}, %{{.*}} : (tensor<1x4xi8>, tensor<256xi8>) -> tensor<1x4xi8>
// CHECK: relay.quantized_sigmoid %{{.*}} {input_multiplier = 0 : i64, input_left_shift = 0 : i64} : tensor<1x4xi16> -> tensor<1x4xi16>
// CHECK: relay.quantized_tanh %{{.*}} {input_multiplier = 16777 : i64, input_left_shift = 12 : i64} : tensor<1x4xi16> -> tensor<1x4xi16>
// CHECK: relay.quantized_softmax_i16 %{{.*}} {input_multiplier = 1717960704 : i64, input_left_shift = 1 : i64} : tensor<1x4xi16> -> tensor<1x4xi16>
// CHECK: relay.quantized_l2_normalize %{{.*}} {input_zero_point = -3 : i64} : tensor<1x4xi8> -> tensor<1x4xi8>
func.func @tflite_activations(%x: tensor<1x4xi8>, %t: tensor<256xi8>, %h: tensor<1x4xi16>) {
  %0 = relay.table_lookup %x, %t : (tensor<1x4xi8>, tensor<256xi8>) -> tensor<1x4xi8>
  %1 = relay.quantized_sigmoid %h {input_multiplier = 0 : i64, input_left_shift = 0 : i64} : tensor<1x4xi16> -> tensor<1x4xi16>
  %2 = relay.quantized_tanh %h {input_multiplier = 16777 : i64, input_left_shift = 12 : i64} : tensor<1x4xi16> -> tensor<1x4xi16>
  %3 = relay.quantized_softmax_i16 %h {input_multiplier = 1717960704 : i64, input_left_shift = 1 : i64} : tensor<1x4xi16> -> tensor<1x4xi16>
  %4 = relay.quantized_l2_normalize %x {input_zero_point = -3 : i64} : tensor<1x4xi8> -> tensor<1x4xi8>
  func.return
}

// -----

// Float functions.

// CHECK-LABEL: func.func @float_functions
// CHECK: relay.exp %{{.*}} : tensor<4xf32> -> tensor<4xf32>
// CHECK: relay.log %{{.*}} : tensor<4xf32> -> tensor<4xf32>
// CHECK: relay.sqrt %{{.*}} : tensor<4xf32> -> tensor<4xf32>
// CHECK: relay.rsqrt %{{.*}} : tensor<4xf32> -> tensor<4xf32>
func.func @float_functions(%x: tensor<4xf32>) {
  %0 = relay.exp %x : tensor<4xf32> -> tensor<4xf32>
  %1 = relay.log %x : tensor<4xf32> -> tensor<4xf32>
  %2 = relay.sqrt %x : tensor<4xf32> -> tensor<4xf32>
  %3 = relay.rsqrt %x : tensor<4xf32> -> tensor<4xf32>
  func.return
}

// -----

// Dynamic-range quantisation (hybrid operators) and the int8 DIV core.

// CHECK-LABEL: func.func @hybrid_and_divide
// CHECK: relay.dynamic_quantize %{{.*}} : tensor<2x8xf32> -> tensor<2x8xi8>
// CHECK: relay.dynamic_quantize_scale %{{.*}} {asymmetric = true} : tensor<2x8xf32> -> tensor<2x1xf32>
// CHECK: relay.dynamic_quantize_zero_point %{{.*}} {asymmetric = true} : tensor<2x8xf32> -> tensor<2x1xi32>
// CHECK: relay.quantized_divide %{{.*}}, %{{.*}} {output_multiplier = 1342177280 : i64, output_shift = 5 : i64} : (tensor<2x8xi32>, tensor<8xi32>) -> tensor<2x8xi32>
func.func @hybrid_and_divide(%x: tensor<2x8xf32>, %a: tensor<2x8xi32>, %b: tensor<8xi32>) {
  %0 = relay.dynamic_quantize %x : tensor<2x8xf32> -> tensor<2x8xi8>
  %1 = relay.dynamic_quantize_scale %x {asymmetric = true} : tensor<2x8xf32> -> tensor<2x1xf32>
  %2 = relay.dynamic_quantize_zero_point %x {asymmetric = true} : tensor<2x8xf32> -> tensor<2x1xi32>
  %3 = relay.quantized_divide %a, %b {output_multiplier = 1342177280 : i64, output_shift = 5 : i64} : (tensor<2x8xi32>, tensor<8xi32>) -> tensor<2x8xi32>
  func.return
}

// -----

// Resource variables: a read (a copy) and an assignment of a state.
// CHECK-LABEL: func.func @variables
// CHECK:         %[[S:.*]] = relay.state "v" dense<-3> : tensor<2x4xi8>
// CHECK-NEXT:    %{{.*}} = relay.read_state %[[S]] : tensor<2x4xi8>
// CHECK-NEXT:    relay.assign_state %[[S]], %x : tensor<2x4xi8>
func.func @variables(%x: tensor<2x4xi8>) -> tensor<2x4xi8> {
  %s = relay.state "v" dense<-3> : tensor<2x4xi8>
  %r = relay.read_state %s : tensor<2x4xi8>
  relay.assign_state %s, %x : tensor<2x4xi8>
  func.return %r : tensor<2x4xi8>
}

// -----

// CHECK-LABEL: func.func @relay_custom
// CHECK: relay.custom_call %{{.*}}, %{{.*}} {code = "Clip", function = "clip", header = "k/clip.h", quantization = [{}, {}, {}]} : (tensor<4xi8>, tensor<4xi8>) -> tensor<4xi8>
func.func @relay_custom(%a: tensor<4xi8>, %w: tensor<4xi8>) -> tensor<4xi8> {
  %0 = relay.custom_call %a, %w {code = "Clip", function = "clip", header = "k/clip.h", quantization = [{}, {}, {}]} : (tensor<4xi8>, tensor<4xi8>) -> tensor<4xi8>
  func.return %0 : tensor<4xi8>
}
