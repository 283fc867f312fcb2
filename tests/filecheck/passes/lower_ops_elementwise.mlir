// RUN: usmp-opt %s -p lower-ops --split-input-file | FileCheck %s

// numpy broadcasting: size-1 operand dimensions read index 0, missing leading
// ones are dropped; i8 + i8 stays i8 (wraps).

// CHECK-LABEL: func.func @broadcast(
// CHECK-SAME:      %[[A:.*]]: memref<2x1x4xi8>, %[[B:.*]]: memref<3x1xi8>, %[[OUT:.*]]: memref<2x3x4xi8>)
// CHECK:         %[[C0:.*]] = arith.constant 0 : index
// CHECK:         scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step
// CHECK-NEXT:      scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step
// CHECK-NEXT:        scf.for %[[K:.*]] = %{{.*}} to %{{.*}} step
// CHECK-NEXT:          %[[X:.*]] = memref.load %[[A]][%[[I]], %[[C0]], %[[K]]]
// CHECK-NEXT:          %[[Y:.*]] = memref.load %[[B]][%[[J]], %[[C0]]]
// CHECK-NEXT:          %[[S:.*]] = arith.addi %[[X]], %[[Y]] : i8
// CHECK-NEXT:          memref.store %[[S]], %[[OUT]][%[[I]], %[[J]], %[[K]]]

func.func @broadcast(%a: tensor<2x1x4xi8>, %b: tensor<3x1xi8>) -> tensor<2x3x4xi8> attributes {relay.primitive} {
  %0 = relay.add %a, %b : (tensor<2x1x4xi8>, tensor<3x1xi8>) -> tensor<2x3x4xi8>
  func.return %0 : tensor<2x3x4xi8>
}

// -----

// Integer clip: a bound the type already implies costs nothing (a_max here);
// right_shift is arithmetic; cast truncates; relu is a signed max with 0.

// CHECK-LABEL: func.func @clip_relu(
// CHECK:         %[[V:.*]] = memref.load
// CHECK-NEXT:    %[[C:.*]] = arith.maxsi %[[V]], %{{.*}} : i32
// CHECK-NEXT:    %[[S:.*]] = arith.shrsi %[[C]], %[[C]] : i32
// CHECK-NEXT:    %[[T:.*]] = arith.trunci %[[S]] : i32 to i8
// CHECK-NEXT:    %[[R:.*]] = arith.maxsi %[[T]], %{{.*}} : i8
// CHECK-NEXT:    memref.store %[[R]]

func.func @clip_relu(%a: tensor<8xi32>, %f: tensor<8xf32>) -> tensor<8xi8> attributes {relay.primitive} {
  %0 = relay.clip %a {a_min = -128.0 : f64, a_max = 1.0e+12 : f64} : tensor<8xi32> -> tensor<8xi32>
  %1 = relay.right_shift %0, %0 : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
  %2 = relay.cast %1 : tensor<8xi32> -> tensor<8xi8>
  %3 = relay.relu %2 : tensor<8xi8> -> tensor<8xi8>
  func.return %3 : tensor<8xi8>
}

// -----

// Floats: NaN-propagating max/min (numpy semantics), cast rounds toward zero.

// CHECK-LABEL: func.func @float(
// CHECK:         %[[D:.*]] = arith.subf
// CHECK-NEXT:    %[[R:.*]] = arith.maximumf %[[D]], %{{.*}} : f32
// CHECK-NEXT:    %[[L:.*]] = arith.maximumf %[[R]], %{{.*}} : f32
// CHECK-NEXT:    %[[H:.*]] = arith.minimumf %[[L]], %{{.*}} : f32
// CHECK-NEXT:    %[[I:.*]] = arith.fptosi %[[H]] : f32 to i16
// CHECK-NEXT:    memref.store %[[I]]

func.func @float(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xi16> attributes {relay.primitive} {
  %0 = relay.subtract %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = relay.relu %0 : tensor<4xf32> -> tensor<4xf32>
  %2 = relay.clip %1 {a_min = -1.0 : f64, a_max = 6.0 : f64} : tensor<4xf32> -> tensor<4xf32>
  %3 = relay.cast %2 : tensor<4xf32> -> tensor<4xi16>
  func.return %3 : tensor<4xi16>
}

// -----

// A primitive function returning a tuple has one output argument per field,
// each filled by its own loop nest.

// CHECK-LABEL: func.func @two_outputs(
// CHECK-SAME:      %[[A:.*]]: memref<4xf32>, %[[O0:.*]]: memref<4xf32>, %[[O1:.*]]: memref<4xf32>)
// CHECK:         scf.for
// CHECK:           arith.maximumf
// CHECK-NEXT:      memref.store %{{.*}}, %[[O0]]
// CHECK:         scf.for
// CHECK:           arith.mulf
// CHECK-NEXT:      memref.store %{{.*}}, %[[O1]]

func.func @two_outputs(%a: tensor<4xf32>) -> tuple<tensor<4xf32>, tensor<4xf32>> attributes {relay.primitive} {
  %0 = relay.relu %a : tensor<4xf32> -> tensor<4xf32>
  %1 = relay.multiply %a, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %2 = relay.tuple(%0, %1) : (tensor<4xf32>, tensor<4xf32>) -> tuple<tensor<4xf32>, tensor<4xf32>>
  func.return %2 : tuple<tensor<4xf32>, tensor<4xf32>>
}

// -----

// Constants inside a primitive function: equal elements become an
// immediate; any other constant a tir.allocate_const (planned by usmp).

// CHECK-LABEL: func.func @constants(
// CHECK-DAG:     %[[TABLE:.*]] = tir.allocate_const {name_hint = "table", value = dense<[1, 2, 3, 4]> : tensor<4xi32>} : memref<4xi32>
// CHECK-DAG:     %[[SEVEN:.*]] = arith.constant 7 : i32
// CHECK:         scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step
// CHECK-NEXT:      %[[X:.*]] = memref.load %{{.*}}[%[[I]]] : memref<4xi32>
// CHECK-NEXT:      %[[T:.*]] = memref.load %[[TABLE]][%[[I]]] : memref<4xi32>
// CHECK-NEXT:      %[[S:.*]] = arith.addi %[[X]], %[[T]] : i32
// CHECK-NEXT:      arith.muli %[[S]], %[[SEVEN]] : i32
func.func @constants(%x: tensor<4xi32>) -> tensor<4xi32> attributes {relay.primitive} {
  %table = relay.constant dense<[1, 2, 3, 4]> : tensor<4xi32>
  %seven = relay.constant dense<7> : tensor<4xi32>
  %0 = relay.add %x, %table : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  %1 = relay.multiply %0, %seven : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  func.return %1 : tensor<4xi32>
}

// -----

// divide: IEEE float division of the broadcast operands.

// CHECK-LABEL: func.func @divide(
// CHECK:         %[[X:.*]] = memref.load
// CHECK-NEXT:    %[[Y:.*]] = memref.load
// CHECK-NEXT:    %[[Q:.*]] = arith.divf %[[X]], %[[Y]] : f32
// CHECK-NEXT:    memref.store %[[Q]]

func.func @divide(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<2x3xf32> attributes {relay.primitive} {
  %0 = relay.divide %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// -----

// sigmoid is 1 / (1 + exp(-x)); tanh is math.tanh (libm tanhf in C).

// CHECK-LABEL: func.func @sigmoid_tanh(
// CHECK:         %[[X:.*]] = memref.load
// CHECK-NEXT:    %[[N:.*]] = arith.negf %[[X]] : f32
// CHECK-NEXT:    %[[E:.*]] = math.exp %[[N]] : f32
// CHECK-NEXT:    %[[D:.*]] = arith.addf %{{.*}}, %[[E]] : f32
// CHECK-NEXT:    %[[S:.*]] = arith.divf %{{.*}}, %[[D]] : f32
// CHECK-NEXT:    %[[T:.*]] = math.tanh %[[S]] : f32
// CHECK-NEXT:    memref.store %[[T]]

func.func @sigmoid_tanh(%a: tensor<8xf32>) -> tensor<8xf32> attributes {relay.primitive} {
  %0 = relay.sigmoid %a : tensor<8xf32> -> tensor<8xf32>
  %1 = relay.tanh %0 : tensor<8xf32> -> tensor<8xf32>
  func.return %1 : tensor<8xf32>
}

// -----

// exp, log, sqrt and rsqrt are math ops (libm expf, logf, sqrtf, 1 / sqrtf in C).

// CHECK-LABEL: func.func @math_functions(
// CHECK:         %[[X:.*]] = memref.load
// CHECK-NEXT:    %[[E:.*]] = math.exp %[[X]] : f32
// CHECK-NEXT:    %[[L:.*]] = math.log %[[E]] : f32
// CHECK-NEXT:    %[[S:.*]] = math.sqrt %[[L]] : f32
// CHECK-NEXT:    %[[R:.*]] = math.rsqrt %[[S]] : f32
// CHECK-NEXT:    memref.store %[[R]]

func.func @math_functions(%a: tensor<8xf32>) -> tensor<8xf32> attributes {relay.primitive} {
  %0 = relay.exp %a : tensor<8xf32> -> tensor<8xf32>
  %1 = relay.log %0 : tensor<8xf32> -> tensor<8xf32>
  %2 = relay.sqrt %1 : tensor<8xf32> -> tensor<8xf32>
  %3 = relay.rsqrt %2 : tensor<8xf32> -> tensor<8xf32>
  func.return %3 : tensor<8xf32>
}
