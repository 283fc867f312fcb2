// RUN: usmp-opt %s -p usmp-plan-memory --split-input-file --verify-diagnostics

// Two states recorded at overlapping offsets of the persistent pool: the
// validator refuses them (states are all live for the whole program).
builtin.module attributes {tir.pools = [#tir.pool_info<"global_workspace", workspace, size = 0, alignment = 16, access = {c = rw}>, #tir.pool_info<"global_const", constant, size = 0, alignment = 16, access = {c = ro}>, #tir.pool_info<"global_state", persistent, size = 32, alignment = 16, access = {c = rw}>]} {
  func.func private @op(memref<4xf32>, memref<4xf32>, memref<4xf32>) attributes {tir.prim_func}
  // expected-error@+1 {{usmp: the placements recorded in the IR are invalid: conflicting buffers 'state_0' [0, 16) and 'state_1' [0, 16) overlap in pool 'global_state'}}
  func.func @tvmgen_default___tvm_main__(%x: memref<4xf32>) attributes {tir.prim_func, tir.main, tir.input_names = ["x"], tir.output_names = []} {
    %a = tir.allocate_state {name_hint = "state_0", value = dense<0.0> : tensor<4xf32>, pool_allocation = #tir.pool_allocation<"global_state", 0>} : memref<4xf32>
    %b = tir.allocate_state {name_hint = "state_1", value = dense<0.0> : tensor<4xf32>, pool_allocation = #tir.pool_allocation<"global_state", 0>} : memref<4xf32>
    tir.call @op(%x, %a, %b) : (memref<4xf32>, memref<4xf32>, memref<4xf32>) -> ()
    func.return
  }
}

// -----

// A state can only go to a persistent pool.
builtin.module attributes {tir.pools = [#tir.pool_info<"sram", workspace, size = 0, alignment = 16, access = {c = rw}>, #tir.pool_info<"global_const", constant, size = 0, alignment = 16, access = {c = ro}>]} {
  func.func private @op(memref<4xf32>, memref<4xf32>) attributes {tir.prim_func}
  func.func @tvmgen_default___tvm_main__(%x: memref<4xf32>) attributes {tir.prim_func, tir.main, tir.input_names = ["x"], tir.output_names = []} {
    // expected-error@+1 {{state 'state_0': candidate pool 'sram' is a workspace pool; a state needs a persistent pool}}
    %a = tir.allocate_state {name_hint = "state_0", value = dense<0.0> : tensor<4xf32>, candidate_pools = ["sram"]} : memref<4xf32>
    tir.call @op(%x, %a) : (memref<4xf32>, memref<4xf32>) -> ()
    func.return
  }
}
