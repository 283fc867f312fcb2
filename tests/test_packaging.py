"""The distribution installs one import package, ``usmp``; the repository's
top-level folders (``dialects/``, ``passes/``, ...) never leak into
site-packages under their own names."""

import subprocess
import sys
from pathlib import Path


def _python(code: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
    )


def test_usmp_subpackages_import(tmp_path: Path) -> None:
    result = _python(
        "import usmp.dialects, usmp.passes, usmp.lowering, usmp.planning, "
        "usmp.oracle, usmp.frontend, usmp.tools",
        tmp_path,
    )
    assert result.returncode == 0, result.stderr


def test_top_level_folders_are_not_packages(tmp_path: Path) -> None:
    for name in ("dialects", "passes", "lowering", "tools", "planning"):
        result = _python(f"import {name}", tmp_path)
        assert result.returncode != 0, f"'import {name}' should fail after install"
        assert "ModuleNotFoundError" in result.stderr


def test_importing_dialects_registers_nothing(tmp_path: Path) -> None:
    """Dialects are lazy factories: importing the package loads no dialect."""
    result = _python(
        "import sys, usmp.dialects; "
        "d = usmp.dialects.get_all_dialects(); "
        "assert 'usmp.dialects.relay' not in sys.modules; "
        "assert d['relay']().name == 'relay'",
        tmp_path,
    )
    assert result.returncode == 0, result.stderr


def test_tir_with_devices_parses_without_relay(tmp_path: Path) -> None:
    """The virtual device is its own dialect: tir IR recording devices parses
    and verifies without loading (or importing) the relay dialect."""
    source = (
        "func.func private @op(memref<4xi8>) attributes {tir.prim_func}\n"
        "func.func @main(%a: memref<4xi8>) attributes {tir.prim_func} {\n"
        '  tir.call @op(%a) {tir.virtual_device = #device.virtual_device<"cpu", 0,'
        ' target = "c">} : (memref<4xi8>) -> ()\n'
        "  func.return\n"
        "}\n"
    )
    result = _python(
        "import sys; from xdsl.parser import Parser; "
        "from usmp.dialects import new_context; "
        f"Parser(new_context(), {source!r}).parse_module().verify(); "
        "assert 'usmp.dialects.relay' not in sys.modules, 'relay was loaded'",
        tmp_path,
    )
    assert result.returncode == 0, result.stderr
