"""The compile driver: read the model, run the pipeline, write the files.

``compile_model(model, options, driver)`` is what ``usmp-compile``,
``usmp-tvmc`` and ``usmp.compile`` run. Its steps are ``import`` (read a
``.tflite`` file, a relay ``.mlir`` file, or take a relay ``ModuleOp``),
every pass of ``compile_passes(options)`` (``usmp.tools.compile_pipeline``)
applied in process to the one module, and ``emit-c`` (write the library
``usmp-opt -t c-library`` prints). Each step is timed (``--time-passes``)
and reported (``usmp.tools.progress``); the input is verified, the IR the
last step produces with ``--verify-final`` (``verifies_final``), every step's
with ``--verify-each``. The driver
changes the IR only through the passes; between them it reads it (the
patch decision) and writes files around them:

    src/<model>.relay.mlir     the imported module
    memory/                    usmp's report (usmp{report=...})
    codegen/host/..., kit      the library (usmp.tools.firmware_kit)
    metadata.json              usmp.tools.compile_report
    ir/NN-<step>.mlir          with --dump-ir
    <module>.<step>.mlir       with --stop-after STEP
    the TFLite Micro plan      with --emit-tflm-plan (usmp.tools.tflm_plan)

The files go to a temporary folder next to the output and are moved into it
only when the whole run succeeded: a failed run leaves the output as it
was. Files an earlier run listed in ``metadata.json`` that this run does not
write are removed; other files are left alone.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import DiagnosticException, ParseError

from usmp.passes.progress import listening, report
from usmp.tools.compile_options import CompileError, CompileOptions, DriverOptions
from usmp.tools.compile_report import (
    c_interface,
    memory_report,
    metadata,
    patch_lines,
    patch_metadata,
)
from usmp.tools.pool_flags import PoolFlag
from usmp.tools.progress import Progress
from usmp.tools.timing import Timer, timed_run

IMPORT = "import"
EMIT_C = "emit-c"
REPORT = "memory/plan.json"
"""Where ``usmp`` writes its report, in the output folder."""

INPUT_ERRORS = (CompileError, ParseError, DiagnosticException, ValueError, OSError)
"""What a bad input or option raises (``error_message`` says it)."""


def error_message(e: BaseException, prog: str = "usmp-compile") -> str:
    """The one message ``prog`` prints for an input error."""
    if isinstance(e, CompileError | OSError):
        return f"{prog}: error: {e}"
    if isinstance(e, ParseError):
        from usmp.tools.usmp_opt import parse_error_diagnostic

        return str(parse_error_diagnostic(e))
    return str(e)


@dataclass
class Compilation:
    """One run: its options, the module, and what each step recorded."""

    options: CompileOptions
    driver: DriverOptions
    source: str
    """The model's path (``<module_name>.mlir`` for a module given in Python)."""
    out: Path
    """Where the files go (the temporary folder until the run succeeded)."""
    passes: list[ModulePass]
    pools: list[PoolFlag]
    """The pools the options name, resolved (``pools_requested``)."""
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
    merged_functions: int = 0
    """Functions ``dedupe-functions`` merged."""

    @property
    def steps(self) -> list[str]:
        return [IMPORT, *(p.name for p in self.passes), EMIT_C]

    def say(self, message: str) -> None:
        if self.progress is not None:
            self.progress.line(message)
        elif not self.driver.quiet:
            print(f"usmp-compile: {message}", file=sys.stderr, flush=True)

    def write(self, relative: str, text: str) -> Path:
        path = self.out / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        self.files.append(relative)
        return path

    def write_mlir(self, relative: str) -> Path:
        """Print the module (as ``usmp-opt`` prints it, and a last line
        break) into ``relative``: straight into the file, not first into a
        string (MobileNetV2's relay is 7 MB of text: 0.01 CPU s)."""
        from usmp.printing import ExactPrinter

        assert self.module is not None
        path = self.out / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("w") as stream:  # (``write_text``'s defaults)
            ExactPrinter(stream=stream).print_op(self.module)
            stream.write("\n")
        self.files.append(relative)
        return path


def pipeline_steps(options: CompileOptions) -> list[str]:
    """The steps of a compile with ``options``: import, every pass, emit-c."""
    from usmp.tools.compile_pipeline import compile_passes

    return [IMPORT, *(p.name for p in compile_passes(options)), EMIT_C]


def compile_model(
    model: str | Path | ModuleOp,
    options: CompileOptions,
    driver: DriverOptions,
) -> Compilation:
    """Compile ``model`` (a ``.tflite`` or relay ``.mlir`` path, or a relay
    module, compiled in place) and publish the files into
    ``driver.output`` (module note)."""
    from usmp.dialects import new_context
    from usmp.tools.compile_pipeline import compile_passes, requested_pools

    out = Path(driver.output)
    if out.exists() and not out.is_dir():
        raise CompileError(f"-o {out}: exists and is not a directory")
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=out.parent, prefix=f".{out.name}."))
    module = model if isinstance(model, ModuleOp) else None
    source = f"{options.module_name}.mlir" if module is not None else str(model)
    c = Compilation(
        options,
        driver,
        source,
        staging,
        compile_passes(options, report=str(staging / REPORT)),
        requested_pools(options),
        new_context(),
        module,
    )
    if driver.stop_after is not None and driver.stop_after not in c.steps:
        shutil.rmtree(staging, ignore_errors=True)
        raise CompileError(
            f"--stop-after {driver.stop_after}: not a step of this compile "
            f"(steps: {', '.join(c.steps)})"
        )
    c.progress = Progress(
        c.steps, sys.stderr, quiet=driver.quiet, prefix="usmp-compile"
    )
    try:
        with timed_run() as c.timer:
            run(c)
            if options.emit_tflm_plan:
                _emit_tflm_plan(c)
            _publish(staging, out, c.files)
    finally:
        c.progress.close()
        shutil.rmtree(staging, ignore_errors=True)
    c.out = out
    return c


def helium_hint(options: CompileOptions) -> str | None:
    """One line for ``--target "c -mcpu=<Helium CPU>"`` without ``cmsis-nn``:
    our kernels use the DSP extension, not MVE, and CMSIS-NN's MVE kernels
    are faster there (2.6-3.1x fewer instructions on KWS and VWW,
    ``docs/measurements.md``). Only a hint: the target stays what was asked."""
    from usmp.lowering.cmsis_nn import core_of

    mcpu = options.mcpu
    if not mcpu or options.cmsis_nn_mcpu is not None or core_of(mcpu) != "mve":
        return None
    return (
        f"note: -mcpu={mcpu} has Helium (MVE), which our kernels do not use; "
        f'--target "cmsis-nn -mcpu={mcpu},c -mcpu={mcpu}" runs the int8 '
        "operators as CMSIS-NN's MVE kernels (about 3x fewer instructions on "
        "KWS and VWW, docs/measurements.md)"
    )


def run(c: Compilation) -> None:
    """The steps up to ``--stop-after``, each timed in ``c.timer`` (the final
    verification as ``verify``) and reported to ``c.progress``.

    Python's cyclic collector is off for the run (``cyclic_gc_paused``): the
    IR is one large cyclic graph, so a full collection scans every op alive
    (millions of objects on a 10,000-operator graph; full collections took
    11 of 62 CPU s there). Reference counting still frees what is not
    cyclic; cyclic garbage (the IR a step replaces) waits for the end of
    the run."""
    from usmp.lowering.gc_pause import cyclic_gc_paused

    with cyclic_gc_paused():
        _run(c)


def _run(c: Compilation) -> None:
    if (hint := helium_hint(c.options)) is not None:
        c.say(hint)
    last = c.driver.stop_after
    progress = c.progress or Progress(c.steps, sys.stderr, quiet=True, prefix="")
    passes = [None, *c.passes, None]
    for number, (step, p) in enumerate(zip(c.steps, passes, strict=True)):
        progress.begin(step)
        with c.timer.step(step) as timer, listening(progress.listener(step)):
            if step == IMPORT:
                _import(c)
            elif p is not None:
                _apply(c, p)
            else:
                _emit_c(c)
        progress.end(step, timer.wall)
        if step == IMPORT:
            progress.operators = _operator_count(c)
        if c.driver.dump_ir and step != EMIT_C:
            c.write_mlir(f"ir/{number:02d}-{step}.mlir")
        final = p is c.passes[-1] or (step == last and step != EMIT_C)
        if final and step != IMPORT and verifies_final(c.driver):
            with c.timer.step("verify"), listening(progress.listener("verify")):
                _verify(c)
        if step == last:
            if step != EMIT_C:
                c.write_mlir(f"{c.options.module_name}.{step}.mlir")
            break
    patch = None if c.patch is None else patch_metadata(c.patch, c.merged_functions)
    record = metadata(
        c.out,
        c.options,
        model=c.model_info,
        requested=c.pools,
        patch=patch,
        interface=c.c_interface,
        files=c.files,
    )
    c.write("metadata.json", json.dumps(record, indent=2) + "\n")


VERIFY_FINAL = "USMP_VERIFY_FINAL"
"""The environment variable that turns ``--verify-final`` on (set to ``1``
by the test suite's ``conftest.py``)."""


def verifies_final(driver: DriverOptions) -> bool:
    """Whether the IR the last pass produced is verified as the ``verify``
    step: with ``--verify-final`` or ``USMP_VERIFY_FINAL=1``, and not with
    ``--verify-each`` (which verified it already).

    Off by default: every pass builds that IR from IR already verified (the
    input is, always), and the element builders' ops are built unchecked
    (``lowering/create.py``), so the final verification re-checks only the
    compiler's own work; on MobileNetV2 it costs 0.7 of 6 CPU s. The test
    suite turns it on, so a lowering that builds an invalid op still fails
    there."""
    if driver.verify_each:
        return False
    return driver.verify_final or os.environ.get(VERIFY_FINAL, "") not in ("", "0")


def _verify(c: Compilation) -> None:
    from usmp.diagnostics import verify_located

    def reached(done: int, total: int, op: Operation) -> None:
        name = op.get_attr_or_prop("sym_name")
        report(
            "verify",
            done,
            total,
            name.data if isinstance(name, StringAttr) else op.name,
        )

    assert c.module is not None
    verify_located(c.module, reached)


def _apply(c: Compilation, p: ModulePass) -> None:
    """Run one pass; what the driver reads of its result."""
    assert c.module is not None
    report = getattr(p, "report", "")  # usmp's: the files it writes are listed
    functions = _primitive_functions(c.module)
    p.apply(c.ctx, c.module)
    if c.driver.verify_each:
        _verify(c)
    if p.name == "patch-stage":
        c.patch = _patch_decision(c.module)
        for line in patch_lines(c.patch):
            c.say(line)
    elif p.name == "dedupe-functions":
        c.merged_functions += functions - _primitive_functions(c.module)
    if report:
        memory = Path(report).parent
        c.files.extend(str(f.relative_to(c.out)) for f in sorted(memory.iterdir()))


def _primitive_functions(module: ModuleOp) -> int:
    from xdsl.dialects import func

    from usmp.dialects import relay

    return sum(
        1
        for f in module.ops
        if isinstance(f, func.FuncOp) and relay.PRIMITIVE in f.attributes
    )


def _patch_decision(module: ModuleOp) -> dict[str, Any]:
    """``relay.patch`` of the module's graph function, as plain values."""
    from xdsl.dialects import func
    from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, IntegerAttr

    from usmp.passes.patch_stage import PATCH_ATTR

    def value(a: Any) -> Any:
        if isinstance(a, IntegerAttr):
            return a.value.data
        if isinstance(a, ArrayAttr):
            return [value(x) for x in a.data]
        return getattr(a, "data", str(a))

    for f in module.ops:
        attr = f.attributes.get(PATCH_ATTR)
        if isinstance(f, func.FuncOp) and isinstance(attr, DictionaryAttr):
            decision = {k: value(v) for k, v in attr.data.items()}
            decision["applied"] = bool(decision["applied"])
            return decision
    return {"applied": False, "reason": "no main function"}


# -- the steps around the passes --------------------------------------------------


def _import(c: Compilation) -> None:
    from usmp.diagnostics import verify_located

    path = Path(c.source)
    if c.module is not None:  # given by the caller (usmp.compile)
        c.model_info = {"file": None, "format": "mlir"}
    elif path.suffix == ".mlir":
        from usmp.parsing import LocatingParser

        try:
            data = path.read_bytes()  # decoded by the parser: errors located
        except OSError as e:
            raise CompileError(f"{path}: {e.strerror}") from None
        c.module = LocatingParser(c.ctx, data, str(path)).parse_module()
        c.model_info = {"file": path.name, "format": "mlir"}
    else:
        from usmp.frontend.tflite_import import import_model
        from usmp.frontend.tflite_reader import damaged_model_errors, read_model_file

        with damaged_model_errors(path):
            model = read_model_file(path)
            # verified below (verify_located): once, errors at the operator
            c.module = import_model(
                model, custom_ops=c.options.custom_ops, verify=False
            )
        for warning in model.warnings:
            print(warning, file=sys.stderr)
        c.model_info = _tflite_info(model)
        c.tflite_model = model
    verify_located(c.module)
    _warn_offload(c)
    c.write_mlir(f"src/{path.stem}.relay.mlir")


def _warn_offload(c: Compilation) -> None:
    """``--offload`` of an operator type the model does not have: a
    warning (``place-operators`` places the ones it has)."""
    offload = c.options.offload_map
    if not offload:
        return
    if c.tflite_model is not None:
        present = {o.display_name for o in c.tflite_model.operators}
    else:
        from usmp.diagnostics import operator_location

        assert c.module is not None
        located = (operator_location(op.location) for op in c.module.walk())
        present = {where[0] for where in located if where is not None}
    for op_type, target in offload.items():
        if op_type not in present:
            print(
                f"usmp-compile: warning: --offload {op_type}={target}: the model "
                f"has no {op_type} operator",
                file=sys.stderr,
            )


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


def _operator_count(c: Compilation) -> int:
    """Relay operators of the imported model (constants not counted)."""
    from usmp.dialects.relay import ConstantOp

    assert c.module is not None
    return sum(
        1
        for op in c.module.walk()
        if op.name.startswith("relay.") and not isinstance(op, ConstantOp)
    )


def _emit_c(c: Compilation) -> None:
    """The library and its kit (``usmp-opt -t c-library``'s files): the pools
    ``convert-to-emitc{user_pools}`` marked are the application's."""
    from usmp.tools.c_library import build_library
    from usmp.tools.firmware_kit import output_files

    assert c.module is not None
    library = build_library(c.module)
    for relative, text in output_files(library).items():
        c.write(relative, text)
    c.c_interface = c_interface(library)


def _emit_tflm_plan(c: Compilation) -> None:
    """``--emit-tflm-plan``: the model with a plan for TFLite Micro, made
    for its own problem (``usmp.tools.tflm_plan``); the C library keeps its
    plan. Why TFLM's arena does not shrink is said on stderr and in
    ``metadata.json`` (``tflm_plan``)."""
    from usmp.tools.tflm_plan import TFLMPlanError, export_tflm_plan

    report = memory_report(c.out)
    target = c.options.emit_tflm_plan
    assert target is not None
    if c.tflite_model is None or report is None:
        raise CompileError(
            "--emit-tflm-plan needs a .tflite input compiled through the usmp step"
        )
    try:
        data = Path(c.source).read_bytes()
        export = export_tflm_plan(
            c.tflite_model, data, report, target, c.options.algorithm
        )
    except TFLMPlanError as e:
        raise DiagnosticException(str(e)) from None
    plan = export.plan
    how = (
        "the library's workspace offsets"
        if plan.source == "compiled"
        else "planned on TFLite Micro's operator order"
    )
    offline = sum(1 for o in plan.offsets if o >= 0) if export.used else 0
    c.say(
        f"TFLite Micro plan: {offline} of {len(plan.offsets)} tensors offline "
        f"({how}), TFLite Micro's arena head {export.tflm_head:,} -> "
        f"{export.head:,} B -> {target}"
    )
    if export.reason:
        print(
            f"{c.tflite_model.name}: note: --emit-tflm-plan: {export.reason}",
            file=sys.stderr,
        )
    path = c.out / "metadata.json"
    record = json.loads(path.read_text())
    record["tflm_plan"] = export.metadata(target)
    path.write_text(json.dumps(record, indent=2) + "\n")


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
