// RUN: usmp-opt %s -p 'patch-stage{budget=0.5 cols=1 evaluate="fuse-ops,dedupe-functions{patched_only=true},lower-ops,aot-lower-main,usmp-plan-memory"}' | FileCheck %s --check-prefix=KEPT
// RUN: usmp-opt %s -p 'patch-stage{depth=1 stripes=2 evaluate="fuse-ops,lower-ops,aot-lower-main,usmp-plan-memory"}' | FileCheck %s --check-prefix=TIE
// RUN: not usmp-opt %s -p 'patch-stage{budget=0.5 cols=1 evaluate="fuse-ops,lower-ops"}' 2>&1 | FileCheck %s --check-prefix=UNPLANNED
// RUN: not usmp-opt %s -p 'patch-stage{evaluate="fuse-ops,patch-stage"}' 2>&1 | FileCheck %s --check-prefix=NESTED

// The CNN of patch_stage.mlir as @main. With evaluate, the pipeline plans a
// clone of the patched and of the unpatched module: the 4x1 grid plans 512 B
// against 1,040 B, so the patch is kept and both figures are recorded.
// KEPT-LABEL: func.func @main(
// KEPT-SAME:  relay.patch = {applied = true, depth = 4 : i64, {{.*}}, planned_patched = 512 : i64, planned_unpatched = 1040 : i64}
// KEPT:       relay.concatenate

// A given grid that plans no smaller (a tie) leaves the module unpatched,
// with the reason and the estimate's figures.
// TIE-LABEL: func.func @main(
// TIE-SAME:  relay.patch = {applied = false, reason = "no lower planned workspace (1,040 B patched vs 1,040 B unpatched)", planned_patched = 1040 : i64, planned_unpatched = 1040 : i64, estimated_peak_before = 1536 : i64, estimated_peak_after = 1536 : i64}
// TIE-NOT:   relay.strided_slice

// UNPLANNED: patch-stage: the evaluate pipeline (fuse-ops,lower-ops) did not plan the module (no tir.pools); end it with usmp-plan-memory or usmp
// NESTED: patch-stage: the evaluate pipeline cannot patch again
func.func @main(%x: tensor<1x16x16x3xi8>) -> tensor<1x4x4x16xi8> {
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
