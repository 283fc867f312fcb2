// RUN: usmp-opt %s -p 'usmp{algorithm=greedy_by_size}' --split-input-file | FileCheck %s
// RUN: usmp-opt %s -p 'usmp{algorithm=greedy_by_size},usmp' --split-input-file | FileCheck %s
// RUN: usmp-opt %s -p usmp --split-input-file | FileCheck %s --check-prefix=ANY
// RUN: usmp-opt %s -p 'usmp{algorithm=greedy_by_conflicts}' --split-input-file | FileCheck %s --check-prefix=ANY
// RUN: usmp-opt %s -p 'usmp{algorithm=greedy_by_size use_workspace_io=true}' --split-input-file | FileCheck %s --check-prefix=IO
// RUN: usmp-opt %s -p 'usmp{algorithm=greedy_by_size pools="fast:workspace:48,slow:workspace,rom:constant:align=4"}' --split-input-file | FileCheck %s --check-prefix=POOLS

// What aot-lower-main produces for a small int8 model: a constant, two
// storage ids, an operator with scratch, a copy to the output. After usmp no
// static allocation is left anywhere. Liveness is per statement: the second
// add reads sid_0 only in its first loop and writes sid_1 only in its second,
// so the two share bytes (24 B; 40 B with liveness per call).
// CHECK-LABEL: builtin.module attributes {tir.pools = [#tir.pool_info<"global_workspace", workspace, size = 24, alignment = 16, access = {c = rw}>, #tir.pool_info<"global_const", constant, size = 8, alignment = 16, access = {c = ro}>]}
// CHECK: "memref.global"() <{sym_name = "global_const", type = memref<8xi8>, initial_value = dense<[1, 2, 3, 4, 5, 6, 7, 8]> : tensor<8xi8>, sym_visibility = "private", constant, alignment = 16 : i64}>
// CHECK-LABEL: func.func @tvmgen_default_fused_add(
// CHECK-SAME: %[[WS:[a-z_]+]]: memref<24xi8>) attributes {tir.prim_func, tir.pool_args = ["global_workspace"]}
// CHECK: %[[OFF:.*]] = arith.constant 0 : index
// CHECK: %acc = memref.view %[[WS]][%[[OFF]]][] : memref<24xi8> to memref<8xi16>
// CHECK-LABEL: func.func @tvmgen_default___tvm_main__(
// CHECK-SAME: %input: memref<8xi8>, %output: memref<8xi8>, %[[MWS:[a-z_]+]]: memref<24xi8>, %[[CONST:[a-z_]+]]: memref<8xi8>)
// CHECK-SAME: tir.pool_args = ["global_workspace", "global_const"]
// CHECK: memref.view %[[CONST]][%{{.*}}][] : memref<8xi8> to memref<8xi8>
// CHECK: %[[O1:.*]] = arith.constant 16 : index
// CHECK: memref.view %[[MWS]][%[[O1]]][] : memref<24xi8> to memref<8xi8>
// CHECK: %[[O2:.*]] = arith.constant 16 : index
// CHECK: memref.view %[[MWS]][%[[O2]]][] : memref<24xi8> to memref<8xi8>
// CHECK: tir.call @tvmgen_default_fused_add(%input, %{{.*}}, %{{.*}}, %[[MWS]])
// CHECK: tir.call @tvmgen_default_fused_add(%{{.*}}, %{{.*}}, %{{.*}}, %[[MWS]])
// CHECK: memref.copy
// CHECK-NOT: tir.allocate
// ANY-LABEL: func.func @tvmgen_default___tvm_main__(
// ANY-SAME: tir.pool_args = ["global_workspace", "global_const"]
// ANY-NOT: tir.allocate
// Workspace I/O: main takes only the pools.
// IO-LABEL: func.func @tvmgen_default___tvm_main__(
// IO-SAME: %[[WS:[a-z_]+]]: memref<{{[0-9]+}}xi8>, %[[CONST:[a-z_]+]]: memref<8xi8>)
// IO-SAME: tir.input_allocations = [#tir.pool_allocation<"global_workspace", {{[0-9]+}}>], tir.output_allocations = [#tir.pool_allocation<"global_workspace", {{[0-9]+}}>], tir.input_types = [memref<8xi8>], tir.output_types = [memref<8xi8>]}
// IO: %input = memref.view %[[WS]]
// IO: %output = memref.view %[[WS]]
// IO-NOT: tir.allocate
// Pools from the option replace the module's: here all fits in the first.
// POOLS-LABEL: builtin.module attributes {tir.pools = [#tir.pool_info<"fast", workspace, size = 24, alignment = 16, access = {c = rw}>, #tir.pool_info<"slow", workspace, size = 0, alignment = 16, access = {c = rw}>, #tir.pool_info<"rom", constant, size = 8, alignment = 4, access = {c = ro}>]}
// POOLS: "memref.global"() <{sym_name = "rom"
// POOLS-LABEL: func.func @tvmgen_default___tvm_main__(
// POOLS-SAME: tir.pool_args = ["fast", "rom"]
module {
  func.func @tvmgen_default_fused_add(%a: memref<8xi8>, %b: memref<8xi8>, %out: memref<8xi8>) attributes {tir.prim_func} {
    %acc = tir.allocate {name_hint = "acc"} : memref<8xi16>
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    scf.for %i = %c0 to %c8 step %c1 {
      %x = memref.load %a[%i] : memref<8xi8>
      %y = memref.load %b[%i] : memref<8xi8>
      %xw = arith.extsi %x : i8 to i16
      %yw = arith.extsi %y : i8 to i16
      %s = arith.addi %xw, %yw : i16
      memref.store %s, %acc[%i] : memref<8xi16>
    }
    scf.for %i = %c0 to %c8 step %c1 {
      %s = memref.load %acc[%i] : memref<8xi16>
      %t = arith.trunci %s : i16 to i8
      memref.store %t, %out[%i] : memref<8xi8>
    }
    func.return
  }
  func.func @tvmgen_default___tvm_main__(%input: memref<8xi8>, %output: memref<8xi8>) attributes {tir.prim_func, tir.main, tir.input_names = ["input"], tir.output_names = ["output"]} {
    %constant_0 = tir.allocate_const {name_hint = "constant_0", value = dense<[1, 2, 3, 4, 5, 6, 7, 8]> : tensor<8xi8>} : memref<8xi8>
    %sid_0 = tir.allocate {name_hint = "sid_0"} : memref<8xi8>
    %sid_1 = tir.allocate {name_hint = "sid_1"} : memref<8xi8>
    tir.call @tvmgen_default_fused_add(%input, %constant_0, %sid_0) : (memref<8xi8>, memref<8xi8>, memref<8xi8>) -> ()
    tir.call @tvmgen_default_fused_add(%sid_0, %constant_0, %sid_1) : (memref<8xi8>, memref<8xi8>, memref<8xi8>) -> ()
    "memref.copy"(%sid_1, %output) : (memref<8xi8>, memref<8xi8>) -> ()
    func.return
  }
}

// -----

// Pools from the module: dtcm (96 B) first, sram as fallback; the operator's
// scratch and the storage ids spread over both; each function takes only the
// pools it needs.
// CHECK-LABEL: builtin.module attributes {tir.pools = [#tir.pool_info<"dtcm", workspace, size = 96, alignment = 16, access = {c = rw}>, #tir.pool_info<"sram", workspace, size = 32, alignment = 16, access = {c = rw}>, #tir.pool_info<"global_const", constant, size = 0,
// CHECK-LABEL: func.func @conv(
// CHECK-SAME: %{{.*}}: memref<16xi8>, %{{.*}}: memref<16xi8>, %[[D:[a-z_]+]]: memref<96xi8>) attributes {tir.prim_func, tir.pool_args = ["dtcm"]}
// CHECK: memref.view %[[D]][%{{.*}}][] : memref<96xi8> to memref<16xi32>
// CHECK-LABEL: func.func @multi_main(
// CHECK-SAME: %[[MD:[a-z_]+]]: memref<96xi8>, %[[MS:[a-z_]+]]: memref<32xi8>)
// CHECK-SAME: tir.pool_args = ["dtcm", "sram"]
// CHECK: memref.view %[[MS]][%{{.*}}][] : memref<32xi8> to memref<32xi8>
// CHECK: memref.view %[[MD]][%{{.*}}][] : memref<96xi8> to memref<32xi8>
// CHECK-NOT: tir.allocate
// POOLS-LABEL: func.func @multi_main(
// POOLS-SAME: tir.pool_args = ["fast", "slow"]
builtin.module attributes {tir.pools = [
    #tir.pool_info<"dtcm", workspace, size = 96, access = {c = "rw"}>,
    #tir.pool_info<"sram", workspace, access = {c = "rw"}>]} {
  func.func @conv(%in: memref<16xi8>, %out: memref<16xi8>) attributes {tir.prim_func} {
    %acc = tir.allocate {name_hint = "acc"} : memref<16xi32>
    func.return
  }
  func.func @multi_main(%x: memref<16xi8>, %y: memref<16xi8>) attributes {tir.prim_func, tir.main, tir.input_names = ["x"], tir.output_names = ["y"]} {
    %0 = tir.allocate {name_hint = "sid_0"} : memref<32xi8>
    %1 = tir.allocate {name_hint = "sid_1"} : memref<32xi8>
    %a = memref.reinterpret_cast %0 to offset: [0], sizes: [16], strides: [1] : memref<32xi8> to memref<16xi8>
    %b = memref.reinterpret_cast %1 to offset: [0], sizes: [16], strides: [1] : memref<32xi8> to memref<16xi8>
    tir.call @conv(%x, %a) : (memref<16xi8>, memref<16xi8>) -> ()
    tir.call @conv(%a, %b) : (memref<16xi8>, memref<16xi8>) -> ()
    tir.call @conv(%b, %y) : (memref<16xi8>, memref<16xi8>) -> ()
    func.return
  }
}
