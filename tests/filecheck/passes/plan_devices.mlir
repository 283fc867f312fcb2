// Every case runs twice (the second RUN): plan-devices is idempotent.
// RUN: usmp-opt %s -p plan-devices --split-input-file | filecheck %s -DCPU='#device.virtual_device<"cpu", 0, target = "c", scope = "global">' -DNPU='#device.virtual_device<"npu", 0, target = "ethos-u", scope = "global">'
// RUN: usmp-opt %s -p plan-devices --split-input-file | usmp-opt -p plan-devices --split-input-file | filecheck %s -DCPU='#device.virtual_device<"cpu", 0, target = "c", scope = "global">' -DNPU='#device.virtual_device<"npu", 0, target = "ethos-u", scope = "global">'
// RUN: usmp-opt %s -p 'plan-devices{default_device=gpu default_device_id=1 default_target=cuda}' --split-input-file | filecheck %s --check-prefix=OPT -DGPU='#device.virtual_device<"gpu", 1, target = "cuda", scope = "global">'

// Nothing constrained: every value explicitly on the default device (and the
// default device options, prefix OPT).
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %x: tensor<4xf32> {relay.virtual_device = [[CPU]]}) -> (tensor<4xf32> {relay.virtual_device = [[CPU]]})
// CHECK: relay.relu %x {relay.virtual_device = [[CPU]]}
// OPT-LABEL: func.func @main(
// OPT-SAME: %x: tensor<4xf32> {relay.virtual_device = [[GPU]]}
// OPT: relay.relu %x {relay.virtual_device = [[GPU]]}
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = relay.relu %x : tensor<4xf32> -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

// A fixed on_device (constrain_body and constrain_result) pins the operator,
// its operands and its users; the annotation itself is dropped.
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %x: tensor<4xf32> {relay.virtual_device = [[NPU]]}) -> (tensor<4xf32> {relay.virtual_device = [[NPU]]})
// CHECK-NEXT: %0 = relay.relu %x {relay.virtual_device = [[NPU]]}
// CHECK-NOT: relay.on_device
// CHECK: relay.relu %0 {relay.virtual_device = [[NPU]]}
// CHECK-NOT: relay.device_copy
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = relay.relu %x : tensor<4xf32> -> tensor<4xf32>
  %1 = relay.on_device %0 {virtual_device = #device.virtual_device<"npu", 0, target = "ethos-u", scope = "global">, constrain_result = true} : tensor<4xf32>
  %2 = relay.relu %1 : tensor<4xf32> -> tensor<4xf32>
  func.return %2 : tensor<4xf32>
}

// -----

// A body-only on_device (the default) computes its operand on the device and
// permits a copy to where its result is used.
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %x: tensor<4xf32> {relay.virtual_device = [[NPU]]}) -> (tensor<4xf32> {relay.virtual_device = [[CPU]]})
// CHECK-NEXT: %0 = relay.relu %x {relay.virtual_device = [[NPU]]}
// CHECK-NEXT: %1 = relay.device_copy %0 {src = [[NPU]], dst = [[CPU]]}
// CHECK-NEXT: %2 = relay.relu %1 {relay.virtual_device = [[CPU]]}
func.func @main(%x: tensor<4xf32>) -> (tensor<4xf32> {relay.virtual_device = #device.virtual_device<"cpu", 0, target = "c", scope = "global">}) {
  %0 = relay.relu %x : tensor<4xf32> -> tensor<4xf32>
  %1 = relay.on_device %0 {virtual_device = #device.virtual_device<"npu", 0, target = "ethos-u", scope = "global">} : tensor<4xf32>
  %2 = relay.relu %1 : tensor<4xf32> -> tensor<4xf32>
  func.return %2 : tensor<4xf32>
}

// -----

// A result-only on_device (constrain_body = false) puts its result on the device;
// an unconstrained operand follows it (TVM defaulting: no copy).
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %x: tensor<4xf32> {relay.virtual_device = [[NPU]]}) -> (tensor<4xf32> {relay.virtual_device = [[NPU]]})
// CHECK-NEXT: %0 = relay.relu %x {relay.virtual_device = [[NPU]]}
// CHECK-NOT: relay.device_copy
// CHECK: func.return
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = relay.relu %x : tensor<4xf32> -> tensor<4xf32>
  %1 = relay.on_device %0 {virtual_device = #device.virtual_device<"npu", 0, target = "ethos-u", scope = "global">, constrain_body = false, constrain_result = true} : tensor<4xf32>
  %2 = relay.relu %1 : tensor<4xf32> -> tensor<4xf32>
  func.return %2 : tensor<4xf32>
}

// -----

// A result-only on_device whose operand is held elsewhere becomes the copy.
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %x: tensor<4xf32> {relay.virtual_device = [[CPU]]}) -> (tensor<4xf32> {relay.virtual_device = [[NPU]]})
// CHECK-NEXT: %0 = relay.relu %x {relay.virtual_device = [[CPU]]}
// CHECK-NEXT: %1 = relay.device_copy %0 {src = [[CPU]], dst = [[NPU]]}
// CHECK-NEXT: %2 = relay.relu %1 {relay.virtual_device = [[NPU]]}
func.func @main(%x: tensor<4xf32> {relay.virtual_device = #device.virtual_device<"cpu", 0, target = "c", scope = "global">}) -> tensor<4xf32> {
  %0 = relay.relu %x : tensor<4xf32> -> tensor<4xf32>
  %1 = relay.on_device %0 {virtual_device = #device.virtual_device<"npu", 0, target = "ethos-u", scope = "global">, constrain_body = false, constrain_result = true} : tensor<4xf32>
  %2 = relay.relu %1 : tensor<4xf32> -> tensor<4xf32>
  func.return %2 : tensor<4xf32>
}

// -----

// A free on_device (neither constraint) imposes nothing: devices flow through
// it and no copy is made when none is needed.
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %x: tensor<4xf32> {relay.virtual_device = [[NPU]]}) -> (tensor<4xf32> {relay.virtual_device = [[NPU]]})
// CHECK-NOT: relay.device_copy
// CHECK: func.return
func.func @main(%x: tensor<4xf32> {relay.virtual_device = #device.virtual_device<"npu", 0, target = "ethos-u", scope = "global">}) -> tensor<4xf32> {
  %0 = relay.relu %x : tensor<4xf32> -> tensor<4xf32>
  %1 = relay.on_device %0 {virtual_device = #device.virtual_device<"cpu", 0, target = "c", scope = "global">, constrain_body = false} : tensor<4xf32>
  %2 = relay.relu %1 : tensor<4xf32> -> tensor<4xf32>
  func.return %2 : tensor<4xf32>
}

// -----

// A free on_device between two fixed devices becomes the copy.
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %x: tensor<4xf32> {relay.virtual_device = [[NPU]]}) -> (tensor<4xf32> {relay.virtual_device = [[CPU]]})
// CHECK: %[[C:.*]] = relay.device_copy %0 {src = [[NPU]], dst = [[CPU]]}
// CHECK: relay.relu %[[C]] {relay.virtual_device = [[CPU]]}
func.func @main(%x: tensor<4xf32> {relay.virtual_device = #device.virtual_device<"npu", 0, target = "ethos-u", scope = "global">}) -> (tensor<4xf32> {relay.virtual_device = #device.virtual_device<"cpu", 0, target = "c", scope = "global">}) {
  %0 = relay.relu %x : tensor<4xf32> -> tensor<4xf32>
  %1 = relay.on_device %0 {virtual_device = #device.virtual_device<"npu", 0, target = "ethos-u", scope = "global">, constrain_body = false} : tensor<4xf32>
  %2 = relay.relu %1 : tensor<4xf32> -> tensor<4xf32>
  func.return %2 : tensor<4xf32>
}

// -----

// A body-only on_device returned by main constrains main's result: no copy back
// to the default device.
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %x: tensor<4xf32> {relay.virtual_device = [[NPU]]}) -> (tensor<4xf32> {relay.virtual_device = [[NPU]]})
// CHECK: %0 = relay.relu %x {relay.virtual_device = [[NPU]]}
// CHECK-NEXT: func.return %0
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = relay.relu %x : tensor<4xf32> -> tensor<4xf32>
  %1 = relay.on_device %0 {virtual_device = #device.virtual_device<"npu", 0, target = "ethos-u", scope = "global">} : tensor<4xf32>
  func.return %1 : tensor<4xf32>
}

// -----

// Partially known devices join field by field: the argument gives the device
// type, the annotation the id and target; defaulting adds the scope.
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %x: tensor<4xf32> {relay.virtual_device = #device.virtual_device<"npu", 1, target = "ethos-u", scope = "global">}
// CHECK: relay.relu %x {relay.virtual_device = #device.virtual_device<"npu", 1, target = "ethos-u", scope = "global">}
func.func @main(%x: tensor<4xf32> {relay.virtual_device = #device.virtual_device<"npu">}) -> tensor<4xf32> {
  %0 = relay.relu %x : tensor<4xf32> -> tensor<4xf32>
  %1 = relay.on_device %0 {virtual_device = #device.virtual_device<id = 1, target = "ethos-u">, constrain_result = true} : tensor<4xf32>
  func.return %1 : tensor<4xf32>
}

// -----

// Defaulting fills only the unset fields, and takes the default's target only
// for the default's device type: <"dsp", 2> gets the scope, not the target.
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %x: tensor<4xf32> {relay.virtual_device = #device.virtual_device<"dsp", 2, scope = "global">}
func.func @main(%x: tensor<4xf32> {relay.virtual_device = #device.virtual_device<"dsp", 2>}) -> tensor<4xf32> {
  %0 = relay.relu %x : tensor<4xf32> -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

// <target = "c"> takes the default's device type, id and scope.
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %y: tensor<4xf32> {relay.virtual_device = [[CPU]]}) -> (tensor<4xf32> {relay.virtual_device = [[CPU]]})
func.func @main(%y: tensor<4xf32> {relay.virtual_device = #device.virtual_device<target = "c">}) -> tensor<4xf32> {
  %0 = relay.relu %y : tensor<4xf32> -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

// Several results of a function share its result domain (TVM: one tuple):
// a result computed on the npu is copied to it.
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %x: tensor<4xf32> {relay.virtual_device = [[NPU]]}, %y: tensor<4xf32> {relay.virtual_device = [[CPU]]}) -> (tensor<4xf32> {relay.virtual_device = [[CPU]]}, tensor<4xf32> {relay.virtual_device = [[CPU]]})
// CHECK: %[[C:.*]] = relay.device_copy %0 {src = [[NPU]], dst = [[CPU]]}
// CHECK: func.return %[[C]], %2
func.func @main(%x: tensor<4xf32>, %y: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = relay.relu %x : tensor<4xf32> -> tensor<4xf32>
  %1 = relay.on_device %0 {virtual_device = #device.virtual_device<"npu", 0, target = "ethos-u", scope = "global">} : tensor<4xf32>
  %2 = relay.relu %y : tensor<4xf32> -> tensor<4xf32>
  func.return %1, %2 : tensor<4xf32>, tensor<4xf32>
}

// -----

// Free parameters take the result's device (TVM DeviceDefaulter).
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %x: tensor<4xf32> {relay.virtual_device = [[NPU]]}, %y: tensor<4xf32> {relay.virtual_device = [[NPU]]}) -> (tensor<4xf32> {relay.virtual_device = [[NPU]]})
// CHECK: relay.add %x, %y {relay.virtual_device = [[NPU]]}
func.func @main(%x: tensor<4xf32>, %y: tensor<4xf32>) -> (tensor<4xf32> {relay.virtual_device = #device.virtual_device<"npu", 0, target = "ethos-u", scope = "global">}) {
  %0 = relay.add %x, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

// Copies on both sides of a call: @f is on the npu, main's values on the cpu.
// CHECK-LABEL: func.func @f(
// CHECK-SAME: %a: tensor<4xf32> {relay.virtual_device = [[NPU]]}) -> (tensor<4xf32> {relay.virtual_device = [[NPU]]})
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %x: tensor<4xf32> {relay.virtual_device = [[CPU]]}) -> (tensor<4xf32> {relay.virtual_device = [[CPU]]})
// CHECK: %[[IN:.*]] = relay.device_copy %x {src = [[CPU]], dst = [[NPU]]}
// CHECK: %[[R:.*]] = relay.call @f(%[[IN]]) {relay.virtual_device = [[NPU]]}
// CHECK: %[[OUT:.*]] = relay.device_copy %[[R]] {src = [[NPU]], dst = [[CPU]]}
// CHECK: relay.relu %[[OUT]] {relay.virtual_device = [[CPU]]}
func.func @f(%a: tensor<4xf32> {relay.virtual_device = #device.virtual_device<"npu", 0, target = "ethos-u", scope = "global">}) -> (tensor<4xf32> {relay.virtual_device = #device.virtual_device<"npu", 0, target = "ethos-u", scope = "global">}) {
  %0 = relay.relu %a : tensor<4xf32> -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = relay.on_device %x {virtual_device = #device.virtual_device<"cpu", 0, target = "c", scope = "global">} : tensor<4xf32>
  %1 = relay.call @f(%0) : (tensor<4xf32>) -> tensor<4xf32>
  %2 = relay.on_device %1 {virtual_device = #device.virtual_device<"npu", 0, target = "ethos-u", scope = "global">} : tensor<4xf32>
  %3 = relay.relu %2 : tensor<4xf32> -> tensor<4xf32>
  func.return %3 : tensor<4xf32>
}

// -----

// A function called from main with its own annotations: the annotation inside
// @f fixes its parameter (and both call sites' arguments, no polymorphism);
// its result is free and takes main's default; the copy is inside @f.
// CHECK-LABEL: func.func @f(
// CHECK-SAME: %a: tensor<4xf32> {relay.virtual_device = [[NPU]]}) -> (tensor<4xf32> {relay.virtual_device = [[CPU]]})
// CHECK: %0 = relay.relu %a {relay.virtual_device = [[NPU]]}
// CHECK: %1 = relay.device_copy %0 {src = [[NPU]], dst = [[CPU]]}
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %x: tensor<4xf32> {relay.virtual_device = [[NPU]]}, %y: tensor<4xf32> {relay.virtual_device = [[NPU]]}) -> (tensor<4xf32> {relay.virtual_device = [[CPU]]})
// CHECK: relay.call @f(%x) {relay.virtual_device = [[CPU]]}
// CHECK: relay.call @f(%y) {relay.virtual_device = [[CPU]]}
func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = relay.relu %a : tensor<4xf32> -> tensor<4xf32>
  %1 = relay.on_device %0 {virtual_device = #device.virtual_device<"npu", 0, target = "ethos-u", scope = "global">} : tensor<4xf32>
  %2 = relay.sigmoid %1 : tensor<4xf32> -> tensor<4xf32>
  func.return %2 : tensor<4xf32>
}
func.func @main(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %0 = relay.call @f(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = relay.call @f(%y) : (tensor<4xf32>) -> tensor<4xf32>
  %2 = relay.add %0, %1 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %2 : tensor<4xf32>
}

// -----

// Calls between relay functions nest: main -> @g -> @h, @h's annotation flows up.
// CHECK-LABEL: func.func @h(
// CHECK-SAME: %a: tensor<4xf32> {relay.virtual_device = [[NPU]]}) -> (tensor<4xf32> {relay.virtual_device = [[NPU]]})
// CHECK-LABEL: func.func @g(
// CHECK-SAME: %a: tensor<4xf32> {relay.virtual_device = [[NPU]]}) -> (tensor<4xf32> {relay.virtual_device = [[NPU]]})
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %x: tensor<4xf32> {relay.virtual_device = [[NPU]]}) -> (tensor<4xf32> {relay.virtual_device = [[NPU]]})
// CHECK-NOT: relay.device_copy
func.func @h(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = relay.relu %a : tensor<4xf32> -> tensor<4xf32>
  %1 = relay.on_device %0 {virtual_device = #device.virtual_device<"npu", 0, target = "ethos-u", scope = "global">} : tensor<4xf32>
  func.return %1 : tensor<4xf32>
}
func.func @g(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = relay.call @h(%a) : (tensor<4xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = relay.call @g(%x) : (tensor<4xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

// A tuple and its fields are on one device (TVM); a field computed elsewhere is
// copied, alone (never the whole tuple).
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %x: tensor<4xf32> {relay.virtual_device = [[NPU]]}, %y: tensor<4xf32> {relay.virtual_device = [[CPU]]}) -> (tensor<4xf32> {relay.virtual_device = [[CPU]]})
// CHECK: %0 = relay.relu %x {relay.virtual_device = [[NPU]]}
// CHECK: %[[C:.*]] = relay.device_copy %0 {src = [[NPU]], dst = [[CPU]]}
// CHECK: relay.tuple(%[[C]], %2)
// CHECK-NOT: relay.device_copy
func.func @main(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %0 = relay.relu %x : tensor<4xf32> -> tensor<4xf32>
  %1 = relay.on_device %0 {virtual_device = #device.virtual_device<"npu", 0, target = "ethos-u", scope = "global">} : tensor<4xf32>
  %2 = relay.relu %y : tensor<4xf32> -> tensor<4xf32>
  %t = relay.tuple(%1, %2) : (tensor<4xf32>, tensor<4xf32>) -> tuple<tensor<4xf32>, tensor<4xf32>>
  %g = relay.tuple_get_item %t[1] : tuple<tensor<4xf32>, tensor<4xf32>> -> tensor<4xf32>
  func.return %g : tensor<4xf32>
}

// -----

// Project, then copy: a field read from an annotated tuple moves alone, and
// the field not read is not copied.
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %x: tensor<4xf32> {relay.virtual_device = [[NPU]]}) -> (tensor<4xf32> {relay.virtual_device = [[CPU]]})
// CHECK: %t = relay.tuple(%0, %1)
// CHECK: %[[F:.*]] = relay.tuple_get_item %t[1]
// CHECK: %[[C:.*]] = relay.device_copy %[[F]] {src = [[NPU]], dst = [[CPU]]}
// CHECK-NOT: relay.device_copy
// CHECK: relay.relu %[[C]] {relay.virtual_device = [[CPU]]}
func.func @main(%x: tensor<4xf32>) -> (tensor<4xf32> {relay.virtual_device = #device.virtual_device<"cpu", 0, target = "c", scope = "global">}) {
  %0 = relay.relu %x : tensor<4xf32> -> tensor<4xf32>
  %1 = relay.sigmoid %x : tensor<4xf32> -> tensor<4xf32>
  %t = relay.tuple(%0, %1) : (tensor<4xf32>, tensor<4xf32>) -> tuple<tensor<4xf32>, tensor<4xf32>>
  %a = relay.on_device %t {virtual_device = #device.virtual_device<"npu", 0, target = "ethos-u", scope = "global">} : tuple<tensor<4xf32>, tensor<4xf32>>
  %g = relay.tuple_get_item %a[1] : tuple<tensor<4xf32>, tensor<4xf32>> -> tensor<4xf32>
  %2 = relay.relu %g : tensor<4xf32> -> tensor<4xf32>
  func.return %2 : tensor<4xf32>
}

// -----

// A parameter used on two devices (operators already placed, as an offload
// pass leaves them): it stays with its first user, and gets one copy per other
// device, right after it, shared by that device's users.
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %x: tensor<4xf32> {relay.virtual_device = [[NPU]]}) -> (tensor<4xf32> {relay.virtual_device = [[CPU]]})
// CHECK-NEXT: %[[C:.*]] = relay.device_copy %x {src = [[NPU]], dst = [[CPU]]}
// CHECK-NEXT: %[[R:.*]] = relay.relu %x {relay.virtual_device = [[NPU]]}
// CHECK-NEXT: %[[D:.*]] = relay.device_copy %[[R]] {src = [[NPU]], dst = [[CPU]]}
// CHECK-NEXT: %[[T:.*]] = relay.tanh %[[C]] {relay.virtual_device = [[CPU]]}
// CHECK-NEXT: %[[E:.*]] = relay.exp %[[C]] {relay.virtual_device = [[CPU]]}
// CHECK-NEXT: %[[S:.*]] = relay.add %[[T]], %[[E]] {relay.virtual_device = [[CPU]]}
// CHECK-NEXT: relay.add %[[S]], %[[D]] {relay.virtual_device = [[CPU]]}
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = relay.relu %x {relay.virtual_device = #device.virtual_device<"npu", 0, target = "ethos-u", scope = "global">} : tensor<4xf32> -> tensor<4xf32>
  %1 = relay.tanh %x {relay.virtual_device = #device.virtual_device<"cpu", 0, target = "c", scope = "global">} : tensor<4xf32> -> tensor<4xf32>
  %2 = relay.exp %x {relay.virtual_device = #device.virtual_device<"cpu", 0, target = "c", scope = "global">} : tensor<4xf32> -> tensor<4xf32>
  %3 = relay.add %1, %2 {relay.virtual_device = #device.virtual_device<"cpu", 0, target = "c", scope = "global">} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %4 = relay.add %3, %0 {relay.virtual_device = #device.virtual_device<"cpu", 0, target = "c", scope = "global">} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %4 : tensor<4xf32>
}

// -----

// An operator left unplaced between placed ones joins a neighbour when that
// saves a copy (TVM's free on_device rule).
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %x: tensor<4xf32> {relay.virtual_device = [[NPU]]}) -> (tensor<4xf32> {relay.virtual_device = [[CPU]]})
// CHECK: %0 = relay.relu %x {relay.virtual_device = [[NPU]]}
// CHECK: %1 = relay.sigmoid %0 {relay.virtual_device = [[NPU]]}
// CHECK: %[[C:.*]] = relay.device_copy %1 {src = [[NPU]], dst = [[CPU]]}
// CHECK: relay.tanh %[[C]] {relay.virtual_device = [[CPU]]}
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = relay.relu %x {relay.virtual_device = #device.virtual_device<"npu", 0, target = "ethos-u", scope = "global">} : tensor<4xf32> -> tensor<4xf32>
  %1 = relay.sigmoid %0 : tensor<4xf32> -> tensor<4xf32>
  %2 = relay.tanh %1 {relay.virtual_device = #device.virtual_device<"cpu", 0, target = "c", scope = "global">} : tensor<4xf32> -> tensor<4xf32>
  func.return %2 : tensor<4xf32>
}

// -----

// A constant used on two devices is duplicated, one per device.
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %x: tensor<4xf32> {relay.virtual_device = [[CPU]]}) -> (tensor<4xf32> {relay.virtual_device = [[NPU]]})
// CHECK-DAG: relay.constant dense<1.000000e+00> : tensor<4xf32> {relay.virtual_device = [[NPU]]}
// CHECK-DAG: relay.constant dense<1.000000e+00> : tensor<4xf32> {relay.virtual_device = [[CPU]]}
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c = relay.constant dense<1.0> : tensor<4xf32>
  %a = relay.add %x, %c : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %b = relay.on_device %a {virtual_device = #device.virtual_device<"cpu", 0, target = "c", scope = "global">} : tensor<4xf32>
  %d = relay.add %b, %c : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %e = relay.on_device %d {virtual_device = #device.virtual_device<"npu", 0, target = "ethos-u", scope = "global">, constrain_result = true} : tensor<4xf32>
  func.return %e : tensor<4xf32>
}

// -----

// An existing device_copy: partial src/dst are solved and written in full; a
// copy to the device it comes from is removed.
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %x: tensor<4xf32> {relay.virtual_device = [[CPU]]}) -> (tensor<4xf32> {relay.virtual_device = [[NPU]]})
// CHECK: %[[C:.*]] = relay.device_copy %0 {src = [[CPU]], dst = [[NPU]]}
// CHECK: relay.relu %[[C]] {relay.virtual_device = [[NPU]]}
// CHECK-NOT: relay.device_copy
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = relay.relu %x : tensor<4xf32> -> tensor<4xf32>
  %1 = relay.device_copy %0 {src = #device.virtual_device<"cpu">, dst = #device.virtual_device<"npu", target = "ethos-u">} : tensor<4xf32>
  %2 = relay.relu %1 : tensor<4xf32> -> tensor<4xf32>
  %3 = relay.device_copy %2 {src = #device.virtual_device<"npu", 0, target = "ethos-u", scope = "global">, dst = #device.virtual_device<"npu", 0, target = "ethos-u", scope = "global">} : tensor<4xf32>
  func.return %3 : tensor<4xf32>
}

// -----

// Calls to primitive functions are device-polymorphic: each runs where its
// operands are (two call sites, two devices).
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %x: tensor<4xf32> {relay.virtual_device = [[NPU]]}, %y: tensor<4xf32> {relay.virtual_device = [[CPU]]}) -> (tensor<4xf32> {relay.virtual_device = [[CPU]]})
// CHECK: relay.call @fused_relu(%x) {relay.virtual_device = [[NPU]]}
// CHECK: relay.call @fused_relu(%y) {relay.virtual_device = [[CPU]]}
func.func @fused_relu(%x: tensor<4xf32>) -> tensor<4xf32> attributes {relay.primitive} {
  %0 = relay.relu %x : tensor<4xf32> -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}
func.func @main(%x: tensor<4xf32> {relay.virtual_device = #device.virtual_device<"npu", 0, target = "ethos-u", scope = "global">}, %y: tensor<4xf32>) -> tensor<4xf32> {
  %0 = relay.call @fused_relu(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = relay.call @fused_relu(%y) : (tensor<4xf32>) -> tensor<4xf32>
  %2 = relay.on_device %0 {virtual_device = #device.virtual_device<"npu", 0, target = "ethos-u", scope = "global">} : tensor<4xf32>
  %3 = relay.add %2, %1 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %3 : tensor<4xf32>
}
