// RUN: usmp-opt %s -p cse --split-input-file | FileCheck %s

// relay ops are Pure: xDSL's cse merges two ops with equal operands and
// properties, and keeps those that differ.

// CHECK-LABEL: func.func @same_operators
// CHECK:         %[[C:.*]] = relay.conv2d %{{.*}}, %{{.*}} {strides = array<i64: 2, 2>}
// CHECK-NOT:     relay.conv2d
// CHECK:         %[[S:.*]] = relay.add %[[C]], %[[C]]
// CHECK:         func.return %[[S]]
func.func @same_operators(%x: tensor<1x4x4x3xf32>, %w: tensor<3x3x3x8xf32>) -> tensor<1x1x1x8xf32> {
  %a = relay.conv2d %x, %w {strides = array<i64: 2, 2>} : (tensor<1x4x4x3xf32>, tensor<3x3x3x8xf32>) -> tensor<1x1x1x8xf32>
  %b = relay.conv2d %x, %w {strides = array<i64: 2, 2>} : (tensor<1x4x4x3xf32>, tensor<3x3x3x8xf32>) -> tensor<1x1x1x8xf32>
  %s = relay.add %a, %b : (tensor<1x1x1x8xf32>, tensor<1x1x1x8xf32>) -> tensor<1x1x1x8xf32>
  func.return %s : tensor<1x1x1x8xf32>
}

// -----

// CHECK-LABEL: func.func @different_properties
// CHECK:         relay.clip %{{.*}} {a_min = 0.000000e+00 : f64, a_max = 6.000000e+00 : f64}
// CHECK:         relay.clip %{{.*}} {a_min = 0.000000e+00 : f64, a_max = 1.000000e+00 : f64}
func.func @different_properties(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = relay.clip %x {a_min = 0.0 : f64, a_max = 6.0 : f64} : tensor<4xf32> -> tensor<4xf32>
  %b = relay.clip %x {a_min = 0.0 : f64, a_max = 1.0 : f64} : tensor<4xf32> -> tensor<4xf32>
  %s = relay.add %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %s : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @same_structural
// CHECK:         relay.constant
// CHECK-NOT:     relay.constant
// CHECK:         %[[X:.*]] = relay.call @fused
// CHECK-NOT:     relay.call
// CHECK:         relay.add %[[X]], %[[X]]
func.func @fused(%a: tensor<4xi8>, %b: tensor<4xi8>) -> tensor<4xi8> attributes {relay.primitive} {
  %0 = relay.add %a, %b : (tensor<4xi8>, tensor<4xi8>) -> tensor<4xi8>
  func.return %0 : tensor<4xi8>
}
func.func @same_structural(%a: tensor<4xi8>) -> tensor<4xi8> {
  %c0 = relay.constant dense<[1, 2, 3, 4]> : tensor<4xi8>
  %c1 = relay.constant dense<[1, 2, 3, 4]> : tensor<4xi8>
  %0 = relay.call @fused(%a, %c0) : (tensor<4xi8>, tensor<4xi8>) -> tensor<4xi8>
  %1 = relay.call @fused(%a, %c1) : (tensor<4xi8>, tensor<4xi8>) -> tensor<4xi8>
  %2 = relay.add %0, %1 : (tensor<4xi8>, tensor<4xi8>) -> tensor<4xi8>
  func.return %2 : tensor<4xi8>
}
