// RUN: usmp-opt %s -p convert-to-emitc --split-input-file --verify-diagnostics

func.func @f() attributes {tir.prim_func} {
  // expected-error@+1 {{buffer 'sid_0' ('tir.allocate') is not in a pool: run usmp before convert-to-emitc}}
  %0 = tir.allocate {name_hint = "sid_0"} : memref<4xi8>
  func.return
}

// -----

func.func @f(%n: index) {
  // expected-error@+1 {{'memref.alloc' of memref<?xf32> is dynamically sized: the generated C has no heap and no VLAs}}
  %0 = memref.alloc(%n) : memref<?xf32>
  func.return
}

// -----

func.func private @op(memref<4xi8>)
func.func @f(%a: memref<4xi8>) {
  tir.call packed @op(%a) : (memref<4xi8>) -> ()
  // expected-error@+1 {{@op is called both packed and cpacked; one function has one calling convention}}
  tir.call cpacked @op(%a) : (memref<4xi8>) -> ()
  func.return
}

// -----

func.func private @op(memref<4xi8>)
func.func @f(%a: memref<4xi8>) {
  tir.call @op(%a) : (memref<4xi8>) -> ()
  // expected-error@+1 {{@op is called both unpacked and packed; one function has one calling convention}}
  tir.call packed @op(%a) : (memref<4xi8>) -> ()
  func.return
}

// -----

func.func private @op(i32)
func.func @f(%n: i32) {
  // expected-error@+1 {{a cpacked call passes buffers only (DLTensor handles); operand of type i32 is not a memref}}
  tir.call cpacked @op(%n) : (i32) -> ()
  func.return
}

// -----

// expected-error@+1 {{type f16 has no C99 equivalent; supported: i1, i8, i16, i32, i64}}
func.func @f(%a: f16) {
  func.return
}

// -----

func.func @f(%c: i1) {
  // expected-error@+1 {{'scf.while' cannot be emitted as C yet; lower it to scf.for / scf.if first}}
  scf.while () : () -> () {
    scf.condition(%c)
  } do {
    scf.yield
  }
  func.return
}

// -----

// expected-error@+1 {{pool argument 'sram' is not described in the module's tir.pools (known pools: none)}}
func.func @f(%p: memref<16xi8>) attributes {tir.pool_args = ["sram"]} {
  func.return
}

// -----

func.func @f(%a: memref<4xi32>) {
  // expected-error@+3 {{'arith.bitcast' has no lowering to emitc}}
  %c0 = arith.constant 0 : index
  %x = memref.load %a[%c0] : memref<4xi32>
  %y = arith.bitcast %x : i32 to f32
  func.return
}

// -----

// expected-error@+1 {{'relay.constant' at module level cannot be emitted as C}}
"relay.constant"() {value = dense<1> : tensor<i8>} : () -> tensor<i8>

// -----

"memref.global"() <{sym_name = "lut", sym_visibility = "private", type = memref<4xi32>, initial_value = dense<[1, 2, 3, 4]> : tensor<4xi32>, constant}> : () -> ()
func.func @f(%v: i32) {
  %g = memref.get_global @lut : memref<4xi32>
  %c0 = arith.constant 0 : index
  %s = memref.subview %g[1] [2] [1] : memref<4xi32> to memref<2xi32, strided<[1], offset: 1>>
  // expected-error@+1 {{writes into the constant global @lut (its C array is static const); write into a buffer, or drop 'constant' from the memref.global}}
  memref.store %v, %s[%c0] : memref<2xi32, strided<[1], offset: 1>>
  func.return
}
