"""``usmp-tvmc``: TVM's ``tvmc compile`` command line, compiled by usmp-opt.

    usmp-tvmc compile model.tflite --target c --target-c-mcpu=cortex-m4 \\
        --runtime crt --executor aot --executor-aot-interface-api c \\
        --executor-aot-unpacked-api 1 \\
        --pass-config tir.usmp.enable=1 --pass-config tir.usmp.algorithm=hill_climb \\
        --workspace-pools sram --workspace-pools-targets sram:c \\
        --workspace-pools-size-hint-bytes sram:65536 \\
        --output-format mlf -o module.tar

A TVM 0.19 user's AOT + USMP command line, with ``tvmc`` replaced by
``usmp-tvmc``, writes a Model Library Format archive (``usmp.tools.mlf``)
holding usmp-opt's C library. The options are read as tvmc reads them
(spellings, defaults, repeatable flags; ``usmp.tools.tvmc_options``,
``usmp.tools.tvmc_pools``) and translated into the ``CompileOptions`` that
``usmp-compile`` and ``usmp.compile`` take (``Request.compile_options``);
``usmp.tools.compile_driver`` runs the pipeline built from them. Options
both commands have share their help (``usmp.tools.option_flags``).

Where tvmc's default is something usmp-opt does not make (``--executor
graph``, ``--runtime cpp``, the packed interface, ``--output-format so``),
leaving the flag out gives usmp-opt's (aot, crt, the C interface, mlf) with
a note on stderr; asking for it is an error. Options tvmc has that usmp-tvmc
cannot honour are named in the error, with the reason; options that change
nothing in usmp-opt's pipeline (``-O``, ``--disabled-pass``, ``-v``; pass
configs such as ``tir.disable_vectorize``) are accepted. Every error is one
line on stderr and exit status 1.
"""

from __future__ import annotations

import argparse
import re
import shutil
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import NoReturn

from usmp.planning.algorithms import DEFAULT_ALGORITHM
from usmp.tools.compile_options import (
    CompileError,
    CompileOptions,
    DriverOptions,
    Pool,
    PoolError,
)
from usmp.tools.option_flags import OptionHelpFormatter, document
from usmp.tools.process_exit import exit_process
from usmp.tools.tvmc_options import (
    NO_EFFECT_CONFIGS,
    USMP_CONFIGS,
    Executor,
    PassConfig,
    Target,
    TvmcError,
    apply_target_flags,
    check_executor,
    check_runtime,
    parse_pass_configs,
    parse_targets,
)
from usmp.tools.tvmc_pools import TvmcPool, add_workspace_pool_args, workspace_pools

PROG = "usmp-tvmc"

# tvmc compile options usmp-tvmc cannot honour, and why
UNSUPPORTED = {
    "--cross-compiler": "usmp-tvmc writes C sources and compiles nothing; build "
    "codegen/host/src/*.c with your cross compiler",
    "--cross-compiler-options": "usmp-tvmc writes C sources and compiles nothing",
    "--dump-code": "use usmp-compile --dump-ir for every step's MLIR",
    "--dump-offloads": "no operator is offloaded: every operator is compiled to C",
    "--tuning-records": "usmp-opt has no tunable schedules",
    "--input-shapes": "the model's own (static) shapes are used",
    "--use-vm": "only TVM's AOT executor is generated",
    "--print-ir-before": "use usmp-compile --dump-ir",
    "--print-ir-after": "use usmp-compile --dump-ir",
    "--desired-layout": "usmp-opt keeps the model's layout",
    "--desired-layout-ops": "usmp-opt keeps the model's layout",
    "--mixed-precision": "usmp-opt keeps the model's types",
    "--mixed-precision-ops": "usmp-opt keeps the model's types",
    "--mixed-precision-calculation-type": "usmp-opt keeps the model's types",
    "--mixed-precision-acc-type": "usmp-opt keeps the model's types",
    "--config": "tvmc's JSON configuration files are not read",
    "--target-host": "the generated C runs on the c target",
}
_OPEN_FLAG = re.compile(r"--(target|executor|runtime)-([A-Za-z0-9_\-]+)")


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise TvmcError(message)


def _parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog=f"{PROG} compile",
        description="tvmc compile's command line (TVM 0.19, AOT + USMP), "
        "compiled by usmp-opt to a Model Library Format archive.",
        allow_abbrev=False,
        epilog="Also: --target-c-OPTION=VALUE, --target-CODEGEN-OPTION=VALUE, "
        "--executor-aot-{interface-api,unpacked-api,link-params,"
        "workspace-byte-alignment,constant-byte-alignment}=VALUE, "
        "--runtime-crt-system-lib=0.",
        formatter_class=OptionHelpFormatter,
    )
    p.add_argument("FILE", help="a .tflite model (or usmp's relay .mlir)")
    p.add_argument("-o", "--output", default="module.tar", help="the .tar to write")
    p.add_argument(
        "-f", "--output-format", help="mlf (Model Library Format; the only one)"
    )
    p.add_argument("--target", help='e.g. "c -mcpu=cortex-m4" or "cmsis-nn, c"')
    p.add_argument("--executor", help="aot (tvmc's default graph is not supported)")
    p.add_argument("--runtime", help="crt (tvmc's default cpp is not supported)")
    p.add_argument(
        "--pass-config",
        action="append",
        metavar="NAME=VALUE",
        help=f"repeatable, one NAME=VALUE each; NAME one of {', '.join(USMP_CONFIGS)}"
        f", or (accepted, no effect in usmp-opt) {', '.join(NO_EFFECT_CONFIGS)}",
    )
    document(
        p.add_argument("--module-name", default="default"),
        CompileOptions,
        "module_name",
    )
    p.add_argument("--model-format", help="tflite")
    p.add_argument(
        "-O", "--opt-level", type=int, choices=range(4), metavar="[0-3]", default=3
    )
    p.add_argument("--disabled-pass", default="", help="accepted; no effect")
    p.add_argument("-v", "--verbose", action="count", default=0)
    p.add_argument("--print-pass-times", action="store_true")
    add_workspace_pool_args(p)
    return p


def _split_open_flags(
    argv: Sequence[str],
) -> tuple[list[str], dict[str, list[tuple[str, str]]]]:
    """Take ``--target-*``, ``--executor-*``, ``--runtime-*`` (open-ended
    names) out of ``argv``: the rest, and (name, value) pairs by family."""
    rest: list[str] = []
    found: dict[str, list[tuple[str, str]]] = {
        "target": [],
        "executor": [],
        "runtime": [],
    }
    i = 0
    while i < len(argv):
        flag, eq, value = argv[i].partition("=")
        match = _OPEN_FLAG.fullmatch(flag)
        if match is None or flag in UNSUPPORTED:
            rest.append(argv[i])
            i += 1
            continue
        if not eq:
            if i + 1 >= len(argv):
                raise TvmcError(f"{flag} needs a value")
            value = argv[i + 1]
            i += 1
        found[match.group(1)].append((match.group(2), value))
        i += 1
    return rest, found


_CONFIG_LIKE = re.compile(r"[a-z_]+(\.[A-Za-z_]+)+=.*")


def _check_leftovers(model: str, leftovers: list[str]) -> None:
    for arg in (model, *leftovers):
        if _CONFIG_LIKE.fullmatch(arg):
            raise TvmcError(
                f"'{arg}' looks like a pass configuration: --pass-config takes one "
                f"NAME=VALUE, as in tvmc; write --pass-config {arg}"
            )
    for arg in leftovers:
        flag = arg.partition("=")[0]
        if flag in UNSUPPORTED:
            raise TvmcError(
                f"{flag}: this tvmc option is not supported by usmp-tvmc "
                f"({UNSUPPORTED[flag]})"
            )
        if arg.startswith("-"):
            raise TvmcError(
                f"{flag}: not a tvmc compile option that usmp-tvmc knows; see "
                f"'{PROG} compile --help' for the accepted ones"
            )
        raise TvmcError(f"unexpected argument '{arg}' (one model FILE is expected)")


class Request:
    """A checked tvmc command line, as usmp-compile arguments and MLF data."""

    def __init__(self, argv: Sequence[str], warn: list[str]) -> None:
        from usmp.planning.algorithms import ALGORITHMS

        rest, open_flags = _split_open_flags(argv)
        args, leftovers = _parser().parse_known_args(rest)
        _check_leftovers(args.FILE, leftovers)
        self.args = args
        self.model = Path(args.FILE)
        if args.output_format not in (None, "mlf"):
            raise TvmcError(
                f"--output-format {args.output_format}: usmp-tvmc writes Model "
                "Library Format archives only (accepted: mlf)"
            )
        if args.model_format not in (None, "tflite"):
            raise TvmcError(
                f"--model-format {args.model_format}: usmp-tvmc reads TFLite "
                "models (accepted: tflite)"
            )
        self.targets: list[Target] = parse_targets(args.target)
        apply_target_flags(self.targets, open_flags["target"])
        self.executor: Executor = check_executor(
            args.executor, dict(open_flags["executor"])
        )
        check_runtime(args.runtime, dict(open_flags["runtime"]))
        self.config: PassConfig = parse_pass_configs(
            args.pass_config, sorted(ALGORITHMS)
        )
        kinds = [t.kind for t in self.targets]
        self.pools: list[TvmcPool] = workspace_pools(args, kinds, warn.append)
        self.workspace_alignment = self._alignment(
            "workspace-byte-alignment", self.executor.workspace_alignment
        )
        self.constant_alignment = self._alignment(
            "constants-byte-alignment", self.executor.constant_alignment
        )
        self._check_pools()
        if self.config.use_workspace_io and self.executor.interface_api != "c":
            raise TvmcError(
                "--pass-config tir.usmp.use_workspace_io=1 needs "
                "--executor-aot-interface-api=c, not "
                f'{self.executor.interface_api} (TVM: "tir.usmp.use_workspace_io '
                'option is only compatible with interface_api c")'
            )
        self._notes(warn)

    def _alignment(self, c_option: str, from_executor: int | None) -> int:
        from usmp.dialects.limits import alignment_error
        from usmp.passes.usmp_pools import DEFAULT_ALIGNMENT

        text = self.targets[-1].options.get(c_option)
        from_target = None if text is None else int(text)
        if None not in (from_target, from_executor) and from_target != from_executor:
            raise TvmcError(
                f"the c target's -{c_option}={from_target} and the AOT executor's "
                f"{c_option.replace('constants', 'constant')}={from_executor} differ"
            )
        executor_option = c_option.replace("constants", "constant")
        given = [
            (f"--executor-aot-{executor_option}", from_executor),
            (f"--target c -{c_option}", from_target),
        ]
        for flag, value in given:
            if value is None:
                continue
            if (error := alignment_error(value)) is not None:
                raise TvmcError(f"{flag}={value}: {error}")
            return value
        return DEFAULT_ALIGNMENT

    def _check_pools(self) -> None:
        """The pools as the compile will read them (sizes, alignment)."""
        from usmp.tools.compile_options import check_pools

        try:
            check_pools(self.usmp_pools())
        except PoolError as e:
            raise TvmcError(f"--workspace-pools: {e}") from None

    def usmp_pools(self) -> tuple[Pool, ...]:
        """The workspace pools: every target read-write, the size hint as
        the size limit."""
        return tuple(
            Pool(
                p.pool_name,
                "workspace",
                max(p.size_hint_bytes, 0),
                targets=tuple(f"{t}:rw" for t in p.targets),
            )
            for p in self.pools
        )

    def _notes(self, warn: list[str]) -> None:
        a = self.args
        defaults = [
            ("--executor", a.executor, "graph", "aot"),
            ("--runtime", a.runtime, "cpp", "crt"),
            (
                "--executor-aot-interface-api",
                "c" if self.executor.interface_api_given else None,
                "packed",
                "c",
            ),
            ("--output-format", a.output_format, "so", "mlf"),
        ]
        missing = [
            f"{flag} {ours} (tvmc: {theirs})"
            for flag, v, theirs, ours in defaults
            if v is None
        ]
        if missing:
            warn.append(f"note: not given, so usmp-tvmc uses {'; '.join(missing)}")
        for t in self.targets[:-1]:
            warn.append(
                f"warning: no operator is offloaded to '{t.kind}': usmp-opt "
                "compiles every operator to C (the target stays usable in "
                "--workspace-pools-targets)"
            )
        if self.config.usmp_disabled:
            warn.append(
                "note: usmp-opt always plans memory with USMP; "
                "tir.usmp.enable=0 is ignored"
            )

    def compile_options(self) -> CompileOptions:
        """The command line as the options of the compile."""
        a = self.args
        try:
            return CompileOptions(
                module_name=a.module_name,
                algorithm=self.config.algorithm or DEFAULT_ALGORITHM,
                pools=self.usmp_pools(),
                interface_api=self.executor.interface_api,
                use_unpacked_api=self.executor.unpacked_api,
                workspace_byte_alignment=self.workspace_alignment,
                constant_byte_alignment=self.constant_alignment,
                use_workspace_io=self.config.use_workspace_io,
                target=self.host_target(),
            )
        except CompileError as e:
            raise TvmcError(str(e)) from None

    def host_target(self) -> str:
        """usmp-compile's ``--target``: the c target, with its ``-mcpu``
        when given (the kernels for that CPU, ``lower-ops{mcpu}``)."""
        mcpu = self.targets[-1].options.get("mcpu")
        return "c" if mcpu is None else f"c -mcpu={mcpu}"

    def driver_options(self, out: Path) -> DriverOptions:
        """``-v`` shows the steps, ``--print-pass-times`` their times."""
        return DriverOptions(
            output=str(out),
            quiet=not self.args.verbose,
            time_passes=self.args.print_pass_times,
        )

    def mlf_extra(self) -> dict[str, object]:
        return {
            "tvmc": {
                "workspace_pools": [p.as_json() for p in self.pools],
                "pass_config": dict(self.config.values),
                "opt_level": self.args.opt_level,
            }
        }


def compile_(argv: Sequence[str]) -> int:
    from usmp.tools.compile_driver import INPUT_ERRORS, compile_model, error_message
    from usmp.tools.mlf import source_epoch, write_mlf

    warnings: list[str] = []
    try:
        request = Request(argv, warnings)
    finally:
        for line in warnings:
            print(f"{PROG}: {line}", file=sys.stderr)
    out = Path(request.args.output)
    if out.is_dir():
        raise TvmcError(f"-o {out}: is a directory; expected the .tar to write")
    if not request.model.is_file():
        raise TvmcError(
            f"input file '{request.model}' doesn't exist, is a broken symbolic "
            "link, or a directory"
        )
    out.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(dir=out.parent, prefix=f".{out.name}."))
    try:
        library = work / "library"
        options = request.compile_options()
        driver = request.driver_options(library)
        try:
            c = compile_model(request.model, options, driver)
        except INPUT_ERRORS as e:
            print(error_message(e, PROG), file=sys.stderr)
            return 1
        if request.args.verbose:
            from usmp.tools.compile_report import print_memory

            c.say(f"{'total':<21} {c.timer.wall:7.2f} s -> {c.out}")
            print_memory(c.out, c.say)
        if driver.time_passes:
            print(c.timer.report(), file=sys.stderr, end="")
        write_mlf(
            library,
            out,
            [str(t) for t in request.targets],
            source_epoch(request.model),
            request.mlf_extra(),
        )
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if request.args.verbose:
        print(f"{PROG}: wrote {out}", file=sys.stderr)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    raw = list(sys.argv[1:] if argv is None else argv)
    from usmp.tools.tvmc_pools import TvmcPoolError

    try:
        if raw[:1] in (["-h"], ["--help"]) or not raw:
            print(
                f"usage: {PROG} compile [options] FILE\n\n"
                "tvmc's compile command (TVM 0.19, AOT + USMP) compiled by "
                f"usmp-opt; '{PROG} compile --help' lists the options.",
                file=sys.stderr if not raw else sys.stdout,
            )
            return 1 if not raw else 0
        if raw[0] != "compile":
            raise TvmcError(
                f"'{raw[0]}' is not a subcommand usmp-tvmc has; accepted: compile "
                "(tvmc's run, tune and micro need TVM itself)"
            )
        return compile_(raw[1:])
    except (TvmcError, TvmcPoolError) as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return 1
    except OSError as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return 1


def cli() -> NoReturn:
    """The ``usmp-tvmc`` command: ``main`` as the whole process, freed memory
    kept for reuse (``keep_freed_memory``), one BLAS thread
    (``single_threaded_blas``: this module does not import NumPy) and no
    interpreter teardown (``exit_process``)."""
    from usmp.tools.allocator import keep_freed_memory
    from usmp.tools.blas_threads import single_threaded_blas

    single_threaded_blas()
    keep_freed_memory()
    exit_process(main())


if __name__ == "__main__":
    cli()
