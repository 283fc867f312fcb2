// RUN: usmp-opt %s -p 'patch-stage{depth=2 stripes=2}' | FileCheck %s

// A residual block: x -> conv 3x3 (the conv branch, 1-row halo) -> add(x, .)
// and a concatenation of two branches along channels. depth=2 stripes=2:
// through the ADD (the cuts: the stem's output, the ADD; never inside the
// block). Per stripe the block input %s (the stem) is computed on the hull
// of its consumers' rows (rows 0..4 for stripe 0: the conv branch reads a
// halo row below) and the ADD reads a row slice of it (rows 0..3); the
// stripes of stripe 1 start at row 2 of x, its ADD reads rows 1..4 of %s's.
// CHECK-LABEL: func.func @residual(
// CHECK-SAME:  depth = 2 : i64, layers = 3 : i64, grid = [2 : i64, 1 : i64], stripe_rows = [4 : i64, 4 : i64]
// CHECK:       %[[X0:.*]] = relay.strided_slice %x {begin = array<i64: 0, 0, 0, 0>, end = array<i64: 1, 6, 8, 3>
// CHECK-NEXT:  relay.conv2d %[[X0]], %w0 {padding = array<i64: 1, 1, 0, 1>, {{.*}} -> tensor<1x5x8x4xi32>
// CHECK-NEXT:  %[[S0:.*]] = relay.cast
// CHECK-NEXT:  relay.conv2d %[[S0]], %w1 {padding = array<i64: 1, 1, 0, 1>, {{.*}} -> tensor<1x4x8x4xi32>
// CHECK-NEXT:  %[[B0:.*]] = relay.cast
// CHECK-NEXT:  %[[K0:.*]] = relay.strided_slice %[[S0]] {begin = array<i64: 0, 0, 0, 0>, end = array<i64: 1, 4, 8, 4>, strides = array<i64: 1, 1, 1, 1>} : tensor<1x5x8x4xi8> -> tensor<1x4x8x4xi8>
// CHECK-NEXT:  %[[A0:.*]] = relay.add %[[K0]], %[[B0]]
// CHECK-NEXT:  %[[X1:.*]] = relay.strided_slice %x {begin = array<i64: 0, 2, 0, 0>, end = array<i64: 1, 8, 8, 3>
// CHECK-NEXT:  relay.conv2d %[[X1]], %w0 {padding = array<i64: 0, 1, 1, 1>, {{.*}} -> tensor<1x5x8x4xi32>
// CHECK-NEXT:  %[[S1:.*]] = relay.cast
// CHECK-NEXT:  relay.conv2d %[[S1]], %w1 {padding = array<i64: 0, 1, 1, 1>, {{.*}} -> tensor<1x4x8x4xi32>
// CHECK-NEXT:  %[[B1:.*]] = relay.cast
// CHECK-NEXT:  %[[K1:.*]] = relay.strided_slice %[[S1]] {begin = array<i64: 0, 1, 0, 0>, end = array<i64: 1, 5, 8, 4>
// CHECK-NEXT:  %[[A1:.*]] = relay.add %[[K1]], %[[B1]]
// CHECK-NEXT:  %[[J:.*]] = relay.concatenate %[[A0]], %[[A1]] {axis = 1 : i64}
// CHECK-NEXT:  relay.conv2d %[[J]], %w2
// CHECK:       relay.max_pool2d %[[J]]
// CHECK-NEXT:  relay.concatenate {{.*}} {axis = 3 : i64}
func.func @residual(%x: tensor<1x8x8x3xi8>) -> tensor<1x8x8x8xi8> {
  %w0 = relay.constant dense<1> : tensor<4x3x3x3xi8>
  %w1 = relay.constant dense<1> : tensor<4x3x3x4xi8>
  %w2 = relay.constant dense<1> : tensor<4x1x1x4xi8>
  %c0 = relay.conv2d %x, %w0 {padding = array<i64: 1, 1, 1, 1>, kernel_layout = #relay<kernel_layout OHWI>} : (tensor<1x8x8x3xi8>, tensor<4x3x3x3xi8>) -> tensor<1x8x8x4xi32>
  %s = relay.cast %c0 : tensor<1x8x8x4xi32> -> tensor<1x8x8x4xi8>
  %c1 = relay.conv2d %s, %w1 {padding = array<i64: 1, 1, 1, 1>, kernel_layout = #relay<kernel_layout OHWI>} : (tensor<1x8x8x4xi8>, tensor<4x3x3x4xi8>) -> tensor<1x8x8x4xi32>
  %b = relay.cast %c1 : tensor<1x8x8x4xi32> -> tensor<1x8x8x4xi8>
  %a = relay.add %s, %b : (tensor<1x8x8x4xi8>, tensor<1x8x8x4xi8>) -> tensor<1x8x8x4xi8>
  %c2 = relay.conv2d %a, %w2 {kernel_layout = #relay<kernel_layout OHWI>} : (tensor<1x8x8x4xi8>, tensor<4x1x1x4xi8>) -> tensor<1x8x8x4xi32>
  %p = relay.cast %c2 : tensor<1x8x8x4xi32> -> tensor<1x8x8x4xi8>
  %q = relay.max_pool2d %a {pool_size = array<i64: 3, 3>, padding = array<i64: 1, 1, 1, 1>} : tensor<1x8x8x4xi8> -> tensor<1x8x8x4xi8>
  %c = relay.concatenate %p, %q {axis = 3 : i64} : (tensor<1x8x8x4xi8>, tensor<1x8x8x4xi8>) -> tensor<1x8x8x8xi8>
  func.return %c : tensor<1x8x8x8xi8>
}
