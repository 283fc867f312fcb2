// RUN: usmp-opt %s -p usmp-buffer-info --split-input-file | FileCheck %s
// RUN: usmp-opt %s -p 'usmp-buffer-info{use_workspace_io=true}' --split-input-file | FileCheck %s --check-prefix=IO

// A chain: each storage id lives from its producer to its last consumer.
// CHECK-LABEL: func.func @chain_main
// CHECK-SAME: usmp.steps = ["op", "op", "op"]
// CHECK: tir.allocate {usmp.buffer = "sid_0", usmp.size = 64 : i64, usmp.alignment = 16 : i64, usmp.live = array<i64: 0, 2>, usmp.pools = ["global_workspace"], usmp.conflicts = ["sid_1"]
// CHECK: tir.allocate {usmp.buffer = "sid_1", usmp.size = 64 : i64, usmp.alignment = 16 : i64, usmp.live = array<i64: 1, 3>, usmp.pools = ["global_workspace"], usmp.conflicts = ["sid_0"]
// IO-LABEL: func.func @chain_main
// IO-SAME: %x: memref<16xf32> {usmp.buffer = "x", usmp.size = 64 : i64, usmp.alignment = 16 : i64, usmp.live = array<i64: 0, 1>, usmp.pools = ["global_workspace"], usmp.conflicts = ["sid_0"]
// IO-SAME: %y: memref<16xf32> {usmp.buffer = "output", usmp.size = 64 : i64, usmp.alignment = 16 : i64, usmp.live = array<i64: 2, 3>, usmp.pools = ["global_workspace"], usmp.conflicts = ["sid_1"]
// IO: usmp.buffer = "sid_0", {{.*}} usmp.conflicts = ["sid_1", "x"]
func.func private @op(memref<16xf32>, memref<16xf32>) attributes {tir.prim_func}
func.func @chain_main(%x: memref<16xf32>, %y: memref<16xf32>) attributes {tir.prim_func, tir.main, tir.input_names = ["x"], tir.output_names = ["output"]} {
  %0 = tir.allocate {name_hint = "sid_0"} : memref<16xf32>
  %1 = tir.allocate {name_hint = "sid_1"} : memref<16xf32>
  tir.call @op(%x, %0) : (memref<16xf32>, memref<16xf32>) -> ()
  tir.call @op(%0, %1) : (memref<16xf32>, memref<16xf32>) -> ()
  tir.call @op(%1, %y) : (memref<16xf32>, memref<16xf32>) -> ()
  func.return
}

// -----

// An operator's scratch lives only during its calls: it conflicts with that
// call's arguments and what else is live then, not with what lives only
// between its calls (scale/acc). @pad is called at steps 0 and 2, so its
// scratch is live over [0, 1) and [2, 3).
// CHECK-LABEL: func.func @pad
// CHECK: tir.allocate {usmp.buffer = "pad/padded", usmp.size = 36 : i64, usmp.alignment = 16 : i64, usmp.live = array<i64: 0, 1, 2, 3>, usmp.pools = ["global_workspace"], usmp.conflicts = ["sid_0", "sid_1", "sid_2"]
// CHECK-LABEL: func.func @scale
// CHECK: tir.allocate {usmp.buffer = "scale/acc", usmp.size = 64 : i64, {{.*}} usmp.live = array<i64: 1, 2>, {{.*}} usmp.conflicts = ["sid_0", "sid_1"]
// CHECK-LABEL: func.func @scratch_main
// CHECK: usmp.buffer = "sid_0", {{.*}} usmp.live = array<i64: 0, 2>, {{.*}} usmp.conflicts = ["pad/padded", "scale/acc", "sid_1"]
// CHECK: usmp.buffer = "sid_1", {{.*}} usmp.live = array<i64: 1, 4>, {{.*}} usmp.conflicts = ["pad/padded", "scale/acc", "sid_0", "sid_2"]
// CHECK: usmp.buffer = "sid_2", {{.*}} usmp.live = array<i64: 2, 4>, {{.*}} usmp.conflicts = ["pad/padded", "sid_1"]
func.func @pad(%in: memref<16xi8>, %out: memref<16xi8>) attributes {tir.prim_func} {
  %p = tir.allocate {name_hint = "padded"} : memref<36xi8>
  func.return
}
func.func @scale(%in: memref<16xi8>, %out: memref<16xi8>) attributes {tir.prim_func} {
  %acc = tir.allocate {name_hint = "acc"} : memref<16xi32>
  func.return
}
func.func private @add(memref<16xi8>, memref<16xi8>, memref<16xi8>) attributes {tir.prim_func}
func.func @scratch_main(%x: memref<16xi8>, %y: memref<16xi8>) attributes {tir.prim_func, tir.main, tir.input_names = ["x"], tir.output_names = ["y"]} {
  %0 = tir.allocate {name_hint = "sid_0"} : memref<16xi8>
  %1 = tir.allocate {name_hint = "sid_1"} : memref<16xi8>
  %2 = tir.allocate {name_hint = "sid_2"} : memref<16xi8>
  tir.call @pad(%x, %0) : (memref<16xi8>, memref<16xi8>) -> ()
  tir.call @scale(%0, %1) : (memref<16xi8>, memref<16xi8>) -> ()
  tir.call @pad(%1, %2) : (memref<16xi8>, memref<16xi8>) -> ()
  tir.call @add(%1, %2, %y) : (memref<16xi8>, memref<16xi8>, memref<16xi8>) -> ()
  func.return
}

// -----

// Liveness follows views: a reinterpret_cast of sid_0 used at step 2 keeps
// sid_0 live; memref.copy is a step. A function called from an operator runs
// during that operator's calls, so its scratch lives then too.
// CHECK-LABEL: func.func @inner
// CHECK: usmp.buffer = "inner/tmp", {{.*}} usmp.live = array<i64: 1, 2>
// CHECK-LABEL: func.func @alias_main
// CHECK-SAME: usmp.steps = ["leaf", "outer", "memref.copy"]
// CHECK: usmp.buffer = "sid_0", {{.*}} usmp.live = array<i64: 0, 3>
func.func @inner(%a: memref<4xi8>) attributes {tir.prim_func} {
  %t = tir.allocate {name_hint = "tmp"} : memref<4xi8>
  func.return
}
func.func @outer(%a: memref<2x2xi8>) attributes {tir.prim_func} {
  %c = memref.reinterpret_cast %a to offset: [0], sizes: [4], strides: [1] : memref<2x2xi8> to memref<4xi8>
  tir.call @inner(%c) : (memref<4xi8>) -> ()
  func.return
}
func.func private @leaf(memref<4xi8>, memref<4xi8>) attributes {tir.prim_func}
func.func @alias_main(%x: memref<4xi8>, %y: memref<2x2xi8>) attributes {tir.prim_func, tir.main, tir.input_names = ["x"], tir.output_names = ["y"]} {
  %0 = tir.allocate {name_hint = "sid_0"} : memref<4xi8>
  tir.call @leaf(%x, %0) : (memref<4xi8>, memref<4xi8>) -> ()
  %1 = memref.reinterpret_cast %0 to offset: [0], sizes: [2, 2], strides: [2, 1] : memref<4xi8> to memref<2x2xi8>
  tir.call @outer(%1) : (memref<2x2xi8>) -> ()
  "memref.copy"(%1, %y) : (memref<2x2xi8>, memref<2x2xi8>) -> ()
  func.return
}

// -----

// A slice aliased at an offset (a view of rows 2..3 of sid_0) keeps all of
// sid_0 live until its last use, so sid_1, written before that, conflicts
// with it.
// CHECK-LABEL: func.func @offset_alias
// CHECK: usmp.buffer = "sid_0", {{.*}} usmp.live = array<i64: 0, 3>, {{.*}} usmp.conflicts = ["sid_1"]
// CHECK: usmp.buffer = "sid_1", {{.*}} usmp.live = array<i64: 1, 3>, {{.*}} usmp.conflicts = ["sid_0"]
func.func private @produce(memref<4x2xi8>, memref<4x2xi8>) attributes {tir.prim_func}
func.func private @half(memref<2x2xi8>, memref<2x2xi8>) attributes {tir.prim_func}
func.func private @add(memref<2x2xi8>, memref<2x2xi8>, memref<2x2xi8>) attributes {tir.prim_func}
func.func @offset_alias(%x: memref<4x2xi8>, %y: memref<2x2xi8>) attributes {tir.prim_func, tir.main, tir.input_names = ["x"], tir.output_names = ["y"]} {
  %0 = tir.allocate {name_hint = "sid_0"} : memref<4x2xi8>
  %1 = tir.allocate {name_hint = "sid_1"} : memref<2x2xi8>
  tir.call @produce(%x, %0) : (memref<4x2xi8>, memref<4x2xi8>) -> ()
  %2 = memref.reinterpret_cast %0 to offset: [0], sizes: [2, 2], strides: [2, 1] : memref<4x2xi8> to memref<2x2xi8>
  tir.call @half(%2, %1) : (memref<2x2xi8>, memref<2x2xi8>) -> ()
  %3 = memref.reinterpret_cast %0 to offset: [4], sizes: [2, 2], strides: [2, 1] : memref<4x2xi8> to memref<2x2xi8, strided<[2, 1], offset: 4>>
  tir.call @add(%3, %1, %y) : (memref<2x2xi8, strided<[2, 1], offset: 4>>, memref<2x2xi8>, memref<2x2xi8>) -> ()
  func.return
}

// -----

// Candidate pools: an allocate's own ordered candidate_pools, else every
// workspace pool in order -- minus the pools a target touching the buffer
// cannot read and write (the npu-only pool for buffers a c operator
// touches). Alignment is the largest of the candidates'. Constants go to
// constant pools the targets can read.
// CHECK-LABEL: func.func @access_main
// CHECK: usmp.buffer = "constant_0", usmp.size = 12 : i64, usmp.alignment = 4 : i64, usmp.pools = ["flash"]
// CHECK: usmp.buffer = "sid_0", usmp.size = 8 : i64, usmp.alignment = 16 : i64, {{.*}} usmp.pools = ["sram"]
// CHECK: usmp.buffer = "sid_1", usmp.size = 8 : i64, usmp.alignment = 16 : i64, {{.*}} usmp.pools = ["sram"]
// CHECK: usmp.buffer = "sid_2", usmp.size = 8 : i64, usmp.alignment = 32 : i64, {{.*}} usmp.pools = ["dtcm", "sram"]
// CHECK: usmp.buffer = "sid_3", usmp.size = 8 : i64, usmp.alignment = 32 : i64, {{.*}} usmp.pools = ["sram", "dtcm"]
builtin.module attributes {tir.pools = [
    #tir.pool_info<"npu_sram", workspace, alignment = 64, access = {npu = "rw"}>,
    #tir.pool_info<"dtcm", workspace, size = 1024, alignment = 32, access = {c = "rw", npu = "ro"}>,
    #tir.pool_info<"sram", workspace, alignment = 16, access = {c = "rw", npu = "rw"}>,
    #tir.pool_info<"flash", constant, alignment = 4, access = {c = "ro", npu = "ro"}>]} {
  func.func private @cpu_op(memref<2xi32>, memref<3xi32>, memref<2xi32>) attributes {tir.prim_func}
  func.func private @npu_op(memref<2xi32>, memref<2xi32>) attributes {tir.prim_func, tir.target = "npu"}
  func.func @access_main(%x: memref<2xi32>, %y: memref<2xi32>) attributes {tir.prim_func, tir.main, tir.input_names = ["x"], tir.output_names = ["y"]} {
    %w = tir.allocate_const {name_hint = "constant_0", value = dense<[1, 2, 3]> : tensor<3xi32>} : memref<3xi32>
    %0 = tir.allocate {name_hint = "sid_0"} : memref<2xi32>
    %1 = tir.allocate {name_hint = "sid_1"} : memref<2xi32>
    %2 = tir.allocate {name_hint = "sid_2"} : memref<2xi32>
    %3 = tir.allocate {name_hint = "sid_3", candidate_pools = ["sram", "dtcm"]} : memref<2xi32>
    tir.call @cpu_op(%x, %w, %0) : (memref<2xi32>, memref<3xi32>, memref<2xi32>) -> ()
    tir.call @npu_op(%0, %1) : (memref<2xi32>, memref<2xi32>) -> ()
    tir.call @cpu_op(%1, %w, %2) : (memref<2xi32>, memref<3xi32>, memref<2xi32>) -> ()
    tir.call @cpu_op(%2, %w, %3) : (memref<2xi32>, memref<3xi32>, memref<2xi32>) -> ()
    tir.call @cpu_op(%3, %w, %y) : (memref<2xi32>, memref<3xi32>, memref<2xi32>) -> ()
    func.return
  }
}

// -----

// Planned devices: the target of a call's virtual device counts, like the
// callee's own target.
// CHECK-LABEL: func.func @device_main
// CHECK: usmp.buffer = "sid_0", {{.*}} usmp.pools = ["shared"], usmp.conflicts = []
#npu = #device.virtual_device<"npu", 0, target = "npu">
builtin.module attributes {tir.pools = [
    #tir.pool_info<"cpu_only", workspace, access = {c = "rw"}>,
    #tir.pool_info<"shared", workspace, access = {c = "rw", npu = "rw"}>]} {
  func.func private @op(memref<2xi32>, memref<2xi32>) attributes {tir.prim_func}
  func.func @device_main(%x: memref<2xi32>, %y: memref<2xi32>) attributes {tir.prim_func, tir.main, tir.input_names = ["x"], tir.output_names = ["y"]} {
    %0 = tir.allocate {name_hint = "sid_0"} : memref<2xi32>
    tir.call @op(%x, %0) {tir.virtual_device = #npu} : (memref<2xi32>, memref<2xi32>) -> ()
    tir.call @op(%0, %y) : (memref<2xi32>, memref<2xi32>) -> ()
    func.return
  }
}

// -----

// Two targets (--target accel,c): a buffer only accel operators use may go
// to the accel-only pool (first in fallback order); one a host operator
// uses, or that only main's device_copy touches, may not. The copies between
// the two sides move data between their pools.
// CHECK-LABEL: func.func @split_main
// CHECK: usmp.buffer = "sid_0", {{.*}} usmp.pools = ["accel_sram"]
// CHECK: usmp.buffer = "sid_1", {{.*}} usmp.pools = ["accel_sram"]
// CHECK: usmp.buffer = "sid_2", {{.*}} usmp.pools = ["sram"]
// CHECK: usmp.buffer = "sid_3", {{.*}} usmp.pools = ["sram"]
#cpu = #device.virtual_device<"cpu", 0, target = "c", scope = "global">
#acc = #device.virtual_device<"accel", 0, target = "accel", scope = "global">
builtin.module attributes {tir.pools = [
    #tir.pool_info<"accel_sram", workspace, access = {accel = "rw"}>,
    #tir.pool_info<"sram", workspace, access = {c = "rw"}>]} {
  func.func private @acc_op(memref<2xi32>, memref<2xi32>) attributes {tir.prim_func, tir.target = "accel"}
  func.func private @cpu_op(memref<2xi32>, memref<2xi32>) attributes {tir.prim_func}
  func.func @split_main(%x: memref<2xi32>, %y: memref<2xi32>) attributes {tir.prim_func, tir.main, tir.input_names = ["x"], tir.output_names = ["y"]} {
    %0 = tir.allocate {name_hint = "sid_0"} : memref<2xi32>
    %1 = tir.allocate {name_hint = "sid_1"} : memref<2xi32>
    %2 = tir.allocate {name_hint = "sid_2"} : memref<2xi32>
    %3 = tir.allocate {name_hint = "sid_3"} : memref<2xi32>
    "memref.copy"(%x, %0) {tir.src_virtual_device = #cpu, tir.dst_virtual_device = #acc} : (memref<2xi32>, memref<2xi32>) -> ()
    tir.call @acc_op(%0, %1) {tir.virtual_device = #acc} : (memref<2xi32>, memref<2xi32>) -> ()
    "memref.copy"(%1, %2) {tir.src_virtual_device = #acc, tir.dst_virtual_device = #cpu} : (memref<2xi32>, memref<2xi32>) -> ()
    tir.call @cpu_op(%2, %3) {tir.virtual_device = #cpu} : (memref<2xi32>, memref<2xi32>) -> ()
    "memref.copy"(%3, %y) : (memref<2xi32>, memref<2xi32>) -> ()
    func.return
  }
}

// -----

// A buffer only device copies touch (a value passing through a device that
// runs no operator on it, e.g. an aliased reshape placed there) needs only
// its own device's target: here the npu-only pool.
// CHECK-LABEL: func.func @copies_main
// CHECK: usmp.buffer = "sid_0", {{.*}} usmp.pools = ["npu_sram"]
#cpu = #device.virtual_device<"cpu", 0, target = "c", scope = "global">
#npu = #device.virtual_device<"npu", 0, target = "npu", scope = "global">
builtin.module attributes {tir.pools = [
    #tir.pool_info<"npu_sram", workspace, access = {npu = "rw"}>,
    #tir.pool_info<"sram", workspace, access = {c = "rw"}>]} {
  func.func @copies_main(%x: memref<2xi32>, %y: memref<2xi32>) attributes {tir.prim_func, tir.main, tir.input_names = ["x"], tir.output_names = ["y"]} {
    %0 = tir.allocate {tir.virtual_device = #npu, name_hint = "sid_0"} : memref<2xi32>
    "memref.copy"(%x, %0) {tir.src_virtual_device = #cpu, tir.dst_virtual_device = #npu} : (memref<2xi32>, memref<2xi32>) -> ()
    "memref.copy"(%0, %y) {tir.src_virtual_device = #npu, tir.dst_virtual_device = #cpu} : (memref<2xi32>, memref<2xi32>) -> ()
    func.return
  }
}

// -----

// A call at the top of an operator is refined into its callee's statements
// (ticks 1 and 2: the load of 'a', the store into 't'; 'unused' is not live
// then); a call inside a loop is not: everything its callee touches, even a
// scratch no statement touches, is live over the whole loop (tick 3).
// CHECK-LABEL: func.func @inner_scratch
// CHECK: usmp.buffer = "inner_scratch/t", {{.*}} usmp.conflicts = ["inner_scratch/unused", "looped/a"], usmp.ticks = array<i64: 2, 4>
// CHECK: usmp.buffer = "inner_scratch/unused", {{.*}} usmp.conflicts = ["inner_scratch/t", "looped/a"], usmp.ticks = array<i64: 3, 4>
// CHECK-LABEL: func.func @looped
// CHECK: usmp.buffer = "looped/a", {{.*}} usmp.conflicts = ["inner_scratch/t", "inner_scratch/unused"], usmp.ticks = array<i64: 0, 4>
func.func @inner_scratch(%in: memref<4xi8>) attributes {tir.prim_func} {
  %c0 = arith.constant 0 : index
  %t = tir.allocate {name_hint = "t"} : memref<4xi8>
  %u = tir.allocate {name_hint = "unused"} : memref<4xi8>
  %v = memref.load %in[%c0] : memref<4xi8>
  memref.store %v, %t[%c0] : memref<4xi8>
  func.return
}
func.func @looped(%in: memref<4xi8>, %out: memref<4xi8>) attributes {tir.prim_func} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %a = tir.allocate {name_hint = "a"} : memref<4xi8>
  scf.for %i = %c0 to %c1 step %c1 {
    %v = memref.load %in[%i] : memref<4xi8>
    memref.store %v, %a[%i] : memref<4xi8>
  }
  tir.call @inner_scratch(%a) : (memref<4xi8>) -> ()
  scf.for %i = %c0 to %c1 step %c1 {
    tir.call @inner_scratch(%a) : (memref<4xi8>) -> ()
  }
  func.return
}
func.func @looped_main(%x: memref<4xi8>, %y: memref<4xi8>) attributes {tir.prim_func, tir.main, tir.input_names = ["x"], tir.output_names = ["y"]} {
  tir.call @looped(%x, %y) : (memref<4xi8>, memref<4xi8>) -> ()
  func.return
}
