"""``usmp-import-tflite``: a ``.tflite`` model as relay MLIR.

    usmp-import-tflite model.tflite [-o model.mlir] [--weights hex|resource|elided]
                       [--threshold N] [--print-weights [--full]] [--outputs all|T,...]
                       [--print-debuginfo] [--custom-op NAME=kernel.h[:function] ...]

Prints ``func.func @main`` in the relay dialect (see
``usmp.frontend.tflite_import``). ``--weights`` chooses how weights are
printed (``usmp.frontend.printing``); ``--print-debuginfo`` prints every op's
location, the TFLite operator it comes from (``loc("CONV_2D"("m.tflite":3:0))``:
what ``place-operators`` reads, and where ``usmp-opt``'s diagnostics point);
``--print-weights`` lists them as numpy
arrays instead of printing the module; ``--outputs all`` makes ``@main``
return every operator's output (for layer-by-layer comparisons), or a comma
separated list of TFLite tensor indices. ``--custom-op`` (repeatable, as
``usmp-compile``'s) supplies the C kernel of a CUSTOM operator
(``usmp.frontend.tflite_custom``).

A model that cannot be imported (custom or unsupported operator, hybrid
quantisation, ...) gives ``<model>: error: operator <i> (<NAME>): <why>`` on
stderr and exit status 1.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, NoReturn

from usmp.diagnostics import LocatedError
from usmp.output_files import AtomicFile
from usmp.tools.process_exit import exit_process

if TYPE_CHECKING:  # the frontend loads on use: --help stays fast
    from usmp.frontend.tflite_reader import Model


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="usmp-import-tflite",
        description="Import a TFLite flatbuffer as relay MLIR.",
    )
    p.add_argument("model", help="the .tflite file")
    p.add_argument("-o", "--output", help="write the MLIR here (default: stdout)")
    p.add_argument(
        "--weights",
        choices=("hex", "resource", "elided"),
        default="hex",
        help="how to print weights: inline hex dense (default), MLIR "
        "dense_resource blobs at the end of the file, or elided (reading only)",
    )
    p.add_argument(
        "--threshold",
        type=int,
        default=16,
        help="with --weights resource/elided: constants with more elements than "
        "this are moved out of line (default 16)",
    )
    p.add_argument(
        "--generic",
        action="store_true",
        help="print ops in MLIR's generic form (what mlir-opt "
        "--allow-unregistered-dialect reads)",
    )
    p.add_argument(
        "--print-debuginfo",
        action="store_true",
        help="print every op's location: the TFLite operator it comes from "
        "(place-operators reads it; usmp-opt's diagnostics point at it)",
    )
    p.add_argument(
        "--print-weights",
        action="store_true",
        help="print every weight as a numpy array instead of the module",
    )
    p.add_argument(
        "--full", action="store_true", help="with --print-weights: do not summarise"
    )
    p.add_argument(
        "--outputs",
        help="'all' (every operator output) or comma-separated TFLite tensor "
        "indices: what @main returns (default: the model's outputs)",
    )
    p.add_argument(
        "--custom-op",
        action="append",
        default=[],
        metavar="NAME=path/to/kernel.h[:function]",
        help="the C kernel of the CUSTOM operators with custom code NAME "
        "(repeatable; as usmp-compile's)",
    )
    return p


def _outputs(spec: str | None, model: Model) -> list[int] | None:
    if spec is None:
        return None
    if spec == "all":
        return [t for op in model.operators for t in op.outputs]
    try:
        indices = [int(s) for s in spec.split(",") if s.strip()]
    except ValueError:
        raise ValueError(
            f"--outputs: expected 'all' or tensor indices, got '{spec}'"
        ) from None
    bad = [i for i in indices if not 0 <= i < len(model.tensors)]
    if bad:
        raise ValueError(
            f"--outputs: tensor indices {bad} out of range "
            f"(0..{len(model.tensors) - 1})"
        )
    return indices


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    from usmp.frontend.printing import format_constants, print_module
    from usmp.frontend.tflite_custom import check_custom_op, parse_custom_op
    from usmp.frontend.tflite_import import import_model
    from usmp.frontend.tflite_reader import damaged_model_errors, read_model_file

    try:
        custom_ops = [parse_custom_op(c) for c in args.custom_op]
        for custom in custom_ops:
            check_custom_op(custom)
        with damaged_model_errors(args.model):
            model = read_model_file(args.model)
        outputs = _outputs(args.outputs, model)
        with damaged_model_errors(args.model):
            module = import_model(model, outputs, custom_ops)
        for warning in model.warnings:
            print(warning, file=sys.stderr)
    except LocatedError as e:
        print(str(e), file=sys.stderr)
        return 1
    except ValueError as e:
        print(f"usmp-import-tflite: error: {e}", file=sys.stderr)
        return 1
    try:  # -o FILE appears only once complete (usmp.output_files)
        output = AtomicFile(args.output) if args.output else None
    except OSError as e:
        print(
            f"usmp-import-tflite: error: {args.output}: {e.strerror}", file=sys.stderr
        )
        return 1
    out = output.stream if output is not None else sys.stdout
    try:
        if args.print_weights:
            out.write(format_constants(module, full=args.full))
        else:
            print_module(
                module,
                out,
                weights=args.weights,
                threshold=args.threshold,
                generic=args.generic,
                debuginfo=args.print_debuginfo,
            )
    except BrokenPipeError:  # e.g. piped into head
        sys.stderr.close()
        return 0
    except BaseException:
        if output is not None:
            output.discard()
        raise
    if output is not None:
        output.commit()
    return 0


def cli() -> NoReturn:
    """The ``usmp-import-tflite`` command: ``main`` as the whole process, with one BLAS
    thread (``single_threaded_blas``: this module does not import NumPy)
    and no interpreter teardown (``exit_process``)."""
    from usmp.tools.blas_threads import single_threaded_blas

    single_threaded_blas()
    exit_process(main())


if __name__ == "__main__":
    cli()
