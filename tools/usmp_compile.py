"""``usmp-compile``: a tvmc-like driver, model in, C library out.

    usmp-compile model.tflite -o out/ [--executor aot]
        [--target c | accel,c | "c -mcpu=cortex-m4"]
        [--offload CONV_2D,DEPTHWISE_CONV_2D=accel]
        [--module-name NAME] [--algorithm ALGO] [--use-workspace-io]
        [--operator-order memory|source] [--fold-padding on|off]
        [--usmp-workspace-pools=sram,dtcm] [--usmp-parameter-pools=flash]
        [--usmp-workspace-pool-sram="target=c:rw;size=65536;align=16"]
        [--usmp-parameter-pool-flash="target=c;size=0"]
        [--workspace-byte-alignment N] [--constant-byte-alignment N]
        [--stop-after STEP] [--dump-ir] [--quiet]

The input is a ``.tflite`` file (imported by ``usmp.frontend``) or a relay
``.mlir`` module. The pipeline is

    import -> plan-devices -> fuse-ops -> lower-ops -> aot-lower-main -> usmp
           -> convert-to-emitc -> emit-c

each step a registered pass run in process on one module (the input and the
final IR verified; every step with ``--verify-each``); each step's name and
time go to stderr as it finishes (unless ``--quiet``). Wall-clock times go
nowhere else: every output file is the same, byte for byte, on every run.
``--stop-after STEP`` ends after that step and writes its MLIR; ``--dump-ir``
writes every step's MLIR to ``out/ir/``.

Pools follow the USMP RFC's tvmc flags (``usmp.tools.pool_flags``):
``--usmp-workspace-pools`` and ``--usmp-parameter-pools`` list pools in
fallback order; a per-pool flag ``--usmp-workspace-pool-NAME`` /
``--usmp-parameter-pool-NAME`` takes ``target=T[:rw|ro],...;size=BYTES;
align=BYTES``. They become the module's ``tir.pools`` before ``usmp`` runs.

Output directory (in the spirit of TVM's Model Library Format)::

    out/codegen/host/src/*.c           the C library (emit-c): tvmgen_<m>.c
                                       (pools, run), tvmgen_<m>_operators.c,
                                       tvmgen_<m>_aot_main.c
    out/codegen/host/include/*.h       tvmgen_<m>.h (TVM's size macros and the
                                       RFC's interface), and
                                       tvmgen_<m>_parameters.h for
                                       application-provided parameter pools
    out/CMakeLists.txt, out/Makefile   build libtvmgen_<m>.a and the example
    out/example/main.c                 host application: inputs from files,
                                       outputs and time per run printed
                                       (usmp.tools.firmware_kit)
    out/src/<model>.relay.mlir         the imported relay module
    out/memory/plan.json               usmp's memory report, plan.<pool>.svg per pool,
                                       summary.txt/.csv (also printed unless -q)
    out/metadata.json                  model I/O, options, pools, memory report, the
                                       C interface (types, run symbol, C names of
                                       every field, pool and macro), the files
    out/ir/NN-<step>.mlir              with --dump-ir

The files are written to a temporary folder next to ``out`` and moved into
``out`` only when the whole run succeeded: a failed run leaves ``out`` as it
was. Files an earlier run listed in ``metadata.json`` that this run does not
write are removed; other files in ``out`` are left alone.

Errors caused by the input (unsupported operator, bad pool flags, a pass's
located diagnostic) print one message on stderr and exit with status 1.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.exceptions import DiagnosticException, ParseError

from usmp.dialects import new_context
from usmp.dialects.limits import alignment_error
from usmp.dialects.tir import CALL_TYPES, INTERFACE_APIS
from usmp.lowering.gc_pause import cyclic_gc_paused
from usmp.passes.progress import listening
from usmp.printing import ExactPrinter
from usmp.tools.pool_flags import (
    C_IDENTIFIER,
    DEFAULT_ALIGNMENT,
    PoolFlag,
    PoolFlagError,
    parse_pool_flags,
    pool_info_attrs,
    split_pool_flags,
    with_default_alignment,
)
from usmp.tools.process_exit import exit_process
from usmp.tools.progress import Progress
from usmp.tools.timing import Timer, timed_run

PIPELINE = (
    "import",
    "plan-devices",
    "fuse-ops",
    "lower-ops",
    "aot-lower-main",
    "usmp",
    "convert-to-emitc",
    "emit-c",
)
EXECUTORS = ("aot",)


class CompileError(Exception):
    """A problem with the command line or the input: one message, exit 1."""


# -- the pipeline --------------------------------------------------------------


@dataclass
class Compilation:
    """State of one run: options, the module, and what each step recorded."""

    args: argparse.Namespace
    pools: list[PoolFlag]
    out: Path
    ctx: Context
    module: ModuleOp | None = None
    model_info: dict[str, Any] = field(default_factory=dict[str, Any])
    tflite_model: Any = None
    """The ``.tflite`` model read (``usmp.frontend.tflite_reader.Model``)."""
    timer: Timer = field(default_factory=lambda: Timer("Total"))
    progress: Progress | None = None
    files: list[str] = field(default_factory=list[str])
    c_interface: dict[str, Any] | None = None
    patch: dict[str, Any] | None = None
    """``patch-stage``'s decision (``--patch auto``)."""
    unpatched: ModuleOp | None = None
    """With ``--patch auto`` and the stage patched: the module as it was
    before ``patch-stage``, planned too at the ``usmp`` step (the better
    plan is kept)."""

    def say(self, message: str) -> None:
        if self.progress is not None:
            self.progress.line(message)
        elif not self.args.quiet:
            print(f"usmp-compile: {message}", file=sys.stderr, flush=True)

    def write(self, relative: str, text: str) -> Path:
        path = self.out / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        self.files.append(relative)
        return path

    def mlir(self) -> str:
        from io import StringIO

        assert self.module is not None
        stream = StringIO()
        ExactPrinter(stream=stream).print_op(self.module)
        return stream.getvalue() + "\n"


def _step_import(c: Compilation) -> None:
    path = Path(c.args.model)
    if c.module is not None:  # given by the caller (usmp.compile)
        from usmp.diagnostics import verify_located

        verify_located(c.module)
        c.model_info = {"file": None, "format": "mlir"}
    elif path.suffix == ".mlir":
        from usmp.diagnostics import verify_located
        from usmp.parsing import LocatingParser

        try:
            data = path.read_bytes()  # decoded by the parser: errors located
        except OSError as e:
            raise CompileError(f"{path}: {e.strerror}") from None
        c.module = LocatingParser(c.ctx, data, str(path)).parse_module()
        verify_located(c.module)
        c.model_info = {"file": path.name, "format": "mlir"}
    else:
        from usmp.diagnostics import verify_located
        from usmp.frontend.tflite_import import import_model
        from usmp.frontend.tflite_reader import damaged_model_errors, read_model_file

        with damaged_model_errors(path):
            model = read_model_file(path)
            c.module = import_model(model)
        for warning in model.warnings:
            print(warning, file=sys.stderr)
        c.model_info = _tflite_info(model)
        c.tflite_model = model
        verify_located(c.module)
    _place_devices(c)
    c.write(f"src/{path.stem}.relay.mlir", c.mlir())


def _place_devices(c: Compilation) -> None:
    """``--offload``: the offloaded operators on their target
    (``usmp.tools.offload``), before ``plan-devices`` makes every device
    explicit."""
    from usmp.tools.offload import place_operators

    assert c.module is not None
    offload: dict[str, str] = c.args.offload_map
    if not offload:
        return
    if c.tflite_model is None:
        raise CompileError(
            "--offload places the operators of a .tflite model; in relay MLIR "
            "place them with relay.on_device annotations"
        )
    present = {o.display_name for o in c.tflite_model.operators}
    for op_type, target in offload.items():
        if op_type not in present:
            print(
                f"usmp-compile: warning: --offload {op_type}={target}: the model "
                f"has no {op_type} operator",
                file=sys.stderr,
            )
    place_operators(c.module, offload)


def _step_plan_devices(c: Compilation) -> None:
    """``plan-devices``; every target a device names must be one of
    ``--target``."""
    from usmp.tools.offload import HOST_TARGET

    _pass_step("plan-devices")(c)
    assert c.module is not None
    unknown = [t for t in _device_targets(c.module) if t not in c.args.targets]
    if unknown:
        raise CompileError(
            f"the model places operators on target(s) {', '.join(unknown)}, which "
            f"--target {','.join(c.args.targets)} does not name (e.g. --target "
            f"{','.join([*unknown, HOST_TARGET])})"
        )


def _device_targets(module: ModuleOp) -> list[str]:
    """The targets of the devices ``plan-devices`` wrote, in order."""
    from usmp.dialects import relay
    from usmp.dialects.device import VirtualDeviceAttr

    targets: list[str] = []
    for op in module.walk():
        device = op.attributes.get(relay.VIRTUAL_DEVICE)
        if isinstance(device, VirtualDeviceAttr):
            t = device.target.data
            if t and t not in targets:
                targets.append(t)
    return targets


def _tflite_info(model: Any) -> dict[str, Any]:
    def tensor(index: int) -> dict[str, Any]:
        t = model.tensors[index]
        quant = t.quantization
        return {
            "name": t.name,
            "shape": list(t.shape),
            "dtype": str(t.dtype),
            "scale": quant.scale if quant else None,
            "zero_point": quant.zero_point if quant else None,
        }

    return {
        "file": model.name,
        "format": "tflite",
        "operators": len(model.operators),
        "weight_bytes": sum(t.data.nbytes for t in model.tensors if t.data is not None),
        "inputs": [tensor(i) for i in model.inputs],
        "outputs": [tensor(i) for i in model.outputs],
    }


def _pass_step(flag: str, **options: Any) -> Callable[[Compilation], None]:
    def run(c: Compilation) -> None:
        from usmp.diagnostics import verify_located
        from usmp.passes import get_all_passes

        factories = get_all_passes()
        if flag not in factories:
            raise CompileError(
                f"step '{flag}' is not available in this build (registered passes: "
                f"{', '.join(sorted(factories))}); use --stop-after to end earlier"
            )
        cls = factories[flag]()
        fields = getattr(cls, "__dataclass_fields__", {})
        values = {
            k: v(c) if callable(v) else v for k, v in options.items() if k in fields
        }
        assert c.module is not None
        cls(**values).apply(c.ctx, c.module)
        if c.args.verify_each:
            verify_located(c.module)

    return run


def _step_usmp(c: Compilation) -> None:
    _plan_usmp(c)
    if c.unpatched is not None:
        _keep_better_of_patched(c)
    c.files.extend(
        str(p.relative_to(c.out)) for p in sorted((c.out / "memory").iterdir())
    )


def _plan_usmp(c: Compilation) -> None:
    """The ``usmp`` pass on ``c.module``, its report in ``c.out/memory``."""
    from xdsl.dialects.builtin import ArrayAttr

    from usmp.dialects.tir import POOLS

    assert c.module is not None
    if c.pools:
        c.module.attributes[POOLS] = ArrayAttr(pool_info_attrs(c.pools))
    (c.out / "memory").mkdir(parents=True, exist_ok=True)
    _pass_step(
        "usmp",
        algorithm=c.args.algorithm,
        time_limit=c.args.plan_time_limit or 0,
        use_workspace_io=c.args.use_workspace_io,
        report=str(c.out / "memory" / "plan.json"),
        # TFLite Micro's kernels are not ours: its plan keeps pairs disjoint
        overlap=c.args.usmp_overlap == "on" and not c.args.emit_tflm_plan,
    )(c)


def _planned_workspace(c: Compilation) -> int:
    report = _memory_report(c) or {}
    return sum(
        p["size"] for p in report.get("pools", []) if p.get("kind") == "workspace"
    )


def _keep_better_of_patched(c: Compilation) -> None:
    """``--patch auto`` never plans a larger workspace than not patching:
    ``patch-stage`` chooses on an estimate of the liveness peak (no overlaps,
    no aliases, I/O as it says), so the module before it (``c.unpatched``)
    goes through fuse-ops .. usmp too and the smaller planned workspace (as
    ``usmp`` plans it, I/O included with ``--use-workspace-io``) is kept;
    a tie keeps the unpatched module. Both figures go into the decision
    (``planned_patched``, ``planned_unpatched``)."""
    assert c.patch is not None and c.unpatched is not None
    scratch = Path(
        tempfile.mkdtemp(dir=c.out.parent, prefix=f".{c.out.name}.unpatched.")
    )
    try:
        other = Compilation(c.args, c.pools, scratch, c.ctx, c.unpatched)
        _pass_step("fuse-ops", module_name=lambda c: c.args.module_name)(other)
        for step in ("lower-ops", "aot-lower-main"):
            STEPS[step](other)
        _plan_usmp(other)
        patched, unpatched = _planned_workspace(c), _planned_workspace(other)
        c.unpatched = None
        c.patch["planned_patched"] = patched
        c.patch["planned_unpatched"] = unpatched
        if patched < unpatched:
            c.say(f"patch: planned workspace {unpatched:,} -> {patched:,} B")
            return
        estimate = {
            k: c.patch[k] for k in ("peak_before", "peak_after") if k in c.patch
        }
        c.patch = {
            "applied": False,
            "reason": f"no lower planned workspace ({patched:,} B patched vs "
            f"{unpatched:,} B unpatched)",
            "planned_patched": patched,
            "planned_unpatched": unpatched,
            **{f"estimated_{k}": v for k, v in estimate.items()},
        }
        c.say(_patch_line(c.patch))
        c.module = other.module
        shutil.rmtree(c.out / "memory")
        shutil.move(scratch / "memory", c.out / "memory")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _step_emit_c(c: Compilation) -> None:
    """The C library (``usmp.tools.c_library``): sources in
    ``codegen/host/src``, headers in ``codegen/host/include``. Pools named on
    the command line are provided by the application (RFC U2/U3) unless
    ``--library-pools``; otherwise the library defines them (U1)."""
    try:
        from usmp.tools.c_library import build_library
    except ImportError:
        raise CompileError(
            "step 'emit-c' is not available in this build (usmp.tools.c_library is "
            "missing); use --stop-after convert-to-emitc"
        ) from None
    assert c.module is not None
    # a pool the plan did not use is not part of the library's interface
    planned = {p["name"] for p in (_memory_report(c) or {}).get("pools", [])}
    user_pools = (
        [] if c.args.library_pools else [p.name for p in c.pools if p.name in planned]
    )
    library = build_library(c.module, user_pools=user_pools)
    for name, text in sorted(library.files.items()):
        folder = "include" if name.endswith(".h") else "src"
        c.write(f"codegen/host/{folder}/{name}", text)
    from usmp.tools.firmware_kit import kit_files

    for relative, text in kit_files(library).items():
        c.write(relative, text)
    c.c_interface = _c_interface(library)


def _c_interface(library: Any) -> dict[str, Any]:
    """The library's C interface (``usmp.lowering.metadata.ModelInterface``)
    as JSON: what an application (or a test harness) needs to call it."""
    from usmp.lowering.metadata import io_macros

    m = library.interface
    tensors = io_macros(m)

    def tensor(t: Any, macro: str) -> dict[str, Any]:
        return {
            "name": t.name,
            "c_name": t.c_name,
            "c_type": t.c_element,
            "shape": list(t.type.get_shape()),
            "bytes": t.nbytes,
            "size_macro": macro,
        }

    interface: dict[str, Any] = {
        "model": m.model,
        "header": library.file("header"),
        "library": f"libtvmgen_{m.names.model}.a",
        "run": m.symbol("run"),
        "inputs_type": m.typedef("Inputs"),
        "outputs_type": m.typedef("Outputs"),
        "inputs": [tensor(t, n) for t, n in tensors[: len(m.inputs)]],
        "outputs": [tensor(t, n) for t, n in tensors[len(m.inputs) :]],
        "workspace_size_macro": f"TVMGEN_{m.upper}_WORKSPACE_SIZE",
        "io_in_workspace": m.io_in_workspace,
        "pools": [
            {
                "name": p.name,
                "c_name": p.c_name,
                "kind": p.kind,
                "size": p.size,
                "alignment": p.alignment,
                "provided_by": "application" if p.user else "library",
                "size_macro": m.define(p, "SIZE"),
                "tvm_size_macro": m.tvmgen_define(p),
            }
            for p in m.pools
        ],
    }
    if m.user_pools(workspace=True):
        interface["workspaces_type"] = m.typedef("Workspaces")
    if m.user_pools(workspace=False):
        interface["parameters_type"] = m.typedef("Parameters")
    if m.devices:  # TVM's device API: the application implements the hooks
        from usmp.lowering.metadata_devices import hook_names

        interface["devices_type"] = m.typedef("Devices")
        interface["devices"] = [
            {"name": d, "context": f"device_context_{d}", "hooks": hook_names(d)}
            for d in m.devices
        ]
    if m.states:
        interface["init"] = m.symbol("init")
    if m.io_in_workspace:
        interface["map_inputs"] = m.symbol("map_inputs")
        interface["map_outputs"] = m.symbol("map_outputs")
    return interface


def _step_fuse_ops(c: Compilation) -> None:
    """``fuse-ops``, after ``fold-explicit-padding`` (unless ``--fold-padding
    off``) and ``patch-stage`` with ``--patch auto``: the patch decision goes
    to ``metadata.json`` (``patch``) and, as one line, to stderr; equal
    stripe kernels are then merged into one function (``merged_functions``
    in the decision)."""
    if c.args.fold_padding == "on":
        _pass_step("fold-explicit-padding")(c)
    if c.args.patch != "off":
        assert c.module is not None
        before = c.module.clone()
        _pass_step(
            "patch-stage",
            budget=c.args.patch_budget,
            depth=c.args.patch_depth,
            stripes=c.args.patch_stripes,
            io=c.args.use_workspace_io,
        )(c)
        c.patch = _patch_decision(c)
        c.say(_patch_line(c.patch))
        if c.patch.get("applied"):
            c.unpatched = before
    _pass_step("fuse-ops", module_name=lambda c: c.args.module_name)(c)
    if c.patch is not None and c.patch.get("applied"):
        from usmp.passes.patch_stage import dedupe_primitive_functions

        assert c.module is not None
        c.patch["merged_functions"] = dedupe_primitive_functions(c.module)


def _patch_decision(c: Compilation) -> dict[str, Any]:
    from xdsl.dialects import func
    from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, IntegerAttr

    from usmp.passes.patch_stage import PATCH_ATTR

    assert c.module is not None
    for f in c.module.ops:
        if isinstance(f, func.FuncOp) and PATCH_ATTR in f.attributes:
            attr = f.attributes[PATCH_ATTR]
            assert isinstance(attr, DictionaryAttr)

            def value(a: Any) -> Any:
                if isinstance(a, IntegerAttr):
                    return a.value.data
                if isinstance(a, ArrayAttr):
                    return [value(x) for x in a.data]
                return getattr(a, "data", str(a))

            decision = {k: value(v) for k, v in attr.data.items()}
            decision["applied"] = bool(decision["applied"])
            return decision
    return {"applied": False, "reason": "no main function"}


def _patch_line(d: dict[str, Any]) -> str:
    if not d.get("applied"):
        return f"patch: not applied: {d.get('reason')}"
    rows, cols = d["grid"]
    return (
        f"patch: first {d['depth']} of {d['layers']} layers in {rows}x{cols} "
        f"tiles; estimated peak {d['peak_before']:,} -> {d['peak_after']:,} B; "
        f"+{d['extra_macs']:,} MACs (+{100 * d['extra_macs'] / d['model_macs']:.1f}% "
        f"of {d['model_macs']:,}, budget {d['budget_macs']:,})"
    )


STEPS: dict[str, Callable[[Compilation], None]] = {
    "import": _step_import,
    "plan-devices": _step_plan_devices,
    "fuse-ops": _step_fuse_ops,
    "lower-ops": _pass_step("lower-ops", mcpu=lambda c: getattr(c.args, "mcpu", "")),
    "aot-lower-main": _pass_step(
        "aot-lower-main",
        module_name=lambda c: c.args.module_name,
        order=lambda c: c.args.operator_order,
        order_io=lambda c: c.args.use_workspace_io,
        call_type=lambda c: call_type(c.args),
        interface_api=lambda c: c.args.interface_api,
    ),
    "usmp": _step_usmp,
    "convert-to-emitc": _pass_step("convert-to-emitc"),
    "emit-c": _step_emit_c,
}


def run(c: Compilation) -> None:
    """The pipeline's steps up to ``--stop-after``, each timed in ``c.timer``
    (the final verification as ``verify``) and reported to ``c.progress``.

    Python's cyclic collector is off for the run (``cyclic_gc_paused``): the
    IR is one large cyclic graph, so a full collection scans every op alive
    (millions of objects on a 10,000-operator graph; full collections took
    11 of 62 CPU s there, and 6% of a 1,000-operator compile even with the
    objects of earlier steps frozen). Reference counting still frees what is
    not cyclic; cyclic garbage (the IR a step replaces) waits for the end of
    the run."""
    with cyclic_gc_paused():
        _run(c)


def _run(c: Compilation) -> None:
    last = c.args.stop_after
    progress = c.progress or Progress(PIPELINE, sys.stderr, quiet=True, prefix="")
    for number, step in enumerate(PIPELINE):
        progress.begin(step)
        with c.timer.step(step) as timer, listening(progress.listener(step)):
            STEPS[step](c)
        progress.end(step, timer.wall)
        if step == "import":
            progress.operators = _operator_count(c)
        if c.args.dump_ir and step != "emit-c":
            c.write(f"ir/{number:02d}-{step}.mlir", c.mlir())
        final = step == "convert-to-emitc" or (step == last and step != "emit-c")
        if final and step != "import" and not c.args.verify_each:
            with c.timer.step("verify"):
                _verify_output(c)
        if step == last:
            if step != "emit-c":
                c.write(f"{c.args.module_name}.{step}.mlir", c.mlir())
            break
    c.write("metadata.json", json.dumps(_metadata(c), indent=2) + "\n")


def _operator_count(c: Compilation) -> int:
    """Relay operators of the imported model (constants not counted)."""
    from usmp.dialects.relay import ConstantOp

    assert c.module is not None
    return sum(
        1
        for op in c.module.walk()
        if op.name.startswith("relay.") and not isinstance(op, ConstantOp)
    )


def _verify_output(c: Compilation) -> None:
    """The IR a run ends with (or hands to emit-c) is verified once; the steps
    in between are verified only with ``--verify-each`` (a whole-module verify
    costs a third of a step)."""
    from usmp.diagnostics import verify_located

    assert c.module is not None
    verify_located(c.module)


def _memory_report(c: Compilation) -> dict[str, Any] | None:
    path = c.out / "memory" / "plan.json"
    return json.loads(path.read_text()) if path.is_file() else None


def _metadata(c: Compilation) -> dict[str, Any]:
    memory = _memory_report(c)
    summary: dict[str, Any] = {}
    if memory is not None:
        pools = memory.get("pools", [])
        workspace = [p for p in pools if p.get("kind") == "workspace"]
        constant = [p for p in pools if p.get("kind") == "constant"]
        summary = {
            "workspace_bytes": sum(p["size"] for p in workspace),
            "workspace_lower_bound_bytes": sum(
                p.get("lower_bound") or 0 for p in workspace
            ),
            "workspace_no_alias_bound_bytes": sum(
                p.get("no_alias_bound") or 0 for p in workspace
            ),
            "constant_bytes": sum(p["size"] for p in constant),
            "persistent_bytes": sum(
                p["size"] for p in pools if p.get("kind") == "persistent"
            ),
            "io_in_workspace": bool(c.args.use_workspace_io),
        }
    return {
        "version": 1,
        "model_name": c.args.module_name,
        "model": c.model_info,
        "executor": c.args.executor,
        "target": c.args.target,
        "algorithm": c.args.algorithm,
        "operator_order": c.args.operator_order,
        "pools_requested": [
            {
                "name": p.name,
                "kind": p.kind,
                "size": p.size,
                "alignment": p.alignment,
                "access": dict(p.access),
            }
            for p in c.pools
        ],
        "memory_summary": summary,
        "patch": c.patch,
        "memory": memory,
        "c_interface": c.c_interface,
        "files": sorted(set(c.files) | {"metadata.json"}),
    }


# -- command line --------------------------------------------------------------


def _parser() -> argparse.ArgumentParser:
    from usmp.planning.algorithms import ALGORITHMS, DEFAULT_ALGORITHM

    p = argparse.ArgumentParser(
        prog="usmp-compile",
        description="Compile a TFLite model (or relay MLIR) to a static-memory "
        "C library.",
        epilog="Per-pool flags: --usmp-workspace-pool-NAME=SPEC, "
        "--usmp-parameter-pool-NAME=SPEC with SPEC "
        '"target=c:rw,npu:ro;size=65536;align=16".',
    )
    p.add_argument("model", help="a .tflite file or a relay .mlir module")
    p.add_argument("-o", "--output", required=True, help="output directory")
    p.add_argument("--executor", choices=EXECUTORS, default="aot")
    p.add_argument(
        "--target",
        default="c",
        help="targets, the host 'c' last: e.g. 'accel,c' adds a second target "
        "the operators chosen by --offload run on (their C in its own file); "
        "'c -mcpu=cortex-m4' selects the kernels for that CPU (lower-ops' mcpu)",
    )
    p.add_argument(
        "--offload",
        action="append",
        default=[],
        metavar="OP_TYPE[,OP_TYPE...]=TARGET",
        help="run the TFLite operators of these types on TARGET (one of --target); "
        "repeatable",
    )
    p.add_argument(
        "--module-name", default="default", help="C prefix (tvmgen_<name>_...)"
    )
    p.add_argument(
        "--algorithm",
        "--usmp-algorithm",
        choices=sorted(ALGORITHMS),
        default=DEFAULT_ALGORITHM,
        help=f"memory planning algorithm (default {DEFAULT_ALGORITHM})",
    )
    p.add_argument(
        "--plan-time-limit",
        type=float,
        metavar="S",
        help="CPU seconds for --algorithm optimal (> 0, inf: no limit; default 10)",
    )
    p.add_argument(
        "--usmp-overlap",
        choices=("on", "off"),
        default="on",
        help="let an operator's output overlap an input it reads for the last "
        "time where its loop nest makes that safe (default on; off with "
        "--emit-tflm-plan, whose kernels are TFLite Micro's)",
    )
    p.add_argument("--usmp-workspace-pools", help="workspace pools, in fallback order")
    p.add_argument(
        "--usmp-parameter-pools", help="parameter (constant) pools, in order"
    )
    p.add_argument(
        "--usmp-persistent-pools",
        help="persistent pools (state kept across runs), in order",
    )
    p.add_argument("--workspace-byte-alignment", type=int, default=DEFAULT_ALIGNMENT)
    p.add_argument("--constant-byte-alignment", type=int, default=DEFAULT_ALIGNMENT)
    p.add_argument(
        "--use-workspace-io",
        action="store_true",
        help="place the model's inputs and outputs in the workspace pool",
    )
    p.add_argument(
        "--operator-order",
        choices=("memory", "source"),
        default="memory",
        help="order of the operator calls: 'memory' (default) the order of least "
        "peak live bytes (aot-lower-main{order=memory}), 'source' the model's",
    )
    p.add_argument(
        "--fold-padding",
        choices=("on", "off"),
        default="on",
        help="fold a PAD feeding convolutions into their padding "
        "(fold-explicit-padding, before fuse-ops; default on)",
    )
    p.add_argument(
        "--library-pools",
        action="store_true",
        help="the library defines every pool, also those named by --usmp-*-pools "
        "(RFC U1); by default pools named on the command line are provided by the "
        "application (U2/U3)",
    )
    p.add_argument(
        "--emit-tflm-plan",
        metavar="OUT.tflite",
        help="also write a copy of the model holding the workspace plan as TFLite "
        "Micro's offline memory plan (OfflineMemoryAllocation metadata): the "
        "library's workspace offsets when they cover every tensor TFLM plans "
        "(with --use-workspace-io), else the planner run on TFLM's lifetimes",
    )
    p.add_argument(
        "--patch",
        choices=("off", "auto"),
        default="off",
        help="patch-based execution of the first stage (patch-stage): 'auto' "
        "computes the first layers in row stripes when that lowers the peak "
        "memory (default off)",
    )
    p.add_argument(
        "--patch-budget",
        type=float,
        default=0.10,
        metavar="F",
        help="extra MACs patching may add, as a fraction of the model's (default 0.10)",
    )
    p.add_argument(
        "--patch-depth",
        type=int,
        default=0,
        metavar="N",
        help="layers in the patched stage (default 0: choose)",
    )
    p.add_argument(
        "--patch-stripes",
        type=int,
        default=0,
        metavar="N",
        help="row stripes of the patched stage (default 0: choose)",
    )
    p.add_argument(
        "--interface-api",
        choices=INTERFACE_APIS,
        default="c",
        help="the entry point: c (tvmgen_<m>_run with input and output structs, "
        "the default) or packed (TVM's packed calling convention)",
    )
    p.add_argument(
        "--use-unpacked-api",
        type=_flag_bool,
        metavar="0|1",
        help="call operators with plain pointers (1; required by --interface-api "
        "c) or with TVM's C-packed convention (0: cpacked); default 1 with "
        "--interface-api c, 0 with packed",
    )
    p.add_argument(
        "--call-type",
        choices=CALL_TYPES,
        help="how the AOT main calls operators (aot-lower-main{call_type}): "
        "unpacked (pointers), cpacked (TVMValue/DLTensor arguments, called "
        "directly) or packed (looked up by name, called through TVMFuncCall); "
        "default from --use-unpacked-api",
    )
    p.add_argument("--stop-after", choices=PIPELINE, help="end after this step")
    p.add_argument("--dump-ir", action="store_true", help="write every step's MLIR")
    p.add_argument(
        "--verify-each",
        action="store_true",
        help="verify the module after every step (default: the input and the IR "
        "the last step produces)",
    )
    p.add_argument("-q", "--quiet", action="store_true", help="no progress on stderr")
    p.add_argument(
        "--time-passes",
        action="store_true",
        help="print every step's CPU and wall time as a tree on stderr when the "
        "run ends (also with --quiet)",
    )
    return p


def _flag_bool(text: str) -> bool:
    value = {"1": True, "true": True, "0": False, "false": False}.get(text.lower())
    if value is None:
        raise argparse.ArgumentTypeError(f"'{text}' is not 0, 1, true or false")
    return value


def call_type(args: argparse.Namespace) -> str:
    """The operators' calling convention the flags select, as TVM's AOT
    executor chose it: unpacked API -> ``unpacked``; else ``cpacked`` (or
    ``packed`` when asked for); the C interface needs the unpacked API."""
    interface = getattr(args, "interface_api", "c")
    unpacked = getattr(args, "use_unpacked_api", None)
    chosen = getattr(args, "call_type", None)
    if unpacked is None:
        unpacked = chosen == "unpacked" if chosen else interface == "c"
    if interface == "c" and not unpacked:
        raise CompileError(
            '--interface-api c needs --use-unpacked-api 1 (TVM: "Either need '
            'interface_api == packed or unpacked-api == true"); use '
            "--interface-api packed for packed or cpacked operator calls"
        )
    if chosen is None:
        return "unpacked" if unpacked else "cpacked"
    if (chosen == "unpacked") != unpacked:
        raise CompileError(
            f"--call-type {chosen} contradicts --use-unpacked-api "
            f"{int(unpacked)}: unpacked calls are the unpacked API"
        )
    return chosen


def parse_arguments(
    argv: Sequence[str], *, exit_on_error: bool = True
) -> tuple[argparse.Namespace, list[PoolFlag]]:
    """The command line as options and pools, every option checked; input
    errors raise ``CompileError`` / ``PoolFlagError`` (and, with
    ``exit_on_error=False``, a bad option value ``argparse.ArgumentError``
    instead of exiting)."""
    rest, specs = split_pool_flags(argv)
    parser = _parser()
    parser.exit_on_error = exit_on_error
    args = parser.parse_args(rest)
    if not C_IDENTIFIER.fullmatch(args.module_name):
        raise CompileError(f"--module-name '{args.module_name}' is not a C identifier")
    from usmp.tools.offload import (
        OffloadError,
        host_mcpu,
        parse_offload,
        parse_targets,
    )

    try:
        args.targets = parse_targets(args.target)
        args.mcpu = host_mcpu(args.target)
        args.offload_map = parse_offload(args.offload, args.targets)
    except OffloadError as e:
        raise CompileError(str(e)) from None
    call_type(args)  # the calling-convention flags agree
    if args.use_workspace_io and args.interface_api != "c":
        raise CompileError(
            f"--use-workspace-io is only compatible with --interface-api c, not "
            f'{args.interface_api} (TVM: "tir.usmp.use_workspace_io option is only '
            f'compatible with interface_api c"): the {args.interface_api} entry '
            "takes its inputs and outputs as DLTensors the caller owns"
        )
    if args.plan_time_limit is not None:
        from usmp.planning.algorithms import get_algorithm

        try:
            get_algorithm(args.algorithm, time_limit=args.plan_time_limit)
        except ValueError as e:
            raise CompileError(
                f"--plan-time-limit {args.plan_time_limit}: {e}"
            ) from None
    _check_patch_options(args)
    for flag in ("workspace_byte_alignment", "constant_byte_alignment"):
        value = getattr(args, flag)
        if (error := alignment_error(value)) is not None:
            raise CompileError(f"--{flag.replace('_', '-')}: {error}")
    if args.patch != "off" and args.emit_tflm_plan:
        raise CompileError(
            "--emit-tflm-plan cannot be combined with --patch: TFLite Micro runs "
            "the model operator by operator, not the patched stripes, so the "
            "library's plan does not describe its tensors (use --patch off)"
        )
    pools = parse_pool_flags(
        args.usmp_workspace_pools,
        args.usmp_parameter_pools,
        specs,
        args.workspace_byte_alignment,
        args.constant_byte_alignment,
        args.usmp_persistent_pools,
    )
    pools = with_default_alignment(
        pools, args.workspace_byte_alignment, args.constant_byte_alignment
    )
    return args, pools


def _check_patch_options(args: argparse.Namespace) -> None:
    """``--patch-budget``, ``--patch-depth``, ``--patch-stripes``: checked by
    ``patch-stage``'s own options (one at a time, to name the flag), before
    the model is read."""
    from usmp.passes.patch_stage import PatchStagePass

    for flag, option in (
        ("--patch-budget", "budget"),
        ("--patch-depth", "depth"),
        ("--patch-stripes", "stripes"),
    ):
        value = getattr(args, f"patch_{option}")
        try:
            PatchStagePass(**{option: value})
        except ValueError as e:
            raise CompileError(f"{flag} {value}: {e}") from None


def compile_into(
    args: argparse.Namespace, pools: list[PoolFlag], module: ModuleOp | None = None
) -> Compilation:
    """Run the pipeline and publish its files into ``args.output`` (see the
    module note); ``module``, if given, is the relay module to compile (it
    is compiled in place) instead of reading ``args.model``. What the CLI
    and ``usmp.compile`` both run."""
    out = Path(args.output)
    if out.exists() and not out.is_dir():
        raise CompileError(f"-o {out}: exists and is not a directory")
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=out.parent, prefix=f".{out.name}."))
    progress = Progress(PIPELINE, sys.stderr, quiet=args.quiet, prefix="usmp-compile")
    try:
        compilation = Compilation(args, pools, staging, new_context(), module)
        compilation.progress = progress
        with timed_run() as compilation.timer:
            run(compilation)
            if getattr(args, "emit_tflm_plan", None):
                _emit_tflm_plan(compilation)
            _publish(staging, out, compilation.files)
    finally:
        progress.close()
        shutil.rmtree(staging, ignore_errors=True)
    compilation.out = out
    return compilation


INPUT_ERRORS = (
    CompileError,
    PoolFlagError,
    ParseError,
    DiagnosticException,
    ValueError,
    OSError,
)
"""What a bad input or command line raises (``error_message`` says it)."""


def error_message(e: BaseException) -> str:
    """The one message ``usmp-compile`` prints for an input error."""
    if isinstance(e, CompileError | PoolFlagError | OSError):
        return f"usmp-compile: error: {e}"
    if isinstance(e, ParseError):
        from usmp.tools.usmp_opt import parse_error_diagnostic

        return str(parse_error_diagnostic(e))
    return str(e)


def main(argv: Sequence[str] | None = None) -> int:
    raw = list(sys.argv[1:] if argv is None else argv)
    try:
        try:
            args, pools = parse_arguments(raw)
        except SystemExit as e:  # argparse: a bad command line (2) or --help (0)
            return 1 if e.code == 2 else int(e.code or 0)
        compilation = compile_into(args, pools)
        compilation.say(
            f"{'total':<17} {compilation.timer.wall:7.2f} s -> {compilation.out}"
        )
        if args.time_passes:
            print(compilation.timer.report(), file=sys.stderr, end="")
        _print_memory(compilation)
    except INPUT_ERRORS as e:
        print(error_message(e), file=sys.stderr)
        return 1
    return 0


def _emit_tflm_plan(c: Compilation) -> None:
    """``--emit-tflm-plan``: the model with our plan for TFLite Micro
    (``usmp.tools.tflm_plan``)."""
    from usmp.tools.tflm_plan import TFLMPlanError, write_tflm_plan

    report = _memory_report(c)
    if c.tflite_model is None or report is None:
        raise CompileError(
            "--emit-tflm-plan needs a .tflite input compiled through the usmp step"
        )
    try:
        data = Path(c.args.model).read_bytes()
        plan = write_tflm_plan(
            c.tflite_model, data, report, c.args.emit_tflm_plan, c.args.algorithm
        )
    except TFLMPlanError as e:
        raise DiagnosticException(str(e)) from None
    planned = sum(1 for o in plan.offsets if o >= 0)
    how = (
        "the library's workspace offsets"
        if plan.source == "compiled"
        else "planned on TFLite Micro's operator order"
    )
    c.say(
        f"TFLite Micro plan: {planned} of {len(plan.offsets)} tensors offline "
        f"({how}), {plan.arena_bytes:,} B of tensors -> {c.args.emit_tflm_plan}"
    )


def _publish(staging: Path, out: Path, files: Sequence[str]) -> None:
    """Move the files of a successful run from ``staging`` into ``out``, each
    renamed into place whole; files an earlier run listed in its
    metadata.json that this run did not write are removed."""
    old = out / "metadata.json"
    stale: set[str] = set()
    if old.is_file():
        try:
            stale = set(json.loads(old.read_text()).get("files", []))
        except (ValueError, AttributeError):
            stale = set()
    new = sorted(set(files) | {"metadata.json"})
    for relative in new:
        (out / relative).parent.mkdir(parents=True, exist_ok=True)
        os.replace(staging / relative, out / relative)
    root = out.resolve()
    for relative in sorted(stale - set(new)):
        path = (out / str(relative)).resolve()
        if path.is_relative_to(root) and path.is_file():
            path.unlink()


SUMMARY_LINES = 60
"""At most this many lines of ``memory/summary.txt`` go to stderr."""


def _print_memory(c: Compilation) -> None:
    """One line per pool, then the memory summary (``memory/summary.txt``,
    cut after ``SUMMARY_LINES`` lines: the file has every step)."""
    report = _memory_report(c)
    if c.args.quiet or report is None:
        return
    for pool in report.get("pools", []):
        bound = pool.get("lower_bound")
        extra = f" (lower bound {bound:,} B)" if bound is not None else ""
        c.say(f"pool {pool['name']} [{pool['kind']}]: {pool['size']:,} B{extra}")
    path = c.out / "memory" / "summary.txt"
    if not path.is_file():
        return
    lines = path.read_text().splitlines()
    shown = lines if len(lines) <= SUMMARY_LINES else lines[: SUMMARY_LINES - 1]
    print("\n" + "\n".join(shown), file=sys.stderr)
    if len(shown) < len(lines):
        print(f"... {len(lines) - len(shown)} more lines in {path}", file=sys.stderr)


def cli() -> NoReturn:
    """The ``usmp-compile`` command: ``main`` as the whole process, with the
    cyclic collector off to the end (``run`` would otherwise collect the IR
    when it ends) and no interpreter teardown (``exit_process``)."""
    gc.disable()
    exit_process(main())


if __name__ == "__main__":
    cli()
