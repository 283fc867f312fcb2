// RUN: usmp-opt %s --split-input-file --verify-diagnostics | FileCheck %s

func.func @f() {
  // CHECK: invalid.mlir:5:3: error: 'tir.allocate' op tir.allocate must have a static shape, got memref<?xi8>
  %0 = tir.allocate {name_hint = "x"} : memref<?xi8>
  func.return
}

// -----

func.func @f() {
  // CHECK: error: 'tir.allocate_const' op tir.allocate_const: value of type tensor<4xi8> does not match the result memref<4xi32>
  %0 = tir.allocate_const {name_hint = "c", value = dense<[1, 2, 3, 4]> : tensor<4xi8>} : memref<4xi32>
  func.return
}

// -----

func.func @f(%a: memref<4xi8>) {
  // CHECK: error: 'tir.call' op tir.call: call_type 'fancy' is not one of unpacked, packed, cpacked
  tir.call @g(%a) {call_type = "fancy"} : (memref<4xi8>) -> ()
  func.return
}

// -----

// CHECK: error: pool 'p': kind 'scratch' is not one of workspace, constant
builtin.module attributes {tir.pools = [#tir.pool_info<"p", scratch>]} {
}

// -----

// CHECK: error: pool 'p': alignment 12 is not a positive power of two
builtin.module attributes {tir.pools = [#tir.pool_info<"p", workspace, alignment = 12>]} {
}

// -----

// CHECK: error: pool 'p': access 'rx' is not one of rw, ro
builtin.module attributes {tir.pools = [#tir.pool_info<"p", workspace, access = {c = "rx"}>]} {
}

// -----

// CHECK: error: unknown pool_info key 'limit' (expected size, alignment or access)
builtin.module attributes {tir.pools = [#tir.pool_info<"p", workspace, limit = 3>]} {
}
