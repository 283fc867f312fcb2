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
        [--patch auto] [--interface-api packed] [--emit-tflm-plan OUT.tflite]
        [--stop-after STEP] [--dump-ir] [--verify-each | --verify-final]
        [--time-passes] [--quiet]
    usmp-compile model.tflite [-o out/] [flags] --dump-pipeline

The input is a ``.tflite`` file (imported by ``usmp.frontend``) or a relay
``.mlir`` module. The flags are translated into a ``CompileOptions``
(``usmp.tools.compile_options``; the flags and this command's ``--help`` are
generated from its declarations, ``usmp.tools.option_flags``) and a
``DriverOptions``; the compile is one pass pipeline built from the options
(``usmp.tools.compile_pipeline``), run by ``usmp.tools.compile_driver``,
which writes the output folder (see there). ``--dump-pipeline`` prints that
pipeline as one ``-p`` string and exits: ``usmp-import-tflite
--print-debuginfo model.tflite | usmp-opt -p "<it>" -t c-library`` prints
the C library and kit usmp-compile writes, byte for byte.

Each step's name and time go to stderr as it finishes (unless ``--quiet``);
wall-clock times go nowhere else: every output file is the same, byte for
byte, on every run. Errors caused by the input (unsupported operator, bad
flags, a pass's located diagnostic) print one message on stderr and exit
with status 1.
"""

from __future__ import annotations

import argparse
import gc
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

if TYPE_CHECKING:  # imported where used: ``cli`` pauses the collector first
    from usmp.tools.compile_options import CompileOptions, DriverOptions
    from usmp.tools.profile_table import ProfileTable

PIPELINE = (
    "import",
    "plan-devices",
    "fold-explicit-padding",
    "fuse-ops",
    "lower-ops",
    "aot-lower-main",
    "usmp",
    "convert-to-emitc",
    "emit-c",
)
"""The steps of a compile with the default options (``compile_driver``'s
``pipeline_steps(CompileOptions())``)."""


def parser() -> argparse.ArgumentParser:
    """usmp-compile's command line: the model, ``DriverOptions`` and
    ``CompileOptions`` as declared, ``--dump-pipeline``."""
    from usmp.tools.compile_options import CompileOptions, DriverOptions
    from usmp.tools.option_flags import POOL_EPILOG, OptionHelpFormatter, add_flags

    p = argparse.ArgumentParser(
        prog="usmp-compile",
        description="Compile a TFLite model (or relay MLIR) to a static-memory "
        "C library.",
        epilog=POOL_EPILOG,
        formatter_class=OptionHelpFormatter,
    )
    p.add_argument("model", help="a .tflite file or a relay .mlir module")
    add_flags(p, DriverOptions)
    add_flags(p, CompileOptions)
    p.add_argument(
        "--dump-pipeline",
        action="store_true",
        help="print the compile's pass pipeline as one -p string for usmp-opt "
        "and exit (the report goes under -o if given)",
    )
    return p


def parse_arguments(
    argv: Sequence[str],
) -> tuple[str, CompileOptions, DriverOptions, bool]:
    """The command line as (model, options, driver settings, whether to dump
    the pipeline); a bad option raises ``CompileError`` (``PoolFlagError``
    for the pool flags), a bad flag exits as argparse does."""
    from usmp.tools.compile_options import CompileOptions, DriverOptions
    from usmp.tools.option_flags import options_from_args
    from usmp.tools.pool_flags import pools_from_flags, split_pool_flags

    rest, specs = split_pool_flags(argv)
    p = parser()
    args = p.parse_args(rest)
    if not args.output and not args.dump_pipeline:
        p.error("the following arguments are required: -o/--output")
    pools = pools_from_flags(
        args.usmp_workspace_pools,
        args.usmp_parameter_pools,
        specs,
        args.usmp_persistent_pools,
    )
    options = options_from_args(CompileOptions, args, pools=pools)
    driver = options_from_args(DriverOptions, args)
    return args.model, options, driver, args.dump_pipeline


def dump_pipeline(options: CompileOptions, output: str) -> str:
    """The ``-p`` string of the compile (its report under ``output``)."""
    from usmp.tools.compile_driver import REPORT
    from usmp.tools.compile_pipeline import compile_passes, pipeline_text

    report = str(Path(output) / REPORT) if output else ""
    return pipeline_text(compile_passes(options, report=report))


def read_profile_data(driver: DriverOptions) -> ProfileTable | None:
    """``--profile-data``'s table, read before the compile (a malformed one
    is a ``ProfileError`` at its line)."""
    if not driver.profile_data:
        return None
    from usmp.tools.compile_options import CompileError
    from usmp.tools.profile_table import ProfileError, parse_profile

    if not driver.report_html:
        raise CompileError("--profile-data is only read with --report-html OUT.html")
    path = Path(driver.profile_data)
    try:
        text = path.read_text()
    except (OSError, UnicodeDecodeError) as e:
        raise ProfileError(f"{path}: error: cannot read the profile: {e}") from e
    return parse_profile(text, str(path))


def write_report_html(
    out: Path, driver: DriverOptions, profile: ProfileTable | None
) -> None:
    """``--report-html``: the page of the compile in ``out``."""
    from usmp.output_files import write_text_atomic
    from usmp.tools.report_html import report_html

    page = report_html(out, profile, driver.profile_data)
    write_text_atomic(driver.report_html, page)


def main(argv: Sequence[str] | None = None) -> int:
    from usmp.tools.compile_driver import INPUT_ERRORS, compile_model, error_message
    from usmp.tools.compile_report import print_memory
    from usmp.tools.profile_error import ProfileError

    raw = list(sys.argv[1:] if argv is None else argv)
    try:
        try:
            model, options, driver, dump = parse_arguments(raw)
        except SystemExit as e:  # argparse: a bad command line (2) or --help (0)
            return 1 if e.code == 2 else int(e.code or 0)
        if dump:
            print(dump_pipeline(options, driver.output))
            return 0
        profile = read_profile_data(driver)
        c = compile_model(model, options, driver)
        c.say(f"{'total':<21} {c.timer.wall:7.2f} s -> {c.out}")
        if driver.time_passes:
            print(c.timer.report(), file=sys.stderr, end="")
        if not driver.quiet:
            print_memory(c.out, c.say)
        if driver.report_html:
            write_report_html(c.out, driver, profile)
    except ProfileError as e:
        print(e, file=sys.stderr)
        return 1
    except INPUT_ERRORS as e:
        print(error_message(e), file=sys.stderr)
        return 1
    return 0


def cli() -> NoReturn:
    """The ``usmp-compile`` command: ``main`` as the whole process, with the
    cyclic collector off from the start to the end (the imports build
    thousands of classes and functions, and ``run`` would otherwise collect
    the IR when it ends; this module imports the compiler only in its
    functions, so the imports run with the collector off), freed memory
    kept for reuse (``keep_freed_memory``), one BLAS thread
    (``single_threaded_blas``), each dataclass method source compiled once
    (``compile_methods_once``) and xDSL's assembly formats only for the ops
    printed or parsed (``compile_formats_on_first_use``; this module imports
    no dataclass of the compiler or xDSL dialect before) and no interpreter
    teardown (``exit_process``)."""
    gc.disable()
    from usmp.tools.dataclass_code import compile_methods_once

    compile_methods_once()
    from usmp.dialects.op_definition import compile_formats_on_first_use
    from usmp.tools.allocator import keep_freed_memory
    from usmp.tools.blas_threads import single_threaded_blas
    from usmp.tools.process_exit import exit_process

    single_threaded_blas()
    keep_freed_memory()
    compile_formats_on_first_use()
    exit_process(main())


if __name__ == "__main__":
    cli()
