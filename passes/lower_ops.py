"""``lower-ops``: primitive functions become tir prim funcs on memrefs.

What it does
    Every ``func.func`` marked ``relay.primitive`` is replaced, under the same
    name, by a ``tir.prim_func`` whose arguments are one memref per input and
    then one for the output, and whose body computes the whole fused group
    in one loop nest over the output (``usmp.lowering.prim_func``): the
    anchor's reduction runs per output element with a scalar accumulator,
    the epilogue is applied in registers, padding is folded into the loop
    bounds, nothing is widened or copied. The ``relay.call``s in main are
    left as they are: they now call a tir prim func whose signature is the
    call's operands followed by its result, which is what ``aot-lower-main``
    consumes.

    After::

        func.func @tvmgen_default_fused_nn_conv2d_add(%x: memref<1x8x8x3xi8>,
            %w: memref<3x3x3x8xi8>, %b: memref<8xi32>, %out: memref<1x8x8x8xi32>)
            attributes {tir.prim_func} {
          scf.for %oh ... { scf.for %ow ... { scf.for %oc ... {
            %acc = scf.for %kh ... iter_args(%a = %c0_i32) -> (i32) { ... }
            %v = arith.addi %acc, <load %b[%oc]>
            memref.store %v, %out[%c0, %oh, %ow, %oc]
          } } }
          func.return
        }

    Scratch: the lowering of every operator needs no temporary buffer (see
    ``docs/operator-scratch.md``). Constants an operator needs beyond
    immediates (per-channel requantisation tables, non-scalar constants
    written inside a primitive function) are ``tir.allocate_const`` at the
    top of the prim func, so ``usmp`` places them in a constant pool.

Requires
    Primitive functions of relay operators (one block, one tensor result,
    static shapes, f32 / i8 / i16 / i32 elements). Anything else is a
    located error.

Patterns
    ``LowerPrimitiveFunction`` (``lowering/prim_func.py``), applied once to
    each function in order (``lowering/pattern_dispatch.rewrite_in_order``,
    a ``PatternRewriteWalker`` without its worklist of every op, errors
    reported as the walker reports them), rewrites each primitive function: memref
    signature, the loop nest over its result (with row statistics before a
    softmax row, unroll-and-jam of a conv2d/dense anchor), and at each
    element stored the code of the element pattern of its producer's
    family (each an xDSL pattern rewriting an element request
    ``lower_ops.element``; the kernel calls the matching one directly, so
    no request is ever built): ``LowerConstantElement`` (``lowering/kernel.py``),
    ``LowerElementwise``, ``LowerQuantization``, ``LowerDataMovement``,
    ``LowerNN`` (conv2d, dense, pooling, mean), ``LowerSoftmax``
    (``lowering/ops_*.py``). A family pattern emits its part of the element
    and requests its operands' elements in turn (an argument's element is
    a plain load, no request), so the whole group is fused into the one
    loop nest, depth first, epilogue in registers, and nothing is
    materialised between operators. Fusion is why the elements are
    computed at once rather than left to the walker: an element of a
    reduction's operand is needed inside the reduction's loops, at the
    index the consumer computes, and the emitted ops are placed by the
    kernel builder's scoped CSE / loop-invariant placement as they are
    built (``lowering/loops.py``). The IR is the same as before the
    patterns (checked with ``benchmarks/c_snapshot.py``).

    Last, each lowered function loses the values it computes and never
    uses (``lowering/dead_code.py``: an accumulator whose epilogue folded to
    a constant, with its loads and loops). The kernel builder placed every
    op of the function and lists those with results, so the function is
    walked for dead code only when one of them has no use (a whole
    operator's lowering, or a CMSIS-NN call, is always walked).

Target
    ``mcpu`` (TVM's ``-mcpu``, e.g. ``cortex-m4``; ``usmp-compile --target
    "c -mcpu=cortex-m4"``) selects kernels for that CPU
    (``lowering/target.py``): on a CPU with Arm's DSP extension, int8
    convolutions, depthwise convolutions and dense layers multiply-accumulate
    two 16-bit pairs per instruction (``lowering/dsp.py``). The loop nests
    keep the same order and stay ``memref.load``/``store`` on the same
    buffers (the overlap analysis traces them as before); the arithmetic is
    ``emitc.call_opaque`` of the ``usmp_*`` helpers the C defines (ACLE
    intrinsics where the C compiler targets the extension, portable C
    elsewhere). Outputs are bit for bit those of the portable kernels. Any
    other CPU (or none) gets the portable kernels. On every CPU, an i32
    requantisation the DSP path does not take is one ``emitc.call_opaque``
    of a ``usmp_mbqm*`` helper (``lowering/requant.py``).

Idempotence
    Once lowered, no function is ``relay.primitive``: a second run changes
    nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    RewritePattern,
    op_type_rewrite_pattern,
)

from usmp.dialects import relay
from usmp.lowering.constant_args import (
    constant_arguments,
    drop_unused_constant_arguments,
)
from usmp.lowering.gc_pause import cyclic_gc_paused
from usmp.lowering.pattern_dispatch import TypeDispatchApplier, rewrite_in_order
from usmp.lowering.prim_func import LowerPrimitiveFunction
from usmp.lowering.target import TargetFeatures
from usmp.passes.progress import report


@dataclass(frozen=True)
class _Reporting(RewritePattern):
    """``lower`` on each primitive function, reported first
    (``usmp.passes.progress``: ``order`` numbers them)."""

    lower: LowerPrimitiveFunction
    order: dict[str, int]

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: func.FuncOp, rewriter: PatternRewriter) -> None:
        name = op.sym_name.data
        if name in self.order:
            report("lowering", self.order[name] + 1, len(self.order), name)
        try:
            self.lower.match_and_rewrite(op, rewriter)
        except Exception as err:  # reported as xDSL's PatternRewriteWalker does
            op.emit_error(f"Error while applying pattern: {err}", underlying_error=err)


@dataclass(frozen=True)
class LowerOpsPass(ModulePass):
    """Replace every ``relay.primitive`` function by a tir prim func that
    computes it in one loop nest on memrefs."""

    name = "lower-ops"

    mcpu: str = ""
    """The CPU to lower for (TVM's ``-mcpu``: ``cortex-m4``, ``cortex-m7``,
    ...); empty or a CPU without special kernels: portable C."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        features = TargetFeatures.of(self.mcpu)
        bound = constant_arguments(op) if features.dsp else {}
        with cyclic_gc_paused():
            lowered = [
                f.sym_name.data
                for f in op.ops
                if isinstance(f, func.FuncOp) and relay.PRIMITIVE in f.attributes
            ]
            lower = LowerPrimitiveFunction(features, bound)
            order = {name: i for i, name in enumerate(lowered)}
            # (the walker's once-each order, without its worklist of every
            # op of the module: only a function's class is tried)
            rewrite_in_order(op.body, TypeDispatchApplier([_Reporting(lower, order)]))
            drop_unused_constant_arguments(op, bound)
