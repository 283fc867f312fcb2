"""``usmp-opt`` reproduces ``usmp-compile`` (issue 25).

``reproduce(model, flags, work)`` compiles ``model`` with ``usmp-compile
FLAGS`` and again as a user of the MLIR tools would: ``usmp-import-tflite
--print-debuginfo MODEL | usmp-opt -p "$(usmp-compile MODEL FLAGS -o OUT
--dump-pipeline)" -t c-library`` (a relay ``.mlir`` model is read as it
is); it returns every difference between the two: each file of the library
and kit (``-t c-library``'s split-file stream against the files
``usmp-compile`` wrote) and each file of the memory report (``usmp``'s
``report`` option writes it under ``OUT/memory`` in both runs). Everything
runs in process (the commands' ``main`` functions).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from usmp.tools import import_tflite, usmp_compile, usmp_opt
from usmp.tools.firmware_kit import read_split_file


def compile_with_usmp_compile(model: Path, flags: Sequence[str], out: Path) -> None:
    status = usmp_compile.main([str(model), "-o", str(out), "-q", *flags])
    assert status == 0, f"usmp-compile {model.name} {' '.join(flags)} failed"


def reproduce(
    model: Path,
    flags: Sequence[str],
    work: Path,
    compiled: Path | None = None,
) -> list[str]:
    """The differences between ``usmp-compile``'s output and what the MLIR
    tools write for ``model`` and ``flags`` (module note); ``compiled``: an
    output of ``usmp-compile`` for them, if there is one already."""
    if compiled is None:
        compiled = work / "usmp-compile"
        compile_with_usmp_compile(model, flags, compiled)
    opt_out = work / "usmp-opt"
    _, options, _, _ = usmp_compile.parse_arguments([str(model), "-o", "x", *flags])
    pipeline = usmp_compile.dump_pipeline(options, str(opt_out))
    source = model
    if model.suffix != ".mlir":
        source = work / f"{model.stem}.mlir"
        argv = [str(model), "--print-debuginfo", "-o", str(source)]
        argv += [f"--custom-op={c.spelling}" for c in options.custom_ops]
        assert import_tflite.main(argv) == 0
    library = work / "library.txt"
    # usmp-compile verifies the IR once, usmp-opt after every pass (as
    # mlir-opt): the bytes are the same either way, the checks took half the
    # time here (the suite's own tests verify each pass)
    argv = [str(source), "--disable-verify", "-p", pipeline]
    argv += ["-t", "c-library", "-o", str(library)]
    assert usmp_opt.main(argv) == 0, f"usmp-opt -p '{pipeline}' failed"
    differences: list[str] = []
    files = read_split_file(library.read_text())
    written = {
        str(p.relative_to(compiled))
        for p in compiled.rglob("*")
        if p.is_file() and str(p.relative_to(compiled)) in files
    }
    expected = {
        str(p.relative_to(compiled))
        for folder in ("codegen", "example")
        for p in (compiled / folder).rglob("*")
        if p.is_file()
    } | {"CMakeLists.txt", "Makefile"}
    for missing in sorted(expected - set(files)):
        differences.append(f"{missing}: written by usmp-compile, not by usmp-opt")
    for path, text in sorted(files.items()):
        if path not in written:
            differences.append(
                f"{path}: printed by usmp-opt, not written by usmp-compile"
            )
        elif (compiled / path).read_text() != text:
            differences.append(f"{path}: differs")
    for report in sorted((compiled / "memory").glob("*")):
        mine = opt_out / "memory" / report.name
        if not mine.is_file():
            differences.append(f"memory/{report.name}: not written by usmp-opt")
        elif mine.read_bytes() != report.read_bytes():
            differences.append(f"memory/{report.name}: differs")
    return differences
