// RUN: usmp-opt %s -p dce --split-input-file | FileCheck %s

// relay ops are Pure: xDSL's dce erases every one whose result is unused.

// CHECK-LABEL: func.func @dead_operators
// CHECK-NEXT:    %[[R:.*]] = relay.relu %{{.*}} : tensor<1x4xf32> -> tensor<1x4xf32>
// CHECK-NEXT:    func.return %[[R]]
func.func @dead_operators(%x: tensor<1x4xf32>, %y: tensor<1x4xi8>) -> tensor<1x4xf32> {
  %w = relay.constant dense<1.0> : tensor<4x4xf32>
  %d = relay.dense %x, %w : (tensor<1x4xf32>, tensor<4x4xf32>) -> tensor<1x4xf32>
  %a = relay.add %d, %x : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
  %c = relay.cast %y : tensor<1x4xi8> -> tensor<1x4xi32>
  %f = relay.fixed_point_multiply %c {multiplier = array<i32: 1073741824>, shift = array<i32: -1>} : tensor<1x4xi32> -> tensor<1x4xi32>
  %r = relay.relu %x : tensor<1x4xf32> -> tensor<1x4xf32>
  func.return %r : tensor<1x4xf32>
}

// -----

// CHECK-LABEL: func.func @dead_structural
// CHECK-NOT:     relay.
// CHECK:         func.return %{{.*}} : tensor<4xi8>
func.func @fused(%a: tensor<4xi8>) -> tensor<4xi8> attributes {relay.primitive} {
  func.return %a : tensor<4xi8>
}
func.func @dead_structural(%a: tensor<4xi8>) -> tensor<4xi8> {
  %0 = relay.call @fused(%a) : (tensor<4xi8>) -> tensor<4xi8>
  %1 = relay.tuple(%0, %a) : (tensor<4xi8>, tensor<4xi8>) -> tuple<tensor<4xi8>, tensor<4xi8>>
  %2 = relay.tuple_get_item %1[0] : tuple<tensor<4xi8>, tensor<4xi8>> -> tensor<4xi8>
  %3 = relay.on_device %a {virtual_device = #device.virtual_device<"cpu", 0>} : tensor<4xi8>
  %4 = relay.device_copy %a {src = #device.virtual_device<"cpu", 0>, dst = #device.virtual_device<"npu", 0>} : tensor<4xi8>
  func.return %a : tensor<4xi8>
}
