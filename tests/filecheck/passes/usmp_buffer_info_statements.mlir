// RUN: usmp-opt %s -p usmp-buffer-info --split-input-file | FileCheck %s
// RUN: usmp-opt %s -p usmp,usmp-validate --split-input-file | FileCheck %s --check-prefix=PLAN

// Liveness per statement (TVM's extract_buffer_info): a call is refined into
// the statements of its callee (a top-level loop nest is one), numbered in
// execution order ("ticks", usmp.ticks). The kernel copies its input into a
// scratch in one loop and the scratch into its output in a second. Called
// three times in a chain, x -> sid_0 -> sid_1 -> y: the second call reads
// sid_0 only in its first loop and writes sid_1 only in its second, so sid_0
// and sid_1 share bytes; the scratch conflicts with both (each call uses it
// in both loops). 128 B. (With liveness per call all three conflict, and
// only usmp_overlap's replay of the kernel lets sid_0 and sid_1 share.)
// (usmp runs usmp-replay, which proves the sharing byte by byte.)
// CHECK-LABEL: func.func @copy_twice
// CHECK: usmp.buffer = "copy_twice/scratch", {{.*}} usmp.live = array<i64: 0, 3>, {{.*}} usmp.conflicts = ["sid_0", "sid_1"], usmp.ticks = array<i64: 0, 6>
// CHECK-LABEL: func.func @chain_main
// CHECK: usmp.buffer = "sid_0", {{.*}} usmp.live = array<i64: 0, 2>, {{.*}} usmp.conflicts = ["copy_twice/scratch"], usmp.ticks = array<i64: 1, 3>
// CHECK: usmp.buffer = "sid_1", {{.*}} usmp.live = array<i64: 1, 3>, {{.*}} usmp.conflicts = ["copy_twice/scratch"], usmp.ticks = array<i64: 3, 5>
// PLAN: #tir.pool_info<"global_workspace", workspace, size = 128
// PLAN-LABEL: func.func @chain_main
// PLAN: %[[O0:.*]] = arith.constant [[OFF:[0-9]+]] : index
// PLAN-NEXT: memref.view %{{.*}}[%[[O0]]][] : memref<128xi8> to memref<64xi8>
// PLAN-NEXT: %[[O1:.*]] = arith.constant [[OFF]] : index
// PLAN-NEXT: memref.view %{{.*}}[%[[O1]]][] : memref<128xi8> to memref<64xi8>
func.func @copy_twice(%in: memref<64xi8>, %out: memref<64xi8>) attributes {tir.prim_func} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant 64 : index
  %s = tir.allocate {name_hint = "scratch"} : memref<64xi8>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %in[%i] : memref<64xi8>
    memref.store %v, %s[%i] : memref<64xi8>
  }
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %s[%i] : memref<64xi8>
    memref.store %v, %out[%i] : memref<64xi8>
  }
  func.return
}
func.func @chain_main(%x: memref<64xi8>, %y: memref<64xi8>) attributes {tir.prim_func, tir.main, tir.input_names = ["x"], tir.output_names = ["y"]} {
  %0 = tir.allocate {name_hint = "sid_0"} : memref<64xi8>
  %1 = tir.allocate {name_hint = "sid_1"} : memref<64xi8>
  tir.call @copy_twice(%x, %0) : (memref<64xi8>, memref<64xi8>) -> ()
  tir.call @copy_twice(%0, %1) : (memref<64xi8>, memref<64xi8>) -> ()
  tir.call @copy_twice(%1, %y) : (memref<64xi8>, memref<64xi8>) -> ()
  func.return
}

// -----

// Two scratch buffers of one kernel used in different loops share bytes:
// 'a' lives over the first two loops, 'b' over the last two. A scratch
// nothing touches is never live. 32 B (sid_0 and one 16 B slot for a, b
// and the unused scratch); 64 B with liveness per call.
// CHECK-LABEL: func.func @two_loops
// CHECK: usmp.buffer = "two_loops/a", {{.*}} usmp.conflicts = ["sid_0"], usmp.ticks = array<i64: 0, 2, 4, 6>
// CHECK: usmp.buffer = "two_loops/b", {{.*}} usmp.conflicts = ["sid_0"], usmp.ticks = array<i64: 2, 4, 6, 8>
// CHECK: usmp.buffer = "two_loops/unused", {{.*}} usmp.conflicts = [], usmp.ticks = array<i64>
// PLAN: #tir.pool_info<"global_workspace", workspace, size = 32
func.func @two_loops(%in: memref<16xi8>, %out: memref<16xi8>) attributes {tir.prim_func} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant 16 : index
  %a = tir.allocate {name_hint = "a"} : memref<16xi8>
  %b = tir.allocate {name_hint = "b"} : memref<16xi8>
  %u = tir.allocate {name_hint = "unused"} : memref<16xi8>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %in[%i] : memref<16xi8>
    memref.store %v, %a[%i] : memref<16xi8>
  }
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %a[%i] : memref<16xi8>
    memref.store %v, %out[%i] : memref<16xi8>
  }
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %out[%i] : memref<16xi8>
    memref.store %v, %b[%i] : memref<16xi8>
  }
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %b[%i] : memref<16xi8>
    memref.store %v, %out[%i] : memref<16xi8>
  }
  func.return
}
func.func @loops_main(%x: memref<16xi8>, %y: memref<16xi8>) attributes {tir.prim_func, tir.main, tir.input_names = ["x"], tir.output_names = ["y"]} {
  %0 = tir.allocate {name_hint = "sid_0"} : memref<16xi8>
  tir.call @two_loops(%x, %0) : (memref<16xi8>, memref<16xi8>) -> ()
  tir.call @two_loops(%0, %y) : (memref<16xi8>, memref<16xi8>) -> ()
  func.return
}

// -----

// An allocation inside a parallel loop is per iteration, thread-local
// (TVM's test_parallel_serial_mixed_for_loops): not a buffer for the planner,
// at any depth below the loop; usmp leaves it to the code generator. Only the
// padded copy is planned.
// CHECK-LABEL: func.func @conv
// CHECK: usmp.buffer = "conv/padded"
// CHECK-NOT: usmp.buffer
// CHECK: "scf.parallel"
// CHECK: tir.allocate {name_hint = "per_thread"} : memref<4xi32>
// CHECK: tir.allocate {name_hint = "acc"} : memref<4xi32>
// PLAN: #tir.pool_info<"global_workspace", workspace, size = 4
// PLAN-LABEL: func.func @conv
// PLAN: %padded = memref.view
// PLAN: "scf.parallel"
// PLAN: tir.allocate {name_hint = "per_thread"} : memref<4xi32>
// PLAN: tir.allocate {name_hint = "acc"} : memref<4xi32>
func.func @conv(%in: memref<4xi8>, %out: memref<4xi8>) attributes {tir.prim_func} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %padded = tir.allocate {name_hint = "padded"} : memref<4xi8>
  scf.for %i = %c0 to %c4 step %c1 {
    %v = memref.load %in[%i] : memref<4xi8>
    memref.store %v, %padded[%i] : memref<4xi8>
  }
  "scf.parallel"(%c0, %c4, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%p: index):
    %t = tir.allocate {name_hint = "per_thread"} : memref<4xi32>
    scf.for %j = %c0 to %c1 step %c1 {
      %acc = tir.allocate {name_hint = "acc"} : memref<4xi32>
      %v = memref.load %padded[%p] : memref<4xi8>
      memref.store %v, %out[%p] : memref<4xi8>
    }
    scf.reduce
  }) : (index, index, index) -> ()
  func.return
}
func.func @parallel_main(%x: memref<4xi8>, %y: memref<4xi8>) attributes {tir.prim_func, tir.main, tir.input_names = ["x"], tir.output_names = ["y"]} {
  tir.call @conv(%x, %y) : (memref<4xi8>, memref<4xi8>) -> ()
  func.return
}
