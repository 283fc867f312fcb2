"""The reader refuses nothing TFLite Micro loads and runs correctly.

* Every ``.tflite`` the repository and ``../shared`` hold: when the
  ``tflite-micro`` interpreter loads it (its ``Prepare`` steps run), the
  importer imports it, or refuses it for an operator or a type it names
  (``operator <k> (<OPCODE>): ...``), never for the file.
* Quantisation fields TFLite Micro ignores where it does not use them,
  normalised by the reader, on models built here and compared with TFLite
  Micro bit for bit (oracle, and the generated C through
  ``usmp.testing.compare_tflm``): bias tensors quantised along a dimension
  they do not have (TFLite Micro's own ``person_detect.tflite`` has 14 of
  them: ``quantized_dimension = 3`` on a 1-d bias), a single zero point for
  per-channel weights (TFLite Micro's space-saving form), per-channel
  weights whose ``quantized_dimension`` is not the channel dimension but has
  its size (TFLite Micro reads scale ``i`` for output channel ``i``).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from tests.test_import_tflite_synthetic import (
    RELU6,
    RNG,
    SAME,
    ModelBuilder,
    weights_i8,
)
from tests.test_malformed_tflite import _run
from tests.test_models import compare_with_tflm
from usmp.frontend.tflite_import import import_model
from usmp.frontend.tflite_reader import TFLiteImportError, read_model
from usmp.testing.shared_models import MODELS_DIR

REPOSITORY = Path(__file__).resolve().parents[1]
SHARED = MODELS_DIR.parent.resolve()  # the files are resolved too


def _tflite_files() -> list[Path]:
    """Every ``.tflite`` under the repository and ``shared`` (hidden folders
    such as ``.venv`` and ``.git`` left out), sorted."""
    found: set[Path] = set()
    for root in (REPOSITORY, SHARED):
        for path in root.rglob("*.tflite"):
            if not any(part.startswith(".") for part in path.relative_to(root).parts):
                found.add(path.resolve())
    return sorted(found)


def _tflm_loads(data: bytes) -> bool:
    """Whether TFLite Micro's interpreter loads the model (allocates its
    tensors, which runs every operator's ``Prepare``)."""
    from tflite_micro.python.tflite_micro import runtime

    try:
        runtime.Interpreter.from_bytes(data, arena_size=max(1 << 22, 10 * len(data)))
    except (RuntimeError, ValueError):
        return False
    return True


_OPERATOR_REFUSAL = re.compile(r"^operator \d+ \((CUSTOM '[^']*'|[A-Z0-9_]+)\): ")


def _imported_or_refused_by_operator(data: bytes, name: str) -> None:
    try:
        import_model(read_model(data, name))
    except TFLiteImportError as e:
        why = str(e).removeprefix(f"{name}: error: ")
        assert _OPERATOR_REFUSAL.match(why), (
            f"TFLite Micro loads {name}, the importer refuses the file: {e}"
        )
        assert "damaged" not in why, f"TFLite Micro loads {name}: {e}"


def test_the_repository_and_shared_hold_models() -> None:
    files = _tflite_files()
    assert any(p.is_relative_to(SHARED) for p in files), files
    assert any(p.is_relative_to(REPOSITORY) for p in files), files


@pytest.mark.parametrize(
    "path", _tflite_files(), ids=lambda p: p.name if isinstance(p, Path) else p
)
def test_what_tflite_micro_loads_is_imported_or_refused_by_operator(
    path: Path,
) -> None:
    data = path.read_bytes()
    if not _tflm_loads(data):
        pytest.skip("TFLite Micro does not load it")
    _imported_or_refused_by_operator(data, path.name)


# ------------------------------------------- quantisation TFLM does not read


def _conv_depthwise(
    bias_axis: int = 0,
    weight_zero_points: str = "per channel",
    conv_axis: int = 0,
) -> bytes:
    """CONV_2D then DEPTHWISE_CONV_2D, int8, per-channel weights with 8
    channels, biases quantised per channel along ``bias_axis`` (1-d: only 0
    is a dimension they have). ``weight_zero_points``: ``"per channel"`` (8
    zeros) or ``"one"`` (a single 0, TFLite Micro's short form);
    ``conv_axis``: the CONV_2D weights' ``quantized_dimension`` (the
    weights are 8x3x3x8, so 0 and 3 both have 8 entries)."""
    m = ModelBuilder()
    x = m.tensor((1, 6, 6, 8), "int8", scale=0.02, zero_point=-5)
    s1 = [0.004, 0.006, 0.005, 0.003, 0.007, 0.002, 0.004, 0.005]
    w1 = m.tensor(
        (8, 3, 3, 8), "int8", weights_i8(8, 3, 3, 8), scale=s1, axis=conv_axis
    )
    if weight_zero_points == "one":
        m.tensors[w1]["zps"] = [0]
    b1 = m.tensor(
        (8,),
        "int32",
        RNG.integers(-2000, 2000, 8),
        scale=[0.02 * s for s in s1],
        axis=bias_axis,
    )
    y1 = m.tensor((1, 6, 6, 8), "int8", scale=0.05, zero_point=-128)
    conv = dict(Padding=SAME, StrideW=1, StrideH=1, DilationWFactor=1)
    conv.update(DilationHFactor=1, FusedActivationFunction=RELU6)
    m.op("CONV_2D", [x, w1, b1], [y1], ("Conv2DOptions", conv))
    s2 = [0.01, 0.02, 0.015, 0.012, 0.008, 0.011, 0.009, 0.013]
    w2 = m.tensor((1, 3, 3, 8), "int8", weights_i8(1, 3, 3, 8), scale=s2, axis=3)
    if weight_zero_points == "one":
        m.tensors[w2]["zps"] = [0]
    b2 = m.tensor(
        (8,),
        "int32",
        RNG.integers(-2000, 2000, 8),
        scale=[0.05 * s for s in s2],
        axis=bias_axis,
    )
    y2 = m.tensor((1, 6, 6, 8), "int8", scale=0.04, zero_point=-128)
    depthwise = dict(conv, DepthMultiplier=1)
    m.op("DEPTHWISE_CONV_2D", [y1, w2, b2], [y2], ("DepthwiseConv2DOptions", depthwise))
    return m.build([x], [y2])


CASES = {
    "bias quantised along dimension 3 of a 1-d bias": dict(bias_axis=3),
    "one zero point for per-channel weights": dict(weight_zero_points="one"),
    "conv weights quantised along another dimension of the same size": dict(
        conv_axis=3
    ),
}


@pytest.mark.parametrize("case", CASES)
def test_quantisation_tflm_ignores_matches_tflite_micro(
    case: str, tmp_path: Path
) -> None:
    from usmp.testing import compare_tflm

    data = _conv_depthwise(**CASES[case])
    assert _tflm_loads(data)
    compare_with_tflm(data, "quantisation.tflite")
    path = tmp_path / "quantisation.tflite"
    path.write_bytes(data)
    status, err = _run(compare_tflm.main, [str(path), "--seeds", "2"])
    assert status == 0, err


# ------------------------------------------- file fields TFLM does not read


def _relu_model(signature: tuple[int, ...] | None = None, **builder: Any) -> bytes:
    m = ModelBuilder(**builder)
    x = m.tensor((1, 4), "float32", signature=signature)
    y = m.tensor((1, 4), "float32")
    m.op("RELU", [x], [y])
    return m.build([x], [y])


def _buffer_larger_than_its_tensor() -> bytes:
    m = ModelBuilder()
    x = m.tensor((1, 4), "float32")
    c = m.tensor((1, 4), "float32", RNG.standard_normal((1, 4)))
    y = m.tensor((1, 4), "float32")
    m.buffers[-1] += bytes(8)
    m.op("ADD", [x, c], [y], ("AddOptions", {}))
    return m.build([x], [y])


def _options_of_another_kind() -> bytes:
    m = ModelBuilder()
    a, b = m.tensor((1, 4), "float32"), m.tensor((1, 4), "float32")
    y = m.tensor((1, 4), "float32")
    m.op("ADD", [a, b], [y], ("SubOptions", dict(FusedActivationFunction=1)))
    return m.build([a, b], [y])


FILE_CASES = {
    "two subgraphs": (
        lambda: _relu_model(extra_subgraph=True),
        "the model has 2 subgraphs; subgraph 0 is compiled",
    ),
    "a dynamic inner dimension": (
        lambda: _relu_model(signature=(1, -1)),
        "tensor 't0' has a dynamic dimension ([1, -1]); compiled at its stored "
        "shape [1, 4]",
    ),
    "a shape_signature of another rank": (
        lambda: _relu_model(signature=(1, 4, 1)),
        "tensor 0 't0': shape_signature [1, 4, 1] does not match shape [1, 4]; ignored",
    ),
    "a shape_signature of other sizes": (
        lambda: _relu_model(signature=(1, 5)),
        "tensor 0 't0': shape_signature [1, 5] does not match shape [1, 4]; ignored",
    ),
    "a buffer larger than its tensor": (
        _buffer_larger_than_its_tensor,
        "tensor 1 't1': buffer 1 holds 24 bytes, shape [1, 4] of FLOAT32 needs 16; "
        "the first 16 are the tensor",
    ),
    "builtin options of another kind": (
        _options_of_another_kind,
        "operator 0 (ADD): builtin options are SubOptions, not AddOptions; the "
        "defaults of AddOptions are used",
    ),
}


@pytest.mark.parametrize("case", FILE_CASES)
def test_file_fields_tflm_ignores_are_warnings(case: str) -> None:
    build, warning = FILE_CASES[case]
    data = build()
    assert _tflm_loads(data)
    model = read_model(data, "fields.tflite")
    expected = f"fields.tflite: warning: {warning}"
    assert any(w.startswith(expected) for w in model.warnings), model.warnings
    compare_with_tflm(data, "fields.tflite")
