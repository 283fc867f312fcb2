// RUN: usmp-opt %s -p 'usmp-plan-memory{use_workspace_io=true}' | FileCheck %s
// RUN: usmp-opt %s -p 'usmp-plan-memory{use_workspace_io=true overlap=false}' | FileCheck %s --check-prefix=OFF

// With overlaps (the default) relu, relu and the row sum (broadcast back
// over its row) run in place: x, sid_0, sid_1 and y share their 64 bytes.
// Without, each call's input and output are disjoint: 128 bytes.
// CHECK: tir.pools = [#tir.pool_info<"global_workspace", workspace, size = 64,
// CHECK-LABEL: func.func @main
// CHECK-SAME: %x: memref<8x8xi8> {tir.pool_allocation = #tir.pool_allocation<"global_workspace", 0>}
// CHECK-SAME: %y: memref<8x8xi8> {tir.pool_allocation = #tir.pool_allocation<"global_workspace", 0>}
// CHECK: tir.allocate {name_hint = "sid_0", pool_allocation = #tir.pool_allocation<"global_workspace", 0>}
// CHECK: tir.allocate {name_hint = "sid_1", pool_allocation = #tir.pool_allocation<"global_workspace", 0>}
// OFF: tir.pools = [#tir.pool_info<"global_workspace", workspace, size = 128,
func.func @relu(%in: memref<8x8xi8>, %out: memref<8x8xi8>) attributes {tir.prim_func} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %z = arith.constant 0 : i8
  scf.for %i = %c0 to %c8 step %c1 {
    scf.for %j = %c0 to %c8 step %c1 {
      %v = memref.load %in[%i, %j] : memref<8x8xi8>
      %r = arith.maxsi %v, %z : i8
      memref.store %r, %out[%i, %j] : memref<8x8xi8>
    }
  }
  func.return
}
func.func @row_sum(%in: memref<8x8xi8>, %out: memref<8x8xi8>) attributes {tir.prim_func} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %z = arith.constant 0 : i8
  scf.for %i = %c0 to %c8 step %c1 {
    %s = scf.for %k = %c0 to %c8 step %c1 iter_args(%acc = %z) -> (i8) {
      %v = memref.load %in[%i, %k] : memref<8x8xi8>
      %a = arith.addi %acc, %v : i8
      scf.yield %a : i8
    }
    scf.for %j = %c0 to %c8 step %c1 {
      memref.store %s, %out[%i, %j] : memref<8x8xi8>
    }
  }
  func.return
}
func.func @main(%x: memref<8x8xi8>, %y: memref<8x8xi8>) attributes {tir.prim_func, tir.main, tir.input_names = ["x"], tir.output_names = ["y"]} {
  %0 = tir.allocate {name_hint = "sid_0"} : memref<8x8xi8>
  %1 = tir.allocate {name_hint = "sid_1"} : memref<8x8xi8>
  tir.call @relu(%x, %0) : (memref<8x8xi8>, memref<8x8xi8>) -> ()
  tir.call @relu(%0, %1) : (memref<8x8xi8>, memref<8x8xi8>) -> ()
  tir.call @row_sum(%1, %y) : (memref<8x8xi8>, memref<8x8xi8>) -> ()
  func.return
}
