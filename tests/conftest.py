import os
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

# make `tests.*` helpers importable when pytest runs from the repository root
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

# the console scripts (usmp-opt, usmp-compile, ...) live next to the Python
# that runs the tests (the project's venv), whether or not it is activated
os.environ["PATH"] = (
    f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
)

# usmp-compile verifies the IR its last pass produced only when asked
# (compile_driver.verifies_final): the suite asks, in process and in the
# subprocesses it starts, so a lowering that builds an invalid op fails here
os.environ.setdefault("USMP_VERIFY_FINAL", "1")


@pytest.fixture(scope="session")
def compiled_model(
    tmp_path_factory: pytest.TempPathFactory,
) -> Callable[..., Path]:
    """``compiled_model(name, *flags)``: the output folder of ``usmp-compile``
    for the shared model ``name`` with ``flags``, compiled once per session
    (``test_models_compile``'s memory bar and ``test_compile_pipeline`` read
    the same outputs)."""
    from usmp.testing.reproduce import compile_with_usmp_compile
    from usmp.testing.shared_models import MODELS_DIR

    root = tmp_path_factory.mktemp("compiled")
    outputs: dict[tuple[str, tuple[str, ...]], Path] = {}

    def compiled(name: str, *flags: str) -> Path:
        key = (name, flags)
        if key not in outputs:
            out = root / f"{len(outputs)}-{Path(name).stem}"
            compile_with_usmp_compile(MODELS_DIR / name, flags, out)
            outputs[key] = out
        return outputs[key]

    return compiled
