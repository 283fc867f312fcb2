// RUN: usmp-opt %s -p 'patch-stage{depth=2 stripes=2}' --split-input-file --verify-diagnostics

// A given depth beyond the stage is refused at the op where the stage ends.
func.func @too_deep(%x: tensor<1x8x8x3xi8>) -> tensor<1x8x8x8xi32> {
  %w0 = relay.constant dense<3> : tensor<8x3x3x3xi8>
  // expected-error@+1 {{patch-stage: depth 2 is more than the 1 layers of the stage (it ends here: 'relay.transpose' cannot be computed row by row)}}
  %c0 = relay.conv2d %x, %w0 {padding = array<i64: 1, 1, 1, 1>, kernel_layout = #relay<kernel_layout OHWI>} : (tensor<1x8x8x3xi8>, tensor<8x3x3x3xi8>) -> tensor<1x8x8x8xi32>
  %t = relay.transpose %c0 {axes = array<i64: 0, 2, 1, 3>} : tensor<1x8x8x8xi32> -> tensor<1x8x8x8xi32>
  func.return %t : tensor<1x8x8x8xi32>
}

// -----

// No stage at all: the input is 2-d.
// expected-error@+1 {{patch-stage: no stage to patch: no model input (NHWC, batch 1) feeds a chain of convolutions/pooling computable row by row}}
func.func @no_stage(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %r = relay.relu %x : tensor<4x8xf32> -> tensor<4x8xf32>
  func.return %r : tensor<4x8xf32>
}
