import fcntl
import hashlib
import os
import shutil
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
    (``test_models_compile``'s memory bar, ``test_compile_pipeline`` and
    ``test_lower_ops_dsp`` read the same outputs). Once for all the
    pytest-xdist workers: the folders are in the session's common temporary
    folder, and a worker that needs one another worker is compiling waits
    for it (a lock file per output) instead of compiling it again."""
    from usmp.testing.reproduce import compile_with_usmp_compile
    from usmp.testing.shared_models import MODELS_DIR

    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent  # the session's folder, above each worker's own
    root = root / "compiled"
    root.mkdir(exist_ok=True)

    def compiled(name: str, *flags: str) -> Path:
        key = hashlib.sha256(repr((name, flags)).encode()).hexdigest()[:16]
        out = root / f"{Path(name).stem}-{key}"
        done = out / ".compiled"
        with (root / f"{out.name}.lock").open("w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
            if not done.exists():
                shutil.rmtree(out, ignore_errors=True)  # a failed attempt's
                compile_with_usmp_compile(MODELS_DIR / name, flags, out)
                done.write_text(f"{name} {' '.join(flags)}\n")
        return out

    return compiled
