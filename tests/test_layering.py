"""Which part of ``usmp`` may import which: the table, checked twice.

``ALLOWED`` below is the rule. Each part is a sub-package (``dialects/`` is
``usmp.dialects``, ...) except three groups of modules of the package root:
``core`` (``usmp.diagnostics``, ``usmp.parsing``, ``usmp.printing``,
``usmp.output_files``, ``usmp.tflite_tables``: what the whole compiler
shares), ``api`` (the Python API, ``usmp.api``) and ``root``
(``usmp/__init__.py``, which loads the API lazily).

Why the table is what it is:

* ``planning`` is plain typed Python (no xDSL, nothing of usmp), so its
  algorithms are testable alone; anyone may use it.
* ``dialects`` import xDSL only: the IR is the bottom of the compiler.
* ``core`` is the compiler's shared bottom above the IR: located
  diagnostics, the parser with its input checks, the exact printer, atomic
  output files, and TFLite's literal tables (data the compiler and the
  oracle both read).
* ``frontend`` (the TFLite importer) builds relay IR: dialects and core.
* ``lowering`` (kernels, emitc patterns, the C printer) reads the IR and may
  use the planning data model; ``passes`` wrap analyses and lowering into
  registered passes. Neither imports the frontend or the oracle, and the
  lowering imports no pass.
* ``oracle`` (the numpy reference) reads relay and tir IR, nothing the
  compiler computes: DESIGN's "the reference stays independent". The
  compiler's numeric tables are re-derived by it (``tests/
  test_independent_tables.py``).
* ``tools`` compose the compiler into commands: anything but the
  validation helpers (``testing``), the reference (``oracle``: a command
  never needs it, so the shipped compiler runs without it) and the API.
  That includes usmp-compile's pipeline (``compile_options``,
  ``compile_pipeline``, ``compile_driver``, ``compile_report``), which the
  API and ``testing.compare_tflm`` run too, and ``host_run`` (building and
  running C on the host for ``Library.run``; ``testing`` reuses it, not the
  other way round).
* ``testing`` validates everything (runs the C, TFLite Micro, the fuzzer):
  it may import anything but the API, and nothing else imports it.
* ``api`` is the top: tools and below.

Checked (1) statically: every ``import usmp.X`` / ``from usmp.X import`` of
every module of a part, at any depth (function-level and ``TYPE_CHECKING``
imports count), names a part its row allows; (2) in a fresh interpreter per
part: importing every module of the part loads only parts its row allows
(directly or through them), and ``planning`` / ``dialects`` load no xDSL /
no ``usmp`` beyond themselves.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

PACKAGES = (
    "planning",
    "dialects",
    "frontend",
    "oracle",
    "lowering",
    "passes",
    "tools",
    "testing",
)
CORE = ("diagnostics", "parsing", "printing", "output_files", "tflite_tables")
"""Modules of the package root that form ``core``."""

ALLOWED: dict[str, frozenset[str]] = {
    "planning": frozenset(),
    "dialects": frozenset(),
    "core": frozenset({"dialects"}),
    "frontend": frozenset({"dialects", "core"}),
    "oracle": frozenset({"dialects", "core"}),
    "lowering": frozenset({"dialects", "core", "planning"}),
    "passes": frozenset({"dialects", "core", "planning", "lowering"}),
    "tools": frozenset(
        {"dialects", "core", "planning", "lowering", "passes", "frontend"}
    ),
    "testing": frozenset(
        {
            "dialects",
            "core",
            "planning",
            "lowering",
            "passes",
            "frontend",
            "oracle",
            "tools",
        }
    ),
    "api": frozenset(
        {"dialects", "core", "planning", "lowering", "passes", "frontend", "tools"}
    ),
    "root": frozenset({"api"}),
}
"""Part -> the parts its modules may import directly."""

KNOWN_EXCEPTIONS: frozenset[tuple[str, str]] = frozenset()
"""(part, imported part) edges that break the table today, each with why
(none: Library.run builds and runs the C with ``usmp.tools.host_run``)."""

FORBIDDEN_THIRD_PARTY: dict[str, tuple[str, ...]] = {"planning": ("xdsl",)}
"""Part -> top-level packages its modules must not load at all."""


def part_of_module(name: str) -> str | None:
    """The part of ``usmp`` a module belongs to (``None``: not usmp's)."""
    parts = name.split(".")
    if parts[0] != "usmp":
        return None
    if len(parts) == 1:
        return "root"
    if parts[1] in PACKAGES:
        return parts[1]
    if parts[1] in CORE:
        return "core"
    if parts[1] == "api":
        return "api"
    raise AssertionError(f"{name}: a module of usmp that no part of the table owns")


def part_files() -> dict[str, list[tuple[str, Path]]]:
    """Part -> (module name, file) of every module it has."""
    files: dict[str, list[tuple[str, Path]]] = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).glob("*.py")):
            name = f"usmp.{package}" + (
                "" if path.stem == "__init__" else f".{path.stem}"
            )
            files.setdefault(package, []).append((name, path))
    for path in sorted((ROOT / "usmp").glob("*.py")):
        name = "usmp" if path.stem == "__init__" else f"usmp.{path.stem}"
        part = part_of_module(name)
        assert part is not None
        files.setdefault(part, []).append((name, path))
    return files


def imported_modules(module: str, path: Path) -> set[str]:
    """Every usmp module ``path`` imports, at any depth of the file."""
    found: set[str] = set()
    package = module if path.stem == "__init__" else module.rsplit(".", 1)[0]
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                target = ".".join([*base, *([node.module] if node.module else [])])
            else:
                target = node.module or ""
            found.add(target)
            # ``from usmp import api``: a module, not a name of the package
            found.update(f"{target}.{a.name}" for a in node.names if target == "usmp")
    return {m for m in found if m == "usmp" or m.startswith("usmp.")}


def closure(part: str) -> frozenset[str]:
    """The parts ``part`` may load: its row, transitively (with the known
    exceptions)."""
    seen: set[str] = set()
    stack = [part]
    while stack:
        current = stack.pop()
        for nxt in ALLOWED[current] | {b for a, b in KNOWN_EXCEPTIONS if a == current}:
            if nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)
    return frozenset(seen)


def test_every_part_has_a_row() -> None:
    parts = set(part_files())
    assert parts == set(ALLOWED), "parts without a row (or rows without a part)"
    for part, allowed in ALLOWED.items():
        assert allowed <= set(ALLOWED), f"{part}: unknown parts in its row"


def test_the_table_is_acyclic() -> None:
    for part in ALLOWED:
        assert part not in closure(part), f"{part} may import itself through others"


@pytest.mark.parametrize("part", sorted(ALLOWED))
def test_imports_follow_the_table(part: str) -> None:
    """Static: every import statement of every module of ``part``."""
    bad: list[str] = []
    for module, path in part_files()[part]:
        for target in sorted(imported_modules(module, path)):
            to = part_of_module(target)
            if to is None or to == part or to in ALLOWED[part]:
                continue
            if (part, to) in KNOWN_EXCEPTIONS:
                continue
            bad.append(f"{path.relative_to(ROOT)} imports {target} ({part} -> {to})")
    assert not bad, "imports the layering table forbids:\n" + "\n".join(bad)


def test_known_exceptions_are_still_needed() -> None:
    """A known exception nobody needs any more must leave the table."""
    for part, to in KNOWN_EXCEPTIONS:
        used = any(
            part_of_module(target) == to
            for module, path in part_files()[part]
            for target in imported_modules(module, path)
        )
        assert used, f"({part!r}, {to!r}) is no longer imported: remove the exception"


_LOAD_ALL = """
import importlib, json, sys
for name in {modules!r}:
    importlib.import_module(name)
print(json.dumps(sorted(sys.modules)))
"""


def loaded_by_a_fresh_interpreter(part: str) -> list[str]:
    """Every module ``sys.modules`` holds after a fresh interpreter imported
    every module of ``part``."""
    modules = [m for m, _ in part_files()[part]]
    process = subprocess.run(
        [sys.executable, "-c", _LOAD_ALL.format(modules=modules)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert process.returncode == 0, f"importing {part} failed:\n{process.stderr}"
    return json.loads(process.stdout)


@pytest.mark.parametrize("part", sorted(ALLOWED))
def test_fresh_interpreter_loads_only_allowed_parts(part: str) -> None:
    """Dynamic: what importing the part really loads, transitively."""
    modules = loaded_by_a_fresh_interpreter(part)
    reachable = closure(part) | {part, "root"}  # `usmp` runs before any of it
    bad = sorted(m for m in modules if (p := part_of_module(m)) and p not in reachable)
    assert not bad, f"importing {part} loads modules of other parts: {bad}"
    for forbidden in FORBIDDEN_THIRD_PARTY.get(part, ()):
        assert forbidden not in modules, f"importing {part} loads {forbidden}"


def test_the_check_sees_a_forbidden_import(tmp_path: Path) -> None:
    """The static check names a bad edge (the table is not vacuous)."""
    bad = tmp_path / "kernel.py"
    bad.write_text(
        "def f():\n    from usmp.oracle.kernels import conv2d\n    return conv2d\n"
    )
    targets = imported_modules("usmp.lowering.kernel", bad)
    assert targets == {"usmp.oracle.kernels"}
    assert part_of_module("usmp.oracle.kernels") not in ALLOWED["lowering"]
