import os
import sys
from pathlib import Path

# make `tests.*` helpers importable when pytest runs from the repository root
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

# the console scripts (usmp-opt, usmp-compile, ...) live next to the Python
# that runs the tests (the project's venv), whether or not it is activated
os.environ["PATH"] = (
    f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
)
