// RUN: not usmp-opt %s -p 'lower-ops' 2>&1 | FileCheck %s

// A dense marked for CMSIS-NN's MVE build without the kernel sums
// partition-cmsis-nn computes (arm_fully_connected_s8 would fail on a NULL
// ctx->buf): a located error, no C.
// CHECK: lower_cmsis_nn_mve_error.mlir:{{[0-9]+}}:{{[0-9]+}}: error: @tvmgen_default_cmsis_nn_fused_dense is marked for CMSIS-NN's MVE build but has no cmsis_nn.kernel_sums (partition-cmsis-nn computes them)

builtin.module {
  func.func @tvmgen_default_cmsis_nn_fused_dense(%0: tensor<1x4xi8>, %1: tensor<2x4xi8>, %2: tensor<2xi32>) -> tensor<1x2xi8> attributes {relay.primitive, tir.target = "cmsis-nn", cmsis_nn.core = "mve"} {
    %3 = relay.constant dense<-5> : tensor<i32>
    %4 = relay.dense %0, %1 {input_zero_point = 7 : i64} : (tensor<1x4xi8>, tensor<2x4xi8>) -> tensor<1x2xi32>
    %5 = relay.add %4, %2 : (tensor<1x2xi32>, tensor<2xi32>) -> tensor<1x2xi32>
    %6 = relay.fixed_point_multiply %5 {multiplier = array<i32: 1374389504>, shift = array<i32: -6>, axis = 1 : i64} : tensor<1x2xi32> -> tensor<1x2xi32>
    %7 = relay.add %6, %3 : (tensor<1x2xi32>, tensor<i32>) -> tensor<1x2xi32>
    %8 = relay.clip %7 {a_min = -1.280000e+02 : f64, a_max = 1.270000e+02 : f64} : tensor<1x2xi32> -> tensor<1x2xi32>
    %9 = relay.cast %8 : tensor<1x2xi32> -> tensor<1x2xi8>
    func.return %9 : tensor<1x2xi8>
  }
}
