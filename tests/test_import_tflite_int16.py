"""int16 activations ("16x8" models) of the non-convolution builtins, bit
for bit with TFLite Micro.

* TFLM's own int16 integration-test models (``shared/models/tflite_micro/
  seanet/<op>/``): through ``usmp.compile`` and gcc, each reproduces its
  golden CSV exactly; and on seeded random inputs over the whole int16 range,
  every operator output (the oracle's and the C library's) equals TFLite
  Micro's.
* Single-operator models written with ``ModelBuilder`` for every option and
  the edge shapes (broadcasting, size-1 dimensions), compared the same way.
* The refusals TFLite Micro's kernels make for int16 (a non-zero zero point
  where it needs symmetric int16).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import usmp
from tests.test_import_tflite_synthetic import RELU, RELU6, ModelBuilder, refusal
from usmp.frontend.tflite_import import import_model
from usmp.frontend.tflite_reader import read_model
from usmp.oracle.relay_interpreter import evaluate
from usmp.testing.run_c import run_module
from usmp.testing.shared_models import MODELS_DIR
from usmp.testing.tflm_reference import difference, random_inputs, run_tflm

SEANET = MODELS_DIR / "tflite_micro/seanet"
PASSES = "fuse-ops,lower-ops,aot-lower-main,usmp"


def compare_every_tensor(data: bytes, seeds: tuple[int, ...] = (0, 1)) -> None:
    """Every operator output of the model, from the oracle and from the C
    library (the module returning all of them), equals TFLite Micro's on
    seeded inputs uniform over each input's whole integer range."""
    model = read_model(data, "int16.tflite")
    produced = [t for op in model.operators for t in op.outputs]
    module = import_model(model, produced)
    for seed in seeds:
        inputs = random_inputs(model, seed)
        want = run_tflm(data, inputs, produced)
        for source, got in (
            ("oracle", evaluate(module, inputs)),
            ("C", run_module(module, inputs, passes=PASSES)),
        ):
            for index, g, w in zip(produced, got, want, strict=True):
                name = model.tensors[index].name
                assert difference(g, w) is None, (
                    f"{source}, seed {seed}, tensor #{index} '{name}': "
                    f"{difference(g, w)}"
                )


# --------------------------------------------------- TFLM's seanet models


def _csv(path: Path, dtype: str) -> np.ndarray:
    return np.loadtxt(path, delimiter=",", dtype=np.int64).astype(dtype).reshape(-1)


SEANET_OPS = ["add", "sub"]


@pytest.mark.parametrize("op", SEANET_OPS)
def test_seanet_reproduces_the_golden_output(op: str, tmp_path: Path) -> None:
    """TFLM's integration test: the golden CSV exactly, through
    ``usmp.compile`` (usmp-compile's path) and gcc."""
    folder = SEANET / op
    path = folder / f"{op}0.tflite"
    model = read_model(path.read_bytes(), path.name)
    inputs = []
    for k, index in enumerate(model.inputs):
        t = model.tensors[index]
        assert t.dtype is not None
        (csv,) = folder.glob(f"{op}0_input{k}_*.csv")
        inputs.append(_csv(csv, str(t.dtype)).reshape(t.shape))
    lib = usmp.compile(path, output_dir=tmp_path / "out")
    (got,) = lib.run(inputs)
    golden = _csv(folder / f"{op}0_golden_int16.csv", "int16")
    assert got.dtype == np.int16
    np.testing.assert_array_equal(got.reshape(-1), golden)


@pytest.mark.parametrize("op", SEANET_OPS)
def test_seanet_matches_tflite_micro_on_random_inputs(op: str) -> None:
    compare_every_tensor((SEANET / op / f"{op}0.tflite").read_bytes())


# ------------------------------------------------ single-operator models


def _i16(m: ModelBuilder, shape: tuple[int, ...], scale: float, zp: int = 0) -> int:
    return m.tensor(shape, "int16", scale=scale, zero_point=zp)


@pytest.mark.parametrize(
    ("opcode", "options"), [("ADD", "AddOptions"), ("SUB", "SubOptions")]
)
@pytest.mark.parametrize(
    ("shape_a", "shape_b", "activation"),
    [
        ((1, 3, 4, 5), (1, 3, 4, 5), 0),  # same shape, no activation
        ((2, 3, 1, 5), (1, 1, 4, 1), RELU),  # both sides broadcast
        ((1, 4, 4, 3), (3,), RELU6),  # a bias-like vector
        ((5,), (1,), 0),  # size-1 dimension
    ],
)
def test_add_sub_int16(
    opcode: str,
    options: str,
    shape_a: tuple[int, ...],
    shape_b: tuple[int, ...],
    activation: int,
) -> None:
    m = ModelBuilder()
    a = _i16(m, shape_a, 0.0004)
    b = _i16(m, shape_b, 0.00013)
    out_shape = np.broadcast_shapes(shape_a, shape_b)
    y = _i16(m, out_shape, 0.0005)
    m.op(opcode, [a, b], [y], (options, dict(FusedActivationFunction=activation)))
    # a second one whose output scale is smaller than the inputs' (saturates)
    z = _i16(m, out_shape, 0.00005)
    m.op(opcode, [y, b], [z], (options, {}))
    compare_every_tensor(m.build([a, b], [z]))


def test_add_int16_with_zero_points() -> None:
    """TFLM's ADD / SUB kernels take int16 zero points (the general path)."""
    m = ModelBuilder()
    a = _i16(m, (2, 8), 0.002, zp=-1200)
    b = _i16(m, (2, 8), 0.0031, zp=700)
    y = _i16(m, (2, 8), 0.004, zp=-35)
    m.op("ADD", [a, b], [y], ("AddOptions", {}))
    z = _i16(m, (2, 8), 0.004, zp=90)
    m.op("SUB", [y, a], [z], ("SubOptions", dict(FusedActivationFunction=RELU)))
    compare_every_tensor(m.build([a, b], [z]))


@pytest.mark.parametrize(
    ("shape_a", "shape_b", "activation", "out_scale"),
    [
        ((1, 3, 4, 5), (1, 3, 4, 5), 0, 0.00002),  # right-shifting multiplier
        ((2, 3, 6), (3, 1), RELU, 0.0000001),  # broadcast, left-shifting one
        ((4, 1), (1,), RELU6, 0.0003),  # size-1 dimensions
    ],
)
def test_mul_int16(
    shape_a: tuple[int, ...],
    shape_b: tuple[int, ...],
    activation: int,
    out_scale: float,
) -> None:
    m = ModelBuilder()
    a = _i16(m, shape_a, 0.0004)
    b = _i16(m, shape_b, 0.0002)
    y = _i16(m, np.broadcast_shapes(shape_a, shape_b), out_scale)
    m.op("MUL", [a, b], [y], ("MulOptions", dict(FusedActivationFunction=activation)))
    compare_every_tensor(m.build([a, b], [y]))


def test_mul_int16_needs_zero_point_0() -> None:
    m = ModelBuilder()
    a = _i16(m, (4,), 0.001, zp=3)
    b = _i16(m, (4,), 0.001)
    y = _i16(m, (4,), 0.001)
    m.op("MUL", [a, b], [y], ("MulOptions", {}))
    message = refusal(m, [a, b], [y])
    assert message.startswith(
        "crafted.tflite: error: operator 0 (MUL): int16 MUL needs zero point 0 (symmetric int16, as "
        "TFLite Micro requires): 't0' has zero point 3"
    ), message
