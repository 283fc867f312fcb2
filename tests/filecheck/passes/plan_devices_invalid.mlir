// RUN: usmp-opt %s -p plan-devices --split-input-file --verify-diagnostics
// RUN: not usmp-opt %s --split-input-file -p 'plan-devices{default_device_id=-1}' 2>&1 | FileCheck %s --check-prefix=OPTION

// OPTION: plan-devices: default device 'cpu' id -1 is invalid (expected a device type name such as cpu and an id >= 0)

func.func @main(%x: tensor<4xf32> {relay.virtual_device = #device.virtual_device<"cpu", 0>}) -> tensor<4xf32> {
  // expected-error-re@+1 {{conflicting virtual devices: #device.virtual_device<"npu", 0> here, but #device.virtual_device<"cpu", 0> at {{.*}}plan_devices_invalid.mlir:6:1; separate them with relay.on_device {constrain_body = false} or a relay.device_copy}}
  %0 = relay.on_device %x {virtual_device = #device.virtual_device<"npu", 0>} : tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

func.func @main(%x: tensor<4xf32>, %c: i1) -> tensor<4xf32> {
  // expected-error@+1 {{plan-devices: 'scf.if' is not supported in main (expected relay ops and func.return: relay control flow is not supported)}}
  %0 = scf.if %c -> (tensor<4xf32>) {
    scf.yield %x : tensor<4xf32>
  } else {
    scf.yield %x : tensor<4xf32>
  }
  func.return %0 : tensor<4xf32>
}
