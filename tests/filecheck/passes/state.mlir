// RUN: usmp-opt %s -p aot-lower-main | FileCheck %s --check-prefix=AOT
// RUN: usmp-opt %s -p aot-lower-main,usmp | FileCheck %s --check-prefix=USMP
// RUN: usmp-opt %s -p 'aot-lower-main,usmp{pools="sram:workspace,nvm:persistent:align=8"}' | FileCheck %s --check-prefix=POOLS
// RUN: usmp-opt %s -p aot-lower-main,usmp,convert-to-emitc -t c | FileCheck %s --check-prefix=C

// State across invocations: a running sum s (initial value 1..4) and a
// counter c (zero); y = 2 * (s + x) through a workspace intermediate.

// AOT-LABEL: func.func @tvmgen_default___tvm_main__(%x: memref<1x4xf32>, %output: memref<1x4xf32>)
// AOT-NEXT:    %[[S:.*]] = tir.allocate_state {name_hint = "state_0", value = dense<{{\[\[}}1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]]> : tensor<1x4xf32>} : memref<1x4xf32>
// AOT-NEXT:    %[[SID:.*]] = tir.allocate {name_hint = "sid_0"} : memref<1x4xf32>
// AOT-NEXT:    %[[CNT:.*]] = tir.allocate_state {name_hint = "state_1", value = dense<0> : tensor<1xi32>} : memref<1xi32>
// AOT-NEXT:    tir.call @acc(%x, %[[S]], %[[SID]])
// AOT-NEXT:    tir.call @twice(%[[SID]], %[[CNT]], %output)

// The states go to the persistent pool global_state, back to back, never
// with the workspace buffer; the entry records them for tvmgen_default_init.
// USMP:       tir.pools = [#tir.pool_info<"global_workspace", workspace, size = 16, alignment = 16, access = {c = rw}>, #tir.pool_info<"global_const", constant, size = 0, alignment = 16, access = {c = ro}>, #tir.pool_info<"global_state", persistent, size = 20, alignment = 16, access = {c = rw}>]
// USMP-LABEL: func.func @tvmgen_default___tvm_main__(%x: memref<1x4xf32>, %output: memref<1x4xf32>, %global_workspace: memref<16xi8>, %global_state: memref<20xi8>)
// USMP-SAME:    tir.pool_args = ["global_workspace", "global_state"]
// USMP-SAME:    tir.states = [{name = "state_0", pool = "global_state", offset = 0 : index, value = dense<{{.*}}> : tensor<1x4xf32>}, {name = "state_1", pool = "global_state", offset = 16 : index, value = dense<0> : tensor<1xi32>}]
// USMP:         memref.view %global_state[%{{.*}}][] : memref<20xi8> to memref<1x4xf32>
// USMP:         memref.view %global_workspace[%{{.*}}][] : memref<16xi8> to memref<1x4xf32>
// USMP:         memref.view %global_state[%{{.*}}][] : memref<20xi8> to memref<1xi32>
// USMP:         tir.call @acc(

// POOLS: #tir.pool_info<"nvm", persistent, size = 20, alignment = 8, access = {c = rw}>

// C:      #define TVMGEN_DEFAULT_GLOBAL_STATE_PERSISTENT_POOL_SIZE 20
// C:      #define TVM_DEFAULT_GLOBAL_STATE_PERSISTENT_BUFFER_SIZE 20
// C:      int32_t tvmgen_default_init(void);
// C:      static uint8_t tvmgen_default_global_state[TVM_DEFAULT_GLOBAL_STATE_PERSISTENT_BUFFER_SIZE];
// C-LABEL: int32_t tvmgen_default_init(void) {
// C:        /* state_0: 16 bytes at 0 */
// C-NEXT:   { static const uint8_t state_0_initial[16] = { 0, 0, 128, 63, 0, 0, 0, 64, 0, 0, 64, 64, 0, 0, 128, 64 };
// C-NEXT:     for (i = 0; i < 16; ++i) tvmgen_default_global_state[0 + i] = state_0_initial[i]; }
// C-NEXT:   /* state_1: 4 bytes at 16 */
// C-NEXT:   for (i = 0; i < 4; ++i) tvmgen_default_global_state[16 + i] = 0;

// s <- s + x (in place); t = s
func.func @acc(%x: memref<1x4xf32>, %s: memref<1x4xf32>, %t: memref<1x4xf32>) attributes {tir.prim_func} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.for %i = %c0 to %c4 step %c1 {
    %a = memref.load %x[%c0, %i] : memref<1x4xf32>
    %b = memref.load %s[%c0, %i] : memref<1x4xf32>
    %v = arith.addf %a, %b : f32
    memref.store %v, %s[%c0, %i] : memref<1x4xf32>
    memref.store %v, %t[%c0, %i] : memref<1x4xf32>
  }
  func.return
}

// y = 2 * t; c <- c + 1 (in place)
func.func @twice(%t: memref<1x4xf32>, %c: memref<1xi32>, %y: memref<1x4xf32>) attributes {tir.prim_func} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %one = arith.constant 1 : i32
  scf.for %i = %c0 to %c4 step %c1 {
    %a = memref.load %t[%c0, %i] : memref<1x4xf32>
    %v = arith.addf %a, %a : f32
    memref.store %v, %y[%c0, %i] : memref<1x4xf32>
  }
  %n = memref.load %c[%c0] : memref<1xi32>
  %m = arith.addi %n, %one : i32
  memref.store %m, %c[%c0] : memref<1xi32>
  func.return
}

func.func @main(%x: tensor<1x4xf32>) -> tensor<1x4xf32> {
  %s = relay.state "sum" dense<[[1.0, 2.0, 3.0, 4.0]]> : tensor<1x4xf32>
  %t = relay.call @acc(%x, %s) : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
  %c = relay.state "count" dense<0> : tensor<1xi32>
  %y = relay.call @twice(%t, %c) : (tensor<1x4xf32>, tensor<1xi32>) -> tensor<1x4xf32>
  func.return %y : tensor<1x4xf32>
}
