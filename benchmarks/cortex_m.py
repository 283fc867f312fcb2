"""Instructions per inference on an emulated Cortex-M: ours vs CMSIS-NN.

    python benchmarks/cortex_m.py [--models kws vww resnet ad] [--boards m4 m7]
        [--opt O2 Os] [--steps] [--profile] [--seed 0] [--work DIR] [--portable]

For each MLPerf Tiny int8 model (KWS, VWW, ResNet-8, the AD autoencoder),
board and optimisation level, in the same run:

* ours: ``usmp-compile MODEL --use-workspace-io --target "c -mcpu=CPU"``
  (``--portable``: ``--target c``), the library built with
  ``arm-none-eabi-gcc`` and newlib;
* CMSIS-NN: the model as direct calls to CMSIS-NN's s8 functions with the
  model's quantisation parameters (``usmp.testing.cmsis_nn_program``), built
  from ``../shared/third_party`` (CMSIS-NN, CMSIS_6, Cortex_DFP);

both run under ``qemu-system-arm -M <board> -icount shift=0`` with
semihosting; instructions are counted with SysTick, validated on a loop of
known length (``usmp.testing.cortex_m``). QEMU counts instructions, not
cycles. The output bytes of both are compared with TFLite Micro on the host
(the same seeded input). ``flash``/``RAM``: what the image keeps from the
model's code and data (linker map): ours = the library (code + constant
pool; RAM = the workspace pool, I/O inside it); CMSIS-NN = the kernels,
weights and parameters (RAM = the activation arena, planned like TFLite
Micro's greedy planner with I/O inside, + the largest scratch buffer
CMSIS-NN asks for; TFLite Micro's interpreter would add its own code and
persistent arena). ``ws``: the workspace usmp planned (``metadata.json``).
``cmsis-nn target``: ``usmp-compile MODEL --use-workspace-io --target
"cmsis-nn -mcpu=CPU,c -mcpu=CPU"`` (every operator CMSIS-NN takes is a call
of it, its scratch planned by usmp in the workspace), its instructions, its
flash (the library with the CMSIS-NN kernels it keeps), its workspace
(scratch and I/O inside) and whether it is bit-exact with TFLite Micro; on
a Helium CPU (``m55``) CMSIS-NN's MVE build, its dense kernel sums a
constant table.

``--steps`` adds a table per model, board and level: instructions per
operator (a step of ours may be several TFLite operators fused).

``--profile`` prints, per model, board and level, the per-layer table the
kit's ``example/profile.c`` prints on a Cortex-M (``usmp-compile
--profile``: SysTick read by the profile hooks around every operator call),
its SysTick ticks turned into instructions: a second build of ours, so the
hooks' own instructions stay out of the main table.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from usmp.frontend.tflite_reader import Model, read_model_file
from usmp.testing.cmsis_nn_program import cmsis_nn_program
from usmp.testing.cortex_m import (
    BOARDS,
    Builder,
    Measurement,
    library_program,
    profile_table,
)
from usmp.testing.cortex_m import missing_tools as cortex_m_missing
from usmp.testing.shared_models import MODELS_DIR
from usmp.testing.tflm_reference import random_inputs, run_tflm
from usmp.tools.profile_table import format_profile
from usmp.tools.usmp_compile import main as usmp_compile

MODELS = {
    "kws": "mlperf_tiny/kws_ref_model.tflite",
    "vww": "mlperf_tiny/vww_96_int8.tflite",
    "resnet": "mlperf_tiny/pretrainedResnet_quant.tflite",
    "ad": "mlperf_tiny/ad01_int8.tflite",
}


def describe(model: Model, label: str) -> str:
    """``CONV_2D #2`` with its shape: kernel, channels in -> out, output."""
    parts = []
    for one in label.split(" + "):
        index = int(one.split("#")[1])
        op = model.operators[index]
        x = model.tensors[op.inputs[0]].shape
        y = model.tensors[op.outputs[0]].shape
        if op.opcode in ("CONV_2D", "DEPTHWISE_CONV_2D"):
            w = model.tensors[op.inputs[1]].shape
            one += f" {w[1]}x{w[2]} {x[3]}->{y[3]} @{y[1]}x{y[2]}"
        elif op.opcode == "FULLY_CONNECTED":
            w = model.tensors[op.inputs[1]].shape
            one += f" {w[1]}->{w[0]}"
        parts.append(one)
    return " + ".join(parts)


def _ours(
    path: Path,
    name: str,
    cpu: str | None,
    work: Path,
    profile: bool = False,
    cmsis_nn: bool = False,
) -> tuple[Path, int]:
    suffix = f"{'_profile' * profile}{'_cmsis_nn' if cmsis_nn else ''}"
    out = work / f"{name}_{cpu or 'portable'}{suffix}"
    target = "c" if cpu is None else f"c -mcpu={cpu}"
    if cmsis_nn:  # the cmsis-nn target, built for the board's CPU
        target = f"cmsis-nn -mcpu={cpu},{target}" if cpu else f"cmsis-nn,{target}"
    argv = [str(path), "-o", str(out), "-q", "--module-name", name]
    argv += ["--use-workspace-io", "--target", target, *["--profile"] * profile]
    if usmp_compile(argv) != 0:
        raise SystemExit(f"usmp-compile {' '.join(argv)} failed")
    meta = json.loads((out / "metadata.json").read_text())
    return out, meta["memory_summary"]["workspace_bytes"]


def _exact(m: Measurement, reference: list[bytes]) -> str:
    return "yes" if m.outputs == reference else "NO"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--models", nargs="*", default=list(MODELS), choices=MODELS)
    parser.add_argument("--boards", nargs="*", default=["m4"], choices=BOARDS)
    parser.add_argument(
        "--opt", nargs="*", default=["O2"], help="gcc levels without the dash"
    )
    parser.add_argument("--steps", action="store_true", help="per-operator tables")
    parser.add_argument(
        "--profile",
        action="store_true",
        help="the per-layer table of usmp-compile --profile's hooks, in instructions",
    )
    parser.add_argument("--seed", type=int, default=0, help="input seed")
    parser.add_argument("--work", type=Path, help="keep the builds here")
    parser.add_argument(
        "--portable", action="store_true", help="ours with --target c (no -mcpu)"
    )
    args = parser.parse_args(argv)
    if (missing := cortex_m_missing()) is not None:
        print(f"cannot measure: {missing} (scripts/setup.sh)", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory(prefix="usmp-cortex-m-") as tmp:
        work = args.work or Path(tmp)
        return _measure(args, work)


def _measure(args: argparse.Namespace, work: Path) -> int:
    rows: list[list[str]] = []
    step_tables: list[str] = []
    profiles: list[str] = []
    for key in args.models:
        path = MODELS_DIR / MODELS[key]
        model = read_model_file(path)
        inputs = random_inputs(model, args.seed)
        reference = [
            r.tobytes() for r in run_tflm(path.read_bytes(), inputs, model.outputs)
        ]
        cmsis_part = cmsis_nn_program(model, inputs)
        for board_name in args.boards:
            board = BOARDS[board_name]
            out, ws = _ours(path, key, None if args.portable else board.cpu, work)
            ours_part = library_program(out, inputs)
            profiled_part = None
            if args.profile:
                profiled, _ = _ours(
                    path, key, None if args.portable else board.cpu, work, True
                )
                profiled_part = library_program(profiled, inputs)
            offload, offload_ws = _ours(path, key, board.cpu, work, cmsis_nn=True)
            offload_part = library_program(offload, inputs)
            for opt in (f"-{o.lstrip('-')}" for o in args.opt):
                builder = Builder(board, opt, work / f"{key}_{board_name}{opt}")
                ours = builder.measure("ours", ours_part, profile=args.steps)
                cmsis = builder.measure("cmsis", cmsis_part, profile=args.steps)
                ratio = ours.instructions / cmsis.instructions
                t = builder.measure("offload", offload_part, profile=False)
                target = [
                    f"{t.instructions:,}",
                    f"{t.footprint.flash:,}",
                    f"{offload_ws:,}",
                    _exact(t, reference),
                ]
                rows.append(
                    [
                        key,
                        board.cpu,
                        opt,
                        f"{ours.instructions:,}",
                        f"{cmsis.instructions:,}",
                        f"{ratio:.2f}",
                        f"{ours.footprint.flash:,}",
                        f"{ours.footprint.ram:,}",
                        f"{ws:,}",
                        f"{cmsis.footprint.flash:,}",
                        f"{cmsis.footprint.ram:,}",
                        f"{_exact(ours, reference)} / {_exact(cmsis, reference)}",
                        *target,
                    ]
                )
                print("| " + " | ".join(rows[-1]) + " |", file=sys.stderr, flush=True)
                if profiled_part is not None:
                    measured = builder.measure("profiled", profiled_part)
                    if measured.outputs != reference:
                        raise SystemExit(f"{key}: the profiled build's outputs differ")
                    profiles.append(
                        f"\n{key}, {board.cpu}, {opt} (qemu-system-arm -M "
                        f"{board.machine} -icount shift=0):\n"
                        f"{format_profile(profile_table(measured))}"
                    )
                if args.steps:
                    step_tables.append(
                        _steps(
                            model,
                            key,
                            board.cpu,
                            opt,
                            ours,
                            ours_part.steps,
                            cmsis,
                            cmsis_part.steps,
                        )
                    )
    header = (
        "model",
        "cpu",
        "opt",
        "ours",
        "CMSIS-NN",
        "ratio",
        "ours flash",
        "ours RAM",
        "ws",
        "CMSIS-NN flash",
        "CMSIS-NN RAM",
        "bit-exact (ours / CMSIS-NN)",
        "cmsis-nn target",
        "its flash",
        "its ws",
        "its bit-exact",
    )
    print("| " + " | ".join(header) + " |")
    print("|---|---|---|" + "--:|" * 8 + "---|--:|--:|--:|---|")
    for row in rows:
        print("| " + " | ".join(row) + " |")
    print(
        "\n(instructions per inference, counted by QEMU: instructions, not "
        "cycles; bytes from the linker map; bit-exact: output bytes equal to "
        "TFLite Micro's on the host)"
    )
    for table in step_tables:
        print(table)
    for table in profiles:
        print(table, end="")
    return 0


def _steps(
    model: Model,
    key: str,
    cpu: str,
    opt: str,
    ours: Measurement,
    ours_labels: list[str],
    cmsis: Measurement,
    cmsis_labels: list[str],
) -> str:
    theirs = dict(zip(cmsis_labels, cmsis.steps, strict=True))
    lines = [
        f"\n{key}, {cpu}, {opt}: instructions per operator\n",
        "| operator | ours | CMSIS-NN | ratio |",
        "|---|--:|--:|--:|",
    ]
    for label, count in zip(ours_labels, ours.steps, strict=True):
        other = sum(theirs.get(one, 0) for one in label.split(" + "))
        ratio = f"{count / other:.2f}" if other else ""
        lines.append(f"| {describe(model, label)} | {count:,} | {other:,} | {ratio} |")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
