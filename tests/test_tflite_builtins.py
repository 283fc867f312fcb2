"""docs/tflite-builtins.md is what ``python -m usmp.tools.tflite_builtins``
prints for this importer and the installed TFLite Micro."""

from __future__ import annotations

from usmp.tools import tflite_builtins


def test_the_page_is_current() -> None:
    assert tflite_builtins.DOC.read_text() == tflite_builtins.page(), (
        "docs/tflite-builtins.md is out of date: run "
        "`python -m usmp.tools.tflite_builtins --write`"
    )


def test_the_lists_are_sane() -> None:
    kernels = tflite_builtins.tflm_kernels()
    assert {"CONV_2D", "GATHER", "UNIDIRECTIONAL_SEQUENCE_LSTM", "ETHOSU"} <= kernels
    ours = tflite_builtins.supported()
    assert {"CONV_2D", "GATHER", "RESIZE_BILINEAR"} <= ours
    assert "UNIDIRECTIONAL_SEQUENCE_LSTM" not in ours
    page = tflite_builtins.page()
    assert "| GATHER | yes | supported |" in page
    assert "| SVDF | yes | not yet |" in page
