// RUN: usmp-opt %s -p 'fuse-ops{max_depth=2 module_name=kws}' --split-input-file | FileCheck %s

// max_depth bounds the operators per group: conv2d + add reach it, relu
// starts a new group. module_name sets the tvmgen_<name>_ prefix.

// CHECK-LABEL: func.func @tvmgen_kws_fused_nn_conv2d_add(
// CHECK:       func.func @tvmgen_kws_fused_nn_relu(
// CHECK:       func.func @depth(
// CHECK-NEXT:    %[[W:.*]] = relay.constant dense_resource<w>
// CHECK-NEXT:    %[[B:.*]] = relay.constant dense<[1.000000e+00, 2.000000e+00]>
// CHECK-NEXT:    %[[C:.*]] = relay.call @tvmgen_kws_fused_nn_conv2d_add(%{{.*}}, %[[W]], %[[B]])
// CHECK-NEXT:    relay.call @tvmgen_kws_fused_nn_relu(%[[C]])
func.func @depth(%x: tensor<1x4x4x2xf32>) -> tensor<1x4x4x2xf32> {
  %w = relay.constant dense_resource<w> : tensor<1x1x2x2xf32>
  %b = relay.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %0 = relay.conv2d %x, %w : (tensor<1x4x4x2xf32>, tensor<1x1x2x2xf32>) -> tensor<1x4x4x2xf32>
  %1 = relay.add %0, %b : (tensor<1x4x4x2xf32>, tensor<2xf32>) -> tensor<1x4x4x2xf32>
  %2 = relay.relu %1 : tensor<1x4x4x2xf32> -> tensor<1x4x4x2xf32>
  func.return %2 : tensor<1x4x4x2xf32>
}
