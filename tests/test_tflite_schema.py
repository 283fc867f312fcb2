"""``tflite_schema``: the reader imports the ``tflite`` modules it uses, not
the package's ``__init__`` (all ~190), and ``tflite.<name>`` still reads as
after ``import tflite`` (in processes of their own: the suite's imported the
package in full already)."""

from __future__ import annotations

import subprocess
import sys

from usmp.testing.shared_models import MODELS_DIR

_NAMESPACE = (
    "import tflite\n"
    "print(sorted((k, getattr(v, '__module__', None) or getattr(v, '__name__', '')"
    ", getattr(v, '__qualname__', type(v).__name__)) for k, v in vars(tflite).items()"
    " if not k.startswith('__')))\n"
)


def _python(code: str) -> str:
    run = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    return run.stdout


def test_reading_a_model_runs_only_the_modules_it_uses() -> None:
    model = MODELS_DIR / "mlperf_tiny" / "kws_ref_model.tflite"
    out = _python(
        "import sys\n"
        "from pathlib import Path\n"
        "from usmp.frontend.tflite_reader import read_model_file\n"
        f"read_model_file(Path({str(model)!r}))\n"
        "import tflite\n"
        "loaded = [m for m in sys.modules if m.startswith('tflite.')]\n"
        "print(len(loaded), tflite.Model.__name__, tflite.Conv2DOptions.__name__)\n"
    )
    count, model_class, options_class = out.split()
    assert int(count) < 40
    # a module imported alone binds its class, as ``from tflite.X import *``
    assert (model_class, options_class) == ("Model", "Conv2DOptions")


def test_the_package_reads_as_after_import_tflite() -> None:
    """After the reader's imports, a name they did not bind (a builder
    function, ``__version__``) runs the package's ``__init__``: the package
    then holds what ``import tflite`` gives, bound to the same objects."""
    eager = _python(_NAMESPACE)
    deferred = _python(
        "from usmp.frontend.tflite_schema import schema_class\n"
        "schema_class('Model'); schema_class('SubGraph')\n"
        "import tflite\n"
        "assert tflite.Model is schema_class('Model')\n"
        "assert type(tflite).__name__ == '_DeferredPackage'\n"
        "assert callable(tflite.ModelStart)\n"
        "assert type(tflite).__name__ == 'module'\n" + _NAMESPACE
    )
    assert deferred == eager
    assert "ModelStart" in eager
