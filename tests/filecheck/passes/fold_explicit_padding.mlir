// RUN: usmp-opt %s -p fold-explicit-padding --split-input-file | FileCheck %s

// A pad of the spatial axes with the conv's input zero point becomes the
// conv's padding (top, left, bottom, right), added to what it had.
// CHECK-LABEL: func.func @main
// CHECK-NOT:     relay.pad
// CHECK:         relay.conv2d %x, %{{.*}} {input_zero_point = -5 : i64, padding = array<i64: 2, 3, 0, 1>}
func.func @main(%x: tensor<1x8x8x4xi8>) -> tensor<1x8x10x4xi32> {
  %w = relay.constant dense<1> : tensor<3x3x4x4xi8>
  %p = relay.pad %x {pad_width = array<i64: 0, 0, 1, 0, 2, 1, 0, 0>, pad_value = -5.0 : f64} : tensor<1x8x8x4xi8> -> tensor<1x9x11x4xi8>
  %c = relay.conv2d %p, %w {input_zero_point = -5 : i64, padding = array<i64: 1, 1, 0, 0>} : (tensor<1x9x11x4xi8>, tensor<3x3x4x4xi8>) -> tensor<1x8x10x4xi32>
  func.return %c : tensor<1x8x10x4xi32>
}

// -----

// Float, NCHW, two convolutions reading the pad: both take it.
// CHECK-LABEL: func.func @main
// CHECK-NOT:     relay.pad
// CHECK:         relay.conv2d %x, %{{.*}} {{{.*}}padding = array<i64: 1, 1, 1, 1>
// CHECK:         relay.conv2d %x, %{{.*}} {{{.*}}padding = array<i64: 1, 1, 1, 1>
func.func @main(%x: tensor<1x2x4x4xf32>) -> (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) {
  %w = relay.constant dense<1.0> : tensor<2x2x3x3xf32>
  %p = relay.pad %x {pad_width = array<i64: 0, 0, 0, 0, 1, 1, 1, 1>} : tensor<1x2x4x4xf32> -> tensor<1x2x6x6xf32>
  %a = relay.conv2d %p, %w {data_layout = #relay<data_layout NCHW>, kernel_layout = #relay<kernel_layout OIHW>} : (tensor<1x2x6x6xf32>, tensor<2x2x3x3xf32>) -> tensor<1x2x4x4xf32>
  %b = relay.conv2d %p, %w {data_layout = #relay<data_layout NCHW>, kernel_layout = #relay<kernel_layout OIHW>} : (tensor<1x2x6x6xf32>, tensor<2x2x3x3xf32>) -> tensor<1x2x4x4xf32>
  func.return %a, %b : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>
}

// -----

// Left alone: another pad value than the zero point, a padded channel axis,
// a pad that something else (here the result) reads too.
// CHECK-LABEL: func.func @main
// CHECK-COUNT-3: relay.pad
func.func @main(%x: tensor<1x4x4x4xi8>) -> (tensor<1x4x4x4xi32>, tensor<1x4x4x4xi32>, tensor<1x6x6x4xi8>) {
  %w = relay.constant dense<1> : tensor<3x3x4x4xi8>
  %w5 = relay.constant dense<1> : tensor<3x3x5x4xi8>
  %p0 = relay.pad %x {pad_width = array<i64: 0, 0, 1, 1, 1, 1, 0, 0>, pad_value = 3.0 : f64} : tensor<1x4x4x4xi8> -> tensor<1x6x6x4xi8>
  %a = relay.conv2d %p0, %w {input_zero_point = -5 : i64} : (tensor<1x6x6x4xi8>, tensor<3x3x4x4xi8>) -> tensor<1x4x4x4xi32>
  %p1 = relay.pad %x {pad_width = array<i64: 0, 0, 1, 1, 1, 1, 0, 1>, pad_value = -5.0 : f64} : tensor<1x4x4x4xi8> -> tensor<1x6x6x5xi8>
  %b = relay.conv2d %p1, %w5 {input_zero_point = -5 : i64} : (tensor<1x6x6x5xi8>, tensor<3x3x5x4xi8>) -> tensor<1x4x4x4xi32>
  %p2 = relay.pad %x {pad_width = array<i64: 0, 0, 1, 1, 1, 1, 0, 0>, pad_value = -5.0 : f64} : tensor<1x4x4x4xi8> -> tensor<1x6x6x4xi8>
  %c = relay.conv2d %p2, %w {input_zero_point = -5 : i64} : (tensor<1x6x6x4xi8>, tensor<3x3x4x4xi8>) -> tensor<1x4x4x4xi32>
  func.return %a, %b, %p2 : tensor<1x4x4x4xi32>, tensor<1x4x4x4xi32>, tensor<1x6x6x4xi8>
}
