// RUN: usmp-opt %s -p 'usmp-buffer-info{overlap=true use_workspace_io=true}' | FileCheck %s
// RUN: usmp-opt %s -p 'usmp{use_workspace_io=true}' | FileCheck %s --check-prefix=PLAN

// A stage that consumes its input in place (issue 31): the input x (8 rows
// of 16 bytes) is read by two stripes, rows 0..4 (step 0) and rows 3..7
// (step 1: bytes 48..127); a third call joins the stripes' first rows. From
// step 1 on no step reads x's bytes 0..47, so the second stripe's output
// (80 bytes, first written at step 1) may end at x + 48: at most 32 bytes
// below x. The first stripe's output has no such bytes (step 0 reads rows
// 0..4); the output y is written after x dies (no conflict).
// CHECK-LABEL: func.func @main
// CHECK: usmp.buffer = "sid_0"
// CHECK-NOT: usmp.overlaps
// CHECK-SAME: {{$}}
// CHECK: usmp.buffer = "sid_1", {{.*}}, usmp.overlaps = {x = -32 : i64}
// The plan (replayed byte by byte by usmp): sid_1 32 bytes below x, over its
// first two rows, sid_0 beside x: 240 bytes instead of 288.
// PLAN: tir.pools = [#tir.pool_info<"global_workspace", workspace, size = 240,
func.func @rows(%in: memref<5x16xi8>, %out: memref<5x16xi8>) attributes {tir.prim_func} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c5 = arith.constant 5 : index
  %z = arith.constant 0 : i8
  scf.for %i = %c0 to %c5 step %c1 {
    scf.for %j = %c0 to %c16 step %c1 {
      %v = memref.load %in[%i, %j] : memref<5x16xi8>
      %r = arith.maxsi %v, %z : i8
      memref.store %r, %out[%i, %j] : memref<5x16xi8>
    }
  }
  func.return
}
func.func @join(%a: memref<5x16xi8>, %b: memref<5x16xi8>, %out: memref<2x16xi8>) attributes {tir.prim_func} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  scf.for %j = %c0 to %c16 step %c1 {
    %v = memref.load %a[%c0, %j] : memref<5x16xi8>
    memref.store %v, %out[%c0, %j] : memref<2x16xi8>
    %w = memref.load %b[%c0, %j] : memref<5x16xi8>
    memref.store %w, %out[%c1, %j] : memref<2x16xi8>
  }
  func.return
}
func.func @main(%x: memref<8x16xi8>, %y: memref<2x16xi8>) attributes {tir.prim_func, tir.main, tir.input_names = ["x"], tir.output_names = ["y"]} {
  %0 = tir.allocate {name_hint = "sid_0"} : memref<5x16xi8>
  %1 = tir.allocate {name_hint = "sid_1"} : memref<5x16xi8>
  %top = memref.reinterpret_cast %x to offset: [0], sizes: [5, 16], strides: [16, 1] : memref<8x16xi8> to memref<5x16xi8>
  %bottom = memref.reinterpret_cast %x to offset: [48], sizes: [5, 16], strides: [16, 1] : memref<8x16xi8> to memref<5x16xi8, strided<[16, 1], offset: 48>>
  tir.call @rows(%top, %0) : (memref<5x16xi8>, memref<5x16xi8>) -> ()
  tir.call @rows(%bottom, %1) : (memref<5x16xi8, strided<[16, 1], offset: 48>>, memref<5x16xi8>) -> ()
  tir.call @join(%0, %1, %y) : (memref<5x16xi8>, memref<5x16xi8>, memref<2x16xi8>) -> ()
  func.return
}
