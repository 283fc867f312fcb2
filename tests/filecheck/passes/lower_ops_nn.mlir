// RUN: usmp-opt %s -p lower-ops --split-input-file | FileCheck %s

// Depthwise (groups = Cin = 2, multiplier 2), dilation 2, padding 2: the
// input channel is oc / 2; padding and dilation are folded into the tap
// bounds (ceil((pad - o) / d) .. min(K, ceil((H + pad - o) / d))), no padded
// copy; the i8 operands are sign-extended in registers, accumulator i32.

// CHECK-LABEL: func.func @depthwise(
// CHECK-SAME:      %[[X:.*]]: memref<1x5x5x2xi8>, %[[W:.*]]: memref<3x3x1x4xi8>, %[[OUT:.*]]: memref<1x5x5x4xi32>)
// CHECK-SAME:      attributes {tir.prim_func}
// CHECK-NOT:     tir.allocate
// CHECK:         scf.for %[[OH:.*]] = %{{.*}} to %{{.*}} step
// CHECK-NEXT:      scf.for %[[OW:.*]] = %{{.*}} to %{{.*}} step
// CHECK-NEXT:        scf.for %[[OC:.*]] = %{{.*}} to %{{.*}} step
// CHECK-NEXT:          %[[IC:.*]] = arith.divsi %[[OC]], %{{.*}} : index
// CHECK:               %[[LO:.*]] = arith.divsi
// CHECK:               %[[HI:.*]] = arith.minsi
// CHECK:               %[[ACC:.*]] = scf.for %[[KH:.*]] = %[[LO]] to %[[HI]] step %{{.*}} iter_args(%{{.*}} = %{{.*}}) -> (i32) {
// CHECK:                 scf.for %[[KW:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[A:.*]] = %{{.*}}) -> (i32) {
// CHECK:                   %[[XV:.*]] = memref.load %[[X]][%{{.*}}, %{{.*}}, %{{.*}}, %[[IC]]] : memref<1x5x5x2xi8>
// CHECK-NEXT:              %[[XE:.*]] = arith.extsi %[[XV]] : i8 to i32
// CHECK-NEXT:              %[[WV:.*]] = memref.load %[[W]][%[[KH]], %[[KW]], %{{.*}}, %[[OC]]] : memref<3x3x1x4xi8>
// CHECK-NEXT:              %[[WE:.*]] = arith.extsi %[[WV]] : i8 to i32
// CHECK-NEXT:              %[[WZ:.*]] = arith.subi %[[WE]], %{{.*}} : i32
// CHECK-NEXT:              %[[P:.*]] = arith.muli %[[XE]], %[[WZ]] : i32
// CHECK-NEXT:              %[[S:.*]] = arith.addi %[[A]], %[[P]] : i32
// CHECK-NEXT:              scf.yield %[[S]] : i32
// CHECK:               memref.store %[[ACC]], %[[OUT]][%{{.*}}, %[[OH]], %[[OW]], %[[OC]]]

func.func @depthwise(%x: tensor<1x5x5x2xi8>, %w: tensor<3x3x1x4xi8>) -> tensor<1x5x5x4xi32> attributes {relay.primitive} {
  %0 = relay.conv2d %x, %w {padding = array<i64: 2, 2, 2, 2>, dilation = array<i64: 2, 2>, groups = 2 : i64, kernel_zero_point = 1 : i64} : (tensor<1x5x5x2xi8>, tensor<3x3x1x4xi8>) -> tensor<1x5x5x4xi32>
  func.return %0 : tensor<1x5x5x4xi32>
}

// -----

// Dense: one scalar f32 accumulator per output element.

// CHECK-LABEL: func.func @dense(
// CHECK-SAME:      %[[X:.*]]: memref<2x16xf32>, %[[W:.*]]: memref<4x16xf32>, %[[OUT:.*]]: memref<2x4xf32>)
// CHECK:         scf.for %[[B:.*]] = %{{.*}} to %{{.*}} step
// CHECK-NEXT:      scf.for %[[N:.*]] = %{{.*}} to %{{.*}} step
// CHECK-NEXT:        %[[ACC:.*]] = scf.for %[[K:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[A:.*]] = %{{.*}}) -> (f32) {
// CHECK-NEXT:          %[[XV:.*]] = memref.load %[[X]][%[[B]], %[[K]]]
// CHECK-NEXT:          %[[WV:.*]] = memref.load %[[W]][%[[N]], %[[K]]]
// CHECK-NEXT:          %[[P:.*]] = arith.mulf %[[XV]], %[[WV]] : f32
// CHECK-NEXT:          %[[S:.*]] = arith.addf %[[A]], %[[P]] : f32
// CHECK-NEXT:          scf.yield %[[S]] : f32
// CHECK:             memref.store %[[ACC]], %[[OUT]][%[[B]], %[[N]]]

func.func @dense(%x: tensor<2x16xf32>, %w: tensor<4x16xf32>) -> tensor<2x4xf32> attributes {relay.primitive} {
  %0 = relay.dense %x, %w : (tensor<2x16xf32>, tensor<4x16xf32>) -> tensor<2x4xf32>
  func.return %0 : tensor<2x4xf32>
}

// -----

// max_pool2d without padding: constant tap bounds, i8 max in i8 (no widening),
// initial value -128.

// CHECK-LABEL: func.func @max_pool(
// CHECK:         %[[MIN:.*]] = arith.constant -128 : i8
// CHECK:         scf.for %{{.*}} iter_args(%{{.*}} = %[[MIN]]) -> (i8)
// CHECK:           %[[V:.*]] = memref.load
// CHECK-NEXT:      arith.maxsi %{{.*}}, %[[V]] : i8

func.func @max_pool(%x: tensor<1x4x4x3xi8>) -> tensor<1x2x2x3xi8> attributes {relay.primitive} {
  %0 = relay.max_pool2d %x {pool_size = array<i64: 2, 2>, strides = array<i64: 2, 2>} : tensor<1x4x4x3xi8> -> tensor<1x2x2x3xi8>
  func.return %0 : tensor<1x2x2x3xi8>
}

// -----

// avg_pool2d with padding, count_include_pad false: the divisor is the number
// of taps inside the input, TFLite rounding (acc > 0 ? acc + n/2 : acc - n/2) / n.

// CHECK-LABEL: func.func @avg_pool(
// CHECK:         %[[ACC:.*]] = scf.for %[[KH:.*]] = %[[LO_H:.*]] to %[[HI_H:.*]] step %{{.*}} iter_args(%{{.*}}) -> (i32)
// CHECK:         %[[NH:.*]] = arith.subi %[[HI_H]], %[[LO_H]] : index
// CHECK-NEXT:    %[[NW:.*]] = arith.subi
// CHECK-NEXT:    %[[N:.*]] = arith.muli %[[NH]], %[[NW]] : index
// CHECK-NEXT:    %[[NI:.*]] = arith.index_cast %[[N]] : index to i32
// CHECK-NEXT:    %[[HALF:.*]] = arith.divsi %[[NI]], %{{.*}} : i32
// CHECK-NEXT:    %[[POS:.*]] = arith.cmpi sgt, %[[ACC]], %{{.*}} : i32
// CHECK-NEXT:    %[[UP:.*]] = arith.addi %[[ACC]], %[[HALF]] : i32
// CHECK-NEXT:    %[[DOWN:.*]] = arith.subi %[[ACC]], %[[HALF]] : i32
// CHECK-NEXT:    %[[NUM:.*]] = arith.select %[[POS]], %[[UP]], %[[DOWN]] : i32
// CHECK-NEXT:    %[[Q:.*]] = arith.divsi %[[NUM]], %[[NI]] : i32
// CHECK-NEXT:    %[[R:.*]] = arith.trunci %[[Q]] : i32 to i8
// CHECK-NEXT:    memref.store %[[R]]

func.func @avg_pool(%x: tensor<1x4x4x3xi8>) -> tensor<1x4x4x3xi8> attributes {relay.primitive} {
  %0 = relay.avg_pool2d %x {pool_size = array<i64: 3, 3>, padding = array<i64: 1, 1, 1, 1>} : tensor<1x4x4x3xi8> -> tensor<1x4x4x3xi8>
  func.return %0 : tensor<1x4x4x3xi8>
}

// -----

// mean over H and W: the reduced dimensions become an inner reduction nest.

// CHECK-LABEL: func.func @mean(
// CHECK:         %[[COUNT:.*]] = arith.constant 1.600000e+01 : f32
// CHECK:         scf.for %[[C:.*]] = %{{.*}} to %{{.*}} step
// CHECK-NEXT:      %[[S:.*]] = scf.for %{{.*}} iter_args(%{{.*}}) -> (f32) {
// CHECK-NEXT:        scf.for %{{.*}} iter_args(%{{.*}}) -> (f32) {
// CHECK:           %[[M:.*]] = arith.divf %[[S]], %[[COUNT]] : f32
// CHECK-NEXT:      memref.store %[[M]], %{{.*}}[%{{.*}}, %[[C]]]

func.func @mean(%x: tensor<1x4x4x8xf32>) -> tensor<1x8xf32> attributes {relay.primitive} {
  %0 = relay.mean %x {axis = array<i64: 1, 2>} : tensor<1x4x4x8xf32> -> tensor<1x8xf32>
  func.return %0 : tensor<1x8xf32>
}

// -----

// Softmax with a fused dequantize: per row, max and sum are two scalar
// reductions before the row's loop; no scratch buffer.

// CHECK-LABEL: func.func @softmax(
// CHECK-NOT:     tir.allocate
// CHECK:         scf.for %[[ROW:.*]] = %{{.*}} to %{{.*}} step
// CHECK-NEXT:      %[[MAX:.*]] = scf.for %{{.*}} iter_args(%{{.*}}) -> (f32) {
// CHECK:             arith.maximumf
// CHECK:           %[[SUM:.*]] = scf.for %{{.*}} iter_args(%{{.*}}) -> (f32) {
// CHECK:             arith.subf %{{.*}}, %[[MAX]] : f32
// CHECK-NEXT:        math.exp
// CHECK:           scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step
// CHECK:             %[[E:.*]] = math.exp
// CHECK-NEXT:        %[[R:.*]] = arith.divf %[[E]], %[[SUM]] : f32
// CHECK-NEXT:        memref.store %[[R]], %{{.*}}[%[[ROW]], %[[I]]]

func.func @softmax(%x: tensor<2x10xi8>) -> tensor<2x10xf32> attributes {relay.primitive} {
  %0 = relay.dequantize %x {scale = 0.5 : f64, zero_point = 0 : i64} : tensor<2x10xi8> -> tensor<2x10xf32>
  %1 = relay.softmax %0 : tensor<2x10xf32> -> tensor<2x10xf32>
  func.return %1 : tensor<2x10xf32>
}
