"""``usmp_kernel_trace.written_arguments``: the memref arguments a kernel may
write, which the planner's traces and the replay both rely on (an argument
missed here is one whose writes nobody checks)."""

from __future__ import annotations

from xdsl.dialects import func

from usmp.dialects import new_context
from usmp.parsing import LocatingParser
from usmp.passes.usmp_kernel_trace import written_arguments

_KERNELS = """
builtin.module {
  func.func @k(%loaded: memref<4xi8>, %stored: memref<4xi8>, %via_view: memref<2x2xi8>, %view_read: memref<2x2xi8>, %view_of_view: memref<2x2xi8>, %escapes: memref<4xi8>, %n: index) attributes {tir.prim_func} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %flat = memref.reinterpret_cast %via_view to offset: [0], sizes: [4], strides: [1] : memref<2x2xi8> to memref<4xi8>
    %seen = memref.reinterpret_cast %view_read to offset: [0], sizes: [4], strides: [1] : memref<2x2xi8> to memref<4xi8>
    %once = memref.reinterpret_cast %view_of_view to offset: [0], sizes: [4], strides: [1] : memref<2x2xi8> to memref<4xi8>
    %twice = memref.reinterpret_cast %once to offset: [0], sizes: [2, 2], strides: [2, 1] : memref<4xi8> to memref<2x2xi8>
    scf.for %i = %c0 to %c4 step %c1 {
      %v = memref.load %loaded[%i] : memref<4xi8>
      %w = memref.load %seen[%i] : memref<4xi8>
      memref.store %v, %stored[%i] : memref<4xi8>
      memref.store %w, %flat[%i] : memref<4xi8>
    }
    %z = arith.constant 0 : i8
    memref.store %z, %twice[%c0, %c1] : memref<2x2xi8>
    func.call @opaque(%escapes) : (memref<4xi8>) -> ()
    func.return
  }
  func.func private @opaque(memref<4xi8>) -> ()
  func.func private @declared(memref<4xi8>) -> ()
}
"""


def _functions() -> dict[str, func.FuncOp]:
    module = LocatingParser(new_context(), _KERNELS, "k.mlir").parse_module()
    return {f.sym_name.data: f for f in module.ops if isinstance(f, func.FuncOp)}


def test_stores_direct_and_through_views_and_unmodelled_uses() -> None:
    """Stored directly (1), through a view (2), through a view of a view
    (4), passed to an op the tracer does not model (5); only loaded (0),
    loaded through a view (3) and the index (6) are not written."""
    assert written_arguments(_functions()["k"]) == frozenset({1, 2, 4, 5})


def test_a_declaration_writes_nothing_it_can_show() -> None:
    assert written_arguments(_functions()["declared"]) == frozenset()
