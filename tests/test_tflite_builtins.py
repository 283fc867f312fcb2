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
    assert {"CONV_2D", "GATHER", "SVDF", "ETHOSU"} <= kernels
    ours = tflite_builtins.supported()
    assert {"CONV_2D", "GATHER", "RESIZE_BILINEAR"} <= ours
    page = tflite_builtins.page()
    for name in sorted(kernels & tflite_builtins.builtin_names()):
        status = "supported" if name in ours else "not yet"
        assert f"| {name} | yes | {status} |" in page
    assert "| CUSTOM |" not in page
