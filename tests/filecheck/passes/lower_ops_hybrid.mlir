// RUN: usmp-opt %s -p lower-ops --split-input-file | FileCheck %s

// Asymmetric row quantisation: per row one min/max loop, the scale and zero
// point in f64 (as LiteRT), then one multiply, round, add (the zero point
// after the rounding, as LiteRT's optimised kernel) and clamp per element.
// No allocation.

// CHECK-LABEL: func.func @dynamic_quantize(
// CHECK-NOT:     memref.alloc
// CHECK-NOT:     tir.allocate
// CHECK:         scf.for %[[R:.*]] = {{.*}} {
// CHECK:           %{{.*}}, %{{.*}} = scf.for {{.*}} iter_args({{.*}}) -> (f32, f32) {
// CHECK:             arith.minimumf
// CHECK:             arith.maximumf
// CHECK:           arith.divf %{{.*}}, %{{.*}} : f64
// CHECK:           math.round %{{.*}} : f64
// CHECK:           %[[INV:.*]] = arith.truncf %{{.*}} : f64 to f32
// CHECK:           %[[ZP:.*]] = arith.sitofp %{{.*}} : i32 to f32
// CHECK:           scf.for
// CHECK-NEXT:        %[[X:.*]] = memref.load
// CHECK-NEXT:        %[[Y:.*]] = arith.mulf %[[X]], %[[INV]] : f32
// CHECK-NEXT:        %[[R:.*]] = math.round %[[Y]] : f32
// CHECK-NEXT:        arith.addf %[[ZP]], %[[R]] : f32

func.func @dynamic_quantize(%x: tensor<2x8xf32>) -> tensor<2x8xi8> attributes {relay.primitive} {
  %0 = relay.dynamic_quantize %x {asymmetric = true} : tensor<2x8xf32> -> tensor<2x8xi8>
  func.return %0 : tensor<2x8xi8>
}

// -----

// The symmetric scale of each row: range / 127 (1 for an all-zero row).

// CHECK-LABEL: func.func @dynamic_quantize_scale(
// CHECK:         math.absf
// CHECK:         arith.cmpf oeq
// CHECK:         %[[R:.*]] = arith.select
// CHECK:         %[[S:.*]] = arith.divf %[[R]], %{{.*}} : f32
// CHECK:         memref.store %[[S]]

func.func @dynamic_quantize_scale(%x: tensor<2x8xf32>) -> tensor<2x1xf32> attributes {relay.primitive} {
  %0 = relay.dynamic_quantize_scale %x : tensor<2x8xf32> -> tensor<2x1xf32>
  func.return %0 : tensor<2x1xf32>
}
