// RUN: usmp-opt %s -p aot-lower-main | FileCheck %s --check-prefix=AOT
// RUN: usmp-opt %s -p aot-lower-main,usmp | FileCheck %s --check-prefix=USMP

// A resource variable (TFLite's READ_VARIABLE / ASSIGN_VARIABLE): a ring
// of the last two frames. The read is a copy of the state, the assignment a
// copy into it, after the read, both in main with no kernel.

// AOT-LABEL: func.func @tvmgen_default___tvm_main__(%x: memref<1x4xi8>, %output: memref<1x8xi8>)
// AOT:         %[[S:.*]] = tir.allocate_state {name_hint = "state_0", value = dense<-3> : tensor<1x8xi8>} : memref<1x8xi8>
// AOT:         %[[R:.*]] = tir.allocate {name_hint = "sid_0"} : memref<1x8xi8>
// AOT:         "memref.copy"(%[[S]], %[[R]])
// AOT:         tir.call @shift(%[[R]], %x, %output)
// AOT-NEXT:    "memref.copy"(%output, %[[S]])

// USMP:       #tir.pool_info<"global_state", persistent, size = 8
// USMP-LABEL: func.func @tvmgen_default___tvm_main__
// USMP-SAME:    tir.states = [{name = "state_0", pool = "global_state", offset = 0 : index, value = dense<-3> : tensor<1x8xi8>}]

func.func @shift(%r: memref<1x8xi8>, %x: memref<1x4xi8>, %y: memref<1x8xi8>) attributes {tir.prim_func} {
  func.return
}

func.func @main(%x: tensor<1x4xi8>) -> tensor<1x8xi8> {
  %s = relay.state "ring" dense<-3> : tensor<1x8xi8>
  %r = relay.read_state %s : tensor<1x8xi8>
  %y = relay.call @shift(%r, %x) : (tensor<1x8xi8>, tensor<1x4xi8>) -> tensor<1x8xi8>
  relay.assign_state %s, %y : tensor<1x8xi8>
  func.return %y : tensor<1x8xi8>
}
