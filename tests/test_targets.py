"""Two targets in C: ``usmp-compile --target accel,c --offload ...``.

A shared model is split between the host target ``c`` and a second target
``accel`` (plain C too: there is no NPU here, but its operators are compiled
apart, under their own prefix, in their own file, touching only the pools
``accel`` may access). The tests build the library with an application that
implements TVM's device hooks and records their calls, provide the workspace
pools as arrays of exactly their planned size under AddressSanitizer, and
compare the outputs with TFLite Micro bit for bit.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import numpy as np
import pytest

from usmp.frontend.tflite_reader import read_model_file
from usmp.testing.firmware import make_example, run_example
from usmp.testing.run_c import DEFAULT_CFLAGS, SANITIZE_FLAGS
from usmp.testing.shared_models import MODELS_DIR
from usmp.testing.tflm_reference import difference, random_inputs, run_tflm
from usmp.tools.compare_tflm import main as compare_tflm
from usmp.tools.usmp_compile import main as usmp_compile

KWS = MODELS_DIR / "mlperf_tiny/kws_ref_model.tflite"
RESNET = MODELS_DIR / "mlperf_tiny/pretrainedResnet_quant.tflite"
OFFLOAD = ["--target", "accel,c", "--offload", "CONV_2D,DEPTHWISE_CONV_2D=accel"]
POOLS = [
    "--usmp-workspace-pools",
    "accel_sram,sram",
    "--usmp-workspace-pool-accel_sram=target=accel:rw",
    "--usmp-workspace-pool-sram=target=c:rw",
]
HOOKS = ("Activate", "Open", "Close", "Deactivate")


@pytest.fixture(scope="module")
def kws(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("targets") / "kws"
    argv = [str(KWS), "-o", str(out), "-q", "--module-name", "kws", *OFFLOAD, *POOLS]
    assert usmp_compile(argv) == 0
    return out


def _sources(out: Path) -> dict[str, str]:
    return {p.name: p.read_text() for p in (out / "codegen/host/src").glob("*.c")}


def test_accel_operators_in_their_own_file(kws: Path) -> None:
    src = _sources(kws)
    accel = src["tvmgen_kws_accel.c"]
    defined = re.findall(r"^void (\w+)\(([^)]*)\) \{", accel, re.MULTILINE)
    # KWS: 5 CONV_2D and 4 DEPTHWISE_CONV_2D, each fused with its epilogue
    assert len(defined) == 9
    for name, params in defined:
        assert name.startswith("tvmgen_kws_accel_fused_nn_conv2d"), name
        assert "sram" not in params.replace("accel_sram", ""), params
    host = src["tvmgen_kws_operators.c"]
    assert "tvmgen_kws_accel_" not in host
    assert re.findall(r"^void (\w+)\(", host, re.MULTILINE) == [
        "tvmgen_kws_fused_nn_avg_pool2d",
        "tvmgen_kws_fused_nn_dense_add_fixed_point_multiply_add_clip_cast",
        "tvmgen_kws_fused_qnn_softmax",
    ]
    metadata = json.loads((kws / "metadata.json").read_text())
    assert "codegen/host/src/tvmgen_kws_accel.c" in metadata["files"]
    assert metadata["target"] == "accel,c"


def test_pools_follow_target_access(kws: Path) -> None:
    """Buffers only accel operators use are in accel_sram (first in fallback
    order); every buffer a host operator uses is in sram, which accel cannot
    access."""
    plan = json.loads((kws / "memory/plan.json").read_text())
    pools = {p["name"]: p for p in plan["pools"]}
    assert pools["accel_sram"]["size"] > 0 and pools["sram"]["size"] > 0
    aot = _sources(kws)["tvmgen_kws_aot_main.c"]
    host_calls = re.findall(r"tvmgen_kws_fused_\w+\(([^)]*)\)", aot)
    accel_calls = re.findall(r"tvmgen_kws_accel_fused_\w+\(([^)]*)\)", aot)
    views = dict(re.findall(r"\* (\w+) = \(\w+\*\)&(\w+)\[", aot))
    for args in accel_calls:
        for arg in args.split(", "):
            assert views.get(arg, "accel_sram") in ("accel_sram", "global_const")
    for args in host_calls:
        for arg in args.split(", "):
            assert views.get(arg, "sram") in ("sram", "global_const")


def test_hooks_wrap_every_accel_call(kws: Path) -> None:
    """In the entry: TVMDeviceAccelActivate first, Open/Close around each
    accel operator (and no host operator), Deactivate last."""
    aot = _sources(kws)["tvmgen_kws_aot_main.c"]
    body = aot[aot.index("tvmgen_kws___tvm_main__(int8_t") :]
    calls = re.findall(r"^  (TVMDeviceAccel\w+|tvmgen_kws_\w+)\(", body, re.MULTILINE)
    assert calls[0] == "TVMDeviceAccelActivate"
    assert calls[-1] == "TVMDeviceAccelDeactivate"
    inner = calls[1:-1]
    for i, call in enumerate(inner):
        if call.startswith("tvmgen_kws_accel_"):
            assert inner[i - 1 : i + 2] == [
                "TVMDeviceAccelOpen",
                call,
                "TVMDeviceAccelClose",
            ]
        elif call.startswith("tvmgen_kws_"):
            assert inner[i - 1] != "TVMDeviceAccelOpen", call
    header = (kws / "codegen/host/include/tvmgen_kws.h").read_text()
    for hook in HOOKS:
        assert f"int32_t TVMDeviceAccel{hook}(void* device_context_accel);" in header
    assert "TVMDevices_kws* devices);" in header
    io = json.loads((kws / "metadata.json").read_text())["c_interface"]
    assert io["devices_type"] == "TVMDevices_kws"
    assert io["devices"] == [
        {
            "name": "accel",
            "context": "device_context_accel",
            "hooks": [f"TVMDeviceAccel{hook}" for hook in HOOKS],
        }
    ]


def _application(kws: Path) -> str:
    """A test application: implements the hooks, recording each call and
    its context; provides the workspace pools as exactly sized arrays; runs
    the model twice on the input file and writes the output file."""
    io = json.loads((kws / "metadata.json").read_text())["c_interface"]
    (x,) = io["inputs"]
    (y,) = io["outputs"]
    pools = [
        p
        for p in io["pools"]
        if p["provided_by"] == "application" and p["kind"] != "constant"
    ]
    lines = [
        "#include <stdio.h>",
        '#include "tvmgen_kws.h"',
        "static const char* calls[512];",
        "static int n_calls;",
        "static int accel_context;",
        "static int32_t record(const char* hook, void* context) {",
        "  if (context != &accel_context) return 1;",
        "  if (n_calls < 512) calls[n_calls] = hook;",
        "  ++n_calls;",
        "  return 0;",
        "}",
    ]
    for hook in HOOKS:
        lines.append(
            f"int32_t TVMDeviceAccel{hook}(void* device_context_accel) "
            f'{{ return record("{hook}", device_context_accel); }}'
        )
    for p in pools:
        align = p["size_macro"].replace("_SIZE", "_ALIGNMENT")
        lines.append(
            f"static uint8_t pool_{p['c_name']}[{p['size_macro']}] "
            f"__attribute__((aligned({align})));"
        )
    lines += [
        f"static {x['c_type']} x[{x['size_macro']}];",
        f"static {y['c_type']} y[{y['size_macro']}];",
        "int main(int argc, char** argv) {",
        "  FILE* f;",
        "  int run, i;",
        f"  {io['inputs_type']} in = {{ x }};",
        f"  {io['outputs_type']} out = {{ y }};",
        f"  {io['workspaces_type']} ws = {{ "
        + ", ".join(f"pool_{p['c_name']}" for p in pools)
        + " };",
        f"  {io['devices_type']} devices = {{ &accel_context }};",
        '  if (argc != 3 || (f = fopen(argv[1], "rb")) == NULL) return 2;',
        "  if (fread(x, 1, sizeof x, f) != sizeof x) return 3;",
        "  fclose(f);",
        "  for (run = 0; run < 2; ++run) {",
        "    n_calls = 0;",
        f"    if ({io['run']}(&in, &out, &ws, &devices) != 0) return 4;",
        '    printf("run %d:", run);',
        '    for (i = 0; i < n_calls; ++i) printf(" %s", calls[i]);',
        '    printf("\\n");',
        "  }",
        '  if ((f = fopen(argv[2], "wb")) == NULL) return 5;',
        "  fwrite(y, 1, sizeof y, f);",
        "  fclose(f);",
        "  return 0;",
        "}",
    ]
    return "\n".join(lines) + "\n"


def test_split_model_matches_tflm_with_hooks_under_asan(kws: Path, tmp_path: Path):
    """The application's pools are exactly the planned sizes (ASan stops any
    byte outside them); the outputs equal TFLite Micro's; the hooks are
    called in TVM's order on every run, with the application's context."""
    app = tmp_path / "app.c"
    app.write_text(_application(kws))
    sources = sorted((kws / "codegen/host/src").glob("*.c"))
    exe = tmp_path / "app"
    build = subprocess.run(
        [
            "gcc",
            *DEFAULT_CFLAGS,
            *SANITIZE_FLAGS,
            "-I",
            str(kws / "codegen/host/include"),
            str(app),
            *map(str, sources),
            "-o",
            str(exe),
            "-lm",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert build.returncode == 0, build.stderr
    model = read_model_file(KWS)
    accel_calls = _sources(kws)["tvmgen_kws_aot_main.c"].count("tvmgen_kws_accel_")
    accel_calls -= _sources(kws)["tvmgen_kws_aot_main.c"].count(
        "void tvmgen_kws_accel_"
    )
    expected = " ".join(["Activate", *["Open", "Close"] * accel_calls, "Deactivate"])
    for seed in (0, 1):
        (x,) = random_inputs(model, seed)
        (tmp_path / "x.bin").write_bytes(x.tobytes())
        result = subprocess.run(
            [str(exe), str(tmp_path / "x.bin"), str(tmp_path / "y.bin")],
            capture_output=True,
            text=True,
            check=False,
        )
        assert result.returncode == 0, result.stdout + result.stderr
        assert result.stdout.splitlines() == [
            f"run 0: {expected}",
            f"run 1: {expected}",
        ]
        (want,) = run_tflm(KWS.read_bytes(), [x], list(model.outputs))
        got = np.frombuffer((tmp_path / "y.bin").read_bytes(), dtype=np.int8)
        assert difference(got.reshape(want.shape), want) is None


def test_firmware_kit_example_builds_with_devices(kws: Path) -> None:
    """The kit's own example (hooks that only return 0) builds and runs."""
    model = read_model_file(KWS)
    x = random_inputs(model, 7)
    got, _ = run_example(make_example(kws), kws, x)
    (want,) = run_tflm(KWS.read_bytes(), x, list(model.outputs))
    assert difference(got[0], want.reshape(got[0].shape)) is None


def test_compare_tflm_resnet_split(capsys: pytest.CaptureFixture[str]) -> None:
    """compare_tflm takes usmp-compile's flags: ResNet-8 int8 with its
    convolutions and residual ADDs on accel, accel-only and host-only pools,
    under ASan, bit-exact."""
    argv = [
        str(RESNET),
        "--seeds",
        "1",
        "--target",
        "accel,c",
        "--offload",
        "CONV_2D,ADD=accel",
        *POOLS,
        "--sanitize",
    ]
    assert compare_tflm(argv) == 0
    assert "matches TFLite Micro" in capsys.readouterr().out


def test_compare_tflm_three_targets(capsys: pytest.CaptureFixture[str]) -> None:
    """VWW int8 on three targets: depthwise convolutions and the pooling on
    accel, the reshape (aliased: only device copies touch its buffer) and
    the softmax on npu, the rest on c; accel has its own pool, npu shares the
    host's. Under ASan, bit-exact."""
    argv = [
        str(MODELS_DIR / "mlperf_tiny/vww_96_int8.tflite"),
        "--seeds",
        "1",
        "--target",
        "accel,npu,c",
        "--offload",
        "DEPTHWISE_CONV_2D,AVERAGE_POOL_2D=accel",
        "--offload",
        "RESHAPE,SOFTMAX=npu",
        "--usmp-workspace-pools",
        "accel_sram,sram",
        "--usmp-workspace-pool-accel_sram=target=accel:rw",
        "--usmp-workspace-pool-sram=target=c:rw,npu:rw",
        "--sanitize",
    ]
    assert compare_tflm(argv) == 0
    assert "matches TFLite Micro" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--target", "c,accel"], "the last target must be the host target 'c'"),
        (
            ["--target", "c -mattr=+dsp"],
            "'-mattr=+dsp' is not an option of 'c' (accepted: -mcpu=VALUE, "
            "-march=VALUE",
        ),
        (["--target", "c mcpu=cortex-m4"], "'mcpu=cortex-m4' is not an option"),
        (
            ["--target", "accel,c", "--offload", "CONV2D=accel"],
            "'CONV2D' is not a TFLite builtin",
        ),
        (
            ["--offload", "CONV_2D=accel"],
            "target 'accel' is not one of the offload targets",
        ),
        (
            ["--target", "accel,c", "--offload", "CONV_2D"],
            "expected OP_TYPE[,OP_TYPE...]=TARGET",
        ),
        (
            [
                *OFFLOAD,
                "--usmp-workspace-pools",
                "sram",
                "--usmp-workspace-pool-sram=target=c:rw",
            ],
            "no workspace pool gives target(s) accel read-write access",
        ),
    ],
)
def test_bad_flags(
    flags: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert usmp_compile([str(KWS), "-o", str(tmp_path / "out"), "-q", *flags]) == 1
    err = capsys.readouterr().err
    assert message in err, err
    assert "Traceback" not in err


RELAY = """
func.func @main(%x: tensor<1x8xf32>) -> tensor<1x8xf32> {
  %w = relay.constant dense<0.5> : tensor<8x8xf32>
  %0 = relay.dense %x, %w : (tensor<1x8xf32>, tensor<8x8xf32>) -> tensor<1x8xf32>
  %1 = relay.on_device %0 {virtual_device = #device.virtual_device<"npu", 0, target = "npu", scope = "global">} : tensor<1x8xf32>
  %2 = relay.relu %1 : tensor<1x8xf32> -> tensor<1x8xf32>
  func.return %2 : tensor<1x8xf32>
}
"""


def test_relay_on_device_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    """Relay MLIR places operators with on_device; usmp-compile plans the
    devices; the target must be named by --target."""
    source = tmp_path / "m.mlir"
    source.write_text(RELAY)
    out = tmp_path / "out"
    assert usmp_compile([str(source), "-o", str(out), "-q"]) == 1
    assert "--target npu,c" in capsys.readouterr().err
    assert usmp_compile([str(source), "-o", str(out), "-q", "--target", "npu,c"]) == 0
    src = _sources(out)
    assert "tvmgen_default_npu_fused_nn_dense" in src["tvmgen_default_npu.c"]
    assert "TVMDeviceNpuOpen(device_context_npu);" in src["tvmgen_default_aot_main.c"]
    x = np.linspace(-1, 2, 8, dtype=np.float32).reshape(1, 8)
    (got,), _ = run_example(make_example(out), out, [x])
    want = np.maximum(x @ np.full((8, 8), 0.5, np.float32), 0)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
