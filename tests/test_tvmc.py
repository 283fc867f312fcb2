"""``usmp-tvmc``: TVM 0.19's ``tvmc compile`` command lines.

* TVM's own workspace-pool cases (``tests/python/driver/tvmc/
  test_workspace_pools.py``) parse to the pools TVM builds from them;
* a microTVM AOT command line (TVM's docs and apps) compiles a shared model
  to a Model Library Format ``.tar``: it extracts, its ``metadata.json``
  follows TVM's schema (version 7) with the plan's sizes, and the C inside
  builds with ``-std=c99 -Werror -pedantic`` and gives TFLite Micro's outputs
  bit for bit, also with application-provided workspace pools;
* every option usmp-tvmc cannot honour is a one-line error naming it.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tarfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from usmp.frontend.tflite_reader import read_model_file
from usmp.testing.run_c import DEFAULT_CFLAGS
from usmp.testing.shared_models import MODELS_DIR
from usmp.testing.tflm_reference import difference, random_inputs, run_tflm
from usmp.tools.mlf import PARAMS_LIST_MAGIC
from usmp.tools.tvmc import _parser, main
from usmp.tools.tvmc_pools import TvmcPoolError, workspace_pools

HELLO = MODELS_DIR / "tflite_micro/hello_world_int8.tflite"
KWS = MODELS_DIR / "mlperf_tiny/kws_ref_model.tflite"
GCC = shutil.which("gcc")

# the microTVM AOT command line of TVM's docs (apps/microtvm, tvmc tutorials)
DOCS_COMMAND = [
    "compile",
    "--target=cmsis-nn,c",
    "--target-cmsis-nn-mcpu=cortex-m7",
    "--target-c-mcpu=cortex-m7",
    "--runtime=crt",
    "--executor=aot",
    "--executor-aot-interface-api=c",
    "--executor-aot-unpacked-api=1",
    "--pass-config",
    "tir.usmp.enable=1",
    "--pass-config",
    "tir.usmp.algorithm=hill_climb",
    "--pass-config",
    "tir.disable_storage_rewrite=1",
    "--pass-config",
    "tir.disable_vectorize=1",
]


# ------------------------------------------------- TVM's workspace-pool cases


def pools(argv: list[str], targets: list[str]) -> list[dict[str, Any]]:
    args, leftovers = _parser().parse_known_args(["model.tflite", *argv])
    assert leftovers == []
    return [p.as_json() for p in workspace_pools(args, targets, print)]


def pool(name: str, targets: list[str], **fields: Any) -> dict[str, Any]:
    defaults: dict[str, Any] = {
        "pool_name": name,
        "targets": targets,
        "size_hint_bytes": -1,
        "clock_frequency_hz": -1,
        "read_bandwidth_bytes_per_cycle": -1,
        "write_bandwidth_bytes_per_cycle": -1,
        "read_latency_cycles": 0,
        "write_latency_cycles": 0,
        "target_burst_bytes": {},
    }
    return {**defaults, **fields}


ALL_FIELDS = [
    "--workspace-pools-size-hint-bytes=sram:400",
    "--workspace-pools-clock-frequency-hz=sram:500",
    "--workspace-pools-read-bandwidth-bytes-per-cycle=sram:200",
    "--workspace-pools-write-bandwidth-bytes-per-cycle=sram:100",
    "--workspace-pools-read-latency-cycles=sram:50",
    "--workspace-pools-write-latency-cycles=sram:9001",
    "--workspace-pools-target-burst-bytes=sram:c:2",
]
ALL_VALUES = {
    "size_hint_bytes": 400,
    "clock_frequency_hz": 500,
    "read_bandwidth_bytes_per_cycle": 200,
    "write_bandwidth_bytes_per_cycle": 100,
    "read_latency_cycles": 50,
    "write_latency_cycles": 9001,
    "target_burst_bytes": {"c": 2},
}
TWO_POOLS = [
    "--workspace-pools=sram,flash",
    "--workspace-pools-targets=sram:c",
    "--workspace-pools-targets=flash:c",
    "--workspace-pools-size-hint-bytes=sram:1024",
    "--workspace-pools-size-hint-bytes=flash:2048",
    "--workspace-pools-clock-frequency-hz=sram:4000000",
    "--workspace-pools-clock-frequency-hz=flash:2000000",
    "--workspace-pools-read-bandwidth-bytes-per-cycle=sram:8",
    "--workspace-pools-read-bandwidth-bytes-per-cycle=flash:4",
    "--workspace-pools-write-bandwidth-bytes-per-cycle=sram:4",
    "--workspace-pools-write-bandwidth-bytes-per-cycle=flash:1",
    "--workspace-pools-read-latency-cycles=sram:250",
    "--workspace-pools-read-latency-cycles=flash:2000",
    "--workspace-pools-write-latency-cycles=sram:500",
    "--workspace-pools-write-latency-cycles=flash:1000",
    "--workspace-pools-target-burst-bytes=sram:c:8",
    "--workspace-pools-target-burst-bytes=flash:c:4",
]
TWO_VALUES = [
    pool(
        "sram",
        ["c"],
        size_hint_bytes=1024,
        clock_frequency_hz=4000000,
        read_bandwidth_bytes_per_cycle=8,
        write_bandwidth_bytes_per_cycle=4,
        read_latency_cycles=250,
        write_latency_cycles=500,
        target_burst_bytes={"c": 8},
    ),
    pool(
        "flash",
        ["c"],
        size_hint_bytes=2048,
        clock_frequency_hz=2000000,
        read_bandwidth_bytes_per_cycle=4,
        write_bandwidth_bytes_per_cycle=1,
        read_latency_cycles=2000,
        write_latency_cycles=1000,
        target_burst_bytes={"c": 4},
    ),
]

# (TVM test name, flags, --target kinds, the pools TVM builds)
TVM_CASES = [
    ("recombobulate_empty", [], ["llvm"], []),
    (
        "recombobulate",
        [
            "--workspace-pools=sram",
            "--workspace-pools-targets=sram:llvm",
            "--workspace-pools-size-hint-bytes=sram:400",
            "--workspace-pools-clock-frequency-hz=sram:500",
        ],
        ["llvm"],
        [pool("sram", ["llvm"], size_hint_bytes=400, clock_frequency_hz=500)],
    ),
    (
        "defaults",
        ["--workspace-pools=sram", "--workspace-pools-targets=sram:llvm"],
        ["llvm"],
        [pool("sram", ["llvm"])],
    ),
    (
        "multi_fields",
        ["--workspace-pools=sram", "--workspace-pools-targets=sram:c", *ALL_FIELDS],
        ["c"],
        [pool("sram", ["c"], **ALL_VALUES)],
    ),
    (
        "multi_fields_variant",
        [
            "--workspace-pools=flash",
            "--workspace-pools-targets=flash:c",
            *(f.replace("sram", "flash") for f in ALL_FIELDS),
        ],
        ["c"],
        [pool("flash", ["c"], **ALL_VALUES)],
    ),
    ("multi_fields_multi_pools", TWO_POOLS, ["c"], TWO_VALUES),
    (
        "multi_fields_ordering",  # companions in another order: same pools
        [TWO_POOLS[0], *reversed(TWO_POOLS[1:])],
        ["c"],
        TWO_VALUES,
    ),
    (
        "multi_target",
        [
            "--workspace-pools=sram",
            "--workspace-pools-targets=sram:c,llvm",
            "--workspace-pools-target-burst-bytes=sram:c:8",
            "--workspace-pools-target-burst-bytes=sram:llvm:4",
        ],
        ["c", "llvm"],
        [pool("sram", ["c", "llvm"], target_burst_bytes={"c": 8, "llvm": 4})],
    ),
    (
        "no_target_burst_bytes",
        [
            "--workspace-pools=sram",
            "--workspace-pools-targets=sram:c",
            "--workspace-pools-target-burst-bytes=sram:c:8",
        ],
        ["c"],
        [pool("sram", ["c"], target_burst_bytes={"c": 8})],
    ),
    (
        "parameter_overrides",  # the last occurrence wins
        [
            "--workspace-pools=sram",
            "--workspace-pools-targets=sram:c",
            "--workspace-pools-size-hint-bytes=sram:800",
            "--workspace-pools-size-hint-bytes=sram:400",
            "--workspace-pools-clock-frequency-hz=sram:4000000",
            "--workspace-pools-clock-frequency-hz=sram:3600000",
        ],
        ["c"],
        [pool("sram", ["c"], size_hint_bytes=400, clock_frequency_hz=3600000)],
    ),
    (
        "single_pool_overrides",
        [
            "--workspace-pools=sram,flash",
            "--workspace-pools-targets=sram:c",
            "--workspace-pools-targets=flash:c",
            "--workspace-pools-targets=sram:c,llvm",
            "--workspace-pools-size-hint-bytes=sram:800",
            "--workspace-pools-size-hint-bytes=flash:1200",
            "--workspace-pools-size-hint-bytes=sram:400",
        ],
        ["c", "llvm"],
        [
            pool("sram", ["c", "llvm"], size_hint_bytes=400),
            pool("flash", ["c"], size_hint_bytes=1200),
        ],
    ),
]


@pytest.mark.parametrize(
    ("flags", "targets", "expected"),
    [case[1:] for case in TVM_CASES],
    ids=[case[0] for case in TVM_CASES],
)
def test_tvm_workspace_pool_cases(
    flags: list[str], targets: list[str], expected: list[dict[str, Any]]
) -> None:
    assert pools(flags, targets) == expected


def test_tvm_argparse_case_keeps_every_occurrence() -> None:
    args, leftovers = _parser().parse_known_args(
        [
            "m.tflite",
            "--workspace-pools=sram,flash",
            "--workspace-pools-targets=sram:c,llvm",
            "--workspace-pools-targets=flash:c",
            "--workspace-pools-size-hint-bytes=sram:400",
            "--workspace-pools-size-hint-bytes=sram:500",
            "--workspace-pools-read-latency-cycles=sram:50",
            "--workspace-pools-read-latency-cycles=flash:30",
            "--workspace-pools-is-internal=sram:0",
        ]
    )
    assert args.workspace_pools == "sram,flash"
    assert args.workspace_pools_targets == ["sram:c,llvm", "flash:c"]
    assert args.workspace_pools_size_hint_bytes == ["sram:400", "sram:500"]
    assert args.workspace_pools_read_latency_cycles == ["sram:50", "flash:30"]
    assert leftovers == ["--workspace-pools-is-internal=sram:0"]


def test_tvm_missing_target_case_is_an_error() -> None:
    with pytest.raises(
        TvmcPoolError, match='no target specified for workspace pool "sram"'
    ):
        pools(["--workspace-pools=sram"], ["c"])


def test_companion_for_an_unlisted_pool_is_ignored_with_a_warning() -> None:
    args, _ = _parser().parse_known_args(
        [
            "m.tflite",
            "--workspace-pools=sram",
            "--workspace-pools-targets=sram:c",
            "--workspace-pools-size-hint-bytes=dram:64",
        ]
    )
    warnings: list[str] = []
    assert [p.pool_name for p in workspace_pools(args, ["c"], warnings.append)] == [
        "sram"
    ]
    assert warnings == [
        "--workspace-pools-size-hint-bytes: pool 'dram' is not in --workspace-pools "
        "(sram); ignored, as tvmc does"
    ]


# ------------------------------------------------------- compile, run, compare


def tvmc(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    status = main(argv)
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "Traceback" not in captured.err
    return status, captured.err


def extract(tar: Path, folder: Path) -> dict[str, Any]:
    with tarfile.open(tar) as archive:
        archive.extractall(folder, filter="data")
    return json.loads((folder / "metadata.json").read_text())


def harness(interface: dict[str, Any], headers: list[str]) -> str:
    """A C main: reads the inputs from files, runs, writes the outputs."""
    lines = ["#include <stdio.h>", *(f'#include "{h}"' for h in headers)]
    tensors = [*interface["inputs"], *interface["outputs"]]
    for k, t in enumerate(tensors):
        lines.append(f"static {t['c_type']} t{k}[{t['bytes']}];")
    app_pools = [
        p
        for p in interface["pools"]
        if p["provided_by"] == "application" and p["kind"] == "workspace"
    ]
    for p in app_pools:
        lines.append(
            f"static uint8_t pool_{p['c_name']}[{p['size_macro']}] "
            f"__attribute__((aligned({p['alignment']})));"
        )
    lines.append("int main(int argc, char** argv) {")
    lines.append("  int k; FILE* f;")
    lines.append(
        f"  void* data[] = {{{', '.join(f't{k}' for k in range(len(tensors)))}}};"
    )
    lines.append(
        f"  size_t bytes[] = {{{', '.join(f'sizeof t{k}' for k in range(len(tensors)))}}};"
    )
    n_in = len(interface["inputs"])
    lines.append(f"  if (argc != {len(tensors) + 1}) return 2;")
    lines.append(f"  for (k = 0; k < {n_in}; ++k) {{")
    lines.append('    f = fopen(argv[k + 1], "rb");')
    lines.append("    if (!f || fread(data[k], 1, bytes[k], f) != bytes[k]) return 3;")
    lines.append("    fclose(f);")
    lines.append("  }")
    ins = ", ".join(f"t{k}" for k in range(n_in))
    outs = ", ".join(f"t{k}" for k in range(n_in, len(tensors)))
    call = "&in, &out"
    lines.append(f"  {{ {interface['inputs_type']} in = {{{ins}}};")
    lines.append(f"  {interface['outputs_type']} out = {{{outs}}};")
    if app_pools:
        pointers = ", ".join(f"pool_{p['c_name']}" for p in app_pools)
        lines.append(f"  {interface['workspaces_type']} ws = {{{pointers}}};")
        call += ", &ws"
    lines.append(f"  if ({interface['run']}({call}) != 0) return 4; }}")
    lines.append(f"  for (k = {n_in}; k < {len(tensors)}; ++k) {{")
    lines.append('    f = fopen(argv[k + 1], "wb");')
    lines.append("    if (!f || fwrite(data[k], 1, bytes[k], f) != bytes[k]) return 5;")
    lines.append("    fclose(f);")
    lines.append("  }")
    lines += ["  return 0;", "}", ""]
    return "\n".join(lines)


def build_and_compare(folder: Path, module: dict[str, Any], model: Path) -> None:
    """Build the extracted C with a harness; its outputs are TFLM's."""
    assert GCC is not None
    interface = module["usmp"]["c_interface"]
    include = folder / "codegen/host/include"
    headers = sorted(h.name for h in include.glob("*.h"))
    (folder / "harness.c").write_text(harness(interface, headers))
    sources = sorted(str(p) for p in (folder / "codegen/host/src").glob("*.c"))
    exe = folder / "model"
    subprocess.run(
        [
            GCC,
            *DEFAULT_CFLAGS,
            "-I",
            str(include),
            *sources,
            str(folder / "harness.c"),
            "-o",
            str(exe),
            "-lm",
        ],
        check=True,
        capture_output=True,
        text=True,
    )
    parsed = read_model_file(model)
    for seed in range(2):
        inputs = random_inputs(parsed, seed)
        paths = [
            folder / f"io{k}.bin"
            for k in range(len(parsed.inputs) + len(parsed.outputs))
        ]
        for path, x in zip(paths, inputs, strict=False):
            path.write_bytes(x.tobytes())
        subprocess.run([str(exe), *map(str, paths)], check=True, timeout=120)
        want = run_tflm(model.read_bytes(), inputs, list(parsed.outputs))
        for path, w in zip(paths[len(inputs) :], want, strict=True):
            got = np.frombuffer(path.read_bytes(), dtype=w.dtype).reshape(w.shape)
            assert difference(got, w) is None


def test_docs_command_line_gives_tflm_outputs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tar = tmp_path / "kws.tar"
    status, err = tvmc(
        [
            *DOCS_COMMAND,
            str(KWS),
            "--output-format=mlf",
            "--module-name=kws",
            "-o",
            str(tar),
        ],
        capsys,
    )
    assert status == 0, err
    assert "no operator is offloaded to 'cmsis-nn'" in err
    metadata = extract(tar, tmp_path / "mlf")
    assert metadata["version"] == 7
    assert list(metadata["modules"]) == ["kws"]
    module = metadata["modules"]["kws"]
    assert {
        "model_name",
        "export_datetime",
        "memory",
        "target",
        "executors",
        "style",
    } <= set(module)
    assert module["executors"] == ["aot"] and module["style"] == "full-model"
    assert module["target"] == ["cmsis-nn -mcpu=cortex-m7", "c -mcpu=cortex-m7"]
    assert module["usmp"]["algorithm"] == "hill_climb"
    plan = json.loads((tmp_path / "mlf/memory/plan.json").read_text())
    (main_entry,) = module["memory"]["functions"]["main"]
    assert main_entry["device"] == 1
    assert main_entry["workspace_size_bytes"] == plan["total"]["workspace_size"]
    assert main_entry["constants_size_bytes"] == plan["total"]["constant_size"]
    parsed = read_model_file(KWS)
    (input_tensor,) = [parsed.tensors[i] for i in parsed.inputs]
    assert main_entry["inputs"] == {
        input_tensor.name: {"dtype": "int8", "size": int(np.prod(input_tensor.shape))}
    }
    assert main_entry["io_size_bytes"] == int(np.prod(input_tensor.shape)) + 12
    operators = module["memory"]["functions"]["operator_functions"]
    assert [o["function_name"] for o in operators] == plan["steps"]
    assert all(o["workspace"][0]["workspace_size_bytes"] == 0 for o in operators)
    params = (tmp_path / "mlf/parameters/kws.params").read_bytes()
    assert int.from_bytes(params[:8], "little") == PARAMS_LIST_MAGIC
    assert (
        (tmp_path / "mlf/src/kws.relay.mlir").read_text().startswith("builtin.module")
    )
    build_and_compare(tmp_path / "mlf", module, KWS)


def test_workspace_pools_are_provided_by_the_application(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tar = tmp_path / "out/module.tar"
    status, err = tvmc(
        [
            "compile",
            "--target=c -mcpu=cortex-m4 -workspace-byte-alignment=32",
            "--executor=aot",
            "--runtime=crt",
            "--workspace-pools=dtcm,sram",
            "--workspace-pools-targets=dtcm:c",
            "--workspace-pools-targets=sram:c",
            "--workspace-pools-size-hint-bytes=dtcm:64",
            "--workspace-pools-clock-frequency-hz=sram:500",
            "-o",
            str(tar),
            str(HELLO),
        ],
        capsys,
    )
    assert status == 0, err
    assert "--executor-aot-interface-api c (tvmc: packed)" in err  # the note
    module = extract(tar, tmp_path / "mlf")["modules"]["default"]
    by_name = {p["name"]: p for p in module["usmp"]["c_interface"]["pools"]}
    assert by_name["dtcm"]["provided_by"] == "application"
    assert by_name["dtcm"]["alignment"] == 32
    assert by_name["dtcm"]["size"] <= 64
    assert module["usmp"]["tvmc"]["workspace_pools"][1]["clock_frequency_hz"] == 500
    build_and_compare(tmp_path / "mlf", module, HELLO)


def test_space_separated_values_and_workspace_io(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tar = tmp_path / "m.tar"
    argv = [
        "compile",
        "--target",
        "c",
        "--target-c-mcpu",
        "cortex-m55",
        "--executor",
        "aot",
        "--executor-aot-interface-api",
        "c",
        "--executor-aot-unpacked-api",
        "1",
        "--runtime",
        "crt",
        "--runtime-crt-system-lib",
        "0",
        "--pass-config",
        "tir.usmp.use_workspace_io=1",
        "--pass-config",
        "tir.usmp.algorithm=greedy_by_size",
        "--output-format",
        "mlf",
        "--module-name",
        "hello",
        "--output",
        str(tar),
        str(HELLO),
    ]
    status, err = tvmc(argv, capsys)
    assert status == 0, err
    assert err == ""  # nothing assumed, nothing offloaded
    module = extract(tar, tmp_path / "x")["modules"]["hello"]
    assert module["target"] == ["c -mcpu=cortex-m55"]
    usmp = module["usmp"]
    assert usmp["algorithm"] == "greedy_by_size"
    assert usmp["c_interface"]["io_in_workspace"] is True
    assert usmp["tvmc"]["pass_config"] == {
        "tir.usmp.algorithm": "greedy_by_size",
        "tir.usmp.use_workspace_io": "1",
    }
    (main_entry,) = module["memory"]["functions"]["main"]
    assert (
        main_entry["workspace_size_bytes"] == usmp["memory_summary"]["workspace_bytes"]
    )
    assert main_entry["io_size_bytes"] == 2


def test_archive_is_reproducible(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    argv = ["compile", "--target=c", "--executor=aot", "--runtime=crt", "-f", "mlf"]
    for name in ("a.tar", "b.tar"):
        assert tvmc([*argv, str(HELLO), "-o", str(tmp_path / name)], capsys)[0] == 0
    assert (tmp_path / "a.tar").read_bytes() == (tmp_path / "b.tar").read_bytes()
    module = extract(tmp_path / "a.tar", tmp_path / "x")["modules"]["default"]
    assert module["export_datetime"] == "2023-11-14 22:13:20Z"


# ---------------------------------------------------------------- the errors

BASE = ["compile", "--target=c", "--executor=aot", "--runtime=crt", "-f", "mlf"]
ERRORS = [
    (
        ["--executor=graph"],
        "--executor graph: usmp-tvmc compiles for TVM's AOT executor only (accepted: aot)",
    ),
    (["--runtime=cpp"], "--runtime cpp:"),
    (["--executor-aot-interface-api=cpp"], "accepted: c, packed"),
    (
        ["--executor-aot-unpacked-api=0"],
        "--executor-aot-unpacked-api=0: the C interface needs unpacked-api = 1",
    ),
    (
        ["--executor-aot-interface-api=c", "--executor-aot-unpacked-api=0"],
        "add --executor-aot-interface-api=packed",
    ),
    (["--executor-aot-link-params=false"], "--executor-aot-link-params=false:"),
    (
        ["--executor-graph-link-params=1"],
        "--executor-graph-link-params=1: passed but --executor is aot",
    ),
    (["--executor-aot-foo=1"], "--executor-aot-foo=1: not a tvmc executor option"),
    (["--runtime-crt-system-lib=1"], "accepted: 0"),
    (
        ["--output-format=so"],
        "--output-format so: usmp-tvmc writes Model Library Format archives only (accepted: mlf)",
    ),
    (["--target=llvm"], "the TVM target 'llvm' is not supported"),
    (["--target=c, cmsis-nn"], "the last target must be the TVM target 'c'"),
    (
        ["--target=c -mattr=+dsp"],
        "'mattr' is not an option of the c target; accepted: mcpu, march",
    ),
    (["--target=c,c"], "duplicate target definitions"),
    (
        ["--target-ethos-u-accelerator_config=ethos-u55-256"],
        "--target-ethos-u-accelerator_config: names no target of --target (c)",
    ),
    (["--target=c -workspace-byte-alignment=3"], "workspace-byte-alignment=3:"),
    (
        [
            "--target=c -workspace-byte-alignment=8",
            "--executor-aot-workspace-byte-alignment=16",
        ],
        "differ",
    ),
    (["--workspace-pools=sram"], 'no target specified for workspace pool "sram"'),
    (
        ["--workspace-pools=sram", "--workspace-pools-targets=sram:npu"],
        "target 'npu' is not one of --target's (c)",
    ),
    (
        [
            "--workspace-pools=sram",
            "--workspace-pools-targets=sram:c",
            "--workspace-pools-size-hint-bytes=sram:1k",
        ],
        "--workspace-pools-size-hint-bytes=sram:1k: '1k' is not an integer",
    ),
    (
        [
            "--workspace-pools=sram",
            "--workspace-pools-targets=sram:c",
            "--workspace-pools-size-hint-bytes=sram:0",
        ],
        "expected a positive number of bytes, or -1",
    ),
    (
        ["--workspace-pools=sram,sram", "--workspace-pools-targets=sram:c"],
        "--workspace-pools: pool 'sram' is listed twice",
    ),
    (["--workspace-pools=my-pool"], "'my-pool' is not a valid pool name"),
    (
        ["--workspace-pools-targets=sram"],
        "--workspace-pools-targets=sram: expected POOL:VALUE",
    ),
    (
        ["--workspace-pools-is-internal=sram:0"],
        "--workspace-pools-is-internal: not a tvmc compile option",
    ),
    (
        ["--pass-config", "tir.usmp.algorithm=first_fit"],
        "unknown USMP algorithm 'first_fit'; accepted: best_fit, greedy_by_conflicts, greedy_by_size, hill_climb, optimal",
    ),
    (
        ["--pass-config", "tir.usmp.custom_algorithm=my.algo"],
        "a Python planning function cannot be plugged",
    ),
    (
        ["--pass-config", "relay.FuseOps.max_depth=4"],
        "configuration 'relay.FuseOps.max_depth' is not supported",
    ),
    (["--pass-config", "tir.usmp.enable=maybe"], "'maybe' is not a boolean"),
    (["--pass-config", "tir.usmp.enable"], "invalid format, use <config>=<value>"),
    (
        ["--pass-config", "tir.usmp.enable=1", "tir.usmp.algorithm=hill_climb"],
        "--pass-config takes one NAME=VALUE, as in tvmc; write --pass-config "
        "tir.usmp.algorithm=hill_climb",
    ),
    (
        ["--tuning-records", "log.json"],
        "--tuning-records: this tvmc option is not supported by usmp-tvmc (usmp-opt has no tunable schedules)",
    ),
    (
        ["--cross-compiler=arm-none-eabi-gcc"],
        "--cross-compiler: this tvmc option is not supported",
    ),
    (["--model-format=onnx"], "accepted: tflite"),
    (["-O", "5"], "argument -O/--opt-level: invalid choice"),
]


@pytest.mark.parametrize(("extra", "message"), ERRORS, ids=[e[1][:40] for e in ERRORS])
def test_unsupported_options_are_named(
    extra: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = [*BASE, *extra, str(HELLO), "-o", str(tmp_path / "m.tar")]
    if any(a.startswith("--target=") for a in extra):
        argv.remove("--target=c")
    status, err = tvmc(argv, capsys)
    assert status == 1
    errors = [line for line in err.splitlines() if "error:" in line]
    assert len(errors) == 1 and errors[0].startswith("usmp-tvmc: error: "), err
    assert message in errors[0]
    assert not (tmp_path / "m.tar").exists()


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["run", "module.tar"],
            "'run' is not a subcommand usmp-tvmc has; accepted: compile",
        ),
        (["compile", str(HELLO)], "--target is required"),
        (
            ["compile", "--target=c", "missing.tflite"],
            "input file 'missing.tflite' doesn't exist",
        ),
    ],
)
def test_command_errors(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    status, err = tvmc(argv, capsys)
    assert status == 1
    assert f"usmp-tvmc: error: {message}" in err


def test_model_error_is_reported_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.tflite"
    bad.write_bytes(b"not a model")
    status, err = tvmc([*BASE, str(bad), "-o", str(tmp_path / "m.tar")], capsys)
    assert status == 1
    assert "bad.tflite: error: cannot read the model" in err
    assert not (tmp_path / "m.tar").exists()


@pytest.mark.parametrize("unpacked", ["0", "1"])
def test_packed_interface_combinations(
    unpacked: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """TVM's valid executor combinations with the packed interface: cpacked
    (unpacked-api 0) or unpacked operator calls, TVM's packed entry
    ``tvmgen_default_run_model`` and the runtime headers in the archive; the
    struct API still matches TFLite Micro."""
    tar = tmp_path / "module.tar"
    status, err = tvmc(
        [
            *BASE,
            "--executor-aot-interface-api=packed",
            f"--executor-aot-unpacked-api={unpacked}",
            "-o",
            str(tar),
            str(HELLO),
        ],
        capsys,
    )
    assert status == 0, err
    module = extract(tar, tmp_path / "mlf")["modules"]["default"]
    include = tmp_path / "mlf/codegen/host/include"
    assert (include / "tvm/runtime/c_runtime_api.h").is_file()
    assert (
        "tvmgen_default_run_model(TVMValue* args"
        in (include / "tvmgen_default.h").read_text()
    )
    aot_main = (tmp_path / "mlf/codegen/host/src/tvmgen_default_aot_main.c").read_text()
    assert ("stack_value" in aot_main) == (unpacked == "0")
    build_and_compare(tmp_path / "mlf", module, HELLO)
