"""Compile time and memory of ``usmp-compile``, per step, on the shared
models, MobileNetV2 and generated graphs of growing size, with Arm Vela
beside it on the same ``.tflite`` files in the same run.

    python benchmarks/compile_time.py [--repeat N] [--sizes 100,1000,10000]
        [--models-only | --graphs-only] [--no-mobilenet] [--only TEXT]
        [--vela VENV]

Each row is one ``usmp-compile`` process (``--quiet --time-passes``), the
fastest of ``N`` runs by total CPU time: the CPU seconds of every step (from
``--time-passes``; ``verify`` is the final IR's verification, which
``usmp-compile`` runs only with ``--verify-final``: 0 here; the input's is
part of ``import``), ``total`` (the whole process's user + system time, start-up
and imports included: ``getrusage(RUSAGE_CHILDREN)`` before and after),
``peak MB`` (its peak resident memory, ``ru_maxrss`` of the process from
``wait4``), operators (relay operators after import, every ``relay.*`` op but
constants) per CPU second and CPU milliseconds per operator. CPU rather than
wall time, because the machines are shared.

MobileNetV2 is ``usmp.testing.mobilenet_v2`` (224x224, int8, synthetic
weights: the standard architecture, no download), written to a temporary
file and compiled like a shared model.

``--vela VENV``: a virtual environment with Arm's Vela compiler, kept apart
from the project's (its pinned dependencies differ)::

    python -m venv /tmp/vela-venv
    /tmp/vela-venv/bin/pip install ethos-u-vela

Every ``.tflite`` row then also runs ``VENV/bin/vela --accelerator-config
ethos-u55-128 MODEL`` (fastest of ``N`` runs, measured the same way: CPU of
the process and its children, its peak RSS) and prints Vela's CPU, peak MB and
our CPU divided by Vela's. The runs alternate (ours, Vela, ours, ...), so
that both sample the same minutes of a machine whose speed swings. Vela
compiles for an Ethos-U NPU (its own SRAM
plan, command stream, unsupported operators left to the CPU), so this
compares compile cost, not output.

Generated graphs are ``usmp.testing.scale_graphs.scale_graph(n)`` (int8
chains, diamonds, residual blocks and wide fan-out of fixed-size tensors),
written as MLIR and compiled from the file like a model.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from usmp.testing.shared_models import MODELS_DIR, SUPPORTED_MODELS
from usmp.tools.usmp_compile import PIPELINE

STEPS = (*PIPELINE, "verify")
_ROW = re.compile(r"^\s+([0-9.]+) \(\s*[0-9.]+%\)\s+[0-9.]+ \(\s*[0-9.]+%\)  (\S.*)$")


@dataclass(frozen=True)
class Measured:
    """One process: its CPU seconds (with its children's), its peak RSS in
    MB, the CPU seconds per step it printed."""

    cpu: float
    peak_mb: float
    steps: dict[str, float]


class Failed(Exception):
    """A measured process failed (the message: its last line of stderr)."""


def _measure(cmd: list[str], what: str) -> tuple[Measured, str]:
    """Run ``cmd``; (its measures, its stderr); :class:`Failed` if it fails."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.Popen(
        cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    assert proc.stderr is not None
    stderr = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        last = stderr.strip().splitlines()[-1:] or [f"exit {proc.returncode}"]
        raise Failed(f"{what} failed: {last[0]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return Measured(cpu, usage.ru_maxrss / 1024, {}), stderr


def _run(model: Path, out: Path) -> tuple[float, dict[str, float]]:
    """One usmp-compile process: (its CPU seconds, CPU seconds per step)."""
    m = _compile(model, out)
    return m.cpu, m.steps


def _compile(model: Path, out: Path) -> Measured:
    """One usmp-compile process."""
    cmd = [sys.executable, "-m", "usmp.tools.usmp_compile", str(model)]
    cmd += ["-o", str(out), "--quiet", "--time-passes"]
    try:
        m, stderr = _measure(cmd, f"usmp-compile on {model}")
    except Failed as e:
        raise SystemExit(str(e)) from None
    for line in stderr.splitlines():
        if (match := _ROW.match(line)) and match.group(2) in STEPS:
            m.steps[match.group(2)] = float(match.group(1))
    return m


def _vela(vela: Path, model: Path, out: Path) -> Measured:
    """One Vela process on ``model`` (Ethos-U55, 128 MACs)."""
    cmd = [str(vela), "--accelerator-config", "ethos-u55-128", str(model)]
    cmd += ["--output-dir", str(out)]
    return _measure(cmd, f"vela on {model}")[0]


def _operators_tflite(path: Path) -> int:
    from usmp.frontend.tflite_import import import_model
    from usmp.frontend.tflite_reader import read_model_file
    from usmp.testing.scale_graphs import operator_count

    return operator_count(import_model(read_model_file(path)))


def _best(runs: list[Measured]) -> Measured:
    return min(runs, key=lambda r: r.cpu)


def _row(name: str, ops: int, ours: Measured, vela: Measured | str | None) -> list[str]:
    """A table row; ``vela``: its measures, or why it failed."""
    cells = [name, f"{ops:,}"]
    cells += [f"{ours.steps.get(s, 0.0):.2f}" for s in STEPS]
    total = ours.cpu
    cells += [f"{total:.2f}", f"{ours.peak_mb:.0f}"]
    cells += [f"{ops / total:,.0f}", f"{1000 * total / ops:.2f}"]
    if isinstance(vela, Measured):
        cells += [f"{vela.cpu:.2f}", f"{vela.peak_mb:.0f}", f"{total / vela.cpu:.1f}"]
    elif vela is not None:
        cells += [f"failed: {vela}", "", ""]
    return cells


def main() -> int:
    p = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    p.add_argument("--repeat", type=int, default=3, help="runs per row (fastest kept)")
    p.add_argument("--sizes", default="100,1000,10000", help="generated graph sizes")
    p.add_argument("--models-only", action="store_true")
    p.add_argument("--graphs-only", action="store_true")
    p.add_argument("--no-mobilenet", action="store_true", help="no MobileNetV2 row")
    p.add_argument(
        "--only",
        metavar="TEXT",
        help="only the model rows whose name contains TEXT (e.g. MobileNetV2)",
    )
    p.add_argument(
        "--vela",
        type=Path,
        metavar="VENV",
        help="a virtual environment with ethos-u-vela: Vela beside every model",
    )
    args = p.parse_args()
    vela = None
    if args.vela is not None:
        vela = args.vela / "bin" / "vela"
        if not vela.exists():
            raise SystemExit(
                f"--vela: {vela} does not exist (pip install ethos-u-vela)"
            )
    header = ["model", "operators", *STEPS, "total", "peak MB", "ops/s", "ms/op"]
    if vela is not None:
        header += ["Vela CPU s", "Vela peak MB", "CPU / Vela"]
    print("| " + " | ".join(header) + " |")
    print("|---|" + "--:|" * (len(header) - 1))
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)

        def tflite_row(label: str, path: Path) -> None:
            if args.only is not None and args.only not in label:
                return
            # ours and Vela alternate, so that both see the machine's same
            # minutes (its speed swings by a quarter from one to the next)
            runs: list[Measured] = []
            theirs_runs: list[Measured] = []
            theirs: Measured | str | None = None
            for _ in range(args.repeat):
                runs.append(_compile(path, tmp / "out"))
                if vela is not None and theirs is None:
                    try:
                        theirs_runs.append(_vela(vela, path, tmp / "vela"))
                    except Failed as e:  # e.g. float LSTMs: not for an NPU
                        theirs = str(e).rsplit(": ", 1)[-1][:60]
            if theirs is None and theirs_runs:
                theirs = _best(theirs_runs)
            row = _row(label, _operators_tflite(path), _best(runs), theirs)
            print("| " + " | ".join(row) + " |", flush=True)

        if not args.graphs_only:
            for model in SUPPORTED_MODELS:
                path = MODELS_DIR / model
                tflite_row(path.stem, path)
            if not args.no_mobilenet:
                from usmp.testing.mobilenet_v2 import mobilenet_v2

                path = tmp / "mobilenet_v2_224_int8.tflite"
                path.write_bytes(mobilenet_v2(224))
                tflite_row("MobileNetV2 224 int8", path)
        if not args.models_only:
            from usmp.testing.fuzz_graphs import print_module
            from usmp.testing.scale_graphs import operator_count, scale_graph

            for size in (int(s) for s in args.sizes.split(",")):
                module = scale_graph(size)
                path = tmp / f"generated_{size}.mlir"
                path.write_text(print_module(module))
                runs = [_compile(path, tmp / "out") for _ in range(args.repeat)]
                row = _row(
                    f"generated {size}", operator_count(module), _best(runs), None
                )
                print("| " + " | ".join(row) + " |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
