"""``usmp-opt``: the mlir-opt-style driver of the project.

Built on xDSL's ``xDSLOptMain``; it only changes what is registered (the
project's dialects, passes and targets) and how errors are reported: every
parse, verifier or pass error caused by the input is printed as a located
diagnostic (``file:line:col: error: ...``) on stderr with exit status 1, never
as a Python traceback. With ``--verify-diagnostics`` the diagnostics are
checked against the input's ``expected-error {{...}}`` annotations as in
mlir-opt (``usmp.tools.verify_diagnostics``). No input file, or ``-``, reads
standard input.

``--time-passes`` prints, when the run ends, a tree of CPU and wall times on
stderr (``usmp.tools.timing``, like ``mlir-opt --mlir-timing``): ``Parser``,
every pass by name, ``Verifier`` (after parsing and between passes) and
``Output`` (printing), summed over ``--split-input-file`` chunks.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import time
from collections.abc import Sequence
from importlib.metadata import PackageNotFoundError, version
from io import BytesIO
from types import MappingProxyType
from typing import IO, NoReturn

from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.utils.arg_spec import parse_pipeline
from xdsl.utils.exceptions import (
    ArgSpecParseError,
    DiagnosticException,
    ParseError,
    VerifyException,
)
from xdsl.xdsl_opt_main import xDSLOptMain

from usmp.diagnostics import LocatedError, verify_located
from usmp.output_files import AtomicFile
from usmp.parsing import LocatingParser
from usmp.tools.pass_help import PASS_LIST, pass_list_formatter
from usmp.tools.process_exit import exit_process
from usmp.tools.timing import Timer, timed_run
from usmp.tools.verify_diagnostics import (
    Diagnostic,
    check,
    expectations,
    parse_diagnostic,
)

# Upstream xDSL passes that are useful around ours, with a summary for
# --help where the xDSL class has no docstring.
_UPSTREAM_PASSES = MappingProxyType(
    {
        "canonicalize": "Apply every canonicalization pattern",
        "cse": "Eliminate common subexpressions (identical side-effect-free ops)",
        "dce": "Remove operations whose results are unused and that have no effects",
    }
)


def _version_format() -> str:
    """``--version``: the project's version from its package metadata."""
    try:
        ours = version("usmp-opt")
    except PackageNotFoundError:  # run from a checkout that is not installed
        ours = "unknown (not installed)"
    return f"usmp-opt {ours}\n  built on xDSL {{xdsl_version}}"


class _VersionFormat:
    """``--version``'s format, read from the package metadata when the flag
    is given: the lookup (a scan of the installed distributions, and the
    ``email`` parser for the one found) cost every usmp-opt run about 2 ms
    at import. xDSL's ``VersionAction`` only calls its ``format``."""

    def format(self, **fields: str) -> str:
        return _version_format().format(**fields)


class UsmpOptMain(xDSLOptMain):
    version_format = _VersionFormat()  # pyright: ignore[reportAssignmentType]

    def __init__(self, args: Sequence[str] | None = None):
        self.timer = Timer("Total")
        self.verify_problems: list[str] = []
        self.time_passes = False
        super().__init__(
            description="usmp-opt: static-memory AOT compiler for tiny neural networks",
            args=args,
        )

    def register_all_dialects(self) -> None:
        from usmp.dialects import get_all_dialects

        for name, factory in get_all_dialects().items():
            self.ctx.register_dialect(name, factory)

    def register_all_passes(self) -> None:
        from xdsl.transforms import get_all_passes as upstream_passes

        from usmp.passes import get_all_passes

        upstream = upstream_passes()
        for name in _UPSTREAM_PASSES:
            self.register_pass(name, upstream[name])
        for name, factory in get_all_passes().items():
            self.register_pass(name, factory)

    def register_all_targets(self) -> None:
        from usmp.printing import ExactMLIRTarget
        from usmp.tools.targets import get_all_targets

        self.available_targets["mlir"] = lambda: ExactMLIRTarget
        self.available_targets.update(get_all_targets())

    def get_input_stream(self) -> tuple[IO[bytes], str]:
        """No file or ``-``: standard input, as MLIR source (as in mlir-opt)."""
        if self.args.input_file in (None, "-"):
            return sys.stdin.buffer, "mlir"
        return super().get_input_stream()

    def get_input_name(self) -> str:
        if self.args.input_file in (None, "-"):
            return "<stdin>"
        return self.args.input_file

    def register_all_frontends(self) -> None:
        def parse_mlir(io: IO[bytes], line_offset: int = 0) -> ModuleOp:
            parser = LocatingParser(
                self.ctx, io.read(), self.get_input_name(), line_offset
            )
            try:
                return parser.parse_module(not self.args.no_implicit_module)
            except VerifyException as e:
                # an attribute's verifier failed while it was being parsed
                span = dataclasses.replace(
                    parser.current_token_span(), line_offset=line_offset
                )
                raise ParseError(span, str(e.args[0])) from None

        self.available_frontends["mlir"] = parse_mlir

    def parse_chunk(
        self, chunk: IO[bytes], file_extension: str, start_offset: int = 0
    ) -> ModuleOp | None:
        frontend = self.available_frontends[file_extension]
        try:
            with self.timer.step("Parser"):
                if file_extension == "mlir":
                    module = frontend(chunk, start_offset)  # pyright: ignore[reportCallIssue]
                else:
                    module = frontend(chunk)
        except ParseError as e:
            e.span = dataclasses.replace(e.span, line_offset=start_offset)
            raise parse_error_diagnostic(e) from None
        if not self.args.disable_verify:
            with self.timer.step("Verifier"):
                verify_located(module)
        return module

    def output_resulting_program(self, prog: ModuleOp) -> str:
        with self.timer.step("Output"):
            return super().output_resulting_program(prog)

    def prepare_output(self) -> IO[str]:
        """``-o FILE`` is written under a temporary name and renamed when the
        run succeeds (``run``): a failed run leaves no partial file."""
        if self.args.output_file is None:
            return sys.stdout
        self.output = AtomicFile(self.args.output_file)
        return self.output.stream

    def run(self) -> None:
        self.output: AtomicFile | None = None
        try:
            with timed_run() as self.timer:
                if self.args.verify_diagnostics:
                    self.verify_problems = self._run_verifying()
                else:
                    super().run()
        except BaseException:
            if self.output is not None:
                self.output.discard()
            raise
        finally:
            if self.time_passes:
                print(self.timer.report(), file=sys.stderr, end="")
        if self.output is not None:
            self.output.commit()

    def _run_verifying(self) -> list[str]:
        """xDSL's chunk loop, but each chunk's diagnostics are checked against
        its ``expected-*`` annotations (``usmp.tools.verify_diagnostics``)
        instead of printed; returns mlir-opt's complaints (none: success)."""
        chunks, extension = self.prepare_input()
        out = self.prepare_output()
        name = self.get_input_name()
        problems: list[str] = []
        for i, (chunk, offset) in enumerate(chunks):
            data = chunk.read()
            chunk.close()
            if i > 0:
                out.write("// -----\n")
            text = data.decode("utf-8", errors="replace")
            expected = expectations(text, name, offset + 1)
            emitted: list[Diagnostic] = []
            try:
                module = self.parse_chunk(BytesIO(data), extension, offset)
                if module is not None:
                    self.apply_passes(module)
                    out.write(self.output_resulting_program(module))
            except ParseError as e:
                e.span = dataclasses.replace(e.span, line_offset=offset)
                emitted.append(parse_diagnostic(str(parse_error_diagnostic(e)), name))
            except DiagnosticException as e:
                emitted.append(parse_diagnostic(str(e), name))
            problems += check(emitted, expected)
        out.flush()
        return problems

    def register_all_arguments(self, arg_parser: argparse.ArgumentParser) -> None:
        arg_parser.prog = "usmp-opt"  # argparse errors say "usmp-opt: error:"
        super().register_all_arguments(arg_parser)
        for action in arg_parser._actions:  # pyright: ignore[reportPrivateUsage]
            if "--verify-diagnostics" in action.option_strings:
                action.help = (
                    "check the diagnostics against the input's expected-* "
                    "annotations (expected-error@+1 {{text}}; @-N, @above, "
                    "@below, @unknown; -re for regexes) as mlir-opt does; exit 1 "
                    "on a missing or unexpected diagnostic"
                )
        # --help ends with every pass, its summary and its options
        arg_parser.epilog = PASS_LIST
        arg_parser.formatter_class = pass_list_formatter(
            self.available_passes, _UPSTREAM_PASSES
        )

    def setup_pipeline(self) -> None:
        for spec in parse_pipeline(self.args.passes):
            for key, values in spec.parameters.items():
                if not values:
                    raise ValueError(
                        f"{spec.name}: option '{key}' has no value; options are "
                        f"written {spec.name}{{{key}=VALUE}}"
                    )
        # --time-passes is ours (a tree on stderr), not xDSL's lines on stdout
        self.time_passes = bool(self.args.time_passes)
        self.args.time_passes = False
        super().setup_pipeline()
        # Verify between passes with located diagnostics instead of xDSL's
        # whole-module dump.
        disable_verify = self.args.disable_verify
        callback = self.pipeline.callback
        since = [time.process_time(), time.perf_counter()]

        def located_callback(
            previous: ModulePass | None, module: ModuleOp, next_: ModulePass | None
        ) -> None:
            if previous is not None:  # it ran since the last callback
                self.timer.child(previous.name).add(
                    time.process_time() - since[0], time.perf_counter() - since[1]
                )
            self.args.disable_verify = True
            try:
                if callback is not None:
                    callback(previous, module, next_)
            finally:
                self.args.disable_verify = disable_verify
            # before the first pass the module is the one parse_chunk verified
            if not disable_verify and previous is not None:
                with self.timer.step("Verifier"):
                    verify_located(module)
            since[:] = [time.process_time(), time.perf_counter()]

        self.pipeline = type(self.pipeline)(self.pipeline.passes, located_callback)


def parse_error_diagnostic(e: ParseError) -> LocatedError:
    where = e.span.get_location()
    context = e.span.print_with_context().split("\n", 1)[1].rstrip()
    return LocatedError(f"{where.file}:{where.line}:{where.col}", f"{e.msg}\n{context}")


def main(argv: Sequence[str] | None = None) -> int:
    """``usmp-opt argv``: its exit status. Re-entrant in one process:
    xDSL's ``--disable-verify`` turns attribute verification off for the
    whole process (it replaces ``Attribute.__post_init__``); it is put back
    when the run ends, so a later call verifies again."""
    from xdsl.ir import Attribute

    post_init = Attribute.__post_init__
    try:
        return _main(argv)
    finally:
        Attribute.__post_init__ = post_init


def _main(argv: Sequence[str] | None) -> int:
    try:
        driver = UsmpOptMain(args=argv)
    except SystemExit as e:  # argparse: a bad command line (2) or --help (0)
        return 1 if e.code == 2 else int(e.code or 0)
    except (ParseError, ArgSpecParseError) as e:  # a bad pass pipeline
        print(f"usmp-opt: error: {e}", file=sys.stderr)
        return 1
    except (DiagnosticException, ValueError) as e:
        print(f"usmp-opt: error: {e}", file=sys.stderr)
        return 1
    try:
        driver.run()
    except ParseError as e:
        print(parse_error_diagnostic(e), file=sys.stderr)
        return 1
    except DiagnosticException as e:
        print(e, file=sys.stderr)
        return 1
    except (OSError, ValueError) as e:
        print(f"usmp-opt: error: {e}", file=sys.stderr)
        return 1
    except Exception as e:  # a compiler bug, not an input error
        if os.environ.get("USMP_DEBUG"):
            raise
        print(
            f"usmp-opt: internal error: {type(e).__name__}: {e}\n"
            "(this is a bug in usmp-opt; rerun with USMP_DEBUG=1 for a traceback)",
            file=sys.stderr,
        )
        return 1
    for problem in driver.verify_problems:
        print(problem, file=sys.stderr)
    return 1 if driver.verify_problems else 0


def cli() -> NoReturn:
    """The ``usmp-opt`` command: ``main`` as the whole process, with one BLAS
    thread (``single_threaded_blas``: this module does not import NumPy)
    and no interpreter teardown (``exit_process``)."""
    from usmp.tools.blas_threads import single_threaded_blas

    single_threaded_blas()
    exit_process(main())


if __name__ == "__main__":
    cli()
