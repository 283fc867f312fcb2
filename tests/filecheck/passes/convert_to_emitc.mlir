// RUN: usmp-opt %s -p convert-to-emitc --split-input-file | FileCheck %s
// RUN: usmp-opt %s -p convert-to-emitc,convert-to-emitc --split-input-file | FileCheck %s

// Pools: workspace pools become uint8_t*, constant pools const uint8_t*; a
// view is (T*)&pool[offset]; tir.pools becomes builtin-only usmp.pools and the
// constant pool's bytes a static const global.
// CHECK-LABEL: builtin.module attributes {usmp.pools = [{name = "sram", kind = "workspace", size = 64 : i64, alignment = 16 : i64}, {name = "flash", kind = "constant", size = 8 : i64, alignment = 4 : i64}]}
// CHECK-NEXT:    emitc.include <"stdbool.h">
// CHECK-NEXT:    emitc.include <"stddef.h">
// CHECK-NEXT:    emitc.include <"stdint.h">
// CHECK-NEXT:    emitc.include <"string.h">
// CHECK-NEXT:    emitc.verbatim "#ifndef USMP_ALIGNED{{.*}}" {usmp.library}
// CHECK-NEXT:    emitc.verbatim "USMP_ALIGNED(4)" {usmp.library}
// CHECK-NEXT:    emitc.global static const @flash : !emitc.array<8xui8> = dense<[1, 2, 3, 4, 5, 6, 7, 255]> {usmp.alignment = 4 : i64, usmp.pool = "flash"}
// CHECK-NEXT:    emitc.func private @op(!emitc.ptr<i8>, !emitc.ptr<i8>, !emitc.ptr<i8>, !emitc.ptr<ui8>) -> () attributes {specifiers = ["extern"], tir.prim_func, tir.pool_args = ["sram"]}
// CHECK-NEXT:    emitc.func @tvmgen_default___tvm_main__(%x: !emitc.ptr<i8> {usmp.memref = memref<2x4xi8>}, %output: !emitc.ptr<i8> {usmp.memref = memref<2x4xi8>}, %sram: !emitc.ptr<ui8> {usmp.memref = memref<64xi8>}, %flash: !emitc.ptr<!emitc.opaque<"const uint8_t">> {usmp.memref = memref<8xi8>})
// CHECK-SAME:      attributes {tir.prim_func, tir.main, tir.input_names = ["x"], tir.output_names = ["output"], tir.pool_args = ["sram", "flash"]}
// CHECK:         %[[C16:.*]] = "emitc.constant"() <{value = 16 : index}> : () -> !emitc.ptrdiff_t
// CHECK:         %[[B0:.*]] = emitc.subscript %flash[%{{.*}}] : (!emitc.ptr<!emitc.opaque<"const uint8_t">>, !emitc.ptrdiff_t) -> !emitc.lvalue<!emitc.opaque<"const uint8_t">>
// CHECK-NEXT:    %[[A0:.*]] = emitc.apply "&"(%[[B0]]) : (!emitc.lvalue<!emitc.opaque<"const uint8_t">>) -> !emitc.ptr<!emitc.opaque<"const uint8_t">>
// CHECK-NEXT:    %w = emitc.cast %[[A0]] : !emitc.ptr<!emitc.opaque<"const uint8_t">> to !emitc.ptr<i8>
// CHECK-NEXT:    %[[B1:.*]] = emitc.subscript %sram[%[[C16]]] : (!emitc.ptr<ui8>, !emitc.ptrdiff_t) -> !emitc.lvalue<ui8>
// CHECK-NEXT:    %[[A1:.*]] = emitc.apply "&"(%[[B1]]) : (!emitc.lvalue<ui8>) -> !emitc.ptr<ui8>
// CHECK-NEXT:    %sid = emitc.cast %[[A1]] : !emitc.ptr<ui8> to !emitc.ptr<i8>
// CHECK-NEXT:    emitc.call @op(%x, %w, %sid, %sram) : (!emitc.ptr<i8>, !emitc.ptr<i8>, !emitc.ptr<i8>, !emitc.ptr<ui8>) -> ()
// CHECK-NEXT:    emitc.call_opaque "memcpy"(%output, %sid, %{{.*}}) : (!emitc.ptr<i8>, !emitc.ptr<i8>, !emitc.ptrdiff_t) -> ()
// CHECK-NEXT:    emitc.return
// The rest of the library (usmp.library): the interface, the workspace pool
// and run, which reads the I/O structs and passes the pools.
// CHECK:         emitc.verbatim "#ifndef TVMGEN_DEFAULT_H_{{.*}}} TVMInputs_default;{{.*}}" {usmp.library}
// CHECK-NEXT:    emitc.verbatim "USMP_ALIGNED(16)" {usmp.library}
// CHECK-NEXT:    emitc.global static @tvmgen_default_sram : !emitc.array<64xui8> {usmp.library}
// CHECK-NEXT:    emitc.func @tvmgen_default_run(%[[IN:.*]]: !emitc.ptr<!emitc.opaque<"TVMInputs_default">>, %[[OUT:.*]]: !emitc.ptr<!emitc.opaque<"TVMOutputs_default">>) -> i32 attributes {usmp.library} {
// CHECK:           "emitc.member_of_ptr"(%{{.*}}) <{member = "x"}>
// CHECK:           "emitc.member_of_ptr"(%{{.*}}) <{member = "output"}>
// CHECK:           emitc.get_global @tvmgen_default_sram : !emitc.array<64xui8>
// CHECK:           emitc.get_global @flash : !emitc.array<8xui8>
// CHECK:           emitc.call @tvmgen_default___tvm_main__(
builtin.module attributes {tir.pools = [#tir.pool_info<"sram", workspace, size = 64, alignment = 16, access = {"c" = "rw"}>, #tir.pool_info<"flash", constant, size = 8, alignment = 4, access = {"c" = "ro"}>]} {
  "memref.global"() <{sym_name = "flash", sym_visibility = "private", type = memref<8xi8>, initial_value = dense<[1, 2, 3, 4, 5, 6, 7, -1]> : tensor<8xi8>, constant, alignment = 4 : i64}> : () -> ()
  func.func private @op(memref<2x4xi8>, memref<2x4xi8>, memref<2x4xi8>, memref<64xi8>) attributes {tir.prim_func, tir.pool_args = ["sram"]}
  func.func @tvmgen_default___tvm_main__(%x: memref<2x4xi8>, %output: memref<2x4xi8>, %sram: memref<64xi8>, %flash: memref<8xi8>) attributes {tir.prim_func, tir.main, tir.input_names = ["x"], tir.output_names = ["output"], tir.pool_args = ["sram", "flash"]} {
    %c0 = arith.constant 0 : index
    %c16 = arith.constant 16 : index
    %w = memref.view %flash[%c0][] : memref<8xi8> to memref<2x4xi8>
    %sid = memref.view %sram[%c16][] : memref<64xi8> to memref<2x4xi8>
    tir.call @op(%x, %w, %sid, %sram) : (memref<2x4xi8>, memref<2x4xi8>, memref<2x4xi8>, memref<64xi8>) -> ()
    "memref.copy"(%sid, %output) : (memref<2x4xi8>, memref<2x4xi8>) -> ()
    func.return
  }
}

// -----

// A tir.call passing a view at an offset (a slice aot-lower-main aliases)
// passes the address of its first element, &p[offset]: the callee indexes
// from 0.
// CHECK-LABEL: emitc.func @offset_view(%a: !emitc.ptr<i8> {usmp.memref = memref<4x3xi8>}, %b: !emitc.ptr<i8> {usmp.memref = memref<2x3xi8>})
// CHECK:         %[[C6:.*]] = "emitc.constant"() <{value = 6 : index}> : () -> !emitc.ptrdiff_t
// CHECK-NEXT:    %[[E:.*]] = emitc.subscript %a[%[[C6]]] : (!emitc.ptr<i8>, !emitc.ptrdiff_t) -> !emitc.lvalue<i8>
// CHECK-NEXT:    %[[P:.*]] = emitc.apply "&"(%[[E]]) : (!emitc.lvalue<i8>) -> !emitc.ptr<i8>
// CHECK-NEXT:    emitc.call @op(%[[P]], %b) : (!emitc.ptr<i8>, !emitc.ptr<i8>) -> ()
func.func private @op(memref<2x3xi8>, memref<2x3xi8>) attributes {tir.prim_func}
func.func @offset_view(%a: memref<4x3xi8>, %b: memref<2x3xi8>) {
  %v = memref.reinterpret_cast %a to offset: [6], sizes: [2, 3], strides: [3, 1] : memref<4x3xi8> to memref<2x3xi8, strided<[3, 1], offset: 6>>
  tir.call @op(%v, %b) : (memref<2x3xi8, strided<[3, 1], offset: 6>>, memref<2x3xi8>) -> ()
  func.return
}

// -----

// A global that is not a pool stays a global of its own type; a constant
// one's address is cast explicitly (C's pointer to const, see
// tests/filecheck/lowering/c_constant_globals.mlir).
// CHECK-LABEL: emitc.global static const @table : !emitc.array<4xi32> = dense<[1, 2, 3, 4]>
// CHECK:       emitc.func @lookup(%i: !emitc.ptrdiff_t) -> i32
// CHECK:         %[[T:.*]] = emitc.get_global @table : !emitc.array<4xi32>
// CHECK-NEXT:    %[[T0:.*]] = emitc.subscript %[[T]][%{{.*}}] : (!emitc.array<4xi32>, !emitc.ptrdiff_t) -> !emitc.lvalue<i32>
// CHECK-NEXT:    %[[A:.*]] = emitc.apply "&"(%[[T0]]) : (!emitc.lvalue<i32>) -> !emitc.ptr<i32>
// CHECK-NEXT:    %t = emitc.cast %[[A]] : !emitc.ptr<i32> to !emitc.ptr<i32>
// CHECK-NEXT:    %[[E:.*]] = emitc.subscript %t[%i] : (!emitc.ptr<i32>, !emitc.ptrdiff_t) -> !emitc.lvalue<i32>
// CHECK-NEXT:    %v = emitc.load %[[E]] : !emitc.lvalue<i32>
"memref.global"() <{sym_name = "table", sym_visibility = "private", type = memref<4xi32>, initial_value = dense<[1, 2, 3, 4]> : tensor<4xi32>, constant}> : () -> ()
func.func @lookup(%i: index) -> i32 {
  %t = memref.get_global @table : memref<4xi32>
  %v = memref.load %t[%i] : memref<4xi32>
  func.return %v : i32
}

// -----

// Element m[i, j] of a memref is p[offset + i*s0 + j*s1]; constant indices
// fold; a subview is the same pointer indexed with its own layout.
// CHECK-LABEL: emitc.func @index(%m: !emitc.ptr<f32> {usmp.memref = memref<4x8xf32>}, %i: !emitc.ptrdiff_t, %j: !emitc.ptrdiff_t) -> f32
// CHECK-DAG:     %[[C8:.*]] = "emitc.constant"() <{value = 8 : index}> : () -> !emitc.ptrdiff_t
// CHECK-DAG:     %[[C19:.*]] = "emitc.constant"() <{value = 19 : index}> : () -> !emitc.ptrdiff_t
// CHECK-DAG:     %[[C10:.*]] = "emitc.constant"() <{value = 10 : index}> : () -> !emitc.ptrdiff_t
// CHECK:         %[[R:.*]] = emitc.mul %i, %[[C8]] : (!emitc.ptrdiff_t, !emitc.ptrdiff_t) -> !emitc.ptrdiff_t
// CHECK-NEXT:    %[[L:.*]] = emitc.add %[[R]], %j : (!emitc.ptrdiff_t, !emitc.ptrdiff_t) -> !emitc.ptrdiff_t
// CHECK-NEXT:    %[[E:.*]] = emitc.subscript %m[%[[L]]] : (!emitc.ptr<f32>, !emitc.ptrdiff_t) -> !emitc.lvalue<f32>
// CHECK-NEXT:    %a = emitc.load %[[E]] : !emitc.lvalue<f32>
// CHECK-NEXT:    %[[E2:.*]] = emitc.subscript %m[%[[C19]]] : (!emitc.ptr<f32>, !emitc.ptrdiff_t) -> !emitc.lvalue<f32>
// CHECK-NEXT:    %b = emitc.load %[[E2]] : !emitc.lvalue<f32>
// CHECK-NEXT:    %[[R2:.*]] = emitc.mul %i, %[[C8]] : (!emitc.ptrdiff_t, !emitc.ptrdiff_t) -> !emitc.ptrdiff_t
// CHECK-NEXT:    %[[L2:.*]] = emitc.add %[[R2]], %[[C10]] : (!emitc.ptrdiff_t, !emitc.ptrdiff_t) -> !emitc.ptrdiff_t
// CHECK-NEXT:    %[[E3:.*]] = emitc.subscript %m[%[[L2]]] : (!emitc.ptr<f32>, !emitc.ptrdiff_t) -> !emitc.lvalue<f32>
// CHECK-NEXT:    %c = emitc.load %[[E3]] : !emitc.lvalue<f32>
func.func @index(%m: memref<4x8xf32>, %i: index, %j: index) -> f32 {
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %a = memref.load %m[%i, %j] : memref<4x8xf32>
  %b = memref.load %m[%c2, %c3] : memref<4x8xf32>
  %s = memref.subview %m[1, 2] [2, 4] [1, 1] : memref<4x8xf32> to memref<2x4xf32, strided<[8, 1], offset: 10>>
  %c0 = arith.constant 0 : index
  %c = memref.load %s[%i, %c0] : memref<2x4xf32, strided<[8, 1], offset: 10>>
  %ab = arith.addf %a, %b : f32
  %abc = arith.addf %ab, %c : f32
  func.return %abc : f32
}

// -----

// Loop-carried values and scf.if results go through C variables.
// CHECK-LABEL: emitc.func @sum(%m: !emitc.ptr<i32> {usmp.memref = memref<8xi32>}, %flag: i1) -> i32
// CHECK:         %total = "emitc.variable"() <{value = #emitc.opaque<"">}> : () -> !emitc.lvalue<i32>
// CHECK-NEXT:    emitc.assign %{{.*}} : i32 to %total : !emitc.lvalue<i32>
// CHECK-NEXT:    emitc.for %i = %{{.*}} to %{{.*}} step %{{.*}} : !emitc.ptrdiff_t {
// CHECK-NEXT:      %[[ACC:.*]] = emitc.load %total : !emitc.lvalue<i32>
// CHECK:           %next = emitc.add %[[ACC]], %{{.*}} : (i32, i32) -> i32
// CHECK-NEXT:      emitc.assign %next : i32 to %total : !emitc.lvalue<i32>
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[TOTAL:.*]] = emitc.load %total : !emitc.lvalue<i32>
// CHECK-NEXT:    %r = "emitc.variable"() <{value = #emitc.opaque<"">}> : () -> !emitc.lvalue<i32>
// CHECK-NEXT:    emitc.if %flag {
// CHECK-NEXT:      emitc.assign %[[TOTAL]] : i32 to %r : !emitc.lvalue<i32>
// CHECK-NEXT:    } else {
// CHECK-NEXT:      %n = emitc.sub %zero, %[[TOTAL]] : (i32, i32) -> i32
// CHECK-NEXT:      emitc.assign %n : i32 to %r : !emitc.lvalue<i32>
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[R:.*]] = emitc.load %r : !emitc.lvalue<i32>
// CHECK-NEXT:    emitc.return %[[R]] : i32
func.func @sum(%m: memref<8xi32>, %flag: i1) -> i32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0 : i32
  %total = scf.for %i = %c0 to %c8 step %c1 iter_args(%acc = %zero) -> (i32) {
    %x = memref.load %m[%i] : memref<8xi32>
    %next = arith.addi %acc, %x : i32
    scf.yield %next : i32
  }
  %r = scf.if %flag -> (i32) {
    scf.yield %total : i32
  } else {
    %n = arith.subi %zero, %total : i32
    scf.yield %n : i32
  }
  func.return %r : i32
}

// -----

// Unsigned operations compute in the unsigned type; shl too (a signed left
// shift of a negative value is undefined in C); trunci to i1 keeps the low bit.
// CHECK-LABEL: emitc.func @unsigned(%a: i32, %b: i32, %c: i8,
// CHECK:         %[[UA:.*]] = emitc.cast %a : i32 to ui32
// CHECK-NEXT:    %[[UB:.*]] = emitc.cast %b : i32 to ui32
// CHECK-NEXT:    %[[Q:.*]] = emitc.div %[[UA]], %[[UB]] : (ui32, ui32) -> ui32
// CHECK-NEXT:    %d = emitc.cast %[[Q]] : ui32 to i32
// CHECK:         %[[S:.*]] = emitc.bitwise_left_shift %{{.*}}, %{{.*}} : (ui32, ui32) -> ui32
// CHECK-NEXT:    %s = emitc.cast %[[S]] : ui32 to i32
// CHECK:         %lt = emitc.cmp lt, %{{.*}}, %{{.*}} : (ui32, ui32) -> i1
// CHECK:         %[[U8:.*]] = emitc.cast %c : i8 to ui8
// CHECK-NEXT:    %z = emitc.cast %[[U8]] : ui8 to i32
// CHECK:         %[[LOW:.*]] = emitc.bitwise_and %a, %{{.*}} : (i32, i32) -> i32
// CHECK-NEXT:    %[[NZ:.*]] = emitc.cmp ne, %[[LOW]], %{{.*}} : (i32, i32) -> i1
func.func @unsigned(%a: i32, %b: i32, %c: i8, %out: memref<3xi32>, %bits: memref<2xi1>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %d = arith.divui %a, %b : i32
  %s = arith.shli %a, %b : i32
  %lt = arith.cmpi ult, %a, %b : i32
  %z = arith.extui %c : i8 to i32
  %t = arith.trunci %a : i32 to i1
  memref.store %d, %out[%c0] : memref<3xi32>
  memref.store %s, %out[%c1] : memref<3xi32>
  memref.store %z, %out[%c2] : memref<3xi32>
  memref.store %lt, %bits[%c0] : memref<2xi1>
  memref.store %t, %bits[%c1] : memref<2xi1>
  func.return
}

// -----

// floordivsi from C's truncating division and remainder.
// CHECK-LABEL: emitc.func @floordiv(%a: i32, %b: i32) -> i32
// CHECK:         %[[Q:.*]] = emitc.div %a, %b : (i32, i32) -> i32
// CHECK-NEXT:    %[[R:.*]] = emitc.rem %a, %b : (i32, i32) -> i32
// CHECK-NEXT:    %[[INEXACT:.*]] = emitc.cmp ne, %[[R]], %{{.*}} : (i32, i32) -> i1
// CHECK-NEXT:    %[[RN:.*]] = emitc.cmp lt, %[[R]], %{{.*}} : (i32, i32) -> i1
// CHECK-NEXT:    %[[BN:.*]] = emitc.cmp lt, %b, %{{.*}} : (i32, i32) -> i1
// CHECK-NEXT:    %[[SIGNS:.*]] = emitc.cmp ne, %[[RN]], %[[BN]] : (i1, i1) -> i1
// CHECK-NEXT:    %[[ADJ:.*]] = emitc.logical_and %[[INEXACT]], %[[SIGNS]] : i1, i1
// CHECK-NEXT:    %[[QM1:.*]] = emitc.sub %[[Q]], %{{.*}} : (i32, i32) -> i32
// CHECK-NEXT:    %f = emitc.conditional %[[ADJ]], %[[QM1]], %[[Q]] : i32
func.func @floordiv(%a: i32, %b: i32) -> i32 {
  %f = arith.floordivsi %a, %b : i32
  func.return %f : i32
}

// -----

// Float comparisons: C's < is ordered, != unordered; maximumf propagates NaN;
// math functions are <math.h> calls with the f suffix for float.
// CHECK-LABEL: emitc.include <"math.h">
// CHECK-LABEL: emitc.func @floats(%a: f32, %b: f32) -> f32
// CHECK:         %olt = emitc.cmp lt, %a, %b : (f32, f32) -> i1
// CHECK-NEXT:    %[[LE:.*]] = emitc.cmp le, %a, %b : (f32, f32) -> i1
// CHECK-NEXT:    %ugt = emitc.logical_not %[[LE]] : i1
// CHECK-NEXT:    %both = emitc.bitwise_and %olt, %ugt : (i1, i1) -> i1
// CHECK-NEXT:    %[[GT:.*]] = emitc.cmp gt, %a, %b : (f32, f32) -> i1
// CHECK-NEXT:    %[[NAN:.*]] = emitc.cmp ne, %a, %a : (f32, f32) -> i1
// CHECK-NEXT:    %[[TAKE:.*]] = emitc.logical_or %[[GT]], %[[NAN]] : i1, i1
// CHECK-NEXT:    %max = emitc.conditional %[[TAKE]], %a, %b : f32
// CHECK-NEXT:    %e = emitc.call_opaque "expf"(%max) : (f32) -> f32
// CHECK-NEXT:    %[[ROOT:.*]] = emitc.call_opaque "sqrtf"(%e) : (f32) -> f32
// CHECK-NEXT:    %r = emitc.div %{{.*}}, %[[ROOT]] : (f32, f32) -> f32
// CHECK-NEXT:    %out = emitc.conditional %both, %r, %a : f32
func.func @floats(%a: f32, %b: f32) -> f32 {
  %olt = arith.cmpf olt, %a, %b : f32
  %ugt = arith.cmpf ugt, %a, %b : f32
  %both = arith.andi %olt, %ugt : i1
  %max = arith.maximumf %a, %b : f32
  %e = math.exp %max : f32
  %r = math.rsqrt %e : f32
  %out = arith.select %both, %r, %a : f32
  func.return %out : f32
}

// -----

// A strided copy is a loop nest; a static alloca a local array (no heap).
// CHECK-LABEL: emitc.func @strided_copy(
// CHECK:         emitc.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} : !emitc.ptrdiff_t {
// CHECK-NEXT:      emitc.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} : !emitc.ptrdiff_t {
// CHECK:             emitc.assign
// CHECK:         %[[ARR:.*]] = "emitc.variable"() <{value = #emitc.opaque<"">}> : () -> !emitc.array<8xf32>
// CHECK-NEXT:    %[[FIRST:.*]] = emitc.subscript %[[ARR]][%{{.*}}] : (!emitc.array<8xf32>, !emitc.ptrdiff_t) -> !emitc.lvalue<f32>
// CHECK-NEXT:    %tmp = emitc.apply "&"(%[[FIRST]]) : (!emitc.lvalue<f32>) -> !emitc.ptr<f32>
func.func @strided_copy(%a: memref<4x8xf32>, %b: memref<2x2xf32>) {
  %s = memref.subview %a[1, 2] [2, 2] [1, 1] : memref<4x8xf32> to memref<2x2xf32, strided<[8, 1], offset: 10>>
  "memref.copy"(%s, %b) : (memref<2x2xf32, strided<[8, 1], offset: 10>>, memref<2x2xf32>) -> ()
  %tmp = memref.alloca() : memref<8xf32>
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  memref.store %zero, %tmp[%c0] : memref<8xf32>
  func.return
}

// -----

// cpacked calls (TVM's LegalizePackedCalls, tvm_call_cpacked): main fills one
// DLTensor per buffer on its stacks, calls the operator directly with TVM's
// packed arguments and returns its status when it is not 0; the operator
// gets the packed signature (TVM's MakePackedAPI): it checks the argument
// count and type codes, reads each buffer from its DLTensor, returns 0.
// CHECK-LABEL: builtin.module
// CHECK:         emitc.include <"tvm/runtime/c_runtime_api.h">
// CHECK:         emitc.func @op(%args: !emitc.ptr<!emitc.opaque<"TVMValue">>, %type_codes: !emitc.ptr<!emitc.opaque<"int">>, %num_args: !emitc.opaque<"int">, %out_ret_value: !emitc.ptr<!emitc.opaque<"TVMValue">>, %out_ret_tcode: !emitc.ptr<!emitc.opaque<"int">>, %resource_handle: !emitc.ptr<!emitc.opaque<"void">>) -> i32
// CHECK-SAME:      usmp.packed_api = [!emitc.ptr<i8>, !emitc.ptr<f32>]
// CHECK:           emitc.cmp ne, %num_args, %{{.*}} : (!emitc.opaque<"int">, !emitc.opaque<"int">) -> i1
// CHECK:           emitc.verbatim "return -1;"
// CHECK:           %a_tensor = "emitc.variable"
// CHECK:           "emitc.member_of_ptr"(%a_tensor) <{member = "data"}>
// CHECK:           %a = emitc.cast %{{.*}} : !emitc.ptr<!emitc.opaque<"void">> to !emitc.ptr<i8>
// CHECK:           %b = emitc.cast %{{.*}} : !emitc.ptr<!emitc.opaque<"void">> to !emitc.ptr<f32>
// CHECK:           emitc.return %{{.*}} : i32
// CHECK:         emitc.func @tvmgen_default___tvm_main__({{.*}}) -> i32
// CHECK:           %stack_array = "emitc.variable"() <{value = #emitc.opaque<"">}> : () -> !emitc.array<2x!emitc.opaque<"DLTensor">>
// CHECK:           %stack_value = "emitc.variable"() <{value = #emitc.opaque<"">}> : () -> !emitc.array<2x!emitc.opaque<"TVMValue">>
// CHECK:           %stack_tcode = "emitc.variable"() <{value = #emitc.opaque<"">}> : () -> !emitc.array<2x!emitc.opaque<"int">>
// CHECK:           %stack_shape = "emitc.variable"() <{value = #emitc.opaque<"">}> : () -> !emitc.array<3xi64>
// CHECK:           "emitc.member"(%{{.*}}) <{member = "data"}>
// CHECK:           "emitc.member"(%{{.*}}) <{member = "ndim"}>
// CHECK:           emitc.literal "kTVMDLTensorHandle"
// CHECK:           %[[STATUS:.*]] = emitc.call @op(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (!emitc.ptr<!emitc.opaque<"TVMValue">>, !emitc.ptr<!emitc.opaque<"int">>, !emitc.opaque<"int">, !emitc.ptr<!emitc.opaque<"TVMValue">>, !emitc.ptr<!emitc.opaque<"int">>, !emitc.ptr<!emitc.opaque<"void">>) -> i32
// CHECK-NEXT:      %[[FAILED:.*]] = emitc.cmp ne, %[[STATUS]], %{{.*}} : (i32, i32) -> i1
// CHECK-NEXT:      emitc.if %[[FAILED]] {
// CHECK-NEXT:        emitc.verbatim "return {};" args %[[STATUS]] : i32
// CHECK:           emitc.return %{{.*}} : i32
// CHECK:         emitc.func @tvmgen_default_run
// CHECK:           %[[ENTRY:.*]] = emitc.call @tvmgen_default___tvm_main__({{.*}}) -> i32
// CHECK-NEXT:      emitc.return %[[ENTRY]] : i32
func.func @op(%a: memref<2x4xi8>, %b: memref<4xf32>) attributes {tir.prim_func} {
  %c0 = arith.constant 0 : index
  %v = memref.load %a[%c0, %c0] : memref<2x4xi8>
  %f = arith.sitofp %v : i8 to f32
  memref.store %f, %b[%c0] : memref<4xf32>
  func.return
}
func.func @tvmgen_default___tvm_main__(%x: memref<2x4xi8>, %output: memref<4xf32>) attributes {tir.prim_func, tir.main, tir.input_names = ["x"], tir.output_names = ["output"]} {
  tir.call cpacked @op(%x, %output) : (memref<2x4xi8>, memref<4xf32>) -> ()
  func.return
}

// -----

// packed calls (tvm_call_packed): the operator is looked up by name in the
// module's function table, then called through TVMFuncCall; both statuses
// are checked. Main lists the functions the table must hold.
// CHECK-LABEL: builtin.module
// CHECK:         emitc.func @op({{.*}}) -> i32 attributes {tir.prim_func, usmp.packed_api
// CHECK:         emitc.func @tvmgen_default___tvm_main__({{.*}}) -> i32 attributes {{{.*}}usmp.packed_functions = ["op"]}
// CHECK:           %op_packed = "emitc.variable"() <{value = #emitc.opaque<"NULL">}> : () -> !emitc.lvalue<!emitc.opaque<"TVMFunctionHandle">>
// CHECK:           emitc.literal "tvmgen_default_packed_functions"
// CHECK:           %[[FOUND:.*]] = emitc.call_opaque "TVMBackendGetFuncFromEnv"(%{{.*}}, %{{.*}}, %{{.*}})
// CHECK:           emitc.verbatim "return {};" args %[[FOUND]] : i32
// CHECK:           %[[CALLED:.*]] = emitc.call_opaque "TVMFuncCall"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}})
// CHECK:           emitc.verbatim "return {};" args %[[CALLED]] : i32
func.func @op(%a: memref<4xi8>, %b: memref<4xi8>) attributes {tir.prim_func} {
  func.return
}
func.func @tvmgen_default___tvm_main__(%x: memref<4xi8>, %output: memref<4xi8>) attributes {tir.prim_func, tir.main, tir.input_names = ["x"], tir.output_names = ["output"]} {
  tir.call packed @op(%x, %output) : (memref<4xi8>, memref<4xi8>) -> ()
  func.return
}
