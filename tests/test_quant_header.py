"""Quantisation in the interface header (issue 30, item 3).

* KWS's header has each I/O tensor's scale (a float literal that reads back
  as the TFLite file's float32) and zero point;
* its ``static inline`` helpers, compiled into a C program, quantise as
  TFLite's QUANTIZE does (float32 division, half away from zero, saturated)
  on halfway points, saturation, infinities and NaN, and dequantise as
  DEQUANTIZE does, against numpy written here;
* the same for uint8 and int16 tensors of a relay module carrying the
  attribute by hand, and no macros for one without it;
* the kit's example with ``-f`` reads float inputs, quantises them with the
  helpers and gives TFLite Micro's outputs on KWS.
"""

from __future__ import annotations

import struct
import subprocess
from pathlib import Path

import numpy as np
import pytest

from usmp.frontend.tflite_reader import read_model_file
from usmp.testing.firmware import make_example
from usmp.testing.shared_models import MODELS_DIR
from usmp.testing.tflm_reference import difference, run_tflm
from usmp.tools.firmware_kit import read_split_file
from usmp.tools.usmp_compile import main as usmp_compile
from usmp.tools.usmp_opt import main as usmp_opt

KWS = MODELS_DIR / "mlperf_tiny/kws_ref_model.tflite"
KWS_IN = (float(np.float32(0.5847029089927673)), 83)
KWS_OUT = (0.00390625, -128)
CFLAGS = ["-std=c99", "-O2", "-Wall", "-Wextra", "-Werror", "-pedantic", "-Wconversion"]


def tflite_quantize(x: np.ndarray, scale: float, zero_point: int, dtype) -> np.ndarray:
    """TFLite's reference QUANTIZE: ``round(x / (float)scale) + zero_point``,
    the division in float32, std::round (half away from zero), saturated;
    NaN taken as the lowest value (what x86's conversion gives)."""
    info = np.iinfo(dtype)
    with np.errstate(invalid="ignore", over="ignore"):
        v = (np.asarray(x, np.float32) / np.float32(scale)).astype(np.float64)
        r = np.sign(v) * np.floor(np.abs(v) + 0.5)  # exact in double
        r = np.where(np.isnan(r), -np.inf, r)
        q = np.clip(r + zero_point, info.min, info.max)
    return q.astype(dtype)


def tflite_dequantize(q: np.ndarray, scale: float, zero_point: int) -> np.ndarray:
    """TFLite's DEQUANTIZE: ``(float)(double scale * (q - zero_point))``."""
    return (np.float64(np.float32(scale)) * (q.astype(np.int64) - zero_point)).astype(
        np.float32
    )


def probe_values(scale: float, zero_point: int, dtype) -> np.ndarray:
    """Floats at every halfway point of the range (x / scale exactly k + 1/2
    in float32), their neighbours, the saturation edges, infinities, NaN."""
    info = np.iinfo(dtype)
    s = np.float32(scale)
    ks = np.arange(
        info.min - zero_point - 3, info.max - zero_point + 3, dtype=np.float64
    )
    halves = (ks + 0.5).astype(np.float32) * s
    exact = halves[(halves / s) == (ks + 0.5).astype(np.float32)]
    assert len(exact) > len(ks) // 4, "too few exact halfway points to probe"
    near = np.concatenate(
        [
            np.nextafter(exact, np.float32(np.inf)),
            np.nextafter(exact, np.float32(-np.inf)),
        ]
    )
    edges = np.array(
        [
            0.0,
            -0.0,
            1e-30,
            -1e-30,
            1e30,
            -1e30,
            np.inf,
            -np.inf,
            np.nan,
            3.4e38,
            -3.4e38,
        ],
        np.float32,
    )
    whole = (ks.astype(np.float32) * s).astype(np.float32)
    return np.concatenate([exact, near, edges, whole]).astype(np.float32)


def _program(header: str, quantize: str, dequantize: str, ctype: str) -> str:
    """A C program: stdin's float32 values quantised (written as ``ctype``),
    then every value of ``ctype`` dequantised (written as float32)."""
    return f"""#include <stdio.h>
#include "{header}"
int main(int argc, char** argv) {{
  float x;
  long v;
  (void)argv;
  if (argc > 1) {{
    for (v = {"0" if ctype.startswith("u") else f"-(1L << (8 * (long)sizeof({ctype}) - 1))"};
         v <= {"(1L << (8 * (long)sizeof(" + ctype + "))) - 1" if ctype.startswith("u") else f"(1L << (8 * (long)sizeof({ctype}) - 1)) - 1"}; ++v) {{
      float r = {dequantize}(({ctype})v);
      fwrite(&r, sizeof r, 1, stdout);
    }}
    return 0;
  }}
  while (fread(&x, sizeof x, 1, stdin) == 1) {{
    {ctype} q = {quantize}(x);
    fwrite(&q, sizeof q, 1, stdout);
  }}
  return 0;
}}
"""


def _check_helpers(
    include: Path,
    header: str,
    tmp: Path,
    names: tuple[str, str],
    ctype: str,
    scale: float,
    zero_point: int,
    dtype,
) -> None:
    source = tmp / f"{names[0]}.c"
    source.write_text(_program(header, *names, ctype))
    exe = tmp / names[0]
    subprocess.run(
        ["gcc", *CFLAGS, "-I", str(include), str(source), "-o", str(exe)], check=True
    )
    x = probe_values(scale, zero_point, dtype)
    got = np.frombuffer(
        subprocess.run(
            [str(exe)], input=x.tobytes(), capture_output=True, check=True
        ).stdout,
        dtype,
    )
    want = tflite_quantize(x, scale, zero_point, dtype)
    bad = np.flatnonzero(got != want)
    assert not len(bad), [(float(x[i]), int(got[i]), int(want[i])) for i in bad[:8]]
    info = np.iinfo(dtype)
    every = np.arange(info.min, info.max + 1)
    real = np.frombuffer(
        subprocess.run([str(exe), "d"], capture_output=True, check=True).stdout,
        np.float32,
    )
    np.testing.assert_array_equal(real, tflite_dequantize(every, scale, zero_point))


@pytest.fixture(scope="module")
def kws(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("quant") / "kws"
    assert usmp_compile([str(KWS), "-o", str(out), "-q", "--module-name", "kws"]) == 0
    return out


def test_kws_header_macros(kws: Path) -> None:
    header = (kws / "codegen/host/include/tvmgen_kws.h").read_text()
    for line in (
        '/** Input "input_1" is quantised: real = SCALE * (q - ZERO_POINT). */',
        "#define TVMGEN_KWS_INPUT_1_SCALE 0.5847029f",
        "#define TVMGEN_KWS_INPUT_1_ZERO_POINT 83",
        "#define TVMGEN_KWS_IDENTITY_SCALE 0.00390625f",
        "#define TVMGEN_KWS_IDENTITY_ZERO_POINT (-128)",
        "static inline int8_t tvmgen_kws_quantize_input_1(float x) {",
        "static inline float tvmgen_kws_dequantize_input_1(int8_t q) {",
        "static inline int8_t tvmgen_kws_quantize_Identity(float x) {",
        "static inline float tvmgen_kws_dequantize_Identity(int8_t q) {",
    ):
        assert line in header, line
    # the literal reads back as the file's float32 scale
    assert np.float32("0.5847029") == KWS_IN[0]
    assert struct.pack("<f", float("0.5847029")) == struct.pack("<f", KWS_IN[0])


def test_kws_helpers_match_tflite(kws: Path, tmp_path: Path) -> None:
    include = kws / "codegen/host/include"
    for names, (scale, zp) in (
        (("tvmgen_kws_quantize_input_1", "tvmgen_kws_dequantize_input_1"), KWS_IN),
        (("tvmgen_kws_quantize_Identity", "tvmgen_kws_dequantize_Identity"), KWS_OUT),
    ):
        _check_helpers(
            include, "tvmgen_kws.h", tmp_path, names, "int8_t", scale, zp, np.int8
        )


IDENTITY = """
func.func @main(%x: tensor<4xui8>, %y: tensor<3xi16>) -> (tensor<4xui8>, tensor<3xi16>) attributes {relay.input_quantization = [{scale = 0.0372 : f32, zero_point = 131 : i64}, {scale = 3.0e-4 : f32, zero_point = 0 : i64}], relay.output_quantization = [{}, {scale = 0.5 : f32, zero_point = -7 : i64}]} {
  func.return %x, %y : tensor<4xui8>, tensor<3xi16>
}
"""


def _library(source: str, tmp: Path) -> dict[str, str]:
    (tmp / "m.mlir").write_text(source)
    out = tmp / "lib.txt"
    pipeline = "aot-lower-main,usmp,convert-to-emitc"
    assert (
        usmp_opt(
            [str(tmp / "m.mlir"), "-p", pipeline, "-t", "c-library", "-o", str(out)]
        )
        == 0
    )
    return read_split_file(out.read_text())


def test_uint8_and_int16_helpers(tmp_path: Path) -> None:
    files = _library(IDENTITY, tmp_path)
    header = next(f for f in files if f.endswith("tvmgen_default.h"))
    text = files[header]
    assert "#define TVMGEN_DEFAULT_OUTPUT0_SCALE" not in text  # {}: not quantised
    assert "#define TVMGEN_DEFAULT_OUTPUT1_ZERO_POINT (-7)" in text
    include = tmp_path / "include"
    include.mkdir()
    (include / "tvmgen_default.h").write_text(text)
    for tensor, ctype, scale, zp, dtype in (
        ("x", "uint8_t", 0.0372, 131, np.uint8),
        ("y", "int16_t", 3.0e-4, 0, np.int16),
        ("output1", "int16_t", 0.5, -7, np.int16),
    ):
        names = (
            f"tvmgen_default_quantize_{tensor}",
            f"tvmgen_default_dequantize_{tensor}",
        )
        _check_helpers(
            include,
            "tvmgen_default.h",
            tmp_path,
            names,
            ctype,
            float(np.float32(scale)),
            zp,
            dtype,
        )


def test_no_macros_without_the_attribute(tmp_path: Path) -> None:
    source = IDENTITY.split(" attributes {")[0] + " {" + IDENTITY.split("]} {", 1)[1]
    files = _library(source, tmp_path)
    text = next(t for f, t in files.items() if f.endswith("tvmgen_default.h"))
    assert "_SCALE" not in text and "quantize" not in text


def test_example_quantises_float_inputs_as_tflite(kws: Path, tmp_path: Path) -> None:
    exe = make_example(kws)
    model = read_model_file(KWS)
    rng = np.random.default_rng(7)
    scale, zp = KWS_IN
    # real values over the input's range and beyond, some at halfway points
    x = rng.uniform(-130, 40, 490).astype(np.float32)
    x[:60] = (np.arange(-30, 30).astype(np.float32) + np.float32(0.5)) * scale
    real = tmp_path / "input.f32"
    real.write_bytes(x.tobytes())
    prefix = tmp_path / "out"
    printed = subprocess.run(
        [str(exe), "-f", "-o", str(prefix), str(real)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    got = np.frombuffer((tmp_path / "out0.bin").read_bytes(), np.int8).reshape(1, 12)
    q = tflite_quantize(x, scale, zp, np.int8).reshape(1, 49, 10, 1)
    want = run_tflm(KWS.read_bytes(), [q], list(model.outputs))
    assert difference(got, want[0]) is None, difference(got, want[0])
    assert len(set(got.reshape(-1).tolist())) > 1  # not a saturated input
    values = " ".join(f"{v:.9g}" for v in tflite_dequantize(got.reshape(-1), *KWS_OUT))
    assert f"output 0 Identity real: {values}\n" in printed
    # without -f the same file is 1960 bytes of raw input: refused
    result = subprocess.run([str(exe), str(real)], capture_output=True, text=True)
    assert result.returncode == 1 and "must be exactly 490 bytes" in result.stderr
    usage = subprocess.run([str(exe)], capture_output=True, text=True).stderr
    assert "[-f]" in usage
