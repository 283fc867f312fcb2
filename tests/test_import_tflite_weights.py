"""Weights stored the way real converters store them and TFLite Micro
refuses: FLOAT16 constants behind DEQUANTIZE (folded into FLOAT32 constants)
and sparse constants (TFLite's sparsity metadata: CSR and block-sparse
dimensions, int32/uint16/uint8 index vectors) behind DENSIFY or read
directly, densified at compile time. LiteRT (``ai-edge-litert``, reference
kernels) is the reference: every tensor, and the generated C's outputs."""

from __future__ import annotations

import numpy as np
import pytest

from usmp.frontend.tflite_import import import_model, import_tflite_bytes
from usmp.frontend.tflite_reader import TFLiteImportError, read_model
from usmp.frontend.tflite_sparsity import Dimension, Sparsity, densify
from usmp.oracle.relay_interpreter import evaluate
from usmp.testing.run_c import run_module
from usmp.testing.tflite_builder import ModelBuilder, Sparse
from usmp.testing.tflm_reference import difference, run_litert

PIPELINE = "fuse-ops,lower-ops,aot-lower-main,usmp"
RNG = np.random.default_rng(28)
DENSE = RNG.standard_normal((6, 8)).astype(np.float32) * (RNG.random((6, 8)) < 0.4)
"""A (6, 8) weight with about 60% zeros."""


def _fc_model(weight: tuple[str, np.ndarray, Sparse | None], densify_op: bool) -> bytes:
    """x (2, 8) f32 -> FULLY_CONNECTED with the weight (6, 8) and a bias:
    the weight a FLOAT16 constant behind DEQUANTIZE, or a sparse constant
    behind DENSIFY (or read directly by FULLY_CONNECTED)."""
    dtype, data, sparse = weight
    m = ModelBuilder()
    x = m.tensor((2, 8), "float32")
    stored = m.tensor((6, 8), dtype, data, sparse=sparse)
    w = stored
    if dtype == "float16":
        w = m.tensor((6, 8), "float32")
        m.op("DEQUANTIZE", [stored], [w])
    elif densify_op:
        w = m.tensor((6, 8), "float32")
        m.op("DENSIFY", [stored], [w])
    bias = m.tensor((6,), "float32", np.linspace(-1, 1, 6, dtype=np.float32))
    y = m.tensor((2, 6), "float32")
    m.op("FULLY_CONNECTED", [x, w, bias], [y], ("FullyConnectedOptions", {}))
    return m.build([x], [y])


def _csr(kind: str) -> Sparse:
    """Rows dense, columns CSR."""
    rows = [np.flatnonzero(r) for r in DENSE]
    segments = np.concatenate(([0], np.cumsum([len(r) for r in rows])))
    return Sparse([0, 1], [("dense", 6), ("csr", segments, np.concatenate(rows), kind)])


def _csr_values() -> np.ndarray:
    return DENSE[DENSE != 0]


def _blocks(kind: str) -> tuple[np.ndarray, Sparse]:
    """2x4 blocks (rows in blocks of 2, columns of 4), the zero blocks left
    out, columns traversed before rows: traversal order (1, 0, 2, 3)."""
    dense = DENSE.copy()
    dense[2:4, 0:4] = 0  # one whole zero block
    blocks = dense.reshape(3, 2, 2, 4).transpose(2, 0, 1, 3)  # (col b, row b, 2, 4)
    present = [[r for r in range(3) if blocks[c, r].any()] for c in range(2)]
    segments = np.concatenate(([0], np.cumsum([len(p) for p in present])))
    indices = np.concatenate([np.array(p, np.int64) for p in present])
    values = np.concatenate(
        [blocks[c, r].reshape(-1) for c in range(2) for r in present[c]]
    )
    sparse = Sparse(
        [1, 0, 2, 3],
        [("dense", 2), ("csr", segments, indices, kind), ("dense", 2), ("dense", 4)],
        block_map=[0, 1],
    )
    return values, sparse


def _check(data: bytes, name: str) -> None:
    """Every tensor of the oracle and the C's output equal LiteRT's."""
    model = read_model(data, name)
    produced = [t for op in model.operators for t in op.outputs]
    x = RNG.standard_normal((2, 8)).astype(np.float32)
    want = run_litert(data, [x], produced)
    got = evaluate(import_model(model, outputs=produced), [x])
    for k, (g, w) in enumerate(zip(got, want, strict=True)):
        assert difference(g, w) is None, f"tensor {produced[k]}: {difference(g, w)}"
    (c,) = run_module(import_model(model), [x], passes=PIPELINE)
    assert difference(c, want[-1]) is None, difference(c, want[-1])


def test_float16_weights_fold_into_float32() -> None:
    data = _fc_model(("float16", DENSE.astype(np.float16), None), False)
    _check(data, "f16.tflite")
    text = str(import_tflite_bytes(data, "f16.tflite"))
    assert "f16" not in text and "relay.dequantize" not in text


@pytest.mark.parametrize("kind", ["int32", "uint16", "uint8"])
def test_csr_weights_behind_densify(kind: str) -> None:
    _check(
        _fc_model(("float32", _csr_values(), _csr(kind)), True), f"csr_{kind}.tflite"
    )


def test_sparse_weights_read_directly_by_fully_connected() -> None:
    _check(_fc_model(("float32", _csr_values(), _csr("uint8")), False), "fc.tflite")


@pytest.mark.parametrize("kind", ["uint16", "int32"])
def test_block_sparse_weights_behind_densify(kind: str) -> None:
    values, sparse = _blocks(kind)
    _check(_fc_model(("float32", values, sparse), True), f"block_{kind}.tflite")


def test_densify_of_int8_blocks() -> None:
    """The walk alone, on int8 values: 1x4 blocks along the columns, rows
    CSR (as TFLite's converter stores int8 block-sparse weights)."""
    dense = np.zeros((3, 8), np.int8)
    dense[0, 4:8] = [1, 2, 3, 4]
    dense[2, 0:4] = [-5, 6, -7, 8]
    sparsity = Sparsity(
        (0, 1, 2),
        (1,),
        (
            Dimension(3),
            Dimension(None, np.array([0, 1, 1, 2]), np.array([1, 0])),
            Dimension(4),
        ),
    )
    values = np.array([1, 2, 3, 4, -5, 6, -7, 8], np.int8)
    np.testing.assert_array_equal(densify(values, (3, 8), sparsity), dense)


def _refused(data: bytes) -> str:
    with pytest.raises(TFLiteImportError) as e:
        import_tflite_bytes(data, "m.tflite")
    return str(e.value)


def test_bad_sparsity_names_the_sparse_tensor() -> None:
    """Metadata addressing more values than stored: the sparse tensor is
    named, not taken for a corrupt buffer."""
    message = _refused(_fc_model(("float32", _csr_values()[:-2], _csr("int32")), True))
    assert "tensor 1 't1': sparse constant of shape [6, 8]" in message
    assert f"addresses {_csr_values().size} values, the buffer holds" in message


def test_float16_weight_read_by_another_operator_is_refused() -> None:
    m = ModelBuilder()
    x = m.tensor((2, 8), "float32")
    w = m.tensor((6, 8), "float16", DENSE.astype(np.float16))
    y = m.tensor((2, 6), "float32")
    m.op("FULLY_CONNECTED", [x, w], [y], ("FullyConnectedOptions", {}))
    message = _refused(m.build([x], [y]))
    assert "operator 0 (FULLY_CONNECTED): unsupported types" in message
    assert "weights FLOAT16" in message
    m = ModelBuilder()
    x = m.tensor((2, 8), "float32")
    w = m.tensor((2, 8), "float16", DENSE[:2].astype(np.float16))
    shape = m.tensor((2,), "int32", np.array([16, 1], np.int32))
    m.op("RESHAPE", [w, shape], [y := m.tensor((16, 1), "float16")])
    message = _refused(m.build([x], [y]))
    assert "operator 0 (RESHAPE): constant tensor 't1' (#1) has type FLOAT16" in message
    assert "supported as the input of DEQUANTIZE" in message


def test_float16_activation_is_refused() -> None:
    m = ModelBuilder()
    x = m.tensor((2, 8), "float16")
    y = m.tensor((2, 8), "float32")
    m.op("DEQUANTIZE", [x], [y])
    message = _refused(m.build([x], [y]))
    assert "model input/output 't0' has unsupported type FLOAT16" in message
