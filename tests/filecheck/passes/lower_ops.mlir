// RUN: usmp-opt %s -p lower-ops --split-input-file | FileCheck %s
// Idempotence: nothing is relay.primitive any more after the first run.
// RUN: usmp-opt %s -p lower-ops,lower-ops --split-input-file | FileCheck %s

// A fused int8 conv2d group becomes one tir prim func (inputs, then the
// output): one loop nest over the output; per element, the reduction over the
// taps with a scalar i32 accumulator, then bias, per-channel requantisation,
// output zero point, clip and cast applied in registers and one store of the
// i8 result. No intermediate tensor, no padded copy, no tir.allocate. Index
// arithmetic sits in the outermost loop it depends on: the window bounds of
// an output row before the column loop, those of a column before the channel
// loop, the input row of a tap before the tap's column loop. Four output
// channels share one reduction (four i32 accumulators, each input element
// loaded and centred once for the four); the three input channels (a static
// loop of at most 4 taps) are unrolled. Then the epilogue of each of the four
// elements. main keeps calling the same symbol (what aot-lower-main
// consumes).

// CHECK-LABEL: func.func @tvmgen_default_fused_nn_conv2d_add_fixed_point_multiply_add_clip_cast(
// CHECK-SAME:      %[[X:.*]]: memref<1x8x8x3xi8>, %[[W:.*]]: memref<3x3x3x8xi8>, %[[B:.*]]: memref<8xi32>, %[[OUT:.*]]: memref<1x4x4x8xi8>)
// CHECK-SAME:      attributes {tir.prim_func} {
// CHECK-NOT:     tir.allocate {
// CHECK-NOT:     relay.
// CHECK-DAG:     %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG:     %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG:     %[[C2:.*]] = arith.constant 2 : index
// CHECK-DAG:     %[[C3:.*]] = arith.constant 3 : index
// CHECK-DAG:     %[[C4:.*]] = arith.constant 4 : index
// CHECK:         scf.for %[[OH:.*]] = %{{.*}} to %{{.*}} step
// CHECK-NEXT:      %{{.*}} = arith.muli %[[OH]], %{{.*}} : index
// CHECK-NEXT:      %[[HB:.*]] = arith.subi
// CHECK-NEXT:      arith.subi
// CHECK-NEXT:      %[[HLO:.*]] = arith.maxsi
// CHECK-NEXT:      scf.for %[[OW:.*]] = %{{.*}} to %{{.*}} step
// CHECK-NEXT:        %{{.*}} = arith.muli %[[OW]], %{{.*}} : index
// CHECK-NEXT:        %[[WB:.*]] = arith.subi
// CHECK-NEXT:        arith.subi
// CHECK-NEXT:        %[[WLO:.*]] = arith.maxsi
// CHECK-NEXT:        scf.for %[[OC:.*]] = %{{.*}} to %{{.*}} step %[[C4]] {
// CHECK-NEXT:          %[[OC1:.*]] = arith.addi %[[OC]], %[[C1]] : index
// CHECK-NEXT:          %[[OC2:.*]] = arith.addi %[[OC]], %[[C2]] : index
// CHECK-NEXT:          %[[OC3:.*]] = arith.addi %[[OC]], %[[C3]] : index
// CHECK-NEXT:          %[[ACC:.*]], %{{.*}}, %{{.*}}, %[[ACC3:.*]] = scf.for %[[KH:.*]] = %[[HLO]] to %[[C3]] step %{{.*}} iter_args(%{{.*}}) -> (i32, i32, i32, i32) {
// CHECK-NEXT:            %[[IH:.*]] = arith.addi %[[HB]], %[[KH]] : index
// CHECK-NEXT:            scf.for %[[KW:.*]] = %[[WLO]] to %[[C3]] step %{{.*}} iter_args(%{{.*}}) -> (i32, i32, i32, i32) {
// CHECK-NEXT:              %[[IW:.*]] = arith.addi %[[WB]], %[[KW]] : index
// CHECK-NEXT:              memref.load %[[X]][%[[C0]], %[[IH]], %[[IW]], %[[C0]]]
// CHECK:                   memref.load %[[W]][%[[KH]], %[[KW]], %[[C0]], %[[OC]]]
// CHECK:                   memref.load %[[W]][%[[KH]], %[[KW]], %[[C0]], %[[OC1]]]
// CHECK:                   memref.load %[[W]][%[[KH]], %[[KW]], %[[C0]], %[[OC2]]]
// CHECK:                   memref.load %[[W]][%[[KH]], %[[KW]], %[[C0]], %[[OC3]]]
// CHECK-NEXT:              arith.extsi
// CHECK-NEXT:              arith.muli
// CHECK-NEXT:              arith.addi
// CHECK-NEXT:              memref.load %[[X]][%[[C0]], %[[IH]], %[[IW]], %[[C1]]]
// CHECK:                   memref.load %[[X]][%[[C0]], %[[IH]], %[[IW]], %[[C2]]]
// CHECK:                   memref.load %[[W]][%[[KH]], %[[KW]], %[[C2]], %[[OC3]]]
// CHECK-NOT:               memref.load
// CHECK:                   scf.yield
// CHECK:               %[[BIAS:.*]] = memref.load %[[B]][%[[OC]]] : memref<8xi32>
// CHECK-NEXT:          %{{.*}} = arith.addi %[[ACC]], %[[BIAS]] : i32
// CHECK:               %[[Q:.*]] = arith.trunci %{{.*}} : i32 to i8
// CHECK-NEXT:          memref.store %[[Q]], %[[OUT]][%{{.*}}, %[[OH]], %[[OW]], %[[OC]]] : memref<1x4x4x8xi8>
// CHECK:               %[[BIAS3:.*]] = memref.load %[[B]][%[[OC3]]] : memref<8xi32>
// CHECK-NEXT:          %{{.*}} = arith.addi %[[ACC3]], %[[BIAS3]] : i32
// CHECK:               memref.store %{{.*}}, %[[OUT]][%{{.*}}, %[[OH]], %[[OW]], %[[OC3]]] : memref<1x4x4x8xi8>
// CHECK-NEXT:        }
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return
// CHECK:       func.func @main(
// CHECK:         relay.call @tvmgen_default_fused_nn_conv2d_add_fixed_point_multiply_add_clip_cast(%{{.*}}, %{{.*}}, %{{.*}}) : (tensor<1x8x8x3xi8>, tensor<3x3x3x8xi8>, tensor<8xi32>) -> tensor<1x4x4x8xi8>

func.func @tvmgen_default_fused_nn_conv2d_add_fixed_point_multiply_add_clip_cast(%x: tensor<1x8x8x3xi8>, %w: tensor<3x3x3x8xi8>, %b: tensor<8xi32>) -> tensor<1x4x4x8xi8> attributes {relay.primitive} {
  %zp = relay.constant dense<-3> : tensor<i32>
  %0 = relay.conv2d %x, %w {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>, input_zero_point = -128 : i64} : (tensor<1x8x8x3xi8>, tensor<3x3x3x8xi8>) -> tensor<1x4x4x8xi32>
  %1 = relay.add %0, %b : (tensor<1x4x4x8xi32>, tensor<8xi32>) -> tensor<1x4x4x8xi32>
  %2 = relay.fixed_point_multiply %1 {multiplier = array<i32: 1073741824, 1073741825, 1073741826, 1073741827, 1073741828, 1073741829, 1073741830, 1073741831>, shift = array<i32: -7, -7, -7, -6, -6, -6, -5, -5>, axis = 3 : i64} : tensor<1x4x4x8xi32> -> tensor<1x4x4x8xi32>
  %3 = relay.add %2, %zp : (tensor<1x4x4x8xi32>, tensor<i32>) -> tensor<1x4x4x8xi32>
  %4 = relay.clip %3 {a_min = -128.0 : f64, a_max = 127.0 : f64} : tensor<1x4x4x8xi32> -> tensor<1x4x4x8xi32>
  %5 = relay.cast %4 : tensor<1x4x4x8xi32> -> tensor<1x4x4x8xi8>
  func.return %5 : tensor<1x4x4x8xi8>
}
func.func @main(%x: tensor<1x8x8x3xi8>) -> tensor<1x4x4x8xi8> {
  %w = relay.constant dense<1> : tensor<3x3x3x8xi8>
  %b = relay.constant dense<2> : tensor<8xi32>
  %0 = relay.call @tvmgen_default_fused_nn_conv2d_add_fixed_point_multiply_add_clip_cast(%x, %w, %b) : (tensor<1x8x8x3xi8>, tensor<3x3x3x8xi8>, tensor<8xi32>) -> tensor<1x4x4x8xi8>
  func.return %0 : tensor<1x4x4x8xi8>
}
