// RUN: usmp-opt %s -p usmp-buffer-info --split-input-file --verify-diagnostics
// RUN: not usmp-opt %s -p 'usmp-buffer-info{use_workspace_io=true}' --split-input-file 2>&1 | FileCheck %s --check-prefix=IO

// Only with use_workspace_io (the second RUN, which stops at this first chunk).
// IO: usmp_buffer_info_invalid.mlir:[[# @LINE + 1]]:1: error: use_workspace_io: the entry function has 2 arguments but names 1 inputs (tir.input_names) and 0 outputs (tir.output_names); aot-lower-main writes both
func.func @io_main(%x: memref<4xi8>, %y: memref<4xi8>) attributes {tir.prim_func, tir.main, tir.input_names = ["x"]} {
  func.return
}

// -----

// expected-error@+1 {{usmp needs exactly one entry function (a func.func with 'tir.main', as aot-lower-main produces); found 0}}
func.func @op(%x: memref<4xi8>) attributes {tir.prim_func} {
  %0 = tir.allocate {name_hint = "t"} : memref<4xi8>
  func.return
}

// -----

func.func @main_a() attributes {tir.prim_func, tir.main} {
  func.return
}
// expected-error@+1 {{usmp needs exactly one entry function (a func.func with 'tir.main', as aot-lower-main produces); found 2}}
func.func @main_b() attributes {tir.prim_func, tir.main} {
  func.return
}

// -----

func.func @strided_main() attributes {tir.prim_func, tir.main} {
  // expected-error@+1 {{buffer 'sid_0': memref<4x4xi8, strided<[8, 1]>> has a layout map; usmp places only contiguous memrefs with the identity layout}}
  %0 = tir.allocate {name_hint = "sid_0"} : memref<4x4xi8, strided<[8, 1]>>
  func.return
}

// -----

func.func @space_main() attributes {tir.prim_func, tir.main} {
  // expected-error@+1 {{buffer 'sid_0': memref<4xi8, 1 : i64> is in memory space 1 : i64; usmp places buffers of the default memory space (choose pools to pin memory)}}
  %0 = tir.allocate {name_hint = "sid_0"} : memref<4xi8, 1>
  func.return
}

// -----

func.func @index_main() attributes {tir.prim_func, tir.main} {
  // expected-error@+1 {{buffer 'sid_0': element type index has no fixed size in bytes; expected an integer, float or complex element type}}
  %0 = tir.allocate {name_hint = "sid_0"} : memref<4xindex>
  func.return
}

// -----

func.func @unknown_pool_main() attributes {tir.prim_func, tir.main} {
  // expected-error@+1 {{buffer 'sid_0': candidate pool 'sram' is not a pool of this module; pools: global_workspace, global_const}}
  %0 = tir.allocate {name_hint = "sid_0", candidate_pools = ["sram"]} : memref<4xi8>
  func.return
}

// -----

func.func @kind_main() attributes {tir.prim_func, tir.main} {
  // expected-error@+1 {{constant 'w': candidate pool 'global_workspace' is a workspace pool; a constant needs a constant pool}}
  %0 = tir.allocate_const {name_hint = "w", value = dense<1> : tensor<4xi8>, candidate_pools = ["global_workspace"]} : memref<4xi8>
  func.return
}

// -----

builtin.module attributes {tir.pools = [
    #tir.pool_info<"npu_sram", workspace, access = {npu = "rw"}>,
    #tir.pool_info<"sram", workspace, access = {c = "rw", npu = "ro"}>]} {
  func.func private @npu_op(memref<4xi8>, memref<4xi8>) attributes {tir.prim_func, tir.target = "npu"}
  func.func private @cpu_op(memref<4xi8>, memref<4xi8>) attributes {tir.prim_func}
  func.func @access_main(%x: memref<4xi8>, %y: memref<4xi8>) attributes {tir.prim_func, tir.main} {
    // expected-error@+1 {{buffer 'sid_0': no workspace pool gives target(s) c, npu read-write access; workspace pools: 'npu_sram' (workspace, unbounded, access npu/rw); 'sram' (workspace, unbounded, access c/rw, npu/ro)}}
    %0 = tir.allocate {name_hint = "sid_0"} : memref<4xi8>
    tir.call @npu_op(%x, %0) : (memref<4xi8>, memref<4xi8>) -> ()
    tir.call @cpu_op(%0, %y) : (memref<4xi8>, memref<4xi8>) -> ()
    func.return
  }
}

// -----

builtin.module attributes {tir.pools = [#tir.pool_info<"flash", constant, access = {npu = "ro"}>]} {
  func.func @const_access_main() attributes {tir.prim_func, tir.main} {
    // expected-error@+1 {{constant 'w': no constant pool gives target(s) c read access; constant pools: 'flash' (constant, unbounded, access npu/ro)}}
    %0 = tir.allocate_const {name_hint = "w", value = dense<1> : tensor<4xi8>} : memref<4xi8>
    func.return
  }
}

// -----

// --target accel,c: a buffer between two accel operators may only go to a
// pool accel can read and write; none here is.
#accel = #device.virtual_device<"accel", 0, target = "accel", scope = "global">
builtin.module attributes {tir.pools = [
    #tir.pool_info<"sram", workspace, access = {c = "rw"}>,
    #tir.pool_info<"accel_rom", workspace, access = {accel = "ro"}>]} {
  func.func private @op(memref<4xi8>, memref<4xi8>) attributes {tir.prim_func}
  func.func @accel_main(%x: memref<4xi8>, %y: memref<4xi8>) attributes {tir.prim_func, tir.main} {
    // expected-error@+1 {{buffer 'sid_0': no workspace pool gives target(s) accel read-write access; workspace pools: 'sram' (workspace, unbounded, access c/rw); 'accel_rom' (workspace, unbounded, access accel/ro)}}
    %0 = tir.allocate {name_hint = "sid_0"} : memref<4xi8>
    tir.call @op(%x, %0) {tir.virtual_device = #accel} : (memref<4xi8>, memref<4xi8>) -> ()
    tir.call @op(%0, %y) {tir.virtual_device = #accel} : (memref<4xi8>, memref<4xi8>) -> ()
    func.return
  }
}
