// RUN: usmp-opt %s -p lower-ops --split-input-file | FileCheck %s

// Reshape maps indices only: groups of dimensions with equal sizes are matched
// (2x3 <-> 6 needs a div/rem, 4 <-> 4 and the unit dimensions need nothing).
// The div/rem depend on the outer index only: computed outside the inner loop.

// CHECK-LABEL: func.func @reshape(
// CHECK-SAME:      %[[A:.*]]: memref<1x2x3x4xi8>, %[[OUT:.*]]: memref<6x4x1xi8>)
// CHECK:         scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step
// CHECK-NEXT:      %[[R:.*]] = arith.remsi %[[I]], %{{.*}} : index
// CHECK-NEXT:      %[[Q:.*]] = arith.divsi %[[I]], %{{.*}} : index
// CHECK-NEXT:      %[[R2:.*]] = arith.remsi %[[Q]], %{{.*}} : index
// CHECK-NEXT:      %[[Q2:.*]] = arith.divsi %[[Q]], %{{.*}} : index
// CHECK-NEXT:      scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step
// CHECK-NEXT:        memref.load %[[A]][%[[Q2]], %[[R2]], %[[R]], %[[J]]]

func.func @reshape(%a: tensor<1x2x3x4xi8>) -> tensor<6x4x1xi8> attributes {relay.primitive} {
  %0 = relay.reshape %a : tensor<1x2x3x4xi8> -> tensor<6x4x1xi8>
  %1 = relay.relu %0 : tensor<6x4x1xi8> -> tensor<6x4x1xi8>
  func.return %1 : tensor<6x4x1xi8>
}

// -----

// A strided slice maps i -> begin + i * stride (a negative stride reads
// backwards); a stride-1 axis starting at 0 maps to the index itself.

// CHECK-LABEL: func.func @strided_slice(
// CHECK:         scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step
// CHECK-NEXT:      %[[M:.*]] = arith.muli %[[I]], %{{.*}} : index
// CHECK-NEXT:      %[[R:.*]] = arith.addi %{{.*}}, %[[M]] : index
// CHECK-NEXT:      scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step
// CHECK-NEXT:        %[[V:.*]] = memref.load %{{.*}}[%[[R]], %[[J]]] : memref<7x3xi8>
// CHECK-NEXT:        memref.store %[[V]], %{{.*}}[%[[I]], %[[J]]] : memref<3x3xi8>

func.func @strided_slice(%a: tensor<7x3xi8>) -> tensor<3x3xi8> attributes {relay.primitive} {
  %0 = relay.strided_slice %a {begin = array<i64: 6, 0>, end = array<i64: 0, 3>, strides = array<i64: -2, 1>} : tensor<7x3xi8> -> tensor<3x3xi8>
  func.return %0 : tensor<3x3xi8>
}

// -----

// broadcast_to: size-1 and missing leading dimensions read element 0.

// CHECK-LABEL: func.func @broadcast_to(
// CHECK:         scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step
// CHECK-NEXT:      scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step
// CHECK-NEXT:        scf.for %[[K:.*]] = %{{.*}} to %{{.*}} step
// CHECK-NEXT:          %[[V:.*]] = memref.load %{{.*}}[%[[C0:.*]], %[[K]]] : memref<1x3xf32>
// CHECK-NEXT:          memref.store %[[V]], %{{.*}}[%[[I]], %[[J]], %[[K]]] : memref<2x4x3xf32>

func.func @broadcast_to(%a: tensor<1x3xf32>) -> tensor<2x4x3xf32> attributes {relay.primitive} {
  %0 = relay.broadcast_to %a : tensor<1x3xf32> -> tensor<2x4x3xf32>
  func.return %0 : tensor<2x4x3xf32>
}

// -----

// Transpose permutes the index.

// CHECK-LABEL: func.func @transpose(
// CHECK:         scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step
// CHECK-NEXT:      scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step
// CHECK-NEXT:        scf.for %[[K:.*]] = %{{.*}} to %{{.*}} step
// CHECK-NEXT:          %[[V:.*]] = memref.load %{{.*}}[%[[J]], %[[K]], %[[I]]] : memref<2x3x4xf32>
// CHECK-NEXT:          memref.store %[[V]], %{{.*}}[%[[I]], %[[J]], %[[K]]] : memref<4x2x3xf32>

func.func @transpose(%a: tensor<2x3x4xf32>) -> tensor<4x2x3xf32> attributes {relay.primitive} {
  %0 = relay.transpose %a {axes = array<i64: 2, 0, 1>} : tensor<2x3x4xf32> -> tensor<4x2x3xf32>
  func.return %0 : tensor<4x2x3xf32>
}

// -----

// Pad: the load happens only in bounds (scf.if yielding the element or the
// pad value); the unpadded dimension adds no test.

// CHECK-LABEL: func.func @pad(
// CHECK:         %[[PADV:.*]] = arith.constant -128 : i8
// CHECK:         scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step
// CHECK-NEXT:      scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step
// CHECK-NEXT:        %[[IN:.*]] = arith.subi %[[J]], %{{.*}} : index
// CHECK-NEXT:        %[[LO:.*]] = arith.cmpi sge, %[[J]], %{{.*}} : index
// CHECK-NEXT:        %[[HI:.*]] = arith.cmpi slt, %[[IN]], %{{.*}} : index
// CHECK-NEXT:        %[[OK:.*]] = arith.andi %[[LO]], %[[HI]] : i1
// CHECK-NEXT:        %[[V:.*]] = scf.if %[[OK]] -> (i8) {
// CHECK-NEXT:          %[[L:.*]] = memref.load %{{.*}}[%[[I]], %[[IN]]]
// CHECK-NEXT:          scf.yield %[[L]] : i8
// CHECK-NEXT:        } else {
// CHECK-NEXT:          scf.yield %[[PADV]] : i8
// CHECK-NEXT:        }
// CHECK-NEXT:        memref.store %[[V]]

func.func @pad(%a: tensor<3x4xi8>) -> tensor<3x7xi8> attributes {relay.primitive} {
  %0 = relay.pad %a {pad_width = array<i64: 0, 0, 1, 2>, pad_value = -128.0 : f64} : tensor<3x4xi8> -> tensor<3x7xi8>
  func.return %0 : tensor<3x7xi8>
}

// -----

// A concatenate result: one loop nest per operand, writing its slice.

// CHECK-LABEL: func.func @concatenate(
// CHECK-SAME:      %[[A:.*]]: memref<2x1xf32>, %[[B:.*]]: memref<2x2xf32>, %[[C:.*]]: memref<2x3xf32>, %[[OUT:.*]]: memref<2x6xf32>)
// CHECK-NOT:     scf.if
// CHECK:         scf.for
// CHECK-NEXT:      %[[VA:.*]] = memref.load %[[A]]
// CHECK-NEXT:      memref.store %[[VA]], %[[OUT]]
// CHECK:         scf.for
// CHECK:             memref.load %[[B]]
// CHECK:         scf.for
// CHECK:             memref.load %[[C]]

func.func @concatenate(%a: tensor<2x1xf32>, %b: tensor<2x2xf32>, %c: tensor<2x3xf32>) -> tensor<2x6xf32> attributes {relay.primitive} {
  %0 = relay.concatenate %a, %b, %c {axis = -1 : i64} : (tensor<2x1xf32>, tensor<2x2xf32>, tensor<2x3xf32>) -> tensor<2x6xf32>
  func.return %0 : tensor<2x6xf32>
}

// -----

// A concatenate inside a group: the operand is chosen per element. The index
// arithmetic of a branch is pure and is computed before the scf.if; the
// loads stay guarded.

// CHECK-LABEL: func.func @concatenate_relu(
// CHECK:         %[[FIRST:.*]] = arith.cmpi slt, %[[J:.*]], %{{.*}} : index
// CHECK-NEXT:    %[[JB:.*]] = arith.subi %[[J]], %{{.*}} : index
// CHECK-NEXT:    %[[V:.*]] = scf.if %[[FIRST]] -> (f32) {
// CHECK-NEXT:      memref.load
// CHECK:         } else {
// CHECK-NEXT:      memref.load %{{.*}}[%{{.*}}, %[[JB]]]
// CHECK:         arith.maximumf %[[V]]

func.func @concatenate_relu(%a: tensor<2x1xf32>, %b: tensor<2x2xf32>) -> tensor<2x3xf32> attributes {relay.primitive} {
  %0 = relay.concatenate %a, %b {axis = 1 : i64} : (tensor<2x1xf32>, tensor<2x2xf32>) -> tensor<2x3xf32>
  %1 = relay.relu %0 : tensor<2x3xf32> -> tensor<2x3xf32>
  func.return %1 : tensor<2x3xf32>
}
