// TVM's own device-planning tests (tests/python/relay/test_pass_plan_devices.py)
// that map onto this dialect, with TVM's setup: the default device is GPU. Each
// case names its TVM test; the CHECKs are TVM's expected module, except that
// on_device annotations are gone (their information is in the attributes).
// RUN: usmp-opt %s -p 'plan-devices{default_device=gpu default_target=cuda}' --split-input-file | filecheck %s -DCPU='#device.virtual_device<"cpu", 0, target = "c", scope = "global">' -DGPU='#device.virtual_device<"gpu", 0, target = "cuda", scope = "global">' -DSCOPE_A='#device.virtual_device<"cpu", 0, target = "c", scope = "scopeA">' -DSCOPE_B='#device.virtual_device<"cpu", 0, target = "c", scope = "scopeB">' -DTEX='#device.virtual_device<"gpu", 0, target = "cuda", scope = "global.texture">'
// RUN: usmp-opt %s -p 'plan-devices{default_device=gpu default_target=cuda}' --split-input-file | usmp-opt -p 'plan-devices{default_device=gpu default_target=cuda}' --split-input-file | filecheck %s -DCPU='#device.virtual_device<"cpu", 0, target = "c", scope = "global">' -DGPU='#device.virtual_device<"gpu", 0, target = "cuda", scope = "global">' -DSCOPE_A='#device.virtual_device<"cpu", 0, target = "c", scope = "scopeA">' -DSCOPE_B='#device.virtual_device<"cpu", 0, target = "c", scope = "scopeB">' -DTEX='#device.virtual_device<"gpu", 0, target = "cuda", scope = "global.texture">'

// TVM test_plain: everything defaults (to GPU here, as TVM's tests).
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %a: tensor<4xf32> {relay.virtual_device = [[GPU]]}, %b: tensor<4xf32> {relay.virtual_device = [[GPU]]}, %c: tensor<4xf32> {relay.virtual_device = [[GPU]]}, %d: tensor<4xf32> {relay.virtual_device = [[GPU]]}) -> (tensor<4xf32> {relay.virtual_device = [[GPU]]})
// CHECK-NOT: relay.device_copy
// CHECK: func.return
func.func @main(%a: tensor<4xf32>, %b: tensor<4xf32>, %c: tensor<4xf32>, %d: tensor<4xf32>) -> tensor<4xf32> {
  %0 = relay.add %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = relay.add %c, %d : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %2 = relay.subtract %0, %1 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %2 : tensor<4xf32>
}

// -----

// TVM test_left_add_on_cpu: a body-only on_device (the default) computes the
// add on CPU and permits a copy to its user's device.
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %a: tensor<4xf32> {relay.virtual_device = [[CPU]]}, %b: tensor<4xf32> {relay.virtual_device = [[CPU]]}, %c: tensor<4xf32> {relay.virtual_device = [[GPU]]}, %d: tensor<4xf32> {relay.virtual_device = [[GPU]]}) -> (tensor<4xf32> {relay.virtual_device = [[GPU]]})
// CHECK: %0 = relay.add %a, %b {relay.virtual_device = [[CPU]]}
// CHECK: %[[C:.*]] = relay.device_copy %0 {src = [[CPU]], dst = [[GPU]]}
// CHECK: relay.subtract %[[C]], %{{.*}} {relay.virtual_device = [[GPU]]}
func.func @main(%a: tensor<4xf32>, %b: tensor<4xf32>, %c: tensor<4xf32>, %d: tensor<4xf32>) -> tensor<4xf32> {
  %0 = relay.add %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = relay.on_device %0 {virtual_device = #device.virtual_device<"cpu", 0, target = "c", scope = "global">} : tensor<4xf32>
  %2 = relay.add %c, %d : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %3 = relay.subtract %1, %2 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %3 : tensor<4xf32>
}

// -----

// TVM test_left_add_on_cpu_via_copy (and _as_map: the device of every op):
// an explicit device_copy.
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %a: tensor<4xf32> {relay.virtual_device = [[CPU]]}, %b: tensor<4xf32> {relay.virtual_device = [[CPU]]}, %c: tensor<4xf32> {relay.virtual_device = [[GPU]]}, %d: tensor<4xf32> {relay.virtual_device = [[GPU]]}) -> (tensor<4xf32> {relay.virtual_device = [[GPU]]})
// CHECK: %0 = relay.add %a, %b {relay.virtual_device = [[CPU]]}
// CHECK: %1 = relay.device_copy %0 {src = [[CPU]], dst = [[GPU]]}
// CHECK: %2 = relay.add %c, %d {relay.virtual_device = [[GPU]]}
// CHECK: relay.subtract %1, %2 {relay.virtual_device = [[GPU]]}
func.func @main(%a: tensor<4xf32>, %b: tensor<4xf32>, %c: tensor<4xf32>, %d: tensor<4xf32>) -> tensor<4xf32> {
  %0 = relay.add %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = relay.device_copy %0 {src = #device.virtual_device<"cpu", 0, target = "c", scope = "global">, dst = #device.virtual_device<"gpu", 0, target = "cuda", scope = "global">} : tensor<4xf32>
  %2 = relay.add %c, %d : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %3 = relay.subtract %1, %2 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %3 : tensor<4xf32>
}

// -----

// TVM test_both_adds_on_cpu.
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %a: tensor<4xf32> {relay.virtual_device = [[CPU]]}, %b: tensor<4xf32> {relay.virtual_device = [[CPU]]}, %c: tensor<4xf32> {relay.virtual_device = [[CPU]]}, %d: tensor<4xf32> {relay.virtual_device = [[CPU]]}) -> (tensor<4xf32> {relay.virtual_device = [[GPU]]})
// CHECK-COUNT-2: relay.device_copy %{{.*}} {src = [[CPU]], dst = [[GPU]]}
// CHECK: relay.subtract {{.*}} {relay.virtual_device = [[GPU]]}
func.func @main(%a: tensor<4xf32>, %b: tensor<4xf32>, %c: tensor<4xf32>, %d: tensor<4xf32>) -> tensor<4xf32> {
  %0 = relay.add %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = relay.add %c, %d : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %2 = relay.on_device %0 {virtual_device = #device.virtual_device<"cpu", 0, target = "c", scope = "global">} : tensor<4xf32>
  %3 = relay.on_device %1 {virtual_device = #device.virtual_device<"cpu", 0, target = "c", scope = "global">} : tensor<4xf32>
  %4 = relay.subtract %2, %3 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %4 : tensor<4xf32>
}

// -----

// TVM test_sharing: the same add annotated twice: one copy per annotation.
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %a: tensor<4xf32> {relay.virtual_device = [[CPU]]}, %b: tensor<4xf32> {relay.virtual_device = [[CPU]]}) -> (tensor<4xf32> {relay.virtual_device = [[GPU]]})
// CHECK: %0 = relay.add %a, %b {relay.virtual_device = [[CPU]]}
// CHECK-COUNT-2: relay.device_copy %0 {src = [[CPU]], dst = [[GPU]]}
// CHECK: relay.subtract {{.*}} {relay.virtual_device = [[GPU]]}
func.func @main(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %0 = relay.add %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = relay.on_device %0 {virtual_device = #device.virtual_device<"cpu", 0, target = "c", scope = "global">} : tensor<4xf32>
  %2 = relay.on_device %0 {virtual_device = #device.virtual_device<"cpu", 0, target = "c", scope = "global">} : tensor<4xf32>
  %3 = relay.subtract %1, %2 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %3 : tensor<4xf32>
}

// -----

// TVM test_let_on_cpu (SSA values are TVM's let-bound values): the device
// flows from the annotated use.
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %a: tensor<4xf32> {relay.virtual_device = [[CPU]]}, %b: tensor<4xf32> {relay.virtual_device = [[CPU]]}, %c: tensor<4xf32> {relay.virtual_device = [[GPU]]}, %d: tensor<4xf32> {relay.virtual_device = [[GPU]]}) -> (tensor<4xf32> {relay.virtual_device = [[GPU]]})
// CHECK: %l = relay.add %a, %b {relay.virtual_device = [[CPU]]}
// CHECK: %r = relay.add %c, %d {relay.virtual_device = [[GPU]]}
// CHECK: relay.device_copy %l {src = [[CPU]], dst = [[GPU]]}
func.func @main(%a: tensor<4xf32>, %b: tensor<4xf32>, %c: tensor<4xf32>, %d: tensor<4xf32>) -> tensor<4xf32> {
  %l = relay.add %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %r = relay.add %c, %d : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %0 = relay.on_device %l {virtual_device = #device.virtual_device<"cpu", 0, target = "c", scope = "global">} : tensor<4xf32>
  %1 = relay.subtract %0, %r : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %1 : tensor<4xf32>
}

// -----

// TVM test_func_param_on_cpu (TVM's local function as a relay function):
// the on_device returned by @f is fixed, its parameters take its result's device,
// and the call site follows.
// CHECK-LABEL: func.func @f(
// CHECK-SAME: %x: tensor<4xf32> {relay.virtual_device = [[CPU]]}, %y: tensor<4xf32> {relay.virtual_device = [[CPU]]}) -> (tensor<4xf32> {relay.virtual_device = [[CPU]]})
// CHECK-NOT: relay.on_device
// CHECK: relay.add %x, %y {relay.virtual_device = [[CPU]]}
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %a: tensor<4xf32> {relay.virtual_device = [[CPU]]}, %b: tensor<4xf32> {relay.virtual_device = [[CPU]]}, %c: tensor<4xf32> {relay.virtual_device = [[CPU]]}, %d: tensor<4xf32> {relay.virtual_device = [[CPU]]}) -> (tensor<4xf32> {relay.virtual_device = [[CPU]]})
// CHECK-NOT: relay.device_copy
// CHECK: relay.call @f(%a, %b) {relay.virtual_device = [[CPU]]}
// CHECK: func.return
func.func @f(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %0 = relay.add %x, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = relay.on_device %0 {virtual_device = #device.virtual_device<"cpu", 0, target = "c", scope = "global">} : tensor<4xf32>
  func.return %1 : tensor<4xf32>
}
func.func @main(%a: tensor<4xf32>, %b: tensor<4xf32>, %c: tensor<4xf32>, %d: tensor<4xf32>) -> tensor<4xf32> {
  %1 = relay.call @f(%a, %b) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %2 = relay.add %c, %d : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %3 = relay.subtract %1, %2 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %3 : tensor<4xf32>
}

// -----

// TVM test_func_result_on_cpu: the call site's device flows into @f.
// CHECK-LABEL: func.func @f(
// CHECK-SAME: %x: tensor<4xf32> {relay.virtual_device = [[CPU]]}, %y: tensor<4xf32> {relay.virtual_device = [[CPU]]}) -> (tensor<4xf32> {relay.virtual_device = [[CPU]]})
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %a: tensor<4xf32> {relay.virtual_device = [[CPU]]}, %b: tensor<4xf32> {relay.virtual_device = [[CPU]]}, %c: tensor<4xf32> {relay.virtual_device = [[GPU]]}, %d: tensor<4xf32> {relay.virtual_device = [[GPU]]}) -> (tensor<4xf32> {relay.virtual_device = [[GPU]]})
// CHECK: %0 = relay.call @f(%a, %b) {relay.virtual_device = [[CPU]]}
// CHECK: relay.device_copy %0 {src = [[CPU]], dst = [[GPU]]}
func.func @f(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %0 = relay.add %x, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}
func.func @main(%a: tensor<4xf32>, %b: tensor<4xf32>, %c: tensor<4xf32>, %d: tensor<4xf32>) -> tensor<4xf32> {
  %0 = relay.call @f(%a, %b) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = relay.on_device %0 {virtual_device = #device.virtual_device<"cpu", 0, target = "c", scope = "global">} : tensor<4xf32>
  %2 = relay.add %c, %d : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %3 = relay.subtract %1, %2 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %3 : tensor<4xf32>
}

// -----

// TVM test_device_copy: the constant lives with its user.
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %x: tensor<4xf32> {relay.virtual_device = [[CPU]]}) -> (tensor<4xf32> {relay.virtual_device = [[GPU]]})
// CHECK: relay.constant {{.*}} {relay.virtual_device = [[GPU]]}
// CHECK: relay.add {{.*}} {relay.virtual_device = [[GPU]]}
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = relay.device_copy %x {src = #device.virtual_device<"cpu", 0, target = "c", scope = "global">, dst = #device.virtual_device<"gpu", 0, target = "cuda", scope = "global">} : tensor<4xf32>
  %c = relay.constant dense<1.0> : tensor<4xf32>
  %1 = relay.add %0, %c : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %1 : tensor<4xf32>
}

// -----

// TVM test_dynamic_input (static shapes here: nothing special either way).
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %x0: tensor<4xf32> {relay.virtual_device = [[GPU]]}, %x1: tensor<4xf32> {relay.virtual_device = [[GPU]]}) -> (tensor<4xf32> {relay.virtual_device = [[GPU]]})
func.func @main(%x0: tensor<4xf32>, %x1: tensor<4xf32>) -> tensor<4xf32> {
  %0 = relay.add %x0, %x1 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

// TVM test_redundant_annotation: two annotations of one value, two copies.
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %x: tensor<4xf32> {relay.virtual_device = [[CPU]]}, %y: tensor<4xf32> {relay.virtual_device = [[CPU]]}, %z: tensor<4xf32> {relay.virtual_device = [[GPU]]}) -> (tensor<4xf32> {relay.virtual_device = [[GPU]]})
// CHECK: %0 = relay.add %x, %y {relay.virtual_device = [[CPU]]}
// CHECK-COUNT-2: relay.device_copy %0 {src = [[CPU]], dst = [[GPU]]}
func.func @main(%x: tensor<4xf32>, %y: tensor<4xf32>, %z: tensor<4xf32>) -> tensor<4xf32> {
  %0 = relay.add %x, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = relay.on_device %0 {virtual_device = #device.virtual_device<"cpu", 0, target = "c", scope = "global">} : tensor<4xf32>
  %2 = relay.subtract %1, %z : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %3 = relay.on_device %0 {virtual_device = #device.virtual_device<"cpu", 0, target = "c", scope = "global">} : tensor<4xf32>
  %4 = relay.add %2, %3 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %4 : tensor<4xf32>
}

// -----

// TVM test_annotate_expr: an on_device returned by main is fixed: the result
// stays on CPU (no copy back to the default device).
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %x: tensor<4xf32> {relay.virtual_device = [[GPU]]}, %y: tensor<4xf32> {relay.virtual_device = [[GPU]]}, %z: tensor<4xf32> {relay.virtual_device = [[CPU]]}) -> (tensor<4xf32> {relay.virtual_device = [[CPU]]})
// CHECK: %0 = relay.add %x, %y {relay.virtual_device = [[GPU]]}
// CHECK-NEXT: %1 = relay.device_copy %0 {src = [[GPU]], dst = [[CPU]]}
// CHECK-NEXT: %2 = relay.subtract %1, %z {relay.virtual_device = [[CPU]]}
// CHECK-NEXT: func.return %2
func.func @main(%x: tensor<4xf32>, %y: tensor<4xf32>, %z: tensor<4xf32>) -> tensor<4xf32> {
  %0 = relay.add %x, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = relay.on_device %0 {virtual_device = #device.virtual_device<"gpu", 0, target = "cuda", scope = "global">} : tensor<4xf32>
  %2 = relay.subtract %1, %z : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %3 = relay.on_device %2 {virtual_device = #device.virtual_device<"cpu", 0, target = "c", scope = "global">} : tensor<4xf32>
  func.return %3 : tensor<4xf32>
}

// -----

// TVM test_annotate_all.
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %x: tensor<4xf32> {relay.virtual_device = [[CPU]]}, %y: tensor<4xf32> {relay.virtual_device = [[CPU]]}, %z: tensor<4xf32> {relay.virtual_device = [[CPU]]}) -> (tensor<4xf32> {relay.virtual_device = [[CPU]]})
// CHECK-NOT: relay.device_copy
// CHECK-NOT: relay.on_device
// CHECK: func.return
func.func @main(%x: tensor<4xf32>, %y: tensor<4xf32>, %z: tensor<4xf32>) -> tensor<4xf32> {
  %0 = relay.add %x, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = relay.on_device %0 {virtual_device = #device.virtual_device<"cpu", 0, target = "c", scope = "global">} : tensor<4xf32>
  %2 = relay.subtract %1, %z : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %3 = relay.on_device %2 {virtual_device = #device.virtual_device<"cpu", 0, target = "c", scope = "global">} : tensor<4xf32>
  func.return %3 : tensor<4xf32>
}

// -----

// TVM test_conv_network (multiply for conv2d).
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %d1: tensor<4xf32> {relay.virtual_device = [[CPU]]}, %d2: tensor<4xf32> {relay.virtual_device = [[CPU]]}, %w: tensor<4xf32> {relay.virtual_device = [[CPU]]}) -> (tensor<4xf32> {relay.virtual_device = [[CPU]]})
// CHECK-COUNT-2: relay.device_copy %{{.*}} {src = [[CPU]], dst = [[GPU]]}
// CHECK: %[[ADD:.*]] = relay.add {{.*}} {relay.virtual_device = [[GPU]]}
// CHECK: %[[BACK:.*]] = relay.device_copy %[[ADD]] {src = [[GPU]], dst = [[CPU]]}
// CHECK: relay.multiply %[[BACK]], %w {relay.virtual_device = [[CPU]]}
func.func @main(%d1: tensor<4xf32>, %d2: tensor<4xf32>, %w: tensor<4xf32>) -> tensor<4xf32> {
  %0 = relay.multiply %d1, %w : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = relay.multiply %d2, %w : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %2 = relay.on_device %0 {virtual_device = #device.virtual_device<"cpu", 0, target = "c", scope = "global">} : tensor<4xf32>
  %3 = relay.on_device %1 {virtual_device = #device.virtual_device<"cpu", 0, target = "c", scope = "global">} : tensor<4xf32>
  %4 = relay.add %2, %3 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %5 = relay.on_device %4 {virtual_device = #device.virtual_device<"gpu", 0, target = "cuda", scope = "global">} : tensor<4xf32>
  %6 = relay.multiply %5, %w : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %7 = relay.on_device %6 {virtual_device = #device.virtual_device<"cpu", 0, target = "c", scope = "global">} : tensor<4xf32>
  func.return %7 : tensor<4xf32>
}

// -----

// TVM test_tuple_get_item: project, then copy: only the two fields read cross
// devices, never the tuple.
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %x: tensor<4xf32> {relay.virtual_device = [[CPU]]}) -> (tensor<4xf32> {relay.virtual_device = [[GPU]]})
// CHECK: %t = relay.call @split(%x) {relay.virtual_device = [[CPU]]}
// CHECK-NOT: relay.device_copy %t
// CHECK: %[[F0:.*]] = relay.tuple_get_item %t[0]
// CHECK: %[[C0:.*]] = relay.device_copy %[[F0]] {src = [[CPU]], dst = [[GPU]]}
// CHECK: %[[F1:.*]] = relay.tuple_get_item %t[1]
// CHECK: %[[C1:.*]] = relay.device_copy %[[F1]] {src = [[CPU]], dst = [[GPU]]}
// CHECK: relay.subtract %[[C0]], %[[C1]] {relay.virtual_device = [[GPU]]}
func.func @split(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) attributes {relay.primitive} {
  %0 = relay.relu %x : tensor<4xf32> -> tensor<4xf32>
  %1 = relay.sigmoid %x : tensor<4xf32> -> tensor<4xf32>
  func.return %0, %1 : tensor<4xf32>, tensor<4xf32>
}
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %t = relay.call @split(%x) : (tensor<4xf32>) -> tuple<tensor<4xf32>, tensor<4xf32>>
  %0 = relay.on_device %t {virtual_device = #device.virtual_device<"cpu", 0, target = "c", scope = "global">} : tuple<tensor<4xf32>, tensor<4xf32>>
  %1 = relay.on_device %t {virtual_device = #device.virtual_device<"cpu", 0, target = "c", scope = "global">} : tuple<tensor<4xf32>, tensor<4xf32>>
  %2 = relay.tuple_get_item %0[0] : tuple<tensor<4xf32>, tensor<4xf32>> -> tensor<4xf32>
  %3 = relay.tuple_get_item %1[1] : tuple<tensor<4xf32>, tensor<4xf32>> -> tensor<4xf32>
  %4 = relay.subtract %2, %3 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %5 = relay.on_device %4 {virtual_device = #device.virtual_device<"gpu", 0, target = "cuda", scope = "global">} : tensor<4xf32>
  func.return %5 : tensor<4xf32>
}

// -----

// TVM test_propogation (relu for negative).
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %x: tensor<4xf32> {relay.virtual_device = [[CPU]]}) -> (tensor<4xf32> {relay.virtual_device = [[CPU]]})
// CHECK: %0 = relay.relu %x {relay.virtual_device = [[CPU]]}
// CHECK-COUNT-2: relay.device_copy %0 {src = [[CPU]], dst = [[GPU]]}
// CHECK: relay.add {{.*}} {relay.virtual_device = [[GPU]]}
// CHECK: relay.device_copy %{{.*}} {src = [[GPU]], dst = [[CPU]]}
// CHECK: relay.relu {{.*}} {relay.virtual_device = [[CPU]]}
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = relay.relu %x : tensor<4xf32> -> tensor<4xf32>
  %1 = relay.on_device %0 {virtual_device = #device.virtual_device<"cpu", 0, target = "c", scope = "global">} : tensor<4xf32>
  %2 = relay.relu %1 : tensor<4xf32> -> tensor<4xf32>
  %3 = relay.on_device %0 {virtual_device = #device.virtual_device<"cpu", 0, target = "c", scope = "global">} : tensor<4xf32>
  %4 = relay.relu %3 : tensor<4xf32> -> tensor<4xf32>
  %5 = relay.on_device %2 {virtual_device = #device.virtual_device<"gpu", 0, target = "cuda", scope = "global">} : tensor<4xf32>
  %6 = relay.on_device %4 {virtual_device = #device.virtual_device<"gpu", 0, target = "cuda", scope = "global">} : tensor<4xf32>
  %7 = relay.add %5, %6 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %8 = relay.on_device %7 {virtual_device = #device.virtual_device<"gpu", 0, target = "cuda", scope = "global">} : tensor<4xf32>
  %9 = relay.relu %8 : tensor<4xf32> -> tensor<4xf32>
  %10 = relay.on_device %9 {virtual_device = #device.virtual_device<"cpu", 0, target = "c", scope = "global">} : tensor<4xf32>
  func.return %10 : tensor<4xf32>
}

// -----

// TVM test_fusible_network.
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %x: tensor<4xf32> {relay.virtual_device = [[GPU]]}, %y: tensor<4xf32> {relay.virtual_device = [[GPU]]}) -> (tensor<4xf32> {relay.virtual_device = [[CPU]]})
// CHECK: %0 = relay.add %x, %y {relay.virtual_device = [[GPU]]}
// CHECK: %[[C1:.*]] = relay.device_copy %0 {src = [[GPU]], dst = [[CPU]]}
// CHECK: %[[N:.*]] = relay.relu %[[C1]] {relay.virtual_device = [[CPU]]}
// CHECK: %[[C2:.*]] = relay.device_copy %[[N]] {src = [[CPU]], dst = [[GPU]]}
// CHECK: %[[M:.*]] = relay.relu %0 {relay.virtual_device = [[GPU]]}
// CHECK: %[[A:.*]] = relay.add %[[C2]], %[[M]] {relay.virtual_device = [[GPU]]}
// CHECK: %[[C3:.*]] = relay.device_copy %[[A]] {src = [[GPU]], dst = [[CPU]]}
// CHECK: relay.relu %[[C3]] {relay.virtual_device = [[CPU]]}
func.func @main(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %0 = relay.add %x, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = relay.on_device %0 {virtual_device = #device.virtual_device<"gpu", 0, target = "cuda", scope = "global">} : tensor<4xf32>
  %2 = relay.relu %1 : tensor<4xf32> -> tensor<4xf32>
  %3 = relay.on_device %2 {virtual_device = #device.virtual_device<"cpu", 0, target = "c", scope = "global">} : tensor<4xf32>
  %4 = relay.relu %0 : tensor<4xf32> -> tensor<4xf32>
  %5 = relay.add %3, %4 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %6 = relay.on_device %5 {virtual_device = #device.virtual_device<"gpu", 0, target = "cuda", scope = "global">} : tensor<4xf32>
  %7 = relay.relu %6 : tensor<4xf32> -> tensor<4xf32>
  %8 = relay.on_device %7 {virtual_device = #device.virtual_device<"cpu", 0, target = "c", scope = "global">} : tensor<4xf32>
  func.return %8 : tensor<4xf32>
}

// -----

// TVM test_unpropagatable_graph.
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %a: tensor<4xf32> {relay.virtual_device = [[CPU]]}, %b: tensor<4xf32> {relay.virtual_device = [[CPU]]}, %c: tensor<4xf32> {relay.virtual_device = [[GPU]]}, %d: tensor<4xf32> {relay.virtual_device = [[GPU]]}) -> (tensor<4xf32> {relay.virtual_device = [[CPU]]})
// CHECK: %0 = relay.add %a, %b {relay.virtual_device = [[CPU]]}
// CHECK: %1 = relay.multiply %c, %d {relay.virtual_device = [[GPU]]}
// CHECK: %[[C:.*]] = relay.device_copy %1 {src = [[GPU]], dst = [[CPU]]}
// CHECK: relay.subtract %0, %[[C]] {relay.virtual_device = [[CPU]]}
func.func @main(%a: tensor<4xf32>, %b: tensor<4xf32>, %c: tensor<4xf32>, %d: tensor<4xf32>) -> tensor<4xf32> {
  %0 = relay.add %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = relay.multiply %c, %d : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %2 = relay.on_device %0 {virtual_device = #device.virtual_device<"cpu", 0, target = "c", scope = "global">} : tensor<4xf32>
  %3 = relay.on_device %1 {virtual_device = #device.virtual_device<"gpu", 0, target = "cuda", scope = "global">} : tensor<4xf32>
  %4 = relay.subtract %2, %3 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %5 = relay.on_device %4 {virtual_device = #device.virtual_device<"cpu", 0, target = "c", scope = "global">} : tensor<4xf32>
  func.return %5 : tensor<4xf32>
}

// -----

// TVM test_global: @f's parameters take different devices from its annotations
// and its result's default; main's arguments follow the call.
// CHECK-LABEL: func.func @f(
// CHECK-SAME: %a: tensor<4xf32> {relay.virtual_device = [[GPU]]}, %b: tensor<4xf32> {relay.virtual_device = [[CPU]]}) -> (tensor<4xf32> {relay.virtual_device = [[GPU]]})
// CHECK: %[[C:.*]] = relay.device_copy %b {src = [[CPU]], dst = [[GPU]]}
// CHECK: relay.add %a, %[[C]] {relay.virtual_device = [[GPU]]}
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %x: tensor<4xf32> {relay.virtual_device = [[CPU]]}, %y: tensor<4xf32> {relay.virtual_device = [[GPU]]}) -> (tensor<4xf32> {relay.virtual_device = [[GPU]]})
// CHECK: relay.call @f(%y, %x) {relay.virtual_device = [[GPU]]}
func.func @f(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %0 = relay.on_device %b {virtual_device = #device.virtual_device<"cpu", 0, target = "c", scope = "global">} : tensor<4xf32>
  %1 = relay.add %a, %0 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %1 : tensor<4xf32>
}
func.func @main(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %0 = relay.call @f(%y, %x) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

// TVM test_free_on_device: a free on_device (neither constraint) permits a
// copy but lets devices flow; %a's unset memory scope joins scopeB.
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %a: tensor<4xf32> {relay.virtual_device = [[SCOPE_B]]}, %b: tensor<4xf32> {relay.virtual_device = [[SCOPE_A]]}, %c: tensor<4xf32> {relay.virtual_device = [[SCOPE_B]]}) -> (tensor<4xf32> {relay.virtual_device = [[SCOPE_A]]})
// CHECK: relay.call @on_scope_b(%a) {relay.virtual_device = [[SCOPE_B]]}
// CHECK: %[[C:.*]] = relay.device_copy %b {src = [[SCOPE_A]], dst = [[SCOPE_B]]}
// CHECK: relay.call @on_scope_b(%[[C]]) {relay.virtual_device = [[SCOPE_B]]}
// CHECK: relay.call @on_scope_b(%c) {relay.virtual_device = [[SCOPE_B]]}
// CHECK: %3 = relay.add %0, %1 {relay.virtual_device = [[SCOPE_B]]}
// CHECK: %4 = relay.add %3, %2 {relay.virtual_device = [[SCOPE_B]]}
// CHECK: %5 = relay.device_copy %4 {src = [[SCOPE_B]], dst = [[SCOPE_A]]}
// CHECK: func.return %5
func.func @on_scope_b(%x: tensor<4xf32> {relay.virtual_device = #device.virtual_device<"cpu", 0, target = "c", scope = "scopeB">}) -> (tensor<4xf32> {relay.virtual_device = #device.virtual_device<"cpu", 0, target = "c", scope = "scopeB">}) {
  func.return %x : tensor<4xf32>
}
func.func @main(%a: tensor<4xf32> {relay.virtual_device = #device.virtual_device<"cpu", 0, target = "c">}, %b: tensor<4xf32> {relay.virtual_device = #device.virtual_device<"cpu", 0, target = "c", scope = "scopeA">}, %c: tensor<4xf32> {relay.virtual_device = #device.virtual_device<"cpu", 0, target = "c", scope = "scopeB">}) -> (tensor<4xf32> {relay.virtual_device = #device.virtual_device<"cpu", 0, target = "c", scope = "scopeA">}) {
  %fa = relay.on_device %a {virtual_device = #device.virtual_device<"cpu", 0, target = "c">, constrain_body = false} : tensor<4xf32>
  %0 = relay.call @on_scope_b(%fa) : (tensor<4xf32>) -> tensor<4xf32>
  %fb = relay.on_device %b {virtual_device = #device.virtual_device<"cpu", 0, target = "c">, constrain_body = false} : tensor<4xf32>
  %1 = relay.call @on_scope_b(%fb) : (tensor<4xf32>) -> tensor<4xf32>
  %fc = relay.on_device %c {virtual_device = #device.virtual_device<"cpu", 0, target = "c">, constrain_body = false} : tensor<4xf32>
  %2 = relay.call @on_scope_b(%fc) : (tensor<4xf32>) -> tensor<4xf32>
  %3 = relay.add %0, %1 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %4 = relay.add %3, %2 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %5 = relay.on_device %4 {virtual_device = #device.virtual_device<"cpu", 0, target = "c">, constrain_body = false} : tensor<4xf32>
  func.return %5 : tensor<4xf32>
}

// -----

// TVM test_primitive: primitive functions with annotated parameters plan
// without failure (they are device-polymorphic and not entered).
// CHECK-LABEL: func.func @main
// CHECK-SAME: -> (tensor<4xf32> {relay.virtual_device = [[TEX]]})
// CHECK: relay.call @add(%{{.*}}, %{{.*}}) {relay.virtual_device = [[TEX]]}
func.func @layout(%a: tensor<4xf32>) -> tensor<4xf32> attributes {relay.primitive} {
  %0 = relay.relu %a : tensor<4xf32> -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}
func.func @add(%a: tensor<4xf32> {relay.virtual_device = #device.virtual_device<"gpu", 0, target = "cuda", scope = "global">}, %b: tensor<4xf32> {relay.virtual_device = #device.virtual_device<"gpu", 0, target = "cuda", scope = "global">}) -> tensor<4xf32> attributes {relay.primitive} {
  %0 = relay.add %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}
func.func @main(%d1: tensor<4xf32>, %d2: tensor<4xf32>) -> (tensor<4xf32> {relay.virtual_device = #device.virtual_device<"gpu", 0, target = "cuda", scope = "global.texture">}) {
  %1 = relay.call @layout(%d1) : (tensor<4xf32>) -> tensor<4xf32>
  %3 = relay.call @layout(%d2) : (tensor<4xf32>) -> tensor<4xf32>
  %6 = relay.call @add(%1, %3) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %10 = relay.call @layout(%6) : (tensor<4xf32>) -> tensor<4xf32>
  func.return %10 : tensor<4xf32>
}

// -----

// TVM test_conflicated_inputs (phase 1 conflict resolution): %b is read by an
// add on CPU and by one on GPU, and nothing fixes %b itself. It stays where
// its first use put it (CPU); the GPU add reads a copy.
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %a: tensor<4xf32> {relay.virtual_device = [[CPU]]}, %b: tensor<4xf32> {relay.virtual_device = [[CPU]]}, %c: tensor<4xf32> {relay.virtual_device = [[GPU]]}) -> (tensor<4xf32> {relay.virtual_device = [[GPU]]})
// CHECK: %[[BC:.*]] = relay.device_copy %b {src = [[CPU]], dst = [[GPU]]}
// CHECK: %[[X:.*]] = relay.add %a, %b {relay.virtual_device = [[CPU]]}
// CHECK: %[[XC:.*]] = relay.device_copy %[[X]] {src = [[CPU]], dst = [[GPU]]}
// CHECK: %[[Y:.*]] = relay.add %[[BC]], %c {relay.virtual_device = [[GPU]]}
// CHECK: relay.subtract %[[XC]], %[[Y]] {relay.virtual_device = [[GPU]]}
func.func @main(%a: tensor<4xf32>, %b: tensor<4xf32>, %c: tensor<4xf32>) -> tensor<4xf32> {
  %0 = relay.add %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = relay.on_device %0 {virtual_device = #device.virtual_device<"cpu", 0, target = "c", scope = "global">} : tensor<4xf32>
  %2 = relay.add %b, %c : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %3 = relay.on_device %2 {virtual_device = #device.virtual_device<"gpu", 0, target = "cuda", scope = "global">} : tensor<4xf32>
  %4 = relay.subtract %1, %3 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %4 : tensor<4xf32>
}
