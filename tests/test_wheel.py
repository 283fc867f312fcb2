"""The wheel: ``pip wheel .`` builds one that, installed into a fresh venv,
gives working ``usmp-opt``, ``usmp-compile``, ``usmp-import-tflite``,
``usmp-tvmc`` and ``usmp.compile`` (issue 30, item 6).

Everything runs from the installed wheel, never from this checkout: the
commands run in a temporary folder, with no ``PYTHONPATH``, and the test
checks that ``usmp`` is imported from the new venv's site-packages.

How the venv gets its dependencies, fast and without a network: the new venv
is made ``--without-pip`` and the wheel is installed into it ``--no-deps`` by
the project venv's pip (``pip --python``); a ``.pth`` file in the new venv's
site-packages names the project venv's site-packages, so numpy, xdsl, tflite
... are the ones already installed. ``python -m venv --system-site-packages``
would not do: the dependencies are in the project venv, not in the system
Python. A ``.pth`` line that is a plain path only appends that folder to
``sys.path``; the ``.pth`` files inside it are not run, so the project's own
editable install (its import hook onto this checkout) is not loaded, and the
new venv's own site-packages (the wheel) comes first. ``pip check``
then confirms the wheel's declared dependencies are all there.

The wheel is built from a copy of the checkout (no ``build/`` left over from
an earlier build can add files to it that the package list no longer names).
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
KWS = ROOT / "examples" / "kws_ref_model.tflite"
CHAIN = ROOT / "examples" / "chain.mlir"


@pytest.fixture(autouse=True)
def _build_tools() -> None:
    for tool in ("gcc", "make"):
        if shutil.which(tool) is None:
            pytest.fail(f"{tool} is required (scripts/setup.sh installs it)")


_IGNORED = shutil.ignore_patterns(
    ".venv",
    ".git",
    "build",
    "dist",
    "out",
    "Output",
    "__pycache__",
    "*.egg-info",
    ".pytest_cache",
    ".ruff_cache",
    ".lit_test_times.txt",
)


def _run(
    cmd: list[str], cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        cmd, cwd=cwd, env=env, capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, (
        f"{' '.join(cmd)} failed ({result.returncode}):\n"
        f"{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
    )
    return result


def _package_files() -> dict[str, Path]:
    """Wheel path -> source file, for every module and C source of the
    packages ``pyproject.toml`` maps (``usmp.tools`` is ``tools/``, ...)."""
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+

    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    expected: dict[str, Path] = {}
    for package, folder in config["package-dir"].items():
        for path in sorted((ROOT / folder).iterdir()):
            if path.is_file() and path.suffix in (".py", ".c"):
                expected[f"{package.replace('.', '/')}/{path.name}"] = path
    return expected


def build_wheel(source: Path, dist: Path) -> Path:
    _run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            str(source),
            "--no-deps",
            "-q",
            "-w",
            str(dist),
        ],
        cwd=dist.parent,
    )
    (wheel,) = dist.glob("usmp_opt-*.whl")
    return wheel


def install_into_fresh_venv(wheel: Path, venv: Path) -> Path:
    """A new venv holding only the wheel; its dependencies are the project
    venv's (see the module doc). Returns the venv's ``bin``."""
    _run([sys.executable, "-m", "venv", "--without-pip", str(venv)], cwd=venv.parent)
    bin_dir = venv / "bin"
    python = bin_dir / "python"
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    (Path(site) / "_project_deps.pth").write_text(sysconfig.get_path("purelib") + "\n")
    _run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(python),
            "install",
            "-q",
            "--no-deps",
            "--no-index",
            str(wheel),
        ],
        cwd=venv.parent,
    )
    return bin_dir


def test_wheel_installs_and_compiles_kws(tmp_path: Path) -> None:
    source = tmp_path / "source"
    shutil.copytree(ROOT, source, symlinks=True, ignore=_IGNORED)
    wheel = build_wheel(source, tmp_path / "dist")

    # every module and C source of every mapped package is in the wheel
    names = set(zipfile.ZipFile(wheel).namelist())
    missing = sorted(set(_package_files()) - names)
    assert not missing, f"not in the wheel: {missing}"
    assert not [n for n in names if n.split("/")[0] in ("dialects", "tools")]

    bin_dir = install_into_fresh_venv(wheel, tmp_path / "venv")
    work = tmp_path / "work"
    work.mkdir()
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")
    }
    env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
    # a cache of its own: the C search is compiled from the wheel's copy
    env["XDG_CACHE_HOME"] = str(tmp_path / "cache")
    env["TMPDIR"] = str(tmp_path)

    # the wheel's dependencies are all found (by the project's pip: the new
    # venv has none)
    check = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(bin_dir / "python"), "check"],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert "usmp-opt" not in check.stdout, check.stdout

    _run([str(bin_dir / "usmp-compile"), str(KWS), "-o", "kws"], work, env)
    _run(["make", "-s", "-C", "kws", "example"], work, env)
    (work / "in.bin").write_bytes(bytes(490))
    ran = _run([str(work / "kws/build/tvmgen_default_example"), "in.bin"], work, env)
    assert ran.stdout.strip()

    api = _run(
        [
            str(bin_dir / "python"),
            "-c",
            "import sys, usmp, usmp.planning.minimalloc_native as m\n"
            "import usmp.tools, usmp.dialects\n"
            "for mod in (usmp, usmp.tools, usmp.dialects):\n"
            f"    assert mod.__file__.startswith({str(tmp_path / 'venv')!r}), mod\n"
            f"checkout = [p for p in sys.path if p.startswith({str(ROOT)!r})\n"
            f"            and not p.startswith({str(ROOT / '.venv')!r})]\n"
            "assert not checkout, checkout\n"
            f"lib = usmp.compile({str(KWS)!r}, output_dir='api')\n"
            "print(usmp.__file__, sorted(lib.files)[:1])\n"
            "assert m.load() is not None, 'the C search did not build'\n",
        ],
        work,
        env,
    )
    assert str(tmp_path / "venv") in api.stdout, api.stdout
    assert list((tmp_path / "cache" / "usmp-opt").glob("minimalloc_search-*.so"))
    for c_file in sorted((work / "api" / "codegen" / "host" / "src").glob("*.c")):
        _run(
            [
                "gcc",
                "-std=c99",
                "-O0",
                "-c",
                "-Iapi/codegen/host/include",
                str(c_file),
                "-o",
                os.devnull,
            ],
            work,
            env,
        )

    opt = _run(
        [str(bin_dir / "usmp-opt"), str(CHAIN), "-p", "aot-lower-main,usmp"],
        work,
        env,
    )
    assert "tir.pools" in opt.stdout
    imported = _run([str(bin_dir / "usmp-import-tflite"), str(KWS)], work, env)
    assert "relay.constant" in imported.stdout
    _run(
        [
            str(bin_dir / "usmp-tvmc"),
            "compile",
            str(KWS),
            "--target",
            "c",
            "-o",
            "kws.tar",
        ],
        work,
        env,
    )
    assert (work / "kws.tar").stat().st_size > 0

    # README's quick start: our C next to TFLite Micro (its `tflm` extra)
    if importlib.util.find_spec("tflite_micro") is not None:
        compared = _run(
            [str(bin_dir / "python"), "-m", "usmp.testing.compare_tflm", str(KWS)],
            work,
            env,
        )
        assert "matches TFLite Micro" in compared.stdout
