"""The TinyML models usmp-opt is tested and benchmarked on.

``MODELS_DIR`` is ``shared/models`` next to the repository (or
``$USMP_MODELS_DIR``): MLPerf Tiny (KWS, VWW, ResNet-8, AD, ToyCar) and
TFLite Micro's examples, with ``stats.json`` holding TFLite Micro's arena
sizes. ``SUPPORTED_MODELS`` are the ones the importer accepts and the
compiler must compile end to end (paths relative to ``MODELS_DIR``). Their
reference is TFLite Micro, except for the hybrid ones (float32 activations
with int8 weights, ``tflm_reference.is_hybrid``: ToyCar and the float32 KWS),
which TFLite Micro refuses: LiteRT's reference kernels
(``tflm_reference.run_reference``).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

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
    "tflite_micro/seanet/add/add0.tflite",
    "tflite_micro/seanet/sub/sub0.tflite",
    "tflite_micro/seanet/leaky_relu/leaky_relu0.tflite",
    "tflite_micro/seanet/pad/pad0.tflite",
    "tflite_micro/seanet/quantize/quantize0.tflite",
    "tflite_micro/seanet/strided_slice/strided_slice0.tflite",
    "tflite_micro/trained_lstm.tflite",
    "tflite_micro/trained_lstm_int8.tflite",
    "tflite_micro/micro_speech_lstm.tflite",
    "tflite_micro/seanet/conv/conv0.tflite",
    "tflite_micro/seanet/transpose_conv/transpose_conv0.tflite",
    "tflite_micro/keyword_scrambled.tflite",
    "tflite_micro/keyword_scrambled_8bit.tflite",
    "mlperf_tiny/model_ToyCar_quant.tflite",
    "mlperf_tiny/kws_ref_model_float32.tflite",
)


def model_facts(name: str) -> dict[str, Any]:
    """``stats.json``'s facts about the model ``name``; for a model it does
    not list (TFLM's seanet slices), the ones the tests and benchmarks use,
    measured: TFLite Micro's arena (``tflm_arena_head_bytes``,
    ``tflm_arena_total_bytes``) and ``weight_bytes`` (constant tensors)."""
    stats = json.loads((MODELS_DIR / "stats.json").read_text())
    if name in stats:
        return stats[name]
    from usmp.frontend.tflite_reader import read_model_file
    from usmp.testing.tflm_reference import tflm_arena_bytes

    path = MODELS_DIR / name
    arena = tflm_arena_bytes(path.read_bytes())
    model = read_model_file(path)
    weights = sum(t.data.nbytes for t in model.tensors if t.data is not None)
    return {
        "tflm_arena_head_bytes": arena["head"],
        "tflm_arena_total_bytes": arena["total"],
        "weight_bytes": weights,
    }
