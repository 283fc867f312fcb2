// RUN: usmp-opt %s -p 'fuse-ops,lower-ops,aot-lower-main,usmp,convert-to-emitc{profile=true}' | FileCheck %s
// RUN: usmp-opt %s -p 'fuse-ops,lower-ops,aot-lower-main,usmp,convert-to-emitc{profile=true}' -t c-library | FileCheck %s --check-prefix=LIB
// RUN: usmp-opt %s -p 'fuse-ops,lower-ops,aot-lower-main,usmp,convert-to-emitc' -t c-library | FileCheck %s --check-prefix=OFF

// Every operator call of the entry is wrapped in the two hooks, its index
// the argument; the entry lists the calls with the TFLite operators their
// callee's ops are located at (as the memory report's step labels: here
// the fused dense + relu keeps the relu's location only).
// CHECK:      emitc.func private @tvmgen_default_profile_begin(i32) -> () attributes {specifiers = ["extern"]}
// CHECK-NEXT: emitc.func private @tvmgen_default_profile_end(i32) -> () attributes {specifiers = ["extern"]}
// CHECK-LABEL: emitc.func @tvmgen_default___tvm_main__
// CHECK-SAME: tir.profile_operators = {{\[}}["tvmgen_default_fused_nn_dense_nn_relu", "RELU", 1 : i32], ["tvmgen_default_fused_nn_dense", "FULLY_CONNECTED", 2 : i32]]
// CHECK:      emitc.call @tvmgen_default_profile_begin(%{{.*}}) : (i32) -> ()
// CHECK-NEXT: emitc.call @tvmgen_default_fused_nn_dense_nn_relu(
// CHECK-NEXT: emitc.call @tvmgen_default_profile_end(%{{.*}}) : (i32) -> ()
// CHECK:      emitc.call @tvmgen_default_profile_begin(
// CHECK-NEXT: emitc.call @tvmgen_default_fused_nn_dense(
// CHECK-NEXT: emitc.call @tvmgen_default_profile_end(

// The library: the table and the weak hooks; the header declares them.
// LIB-LABEL: //--- codegen/host/include/tvmgen_default.h
// LIB:       void tvmgen_default_profile_begin(int32_t op_index);
// LIB:       #define TVMGEN_DEFAULT_PROFILE_OPERATORS 2
// LIB:       extern const tvmgen_default_profile_operator_t tvmgen_default_profile_operators[];
// LIB-LABEL: //--- codegen/host/src/tvmgen_default.c
// LIB:       {"tvmgen_default_fused_nn_dense_nn_relu", "RELU", 1},
// LIB-NEXT:  {"tvmgen_default_fused_nn_dense", "FULLY_CONNECTED", 2},
// LIB-NEXT:  {0, 0, -1}
// LIB:       TVMGEN_PROFILE_WEAK void tvmgen_default_profile_begin(int32_t op_index) {
// LIB-LABEL: //--- codegen/host/src/tvmgen_default_aot_main.c
// LIB:       tvmgen_default_profile_begin(0);
// LIB-NEXT:  tvmgen_default_fused_nn_dense_nn_relu(
// LIB-NEXT:  tvmgen_default_profile_end(0);
// LIB-LABEL: //--- example/profile.c
// LIB:       void tvmgen_default_profile_report(long runs) {

// Off (the default): no hook, no table.
// OFF-NOT: profile
func.func @main(%x: tensor<1x4xf32>) -> tensor<1x4xf32> {
  %w = relay.constant dense<[[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0], [1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]]> : tensor<4x4xf32>
  %0 = relay.dense %x, %w : (tensor<1x4xf32>, tensor<4x4xf32>) -> tensor<1x4xf32> loc("a"("FULLY_CONNECTED"("m.tflite":0:0)))
  %1 = relay.relu %0 : tensor<1x4xf32> -> tensor<1x4xf32> loc("b"("RELU"("m.tflite":1:0)))
  %2 = relay.dense %1, %w : (tensor<1x4xf32>, tensor<4x4xf32>) -> tensor<1x4xf32> loc("c"("FULLY_CONNECTED"("m.tflite":2:0)))
  func.return %2 : tensor<1x4xf32>
}
