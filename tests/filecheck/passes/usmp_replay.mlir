// RUN: usmp-opt %s -p usmp-replay --split-input-file | filecheck %s

// usmp-replay changes nothing; these plans are safe.

// An elementwise operator's output on its dying input (in place), an output
// in the workspace read by a later operator and kept, the input reused.
// CHECK-LABEL: func.func @in_place_main(
// CHECK:         tir.call @copy(%x, %a)
builtin.module attributes {tir.pools = [#tir.pool_info<"ws", workspace, size = 8, access = {c = rw}>]} {
  func.func @copy(%in: memref<4xi8>, %out: memref<4xi8>) attributes {tir.prim_func} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    scf.for %i = %c0 to %c4 step %c1 {
      %v = memref.load %in[%i] : memref<4xi8>
      memref.store %v, %out[%i] : memref<4xi8>
    }
    func.return
  }
  func.func @in_place_main(%ws: memref<8xi8>) attributes {tir.prim_func, tir.main, tir.input_names = ["x"], tir.output_names = ["y0", "y1"], tir.pool_args = ["ws"], tir.input_allocations = [#tir.pool_allocation<"ws", 0>], tir.output_allocations = [#tir.pool_allocation<"ws", 0>, #tir.pool_allocation<"ws", 4>], tir.input_types = [memref<4xi8>], tir.output_types = [memref<4xi8>, memref<4xi8>]} {
    %c0 = arith.constant 0 : index
    %x = memref.view %ws[%c0][] : memref<8xi8> to memref<4xi8>
    %y0 = memref.view %ws[%c0][] : memref<8xi8> to memref<4xi8>
    %c4 = arith.constant 4 : index
    %y1 = memref.view %ws[%c4][] : memref<8xi8> to memref<4xi8>
    %a = memref.view %ws[%c0][] : memref<8xi8> to memref<4xi8>
    tir.call @copy(%x, %a) : (memref<4xi8>, memref<4xi8>) -> ()
    tir.call @copy(%a, %y0) : (memref<4xi8>, memref<4xi8>) -> ()
    tir.call @copy(%y0, %y1) : (memref<4xi8>, memref<4xi8>) -> ()
    func.return
  }
}

// -----

// An operator calling operators, each with scratch in the workspace, a
// reshape alias, a copy to the output; a state carried across runs.
// CHECK-LABEL: func.func @nested_main(
builtin.module attributes {tir.pools = [#tir.pool_info<"ws", workspace, size = 8, access = {c = rw}>, #tir.pool_info<"st", persistent, size = 4, access = {c = rw}>]} {
  func.func @leaf(%in: memref<4xi8>, %out: memref<4xi8>, %ws: memref<8xi8>) attributes {tir.prim_func, tir.pool_args = ["ws"]} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %tmp = memref.view %ws[%c4][] : memref<8xi8> to memref<4xi8>
    scf.for %i = %c0 to %c4 step %c1 {
      %v = memref.load %in[%i] : memref<4xi8>
      memref.store %v, %tmp[%i] : memref<4xi8>
    }
    scf.for %i = %c0 to %c4 step %c1 {
      %v = memref.load %tmp[%i] : memref<4xi8>
      memref.store %v, %out[%i] : memref<4xi8>
    }
    func.return
  }
  func.func @wrapper(%a: memref<2x2xi8>, %b: memref<4xi8>, %ws: memref<8xi8>) attributes {tir.prim_func, tir.pool_args = ["ws"]} {
    %c0 = arith.constant 0 : index
    %flat = memref.reinterpret_cast %a to offset: [0], sizes: [4], strides: [1] : memref<2x2xi8> to memref<4xi8>
    %mid = memref.view %ws[%c0][] : memref<8xi8> to memref<4xi8>
    tir.call @leaf(%flat, %mid, %ws) : (memref<4xi8>, memref<4xi8>, memref<8xi8>) -> ()
    tir.call @leaf(%mid, %b, %ws) : (memref<4xi8>, memref<4xi8>, memref<8xi8>) -> ()
    func.return
  }
  func.func @accumulate(%x: memref<4xi8>, %s: memref<4xi8>) attributes {tir.prim_func} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    scf.for %i = %c0 to %c4 step %c1 {
      %a = memref.load %x[%i] : memref<4xi8>
      %b = memref.load %s[%i] : memref<4xi8>
      %c = arith.addi %a, %b : i8
      memref.store %c, %s[%i] : memref<4xi8>
    }
    func.return
  }
  func.func @nested_main(%x: memref<4xi8>, %y: memref<4xi8>, %ws: memref<8xi8>, %st: memref<4xi8>) attributes {tir.prim_func, tir.main, tir.input_names = ["x"], tir.output_names = ["y"], tir.pool_args = ["ws", "st"], tir.states = [{name = "state_0", pool = "st", offset = 0 : index, value = dense<0> : tensor<4xi8>}]} {
    %c0 = arith.constant 0 : index
    %s = memref.view %st[%c0][] : memref<4xi8> to memref<4xi8>
    %c4 = arith.constant 4 : index
    %sid = memref.view %ws[%c4][] : memref<8xi8> to memref<4xi8>
    tir.call @accumulate(%x, %s) : (memref<4xi8>, memref<4xi8>) -> ()
    %square = memref.reinterpret_cast %s to offset: [0], sizes: [2, 2], strides: [2, 1] : memref<4xi8> to memref<2x2xi8>
    tir.call @wrapper(%square, %sid, %ws) : (memref<2x2xi8>, memref<4xi8>, memref<8xi8>) -> ()
    "memref.copy"(%sid, %y) : (memref<4xi8>, memref<4xi8>) -> ()
    func.return
  }
}
