"""The Python API (``usmp.compile`` -> ``usmp.Library``): the plan, the
files, ``run`` against TFLite Micro, a relay module as input, the same output
as ``usmp-compile`` for the same options, and errors as ``CompileError`` /
``ValueError`` with usmp-compile's messages."""

from __future__ import annotations

import gc
from pathlib import Path

import numpy as np
import pytest
from xdsl.printer import Printer

import usmp
from usmp.frontend.tflite_import import import_tflite
from usmp.frontend.tflite_reader import read_model_file
from usmp.testing.shared_models import MODELS_DIR
from usmp.testing.tflm_reference import difference, random_inputs, run_tflm
from usmp.tools.usmp_compile import main as usmp_compile

KWS = MODELS_DIR / "mlperf_tiny/kws_ref_model.tflite"
SINE = MODELS_DIR / "tflite_micro/hello_world_float.tflite"


@pytest.fixture(scope="module")
def kws() -> usmp.Library:
    return usmp.compile(
        KWS,
        pools=[usmp.Pool("sram", size=65536), usmp.Pool("flash", kind="constant")],
        algorithm="hill_climb",
        module_name="kws",
    )


def _tflm(model: Path, inputs: list[np.ndarray]) -> list[np.ndarray]:
    return run_tflm(model.read_bytes(), inputs, list(read_model_file(model).outputs))


def test_plan_and_files(kws: usmp.Library) -> None:
    plan = kws.plan
    assert plan.algorithm == "hill_climb"
    assert [(p.name, p.kind, p.provided_by) for p in plan.pools] == [
        ("sram", "workspace", "application"),
        ("flash", "constant", "application"),
    ]
    # hill_climb's orders find no overlap here; the finer bound is lower
    assert plan.workspace_bytes == 16000 > plan.workspace_lower_bound
    assert plan.constant_bytes == 27248
    sram = plan.pool("sram")
    assert sram.buffers and all(
        0 <= b.offset and b.offset + b.size <= sram.size for b in sram.buffers
    )
    assert "sram" in str(plan) and "16,000" in str(plan)
    with pytest.raises(KeyError, match=r"no pool 'dtcm' \(pools: sram, flash\)"):
        plan.pool("dtcm")
    assert "codegen/host/include/tvmgen_kws.h" in kws.files
    assert all(path.is_file() for path in kws.files.values())
    assert "#define TVMGEN_KWS_SRAM_WORKSPACE_POOL_SIZE 16000" in kws.header
    assert "TVMWorkspaces_kws" in kws.source("codegen/host/include/tvmgen_kws.h")
    assert "16,000 B" in repr(kws)


def test_run_matches_tflite_micro(kws: usmp.Library) -> None:
    model = read_model_file(KWS)
    inputs = random_inputs(model, 0)
    (got,) = kws.run(inputs)
    (want,) = _tflm(KWS, inputs)
    assert difference(got, want) is None
    # by name
    (again,) = kws.run({"input_1": inputs[0]}, runs=2)
    assert np.array_equal(again, got)
    # float values quantized with the input's scale and zero point as TFLite's
    # QUANTIZE does: the values the int8 input dequantizes to give it back,
    # and halfway values round away from zero
    (q,) = kws.metadata["model"]["inputs"]
    scale, zero = q["scale"], q["zero_point"]
    real = (inputs[0].astype(np.float32) - zero) * np.float32(scale)
    (from_float,) = kws.run([real], quantize=True)
    assert np.array_equal(from_float, got)
    halfway = np.full((1, 49, 10, 1), 2.5 * scale, np.float32)
    halfway[0, 0, 0, 0] = -2.5 * scale
    assert usmp.api._quantize(halfway, scale, 0, np.dtype(np.int8))[
        0, :2, 0, 0
    ].tolist() == [-3, 3]
    assert 0 < kws.time(inputs, runs=3) < 1e6


def test_relay_module_input_is_left_unchanged(tmp_path: Path) -> None:
    module = import_tflite(SINE)
    before = _text(module)
    lib = usmp.compile(module, output_dir=tmp_path / "sine", use_workspace_io=True)
    assert _text(module) == before
    assert lib.directory == tmp_path / "sine"
    assert lib.interface["io_in_workspace"]
    inputs = random_inputs(read_model_file(SINE), 1)
    (got,) = lib.run(inputs)
    (want,) = _tflm(SINE, inputs)
    assert difference(got, want) is None


def _text(module: object) -> str:
    from io import StringIO

    stream = StringIO()
    Printer(stream=stream).print_op(module)  # pyright: ignore[reportArgumentType]
    return stream.getvalue()


def test_same_output_as_usmp_compile(tmp_path: Path) -> None:
    """One implementation: the API and the CLI write the same files."""
    api = usmp.compile(
        SINE,
        output_dir=tmp_path / "api",
        pools=[usmp.Pool("dtcm", size=64, alignment=32), usmp.Pool("sram")],
        algorithm="greedy_by_size",
    )
    argv = [
        str(SINE),
        "-o",
        str(tmp_path / "cli"),
        "-q",
        "--algorithm",
        "greedy_by_size",
        "--usmp-workspace-pools=dtcm,sram",
        "--usmp-workspace-pool-dtcm=size=64;align=32",
    ]
    assert usmp_compile(argv) == 0
    cli = tmp_path / "cli"
    assert sorted(api.files) == sorted(
        str(p.relative_to(cli)) for p in cli.rglob("*") if p.is_file()
    )
    for relative, path in api.files.items():
        assert path.read_bytes() == (cli / relative).read_bytes(), relative


def test_temporary_output_goes_with_the_library() -> None:
    lib = usmp.compile(SINE)
    folder = lib.directory.parent
    assert folder.is_dir()
    del lib
    gc.collect()
    assert not folder.exists()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (
            {"model": MODELS_DIR / "missing.tflite"},
            "missing.tflite: error: cannot read the file: No such file or directory",
        ),
        (
            {"algorithm": "first_fit"},
            "usmp-compile: error: argument --algorithm/--usmp-algorithm: invalid "
            "choice: 'first_fit' (choose from",
        ),
        (
            {"pools": [usmp.Pool("sram", kind="scratch")]},
            "pool 'sram': kind 'scratch' is not one of workspace, constant",
        ),
        (
            {"pools": [usmp.Pool("my-sram")]},
            "'my-sram' is not a valid pool name",
        ),
        ({"pools": [usmp.Pool("sram", size=8)]}, "fits in no candidate pool"),
        ({"module_name": "my model"}, "--module-name 'my model' is not a C identifier"),
    ],
    ids=["missing_file", "algorithm", "pool_kind", "pool_name", "pool_size", "name"],
)
def test_errors(kwargs: dict, message: str) -> None:
    model = kwargs.pop("model", SINE)
    with pytest.raises(usmp.CompileError) as error:
        usmp.compile(model, **kwargs)
    assert message in str(error.value)


def test_run_checks_its_inputs(kws: usmp.Library) -> None:
    with pytest.raises(ValueError, match="model 'kws' takes 1 inputs, got 2"):
        kws.run([np.zeros(490, np.int8)] * 2)
    with pytest.raises(
        ValueError, match=r"must have shape \[1, 49, 10, 1\], got \[10\]"
    ):
        kws.run([np.zeros(10, np.int8)])
    # the same number of values in another shape: refused, as TFLM does
    with pytest.raises(
        ValueError, match=r"must have shape \[1, 49, 10, 1\], got \[490\]"
    ):
        kws.run([np.zeros(490, np.int8)])
    with pytest.raises(ValueError, match=r"must be int8, got int64 \(convert it"):
        kws.run([np.zeros((1, 49, 10, 1), np.int64)])
    with pytest.raises(ValueError, match="must be int8, got float32.*quantize=True"):
        kws.run([np.zeros((1, 49, 10, 1), np.float32)])
    with pytest.raises(ValueError, match="must be a numpy array of int8"):
        kws.run([[0] * 490])
    strided = np.zeros((1, 49, 20, 1), np.int8)[:, :, ::2, :]
    with pytest.raises(ValueError, match="must be C-contiguous"):
        kws.run([strided])
    with pytest.raises(ValueError, match="has no input x"):
        kws.run({"x": np.zeros(490, np.int8)})
