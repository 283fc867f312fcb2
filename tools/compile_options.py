"""What one compilation is: ``CompileOptions``, the typed core of the CLIs.

``usmp.compile(model, options)`` takes a ``CompileOptions``;
``usmp-compile`` and ``usmp-tvmc`` only translate their flags into one
(``usmp.tools.option_flags`` generates usmp-compile's flags and ``--help``
from the declarations below: each field's docstring is its help, its
metadata its spelling). ``usmp.tools.compile_pipeline`` turns the options
into the pass pipeline the compile runs.

Every check of the options is here, in ``CompileOptions.__post_init__``: an
options object that exists is valid. A problem is a :class:`CompileError`
whose message names the flag (``--module-name 'my model' is not a C
identifier``), the spelling the CLIs and the API share.

``DriverOptions`` holds what only the driver uses (output folder, stop
after a step, IR dumps, verification, progress, timing): it does not change
the compiled program.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from usmp.frontend.custom_op import (
    CustomOp,
    CustomOpError,
    check_custom_op,
    parse_custom_op,
)
from usmp.passes.usmp_pools import DEFAULT_ALIGNMENT
from usmp.planning.algorithms import ALGORITHMS, DEFAULT_ALGORITHM

C_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
POOL_KINDS = ("workspace", "constant", "persistent")
_KIND_ALIASES = {"parameter": "constant"}


class CompileError(Exception):
    """A problem with the options or the input: one message (``usmp-compile``
    prints it and exits with status 1; ``usmp.compile`` raises it)."""


class PoolError(CompileError):
    """A pool that cannot be planned into as given (``check_pools``, and the
    syntax of the pool flags, ``usmp.tools.pool_flags``)."""


@dataclass(frozen=True)
class Flag:
    """How a field is spelled on ``usmp-compile``'s command line."""

    names: tuple[str, ...]
    """``--flag`` and its aliases."""
    kind: str = "value"
    """``value`` (``--flag VALUE``), ``switch`` (present: true), ``on-off``
    (``--flag on|off`` for a bool), ``0-1`` (``--flag 0|1`` for an optional
    bool), ``append`` (repeatable, each a value), ``pools`` (the RFC's pool
    flags, ``usmp.tools.pool_flags``)."""
    metavar: str | None = None
    choices: Callable[[], tuple[str, ...]] | None = None
    """The accepted values (a function: computed when asked)."""


def flag(
    default: Any,
    *names: str,
    kind: str = "value",
    metavar: str | None = None,
    choices: Callable[[], tuple[str, ...]] | None = None,
) -> Any:
    """A dataclass field with its command-line spelling (``Flag``)."""
    return field(
        default=default, metadata={"flag": Flag(names, kind, metavar, choices)}
    )


def field_flag(f: dataclasses.Field[Any]) -> Flag:
    spelling = f.metadata.get("flag")
    assert isinstance(spelling, Flag), f.name
    return spelling


@dataclass(frozen=True)
class Pool:
    """A memory pool to plan into (the USMP RFC's pool flags in Python).

    ``kind`` is ``workspace``, ``constant`` (also spelled ``parameter``) or
    ``persistent``; ``size`` the limit in bytes (0: none); ``alignment``
    bytes (default: ``--workspace-byte-alignment`` /
    ``--constant-byte-alignment``); ``targets`` the targets that use it, each
    ``TARGET`` or ``TARGET:rw`` / ``TARGET:ro`` (default: ``c``, read-write
    for a workspace or persistent pool, read-only for a constant pool).
    Pools are tried in the order given; unless ``library_pools``, the
    application provides the pools named here (RFC U2/U3)."""

    name: str
    kind: str = "workspace"
    size: int = 0
    alignment: int | None = None
    targets: tuple[str, ...] = ()

    @property
    def pool_kind(self) -> str:
        """``kind`` with ``parameter`` read as ``constant``."""
        return _KIND_ALIASES.get(self.kind, self.kind)


def _algorithms() -> tuple[str, ...]:
    return tuple(sorted(ALGORITHMS))


@dataclass(frozen=True)
class CompileOptions:
    """Everything that decides what a compile produces (module note)."""

    module_name: str = flag("default", "--module-name", metavar="NAME")
    """C prefix of every symbol and file (tvmgen_<name>_...)."""
    executor: str = flag("aot", "--executor", choices=lambda: ("aot",))
    """TVM's executor the C implements (AOT only)."""
    target: str = flag("c", "--target", metavar="TARGET[,TARGET...]")
    """Targets, the host 'c' last: e.g. 'accel,c' adds a second target the
    operators chosen by --offload run on (their C in its own file); 'c
    -mcpu=cortex-m4' selects the kernels for that CPU (lower-ops' mcpu);
    'cmsis-nn,c' runs every int8 operator CMSIS-NN can compute as a call of
    it (built from CMSIS_PATH; 'cmsis-nn -mcpu=cortex-m4,c' for that CPU)."""
    offload: tuple[str, ...] = flag(
        (), "--offload", kind="append", metavar="OP_TYPE[,OP_TYPE...]=TARGET"
    )
    """Run the TFLite operators of these types on TARGET (one of --target);
    repeatable."""
    custom_ops: tuple[CustomOp, ...] = flag(
        (), "--custom-op", kind="append", metavar="NAME=path/to/kernel.h[:function]"
    )
    """The C kernel of the TFLite CUSTOM operators with custom code NAME: the
    function (default NAME) declared in the header, which the output ships
    (with a .c file of the same name next to it, if there is one); repeatable.
    Its signature is in the generated tvmgen_custom_op.h (user guide,
    'Custom operators')."""
    algorithm: str = flag(
        DEFAULT_ALGORITHM,
        "--algorithm",
        "--usmp-algorithm",
        metavar="ALGO",
        choices=_algorithms,
    )
    """Memory planning algorithm."""
    plan_time_limit: float | None = flag(None, "--plan-time-limit", metavar="S")
    """CPU seconds for --algorithm optimal (> 0, inf: no limit; default 10)."""
    overlap: bool = flag(True, "--usmp-overlap", kind="on-off")
    """Let an operator's output overlap an input it reads for the last time
    where its loop nest makes that safe (the C library's plan; the plan
    --emit-tflm-plan exports for TFLite Micro's kernels has none)."""
    pools: tuple[Pool, ...] = flag(
        (),
        "--usmp-workspace-pools",
        "--usmp-parameter-pools",
        "--usmp-persistent-pools",
        kind="pools",
    )
    """Pools in fallback order (default: one workspace and one constant pool,
    defined by the library)."""
    workspace_byte_alignment: int = flag(
        DEFAULT_ALIGNMENT, "--workspace-byte-alignment", metavar="N"
    )
    """Alignment of the workspace (and persistent) pools, bytes."""
    constant_byte_alignment: int = flag(
        DEFAULT_ALIGNMENT, "--constant-byte-alignment", metavar="N"
    )
    """Alignment of the constant pools, bytes."""
    use_workspace_io: bool = flag(False, "--use-workspace-io", kind="switch")
    """Place the model's inputs and outputs in the workspace pool."""
    library_pools: bool = flag(False, "--library-pools", kind="switch")
    """The library defines every pool, also those named by --usmp-*-pools (RFC
    U1); by default pools named on the command line are provided by the
    application (U2/U3)."""
    operator_order: str = flag(
        "memory", "--operator-order", choices=lambda: ("memory", "source")
    )
    """Order of the operator calls: 'memory' the order of least peak live
    bytes (aot-lower-main{order=memory}), 'source' the model's."""
    fold_padding: bool = flag(True, "--fold-padding", kind="on-off")
    """Fold a PAD feeding convolutions into their padding
    (fold-explicit-padding, before fuse-ops)."""
    patch: str = flag("off", "--patch", choices=lambda: ("off", "auto"))
    """Patch-based execution of the first stage (patch-stage): 'auto'
    computes the first layers in row stripes when that lowers the planned
    workspace."""
    patch_budget: float = flag(0.10, "--patch-budget", metavar="F")
    """Extra MACs patching may add, as a fraction of the model's."""
    patch_depth: int = flag(0, "--patch-depth", metavar="N")
    """Layers in the patched stage (0: choose)."""
    patch_stripes: int = flag(0, "--patch-stripes", metavar="N")
    """Row stripes of the patched stage (0: choose)."""
    patch_grid: str = flag("", "--patch-grid", metavar="RxC")
    """The patched stage's grid of tiles: R rows by C columns (e.g. 3x2;
    default: chosen, row stripes or a 2-D grid)."""
    interface_api: str = flag(
        "c", "--interface-api", choices=lambda: _tir().INTERFACE_APIS
    )
    """The entry point: c (tvmgen_<m>_run with input and output structs) or
    packed (TVM's packed calling convention)."""
    use_unpacked_api: bool | None = flag(None, "--use-unpacked-api", kind="0-1")
    """Call operators with plain pointers (1; required by --interface-api c)
    or with TVM's C-packed convention (0: cpacked); default 1 with
    --interface-api c, 0 with packed."""
    call_type: str | None = flag(None, "--call-type", choices=lambda: _tir().CALL_TYPES)
    """How the AOT main calls operators (aot-lower-main{call_type}): unpacked
    (pointers), cpacked (TVMValue/DLTensor arguments, called directly) or
    packed (looked up by name, called through TVMFuncCall); default from
    --use-unpacked-api."""
    profile: bool = flag(False, "--profile", kind="switch")
    """Call weak hooks tvmgen_<m>_profile_begin/end(op_index) around every
    operator call and add a table of the operators' names to the library
    (convert-to-emitc{profile}); the kit's example/profile.c times them."""
    emit_tflm_plan: str | None = flag(None, "--emit-tflm-plan", metavar="OUT.tflite")
    """Also write a copy of the model with a second plan, made for TFLite
    Micro's own problem (its lifetimes, 16-byte alignment, holes for its
    kernels' scratch buffers), as its offline memory plan
    (OfflineMemoryAllocation metadata), checked and measured in TFLM; says
    why when TFLM's arena does not shrink. The library keeps its own plan."""

    def __post_init__(self) -> None:
        for name in ("offload", "pools", "custom_ops"):  # lists from Python callers
            value = getattr(self, name)
            if not isinstance(value, tuple):
                object.__setattr__(self, name, tuple(value))
        _check_custom_ops(self)
        _check(self)

    # -- what the options mean ------------------------------------------------

    @property
    def targets(self) -> list[str]:
        """``--target``'s target names, the host ``c`` last."""
        from usmp.tools.offload import parse_targets

        return parse_targets(self.target)

    @property
    def mcpu(self) -> str:
        """The host target's ``-mcpu`` (``--target "c -mcpu=cortex-m4"``;
        empty: portable C), ``lower-ops{mcpu}``."""
        from usmp.tools.offload import host_mcpu

        return host_mcpu(self.target)

    @property
    def cmsis_nn_mcpu(self) -> str | None:
        """``--target cmsis-nn,c``: the CPU CMSIS-NN is built for (the
        ``cmsis-nn`` entry's ``-mcpu``, else the host's); ``None`` without
        the ``cmsis-nn`` target (``partition-cmsis-nn{mcpu}``)."""
        from usmp.tools.offload import parse_target_entries

        entries = dict(parse_target_entries(self.target))
        if "cmsis-nn" not in entries:
            return None
        return entries["cmsis-nn"].get("mcpu", self.mcpu)

    @property
    def offload_map(self) -> dict[str, str]:
        """``--offload`` as TFLite operator type -> target."""
        from usmp.tools.offload import parse_offload

        return parse_offload(self.offload, self.targets)

    @property
    def resolved_call_type(self) -> str:
        """The operators' calling convention, as TVM's AOT executor chose it:
        unpacked API -> ``unpacked``; else ``cpacked`` (or ``packed`` when
        asked for)."""
        unpacked = self.use_unpacked_api
        if unpacked is None:
            unpacked = (
                self.call_type == "unpacked"
                if self.call_type
                else self.interface_api == "c"
            )
        if self.call_type is None:
            return "unpacked" if unpacked else "cpacked"
        return self.call_type

    @property
    def plan_overlap(self) -> bool:
        """Overlaps in the library's plan (on with ``--emit-tflm-plan`` too:
        TFLite Micro's plan is a second one, ``usmp.tools.tflm_plan``)."""
        return self.overlap


def _tir() -> Any:
    from usmp.dialects import tir

    return tir


@dataclass(frozen=True)
class DriverOptions:
    """How ``usmp-compile`` runs and reports (not what it compiles)."""

    output: str = flag("", "-o", "--output", metavar="DIR")
    """Output directory."""
    stop_after: str | None = flag(
        None, "--stop-after", metavar="STEP", choices=lambda: STEPS
    )
    """End after this step (import, a pass of the compile's pipeline, or
    emit-c) and write its MLIR."""
    dump_ir: bool = flag(False, "--dump-ir", kind="switch")
    """Write every step's MLIR to OUT/ir/."""
    verify_each: bool = flag(False, "--verify-each", kind="switch")
    """Verify the module after every step (default: the input only)."""
    verify_final: bool = flag(False, "--verify-final", kind="switch")
    """Also verify the IR the last step produces (default: the input only;
    on with USMP_VERIFY_FINAL=1 in the environment, as the test suite sets)."""
    quiet: bool = flag(False, "-q", "--quiet", kind="switch")
    """No progress on stderr."""
    time_passes: bool = flag(False, "--time-passes", kind="switch")
    """Print every step's CPU and wall time as a tree on stderr when the run
    ends (also with --quiet)."""
    report_html: str = flag("", "--report-html", metavar="OUT.html")
    """Also write one self-contained HTML page: the pools, their pictures and
    a table of the layers (buffers read and written, workspace live)."""
    profile_data: str = flag("", "--profile-data", metavar="PROFILE.txt")
    """With --report-html: the per-layer table the example of a --profile
    build printed, added to the page's layers (same model and options)."""


_FIELDS = {f.name: f for f in dataclasses.fields(CompileOptions)}

STEPS = (
    "import",
    "place-operators",
    "plan-devices",
    "fold-explicit-padding",
    "patch-stage",
    "fuse-ops",
    "dedupe-functions",
    "lower-ops",
    "aot-lower-main",
    "usmp",
    "convert-to-emitc",
    "emit-c",
)
"""Every step a compile can have, in order (``usmp.tools.compile_pipeline``:
which passes a compile runs)."""


# -- the checks ------------------------------------------------------------------


def _flag(name: str) -> str:
    return "/".join(field_flag(_FIELDS[name]).names)


def _check(o: CompileOptions) -> None:
    """Every check of the options, in the order a user meets them."""
    for f in dataclasses.fields(o):
        spelling = field_flag(f)
        value = getattr(o, f.name)
        if spelling.choices is not None and value is not None:
            choices = spelling.choices()
            if value not in choices:
                raise CompileError(
                    f"argument {_flag(f.name)}: invalid choice: {value!r} (choose "
                    f"from {', '.join(repr(c) for c in choices)})"
                )
    if not isinstance(o.module_name, str) or not C_IDENTIFIER.fullmatch(o.module_name):
        raise CompileError(f"--module-name '{o.module_name}' is not a C identifier")
    from usmp.tools.offload import OffloadError

    try:
        o.offload_map  # noqa: B018 -- parses --target and --offload
    except OffloadError as e:
        raise CompileError(str(e)) from None
    _check_call_type(o)
    if o.use_workspace_io and o.interface_api != "c":
        raise CompileError(
            f"--use-workspace-io is only compatible with --interface-api c, not "
            f'{o.interface_api} (TVM: "tir.usmp.use_workspace_io option is only '
            f'compatible with interface_api c"): the {o.interface_api} entry '
            "takes its inputs and outputs as DLTensors the caller owns"
        )
    if o.plan_time_limit is not None:
        from usmp.planning.algorithms import get_algorithm

        try:
            get_algorithm(o.algorithm, time_limit=o.plan_time_limit)
        except ValueError as e:
            raise CompileError(f"--plan-time-limit {o.plan_time_limit}: {e}") from None
    from usmp.dialects.limits import alignment_error

    for name in ("workspace_byte_alignment", "constant_byte_alignment"):
        if (error := alignment_error(getattr(o, name))) is not None:
            raise CompileError(f"{_flag(name)}: {error}")
    if o.patch != "off" and o.emit_tflm_plan:
        raise CompileError(
            "--emit-tflm-plan cannot be combined with --patch: TFLite Micro runs "
            "the model operator by operator, not the patched stripes, so the "
            "library's plan does not describe its tensors (use --patch off)"
        )
    _check_patch(o)
    check_pools(o.pools)


def _check_custom_ops(o: CompileOptions) -> None:
    """``--custom-op``: strings (the flag) become ``CustomOp``s; each names a
    readable header declaring its function, each custom code once, and no two
    headers share a file name (the output ships them side by side)."""
    try:
        ops = tuple(
            parse_custom_op(c) if isinstance(c, str) else c for c in o.custom_ops
        )
        codes: dict[str, CustomOp] = {}
        files: dict[str, CustomOp] = {}
        for op in ops:
            if not isinstance(op, CustomOp):
                raise CustomOpError(
                    f"custom_ops: {op!r} is neither a CustomOp nor "
                    "'NAME=path/to/kernel.h[:function]'"
                )
            check_custom_op(op)
            if op.name in codes:
                raise CustomOpError(
                    f"--custom-op {op.spelling}: custom code '{op.name}' is already "
                    f"given by --custom-op {codes[op.name].spelling}"
                )
            codes[op.name] = op
            base = Path(op.header).name
            other = files.get(base)
            if (
                other is not None
                and Path(other.header).resolve() != Path(op.header).resolve()
            ):
                raise CustomOpError(
                    f"--custom-op {op.spelling}: header '{base}' has the file name of "
                    f"--custom-op {other.spelling}'s; the output ships both in one "
                    "folder (rename one)"
                )
            if base.startswith("tvmgen_"):
                raise CustomOpError(
                    f"--custom-op {op.spelling}: header names starting with "
                    "'tvmgen_' are the generated library's; rename the header"
                )
            files[base] = op
    except CustomOpError as e:
        raise CompileError(str(e)) from None
    object.__setattr__(o, "custom_ops", ops)


def _check_call_type(o: CompileOptions) -> None:
    """The calling-convention options agree (TVM's rules)."""
    unpacked = o.use_unpacked_api
    if unpacked is None:
        unpacked = o.call_type == "unpacked" if o.call_type else o.interface_api == "c"
    if o.interface_api == "c" and not unpacked:
        raise CompileError(
            '--interface-api c needs --use-unpacked-api 1 (TVM: "Either need '
            'interface_api == packed or unpacked-api == true"); use '
            "--interface-api packed for packed or cpacked operator calls"
        )
    if o.call_type is not None and (o.call_type == "unpacked") != unpacked:
        raise CompileError(
            f"--call-type {o.call_type} contradicts --use-unpacked-api "
            f"{int(unpacked)}: unpacked calls are the unpacked API"
        )


_PATCH_DEFAULTS = {
    f.name: f.default
    for f in dataclasses.fields(CompileOptions)
    if f.name in ("patch_budget", "patch_depth", "patch_stripes")
}


def _check_patch(o: CompileOptions) -> None:
    """``--patch-budget``, ``--patch-depth``, ``--patch-stripes``: checked by
    ``patch-stage``'s own options (one at a time, to name the flag), before
    the model is read. The defaults are valid (``tests/test_compile_options``),
    so options that keep them import no patching code."""
    given = [
        (name, option, getattr(o, name))
        for name, option in (
            ("patch_budget", "budget"),
            ("patch_depth", "depth"),
            ("patch_stripes", "stripes"),
        )
        if getattr(o, name) != _PATCH_DEFAULTS[name]
    ]
    if not given and not o.patch_grid:
        return
    from usmp.passes.patch_stage import PatchStagePass, parse_grid

    for name, option, value in given:
        try:
            PatchStagePass(**{option: value})
        except ValueError as e:
            raise CompileError(f"{_flag(name)} {value}: {e}") from None
    if o.patch_grid:
        try:
            rows, cols = parse_grid(o.patch_grid)
            PatchStagePass(stripes=rows, cols=cols)
        except ValueError as e:
            raise CompileError(f"--patch-grid {o.patch_grid}: {e}") from None
        if o.patch_stripes and o.patch_stripes != rows:
            raise CompileError(
                f"--patch-grid {o.patch_grid} contradicts --patch-stripes "
                f"{o.patch_stripes} (the grid's rows are the stripes)"
            )


def check_pools(pools: Sequence[Pool]) -> None:
    """Names, kinds, sizes, alignments and targets of ``pools``; a
    ``PoolError`` says what is wrong."""
    from usmp.dialects.limits import MAX_BUFFER_BYTES, alignment_error
    from usmp.passes.place_operators import TARGET_NAME
    from usmp.passes.usmp_pools import POOL_NAME_SYNTAX, case_clash

    seen: list[str] = []
    for pool in pools:
        name = pool.name
        where = f"pool '{name}'"
        if not C_IDENTIFIER.fullmatch(name):
            raise PoolError(f"{where} is not a valid pool name; {POOL_NAME_SYNTAX}")
        if pool.pool_kind not in POOL_KINDS:
            raise PoolError(
                f"{where}: kind '{pool.kind}' is not one of {', '.join(POOL_KINDS)}"
            )
        if name in seen:
            raise PoolError(f"{where} is listed twice")
        if (other := case_clash(name, seen)) is not None:
            raise PoolError(
                f"pools '{other}' and '{name}' differ only in letter case; their C "
                "macros (TVM_<MODEL>_<POOL>_..._BUFFER_SIZE) would be one name"
            )
        seen.append(name)
        if pool.size < 0:
            raise PoolError(f"{where}: size='{pool.size}' is not a number of bytes")
        if pool.size > MAX_BUFFER_BYTES:
            raise PoolError(
                f"{where}: size={pool.size} is larger than the generated C can index; "
                f"expected at most {MAX_BUFFER_BYTES} bytes (0 = unbounded)"
            )
        if pool.alignment is not None:
            if (error := alignment_error(pool.alignment)) is not None:
                raise PoolError(f"{where}: {error}")
        for entry in pool.targets:
            target, colon, mode = entry.strip().partition(":")
            bad_mode = colon and mode not in ("rw", "ro")
            if not TARGET_NAME.fullmatch(target) or bad_mode:
                raise PoolError(
                    f"{where}: target entry '{entry}' is not TARGET[:rw|:ro]"
                )
