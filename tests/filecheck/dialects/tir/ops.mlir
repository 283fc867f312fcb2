// RUN: usmp-opt %s --split-input-file | usmp-opt --split-input-file | FileCheck %s
// RUN: usmp-opt %s --split-input-file --print-op-generic | usmp-opt --split-input-file | FileCheck %s

// CHECK-LABEL: func.func @allocate
// CHECK: tir.allocate {name_hint = "sid_1"} : memref<1x16xi8>
// CHECK: tir.allocate {name_hint = "scratch", scope = "local", candidate_pools = ["sram", "dram"]} : memref<16xi32>
// CHECK: tir.allocate {name_hint = "sid_2", pool_allocation = #tir.pool_allocation<"sram", 128>} : memref<4xf32>
func.func @allocate() attributes {tir.prim_func} {
  %0 = tir.allocate {name_hint = "sid_1"} : memref<1x16xi8>
  %1 = tir.allocate {name_hint = "scratch", scope = "local", candidate_pools = ["sram", "dram"]} : memref<16xi32>
  %2 = tir.allocate {name_hint = "sid_2", pool_allocation = #tir.pool_allocation<"sram", 128>} : memref<4xf32>
  func.return
}

// -----

// CHECK-LABEL: func.func @allocate_const
// CHECK: tir.allocate_const {name_hint = "constant_0", value = dense<[1, -2, 3, 4]> : tensor<4xi8>} : memref<4xi8>
// CHECK: tir.allocate_const {name_hint = "w", value = dense_resource<w_blob> : tensor<2x2xf32>} : memref<2x2xf32>
func.func @allocate_const() attributes {tir.prim_func} {
  %0 = tir.allocate_const {name_hint = "constant_0", value = dense<[1, -2, 3, 4]> : tensor<4xi8>} : memref<4xi8>
  %1 = tir.allocate_const {name_hint = "w", value = dense_resource<w_blob> : tensor<2x2xf32>} : memref<2x2xf32>
  func.return
}

// -----

// CHECK-LABEL: func.func @call
// CHECK: tir.call @op(%{{.*}}, %{{.*}}) : (memref<4xi8>, memref<4xi8>) -> ()
// CHECK: tir.call cpacked @op(%{{.*}}, %{{.*}}) : (memref<4xi8>, memref<4xi8>) -> ()
func.func private @op(memref<4xi8>, memref<4xi8>) attributes {tir.prim_func}
func.func @call(%a: memref<4xi8>, %b: memref<4xi8>) attributes {tir.prim_func, tir.main} {
  tir.call @op(%a, %b) : (memref<4xi8>, memref<4xi8>) -> ()
  tir.call cpacked @op(%a, %b) : (memref<4xi8>, memref<4xi8>) -> ()
  func.return
}

// -----

// A row-major view at a static offset (a slice aot-lower-main aliases) may be
// passed for a parameter of the identity layout.
// CHECK-LABEL: func.func @call_with_offset_view
// CHECK: tir.call @op(%{{.*}}, %{{.*}}) : (memref<2x3xi8, strided<[3, 1], offset: 6>>, memref<2x3xi8>) -> ()
func.func private @op(memref<2x3xi8>, memref<2x3xi8>) attributes {tir.prim_func}
func.func @call_with_offset_view(%a: memref<4x3xi8>, %b: memref<2x3xi8>) attributes {tir.prim_func, tir.main} {
  %v = memref.reinterpret_cast %a to offset: [6], sizes: [2, 3], strides: [3, 1] : memref<4x3xi8> to memref<2x3xi8, strided<[3, 1], offset: 6>>
  tir.call @op(%v, %b) : (memref<2x3xi8, strided<[3, 1], offset: 6>>, memref<2x3xi8>) -> ()
  func.return
}

// -----

// CHECK: builtin.module attributes {tir.pools = [#tir.pool_info<"sram", workspace, size = 65536, alignment = 16, access = {c = rw, "ethos-u" = ro}>, #tir.pool_info<"flash", constant, size = 0, alignment = 4, access = {c = ro}>]}
builtin.module attributes {tir.pools = [#tir.pool_info<"sram", workspace, size = 65536, alignment = 16, access = {"c" = "rw", "ethos-u" = "ro"}>, #tir.pool_info<"flash", constant, alignment = 4, access = {c = "ro"}>]} {
}

// -----

// The enums on their own, and a pool written in the printed (keyword) form.
// CHECK:      builtin.module attributes {
// CHECK-SAME: test.call = #tir<call_type packed>, test.kind = #tir<pool_kind constant>, test.mode = #tir<access ro>
// CHECK-SAME: tir.pools = [#tir.pool_info<"dtcm", workspace, size = 1024, alignment = 8, access = {c = rw, npu = ro}>]
builtin.module attributes {test.call = #tir<call_type packed>, test.kind = #tir<pool_kind constant>, test.mode = #tir<access ro>, tir.pools = [#tir.pool_info<"dtcm", workspace, size = 1024, alignment = 8, access = {c = rw, npu = ro}>]} {
}
