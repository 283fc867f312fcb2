// RUN: usmp-opt %s -p 'usmp-plan-memory{algorithm=greedy_by_size}' --split-input-file | FileCheck %s
// RUN: usmp-opt %s -p 'usmp-plan-memory{algorithm=greedy_by_size use_workspace_io=true}' --split-input-file | FileCheck %s --check-prefix=IO

// Default pools: every buffer gets a placement, tir.pools the planned sizes.
// sid_0 and sid_2 do not overlap in time and share offset 0.
// CHECK-LABEL: builtin.module attributes {tir.pools = [#tir.pool_info<"global_workspace", workspace, size = 128, alignment = 16, access = {c = rw}>, #tir.pool_info<"global_const", constant, size = 0, alignment = 16, access = {c = ro}>]}
// CHECK: name_hint = "sid_0", pool_allocation = #tir.pool_allocation<"global_workspace", 64>
// CHECK: name_hint = "sid_1", pool_allocation = #tir.pool_allocation<"global_workspace", 0>
// CHECK: name_hint = "sid_2", pool_allocation = #tir.pool_allocation<"global_workspace", 64>
// With workspace I/O the input and output are buffers too (arg attributes).
// (greedy_by_size, TVM's algorithm, never reuses a gap below a placed buffer.)
// IO-LABEL: builtin.module attributes {tir.pools = [#tir.pool_info<"global_workspace", workspace, size = 256,
// IO: func.func @chain_main(%x: memref<16xf32> {tir.pool_allocation = #tir.pool_allocation<"global_workspace", 192>}, %y: memref<16xf32> {tir.pool_allocation = #tir.pool_allocation<"global_workspace", 64>})
// IO: name_hint = "sid_0", pool_allocation = #tir.pool_allocation<"global_workspace", 128>
// IO: name_hint = "sid_1", pool_allocation = #tir.pool_allocation<"global_workspace", 64>
// IO: name_hint = "sid_2", pool_allocation = #tir.pool_allocation<"global_workspace", 0>
func.func private @op(memref<16xf32>, memref<16xf32>) attributes {tir.prim_func}
func.func @chain_main(%x: memref<16xf32>, %y: memref<16xf32>) attributes {tir.prim_func, tir.main, tir.input_names = ["x"], tir.output_names = ["output"]} {
  %0 = tir.allocate {name_hint = "sid_0"} : memref<16xf32>
  %1 = tir.allocate {name_hint = "sid_1"} : memref<16xf32>
  %2 = tir.allocate {name_hint = "sid_2"} : memref<16xf32>
  tir.call @op(%x, %0) : (memref<16xf32>, memref<16xf32>) -> ()
  tir.call @op(%0, %1) : (memref<16xf32>, memref<16xf32>) -> ()
  tir.call @op(%1, %2) : (memref<16xf32>, memref<16xf32>) -> ()
  tir.call @op(%2, %y) : (memref<16xf32>, memref<16xf32>) -> ()
  func.return
}

// -----

// Multi-pool fallback in the order of tir.pools: dtcm holds 48 bytes; what
// does not fit there while conflicting buffers occupy it falls back to sram.
// CHECK-LABEL: builtin.module attributes {tir.pools = [#tir.pool_info<"dtcm", workspace, size = 48, alignment = 16, access = {c = rw}>, #tir.pool_info<"sram", workspace, size = 32, alignment = 16, access = {c = rw}>, #tir.pool_info<"global_const", constant, size = 0,
// CHECK: name_hint = "big", pool_allocation = #tir.pool_allocation<"dtcm", 0>
// CHECK: name_hint = "a", pool_allocation = #tir.pool_allocation<"sram", 0>
// CHECK: name_hint = "b", pool_allocation = #tir.pool_allocation<"dtcm", 0>
builtin.module attributes {tir.pools = [
    #tir.pool_info<"dtcm", workspace, size = 48, access = {c = "rw"}>,
    #tir.pool_info<"sram", workspace, access = {c = "rw"}>]} {
  func.func private @op(memref<48xi8>, memref<32xi8>) attributes {tir.prim_func}
  func.func private @op2(memref<32xi8>, memref<32xi8>) attributes {tir.prim_func}
  func.func @fallback_main(%x: memref<48xi8>, %y: memref<32xi8>) attributes {tir.prim_func, tir.main, tir.input_names = ["x"], tir.output_names = ["y"]} {
    %big = tir.allocate {name_hint = "big"} : memref<48xi8>
    %a = tir.allocate {name_hint = "a"} : memref<32xi8>
    %b = tir.allocate {name_hint = "b"} : memref<32xi8>
    tir.call @op(%big, %a) : (memref<48xi8>, memref<32xi8>) -> ()
    tir.call @op2(%a, %b) : (memref<32xi8>, memref<32xi8>) -> ()
    tir.call @op2(%b, %y) : (memref<32xi8>, memref<32xi8>) -> ()
    func.return
  }
}

// -----

// Target access: the npu operator's buffers avoid the pool the npu cannot
// write; c-only buffers take the first pool.
// CHECK-LABEL: builtin.module
// CHECK-SAME: #tir.pool_info<"cpu_sram", workspace, size = 16,
// CHECK-SAME: #tir.pool_info<"shared", workspace, size = 32,
// CHECK: name_hint = "sid_0", pool_allocation = #tir.pool_allocation<"shared", 16>
// CHECK: name_hint = "sid_1", pool_allocation = #tir.pool_allocation<"shared", 0>
// CHECK: name_hint = "sid_2", pool_allocation = #tir.pool_allocation<"cpu_sram", 0>
builtin.module attributes {tir.pools = [
    #tir.pool_info<"cpu_sram", workspace, access = {c = "rw", npu = "ro"}>,
    #tir.pool_info<"shared", workspace, access = {c = "rw", npu = "rw"}>]} {
  func.func private @cpu_op(memref<16xi8>, memref<16xi8>) attributes {tir.prim_func}
  func.func private @npu_op(memref<16xi8>, memref<16xi8>) attributes {tir.prim_func, tir.target = "npu"}
  func.func @access_main(%x: memref<16xi8>, %y: memref<16xi8>) attributes {tir.prim_func, tir.main, tir.input_names = ["x"], tir.output_names = ["y"]} {
    %0 = tir.allocate {name_hint = "sid_0"} : memref<16xi8>
    %1 = tir.allocate {name_hint = "sid_1"} : memref<16xi8>
    %2 = tir.allocate {name_hint = "sid_2"} : memref<16xi8>
    tir.call @cpu_op(%x, %0) : (memref<16xi8>, memref<16xi8>) -> ()
    tir.call @npu_op(%0, %1) : (memref<16xi8>, memref<16xi8>) -> ()
    tir.call @cpu_op(%1, %2) : (memref<16xi8>, memref<16xi8>) -> ()
    tir.call @cpu_op(%2, %y) : (memref<16xi8>, memref<16xi8>) -> ()
    func.return
  }
}

// -----

// Constants: back to back in IR order (main first, then operators), each
// aligned to its pool's alignment; the constant pool's size is their end.
// CHECK-LABEL: builtin.module attributes
// CHECK-SAME: #tir.pool_info<"global_const", constant, size = 49, alignment = 16,
// CHECK: name_hint = "w", {{.*}} pool_allocation = #tir.pool_allocation<"global_const", 48>
// CHECK: name_hint = "constant_0", {{.*}} pool_allocation = #tir.pool_allocation<"global_const", 0>
// CHECK: name_hint = "constant_1", {{.*}} pool_allocation = #tir.pool_allocation<"global_const", 32>
func.func @op(%x: memref<4xi8>, %c: memref<4xi8>, %y: memref<4xi8>) attributes {tir.prim_func} {
  %w = tir.allocate_const {name_hint = "w", value = dense<7> : tensor<1xi8>} : memref<1xi8>
  func.return
}
func.func @const_main(%x: memref<4xi8>, %y: memref<4xi8>) attributes {tir.prim_func, tir.main, tir.input_names = ["x"], tir.output_names = ["y"]} {
  %c0 = tir.allocate_const {name_hint = "constant_0", value = dense<[1, 2, 3, 4, 5]> : tensor<5xi32>} : memref<5xi32>
  %c1 = tir.allocate_const {name_hint = "constant_1", value = dense<[1, 2, 3, 4]> : tensor<4xi8>} : memref<4xi8>
  tir.call @op(%x, %c1, %y) : (memref<4xi8>, memref<4xi8>, memref<4xi8>) -> ()
  func.return
}

// -----

// Scratch of operators called one after the other is reused: both scratch
// buffers and the storage between the calls share the pool's bytes only
// where they do not coexist.
// CHECK-LABEL: builtin.module attributes {tir.pools = [#tir.pool_info<"global_workspace", workspace, size = 80,
// CHECK: name_hint = "acc", pool_allocation = #tir.pool_allocation<"global_workspace", 0>
// CHECK: name_hint = "tmp", pool_allocation = #tir.pool_allocation<"global_workspace", 0>
// CHECK: name_hint = "sid_0", pool_allocation = #tir.pool_allocation<"global_workspace", 64>
func.func @first(%x: memref<16xi8>, %y: memref<16xi8>) attributes {tir.prim_func} {
  %acc = tir.allocate {name_hint = "acc"} : memref<16xi32>
  func.return
}
func.func @second(%x: memref<16xi8>, %y: memref<16xi8>) attributes {tir.prim_func} {
  %tmp = tir.allocate {name_hint = "tmp"} : memref<48xi8>
  func.return
}
func.func @reuse_main(%x: memref<16xi8>, %y: memref<16xi8>) attributes {tir.prim_func, tir.main, tir.input_names = ["x"], tir.output_names = ["y"]} {
  %0 = tir.allocate {name_hint = "sid_0"} : memref<16xi8>
  tir.call @first(%x, %0) : (memref<16xi8>, memref<16xi8>) -> ()
  tir.call @second(%0, %y) : (memref<16xi8>, memref<16xi8>) -> ()
  func.return
}

// -----

// Already planned: the placements in the IR are kept (and validated), the
// pool gets the size they need. (With workspace I/O, the inputs and outputs
// have no placement yet, so everything is planned afresh.)
// CHECK-LABEL: builtin.module attributes {tir.pools = [#tir.pool_info<"global_workspace", workspace, size = 32,
// CHECK: name_hint = "sid_0", pool_allocation = #tir.pool_allocation<"global_workspace", 16>
// CHECK: name_hint = "sid_1", pool_allocation = #tir.pool_allocation<"global_workspace", 0>
builtin.module attributes {tir.pools = [#tir.pool_info<"global_workspace", workspace, access = {c = "rw"}>]} {
  func.func private @op(memref<16xi8>, memref<16xi8>) attributes {tir.prim_func}
  func.func @planned_main(%x: memref<16xi8>, %y: memref<16xi8>) attributes {tir.prim_func, tir.main, tir.input_names = ["x"], tir.output_names = ["y"]} {
    %0 = tir.allocate {name_hint = "sid_0", pool_allocation = #tir.pool_allocation<"global_workspace", 16>} : memref<16xi8>
    %1 = tir.allocate {name_hint = "sid_1", pool_allocation = #tir.pool_allocation<"global_workspace", 0>} : memref<16xi8>
    tir.call @op(%x, %0) : (memref<16xi8>, memref<16xi8>) -> ()
    tir.call @op(%0, %1) : (memref<16xi8>, memref<16xi8>) -> ()
    tir.call @op(%1, %y) : (memref<16xi8>, memref<16xi8>) -> ()
    func.return
  }
}
