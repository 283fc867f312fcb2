// RUN: usmp-opt %s -p 'usmp-report{json="/dev/null"}' --split-input-file --verify-diagnostics
// RUN: not usmp-opt %s -p usmp-report 2>&1 | FileCheck %s --check-prefix=NOPATH
// RUN: not usmp-opt %s -p 'usmp{report="/dev/null/plan.json"}' --split-input-file 2>&1 | FileCheck %s --check-prefix=NOWRITE

// NOPATH: usmp-opt: error: usmp-report: give json="path" and/or svg="path"
// NOWRITE: usmp: cannot write the report '/dev/null/plan.json': [Errno 17] File exists: '/dev/null'

func.func private @op(memref<16xi8>, memref<16xi8>) attributes {tir.prim_func}
func.func @unplanned_main(%x: memref<16xi8>, %y: memref<16xi8>) attributes {tir.prim_func, tir.main} {
  // expected-error@+1 {{buffer 'sid_0' has no pool_allocation: the module is not planned (run usmp-plan-memory or usmp first)}}
  %0 = tir.allocate {name_hint = "sid_0"} : memref<16xi8>
  tir.call @op(%x, %0) : (memref<16xi8>, memref<16xi8>) -> ()
  tir.call @op(%0, %y) : (memref<16xi8>, memref<16xi8>) -> ()
  func.return
}

