"""The enumerating kernel tracer (``usmp_kernel_trace``), on which the overlap
analysis and the whole-plan replay rest, against an independent model of the
same kernels from their access functions (``usmp.testing.access_model``:
integer programs over the loop variables, no enumeration). The overlap shifts
in both loop directions and the written-once check must agree exactly."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects import func
from xdsl.dialects.builtin import MemRefType

from usmp.dialects import new_context
from usmp.parsing import LocatingParser
from usmp.passes.usmp_kernel_trace import (
    TracedFacts,
    max_shift,
    min_shift,
    trace_kernel_with_counts,
    written_arguments,
)
from usmp.testing.access_model import SymbolicKernel, Unsupported
from usmp.testing.fuzz_graphs import generate_from_seed
from usmp.testing.run_c import run_pipeline
from usmp.tools.c_library import load

MAX_PROGRAMS = 40
"""Kernels needing more integer programs than this are skipped (time)."""


def _compare(f: func.FuncOp) -> int:
    """Pairs compared (0 if the kernel is too large for the suite)."""
    args = [i for i, a in enumerate(f.args) if isinstance(a.type, MemRefType)]
    outs = sorted(written_arguments(f))
    ins = [i for i in args if i not in outs]
    compared = 0
    for reverse in (False, True):
        traced = trace_kernel_with_counts(f, args, reverse=reverse)
        try:
            model = SymbolicKernel(f, reverse=reverse)
        except Unsupported:
            continue
        reads = {i: sum(not a.write for a in model.accesses.get(i, [])) for i in ins}
        writes = {i: sum(a.write for a in model.accesses.get(i, [])) for i in outs}
        for s in ins:
            for d in outs:
                if reads[s] * writes[d] * 2 > MAX_PROGRAMS:
                    continue
                if traced is None or s not in traced[0] or d not in traced[0]:
                    continue
                want = (
                    max_shift(traced[0][s], traced[0][d]),
                    min_shift(traced[0][s], traced[0][d]),
                )
                got = model.shifts(s, d)
                if got is None:
                    continue
                assert got == want, (f.sym_name.data, reverse, s, d)
                compared += 1
        if traced is not None and sum(writes.values()) ** 2 <= MAX_PROGRAMS:
            once = model.written_once(outs)
            if once is not None:
                independent = TracedFacts(*traced).independent()
                assert once == independent, (f.sym_name.data, reverse)
    return compared


@pytest.mark.parametrize("first", [0, 12])
def test_model_agrees_with_the_tracer_on_fuzzed_kernels(first: int) -> None:
    """Every kernel of 12 fuzzed graphs (convolutions with padding and
    strides, depthwise, pooling, dense, softmax, slices, data movement)."""
    compared = 0
    for seed in range(first, first + 12):
        case = generate_from_seed(seed)
        module = run_pipeline(
            load(case.text), f"fuse-ops{{max_depth={case.max_depth}}},lower-ops"
        )
        for f in module.ops:
            if isinstance(f, func.FuncOp) and f.body.blocks:
                compared += _compare(f)
    assert compared > 20


KERNELS = """
func.func @reverse(%in: memref<6xi8>, %out: memref<6xi8>) attributes {tir.prim_func} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c5 = arith.constant 5 : index
  %c6 = arith.constant 6 : index
  scf.for %i = %c0 to %c6 step %c1 {
    %j = arith.subi %c5, %i : index
    %v = memref.load %in[%j] : memref<6xi8>
    memref.store %v, %out[%i] : memref<6xi8>
  }
  func.return
}
func.func @twice(%in: memref<6xi8>, %out: memref<3xi8>) attributes {tir.prim_func} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c6 = arith.constant 6 : index
  scf.for %i = %c0 to %c6 step %c1 {
    %h = arith.divsi %i, %c2 : index
    %v = memref.load %in[%i] : memref<6xi8>
    memref.store %v, %out[%h] : memref<3xi8>
  }
  func.return
}
func.func @padded(%in: memref<5xi16>, %out: memref<5xi16>) attributes {tir.prim_func} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c5 = arith.constant 5 : index
  %c0_i16 = arith.constant 0 : i16
  scf.for %i = %c0 to %c5 step %c1 {
    %lo = arith.subi %c1, %i : index
    %lb = arith.maxsi %lo, %c0 : index
    %hi0 = arith.subi %c5, %i : index
    %hi1 = arith.addi %hi0, %c1 : index
    %ub = arith.minsi %hi1, %c3 : index
    %s = scf.for %k = %lb to %ub step %c1 iter_args(%acc = %c0_i16) -> (i16) {
      %x = arith.addi %i, %k : index
      %y = arith.subi %x, %c1 : index
      %v = memref.load %in[%y] : memref<5xi16>
      %a = arith.addi %acc, %v : i16
      scf.yield %a : i16
    }
    memref.store %s, %out[%i] : memref<5xi16>
  }
  func.return
}
"""


def test_model_on_hand_written_kernels() -> None:
    """A reversal (no in-place overlap below), an element written twice
    (never reversible), a padded 3-tap window with two-byte elements."""
    module = LocatingParser(new_context(), KERNELS, "k.mlir").parse_module()
    fs = {f.sym_name.data: f for f in module.ops if isinstance(f, func.FuncOp)}
    # out[i] = in[5 - i]: the write of out[i] precedes the reads of in[4 - i]
    # and below: out may start 5 bytes below in, or 5 above
    assert SymbolicKernel(fs["reverse"]).shifts(0, 1) == (-5, 5)
    assert SymbolicKernel(fs["twice"]).written_once([1]) is False
    assert SymbolicKernel(fs["reverse"]).written_once([1]) is True
    for f in fs.values():
        _compare(f)
    traced = trace_kernel_with_counts(fs["padded"], [0, 1])
    assert traced is not None
    got = SymbolicKernel(fs["padded"]).shifts(0, 1)
    assert got == (
        max_shift(traced[0][0], traced[0][1]),
        min_shift(traced[0][0], traced[0][1]),
    )
    assert np.array_equal(traced[1][1], np.ones(10, np.int64))
