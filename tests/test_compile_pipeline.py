"""A compile is a pipeline (issue 25): ``usmp-compile`` runs the pass
instances ``compile_passes(options)`` builds, ``--dump-pipeline`` prints
them as one ``-p`` string that reads back to the same passes, and
``usmp-import-tflite --print-debuginfo MODEL | usmp-opt -p "<it>" -t
c-library`` writes the library, the kit and the memory report
``usmp-compile`` writes, byte for byte:

* on every supported shared model with the default options (the
  ``usmp-compile`` output is shared with ``test_models_compile``'s memory
  bar: ``compiled_model`` in ``conftest.py``);
* on option sets that add or change passes: an offload target, the packed
  interface, the Arm DSP kernels (``--target "c -mcpu=cortex-m4"``:
  ``lower-ops{mcpu}``), application pools, alignments, a model with state and its I/O
  in the workspace, and a relay ``.mlir`` input. ``python
  benchmarks/pipeline_reproduce.py`` runs a few more, among them ``--patch
  auto`` on VWW int8 where the planner keeps the patch and where it refuses
  it (12 s of CPU each; FileCheck's ``patch_stage_evaluate.mlir`` checks
  both decisions on a small CNN).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from usmp.testing.reproduce import reproduce
from usmp.testing.shared_models import MODELS_DIR, SUPPORTED_MODELS
from usmp.tools.compile_options import CompileOptions, Pool
from usmp.tools.compile_pipeline import (
    compile_passes,
    parse_pipeline_text,
    pipeline_text,
)
from usmp.tools.usmp_compile import main as usmp_compile

KWS = MODELS_DIR / "mlperf_tiny/kws_ref_model.tflite"
HELLO = MODELS_DIR / "tflite_micro/hello_world_int8.tflite"
CHAIN = Path(__file__).parent.parent / "examples" / "chain.mlir"

OPTION_SETS = [
    CompileOptions(),
    CompileOptions(target="accel,c", offload=("CONV_2D,ADD=accel",)),
    CompileOptions(
        module_name="kws",
        algorithm="optimal",
        plan_time_limit=2.5,
        pools=(Pool("sram", size=8000, targets=("c", "npu:ro")), Pool("f", "constant")),
        workspace_byte_alignment=32,
        use_workspace_io=True,
        operator_order="source",
        fold_padding=False,
        overlap=False,
    ),
    CompileOptions(patch="auto", patch_budget=1e-05, patch_depth=2, patch_stripes=3),
    CompileOptions(interface_api="packed", call_type="packed", library_pools=True),
    CompileOptions(target="accel,c -mcpu=cortex-m4", offload=("CONV_2D=accel",)),
]


@pytest.mark.parametrize("options", OPTION_SETS)
def test_pipeline_text_reads_back_to_the_same_passes(options: CompileOptions) -> None:
    passes = compile_passes(options, report='out "1"\\memory/plan.json')
    text = pipeline_text(passes)
    assert parse_pipeline_text(text) == tuple(passes)


def test_pipeline_text_writes_floats_xdsl_reads() -> None:
    (patch,) = [p for p in compile_passes(OPTION_SETS[3]) if p.name == "patch-stage"]
    assert "budget=1.0e-05" in pipeline_text([patch])
    # no time limit: inf, as the passes read it (usmp.passes.options)
    options = CompileOptions(algorithm="optimal", plan_time_limit=float("inf"))
    passes = compile_passes(options)
    assert "time_limit=inf" in pipeline_text(passes)
    assert parse_pipeline_text(pipeline_text(passes)) == tuple(passes)


def test_dump_pipeline(capsys: pytest.CaptureFixture[str]) -> None:
    assert usmp_compile([str(KWS), "--dump-pipeline", "-o", "out"]) == 0
    assert capsys.readouterr().out == (
        'plan-devices{targets="c"},fold-explicit-padding,fuse-ops,lower-ops,'
        'aot-lower-main,usmp{report="out/memory/plan.json"},convert-to-emitc\n'
    )
    flags = ["--target", "accel,c", "--offload", "CONV_2D=accel", "--patch", "auto"]
    assert usmp_compile([str(KWS), "--dump-pipeline", *flags]) == 0
    text = capsys.readouterr().out
    assert text.startswith(
        'place-operators{offload="CONV_2D=accel"},plan-devices{targets="accel","c"},'
        'fold-explicit-padding,patch-stage{evaluate="fuse-ops,dedupe-functions'
        '{patched_only=true},lower-ops,aot-lower-main,usmp-plan-memory"},'
    )
    assert "report" not in text  # no -o: no report
    assert (
        usmp_compile([str(KWS), "--dump-pipeline", "--target", "c -mcpu=cortex-m7"])
        == 0
    )
    assert ',lower-ops{mcpu="cortex-m7"},' in capsys.readouterr().out


# The float models whose reproduction costs most (6-7 s each: the same
# passes as their int8 twins, with float constants) run in
# benchmarks/pipeline_reproduce.py, which covers every model.
REPRODUCED_IN_THE_BENCHMARK_ONLY = {
    "mlperf_tiny/vww_96_float.tflite",
    "mlperf_tiny/ad01_fp32.tflite",
}


@pytest.mark.parametrize(
    "name", [m for m in SUPPORTED_MODELS if m not in REPRODUCED_IN_THE_BENCHMARK_ONLY]
)
def test_usmp_opt_reproduces_usmp_compile(
    name: str, tmp_path: Path, compiled_model
) -> None:
    compiled = compiled_model(name)
    assert reproduce(MODELS_DIR / name, (), tmp_path, compiled) == []


OPTION_CASES = [
    (
        "mlperf_tiny/kws_ref_model.tflite",
        ["--target", "accel,c", "--offload", "CONV_2D,DEPTHWISE_CONV_2D=accel"],
    ),
    (
        "mlperf_tiny/kws_ref_model.tflite",
        ["--interface-api", "packed", "--call-type", "packed"],
    ),
    (
        "mlperf_tiny/kws_ref_model.tflite",
        ["--target", "c -mcpu=cortex-m4", "--use-workspace-io"],
    ),
    (
        "tflite_micro/hello_world_int8.tflite",
        [
            "--usmp-workspace-pools=sram,dtcm",
            "--usmp-workspace-pool-dtcm=size=16",
            "--usmp-parameter-pools=flash",
            "--constant-byte-alignment=32",
        ],
    ),
    ("tflite_micro/hello_world_float.tflite", ["--workspace-byte-alignment", "64"]),
    (
        "tflite_micro/trained_lstm_int8.tflite",
        ["--usmp-persistent-pools=state", "--use-workspace-io"],
    ),
]


@pytest.mark.parametrize(
    ("name", "flags"), OPTION_CASES, ids=[" ".join(f) for _, f in OPTION_CASES]
)
def test_usmp_opt_reproduces_usmp_compile_options(
    name: str, flags: list[str], tmp_path: Path, compiled_model
) -> None:
    compiled = compiled_model(name, *flags)  # KWS -mcpu: test_lower_ops_dsp's
    assert reproduce(MODELS_DIR / name, flags, tmp_path, compiled) == []


def test_relay_mlir_input_is_reproduced(tmp_path: Path) -> None:
    flags = ["--usmp-workspace-pools", "sram", "--use-workspace-io"]
    assert reproduce(CHAIN, flags, tmp_path) == []


def test_the_shell_pipe(tmp_path: Path) -> None:
    """The commands themselves, as a user types them."""
    out = tmp_path / "out"
    assert usmp_compile([str(HELLO), "-o", str(out), "-q"]) == 0
    bin_dir = Path(sys.executable).parent
    pipeline = subprocess.run(
        [bin_dir / "usmp-compile", HELLO, "--dump-pipeline", "-o", tmp_path / "o"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    imported = subprocess.Popen(
        [bin_dir / "usmp-import-tflite", "--print-debuginfo", HELLO],
        stdout=subprocess.PIPE,
    )
    library = subprocess.run(
        [bin_dir / "usmp-opt", "-p", pipeline, "-t", "c-library"],
        stdin=imported.stdout,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert imported.wait() == 0
    from usmp.tools.firmware_kit import read_split_file

    files = read_split_file(library)
    assert "codegen/host/src/tvmgen_default_operators.c" in files
    for path, text in files.items():
        assert (out / path).read_text() == text, path
