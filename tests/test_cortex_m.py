"""Generated C on an emulated Cortex-M4 (QEMU), bit for bit with TFLite Micro.

Also KWS compiled with ``--target "cmsis-nn,c -mcpu=cortex-m4"`` (every
operator a CMSIS-NN call, the scratch planned in the workspace pool).

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

import pytest

from tests.mlir_tools import missing_tool
from usmp.frontend.tflite_reader import read_model_file
from usmp.testing.cmsis_nn_program import cmsis_nn_program
from usmp.testing.cortex_m import (
    BOARDS,
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
