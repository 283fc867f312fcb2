// RUN: usmp-opt %s -p 'patch-stage{depth=2 stripes=2 cols=2}' | FileCheck %s --check-prefix=GRID
// RUN: usmp-opt %s -p 'patch-stage{depth=2 stripes=2 cols=2},fuse-ops' | FileCheck %s --check-prefix=FUSED

// The CNN of patch_stage_grid.mlir in a 2-D grid: the first two layers in
// 2x2 tiles of 4x4 pixels of the depthwise output. Each tile reads its
// receptive field of the input in rows and columns (tile (0, 1): input rows
// 0..10, columns 6..15), and each window pads only at the true borders of
// its input, in both dimensions: padding is (top, left, bottom, right).
// GRID-LABEL: func.func @cnn(
// GRID-SAME:  depth = 2 : i64, layers = 4 : i64, grid = [2 : i64, 2 : i64], stripe_rows = [4 : i64, 4 : i64], tile_cols = [4 : i64, 4 : i64]
// GRID-SAME:  instructions_before = [[BEFORE:[0-9]+]] : i64, instructions_after = [[AFTER:[0-9]+]] : i64
// GRID:       %[[S00:.*]] = relay.strided_slice %x {begin = array<i64: 0, 0, 0, 0>, end = array<i64: 1, 11, 11, 3>, strides = array<i64: 1, 1, 1, 1>} : tensor<1x16x16x3xi8> -> tensor<1x11x11x3xi8>
// GRID-NEXT:  relay.conv2d %[[S00]], %w0 {strides = array<i64: 2, 2>, kernel_layout = #relay<kernel_layout OHWI>, {{.*}}} : (tensor<1x11x11x3xi8>, tensor<8x3x3x3xi8>) -> tensor<1x5x5x8xi32>
// GRID:       relay.conv2d {{.*}}, %w1 {padding = array<i64: 1, 1, 0, 0>, groups = 8 : i64, {{.*}}} : (tensor<1x5x5x8xi8>, tensor<3x3x1x8xi8>) -> tensor<1x4x4x8xi32>
// GRID:       %[[T00:.*]] = relay.cast {{.*}} -> tensor<1x4x4x8xi8>
// GRID-NEXT:  %[[S01:.*]] = relay.strided_slice %x {begin = array<i64: 0, 0, 6, 0>, end = array<i64: 1, 11, 16, 3>, strides = array<i64: 1, 1, 1, 1>} : tensor<1x16x16x3xi8> -> tensor<1x11x10x3xi8>
// GRID-NEXT:  relay.conv2d %[[S01]], %w0 {strides = array<i64: 2, 2>, padding = array<i64: 0, 0, 0, 1>, {{.*}}} : (tensor<1x11x10x3xi8>, tensor<8x3x3x3xi8>) -> tensor<1x5x5x8xi32>
// GRID:       relay.conv2d {{.*}}, %w1 {padding = array<i64: 1, 0, 0, 1>, groups = 8 : i64, {{.*}}} : (tensor<1x5x5x8xi8>, tensor<3x3x1x8xi8>) -> tensor<1x4x4x8xi32>
// GRID:       %[[T01:.*]] = relay.cast {{.*}} -> tensor<1x4x4x8xi8>
// GRID-NEXT:  %[[B0:.*]] = relay.concatenate %[[T00]], %[[T01]] {axis = 2 : i64} : (tensor<1x4x4x8xi8>, tensor<1x4x4x8xi8>) -> tensor<1x4x8x8xi8>
// GRID-NEXT:  %[[S10:.*]] = relay.strided_slice %x {begin = array<i64: 0, 6, 0, 0>, end = array<i64: 1, 16, 11, 3>, strides = array<i64: 1, 1, 1, 1>} : tensor<1x16x16x3xi8> -> tensor<1x10x11x3xi8>
// GRID-NEXT:  relay.conv2d %[[S10]], %w0 {strides = array<i64: 2, 2>, padding = array<i64: 0, 0, 1, 0>, {{.*}}} : (tensor<1x10x11x3xi8>, tensor<8x3x3x3xi8>) -> tensor<1x5x5x8xi32>
// GRID:       relay.conv2d {{.*}}, %w1 {padding = array<i64: 0, 1, 1, 0>, groups = 8 : i64, {{.*}}}
// GRID:       %[[S11:.*]] = relay.strided_slice %x {begin = array<i64: 0, 6, 6, 0>, end = array<i64: 1, 16, 16, 3>, strides = array<i64: 1, 1, 1, 1>} : tensor<1x16x16x3xi8> -> tensor<1x10x10x3xi8>
// GRID-NEXT:  relay.conv2d %[[S11]], %w0 {strides = array<i64: 2, 2>, padding = array<i64: 0, 0, 1, 1>, {{.*}}} : (tensor<1x10x10x3xi8>, tensor<8x3x3x3xi8>) -> tensor<1x5x5x8xi32>
// GRID:       relay.conv2d {{.*}}, %w1 {padding = array<i64: 0, 0, 1, 1>, groups = 8 : i64, {{.*}}}
// GRID:       %[[B1:.*]] = relay.concatenate {{.*}} {axis = 2 : i64} : (tensor<1x4x4x8xi8>, tensor<1x4x4x8xi8>) -> tensor<1x4x8x8xi8>
// GRID-NEXT:  %[[J:.*]] = relay.concatenate %[[B0]], %[[B1]] {axis = 1 : i64} : (tensor<1x4x8x8xi8>, tensor<1x4x8x8xi8>) -> tensor<1x8x8x8xi8>
// GRID:       relay.conv2d %[[J]], %w2

// Through fuse-ops: a tile of columns is not contiguous in the NHWC input, so
// its slice is a kernel of its own (a copy), unlike a stripe of rows (a view);
// the joins along W and H are one kernel.
// FUSED-LABEL: func.func @cnn(
// FUSED:       %[[A:.*]] = relay.call @tvmgen_default_fused_strided_slice(%x) : (tensor<1x16x16x3xi8>) -> tensor<1x11x11x3xi8>
// FUSED-NEXT:  relay.call @tvmgen_default_fused_nn_conv2d_add_fixed_point_multiply_add_clip_cast(%[[A]], %b0) : (tensor<1x11x11x3xi8>, tensor<8xi32>) -> tensor<1x5x5x8xi8>
// FUSED:       relay.call @tvmgen_default_fused_concatenate_concatenate_concatenate({{.*}}) : (tensor<1x4x4x8xi8>, tensor<1x4x4x8xi8>, tensor<1x4x4x8xi8>, tensor<1x4x4x8xi8>) -> tensor<1x8x8x8xi8>

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
