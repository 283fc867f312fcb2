"""The USMP RFC's use cases U1-U3, as applications a firmware engineer writes.

Each test compiles relay models through the user's pipeline (fuse-ops,
lower-ops, aot-lower-main, usmp), writes their C libraries, builds an
application from ``tests/c/`` with ``gcc -std=c99 -Wall -Wextra -Werror
-pedantic -fsanitize=address,undefined``, runs it and compares its outputs
with the relay oracle: int8 bit for bit, float within 1e-5 relative.
Workspace arrays are sized exactly to the planned pool sizes, so a model that
touched a byte beyond its plan would be stopped by AddressSanitizer.
"""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from tests.c.models import float_mlp, int8_convnet
from usmp.oracle.relay_interpreter import evaluate
from usmp.testing.run_c import (
    DEFAULT_CFLAGS,
    SANITIZE_FLAGS,
    harness,
    run_pipeline,
)
from usmp.tools.c_library import CLibrary, build_library, load, write_library

APPS = Path(__file__).parent / "c"
FLAGS = [*DEFAULT_CFLAGS, *SANITIZE_FLAGS]


def compile_model(text: str, name: str, pools: str = "") -> object:
    usmp = f'usmp{{pools="{pools}"}}' if pools else "usmp"
    return run_pipeline(
        load(text),
        f"fuse-ops{{module_name={name}}},lower-ops,aot-lower-main{{module_name={name}}},{usmp}",
    )


def build_app(
    tmp: Path, app: str, libraries: dict[str, CLibrary], defines: Sequence[str] = ()
) -> Path:
    sources = [str(APPS / app)]
    for name, library in libraries.items():
        sources += [str(tmp / name / f) for f in library.files if f.endswith(".c")]
    exe = tmp / app.removesuffix(".c")
    result = subprocess.run(
        [
            "gcc",
            *FLAGS,
            *defines,
            "-I",
            str(tmp),
            "-I",
            str(APPS),
            *sources,
            "-o",
            str(exe),
            "-lm",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    return exe


def run_app(
    exe: Path,
    tmp: Path,
    inputs: Sequence[np.ndarray],
    outputs: Sequence[tuple[tuple[int, ...], np.dtype]],
):
    ins = [tmp / f"in{k}.bin" for k in range(len(inputs))]
    outs = [tmp / f"out{k}.bin" for k in range(len(outputs))]
    for path, x in zip(ins, inputs, strict=True):
        path.write_bytes(np.ascontiguousarray(x).tobytes())
    result = subprocess.run(
        [str(exe), *map(str, ins), *map(str, outs)],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    return result, [
        np.frombuffer(p.read_bytes(), dtype=d).reshape(s) if p.exists() else None
        for p, (s, d) in zip(outs, outputs, strict=True)
    ]


def check(got: np.ndarray | None, want: np.ndarray) -> None:
    assert got is not None and got.shape == want.shape and got.dtype == want.dtype
    if want.dtype.kind == "f":
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    else:
        np.testing.assert_array_equal(got, want)


def test_u1_library_defines_the_pools(tmp_path: Path) -> None:
    text, inputs = int8_convnet(seed=1)
    library = write_library(compile_model(text, "my_model"), tmp_path / "my_model")
    m = library.interface
    assert [(p.name, p.user) for p in m.pools] == [
        ("global_workspace", False),
        ("global_const", False),
    ]
    assert "TVMWorkspaces_my_model" not in library.files["tvmgen_my_model.h"]
    exe = build_app(tmp_path, "u1_app.c", {"my_model": library})
    result, (got,) = run_app(exe, tmp_path, inputs, [((1, 5), np.dtype(np.int8))])
    assert result.returncode == 0, result.stderr
    check(got, evaluate(load(text), inputs)[0])


def test_u2_two_models_share_one_workspace(tmp_path: Path) -> None:
    models = {"my_model_1": int8_convnet(seed=2), "my_model_2": float_mlp(seed=2)}
    libraries = {
        name: write_library(
            compile_model(text, name, "sram:workspace"),
            tmp_path / name,
            user_pools=["sram"],
        )
        for name, (text, _) in models.items()
    }
    for library in libraries.values():
        pools = {p.name: p for p in library.interface.pools}
        assert pools["sram"].user and pools["sram"].size > 0
        assert not pools["global_const"].user  # parameters stay in the library
    sizes = {n: lib.interface.pools[0].size for n, lib in libraries.items()}
    assert (
        sizes["my_model_1"] != sizes["my_model_2"]
    )  # the poisoning in the app matters
    exe = build_app(tmp_path, "u2_app.c", libraries)
    inputs = [models["my_model_1"][1][0], models["my_model_2"][1][0]]
    result, got = run_app(
        exe,
        tmp_path,
        inputs,
        [((1, 5), np.dtype(np.int8)), ((1, 4), np.dtype(np.float32))],
    )
    assert result.returncode == 0, result.stderr
    for (text, model_inputs), g in zip(models.values(), got, strict=True):
        check(g, evaluate(load(text), model_inputs)[0])


U3_POOLS = "dtcm:workspace:64,sram:workspace,itcm:constant:256,flash:constant"


@pytest.fixture(scope="module")
def u3_library(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[Path, CLibrary, str, list[np.ndarray]]:
    tmp = tmp_path_factory.mktemp("u3")
    text, inputs = int8_convnet(seed=3)
    library = write_library(
        compile_model(text, "my_model", U3_POOLS),
        tmp / "my_model",
        user_pools=["dtcm", "sram", "itcm", "flash"],
    )
    return tmp, library, text, inputs


def test_u3_pools_pinned_by_the_application(u3_library) -> None:
    tmp, library, text, inputs = u3_library
    pools = {p.name: p for p in library.interface.pools}
    assert list(pools) == ["dtcm", "sram", "itcm", "flash"]
    assert all(
        p.user and p.size > 0 for p in pools.values()
    )  # the fallback used every pool
    assert pools["dtcm"].size <= 64 and pools["itcm"].size <= 256
    assert (
        "#define TVM_MY_MODEL_FLASH_PARAMETER_DATA {"
        in library.files["tvmgen_my_model_parameters.h"]
    )
    exe = build_app(tmp, "u3_app.c", {"my_model": library})
    result, (got,) = run_app(exe, tmp, inputs, [((1, 5), np.dtype(np.int8))])
    assert result.returncode == 0, result.stderr
    check(got, evaluate(load(text), inputs)[0])


def test_u3_undersized_pool_is_caught(u3_library) -> None:
    tmp, library, _, inputs = u3_library
    exe = build_app(tmp, "u3_app.c", {"my_model": library}, ["-DWORKSPACE_SLACK=-16"])
    result, _ = run_app(exe, tmp, inputs, [((1, 5), np.dtype(np.int8))])
    assert result.returncode != 0
    assert "AddressSanitizer" in result.stderr


def test_user_command_builds_and_runs(tmp_path: Path) -> None:
    """``usmp-opt input.mlir -p aot-lower-main,usmp,convert-to-emitc -t c``, as
    the user types it, is one C file that builds and computes the model."""
    source = Path(__file__).parent / "filecheck" / "lowering" / "end_to_end.mlir"
    command = [
        "usmp-opt",
        str(source),
        "-p",
        "aot-lower-main,usmp,convert-to-emitc",
        "-t",
        "c",
    ]
    emitted = subprocess.run(command, capture_output=True, text=True, check=False)
    assert emitted.returncode == 0, emitted.stderr
    model_c = tmp_path / "model.c"
    model_c.write_text(emitted.stdout)
    interface = build_library(
        run_pipeline(load(source.read_text()), "aot-lower-main,usmp")
    )
    (tmp_path / "main.c").write_text(
        harness(interface.interface).replace(
            "#include <stdio.h>", '#include <stdio.h>\n#include "model.c"', 1
        )
    )
    exe = tmp_path / "model"
    built = subprocess.run(
        ["gcc", *FLAGS, str(tmp_path / "main.c"), "-o", str(exe), "-lm"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert built.returncode == 0, built.stderr
    x = np.array([[0.5, -3.0, 1.0, -4.5, 2.0, 1.0, 3.5, 9.0]], dtype=np.float32)
    result, (got,) = run_app(exe, tmp_path, [x], [((1, 1), np.dtype(np.float32))])
    assert result.returncode == 0, result.stderr
    w = np.array([1, 2, 3, 4, -1, -2, -3, -4], dtype=np.float32)
    check(got, np.maximum(x + w, 0).sum(keepdims=True).astype(np.float32))
