// RUN: usmp-opt %s -p fuse-ops,lower-ops | FileCheck %s
// RUN: usmp-opt %s -p fuse-ops,lower-ops,aot-lower-main,usmp | FileCheck %s --check-prefix=USMP

// An int8 SVDF (rank 2, memory 2, int16 state): fuse-ops outlines it alone
// with its state as an argument; lower-ops shifts the state left in place,
// writes each filter's projection into its last column, then sums each
// unit's rank time products in registers (i64, truncated once): no scratch.

// CHECK:       func.func @tvmgen_default_fused_svdf(%{{.*}}: memref<1x3xi8>, %{{.*}}: memref<4x3xi8>, %{{.*}}: memref<4x2xi16>, %{{.*}}: memref<2xi32>, %[[S:.*]]: memref<1x8xi16>, %[[OUT:.*]]: memref<1x2xi8>)
// CHECK-NOT:     tir.allocate
// CHECK:         scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step
// CHECK-NEXT:      %[[NEXT:.*]] = arith.addi %[[J]], %{{.*}} : index
// CHECK-NEXT:      %[[V:.*]] = memref.load %[[S]][%{{.*}}, %[[NEXT]]] : memref<1x8xi16>
// CHECK-NEXT:      memref.store %[[V]], %[[S]][%{{.*}}, %[[J]]] : memref<1x8xi16>
// CHECK:           arith.trunci %{{.*}} : i32 to i16
// CHECK:           memref.store %{{.*}}, %[[S]][
// CHECK:         iter_args(%{{.*}} = %{{.*}}) -> (i64)
// CHECK:         arith.trunci %{{.*}} : i64 to i32
// CHECK:         memref.store %{{.*}}, %[[OUT]][
// CHECK-NOT:     tir.allocate

// USMP:       #tir.pool_info<"global_state", persistent, size = 16
// USMP:       func.func @tvmgen_default___tvm_main__(
// USMP-SAME:    tir.states = [{name = "state_0", pool = "global_state", offset = 0 : index, value = dense<0> : tensor<1x8xi16>}]
// USMP:         %[[ST:.*]] = memref.view %global_state[%{{.*}}][] : memref<16xi8> to memref<1x8xi16>
// USMP:         tir.call @tvmgen_default_fused_svdf(%x, %{{.*}}, %{{.*}}, %{{.*}}, %[[ST]], %output)

func.func @main(%x: tensor<1x3xi8>) -> tensor<1x2xi8> {
  %wf = relay.constant dense<[[1, 2, 3], [4, 5, 6], [7, 8, 9], [-1, -2, -3]]> : tensor<4x3xi8>
  %wt = relay.constant dense<[[1, 2], [3, 4], [5, 6], [7, 8]]> : tensor<4x2xi16>
  %b = relay.constant dense<[10, -10]> : tensor<2xi32>
  %s = relay.state "svdf/state" dense<0> : tensor<1x8xi16>
  %y = relay.svdf %x, %wf, %wt, %b, %s {rank = 2 : i64, input_zero_point = 3 : i64, output_zero_point = -5 : i64, multiplier_1 = 1073741824 : i64, shift_1 = -2 : i64, multiplier_2 = 1073741824 : i64, shift_2 = -4 : i64} : (tensor<1x3xi8>, tensor<4x3xi8>, tensor<4x2xi16>, tensor<2xi32>, tensor<1x8xi16>) -> tensor<1x2xi8>
  func.return %y : tensor<1x2xi8>
}
