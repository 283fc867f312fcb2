// RUN: usmp-opt %s -p plan-devices --split-input-file | FileCheck %s
// RUN: usmp-opt %s -p plan-devices --split-input-file | usmp-opt -p plan-devices --split-input-file | FileCheck %s
// RUN: usmp-opt %s -p 'plan-devices{default_device=gpu default_device_id=1 default_target=cuda}' --split-input-file | FileCheck %s --check-prefix=OPT

// Nothing constrained: every value is explicitly on the default device.
// CHECK-LABEL: func.func @main(%x: tensor<4xf32> {relay.virtual_device = #device.virtual_device<"cpu", 0, target = "c", scope = "global">}) -> (tensor<4xf32> {relay.virtual_device = #device.virtual_device<"cpu", 0, target = "c", scope = "global">})
// CHECK: relay.relu %x {relay.virtual_device = #device.virtual_device<"cpu", 0, target = "c", scope = "global">}
// OPT-LABEL: func.func @main(%x: tensor<4xf32> {relay.virtual_device = #device.virtual_device<"gpu", 1, target = "cuda", scope = "global">})
// OPT: relay.relu %x {relay.virtual_device = #device.virtual_device<"gpu", 1, target = "cuda", scope = "global">}
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = relay.relu %x : tensor<4xf32> -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

// on_device constraining both sides pins the operator and its operands; the
// annotation itself is dropped (its information is in the attributes).
// CHECK-LABEL: func.func @main(%x: tensor<4xf32> {relay.virtual_device = #device.virtual_device<"npu", 0, target = "ethos-u">})
// CHECK-NEXT: %0 = relay.relu %x {relay.virtual_device = #device.virtual_device<"npu", 0, target = "ethos-u">}
// CHECK-NOT: relay.on_device
// CHECK: func.return %0
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = relay.relu %x : tensor<4xf32> -> tensor<4xf32>
  %1 = relay.on_device %0 {virtual_device = #device.virtual_device<"npu", 0, target = "ethos-u">} : tensor<4xf32>
  func.return %1 : tensor<4xf32>
}

// -----

// on_device constraining only its result is a device boundary: the value
// crosses devices there, so it becomes a device_copy.
// CHECK-LABEL: func.func @main
// CHECK: %0 = relay.relu %x {relay.virtual_device = #device.virtual_device<"cpu", 0, target = "c", scope = "global">}
// CHECK-NEXT: %1 = relay.device_copy %0 {src = #device.virtual_device<"cpu", 0, target = "c", scope = "global">, dst = #device.virtual_device<"npu", 0, target = "ethos-u">} : tensor<4xf32>
// CHECK-NEXT: %2 = relay.relu %1 {relay.virtual_device = #device.virtual_device<"npu", 0, target = "ethos-u">}
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = relay.relu %x : tensor<4xf32> -> tensor<4xf32>
  %1 = relay.on_device %0 {virtual_device = #device.virtual_device<"npu", 0, target = "ethos-u">, constrain_body = false} : tensor<4xf32>
  %2 = relay.relu %1 : tensor<4xf32> -> tensor<4xf32>
  %3 = relay.on_device %2 {virtual_device = #device.virtual_device<"npu", 0, target = "ethos-u">} : tensor<4xf32>
  func.return %3 : tensor<4xf32>
}

// -----

// An existing device_copy is honoured: its src/dst flow to producer and consumer.
// CHECK-LABEL: func.func @main(%x: tensor<4xf32> {relay.virtual_device = #device.virtual_device<"cpu", 1>}) -> (tensor<4xf32> {relay.virtual_device = #device.virtual_device<"dsp", 0>})
// CHECK: relay.relu %x {relay.virtual_device = #device.virtual_device<"cpu", 1>}
// CHECK: relay.device_copy
// CHECK: relay.relu %{{.*}} {relay.virtual_device = #device.virtual_device<"dsp", 0>}
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = relay.relu %x : tensor<4xf32> -> tensor<4xf32>
  %1 = relay.device_copy %0 {src = #device.virtual_device<"cpu", 1>, dst = #device.virtual_device<"dsp", 0>} : tensor<4xf32>
  %2 = relay.relu %1 : tensor<4xf32> -> tensor<4xf32>
  func.return %2 : tensor<4xf32>
}

// -----

// A constant used on two devices is duplicated, one copy per device.
// CHECK-LABEL: func.func @main
// CHECK-DAG: relay.constant dense<1.000000e+00> : tensor<4xf32> {relay.virtual_device = #device.virtual_device<"npu", 0>}
// CHECK-DAG: relay.constant dense<1.000000e+00> : tensor<4xf32> {relay.virtual_device = #device.virtual_device<"cpu", 0, target = "c", scope = "global">}
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c = relay.constant dense<1.0> : tensor<4xf32>
  %a = relay.add %x, %c : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %b = relay.on_device %a {virtual_device = #device.virtual_device<"npu", 0>, constrain_body = false} : tensor<4xf32>
  %d = relay.add %b, %c : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %e = relay.on_device %d {virtual_device = #device.virtual_device<"npu", 0>} : tensor<4xf32>
  func.return %e : tensor<4xf32>
}

// -----

// Tuples are flattened: each field keeps its own device.
// CHECK-LABEL: func.func @main({{.*}}) -> (tensor<4xf32> {relay.virtual_device = #device.virtual_device<"npu", 0>})
// CHECK: %0 = relay.relu %c {relay.virtual_device = #device.virtual_device<"npu", 0>}
// CHECK: %1 = relay.relu %x {relay.virtual_device = #device.virtual_device<"cpu", 0, target = "c", scope = "global">}
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c = relay.device_copy %x {src = #device.virtual_device<"cpu", 0, target = "c", scope = "global">, dst = #device.virtual_device<"npu", 0>} : tensor<4xf32>
  %0 = relay.relu %c : tensor<4xf32> -> tensor<4xf32>
  %1 = relay.relu %x : tensor<4xf32> -> tensor<4xf32>
  %t = relay.tuple(%0, %1) : (tensor<4xf32>, tensor<4xf32>) -> tuple<tensor<4xf32>, tensor<4xf32>>
  %g = relay.tuple_get_item %t[0] : tuple<tensor<4xf32>, tensor<4xf32>> -> tensor<4xf32>
  func.return %g : tensor<4xf32>
}

// -----

// Calls to primitive functions run on one device, shared with their operands.
// CHECK-LABEL: func.func @main
// CHECK: relay.call @fused_relu(%x) {relay.virtual_device = #device.virtual_device<"npu", 0>}
func.func @fused_relu(%x: tensor<4xf32>) -> tensor<4xf32> attributes {relay.primitive} {
  %0 = relay.relu %x : tensor<4xf32> -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}
func.func @main(%x: tensor<4xf32> {relay.virtual_device = #device.virtual_device<"npu", 0>}) -> tensor<4xf32> {
  %0 = relay.call @fused_relu(%x) : (tensor<4xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}
