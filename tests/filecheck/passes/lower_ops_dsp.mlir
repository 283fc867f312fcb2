// RUN: usmp-opt %s -p 'lower-ops{mcpu=cortex-m4}' --split-input-file | FileCheck %s

// A 1x1 int8 convolution on a CPU with Arm's DSP extension. The weights and
// the bias are constants at the one call. Every tap is inside the input (no
// padding), so the input zero point (-128) is folded into the bias at
// compile time (b - zp * sum(w) per channel: a constant of the function,
// lowered as a table). The weights are re-laid out as i32 words, the four
// jammed output channels' words of one input-channel quad side by side
// (tir.allocate_const); both parameters are dropped from the function and
// the call. Four input bytes are four loads packed into a word (marked for
// convert-to-emitc: one usmp_read_s8x4), split into two 16-bit pairs (bytes
// 0, 2 and 1, 3, no offset); two smlad per channel and quad. The
// requantisation is 32-bit: smmulr of the doubled accumulator, a rounding
// shift from the per-channel tables, ssat.

// CHECK-LABEL: func.func @conv1x1(
// CHECK-SAME:      %[[X:.*]]: memref<1x2x2x8xi8>, %[[OUT:.*]]: memref<1x2x2x4xi8>) attributes {tir.prim_func} {
// CHECK-DAG:     %[[FLAT:.*]] = memref.collapse_shape %[[X]] {{\[}}[0 : i64, 1 : i64, 2 : i64, 3 : i64]] : memref<1x2x2x8xi8> into memref<32xi8>
// CHECK-DAG:     %[[W:.*]] = tir.allocate_const {name_hint = "weights_interleaved", value = dense<[67305985, -185339151, 336794129, 606282273, 134678021, -117967115, 404166165, 673654309]> : tensor<8xi32>} : memref<8xi32>
// CHECK-DAG:     %[[B:.*]] = tir.allocate_const {name_hint = "b", value = dense<[4609, -11778, 20995, 37372]> : tensor<4xi32>} : memref<4xi32>
// CHECK:         scf.for
// CHECK:           scf.for
// CHECK:             %[[X0:.*]] = memref.load %[[FLAT]][%{{.*}}] : memref<32xi8>
// CHECK-COUNT-3:     memref.load %[[FLAT]]
// CHECK:             %[[WORD:.*]] = arith.ori %{{.*}}, %{{.*}} {usmp.packed_s8x4} : i32
// CHECK-NEXT:        %[[XL:.*]] = emitc.call_opaque "usmp_sxtb16"(%[[WORD]]) : (i32) -> i32
// CHECK-NEXT:        %[[XH:.*]] = emitc.call_opaque "usmp_sxtb16_ror8"(%[[WORD]]) : (i32) -> i32
// CHECK-NEXT:        %[[W0:.*]] = memref.load %[[W]][%{{.*}}] : memref<8xi32>
// CHECK-NEXT:        %[[WL:.*]] = emitc.call_opaque "usmp_sxtb16"(%[[W0]]) : (i32) -> i32
// CHECK-NEXT:        %[[WH:.*]] = emitc.call_opaque "usmp_sxtb16_ror8"(%[[W0]]) : (i32) -> i32
// CHECK-NEXT:        %[[A:.*]] = emitc.call_opaque "usmp_smlad"(%[[XL]], %[[WL]], %{{.*}}) : (i32, i32, i32) -> i32
// CHECK-NEXT:        emitc.call_opaque "usmp_smlad"(%[[XH]], %[[WH]], %[[A]]) : (i32, i32, i32) -> i32
// CHECK:             %[[BIAS:.*]] = memref.load %[[B]][%{{.*}}] : memref<4xi32>
// CHECK-NEXT:        %[[SUM:.*]] = arith.addi %{{.*}}, %[[BIAS]] : i32
// CHECK-NEXT:        %[[M:.*]] = memref.load %{{.*}}[%{{.*}}] : memref<4xi32>
// CHECK-NEXT:        %[[TWICE:.*]] = arith.addi %[[SUM]], %[[SUM]] : i32
// CHECK-NEXT:        %[[H:.*]] = emitc.call_opaque "usmp_smmulr"(%[[TWICE]], %[[M]]) : (i32, i32) -> i32
// CHECK:             emitc.call_opaque "usmp_ssat8"
// CHECK:             memref.store %{{.*}}, %[[OUT]]

// CHECK-LABEL: func.func @main(
// CHECK-NOT:     relay.constant
// CHECK:         relay.call @conv1x1(%{{.*}}) : (tensor<1x2x2x8xi8>) -> tensor<1x2x2x4xi8>

func.func @conv1x1(%x: tensor<1x2x2x8xi8>, %w: tensor<4x1x1x8xi8>, %b: tensor<4xi32>) -> tensor<1x2x2x4xi8> attributes {relay.primitive} {
  %0 = relay.conv2d %x, %w {kernel_layout = #relay<kernel_layout OHWI>, input_zero_point = -128 : i64} : (tensor<1x2x2x8xi8>, tensor<4x1x1x8xi8>) -> tensor<1x2x2x4xi32>
  %1 = relay.add %0, %b : (tensor<1x2x2x4xi32>, tensor<4xi32>) -> tensor<1x2x2x4xi32>
  %2 = relay.fixed_point_multiply %1 {multiplier = array<i32: 1395864371, 1395864372, 1395864373, 1395864374>, shift = array<i32: -8, -7, -8, -9>, axis = 3 : i64} : tensor<1x2x2x4xi32> -> tensor<1x2x2x4xi32>
  %3 = relay.clip %2 {a_min = -128.0 : f64, a_max = 127.0 : f64} : tensor<1x2x2x4xi32> -> tensor<1x2x2x4xi32>
  %4 = relay.cast %3 : tensor<1x2x2x4xi32> -> tensor<1x2x2x4xi8>
  func.return %4 : tensor<1x2x2x4xi8>
}
func.func @main(%x: tensor<1x2x2x8xi8>) -> tensor<1x2x2x4xi8> {
  %w = relay.constant dense<"0x0102030405060708F1F2F3F4F5F6F7F811121314151617182122232425262728"> : tensor<4x1x1x8xi8>
  %b = relay.constant dense<[1, -2, 3, -4]> : tensor<4xi32>
  %0 = relay.call @conv1x1(%x, %w, %b) : (tensor<1x2x2x8xi8>, tensor<4x1x1x8xi8>, tensor<4xi32>) -> tensor<1x2x2x4xi8>
  func.return %0 : tensor<1x2x2x4xi8>
}

// -----

// Depthwise 3x3 (four channels, one per group), padding 1, weights a
// parameter: per tap one word of the four channels' inputs (the zero point
// 3 subtracted lane by lane: sxtab16 of -3 in both lanes) and one of their
// weights; the lanes of each channel meet in smlabb (channels 0 and 1) and
// smlatt (2 and 3), one accumulator each. Windows inside the input take the
// first branch (the nine taps unrolled), columns inside the next (rows
// clamped), each border column its own static taps.

// CHECK-LABEL: func.func @depthwise(
// CHECK-SAME:      %[[X:.*]]: memref<1x3x3x4xi8>, %[[W:.*]]: memref<3x3x1x4xi8>, %[[OUT:.*]]: memref<1x3x3x4xi32>)
// CHECK-DAG:     %[[OFF:.*]] = arith.constant -131075 : i32
// CHECK:         scf.if %{{.*}} -> (i32, i32, i32, i32) {
// CHECK:           %[[XW:.*]] = arith.ori %{{.*}}, %{{.*}} {usmp.packed_s8x4} : i32
// CHECK-NEXT:      %[[XL:.*]] = emitc.call_opaque "usmp_sxtab16"(%[[OFF]], %[[XW]])
// CHECK-NEXT:      %[[XH:.*]] = emitc.call_opaque "usmp_sxtab16_ror8"(%[[OFF]], %[[XW]])
// CHECK:           %[[WW:.*]] = arith.ori %{{.*}}, %{{.*}} {usmp.packed_s8x4} : i32
// CHECK-NEXT:      %[[WL:.*]] = emitc.call_opaque "usmp_sxtb16"(%[[WW]])
// CHECK-NEXT:      %[[WH:.*]] = emitc.call_opaque "usmp_sxtb16_ror8"(%[[WW]])
// CHECK-NEXT:      emitc.call_opaque "usmp_smlabb"(%[[XL]], %[[WL]], %{{.*}})
// CHECK-NEXT:      emitc.call_opaque "usmp_smlabb"(%[[XH]], %[[WH]], %{{.*}})
// CHECK-NEXT:      emitc.call_opaque "usmp_smlatt"(%[[XL]], %[[WL]], %{{.*}})
// CHECK-NEXT:      emitc.call_opaque "usmp_smlatt"(%[[XH]], %[[WH]], %{{.*}})
// CHECK-COUNT-8:   emitc.call_opaque "usmp_smlabb"(%{{.*}}, %{{.*}}, %{{.*}})
// CHECK:         } else {
// CHECK:           scf.for
// CHECK:             scf.for
// CHECK:               emitc.call_opaque "usmp_smlabb"

func.func @depthwise(%x: tensor<1x3x3x4xi8>, %w: tensor<3x3x1x4xi8>) -> tensor<1x3x3x4xi32> attributes {relay.primitive} {
  %0 = relay.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>, groups = 4 : i64, input_zero_point = 3 : i64} : (tensor<1x3x3x4xi8>, tensor<3x3x1x4xi8>) -> tensor<1x3x3x4xi32>
  func.return %0 : tensor<1x3x3x4xi32>
}

// -----

// A conv2d the DSP kernels do not cover (i16 activations, 16x8) keeps the
// portable loop nest.

// CHECK-LABEL: func.func @conv16x8(
// CHECK-NOT:     emitc.call_opaque
// CHECK:         arith.muli
// CHECK-NOT:     emitc.call_opaque

func.func @conv16x8(%x: tensor<1x3x3x2xi16>, %w: tensor<4x3x3x2xi8>) -> tensor<1x1x1x4xi64> attributes {relay.primitive} {
  %0 = relay.conv2d %x, %w {kernel_layout = #relay<kernel_layout OHWI>} : (tensor<1x3x3x2xi16>, tensor<4x3x3x2xi8>) -> tensor<1x1x1x4xi64>
  func.return %0 : tensor<1x1x1x4xi64>
}
