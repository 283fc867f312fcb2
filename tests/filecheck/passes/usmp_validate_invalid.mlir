// RUN: usmp-opt %s -p usmp-validate --split-input-file --verify-diagnostics

// Two storage ids live at the same time share bytes.
builtin.module attributes {tir.pools = [#tir.pool_info<"ws", workspace, size = 24, access = {c = "rw"}>]} {
  func.func private @op(memref<16xi8>, memref<16xi8>) attributes {tir.prim_func}
  // expected-error@+1 {{usmp: the placements recorded in the IR are invalid: buffer 'b' at offset 8 in 'ws' is not aligned to 16 B; conflicting buffers 'a' [0, 16) and 'b' [8, 24) overlap in pool 'ws'}}
  func.func @overlap_main(%x: memref<16xi8>, %y: memref<16xi8>, %ws: memref<24xi8>) attributes {tir.prim_func, tir.main, tir.pool_args = ["ws"]} {
    %c0 = arith.constant 0 : index
    %a = memref.view %ws[%c0][] : memref<24xi8> to memref<16xi8>
    %c8 = arith.constant 8 : index
    %b = memref.view %ws[%c8][] : memref<24xi8> to memref<16xi8>
    tir.call @op(%x, %a) : (memref<16xi8>, memref<16xi8>) -> ()
    tir.call @op(%a, %b) : (memref<16xi8>, memref<16xi8>) -> ()
    tir.call @op(%b, %y) : (memref<16xi8>, memref<16xi8>) -> ()
    func.return
  }
}

// -----

// An operator's scratch overlaps an argument of the call it runs in.
builtin.module attributes {tir.pools = [#tir.pool_info<"ws", workspace, size = 32, access = {c = "rw"}>]} {
  func.func @op(%in: memref<16xi8>, %out: memref<16xi8>, %ws: memref<32xi8>) attributes {tir.prim_func, tir.pool_args = ["ws"]} {
    %c0 = arith.constant 0 : index
    %tmp = memref.view %ws[%c0][] : memref<32xi8> to memref<16xi8>
    func.return
  }
  // expected-error@+1 {{usmp: the placements recorded in the IR are invalid: conflicting buffers 'sid' [0, 16) and 'op/tmp' [0, 16) overlap in pool 'ws'}}
  func.func @scratch_main(%x: memref<16xi8>, %y: memref<16xi8>, %ws: memref<32xi8>) attributes {tir.prim_func, tir.main, tir.pool_args = ["ws"]} {
    %c0 = arith.constant 0 : index
    %sid = memref.view %ws[%c0][] : memref<32xi8> to memref<16xi8>
    tir.call @op(%x, %sid, %ws) : (memref<16xi8>, memref<16xi8>, memref<32xi8>) -> ()
    tir.call @op(%sid, %y, %ws) : (memref<16xi8>, memref<16xi8>, memref<32xi8>) -> ()
    func.return
  }
}

// -----

// An output in the workspace must survive until main returns: a storage id
// written after it may not reuse its bytes.
builtin.module attributes {tir.pools = [#tir.pool_info<"ws", workspace, size = 16, access = {c = "rw"}>]} {
  func.func private @op(memref<16xi8>, memref<16xi8>) attributes {tir.prim_func}
  // expected-error@+1 {{usmp: the placements recorded in the IR are invalid: conflicting buffers 'y' [0, 16) and 'sid' [0, 16) overlap in pool 'ws'}}
  func.func @io_main(%x: memref<16xi8>, %ws: memref<16xi8>) attributes {tir.prim_func, tir.main, tir.input_names = ["x"], tir.output_names = ["y"], tir.pool_args = ["ws"], tir.input_allocations = [], tir.output_allocations = [#tir.pool_allocation<"ws", 0>], tir.input_types = [], tir.output_types = [memref<16xi8>]} {
    %c0 = arith.constant 0 : index
    %y = memref.view %ws[%c0][] : memref<16xi8> to memref<16xi8>
    %c0_1 = arith.constant 0 : index
    %sid = memref.view %ws[%c0_1][] : memref<16xi8> to memref<16xi8>
    tir.call @op(%x, %y) : (memref<16xi8>, memref<16xi8>) -> ()
    tir.call @op(%x, %sid) : (memref<16xi8>, memref<16xi8>) -> ()
    func.return
  }
}

// -----

// A buffer in a pool its target cannot write, and past the pool's end.
builtin.module attributes {tir.pools = [#tir.pool_info<"ws", workspace, size = 16, access = {c = "rw"}>, #tir.pool_info<"npu", workspace, size = 16, access = {npu = "rw"}>]} {
  func.func private @op(memref<16xi8>, memref<16xi8>) attributes {tir.prim_func}
  // expected-error@+1 {{usmp: the placements recorded in the IR are invalid: buffer 'b' placed in pool 'npu', not one of its candidates (ws); buffer 'b' [16, 32) exceeds pool 'npu' limit of 16 B}}
  func.func @bounds_main(%x: memref<16xi8>, %y: memref<16xi8>, %ws: memref<16xi8>, %npu: memref<16xi8>) attributes {tir.prim_func, tir.main, tir.pool_args = ["ws", "npu"]} {
    %c16 = arith.constant 16 : index
    %b = memref.view %npu[%c16][] : memref<16xi8> to memref<16xi8>
    func.return
  }
}

// -----

builtin.module attributes {tir.pools = [#tir.pool_info<"ws", workspace, size = 16, access = {c = "rw"}>]} {
  func.func private @op(memref<16xi8>, memref<16xi8>) attributes {tir.prim_func}
  // expected-error@+1 {{usmp: the placements recorded in the IR are invalid: buffer 'a' [16, 32) exceeds pool 'ws' limit of 16 B}}
  func.func @past_main(%x: memref<16xi8>, %y: memref<16xi8>, %ws: memref<16xi8>) attributes {tir.prim_func, tir.main, tir.pool_args = ["ws"]} {
    %c16 = arith.constant 16 : index
    %a = memref.view %ws[%c16][] : memref<16xi8> to memref<16xi8>
    tir.call @op(%x, %a) : (memref<16xi8>, memref<16xi8>) -> ()
    func.return
  }
}

// -----

func.func @dynamic_main(%i: index, %ws: memref<16xi8>) attributes {tir.prim_func, tir.main, tir.pool_args = ["global_workspace"]} {
  // expected-error@+1 {{a view into pool 'global_workspace' at a dynamic offset or with dynamic sizes cannot be checked; usmp writes constant offsets and static shapes}}
  %a = memref.view %ws[%i][] : memref<16xi8> to memref<4xi8>
  func.return
}

// -----

func.func @unplanned_main() attributes {tir.prim_func, tir.main} {
  // expected-error@+1 {{buffer 'sid_0' has no pool_allocation: the module is not planned (run usmp-plan-memory or usmp first)}}
  %0 = tir.allocate {name_hint = "sid_0"} : memref<4xi8>
  func.return
}

// -----

// expected-error@+1 {{usmp: the module has no buffers, there is no plan to check}}
func.func @empty_main() attributes {tir.prim_func, tir.main} {
  func.return
}

// -----

// A hand-made plan puts a transpose's output on its input (in place): the
// transpose writes its first row before reading its input's last column, so
// the allowed overlap (its output at least 49 bytes below its input) does
// not cover it. The relu in place before it is fine.
builtin.module attributes {tir.pools = [#tir.pool_info<"ws", workspace, size = 64, access = {c = "rw"}>]} {
  func.func @relu(%in: memref<8x8xi8>, %out: memref<8x8xi8>) attributes {tir.prim_func} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    %z = arith.constant 0 : i8
    scf.for %i = %c0 to %c8 step %c1 {
      scf.for %j = %c0 to %c8 step %c1 {
        %v = memref.load %in[%i, %j] : memref<8x8xi8>
        %r = arith.maxsi %v, %z : i8
        memref.store %r, %out[%i, %j] : memref<8x8xi8>
      }
    }
    func.return
  }
  func.func @transpose(%in: memref<8x8xi8>, %out: memref<8x8xi8>) attributes {tir.prim_func} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    scf.for %i = %c0 to %c8 step %c1 {
      scf.for %j = %c0 to %c8 step %c1 {
        %v = memref.load %in[%j, %i] : memref<8x8xi8>
        memref.store %v, %out[%i, %j] : memref<8x8xi8>
      }
    }
    func.return
  }
  // expected-error@+1 {{usmp: the placements recorded in the IR are invalid: conflicting buffers 'sid_0' [0, 64) and 'sid_1' [0, 64) overlap in pool 'ws'}}
  func.func @main(%x: memref<8x8xi8>, %y: memref<8x8xi8>) attributes {tir.prim_func, tir.main, tir.input_names = ["x"], tir.output_names = ["y"]} {
    %0 = tir.allocate {name_hint = "sid_0", pool_allocation = #tir.pool_allocation<"ws", 0>} : memref<8x8xi8>
    %1 = tir.allocate {name_hint = "sid_1", pool_allocation = #tir.pool_allocation<"ws", 0>} : memref<8x8xi8>
    tir.call @relu(%x, %0) : (memref<8x8xi8>, memref<8x8xi8>) -> ()
    tir.call @transpose(%0, %1) : (memref<8x8xi8>, memref<8x8xi8>) -> ()
    tir.call @relu(%1, %y) : (memref<8x8xi8>, memref<8x8xi8>) -> ()
    func.return
  }
}

// -----

// A model output read by a later operator whose output was placed on it: the
// output is not dying there (the caller reads it after the run), so no
// overlap allows it.
builtin.module attributes {tir.pools = [#tir.pool_info<"ws", workspace, size = 8, alignment = 1, access = {c = rw}>]} {
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
  // expected-error@+1 {{usmp: the placements recorded in the IR are invalid: conflicting buffers 'y0' [0, 4) and 'y1' [0, 4) overlap in pool 'ws'}}
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

// Two states sharing bytes of the persistent pool.
builtin.module attributes {tir.pools = [#tir.pool_info<"st", persistent, size = 4, access = {c = rw}>]} {
  func.func private @accumulate(memref<4xi8>, memref<4xi8>, memref<4xi8>) attributes {tir.prim_func}
  // expected-error@+1 {{usmp: the placements recorded in the IR are invalid: conflicting buffers 'state' [0, 4) and 'state_1' [0, 4) overlap in pool 'st'}}
  func.func @states_main(%x: memref<4xi8>, %y: memref<4xi8>, %st: memref<4xi8>) attributes {tir.prim_func, tir.main, tir.input_names = ["x"], tir.output_names = ["y"], tir.pool_args = ["st"], tir.states = [{name = "state_0", pool = "st", offset = 0 : index, value = dense<0> : tensor<4xi8>}, {name = "state_1", pool = "st", offset = 0 : index, value = dense<0> : tensor<4xi8>}]} {
    %c0 = arith.constant 0 : index
    %state_0 = memref.view %st[%c0][] : memref<4xi8> to memref<4xi8>
    %state_1 = memref.view %st[%c0][] : memref<4xi8> to memref<4xi8>
    tir.call @accumulate(%x, %state_0, %y) : (memref<4xi8>, memref<4xi8>, memref<4xi8>) -> ()
    tir.call @accumulate(%x, %state_1, %y) : (memref<4xi8>, memref<4xi8>, memref<4xi8>) -> ()
    func.return
  }
}

// -----

// An alias's bytes reused while it is still read: the slice '%tail' of 'a'
// keeps 'a' live until its read, and 'b' was placed on those bytes.
builtin.module attributes {tir.pools = [#tir.pool_info<"ws", workspace, size = 8, alignment = 1, access = {c = rw}>]} {
  func.func private @copy(memref<4xi8>, memref<4xi8>) attributes {tir.prim_func}
  func.func private @copy2(memref<2xi8, strided<[1], offset: 2>>, memref<2xi8>) attributes {tir.prim_func}
  // expected-error@+1 {{usmp: the placements recorded in the IR are invalid: conflicting buffers 'a' [0, 4) and 'b' [2, 6) overlap in pool 'ws'}}
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
  // expected-error@+1 {{usmp: the placements recorded in the IR are invalid: conflicting buffers 'sid' [0, 4) and 'twice/s' [0, 4) overlap in pool 'ws'}}
  func.func @statements_main(%x: memref<4xi8>, %y: memref<4xi8>, %ws: memref<16xi8>) attributes {tir.prim_func, tir.main, tir.pool_args = ["ws"], tir.input_names = ["x"], tir.output_names = ["y"]} {
    %c0 = arith.constant 0 : index
    %sid_0 = memref.view %ws[%c0][] : memref<16xi8> to memref<4xi8>
    tir.call @copy(%x, %sid_0) : (memref<4xi8>, memref<4xi8>) -> ()
    tir.call @twice(%sid_0, %y, %ws) : (memref<4xi8>, memref<4xi8>, memref<16xi8>) -> ()
    func.return
  }
}
