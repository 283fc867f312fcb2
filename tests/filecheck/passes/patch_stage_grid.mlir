// RUN: usmp-opt %s -p 'patch-stage{depth=2 stripes=2}' | FileCheck %s --check-prefix=GRID
// RUN: usmp-opt %s -p 'patch-stage{depth=2 stripes=2},fuse-ops' | FileCheck %s --check-prefix=FUSED

// The CNN of patch_stage.mlir with a given grid.

// depth=2 stripes=2: the first two layers in two stripes of 4 rows of the depthwise
// output. Stripe 0 reads input rows 0..10 (the receptive field of rows 0..4
// of the first conv), pads the first conv only on the right (its bottom
// padding row is inside the input now) and the depthwise conv at the top;
// stripe 1 reads rows 6..15 and keeps the bottom padding.
// GRID-LABEL: func.func @cnn(
// GRID-SAME:  depth = 2 : i64, layers = 4 : i64, grid = [2 : i64, 1 : i64], stripe_rows = [4 : i64, 4 : i64]
// GRID:       %[[S0:.*]] = relay.strided_slice %x {begin = array<i64: 0, 0, 0, 0>, end = array<i64: 1, 11, 16, 3>, strides = array<i64: 1, 1, 1, 1>} : tensor<1x16x16x3xi8> -> tensor<1x11x16x3xi8>
// GRID-NEXT:  %[[C0:.*]] = relay.conv2d %[[S0]], %w0 {strides = array<i64: 2, 2>, padding = array<i64: 0, 0, 0, 1>, {{.*}}} : (tensor<1x11x16x3xi8>, tensor<8x3x3x3xi8>) -> tensor<1x5x8x8xi32>
// GRID:       %[[R0:.*]] = relay.cast {{.*}} : tensor<1x5x8x8xi32> -> tensor<1x5x8x8xi8>
// GRID-NEXT:  relay.conv2d %[[R0]], %w1 {padding = array<i64: 1, 1, 0, 1>, groups = 8 : i64, {{.*}}} : (tensor<1x5x8x8xi8>, tensor<3x3x1x8xi8>) -> tensor<1x4x8x8xi32>
// GRID:       %[[Y0:.*]] = relay.cast {{.*}} -> tensor<1x4x8x8xi8>
// GRID-NEXT:  %[[S1:.*]] = relay.strided_slice %x {begin = array<i64: 0, 6, 0, 0>, end = array<i64: 1, 16, 16, 3>, strides = array<i64: 1, 1, 1, 1>} : tensor<1x16x16x3xi8> -> tensor<1x10x16x3xi8>
// GRID-NEXT:  relay.conv2d %[[S1]], %w0 {strides = array<i64: 2, 2>, padding = array<i64: 0, 0, 1, 1>, {{.*}}} : (tensor<1x10x16x3xi8>, tensor<8x3x3x3xi8>) -> tensor<1x5x8x8xi32>
// GRID:       relay.conv2d {{.*}}, %w1 {padding = array<i64: 0, 1, 1, 1>, groups = 8 : i64, {{.*}}} : (tensor<1x5x8x8xi8>, tensor<3x3x1x8xi8>) -> tensor<1x4x8x8xi32>
// GRID:       %[[Y1:.*]] = relay.cast {{.*}} -> tensor<1x4x8x8xi8>
// GRID-NEXT:  %[[J:.*]] = relay.concatenate %[[Y0]], %[[Y1]] {axis = 1 : i64} : (tensor<1x4x8x8xi8>, tensor<1x4x8x8xi8>) -> tensor<1x8x8x8xi8>
// GRID:       relay.conv2d %[[J]], %w2

// Through fuse-ops: one kernel per stripe and layer, the concatenation its
// own kernel; a stripe of rows is one contiguous block of the input, so its
// slice stays in main as a view (aot-lower-main aliases it: no copy).
// FUSED-LABEL: func.func @cnn(
// FUSED:       %[[A:.*]] = relay.strided_slice %x {begin = array<i64: 0, 0, 0, 0>, end = array<i64: 1, 11, 16, 3>, strides = array<i64: 1, 1, 1, 1>} : tensor<1x16x16x3xi8> -> tensor<1x11x16x3xi8>
// FUSED-NEXT:  %[[B:.*]] = relay.call @tvmgen_default_fused_nn_conv2d_add_fixed_point_multiply_add_clip_cast(%[[A]], %b0) : (tensor<1x11x16x3xi8>, tensor<8xi32>) -> tensor<1x5x8x8xi8>
// FUSED-NEXT:  %[[C:.*]] = relay.call @tvmgen_default_fused_nn_conv2d_fixed_point_multiply_add_clip_cast(%[[B]]) : (tensor<1x5x8x8xi8>) -> tensor<1x4x8x8xi8>
// FUSED-NEXT:  %[[D:.*]] = relay.strided_slice %x {begin = array<i64: 0, 6, 0, 0>, end = array<i64: 1, 16, 16, 3>, strides = array<i64: 1, 1, 1, 1>} : tensor<1x16x16x3xi8> -> tensor<1x10x16x3xi8>
// FUSED-NEXT:  %[[E:.*]] = relay.call @tvmgen_default_fused_nn_conv2d_add_fixed_point_multiply_add_clip_cast_1(%[[D]], %b0) : (tensor<1x10x16x3xi8>, tensor<8xi32>) -> tensor<1x5x8x8xi8>
// FUSED-NEXT:  %[[F:.*]] = relay.call @tvmgen_default_fused_nn_conv2d_fixed_point_multiply_add_clip_cast_1(%[[E]]) : (tensor<1x5x8x8xi8>) -> tensor<1x4x8x8xi8>
// FUSED-NEXT:  %{{.*}} = relay.call @tvmgen_default_fused_concatenate(%[[C]], %[[F]]) : (tensor<1x4x8x8xi8>, tensor<1x4x8x8xi8>) -> tensor<1x8x8x8xi8>

func.func @cnn(%x: tensor<1x16x16x3xi8>) -> tensor<1x4x4x16xi8> {
  %w0 = relay.constant dense<3> : tensor<8x3x3x3xi8>
  %b0 = relay.constant dense<[1, 2, 3, 4, 5, 6, 7, 8]> : tensor<8xi32>
  %zp = relay.constant dense<-128> : tensor<i32>
  %c0 = relay.conv2d %x, %w0 {strides = array<i64: 2, 2>, padding = array<i64: 0, 0, 1, 1>, kernel_layout = #relay<kernel_layout OHWI>, input_zero_point = -128 : i64} : (tensor<1x16x16x3xi8>, tensor<8x3x3x3xi8>) -> tensor<1x8x8x8xi32>
  %a0 = relay.add %c0, %b0 : (tensor<1x8x8x8xi32>, tensor<8xi32>) -> tensor<1x8x8x8xi32>
  %f0 = relay.fixed_point_multiply %a0 {multiplier = array<i32: 1073741824>, shift = array<i32: -7>} : tensor<1x8x8x8xi32> -> tensor<1x8x8x8xi32>
  %z0 = relay.add %f0, %zp : (tensor<1x8x8x8xi32>, tensor<i32>) -> tensor<1x8x8x8xi32>
  %k0 = relay.clip %z0 {a_min = -128.0 : f64, a_max = 127.0 : f64} : tensor<1x8x8x8xi32> -> tensor<1x8x8x8xi32>
  %r0 = relay.cast %k0 : tensor<1x8x8x8xi32> -> tensor<1x8x8x8xi8>
  %w1 = relay.constant dense<2> : tensor<3x3x1x8xi8>
  %c1 = relay.conv2d %r0, %w1 {padding = array<i64: 1, 1, 1, 1>, groups = 8 : i64, input_zero_point = -128 : i64} : (tensor<1x8x8x8xi8>, tensor<3x3x1x8xi8>) -> tensor<1x8x8x8xi32>
  %f1 = relay.fixed_point_multiply %c1 {multiplier = array<i32: 1073741824>, shift = array<i32: -5>} : tensor<1x8x8x8xi32> -> tensor<1x8x8x8xi32>
  %z1 = relay.add %f1, %zp : (tensor<1x8x8x8xi32>, tensor<i32>) -> tensor<1x8x8x8xi32>
  %k1 = relay.clip %z1 {a_min = -128.0 : f64, a_max = 127.0 : f64} : tensor<1x8x8x8xi32> -> tensor<1x8x8x8xi32>
  %r1 = relay.cast %k1 : tensor<1x8x8x8xi32> -> tensor<1x8x8x8xi8>
  %w2 = relay.constant dense<1> : tensor<16x1x1x8xi8>
  %c2 = relay.conv2d %r1, %w2 {kernel_layout = #relay<kernel_layout OHWI>, input_zero_point = -128 : i64} : (tensor<1x8x8x8xi8>, tensor<16x1x1x8xi8>) -> tensor<1x8x8x16xi32>
  %f2 = relay.fixed_point_multiply %c2 {multiplier = array<i32: 1073741824>, shift = array<i32: -4>} : tensor<1x8x8x16xi32> -> tensor<1x8x8x16xi32>
  %z2 = relay.add %f2, %zp : (tensor<1x8x8x16xi32>, tensor<i32>) -> tensor<1x8x8x16xi32>
  %k2 = relay.clip %z2 {a_min = -128.0 : f64, a_max = 127.0 : f64} : tensor<1x8x8x16xi32> -> tensor<1x8x8x16xi32>
  %r2 = relay.cast %k2 : tensor<1x8x8x16xi32> -> tensor<1x8x8x16xi8>
  %p = relay.max_pool2d %r2 {pool_size = array<i64: 2, 2>, strides = array<i64: 2, 2>} : tensor<1x8x8x16xi8> -> tensor<1x4x4x16xi8>
  func.return %p : tensor<1x4x4x16xi8>
}
