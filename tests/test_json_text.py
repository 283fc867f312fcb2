"""``indented_json`` (``tools/json_text.py``) is ``json.dumps(value,
indent=2)``, byte for byte: on generated values (every JSON type, tuples,
NaN and infinities, any unicode text, empty containers, deep nesting), on
the values it leaves to ``json.dumps`` (keys that are not strings, an
``IntEnum``), and on the metadata a compile writes."""

from __future__ import annotations

import enum
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from usmp.testing.shared_models import MODELS_DIR
from usmp.tools.json_text import indented_json
from usmp.tools.usmp_compile import main

_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(min_value=-(1 << 80), max_value=1 << 80)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text()
)
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: (
        st.lists(inner, max_size=5)
        | st.lists(inner, max_size=5).map(tuple)
        | st.dictionaries(st.text(), inner, max_size=5)
    ),
    max_leaves=40,
)


@settings(max_examples=300, deadline=None)
@given(_VALUES)
def test_the_text_is_json_dumps(value: Any) -> None:
    assert indented_json(value) == json.dumps(value, indent=2)


class _Kind(enum.IntEnum):
    A = 1


@pytest.mark.parametrize(
    "value",
    [
        {1: "int key"},
        {"nested": {2.5: [1]}},
        [_Kind.A],
        {"k": _Kind.A},
        {None: True, "s": "x"},
        [[[[[[]]]]], {}, (), ""],
    ],
)
def test_other_values_are_json_dumps(value: Any) -> None:
    assert indented_json(value) == json.dumps(value, indent=2)


def test_a_value_json_cannot_write_fails_as_in_json() -> None:
    with pytest.raises(TypeError):
        indented_json({"path": Path("x")})


def test_the_metadata_of_a_compile(tmp_path: Path) -> None:
    model = MODELS_DIR / "mlperf_tiny" / "kws_ref_model.tflite"
    assert main([str(model), "-o", str(tmp_path), "-q"]) == 0
    text = (tmp_path / "metadata.json").read_text()
    assert text == json.dumps(json.loads(text), indent=2) + "\n"
    assert indented_json(json.loads(text)) + "\n" == text
