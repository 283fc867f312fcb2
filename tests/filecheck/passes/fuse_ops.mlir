// RUN: usmp-opt %s -p fuse-ops --split-input-file | FileCheck %s
// Idempotence: a second run changes nothing.
// RUN: usmp-opt %s -p fuse-ops,fuse-ops --split-input-file | FileCheck %s

// int8 conv2d and its requantisation epilogue: one group named after its ops.
// The scalar zero point is copied into the group (an immediate once
// lowered); weight and bias stay in main as relay.constant and are passed as
// call arguments.

// CHECK-LABEL: func.func @tvmgen_default_fused_nn_conv2d_add_fixed_point_multiply_add_clip_cast(
// CHECK-SAME:      %[[X:.*]]: tensor<1x8x8x3xi8>, %[[W:.*]]: tensor<3x3x3x8xi8>, %[[B:.*]]: tensor<8xi32>) -> tensor<1x4x4x8xi8>
// CHECK-SAME:      attributes {relay.primitive}
// CHECK-NEXT:    %[[ZP:.*]] = relay.constant dense<-3> : tensor<i32>
// CHECK-NEXT:    %[[C:.*]] = relay.conv2d %[[X]], %[[W]]
// CHECK-NEXT:    %[[A:.*]] = relay.add %[[C]], %[[B]]
// CHECK-NEXT:    %[[F:.*]] = relay.fixed_point_multiply %[[A]]
// CHECK-NEXT:    %[[Z:.*]] = relay.add %[[F]], %[[ZP]]
// CHECK-NEXT:    %[[K:.*]] = relay.clip %[[Z]]
// CHECK-NEXT:    %[[R:.*]] = relay.cast %[[K]]
// CHECK-NEXT:    func.return %[[R]] : tensor<1x4x4x8xi8>
// CHECK:       func.func @conv_requant(%[[IN:.*]]: tensor<1x8x8x3xi8>)
// CHECK-NEXT:    %[[MW:.*]] = relay.constant dense_resource<conv_w> : tensor<3x3x3x8xi8>
// CHECK-NEXT:    %[[MB:.*]] = relay.constant dense<[1, 2, 3, 4, 5, 6, 7, 8]> : tensor<8xi32>
// CHECK-NEXT:    %[[CALL:.*]] = relay.call @tvmgen_default_fused_nn_conv2d_add_fixed_point_multiply_add_clip_cast(%[[IN]], %[[MW]], %[[MB]])
// CHECK-NEXT:    func.return %[[CALL]]
func.func @conv_requant(%x: tensor<1x8x8x3xi8>) -> tensor<1x4x4x8xi8> {
  %w = relay.constant dense_resource<conv_w> : tensor<3x3x3x8xi8>
  %b = relay.constant dense<[1, 2, 3, 4, 5, 6, 7, 8]> : tensor<8xi32>
  %zp = relay.constant dense<-3> : tensor<i32>
  %0 = relay.conv2d %x, %w {strides = array<i64: 2, 2>, padding = array<i64: 0, 0, 1, 1>, input_zero_point = -128 : i64} : (tensor<1x8x8x3xi8>, tensor<3x3x3x8xi8>) -> tensor<1x4x4x8xi32>
  %1 = relay.add %0, %b : (tensor<1x4x4x8xi32>, tensor<8xi32>) -> tensor<1x4x4x8xi32>
  %2 = relay.fixed_point_multiply %1 {multiplier = array<i32: 1073741824>, shift = array<i32: -7>} : tensor<1x4x4x8xi32> -> tensor<1x4x4x8xi32>
  %3 = relay.add %2, %zp : (tensor<1x4x4x8xi32>, tensor<i32>) -> tensor<1x4x4x8xi32>
  %4 = relay.clip %3 {a_min = -128.0 : f64, a_max = 127.0 : f64} : tensor<1x4x4x8xi32> -> tensor<1x4x4x8xi32>
  %5 = relay.cast %4 : tensor<1x4x4x8xi32> -> tensor<1x4x4x8xi8>
  func.return %5 : tensor<1x4x4x8xi8>
}

// -----

// Equal groups get TVM's _1 suffix. A reshape between two anchors is left in
// main (aot-lower-main aliases it); reshapes followed by an elementwise op
// fuse with it (TVM: injective into elementwise post-dominator).

// CHECK-LABEL: func.func @tvmgen_default_fused_nn_dense_nn_relu(
// CHECK:       func.func @tvmgen_default_fused_nn_dense_nn_relu_1(
// CHECK:       func.func @tvmgen_default_fused_reshape_reshape_nn_relu(
// CHECK:       func.func @unique_names(
// CHECK:         %[[D0:.*]] = relay.call @tvmgen_default_fused_nn_dense_nn_relu(
// CHECK-NEXT:    %[[RS:.*]] = relay.reshape %[[D0]] : tensor<1x16xf32> -> tensor<4x4xf32>
// CHECK-NEXT:    %[[D1:.*]] = relay.call @tvmgen_default_fused_nn_dense_nn_relu_1(%[[RS]],
// CHECK-NEXT:    relay.call @tvmgen_default_fused_reshape_reshape_nn_relu(%[[D1]])
func.func @unique_names(%x: tensor<1x16xf32>) -> tensor<1x16xf32> {
  %w0 = relay.constant dense_resource<w0> : tensor<16x16xf32>
  %w1 = relay.constant dense_resource<w1> : tensor<4x4xf32>
  %0 = relay.dense %x, %w0 : (tensor<1x16xf32>, tensor<16x16xf32>) -> tensor<1x16xf32>
  %1 = relay.relu %0 : tensor<1x16xf32> -> tensor<1x16xf32>
  %2 = relay.reshape %1 : tensor<1x16xf32> -> tensor<4x4xf32>
  %3 = relay.dense %2, %w1 : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %4 = relay.relu %3 : tensor<4x4xf32> -> tensor<4x4xf32>
  %5 = relay.reshape %4 : tensor<4x4xf32> -> tensor<16xf32>
  %6 = relay.reshape %5 : tensor<16xf32> -> tensor<1x16xf32>
  %7 = relay.relu %6 : tensor<1x16xf32> -> tensor<1x16xf32>
  func.return %7 : tensor<1x16xf32>
}

// -----

// Slices between two anchors: a contiguous one (rows 1..2, then a reshape: a
// SPLIT piece along the outer axis) is a view, left in main with its reshape
// (aot-lower-main aliases them at an offset); a column slice is not one block
// in order and becomes a primitive function (a copy).

// CHECK-LABEL: func.func @tvmgen_default_fused_strided_slice(
// CHECK-NEXT:    relay.strided_slice %{{.*}} {begin = array<i64: 0, 1>
// CHECK:       func.func @slices(
// CHECK:         %[[D:.*]] = relay.call @tvmgen_default_fused_nn_dense(
// CHECK-NEXT:    %[[S:.*]] = relay.strided_slice %[[D]] {begin = array<i64: 1, 0>, end = array<i64: 3, 4>, strides = array<i64: 1, 1>} : tensor<4x4xf32> -> tensor<2x4xf32>
// CHECK-NEXT:    %[[R:.*]] = relay.reshape %[[S]] : tensor<2x4xf32> -> tensor<1x8xf32>
// CHECK-NEXT:    relay.call @tvmgen_default_fused_nn_dense_1(%[[R]],
// CHECK-NEXT:    %[[C:.*]] = relay.call @tvmgen_default_fused_strided_slice(%[[D]])
// CHECK-NEXT:    relay.call @tvmgen_default_fused_nn_dense_2(%[[C]],
func.func @slices(%x: tensor<4x4xf32>) -> (tensor<1x2xf32>, tensor<4x2xf32>) {
  %w0 = relay.constant dense_resource<w0> : tensor<4x4xf32>
  %w1 = relay.constant dense_resource<w1> : tensor<2x8xf32>
  %w2 = relay.constant dense_resource<w2> : tensor<2x2xf32>
  %0 = relay.dense %x, %w0 : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %1 = relay.strided_slice %0 {begin = array<i64: 1, 0>, end = array<i64: 3, 4>, strides = array<i64: 1, 1>} : tensor<4x4xf32> -> tensor<2x4xf32>
  %2 = relay.reshape %1 : tensor<2x4xf32> -> tensor<1x8xf32>
  %3 = relay.dense %2, %w1 : (tensor<1x8xf32>, tensor<2x8xf32>) -> tensor<1x2xf32>
  %4 = relay.strided_slice %0 {begin = array<i64: 0, 1>, end = array<i64: 4, 3>, strides = array<i64: 1, 1>} : tensor<4x4xf32> -> tensor<4x2xf32>
  %5 = relay.dense %4, %w2 : (tensor<4x2xf32>, tensor<2x2xf32>) -> tensor<4x2xf32>
  func.return %3, %5 : tensor<1x2xf32>, tensor<4x2xf32>
}

// -----

// A value that leaves main (here: also returned) ends its group: the conv2d
// result must exist, so the relu cannot be fused into it.

// CHECK-LABEL: func.func @tvmgen_default_fused_nn_conv2d(
// CHECK:       func.func @tvmgen_default_fused_nn_relu(
// CHECK:       func.func @returned_twice(
// CHECK:         %[[C:.*]] = relay.call @tvmgen_default_fused_nn_conv2d(
// CHECK-NEXT:    %[[R:.*]] = relay.call @tvmgen_default_fused_nn_relu(%[[C]])
// CHECK-NEXT:    func.return %[[C]], %[[R]]
func.func @returned_twice(%x: tensor<1x4x4x2xf32>) -> (tensor<1x4x4x2xf32>, tensor<1x4x4x2xf32>) {
  %w = relay.constant dense<1.0> : tensor<1x1x2x2xf32>
  %0 = relay.conv2d %x, %w : (tensor<1x4x4x2xf32>, tensor<1x1x2x2xf32>) -> tensor<1x4x4x2xf32>
  %1 = relay.relu %0 : tensor<1x4x4x2xf32> -> tensor<1x4x4x2xf32>
  func.return %0, %1 : tensor<1x4x4x2xf32>, tensor<1x4x4x2xf32>
}

// -----

// Injective ops fuse together, with the elementwise op before them.

// CHECK-LABEL: func.func @tvmgen_default_fused_add_transpose_reshape_nn_pad(
// CHECK-SAME:      %{{.*}}: tensor<2x3xi8>, %{{.*}}: tensor<3xi8>) -> tensor<8xi8>
// CHECK:       func.func @injective(
// CHECK-NEXT:    relay.call @tvmgen_default_fused_add_transpose_reshape_nn_pad(
// CHECK-NEXT:    func.return
func.func @injective(%x: tensor<2x3xi8>, %y: tensor<3xi8>) -> tensor<8xi8> {
  %0 = relay.add %x, %y : (tensor<2x3xi8>, tensor<3xi8>) -> tensor<2x3xi8>
  %1 = relay.transpose %0 {axes = array<i64: 1, 0>} : tensor<2x3xi8> -> tensor<3x2xi8>
  %2 = relay.reshape %1 : tensor<3x2xi8> -> tensor<6xi8>
  %3 = relay.pad %2 {pad_width = array<i64: 1, 1>, pad_value = -1.0 : f64} : tensor<6xi8> -> tensor<8xi8>
  func.return %3 : tensor<8xi8>
}

// -----

// Elementwise producers fuse into a concatenate.

// CHECK-LABEL: func.func @tvmgen_default_fused_maximum_nn_relu_concatenate(
// CHECK-SAME:      %{{.*}}: tensor<1x2xf32>, %{{.*}}: tensor<1x2xf32>, %{{.*}}: tensor<1x3xf32>) -> tensor<1x5xf32>
// CHECK:       func.func @concatenate(
// CHECK-NEXT:    relay.call @tvmgen_default_fused_maximum_nn_relu_concatenate(
// CHECK-NEXT:    func.return
func.func @concatenate(%a: tensor<1x2xf32>, %b: tensor<1x2xf32>, %c: tensor<1x3xf32>) -> tensor<1x5xf32> {
  %0 = relay.maximum %a, %b : (tensor<1x2xf32>, tensor<1x2xf32>) -> tensor<1x2xf32>
  %1 = relay.relu %c : tensor<1x3xf32> -> tensor<1x3xf32>
  %2 = relay.concatenate %0, %1 {axis = 1 : i64} : (tensor<1x2xf32>, tensor<1x3xf32>) -> tensor<1x5xf32>
  func.return %2 : tensor<1x5xf32>
}

// -----

// Reductions take an elementwise prologue and epilogue: an int8 softmax and an
// int8 mean are each one group, with no f32 / i32 tensor between groups.

// CHECK-LABEL: func.func @tvmgen_default_fused_qnn_dequantize_nn_softmax_qnn_quantize(
// CHECK-SAME:      %{{.*}}: tensor<1x10xi8>) -> tensor<1x10xi8>
// CHECK:       func.func @tvmgen_default_fused_cast_mean_fixed_point_multiply_cast(
// CHECK-SAME:      %{{.*}}: tensor<1x4x4x8xi8>) -> tensor<1x8xi8>
// CHECK:       func.func @reductions(
// CHECK-NEXT:    relay.call @tvmgen_default_fused_qnn_dequantize_nn_softmax_qnn_quantize(
// CHECK-NEXT:    relay.call @tvmgen_default_fused_cast_mean_fixed_point_multiply_cast(
// CHECK-NEXT:    func.return
func.func @reductions(%x: tensor<1x10xi8>, %y: tensor<1x4x4x8xi8>) -> (tensor<1x10xi8>, tensor<1x8xi8>) {
  %0 = relay.dequantize %x {scale = 0.5 : f64, zero_point = 3 : i64} : tensor<1x10xi8> -> tensor<1x10xf32>
  %1 = relay.softmax %0 : tensor<1x10xf32> -> tensor<1x10xf32>
  %2 = relay.quantize %1 {scale = 0.00390625 : f64, zero_point = -128 : i64} : tensor<1x10xf32> -> tensor<1x10xi8>
  %3 = relay.cast %y : tensor<1x4x4x8xi8> -> tensor<1x4x4x8xi32>
  %4 = relay.mean %3 {axis = array<i64: 1, 2>} : tensor<1x4x4x8xi32> -> tensor<1x8xi32>
  %5 = relay.fixed_point_multiply %4 {multiplier = array<i32: 1073741824>, shift = array<i32: 0>} : tensor<1x8xi32> -> tensor<1x8xi32>
  %6 = relay.cast %5 : tensor<1x8xi32> -> tensor<1x8xi8>
  func.return %2, %6 : tensor<1x10xi8>, tensor<1x8xi8>
}

// -----

// Opaque ops (on_device, calls, tuples) are never fused and bound groups;
// two anchors never share a group; a diamond below an anchor is one group.

// CHECK-LABEL: func.func @tvmgen_default_fused_nn_relu(
// CHECK:       func.func @tvmgen_default_fused_nn_conv2d_nn_relu_add(
// CHECK:       func.func @tvmgen_default_fused_nn_conv2d(
// CHECK:       func.func @opaque(
// CHECK-NEXT:    %[[W:.*]] = relay.constant
// CHECK-NEXT:    %[[R:.*]] = relay.call @tvmgen_default_fused_nn_relu(
// CHECK-NEXT:    %[[D:.*]] = relay.on_device %[[R]]
// CHECK-NEXT:    %[[C0:.*]] = relay.call @tvmgen_default_fused_nn_conv2d_nn_relu_add(%[[D]], %[[W]])
// CHECK-NEXT:    %[[C1:.*]] = relay.call @tvmgen_default_fused_nn_conv2d(%[[C0]], %[[W]])
// CHECK-NEXT:    %[[T:.*]] = relay.tuple(%[[C1]], %[[R]])
// CHECK-NEXT:    func.return %[[T]]
func.func @opaque(%x: tensor<1x4x4x2xf32>) -> tuple<tensor<1x4x4x2xf32>, tensor<1x4x4x2xf32>> {
  %w = relay.constant dense_resource<w> : tensor<1x1x2x2xf32>
  %0 = relay.relu %x : tensor<1x4x4x2xf32> -> tensor<1x4x4x2xf32>
  %1 = relay.on_device %0 {virtual_device = #device.virtual_device<"cpu", 0>} : tensor<1x4x4x2xf32>
  %2 = relay.conv2d %1, %w : (tensor<1x4x4x2xf32>, tensor<1x1x2x2xf32>) -> tensor<1x4x4x2xf32>
  %3 = relay.relu %2 : tensor<1x4x4x2xf32> -> tensor<1x4x4x2xf32>
  %4 = relay.add %3, %2 : (tensor<1x4x4x2xf32>, tensor<1x4x4x2xf32>) -> tensor<1x4x4x2xf32>
  %5 = relay.conv2d %4, %w : (tensor<1x4x4x2xf32>, tensor<1x1x2x2xf32>) -> tensor<1x4x4x2xf32>
  %6 = relay.tuple(%5, %0) : (tensor<1x4x4x2xf32>, tensor<1x4x4x2xf32>) -> tuple<tensor<1x4x4x2xf32>, tensor<1x4x4x2xf32>>
  func.return %6 : tuple<tensor<1x4x4x2xf32>, tensor<1x4x4x2xf32>>
}

// -----

// A join of two anchor chains (an int8 residual add): the chain that cannot
// join hands its widening cast to the join's group, so the tensor crossing
// groups is its i8 value, not the i32 one (TVM would materialise the i32).

// CHECK-LABEL: func.func @tvmgen_default_fused_nn_conv2d_cast(
// CHECK-SAME:      -> tensor<1x4x4x2xi8>
// CHECK:       func.func @tvmgen_default_fused_nn_conv2d_cast_cast_cast_add_cast(
// CHECK-SAME:      %{{.*}}: tensor<1x4x4x2xi8>, %{{.*}}: tensor<1x1x2x2xi8>, %[[NARROW:.*]]: tensor<1x4x4x2xi8>) -> tensor<1x4x4x2xi8>
// CHECK:         relay.cast %[[NARROW]] : tensor<1x4x4x2xi8> -> tensor<1x4x4x2xi32>
// CHECK:       func.func @residual(
// CHECK:         %[[B:.*]] = relay.call @tvmgen_default_fused_nn_conv2d_cast(
// CHECK-NEXT:    relay.call @tvmgen_default_fused_nn_conv2d_cast_cast_cast_add_cast(%{{.*}}, %{{.*}}, %[[B]])
func.func @residual(%x: tensor<1x4x4x2xi8>) -> tensor<1x4x4x2xi8> {
  %w = relay.constant dense_resource<w> : tensor<1x1x2x2xi8>
  %0 = relay.conv2d %x, %w : (tensor<1x4x4x2xi8>, tensor<1x1x2x2xi8>) -> tensor<1x4x4x2xi32>
  %1 = relay.cast %0 : tensor<1x4x4x2xi32> -> tensor<1x4x4x2xi8>
  %2 = relay.cast %1 : tensor<1x4x4x2xi8> -> tensor<1x4x4x2xi32>
  %3 = relay.conv2d %x, %w : (tensor<1x4x4x2xi8>, tensor<1x1x2x2xi8>) -> tensor<1x4x4x2xi32>
  %4 = relay.cast %3 : tensor<1x4x4x2xi32> -> tensor<1x4x4x2xi8>
  %5 = relay.cast %4 : tensor<1x4x4x2xi8> -> tensor<1x4x4x2xi32>
  %6 = relay.add %2, %5 : (tensor<1x4x4x2xi32>, tensor<1x4x4x2xi32>) -> tensor<1x4x4x2xi32>
  %7 = relay.cast %6 : tensor<1x4x4x2xi32> -> tensor<1x4x4x2xi8>
  func.return %7 : tensor<1x4x4x2xi8>
}

// -----

// A constant of equal elements (a splat bias) is copied into the group like
// a scalar, so it needs no buffer; the weight is passed.

// CHECK-LABEL: func.func @tvmgen_default_fused_nn_dense_add(
// CHECK-SAME:      %{{.*}}: tensor<1x4xf32>, %[[W:.*]]: tensor<3x4xf32>) -> tensor<1x3xf32>
// CHECK-NEXT:    %[[B:.*]] = relay.constant dense<5.000000e-01> : tensor<3xf32>
// CHECK:       func.func @splat(
// CHECK-NEXT:    %[[MW:.*]] = relay.constant dense<{{\[}}
// CHECK-NEXT:    relay.call @tvmgen_default_fused_nn_dense_add(%{{.*}}, %[[MW]])
func.func @splat(%x: tensor<1x4xf32>) -> tensor<1x3xf32> {
  %w = relay.constant dense<[[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0], [9.0, 10.0, 11.0, 12.0]]> : tensor<3x4xf32>
  %b = relay.constant dense<0.5> : tensor<3xf32>
  %0 = relay.dense %x, %w : (tensor<1x4xf32>, tensor<3x4xf32>) -> tensor<1x3xf32>
  %1 = relay.add %0, %b : (tensor<1x3xf32>, tensor<3xf32>) -> tensor<1x3xf32>
  func.return %1 : tensor<1x3xf32>
}

// -----

// Dead operators (no users, no side effects) are erased, not fused: a group
// of dead ops would have no output.

// CHECK-LABEL: func.func @tvmgen_default_fused_nn_relu(
// CHECK-NOT:     relay.add
// CHECK:       func.func @dead(
// CHECK-NEXT:    %[[R:.*]] = relay.call @tvmgen_default_fused_nn_relu(%{{.*}})
// CHECK-NEXT:    func.return %[[R]]
func.func @dead(%x: tensor<1x4xi8>) -> tensor<1x4xi8> {
  %0 = relay.relu %x : tensor<1x4xi8> -> tensor<1x4xi8>
  %1 = relay.add %0, %0 : (tensor<1x4xi8>, tensor<1x4xi8>) -> tensor<1x4xi8>
  %2 = relay.relu %x : tensor<1x4xi8> -> tensor<1x4xi8>
  func.return %2 : tensor<1x4xi8>
}

// -----

// relay.lstm is OPAQUE: outlined alone (with the splat constants it uses,
// here the start states), never fused with its producers or consumers.

// CHECK-LABEL: func.func @tvmgen_default_fused_add(
// CHECK:       func.func @tvmgen_default_fused_lstm(
// CHECK-NEXT:    relay.constant dense<0.000000e+00> : tensor<1x2xf32>
// CHECK-NEXT:    relay.lstm(
// CHECK-NEXT:    func.return
// CHECK:       func.func @tvmgen_default_fused_nn_relu(
// CHECK:       func.func @lstm(
// CHECK:         relay.call @tvmgen_default_fused_add(
// CHECK-NEXT:    relay.call @tvmgen_default_fused_lstm(
// CHECK-NEXT:    relay.call @tvmgen_default_fused_nn_relu(
func.func @lstm(%x: tensor<1x3x2xf32>, %w: tensor<2x2xf32>, %b: tensor<2xf32>) -> tensor<1x3x2xf32> {
  %z = relay.constant dense<0.0> : tensor<1x2xf32>
  %a = relay.add %x, %x : (tensor<1x3x2xf32>, tensor<1x3x2xf32>) -> tensor<1x3x2xf32>
  %0 = relay.lstm(%a, %w, %w, %w, %w, %w, %w, %w, %w, %b, %b, %b, %b, %z, %z) : (tensor<1x3x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<1x2xf32>, tensor<1x2xf32>) -> tensor<1x3x2xf32>
  %1 = relay.relu %0 : tensor<1x3x2xf32> -> tensor<1x3x2xf32>
  func.return %1 : tensor<1x3x2xf32>
}
