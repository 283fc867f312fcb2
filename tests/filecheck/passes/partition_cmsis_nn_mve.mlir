// RUN: usmp-opt %s -p 'partition-cmsis-nn{mcpu=cortex-m55},lower-ops' | FileCheck %s
// RUN: usmp-opt %s -p 'partition-cmsis-nn{mcpu=cortex-m55}' | FileCheck %s --check-prefix=PART
// RUN: usmp-opt %s -p 'partition-cmsis-nn{mcpu="cortex-m55+nomve"}' | FileCheck %s --check-prefix=NOMVE

// --target "cmsis-nn -mcpu=cortex-m55,c": CMSIS-NN's MVE build. Its
// arm_fully_connected_s8 reads per output row the kernel sum
// arm_vector_sum_s8(weights, lhs_offset = -input zero point, bias) from
// ctx->buf: partition-cmsis-nn computes them from the constants main
// passes (cmsis_nn.kernel_sums) and lower-ops makes them a constant table,
// not scratch (the first scalar, the scratch size, stays 0). Row 0:
// 10 - 7 * (1 + 2 + 3 + 4) = -60; row 1: 20 - 7 * -10 = 90. A dense called
// with two different weights (one table each) or with weights that are not
// constants stays on our kernels.

// PART:       func.func @tvmgen_default_cmsis_nn_fused_dense_a(
// PART-SAME:    cmsis_nn.kernel_sums = dense<[-60, 90]> : tensor<2xi32>, tir.target = "cmsis-nn", cmsis_nn.core = "mve"

// CHECK-LABEL: func.func @tvmgen_default_cmsis_nn_fused_dense_a(
// CHECK-NEXT:    %[[K:.*]] = tir.allocate_const {{.}}name_hint = "cmsis_nn_kernel_sums", value = dense<[-60, 90]> : tensor<2xi32>{{.}} : memref<2xi32>
// CHECK-NEXT:    tir.call_extern "arm_fully_connected_s8"(%[[K]], %0, %1, %2, %3) {{.}}cmsis_nn.core = "mve", scalars = array<i64: 0, -7, 0, -5,
// CHECK-LABEL: func.func @tvmgen_default_fused_dense_b(
// CHECK-NOT:     tir.call_extern
// CHECK-LABEL: func.func @tvmgen_default_fused_dense_c(
// CHECK-NOT:     tir.call_extern
// CHECK-LABEL: func.func @main(

// NOMVE:      func.func @tvmgen_default_cmsis_nn_fused_dense_a(
// NOMVE-SAME:   cmsis_nn.core = "dsp"
// NOMVE-NOT:    kernel_sums

builtin.module {
  func.func @tvmgen_default_fused_dense_a(%0: tensor<1x4xi8>, %1: tensor<2x4xi8>, %2: tensor<2xi32>) -> tensor<1x2xi8> attributes {relay.primitive} {
    %3 = relay.constant dense<-5> : tensor<i32>
    %4 = relay.dense %0, %1 {input_zero_point = 7 : i64} : (tensor<1x4xi8>, tensor<2x4xi8>) -> tensor<1x2xi32>
    %5 = relay.add %4, %2 : (tensor<1x2xi32>, tensor<2xi32>) -> tensor<1x2xi32>
    %6 = relay.fixed_point_multiply %5 {multiplier = array<i32: 1374389504>, shift = array<i32: -6>, axis = 1 : i64} : tensor<1x2xi32> -> tensor<1x2xi32>
    %7 = relay.add %6, %3 : (tensor<1x2xi32>, tensor<i32>) -> tensor<1x2xi32>
    %8 = relay.clip %7 {a_min = -1.280000e+02 : f64, a_max = 1.270000e+02 : f64} : tensor<1x2xi32> -> tensor<1x2xi32>
    %9 = relay.cast %8 : tensor<1x2xi32> -> tensor<1x2xi8>
    func.return %9 : tensor<1x2xi8>
  }
  func.func @tvmgen_default_fused_dense_b(%0: tensor<1x2xi8>, %1: tensor<2x2xi8>, %2: tensor<2xi32>) -> tensor<1x2xi8> attributes {relay.primitive} {
    %3 = relay.constant dense<-5> : tensor<i32>
    %4 = relay.dense %0, %1 {input_zero_point = 7 : i64} : (tensor<1x2xi8>, tensor<2x2xi8>) -> tensor<1x2xi32>
    %5 = relay.add %4, %2 : (tensor<1x2xi32>, tensor<2xi32>) -> tensor<1x2xi32>
    %6 = relay.fixed_point_multiply %5 {multiplier = array<i32: 1374389504>, shift = array<i32: -6>, axis = 1 : i64} : tensor<1x2xi32> -> tensor<1x2xi32>
    %7 = relay.add %6, %3 : (tensor<1x2xi32>, tensor<i32>) -> tensor<1x2xi32>
    %8 = relay.clip %7 {a_min = -1.280000e+02 : f64, a_max = 1.270000e+02 : f64} : tensor<1x2xi32> -> tensor<1x2xi32>
    %9 = relay.cast %8 : tensor<1x2xi32> -> tensor<1x2xi8>
    func.return %9 : tensor<1x2xi8>
  }
  func.func @tvmgen_default_fused_dense_c(%0: tensor<1x2xi8>, %1: tensor<2x2xi8>, %2: tensor<2xi32>) -> tensor<1x2xi8> attributes {relay.primitive} {
    %3 = relay.constant dense<-5> : tensor<i32>
    %4 = relay.dense %0, %1 {input_zero_point = 7 : i64} : (tensor<1x2xi8>, tensor<2x2xi8>) -> tensor<1x2xi32>
    %5 = relay.add %4, %2 : (tensor<1x2xi32>, tensor<2xi32>) -> tensor<1x2xi32>
    %6 = relay.fixed_point_multiply %5 {multiplier = array<i32: 1374389504>, shift = array<i32: -6>, axis = 1 : i64} : tensor<1x2xi32> -> tensor<1x2xi32>
    %7 = relay.add %6, %3 : (tensor<1x2xi32>, tensor<i32>) -> tensor<1x2xi32>
    %8 = relay.clip %7 {a_min = -1.280000e+02 : f64, a_max = 1.270000e+02 : f64} : tensor<1x2xi32> -> tensor<1x2xi32>
    %9 = relay.cast %8 : tensor<1x2xi32> -> tensor<1x2xi8>
    func.return %9 : tensor<1x2xi8>
  }
  func.func @main(%x: tensor<1x4xi8>, %w: tensor<2x2xi8>) -> tensor<1x2xi8> {
    %wa = relay.constant dense<[[1, 2, 3, 4], [-1, -2, -3, -4]]> : tensor<2x4xi8>
    %ba = relay.constant dense<[10, 20]> : tensor<2xi32>
    %wb1 = relay.constant dense<[[1, 2], [3, 4]]> : tensor<2x2xi8>
    %wb2 = relay.constant dense<[[5, 6], [7, 8]]> : tensor<2x2xi8>
    %0 = relay.call @tvmgen_default_fused_dense_a(%x, %wa, %ba) : (tensor<1x4xi8>, tensor<2x4xi8>, tensor<2xi32>) -> tensor<1x2xi8>
    %1 = relay.call @tvmgen_default_fused_dense_b(%0, %wb1, %ba) : (tensor<1x2xi8>, tensor<2x2xi8>, tensor<2xi32>) -> tensor<1x2xi8>
    %2 = relay.call @tvmgen_default_fused_dense_b(%1, %wb2, %ba) : (tensor<1x2xi8>, tensor<2x2xi8>, tensor<2xi32>) -> tensor<1x2xi8>
    %3 = relay.call @tvmgen_default_fused_dense_c(%2, %w, %ba) : (tensor<1x2xi8>, tensor<2x2xi8>, tensor<2xi32>) -> tensor<1x2xi8>
    func.return %3 : tensor<1x2xi8>
  }
}
