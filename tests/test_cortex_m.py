"""Generated C on an emulated Cortex-M4 (QEMU), bit for bit with TFLite Micro.

Also KWS compiled with ``--target "cmsis-nn,c -mcpu=cortex-m4"`` (every
operator a CMSIS-NN call, the scratch planned in the workspace pool), and
with ``"cmsis-nn -mcpu=cortex-m55,c -mcpu=cortex-m55"`` on the Cortex-M55
(``mps3-an547``: CMSIS-NN's Helium (MVE) build).

KWS int8 compiled for ``--target "c -mcpu=cortex-m4"`` (I/O in the
workspace), built with ``arm-none-eabi-gcc -O2`` and newlib, run under
``qemu-system-arm -M mps2-an386 -icount shift=0``: its output bytes equal
TFLite Micro's on the host, and so do those of the direct CMSIS-NN program
the benchmark compares with (``benchmarks/cortex_m.py``). The instruction
counter (SysTick) is validated by the harness on a loop of known length, and
the validation itself is checked to reject counters that do not count
instructions.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import numpy as np
import pytest

from tests.mlir_tools import missing_tool
from tests.test_cmsis_nn import helium_model, python_sizes, size_cases
from usmp.frontend.tflite_reader import read_model, read_model_file
from usmp.lowering import cmsis_nn
from usmp.testing.cmsis_nn_program import cmsis_nn_program
from usmp.testing.cortex_m import (
    BOARDS,
    THIRD_PARTY,
    Builder,
    CortexMError,
    _calibrate,
    _footprint,
    library_program,
    missing_tools,
    profile_table,
)
from usmp.testing.shared_models import MODELS_DIR
from usmp.testing.tflm_reference import random_inputs, run_tflm
from usmp.tools.usmp_compile import main as usmp_compile

KWS = MODELS_DIR / "mlperf_tiny/kws_ref_model.tflite"
SINE = MODELS_DIR / "tflite_micro/hello_world_int8.tflite"


@pytest.fixture(scope="module")
def tools() -> None:
    missing = missing_tools()
    if missing is not None:
        missing_tool(missing, "scripts/setup.sh")


def test_kws_on_cortex_m4_bit_exact(tools: None, tmp_path: Path) -> None:
    model = read_model_file(KWS)
    inputs = random_inputs(model, seed=1)
    (reference,) = run_tflm(KWS.read_bytes(), inputs, model.outputs)
    out = tmp_path / "kws"
    argv = [str(KWS), "-o", str(out), "-q", "--module-name", "kws"]
    argv += ["--use-workspace-io", "--target", "c -mcpu=cortex-m4"]
    assert usmp_compile(argv) == 0
    builder = Builder(BOARDS["m4"], "-O2", tmp_path / "build")
    ours = builder.measure("ours", library_program(out, inputs), profile=False)
    assert ours.instructions_per_tick == 40  # 25 MHz SysTick, 1 ns per instruction
    assert ours.outputs == [reference.tobytes()]
    assert ours.footprint.ram == 8448  # the workspace pool, I/O inside
    cmsis = builder.measure("cmsis", cmsis_nn_program(model, inputs), profile=False)
    assert cmsis.outputs == [reference.tobytes()]
    # both count millions of instructions (KWS: 7.7 M for CMSIS-NN)
    assert 5_000_000 < cmsis.instructions < 12_000_000
    assert ours.instructions > 1_000_000
    # --target "cmsis-nn,c -mcpu=cortex-m4": every operator a CMSIS-NN call
    # (DSP build), the first convolution's im2col scratch a planned buffer
    # of the workspace pool
    out = tmp_path / "kws_cmsis_nn"
    argv = [str(KWS), "-o", str(out), "-q", "--module-name", "kws"]
    argv += ["--use-workspace-io", "--target", "cmsis-nn,c -mcpu=cortex-m4"]
    assert usmp_compile(argv) == 0
    c = (out / "codegen/host/src/tvmgen_kws_cmsis_nn.c").read_text()
    assert "cmsis_nn_context ctx = {cmsis_nn_scratch, 160};" in c
    assert "int8_t* cmsis_nn_scratch = (int8_t*)&global_workspace[" in c
    host = (out / "codegen/host/src/tvmgen_kws_operators.c").read_text()
    assert "void tvmgen_kws_fused" not in host  # no operator on our kernels
    offloaded = builder.measure("offload", library_program(out, inputs), profile=False)
    assert offloaded.outputs == [reference.tobytes()]
    assert offloaded.footprint.ram == 16000  # the workspace pool, scratch inside
    # CMSIS-NN's instructions and our entry function's
    assert cmsis.instructions < offloaded.instructions < cmsis.instructions * 1.01
    shutil.rmtree(tmp_path / "build")


def test_calibration_checks_the_counter() -> None:
    assert _calibrate(["calibrate 100000 5000", "calibrate 300000 15000"]) == 40
    # 32 MHz (MPS3): 31.25 instructions per tick
    assert _calibrate(["calibrate 100000 6400", "calibrate 300000 19200"]) == 31.25
    with pytest.raises(CortexMError, match="not a ratio of small whole numbers"):
        _calibrate(["calibrate 100000 5000", "calibrate 300000 14001"])
    with pytest.raises(CortexMError, match="not counting instructions"):
        # whole per tick between the two, but each loop alone is off
        _calibrate(["calibrate 100000 7000", "calibrate 300000 17000"])
    with pytest.raises(CortexMError, match="does not advance"):
        _calibrate(["calibrate 100000 5000", "calibrate 300000 5000"])


def test_footprint_counts_kept_sections_of_the_model_archives() -> None:
    map_text = """Discarded input sections
 .text.unused   0x00000000       0x40 libours.a(ops.o)
Linker script and memory map
 .text.op       0x00000100       0x80 libours.a(ops.o)
 .rodata.weights
                0x00000180      0x100 libours.a(ops.o)
 .bss.pool      0x20000000      0x200 libours.a(pool.o)
 .data.x        0x20000200        0x8 libours.a(pool.o)
 .text.main     0x00000280       0x20 main.o
 .text.printf   0x000002a0       0x60 libc.a(printf.o)
"""
    fp = _footprint(map_text, ["libours.a"])
    assert (fp.flash, fp.ram) == (0x80 + 0x100 + 0x8, 0x200 + 0x8)
    fp = _footprint(map_text, ["libours.a"], exclude=".bss.pool")
    assert (fp.flash, fp.ram) == (0x80 + 0x100 + 0x8, 0x8)


def test_profile_table_on_cortex_m4(tools: None, tmp_path: Path) -> None:
    """``--profile`` with the kit's ``example/profile.c`` on the M4 under QEMU
    (the sine model: three operators; ``benchmarks/cortex_m.py --profile``
    prints KWS's table):
    the hooks (SysTick: QEMU has no DWT cycle counter) print one row per
    operator of the library's table, the outputs stay TFLite Micro's, and the
    rows add up to the instructions of the whole run."""
    model = read_model_file(SINE)
    inputs = random_inputs(model, seed=2)
    (reference,) = run_tflm(SINE.read_bytes(), inputs, model.outputs)
    out = tmp_path / "sine"
    argv = [str(SINE), "-o", str(out), "-q", "--module-name", "sine", "--profile"]
    argv += ["--use-workspace-io", "--target", "c -mcpu=cortex-m4"]
    assert usmp_compile(argv) == 0
    builder = Builder(BOARDS["m4"], "-O2", tmp_path / "build")
    measured = builder.measure("ours", library_program(out, inputs))
    assert measured.outputs == [reference.tobytes()]
    assert "cycles per run (SysTick)" in measured.printed
    table = profile_table(measured)
    source = (out / "codegen/host/src/tvmgen_sine.c").read_text()
    names = re.findall(r'^  \{"(\w+)", "(\w*)", (-?\d+)\},$', source, re.MULTILINE)
    assert [
        (r.function, r.tflite_operator, str(r.tflite_index)) for r in table.rows
    ] == (names)
    assert [r.tflite_operator for r in table.rows] == ["FULLY_CONNECTED"] * 3
    # every row is counted to within a tick (40 instructions) and its hooks
    assert all(r.value > 0 for r in table.rows)
    assert abs(table.total - measured.instructions) < 40 * (len(table.rows) + 2) + 200
    shutil.rmtree(tmp_path / "build")


def test_kws_cmsis_nn_target_on_cortex_m55_bit_exact(
    tools: None, tmp_path: Path
) -> None:
    """``--target "cmsis-nn -mcpu=cortex-m55,c -mcpu=cortex-m55"`` on the
    Helium (MVE) board: CMSIS-NN's MVE kernels with the scratch planned for
    them in the workspace and the dense's kernel sums a constant table; the
    output TFLite Micro's, the instructions those of the direct CMSIS-NN
    program (``benchmarks/cortex_m.py --boards m55``: 1,809,594)."""
    model = read_model_file(KWS)
    inputs = random_inputs(model, seed=1)
    (reference,) = run_tflm(KWS.read_bytes(), inputs, model.outputs)
    out = tmp_path / "kws"
    argv = [str(KWS), "-o", str(out), "-q", "--module-name", "kws"]
    argv += ["--use-workspace-io", "--target"]
    argv += ["cmsis-nn -mcpu=cortex-m55,c -mcpu=cortex-m55"]
    assert usmp_compile(argv) == 0
    c = (out / "codegen/host/src/tvmgen_kws_cmsis_nn.c").read_text()
    assert "#if !defined(ARM_MATH_MVEI)" in c
    # the first convolution's im2col for MVE: 4 columns of 10x4 rounded to 48
    assert "cmsis_nn_context ctx = {cmsis_nn_scratch, 192};" in c
    assert "cmsis_nn_context ctx = {(void*)cmsis_nn_kernel_sums, 48};" in c
    assert "(int32_t*)&global_const[" in c  # the sums: constants, not workspace
    host = (out / "codegen/host/src/tvmgen_kws_operators.c").read_text()
    assert "void tvmgen_kws_fused" not in host  # no operator on our kernels
    builder = Builder(BOARDS["m55"], "-O2", tmp_path / "build")
    offloaded = builder.measure("offload", library_program(out, inputs), profile=False)
    assert offloaded.outputs == [reference.tobytes()]
    assert 1_700_000 < offloaded.instructions < 1_900_000
    # a depthwise convolution of one input channel (MVE: a convolution, its
    # weights transposed into the scratch after the im2col), then a dense
    # whose input zero point is not 0 (the kernel sums matter)
    data, _, _ = helium_model()
    (tmp_path / "small.tflite").write_bytes(data)
    small = read_model(data, "small.tflite")
    argv = [str(tmp_path / "small.tflite"), "-o", str(tmp_path / "small"), "-q"]
    argv += ["--use-workspace-io", "--target", "cmsis-nn -mcpu=cortex-m55,c"]
    assert usmp_compile(argv) == 0
    for seed in (0, 1):
        inputs = random_inputs(small, seed)
        (reference,) = run_tflm(data, inputs, small.outputs)
        part = library_program(tmp_path / "small", inputs)
        measured = builder.measure(f"small{seed}", part, profile=False)
        assert measured.outputs == [reference.tobytes()]
    shutil.rmtree(tmp_path / "build")


MVE_PROGRAM = r"""
#include <stdio.h>
#include "arm_nnfunctions.h"
CASES
int main(void) {
  for (unsigned k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    const int *v = cases[k];
    cmsis_nn_dims in = {1, v[0], v[1], v[2]}, out = {1, v[10], v[11], v[12]};
    cmsis_nn_dims f = {v[12], v[3], v[4], v[2]}, fd = {1, v[3], v[4], v[12]};
    cmsis_nn_conv_params cp = {0, 0, {v[5], v[6]}, {v[8], v[7]}, {v[9], v[9]}, {-128, 127}};
    cmsis_nn_dw_conv_params dp = {0, 0, v[12] / v[2], {v[5], v[6]}, {v[8], v[7]},
                                  {v[9], v[9]}, {-128, 127}};
    printf("size %d %d %d %d\n", (int)arm_convolve_wrapper_s8_get_buffer_size(&cp, &in, &f, &out),
           (int)arm_depthwise_conv_wrapper_s8_get_buffer_size(&dp, &in, &fd, &out),
           (int)arm_avgpool_s8_get_buffer_size(v[11], v[2]),
           (int)arm_fully_connected_s8_get_buffer_size(&out));
  }
  for (unsigned k = 0; k < sizeof sums / sizeof sums[0]; k++) {
    const int *s = sums[k];
    int32_t buf[16];
    arm_vector_sum_s8(buf, s[0], s[1], weights + s[4], s[2], s[3], s[5] ? bias + s[6] : NULL);
    printf("sums");
    for (int r = 0; r < s[1]; r++) printf(" %ld", (long)buf[r]);
    printf("\n");
  }
  return 0;
}
"""


def test_cmsis_nn_mve_sizes_and_kernel_sums_on_cortex_m55(
    tools: None, tmp_path: Path
) -> None:
    """CMSIS-NN's ``*_get_buffer_size`` and ``arm_vector_sum_s8`` compiled
    for the M55 (``ARM_MATH_MVEI``: the wrappers choose their MVE paths, the
    sums use ``vaddvaq``) against ``cmsis_nn``'s Python on random shapes,
    weights and offsets (``tests/test_cmsis_nn.py`` checks the ``_mve``
    functions on the host)."""
    rng = np.random.default_rng(7)
    cases = size_cases(300, 11)
    sums, weights, bias, expected = [], [], [], []
    for _ in range(60):  # 5-row blocks and their rest, 16-byte predicated tails
        cols, rows = int(rng.integers(1, 40)), int(rng.integers(1, 16))
        w = rng.integers(-128, 128, (rows, cols))
        lhs = int(rng.integers(-128, 128)) if rng.random() < 0.9 else 0
        rhs = int(rng.integers(-128, 128)) if rng.random() < 0.5 else 0
        b = rng.integers(-(2**20), 2**20, rows) if rng.random() < 0.8 else None
        sums.append([cols, rows, lhs, rhs, len(weights), int(b is not None), len(bias)])
        weights += [int(x) for x in w.flat]
        bias += [] if b is None else [int(x) for x in b]
        expected.append(
            cmsis_nn.kernel_sums(
                w.tolist(), None if b is None else b.tolist(), lhs, rhs
            )
        )

    def table(name: str, c_type: str, rows: list[list[int]]) -> str:
        body = ",".join("{" + ",".join(map(str, r)) + "}" for r in rows)
        return f"static const {c_type} {name}[][{len(rows[0])}] = {{{body}}};\n"

    def array(name: str, c_type: str, values: list[int]) -> str:
        body = ",".join(map(str, values or [0]))
        return f"static const {c_type} {name}[] = {{{body}}};\n"

    source = MVE_PROGRAM.replace(
        "CASES",
        table("cases", "int", cases)
        + table("sums", "int", sums)
        + array("weights", "int8_t", weights)
        + array("bias", "int32_t", bias),
    )
    builder = Builder(BOARDS["m55"], "-O2", tmp_path / "build")
    root = THIRD_PARTY / "CMSIS-NN"
    names = [
        "ConvolutionFunctions/arm_convolve_get_buffer_sizes_s8.c",
        "ConvolutionFunctions/arm_depthwise_conv_get_buffer_sizes_s8.c",
        "PoolingFunctions/arm_avgpool_get_buffer_sizes_s8.c",
        "FullyConnectedFunctions/arm_fully_connected_get_buffer_sizes_s8.c",
        "FullyConnectedFunctions/arm_vector_sum_s8.c",
    ]
    include = ["-I", str(root / "Include")]
    lib = builder.archive("nn", [root / "Source" / n for n in names], include)
    elf, _ = builder.link("mve", source, [lib], include)
    printed = builder.execute(elf, timeout=60).splitlines()
    got_sizes = [
        [int(x) for x in line.split()[1:]]
        for line in printed
        if line.startswith("size ")
    ]
    got_sums = [
        [int(x) for x in line.split()[1:]]
        for line in printed
        if line.startswith("sums")
    ]
    assert len(got_sizes) == len(cases) and len(got_sums) == len(sums)
    for v, got in zip(cases, got_sizes, strict=True):
        python = python_sizes(v, ("mve",))
        assert python == got, v
    assert got_sums == expected
    shutil.rmtree(tmp_path / "build")
