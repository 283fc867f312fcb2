// RUN: usmp-opt %s -p usmp-convert-pool-allocations --split-input-file | FileCheck %s
// RUN: usmp-opt %s -p usmp-convert-pool-allocations,usmp-convert-pool-allocations --split-input-file | FileCheck %s

// Planned allocations become views into pool arguments; every function
// touching a pool takes it (workspace pools first), calls pass pools through.
// CHECK-LABEL: func.func @op_scratch(
// CHECK-SAME: %{{.*}}: memref<16xi8>, %{{.*}}: memref<16xi8>, %[[WS:.*]]: memref<96xi8>)
// CHECK-SAME: tir.pool_args = ["sram"]
// CHECK: %[[OFF:.*]] = arith.constant 32 : index
// CHECK: %{{.*}} = memref.view %[[WS]][%[[OFF]]][] : memref<96xi8> to memref<16xi32>
// CHECK-NOT: tir.allocate
// CHECK-LABEL: func.func private @ext(memref<16xi8>, memref<16xi8>)
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %[[X:.*]]: memref<16xi8>, %[[Y:.*]]: memref<16xi8>, %[[SRAM:.*]]: memref<96xi8>, %[[DRAM:.*]]: memref<16xi8>)
// CHECK-SAME: tir.pool_args = ["sram", "dram"]
// CHECK: %[[C0:.*]] = arith.constant 0 : index
// CHECK: %[[SID0:.*]] = memref.view %[[SRAM]][%[[C0]]][] : memref<96xi8> to memref<16xi8>
// CHECK: %[[C1:.*]] = arith.constant 0 : index
// CHECK: %[[SID1:.*]] = memref.view %[[DRAM]][%[[C1]]][] : memref<16xi8> to memref<16xi8>
// CHECK: tir.call @ext(%[[X]], %[[SID0]]) : (memref<16xi8>, memref<16xi8>) -> ()
// CHECK: tir.call cpacked @op_scratch(%[[SID0]], %[[SID1]], %[[SRAM]]) : (memref<16xi8>, memref<16xi8>, memref<96xi8>) -> ()
// CHECK: memref.alloc
builtin.module attributes {tir.pools = [
    #tir.pool_info<"sram", workspace, size = 96, access = {c = "rw"}>,
    #tir.pool_info<"dram", workspace, size = 16, access = {c = "rw"}>]} {
  func.func @op_scratch(%in: memref<16xi8>, %out: memref<16xi8>) attributes {tir.prim_func} {
    %acc = tir.allocate {name_hint = "acc", pool_allocation = #tir.pool_allocation<"sram", 32>} : memref<16xi32>
    func.return
  }
  func.func private @ext(memref<16xi8>, memref<16xi8>) attributes {tir.prim_func}
  func.func @main(%x: memref<16xi8>, %y: memref<16xi8>) attributes {tir.prim_func, tir.main} {
    %0 = tir.allocate {name_hint = "sid_0", pool_allocation = #tir.pool_allocation<"sram", 0>} : memref<16xi8>
    %1 = tir.allocate {name_hint = "sid_1", pool_allocation = #tir.pool_allocation<"dram", 0>} : memref<16xi8>
    tir.call @ext(%x, %0) : (memref<16xi8>, memref<16xi8>) -> ()
    tir.call cpacked @op_scratch(%0, %1) : (memref<16xi8>, memref<16xi8>) -> ()
    tir.call @ext(%1, %y) : (memref<16xi8>, memref<16xi8>) -> ()
    %c4 = arith.constant 4 : index
    %dyn = memref.alloc(%c4) : memref<?xi8>
    memref.dealloc %dyn : memref<?xi8>
    func.return
  }
}

// -----

// A function that only calls a function using a pool takes the pool too, to
// pass it on; the entry function takes every pool it (transitively) needs.
// CHECK-LABEL: func.func @leaf(
// CHECK-SAME: %{{.*}}: memref<4xf32>, %{{.*}}: memref<64xi8>) attributes {tir.prim_func, tir.pool_args = ["global_workspace"]}
// CHECK-LABEL: func.func @middle(
// CHECK-SAME: %[[A:.*]]: memref<4xf32>, %[[P:.*]]: memref<64xi8>) attributes {tir.prim_func, tir.pool_args = ["global_workspace"]}
// CHECK: tir.call @leaf(%[[A]], %[[P]])
// CHECK: func.call @leaf(%[[A]], %[[P]])
// CHECK-LABEL: func.func @nested_main(
// CHECK-SAME: %[[X:.*]]: memref<4xf32>, %[[W:.*]]: memref<64xi8>)
// CHECK: tir.call @middle(%[[X]], %[[W]])
builtin.module attributes {tir.pools = [#tir.pool_info<"global_workspace", workspace, size = 64, access = {c = "rw"}>]} {
  func.func @leaf(%a: memref<4xf32>) attributes {tir.prim_func} {
    %t = tir.allocate {name_hint = "t", pool_allocation = #tir.pool_allocation<"global_workspace", 48>} : memref<4xf32>
    func.return
  }
  func.func @middle(%a: memref<4xf32>) attributes {tir.prim_func} {
    tir.call @leaf(%a) : (memref<4xf32>) -> ()
    func.call @leaf(%a) : (memref<4xf32>) -> ()
    func.return
  }
  func.func @nested_main(%x: memref<4xf32>) attributes {tir.prim_func, tir.main} {
    tir.call @middle(%x) : (memref<4xf32>) -> ()
    func.return
  }
}

// -----

// Constants: views into the constant pool, whose bytes (little endian, zero
// padding to each alignment) become a private constant memref.global named
// after the pool; constant pools come after workspace pools.
// CHECK-LABEL: builtin.module
// CHECK: "memref.global"() <{sym_name = "flash", type = memref<28xi8>, initial_value = dense<[1, 0, 0, 0, -2, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, -128, 63, 1, 0, 0, 0, 0, 0, 0, 0]> : tensor<28xi8>, sym_visibility = "private", constant, alignment = 4 : i64}> : () -> ()
// CHECK-LABEL: func.func @op(
// CHECK-SAME: %{{.*}}: memref<4xi8>, %[[FLASH:.*]]: memref<28xi8>) attributes {tir.prim_func, tir.pool_args = ["flash"]}
// CHECK: %[[O:.*]] = arith.constant 20 : index
// CHECK: memref.view %[[FLASH]][%[[O]]][] : memref<28xi8> to memref<1xi1>
// CHECK-LABEL: func.func @const_main(
// CHECK-SAME: %{{.*}}: memref<4xi8>, %[[WS:.*]]: memref<4xi8>, %[[FL:.*]]: memref<28xi8>) attributes {tir.prim_func, tir.main, tir.pool_args = ["global_workspace", "flash"]}
// CHECK: memref.view %[[FL]][%{{.*}}][] : memref<28xi8> to memref<2xi32>
// CHECK: memref.view %[[FL]][%{{.*}}][] : memref<28xi8> to memref<2xf32>
// CHECK: tir.call @op(%{{.*}}, %[[FL]])
builtin.module attributes {tir.pools = [
    #tir.pool_info<"flash", constant, size = 28, alignment = 4, access = {c = "ro"}>,
    #tir.pool_info<"global_workspace", workspace, size = 4, access = {c = "rw"}>]} {
  func.func @op(%x: memref<4xi8>) attributes {tir.prim_func} {
    %flag = tir.allocate_const {name_hint = "flag", value = dense<true> : tensor<1xi1>, pool_allocation = #tir.pool_allocation<"flash", 20>} : memref<1xi1>
    func.return
  }
  func.func @const_main(%x: memref<4xi8>) attributes {tir.prim_func, tir.main} {
    %c0 = tir.allocate_const {name_hint = "constant_0", value = dense<[1, -2]> : tensor<2xi32>, pool_allocation = #tir.pool_allocation<"flash", 0>} : memref<2xi32>
    %c1 = tir.allocate_const {name_hint = "constant_1", value = dense<[0.0, 1.0]> : tensor<2xf32>, pool_allocation = #tir.pool_allocation<"flash", 12>} : memref<2xf32>
    %0 = tir.allocate {name_hint = "sid_0", pool_allocation = #tir.pool_allocation<"global_workspace", 0>} : memref<4xi8>
    tir.call @op(%x) : (memref<4xi8>) -> ()
    func.return
  }
}

// -----

// Workspace I/O: the entry's inputs and outputs become views too; the entry
// then takes only pools and records where its inputs and outputs are.
// CHECK-LABEL: func.func @io_main(
// CHECK-SAME: %[[WS:[^:]*]]: memref<48xi8>) attributes {
// CHECK-SAME: tir.pool_args = ["global_workspace"], tir.input_allocations = [#tir.pool_allocation<"global_workspace", 0>], tir.output_allocations = [#tir.pool_allocation<"global_workspace", 32>], tir.input_types = [memref<2x2xf32>], tir.output_types = [memref<4xf32>]}
// CHECK: %[[O1:.*]] = arith.constant 0 : index
// CHECK: %[[IN:.*]] = memref.view %[[WS]][%[[O1]]][] : memref<48xi8> to memref<2x2xf32>
// CHECK: %[[O2:.*]] = arith.constant 32 : index
// CHECK: %[[OUT:.*]] = memref.view %[[WS]][%[[O2]]][] : memref<48xi8> to memref<4xf32>
// CHECK: %[[SID:.*]] = memref.view %[[WS]]
// CHECK: tir.call @op(%[[IN]], %[[SID]])
// CHECK: tir.call @op2(%[[SID]], %[[OUT]])
builtin.module attributes {tir.pools = [#tir.pool_info<"global_workspace", workspace, size = 48, access = {c = "rw"}>]} {
  func.func private @op(memref<2x2xf32>, memref<4xf32>) attributes {tir.prim_func}
  func.func private @op2(memref<4xf32>, memref<4xf32>) attributes {tir.prim_func}
  func.func @io_main(%x: memref<2x2xf32> {tir.pool_allocation = #tir.pool_allocation<"global_workspace", 0>},
                     %y: memref<4xf32> {tir.pool_allocation = #tir.pool_allocation<"global_workspace", 32>})
      attributes {tir.prim_func, tir.main, tir.input_names = ["x"], tir.output_names = ["output"]} {
    %0 = tir.allocate {name_hint = "sid_0", pool_allocation = #tir.pool_allocation<"global_workspace", 16>} : memref<4xf32>
    tir.call @op(%x, %0) : (memref<2x2xf32>, memref<4xf32>) -> ()
    tir.call @op2(%0, %y) : (memref<4xf32>, memref<4xf32>) -> ()
    func.return
  }
}

// -----

// Nothing planned, nothing to do: a module without static allocations is
// left alone (dynamic ones included).
// CHECK-LABEL: func.func @dyn_main(%{{.*}}: memref<4xi8>) attributes {tir.prim_func, tir.main} {
// CHECK: memref.alloc
func.func @dyn_main(%x: memref<4xi8>) attributes {tir.prim_func, tir.main} {
  %c4 = arith.constant 4 : index
  %dyn = memref.alloc(%c4) : memref<?xi8>
  func.return
}
