// RUN: usmp-opt %s -p lower-ops --split-input-file | FileCheck %s

// Depthwise (groups = Cin = 4, multiplier 2), dilation 2, padding 2: the
// input channel is oc / 2; padding and dilation are folded into the tap
// bounds (ceil((pad - o) / d) .. min(K, ceil((H + pad - o) / d))), computed
// once per output row (hoisted out of the column and channel loops), no
// padded copy; the i8 operands are sign-extended in registers, accumulator
// i32. Four output channels share one reduction (four accumulators; the
// channel loop steps by 4). Outputs whose window lies inside the input take
// the scf.if's first branch (static tap bounds, the 3 columns unrolled); the
// clamped bounds are for the border.

// CHECK-LABEL: func.func @depthwise(
// CHECK-SAME:      %[[X:.*]]: memref<1x5x5x4xi8>, %[[W:.*]]: memref<3x3x1x8xi8>, %[[OUT:.*]]: memref<1x5x5x8xi32>)
// CHECK-SAME:      attributes {tir.prim_func}
// CHECK-NOT:     tir.allocate
// CHECK-DAG:     %[[C4:.*]] = arith.constant 4 : index
// CHECK:         scf.for %[[OH:.*]] = %{{.*}} to %{{.*}} step
// CHECK:           %[[LO:.*]] = arith.divsi
// CHECK:           %[[HI:.*]] = arith.minsi
// CHECK:           scf.for %[[OW:.*]] = %{{.*}} to %{{.*}} step
// CHECK:             scf.for %[[OC:.*]] = %{{.*}} to %{{.*}} step %[[C4]] {
// CHECK-NEXT:          %[[OC1:.*]] = arith.addi %[[OC]], %{{.*}} : index
// CHECK-NEXT:          %[[OC2:.*]] = arith.addi %[[OC]], %{{.*}} : index
// CHECK-NEXT:          %[[OC3:.*]] = arith.addi %[[OC]], %{{.*}} : index
// CHECK-NEXT:          %[[IC:.*]] = arith.divsi %[[OC]], %{{.*}} : index
// CHECK-NEXT:          %[[IC1:.*]] = arith.divsi %[[OC1]], %{{.*}} : index
// CHECK:               %[[ACC:.*]], %{{.*}}, %{{.*}}, %{{.*}} = scf.if %{{.*}} -> (i32, i32, i32, i32) {
// CHECK:               } else {
// CHECK-NEXT:            scf.for %[[KH:.*]] = %[[LO]] to %[[HI]] step %{{.*}} iter_args(%{{.*}}) -> (i32, i32, i32, i32) {
// CHECK:                   scf.for %[[KW:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[A:[^ ]*]] = %{{.*}}, %{{.*}}) -> (i32, i32, i32, i32) {
// CHECK:                   %[[XV:.*]] = memref.load %[[X]][%{{.*}}, %{{.*}}, %{{.*}}, %[[IC]]] : memref<1x5x5x4xi8>
// CHECK-NEXT:              %[[XE:.*]] = arith.extsi %[[XV]] : i8 to i32
// CHECK-NEXT:              %[[WV:.*]] = memref.load %[[W]][%[[KH]], %[[KW]], %{{.*}}, %[[OC]]] : memref<3x3x1x8xi8>
// CHECK-NEXT:              %[[WE:.*]] = arith.extsi %[[WV]] : i8 to i32
// CHECK-NEXT:              %[[WZ:.*]] = arith.subi %[[WE]], %{{.*}} : i32
// CHECK-NEXT:              %[[P:.*]] = arith.muli %[[XE]], %[[WZ]] : i32
// CHECK-NEXT:              %[[S:.*]] = arith.addi %[[A]], %[[P]] : i32
// CHECK-NEXT:              memref.load %[[X]][%{{.*}}, %{{.*}}, %{{.*}}, %[[IC1]]] : memref<1x5x5x4xi8>
// CHECK-NEXT:              arith.extsi
// CHECK-NEXT:              memref.load %[[W]][%[[KH]], %[[KW]], %{{.*}}, %[[OC1]]] : memref<3x3x1x8xi8>
// CHECK:                   scf.yield %[[S]], %{{.*}}, %{{.*}}, %{{.*}} : i32, i32, i32, i32
// CHECK:               memref.store %[[ACC]], %[[OUT]][%{{.*}}, %[[OH]], %[[OW]], %[[OC]]]

func.func @depthwise(%x: tensor<1x5x5x4xi8>, %w: tensor<3x3x1x8xi8>) -> tensor<1x5x5x8xi32> attributes {relay.primitive} {
  %0 = relay.conv2d %x, %w {padding = array<i64: 2, 2, 2, 2>, dilation = array<i64: 2, 2>, groups = 4 : i64, kernel_zero_point = 1 : i64} : (tensor<1x5x5x4xi8>, tensor<3x3x1x8xi8>) -> tensor<1x5x5x8xi32>
  func.return %0 : tensor<1x5x5x8xi32>
}

// -----

// The innermost reduction loop reads HWIO weights with stride Cout along the
// input channel: it runs 4 taps per iteration (step 4, taps iv .. iv + 3,
// accumulated in order), which C compilers cannot vectorise anyway. (5 output
// channels: one per reduction.)

// CHECK-LABEL: func.func @conv_strided_unrolled(
// CHECK-SAME:      %[[X:.*]]: memref<1x3x3x8xi8>, %[[W:.*]]: memref<1x1x8x5xi8>
// CHECK-DAG:     %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG:     %[[C2:.*]] = arith.constant 2 : index
// CHECK-DAG:     %[[C3:.*]] = arith.constant 3 : index
// CHECK-DAG:     %[[C4:.*]] = arith.constant 4 : index
// CHECK-DAG:     %[[C8:.*]] = arith.constant 8 : index
// CHECK:         %[[ACC:.*]] = scf.for %[[IC:.*]] = %{{.*}} to %[[C8]] step %[[C4]] iter_args(%[[A:.*]] = %{{.*}}) -> (i32) {
// CHECK-NEXT:      memref.load %[[X]][%{{.*}}, %{{.*}}, %{{.*}}, %[[IC]]]
// CHECK:           memref.load %[[W]][%{{.*}}, %{{.*}}, %[[IC]], %{{.*}}]
// CHECK:           %[[S0:.*]] = arith.addi %[[A]], %{{.*}} : i32
// CHECK-NEXT:      %[[IC1:.*]] = arith.addi %[[IC]], %[[C1]] : index
// CHECK-NEXT:      memref.load %[[X]][%{{.*}}, %{{.*}}, %{{.*}}, %[[IC1]]]
// CHECK:           %[[S1:.*]] = arith.addi %[[S0]], %{{.*}} : i32
// CHECK-NEXT:      %[[IC2:.*]] = arith.addi %[[IC]], %[[C2]] : index
// CHECK:           %[[S2:.*]] = arith.addi %[[S1]], %{{.*}} : i32
// CHECK-NEXT:      %[[IC3:.*]] = arith.addi %[[IC]], %[[C3]] : index
// CHECK:           memref.load %[[W]][%{{.*}}, %{{.*}}, %[[IC3]], %{{.*}}]
// CHECK:           %[[S3:.*]] = arith.addi %[[S2]], %{{.*}} : i32
// CHECK-NEXT:      scf.yield %[[S3]] : i32

func.func @conv_strided_unrolled(%x: tensor<1x3x3x8xi8>, %w: tensor<1x1x8x5xi8>) -> tensor<1x3x3x5xi32> attributes {relay.primitive} {
  %0 = relay.conv2d %x, %w {input_zero_point = 5 : i64} : (tensor<1x3x3x8xi8>, tensor<1x1x8x5xi8>) -> tensor<1x3x3x5xi32>
  func.return %0 : tensor<1x3x3x5xi32>
}

// -----

// OHWI weights and NHWC data are both contiguous along the input channel: the
// loop stays rolled (step 1), for the C compiler to vectorise. (5 output
// channels: one per reduction.)

// CHECK-LABEL: func.func @conv_contiguous_rolled(
// CHECK:         %[[C1:.*]] = arith.constant 1 : index
// CHECK:         scf.for %[[IC:.*]] = %{{.*}} to %{{.*}} step %[[C1]] iter_args(%{{.*}}) -> (i32) {
// CHECK-NEXT:      memref.load %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}, %[[IC]]] : memref<1x3x3x8xi8>
// CHECK-NEXT:      arith.extsi
// CHECK-NEXT:      memref.load %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}, %[[IC]]] : memref<5x1x1x8xi8>
// CHECK-NEXT:      arith.extsi
// CHECK-NEXT:      arith.muli
// CHECK-NEXT:      arith.addi
// CHECK-NEXT:      scf.yield

func.func @conv_contiguous_rolled(%x: tensor<1x3x3x8xi8>, %w: tensor<5x1x1x8xi8>) -> tensor<1x3x3x5xi32> attributes {relay.primitive} {
  %0 = relay.conv2d %x, %w {kernel_layout = #relay<kernel_layout OHWI>} : (tensor<1x3x3x8xi8>, tensor<5x1x1x8xi8>) -> tensor<1x3x3x5xi32>
  func.return %0 : tensor<1x3x3x5xi32>
}

// -----

// Dense f32: a float sum is a chain of dependent additions, so four units
// share one reduction (one accumulator each, each summed in its own order:
// bit for bit the same): the unit loop steps by 4, the input element is
// loaded once per tap.

// CHECK-LABEL: func.func @dense(
// CHECK-SAME:      %[[X:.*]]: memref<2x16xf32>, %[[W:.*]]: memref<8x16xf32>, %[[OUT:.*]]: memref<2x8xf32>)
// CHECK-DAG:     %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG:     %[[C2:.*]] = arith.constant 2 : index
// CHECK-DAG:     %[[C3:.*]] = arith.constant 3 : index
// CHECK-DAG:     %[[C4:.*]] = arith.constant 4 : index
// CHECK:         scf.for %[[B:.*]] = %{{.*}} to %{{.*}} step
// CHECK-NEXT:      scf.for %[[N:.*]] = %{{.*}} to %{{.*}} step %[[C4]] {
// CHECK-NEXT:        %[[N1:.*]] = arith.addi %[[N]], %[[C1]] : index
// CHECK-NEXT:        %[[N2:.*]] = arith.addi %[[N]], %[[C2]] : index
// CHECK-NEXT:        %[[N3:.*]] = arith.addi %[[N]], %[[C3]] : index
// CHECK-NEXT:        %[[R0:.*]], %[[R1:.*]], %[[R2:.*]], %[[R3:.*]] = scf.for %[[K:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[A0:.*]] = %{{.*}}, %[[A1:.*]] = %{{.*}}, %[[A2:.*]] = %{{.*}}, %[[A3:.*]] = %{{.*}}) -> (f32, f32, f32, f32) {
// CHECK-NEXT:          %[[XV:.*]] = memref.load %[[X]][%[[B]], %[[K]]]
// CHECK-NEXT:          %[[W0:.*]] = memref.load %[[W]][%[[N]], %[[K]]]
// CHECK-NEXT:          %[[P0:.*]] = arith.mulf %[[XV]], %[[W0]] : f32
// CHECK-NEXT:          %[[S0:.*]] = arith.addf %[[A0]], %[[P0]] : f32
// CHECK-NEXT:          %[[W1:.*]] = memref.load %[[W]][%[[N1]], %[[K]]]
// CHECK-NEXT:          %[[P1:.*]] = arith.mulf %[[XV]], %[[W1]] : f32
// CHECK-NEXT:          %[[S1:.*]] = arith.addf %[[A1]], %[[P1]] : f32
// CHECK:               scf.yield %[[S0]], %[[S1]], %{{.*}}, %{{.*}} : f32, f32, f32, f32
// CHECK:             memref.store %[[R0]], %[[OUT]][%[[B]], %[[N]]]
// CHECK-NEXT:        memref.store %[[R1]], %[[OUT]][%[[B]], %[[N1]]]
// CHECK-NEXT:        memref.store %[[R2]], %[[OUT]][%[[B]], %[[N2]]]
// CHECK-NEXT:        memref.store %[[R3]], %[[OUT]][%[[B]], %[[N3]]]

func.func @dense(%x: tensor<2x16xf32>, %w: tensor<8x16xf32>) -> tensor<2x8xf32> attributes {relay.primitive} {
  %0 = relay.dense %x, %w : (tensor<2x16xf32>, tensor<8x16xf32>) -> tensor<2x8xf32>
  func.return %0 : tensor<2x8xf32>
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
// The divisor depends on the output position only: computed before the
// channel loop.

// CHECK-LABEL: func.func @avg_pool(
// CHECK:         scf.for
// CHECK:           %[[LO_H:.*]] = arith.maxsi
// CHECK:           %[[HI_H:.*]] = arith.minsi
// CHECK-NEXT:      %[[NH:.*]] = arith.subi %[[HI_H]], %[[LO_H]] : index
// CHECK-NEXT:      scf.for
// CHECK:             %[[LO_W:.*]] = arith.maxsi
// CHECK:             %[[HI_W:.*]] = arith.minsi
// CHECK-NEXT:        %[[NW:.*]] = arith.subi %[[HI_W]], %[[LO_W]] : index
// CHECK-NEXT:        %[[N:.*]] = arith.muli %[[NH]], %[[NW]] : index
// CHECK-NEXT:        %[[NI:.*]] = arith.index_cast %[[N]] : index to i32
// CHECK-NEXT:        %[[HALF:.*]] = arith.divsi %[[NI]], %{{.*}} : i32
// CHECK-NEXT:        scf.for
// CHECK-NEXT:          %[[ACC:.*]] = scf.for %[[KH:.*]] = %[[LO_H]] to %[[HI_H]] step %{{.*}} iter_args(%{{.*}}) -> (i32)
// CHECK:               %[[POS:.*]] = arith.cmpi sgt, %[[ACC]], %{{.*}} : i32
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

// -----

// An int8 sum (TFLite MEAN / SUM): the cast is fused into the reduction,
// the dropped axes become an inner nest with an i32 accumulator.

// CHECK-LABEL: func.func @sum(
// CHECK:         scf.for %[[C:.*]] = %{{.*}} to %{{.*}} step
// CHECK-NEXT:      %[[S:.*]] = scf.for %{{.*}} iter_args(%{{.*}}) -> (i32) {
// CHECK-NEXT:        scf.for %{{.*}} iter_args(%{{.*}}) -> (i32) {
// CHECK:               arith.extsi %{{.*}} : i8 to i32
// CHECK:           memref.store %[[S]], %{{.*}}[%{{.*}}, %[[C]]]

func.func @sum(%x: tensor<1x4x4x8xi8>) -> tensor<1x8xi32> attributes {relay.primitive} {
  %0 = relay.cast %x : tensor<1x4x4x8xi8> -> tensor<1x4x4x8xi32>
  %1 = relay.sum %0 {axis = array<i64: 1, 2>} : tensor<1x4x4x8xi32> -> tensor<1x8xi32>
  func.return %1 : tensor<1x8xi32>
}

// -----

// max over the last axis starts from the type's lowest value (i8: -128) and
// keeps the element type; no widening.

// CHECK-LABEL: func.func @max(
// CHECK:         %[[LOW:.*]] = arith.constant -128 : i8
// CHECK:         scf.for %{{.*}} iter_args(%[[ACC:.*]] = %[[LOW]]) -> (i8) {
// CHECK-NEXT:      %[[V:.*]] = memref.load
// CHECK-NEXT:      %{{.*}} = arith.maxsi %[[ACC]], %[[V]] : i8

func.func @max(%x: tensor<2x6xi8>) -> tensor<2xi8> attributes {relay.primitive} {
  %0 = relay.max %x {axis = array<i64: 1>} : tensor<2x6xi8> -> tensor<2xi8>
  func.return %0 : tensor<2xi8>
}

// -----

// argmax: element 0 is the first candidate, the loop runs over 1..n-1 with
// the best value and its index as accumulators; a strict comparison keeps the
// first of equal maxima.

// CHECK-LABEL: func.func @argmax(
// CHECK:         %[[FIRST:.*]] = memref.load %{{.*}}[%{{.*}}, %{{.*}}] : memref<2x6xi8>
// CHECK:         scf.for %[[T:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[B:.*]] = %[[FIRST]], %[[P:.*]] = %{{.*}}) -> (i8, i32) {
// CHECK:           %[[GT:.*]] = arith.cmpi sgt, %{{.*}}, %[[B]] : i8
// CHECK:           arith.select %[[GT]], %{{.*}}, %[[B]] : i8
// CHECK:           arith.select %[[GT]], %{{.*}}, %[[P]] : i32

func.func @argmax(%x: tensor<2x6xi8>) -> tensor<2xi32> attributes {relay.primitive} {
  %0 = relay.argmax %x {axis = 1 : i64} : tensor<2x6xi8> -> tensor<2xi32>
  func.return %0 : tensor<2xi32>
}

// -----

// 16x8 (i16 data, i8 weights): the accumulators are i64, each product is
// computed in i32 (it fits: |x * w| < 2^22) and sign-extended before the
// add, as TFLite's 16x8 kernels; no widened copy of either operand.

// CHECK-LABEL: func.func @conv_16x8(
// CHECK:         scf.for {{.*}} iter_args({{.*}}) -> (i64, i64, i64, i64)
// CHECK:           %[[X:.*]] = memref.load %{{.*}} : memref<1x3x3x2xi16>
// CHECK-NEXT:      %[[X32:.*]] = arith.extsi %[[X]] : i16 to i32
// CHECK-NEXT:      %[[W:.*]] = memref.load %{{.*}} : memref<4x3x3x2xi8>
// CHECK-NEXT:      %[[W32:.*]] = arith.extsi %[[W]] : i8 to i32
// CHECK-NEXT:      %[[P:.*]] = arith.muli %[[X32]], %[[W32]] : i32
// CHECK-NEXT:      %[[P64:.*]] = arith.extsi %[[P]] : i32 to i64
// CHECK-NEXT:      arith.addi %{{.*}}, %[[P64]] : i64

func.func @conv_16x8(%x: tensor<1x3x3x2xi16>, %w: tensor<4x3x3x2xi8>) -> tensor<1x1x1x4xi64> attributes {relay.primitive} {
  %0 = relay.conv2d %x, %w {kernel_layout = #relay<kernel_layout OHWI>} : (tensor<1x3x3x2xi16>, tensor<4x3x3x2xi8>) -> tensor<1x1x1x4xi64>
  func.return %0 : tensor<1x1x1x4xi64>
}

// -----

// conv2d_transpose as a gather, no scratch: for output row oy the input rows
// lo <= iy < hi whose window covers it, lo = ceil(max(oy + top - (K-1), 0) /
// stride), hi = min(H, (oy + top) / stride + 1), the tap K index oy + top -
// iy * stride; the same for columns; the input channels innermost; four
// output channels share each input element.

// CHECK-LABEL: func.func @conv2d_transpose(
// CHECK-NOT:     tir.allocate
// CHECK-DAG:     %[[ONE:.*]] = arith.constant 1 : index
// CHECK-DAG:     %[[TWO:.*]] = arith.constant 2 : index
// CHECK-DAG:     %[[H:.*]] = arith.constant 3 : index
// CHECK:         scf.for %[[OY:.*]] = %{{.*}} to %{{.*}} step
// CHECK-NEXT:      %[[BASE:.*]] = arith.addi %[[OY]], %[[ONE]] : index
// CHECK-NEXT:      %[[D:.*]] = arith.subi %[[BASE]], %[[TWO]] : index
// CHECK-NEXT:      %[[M:.*]] = arith.maxsi %[[D]], %{{.*}} : index
// CHECK-NEXT:      %[[R:.*]] = arith.addi %[[M]], %[[ONE]] : index
// CHECK-NEXT:      %[[LO:.*]] = arith.divsi %[[R]], %[[TWO]] : index
// CHECK-NEXT:      %[[Q:.*]] = arith.divsi %[[BASE]], %[[TWO]] : index
// CHECK-NEXT:      %[[Q1:.*]] = arith.addi %[[Q]], %[[ONE]] : index
// CHECK-NEXT:      %[[HI:.*]] = arith.minsi %[[Q1]], %[[H]] : index
// CHECK:           scf.for %[[IY:.*]] = %[[LO]] to %[[HI]] step %[[ONE]] iter_args({{.*}}) -> (i32, i32, i32, i32) {
// CHECK-NEXT:        %[[S:.*]] = arith.muli %[[IY]], %[[TWO]] : index
// CHECK-NEXT:        %[[FY:.*]] = arith.subi %[[BASE]], %[[S]] : index
// CHECK:             memref.load %{{.*}}[%{{.*}}, %[[IY]], %{{.*}}, %{{.*}}] : memref<1x3x3x2xi8>
// CHECK:             memref.load %{{.*}}[%{{.*}}, %[[FY]], %{{.*}}, %{{.*}}] : memref<4x3x3x2xi8>

func.func @conv2d_transpose(%x: tensor<1x3x3x2xi8>, %w: tensor<4x3x3x2xi8>) -> tensor<1x6x6x4xi32> attributes {relay.primitive} {
  %0 = relay.conv2d_transpose %x, %w {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 0, 0>, input_zero_point = -3 : i64} : (tensor<1x3x3x2xi8>, tensor<4x3x3x2xi8>) -> tensor<1x6x6x4xi32>
  func.return %0 : tensor<1x6x6x4xi32>
}

// -----

// A depthwise stripe whose epilogue clamps to one value (a_min = a_max): the
// output is a constant, so the accumulation, its loads, the padding branch
// and its loops compute nothing used, and are erased (C compilers reject the
// variables they would leave "set but not used"). Found by the fuzzer
// (python benchmarks/fuzz.py --seed 31001746 --examples 1).

// CHECK-LABEL: func.func @constant_epilogue(
// CHECK-NOT:     scf.if
// CHECK-NOT:     memref.load
// CHECK:         memref.store
// CHECK-NOT:     memref.load
// CHECK:         func.return
func.func @constant_epilogue(%0: tensor<1x3x2x9xi8>, %1: tensor<3x2x1x9xi8>, %2: tensor<9xi32>) -> tensor<1x2x1x9xi8> attributes {relay.primitive} {
  %3 = relay.constant dense<-128> : tensor<i32>
  %4 = relay.conv2d %0, %1 {strides = array<i64: 1, 2>, padding = array<i64: 1, 0, 0, 0>, groups = 9 : i64, input_zero_point = -128 : i64} : (tensor<1x3x2x9xi8>, tensor<3x2x1x9xi8>) -> tensor<1x2x1x9xi32>
  %5 = relay.add %4, %2 : (tensor<1x2x1x9xi32>, tensor<9xi32>) -> tensor<1x2x1x9xi32>
  %6 = relay.fixed_point_multiply %5 {multiplier = array<i32: 1163287420>, shift = array<i32: -9>, axis = 3 : i64} : tensor<1x2x1x9xi32> -> tensor<1x2x1x9xi32>
  %7 = relay.add %6, %3 : (tensor<1x2x1x9xi32>, tensor<i32>) -> tensor<1x2x1x9xi32>
  %8 = relay.clip %7 {a_min = -1.280000e+02 : f64, a_max = 1.270000e+02 : f64} : tensor<1x2x1x9xi32> -> tensor<1x2x1x9xi32>
  %9 = relay.cast %8 : tensor<1x2x1x9xi32> -> tensor<1x2x1x9xi8>
  %10 = relay.clip %9 {a_min = -1.280000e+02 : f64, a_max = -1.280000e+02 : f64} : tensor<1x2x1x9xi8> -> tensor<1x2x1x9xi8>
  func.return %10 : tensor<1x2x1x9xi8>
}
