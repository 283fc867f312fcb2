"""``partition-cmsis-nn``: primitive functions CMSIS-NN can compute go to
the ``cmsis-nn`` target (TVM's ``partition_for_cmsisnn``).

What it does
    Every host primitive function ``fuse-ops`` made that is one CMSIS-NN
    call (``usmp.lowering.cmsis_nn.match``: an int8 conv2d, depthwise
    conv2d, dense, average or max pooling with TFLite's requantisation and
    activation, or an int8 softmax) is renamed
    ``tvmgen_<m>_cmsis_nn_fused_...`` (as ``fuse-ops`` names a group of
    another target) and marked ``tir.target = "cmsis-nn"`` and
    ``cmsis_nn.core`` (the CMSIS-NN build its scratch sizes are for, from
    ``mcpu``); main's calls follow the rename. ``lower-ops`` then lowers it
    to a ``tir.call_extern`` of the CMSIS-NN function with its scratch as a
    ``tir.allocate`` that ``usmp`` plans; the C library puts it in
    ``tvmgen_<m>_cmsis_nn.c``. Any other function (another operator, a
    parameter combination CMSIS-NN does not take, a group fused with more
    ops) stays on the host's own kernels. The operators run on the host's
    device: CMSIS-NN has no device API (no hooks, no copies).

Options
    ``mcpu``: the CPU CMSIS-NN is built for (``cortex-m4``: ``dsp``;
    empty or a CPU without the DSP extension: ``none``; ``cortex-m55``,
    ``m85``, ``m52``: ``mve``). On ``mve`` a dense also gets its kernel sums
    (``cmsis_nn.kernel_sums``, from the constant weights and bias its call
    passes; TFLite Micro computes them in ``Prepare``), which ``lower-ops``
    makes a constant table; a dense whose weights are not constants stays on
    the host's kernels.

Idempotence
    A partitioned function carries ``tir.target``: a second run skips it.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    ModuleOp,
    StringAttr,
    SymbolRefAttr,
    TensorType,
    i32,
)
from xdsl.passes import ModulePass

from usmp.dialects import relay, tir
from usmp.lowering.cmsis_nn import (
    CORE,
    KERNEL_SUMS,
    TARGET,
    CmsisNNCall,
    core_of,
    dense_kernel_sums,
    match,
    needs_kernel_sums,
)


def partition_cmsis_nn(module: ModuleOp, core: str) -> dict[str, str]:
    """Partition ``module`` (module note); the functions left on the host
    with CMSIS-NN's reason, by name."""
    renamed: dict[str, str] = {}
    left: dict[str, str] = {}
    for f in list(module.ops):
        if not isinstance(f, func.FuncOp) or relay.PRIMITIVE not in f.attributes:
            continue
        if tir.TARGET in f.attributes:
            continue
        name = f.sym_name.data
        found = match(f, core)
        if isinstance(found, CmsisNNCall) and needs_kernel_sums(found, core):
            found = _add_kernel_sums(module, f)
        if not isinstance(found, CmsisNNCall):
            left[name] = found
            continue
        new = (
            name.replace("_fused_", "_cmsis_nn_fused_", 1)
            if "_fused_" in name
            else f"{name}_cmsis_nn"
        )
        f.sym_name = StringAttr(new)
        f.attributes[tir.TARGET] = StringAttr(TARGET)
        f.attributes[CORE] = StringAttr(core)
        renamed[name] = new
    if renamed:
        for op in module.walk():
            if isinstance(op, relay.CallOp):
                callee = op.callee.string_value()
                if callee in renamed:
                    op.callee = SymbolRefAttr(renamed[callee])
    return left


def _add_kernel_sums(module: ModuleOp, f: func.FuncOp) -> CmsisNNCall | str:
    """A dense on ``mve``: its kernel sums (``dense_kernel_sums``) as the
    attribute ``cmsis_nn.kernel_sums``, the same for every call of ``f``; or
    why there are none."""
    name = f.sym_name.data
    found: list[int] | None = None
    for op in module.walk():
        if not isinstance(op, relay.CallOp) or op.callee.string_value() != name:
            continue
        sums = dense_kernel_sums(f, op)
        if isinstance(sums, str):
            return sums
        if found is not None and sums != found:
            return "its calls pass different weights (one kernel sum table each)"
        found = sums
    if found is None:
        return "it is not called (its kernel sums come from its call's weights)"
    f.attributes[KERNEL_SUMS] = DenseIntOrFPElementsAttr.from_list(
        TensorType(i32, [len(found)]), found
    )
    return match(f, "mve")


@dataclass(frozen=True)
class PartitionCmsisNNPass(ModulePass):
    """Put the primitive functions CMSIS-NN computes on ``cmsis-nn``."""

    name = "partition-cmsis-nn"

    mcpu: str = ""
    """The CPU CMSIS-NN is built for (TVM's ``-mcpu``)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        partition_cmsis_nn(op, core_of(self.mcpu))
