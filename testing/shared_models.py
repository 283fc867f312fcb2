"""The TinyML models usmp-opt is tested and benchmarked on.

``MODELS_DIR`` is ``shared/models`` next to the repository (or
``$USMP_MODELS_DIR``): MLPerf Tiny (KWS, VWW, ResNet-8, AD, ToyCar) and
TFLite Micro's examples, with ``stats.json`` holding TFLite Micro's arena
sizes. ``SUPPORTED_MODELS`` are the ones the importer accepts and the
compiler must compile end to end (paths relative to ``MODELS_DIR``).
"""

from __future__ import annotations

import os
from pathlib import Path

MODELS_DIR = Path(
    os.environ.get(
        "USMP_MODELS_DIR",
        # resolved: usmp/tools is a link to the repository's tools/
        Path(__file__).resolve().parents[2] / "shared" / "models",
    )
)

SUPPORTED_MODELS = (
    "mlperf_tiny/kws_ref_model.tflite",
    "mlperf_tiny/converted/kws_ref_model_float32_full.tflite",
    "mlperf_tiny/vww_96_int8.tflite",
    "mlperf_tiny/vww_96_float.tflite",
    "mlperf_tiny/pretrainedResnet_quant.tflite",
    "mlperf_tiny/pretrainedResnet.tflite",
    "mlperf_tiny/ad01_int8.tflite",
    "mlperf_tiny/ad01_fp32.tflite",
    "mlperf_tiny/model_ToyCar_quant_fullint.tflite",
    "tflite_micro/hello_world_int8.tflite",
    "tflite_micro/hello_world_float.tflite",
    "tflite_micro/micro_speech_quantized.tflite",
    "tflite_micro/simple_add_model.tflite",
)
