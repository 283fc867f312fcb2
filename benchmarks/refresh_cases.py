"""Regenerate ``benchmarks/cases/<model>.json``: the workspace planning problem
that ``usmp`` solves for each supported real model (after import, fuse-ops,
lower-ops and aot-lower-main), in ``usmp.planning.problem_json`` form.

    python benchmarks/refresh_cases.py [--models-dir ../shared/models]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from usmp.frontend.tflite_import import import_model
from usmp.frontend.tflite_reader import read_model_file
from usmp.passes.usmp_plan_memory import plan_memory
from usmp.passes.usmp_report import dump_benchmark_case
from usmp.planning.algorithms import DEFAULT_ALGORITHM
from usmp.testing.run_c import run_pipeline

ROOT = Path(__file__).resolve().parent
MODELS = [
    "mlperf_tiny/ad01_fp32.tflite",
    "mlperf_tiny/ad01_int8.tflite",
    "mlperf_tiny/converted/kws_ref_model_float32_full.tflite",
    "mlperf_tiny/kws_ref_model.tflite",
    "mlperf_tiny/model_ToyCar_quant_fullint.tflite",
    "mlperf_tiny/pretrainedResnet.tflite",
    "mlperf_tiny/pretrainedResnet_quant.tflite",
    "mlperf_tiny/vww_96_float.tflite",
    "mlperf_tiny/vww_96_int8.tflite",
    "tflite_micro/hello_world_float.tflite",
    "tflite_micro/hello_world_int8.tflite",
    "tflite_micro/micro_speech_quantized.tflite",
]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--models-dir", type=Path, default=ROOT.parent.parent / "shared" / "models"
    )
    args = parser.parse_args(argv)
    for name in MODELS:
        module = import_model(read_model_file(args.models_dir / name))
        module = run_pipeline(module, "fuse-ops,lower-ops,aot-lower-main")
        planned = plan_memory(module, DEFAULT_ALGORITHM, False, "")
        assert planned is not None
        out = ROOT / "cases" / f"{Path(name).stem}.json"
        dump_benchmark_case(planned, out)
        buffers = planned.analysis.workspace_problem().buffers
        print(f"{out.relative_to(ROOT)}: {len(buffers)} buffers")
    return 0


if __name__ == "__main__":
    sys.exit(main())
