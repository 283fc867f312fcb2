"""``python -m usmp.testing.compare_tflm model.tflite``: compile a model to C,
build and run it with gcc, run TFLite Micro on the same seeded input, and say
whether they agree (int8 bit for bit, float within 1e-5 relative).
``--steps N`` runs each seed as a sequence of N invocations (one library
instance after ``init`` and one TFLite Micro interpreter, so the state of a
streaming model carries over) and compares every step. ``--call-type
packed|cpacked`` compiles the operator calls with TVM's packed conventions
(default unpacked). ``--target accel,c
--offload CONV_2D,DEPTHWISE_CONV_2D=accel`` and the pool flags
(``--usmp-workspace-pools``, ``--usmp-workspace-pool-NAME="target=accel:rw"``
...) are usmp-compile's, and the model goes through usmp-compile's pipeline
for them (``usmp.tools.compile_pipeline``; the library defines every pool,
and ``--call-type`` applies under the C interface, which the harness
calls); ``--sanitize`` builds with ASan/UBSan, the pools being arrays of
exactly their planned size.

Exit status 0 when every output agrees, 1 otherwise; a model that cannot be
compiled (unsupported or damaged) or that TFLite Micro cannot run gives
``<model>: error: <why>`` on stderr and exit status 1.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from collections.abc import Sequence
from pathlib import Path

from xdsl.utils.exceptions import DiagnosticException

from usmp.dialects.tir import CALL_TYPES
from usmp.frontend.tflite_import import import_model
from usmp.frontend.tflite_reader import damaged_model_errors, read_model_file
from usmp.testing.run_c import CRunError, run_module_sequence
from usmp.testing.tflm_reference import (
    TFLMError,
    difference,
    random_inputs,
    run_tflm_sequence,
)
from usmp.tools.compile_options import CompileError, CompileOptions
from usmp.tools.pool_flags import pools_from_flags, split_pool_flags


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("model", type=Path, help="a .tflite file")
    parser.add_argument(
        "--seeds", type=int, default=3, help="inputs to try (default 3)"
    )
    parser.add_argument(
        "--steps",
        type=int,
        default=1,
        help="invocations per seed, the state carried over (default 1)",
    )
    parser.add_argument(
        "--target",
        default="c",
        help="targets, the host 'c' last (as usmp-compile), e.g. accel,c",
    )
    parser.add_argument(
        "--offload",
        action="append",
        default=[],
        metavar="OP_TYPE[,OP_TYPE...]=TARGET",
        help="run these TFLite operator types on TARGET (as usmp-compile)",
    )
    parser.add_argument(
        "--usmp-workspace-pools", help="workspace pools (as usmp-compile)"
    )
    parser.add_argument(
        "--usmp-parameter-pools", help="parameter pools (as usmp-compile)"
    )
    parser.add_argument(
        "--call-type",
        choices=CALL_TYPES,
        default="unpacked",
        help="how the AOT main calls operators (aot-lower-main{call_type})",
    )
    parser.add_argument(
        "--patch",
        choices=("off", "auto"),
        default="off",
        help="patch-based execution of the first stage (as usmp-compile)",
    )
    parser.add_argument(
        "--patch-budget",
        type=float,
        default=0.10,
        help="extra MACs patching may add, as a fraction (as usmp-compile)",
    )
    parser.add_argument(
        "--sanitize",
        action="store_true",
        help="build with AddressSanitizer and UBSan (pools are exactly sized "
        "arrays: a byte outside the plan stops the run)",
    )
    rest, specs = split_pool_flags(list(sys.argv[1:] if argv is None else argv))
    args = parser.parse_args(rest)
    if args.steps < 1:
        parser.error("--steps must be at least 1")
    try:
        options = CompileOptions(
            target=args.target,
            offload=tuple(args.offload),
            pools=pools_from_flags(
                args.usmp_workspace_pools, args.usmp_parameter_pools, specs
            ),
            library_pools=True,
            patch=args.patch,
            patch_budget=args.patch_budget,
        )
    except CompileError as e:
        print(f"{args.model.name}: error: {e}", file=sys.stderr)
        return 1
    try:
        return _compare(
            args.model,
            args.seeds,
            args.steps,
            pipeline(options, args.call_type),
            args.sanitize,
        )
    except DiagnosticException as e:
        print(str(e), file=sys.stderr)
        return 1
    except TFLMError as e:
        print(f"{args.model.name}: error: {e}", file=sys.stderr)
        return 1
    except CRunError as e:
        print(f"{args.model.name}: error: the generated C failed: {e}", file=sys.stderr)
        return 1


def pipeline(options: CompileOptions, call_type: str = "unpacked") -> str:
    """usmp-compile's pipeline for ``options`` as a ``-p`` string, the
    operators called with ``call_type`` (the entry keeps the C interface the
    harness calls)."""
    from usmp.tools.compile_pipeline import compile_passes, pipeline_text

    passes = [
        dataclasses.replace(p, call_type=call_type)  # pyright: ignore[reportArgumentType]
        if p.name == "aot-lower-main"
        else p
        for p in compile_passes(options)
    ]
    return pipeline_text(passes)


def _compare(
    path: Path,
    seeds: int,
    steps: int = 1,
    passes: str = "",
    sanitize: bool = False,
) -> int:
    with damaged_model_errors(path):
        model = read_model_file(path)
        module = import_model(model)
    passes = passes or pipeline(CompileOptions(library_pools=True))
    data = path.read_bytes()
    failures = 0
    for seed in range(seeds):
        sequence = [random_inputs(model, seed + 1000 * k) for k in range(steps)]
        ours = run_module_sequence(module, sequence, passes=passes, sanitize=sanitize)
        reference = run_tflm_sequence(data, sequence, tensors=list(model.outputs))
        for step in range(steps):
            pairs = zip(ours[step], reference[step], strict=True)
            for k, (got, want) in enumerate(pairs):
                problem = difference(got, want.reshape(got.shape))
                verdict = "matches TFLite Micro" if problem is None else problem
                at = f"seed {seed}" + (f", step {step}" if steps > 1 else "")
                print(f"{at}, output {k} {got.dtype}{list(got.shape)}: {verdict}")
                print(f"  ours: {got.reshape(-1)[:12].tolist()}")
                failures += problem is not None
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
