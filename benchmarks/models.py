"""Memory, compile time and inference time of usmp-opt on the shared models.

    python benchmarks/models.py [--models NAME ...] [--runs N] [--repeats N]
                                [--json FILE] [--patch auto]

For each supported model in ``shared/models`` (``USMP_MODELS_DIR``):

* ``ws``: our workspace bytes, I/O outside the workspace (the default), and
  ``lb``: the liveness lower bound of that workspace (usmp's report);
* ``ws+io``: the same compiled with ``--use-workspace-io`` (I/O inside the
  workspace, as in TFLite Micro's arena) and its lower bound;
* ``tflm``: TFLite Micro's arena (``stats.json``): the tensor part (head)
  and the total (with TFLM's own bookkeeping and, in its persistent tail,
  the variable tensors: a model's state);
* ``state``: our persistent pool bytes (the model's state, kept across
  runs; part of neither ``ws`` nor ``lb``);
* ``const``: our constant pool bytes, against the model's weight bytes;
* ``compile``: wall time of ``usmp-compile`` (in process, all steps);
* inference: the tflite-micro interpreter's mean ``invoke()`` time (from
  Python, random inputs) and our C library's mean ``run`` time (gcc -O2, a
  generated timing ``main`` calling it in a loop on fixed inputs), and the
  ratio of the two (``speedup`` = tflm / ours). Both sides are timed the same
  way: process CPU time (not wall time, so time the shared machine spends on
  other processes does not count) of ``--runs`` inferences after one warm-up,
  repeated ``--repeats`` times, the fastest repetition reported (the one
  least disturbed by other processes).

``--patch auto`` compiles (both ways) with patch-based execution of the
first stage; the decision is in the notes.

A model whose compilation fails shows the failing step's message. Nothing
here is a test: numbers are printed as a table (and optionally written as
JSON).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from usmp.testing.shared_models import MODELS_DIR, SUPPORTED_MODELS, model_facts


@dataclass
class Row:
    model: str
    workspace: int | None = None
    lower_bound: int | None = None
    workspace_io: int | None = None
    lower_bound_io: int | None = None
    tflm_head: int | str | None = None
    tflm_total: int | str | None = None
    persistent: int | None = None
    constants: int | None = None
    weights: int | None = None
    compile_s: float | None = None
    tflm_us: float | None = None
    ours_us: float | None = None
    speedup: float | None = None
    notes: list[str] = field(default_factory=list)


def compile_model(
    path: Path, out: Path, *extra: str
) -> tuple[dict[str, Any] | None, float, str]:
    """Run usmp-compile in process: (metadata or None, seconds, stderr)."""
    from usmp.tools.usmp_compile import main

    err = io.StringIO()
    start = time.perf_counter()
    with contextlib.redirect_stderr(err):
        status = main([str(path), "-o", str(out), "-q", *extra])
    seconds = time.perf_counter() - start
    metadata = out / "metadata.json"
    if status != 0 or not metadata.is_file():
        return None, seconds, err.getvalue().strip()
    return json.loads(metadata.read_text()), seconds, err.getvalue().strip()


def _invoke_us(invoke: Callable[[], object], runs: int, repeats: int) -> float:
    """Process CPU microseconds per ``invoke()`` after one warm-up: the
    fastest of ``repeats`` timings of ``runs`` calls."""
    invoke()
    best = float("inf")
    for _ in range(repeats):
        start = time.process_time()
        for _ in range(runs):
            invoke()
        best = min(best, (time.process_time() - start) / runs * 1e6)
    return best


def litert_inference_us(path: Path, runs: int, repeats: int) -> float:
    """LiteRT's reference kernels (``BUILTIN_REF``): the reference of hybrid
    models, which TFLite Micro refuses; timed as ``tflm_inference_us``."""
    from ai_edge_litert.interpreter import Interpreter, OpResolverType

    from usmp.frontend.tflite_reader import read_model_file
    from usmp.testing.tflm_reference import random_inputs

    interpreter = Interpreter(
        model_path=str(path), experimental_op_resolver_type=OpResolverType.BUILTIN_REF
    )
    interpreter.allocate_tensors()
    details = interpreter.get_input_details()
    for detail, x in zip(details, random_inputs(read_model_file(path), 0), strict=True):
        interpreter.set_tensor(detail["index"], x)
    return _invoke_us(interpreter.invoke, runs, repeats)


def tflm_inference_us(path: Path, runs: int, repeats: int) -> float:
    from tflite_micro.python.tflite_micro import runtime

    from usmp.frontend.tflite_reader import read_model_file
    from usmp.testing.tflm_reference import random_inputs

    model = read_model_file(path)
    interpreter = runtime.Interpreter.from_file(str(path), arena_size=4 << 20)
    for i, x in enumerate(random_inputs(model, seed=0)):
        interpreter.set_input(x, i)
    return _invoke_us(interpreter.invoke, runs, repeats)


TIMING_CFLAGS = ("-std=c99", "-O2", "-D_POSIX_C_SOURCE=199309L")


def timing_harness(interface: dict[str, Any]) -> str:
    """A C ``main`` running the library ``argv[1]`` times on fixed inputs and
    printing the mean process CPU microseconds per run (U1 libraries: every
    pool defined by the library)."""
    lines = [
        "#include <stdio.h>",
        "#include <stdlib.h>",
        "#include <string.h>",
        "#include <time.h>",
        f'#include "{interface["header"]}"',
        "",
    ]
    tensors = [*interface["inputs"], *interface["outputs"]]
    for k, t in enumerate(tensors):
        count = max(1, t["bytes"] // _C_SIZES[t["c_type"]])
        lines.append(f"static {t['c_type']} t{k}[{count}];")
    lines += [
        "",
        "int main(int argc, char** argv) {",
        "  long runs = argc > 1 ? atol(argv[1]) : 100, i, j;",
        "  struct timespec start, stop;",
        "  double checksum = 0.0;",
    ]
    for k, t in enumerate(interface["inputs"]):
        value = (
            "(float)((j % 17) - 8) * 0.125f"
            if t["c_type"] == "float"
            else (f"({t['c_type']})((j * 37) % 251 - 125)")
        )
        lines.append(
            f"  for (j = 0; j < (long)(sizeof t{k} / sizeof t{k}[0]); ++j) "
            f"t{k}[j] = {value};"
        )
    n_in = len(interface["inputs"])
    if interface["io_in_workspace"]:
        lines.append(f"  {interface['inputs_type']} in = {interface['map_inputs']}();")
        lines.append(
            f"  {interface['outputs_type']} out = {interface['map_outputs']}();"
        )
        for k, t in enumerate(interface["inputs"]):
            lines.append(f"  memcpy(in.{t['c_name']}, t{k}, sizeof t{k});")
        call = f"{interface['run']}()"
    else:
        ins = ", ".join(f"t{k}" for k in range(n_in))
        outs = ", ".join(f"t{k}" for k in range(n_in, len(tensors)))
        lines.append(f"  {interface['inputs_type']} in = {{{ins}}};")
        lines.append(f"  {interface['outputs_type']} out = {{{outs}}};")
        call = f"{interface['run']}(&in, &out)"
    if "init" in interface:  # a model with state: from its initial value
        lines.append(f"  {interface['init']}();")
    lines += [
        f"  {call};",
        "  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &start);",
        f"  for (i = 0; i < runs; ++i) {call};",
        "  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &stop);",
    ]
    for k, t in enumerate(interface["outputs"], n_in):
        source = f"out.{t['c_name']}" if interface["io_in_workspace"] else f"t{k}"
        lines.append(
            f"  for (j = 0; j < {max(1, t['bytes'] // _C_SIZES[t['c_type']])}; ++j) "
            f"checksum += (double){source}[j];"
        )
    lines += [
        '  printf("%.3f %g\\n", ((double)(stop.tv_sec - start.tv_sec) * 1e9 +',
        "         (double)(stop.tv_nsec - start.tv_nsec)) / (double)runs / 1e3,",
        "         checksum);",
        "  (void)in; (void)out;",
        "  return 0;",
        "}",
        "",
    ]
    return "\n".join(lines)


_C_SIZES = {"int8_t": 1, "uint8_t": 1, "int16_t": 2, "int32_t": 4, "float": 4}


def c_inference_us(
    out: Path, interface: dict[str, Any] | None, runs: int, repeats: int
) -> tuple[float | None, str]:
    """Our generated C's mean inference time (gcc -O2), from the library
    ``usmp-compile`` wrote into ``out``: the fastest of ``repeats`` runs of
    the timing program."""
    if interface is None:
        return None, "no C emitted"
    if any(p["provided_by"] == "application" for p in interface["pools"]):
        return None, "timing needs library-defined pools"
    import subprocess

    from usmp.testing.run_c import CRunError, build

    files = {p.name: p.read_text() for p in (out / "codegen" / "host").rglob("*.[ch]")}
    files["timing_main.c"] = timing_harness(interface)
    try:
        exe = build(files, TIMING_CFLAGS)
    except CRunError as e:
        return None, f"C build failed: {str(e).splitlines()[0]}"
    best = float("inf")
    for _ in range(repeats):
        result = subprocess.run(
            [str(exe), str(runs)],
            capture_output=True,
            text=True,
            check=False,
            timeout=600,
        )
        if result.returncode != 0:
            return None, f"C run failed ({result.returncode})"
        best = min(best, float(result.stdout.split()[0]))
    return round(best, 1), ""


def measure(
    name: str, stats: dict[str, Any], runs: int, repeats: int, patch: str = "off"
) -> Row:
    path = MODELS_DIR / name
    row = Row(model=name)
    facts = stats.get(name) or model_facts(name)
    row.tflm_head = facts.get("tflm_arena_head_bytes")
    row.tflm_total = facts.get("tflm_arena_total_bytes")
    row.weights = facts.get("weight_bytes")
    with tempfile.TemporaryDirectory(prefix="usmp-bench-") as tmp:
        out = Path(tmp) / "out"
        flags = ["--patch", patch]
        metadata, seconds, err = compile_model(path, out, *flags)
        row.compile_s = round(seconds, 3)
        if metadata is None:
            row.notes.append(err.splitlines()[-1] if err else "compilation failed")
        else:
            summary = metadata["memory_summary"]
            row.workspace = summary.get("workspace_bytes")
            row.lower_bound = summary.get("workspace_lower_bound_bytes")
            row.constants = summary.get("constant_bytes")
            row.persistent = summary.get("persistent_bytes")
            if metadata.get("patch"):
                row.notes.append(_patch_note(metadata["patch"]))
            row.ours_us, why = c_inference_us(
                out, metadata.get("c_interface"), runs, repeats
            )
            if why:
                row.notes.append(why)
        io_metadata, _, _ = compile_model(
            path, Path(tmp) / "io", "--use-workspace-io", *flags
        )
        if io_metadata is not None:
            if io_metadata.get("patch"):
                row.notes.append("with I/O: " + _patch_note(io_metadata["patch"]))
            summary = io_metadata["memory_summary"]
            row.workspace_io = summary.get("workspace_bytes")
            row.lower_bound_io = summary.get("workspace_lower_bound_bytes")
    from usmp.frontend.tflite_reader import read_model_file
    from usmp.testing.tflm_reference import is_hybrid

    reference = tflm_inference_us
    if is_hybrid(read_model_file(path)):
        row.tflm_head = row.tflm_total = "refuses"
        row.notes.append("TFLite Micro refuses hybrid models: tflm us is LiteRT's")
        reference = litert_inference_us
    try:
        row.tflm_us = round(reference(path, runs, repeats), 1)
    except Exception as e:  # noqa: BLE001 - a benchmark reports, it does not stop
        row.notes.append(f"tflm: {e}")
    if row.tflm_us and row.ours_us:
        row.speedup = round(row.tflm_us / row.ours_us, 2)
    return row


def _patch_note(d: dict[str, Any]) -> str:
    if not d.get("applied"):
        return f"patch not applied ({d.get('reason')})"
    rows, cols = d["grid"]
    extra = 100 * d["extra_macs"] / d["model_macs"]
    return f"patch: depth {d['depth']}, {rows}x{cols} tiles, +{extra:.1f}% MACs"


COLUMNS = (
    ("model", "model", "<"),
    ("workspace", "ws", ">"),
    ("lower_bound", "lb", ">"),
    ("workspace_io", "ws+io", ">"),
    ("lower_bound_io", "lb+io", ">"),
    ("tflm_head", "tflm head", ">"),
    ("tflm_total", "tflm arena", ">"),
    ("persistent", "state", ">"),
    ("constants", "const", ">"),
    ("weights", "weights", ">"),
    ("compile_s", "compile s", ">"),
    ("tflm_us", "tflm us", ">"),
    ("ours_us", "ours us", ">"),
    ("speedup", "speedup", ">"),
)


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:,.2f}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def table(rows: list[Row]) -> str:
    cells = [[_cell(getattr(r, key)) for key, _, _ in COLUMNS] for r in rows]
    cells = [[Path(c[0]).stem, *c[1:]] for c in cells]
    widths = [
        max(len(title), *(len(c[i]) for c in cells))
        for i, (_, title, _) in enumerate(COLUMNS)
    ]
    lines = [
        "  ".join(
            t.ljust(w) if a == "<" else t.rjust(w)
            for (_, t, a), w in zip(COLUMNS, widths, strict=True)
        )
    ]
    for c in cells:
        lines.append(
            "  ".join(
                v.ljust(w) if a == "<" else v.rjust(w)
                for v, (_, _, a), w in zip(c, COLUMNS, widths, strict=True)
            )
        )
    notes = [f"  {Path(r.model).stem}: {'; '.join(r.notes)}" for r in rows if r.notes]
    legend = (
        "bytes: ws = our workspace (I/O outside), lb = its liveness lower bound, "
        "ws+io / lb+io = with --use-workspace-io (I/O inside, like TFLM's arena), "
        "tflm head / arena = TFLite Micro's tensor arena (stats.json; its tail "
        "holds the variable tensors; 'refuses': a hybrid model), state = our "
        "persistent pool, const = our constant pools, weights = the model's "
        "weight bytes; tflm us / ours us = "
        "process CPU microseconds per inference (fastest of --repeats timings), "
        "speedup = tflm us / ours us (hybrid models: LiteRT's reference kernels, "
        "BUILTIN_REF, instead of TFLite Micro)"
    )
    return "\n".join([*lines, "", legend, *(["notes:", *notes] if notes else [])])


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        description="Memory, compile time and inference time of usmp-opt on the "
        "shared models."
    )
    p.add_argument(
        "--models",
        nargs="*",
        default=list(SUPPORTED_MODELS),
        help="paths under the models dir",
    )
    p.add_argument("--runs", type=int, default=50, help="inferences per timing")
    p.add_argument(
        "--repeats", type=int, default=5, help="timings per side (fastest kept)"
    )
    p.add_argument("--json", help="also write the rows as JSON here")
    p.add_argument(
        "--patch",
        choices=("off", "auto"),
        default="off",
        help="usmp-compile --patch (patch-based execution of the first stage)",
    )
    args = p.parse_args(argv)
    stats = json.loads((MODELS_DIR / "stats.json").read_text())
    rows = []
    for name in args.models:
        print(f"... {name}", file=sys.stderr, flush=True)
        rows.append(measure(name, stats, args.runs, args.repeats, args.patch))
    print(table(rows))
    if args.json:
        Path(args.json).write_text(
            json.dumps([asdict(r) for r in rows], indent=2) + "\n"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
