"""What ``usmp-compile``'s process pays before and around the compile (in
processes of their own: the suite's has imported everything already).

``usmp.tools.usmp_compile`` imports the compiler only inside its functions,
so ``cli`` turns the cyclic collector off before the imports run; a compile
imports no module it does not use (``subprocess`` only builds the native
planner, ``urllib``/``http`` came with ``xml.sax.saxutils``, ``hashlib``
loads OpenSSL); the commands load
NumPy with one BLAS thread (``usmp.tools.blas_threads``)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from usmp.testing.format_spy import FORMAT_SPY
from usmp.testing.shared_models import MODELS_DIR


def _python(code: str, **env: str) -> str:
    run = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, **env},
    )
    return run.stdout


def test_the_command_module_imports_no_compiler() -> None:
    loaded = _python(
        "import sys\n"
        "import usmp.tools.usmp_compile\n"
        "print(sorted(m for m in sys.modules if m.startswith(('usmp.', 'xdsl', "
        "'numpy'))))\n"
    )
    assert loaded.strip() == "['usmp.tools', 'usmp.tools.usmp_compile']"


def test_cli_pauses_the_collector_before_the_imports() -> None:
    """``cli`` as the command runs it (``exit_process`` replaced, so the
    probe can print): the collector is off when the first compiler module
    is imported."""
    out = _python(
        "import builtins, gc, sys\n"
        "import usmp.tools.usmp_compile as uc\n"
        "import usmp.tools.process_exit as pe\n"
        "seen = []\n"
        "real = builtins.__import__\n"
        "def spy(name, *a, **k):\n"
        "    if name.startswith('usmp.tools.compile') and not seen:\n"
        "        seen.append(gc.isenabled())\n"
        "    return real(name, *a, **k)\n"
        "builtins.__import__ = spy\n"
        "pe.exit_process = lambda status: print(seen, status)\n"
        "sys.argv = ['usmp-compile', '--help']\n"
        "uc.cli()\n"
    )
    assert out.strip().splitlines()[-1] == "[False] 0"


def test_a_compile_imports_only_what_it_uses(tmp_path: object) -> None:
    model = MODELS_DIR / "mlperf_tiny" / "kws_ref_model.tflite"
    unused = (
        "subprocess",
        "urllib.request",
        "http.client",
        "xml.sax",
        "ctypes.util",
        # OpenSSL: the native planner's library is named by a CRC-32
        "hashlib",
        # the exact planner (planning.algorithms imports it on first use)
        "usmp.planning.exact",
        # --profile-data's parser (usmp-compile catches only ProfileError)
        "usmp.tools.profile_table",
        # patching (--patch off): the options check only values given
        "usmp.passes.patch_stage",
        "usmp.passes.patch_stage_graph",
        "usmp.planning.patch_graph",
        "usmp.planning.patching",
        # the tflite package's __init__ (all its generated modules): the
        # reader imports the modules of the tables it reads (tflite_schema)
        "tflite.ZerosLikeOptions",
    )
    out = _python(
        "import sys\n"
        "from usmp.tools.usmp_compile import main\n"
        f"assert main([{str(model)!r}, '-o', {str(tmp_path)!r} + '/o', '-q']) == 0\n"
        f"print(sorted(m for m in {unused!r} if m in sys.modules))\n",
        USMP_NATIVE_PLANNER="0",  # no first build of the planner (subprocess)
    )
    assert out.strip() == "[]"


_HELLO = MODELS_DIR / "tflite_micro" / "hello_world_int8.tflite"
_CHAIN = Path(__file__).parent.parent / "examples" / "chain.mlir"


@pytest.mark.parametrize(
    ("command", "argv"),
    [
        ("usmp_compile", [str(_HELLO), "-o", "{tmp}/o", "-q"]),
        ("usmp_opt", [str(_CHAIN), "-p", "aot-lower-main,usmp", "-o", "{tmp}/o"]),
        ("import_tflite", [str(_HELLO), "-o", "{tmp}/o.mlir"]),
        ("tvmc", ["compile", "--target=c", str(_HELLO), "-o", "{tmp}/o.tar"]),
    ],
)
@pytest.mark.parametrize("user", [None, "3"])
def test_the_commands_start_numpy_with_one_blas_thread(
    command: str, argv: list[str], user: str | None, tmp_path: Path
) -> None:
    """``cli`` as the command runs it: when NumPy is first imported,
    ``OPENBLAS_NUM_THREADS`` is 1 (``usmp.tools.blas_threads``), or what
    the user set."""
    args = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    if user is not None:
        env["OPENBLAS_NUM_THREADS"] = user
    run = subprocess.run(
        [
            sys.executable,
            "-c",
            "import builtins, os, sys\n"
            f"import usmp.tools.{command} as tool\n"
            "import usmp.tools.process_exit as pe\n"
            "assert 'numpy' not in sys.modules\n"
            "seen = []\n"
            "real = builtins.__import__\n"
            "def spy(name, *a, **k):\n"
            "    if name.split('.')[0] == 'numpy' and not seen:\n"
            "        seen.append(os.environ.get('OPENBLAS_NUM_THREADS'))\n"
            "    return real(name, *a, **k)\n"
            "builtins.__import__ = spy\n"
            "tool.exit_process = pe.exit_process = lambda s: print(seen, s)\n"
            f"sys.argv = ['{command}', *{args!r}]\n"
            "tool.cli()\n",
        ],
        capture_output=True,
        text=True,
        check=True,
        env=env,
    )
    assert run.stdout.strip().splitlines()[-1] == f"[{(user or '1')!r}] 0"


def test_loading_the_native_planner_imports_no_hashlib() -> None:
    """The planner's C libraries are found (or built) under a name that
    carries the source's version without ``hashlib`` (OpenSSL)."""
    out = _python(
        "import sys\n"
        "from usmp.planning import minimalloc_native as mn\n"
        "from usmp.planning import placement_native as pn\n"
        "mn.load(), pn.load()\n"
        "print('hashlib' in sys.modules)\n"
    )
    assert out.strip() == "False"


def test_a_compile_compiles_only_the_formats_it_prints(tmp_path: Path) -> None:
    """``cli`` as the command runs it: each dataclass method source is
    compiled once (``compile_methods_once``: over a hundred reused); xDSL's
    assembly formats (``arith``,
    ``math``, ``memref``...) are not compiled when their dialects load
    (``compile_formats_on_first_use``); the compile prints only its relay
    module (``src/*.relay.mlir``), so only the formats of the ops printed
    there are compiled, and the files are those ``main`` writes in a
    process without the deferral."""
    model = MODELS_DIR / "mlperf_tiny" / "kws_ref_model.tflite"
    out = _python(
        "import sys\n" + FORMAT_SPY + "import usmp.tools.usmp_compile as uc\n"
        "import usmp.tools.process_exit as pe\n"
        "from usmp.tools import dataclass_code\n"
        "def done(s):\n"
        "    print(dataclass_code._compiled.cache_info().hits)\n"
        "    print(sorted(set(compiled)), s)\n"
        "pe.exit_process = done\n"
        f"sys.argv = ['usmp-compile', {str(model)!r}, '-o', "
        f"{str(tmp_path / 'cli')!r}, '-q']\n"
        "uc.cli()\n",
        USMP_NATIVE_PLANNER="0",
    )
    reused, last = out.strip().splitlines()[-2:]
    assert int(reused) > 100  # dataclass methods compiled once (compile_methods_once)
    names, status = last.rsplit(" ", 1)
    compiled = eval(names)  # noqa: S307 -- the probe's own printed list
    assert status == "0"
    printed = (tmp_path / "cli" / "src" / "kws_ref_model.relay.mlir").read_text()
    assert compiled and all(f" {n} " in printed for n in compiled), compiled
    assert "relay.conv2d" in compiled
    _python(
        "from usmp.tools.usmp_compile import main\n"
        f"assert main([{str(model)!r}, '-o', {str(tmp_path / 'main')!r}, '-q']) == 0\n",
        USMP_NATIVE_PLANNER="0",
    )
    for path in sorted((tmp_path / "main").rglob("*")):
        if path.is_file():
            other = tmp_path / "cli" / path.relative_to(tmp_path / "main")
            assert other.read_bytes() == path.read_bytes(), path
