// RUN: usmp-opt %s -p lower-ops --split-input-file | FileCheck %s

// A float LSTM: per time step and unit, one pass over the input row and one
// over the hidden state, each with the four gates' accumulators; the gates
// stay in registers; the cell state is updated in place in its operand, the
// new hidden value is stored into the output sequence and copied into the
// hidden state operand after the step (every unit read the old one).

// CHECK-LABEL: func.func @lstm_float(
// CHECK-SAME:      %[[X:[^:]*]]: memref<1x3x2xf32>, %{{.*}}: memref<2x2xf32>, %{{.*}}: memref<2x2xf32>, %{{.*}}: memref<2xf32>, %[[H:[^:]*]]: memref<1x2xf32>, %[[C:[^:]*]]: memref<1x2xf32>, %[[OUT:[^:]*]]: memref<1x3x2xf32>)
// CHECK-NOT:     tir.allocate
// CHECK:         scf.for %[[T:.*]] = %{{.*}} to %{{.*}} step
// CHECK-NEXT:      scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step
// CHECK-NEXT:        %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} = scf.for {{.*}} iter_args({{.*}}) -> (f32, f32, f32, f32)
// CHECK:             memref.load %[[X]]
// CHECK:           %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} = scf.for {{.*}} iter_args({{.*}}) -> (f32, f32, f32, f32)
// CHECK:             memref.load %[[H]]
// CHECK:           math.tanh
// CHECK:           %[[OLD:.*]] = memref.load %[[C]][%{{.*}}, %[[J]]]
// CHECK:           arith.minimumf
// CHECK:           %[[NEW:.*]] = arith.maximumf
// CHECK-NEXT:      memref.store %[[NEW]], %[[C]][%{{.*}}, %[[J]]]
// CHECK-NEXT:      %[[TC:.*]] = math.tanh %[[NEW]]
// CHECK-NEXT:      %[[HV:.*]] = arith.mulf %[[TC]], %{{.*}}
// CHECK-NEXT:      memref.store %[[HV]], %[[OUT]][%{{.*}}, %[[T]], %[[J]]]
// CHECK:         scf.for %[[K:.*]] = %{{.*}} to %{{.*}} step
// CHECK-NEXT:      %[[V:.*]] = memref.load %[[OUT]][%{{.*}}, %[[T]], %[[K]]]
// CHECK-NEXT:      memref.store %[[V]], %[[H]][%{{.*}}, %[[K]]]

func.func @lstm_float(%x: tensor<1x3x2xf32>, %w: tensor<2x2xf32>, %r: tensor<2x2xf32>, %b: tensor<2xf32>, %h: tensor<1x2xf32>, %c: tensor<1x2xf32>) -> tensor<1x3x2xf32> attributes {relay.primitive} {
  %0 = relay.lstm(%x, %w, %w, %w, %w, %r, %r, %r, %r, %b, %b, %b, %b, %h, %c) {cell_clip = 3.0 : f64} : (tensor<1x3x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<1x2xf32>, tensor<1x2xf32>) -> tensor<1x3x2xf32>
  func.return %0 : tensor<1x3x2xf32>
}

// -----

// int8 with constant start states (a model whose states are not persistent):
// the states become operator scratch filled at every call; the int16
// sigmoid / tanh table is one 512-byte constant of the function.

// CHECK-LABEL: func.func @lstm_int8(
// CHECK-DAG:     tir.allocate_const {name_hint = "sigmoid_table"{{.*}}} : memref<256xi16>
// CHECK-DAG:     %[[HS:.*]] = tir.allocate {name_hint = "lstm_hidden_state"} : memref<2x2xi8>
// CHECK-DAG:     %[[CS:.*]] = tir.allocate {name_hint = "lstm_cell_state"} : memref<2x2xi16>
// CHECK:         memref.store %{{.*}}, %[[HS]]
// CHECK:         memref.store %{{.*}}, %[[CS]]
// CHECK:         -> (i32, i32, i32, i32)
// CHECK:         -> (i32, i32, i32, i32)
// CHECK:         memref.store %{{.*}}, %[[CS]]
// CHECK:         memref.store %{{.*}}, %[[HS]]

func.func @lstm_int8(%x: tensor<3x2x2xi8>, %w: tensor<2x2xi8>, %b: tensor<2xi32>) -> tensor<3x2x2xi8> attributes {relay.primitive} {
  %h = relay.constant dense<-3> : tensor<2x2xi8>
  %c = relay.constant dense<0> : tensor<2x2xi16>
  %0 = relay.lstm(%x, %w, %w, %w, %w, %w, %w, %w, %w, %b, %b, %b, %b, %h, %c) {time_major = true, gate_multipliers = array<i64: 1239940864, 2042355328, 1292446464, 1625049984, 1276881792, 1590606080, 1360030464, 1131361536>, gate_shifts = array<i64: -2, -3, -2, -2, -1, -2, -2, -1>, mul_multipliers = array<i64: 1073741824, 1073741824, 2146304392>, mul_shifts = array<i64: -14, -17, -23>, input_zero_point = -128 : i64, hidden_zero_point = -3 : i64, cell_scale_power = -11 : i64, quantized_cell_clip = 20480 : i64} : (tensor<3x2x2xi8>, tensor<2x2xi8>, tensor<2x2xi8>, tensor<2x2xi8>, tensor<2x2xi8>, tensor<2x2xi8>, tensor<2x2xi8>, tensor<2x2xi8>, tensor<2x2xi8>, tensor<2xi32>, tensor<2xi32>, tensor<2xi32>, tensor<2xi32>, tensor<2x2xi8>, tensor<2x2xi16>) -> tensor<3x2x2xi8>
  func.return %0 : tensor<3x2x2xi8>
}
