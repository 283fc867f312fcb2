// RUN: usmp-opt %s -p 'patch-stage{depth=2 stripes=2 cols=2}' | FileCheck %s
// RUN: usmp-opt %s -p 'patch-stage{depth=2 stripes=3 cols=1}' | FileCheck %s --check-prefix=ROWS

// A value of the stage nothing reads (the fuzzer's `relay.concatenate` of
// the input that no op uses) feeds neither the stage's output nor the rest
// of the model: the tiles do not compute it and it goes with the stage (it
// used to stop patch-stage with an internal error).
// CHECK-LABEL: func.func @dead(
// CHECK-SAME:  applied = true, depth = 2 : i64, layers = 2 : i64, grid = [2 : i64, 2 : i64]
// CHECK-NOT:   relay.concatenate %x, %x
// CHECK-COUNT-4: relay.conv2d {{.*}} -> tensor<1x2x2x4xf32>
// CHECK:       return
// ROWS-LABEL: func.func @dead(
// ROWS-SAME:  applied = true, depth = 2 : i64, layers = 2 : i64, grid = [3 : i64, 1 : i64]
// ROWS-NOT:   relay.concatenate %x, %x
func.func @dead(%x: tensor<1x8x8x3xf32>) -> tensor<1x4x4x4xf32> {
  %unused = relay.concatenate %x, %x {axis = 3 : i64} : (tensor<1x8x8x3xf32>, tensor<1x8x8x3xf32>) -> tensor<1x8x8x6xf32>
  %w0 = relay.constant dense<0.5> : tensor<3x3x3x8xf32>
  %c0 = relay.conv2d %x, %w0 {padding = array<i64: 1, 1, 1, 1>} : (tensor<1x8x8x3xf32>, tensor<3x3x3x8xf32>) -> tensor<1x8x8x8xf32>
  %w1 = relay.constant dense<0.25> : tensor<3x3x8x4xf32>
  %c1 = relay.conv2d %c0, %w1 {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 0, 0>} : (tensor<1x8x8x8xf32>, tensor<3x3x8x4xf32>) -> tensor<1x4x4x4xf32>
  func.return %c1 : tensor<1x4x4x4xf32>
}
