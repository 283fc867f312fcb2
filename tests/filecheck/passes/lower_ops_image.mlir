// RUN: usmp-opt %s -p lower-ops --split-input-file | FileCheck %s

// gather with positions given at run time: the position is loaded, cast to
// index and clamped into the axis before it indexes the data, once per
// position (outside the loop over the slice it picks).

// CHECK-LABEL: func.func @gather(
// CHECK-SAME:      %[[X:.*]]: memref<2x5x3xi8>, %[[I:.*]]: memref<2x4xi32>, %[[OUT:.*]]: memref<2x4x3xi8>)
// CHECK:         scf.for %[[B:.*]] = %{{.*}} to %{{.*}} step
// CHECK-NEXT:      scf.for %[[C:.*]] = %{{.*}} to %{{.*}} step
// CHECK-NEXT:        %[[P:.*]] = memref.load %[[I]][%[[B]], %[[C]]] : memref<2x4xi32>
// CHECK-NEXT:        %[[PI:.*]] = arith.index_cast %[[P]] : i32 to index
// CHECK-NEXT:        %[[LO:.*]] = arith.maxsi %[[PI]], %{{.*}} : index
// CHECK-NEXT:        %[[HI:.*]] = arith.minsi %[[LO]], %{{.*}} : index
// CHECK-NEXT:        scf.for %[[K:.*]] = %{{.*}} to %{{.*}} step
// CHECK-NEXT:          %[[V:.*]] = memref.load %[[X]][%[[B]], %[[HI]], %[[K]]] : memref<2x5x3xi8>
// CHECK-NEXT:          memref.store %[[V]], %[[OUT]][%[[B]], %[[C]], %[[K]]]

func.func @gather(%x: tensor<2x5x3xi8>, %i: tensor<2x4xi32>) -> tensor<2x4x3xi8> attributes {relay.primitive} {
  %0 = relay.gather %x, %i {axis = 1 : i64, batch_dims = 1 : i64} : (tensor<2x5x3xi8>, tensor<2x4xi32>) -> tensor<2x4x3xi8>
  func.return %0 : tensor<2x4x3xi8>
}

// -----

// Constant positions all inside the axis: a table, no clamp.

// CHECK-LABEL: func.func @gather_constant(
// CHECK:         %[[T:.*]] = tir.allocate_const
// CHECK:         %[[P:.*]] = memref.load %[[T]]
// CHECK-NEXT:    %[[PI:.*]] = arith.index_cast %[[P]] : i32 to index
// CHECK-NOT:     arith.maxsi
// CHECK:         memref.load %{{.*}}[%[[PI]], %{{.*}}] : memref<5x3xf32>

func.func @gather_constant(%x: tensor<5x3xf32>) -> tensor<4x3xf32> attributes {relay.primitive} {
  %i = relay.constant dense<[4, 0, 2, 2]> : tensor<4xi32>
  %0 = relay.gather %x, %i : (tensor<5x3xf32>, tensor<4xi32>) -> tensor<4x3xf32>
  func.return %0 : tensor<4x3xf32>
}

// -----

// resize_bilinear (integer): per-row and per-column tables (read once per row
// and column), four loads, the sum in i64 and TFLite's rounding division by
// 2^20.

// CHECK-LABEL: func.func @resize_bilinear(
// CHECK-DAG:     tir.allocate_const {{.*}}"resize_y_lower"
// CHECK-DAG:     tir.allocate_const {{.*}}"resize_y_upper"
// CHECK-DAG:     tir.allocate_const {{.*}}"resize_y_weight"
// CHECK-DAG:     tir.allocate_const {{.*}}"resize_x_lower"
// CHECK:         scf.for %[[Y:.*]] = %{{.*}} to %{{.*}} step
// CHECK-NEXT:      memref.load %{{.*}}[%[[Y]]] : memref<5xi32>
// CHECK:           scf.for %[[X:.*]] = %{{.*}} to %{{.*}} step
// CHECK-NEXT:        memref.load %{{.*}}[%[[X]]] : memref<7xi32>
// CHECK:             scf.for
// CHECK-COUNT-4:       memref.load %{{.*}} : memref<1x3x4x2xi8>
// CHECK:         arith.extsi %{{.*}} : i8 to i64
// CHECK:         arith.select
// CHECK:         arith.divsi %{{.*}}, %{{.*}} : i64
// CHECK:         arith.trunci %{{.*}} : i64 to i8

func.func @resize_bilinear(%x: tensor<1x3x4x2xi8>) -> tensor<1x5x7x2xi8> attributes {relay.primitive} {
  %0 = relay.resize_bilinear %x {half_pixel_centers = true} : tensor<1x3x4x2xi8> -> tensor<1x5x7x2xi8>
  func.return %0 : tensor<1x5x7x2xi8>
}
