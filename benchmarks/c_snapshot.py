"""Snapshot the C generated for every supported shared model, or compare two.

    python benchmarks/c_snapshot.py DIR            # compile every model into DIR
    python benchmarks/c_snapshot.py DIR --compare OLD

Writes ``DIR/<model>/`` (``usmp-compile`` output, run in separate processes,
two at a time) and prints one line per model with the SHA-256 of its C
sources. With ``--compare OLD`` it also diffs the C sources against a
snapshot taken earlier and exits 1 if any differ: refactorings that must not
change the generated C (e.g. moving a pass onto rewrite patterns) are checked
with it.
"""

from __future__ import annotations

import argparse
import hashlib
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from usmp.testing.shared_models import MODELS_DIR, SUPPORTED_MODELS


def _compile(model: str, out: Path) -> tuple[str, str]:
    target = out / Path(model).stem
    proc = subprocess.run(
        [sys.executable, "-m", "usmp.tools.usmp_compile", str(MODELS_DIR / model)]
        + ["-o", str(target), "--quiet"],
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        return model, f"FAILED: {proc.stderr.strip()}"
    return model, _digest(target)


def _c_sources(root: Path) -> list[Path]:
    return sorted(p for p in (root / "codegen").rglob("*") if p.suffix in (".c", ".h"))


def _digest(root: Path) -> str:
    h = hashlib.sha256()
    for path in _c_sources(root):
        h.update(path.relative_to(root).as_posix().encode())
        h.update(path.read_bytes())
    return h.hexdigest()[:16]


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("out", type=Path)
    p.add_argument("--compare", type=Path, help="an earlier snapshot directory")
    p.add_argument("--jobs", type=int, default=2)
    args = p.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    with ThreadPoolExecutor(args.jobs) as pool:
        results = list(pool.map(lambda m: _compile(m, args.out), SUPPORTED_MODELS))
    status = 0
    for model, digest in results:
        line = f"{model:60} {digest}"
        if args.compare is not None and not digest.startswith("FAILED"):
            old = args.compare / Path(model).stem
            same = old.exists() and _digest(old) == digest
            line += "  same" if same else "  DIFFERENT"
            status |= not same
        status |= digest.startswith("FAILED")
        print(line)
    return status


if __name__ == "__main__":
    sys.exit(main())
