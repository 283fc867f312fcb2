// REQUIRES: mlir
// RUN: usmp-opt %s -p convert-to-emitc | %mlir_bin/mlir-translate --mlir-to-cpp | FileCheck %s
// RUN: usmp-opt %s -p convert-to-emitc --print-op-generic | %mlir_bin/mlir-translate --mlir-to-cpp > %t.c
// RUN: gcc -std=c99 -Wall -Wextra -Werror -pedantic -c %t.c -o %t.o

// Composition: MLIR 22's own C++ emitter accepts what convert-to-emitc
// produces (custom and generic syntax), and its output is the whole library
// (aligned pools, the I/O structs, run), C99 that gcc accepts with -Werror.

// CHECK:      #include <stdbool.h>
// CHECK:      USMP_ALIGNED(16)
// CHECK-NEXT: static const uint8_t global_const[16] = {0, 0, 128, 63, 0, 0, 0, 64, 0, 0, 64, 64, 0, 0, 128, 64};
// CHECK-LABEL: void tvmgen_default_scale(float* v1, float* v2, const uint8_t* v3) {
// CHECK:         for (ptrdiff_t [[I:.*]] = {{.*}}; [[I]] < {{.*}}; [[I]] += {{.*}}) {
// CHECK-LABEL: void tvmgen_default___tvm_main__(float* v1, float* v2, uint8_t* v3, const uint8_t* v4) {
// CHECK:         tvmgen_default_scale(
// CHECK:       } TVMInputs_default;
// CHECK:       USMP_ALIGNED(16)
// CHECK-NEXT:  static uint8_t tvmgen_default_global_workspace[16];
// CHECK-LABEL: int32_t tvmgen_default_run(TVMInputs_default* v1, TVMOutputs_default* v2) {
// CHECK:         = [[IN:v[0-9]+]]->x;
// CHECK:         = [[OUT:v[0-9]+]]->output;
// CHECK:         (uint8_t*) tvmgen_default_global_workspace;
// CHECK:         (uint8_t*) global_const;
// CHECK:         tvmgen_default___tvm_main__(
builtin.module attributes {tir.pools = [#tir.pool_info<"global_workspace", workspace, size = 16, alignment = 16, access = {"c" = "rw"}>, #tir.pool_info<"global_const", constant, size = 16, alignment = 16, access = {"c" = "ro"}>]} {
  "memref.global"() <{sym_name = "global_const", sym_visibility = "private", type = memref<16xi8>, initial_value = dense<"0x0000803F000000400000404000008040"> : tensor<16xi8>, constant, alignment = 16 : i64}> : () -> ()
  func.func @tvmgen_default_scale(%x: memref<4xf32>, %out: memref<4xf32>, %global_const: memref<16xi8>) attributes {tir.prim_func, tir.pool_args = ["global_const"]} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %w = memref.view %global_const[%c0][] : memref<16xi8> to memref<4xf32>
    scf.for %i = %c0 to %c4 step %c1 {
      %a = memref.load %x[%i] : memref<4xf32>
      %b = memref.load %w[%i] : memref<4xf32>
      %p = arith.mulf %a, %b : f32
      %q = math.sqrt %p : f32
      memref.store %q, %out[%i] : memref<4xf32>
    }
    func.return
  }
  func.func @tvmgen_default___tvm_main__(%x: memref<4xf32>, %output: memref<4xf32>, %global_workspace: memref<16xi8>, %global_const: memref<16xi8>) attributes {tir.prim_func, tir.main, tir.input_names = ["x"], tir.output_names = ["output"], tir.pool_args = ["global_workspace", "global_const"]} {
    %c0 = arith.constant 0 : index
    %sid = memref.view %global_workspace[%c0][] : memref<16xi8> to memref<4xf32>
    "memref.copy"(%x, %sid) : (memref<4xf32>, memref<4xf32>) -> ()
    func.call @tvmgen_default_scale(%sid, %output, %global_const) : (memref<4xf32>, memref<4xf32>, memref<16xi8>) -> ()
    func.return
  }
}
