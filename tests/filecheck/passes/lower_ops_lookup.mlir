// RUN: usmp-opt %s -p lower-ops --split-input-file | FileCheck %s

// An 8-bit table: the input widened to i32, offset by 128, cast to index,
// one load from the table (a hoisted constant, planned in the constant pool).

// CHECK-LABEL: func.func @table_lookup(
// CHECK:         %[[T:.*]] = tir.allocate_const
// CHECK-SAME:      memref<256xi8>
// CHECK:         %[[X:.*]] = memref.load
// CHECK-NEXT:    %[[W:.*]] = arith.extsi %[[X]] : i8 to i32
// CHECK-NEXT:    %[[O:.*]] = arith.subi %[[W]], %{{.*}} : i32
// CHECK-NEXT:    %[[I:.*]] = arith.index_cast %[[O]] : i32 to index
// CHECK-NEXT:    %[[V:.*]] = memref.load %[[T]][%[[I]]] : memref<256xi8>
// CHECK-NEXT:    memref.store %[[V]]

func.func @table_lookup(%a: tensor<2x8xi8>) -> tensor<2x8xi8> attributes {relay.primitive} {
  %t = relay.constant dense<[-128, -91, -54, -17, 20, 57, 94, -125, -88, -51, -14, 23, 60, 97, -122, -85, -48, -11, 26, 63, 100, -119, -82, -45, -8, 29, 66, 103, -116, -79, -42, -5, 32, 69, 106, -113, -76, -39, -2, 35, 72, 109, -110, -73, -36, 1, 38, 75, 112, -107, -70, -33, 4, 41, 78, 115, -104, -67, -30, 7, 44, 81, 118, -101, -64, -27, 10, 47, 84, 121, -98, -61, -24, 13, 50, 87, 124, -95, -58, -21, 16, 53, 90, 127, -92, -55, -18, 19, 56, 93, -126, -89, -52, -15, 22, 59, 96, -123, -86, -49, -12, 25, 62, 99, -120, -83, -46, -9, 28, 65, 102, -117, -80, -43, -6, 31, 68, 105, -114, -77, -40, -3, 34, 71, 108, -111, -74, -37, 0, 37, 74, 111, -108, -71, -34, 3, 40, 77, 114, -105, -68, -31, 6, 43, 80, 117, -102, -65, -28, 9, 46, 83, 120, -99, -62, -25, 12, 49, 86, 123, -96, -59, -22, 15, 52, 89, 126, -93, -56, -19, 18, 55, 92, -127, -90, -53, -16, 21, 58, 95, -124, -87, -50, -13, 24, 61, 98, -121, -84, -47, -10, 27, 64, 101, -118, -81, -44, -7, 30, 67, 104, -115, -78, -41, -4, 33, 70, 107, -112, -75, -38, -1, 36, 73, 110, -109, -72, -35, 2, 39, 76, 113, -106, -69, -32, 5, 42, 79, 116, -103, -66, -29, 8, 45, 82, 119, -100, -63, -26, 11, 48, 85, 122, -97, -60, -23, 14, 51, 88, 125, -94, -57, -20, 17, 54, 91]> : tensor<256xi8>
  %0 = relay.table_lookup %a, %t : (tensor<2x8xi8>, tensor<256xi8>) -> tensor<2x8xi8>
  func.return %0 : tensor<2x8xi8>
}

// -----

// TFLite's int16 sigmoid: TFLite's 256-entry table as an i32 constant, two
// loads per element (the index clamped to 254), no branch.

// CHECK-LABEL: func.func @quantized_sigmoid(
// CHECK:         %[[T:.*]] = tir.allocate_const
// CHECK-SAME:      "sigmoid_table_uint16"
// CHECK-SAME:      memref<256xi32>
// CHECK-NOT:     scf.if
// CHECK:         arith.minsi
// CHECK:         memref.load %[[T]]
// CHECK:         memref.load %[[T]]
// CHECK:         arith.andi
// CHECK:         arith.select
// CHECK:         arith.shrsi
// CHECK:         arith.trunci %{{.*}} : i32 to i16
// CHECK-NOT:     scf.if

func.func @quantized_sigmoid(%a: tensor<2x8xi16>) -> tensor<2x8xi16> attributes {relay.primitive} {
  %0 = relay.quantized_sigmoid %a {input_multiplier = 0 : i64, input_left_shift = 0 : i64} : tensor<2x8xi16> -> tensor<2x8xi16>
  func.return %0 : tensor<2x8xi16>
}

// -----

// sigmoid then tanh in one loop nest share the one table.

// CHECK-LABEL: func.func @sigmoid_then_tanh(
// CHECK-COUNT-1: tir.allocate_const
// CHECK-NOT:     tir.allocate_const
// CHECK:         scf.for

func.func @sigmoid_then_tanh(%a: tensor<8xi16>) -> tensor<8xi16> attributes {relay.primitive} {
  %0 = relay.quantized_sigmoid %a {input_multiplier = 16777 : i64, input_left_shift = 12 : i64} : tensor<8xi16> -> tensor<8xi16>
  %1 = relay.quantized_tanh %0 {input_multiplier = 0 : i64, input_left_shift = 1 : i64} : tensor<8xi16> -> tensor<8xi16>
  func.return %1 : tensor<8xi16>
}

// -----

// TFLite's int16 softmax: per row the max, the sum of table exponentials and
// the reciprocal as scalars (two i16 tables of 513 values, no scratch), then
// the output pass with the exponential recomputed.

// CHECK-LABEL: func.func @quantized_softmax_i16(
// CHECK-DAG:     tir.allocate_const {name_hint = "softmax_exp_lut"{{.*}} : memref<513xi16>
// CHECK-DAG:     tir.allocate_const {name_hint = "softmax_one_over_one_plus_x_lut"{{.*}} : memref<513xi16>
// CHECK-NOT:     tir.allocate {
// CHECK:         %[[MAX:.*]] = scf.for %{{.*}} iter_args(%{{.*}}) -> (i16) {
// CHECK:         %[[SUM:.*]] = scf.for %{{.*}} iter_args(%{{.*}}) -> (i32) {
// CHECK:         scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK:           arith.shrsi %{{.*}}, %{{.*}} : i64
// CHECK:           memref.store %{{.*}}, %{{.*}}[%{{.*}}, %[[I]]] : memref<2x10xi16>

func.func @quantized_softmax_i16(%a: tensor<2x10xi16>) -> tensor<2x10xi16> attributes {relay.primitive} {
  %0 = relay.quantized_softmax_i16 %a {input_multiplier = 1717960704 : i64, input_left_shift = 1 : i64} : tensor<2x10xi16> -> tensor<2x10xi16>
  func.return %0 : tensor<2x10xi16>
}

// -----

// TFLite's int8 L2 normalisation: per row the sum of squares and its inverse
// square root (leading zeros, five Newton-Raphson steps) as scalars, no
// table, no scratch, no branch; then one requantisation per element.

// CHECK-LABEL: func.func @quantized_l2_normalize(
// CHECK-NOT:     tir.allocate
// CHECK:         %[[SUM:.*]] = scf.for %{{.*}} iter_args(%{{.*}}) -> (i32) {
// CHECK-NOT:     scf.if
// CHECK:         scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK:           memref.store %{{.*}}, %{{.*}}[%{{.*}}, %[[I]]] : memref<2x10xi8>

func.func @quantized_l2_normalize(%a: tensor<2x10xi8>) -> tensor<2x10xi8> attributes {relay.primitive} {
  %0 = relay.quantized_l2_normalize %a {input_zero_point = -3 : i64} : tensor<2x10xi8> -> tensor<2x10xi8>
  func.return %0 : tensor<2x10xi8>
}
