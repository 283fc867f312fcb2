// RUN: usmp-opt %s -p 'usmp-kernel-direction{use_workspace_io=true}' | FileCheck %s
// RUN: usmp-opt %s -p 'usmp-plan-memory{use_workspace_io=true}' | FileCheck %s --check-prefix=PLAN
// RUN: usmp-opt %s -p 'usmp-plan-memory{use_workspace_io=true overlap=false}' | FileCheck %s --check-prefix=OFF

// A chain of 3-tap blurs: each reads in[i+1] after writing out[i], so its
// output must start at least a byte below its input (16 with the pool's
// alignment), and four of them in a row would drift 64 bytes down. Run
// backwards (every loop without iter_args mirrored: i -> 0 + 63 - i), a blur
// puts its output above its input instead; the pass reverses every other
// one, and the plan stays within 64 + 16 bytes (128 without overlaps).
// CHECK-LABEL: func.func @blur0
// CHECK-NOT: usmp.reversed
// CHECK-LABEL: func.func @blur1
// CHECK-SAME: usmp.reversed
// CHECK: scf.for %[[I:.*]] = %[[LB:.*]] to %[[UB:.*]] step %[[STEP:[a-z0-9_]+]] {
// CHECK: arith.subi %[[UB]], %[[LB]] : index
// CHECK: arith.divsi
// CHECK: %[[LAST:.*]] = arith.addi %[[LB]], %{{.*}} : index
// CHECK-NEXT: %[[MIRROR:.*]] = arith.addi %[[LB]], %[[LAST]] : index
// CHECK-NEXT: %[[J:.*]] = arith.subi %[[MIRROR]], %[[I]] : index
// CHECK: memref.store %{{.*}}, %{{.*}}[%[[J]]] : memref<64xi8>
// CHECK-LABEL: func.func @blur2
// CHECK-NOT: usmp.reversed
// CHECK-LABEL: func.func @blur3
// CHECK-SAME: usmp.reversed
// PLAN: tir.pools = [#tir.pool_info<"global_workspace", workspace, size = 80,
// OFF: tir.pools = [#tir.pool_info<"global_workspace", workspace, size = 128,
func.func @blur0(%in: memref<64xi8>, %out: memref<64xi8>) attributes {tir.prim_func} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c63 = arith.constant 63 : index
  %c64 = arith.constant 64 : index
  scf.for %i = %c0 to %c64 step %c1 {
    %l = arith.subi %i, %c1 : index
    %lc = arith.maxsi %l, %c0 : index
    %r = arith.addi %i, %c1 : index
    %rc = arith.minsi %r, %c63 : index
    %a = memref.load %in[%lc] : memref<64xi8>
    %b = memref.load %in[%i] : memref<64xi8>
    %c = memref.load %in[%rc] : memref<64xi8>
    %ab = arith.addi %a, %b : i8
    %abc = arith.addi %ab, %c : i8
    memref.store %abc, %out[%i] : memref<64xi8>
  }
  func.return
}
func.func @blur1(%in: memref<64xi8>, %out: memref<64xi8>) attributes {tir.prim_func} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c63 = arith.constant 63 : index
  %c64 = arith.constant 64 : index
  scf.for %i = %c0 to %c64 step %c1 {
    %l = arith.subi %i, %c1 : index
    %lc = arith.maxsi %l, %c0 : index
    %r = arith.addi %i, %c1 : index
    %rc = arith.minsi %r, %c63 : index
    %a = memref.load %in[%lc] : memref<64xi8>
    %b = memref.load %in[%i] : memref<64xi8>
    %c = memref.load %in[%rc] : memref<64xi8>
    %ab = arith.addi %a, %b : i8
    %abc = arith.addi %ab, %c : i8
    memref.store %abc, %out[%i] : memref<64xi8>
  }
  func.return
}
func.func @blur2(%in: memref<64xi8>, %out: memref<64xi8>) attributes {tir.prim_func} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c63 = arith.constant 63 : index
  %c64 = arith.constant 64 : index
  scf.for %i = %c0 to %c64 step %c1 {
    %l = arith.subi %i, %c1 : index
    %lc = arith.maxsi %l, %c0 : index
    %r = arith.addi %i, %c1 : index
    %rc = arith.minsi %r, %c63 : index
    %a = memref.load %in[%lc] : memref<64xi8>
    %b = memref.load %in[%i] : memref<64xi8>
    %c = memref.load %in[%rc] : memref<64xi8>
    %ab = arith.addi %a, %b : i8
    %abc = arith.addi %ab, %c : i8
    memref.store %abc, %out[%i] : memref<64xi8>
  }
  func.return
}
func.func @blur3(%in: memref<64xi8>, %out: memref<64xi8>) attributes {tir.prim_func} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c63 = arith.constant 63 : index
  %c64 = arith.constant 64 : index
  scf.for %i = %c0 to %c64 step %c1 {
    %l = arith.subi %i, %c1 : index
    %lc = arith.maxsi %l, %c0 : index
    %r = arith.addi %i, %c1 : index
    %rc = arith.minsi %r, %c63 : index
    %a = memref.load %in[%lc] : memref<64xi8>
    %b = memref.load %in[%i] : memref<64xi8>
    %c = memref.load %in[%rc] : memref<64xi8>
    %ab = arith.addi %a, %b : i8
    %abc = arith.addi %ab, %c : i8
    memref.store %abc, %out[%i] : memref<64xi8>
  }
  func.return
}
func.func @main(%x: memref<64xi8>, %y: memref<64xi8>) attributes {tir.prim_func, tir.main, tir.input_names = ["x"], tir.output_names = ["y"]} {
  %0 = tir.allocate {name_hint = "sid_0"} : memref<64xi8>
  %1 = tir.allocate {name_hint = "sid_1"} : memref<64xi8>
  %2 = tir.allocate {name_hint = "sid_2"} : memref<64xi8>
  tir.call @blur0(%x, %0) : (memref<64xi8>, memref<64xi8>) -> ()
  tir.call @blur1(%0, %1) : (memref<64xi8>, memref<64xi8>) -> ()
  tir.call @blur2(%1, %2) : (memref<64xi8>, memref<64xi8>) -> ()
  tir.call @blur3(%2, %y) : (memref<64xi8>, memref<64xi8>) -> ()
  func.return
}
