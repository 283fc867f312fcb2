"""``usmp.testing.run_c``: the build-and-run harness other tests rely on."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from usmp.testing.run_c import DEFAULT_CFLAGS, CRunError, _sources, build, run_module
from usmp.tools.c_library import build_library, load

MODULE = (
    Path(__file__).parent / "filecheck" / "lowering" / "c_printer.mlir"
).read_text()
X = np.array([[1.0, 2.0, -30.0, 4.0]], dtype=np.float32)
EXPECTED = np.maximum(X + np.array([1, 2, 3, 4], dtype=np.float32), 0).sum()


def test_runs_text_and_module_alike() -> None:
    assert run_module(MODULE, [X])[0].tolist() == [[EXPECTED]]
    assert run_module(load(MODULE), [X.reshape(4)])[0].tolist() == [[EXPECTED]]


def test_rejects_inputs_that_do_not_match_the_model() -> None:
    with pytest.raises(ValueError, match="takes 1 inputs, got 2"):
        run_module(MODULE, [X, X])
    with pytest.raises(
        ValueError, match=r"input 'x' must be float32 of shape \[1, 4\], got float64"
    ):
        run_module(MODULE, [X.astype(np.float64)])
    with pytest.raises(ValueError, match="got float32 of shape \\[5\\]"):
        run_module(MODULE, [np.zeros(5, dtype=np.float32)])


def test_builds_are_cached_by_content() -> None:
    _, files = _sources(load(MODULE), "usmp")
    first = build(files, DEFAULT_CFLAGS)
    stamp = first.stat().st_mtime_ns
    assert build(dict(files), list(DEFAULT_CFLAGS)) == first
    assert first.stat().st_mtime_ns == stamp
    assert build(files, [*DEFAULT_CFLAGS, "-O2"]) != first


def test_compiler_errors_are_reported() -> None:
    _, files = _sources(load(MODULE), "usmp")
    files["harness.c"] += "\nint broken(void) { return undefined_name; }\n"
    with pytest.raises(CRunError, match="undefined_name"):
        build(files, DEFAULT_CFLAGS)


def test_library_is_u1() -> None:
    library = build_library(load(MODULE))
    assert all(not p.user for p in library.interface.pools)
    assert (
        "int32_t tvmgen_default_run(TVMInputs_default* inputs, TVMOutputs_default* outputs);"  # noqa: E501
        in (library.files["tvmgen_default.h"])
    )
