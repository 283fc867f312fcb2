"""Damaged ``.tflite`` files: one located error line and exit status 1, never
a traceback, never a silently wrong model.

Every supported shared model is damaged in many places, deterministically
(seeded by the model's path): truncated (inside the header, the root table,
half way), offsets pointed outside the file (root, operator codes, a vtable,
a vector length, a buffer's data), indices pointed out of range (a tensor's
buffer, an operator's opcode and input), option values no operator can have
(a zero stride, a NaN softmax beta), and single bit flips in the root
table, the operator codes, the subgraph, the tensors, the operators and
their options, the buffer tables and the weights.

``MUST_FAIL`` damage must give exit status 1 with ``<model>: error: ...``.
A bit flip may instead give a valid, different model (a flipped weight, a
flipped bit in a name or a quantisation scale): then the importer must
succeed, and for the models compiled in full (``COMPILED``) the generated C
must build with ``gcc -std=c99 -Wall -Wextra -Werror -pedantic``.

The importer (``usmp-import-tflite``) runs in process for every case; the
full ``usmp-compile`` for the cases of the small models in ``COMPILED``.
"""

from __future__ import annotations

import contextlib
import io
import random
import shutil
import struct
import subprocess
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
import tflite

from usmp.testing.shared_models import MODELS_DIR, SUPPORTED_MODELS
from usmp.tools import import_tflite, usmp_compile

STRICT = ["-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic"]
COMPILED = (
    "tflite_micro/hello_world_int8.tflite",
    "tflite_micro/simple_add_model.tflite",
)
"""Models whose bit-flipped versions (and a few others) also go through the
whole usmp-compile."""
COMPILED_TARGETED = ("truncated-half", "tensor-buffer-index", "opcode-index")

MUST_FAIL = "error"
MAY_PASS = "either"


@dataclass(frozen=True)
class Case:
    model: str
    what: str
    expect: str
    data: bytes

    @property
    def id(self) -> str:
        return f"{Path(self.model).stem}-{self.what}"


# -- where things are in a flatbuffer -------------------------------------


def _u32(data: bytes, pos: int) -> int:
    return struct.unpack_from("<I", data, pos)[0]


def _put(data: bytes, pos: int, value: int) -> bytes:
    out = bytearray(data)
    struct.pack_into("<I", out, pos, value & 0xFFFFFFFF)
    return bytes(out)


def _flip(data: bytes, pos: int, bit: int) -> bytes:
    out = bytearray(data)
    out[pos] ^= 1 << bit
    return bytes(out)


def _field(table: object, vt_offset: int) -> int | None:
    """Byte position of a table's field (``vt_offset`` = 4 + 2 x slot)."""
    tab = table._tab  # type: ignore[attr-defined]
    off = tab.Offset(vt_offset)
    return tab.Pos + off if off else None


def _vector(table: object, vt_offset: int) -> int | None:
    """Byte position of a vector field's length word."""
    pos = _field(table, vt_offset)
    return None if pos is None else pos + _u32(table._tab.Bytes, pos)  # type: ignore[attr-defined]


def _regions(data: bytes) -> dict[str, list[tuple[int, int]]]:
    """Byte ranges (start, end) of the parts of the model, by kind."""
    model = tflite.Model.GetRootAs(data, 0)
    graph = model.Subgraphs(0)
    assert graph is not None

    def table(t: object) -> tuple[int, int]:
        pos = t._tab.Pos  # type: ignore[attr-defined]
        vtable = pos - struct.unpack_from("<i", data, pos)[0]
        return min(pos, vtable), max(pos + 16, vtable + 8)

    tensors = [graph.Tensors(i) for i in range(graph.TensorsLength())]
    operators = [graph.Operators(i) for i in range(graph.OperatorsLength())]
    options = [op.BuiltinOptions() for op in operators if op is not None]
    buffers = [model.Buffers(i) for i in range(model.BuffersLength())]
    weights = []
    for b in buffers:
        start = _vector(b, 4)
        if start is not None and _u32(data, start) > 0:
            weights.append((start + 4, start + 4 + _u32(data, start)))
    return {
        "root": [table(model)],
        "opcodes": [
            table(model.OperatorCodes(i)) for i in range(model.OperatorCodesLength())
        ],
        "subgraph": [table(graph)],
        "tensors": [table(t) for t in tensors],
        "operators": [table(op) for op in operators],
        "options": [(o.Pos, o.Pos + 8) for o in options if o is not None],
        "buffers": [table(b) for b in buffers],
        "weights": weights,
    }


# -- the damage ---------------------------------------------------------------


def _targeted(data: bytes) -> dict[str, bytes]:
    """Damage that no valid model can result from."""
    model = tflite.Model.GetRootAs(data, 0)
    graph = model.Subgraphs(0)
    assert graph is not None
    root = model._tab.Pos
    huge = 0x7FFFFFF0
    cases = {
        "truncated-header": data[:6],
        "truncated-root-table": data[: root + 8],
        "truncated-half": data[: len(data) // 2],
        "truncated-last-byte": data[:-1],
        "root-offset-outside": _put(data, 0, len(data) + 16),
        "root-vtable-outside": _put(data, root, huge),
    }
    codes = _field(model, 6)
    if codes is not None:
        cases["opcodes-offset-outside"] = _put(data, codes, huge)
    tensors = _vector(graph, 4)
    if tensors is not None:
        cases["tensors-vector-length"] = _put(data, tensors, 0x0FFFFFFF)
    constant = next(
        (
            graph.Tensors(i)
            for i in range(graph.TensorsLength())
            if graph.Tensors(i).Buffer() > 0  # type: ignore[union-attr]
        ),
        None,
    )
    if constant is not None:
        pos = _field(constant, 8)
        assert pos is not None
        cases["tensor-buffer-index"] = _put(data, pos, model.BuffersLength() + 5)
        cases["tensor-vtable-outside"] = _put(data, constant._tab.Pos, huge)
        data_vector = _vector(model.Buffers(constant.Buffer()), 4)
        if data_vector is not None:
            cases["buffer-data-length"] = _put(data, data_vector, len(data))
    op = graph.Operators(graph.OperatorsLength() - 1)
    assert op is not None
    pos = _field(op, 4)
    if pos is not None:
        cases["opcode-index"] = _put(data, pos, model.OperatorCodesLength() + 3)
    inputs = _vector(op, 6)
    if inputs is not None:
        cases["operator-input-index"] = _put(
            data, inputs + 4, graph.TensorsLength() + 7
        )
    outputs = _vector(op, 8)
    if outputs is not None:
        cases["operator-output-length"] = _put(data, outputs, huge)
    cases.update(_bad_options(data, model, graph))
    return cases


_STRIDED = {"CONV_2D", "DEPTHWISE_CONV_2D", "AVERAGE_POOL_2D", "MAX_POOL_2D"}


def _bad_options(data: bytes, model: tflite.Model, graph: tflite.SubGraph) -> dict:
    """Option values no operator can have: a zero stride, a NaN softmax beta."""
    names = {v: k for k, v in vars(tflite.BuiltinOperator).items() if k.isupper()}
    cases: dict[str, bytes] = {}
    for i in range(graph.OperatorsLength()):
        op = graph.Operators(i)
        assert op is not None
        code = model.OperatorCodes(op.OpcodeIndex())
        assert code is not None
        name = names.get(max(code.BuiltinCode(), code.DeprecatedBuiltinCode()))
        options = op.BuiltinOptions()
        if options is None:
            continue
        stride = options.Offset(6)  # StrideW in Conv2D/DepthwiseConv2D/Pool2D
        if name in _STRIDED and stride and "options-stride-zero" not in cases:
            cases["options-stride-zero"] = _put(data, options.Pos + stride, 0)
        beta = options.Offset(4)
        if name == "SOFTMAX" and beta and "options-softmax-beta-nan" not in cases:
            nan = bytearray(data)
            struct.pack_into("<f", nan, options.Pos + beta, float("nan"))
            cases["options-softmax-beta-nan"] = bytes(nan)
    return cases


FLIPS = {  # kind -> bit flips per model
    "root": 2,
    "opcodes": 2,
    "subgraph": 1,
    "tensors": 2,
    "operators": 2,
    "options": 1,
    "buffers": 1,
    "weights": 1,
}
"""A flipped weight always gives a valid model: only the models in
``COMPILED`` get one (their C is built)."""


def _flips(data: bytes, rng: random.Random, weights: bool) -> dict[str, bytes]:
    """Single bit flips inside each kind of table (may give a valid model)."""
    cases: dict[str, bytes] = {}
    for kind, ranges in _regions(data).items():
        if kind == "weights" and not weights:
            continue
        for k in range(FLIPS[kind] if ranges else 0):
            start, end = rng.choice(ranges)
            pos = rng.randrange(start, min(end, len(data)))
            bit = rng.randrange(8)
            cases[f"flip-{kind}-{k}-at-{pos}.{bit}"] = _flip(data, pos, bit)
    return cases


def _cases() -> list[Case]:
    cases: list[Case] = []
    for model in SUPPORTED_MODELS:
        data = (MODELS_DIR / model).read_bytes()
        rng = random.Random(zlib.crc32(model.encode()))
        for what, damaged in _targeted(data).items():
            cases.append(Case(model, what, MUST_FAIL, damaged))
        for what, damaged in _flips(data, rng, model in COMPILED).items():
            cases.append(Case(model, what, MAY_PASS, damaged))
    return cases


CASES = _cases()


# -- running the tools in process ----------------------------------------------


def _run(main: Callable[[list[str]], int], argv: list[str]) -> tuple[int, str]:
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        status = main(argv)
    return status, err.getvalue()


def _check_outcome(case: Case, path: Path, status: int, err: str) -> None:
    assert "Traceback" not in err, err
    assert status in (0, 1), err
    if case.expect == MUST_FAIL:
        assert status == 1, f"{case.what}: accepted a damaged model"
    if status == 1:
        errors = [line for line in err.splitlines() if ": error: " in line]
        assert errors, err
        assert errors[0].startswith(f"{path.name}: error: "), err
        # a specific check caught it, not the tools' last line of defence
        assert "damaged or unsupported model (" not in err, err


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_import_damaged_model(case: Case, tmp_path: Path) -> None:
    path = tmp_path / Path(case.model).name
    path.write_bytes(case.data)
    argv = [str(path), "-o", str(tmp_path / "out.mlir"), "--weights", "elided"]
    status, err = _run(import_tflite.main, argv)
    _check_outcome(case, path, status, err)


COMPILE_CASES = [
    c
    for c in CASES
    if c.model in COMPILED and (c.expect == MAY_PASS or c.what in COMPILED_TARGETED)
]


@pytest.mark.parametrize("case", COMPILE_CASES, ids=[c.id for c in COMPILE_CASES])
def test_compile_damaged_model(case: Case, tmp_path: Path) -> None:
    path = tmp_path / Path(case.model).name
    path.write_bytes(case.data)
    out = tmp_path / "out"
    status, err = _run(usmp_compile.main, [str(path), "-o", str(out), "-q"])
    _check_outcome(case, path, status, err)
    if status == 0:  # a valid, different model: its C must build
        gcc = shutil.which("gcc")
        assert gcc is not None
        sources = sorted(str(p) for p in (out / "codegen/host/src").glob("*.c"))
        built = subprocess.run(
            [gcc, *STRICT, "-I", str(out / "codegen/host/include"), "-c", *sources],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            check=False,
        )
        assert built.returncode == 0, built.stderr


def test_corpus_size() -> None:
    assert len(CASES) >= 120
    assert sum(c.expect == MUST_FAIL for c in CASES) >= 100
    for model in SUPPORTED_MODELS:  # no case repeats another
        damaged = [c.data for c in CASES if c.model == model]
        assert len(set(damaged)) == len(damaged), model


@pytest.mark.parametrize(
    ("listed", "expect"),
    [
        ("output-twice", "tensor 2 ('t2') is listed twice as a model output"),
        ("input-twice", "tensor 0 ('t0') is listed twice as a model input"),
        ("input-as-output", "tensor 0 ('t0') is listed as a model input and as"),
        ("same-name", "input name 't0' and output name 't0' are the same"),
    ],
)
def test_input_or_output_listed_twice(listed: str, expect: str, tmp_path: Path) -> None:
    """A tensor listed twice among the model's inputs and outputs (or two of
    them with one name) is an error naming the model (it was ``<unknown>:``:
    the imported ``@main`` had no location)."""
    from tests.test_import_tflite_synthetic import ModelBuilder

    m = ModelBuilder()
    x = m.tensor((1, 4), "float32")
    y = m.tensor((1, 4), "float32")
    z = m.tensor((1, 4), "float32")
    m.op("RELU", [x], [y])
    m.op("ADD", [y, x], [z])
    inputs, outputs = {
        "output-twice": ([x], [z, z]),
        "input-twice": ([x, x], [z]),
        "input-as-output": ([x], [x, z]),
        "same-name": ([x], [z]),
    }[listed]
    if listed == "same-name":
        m.tensors[z]["name"] = m.tensors[x]["name"]
    path = tmp_path / "listed.tflite"
    path.write_bytes(m.build(inputs, outputs))
    status, err = _run(usmp_compile.main, [str(path), "-o", str(tmp_path / "o"), "-q"])
    assert status == 1, err
    assert err.startswith(f"listed.tflite: error: {expect}"), err
    assert "Traceback" not in err and "<unknown>" not in err


def test_empty_tensor_names_get_generated_names(tmp_path: Path) -> None:
    from tests.test_import_tflite_synthetic import ModelBuilder

    m = ModelBuilder()
    x = m.tensor((1, 4), "float32")
    y = m.tensor((1, 4), "float32")
    z = m.tensor((1, 4), "float32")
    m.op("RELU", [x], [y])
    m.op("RELU", [y], [z])
    for t in m.tensors:
        t["name"] = ""
    path = tmp_path / "nameless.tflite"
    path.write_bytes(m.build([x], [z]))
    out = tmp_path / "out"
    status, err = _run(usmp_compile.main, [str(path), "-o", str(out), "-q"])
    assert status == 0, err
    assert err.splitlines() == [
        "nameless.tflite: warning: model input tensor 0 has no name; it is called "
        "'tensor_0'",
        "nameless.tflite: warning: model output tensor 2 has no name; it is called "
        "'tensor_2'",
    ]
    header = (out / "codegen/host/include/tvmgen_default.h").read_text()
    assert "tensor_0" in header and "tensor_2" in header


@pytest.mark.parametrize(
    "model",
    [
        "tflite_micro/person_detect_vela.tflite",
        "tflite_micro/audio_preprocessor_int8.tflite",
    ],
)
def test_compare_tflm_refuses_unsupported_models(model: str) -> None:
    from usmp.tools import compare_tflm

    path = MODELS_DIR / model
    status, err = _run(compare_tflm.main, [str(path), "--seeds", "1"])
    assert status == 1
    assert err.startswith(f"{path.name}: error: operator 0 ("), err
    assert "Traceback" not in err
