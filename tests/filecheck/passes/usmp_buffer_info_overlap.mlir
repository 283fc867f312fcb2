// RUN: usmp-opt %s -p 'usmp-buffer-info{overlap=true use_workspace_io=true}' | FileCheck %s
// RUN: usmp-opt %s -p 'usmp-buffer-info{use_workspace_io=true}' | FileCheck %s --check-prefix=OFF

// Allowed overlaps, from each kernel's traced loop nest: on the target
// buffer (first written by a call), the source it may overlap (read for the
// last time by that call) with the largest shift of the target's start.
// Elementwise (relu) and a row reduction broadcast back over its row
// (row_sum) are in place (0); a transpose writes its first output row
// before reading its input's last column: its output must start 49 bytes
// below its input, not at it; a column reduction re-reads every input row
// for each output row: 56 bytes below (8 bytes shared), never in place.
// CHECK-LABEL: func.func @main
// CHECK-SAME: %y: memref<8x8xi8> {usmp.buffer = "y", {{.*}}, usmp.overlaps = {sid_3 = 0 : i64}}
// CHECK: usmp.buffer = "sid_0", {{.*}}, usmp.overlaps = {x = 0 : i64}
// CHECK: usmp.buffer = "sid_1", {{.*}}, usmp.overlaps = {sid_0 = 0 : i64}
// CHECK: usmp.buffer = "sid_2", {{.*}}, usmp.overlaps = {sid_1 = -49 : i64}
// CHECK: usmp.buffer = "sid_3", {{.*}}, usmp.overlaps = {sid_2 = -56 : i64}
// OFF-NOT: usmp.overlaps
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
func.func @transpose(%in: memref<8x8xi8>, %out: memref<8x8xi8>) attributes {tir.prim_func} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  scf.for %i = %c0 to %c8 step %c1 {
    scf.for %j = %c0 to %c8 step %c1 {
      %v = memref.load %in[%j, %i] : memref<8x8xi8>
      memref.store %v, %out[%i, %j] : memref<8x8xi8>
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
func.func @col_sum(%in: memref<8x8xi8>, %out: memref<8x8xi8>) attributes {tir.prim_func} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %z = arith.constant 0 : i8
  scf.for %i = %c0 to %c8 step %c1 {
    scf.for %j = %c0 to %c8 step %c1 {
      %s = scf.for %k = %c0 to %c8 step %c1 iter_args(%acc = %z) -> (i8) {
        %v = memref.load %in[%k, %j] : memref<8x8xi8>
        %a = arith.addi %acc, %v : i8
        scf.yield %a : i8
      }
      memref.store %s, %out[%i, %j] : memref<8x8xi8>
    }
  }
  func.return
}
func.func @main(%x: memref<8x8xi8>, %y: memref<8x8xi8>) attributes {tir.prim_func, tir.main, tir.input_names = ["x"], tir.output_names = ["y"]} {
  %0 = tir.allocate {name_hint = "sid_0"} : memref<8x8xi8>
  %1 = tir.allocate {name_hint = "sid_1"} : memref<8x8xi8>
  %2 = tir.allocate {name_hint = "sid_2"} : memref<8x8xi8>
  %3 = tir.allocate {name_hint = "sid_3"} : memref<8x8xi8>
  tir.call @relu(%x, %0) : (memref<8x8xi8>, memref<8x8xi8>) -> ()
  tir.call @relu(%0, %1) : (memref<8x8xi8>, memref<8x8xi8>) -> ()
  tir.call @transpose(%1, %2) : (memref<8x8xi8>, memref<8x8xi8>) -> ()
  tir.call @col_sum(%2, %3) : (memref<8x8xi8>, memref<8x8xi8>) -> ()
  tir.call @row_sum(%3, %y) : (memref<8x8xi8>, memref<8x8xi8>) -> ()
  func.return
}
