"""What ``usmp-compile``'s process pays before and around the compile (in
processes of their own: the suite's has imported everything already).

``usmp.tools.usmp_compile`` imports the compiler only inside its functions,
so ``cli`` turns the cyclic collector off before the imports run; a compile
imports no module it does not use (``subprocess`` only builds the native
planner, ``urllib``/``http`` came with ``xml.sax.saxutils``)."""

from __future__ import annotations

import os
import subprocess
import sys

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
    unused = ("subprocess", "urllib.request", "http.client", "xml.sax", "ctypes.util")
    out = _python(
        "import sys\n"
        "from usmp.tools.usmp_compile import main\n"
        f"assert main([{str(model)!r}, '-o', {str(tmp_path)!r} + '/o', '-q']) == 0\n"
        f"print(sorted(m for m in {unused!r} if m in sys.modules))\n",
        USMP_NATIVE_PLANNER="0",  # no first build of the planner (subprocess)
    )
    assert out.strip() == "[]"
