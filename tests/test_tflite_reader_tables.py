"""``tflite_reader._Table``: the reader's flatbuffer tables read what
``flatbuffers.table.Table`` reads, and fail where it fails."""

from __future__ import annotations

import struct

import flatbuffers.number_types as fbn
import numpy as np
import pytest
from flatbuffers.table import Table

from usmp.frontend import tflite_reader
from usmp.frontend.tflite_reader import _Table, read_model_file
from usmp.testing.shared_models import MODELS_DIR

_MODELS = [
    MODELS_DIR / "mlperf_tiny" / "kws_ref_model.tflite",
    MODELS_DIR / "mlperf_tiny" / "vww_96_int8.tflite",
]


def _summary(model: tflite_reader.Model) -> list[object]:
    tensors = [
        (
            t.name,
            t.type_name,
            t.shape,
            t.shape_signature,
            t.quantization,
            t.is_variable,
            None if t.data is None else (t.data.dtype.str, t.data.tobytes()),
        )
        for t in model.tensors
    ]
    operators = [
        (
            op.opcode,
            op.custom_code,
            op.version,
            op.inputs,
            op.outputs,
            op.intermediates,
            type(op.options).__name__,
        )
        for op in model.operators
    ]
    return [tensors, operators, model.inputs, model.outputs, model.warnings]


@pytest.mark.parametrize("path", _MODELS, ids=lambda p: p.stem)
def test_a_model_reads_the_same_through_flatbuffers_tables(
    path: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    fast = _summary(read_model_file(path))  # type: ignore[arg-type]
    monkeypatch.setattr(tflite_reader, "_fast", lambda table: table)
    assert fast == _summary(read_model_file(path))  # type: ignore[arg-type]


def _table_and_fast(buf: bytes, pos: int) -> tuple[Table, _Table]:
    return Table(buf, pos), _Table(buf, pos)


def test_fields_absent_from_a_short_vtable_read_as_zero() -> None:
    # vtable at 0: 6 bytes long, table 8 bytes; one field, at table offset 4
    buf = struct.pack("<HHH", 6, 8, 4) + b"\0\0" + struct.pack("<iI", 8, 77)
    plain, fast = _table_and_fast(buf, 8)
    for slot in (4, 6, 8, 10):
        assert fast.Offset(slot) == plain.Offset(slot)
    assert fast.Offset(4) == 4 and fast.Offset(6) == 0
    assert fast.Get(fbn.Uint32Flags, 12) == plain.Get(fbn.Uint32Flags, 12) == 77


@pytest.mark.parametrize("soffset", [-100, 100])
def test_a_damaged_vtable_fails_as_in_flatbuffers(soffset: int) -> None:
    """A vtable offset pointing outside the buffer (after it: ``struct``'s
    error; before it: flatbuffers' range check) raises what ``Table``
    raises, with the same message."""
    buf = struct.pack("<i", soffset) + b"\0" * 6
    errors = []
    for table in _table_and_fast(buf, 0):
        with pytest.raises((TypeError, struct.error)) as e:
            table.Offset(4)
        errors.append((type(e.value), str(e.value)))
    assert errors[0] == errors[1]


def test_get_converts_as_flatbuffers() -> None:
    buf = struct.pack("<f?b", 1.5, True, -3)
    plain, fast = _table_and_fast(buf, 0)
    for flags, off in ((fbn.Float32Flags, 0), (fbn.BoolFlags, 4), (fbn.Int8Flags, 5)):
        value = fast.Get(flags, off)
        assert value == plain.Get(flags, off)
        assert type(value) is type(plain.Get(flags, off))
    assert np.float32(fast.Get(fbn.Float32Flags, 0)) == np.float32(1.5)
