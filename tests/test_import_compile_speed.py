"""The shortcuts of the import step, plan-devices and fuse-ops keep their checks.

``usmp-compile`` verifies the imported module once (``verify_located``, not
``import_model``'s own verification as well): a converter emitting invalid
relay still stops the compile with an error at the operator, never a
traceback or C. ``VirtualDeviceAttr.join``/``default_from`` return an operand
that already is the result; ``relay_base.tensor_type`` shares one instance
per type.
"""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import pytest
from xdsl.dialects.builtin import TensorType, f32, i8, i32

from usmp.dialects import relay_base
from usmp.dialects.device import UNSET_ID, VirtualDeviceAttr
from usmp.frontend import tflite_ops
from usmp.frontend.builder import RelayBuilder
from usmp.frontend.tflite_import import TFLiteImportError, import_model
from usmp.frontend.tflite_reader import read_model_file
from usmp.tools import usmp_compile

KWS = Path(__file__).parents[1] / "examples" / "kws_ref_model.tflite"


def _break_softmax(monkeypatch: pytest.MonkeyPatch) -> None:
    """SOFTMAX's converter emits its op with a wrong result type (a bug a
    verifier must catch)."""
    convert = tflite_ops.CONVERTERS["SOFTMAX"]

    def broken(builder: RelayBuilder) -> None:
        convert(builder)
        value = builder.values[builder.operator.outputs[0]]
        value._type = TensorType(i8, [1, 3])  # pyright: ignore[reportAttributeAccessIssue]

    monkeypatch.setitem(tflite_ops._CONVERTERS, "SOFTMAX", broken)  # pyright: ignore[reportPrivateUsage]


def test_compile_reports_invalid_import_at_the_operator(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _break_softmax(monkeypatch)
    out = tmp_path / "out"
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        status = usmp_compile.main([str(KWS), "-o", str(out), "-q"])
    text = err.getvalue()
    assert status == 1, text
    assert "Traceback" not in text, text
    assert "kws_ref_model.tflite:" in text and "(SOFTMAX)" in text, text
    assert "result type tensor<1x3xi8> is wrong" in text, text
    assert not list(out.rglob("*.c"))  # no C from an invalid module


def test_import_model_still_verifies_by_default(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _break_softmax(monkeypatch)
    model = read_model_file(KWS)
    with pytest.raises(TFLiteImportError, match="does not verify.*is wrong"):
        import_model(model)
    import_model(model, verify=False)  # the caller verifies


def test_join_and_default_reuse_operands() -> None:
    full = VirtualDeviceAttr("cpu", 0, "c", "global")
    kind = VirtualDeviceAttr("cpu", UNSET_ID, "", "")
    scope = VirtualDeviceAttr("", UNSET_ID, "", "sram")
    assert full.join(full) is full
    assert full.join(kind) is full and kind.join(full) is full
    assert kind.join(scope) == VirtualDeviceAttr("cpu", UNSET_ID, "", "sram")
    assert full.join(scope) is None  # global vs sram
    assert full.join(VirtualDeviceAttr("npu", UNSET_ID, "", "")) is None
    assert full.default_from(kind) is full
    assert kind.default_from(full) == full
    assert scope.default_from(full) == VirtualDeviceAttr("cpu", 0, "c", "sram")


def test_tensor_type_is_shared_and_exact() -> None:
    a = relay_base.tensor_type(i8, [1, 2, 3])
    assert a == TensorType(i8, [1, 2, 3])
    assert relay_base.tensor_type(i8, (1, 2, 3)) is a
    assert relay_base.tensor_type(i32, [1, 2, 3]) == TensorType(i32, [1, 2, 3])
    assert relay_base.tensor_type(f32, []) == TensorType(f32, [])
    relay_base._TENSOR_TYPES.clear()  # pyright: ignore[reportPrivateUsage]
    assert relay_base.tensor_type(i8, [1, 2, 3]) == a


def test_tensor_of_checks_each_type_until_accepted() -> None:
    from xdsl.utils.exceptions import VerifyException

    empty = relay_base.tensor_type(i8, [1, 0])
    for _ in range(2):  # a refused type is refused every time
        with pytest.raises(VerifyException, match="zero dimension"):
            relay_base.tensor_of("relay.x", "data", empty)
    ok = relay_base.tensor_type(i8, [1, 2])
    assert relay_base.tensor_of("relay.x", "data", ok) is ok
    assert relay_base.tensor_of("relay.x", "data", ok) is ok  # listed
    wide = TensorType(i8, [2**31])
    with pytest.raises(VerifyException, match="bytes"):
        relay_base.tensor_of("relay.x", "data", wide)


def test_no_offload_imports_no_tflite_package() -> None:
    """``--offload`` unused: option checking does not load the ``tflite``
    package (a relay ``.mlir`` compile never needs it)."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from usmp.tools.offload import parse_offload\n"
        "assert parse_offload([], ['c']) == {}\n"
        "assert 'tflite' not in sys.modules, 'tflite imported'\n"
        "parse_offload(['CONV_2D=accel'], ['accel', 'c'])\n"
        "assert 'tflite' in sys.modules\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr


def test_constants_share_the_model_bytes_and_keep_their_values() -> None:
    """``dense_attr`` keeps the bytes object a ``.tflite`` constant views
    (immutable: not copied again); any other array is copied as
    ``tobytes`` gives it (strided, offset, byte-swapped, computed)."""
    import numpy as np

    from usmp.frontend.builder import dense_attr

    model = read_model_file(KWS)
    shared = 0
    for t in model.tensors:
        if t.data is None:
            continue
        attr = dense_attr(t.data)
        assert attr.data.data == t.data.tobytes()
        root = t.data
        while isinstance(root, np.ndarray) and root.base is not None:
            root = root.base
        shared += attr.data.data is root
    assert shared > 5
    raw = bytes(range(24))
    whole = np.frombuffer(raw, np.int8).reshape(2, 3, 4)
    assert dense_attr(whole).data.data is raw
    for other in (
        whole[:, :, ::2],  # strided
        np.frombuffer(raw, np.int8)[4:],  # offset into the bytes
        np.frombuffer(raw, np.int8)[:-4],  # a prefix of them
        whole.transpose(2, 1, 0),  # not in C order
        np.frombuffer(raw, ">i4"),  # big-endian: swapped to little-endian
        whole + 1,  # computed
    ):
        attr = dense_attr(other)
        assert attr.data.data is not raw
        expected = np.ascontiguousarray(other, other.dtype.newbyteorder("<"))
        assert attr.data.data == expected.tobytes()
