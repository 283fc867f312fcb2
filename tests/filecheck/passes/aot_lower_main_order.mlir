// RUN: usmp-opt %s -p aot-lower-main --split-input-file | FileCheck %s
// RUN: usmp-opt %s -p 'aot-lower-main{order=source}' --split-input-file | FileCheck %s --check-prefix=SOURCE
// RUN: usmp-opt %s -p 'aot-lower-main{order_io=true}' --split-input-file | FileCheck %s --check-prefix=IO

// Two branches that expand then reduce, written breadth first: both 1024-byte
// tensors would be live together (2,112 B). The memory-aware order runs one
// branch to its end before the other starts (1,152 B), and says so.
// CHECK-LABEL: func.func @tvmgen_default___tvm_main__
// CHECK-SAME:    tir.call_order = {peak = 1152 : i64, source_peak = 2112 : i64, exact}
// CHECK:         tir.call @up(%x, %[[A:.*]]) :
// CHECK-NEXT:    tir.call @down(%[[A]], %[[C:.*]]) :
// CHECK-NEXT:    tir.call @up(%x, %[[B:.*]]) :
// CHECK-NEXT:    tir.call @down(%[[B]], %[[D:.*]]) :
// CHECK-NEXT:    tir.call @add(%[[C]], %[[D]], %output)
// SOURCE-LABEL: func.func @tvmgen_default___tvm_main__
// SOURCE-NOT:     tir.call_order
// SOURCE:         tir.call @up(%x, %[[A:.*]]) :
// SOURCE-NEXT:    tir.call @up(%x, %[[B:.*]]) :
// SOURCE-NEXT:    tir.call @down(%[[A]], %{{.*}}) :
// SOURCE-NEXT:    tir.call @down(%[[B]], %{{.*}}) :
// With the model's input and output counted: the same peaks, as the input
// dies at the second @up, before either peak, and the output is written last.
// IO-LABEL: func.func @tvmgen_default___tvm_main__
// IO-SAME:    tir.call_order = {peak = 1152 : i64, source_peak = 2112 : i64, exact}
func.func private @up(memref<64xi8>, memref<1024xi8>) attributes {tir.prim_func}
func.func private @down(memref<1024xi8>, memref<64xi8>) attributes {tir.prim_func}
func.func private @add(memref<64xi8>, memref<64xi8>, memref<64xi8>) attributes {tir.prim_func}
func.func @main(%x: tensor<64xi8>) -> tensor<64xi8> {
  %a = relay.call @up(%x) : (tensor<64xi8>) -> tensor<1024xi8>
  %b = relay.call @up(%x) : (tensor<64xi8>) -> tensor<1024xi8>
  %c = relay.call @down(%a) : (tensor<1024xi8>) -> tensor<64xi8>
  %d = relay.call @down(%b) : (tensor<1024xi8>) -> tensor<64xi8>
  %e = relay.call @add(%c, %d) : (tensor<64xi8>, tensor<64xi8>) -> tensor<64xi8>
  func.return %e : tensor<64xi8>
}

// -----

// Inception-like: three branches of different widths joined by a
// concatenation. The widest branch runs first, so its tensor is gone when the
// others expand (then, of the orders with that peak, the one closest to the
// source's); the tuple moves with its user.
// CHECK-LABEL: func.func @tvmgen_default___tvm_main__
// CHECK-SAME:    tir.call_order = {peak = 1088 : i64, source_peak = 1856 : i64, exact}
// CHECK:         tir.call @up1024(%x, %[[W:.*]]) :
// CHECK-NEXT:    tir.call @down1024(%[[W]], %{{.*}}) :
// CHECK-NEXT:    tir.call @up256(%x, %{{.*}}) :
// CHECK-NEXT:    tir.call @up512(%x, %{{.*}}) :
// CHECK-NEXT:    tir.call @down256(
// CHECK-NEXT:    tir.call @down512(
// CHECK-NEXT:    tir.call @concat(
func.func private @up256(memref<64xi8>, memref<256xi8>) attributes {tir.prim_func}
func.func private @up512(memref<64xi8>, memref<512xi8>) attributes {tir.prim_func}
func.func private @up1024(memref<64xi8>, memref<1024xi8>) attributes {tir.prim_func}
func.func private @down256(memref<256xi8>, memref<64xi8>) attributes {tir.prim_func}
func.func private @down512(memref<512xi8>, memref<64xi8>) attributes {tir.prim_func}
func.func private @down1024(memref<1024xi8>, memref<64xi8>) attributes {tir.prim_func}
func.func private @concat(memref<64xi8>, memref<64xi8>, memref<64xi8>, memref<192xi8>) attributes {tir.prim_func}
func.func @main(%x: tensor<64xi8>) -> tensor<192xi8> {
  %a = relay.call @up256(%x) : (tensor<64xi8>) -> tensor<256xi8>
  %b = relay.call @up512(%x) : (tensor<64xi8>) -> tensor<512xi8>
  %c = relay.call @up1024(%x) : (tensor<64xi8>) -> tensor<1024xi8>
  %d = relay.call @down256(%a) : (tensor<256xi8>) -> tensor<64xi8>
  %e = relay.call @down512(%b) : (tensor<512xi8>) -> tensor<64xi8>
  %f = relay.call @down1024(%c) : (tensor<1024xi8>) -> tensor<64xi8>
  %t = relay.tuple(%d, %e, %f) : (tensor<64xi8>, tensor<64xi8>, tensor<64xi8>) -> tuple<tensor<64xi8>, tensor<64xi8>, tensor<64xi8>>
  %g = relay.call @concat(%t) : (tuple<tensor<64xi8>, tensor<64xi8>, tensor<64xi8>>) -> tensor<192xi8>
  func.return %g : tensor<192xi8>
}

// -----

// Calls passing one state keep their source order (one of them may update it
// in place): @peek, @step, @down in that order, so both wide tensors are live
// together whatever the order, and the source order is kept.
// CHECK-LABEL: func.func @tvmgen_default___tvm_main__
// CHECK-NOT:     tir.call_order
// CHECK:         tir.call @up(%x, %[[A:.*]]) :
// CHECK-NEXT:    tir.call @peek(%x, %[[S:.*]], %[[B:.*]]) :
// CHECK-NEXT:    tir.call @step(%[[A]], %[[S]], %{{.*}}) :
// CHECK-NEXT:    tir.call @down(%[[B]], %[[S]], %{{.*}}) :
func.func private @up(memref<64xi8>, memref<1024xi8>) attributes {tir.prim_func}
func.func private @peek(memref<64xi8>, memref<64xi8>, memref<1024xi8>) attributes {tir.prim_func}
func.func private @step(memref<1024xi8>, memref<64xi8>, memref<64xi8>) attributes {tir.prim_func}
func.func private @down(memref<1024xi8>, memref<64xi8>, memref<64xi8>) attributes {tir.prim_func}
func.func private @add(memref<64xi8>, memref<64xi8>, memref<64xi8>) attributes {tir.prim_func}
func.func @main(%x: tensor<64xi8>) -> tensor<64xi8> {
  %s = relay.state "s" dense<0> : tensor<64xi8>
  %a = relay.call @up(%x) : (tensor<64xi8>) -> tensor<1024xi8>
  %b = relay.call @peek(%x, %s) : (tensor<64xi8>, tensor<64xi8>) -> tensor<1024xi8>
  %c = relay.call @step(%a, %s) : (tensor<1024xi8>, tensor<64xi8>) -> tensor<64xi8>
  %d = relay.call @down(%b, %s) : (tensor<1024xi8>, tensor<64xi8>) -> tensor<64xi8>
  %e = relay.call @add(%c, %d) : (tensor<64xi8>, tensor<64xi8>) -> tensor<64xi8>
  func.return %e : tensor<64xi8>
}
