// RUN: usmp-opt %s -p fuse-ops,lower-ops,aot-lower-main,usmp | FileCheck %s

// An LSTM whose hidden and cell states are relay.state: the lowered LSTM
// updates them in place through its arguments (no scratch: the new hidden
// values go to the output sequence), aot-lower-main makes them
// tir.allocate_state, usmp places them in the persistent pool; the workspace
// is empty (the output is main's output buffer).

// CHECK:       builtin.module attributes {tir.pools = [#tir.pool_info<"global_workspace", workspace, size = 0{{.*}}#tir.pool_info<"global_state", persistent, size = 24
// CHECK-LABEL: func.func @tvmgen_default_fused_lstm(
// CHECK-SAME:      %{{[^:]*}}: memref<1x3x2xf32>, %{{[^:]*}}: memref<2x2xf32>, %{{[^:]*}}: memref<2xf32>, %[[H:[^:]*]]: memref<1x2xf32>, %[[C:[^:]*]]: memref<1x2xf32>, %[[OUT:[^:]*]]: memref<1x3x2xf32>)
// CHECK-NOT:     tir.allocate
// CHECK:         memref.store %{{.*}}, %[[C]]
// CHECK:         memref.store %{{.*}}, %[[OUT]]
// CHECK:         memref.store %{{.*}}, %[[H]]
// CHECK-LABEL: func.func @tvmgen_default___tvm_main__(
// CHECK-SAME:      tir.states = [{name = "state_0", pool = "global_state", offset = 0 : index, value = dense<0.000000e+00> : tensor<1x2xf32>}, {name = "state_1", pool = "global_state", offset = 16 : index, value = dense<0.000000e+00> : tensor<1x2xf32>}]
// CHECK:         %[[S0:[^ ]*]] = memref.view %global_state
// CHECK:         %[[S1:[^ ]*]] = memref.view %global_state
// CHECK:         tir.call @tvmgen_default_fused_lstm(%x, %{{.*}}, %{{.*}}, %[[S0]], %[[S1]], %output)

func.func @main(%x: tensor<1x3x2xf32>) -> tensor<1x3x2xf32> {
  %w = relay.constant dense<[[0.5, -0.25], [0.125, 1.0]]> : tensor<2x2xf32>
  %b = relay.constant dense<[0.5, -0.5]> : tensor<2xf32>
  %h = relay.state "lstm/h" dense<0.0> : tensor<1x2xf32>
  %c = relay.state "lstm/c" dense<0.0> : tensor<1x2xf32>
  %0 = relay.lstm(%x, %w, %w, %w, %w, %w, %w, %w, %w, %b, %b, %b, %b, %h, %c) : (tensor<1x3x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<1x2xf32>, tensor<1x2xf32>) -> tensor<1x3x2xf32>
  func.return %0 : tensor<1x3x2xf32>
}
