"""Contiguous SLICE / STRIDED_SLICE / SPLIT / SPLIT_V / UNPACK pieces are
aliases of their operand's storage at an element offset (issue 13: pure data
movement must not copy), on int8 models written with the flatbuffer builder:
C (fuse-ops, lower-ops, aot-lower-main, usmp, gcc) bit-exact with TFLite
Micro where the alias feeds later operators, is a model output, points into
a model input, and where every SPLIT piece has its own consumer; the
workspace is smaller than with a copying slice of the same bytes by exactly
those bytes. A slice that is not one contiguous block still copies.
``--emit-tflm-plan`` plans TFLite Micro's own problem, where a slice is a
tensor of its own (TFLM's kernels copy it); TFLM runs the plan bit for bit.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import usmp
from tests.test_import_tflite_layout import c_matches_tflm
from tests.test_import_tflite_synthetic import ModelBuilder, weights_i8
from tests.test_mlir_composition import _generic, _mlir_opt
from tests.test_models import compare_with_tflm
from tests.test_tflm_plan import emit, offline_metadata
from tests.test_tflm_plan import outputs as tflm_outputs
from usmp.frontend.tflite_import import import_tflite_bytes
from usmp.frontend.tflite_reader import read_model, read_model_file
from usmp.testing.run_c import run_module, run_pipeline
from usmp.testing.tflm_reference import random_inputs, tflm_arena_bytes
from usmp.tools.c_library import load
from usmp.tools.tflm_plan import check_offline_plan, tflm_lifetimes

Built = tuple[ModelBuilder, list[int], list[int]]
Q: dict[str, Any] = dict(scale=0.05, zero_point=-3)
"""One quantisation for every activation (data movement keeps it)."""
PIPELINE = "fuse-ops,lower-ops,aot-lower-main"


def fc(m: ModelBuilder, x: int, rows: int, depth: int, units: int) -> int:
    """An int8 FULLY_CONNECTED of ``x`` (``rows x depth``) to ``rows x units``."""
    w = m.tensor((units, depth), "int8", weights_i8(units, depth), scale=0.01)
    bias = m.tensor((units,), "int32", np.arange(units) * 7 - 20, scale=0.0005)
    y = m.tensor((rows, units), "int8", **Q)
    m.op("FULLY_CONNECTED", [x, w, bias], [y], ("FullyConnectedOptions", {}))
    return y


def strided_slice(
    m: ModelBuilder,
    x: int,
    begin: list[int],
    end: list[int],
    out_shape: tuple[int, ...],
    **masks: int,
) -> int:
    ints = [m.tensor((len(v),), "int32", np.array(v)) for v in (begin, end)]
    strides = m.tensor((len(begin),), "int32", np.ones(len(begin), np.int32))
    y = m.tensor(out_shape, "int8", **Q)
    m.op("STRIDED_SLICE", [x, *ints, strides], [y], ("StridedSliceOptions", masks))
    return y


def slice_feeds_an_operator(columns: bool = False) -> Built:
    """x -> FC -> h[6, 24] -> rows 2..3 (or, ``columns``, the same 48 bytes
    as columns 8..15 of every row: not contiguous) -> FC -> y."""
    m = ModelBuilder()
    x = m.tensor((6, 16), "int8", **Q)
    h = fc(m, x, 6, 16, 24)
    if columns:
        s = strided_slice(m, h, [0, 8], [6, 16], (6, 8))
        y = fc(m, s, 6, 8, 5)
    else:
        s = strided_slice(m, h, [2, 0], [4, 24], (2, 24))
        y = fc(m, s, 2, 24, 5)
    return m, [x], [y]


def slice_is_an_output() -> Built:
    """h = FC(x); outputs: SLICE of h (row 1, shrunk: an alias at offset 24,
    copied into the output buffer) and FC(h)."""
    m = ModelBuilder()
    x = m.tensor((4, 16), "int8", **Q)
    h = fc(m, x, 4, 16, 24)
    s = strided_slice(m, h, [1, 0], [2, 24], (24,), ShrinkAxisMask=1)
    y = fc(m, h, 4, 24, 3)
    return m, [x], [s, y]


def slice_of_an_input() -> Built:
    """SLICE of the model input (rows 1..2 of a 3-d tensor) -> FC (which
    flattens it, a reshape): the operator reads the input at an offset."""
    m = ModelBuilder()
    x = m.tensor((4, 2, 8), "int8", **Q)
    begin = m.tensor((3,), "int32", np.array([1, 0, 0]))
    size = m.tensor((3,), "int32", np.array([2, -1, -1]))
    s = m.tensor((2, 2, 8), "int8", **Q)
    m.op("SLICE", [x, begin, size], [s])
    y = fc(m, s, 4, 8, 6)
    return m, [x], [y]


def split_pieces(opcode: str) -> Built:
    """h = FC(x)[3, 24] (reshaped to 3x4x6 for UNPACK), split along axis 0:
    piece 0 -> FC, piece 1 -> FC, piece 2 is an output (SPLIT_V: pieces of
    1 and 2 rows, each -> FC)."""
    m = ModelBuilder()
    x = m.tensor((3, 10), "int8", **Q)
    h = fc(m, x, 3, 10, 24)
    if opcode == "UNPACK":
        shape = m.tensor((3,), "int32", np.array([3, 4, 6]))
        h3 = m.tensor((3, 4, 6), "int8", **Q)
        m.op("RESHAPE", [h, shape], [h3])
        parts = [m.tensor((4, 6), "int8", **Q) for _ in range(3)]
        m.op("UNPACK", [h3], parts, ("UnpackOptions", dict(Num=3, Axis=0)))
        depth = 6
    elif opcode == "SPLIT":
        axis = m.tensor((), "int32", np.array(0))
        parts = [m.tensor((1, 24), "int8", **Q) for _ in range(3)]
        m.op("SPLIT", [axis, h], parts, ("SplitOptions", dict(NumSplits=3)))
        depth = 24
    else:  # SPLIT_V, uneven
        sizes = m.tensor((2,), "int32", np.array([1, -1]))
        axis = m.tensor((), "int32", np.array(0))
        parts = [m.tensor((n, 24), "int8", **Q) for n in (1, 2)]
        m.op("SPLIT_V", [h, sizes, axis], parts, ("SplitVOptions", dict(NumSplits=2)))
        y0, y1 = fc(m, parts[0], 1, 24, 4), fc(m, parts[1], 2, 24, 5)
        return m, [x], [y0, y1]
    rows = 4 if opcode == "UNPACK" else 1
    y0, y1 = fc(m, parts[0], rows, depth, 4), fc(m, parts[1], rows, depth, 5)
    return m, [x], [y0, y1, parts[2]]


def _tir(built: Built) -> str:
    m, inputs, outputs = built
    return str(run_pipeline(import_tflite_bytes(m.build(inputs, outputs)), PIPELINE))


def _check(built: Built) -> str:
    """Oracle and C equal to TFLite Micro (every tensor for the oracle); the
    lowered tir main."""
    m, inputs, outputs = built
    compare_with_tflm(m.build(inputs, outputs), "slices.tflite", seeds=(0, 1))
    c_matches_tflm(built)
    return _tir(built)


def test_a_slice_feeding_an_operator_is_an_alias() -> None:
    tir = _check(slice_feeds_an_operator())
    assert "strided_slice" not in tir  # no operator for it
    assert (
        "memref.reinterpret_cast %sid to offset: [48], sizes: [2, 24], "
        "strides: [24, 1] : memref<6x24xi8> to memref<2x24xi8, strided<[24, 1], "
        "offset: 48>>"
    ) in tir
    assert tir.count("tir.allocate ") == 1 and "memref.copy" not in tir


def test_a_non_contiguous_slice_still_copies() -> None:
    tir = _check(slice_feeds_an_operator(columns=True))
    assert "fused_strided_slice" in tir and tir.count("tir.allocate ") == 2


def test_the_alias_saves_the_copy_in_the_workspace(tmp_path: Path) -> None:
    """Both slices select 48 bytes of h (144 bytes); the copying one needs
    them next to h, the alias does not."""
    plans = []
    for columns in (False, True):
        m, inputs, outputs = slice_feeds_an_operator(columns)
        path = tmp_path / f"columns{columns}.tflite"
        path.write_bytes(m.build(inputs, outputs))
        # without overlaps: the copy's output could share the slice's bytes
        plans.append(usmp.compile(path, overlap=False).plan)
    alias, copy = plans
    assert alias.workspace_bytes == alias.workspace_lower_bound == 6 * 24
    assert copy.workspace_bytes - alias.workspace_bytes == 6 * 8


def test_a_returned_slice_is_copied_into_its_output() -> None:
    tir = _check(slice_is_an_output())
    assert "to memref<24xi8, strided<[1], offset: 24>>" in tir
    assert '"memref.copy"' in tir and "strided_slice" not in tir


def test_a_slice_of_an_input_points_into_it() -> None:
    tir = _check(slice_of_an_input())
    assert (
        "memref.reinterpret_cast %t0 to offset: [16], sizes: [4, 8], strides: [8, 1]"
    ) in tir
    assert "tir.allocate " not in tir and "memref.copy" not in tir


@pytest.mark.parametrize("opcode", ["SPLIT", "SPLIT_V", "UNPACK"])
def test_split_pieces_are_aliases(opcode: str) -> None:
    tir = _check(split_pieces(opcode))
    assert "strided_slice" not in tir and tir.count("tir.call") == 3
    assert tir.count("tir.allocate ") == 1


@pytest.mark.parametrize(
    "built",
    [slice_feeds_an_operator(), slice_of_an_input(), split_pieces("SPLIT")],
)
def test_tflm_runs_the_plan_of_a_model_with_aliases(
    built: Built, tmp_path: Path
) -> None:
    """``--emit-tflm-plan`` (I/O in the workspace): the slices the C library
    aliases are tensors of their own in TFLite Micro's plan (its kernels copy
    them; ``check_offline_plan`` lets only a RESHAPE share its input's
    bytes). Outputs are unchanged, the arena no larger."""
    m, inputs, outputs = built
    model = tmp_path / "slices.tflite"
    model.write_bytes(m.build(inputs, outputs))
    planned, out = emit(model, tmp_path, "--use-workspace-io")
    original, ours = model.read_bytes(), planned.read_bytes()
    reader = read_model_file(model)
    report = json.loads((out / "memory/plan.json").read_text())
    assert report["aliases"]  # the C library aliases them
    offsets = offline_metadata(ours)[3:]
    assert all(offsets[t] >= 0 for t in tflm_lifetimes(reader))
    check_offline_plan(reader, offsets)
    size = 1 << 16
    assert (
        tflm_arena_bytes(ours, size)["head"]
        <= (tflm_arena_bytes(original, size)["head"])
    )
    for seed in (0, 1):
        x = random_inputs(reader, seed)
        want = tflm_outputs(original, [x], len(outputs))
        got = tflm_outputs(ours, [x], len(outputs))
        assert all(np.array_equal(g, w) for g, w in zip(got, want, strict=True))


@pytest.mark.parametrize("stage", ["aot-lower-main", "usmp"])
def test_aliases_survive_mlir_opt(stage: str) -> None:
    """The offset views (and the copy of the returned piece, in MLIR's pretty
    ``memref.copy`` form) read back after ``mlir-opt --canonicalize --cse``
    and run the same."""
    m, inputs, outputs = split_pieces("SPLIT")
    data = m.build(inputs, outputs)
    x = random_inputs(read_model(data), 0)
    passes = f"{PIPELINE},usmp" if stage == "usmp" else PIPELINE
    want = run_module(import_tflite_bytes(data), x, passes=f"{PIPELINE},usmp")
    canonical = subprocess.run(
        [str(_mlir_opt()), "--allow-unregistered-dialect", "--canonicalize", "--cse"],
        input=_generic(run_pipeline(import_tflite_bytes(data), passes)),
        capture_output=True,
        text=True,
        check=False,
    )
    assert canonical.returncode == 0, canonical.stderr
    assert "offset: 48>> to memref<1x24xi8>" in canonical.stdout
    got = run_module(
        load(canonical.stdout), x, passes="" if stage == "usmp" else "usmp"
    )
    assert all(np.array_equal(g, w) for g, w in zip(got, want, strict=True))


@pytest.mark.parametrize("call_type", ["cpacked", "packed"])
def test_packed_calls_pass_the_view_s_first_element(
    call_type: str, tmp_path: Path
) -> None:
    """With TVM's packed calls the DLTensor of an aliased slice points at its
    first element too: SPLIT pieces equal TFLite Micro's."""
    m, inputs, outputs = split_pieces("SPLIT")
    data = m.build(inputs, outputs)
    model = tmp_path / "split.tflite"
    model.write_bytes(data)
    lib = usmp.compile(model, interface_api="packed", call_type=call_type)
    for seed in (0, 1):
        x = random_inputs(read_model(data), seed)
        want = tflm_outputs(data, [x], len(outputs))
        got = lib.run(x)
        assert all(np.array_equal(g, w) for g, w in zip(got, want, strict=True))
