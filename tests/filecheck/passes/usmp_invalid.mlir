// RUN: usmp-opt %s -p 'usmp{algorithm=greedy_by_size}' --split-input-file --verify-diagnostics
// RUN: not usmp-opt %s -p 'usmp{algorithm=greedy_by_size use_workspace_io=true pools="sram:workspace:100"}' --split-input-file 2>&1 | FileCheck %s --check-prefix=IO
// RUN: not usmp-opt %s -p 'usmp{algorithm=first_fit_by_magic}' 2>&1 | FileCheck %s --check-prefix=ALGO
// RUN: not usmp-opt %s -p 'usmp{pools="sram"}' 2>&1 | FileCheck %s --check-prefix=POOLS
// RUN: not usmp-opt %s -p 'usmp{pools="sram:workspace:align=3"}' 2>&1 | FileCheck %s --check-prefix=ALIGN
// RUN: not usmp-opt %s -p 'usmp{pools="sram:workspace:16:size"}' 2>&1 | FileCheck %s --check-prefix=KEY

// ALGO: usmp-opt: error: unknown memory planning algorithm 'first_fit_by_magic'; valid: greedy_by_size,
// POOLS: usmp-opt: error: bad pools option: pool 'sram': missing kind; accepted: NAME:KIND[:SIZE][:align=N][:access=TARGET/rw|ro+...], comma separated; KIND is workspace, constant or persistent, SIZE in bytes (0 = unbounded); e.g. "sram:workspace:65536,flash:constant"
// ALIGN: usmp-opt: error: bad pools option: pool 'sram': align=3 is not a positive power of two; accepted:
// KEY: usmp-opt: error: bad pools option: pool 'sram': 'size' is not KEY=VALUE (size, align or access); only the size may be given bare, right after the kind; accepted:

// The pool limit holds the storage ids but not the inputs/outputs too (only
// with use_workspace_io, the second RUN, which stops at this first chunk).
// IO: usmp_invalid.mlir:[[# @LINE + 2]]:1: error: input 'x' (64 B) fits in no candidate pool: pool 'sram' (limit 100 B) already holds 64 B of buffers live at the same time, so it would need 128 B (live together with it at step 0, op: sid_0 (64 B); 128 B in all)
func.func private @op(memref<64xi8>, memref<64xi8>) attributes {tir.prim_func}
func.func @io_main(%x: memref<64xi8>, %y: memref<64xi8>) attributes {tir.prim_func, tir.main, tir.input_names = ["x"], tir.output_names = ["output"]} {
  %0 = tir.allocate {name_hint = "sid_0"} : memref<64xi8>
  tir.call @op(%x, %0) : (memref<64xi8>, memref<64xi8>) -> ()
  tir.call @op(%0, %y) : (memref<64xi8>, memref<64xi8>) -> ()
  func.return
}

// -----

// Errors of the analysis and the rewrite surface through the composite.
builtin.module attributes {tir.pools = [#tir.pool_info<"sram", workspace, size = 32, access = {c = "rw"}>]} {
  func.func private @op(memref<32xi8>, memref<32xi8>) attributes {tir.prim_func}
  func.func @small_main(%x: memref<32xi8>, %y: memref<32xi8>) attributes {tir.prim_func, tir.main} {
    // expected-error@+1 {{buffer 'sid_0' (32 B) fits in no candidate pool: pool 'sram' (limit 32 B) already holds 32 B of buffers live at the same time, so it would need 64 B (live together with it at step 1, op: sid_1 (32 B); 64 B in all)}}
    %0 = tir.allocate {name_hint = "sid_0"} : memref<32xi8>
    %1 = tir.allocate {name_hint = "sid_1"} : memref<32xi8>
    tir.call @op(%x, %0) : (memref<32xi8>, memref<32xi8>) -> ()
    tir.call @op(%0, %1) : (memref<32xi8>, memref<32xi8>) -> ()
    tir.call @op(%1, %y) : (memref<32xi8>, memref<32xi8>) -> ()
    func.return
  }
}
