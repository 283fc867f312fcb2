// RUN: usmp-opt %s --split-input-file --verify-diagnostics

func.func @f() {
  // expected-error@+1 {{'tir.allocate' op tir.allocate must have a static shape, got memref<?xi8>}}
  %0 = tir.allocate {name_hint = "x"} : memref<?xi8>
  func.return
}

// -----

func.func @f() {
  // expected-error@+1 {{'tir.allocate_const' op tir.allocate_const: value of type tensor<4xi8> does not match the result memref<4xi32>}}
  %0 = tir.allocate_const {name_hint = "c", value = dense<[1, 2, 3, 4]> : tensor<4xi8>} : memref<4xi32>
  func.return
}

// -----

func.func private @g(memref<4xi8>)
func.func @f(%a: memref<4xi8>) {
  // expected-error@+1 {{tir.call: call type 'fancy' is not one of unpacked, packed, cpacked}}
  tir.call fancy @g(%a) : (memref<4xi8>) -> ()
  func.return
}

// -----

func.func private @g(memref<4xi8>)
func.func @f(%a: memref<4xi8>) {
  // expected-error@+1 {{tir.call: the call type is a keyword before the callee (tir.call cpacked @f(...)), not an attribute}}
  tir.call @g(%a) {call_type = "cpacked"} : (memref<4xi8>) -> ()
  func.return
}

// -----

func.func @f(%a: memref<4xi8>) {
  // expected-error@+1 {{'tir.call' op tir.call to @missing, which is not a function of the module}}
  tir.call @missing(%a) : (memref<4xi8>) -> ()
  func.return
}

// -----

"memref.global"() <{sym_name = "g", sym_visibility = "private", type = memref<4xi8>, initial_value = dense<1> : tensor<4xi8>, constant}> : () -> ()
func.func @f(%a: memref<4xi8>) {
  // expected-error@+1 {{'tir.call' op tir.call to @g, which is a 'memref.global', not a func.func}}
  tir.call @g(%a) : (memref<4xi8>) -> ()
  func.return
}

// -----

func.func @g(%a: memref<4xi8>) {
  func.return
}
func.func @f(%a: memref<4xi8>) {
  // expected-error@+1 {{'tir.call' op tir.call to @g, which has a body but no 'tir.prim_func' attribute; tir.call calls tir prim funcs or external declarations}}
  tir.call @g(%a) : (memref<4xi8>) -> ()
  func.return
}

// -----

func.func private @g(memref<4xi8>) -> i32
func.func @f(%a: memref<4xi8>) {
  // expected-error@+1 {{'tir.call' op tir.call to @g, which returns 1 value(s); an operator function returns nothing}}
  tir.call @g(%a) : (memref<4xi8>) -> ()
  func.return
}

// -----

func.func private @g(memref<4xi8>, memref<4xi8>) attributes {tir.prim_func}
func.func @f(%a: memref<4xi8>) {
  // expected-error@+1 {{'tir.call' op tir.call passes 1 argument(s) (memref<4xi8>), but @g takes 2 (memref<4xi8>, memref<4xi8>)}}
  tir.call @g(%a) : (memref<4xi8>) -> ()
  func.return
}

// -----

func.func private @g(memref<4xi32>) attributes {tir.prim_func}
func.func @f(%a: memref<4xi8>) {
  // expected-error@+1 {{'tir.call' op tir.call: argument 0 is memref<4xi8>, but @g takes memref<4xi32>}}
  tir.call @g(%a) : (memref<4xi8>) -> ()
  func.return
}

// -----

func.func @g(%a: memref<4xi8>, %pool: memref<16xi8>) attributes {tir.prim_func, tir.pool_args = ["ws"]} {
  func.return
}
func.func @f(%a: memref<4xi8>) attributes {tir.prim_func} {
  // expected-error@+1 {{'tir.call' op tir.call passes 1 argument(s) (memref<4xi8>), but @g takes 2 (memref<4xi8>, memref<16xi8>) (its last 1 are the pools ["ws"], which every call passes after usmp)}}
  tir.call @g(%a) : (memref<4xi8>) -> ()
  func.return
}

// -----

// expected-error@+1 {{pool 'p': kind 'scratch' is not one of workspace, constant}}
builtin.module attributes {tir.pools = [#tir.pool_info<"p", scratch>]} {
}

// -----

// expected-error@+1 {{pool 'p': alignment 12 is not accepted; expected a power of two from 1 to 4096}}
builtin.module attributes {tir.pools = [#tir.pool_info<"p", workspace, alignment = 12>]} {
}

// -----

// expected-error@+1 {{pool 'p': access 'rx' is not one of rw, ro}}
builtin.module attributes {tir.pools = [#tir.pool_info<"p", workspace, access = {c = "rx"}>]} {
}

// -----

// expected-error@+1 {{unknown pool_info key 'limit' (expected size, alignment or access)}}
builtin.module attributes {tir.pools = [#tir.pool_info<"p", workspace, limit = 3>]} {
}

// -----

// expected-error@+1 {{pool 'p': alignment 8192 is not accepted; expected a power of two from 1 to 4096}}
builtin.module attributes {tir.pools = [#tir.pool_info<"p", workspace, alignment = 8192>]} {
}

// -----

// expected-error@+1 {{pool 'p': size 4294967296 is larger than the generated C can index; expected at most 2147483647 bytes (0 = unbounded)}}
builtin.module attributes {tir.pools = [#tir.pool_info<"p", workspace, size = 4294967296>]} {
}

// -----

func.func @f() {
  // expected-error@+1 {{'tir.allocate' op tir.allocate: memref<4x0xi8> has a zero dimension; every dimension must be >= 1 (C99 has no zero-sized arrays)}}
  %0 = tir.allocate {name_hint = "x"} : memref<4x0xi8>
  func.return
}

// -----

func.func @f() {
  // expected-error@+1 {{memref<65536x32768xi8> holds 2147483648 bytes; the generated C indexes buffers with ptrdiff_t, so at most 2147483647 bytes (2^31-1) are accepted}}
  %0 = tir.allocate {name_hint = "x"} : memref<65536x32768xi8>
  func.return
}

// -----

func.func @f() {
  // expected-error@+1 {{'memref.alloca' op alignment 8192 is not accepted; expected a power of two from 1 to 4096}}
  %0 = memref.alloca() {alignment = 8192 : i64} : memref<4xi8>
  func.return
}

// -----

// A view with other than row-major strides is not a buffer of the parameter's type.
func.func private @g(memref<2x3xi8>) attributes {tir.prim_func}
func.func @f(%a: memref<4x3xi8>) {
  %v = memref.reinterpret_cast %a to offset: [1], sizes: [2, 3], strides: [6, 1] : memref<4x3xi8> to memref<2x3xi8, strided<[6, 1], offset: 1>>
  // expected-error@+1 {{'tir.call' op tir.call: argument 0 is memref<2x3xi8, strided<[6, 1], offset: 1>>, but @g takes memref<2x3xi8>}}
  tir.call @g(%v) : (memref<2x3xi8, strided<[6, 1], offset: 1>>) -> ()
  func.return
}

// -----

// expected-error@+1 {{'tir.allocate' op 'tir.allocate' expects parent op 'func.func'}}
%0 = tir.allocate {name_hint = "x"} : memref<4xi8>

// -----

func.func @f() {
  // expected-error@+1 {{'tir.allocate' op tir.allocate: scope 'my sram' is not a storage scope, expected identifiers separated by '.' (e.g. global, local, global.texture, sram)}}
  %0 = tir.allocate {name_hint = "x", scope = "my sram"} : memref<4xi8>
  func.return
}

// -----

func.func @f() {
  scf.execute_region {
    // expected-error@+1 {{'tir.allocate_const' op 'tir.allocate_const' expects parent op 'func.func'}}
    %0 = tir.allocate_const {name_hint = "c", value = dense<1> : tensor<4xi8>} : memref<4xi8>
    scf.yield
  }
  func.return
}

// -----

// in a serial loop: not thread-local, so not allowed (only scf.parallel's
// body, at any depth, may hold a tir.allocate besides the function itself)
func.func @f(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %n step %c1 {
    // expected-error@+1 {{'tir.allocate' op 'tir.allocate' expects parent op 'func.func'}}
    %0 = tir.allocate {name_hint = "x"} : memref<4xi8>
  }
  func.return
}

// -----

func.func @f(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  "scf.parallel"(%c0, %n, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    // expected-error@+1 {{'tir.allocate_const' op 'tir.allocate_const' expects parent op 'func.func'}}
    %0 = tir.allocate_const {name_hint = "c", value = dense<1> : tensor<4xi8>} : memref<4xi8>
    scf.reduce
  }) : (index, index, index) -> ()
  func.return
}

// -----

func.func @f() {
  // expected-error@+1 {{Expected `activate`, `open`, `close`, or `deactivate`.}}
  tir.device_hook reset "accel"
  func.return
}

// -----

func.func @f(%a: memref<4xi8>, %y: memref<4xi8>) attributes {tir.prim_func} {
  // expected-error@+1 {{'tir.custom_call' op tir.custom_call: quantization has 1 entries, expected 2 (one per operand)}}
  tir.custom_call "clip"(%a, %y) {code = "Clip", header = "k/clip.h", inputs = 1 : i64, options = "", quantization = [{}]} : memref<4xi8>, memref<4xi8>
  func.return
}

// -----

func.func @f(%a: memref<4xi8>) attributes {tir.prim_func} {
  // expected-error@+1 {{'tir.custom_call' op tir.custom_call: inputs = 1, but it has 1 operand(s); expected the inputs, then at least one output}}
  tir.custom_call "clip"(%a) {code = "Clip", header = "k/clip.h", inputs = 1 : i64, options = "", quantization = [{}]} : memref<4xi8>
  func.return
}
