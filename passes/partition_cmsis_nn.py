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
    empty or a CPU without the DSP extension: ``none``); a Helium (MVE) CPU
    is a located error.

Idempotence
    A partitioned function carries ``tir.target``: a second run skips it.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, StringAttr, SymbolRefAttr
from xdsl.passes import ModulePass

from usmp.dialects import relay, tir
from usmp.lowering.cmsis_nn import CORE, TARGET, CmsisNNCall, core_of, match


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


@dataclass(frozen=True)
class PartitionCmsisNNPass(ModulePass):
    """Put the primitive functions CMSIS-NN computes on ``cmsis-nn``."""

    name = "partition-cmsis-nn"

    mcpu: str = ""
    """The CPU CMSIS-NN is built for (TVM's ``-mcpu``)."""

    def __post_init__(self) -> None:
        core_of(self.mcpu)  # a Helium CPU: a ValueError naming what is accepted

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        partition_cmsis_nn(op, core_of(self.mcpu))
