// RUN: usmp-opt %s -p aot-lower-main,usmp,convert-to-emitc -t c | FileCheck %s
// RUN: usmp-opt %s -p aot-lower-main,usmp,convert-to-emitc -t c > %t.c
// RUN: gcc -std=c99 -Wall -Wextra -Werror -pedantic -Wvla -c %t.c -o %t.o
// RUN: g++ -x c++ -std=c++11 -Wall -Wextra -Werror -pedantic -c %t.c -o %t.o

// The user's command, end to end: a relay main calling tir operators (one
// with scratch, which usmp plans into the workspace next to main's storage)
// and a constant, to C99.

// CHECK:      * Pools (bytes), planned by usmp:
// CHECK-NEXT: *   global_workspace workspace         64 bytes, aligned to 16, defined by the library
// CHECK-NEXT: *   global_const     parameters        32 bytes, aligned to 16, defined by the library
// CHECK:      #define TVM_DEFAULT_GLOBAL_WORKSPACE_WORKSPACE_BUFFER_SIZE 64
// CHECK:      #define TVM_DEFAULT_GLOBAL_CONST_PARAMETER_BUFFER_SIZE 32
// CHECK:      typedef struct tvmgen_default_inputs {
// CHECK-NEXT:   float* x; /* float[1][8], 32 bytes */
// CHECK-LABEL: void tvmgen_default_fused_relu_sum(float* a, float* out, uint8_t* global_workspace) {
// CHECK-NEXT:    float* {{[a-z_0-9]+}} = (float*)&global_workspace[{{[0-9]+}}];
// CHECK-LABEL: void tvmgen_default___tvm_main__(float* x, float* output, uint8_t* global_workspace, const uint8_t* global_const) {
// CHECK-NEXT:    float* [[W:[a-z_0-9]+]] = (float*)&global_const[0];
// CHECK-NEXT:    float* [[S:[a-z_0-9]+]] = (float*)&global_workspace[{{[0-9]+}}];
// CHECK-NEXT:    tvmgen_default_fused_add(x, [[W]], [[S]]);
// CHECK-NEXT:    tvmgen_default_fused_relu_sum([[S]], output, global_workspace);
// CHECK-NEXT:  }
// CHECK:       USMP_ALIGNED(16) static uint8_t tvmgen_default_global_workspace[TVM_DEFAULT_GLOBAL_WORKSPACE_WORKSPACE_BUFFER_SIZE];
// CHECK:       USMP_ALIGNED(16) static const uint8_t tvmgen_default_global_const[32] = {
// CHECK:       int32_t tvmgen_default_run(TVMInputs_default* inputs, TVMOutputs_default* outputs) {
// CHECK-NOT:   malloc
func.func @tvmgen_default_fused_add(%a: memref<1x8xf32>, %b: memref<8xf32>, %out: memref<1x8xf32>) attributes {tir.prim_func} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  scf.for %i = %c0 to %c8 step %c1 {
    %x = memref.load %a[%c0, %i] : memref<1x8xf32>
    %y = memref.load %b[%i] : memref<8xf32>
    %s = arith.addf %x, %y : f32
    memref.store %s, %out[%c0, %i] : memref<1x8xf32>
  }
  func.return
}
func.func @tvmgen_default_fused_relu_sum(%a: memref<1x8xf32>, %out: memref<1x1xf32>) attributes {tir.prim_func} {
  %scratch = tir.allocate {name_hint = "relu"} : memref<8xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  scf.for %i = %c0 to %c8 step %c1 {
    %x = memref.load %a[%c0, %i] : memref<1x8xf32>
    %r = arith.maximumf %x, %zero : f32
    memref.store %r, %scratch[%i] : memref<8xf32>
  }
  %sum = scf.for %i = %c0 to %c8 step %c1 iter_args(%acc = %zero) -> (f32) {
    %x = memref.load %scratch[%i] : memref<8xf32>
    %n = arith.addf %acc, %x : f32
    scf.yield %n : f32
  }
  memref.store %sum, %out[%c0, %c0] : memref<1x1xf32>
  func.return
}
func.func @main(%x: tensor<1x8xf32>) -> tensor<1x1xf32> {
  %w = relay.constant dense<[1.0, 2.0, 3.0, 4.0, -1.0, -2.0, -3.0, -4.0]> : tensor<8xf32>
  %0 = relay.call @tvmgen_default_fused_add(%x, %w) : (tensor<1x8xf32>, tensor<8xf32>) -> tensor<1x8xf32>
  %1 = relay.call @tvmgen_default_fused_relu_sum(%0) : (tensor<1x8xf32>) -> tensor<1x1xf32>
  func.return %1 : tensor<1x1xf32>
}
