"""Output files of the tools: whole or absent, where asked, reproducible.

* ``-o FILE`` of ``usmp-opt`` and ``usmp-import-tflite`` and the directory of
  ``usmp-compile`` are written only when the run succeeds: a failed run
  leaves no empty or partial file (and an earlier good output unchanged);
* ``usmp{report=DIR}`` with an existing directory writes inside it;
* ``usmp-compile`` writes the same bytes on every run (no wall-clock times
  in ``metadata.json``), and removes files an earlier run wrote that this one
  does not.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from usmp.testing.shared_models import MODELS_DIR
from usmp.tools import import_tflite
from usmp.tools.usmp_compile import main as usmp_compile

HELLO = MODELS_DIR / "tflite_micro/hello_world_int8.tflite"
REFUSED = MODELS_DIR / "tflite_micro/person_detect_vela.tflite"  # refused: Ethos-U
CHAIN = Path(__file__).parent.parent / "examples" / "chain.mlir"


def tree(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def usmp_opt(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["usmp-opt", *args], capture_output=True, text=True, check=False
    )


@pytest.mark.parametrize(
    "model, flags",
    [
        (HELLO, []),
        (CHAIN, ["--usmp-workspace-pools", "sram,for", "--use-workspace-io"]),
    ],
    ids=["hello_world_int8", "chain"],
)
def test_usmp_compile_is_byte_identical_run_to_run(
    tmp_path: Path, model: Path, flags: list[str]
) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    assert usmp_compile([str(model), "-o", str(first), "-q", *flags]) == 0
    assert usmp_compile([str(model), "-o", str(second), "-q", *flags]) == 0
    files = tree(first)
    assert "metadata.json" in files and "codegen/host/src/tvmgen_default.c" in files
    assert files == tree(second)
    assert b"compile_time" not in files["metadata.json"]
    # and again into the same directory: nothing changes
    assert usmp_compile([str(model), "-o", str(first), "-q", *flags]) == 0
    assert tree(first) == files
    assert sorted(p.name for p in tmp_path.iterdir()) == ["first", "second"]


def test_failed_usmp_compile_leaves_no_output(tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert usmp_compile([str(REFUSED), "-o", str(out), "-q"]) == 1
    assert list(tmp_path.iterdir()) == []  # no output, no staging folder
    assert usmp_compile([str(HELLO), "-o", str(out), "-q"]) == 0
    before = tree(out)
    assert usmp_compile([str(REFUSED), "-o", str(out), "-q"]) == 1
    assert tree(out) == before
    assert [p.name for p in tmp_path.iterdir()] == ["out"]


def test_usmp_compile_removes_files_of_an_earlier_run(tmp_path: Path) -> None:
    out = tmp_path / "out"
    pools = ["--usmp-workspace-pools", "sram"]
    assert usmp_compile([str(CHAIN), "-o", str(out), "-q", *pools]) == 0
    assert (out / "memory/plan.sram.svg").is_file()
    (out / "notes.txt").write_text("mine")
    assert usmp_compile([str(CHAIN), "-o", str(out), "-q"]) == 0
    assert not (out / "memory/plan.sram.svg").exists()
    assert (out / "memory/plan.global_workspace.svg").is_file()
    assert (out / "notes.txt").read_text() == "mine"  # not ours: kept


def test_usmp_opt_output_file_only_on_success(tmp_path: Path) -> None:
    out = tmp_path / "out.mlir"
    failing = usmp_opt(
        str(CHAIN), "-p", 'aot-lower-main,usmp{pools="x:workspace:4"}', "-o", str(out)
    )
    assert failing.returncode == 1 and "fits in no candidate pool" in failing.stderr
    assert list(tmp_path.iterdir()) == []
    ok = usmp_opt(str(CHAIN), "-p", "aot-lower-main,usmp", "-o", str(out))
    assert ok.returncode == 0, ok.stderr
    good = out.read_text()
    assert "tir.pools" in good
    failing = usmp_opt(
        str(CHAIN), "-p", 'aot-lower-main,usmp{pools="x:workspace:4"}', "-o", str(out)
    )
    assert failing.returncode == 1
    assert out.read_text() == good
    assert [p.name for p in tmp_path.iterdir()] == ["out.mlir"]


def test_import_tflite_output_file_only_on_success(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "model.mlir"
    assert import_tflite.main([str(REFUSED), "-o", str(out)]) == 1
    assert list(tmp_path.iterdir()) == []

    def fail(*args: object, **kwargs: object) -> None:
        args[1].write("builtin.module {")  # pyright: ignore[reportAttributeAccessIssue]
        raise RuntimeError("disk full")

    monkeypatch.setattr("usmp.frontend.printing.print_module", fail)
    with pytest.raises(RuntimeError, match="disk full"):
        import_tflite.main([str(HELLO), "-o", str(out)])
    assert list(tmp_path.iterdir()) == []
    monkeypatch.undo()
    assert import_tflite.main([str(HELLO), "-o", str(out)]) == 0
    assert out.read_text().startswith("builtin.module")


def test_usmp_report_into_an_existing_directory(tmp_path: Path) -> None:
    report = tmp_path / "report"
    report.mkdir()
    done = usmp_opt(str(CHAIN), "-p", f'aot-lower-main,usmp{{report="{report}"}}')
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in report.iterdir()) == [
        "plan.global_const.svg",
        "plan.global_workspace.svg",
        "plan.json",
        "summary.csv",
        "summary.txt",
    ]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report"]


@pytest.mark.parametrize("tool", ["usmp-opt", "usmp-import-tflite"])
def test_output_into_a_fifo_stays_a_fifo(tool: str, tmp_path: Path) -> None:
    """``-o`` naming something that is not a regular file (``/dev/null``, a
    FIFO) is written in place: renaming the finished temporary file over it
    replaced the device with a file (as root, ``-o /dev/null`` broke
    /dev/null for the whole machine). A FIFO stands in for the device."""
    import os
    import stat
    import threading

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    read: list[bytes] = []
    reader = threading.Thread(
        target=lambda: read.append(fifo.read_bytes()), daemon=True
    )
    reader.start()
    source = str(CHAIN) if tool == "usmp-opt" else str(HELLO)
    run = subprocess.run(
        [tool, source, "-o", str(fifo)], capture_output=True, text=True, timeout=120
    )
    reader.join(timeout=30)
    if reader.is_alive():  # the rename left the reader waiting: unblock it
        with (
            open(fifo, "wb")
            if stat.S_ISFIFO(fifo.stat().st_mode)
            else open(os.devnull, "wb")
        ):
            pass
    assert run.returncode == 0, run.stderr
    assert stat.S_ISFIFO(fifo.stat().st_mode), "the FIFO was replaced by a file"
    assert read and b"func.func" in read[0]
