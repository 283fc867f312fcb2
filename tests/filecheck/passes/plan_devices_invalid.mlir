// RUN: usmp-opt %s -p plan-devices --split-input-file --verify-diagnostics
// RUN: not usmp-opt %s --split-input-file -p 'plan-devices{default_device_id=-1}' 2>&1 | filecheck %s --check-prefix=OPTION

// OPTION: plan-devices: default device 'cpu' id -1 is invalid (expected a device type name such as cpu and an id from 0 to 2147483647)

// An argument attribute and a fixed on_device disagree: the error names both.
func.func @main(%x: tensor<4xf32> {relay.virtual_device = #device.virtual_device<"cpu", 0>}) -> tensor<4xf32> {
  // expected-error-re@+1 {{conflicting virtual devices: #device.virtual_device<"npu", 0> here, but #device.virtual_device<"cpu", 0> at {{.*}}plan_devices_invalid.mlir:7:1 (argument 0 of @main); separate them with relay.on_device (constrain_result = false permits a copy) or a relay.device_copy}}
  %0 = relay.on_device %x {virtual_device = #device.virtual_device<"npu", 0>, constrain_result = true} : tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

// Two fixed annotations of one value: partial devices conflict on the field both know.
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = relay.on_device %x {virtual_device = #device.virtual_device<"npu", target = "a">} : tensor<4xf32>
  // expected-error-re@+1 {{conflicting virtual devices: #device.virtual_device<id = 1, target = "b"> here, but #device.virtual_device<"npu", target = "a"> at {{.*}}plan_devices_invalid.mlir:17:3;{{.*}}}}
  %1 = relay.on_device %x {virtual_device = #device.virtual_device<id = 1, target = "b">} : tensor<4xf32>
  %2 = relay.add %0, %1 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %2 : tensor<4xf32>
}

// -----

// The fields of a tuple are on one device (TVM): two fixed devices meet in it.
func.func @main(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %c = relay.device_copy %x {src = #device.virtual_device<"cpu", 0>, dst = #device.virtual_device<"npu", 0>} : tensor<4xf32>
  %0 = relay.relu %c : tensor<4xf32> -> tensor<4xf32>
  %1 = relay.on_device %y {virtual_device = #device.virtual_device<"cpu", 1>, constrain_result = true} : tensor<4xf32>
  // expected-error-re@+1 {{conflicting virtual devices meet here: #device.virtual_device<"cpu", 1> from {{.*}}plan_devices_invalid.mlir:30:3 and #device.virtual_device<"npu", 0> from {{.*}}plan_devices_invalid.mlir:28:3; separate them}}
  %t = relay.tuple(%0, %1) : (tensor<4xf32>, tensor<4xf32>) -> tuple<tensor<4xf32>, tensor<4xf32>>
  %g = relay.tuple_get_item %t[0] : tuple<tensor<4xf32>, tensor<4xf32>> -> tensor<4xf32>
  func.return %g : tensor<4xf32>
}

// -----

// A relay function is not device-polymorphic: two call sites on two fixed devices.
func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = relay.relu %a : tensor<4xf32> -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}
func.func @main(%x: tensor<4xf32> {relay.virtual_device = #device.virtual_device<"npu", 0>}, %y: tensor<4xf32> {relay.virtual_device = #device.virtual_device<"cpu", 0>}) -> tensor<4xf32> {
  %0 = relay.call @f(%x) : (tensor<4xf32>) -> tensor<4xf32>
  // expected-error-re@+1 {{conflicting virtual devices meet here: #device.virtual_device<"cpu", 0> from {{.*}}plan_devices_invalid.mlir:44:1 (argument 1 of @main) and #device.virtual_device<"npu", 0> from {{.*}}plan_devices_invalid.mlir:44:1 (argument 0 of @main); separate them}}
  %1 = relay.call @f(%y) : (tensor<4xf32>) -> tensor<4xf32>
  %2 = relay.add %0, %1 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %2 : tensor<4xf32>
}

// -----

func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'relay.virtual_device' must be a #device.virtual_device, got "npu"}}
  %0 = relay.relu %x {relay.virtual_device = "npu"} : tensor<4xf32> -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

func.func @main(%x: tensor<4xf32>, %c: i1) -> tensor<4xf32> {
  // expected-error@+1 {{plan-devices: 'scf.if' is not supported in a relay function (expected relay ops and func.return: relay control flow is not supported)}}
  %0 = scf.if %c -> (tensor<4xf32>) {
    scf.yield %x : tensor<4xf32>
  } else {
    scf.yield %x : tensor<4xf32>
  }
  func.return %0 : tensor<4xf32>
}
