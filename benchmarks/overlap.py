"""Workspace with and without allowed overlaps, against both lower bounds.

    python benchmarks/overlap.py [--models NAME ...] [--io | --no-io]

For each supported model in ``shared/models`` (``USMP_MODELS_DIR``), compiled
with ``usmp-compile --stop-after usmp`` (I/O in the workspace unless
``--no-io``, as the issue's targets count it):

* ``no-alias lb``: the liveness lower bound when every conflicting pair of
  buffers is disjoint (what placement alone can reach);
* ``finer lb``: the lower bound with the allowed overlaps (an operator's
  output over the input it reads for the last time, ``usmp_overlap``);
* ``ws``: the planned workspace with overlaps (the default), ``ws off``:
  with ``--usmp-overlap off``; ``saved``: what the overlaps save;
* ``reversed``: kernels run backwards to keep overlap chains from drifting
  (``usmp-kernel-direction``).

Nothing here is a test: it prints a table.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from usmp.testing.shared_models import MODELS_DIR, SUPPORTED_MODELS


def _compile(path: Path, out: Path, *extra: str) -> dict[str, Any] | None:
    from usmp.tools.usmp_compile import main

    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        status = main([str(path), "-o", str(out), "-q", "--stop-after", "usmp", *extra])
    if status != 0:
        print(f"{path.name}: {err.getvalue().strip()}", file=sys.stderr)
        return None
    return json.loads((out / "metadata.json").read_text())


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    p.add_argument("--models", nargs="*", default=SUPPORTED_MODELS)
    p.add_argument("--no-io", action="store_true", help="I/O outside the workspace")
    args = p.parse_args(argv)
    io_flag = () if args.no_io else ("--use-workspace-io",)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for k, name in enumerate(args.models):
            on, off = Path(tmp) / f"on{k}", Path(tmp) / f"off{k}"
            meta_on = _compile(MODELS_DIR / name, on, *io_flag, "--dump-ir")
            meta_off = _compile(
                MODELS_DIR / name, off, *io_flag, "--usmp-overlap", "off"
            )
            if meta_on is None or meta_off is None:
                continue
            s_on, s_off = meta_on["memory_summary"], meta_off["memory_summary"]
            reversed_count = sum(
                f.read_text().count("usmp.reversed") for f in on.glob("ir/*-usmp.mlir")
            )
            rows.append(
                (
                    Path(name).stem,
                    s_on["workspace_no_alias_bound_bytes"],
                    s_on["workspace_lower_bound_bytes"],
                    s_on["workspace_bytes"],
                    s_off["workspace_bytes"],
                    s_off["workspace_bytes"] - s_on["workspace_bytes"],
                    reversed_count,
                )
            )
    head = ("model", "no-alias lb", "finer lb", "ws", "ws off", "saved", "reversed")
    print("| " + " | ".join(head) + " |")
    print("|---|" + "--:|" * (len(head) - 1))
    for row in rows:
        print(
            "| " + " | ".join(f"{v:,}" if isinstance(v, int) else v for v in row) + " |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
