// RUN: usmp-opt %s -p usmp-validate --split-input-file | FileCheck %s

// A rewritten module (what usmp produces) is valid: the output reuses the
// input's bytes (the input is dead once the output is written), scratch,
// constants. The pass changes nothing.
// CHECK-LABEL: func.func @op(
// CHECK: memref.view %{{.*}}[%{{.*}}][] : memref<48xi8> to memref<4xi32>
// CHECK-LABEL: func.func @tvmgen_default___tvm_main__(
// CHECK-SAME: tir.pool_args = ["global_workspace", "global_const"]
builtin.module attributes {tir.pools = [
    #tir.pool_info<"global_workspace", workspace, size = 48, alignment = 16, access = {c = "rw"}>,
    #tir.pool_info<"global_const", constant, size = 4, alignment = 16, access = {c = "ro"}>]} {
  "memref.global"() <{sym_name = "global_const", type = memref<4xi8>, initial_value = dense<[1, 2, 3, 4]> : tensor<4xi8>, sym_visibility = "private", constant, alignment = 16 : i64}> : () -> ()
  func.func @op(%a: memref<4xi8>, %w: memref<4xi8>, %b: memref<4xi8>, %ws: memref<48xi8>) attributes {tir.prim_func, tir.pool_args = ["global_workspace"]} {
    %c32 = arith.constant 32 : index
    %acc = memref.view %ws[%c32][] : memref<48xi8> to memref<4xi32>
    func.return
  }
  func.func @tvmgen_default___tvm_main__(%ws: memref<48xi8>, %const: memref<4xi8>) attributes {tir.prim_func, tir.main, tir.input_names = ["x"], tir.output_names = ["y"], tir.pool_args = ["global_workspace", "global_const"], tir.input_allocations = [#tir.pool_allocation<"global_workspace", 0>], tir.output_allocations = [#tir.pool_allocation<"global_workspace", 0>], tir.input_types = [memref<4xi8>], tir.output_types = [memref<4xi8>]} {
    %c0 = arith.constant 0 : index
    %x = memref.view %ws[%c0][] : memref<48xi8> to memref<4xi8>
    %y = memref.view %ws[%c0][] : memref<48xi8> to memref<4xi8>
    %w = memref.view %const[%c0][] : memref<4xi8> to memref<4xi8>
    %c16 = arith.constant 16 : index
    %sid = memref.view %ws[%c16][] : memref<48xi8> to memref<4xi8>
    tir.call @op(%x, %w, %sid, %ws) : (memref<4xi8>, memref<4xi8>, memref<4xi8>, memref<48xi8>) -> ()
    tir.call @op(%sid, %w, %y, %ws) : (memref<4xi8>, memref<4xi8>, memref<4xi8>, memref<48xi8>) -> ()
    func.return
  }
}

// -----

// A planned, not yet rewritten module: its placements are checked.
// CHECK-LABEL: func.func @planned_main(
// CHECK: tir.allocate {name_hint = "sid_0", pool_allocation = #tir.pool_allocation<"global_workspace", 0>}
builtin.module attributes {tir.pools = [#tir.pool_info<"global_workspace", workspace, size = 16, access = {c = "rw"}>]} {
  func.func private @op(memref<16xi8>, memref<16xi8>) attributes {tir.prim_func}
  func.func @planned_main(%x: memref<16xi8>, %y: memref<16xi8>) attributes {tir.prim_func, tir.main, tir.input_names = ["x"], tir.output_names = ["y"]} {
    %0 = tir.allocate {name_hint = "sid_0", pool_allocation = #tir.pool_allocation<"global_workspace", 0>} : memref<16xi8>
    tir.call @op(%x, %0) : (memref<16xi8>, memref<16xi8>) -> ()
    tir.call @op(%0, %y) : (memref<16xi8>, memref<16xi8>) -> ()
    func.return
  }
}
