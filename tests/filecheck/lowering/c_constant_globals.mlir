// A hand-written constant memref.global (not a usmp pool) read through
// memref.get_global: its C array is `static const`, and the pointer the
// function declares takes it by an explicit cast, so the C compiles with
// -Werror as C99 and C++.
// RUN: usmp-opt %s -p convert-to-emitc -t c | FileCheck %s
// RUN: usmp-opt %s -p convert-to-emitc -t c > %t.c
// RUN: gcc -std=c99 -Wall -Wextra -Werror -pedantic -Wvla -c %t.c -o %t.o
// RUN: g++ -x c++ -std=c++11 -Wall -Wextra -Werror -pedantic -c %t.c -o %t.o

// CHECK:      static const int32_t lut[4] = {
// CHECK:      static int32_t scratch[4];
// CHECK:      void add_table(int32_t* a, int32_t* out) {
// CHECK-NEXT:   int32_t* g = (int32_t*)&lut[0];
// CHECK-NEXT:   int32_t* s = &scratch[0];
builtin.module {
  "memref.global"() <{sym_name = "lut", sym_visibility = "private", type = memref<4xi32>, initial_value = dense<[1, 2, 3, 4]> : tensor<4xi32>, constant}> : () -> ()
  "memref.global"() <{sym_name = "scratch", sym_visibility = "private", type = memref<4xi32>, initial_value = unit}> : () -> ()
  func.func @add_table(%a: memref<4xi32>, %out: memref<4xi32>) {
    %g = memref.get_global @lut : memref<4xi32>
    %s = memref.get_global @scratch : memref<4xi32>
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    scf.for %i = %c0 to %c4 step %c1 {
      %0 = memref.load %a[%i] : memref<4xi32>
      %1 = memref.load %g[%i] : memref<4xi32>
      %2 = arith.addi %0, %1 : i32
      memref.store %2, %s[%i] : memref<4xi32>
      %3 = memref.load %s[%i] : memref<4xi32>
      memref.store %3, %out[%i] : memref<4xi32>
    }
    func.return
  }
}
