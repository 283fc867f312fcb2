// A three-operator model as aot-lower-main sees it (TVM AOTLowerMain's input):
// a relay main calling tir prim funcs whose loops are scf/arith/memref.
//
//   y = softmax(relu(x + bias))        x: 1x8 f32, bias: a constant
//
// Try:  usmp-opt examples/chain.mlir -p aot-lower-main
//       usmp-opt examples/chain.mlir -p aot-lower-main,usmp
//
// The softmax keeps its exponentials in a scratch buffer (tir.allocate inside
// the operator), so the planner sees an intra-operator buffer that lives only
// during its call next to main's storage ids.

// out[0, i] = a[0, i] + b[i]
func.func @tvmgen_default_fused_add(%a: memref<1x8xf32>, %b: memref<8xf32>, %out: memref<1x8xf32>) attributes {tir.prim_func} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  scf.for %i = %c0 to %c8 step %c1 {
    %x = memref.load %a[%c0, %i] : memref<1x8xf32>
    %y = memref.load %b[%i] : memref<8xf32>
    %s = arith.addf %x, %y : f32
    memref.store %s, %out[%c0, %i] : memref<1x8xf32>
  }
  func.return
}

// out = max(a, 0)
func.func @tvmgen_default_fused_nn_relu(%a: memref<1x8xf32>, %out: memref<1x8xf32>) attributes {tir.prim_func} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  scf.for %i = %c0 to %c8 step %c1 {
    %x = memref.load %a[%c0, %i] : memref<1x8xf32>
    %r = arith.maximumf %x, %zero : f32
    memref.store %r, %out[%c0, %i] : memref<1x8xf32>
  }
  func.return
}

// out = exp(a - max(a)) / sum(exp(a - max(a))), along the last axis
func.func @tvmgen_default_fused_nn_softmax(%a: memref<1x8xf32>, %out: memref<1x8xf32>) attributes {tir.prim_func} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %exp = tir.allocate {name_hint = "T_softmax_exp"} : memref<8xf32>
  %max = scf.for %i = %c0 to %c8 step %c1 iter_args(%m = %ninf) -> (f32) {
    %x = memref.load %a[%c0, %i] : memref<1x8xf32>
    %n = arith.maximumf %m, %x : f32
    scf.yield %n : f32
  }
  %sum = scf.for %i = %c0 to %c8 step %c1 iter_args(%acc = %zero) -> (f32) {
    %x = memref.load %a[%c0, %i] : memref<1x8xf32>
    %d = arith.subf %x, %max : f32
    %e = math.exp %d : f32
    memref.store %e, %exp[%i] : memref<8xf32>
    %s = arith.addf %acc, %e : f32
    scf.yield %s : f32
  }
  scf.for %i = %c0 to %c8 step %c1 {
    %e = memref.load %exp[%i] : memref<8xf32>
    %q = arith.divf %e, %sum : f32
    memref.store %q, %out[%c0, %i] : memref<1x8xf32>
  }
  func.return
}

func.func @main(%x: tensor<1x8xf32>) -> tensor<1x8xf32> {
  %bias = relay.constant dense<[0.5, -1.0, 0.25, 2.0, -0.5, 1.0, 0.0, -2.0]> : tensor<8xf32>
  %0 = relay.call @tvmgen_default_fused_add(%x, %bias) : (tensor<1x8xf32>, tensor<8xf32>) -> tensor<1x8xf32>
  %1 = relay.call @tvmgen_default_fused_nn_relu(%0) : (tensor<1x8xf32>) -> tensor<1x8xf32>
  %2 = relay.call @tvmgen_default_fused_nn_softmax(%1) : (tensor<1x8xf32>) -> tensor<1x8xf32>
  func.return %2 : tensor<1x8xf32>
}
