// RUN: usmp-opt %s -p 'usmp-report{json="/dev/null"}' --split-input-file --verify-diagnostics | FileCheck %s
// RUN: not usmp-opt %s -p usmp-report 2>&1 | FileCheck %s --check-prefix=NOPATH
// RUN: not usmp-opt %s -p 'usmp{report="/dev/null/plan.json"}' --split-input-file 2>&1 | FileCheck %s --check-prefix=NOWRITE
// RUN: usmp-opt %s -p 'usmp{report="%t.json"}' --split-input-file --verify-diagnostics | FileCheck %s --check-prefix=COMPOSITE

// NOPATH: usmp-opt: error: usmp-report: give json="path" and/or svg="path"
// NOWRITE: usmp: cannot write the report '/dev/null/plan.json': [Errno 17] File exists: '/dev/null'

func.func private @op(memref<16xi8>, memref<16xi8>) attributes {tir.prim_func}
func.func @unplanned_main(%x: memref<16xi8>, %y: memref<16xi8>) attributes {tir.prim_func, tir.main} {
  // CHECK: usmp_report_invalid.mlir:[[# @LINE + 1]]:3: error: usmp-report needs a planned module: buffer 'sid_0' has no pool_allocation; run usmp-plan-memory first
  %0 = tir.allocate {name_hint = "sid_0"} : memref<16xi8>
  tir.call @op(%x, %0) : (memref<16xi8>, memref<16xi8>) -> ()
  tir.call @op(%0, %y) : (memref<16xi8>, memref<16xi8>) -> ()
  func.return
}

// -----

// After the rewrite the plan is gone: nothing to report.
builtin.module attributes {tir.pools = [#tir.pool_info<"global_workspace", workspace, size = 16, access = {c = "rw"}>]} {
  // CHECK: usmp_report_invalid.mlir:[[# @LINE + 2]]:3: error: usmp-report: the module was already rewritten by usmp-convert-pool-allocations, its plan is gone; run usmp-report between usmp-plan-memory and the rewrite (or use usmp{report=...})
  // COMPOSITE: usmp_report_invalid.mlir:[[# @LINE + 1]]:3: error: usmp: the module was already rewritten by usmp, so there is no plan left to report; ask for the report on the run that plans it
  func.func private @op(memref<4xi8>, memref<16xi8>) attributes {tir.prim_func, tir.pool_args = ["global_workspace"]}
  func.func @done_main(%x: memref<4xi8>, %ws: memref<16xi8>) attributes {tir.prim_func, tir.main, tir.pool_args = ["global_workspace"]} {
    tir.call @op(%x, %ws) : (memref<4xi8>, memref<16xi8>) -> ()
    func.return
  }
}
