// RUN: usmp-opt %s -p usmp-replay --split-input-file --verify-diagnostics

// A model output overwritten by a later operator (workspace I/O): 'y0' is
// read by the second operator, whose output 'y1' was placed on it.
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
  // expected-error@+1 {{usmp-replay: the memory plan is unsafe: the caller reads, when run 1 ends, output 'y0' byte(s) 0-3, which hold output 'y1' written by step 1 'copy' in run 1 instead}}
  func.func @output_main(%ws: memref<8xi8>) attributes {tir.prim_func, tir.main, tir.input_names = ["x"], tir.output_names = ["y0", "y1"], tir.pool_args = ["ws"], tir.input_allocations = [#tir.pool_allocation<"ws", 4>], tir.output_allocations = [#tir.pool_allocation<"ws", 0>, #tir.pool_allocation<"ws", 0>], tir.input_types = [memref<4xi8>], tir.output_types = [memref<4xi8>, memref<4xi8>]} {
    %c4 = arith.constant 4 : index
    %x = memref.view %ws[%c4][] : memref<8xi8> to memref<4xi8>
    %c0 = arith.constant 0 : index
    %y0 = memref.view %ws[%c0][] : memref<8xi8> to memref<4xi8>
    %y1 = memref.view %ws[%c0][] : memref<8xi8> to memref<4xi8>
    tir.call @copy(%x, %y0) : (memref<4xi8>, memref<4xi8>) -> ()
    tir.call @copy(%y0, %y1) : (memref<4xi8>, memref<4xi8>) -> ()
    func.return
  }
}

// -----

// A model output (the caller's buffer) is fine, but an intermediate placed
// on the input is written before the last read of the input.
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
  // expected-error@+1 {{usmp-replay: the memory plan is unsafe: step 2 'copy' reads input 'x' byte(s) 0-3, which hold buffer 'b' written by step 1 'copy' in run 1 instead}}
  func.func @input_main(%y: memref<4xi8>, %ws: memref<8xi8>) attributes {tir.prim_func, tir.main, tir.input_names = ["x"], tir.output_names = ["y"], tir.pool_args = ["ws"], tir.input_allocations = [#tir.pool_allocation<"ws", 0>], tir.output_allocations = [], tir.input_types = [memref<4xi8>], tir.output_types = []} {
    %c0 = arith.constant 0 : index
    %x = memref.view %ws[%c0][] : memref<8xi8> to memref<4xi8>
    %c4 = arith.constant 4 : index
    %a = memref.view %ws[%c4][] : memref<8xi8> to memref<4xi8>
    %b = memref.view %ws[%c0][] : memref<8xi8> to memref<4xi8>
    tir.call @copy(%x, %a) : (memref<4xi8>, memref<4xi8>) -> ()
    tir.call @copy(%a, %b) : (memref<4xi8>, memref<4xi8>) -> ()
    tir.call @copy(%x, %y) : (memref<4xi8>, memref<4xi8>) -> ()
    func.return
  }
}

// -----

// A state clobbered: the planner put it in the workspace, which another model
// may use between runs: the second run reads what is left there.
builtin.module attributes {tir.pools = [#tir.pool_info<"ws", workspace, size = 4, access = {c = rw}>]} {
  func.func @accumulate(%x: memref<4xi8>, %s: memref<4xi8>, %y: memref<4xi8>) attributes {tir.prim_func} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    scf.for %i = %c0 to %c4 step %c1 {
      %a = memref.load %x[%i] : memref<4xi8>
      %b = memref.load %s[%i] : memref<4xi8>
      %c = arith.addi %a, %b : i8
      memref.store %c, %s[%i] : memref<4xi8>
      memref.store %c, %y[%i] : memref<4xi8>
    }
    func.return
  }
  // expected-error@+1 {{usmp-replay: the memory plan is unsafe: run 2 reads state 'state_0' byte(s) 0-3, which hold bytes from before the run (not written in it) instead}}
  func.func @state_main(%x: memref<4xi8>, %y: memref<4xi8>, %ws: memref<4xi8>) attributes {tir.prim_func, tir.main, tir.input_names = ["x"], tir.output_names = ["y"], tir.pool_args = ["ws"], tir.states = [{name = "state_0", pool = "ws", offset = 0 : index, value = dense<0> : tensor<4xi8>}]} {
    %c0 = arith.constant 0 : index
    %s = memref.view %ws[%c0][] : memref<4xi8> to memref<4xi8>
    tir.call @accumulate(%x, %s, %y) : (memref<4xi8>, memref<4xi8>, memref<4xi8>) -> ()
    func.return
  }
}

// -----

// Two states sharing bytes: init() writes one initial value over the other,
// each run reads the other state's value, the next run too.
builtin.module attributes {tir.pools = [#tir.pool_info<"st", persistent, size = 4, access = {c = rw}>]} {
  func.func @accumulate(%x: memref<4xi8>, %s: memref<4xi8>, %y: memref<4xi8>) attributes {tir.prim_func} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    scf.for %i = %c0 to %c4 step %c1 {
      %a = memref.load %x[%i] : memref<4xi8>
      %b = memref.load %s[%i] : memref<4xi8>
      %c = arith.addi %a, %b : i8
      memref.store %c, %s[%i] : memref<4xi8>
      memref.store %c, %y[%i] : memref<4xi8>
    }
    func.return
  }
  // expected-error@+1 {{usmp-replay: the memory plan is unsafe: step 0 'accumulate' reads state 'state_0' byte(s) 0-3, which hold the initial value of state 'state_1' instead; step 1 'accumulate' reads state 'state_1' byte(s) 0-3, which hold state 'state_0' written by step 0 'accumulate' in run 1 instead; run 2 reads state 'state_0' byte(s) 0-3, which hold state 'state_1' written by step 1 'accumulate' in run 1 instead}}
  func.func @states_main(%x: memref<4xi8>, %y: memref<4xi8>, %st: memref<4xi8>) attributes {tir.prim_func, tir.main, tir.input_names = ["x"], tir.output_names = ["y"], tir.pool_args = ["st"], tir.states = [{name = "state_0", pool = "st", offset = 0 : index, value = dense<0> : tensor<4xi8>}, {name = "state_1", pool = "st", offset = 0 : index, value = dense<0> : tensor<4xi8>}]} {
    %c0 = arith.constant 0 : index
    %s0 = memref.view %st[%c0][] : memref<4xi8> to memref<4xi8>
    %s1 = memref.view %st[%c0][] : memref<4xi8> to memref<4xi8>
    tir.call @accumulate(%x, %s0, %y) : (memref<4xi8>, memref<4xi8>, memref<4xi8>) -> ()
    tir.call @accumulate(%x, %s1, %y) : (memref<4xi8>, memref<4xi8>, memref<4xi8>) -> ()
    func.return
  }
}

// -----

// An alias written through: the slice '%tail' (bytes 2-3 of 'a') is still to
// be read when 'b', placed on those bytes, is written.
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
  func.func @copy2(%in: memref<2xi8>, %out: memref<2xi8>) attributes {tir.prim_func} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    scf.for %i = %c0 to %c2 step %c1 {
      %v = memref.load %in[%i] : memref<2xi8>
      memref.store %v, %out[%i] : memref<2xi8>
    }
    func.return
  }
  // expected-error@+1 {{usmp-replay: the memory plan is unsafe: step 2 'copy2' reads buffer 'a' byte(s) 2-3, which hold buffer 'b' written by step 1 'copy' in run 1 instead}}
  func.func @alias_main(%x: memref<4xi8>, %y: memref<2xi8>, %ws: memref<8xi8>) attributes {tir.prim_func, tir.main, tir.input_names = ["x"], tir.output_names = ["y"], tir.pool_args = ["ws"]} {
    %c0 = arith.constant 0 : index
    %a = memref.view %ws[%c0][] : memref<8xi8> to memref<4xi8>
    %c2 = arith.constant 2 : index
    %b = memref.view %ws[%c2][] : memref<8xi8> to memref<4xi8>
    tir.call @copy(%x, %a) : (memref<4xi8>, memref<4xi8>) -> ()
    %tail = memref.reinterpret_cast %a to offset: [2], sizes: [2], strides: [1] : memref<4xi8> to memref<2xi8, strided<[1], offset: 2>>
    tir.call @copy(%x, %b) : (memref<4xi8>, memref<4xi8>) -> ()
    tir.call @copy2(%tail, %y) : (memref<2xi8, strided<[1], offset: 2>>, memref<2xi8>) -> ()
    func.return
  }
}

// -----

// An output placed on its input where the kernel's order forbids it: the
// reversal writes out[0] before it reads in[0].
builtin.module attributes {tir.pools = [#tir.pool_info<"ws", workspace, size = 4, access = {c = rw}>]} {
  func.func @reverse(%in: memref<4xi8>, %out: memref<4xi8>) attributes {tir.prim_func} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c3 = arith.constant 3 : index
    %c4 = arith.constant 4 : index
    scf.for %i = %c0 to %c4 step %c1 {
      %j = arith.subi %c3, %i : index
      %v = memref.load %in[%j] : memref<4xi8>
      memref.store %v, %out[%i] : memref<4xi8>
    }
    func.return
  }
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
  // expected-error@+1 {{usmp-replay: the memory plan is unsafe: step 1 'reverse' reads buffer 'a' byte(s) 0-1, which hold buffer 'b' written by step 1 'reverse' in run 1 instead}}
  func.func @order_main(%x: memref<4xi8>, %y: memref<4xi8>, %ws: memref<4xi8>) attributes {tir.prim_func, tir.main, tir.input_names = ["x"], tir.output_names = ["y"], tir.pool_args = ["ws"]} {
    %c0 = arith.constant 0 : index
    %a = memref.view %ws[%c0][] : memref<4xi8> to memref<4xi8>
    %b = memref.view %ws[%c0][] : memref<4xi8> to memref<4xi8>
    tir.call @copy(%x, %a) : (memref<4xi8>, memref<4xi8>) -> ()
    tir.call @reverse(%a, %b) : (memref<4xi8>, memref<4xi8>) -> ()
    tir.call @copy(%b, %y) : (memref<4xi8>, memref<4xi8>) -> ()
    func.return
  }
}

// -----

// An operator's scratch placed on the input of its call.
builtin.module attributes {tir.pools = [#tir.pool_info<"ws", workspace, size = 4, access = {c = rw}>]} {
  func.func @twice(%in: memref<4xi8>, %out: memref<4xi8>, %ws: memref<4xi8>) attributes {tir.prim_func, tir.pool_args = ["ws"]} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %tmp = memref.view %ws[%c0][] : memref<4xi8> to memref<4xi8>
    scf.for %i = %c0 to %c4 step %c1 {
      %v = memref.load %in[%i] : memref<4xi8>
      memref.store %v, %tmp[%i] : memref<4xi8>
    }
    scf.for %i = %c0 to %c4 step %c1 {
      %v = memref.load %tmp[%i] : memref<4xi8>
      %w = memref.load %in[%i] : memref<4xi8>
      %s = arith.addi %v, %w : i8
      memref.store %s, %out[%i] : memref<4xi8>
    }
    func.return
  }
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
  // expected-error@+1 {{usmp-replay: the memory plan is unsafe: step 1 'twice': the operator's accesses to buffer 'a' and scratch buffer 'twice/tmp' interleave at a byte they share (one is written before the other's last access)}}
  func.func @scratch_main(%x: memref<4xi8>, %y: memref<4xi8>, %ws: memref<4xi8>) attributes {tir.prim_func, tir.main, tir.input_names = ["x"], tir.output_names = ["y"], tir.pool_args = ["ws"]} {
    %c0 = arith.constant 0 : index
    %a = memref.view %ws[%c0][] : memref<4xi8> to memref<4xi8>
    tir.call @copy(%x, %a) : (memref<4xi8>, memref<4xi8>) -> ()
    tir.call @twice(%a, %y, %ws) : (memref<4xi8>, memref<4xi8>, memref<4xi8>) -> ()
    func.return
  }
}

// -----

// An operator writes the constant pool.
builtin.module attributes {tir.pools = [#tir.pool_info<"flash", constant, size = 4, access = {c = ro}>]} {
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
  // expected-error@+1 {{usmp-replay: the memory plan is unsafe: step 0 'copy': writes constant 'w'}}
  func.func @constant_main(%x: memref<4xi8>, %y: memref<4xi8>, %flash: memref<4xi8>) attributes {tir.prim_func, tir.main, tir.input_names = ["x"], tir.output_names = ["y"], tir.pool_args = ["flash"]} {
    %c0 = arith.constant 0 : index
    %w = memref.view %flash[%c0][] : memref<4xi8> to memref<4xi8>
    tir.call @copy(%x, %w) : (memref<4xi8>, memref<4xi8>) -> ()
    tir.call @copy(%w, %y) : (memref<4xi8>, memref<4xi8>) -> ()
    func.return
  }
}

// -----

// Liveness per statement, wrongly applied: @twice reads its input in its
// first loop (into the scratch, reversed) and again in its second, so the
// scratch must not share the input's bytes; here it does (both at offset 0).
// Liveness per statement, wrongly applied: @twice reads its input in its
// first loop (into the scratch) and again in its second, so the scratch must
// not share the input's bytes; here it does (both at offset 0).
builtin.module attributes {tir.pools = [#tir.pool_info<"ws", workspace, size = 16, access = {c = "rw"}>]} {
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
  func.func @twice(%in: memref<4xi8>, %out: memref<4xi8>, %ws: memref<16xi8>) attributes {tir.prim_func, tir.pool_args = ["ws"]} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c3 = arith.constant 3 : index
    %c4 = arith.constant 4 : index
    %s = memref.view %ws[%c0][] : memref<16xi8> to memref<4xi8>
    scf.for %i = %c0 to %c4 step %c1 {
      %j = arith.subi %c3, %i : index
      %v = memref.load %in[%i] : memref<4xi8>
      memref.store %v, %s[%j] : memref<4xi8>
    }
    scf.for %i = %c0 to %c4 step %c1 {
      %a = memref.load %s[%i] : memref<4xi8>
      %b = memref.load %in[%i] : memref<4xi8>
      %v = arith.addi %a, %b : i8
      memref.store %v, %out[%i] : memref<4xi8>
    }
    func.return
  }
  // expected-error@+1 {{usmp-replay: the memory plan is unsafe: step 1 'twice': the operator's accesses to buffer 'sid' and scratch buffer 'twice/s' interleave at a byte they share}}
  func.func @statements_main(%x: memref<4xi8>, %y: memref<4xi8>, %ws: memref<16xi8>) attributes {tir.prim_func, tir.main, tir.pool_args = ["ws"], tir.input_names = ["x"], tir.output_names = ["y"]} {
    %c0 = arith.constant 0 : index
    %sid_0 = memref.view %ws[%c0][] : memref<16xi8> to memref<4xi8>
    tir.call @copy(%x, %sid_0) : (memref<4xi8>, memref<4xi8>) -> ()
    tir.call @twice(%sid_0, %y, %ws) : (memref<4xi8>, memref<4xi8>, memref<16xi8>) -> ()
    func.return
  }
}

// -----

// A stage consuming its input in place (usmp_buffer_info_consumed_input.mlir),
// broken: the first stripe's output 'sid' is placed over the input's rows
// 5..7 (x + 80), which the second stripe still reads at step 1.
builtin.module attributes {tir.pools = [#tir.pool_info<"global_workspace", workspace, size = 272, alignment = 16, access = {c = rw}>, #tir.pool_info<"global_const", constant, size = 0, alignment = 16, access = {c = ro}>]} {
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
  // expected-error@+1 {{usmp-replay: the memory plan is unsafe: step 1 'rows' reads input 'x' byte(s) 80-127, which hold buffer 'sid' written by step 0 'rows' in run 1 instead}}
  func.func @main(%global_workspace: memref<272xi8>) attributes {tir.prim_func, tir.main, tir.input_names = ["x"], tir.output_names = ["y"], tir.pool_args = ["global_workspace"], tir.input_allocations = [#tir.pool_allocation<"global_workspace", 112>], tir.output_allocations = [#tir.pool_allocation<"global_workspace", 16>], tir.input_types = [memref<8x16xi8>], tir.output_types = [memref<2x16xi8>]} {
    %0 = arith.constant 112 : index
    %x = memref.view %global_workspace[%0][] : memref<272xi8> to memref<8x16xi8>
    %1 = arith.constant 16 : index
    %y = memref.view %global_workspace[%1][] : memref<272xi8> to memref<2x16xi8>
    %2 = arith.constant 192 : index
    %sid = memref.view %global_workspace[%2][] : memref<272xi8> to memref<5x16xi8>
    %3 = arith.constant 80 : index
    %sid_1 = memref.view %global_workspace[%3][] : memref<272xi8> to memref<5x16xi8>
    %top = memref.reinterpret_cast %x to offset: [0], sizes: [5, 16], strides: [16, 1] : memref<8x16xi8> to memref<5x16xi8>
    %bottom = memref.reinterpret_cast %x to offset: [48], sizes: [5, 16], strides: [16, 1] : memref<8x16xi8> to memref<5x16xi8, strided<[16, 1], offset: 48>>
    tir.call @rows(%top, %sid) : (memref<5x16xi8>, memref<5x16xi8>) -> ()
    tir.call @rows(%bottom, %sid_1) : (memref<5x16xi8, strided<[16, 1], offset: 48>>, memref<5x16xi8>) -> ()
    tir.call @join(%sid, %sid_1, %y) : (memref<5x16xi8>, memref<5x16xi8>, memref<2x16xi8>) -> ()
    func.return
  }
}

