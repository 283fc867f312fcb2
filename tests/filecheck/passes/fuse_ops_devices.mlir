// RUN: usmp-opt %s -p 'fuse-ops' --split-input-file | FileCheck %s
// Idempotence: a second run changes nothing.
// RUN: usmp-opt %s -p fuse-ops,fuse-ops --split-input-file | FileCheck %s

// conv2d + bias + relu on the accelerator, then an add on the host: the
// relu would fuse into the add on one device, but the device_copy between
// them (and the different devices) keep two groups. The accel group gets
// the target's prefix, tir.target and its device; the host group keeps
// TVM's name and the host device.

// CHECK-LABEL: func.func @tvmgen_default_accel_fused_nn_conv2d_add_nn_relu(
// CHECK-SAME:      attributes {relay.primitive, relay.virtual_device = #device.virtual_device<"accel", 0, target = "accel", scope = "global">, tir.target = "accel"}
// CHECK:         relay.conv2d
// CHECK-NEXT:    relay.add
// CHECK-NEXT:    relay.relu
// CHECK-NEXT:    func.return
// CHECK-LABEL: func.func @tvmgen_default_fused_add(
// CHECK-SAME:      attributes {relay.primitive, relay.virtual_device = #device.virtual_device<"cpu", 0, target = "c", scope = "global">}
// CHECK:       func.func @split(
// CHECK:         %[[A:.*]] = relay.call @tvmgen_default_accel_fused_nn_conv2d_add_nn_relu({{.*}}) {relay.virtual_device = #device.virtual_device<"accel", 0, target = "accel", scope = "global">}
// CHECK-NEXT:    %[[C:.*]] = relay.device_copy %[[A]]
// CHECK-NEXT:    %[[H:.*]] = relay.call @tvmgen_default_fused_add(%[[C]], %x) {relay.virtual_device = #device.virtual_device<"cpu", 0, target = "c", scope = "global">}
// CHECK-NEXT:    func.return %[[H]]
func.func @split(%x: tensor<1x4x4x2xf32> {relay.virtual_device = #device.virtual_device<"cpu", 0, target = "c", scope = "global">}) -> (tensor<1x4x4x2xf32> {relay.virtual_device = #device.virtual_device<"cpu", 0, target = "c", scope = "global">}) {
  %xa = relay.device_copy %x {src = #device.virtual_device<"cpu", 0, target = "c", scope = "global">, dst = #device.virtual_device<"accel", 0, target = "accel", scope = "global">} : tensor<1x4x4x2xf32>
  %w = relay.constant dense<1.0> : tensor<1x1x2x2xf32> {relay.virtual_device = #device.virtual_device<"accel", 0, target = "accel", scope = "global">}
  %b = relay.constant dense<[1.0, 2.0]> : tensor<2xf32> {relay.virtual_device = #device.virtual_device<"accel", 0, target = "accel", scope = "global">}
  %0 = relay.conv2d %xa, %w {relay.virtual_device = #device.virtual_device<"accel", 0, target = "accel", scope = "global">} : (tensor<1x4x4x2xf32>, tensor<1x1x2x2xf32>) -> tensor<1x4x4x2xf32>
  %1 = relay.add %0, %b {relay.virtual_device = #device.virtual_device<"accel", 0, target = "accel", scope = "global">} : (tensor<1x4x4x2xf32>, tensor<2xf32>) -> tensor<1x4x4x2xf32>
  %2 = relay.relu %1 {relay.virtual_device = #device.virtual_device<"accel", 0, target = "accel", scope = "global">} : tensor<1x4x4x2xf32> -> tensor<1x4x4x2xf32>
  %3 = relay.device_copy %2 {src = #device.virtual_device<"accel", 0, target = "accel", scope = "global">, dst = #device.virtual_device<"cpu", 0, target = "c", scope = "global">} : tensor<1x4x4x2xf32>
  %4 = relay.add %3, %x {relay.virtual_device = #device.virtual_device<"cpu", 0, target = "c", scope = "global">} : (tensor<1x4x4x2xf32>, tensor<1x4x4x2xf32>) -> tensor<1x4x4x2xf32>
  func.return %4 : tensor<1x4x4x2xf32>
}

// -----

// Without a device_copy between them (hand-written attributes), a
// producer and its consumer on different devices are still never fused: the
// dense+relu anchor chain stops at the device boundary, and the elementwise
// ops on the accelerator form their own group.

// CHECK-LABEL: func.func @tvmgen_default_fused_nn_dense_nn_relu(
// CHECK-LABEL: func.func @tvmgen_default_npu_fused_tanh_nn_relu(
// CHECK-SAME:      tir.target = "npu"
// CHECK-LABEL: func.func @adjacent(
// CHECK:         relay.call @tvmgen_default_fused_nn_dense_nn_relu({{.*}}) {relay.virtual_device = #device.virtual_device<"cpu", 0>}
// CHECK:         relay.call @tvmgen_default_npu_fused_tanh_nn_relu({{.*}}) {relay.virtual_device = #device.virtual_device<"npu", 0, target = "npu">}
func.func @adjacent(%x: tensor<1x4xf32>) -> tensor<1x4xf32> {
  %w = relay.constant dense<[[1.0, 2.0, 3.0, 4.0], [1.0, 2.0, 3.0, 4.0], [1.0, 2.0, 3.0, 4.0], [1.0, 2.0, 3.0, 5.0]]> : tensor<4x4xf32>
  %0 = relay.dense %x, %w {relay.virtual_device = #device.virtual_device<"cpu", 0>} : (tensor<1x4xf32>, tensor<4x4xf32>) -> tensor<1x4xf32>
  %1 = relay.relu %0 {relay.virtual_device = #device.virtual_device<"cpu", 0>} : tensor<1x4xf32> -> tensor<1x4xf32>
  %2 = relay.tanh %1 {relay.virtual_device = #device.virtual_device<"npu", 0, target = "npu">} : tensor<1x4xf32> -> tensor<1x4xf32>
  %3 = relay.relu %2 {relay.virtual_device = #device.virtual_device<"npu", 0, target = "npu">} : tensor<1x4xf32> -> tensor<1x4xf32>
  func.return %3 : tensor<1x4xf32>
}
