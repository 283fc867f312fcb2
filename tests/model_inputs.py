"""Model inputs that exercise the operating range, for the per-tensor tests.

Uniformly random int8 inputs drive most activations of a conv net to the
clamp (and every classifier's softmax to 0 or 1), so a wrong rounding inside
the network can stay invisible. These inputs have the structure of real data:

* ``structured_inputs``: smooth random fields (coarse Gaussian noise,
  linearly upsampled along every axis longer than 4, plus a little fine
  noise), stretched over the input's quantisation range (integers) or to
  unit variance (floats) — images, spectrograms and feature maps are smooth;
* ``speech_features`` / ``mfcc_features``: real speech from TFLite Micro's
  ``testdata/micro_speech_*_1000ms.wav``, turned into the micro_speech
  model's int8 features by TFLite Micro's own ``audio_preprocessor_int8``
  model, or into the MLPerf Tiny KWS model's MFCCs (40 ms frames every 20 ms,
  40 mel bins 20-4000 Hz, log, DCT, 10 coefficients) quantised with its
  input scale.
"""

from __future__ import annotations

import wave
from pathlib import Path

import numpy as np

from usmp.frontend.tflite_reader import Model
from usmp.testing.shared_models import MODELS_DIR

TESTDATA = MODELS_DIR / "tflite_micro" / "testdata"
WORDS = ("yes", "no", "noise", "silence")


def smooth_field(shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    """Zero-mean, unit-variance noise, smooth along every axis longer than 4."""
    field = rng.standard_normal(
        tuple(max(2, (n + 7) // 8) if n > 4 else n for n in shape)
    )
    for axis, n in enumerate(shape):
        if field.shape[axis] == n:
            continue
        positions = np.linspace(0, field.shape[axis] - 1, n)
        low = np.floor(positions).astype(int)
        high = np.minimum(low + 1, field.shape[axis] - 1)
        weight = (positions - low).reshape(
            [-1 if a == axis else 1 for a in range(len(shape))]
        )
        field = (
            np.take(field, low, axis) * (1 - weight)
            + np.take(field, high, axis) * weight
        )
    field = field + 0.1 * rng.standard_normal(shape)
    return (field - field.mean()) / max(float(field.std()), 1e-6)


def structured_inputs(model: Model, seed: int) -> list[np.ndarray]:
    """One smooth input per model input; integer inputs span their range
    with about 1% of the values at the clamp."""
    rng = np.random.default_rng(seed)
    inputs = []
    for index in model.inputs:
        t = model.tensors[index]
        assert t.dtype is not None
        field = smooth_field(t.shape, rng)
        if t.dtype.kind in "iu":
            info = np.iinfo(t.dtype)
            low, high = np.percentile(field, [0.5, 99.5])
            unit = (field - low) / max(float(high - low), 1e-6)
            values = np.round(info.min + unit * (float(info.max) - info.min))
            inputs.append(np.clip(values, info.min, info.max).astype(t.dtype))
        else:
            inputs.append(field.astype(t.dtype))
    return inputs


def read_wav(path: Path) -> np.ndarray:
    """16-bit mono samples of a wav file."""
    with wave.open(str(path), "rb") as w:
        assert w.getsampwidth() == 2 and w.getnchannels() == 1
        return np.frombuffer(w.readframes(w.getnframes()), np.int16)


def speech_features(word: str) -> np.ndarray:
    """int8[1, 1960] micro_speech features of ``word``'s one-second clip:
    49 frames of 30 ms every 20 ms through TFLite Micro's int8 audio
    preprocessor (which keeps noise-estimate state across frames)."""
    from tflite_micro.python.tflite_micro import runtime

    audio = read_wav(TESTDATA / f"micro_speech_{word}_1000ms.wav")
    preprocessor = runtime.Interpreter.from_file(
        str(MODELS_DIR / "tflite_micro" / "audio_preprocessor_int8.tflite"),
        arena_size=1 << 16,
    )
    frames = []
    for start in range(0, 49 * 320, 320):
        preprocessor.set_input(audio[None, start : start + 480], 0)
        preprocessor.invoke()
        frames.append(preprocessor.get_output(0).copy())
    return np.concatenate(frames).reshape(1, -1).astype(np.int8)


def _mel_matrix(bins: int, fft: int, rate: int, low: float, high: float) -> np.ndarray:
    """Triangular mel filters ``[fft // 2 + 1, bins]`` (HTK mel scale)."""

    def mel(f: np.ndarray) -> np.ndarray:
        return 1127.0 * np.log1p(f / 700.0)

    edges = np.linspace(mel(np.array(low)), mel(np.array(high)), bins + 2)
    hz = mel(np.linspace(0, rate / 2, fft // 2 + 1))[:, None]
    lower, centre, upper = edges[:-2], edges[1:-1], edges[2:]
    rising = (hz - lower) / (centre - lower)
    falling = (upper - hz) / (upper - centre)
    return np.maximum(0.0, np.minimum(rising, falling))


def mfcc_features(word: str, scale: float, zero_point: int) -> np.ndarray:
    """int8[1, 49, 10, 1] MFCCs of ``word``'s clip, as MLPerf Tiny's KWS
    front end computes them, quantised with ``scale`` / ``zero_point``."""
    audio = read_wav(TESTDATA / f"micro_speech_{word}_1000ms.wav") / 32768.0
    audio = np.pad(audio, (0, max(0, 16000 - audio.size)))[:16000]
    window = np.hanning(641)[:-1]  # periodic Hann, as tf.signal.stft
    frames = np.stack(
        [audio[s : s + 640] * window for s in range(0, 16000 - 640 + 1, 320)]
    )
    magnitude = np.abs(np.fft.rfft(frames, 1024))
    log_mel = np.log(magnitude @ _mel_matrix(40, 1024, 16000, 20.0, 4000.0) + 1e-6)
    n = np.arange(40)
    dct = np.cos(np.pi / 40 * (n[:, None] + 0.5) * n[None, :10]) * np.sqrt(2.0 / 40)
    dct[:, 0] /= np.sqrt(2.0)
    mfcc = log_mel @ dct
    q = np.round(mfcc / scale) + zero_point
    return np.clip(q, -128, 127).astype(np.int8).reshape(1, 49, 10, 1)
