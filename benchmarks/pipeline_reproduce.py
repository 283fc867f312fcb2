"""``usmp-opt`` reproduces ``usmp-compile``, byte for byte, on every shared
model (issue 25).

    python benchmarks/pipeline_reproduce.py [--models-only]

For every supported shared model (and a few option sets: an offloaded
target, the packed interface, application pools and alignments, the I/O in
the workspace, a model with state, ``--patch auto`` where it patches and
where it does not) it runs ``usmp-compile`` and ``usmp-import-tflite
--print-debuginfo MODEL | usmp-opt -p "<usmp-compile --dump-pipeline>" -t
c-library`` and compares the library, the kit and the memory report
(``usmp.testing.reproduce``). One line per case, ``same`` or the files that
differ; exit status 1 if any differ. ``tests/test_compile_pipeline.py`` runs
the models with default options and some of the option sets in the suite.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from usmp.testing.reproduce import reproduce
from usmp.testing.shared_models import MODELS_DIR, SUPPORTED_MODELS

KWS = "mlperf_tiny/kws_ref_model.tflite"
VWW = "mlperf_tiny/vww_96_int8.tflite"
OPTION_SETS: tuple[tuple[str, tuple[str, ...]], ...] = (
    (KWS, ("--target", "accel,c", "--offload", "CONV_2D,DEPTHWISE_CONV_2D=accel")),
    (KWS, ("--interface-api", "packed", "--call-type", "packed")),
    (KWS, ("--interface-api", "packed")),
    (
        KWS,
        (
            "--usmp-workspace-pools=sram,dtcm",
            "--usmp-workspace-pool-sram=size=8000",
            "--usmp-parameter-pools=flash",
        ),
    ),
    (KWS, ("--workspace-byte-alignment", "32", "--constant-byte-alignment", "8")),
    (KWS, ("--operator-order", "source", "--fold-padding", "off")),
    (KWS, ("--module-name", "kws", "--algorithm", "hill_climb", "--library-pools")),
    (KWS, ("--patch", "auto")),
    (VWW, ("--use-workspace-io",)),
    (VWW, ("--patch", "auto")),
    (VWW, ("--patch", "auto", "--use-workspace-io")),
    (
        "tflite_micro/trained_lstm_int8.tflite",
        ("--usmp-persistent-pools=state", "--use-workspace-io"),
    ),
)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--models-only", action="store_true", help="default options only")
    args = p.parse_args()
    cases = [(m, ()) for m in SUPPORTED_MODELS]
    if not args.models_only:
        cases += list(OPTION_SETS)
    status = 0
    for model, flags in cases:
        with tempfile.TemporaryDirectory() as tmp:
            differences = reproduce(MODELS_DIR / model, flags, Path(tmp))
        verdict = "same" if not differences else "DIFFERENT: " + "; ".join(differences)
        print(f"{model} {' '.join(flags)}: {verdict}", flush=True)
        status |= bool(differences)
    return status


if __name__ == "__main__":
    sys.exit(main())
