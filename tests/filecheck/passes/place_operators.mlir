// RUN: usmp-opt %s -p 'place-operators{offload="CONV_2D=accel"}' | FileCheck %s
// RUN: usmp-opt %s -p 'place-operators{offload="CONV_2D=accel"},place-operators{offload="CONV_2D=accel"}' | FileCheck %s
// RUN: usmp-opt %s -p 'place-operators{offload="CONV_2D=accel"},plan-devices{targets="accel","c"}' | FileCheck %s --check-prefix=PLANNED

// The ops the TFLite importer emitted for a CONV_2D (their location says
// so) run on accel, every other op on the host; each value crossing devices
// is copied once per device, right after its producer (main's argument: at
// the start). Constants stay free; a second run changes nothing.
// CHECK-LABEL: func.func @main
// CHECK-NEXT:  %[[X:.*]] = relay.device_copy %x {src = #device.virtual_device<"cpu", 0, target = "c", scope = "global">, dst = #device.virtual_device<"accel", 0, target = "accel", scope = "global">}
// CHECK-NEXT:  %w = relay.constant dense<1.000000e+00> : tensor<2x1x1x1xf32>{{$}}
// CHECK-NEXT:  %b = relay.constant dense<5.000000e-01> : tensor<2xf32>{{$}}
// CHECK-NEXT:  %[[C:.*]] = relay.conv2d %[[X]], %w {relay.virtual_device = #device.virtual_device<"accel", 0, target = "accel", scope = "global">
// CHECK-NEXT:  %[[A:.*]] = relay.add %[[C]], %b {relay.virtual_device = #device.virtual_device<"accel", 0, target = "accel", scope = "global">}
// CHECK-NEXT:  %[[K:.*]] = relay.device_copy %[[A]] {src = #device.virtual_device<"accel", 0, target = "accel", scope = "global">, dst = #device.virtual_device<"cpu", 0, target = "c", scope = "global">}
// CHECK-NEXT:  %[[R:.*]] = relay.relu %[[K]] {relay.virtual_device = #device.virtual_device<"cpu", 0, target = "c", scope = "global">}
// CHECK-NEXT:  %[[M:.*]] = relay.multiply %[[K]], %[[K]] {relay.virtual_device = #device.virtual_device<"cpu", 0, target = "c", scope = "global">}
// CHECK-NOT:   relay.device_copy
// CHECK:       func.return %[[M]]

// plan-devices then places the constants on their users' device.
// PLANNED-LABEL: func.func @main
// PLANNED:       relay.constant {{.*}}relay.virtual_device = #device.virtual_device<"accel"
// PLANNED:       relay.conv2d {{.*}}relay.virtual_device = #device.virtual_device<"accel"
func.func @main(%x: tensor<1x4x4x1xf32>) -> tensor<1x4x4x2xf32> {
  %w = relay.constant dense<1.0> : tensor<2x1x1x1xf32> loc("CONV_2D"("m.tflite":0:0))
  %b = relay.constant dense<0.5> : tensor<2xf32> loc("CONV_2D"("m.tflite":0:0))
  %c = relay.conv2d %x, %w {kernel_layout = #relay<kernel_layout OHWI>} : (tensor<1x4x4x1xf32>, tensor<2x1x1x1xf32>) -> tensor<1x4x4x2xf32> loc("CONV_2D"("m.tflite":0:0))
  %a = relay.add %c, %b : (tensor<1x4x4x2xf32>, tensor<2xf32>) -> tensor<1x4x4x2xf32> loc("conv_out"("CONV_2D"("m.tflite":0:0)))
  %r = relay.relu %a : tensor<1x4x4x2xf32> -> tensor<1x4x4x2xf32> loc("RELU"("m.tflite":1:0))
  %m = relay.multiply %a, %a : (tensor<1x4x4x2xf32>, tensor<1x4x4x2xf32>) -> tensor<1x4x4x2xf32> loc("MUL"("m.tflite":2:0))
  func.return %m : tensor<1x4x4x2xf32>
}
