// RUN: usmp-opt %s --split-input-file | usmp-opt --split-input-file | FileCheck %s
// RUN: usmp-opt %s --split-input-file --print-op-generic | usmp-opt --split-input-file | FileCheck %s

// The emitc ops usmp-opt adds to xDSL's, in MLIR 22's custom syntax (every
// case also goes through real mlir-opt in generic form: test_mlir_composition).

// CHECK-LABEL: emitc.include <"stdint.h">
// CHECK-NEXT:  emitc.include "model.h"
emitc.include <"stdint.h">
emitc.include "model.h"

// -----

// CHECK: emitc.global static const @weights : !emitc.array<4xui8> = dense<[1, 2, 3, 255]> {usmp.alignment = 16 : i64}
// CHECK: emitc.global extern @table : !emitc.array<2xf32>
// CHECK: emitc.global @counter : i32 = 3
emitc.global static const @weights : !emitc.array<4xui8> = dense<[1, 2, 3, 255]> {usmp.alignment = 16 : i64}
emitc.global extern @table : !emitc.array<2xf32>
emitc.global @counter : i32 = 3

// -----

// CHECK-LABEL: emitc.func private @external(!emitc.ptr<f32>) -> () attributes {specifiers = ["extern"]}
// CHECK-LABEL: emitc.func @scalar(%a: i32, %b: i32) -> i32 attributes {specifiers = ["static"]}
// CHECK:       %0 = emitc.add %a, %b : (i32, i32) -> i32
// CHECK-NEXT:  %1 = emitc.sub %0, %b : (i32, i32) -> i32
// CHECK-NEXT:  %2 = emitc.mul %1, %a : (i32, i32) -> i32
// CHECK-NEXT:  %3 = emitc.div %2, %b : (i32, i32) -> i32
// CHECK-NEXT:  %4 = emitc.rem %3, %b : (i32, i32) -> i32
// CHECK-NEXT:  %5 = emitc.bitwise_and %4, %a : (i32, i32) -> i32
// CHECK-NEXT:  %6 = emitc.bitwise_or %5, %a : (i32, i32) -> i32
// CHECK-NEXT:  %7 = emitc.bitwise_xor %6, %a : (i32, i32) -> i32
// CHECK-NEXT:  %8 = emitc.bitwise_left_shift %7, %b : (i32, i32) -> i32
// CHECK-NEXT:  %9 = emitc.bitwise_right_shift %8, %b : (i32, i32) -> i32
// CHECK-NEXT:  %10 = emitc.bitwise_not %9 : (i32) -> i32
// CHECK-NEXT:  %11 = emitc.unary_minus %10 : (i32) -> i32
// CHECK-NEXT:  %12 = emitc.unary_plus %11 : (i32) -> i32
// CHECK-NEXT:  %13 = emitc.cmp lt, %12, %a : (i32, i32) -> i1
// CHECK-NEXT:  %14 = emitc.cmp ne, %12, %a : (i32, i32) -> i1
// CHECK-NEXT:  %15 = emitc.logical_and %13, %14 : i1, i1
// CHECK-NEXT:  %16 = emitc.logical_or %15, %13 : i1, i1
// CHECK-NEXT:  %17 = emitc.logical_not %16 : i1
// CHECK-NEXT:  %18 = emitc.conditional %17, %12, %a : i32
// CHECK-NEXT:  %19 = emitc.cast %18 : i32 to f32
// CHECK-NEXT:  %20 = emitc.call_opaque "expf"(%19) : (f32) -> f32
// CHECK-NEXT:  %21 = emitc.literal "INT32_MAX" : i32
// CHECK-NEXT:  emitc.return %21 : i32
emitc.func private @external(!emitc.ptr<f32>) attributes {specifiers = ["extern"]}
emitc.func @scalar(%a: i32, %b: i32) -> i32 attributes {specifiers = ["static"]} {
  %0 = emitc.add %a, %b : (i32, i32) -> i32
  %1 = emitc.sub %0, %b : (i32, i32) -> i32
  %2 = emitc.mul %1, %a : (i32, i32) -> i32
  %3 = emitc.div %2, %b : (i32, i32) -> i32
  %4 = emitc.rem %3, %b : (i32, i32) -> i32
  %5 = emitc.bitwise_and %4, %a : (i32, i32) -> i32
  %6 = emitc.bitwise_or %5, %a : (i32, i32) -> i32
  %7 = emitc.bitwise_xor %6, %a : (i32, i32) -> i32
  %8 = emitc.bitwise_left_shift %7, %b : (i32, i32) -> i32
  %9 = emitc.bitwise_right_shift %8, %b : (i32, i32) -> i32
  %10 = emitc.bitwise_not %9 : (i32) -> i32
  %11 = emitc.unary_minus %10 : (i32) -> i32
  %12 = emitc.unary_plus %11 : (i32) -> i32
  %13 = emitc.cmp lt, %12, %a : (i32, i32) -> i1
  %14 = emitc.cmp ne, %12, %a : (i32, i32) -> i1
  %15 = emitc.logical_and %13, %14 : i1, i1
  %16 = emitc.logical_or %15, %13 : i1, i1
  %17 = emitc.logical_not %16 : i1
  %18 = emitc.conditional %17, %12, %a : i32
  %19 = emitc.cast %18 : i32 to f32
  %20 = emitc.call_opaque "expf"(%19) : (f32) -> f32
  %21 = emitc.literal "INT32_MAX" : i32
  emitc.return %21 : i32
}

// -----

// Memory: lvalues, loads, assignments, pointers, globals, loops, conditionals, calls.
// CHECK-LABEL: emitc.func @memory(%p: !emitc.ptr<f32>, %pool: !emitc.ptr<ui8>)
// CHECK:       %c0 = "emitc.constant"() <{value = 0 : index}> : () -> !emitc.ptrdiff_t
// CHECK:       %byte = emitc.subscript %pool[%c16] : (!emitc.ptr<ui8>, !emitc.ptrdiff_t) -> !emitc.lvalue<ui8>
// CHECK-NEXT:  %addr = emitc.apply "&"(%byte) : (!emitc.lvalue<ui8>) -> !emitc.ptr<ui8>
// CHECK-NEXT:  %view = emitc.cast %addr : !emitc.ptr<ui8> to !emitc.ptr<f32>
// CHECK-NEXT:  %acc = "emitc.variable"() <{value = #emitc.opaque<"">}> : () -> !emitc.lvalue<f32>
// CHECK-NEXT:  emitc.for %i = %c0 to %c4 step %c1 : !emitc.ptrdiff_t {
// CHECK-NEXT:    %x = emitc.subscript %p[%i] : (!emitc.ptr<f32>, !emitc.ptrdiff_t) -> !emitc.lvalue<f32>
// CHECK-NEXT:    %v = emitc.load %x : !emitc.lvalue<f32>
// CHECK-NEXT:    %lt = emitc.cmp lt, %i, %c1 : (!emitc.ptrdiff_t, !emitc.ptrdiff_t) -> i1
// CHECK-NEXT:    emitc.if %lt {
// CHECK-NEXT:      emitc.assign %v : f32 to %acc : !emitc.lvalue<f32>
// CHECK-NEXT:    } else {
// CHECK-NEXT:      emitc.verbatim "/* {} */" args %v : f32
// CHECK-NEXT:    }
// CHECK-NEXT:  }
// CHECK-NEXT:  %g = emitc.get_global @table : !emitc.array<2xf32>
// CHECK:       emitc.call @memory(%p, %pool) : (!emitc.ptr<f32>, !emitc.ptr<ui8>) -> ()
// CHECK-NEXT:  emitc.declare_func @memory
// CHECK-NEXT:  emitc.return
emitc.global static @table : !emitc.array<2xf32> = dense<[1.0, 2.0]>
emitc.func @memory(%p: !emitc.ptr<f32>, %pool: !emitc.ptr<ui8>) {
  %c0 = "emitc.constant"() <{value = 0 : index}> : () -> !emitc.ptrdiff_t
  %c1 = "emitc.constant"() <{value = 1 : index}> : () -> !emitc.ptrdiff_t
  %c4 = "emitc.constant"() <{value = 4 : index}> : () -> !emitc.ptrdiff_t
  %c16 = "emitc.constant"() <{value = 16 : index}> : () -> !emitc.ptrdiff_t
  %byte = emitc.subscript %pool[%c16] : (!emitc.ptr<ui8>, !emitc.ptrdiff_t) -> !emitc.lvalue<ui8>
  %addr = emitc.apply "&"(%byte) : (!emitc.lvalue<ui8>) -> !emitc.ptr<ui8>
  %view = emitc.cast %addr : !emitc.ptr<ui8> to !emitc.ptr<f32>
  %acc = "emitc.variable"() <{value = #emitc.opaque<"">}> : () -> !emitc.lvalue<f32>
  emitc.for %i = %c0 to %c4 step %c1 : !emitc.ptrdiff_t {
    %x = emitc.subscript %p[%i] : (!emitc.ptr<f32>, !emitc.ptrdiff_t) -> !emitc.lvalue<f32>
    %v = emitc.load %x : !emitc.lvalue<f32>
    %lt = emitc.cmp lt, %i, %c1 : (!emitc.ptrdiff_t, !emitc.ptrdiff_t) -> i1
    emitc.if %lt {
      emitc.assign %v : f32 to %acc : !emitc.lvalue<f32>
    } else {
      emitc.verbatim "/* {} */" args %v : f32
    }
  }
  %g = emitc.get_global @table : !emitc.array<2xf32>
  %e = emitc.subscript %g[%c1] : (!emitc.array<2xf32>, !emitc.ptrdiff_t) -> !emitc.lvalue<f32>
  %y = emitc.load %e : !emitc.lvalue<f32>
  emitc.assign %y : f32 to %acc : !emitc.lvalue<f32>
  emitc.call @memory(%p, %pool) : (!emitc.ptr<f32>, !emitc.ptr<ui8>) -> ()
  emitc.declare_func @memory
  emitc.return
}
