// RUN: usmp-opt %s | usmp-opt | FileCheck %s
// RUN: usmp-opt %s --print-op-generic | usmp-opt | FileCheck %s

// CHECK:      builtin.module attributes {
// CHECK-SAME: test.a = #device.virtual_device<"cpu", 0>
// CHECK-SAME: test.b = #device.virtual_device<"npu", 1, target = "ethos-u">
// CHECK-SAME: test.c = #device.virtual_device<"cpu", 0, target = "c", scope = "global">
// CHECK-SAME: test.d = #device.virtual_device<"cpu", 0, scope = "sram">
builtin.module attributes {
  test.a = #device.virtual_device<"cpu", 0>,
  test.b = #device.virtual_device<"npu", 1, target = "ethos-u">,
  test.c = #device.virtual_device<"cpu", 0, scope = "global", target = "c">,
  test.d = #device.virtual_device<"cpu", 0, scope = "sram">
} {
}
