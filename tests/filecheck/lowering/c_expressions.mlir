// RUN: usmp-opt %s -t c | FileCheck %s
// RUN: usmp-opt %s -t c > %t.c
// RUN: gcc -std=c99 -Wall -Wextra -Werror -pedantic -Wvla -c %t.c -o %t.o
// RUN: g++ -x c++ -std=c++11 -Wall -Wextra -Werror -pedantic -c %t.c -o %t.o

// How emitc expressions are written: parentheses where C needs them (a
// conditional as a loop bound) or gcc -Wparentheses wants them (shifts and
// bitwise operators mixed with arithmetic), none where it does not;
// single-use unnamed values are inlined, named ones declared.

// CHECK-LABEL: int32_t expressions(int32_t a, int32_t b, int32_t* p) {
// CHECK-NEXT:    ptrdiff_t n = (ptrdiff_t)a;
// CHECK-NEXT:    int32_t acc = 0;
// CHECK-NEXT:    for (ptrdiff_t i = 0; i < ((n < 4) ? n : 4); ++i) {
// CHECK-NEXT:      acc = acc + (p[i] << (b & 7)) - 3;
// CHECK-NEXT:    }
// CHECK-NEXT:    int32_t mixed = (a + b) * a - (b >> 1);
// CHECK-NEXT:    int32_t neg = -(-1) + (int32_t)(a < b);
// CHECK-NEXT:    if ((mixed == neg) && (a != 0)) {
// CHECK-NEXT:      acc = acc / (a % 3);
// CHECK-NEXT:    }
// CHECK-NEXT:    return (-2147483647 - 1) + mixed + acc;
// CHECK-NEXT:  }
emitc.include <"stdbool.h">
emitc.include <"stddef.h">
emitc.include <"stdint.h">
emitc.func @expressions(%a: i32, %b: i32, %p: !emitc.ptr<i32>) -> i32 {
  %0 = "emitc.constant"() <{value = 0 : index}> : () -> !emitc.ptrdiff_t
  %1 = "emitc.constant"() <{value = 1 : index}> : () -> !emitc.ptrdiff_t
  %2 = "emitc.constant"() <{value = 4 : i32}> : () -> i32
  %3 = "emitc.constant"() <{value = 0 : i32}> : () -> i32
  %4 = "emitc.constant"() <{value = 1 : i32}> : () -> i32
  %5 = "emitc.constant"() <{value = -1 : i32}> : () -> i32
  %6 = "emitc.constant"() <{value = -3 : i32}> : () -> i32
  %7 = "emitc.constant"() <{value = 3 : i32}> : () -> i32
  %8 = "emitc.constant"() <{value = 7 : i32}> : () -> i32
  %9 = "emitc.constant"() <{value = -2147483648 : i32}> : () -> i32
  %n = emitc.cast %a : i32 to !emitc.ptrdiff_t
  %c4p = "emitc.constant"() <{value = 4 : index}> : () -> !emitc.ptrdiff_t
  %10 = emitc.cmp lt, %n, %c4p : (!emitc.ptrdiff_t, !emitc.ptrdiff_t) -> i1
  %12 = emitc.conditional %10, %n, %c4p : !emitc.ptrdiff_t
  %acc = "emitc.variable"() <{value = #emitc.opaque<"">}> : () -> !emitc.lvalue<i32>
  emitc.assign %3 : i32 to %acc : !emitc.lvalue<i32>
  emitc.for %i = %0 to %12 step %1 : !emitc.ptrdiff_t {
    %13 = emitc.subscript %p[%i] : (!emitc.ptr<i32>, !emitc.ptrdiff_t) -> !emitc.lvalue<i32>
    %14 = emitc.load %13 : !emitc.lvalue<i32>
    %15 = emitc.bitwise_and %b, %8 : (i32, i32) -> i32
    %16 = emitc.bitwise_left_shift %14, %15 : (i32, i32) -> i32
    %17 = emitc.load %acc : !emitc.lvalue<i32>
    %18 = emitc.add %17, %16 : (i32, i32) -> i32
    %19 = emitc.add %18, %6 : (i32, i32) -> i32
    emitc.assign %19 : i32 to %acc : !emitc.lvalue<i32>
  }
  %20 = emitc.add %a, %b : (i32, i32) -> i32
  %21 = emitc.mul %20, %a : (i32, i32) -> i32
  %22 = emitc.bitwise_right_shift %b, %4 : (i32, i32) -> i32
  %mixed = emitc.sub %21, %22 : (i32, i32) -> i32
  %23 = emitc.unary_minus %5 : (i32) -> i32
  %24 = emitc.cmp lt, %a, %b : (i32, i32) -> i1
  %25 = emitc.cast %24 : i1 to i32
  %neg = emitc.add %23, %25 : (i32, i32) -> i32
  %26 = emitc.cmp eq, %mixed, %neg : (i32, i32) -> i1
  %27 = emitc.cmp ne, %a, %3 : (i32, i32) -> i1
  %28 = emitc.logical_and %26, %27 : i1, i1
  emitc.if %28 {
    %29 = emitc.rem %a, %7 : (i32, i32) -> i32
    %30 = emitc.load %acc : !emitc.lvalue<i32>
    %31 = emitc.div %30, %29 : (i32, i32) -> i32
    emitc.assign %31 : i32 to %acc : !emitc.lvalue<i32>
  }
  %32 = emitc.load %acc : !emitc.lvalue<i32>
  %33 = emitc.add %9, %mixed : (i32, i32) -> i32
  %34 = emitc.add %33, %32 : (i32, i32) -> i32
  emitc.return %34 : i32
}

// An int8 sum is computed in int by C: where another operator reads it, it
// is wrapped to int8 first (MLIR's i8 arithmetic wraps: 127 + 7 is -122);
// assigned or returned, C's conversion does it.
// CHECK-LABEL: int32_t narrow(int8_t x, int8_t* p) {
// CHECK-NEXT:    p[0] = x + 7;
// CHECK-NEXT:    return (int32_t)(int8_t)((int8_t)(x + 7) * x) + (int32_t)(int8_t)-x;
// CHECK-NEXT:  }
emitc.func @narrow(%x: i8, %p: !emitc.ptr<i8>) -> i32 {
  %0 = "emitc.constant"() <{value = 7 : i8}> : () -> i8
  %1 = "emitc.constant"() <{value = 0 : index}> : () -> !emitc.ptrdiff_t
  %2 = emitc.add %x, %0 : (i8, i8) -> i8
  %3 = emitc.add %x, %0 : (i8, i8) -> i8
  %4 = emitc.mul %3, %x : (i8, i8) -> i8
  %5 = emitc.cast %4 : i8 to i32
  %6 = emitc.unary_minus %x : (i8) -> i8
  %7 = emitc.cast %6 : i8 to i32
  %8 = emitc.add %5, %7 : (i32, i32) -> i32
  %9 = emitc.subscript %p[%1] : (!emitc.ptr<i8>, !emitc.ptrdiff_t) -> !emitc.lvalue<i8>
  emitc.assign %2 : i8 to %9 : !emitc.lvalue<i8>
  emitc.return %8 : i32
}
