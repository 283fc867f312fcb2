// RUN: usmp-opt %s -p aot-lower-main --split-input-file | FileCheck %s
// Idempotence: a second run changes nothing.
// RUN: usmp-opt %s -p aot-lower-main,aot-lower-main --split-input-file | FileCheck %s
// The hooks survive usmp (they touch no buffer) and become calls of TVM's device API in C.
// RUN: usmp-opt %s -p aot-lower-main,usmp,convert-to-emitc --split-input-file | FileCheck %s --check-prefix=EMITC

// Two devices besides the host, TVM's device API order
// (tests/python/relay/aot/test_c_device_api.py): every device used is
// activated first (in order of its first call), each of its calls is
// wrapped in open/close, and every device is deactivated last. Host calls
// get no hooks; device_copy becomes a memref.copy between the two sides'
// storages. A call on a device and its callee name the device whose context
// the operator takes (tir.device_context). In C every hook's status and
// every device operator's is checked: a non-zero one is returned at once.
// CHECK-LABEL: func.func private @acc_neg({{.*}} attributes {tir.prim_func, tir.target = "accel", tir.device_context = "accel"}
// CHECK-LABEL: func.func private @npu_neg({{.*}} attributes {tir.prim_func, tir.target = "ethos-u", tir.device_context = "ethos_u"}
// CHECK-LABEL: func.func @tvmgen_default___tvm_main__(
// CHECK-SAME:    tir.device_contexts = ["accel", "ethos_u"]
// CHECK-NEXT:    tir.device_hook activate "accel"
// CHECK-NEXT:    tir.device_hook activate "ethos_u"
// CHECK:         "memref.copy"(%x, %[[XA:[a-z0-9_]+]]) {tir.src_virtual_device = #device.virtual_device<"cpu", 0, target = "c", scope = "global">, tir.dst_virtual_device = #device.virtual_device<"accel", 0, target = "accel", scope = "global">}
// CHECK-NEXT:    tir.device_hook open "accel"
// CHECK-NEXT:    tir.call @acc_neg(%[[XA]], %[[A:[a-z0-9_]+]]) {tir.virtual_device = #device.virtual_device<"accel", 0, target = "accel", scope = "global">, tir.device_context = "accel"}
// CHECK-NEXT:    tir.device_hook close "accel"
// CHECK-NEXT:    "memref.copy"(%[[A]], %[[AH:[a-z0-9_]+]]) {tir.src_virtual_device = #device.virtual_device<"accel", 0, target = "accel", scope = "global">, tir.dst_virtual_device = #device.virtual_device<"cpu", 0, target = "c", scope = "global">}
// CHECK-NEXT:    tir.call @neg(%[[AH]], %[[H:[a-z0-9_]+]]) {tir.virtual_device = #device.virtual_device<"cpu", 0, target = "c", scope = "global">}
// CHECK-NEXT:    "memref.copy"(%[[H]], %[[HN:[a-z0-9_]+]]) {tir.src_virtual_device = #device.virtual_device<"cpu", 0, target = "c", scope = "global">, tir.dst_virtual_device = #device.virtual_device<"npu", 0, target = "ethos-u", scope = "global">}
// CHECK-NEXT:    tir.device_hook open "ethos_u"
// CHECK-NEXT:    tir.call @npu_neg(%[[HN]], %[[N:[a-z0-9_]+]]) {tir.virtual_device = #device.virtual_device<"npu", 0, target = "ethos-u", scope = "global">, tir.device_context = "ethos_u"}
// CHECK-NEXT:    tir.device_hook close "ethos_u"
// CHECK-NEXT:    "memref.copy"(%[[N]], %[[NA:[a-z0-9_]+]])
// CHECK-NEXT:    tir.device_hook open "accel"
// CHECK-NEXT:    tir.call @acc_neg(%[[NA]], %[[A2:[a-z0-9_]+]])
// CHECK-NEXT:    tir.device_hook close "accel"
// CHECK-NEXT:    "memref.copy"(%[[A2]], %output)
// CHECK-NEXT:    tir.device_hook deactivate "accel"
// CHECK-NEXT:    tir.device_hook deactivate "ethos_u"
// CHECK-NEXT:    func.return

// EMITC-LABEL: emitc.func private @acc_neg(!emitc.ptr<f32>, !emitc.ptr<f32>, !emitc.ptr<!emitc.opaque<"void">>) -> i32
// EMITC-LABEL: emitc.func @tvmgen_default___tvm_main__(
// EMITC-SAME:    %device_context_accel: !emitc.ptr<!emitc.opaque<"void">>, %device_context_ethos_u: !emitc.ptr<!emitc.opaque<"void">>) -> i32
// EMITC:         %[[S0:.*]] = emitc.call_opaque "TVMDeviceAccelActivate"(%device_context_accel) : (!emitc.ptr<!emitc.opaque<"void">>) -> i32
// EMITC:         emitc.cmp ne, %[[S0]]
// EMITC:         emitc.verbatim "return {};" args %[[S0]]
// EMITC:         emitc.call_opaque "TVMDeviceEthosUActivate"(%device_context_ethos_u)
// EMITC:         emitc.call_opaque "TVMDeviceAccelOpen"(%device_context_accel)
// EMITC:         %[[S1:.*]] = emitc.call @acc_neg(%{{.*}}, %{{.*}}, %device_context_accel) : (!emitc.ptr<f32>, !emitc.ptr<f32>, !emitc.ptr<!emitc.opaque<"void">>) -> i32
// EMITC:         emitc.verbatim "return {};" args %[[S1]]
// EMITC:         emitc.call_opaque "TVMDeviceAccelClose"(%device_context_accel)
// EMITC-NOT:     emitc.call @neg({{.*}}device_context
// EMITC:         emitc.call_opaque "TVMDeviceEthosUDeactivate"(%device_context_ethos_u)
// EMITC:         emitc.return %{{.*}} : i32
func.func private @neg(memref<4xf32>, memref<4xf32>) attributes {tir.prim_func}
func.func private @acc_neg(memref<4xf32>, memref<4xf32>) attributes {tir.prim_func, tir.target = "accel"}
func.func private @npu_neg(memref<4xf32>, memref<4xf32>) attributes {tir.prim_func, tir.target = "ethos-u"}
func.func @main(%x: tensor<4xf32> {relay.virtual_device = #device.virtual_device<"cpu", 0, target = "c", scope = "global">}) -> (tensor<4xf32> {relay.virtual_device = #device.virtual_device<"cpu", 0, target = "c", scope = "global">}) {
  %0 = relay.device_copy %x {src = #device.virtual_device<"cpu", 0, target = "c", scope = "global">, dst = #device.virtual_device<"accel", 0, target = "accel", scope = "global">} : tensor<4xf32>
  %1 = relay.call @acc_neg(%0) {relay.virtual_device = #device.virtual_device<"accel", 0, target = "accel", scope = "global">} : (tensor<4xf32>) -> tensor<4xf32>
  %2 = relay.device_copy %1 {src = #device.virtual_device<"accel", 0, target = "accel", scope = "global">, dst = #device.virtual_device<"cpu", 0, target = "c", scope = "global">} : tensor<4xf32>
  %3 = relay.call @neg(%2) {relay.virtual_device = #device.virtual_device<"cpu", 0, target = "c", scope = "global">} : (tensor<4xf32>) -> tensor<4xf32>
  %4 = relay.device_copy %3 {src = #device.virtual_device<"cpu", 0, target = "c", scope = "global">, dst = #device.virtual_device<"npu", 0, target = "ethos-u", scope = "global">} : tensor<4xf32>
  %5 = relay.call @npu_neg(%4) {relay.virtual_device = #device.virtual_device<"npu", 0, target = "ethos-u", scope = "global">} : (tensor<4xf32>) -> tensor<4xf32>
  %6 = relay.device_copy %5 {src = #device.virtual_device<"npu", 0, target = "ethos-u", scope = "global">, dst = #device.virtual_device<"accel", 0, target = "accel", scope = "global">} : tensor<4xf32>
  %7 = relay.call @acc_neg(%6) {relay.virtual_device = #device.virtual_device<"accel", 0, target = "accel", scope = "global">} : (tensor<4xf32>) -> tensor<4xf32>
  %8 = relay.device_copy %7 {src = #device.virtual_device<"accel", 0, target = "accel", scope = "global">, dst = #device.virtual_device<"cpu", 0, target = "c", scope = "global">} : tensor<4xf32>
  func.return %8 : tensor<4xf32>
}

// -----

// A target without a device API (TVM's target kinds without use_device_api,
// e.g. cmsis-nn, whose operators are plain C of the host): no hooks, no
// context, no status.
// CHECK-LABEL: func.func @tvmgen_default___tvm_main__(
// CHECK-NOT:     tir.device_contexts
// CHECK-NOT:     tir.device_hook
// CHECK:         tir.call @cmsis_neg(%{{.*}}, %{{.*}}) {tir.virtual_device = #device.virtual_device<"cpu", 0, target = "cmsis-nn", scope = "global">}
// CHECK-NOT:     tir.device_hook
// EMITC-LABEL: emitc.func @tvmgen_default___tvm_main__(
// EMITC-NOT:     device_context
// EMITC:         emitc.call @cmsis_neg(%{{.*}}, %{{.*}}) : (!emitc.ptr<f32>, !emitc.ptr<f32>) -> ()
// EMITC-NOT:     emitc.call_opaque "TVMDevice
// EMITC:         emitc.return{{$}}
func.func private @cmsis_neg(memref<4xf32>, memref<4xf32>) attributes {tir.prim_func, tir.target = "cmsis-nn"}
func.func @main(%x: tensor<4xf32> {relay.virtual_device = #device.virtual_device<"cpu", 0, target = "c", scope = "global">}) -> (tensor<4xf32> {relay.virtual_device = #device.virtual_device<"cpu", 0, target = "c", scope = "global">}) {
  %0 = relay.device_copy %x {src = #device.virtual_device<"cpu", 0, target = "c", scope = "global">, dst = #device.virtual_device<"cpu", 0, target = "cmsis-nn", scope = "global">} : tensor<4xf32>
  %1 = relay.call @cmsis_neg(%0) {relay.virtual_device = #device.virtual_device<"cpu", 0, target = "cmsis-nn", scope = "global">} : (tensor<4xf32>) -> tensor<4xf32>
  %2 = relay.device_copy %1 {src = #device.virtual_device<"cpu", 0, target = "cmsis-nn", scope = "global">, dst = #device.virtual_device<"cpu", 0, target = "c", scope = "global">} : tensor<4xf32>
  func.return %2 : tensor<4xf32>
}
