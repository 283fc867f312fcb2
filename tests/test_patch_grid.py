"""2-D grids of patching and its cost model (``patch_graph``, ``patch_speed``).

Plain Python checks on synthetic stages (the IR and C sides are in
``test_patch_stage.py``, ``test_patch_stage_graph.py`` and
``filecheck/passes/patch_stage_grid2d.mlir``), and the ``--patch-grid``
option's errors.
"""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import pytest

from usmp.planning.patch_graph import Node, choose, plan_error, stage_cost
from usmp.planning.patch_speed import kernel_instructions, stage_instructions
from usmp.tools import usmp_compile

REPO = Path(__file__).parent.parent


def _node(
    inp: int, h: int, w: int, channels: int, cin: int, k: int, kind: str, step: int
) -> Node:
    """A stride-1 SAME window of ``k`` x ``k`` over an ``h`` x ``w`` map."""
    per_pixel = channels * k * k * (cin if kind == "conv" else 1)
    pad = (k - 1) // 2
    return Node(
        (inp,),
        h,
        w * channels,
        step,
        extent=k,
        pad_top=pad,
        in_rows=h,
        macs_per_row=w * per_pixel,
        out_cols=w,
        col_extent=k,
        pad_left=pad,
        in_cols=w,
        channels=channels,
        kind=kind,
    )


def _stage() -> list[Node]:
    """12x8x3 -> conv 3x3 to 8 -> depthwise 3x3 -> conv 1x1 to 4."""
    return [
        Node((), 12, 8 * 3, -1, out_cols=8, channels=3),
        _node(0, 12, 8, 8, 3, 3, "conv", 0),
        _node(1, 12, 8, 8, 8, 3, "depthwise", 1),
        _node(2, 12, 8, 4, 8, 1, "conv", 2),
    ]


def test_a_grid_is_rows_times_columns() -> None:
    """A 2x2 grid of a 3x3 window: each tile recomputes one row and one
    column of halo of the first conv (its input is the model's); the n x 1
    figures are those of row stripes."""
    nodes = _stage()
    plain = stage_cost(nodes, 3, 1)[1]
    _, macs_2x1 = stage_cost(nodes, 3, 2)
    _, macs_1x2 = stage_cost(nodes, 3, 1, cols=2)
    _, macs_2x2 = stage_cost(nodes, 3, 2, cols=2)
    assert plain < macs_2x1 and plain < macs_1x2 and plain < macs_2x2
    # the depthwise conv reads 1 halo row (column) of the conv per cut:
    # conv rows 7 + 7 of 12 (columns 5 + 5 of 8) per 2 tiles
    conv_pixel = 8 * 9 * 3
    assert macs_2x1 - plain == 2 * 8 * conv_pixel
    assert macs_1x2 - plain == 2 * 12 * conv_pixel
    assert macs_2x2 - plain == (14 * 10 - 12 * 8) * conv_pixel
    assert plan_error(nodes, 3, 2, 2) is None


def test_columns_refused_for_a_node_that_is_not_column_local() -> None:
    nodes = _stage()
    nodes[2] = Node(**{**nodes[2].__dict__, "col_local": False})
    assert plan_error(nodes, 3, 4, 1) is None
    error = plan_error(nodes, 3, 2, 2)
    assert error == "node 2 is not computable column by column"
    _, found = choose(nodes, [1, 2, 3], [10**9] * 4, 10**9, 10**9)
    assert found and all(c.cols == 1 for c in found if c.depth >= 2)
    assert any(c.cols > 1 for c in found if c.depth == 1)  # before node 2


def test_speed_term_grows_with_the_tiles() -> None:
    nodes = _stage()
    whole = stage_instructions(nodes, 3, 1, 1)
    assert whole == sum(
        kernel_instructions(n.kind, n.out_rows * n.macs_per_row, 96 * n.channels)
        for n in nodes[1:]
    )
    assert (
        whole < stage_instructions(nodes, 3, 2, 1) < stage_instructions(nodes, 3, 4, 1)
    )
    # columns copy the input tiles: more than the same number of row stripes
    assert stage_instructions(nodes, 3, 1, 2) > stage_instructions(nodes, 3, 2, 1)


def test_cost_model_prefers_fewer_instructions_to_fewer_extra_macs() -> None:
    """At the same peak (the rest of the model's, here), a 2x2 grid
    recomputes fewer MACs than 4 row stripes but copies its input tiles and
    recomputes depthwise MACs (5.4 instructions each on a Cortex-M4 against
    1.6 for a convolution's): the 4x1 stripes are estimated faster and are
    chosen (ranked by extra MACs the 2x2 grid would be)."""
    nodes = _stage()
    _, found = choose(nodes, [1, 2, 3], [10**9] + [768] * 3, 10**9, 10**9)
    best = found[0]
    assert (best.depth, best.stripes, best.cols) == (3, 4, 1)
    grid = next(c for c in found if (c.depth, c.stripes, c.cols) == (3, 2, 2))
    assert grid.peak == best.peak
    assert grid.extra_macs < best.extra_macs
    assert grid.extra_instructions > best.extra_instructions


def _compile(argv: list[str]) -> tuple[int, str]:
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        status = usmp_compile.main(argv)
    return status, err.getvalue()


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--patch-grid", "1x1"], "--patch-grid 1x1: patch-stage: a grid needs"),
        (["--patch-grid", "3by2"], "a grid is ROWSxCOLUMNS of tiles"),
        (["--patch-grid", "2x0"], "at least 1 row and 1 column"),
        (["--patch-grid=-2x2"], "a grid is ROWSxCOLUMNS"),
        (
            ["--patch-grid", "4x2", "--patch-stripes", "3"],
            "--patch-grid 4x2 contradicts --patch-stripes 3",
        ),
        (
            ["--patch-grid", "2x100"],
            "100 columns of tiles for a stage whose layers have at most 48 columns",
        ),
        (
            ["--patch-grid", "2x48", "--patch-depth", "8"],
            "48 columns of tiles for a stage whose output has 12 columns",
        ),
    ],
)
def test_bad_grid_options_are_refused(
    tmp_path: Path, flags: list[str], message: str
) -> None:
    model = Path(usmp_compile.__file__).resolve().parents[2] / "shared" / "models"
    path = model / "mlperf_tiny" / "vww_96_int8.tflite"
    argv = [str(path), "-o", str(tmp_path / "o"), "--patch", "auto", "-q", *flags]
    status, err = _compile(argv)
    assert status == 1 and message in err, err
    assert "Traceback" not in err
    if "columns of tiles" in message:
        assert "vww_96_int8.tflite:" in err  # located at the stage's op
