"""Patching through residual blocks and concatenations (``patch_stage_graph``).

Random small int8 CNNs built as TFLite models (``ModelBuilder``): a stem
convolution, then inverted-bottleneck blocks (expand 1x1, depthwise 3x3 of
stride 1 with the residual ADD, or of stride 2 without), and CONCATENATIONs
of a 1x1 branch and a depthwise branch along channels, on heights that the
stripes do not divide evenly. Every tensor is checked:

* the unpatched module's every operator output against TFLite Micro's;
* the patched module's every value against the unpatched one: a stripe of
  an op against the rows of its whole output that the stripe computes
  (``stripe_rows``), every op outside the stage against itself;
* a fixed case through C under ASan/UBSan against TFLite Micro (the plan
  replayed byte by byte by ``usmp``).
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from xdsl.dialects.builtin import (
    ArrayAttr,
    DictionaryAttr,
    FunctionType,
    IntegerAttr,
    ModuleOp,
    StringAttr,
    i64,
)
from xdsl.dialects.func import FuncOp, ReturnOp

from usmp.dialects.relay import OUTPUT_QUANTIZATION, OUTPUT_TENSOR_NAMES
from usmp.frontend.tflite_import import import_model
from usmp.frontend.tflite_reader import read_model
from usmp.oracle.relay_interpreter import evaluate
from usmp.passes.fold_explicit_padding import FoldExplicitPaddingPass
from usmp.passes.patch_stage import PATCH_ATTR, PatchStagePass, liveness_steps
from usmp.passes.patch_stage_graph import find_stage
from usmp.planning.patch_graph import stripe_cols, stripe_rows
from usmp.planning.patching import split_rows
from usmp.testing.run_c import run_module, run_pipeline
from usmp.testing.shared_models import MODELS_DIR
from usmp.testing.tflite_builder import ModelBuilder
from usmp.testing.tflm_reference import random_inputs, run_tflm

TAG = "test.op"
SAME = 0
RELU6 = 3


def build_cnn(blocks: list[str], h: int, w: int, stem_stride: int, seed: int) -> bytes:
    """An int8 CNN from a 1 x h x w x 3 input: a 3x3 stem, then ``blocks``
    ('res': expand, depthwise, project, ADD; 'down': the same with a
    stride-2 depthwise and no ADD; 'cat': CONCATENATION of a 1x1 conv and a
    depthwise conv of the same input)."""
    rng = np.random.default_rng(seed)
    m = ModelBuilder()

    def act(shape: tuple[int, ...], scale: float = 0.0) -> int:
        scale = scale or float(rng.uniform(0.03, 0.08))
        return m.tensor(shape, "int8", scale=scale, zero_point=-3)

    def conv(
        x: int,
        shape: tuple[int, ...],
        cout: int,
        k: int,
        s: int,
        dw: bool,
        scale: float = 0.0,
    ) -> tuple[int, tuple[int, ...]]:
        _, hi, wi, cin = shape
        out = (1, -(-hi // s), -(-wi // s), cin if dw else cout)
        channels = out[3]
        scales = list(rng.uniform(0.003, 0.02, channels))
        wshape = (1, k, k, cin) if dw else (cout, k, k, cin)
        weights = m.tensor(
            wshape,
            "int8",
            rng.integers(-127, 128, wshape).astype(np.int8),
            scale=scales,
            axis=3 if dw else 0,
        )
        bias = m.tensor(
            (channels,),
            "int32",
            rng.integers(-300, 300, channels),
            scale=[0.05 * x for x in scales],
        )
        y = act(out, scale)
        options = {
            "Padding": SAME,
            "StrideW": s,
            "StrideH": s,
            "FusedActivationFunction": RELU6 if rng.random() < 0.5 else 0,
            "DilationWFactor": 1,
            "DilationHFactor": 1,
        }
        if dw:
            m.op(
                "DEPTHWISE_CONV_2D",
                [x, weights, bias],
                [y],
                ("DepthwiseConv2DOptions", options | {"DepthMultiplier": 1}),
            )
        else:
            m.op("CONV_2D", [x, weights, bias], [y], ("Conv2DOptions", options))
        return y, out

    x = act((1, h, w, 3))
    cur, shape = conv(x, (1, h, w, 3), 4, 3, stem_stride, False)
    for block in blocks:
        if block in ("res", "down"):
            e, es = conv(cur, shape, 2 * shape[3], 1, 1, False)
            d, ds = conv(e, es, 0, 3, 2 if block == "down" else 1, True)
            p, ps = conv(d, ds, shape[3], 1, 1, False)
            if block == "res":
                y = act(ps)
                m.op("ADD", [cur, p], [y], ("AddOptions", {}))
                p = y
            cur, shape = p, ps
        else:
            scale = float(rng.uniform(0.03, 0.08))  # CONCATENATION: one scale
            a, a_shape = conv(cur, shape, 3, 1, 1, False, scale)
            b, b_shape = conv(cur, shape, 0, 3, 1, True, scale)
            out = (*shape[:3], a_shape[3] + b_shape[3])
            y = act(out, scale)
            m.op("CONCATENATION", [a, b], [y], ("ConcatenationOptions", {"Axis": 3}))
            cur, shape = y, out
    return m.build([x], [cur])


def _tag(module: ModuleOp) -> FuncOp:
    main = next(op for op in module.ops if isinstance(op, FuncOp))
    for k, op in enumerate(main.body.block.ops):
        if op.results:
            op.attributes[TAG] = IntegerAttr(k, i64)
    return main


def _every_value(module: ModuleOp, x: np.ndarray) -> dict[int, list[np.ndarray]]:
    """Every tagged op's results on ``x`` (a stripe op once a stripe, in
    order), by tag: ``@main`` made to return them all."""
    module = module.clone()
    main = next(op for op in module.ops if isinstance(op, FuncOp))
    ret = main.body.block.last_op
    assert isinstance(ret, ReturnOp)
    tagged = [op for op in main.body.block.ops if TAG in op.attributes]
    ret.operands = [*ret.operands, *(op.results[0] for op in tagged)]
    main.function_type = FunctionType.from_lists(
        main.function_type.inputs.data, [v.type for v in ret.operands]
    )
    extra = len(tagged)
    for key, fill in ((OUTPUT_TENSOR_NAMES, None), (OUTPUT_QUANTIZATION, {})):
        old = main.attributes.get(key)
        if isinstance(old, ArrayAttr):
            more = [
                StringAttr(f"v{k}") if fill is None else DictionaryAttr({})
                for k in range(extra)
            ]
            main.attributes[key] = ArrayAttr([*old.data, *more])
    values = evaluate(module, [x])[-extra:]
    found: dict[int, list[np.ndarray]] = defaultdict(list)
    for op, v in zip(tagged, values, strict=True):
        tag = op.attributes[TAG]
        assert isinstance(tag, IntegerAttr)
        found[tag.value.data].append(v)
    return found


def check_every_tensor(data: bytes, x: np.ndarray, **options: Any) -> dict[str, Any]:
    """Patch with ``options`` (after ``fold-explicit-padding``, as
    ``usmp-compile``); assert the checks of the module note (TFLite
    Micro on every tensor, patched == unpatched on every value); the
    decision."""
    model = read_model(data)
    produced = [t for op in model.operators for t in op.outputs]
    ours = evaluate(import_model(model, produced), [x])
    theirs = run_tflm(data, [x], produced)
    for t, a, b in zip(produced, ours, theirs, strict=True):
        assert np.array_equal(a, np.asarray(b).reshape(a.shape)), f"tensor {t}"

    plain = import_model(model)
    FoldExplicitPaddingPass().apply(None, plain)  # type: ignore[arg-type]
    main = _tag(plain)
    block = main.body.block
    stage = find_stage(block, liveness_steps(block, False)[1])
    patched = plain.clone()
    PatchStagePass(**options).apply(None, patched)  # type: ignore[arg-type]
    decision = next(op for op in patched.ops if isinstance(op, FuncOp)).attributes[
        PATCH_ATTR
    ]
    assert isinstance(decision, DictionaryAttr)
    whole = _every_value(plain, x)
    striped = _every_value(patched, x)
    assert np.array_equal(evaluate(patched, [x])[0], evaluate(plain, [x])[0]), (
        "the outputs differ"
    )
    applied = decision.data["applied"]
    assert isinstance(applied, IntegerAttr)
    stage_tiles: dict[int, list[tuple[int, int, int, int]]] = {}
    if applied.value.data:
        assert stage is not None
        depth = decision.data["depth"]
        grid = decision.data["grid"]
        assert isinstance(depth, IntegerAttr) and isinstance(grid, ArrayAttr)
        out = stage.cuts[depth.value.data - 1]
        n, c = grid.data
        assert isinstance(n, IntegerAttr) and isinstance(c, IntegerAttr)
        bounds = split_rows(stage.nodes[out].out_rows, n.value.data)
        spans = split_rows(stage.nodes[out].out_cols, c.value.data)
        # tiles row by row of tiles, as the rewrite makes them
        plans = [
            (stripe_rows(stage.nodes, out, lo, hi), stripe_cols(stage.nodes, out, *cs))
            for lo, hi in bounds
            for cs in spans
        ]
        for i in range(1, out + 1):
            tag = stage.ops[i - 1].attributes[TAG]
            assert isinstance(tag, IntegerAttr)
            stage_tiles[tag.value.data] = [(*r[i], *k[i]) for r, k in plans]  # type: ignore[misc]
    for tag, (full,) in whole.items():
        pieces = striped[tag]
        if full.ndim > 2:
            whole_tile = [(0, full.shape[1], 0, full.shape[2])]
        else:
            whole_tile = []
        tiles = stage_tiles.get(tag, whole_tile)
        if not tiles:
            assert len(pieces) == 1 and np.array_equal(pieces[0], full)
            continue
        assert len(pieces) == len(tiles), f"op {tag}: {len(pieces)} values"
        for piece, (lo, hi, clo, chi) in zip(pieces, tiles, strict=True):
            assert np.array_equal(piece, full[:, lo:hi, clo:chi]), (
                f"op {tag} rows {lo}..{hi} cols {clo}..{chi}"
            )
    return {k: v for k, v in decision.data.items()}


_blocks = st.lists(
    st.sampled_from(["res", "res", "down", "cat"]), min_size=1, max_size=4
)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    blocks=_blocks,
    h=st.integers(7, 19),
    w=st.integers(3, 6),
    stem_stride=st.integers(1, 2),
    seed=st.integers(0, 2**16),
    depth=st.integers(0, 12),
    stripes=st.integers(1, 7),
    cols=st.integers(1, 3),
    io=st.booleans(),
)
def test_random_residual_cnn_patched_equals_unpatched_and_tflite_micro(
    blocks: list[str],
    h: int,
    w: int,
    stem_stride: int,
    seed: int,
    depth: int,
    stripes: int,
    cols: int,
    io: bool,
) -> None:
    """Row stripes (``cols`` 1) and 2-D grids of ``stripes`` x ``cols``
    tiles: every tile of every op against its rows and columns of the
    unpatched op's value."""
    data = build_cnn(blocks, h, w, stem_stride, seed)
    x = np.random.default_rng(seed).integers(-128, 128, (1, h, w, 3)).astype(np.int8)
    try:
        check_every_tensor(data, x, depth=depth, stripes=stripes, cols=cols, io=io)
    except Exception as e:  # a depth or grid beyond the stage: refused, located
        if "patch-stage:" not in str(e):
            raise
        check_every_tensor(data, x, budget=100.0, io=io)


IO_PIPELINE = (
    "fuse-ops,lower-ops,aot-lower-main{order_io=true},usmp{use_workspace_io=true}"
)
"""With the I/O in the workspace; ``usmp`` replays every plan byte by byte."""


def run_on_consumed_input(module: ModuleOp, xs: list[np.ndarray], **kw: Any) -> Any:
    """``module`` through ``IO_PIPELINE``, the plan that uses the overlaps
    over the consumed input kept even where it is not smaller (these small
    CNNs seldom gain from them), so that the C runs them; its outputs, and
    the number of buffers placed over the model input after the first
    step."""
    from usmp.passes import usmp_plan_memory
    from usmp.passes.usmp_analysis import analyze
    from usmp.passes.usmp_pools import resolve_pools

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(usmp_plan_memory, "_without_consumed", lambda a, plan, r: plan)
        planned = run_pipeline(module, IO_PIPELINE)
    analysis = analyze(planned, resolve_pools(planned, ""), True)
    x = next(b for b in analysis.buffers if b.role == "input")
    assert x.placement is not None
    lo, hi = x.placement.offset.data, x.placement.offset.data + x.size
    over = [
        b
        for b in analysis.buffers
        if b.name in analysis.conflicts.get(x.name, ())
        and b.placement is not None
        and max(lo, b.placement.offset.data) < min(hi, b.placement.offset.data + b.size)
    ]
    return run_module(planned, xs, **kw), len(over)


@settings(max_examples=3, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    blocks=_blocks,
    h=st.integers(9, 19),
    w=st.integers(3, 6),
    stem_stride=st.integers(1, 2),
    seed=st.integers(0, 2**16),
    stripes=st.integers(2, 5),
)
def test_random_residual_cnn_with_io_in_the_workspace_through_c(
    blocks: list[str], h: int, w: int, stem_stride: int, seed: int, stripes: int
) -> None:
    """Random CNNs patched with the input in the workspace (the stripes may
    consume it in place), planned and replayed by ``usmp``, built and run:
    TFLite Micro's outputs."""
    data = build_cnn(blocks, h, w, stem_stride, seed)
    model = read_model(data)
    xs = random_inputs(model, seed)
    expected = run_tflm(data, xs, list(model.outputs))
    module = import_model(model)
    try:
        PatchStagePass(depth=1, stripes=stripes, io=True).apply(None, module)  # type: ignore[arg-type]
    except Exception as e:  # more stripes than rows: refused, located
        if "patch-stage:" not in str(e):
            raise
        PatchStagePass(budget=100.0, io=True).apply(None, module)  # type: ignore[arg-type]
    ours, _ = run_on_consumed_input(module, xs)
    assert np.array_equal(ours[0].reshape(-1), np.asarray(expected[0]).reshape(-1))


def test_residual_stage_is_patched_through_the_add() -> None:
    """A stage through two residual blocks, a stride-2 block and a
    concatenation, 13 rows in 3 stripes (5, 4, 4): cut after the stem, each
    ADD, each layer of the stride-2 block and the concatenation (7 layers),
    never inside a residual block."""
    data = build_cnn(["res", "res", "down", "cat"], 25, 5, 1, 3)
    x = np.random.default_rng(0).integers(-128, 128, (1, 25, 5, 3)).astype(np.int8)
    decision = check_every_tensor(data, x, depth=7, stripes=3)
    assert str(decision["stripe_rows"]) == "[5 : i64, 4 : i64, 4 : i64]"
    assert decision["layers"] == IntegerAttr(7, i64)


@pytest.mark.parametrize(
    ("io", "stripes", "cols"), [(False, 3, 1), (True, 5, 1), (False, 3, 2)]
)
def test_residual_cnn_c_matches_tflite_micro_under_asan(
    io: bool, stripes: int, cols: int
) -> None:
    """Row stripes (with the input in the workspace: a stripe's value over
    its consumed rows), and a 3x2 grid (the input tiles copied, the tiles of
    the residual blocks' values sliced by columns, joined along W and H)."""
    data = build_cnn(["cat", "res", "down", "res"], 21, 8, 2, 11)
    model = read_model(data)
    xs = random_inputs(model, 5)
    expected = run_tflm(data, xs, list(model.outputs))
    module = import_model(model)
    PatchStagePass(depth=7, stripes=stripes, cols=cols, io=io).apply(None, module)  # type: ignore[arg-type]
    assert f"grid = [{stripes} : i64, {cols} : i64]" in str(module)
    if io:  # a stripe's value over the input's consumed rows
        ours, over = run_on_consumed_input(module, xs, sanitize=True)
        assert over > 0
    else:  # usmp replays the plan
        ours = run_module(
            module, xs, passes="fuse-ops,lower-ops,aot-lower-main,usmp", sanitize=True
        )
    assert np.array_equal(ours[0].reshape(-1), np.asarray(expected[0]).reshape(-1))


def test_resnet8_patched_through_its_first_residual_block_every_tensor() -> None:
    """ResNet-8 int8 (the stage ended at its first residual branch before):
    patched through the first block (2 layers, 3 stripes of 11/11/10 rows),
    every tensor checked as above."""
    path = MODELS_DIR / "mlperf_tiny" / "pretrainedResnet_quant.tflite"
    data = path.read_bytes()
    x = random_inputs(read_model(data), 0)[0]
    decision = check_every_tensor(data, x)
    assert str(decision["stripe_rows"]) == "[11 : i64, 11 : i64, 10 : i64]"


def test_vww_with_io_patched_every_tensor() -> None:
    """VWW int8 patched for I/O in the workspace (the grid whose stripes
    consume the input in place: 4 layers in 12 stripes, as
    ``usmp-compile --use-workspace-io --patch auto`` takes it), every tensor
    checked as above."""
    path = MODELS_DIR / "mlperf_tiny" / "vww_96_int8.tflite"
    data = path.read_bytes()
    x = random_inputs(read_model(data), 0)[0]
    decision = check_every_tensor(data, x, io=True)
    assert decision["depth"] == IntegerAttr(4, i64)
    assert str(decision["grid"]) == "[12 : i64, 1 : i64]"
