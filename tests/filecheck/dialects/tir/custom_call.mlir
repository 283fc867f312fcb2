// RUN: usmp-opt %s --split-input-file | usmp-opt --split-input-file | FileCheck %s
// RUN: usmp-opt %s --split-input-file --print-op-generic | usmp-opt --split-input-file | FileCheck %s

// CHECK-LABEL: func.func @custom
// CHECK: tir.custom_call "clip"(%{{.*}}, %{{.*}}, %{{.*}}) {code = "Clip", header = "k/clip.h", inputs = 2 : i64, options = "035a", quantization = [{}, {}, {axis = -1 : i64, scale = array<f32: 5.000000e-01>, zero_point = array<i64: 3>}]} : memref<4xi8>, memref<4xi8>, memref<4xi8>
func.func @custom(%a: memref<4xi8>, %w: memref<4xi8>, %y: memref<4xi8>) attributes {tir.prim_func, tir.returns_status} {
  tir.custom_call "clip"(%a, %w, %y) {code = "Clip", header = "k/clip.h", inputs = 2 : i64, options = "035a", quantization = [{}, {}, {axis = -1 : i64, scale = array<f32: 0.5>, zero_point = array<i64: 3>}]} : memref<4xi8>, memref<4xi8>, memref<4xi8>
  func.return
}
