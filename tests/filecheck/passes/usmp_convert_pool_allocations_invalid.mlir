// RUN: usmp-opt %s -p usmp-convert-pool-allocations --split-input-file --verify-diagnostics

func.func @unplanned_main() attributes {tir.prim_func, tir.main} {
  // expected-error@+1 {{buffer 'sid_0' has no pool_allocation; run usmp-plan-memory (or the usmp pipeline) first}}
  %0 = tir.allocate {name_hint = "sid_0"} : memref<4xi8>
  func.return
}

// -----

builtin.module attributes {tir.pools = [#tir.pool_info<"sram", workspace, size = 16, access = {c = "rw"}>]} {
  func.func @unknown_main() attributes {tir.prim_func, tir.main} {
    // expected-error@+1 {{buffer 'sid_0' is placed in pool 'dram', which is not in the module's tir.pools (sram)}}
    %0 = tir.allocate {name_hint = "sid_0", pool_allocation = #tir.pool_allocation<"dram", 0>} : memref<4xi8>
    func.return
  }
}

// -----

builtin.module attributes {tir.pools = [#tir.pool_info<"sram", workspace, size = 16, access = {c = "rw"}>]} {
  func.func @past_end_main() attributes {tir.prim_func, tir.main} {
    // expected-error@+1 {{buffer 'sid_0' at offset 16 ends at 20 B, past the end of pool 'sram' (16 B); the pool sizes in tir.pools must be the planned ones (run usmp-plan-memory)}}
    %0 = tir.allocate {name_hint = "sid_0", pool_allocation = #tir.pool_allocation<"sram", 16>} : memref<4xi8>
    func.return
  }
}

// -----

builtin.module attributes {tir.pools = [#tir.pool_info<"sram", workspace, size = 16, access = {c = "rw"}>]} {
  // expected-error@+1 {{entry function: either every input/output argument or none carries tir.pool_allocation; found it on arguments 0 of 2}}
  func.func @partial_io_main(%x: memref<4xi8> {tir.pool_allocation = #tir.pool_allocation<"sram", 0>}, %y: memref<4xi8>)
      attributes {tir.prim_func, tir.main, tir.input_names = ["x"], tir.output_names = ["y"]} {
    func.return
  }
}

// -----

builtin.module attributes {tir.pools = [#tir.pool_info<"weights", constant, size = 4, access = {c = "ro"}>]} {
  // expected-error@+1 {{constant pool 'weights': the module already defines a symbol @weights; rename the pool}}
  func.func private @weights()
  func.func @clash_main() attributes {tir.prim_func, tir.main} {
    %0 = tir.allocate_const {name_hint = "w", value = dense<1> : tensor<4xi8>, pool_allocation = #tir.pool_allocation<"weights", 0>} : memref<4xi8>
    func.return
  }
}

// -----

builtin.module attributes {tir.pools = [
    #tir.pool_info<"sram", workspace, size = 16, access = {c = "rw"}>,
    #tir.pool_info<"dram", workspace, size = 16, access = {c = "rw"}>]} {
  // expected-error@+1 {{function 'more_main' already takes pools sram but now also needs dram; plan all allocations before usmp-convert-pool-allocations}}
  func.func @more_main(%sram: memref<16xi8>) attributes {tir.prim_func, tir.main, tir.pool_args = ["sram"]} {
    %0 = tir.allocate {name_hint = "sid_0", pool_allocation = #tir.pool_allocation<"dram", 0>} : memref<4xi8>
    func.return
  }
}
