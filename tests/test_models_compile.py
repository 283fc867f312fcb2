"""``usmp-compile``: the output directory, the RFC's pool flags, progress and
errors, and the memory bar on every supported model:

* the workspace equals its liveness lower bound (with and without the I/O
  inside it);
* with the I/O inside it, the workspace is no larger than TFLite Micro's
  tensor arena for the same model (``stats.json``);
* the constant pools hold no more than the model's weights plus the
  per-channel requantisation tables (each buffer rounded up to the pool's
  16-byte alignment).
"""

from __future__ import annotations

import json
import math
import shutil
import subprocess
from pathlib import Path

import pytest

from usmp.dialects.relay_lstm import LstmOp
from usmp.dialects.relay_ops import FixedPointMultiplyOp
from usmp.frontend.tflite_import import import_tflite
from usmp.testing.shared_models import MODELS_DIR, SUPPORTED_MODELS, model_facts
from usmp.tools.usmp_compile import PIPELINE, main

HELLO = MODELS_DIR / "tflite_micro/hello_world_int8.tflite"
GCC = shutil.which("gcc")
STRICT = ["-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic"]


def compile_(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    status = main(args)
    captured = capsys.readouterr()
    assert captured.out == ""
    return status, captured.err


def metadata(out: Path) -> dict:
    return json.loads((out / "metadata.json").read_text())


# ------------------------------------------------------------ the library


def test_output_directory_progress_and_metadata(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    status, err = compile_([str(HELLO), "-o", str(out)], capsys)
    assert status == 0, err
    steps = [line.split()[1] for line in err.splitlines()[: len(PIPELINE)]]
    assert steps == list(PIPELINE)
    assert "pool global_workspace [workspace]: 32 B (lower bound 28 B)" in err
    meta = metadata(out)
    assert meta["files"] == [
        "CMakeLists.txt",
        "Makefile",
        "codegen/host/include/tvmgen_default.h",
        "codegen/host/src/tvmgen_default.c",
        "codegen/host/src/tvmgen_default_aot_main.c",
        "codegen/host/src/tvmgen_default_operators.c",
        "example/main.c",
        "memory/plan.global_const.svg",
        "memory/plan.global_workspace.svg",
        "memory/plan.json",
        "memory/summary.csv",
        "memory/summary.txt",
        "metadata.json",
        "src/hello_world_int8.relay.mlir",
    ]
    assert all((out / f).is_file() for f in meta["files"])
    assert "compile_time_s" not in meta  # wall-clock times only on stderr
    assert meta["memory_summary"] == {
        "workspace_bytes": 32,
        "workspace_lower_bound_bytes": 28,  # with the allowed overlaps
        "workspace_no_alias_bound_bytes": 32,
        "constant_bytes": 416,
        "persistent_bytes": 0,
        "io_in_workspace": False,
    }
    assert meta["memory"] == json.loads((out / "memory/plan.json").read_text())
    assert meta["model"]["inputs"][0]["name"] == "serving_default_dense_input:0"
    assert meta["model"]["inputs"][0]["zero_point"] == -128
    assert (out / "memory/plan.global_workspace.svg").read_text().startswith("<svg")


def test_rfc_pool_flags_give_application_pools(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    status, err = compile_(
        [
            str(HELLO),
            "-o",
            str(out),
            "--module-name",
            "hello",
            "--usmp-workspace-pools=dtcm,sram",
            "--usmp-parameter-pools=flash",
            "--usmp-workspace-pool-dtcm=target=c:rw;size=64",
            "--usmp-parameter-pool-flash",
            "target=c;align=32",
        ],
        capsys,
    )
    assert status == 0, err
    meta = metadata(out)
    assert meta["pools_requested"] == [
        {
            "name": "dtcm",
            "kind": "workspace",
            "size": 64,
            "alignment": 16,
            "access": {"c": "rw"},
        },
        {
            "name": "sram",
            "kind": "workspace",
            "size": 0,
            "alignment": 16,
            "access": {"c": "rw"},
        },
        {
            "name": "flash",
            "kind": "constant",
            "size": 0,
            "alignment": 32,
            "access": {"c": "ro"},
        },
    ]
    pools = {p["name"]: p for p in meta["memory"]["pools"]}
    assert pools["dtcm"]["size"] == 32  # fits the 64-byte limit, sram unused
    assert pools["flash"]["alignment"] == 32
    header = (out / "codegen/host/include/tvmgen_hello.h").read_text()
    assert "TVMWorkspaces_hello" in header and "TVMParameters_hello" in header
    assert "#define TVM_HELLO_FLASH_PARAMETER_BUFFER_ALIGNMENT 32" in header
    assert (out / "codegen/host/include/tvmgen_hello_parameters.h").is_file()
    sources = sorted(str(p) for p in (out / "codegen/host/src").glob("*.c"))
    assert GCC is not None
    subprocess.run(
        [GCC, *STRICT, "-I", str(out / "codegen/host/include"), "-c", *sources],
        cwd=tmp_path,
        check=True,
        capture_output=True,
    )


def test_library_pools_defines_every_pool(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    status, err = compile_(
        [str(HELLO), "-o", str(out), "--usmp-workspace-pools=sram", "--library-pools"],
        capsys,
    )
    assert status == 0, err
    header = (out / "codegen/host/include/tvmgen_default.h").read_text()
    assert "TVMWorkspaces_default" not in header
    assert (
        "static uint8_t tvmgen_default_sram["
        in (out / "codegen/host/src/tvmgen_default.c").read_text()
    )


def test_alignment_flags_without_pools(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    status, err = compile_(
        [
            str(HELLO),
            "-o",
            str(out),
            "--workspace-byte-alignment",
            "64",
            "--stop-after",
            "usmp",
        ],
        capsys,
    )
    assert status == 0, err
    pools = {p["name"]: p["alignment"] for p in metadata(out)["memory"]["pools"]}
    assert pools == {"global_workspace": 64, "global_const": 16}


def test_stop_after_and_dump_ir(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    status, err = compile_(
        [
            str(HELLO),
            "-o",
            str(out),
            "--stop-after",
            "aot-lower-main",
            "--dump-ir",
            "-q",
        ],
        capsys,
    )
    assert (status, err) == (0, "")
    assert sorted(p.name for p in (out / "ir").iterdir()) == [
        "00-import.mlir",
        "01-plan-devices.mlir",
        "02-fold-explicit-padding.mlir",
        "03-fuse-ops.mlir",
        "04-lower-ops.mlir",
        "05-aot-lower-main.mlir",
    ]
    text = (out / "default.aot-lower-main.mlir").read_text()
    assert "tvmgen_default___tvm_main__" in text and "tir.allocate" in text
    assert not (out / "memory").exists()
    assert metadata(out)["memory"] is None


def test_relay_mlir_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    assert main([str(HELLO), "-o", str(out), "--stop-after", "import", "-q"]) == 0
    relay = out / "src/hello_world_int8.relay.mlir"
    out2 = tmp_path / "out2"
    status, err = compile_(
        [str(relay), "-o", str(out2), "--stop-after", "usmp", "-q"], capsys
    )
    assert (status, err) == (0, "")
    assert metadata(out2)["memory_summary"]["workspace_bytes"] == 32
    assert metadata(out2)["model"] == {
        "file": "hello_world_int8.relay.mlir",
        "format": "mlir",
    }


# ----------------------------------------------------------------- errors


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (
            ["--usmp-workspace-pool-sram=size=10"],
            "usmp-compile: error: --usmp-workspace-pool-sram: 'sram' is not in "
            "--usmp-workspace-pools (listed: none)\n",
        ),
        (
            ["--usmp-workspace-pools=sram", "--usmp-workspace-pool-sram=bytes=10"],
            "usmp-compile: error: pool 'sram': 'bytes=10' is not KEY=VALUE with KEY "
            "one "
            'of target, size, align (e.g. "target=c:rw;size=65536;align=16")\n',
        ),
        (
            ["--usmp-workspace-pools=sram", "--usmp-workspace-pool-sram=target=c:rx"],
            "usmp-compile: error: pool 'sram': target entry 'c:rx' is not "
            "TARGET[:rw|:ro]\n",
        ),
        (
            ["--usmp-workspace-pools=sram,sram"],
            "usmp-compile: error: pool 'sram' is listed twice\n",
        ),
        (
            ["--usmp-parameter-pools=2flash"],
            "usmp-compile: error: --usmp-parameter-pools: '2flash' is not a valid pool "
            "name; a pool name is a C identifier: a letter or '_', then letters, "
            "digits or '_' (it names the pool's C array, struct field and macros)\n",
        ),
        (
            ["--constant-byte-alignment", "12"],
            "usmp-compile: error: --constant-byte-alignment: alignment 12 is not accepted; "
            "expected a power of two from 1 to 4096\n",
        ),
        (
            ["--module-name", "my-model"],
            "usmp-compile: error: --module-name 'my-model' is not a C identifier\n",
        ),
    ],
)
def test_bad_flags(
    flags: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, err = compile_([str(HELLO), "-o", str(tmp_path / "out"), *flags], capsys)
    assert (status, err) == (1, message)


def test_refused_model_names_the_operator(tmp_path: Path) -> None:
    result = subprocess.run(
        [
            "usmp-compile",
            str(MODELS_DIR / "tflite_micro/person_detect_vela.tflite"),
            "-o",
            str(tmp_path / "out"),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 1
    assert result.stderr.startswith(
        "person_detect_vela.tflite: error: operator 0 (CUSTOM 'ethos-u')"
    )
    assert "Traceback" not in result.stderr


# -------------------------------------------------------------- memory bar


def _requantisation_bytes(name: str, alignment: int) -> int:
    """Per-channel multiplier + shift tables (int32 each) of the model."""
    module = import_tflite(MODELS_DIR / name)
    lengths = [
        len(op.multiplier)
        for op in module.walk()
        if isinstance(op, FixedPointMultiplyOp)
    ]
    return sum(2 * math.ceil(4 * n / alignment) * alignment for n in lengths if n > 1)


def _lstm_table_bytes(name: str) -> int:
    """The int16 sigmoid table (256 x i16) each integer LSTM's function holds."""
    module = import_tflite(MODELS_DIR / name)
    return 512 * sum(
        1 for op in module.walk() if isinstance(op, LstmOp) and op.quantized
    )


@pytest.mark.parametrize(
    "name",
    SUPPORTED_MODELS,
)
def test_memory_bar(name: str, compiled_model) -> None:
    stats = model_facts(name)
    # the whole compile, shared with test_compile_pipeline (conftest.py)
    plain = compiled_model(name)
    with_io = compiled_model(name, "--use-workspace-io")
    summary, summary_io = (
        metadata(plain)["memory_summary"],
        metadata(with_io)["memory_summary"],
    )
    # at or below the no-alias bound (allowed overlaps, usmp_overlap), never
    # below the finer bound
    for s in (summary, summary_io):
        assert s["workspace_lower_bound_bytes"] <= s["workspace_bytes"]
        assert s["workspace_bytes"] <= s["workspace_no_alias_bound_bytes"]
    assert summary_io["io_in_workspace"] is True
    if stats["tflm_arena_head_bytes"] is not None:  # None: TFLM refuses (hybrid)
        assert summary_io["workspace_bytes"] <= stats["tflm_arena_head_bytes"]
    buffers = sum(
        1
        for t in metadata(plain)["memory"]["buffers"]
        if t.get("pool") == "global_const"
    )
    bound = (
        stats["weight_bytes"]
        + _requantisation_bytes(name, 16)
        + _lstm_table_bytes(name)
        + 15 * buffers
    )
    assert summary["constant_bytes"] <= bound


def test_pool_too_small_is_located_at_the_tflite_operator(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    kws = MODELS_DIR / "mlperf_tiny/kws_ref_model.tflite"
    pool = "--usmp-workspace-pool-sram=target=c:rw;size=15999"
    args = [str(kws), "-o", str(tmp_path), "-q", "--usmp-workspace-pools", "sram"]
    # without overlaps (with them KWS fits in 8,448 B)
    status, err = compile_([*args, pool, "--usmp-overlap", "off"], capsys)
    assert status == 1
    # sid_2 is CONV_2D 2's output; of the buffers it conflicts with (sid_1 and
    # sid_3, never live together), only the one live at its fullest step
    assert err.startswith(
        "kws_ref_model.tflite:2 (CONV_2D): error: buffer 'sid_2' (8000 B) fits in "
        "no candidate pool: pool 'sram' (limit 15999 B) already holds 8000 B"
    ), err
    assert err.rstrip().endswith(": sid_1 (8000 B); 16000 B in all)"), err
    assert "sid_3" not in err
