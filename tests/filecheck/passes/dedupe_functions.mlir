// RUN: usmp-opt %s -p dedupe-functions --split-input-file | FileCheck %s
// RUN: usmp-opt %s -p 'dedupe-functions{patched_only=true}' --split-input-file | FileCheck %s --check-prefix=PATCHED

// Two primitive functions equal but for their name (and SSA names): the
// second is erased, its call calls the first. A function that differs (a
// constant) stays.
// CHECK-LABEL: func.func @f1
// CHECK-NOT:   func.func @f2
// CHECK:       func.func @f3
// CHECK-LABEL: func.func @main
// CHECK:       relay.call @f1(%x)
// CHECK-NEXT:  relay.call @f1(
// CHECK-NEXT:  relay.call @f3(

// Not patched: with patched_only nothing is merged.
// PATCHED-LABEL: func.func @f1
// PATCHED:       func.func @f2
func.func @f1(%a: tensor<4xf32>) -> tensor<4xf32> attributes {relay.primitive} {
  %r = relay.relu %a : tensor<4xf32> -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}
func.func @f2(%other: tensor<4xf32>) -> tensor<4xf32> attributes {relay.primitive} {
  %named = relay.relu %other : tensor<4xf32> -> tensor<4xf32>
  func.return %named : tensor<4xf32>
}
func.func @f3(%a: tensor<4xf32>) -> tensor<4xf32> attributes {relay.primitive} {
  %c = relay.constant dense<2.0> : tensor<4xf32>
  %r = relay.multiply %a, %c : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = relay.call @f1(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = relay.call @f2(%0) : (tensor<4xf32>) -> tensor<4xf32>
  %2 = relay.call @f3(%1) : (tensor<4xf32>) -> tensor<4xf32>
  func.return %2 : tensor<4xf32>
}

// -----

// A patched module (patch-stage's decision applied): merged with patched_only.
// PATCHED-LABEL: func.func @g1
// PATCHED-NOT:   func.func @g2
// PATCHED:       relay.call @g1(%x)
// PATCHED-NEXT:  relay.call @g1(
func.func @g1(%a: tensor<4xf32>) -> tensor<4xf32> attributes {relay.primitive} {
  %r = relay.relu %a : tensor<4xf32> -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}
func.func @g2(%a: tensor<4xf32>) -> tensor<4xf32> attributes {relay.primitive} {
  %r = relay.relu %a : tensor<4xf32> -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> attributes {relay.patch = {applied = true}} {
  %0 = relay.call @g1(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = relay.call @g2(%0) : (tensor<4xf32>) -> tensor<4xf32>
  func.return %1 : tensor<4xf32>
}
