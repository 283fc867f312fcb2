// RUN: usmp-opt %s -p 'partition-cmsis-nn{mcpu=cortex-m4},lower-ops' | FileCheck %s --check-prefix=LOWER
// RUN: usmp-opt %s -p 'partition-cmsis-nn{mcpu=cortex-m4},lower-ops,aot-lower-main,usmp' | FileCheck %s --check-prefix=USMP
// RUN: usmp-opt %s -p 'partition-cmsis-nn{mcpu=cortex-m55},lower-ops' | FileCheck %s --check-prefix=MVE
// Helium (MVE): the im2col of arm_convolve_s8_get_buffer_size_mve, 4 columns
// of 36 bytes each rounded up to 48 (whole 16-byte vectors) = 192 B; no
// scratch for the average pooling.
// MVE-LABEL: func.func @tvmgen_default_cmsis_nn_fused_nn_conv2d_add_fixed_point_multiply_add_clip_cast(
// MVE-NEXT:    tir.allocate {{.}}name_hint = "cmsis_nn_scratch"{{.}} : memref<192xi8>
// MVE:         tir.call_extern "arm_convolve_wrapper_s8"({{.*}}cmsis_nn.core = "mve", scalars = array<i64: 192,
// MVE-LABEL: func.func @tvmgen_default_cmsis_nn_fused_nn_avg_pool2d(
// MVE-NEXT:    tir.call_extern "arm_avgpool_s8"(%0, %1) {{.}}cmsis_nn.core = "mve", scalars = array<i64: 0,
// Idempotence: a partitioned function is not partitioned again.
// RUN: usmp-opt %s -p 'partition-cmsis-nn{mcpu=cortex-m4},partition-cmsis-nn{mcpu=cortex-m4},lower-ops' | FileCheck %s --check-prefix=LOWER

// --target "cmsis-nn,c -mcpu=cortex-m4": an int8 convolution and an average
// pooling go to CMSIS-NN (renamed tvmgen_default_cmsis_nn_..., tir.target
// "cmsis-nn"); the int8 TANH between them (a table lookup) has no CMSIS-NN
// kernel and stays on our own. Each CMSIS-NN prim func holds its scratch
// (arm_convolve_wrapper_s8: im2col of 3x3x4 columns, 2 * 36 * 2 = 144 B;
// arm_avgpool_s8 with DSP: 4 B per channel = 8 B) as a tir.allocate, its
// per-channel multipliers and shifts as tir.allocate_const, and one
// tir.call_extern with the scalars flattened (scratch size first).

// LOWER-LABEL: func.func @tvmgen_default_cmsis_nn_fused_nn_conv2d_add_fixed_point_multiply_add_clip_cast(
// LOWER-SAME:      attributes {{.}}tir.target = "cmsis-nn", tir.prim_func{{.}}
// LOWER-NEXT:    %[[S:.*]] = tir.allocate {{.}}name_hint = "cmsis_nn_scratch"{{.}} : memref<144xi8>
// LOWER-NEXT:    %[[M:.*]] = tir.allocate_const {{.}}name_hint = "cmsis_nn_multiplier", value = dense<1145324629> : tensor<2xi32>{{.}} : memref<2xi32>
// LOWER-NEXT:    %[[SH:.*]] = tir.allocate_const {{.}}name_hint = "cmsis_nn_shift", value = dense<-5> : tensor<2xi32>{{.}} : memref<2xi32>
// LOWER-NEXT:    tir.call_extern "arm_convolve_wrapper_s8"(%[[S]], %[[M]], %[[SH]], %0, %1, %2, %3) {{.}}cmsis_nn.core = "dsp", scalars = array<i64: 144, 3, -9, 2, 2, 0, 1, 1, 1, -9, 127, 1, 7, 6, 4, 2, 3, 3, 4, 1, 1, 1, 2, 1, 4, 3, 2>{{.}}
// LOWER-NEXT:    func.return
// LOWER-LABEL: func.func @tvmgen_default_fused_table_lookup(
// LOWER-NOT:     tir.call_extern
// LOWER:         scf.for
// LOWER-LABEL: func.func @tvmgen_default_cmsis_nn_fused_nn_avg_pool2d(
// LOWER-NEXT:    %[[P:.*]] = tir.allocate {{.}}name_hint = "cmsis_nn_scratch"{{.}} : memref<8xi8>
// LOWER-NEXT:    tir.call_extern "arm_avgpool_s8"(%[[P]], %0, %1) {{.}}cmsis_nn.core = "dsp", scalars = array<i64: 8, 3, 4, 0, 0, -128, 127, 1, 4, 3, 2, 1, 4, 3, 1, 1, 1, 1, 2>{{.}}
// LOWER-LABEL: func.func @main(
// LOWER:         relay.call @tvmgen_default_cmsis_nn_fused_nn_conv2d_add_fixed_point_multiply_add_clip_cast(
// LOWER:         relay.call @tvmgen_default_fused_table_lookup(
// LOWER:         relay.call @tvmgen_default_cmsis_nn_fused_nn_avg_pool2d(

// After usmp each scratch is a view of the workspace pool at its planned
// offset, live only during its call: the 168 B pool holds the convolution's
// scratch at 0..144 and its output at 144..168; the TANH's output reuses
// 0..24 (the scratch is dead by then) and the pooling's scratch 32..40.
// USMP-LABEL: func.func @tvmgen_default_cmsis_nn_fused_nn_conv2d_add_fixed_point_multiply_add_clip_cast(
// USMP-SAME:     %global_workspace: memref<168xi8>, %global_const: memref<376xi8>)
// USMP-SAME:     tir.pool_args = ["global_workspace", "global_const"]
// USMP-NEXT:     %[[O:.*]] = arith.constant 0 : index
// USMP-NEXT:     %[[S:.*]] = memref.view %global_workspace[%[[O]]][] : memref<168xi8> to memref<144xi8>
// USMP:          tir.call_extern "arm_convolve_wrapper_s8"(%[[S]],
// USMP-LABEL: func.func @tvmgen_default_cmsis_nn_fused_nn_avg_pool2d(
// USMP-SAME:     %global_workspace: memref<168xi8>)
// USMP-NEXT:     %[[O:.*]] = arith.constant 32 : index
// USMP-NEXT:     %[[S:.*]] = memref.view %global_workspace[%[[O]]][] : memref<168xi8> to memref<8xi8>
// USMP-NEXT:     tir.call_extern "arm_avgpool_s8"(%[[S]], %0, %1)
// USMP-LABEL: func.func @tvmgen_default___tvm_main__(
// USMP:          %[[O:.*]] = arith.constant 144 : index
// USMP-NEXT:     %sid = memref.view %global_workspace[%[[O]]][] : memref<168xi8> to memref<1x4x3x2xi8>
// USMP-NEXT:     %[[O:.*]] = arith.constant 0 : index
// USMP-NEXT:     %sid_1 = memref.view %global_workspace[%[[O]]][] : memref<168xi8> to memref<1x4x3x2xi8>

builtin.module {
  func.func @tvmgen_default_fused_nn_conv2d_add_fixed_point_multiply_add_clip_cast(%0: tensor<1x7x6x4xi8>, %1: tensor<2x3x3x4xi8>, %2: tensor<2xi32>) -> tensor<1x4x3x2xi8> attributes {relay.primitive} {
    %4 = relay.constant dense<-9> : tensor<i32>
    %5 = relay.conv2d %0, %1 {strides = array<i64: 2, 2>, padding = array<i64: 1, 0, 1, 1>, kernel_layout = #relay<kernel_layout OHWI>, input_zero_point = -3 : i64} : (tensor<1x7x6x4xi8>, tensor<2x3x3x4xi8>) -> tensor<1x4x3x2xi32>
    %6 = relay.add %5, %2 : (tensor<1x4x3x2xi32>, tensor<2xi32>) -> tensor<1x4x3x2xi32>
    %7 = relay.fixed_point_multiply %6 {multiplier = array<i32: 1145324629>, shift = array<i32: -5>, axis = 3 : i64} : tensor<1x4x3x2xi32> -> tensor<1x4x3x2xi32>
    %8 = relay.add %7, %4 : (tensor<1x4x3x2xi32>, tensor<i32>) -> tensor<1x4x3x2xi32>
    %9 = relay.clip %8 {a_min = -9.000000e+00 : f64, a_max = 1.270000e+02 : f64} : tensor<1x4x3x2xi32> -> tensor<1x4x3x2xi32>
    %10 = relay.cast %9 : tensor<1x4x3x2xi32> -> tensor<1x4x3x2xi8>
    func.return %10 : tensor<1x4x3x2xi8>
  }
  func.func @tvmgen_default_fused_table_lookup(%0: tensor<1x4x3x2xi8>, %1: tensor<256xi8>) -> tensor<1x4x3x2xi8> attributes {relay.primitive} {
    %2 = relay.table_lookup %0, %1 : (tensor<1x4x3x2xi8>, tensor<256xi8>) -> tensor<1x4x3x2xi8>
    func.return %2 : tensor<1x4x3x2xi8>
  }
  func.func @tvmgen_default_fused_nn_avg_pool2d(%0: tensor<1x4x3x2xi8>) -> tensor<1x1x1x2xi8> attributes {relay.primitive} {
    %1 = relay.avg_pool2d %0 {pool_size = array<i64: 4, 3>, strides = array<i64: 4, 3>} : tensor<1x4x3x2xi8> -> tensor<1x1x1x2xi8>
    func.return %1 : tensor<1x1x1x2xi8>
  }
  func.func @main(%t0: tensor<1x7x6x4xi8>) -> tensor<1x1x1x2xi8> {
    %t1 = relay.constant dense<[[[[111, -115, 25, 2], [-69, 5, 39, -60], [19, -95, 110, -122]], [[-21, -27, -111, -31], [31, -122, -126, -67], [-94, 73, -97, 30]], [[81, 123, -96, 92], [124, 34, -34, -80], [-105, 87, 68, -20]]], [[[-2, -120, -19, 115], [-9, 113, -30, -45], [61, -2, -31, -58]], [[35, 66, 58, 120], [-59, 28, -125, 29], [5, -68, -84, -59]], [[126, -30, -18, 18], [122, 59, 16, -115], [-2, 16, -103, 119]]]]> : tensor<2x3x3x4xi8>
    %t2 = relay.constant dense<[294, -507]> : tensor<2xi32>
    %tanh_table = relay.constant dense<"0x80808080808080808080808080808080818181818181818181818181818181818181828282828282828282838383838384848484858585858686868787888889898A8A8B8B8C8D8E8E8F9091929394959698999A9C9D9FA1A2A4A6A8AAACAFB1B3B6B9BBBEC1C4C7CACDD0D4D7DBDEE2E6E9EDF1F5F8FC0004080B0F13171A1E2225292C303336393C3F4245474A4D4F515456585A5C5E5F6163646667686A6B6C6D6E6F707172727374757576767777787879797A7A7A7B7B7B7B7C7C7C7C7D7D7D7D7D7E7E7E7E7E7E7E7E7E7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F7F"> : tensor<256xi8>
    %0 = relay.call @tvmgen_default_fused_nn_conv2d_add_fixed_point_multiply_add_clip_cast(%t0, %t1, %t2) : (tensor<1x7x6x4xi8>, tensor<2x3x3x4xi8>, tensor<2xi32>) -> tensor<1x4x3x2xi8>
    %1 = relay.call @tvmgen_default_fused_table_lookup(%0, %tanh_table) : (tensor<1x4x3x2xi8>, tensor<256xi8>) -> tensor<1x4x3x2xi8>
    %2 = relay.call @tvmgen_default_fused_nn_avg_pool2d(%1) : (tensor<1x4x3x2xi8>) -> tensor<1x1x1x2xi8>
    func.return %2 : tensor<1x1x1x2xi8>
  }
}
