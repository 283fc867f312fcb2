// RUN: usmp-opt %s -p aot-lower-main --split-input-file --verify-diagnostics

func.func private @neg(memref<4xf32>, memref<4xf32>) attributes {tir.prim_func}
func.func @main(%x: tensor<4xf32>, %c: i1) -> tensor<4xf32> {
  // expected-error@+1 {{'scf.if' is control flow, which aot-lower-main does not support (relay 'if' is rejected as in TVM); main may only contain relay.call, relay.constant, relay.state, relay.read_state, relay.assign_state, relay.tuple, relay.tuple_get_item, relay.on_device, relay.device_copy, relay.reshape, a relay.strided_slice selecting one contiguous block in order, and func.return}}
  %0 = scf.if %c -> (tensor<4xf32>) {
    %1 = relay.call @neg(%x) : (tensor<4xf32>) -> tensor<4xf32>
    scf.yield %1 : tensor<4xf32>
  } else {
    scf.yield %x : tensor<4xf32>
  }
  func.return %0 : tensor<4xf32>
}

// -----

func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'relay.add' must first be fused into a primitive function and lowered to a tir prim func (fuse-ops, lower-ops); main may only contain relay.call,}}
  %0 = relay.add %x, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

func.func private @f(memref<4xf32>, memref<4xf32>) attributes {tir.prim_func}
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'func.call' is not supported in main; main may only contain relay.call,}}
  %0 = func.call @f2(%x) : (tensor<4xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}
func.func private @f2(tensor<4xf32>) -> tensor<4xf32>

// -----

func.func private @f(memref<?xf32>, memref<4xf32>) attributes {tir.prim_func}
// expected-error@+1 {{argument 0 (%x) of @main has dynamic shape tensor<?xf32>; aot-lower-main needs static shapes to size storage (dynamic shapes are not supported)}}
func.func @main(%x: tensor<?xf32>) -> tensor<4xf32> {
  %0 = relay.call @f(%x) : (tensor<?xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

func.func private @f(memref<4xf32>, memref<?xf32>) attributes {tir.prim_func}
func.func @main(%x: tensor<4xf32>) -> tensor<?xf32> {
  // expected-error@+1 {{result 0 of 'relay.call' has dynamic shape tensor<?xf32>; aot-lower-main needs static shapes to size storage (dynamic shapes are not supported)}}
  %0 = relay.call @f(%x) : (tensor<4xf32>) -> tensor<?xf32>
  func.return %0 : tensor<?xf32>
}

// -----

func.func private @f(memref<4xf32>, memref<4xf32>) attributes {tir.prim_func}
// expected-error@+1 {{argument 0 (%x) of @main has unranked type tensor<*xf32>; aot-lower-main needs static shapes to size storage (dynamic shapes are not supported)}}
func.func @main(%x: tensor<*xf32>) -> tensor<4xf32> {
  %c = relay.constant dense<1.0> : tensor<4xf32>
  %0 = relay.call @f(%c) : (tensor<4xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

func.func @fused_neg(%a: tensor<4xf32>) -> tensor<4xf32> attributes {relay.primitive} {
  func.return %a : tensor<4xf32>
}
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{relay.call to @fused_neg, which is a relay primitive function (run lower-ops first); aot-lower-main calls tir prim funcs (func.func with 'tir.prim_func') or external declarations on memrefs}}
  %0 = relay.call @fused_neg(%x) : (tensor<4xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

func.func private @add(memref<4xf32>, memref<4xf32>, memref<4xf32>) attributes {tir.prim_func}
// expected-error@+1 {{input name 'input-1' and input name 'input.1' both become 'input_1' once sanitised for C; model input and output names must be distinct C identifiers and are never renamed silently (rename one of them)}}
func.func @main(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> attributes {relay.input_tensor_names = ["input-1", "input.1"]} {
  %0 = relay.call @add(%a, %b) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

func.func private @neg(memref<4xf32>, memref<4xf32>) attributes {tir.prim_func}
// expected-error@+1 {{input name 'output' and output name 'output' are the same; model input and output names must be distinct C identifiers}}
func.func @main(%output: tensor<4xf32>) -> tensor<4xf32> {
  %0 = relay.call @neg(%output) : (tensor<4xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

func.func private @neg(memref<4xf32>, memref<4xf32>) attributes {tir.prim_func}
// expected-error@+1 {{'relay.output_tensor_names' names 1 output(s), but main has 2 output(s) (tuples count one per tensor)}}
func.func @main(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) attributes {relay.output_tensor_names = ["y"]} {
  %0 = relay.call @neg(%x) : (tensor<4xf32>) -> tensor<4xf32>
  func.return %0, %0 : tensor<4xf32>, tensor<4xf32>
}

// -----

func.func private @neg(memref<4xf32>, memref<4xf32>) attributes {tir.prim_func}
// expected-error@+1 {{'relay.input_tensor_names' names 2 input(s), but main has 1 input(s) (tuples count one per tensor)}}
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> attributes {relay.input_tensor_names = ["a", "b"]} {
  %0 = relay.call @neg(%x) : (tensor<4xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

func.func private @neg(memref<4xf32>, memref<4xf32>) attributes {tir.prim_func}
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = relay.call @neg(%x) {relay.virtual_device = #device.virtual_device<"cpu", 0, target = "c">} : (tensor<4xf32>) -> tensor<4xf32>
  // expected-error-re@+1 {{conflicting virtual devices for one value: #device.virtual_device<"npu", 0, target = "ethos-u"> here, but #device.virtual_device<"cpu", 0, target = "c"> at {{.*}}aot_lower_main_invalid.mlir:112:3; plan-devices must insert a relay.device_copy between them}}
  %1 = relay.on_device %0 {virtual_device = #device.virtual_device<"npu", 0, target = "ethos-u">} : tensor<4xf32>
  func.return %1 : tensor<4xf32>
}

// -----

func.func private @split(memref<4xf32>, memref<2xf32>, memref<2xf32>) attributes {tir.prim_func}
// expected-error@+1 {{argument 0 (%t) of @main has type tuple<tensor<4xf32>>; model inputs must be tensors (pass each tensor of a tuple as its own argument)}}
func.func @main(%t: tuple<tensor<4xf32>>) -> tensor<2xf32> {
  %x = relay.tuple_get_item %t[0] : tuple<tensor<4xf32>> -> tensor<4xf32>
  %0 = relay.call @split(%x) : (tensor<4xf32>) -> tuple<tensor<2xf32>, tensor<2xf32>>
  %1 = relay.tuple_get_item %0[0] : tuple<tensor<2xf32>, tensor<2xf32>> -> tensor<2xf32>
  func.return %1 : tensor<2xf32>
}

// -----

// expected-error@+1 {{argument 0 (%x) of @main has type memref<4xf32>; expected a tensor or a tuple of tensors}}
func.func @main(%x: memref<4xf32>) {
  func.return
}

// -----

// expected-error@+1 {{@main is a declaration; expected a relay main with a body}}
func.func private @main(tensor<4xf32>) -> tensor<4xf32>

// -----

// expected-error@+1 {{no relay @main to lower: aot-lower-main expects func.func @main whose body is relay dataflow calling tir prim funcs}}
func.func private @neg(memref<4xf32>, memref<4xf32>) attributes {tir.prim_func}

// -----

func.func private @neg(memref<4xf32>, memref<4xf32>) attributes {tir.prim_func}
// expected-error@+1 {{@tvmgen_default___tvm_main__ already exists, so the lowered main cannot take its name; remove it or pick another module_name}}
func.func private @tvmgen_default___tvm_main__()
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = relay.call @neg(%x) : (tensor<4xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

func.func private @neg(memref<4xf32>, memref<4xf32>) attributes {tir.prim_func}
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'relay.virtual_device' must be a #device.virtual_device, got "cpu"}}
  %0 = relay.call @neg(%x) {relay.virtual_device = "cpu"} : (tensor<4xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

func.func private @neg(memref<4xf32>, memref<4xf32>) attributes {tir.prim_func}
// expected-error@+1 {{'relay.output_tensor_names' must be an array of strings, got [1 : i64]}}
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> attributes {relay.output_tensor_names = [1]} {
  %0 = relay.call @neg(%x) : (tensor<4xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

// A slice that is not one contiguous block in order copies: it is an operator.
func.func @main(%x: tensor<4x4xi8>) -> tensor<4x2xi8> {
  // expected-error@+1 {{'relay.strided_slice' must first be fused into a primitive function and lowered to a tir prim func (fuse-ops, lower-ops)}}
  %0 = relay.strided_slice %x {begin = array<i64: 0, 1>, end = array<i64: 4, 3>, strides = array<i64: 1, 1>} : tensor<4x4xi8> -> tensor<4x2xi8>
  func.return %0 : tensor<4x2xi8>
}

// -----

// expected-error@+1 {{'relay.output_quantization' has 2 entries, but main has 1 output(s) (tuples count one per tensor)}}
func.func @main(%x: tensor<4xi8>) -> tensor<4xi8> attributes {relay.output_quantization = [{}, {}]} {
  func.return %x : tensor<4xi8>
}

// -----

// expected-error@+1 {{'relay.input_quantization' entry 0 (input 0): zero_point 300 is outside the range of ui8 [0, 255]}}
func.func @main(%x: tensor<4xui8>) -> tensor<4xui8> attributes {relay.input_quantization = [{scale = 0.5 : f32, zero_point = 300 : i64}]} {
  func.return %x : tensor<4xui8>
}

// -----

// expected-error@+1 {{'relay.input_quantization' entry 0 (input 0): a quantised tensor must have an integer type, not memref<4xf32>}}
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> attributes {relay.input_quantization = [{scale = 0.5 : f32, zero_point = 0 : i64}]} {
  func.return %x : tensor<4xf32>
}

// -----

// expected-error@+1 {{'relay.input_quantization' entry 0 (input 0): scale must be positive and finite in float32, got 1e+40}}
func.func @main(%x: tensor<4xi8>) -> tensor<4xi8> attributes {relay.input_quantization = [{scale = 1.0e40 : f64, zero_point = 0 : i64}]} {
  func.return %x : tensor<4xi8>
}

// -----

// expected-error@+1 {{'relay.input_quantization' entry 0 (input 0) must be {} or {scale = <float>, zero_point = <integer>}, got {scale = 5.000000e-01 : f32}}}
func.func @main(%x: tensor<4xi8>) -> tensor<4xi8> attributes {relay.input_quantization = [{scale = 0.5 : f32}]} {
  func.return %x : tensor<4xi8>
}
