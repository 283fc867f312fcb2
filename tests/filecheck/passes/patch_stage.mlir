// RUN: usmp-opt %s -p 'patch-stage{budget=0.5 cols=1}' --split-input-file | FileCheck %s --check-prefix=AUTO
// RUN: usmp-opt %s -p patch-stage --split-input-file | FileCheck %s --check-prefix=DEFAULT
// Idempotence: a function with a decision is not patched again.
// RUN: usmp-opt %s -p 'patch-stage{budget=0.5 cols=1},patch-stage{budget=0.5 cols=1}' --split-input-file | FileCheck %s --check-prefix=AUTO

// A small CNN (conv 3x3/2, depthwise 3x3, pointwise, max pool): 4 layers.
// With budget=0.5 (half the model's MACs to spend) and cols=1 (row stripes
// only; patch_stage_grid2d.mlir has the 2-D grids), all 4 layers in 4 stripes of
// one output row each; the peak estimate drops from 1,536 B (the 8x8x8 and
// 8x8x16 maps) to 816 B.
// AUTO-LABEL: func.func @cnn(
// AUTO-SAME:  relay.patch = {applied = true, depth = 4 : i64, layers = 4 : i64, grid = [4 : i64, 1 : i64], stripe_rows = [1 : i64, 1 : i64, 1 : i64, 1 : i64], tile_cols = [4 : i64], peak_before = 1536 : i64, peak_after = 816 : i64, model_macs = 27648 : i64, stage_macs = 27648 : i64, extra_macs = 10368 : i64, budget_macs = 13824 : i64, instructions_before = 105248 : i64, instructions_after = 133683 : i64}
// AUTO-COUNT-4: relay.max_pool2d
// AUTO:         relay.concatenate {{.*}} {axis = 1 : i64} : (tensor<1x1x4x16xi8>, tensor<1x1x4x16xi8>, tensor<1x1x4x16xi8>, tensor<1x1x4x16xi8>) -> tensor<1x4x4x16xi8>

// Default budget: within 10% of the MACs no grid lowers the peak: left as it is.
// DEFAULT-LABEL: func.func @cnn(
// DEFAULT-SAME:  relay.patch = {applied = false, reason = "patching does not lower the estimated peak (1536 B) within a budget of 0.1 x 27648 MACs (stage of 4 layers; it ends: 'func.return' cannot be computed row by row)"}
// DEFAULT-NOT:   relay.strided_slice
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

// -----

// Negative: the first conv's output is transposed (not row-local) and a bias
// that varies along H (tensor<8x1x8xi32>) would be sliced: the stage ends at
// the first conv, whose output is fused into the add's kernel (no stage to
// end there); nothing is patched.
// AUTO-LABEL: func.func @not_row_local(
// AUTO-SAME:  relay.patch = {applied = false
// AUTO-NOT:   relay.strided_slice
// DEFAULT-LABEL: func.func @not_row_local(
// DEFAULT-SAME:  reason = "no stage: no model input (NHWC, batch 1) feeds a chain of convolutions/pooling computable row by row"
// DEFAULT-NOT:   relay.strided_slice
func.func @not_row_local(%x: tensor<1x8x8x3xi8>) -> tensor<1x8x8x8xi32> {
  %w0 = relay.constant dense<3> : tensor<8x3x3x3xi8>
  %b = relay.constant dense<1> : tensor<8x1x8xi32>
  %c0 = relay.conv2d %x, %w0 {padding = array<i64: 1, 1, 1, 1>, kernel_layout = #relay<kernel_layout OHWI>} : (tensor<1x8x8x3xi8>, tensor<8x3x3x3xi8>) -> tensor<1x8x8x8xi32>
  %a = relay.add %c0, %b : (tensor<1x8x8x8xi32>, tensor<8x1x8xi32>) -> tensor<1x8x8x8xi32>
  %t = relay.transpose %a {axes = array<i64: 0, 2, 1, 3>} : tensor<1x8x8x8xi32> -> tensor<1x8x8x8xi32>
  func.return %t : tensor<1x8x8x8xi32>
}
