"""``fold-explicit-padding``: a ``relay.pad`` feeding convolutions becomes
their padding (TVM's FoldExplicitPadding).

What it does
    A TFLite PAD before a CONV_2D / DEPTHWISE_CONV_2D writes a padded copy of
    its input that lives next to it: the convolution can read the unpadded
    input with its own padding instead. ``relay.conv2d`` counts padding as
    contributing nothing to its sums, which is what an element equal to the
    input zero point contributes, so a pad whose value is the convolution's
    ``input_zero_point`` (0 for float and int16) and that pads only the
    spatial axes (H and W of the conv's data layout, by non-negative amounts)
    folds: the convolution takes the pad's operand, its ``padding`` grows by
    the pad's widths, and the pad is erased. A pad is folded only when every
    user is such a convolution reading it as data (otherwise the padded
    tensor is needed anyway and nothing would be saved). Pooling is left
    alone: TFLite's pooling ignores padded positions (average over fewer
    elements, max over the real ones), an explicit pad does not.

Requires
    Relay operators in graph-level functions (before ``fuse-ops``).

Afterwards
    No foldable ``relay.pad`` remains; results are bit for bit the same.

Idempotence
    A second run finds nothing to fold.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from usmp.dialects.relay_nn_ops import Conv2DOp, DataLayout
from usmp.dialects.relay_ops import PadOp


def _spatial_axes(conv: Conv2DOp) -> tuple[int, int]:
    return (1, 2) if conv.data_layout == DataLayout.NHWC else (2, 3)


def _foldable(pad: PadOp, conv: Conv2DOp, index: int) -> bool:
    """Can ``conv`` (reading ``pad`` as operand ``index``) take the padding?"""
    if index != 0 or pad.pad_value != conv.input_zero_point:
        return False
    widths = pad.pad_width
    h, w = _spatial_axes(conv)
    return all(
        widths[2 * axis] >= 0 and widths[2 * axis + 1] >= 0
        if axis in (h, w)
        else widths[2 * axis] == widths[2 * axis + 1] == 0
        for axis in range(len(widths) // 2)
    )


class _FoldPad(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: PadOp, rewriter: PatternRewriter) -> None:
        uses = list(op.result.uses)
        if not uses or not all(
            isinstance(u.operation, Conv2DOp) and _foldable(op, u.operation, u.index)
            for u in uses
        ):
            return
        widths = op.pad_width
        for use in uses:
            conv = use.operation
            assert isinstance(conv, Conv2DOp)
            h, w = _spatial_axes(conv)
            top, left, bottom, right = conv.padding
            conv.padding = (
                top + widths[2 * h],
                left + widths[2 * w],
                bottom + widths[2 * h + 1],
                right + widths[2 * w + 1],
            )
            conv.operands[0] = op.data
        rewriter.erase(op)


@dataclass(frozen=True)
class FoldExplicitPaddingPass(ModulePass):
    """Fold a ``relay.pad`` into the convolutions it feeds (see the module)."""

    name = "fold-explicit-padding"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(_FoldPad(), apply_recursively=False).rewrite_module(op)
