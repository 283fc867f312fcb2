// RUN: usmp-opt %s -p 'plan-devices{targets="c"}' --verify-diagnostics
// RUN: usmp-opt %s -p 'plan-devices{targets="npu","c"}' | FileCheck %s

// With targets, a device on any other target is an error at the first op
// placed there (here the weight, placed with its user), naming the targets missing (usmp-compile --target).
// CHECK: relay.dense {{.*}}target = "npu"
func.func @main(%x: tensor<1x8xf32>) -> tensor<1x8xf32> {
  // expected-error@+1 {{plan-devices: the module places operators on target(s) npu, which targets=c does not name (usmp-compile: --target npu,c)}}
  %w = relay.constant dense<0.5> : tensor<8x8xf32>
  %0 = relay.dense %x, %w : (tensor<1x8xf32>, tensor<8x8xf32>) -> tensor<1x8xf32>
  %1 = relay.on_device %0 {virtual_device = #device.virtual_device<"npu", 0, target = "npu", scope = "global">} : tensor<1x8xf32>
  %2 = relay.relu %1 : tensor<1x8xf32> -> tensor<1x8xf32>
  func.return %2 : tensor<1x8xf32>
}
