// RUN: usmp-opt %s -p lower-ops --split-input-file | FileCheck %s

// Per-tensor requantisation: one call of a requantisation helper
// (usmp_mbqm_right: C prelude, requant.py); multiplier and shift are
// immediates, the shift direction is decided at compile time (the helper's
// name), no table, no saturation test (the multiplier is not INT32_MIN).

// CHECK-LABEL: func.func @per_tensor(
// CHECK-NOT:     tir.allocate_const
// CHECK-DAG:     %[[M:.*]] = arith.constant 1395864371 : i32
// CHECK-DAG:     %[[EIGHT:.*]] = arith.constant 8 : i32
// CHECK:         %[[X:.*]] = memref.load
// CHECK-NEXT:    %[[R:.*]] = emitc.call_opaque "usmp_mbqm_right"(%[[X]], %[[M]], %[[EIGHT]]) : (i32, i32, i32) -> i32
// CHECK-NEXT:    memref.store %[[R]]

func.func @per_tensor(%a: tensor<4xi32>) -> tensor<4xi32> attributes {relay.primitive} {
  %0 = relay.fixed_point_multiply %a {multiplier = array<i32: 1395864371>, shift = array<i32: -8>} : tensor<4xi32> -> tensor<4xi32>
  func.return %0 : tensor<4xi32>
}

// A multiplier of INT32_MIN (never written by TFLite's QuantizeMultiplier,
// but valid) needs the saturating helper; a positive or zero shift the left
// one.

// CHECK-LABEL: func.func @per_tensor_saturating(
// CHECK-DAG:     %[[ZERO:.*]] = arith.constant 0 : i32
// CHECK-DAG:     %[[TWO:.*]] = arith.constant 2 : i32
// CHECK:         emitc.call_opaque "usmp_mbqm_right_sat"
// CHECK:         emitc.call_opaque "usmp_mbqm_left"(%{{.*}}, %{{.*}}, %[[TWO]])
// CHECK:         emitc.call_opaque "usmp_mbqm_left"(%{{.*}}, %{{.*}}, %[[ZERO]])

func.func @per_tensor_saturating(%a: tensor<4xi32>) -> tensor<4xi32> attributes {relay.primitive} {
  %0 = relay.fixed_point_multiply %a {multiplier = array<i32: -2147483648>, shift = array<i32: -3>} : tensor<4xi32> -> tensor<4xi32>
  %1 = relay.fixed_point_multiply %0 {multiplier = array<i32: 1073741824>, shift = array<i32: 2>} : tensor<4xi32> -> tensor<4xi32>
  %2 = relay.fixed_point_multiply %1 {multiplier = array<i32: 1073741824>, shift = array<i32: 0>} : tensor<4xi32> -> tensor<4xi32>
  func.return %2 : tensor<4xi32>
}

// -----

// Per-channel requantisation: multiplier (i32) and shift (i8) tables are
// tir.allocate_const hoisted to the top of the prim func (planned into a
// constant pool by usmp), indexed by the output index along axis 1; shifts of
// both signs: the signed shift goes to usmp_mbqm, which derives both
// directions.

// CHECK-LABEL: func.func @per_axis(
// CHECK:         %[[MT:.*]] = tir.allocate_const {name_hint = "fixed_point_multiply_multiplier", value = dense<[1073741824, 1395864371]> : tensor<2xi32>} : memref<2xi32>
// CHECK-NEXT:    %[[ST:.*]] = tir.allocate_const {name_hint = "fixed_point_multiply_shift", value = dense<[1, -8]> : tensor<2xi8>} : memref<2xi8>
// CHECK:         scf.for %[[C:.*]] = %{{.*}} to %{{.*}} step
// CHECK-NEXT:      scf.for
// CHECK-NEXT:        %[[X:.*]] = memref.load %{{.*}}[%{{.*}}, %[[C]], %{{.*}}] : memref<1x2x3xi32>
// CHECK-NEXT:        %[[M:.*]] = memref.load %[[MT]][%[[C]]] : memref<2xi32>
// CHECK-NEXT:        %[[S8:.*]] = memref.load %[[ST]][%[[C]]] : memref<2xi8>
// CHECK-NEXT:        %[[S:.*]] = arith.extsi %[[S8]] : i8 to i32
// CHECK-NEXT:        emitc.call_opaque "usmp_mbqm"(%[[X]], %[[M]], %[[S]]) : (i32, i32, i32) -> i32

func.func @per_axis(%a: tensor<1x2x3xi32>) -> tensor<1x2x3xi32> attributes {relay.primitive} {
  %0 = relay.fixed_point_multiply %a {multiplier = array<i32: 1073741824, 1395864371>, shift = array<i32: 1, -8>, axis = 1 : i64} : tensor<1x2x3xi32> -> tensor<1x2x3xi32>
  func.return %0 : tensor<1x2x3xi32>
}

// -----

// Per-channel shifts that are all <= 0 (multipliers below one, as in every
// int8 conv): one table of right shifts (-shift) and usmp_mbqm_right; all
// >= 0: one table of left shifts and usmp_mbqm_left.

// CHECK-LABEL: func.func @per_axis_right_shifts(
// CHECK:         %[[RT:.*]] = tir.allocate_const {name_hint = "fixed_point_multiply_right_shift", value = dense<[1, 8]> : tensor<2xi8>} : memref<2xi8>
// CHECK:         %[[X:.*]] = memref.load %{{.*}} : memref<1x2x3xi32>
// CHECK:         %[[R8:.*]] = memref.load %[[RT]][%{{.*}}] : memref<2xi8>
// CHECK-NEXT:    %[[R:.*]] = arith.extsi %[[R8]] : i8 to i32
// CHECK-NEXT:    %[[Q:.*]] = emitc.call_opaque "usmp_mbqm_right"(%[[X]], %{{.*}}, %[[R]]) : (i32, i32, i32) -> i32
// CHECK-NEXT:    memref.store %[[Q]]

func.func @per_axis_right_shifts(%a: tensor<1x2x3xi32>) -> tensor<1x2x3xi32> attributes {relay.primitive} {
  %0 = relay.fixed_point_multiply %a {multiplier = array<i32: 1073741824, 1395864371>, shift = array<i32: -1, -8>, axis = 1 : i64} : tensor<1x2x3xi32> -> tensor<1x2x3xi32>
  func.return %0 : tensor<1x2x3xi32>
}

// A zero right shift among them (a multiplier of one half or more):
// usmp_mbqm_right takes 1..31, usmp_mbqm_right0 0..31.

// CHECK-LABEL: func.func @per_axis_zero_and_right_shifts(
// CHECK:         tir.allocate_const {name_hint = "fixed_point_multiply_right_shift", value = dense<[0, 8]> : tensor<2xi8>} : memref<2xi8>
// CHECK:         emitc.call_opaque "usmp_mbqm_right0"(

func.func @per_axis_zero_and_right_shifts(%a: tensor<1x2x3xi32>) -> tensor<1x2x3xi32> attributes {relay.primitive} {
  %0 = relay.fixed_point_multiply %a {multiplier = array<i32: 1073741824, 1395864371>, shift = array<i32: 0, -8>, axis = 1 : i64} : tensor<1x2x3xi32> -> tensor<1x2x3xi32>
  func.return %0 : tensor<1x2x3xi32>
}

// CHECK-LABEL: func.func @per_axis_left_shifts(
// CHECK:         %[[LT:.*]] = tir.allocate_const {name_hint = "fixed_point_multiply_left_shift", value = dense<[0, 2]> : tensor<2xi8>} : memref<2xi8>
// CHECK:         %[[X:.*]] = memref.load %{{.*}} : memref<1x2x3xi32>
// CHECK-NEXT:    %[[L8:.*]] = memref.load %[[LT]][%{{.*}}] : memref<2xi8>
// CHECK-NEXT:    %[[L:.*]] = arith.extsi %[[L8]] : i8 to i32
// CHECK-NEXT:    %[[H:.*]] = emitc.call_opaque "usmp_mbqm_left"(%[[X]], %{{.*}}, %[[L]]) : (i32, i32, i32) -> i32
// CHECK-NEXT:    memref.store %[[H]]

func.func @per_axis_left_shifts(%a: tensor<1x2x3xi32>) -> tensor<1x2x3xi32> attributes {relay.primitive} {
  %0 = relay.fixed_point_multiply %a {multiplier = array<i32: 1073741824, 1073741824>, shift = array<i32: 0, 2>, axis = 1 : i64} : tensor<1x2x3xi32> -> tensor<1x2x3xi32>
  func.return %0 : tensor<1x2x3xi32>
}

// -----

// quantize (TFLite Micro's AffineQuantize): f32 division by the scale, round
// half away from zero, zero point, clamp to i8, convert, all in f32;
// dequantize: f32(scale) * f32(x - zp) in f32.

// CHECK-LABEL: func.func @quantize(
// CHECK:         %[[X:.*]] = memref.load %{{.*}} : memref<4xf32>
// CHECK-NEXT:    %[[Q:.*]] = arith.divf %[[X]], %{{.*}} : f32
// CHECK-NEXT:    %[[R:.*]] = math.round %[[Q]] : f32
// CHECK-NEXT:    %[[Z:.*]] = arith.addf %[[R]], %{{.*}} : f32
// CHECK-NEXT:    %[[LO:.*]] = arith.maximumf %[[Z]], %{{.*}} : f32
// CHECK-NEXT:    %[[HI:.*]] = arith.minimumf %[[LO]], %{{.*}} : f32
// CHECK-NEXT:    %[[I:.*]] = arith.fptosi %[[HI]] : f32 to i8
// CHECK:         %[[V:.*]] = memref.load %{{.*}} : memref<4xi8>
// CHECK-NEXT:    %[[VE:.*]] = arith.extsi %[[V]] : i8 to i32
// CHECK-NEXT:    %[[C:.*]] = arith.subi %[[VE]], %{{.*}} : i32
// CHECK-NEXT:    %[[F:.*]] = arith.sitofp %[[C]] : i32 to f32
// CHECK-NEXT:    %[[P:.*]] = arith.mulf %{{.*}}, %[[F]] : f32
// CHECK-NEXT:    memref.store %[[P]]

func.func @quantize(%a: tensor<4xf32>, %q: tensor<4xi8>) -> tuple<tensor<4xi8>, tensor<4xf32>> attributes {relay.primitive} {
  %0 = relay.quantize %a {scale = 0.25 : f64, zero_point = -3 : i64} : tensor<4xf32> -> tensor<4xi8>
  %1 = relay.dequantize %q {scale = 0.25 : f64, zero_point = -3 : i64} : tensor<4xi8> -> tensor<4xf32>
  %2 = relay.tuple(%0, %1) : (tensor<4xi8>, tensor<4xf32>) -> tuple<tensor<4xi8>, tensor<4xf32>>
  func.return %2 : tuple<tensor<4xi8>, tensor<4xf32>>
}

// -----

// TFLite's int8 softmax: three passes over the row (max; sum of fixed-point
// exponentials; output), scalars only, no scratch and no math.ctlz.

// CHECK-LABEL: func.func @quantized_softmax(
// CHECK-NOT:     tir.allocate
// CHECK-NOT:     math.ctlz
// CHECK:         %[[MAX:.*]] = scf.for %{{.*}} iter_args(%{{.*}}) -> (i8) {
// CHECK:         %[[SUM:.*]] = scf.for %{{.*}} iter_args(%{{.*}}) -> (i32) {
// CHECK:         scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK:           memref.store %{{.*}}, %{{.*}}[%{{.*}}, %[[I]]] : memref<1x12xi8>

func.func @quantized_softmax(%a: tensor<1x12xi8>) -> tensor<1x12xi8> attributes {relay.primitive} {
  %0 = relay.quantized_softmax %a {input_multiplier = 1242899200 : i64, input_left_shift = 24 : i64, diff_min = -124 : i64} : tensor<1x12xi8> -> tensor<1x12xi8>
  func.return %0 : tensor<1x12xi8>
}

// -----

// int16 ADD (16x8 models), as the TFLite importer writes it: each input
// widened i16 -> i32 and shifted left by 15 (not int8's 20) before its
// multiplier, the output clamped to int16 and narrowed; no i64 buffer, no
// scratch.

// CHECK-LABEL: func.func @add_int16(
// CHECK-NOT:     tir.allocate
// CHECK-DAG:     %[[SHIFT:.*]] = arith.constant 32768 : i32
// CHECK-DAG:     %[[LO:.*]] = arith.constant -32768 : i32
// CHECK-DAG:     %[[HI:.*]] = arith.constant 32767 : i32
// CHECK:         %[[A:.*]] = memref.load %{{.*}} : memref<5x64xi16>
// CHECK-NEXT:    %[[AW:.*]] = arith.extsi %[[A]] : i16 to i32
// CHECK-NEXT:    arith.muli %[[AW]], %[[SHIFT]] : i32
// CHECK:         %[[B:.*]] = memref.load %{{.*}} : memref<5x64xi16>
// CHECK-NEXT:    %[[BW:.*]] = arith.extsi %[[B]] : i16 to i32
// CHECK-NEXT:    arith.muli %[[BW]], %[[SHIFT]] : i32
// CHECK:         %[[MAX:.*]] = arith.maxsi %{{.*}}, %[[LO]] : i32
// CHECK-NEXT:    %[[MIN:.*]] = arith.minsi %[[MAX]], %[[HI]] : i32
// CHECK-NEXT:    %[[R:.*]] = arith.trunci %[[MIN]] : i32 to i16
// CHECK-NEXT:    memref.store %[[R]], %{{.*}} : memref<5x64xi16>

func.func @add_int16(%a: tensor<5x64xi16>, %b: tensor<5x64xi16>) -> tensor<5x64xi16> attributes {relay.primitive} {
  %0 = relay.cast %a : tensor<5x64xi16> -> tensor<5x64xi32>
  %1 = relay.constant dense<32768> : tensor<i32>
  %2 = relay.multiply %0, %1 : (tensor<5x64xi32>, tensor<i32>) -> tensor<5x64xi32>
  %3 = relay.fixed_point_multiply %2 {multiplier = array<i32: 1557527444>, shift = array<i32: -1>} : tensor<5x64xi32> -> tensor<5x64xi32>
  %4 = relay.cast %b : tensor<5x64xi16> -> tensor<5x64xi32>
  %5 = relay.multiply %4, %1 : (tensor<5x64xi32>, tensor<i32>) -> tensor<5x64xi32>
  %6 = relay.fixed_point_multiply %5 {multiplier = array<i32: 1073741824>, shift = array<i32: 0>} : tensor<5x64xi32> -> tensor<5x64xi32>
  %7 = relay.add %3, %6 : (tensor<5x64xi32>, tensor<5x64xi32>) -> tensor<5x64xi32>
  %8 = relay.fixed_point_multiply %7 {multiplier = array<i32: 1691523662>, shift = array<i32: -14>} : tensor<5x64xi32> -> tensor<5x64xi32>
  %9 = relay.clip %8 {a_min = -3.276800e+04 : f64, a_max = 3.276700e+04 : f64} : tensor<5x64xi32> -> tensor<5x64xi32>
  %10 = relay.cast %9 : tensor<5x64xi32> -> tensor<5x64xi16>
  func.return %10 : tensor<5x64xi16>
}

// -----

// An i64 operand (the accumulator of a 16x8 convolution) takes TFLite's
// 64-bit MultiplyByQuantizedMultiplier: the multiplier reduced to 16 bits at
// compile time ((1395864371 + 2^15) >> 16 = 21299), the total shift 15 - shift
// = 23 and its rounding half 2^22 are immediates: one multiply, add, shift.

// CHECK-LABEL: func.func @per_tensor_i64(
// CHECK-NOT:     tir.allocate_const
// CHECK-DAG:     %[[M:.*]] = arith.constant 21299 : i64
// CHECK-DAG:     %[[HALF:.*]] = arith.constant 4194304 : i64
// CHECK-DAG:     %[[T:.*]] = arith.constant 23 : i64
// CHECK:         %[[X:.*]] = memref.load %{{.*}} : memref<4xi64>
// CHECK-NEXT:    %[[P:.*]] = arith.muli %[[X]], %[[M]] : i64
// CHECK-NEXT:    %[[S:.*]] = arith.addi %[[P]], %[[HALF]] : i64
// CHECK-NEXT:    %[[Q:.*]] = arith.shrsi %[[S]], %[[T]] : i64
// CHECK-NEXT:    %[[R:.*]] = arith.trunci %[[Q]] : i64 to i32
// CHECK-NEXT:    memref.store %[[R]], %{{.*}} : memref<4xi32>

func.func @per_tensor_i64(%a: tensor<4xi64>) -> tensor<4xi32> attributes {relay.primitive} {
  %0 = relay.fixed_point_multiply %a {multiplier = array<i32: 1395864371>, shift = array<i32: -8>} : tensor<4xi64> -> tensor<4xi32>
  func.return %0 : tensor<4xi32>
}

// -----

// Per-channel i64: an i16 table of reduced multipliers (0x7FFF0000 and up
// saturate to 0x7FFF) and an i8 table of total shifts.

// CHECK-LABEL: func.func @per_axis_i64(
// CHECK:         %[[MT:.*]] = tir.allocate_const {name_hint = "fixed_point_multiply_reduced_multiplier", value = dense<[32767, 21299]> : tensor<2xi16>} : memref<2xi16>
// CHECK-NEXT:    %[[TT:.*]] = tir.allocate_const {name_hint = "fixed_point_multiply_total_shift", value = dense<[14, 23]> : tensor<2xi8>} : memref<2xi8>
// CHECK:         %[[X:.*]] = memref.load %{{.*}} : memref<1x2x3xi64>
// CHECK-NEXT:    %[[M16:.*]] = memref.load %[[MT]][%[[C:.*]]] : memref<2xi16>
// CHECK-NEXT:    %[[T8:.*]] = memref.load %[[TT]][%[[C]]] : memref<2xi8>
// CHECK-NEXT:    %[[M:.*]] = arith.extsi %[[M16]] : i16 to i64
// CHECK-NEXT:    %[[T:.*]] = arith.extsi %[[T8]] : i8 to i64
// CHECK:         %[[P:.*]] = arith.muli %[[X]], %[[M]] : i64
// CHECK:         arith.shrsi %{{.*}}, %[[T]] : i64
// CHECK-NEXT:    arith.trunci %{{.*}} : i64 to i32

func.func @per_axis_i64(%a: tensor<1x2x3xi64>) -> tensor<1x2x3xi32> attributes {relay.primitive} {
  %0 = relay.fixed_point_multiply %a {multiplier = array<i32: 2147418112, 1395864371>, shift = array<i32: 1, -8>, axis = 1 : i64} : tensor<1x2x3xi64> -> tensor<1x2x3xi32>
  func.return %0 : tensor<1x2x3xi32>
}

// -----

// uint8 (TFLite's legacy asymmetric type) keeps its signedness in the
// buffers (memref<..xui8>, uint8_t in C) while arith stays signless: a loaded
// ui8 is seen as i8 and zero-extended, a ui8 result is truncated to i8 and
// seen as ui8 before the store, clamped to 0..255 by the clip.

// CHECK-LABEL: func.func @requantize_uint8_to_int8(
// CHECK-SAME:      %[[X:.*]]: memref<4xui8>, %[[OUT:.*]]: memref<4xi8>)
// CHECK:         %[[V:.*]] = memref.load %[[X]][%{{.*}}] : memref<4xui8>
// CHECK-NEXT:    %[[S:.*]] = builtin.unrealized_conversion_cast %[[V]] : ui8 to i8
// CHECK-NEXT:    %{{.*}} = arith.extui %[[S]] : i8 to i32
// CHECK:         arith.trunci %{{.*}} : i32 to i8

// CHECK-LABEL: func.func @requantize_int8_to_uint8(
// CHECK:         arith.extsi %{{.*}} : i8 to i32
// CHECK:         %[[T:.*]] = arith.trunci %{{.*}} : i32 to i8
// CHECK-NEXT:    %[[R:.*]] = builtin.unrealized_conversion_cast %[[T]] : i8 to ui8
// CHECK-NEXT:    memref.store %[[R]], %{{.*}}[%{{.*}}] : memref<4xui8>

func.func @requantize_uint8_to_int8(%x: tensor<4xui8>) -> tensor<4xi8> attributes {relay.primitive} {
  %0 = relay.cast %x : tensor<4xui8> -> tensor<4xi32>
  %1 = relay.constant dense<-128> : tensor<i32>
  %2 = relay.add %0, %1 : (tensor<4xi32>, tensor<i32>) -> tensor<4xi32>
  %3 = relay.clip %2 {a_min = -1.280000e+02 : f64, a_max = 1.270000e+02 : f64} : tensor<4xi32> -> tensor<4xi32>
  %4 = relay.cast %3 : tensor<4xi32> -> tensor<4xi8>
  func.return %4 : tensor<4xi8>
}

func.func @requantize_int8_to_uint8(%x: tensor<4xi8>) -> tensor<4xui8> attributes {relay.primitive} {
  %0 = relay.cast %x : tensor<4xi8> -> tensor<4xi32>
  %1 = relay.constant dense<128> : tensor<i32>
  %2 = relay.add %0, %1 : (tensor<4xi32>, tensor<i32>) -> tensor<4xi32>
  %3 = relay.clip %2 {a_min = 0.000000e+00 : f64, a_max = 2.550000e+02 : f64} : tensor<4xi32> -> tensor<4xi32>
  %4 = relay.cast %3 : tensor<4xi32> -> tensor<4xui8>
  func.return %4 : tensor<4xui8>
}
