// RUN: usmp-opt %s --split-input-file --verify-diagnostics

emitc.func @f(%a: i32, %b: f32) {
  %v = "emitc.variable"() <{value = #emitc.opaque<"">}> : () -> !emitc.lvalue<i32>
  // expected-error@+1 {{'emitc.assign' op value of type f32 cannot be assigned to !emitc.lvalue<i32>}}
  emitc.assign %b : f32 to %v : !emitc.lvalue<i32>
  emitc.return
}

// -----

emitc.func @f(%p: !emitc.ptr<f32>, %i: !emitc.ptrdiff_t) {
  // expected-error@+1 {{'emitc.subscript' op pointer subscript takes exactly one index}}
  %0 = emitc.subscript %p[%i, %i] : (!emitc.ptr<f32>, !emitc.ptrdiff_t, !emitc.ptrdiff_t) -> !emitc.lvalue<f32>
  emitc.return
}

// -----

emitc.func @f(%a: i32) {
  // expected-error@+1 {{'emitc.cmp' op predicate 9 is not one of 0..6 (eq, ne, lt, le, gt, ge, three_way)}}
  %0 = "emitc.cmp"(%a, %a) <{predicate = 9 : i64}> : (i32, i32) -> i1
  emitc.return
}

// -----

// expected-error@+1 {{'emitc.global' op cannot have both static and extern specifiers}}
emitc.global extern static @g : i32

// -----

// expected-error@+1 {{'emitc.func' op external function must be private}}
emitc.func @declared(i32)

// -----

emitc.func @f(%a: i32, %b: i64) {
  // expected-error@+1 {{'emitc.for' op lower bound, upper bound and step must have one type}}
  "emitc.for"(%a, %a, %b) ({
  ^bb0(%i: i32):
    emitc.yield
  }) : (i32, i32, i64) -> ()
  emitc.return
}
