"""What real models from public packages hit, refused by their real cause
(issue 28): a CUSTOM operator is named by its custom code even in a model
with several subgraphs and float16/sparse weights; TFLite Micro's arena in
the comparisons is sized from the model's tensors, not its file size."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from usmp.frontend.tflite_import import import_tflite_bytes
from usmp.frontend.tflite_reader import TFLiteImportError, read_model
from usmp.testing.tflite_builder import ModelBuilder, Sparse
from usmp.testing.tflm_reference import run_tflm, tflm_arena_size

CUSTOM = "Convolution2DTransposeBias"


def _custom_model() -> bytes:
    """float16 weights behind DEQUANTIZE, a sparse weight behind DENSIFY,
    then a CUSTOM transposed convolution with bias, and a second subgraph."""
    m = ModelBuilder(extra_subgraph=True)
    x = m.tensor((1, 4, 4, 2), "float32")
    w16 = m.tensor((2, 3, 3, 2), "float16", np.ones((2, 3, 3, 2), np.float16))
    w = m.tensor((2, 3, 3, 2), "float32")
    m.op("DEQUANTIZE", [w16], [w])
    sparse = Sparse(
        [0],
        [("csr", np.array([0, 1]), np.array([1]), "uint8")],
    )
    b_sparse = m.tensor((2,), "float32", np.array([0.5], np.float32), sparse=sparse)
    b = m.tensor((2,), "float32")
    m.op("DENSIFY", [b_sparse], [b])
    y = m.tensor((1, 8, 8, 2), "float32")
    m.op("CUSTOM", [x, w, b], [y], custom=CUSTOM)
    return m.build([x], [y])


def test_custom_operator_is_named_by_its_code() -> None:
    data = _custom_model()
    with pytest.raises(TFLiteImportError) as e:
        import_tflite_bytes(data, "seg.tflite")
    assert str(e.value) == (
        f"seg.tflite: error: operator 2 (CUSTOM '{CUSTOM}'): custom operator "
        f"'{CUSTOM}' (an application-defined kernel) has no kernel: supply its C "
        f"function with --custom-op {CUSTOM}=path/to/kernel.h[:function] "
        "(usmp.CustomOp in Python)"
    )


def test_usmp_compile_refuses_it_in_one_line(tmp_path: Path) -> None:
    model = tmp_path / "seg.tflite"
    model.write_bytes(_custom_model())
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "usmp.tools.usmp_compile",
            str(model),
            "-o",
            str(tmp_path / "out"),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    assert f"operator 2 (CUSTOM '{CUSTOM}')" in done.stderr


def test_init_subgraph_is_no_control_flow_warning() -> None:
    from tests.test_resource_variables import _streaming_model

    assert read_model(_streaming_model(), "ring.tflite").warnings == ()
    assert "control-flow" in read_model(_custom_model(), "seg.tflite").warnings[0]


def test_arena_is_sized_from_the_tensors() -> None:
    """A file of a few hundred bytes whose three preserved activations take
    3 MiB: 10x the file (at least 1 MiB) failed with "Failed to resize
    buffer"."""
    m = ModelBuilder()
    shape = (1, 256, 1024)
    x, y, z = (m.tensor(shape, "float32") for _ in range(3))
    m.op("RELU", [x], [y])
    m.op("RELU", [y], [z])
    data = m.build([x], [z])
    assert len(data) < 2048
    assert tflm_arena_size(data) > 2 * 3 * (1 << 20)
    value = np.linspace(-1, 1, 256 * 1024, dtype=np.float32).reshape(shape)
    (out,) = run_tflm(data, [value], [z])
    np.testing.assert_array_equal(out.reshape(shape), np.maximum(value, 0))
