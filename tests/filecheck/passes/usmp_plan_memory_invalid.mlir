// RUN: usmp-opt %s -p 'usmp-plan-memory{algorithm=greedy_by_size}' --split-input-file --verify-diagnostics
// RUN: not usmp-opt %s -p 'usmp-plan-memory{algorithm=best_guess}' 2>&1 | FileCheck %s --check-prefix=ALGO
// RUN: not usmp-opt %s -p 'usmp-plan-memory{pools="sram:workspace:64k"}' 2>&1 | FileCheck %s --check-prefix=SIZE
// RUN: not usmp-opt %s -p 'usmp-plan-memory{pools="sram:scratch"}' 2>&1 | FileCheck %s --check-prefix=KIND
// RUN: not usmp-opt %s -p 'usmp-plan-memory{pools="sram:workspace:access=c/rwx"}' 2>&1 | FileCheck %s --check-prefix=ACCESS
// RUN: not usmp-opt %s -p 'usmp-plan-memory{pools="sram:workspace,sram:constant"}' 2>&1 | FileCheck %s --check-prefix=TWICE

// ALGO: usmp-opt: error: unknown memory planning algorithm 'best_guess'; valid: greedy_by_size, greedy_by_conflicts
// SIZE: usmp-opt: error: bad pools option: pool 'sram': size '64k' is not a non-negative integer (bytes); accepted: NAME:KIND[:SIZE][:align=N][:access=TARGET/rw|ro+...], comma separated; KIND is workspace, constant or persistent, SIZE in bytes (0 = unbounded); e.g. "sram:workspace:65536,flash:constant"
// KIND: usmp-opt: error: bad pools option: pool 'sram': kind 'scratch' is not one of workspace, constant, persistent; accepted: NAME:KIND
// ACCESS: usmp-opt: error: bad pools option: pool 'sram': access entry 'c/rwx' is not TARGET/MODE with MODE one of rw, ro (e.g. access=c/rw+npu/ro); accepted:
// TWICE: usmp-opt: error: bad pools option: pool 'sram' is given twice; accepted:

// One pool, too small for what must coexist: the error names the buffer, its
// bytes, the pool's limit and what is already there.
builtin.module attributes {tir.pools = [#tir.pool_info<"sram", workspace, size = 100, access = {c = "rw"}>]} {
  func.func private @op(memref<64xi8>, memref<64xi8>) attributes {tir.prim_func}
  func.func @small_main(%x: memref<64xi8>, %y: memref<64xi8>) attributes {tir.prim_func, tir.main} {
    // expected-error@+1 {{buffer 'sid_0' (64 B) fits in no candidate pool: pool 'sram' (limit 100 B) already holds 64 B of buffers live at the same time, so it would need 128 B (live together with it at step 1, op: sid_1 (64 B); 128 B in all)}}
    %0 = tir.allocate {name_hint = "sid_0"} : memref<64xi8>
    %1 = tir.allocate {name_hint = "sid_1"} : memref<64xi8>
    tir.call @op(%x, %0) : (memref<64xi8>, memref<64xi8>) -> ()
    tir.call @op(%0, %1) : (memref<64xi8>, memref<64xi8>) -> ()
    tir.call @op(%1, %y) : (memref<64xi8>, memref<64xi8>) -> ()
    func.return
  }
}

// -----

// Fallback exhausted: every candidate pool is listed; an operator's scratch is
// named with its function.
builtin.module attributes {tir.pools = [
    #tir.pool_info<"dtcm", workspace, size = 16, access = {c = "rw"}>,
    #tir.pool_info<"sram", workspace, size = 32, access = {c = "rw"}>]} {
  func.func @op(%x: memref<16xi8>, %y: memref<16xi8>) attributes {tir.prim_func} {
    // expected-error@+1 {{buffer 'acc' of 'op' (64 B) fits in no candidate pool: pool 'dtcm' (limit 16 B) is smaller than the buffer; pool 'sram' (limit 32 B) is smaller than the buffer (live together with it at step 0, op: sid_0 (16 B); 80 B in all)}}
    %acc = tir.allocate {name_hint = "acc"} : memref<16xi32>
    func.return
  }
  func.func @scratch_main(%x: memref<16xi8>, %y: memref<16xi8>) attributes {tir.prim_func, tir.main} {
    %0 = tir.allocate {name_hint = "sid_0"} : memref<16xi8>
    tir.call @op(%x, %0) : (memref<16xi8>, memref<16xi8>) -> ()
    tir.call @op(%0, %y) : (memref<16xi8>, memref<16xi8>) -> ()
    func.return
  }
}

// -----

builtin.module attributes {tir.pools = [#tir.pool_info<"flash", constant, size = 20, alignment = 8, access = {c = "ro"}>]} {
  func.func @const_main() attributes {tir.prim_func, tir.main} {
    %0 = tir.allocate_const {name_hint = "constant_0", value = dense<1> : tensor<12xi8>} : memref<12xi8>
    // expected-error@+1 {{constant 'constant_1' (8 B) fits in no candidate constant pool: pool 'flash' limit 20 B, 12 B already used by constants}}
    %1 = tir.allocate_const {name_hint = "constant_1", value = dense<2> : tensor<2xi32>} : memref<2xi32>
    func.return
  }
}

// -----

// A placement recorded in the IR that overlaps a conflicting buffer is
// caught by the validator.
builtin.module attributes {tir.pools = [#tir.pool_info<"sram", workspace, access = {c = "rw"}>]} {
  func.func private @op(memref<16xi8>, memref<16xi8>) attributes {tir.prim_func}
  // expected-error@+1 {{usmp: the placements recorded in the IR are invalid: buffer 'sid_1' at offset 8 in 'sram' is not aligned to 16 B; conflicting buffers 'sid_0' [0, 16) and 'sid_1' [8, 24) overlap in pool 'sram'}}
  func.func @bad_main(%x: memref<16xi8>, %y: memref<16xi8>) attributes {tir.prim_func, tir.main} {
    %0 = tir.allocate {name_hint = "sid_0", pool_allocation = #tir.pool_allocation<"sram", 0>} : memref<16xi8>
    %1 = tir.allocate {name_hint = "sid_1", pool_allocation = #tir.pool_allocation<"sram", 8>} : memref<16xi8>
    tir.call @op(%x, %0) : (memref<16xi8>, memref<16xi8>) -> ()
    tir.call @op(%0, %1) : (memref<16xi8>, memref<16xi8>) -> ()
    tir.call @op(%1, %y) : (memref<16xi8>, memref<16xi8>) -> ()
    func.return
  }
}

// -----

// Allocations added after the rewrite cannot be planned into its pools.
func.func @late_main(%x: memref<4xi8>, %ws: memref<16xi8>) attributes {tir.prim_func, tir.main, tir.pool_args = ["global_workspace"]} {
  // expected-error@+1 {{buffer 'late': the module was already rewritten by usmp-convert-pool-allocations; allocations added afterwards cannot be planned into its pools (plan before the rewrite)}}
  %0 = tir.allocate {name_hint = "late"} : memref<4xi8>
  func.return
}
