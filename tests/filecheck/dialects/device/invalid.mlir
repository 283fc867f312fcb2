// RUN: usmp-opt %s --split-input-file --verify-diagnostics | FileCheck %s

// CHECK: error: virtual_device: device id must be >= 0
builtin.module attributes {test.a = #device.virtual_device<"cpu", -1>} {
}

// -----

// CHECK: invalid.mlir:[[# @LINE + 1]]:82: error: unknown virtual_device key 'memory' (expected target or scope)
builtin.module attributes {test.a = #device.virtual_device<"cpu", 0, memory = "x">} {
}
