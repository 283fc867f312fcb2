"""Run fuzz cases (``fuzz_graphs``) through the whole pipeline and check them.

For each case: parse the relay text (``LocatingParser``: every op located),
evaluate it with the numpy oracle, run ``fuse-ops -> lower-ops ->
aot-lower-main`` (verifying after each), choose the pools from the buffers
the analysis finds (``pools_option``), run ``usmp`` then the independent
validator (``usmp-validate``), and emit the C library. A case whose pools
are too small must instead fail in ``usmp`` with a located diagnostic.

``run_batch`` builds every compiled case of a batch into **one** C program
(one gcc run, ``-fsanitize=address,undefined``; each model's library in its
own folder, its harness renamed ``fuzz_main_<k>``), runs it once per case on
the case's inputs and compares with the oracle: integers bit for bit, floats
within ``RTOL`` of the largest expected magnitude.

A failure is a ``Failure`` (stage and message); ``reproducer`` writes the
case as a relay ``.mlir`` file whose header says how to run it.
"""

from __future__ import annotations

import hashlib
import re
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.exceptions import DiagnosticException

from usmp.lowering.metadata import header_name
from usmp.testing.fuzz_graphs import Case, PoolDraw
from usmp.testing.run_c import DEFAULT_CFLAGS, SANITIZE_FLAGS

CFLAGS = (*DEFAULT_CFLAGS, *SANITIZE_FLAGS)
"""Every fuzz case builds as the tests build C: warnings as errors, ASan/UBSan."""
RTOL = 1e-4
"""Float outputs: |got - expected| <= RTOL * max(1, max |expected|)."""
WORK = Path(tempfile.gettempdir()) / "usmp-fuzz"
_LOCATION = re.compile(r"^[A-Za-z0-9_]+\.mlir:\d+:\d+: error: ")


@dataclass
class Failure:
    stage: str
    """Where it went wrong: a pass name, ``oracle``, ``gcc``, ``run``,
    ``compare``, ``diagnostic``."""
    message: str


@dataclass
class Compiled:
    """A case after the pipeline: its C files, or the failure/expected error."""

    case: Case
    pools: str = ""
    expected: list[npt.NDArray[Any]] = field(default_factory=list[npt.NDArray[Any]])
    files: dict[str, str] = field(default_factory=dict[str, str])
    interface: Any = None
    failure: Failure | None = None
    rejected: str = ""
    """The located diagnostic a too-small pool produced (as required)."""


def _passes() -> dict[str, Any]:
    from xdsl.transforms import get_all_passes as upstream

    from usmp.passes import get_all_passes

    return {**upstream(), **get_all_passes()}


def _apply(module: ModuleOp, spec: str) -> None:
    from xdsl.passes import PassPipeline

    from usmp.diagnostics import verify_located
    from usmp.dialects import new_context

    PassPipeline.parse_spec(_passes(), spec).apply(new_context(), module)
    verify_located(module)


def pipeline(case: Case, pools: str) -> list[str]:
    """The pass pipeline of ``case`` (``usmp-opt -p`` syntax), one step each."""
    usmp = [f"algorithm={case.algorithm}"]
    io = "true" if case.use_workspace_io else "false"
    if case.use_workspace_io:
        usmp.append("use_workspace_io=true")
    if pools:
        usmp.append(f'pools="{pools}"')
    patch = (
        [f"fold-explicit-padding,patch-stage{{io={io} {case.patch}}}"]
        if case.patch
        else []
    )
    return [
        *patch,
        f"fuse-ops{{max_depth={case.max_depth} module_name={case.name}}}",
        "lower-ops",
        f"aot-lower-main{{module_name={case.name} order_io={io}}}",
        f"usmp{{{' '.join(usmp)}}}",
        "usmp-validate",
        "convert-to-emitc",
    ]


def _align_up(value: int, alignment: int) -> int:
    return -(-value // alignment) * alignment


def pools_option(module: ModuleOp, case: Case) -> tuple[str, bool]:
    """The ``usmp`` pools for ``case`` after ``aot-lower-main``, and whether
    planning must fail (a pool smaller than a buffer it must hold)."""
    from usmp.passes.usmp_analysis import analyze
    from usmp.passes.usmp_pools import resolve_pools

    draw: PoolDraw = case.pools
    analysis = analyze(module, resolve_pools(module, ""), case.use_workspace_io)
    sizes = [b.size for b in analysis.buffers]
    constants = [c.size for c in analysis.constants]
    safe = sum(_align_up(s, 64) for s in sizes) + 64
    constant_safe = sum(_align_up(s, 64) for s in constants) + 64
    names = [f"ws{k}" for k in range(draw.n_pools)]
    if draw.policy == "too_small":
        if draw.constant_pool and constants and max(constants) >= 2:
            limit = max(1, max(constants) * draw.fractions[0] // 100)
            return f"flash:constant:{min(limit, max(constants) - 1)}", True
        if sizes and max(sizes) >= 2:
            biggest = max(sizes)
            pools = [
                f"{n}:workspace:{max(1, min(biggest - 1, biggest * f // 100))}"
                f":align={a}"
                for n, f, a in zip(names, draw.fractions, draw.alignments, strict=True)
            ]
            return ",".join(pools), True
        return "", False
    if draw.policy == "default":
        return "", False
    pools: list[str] = []
    for k, (n, f, a) in enumerate(
        zip(names, draw.fractions, draw.alignments, strict=True)
    ):
        last = k == draw.n_pools - 1
        if last:
            limit = 0 if f < 25 else safe + a
        else:
            limit = max(1, safe * f // 100)
        pools.append(f"{n}:workspace:{limit}:align={a}")
    if draw.constant_pool and constants:
        pools.append(f"flash:constant:{constant_safe}:align={draw.alignments[0]}")
    return ",".join(pools), False


def compile_case(case: Case) -> Compiled:
    """Oracle outputs and the C library of ``case`` (see module doc)."""
    from usmp.diagnostics import verify_located
    from usmp.dialects import new_context
    from usmp.oracle.relay_interpreter import evaluate
    from usmp.parsing import LocatingParser
    from usmp.tools.c_library import build_library

    result = Compiled(case)
    stage = "parse"
    try:
        module = LocatingParser(
            new_context(), case.text, f"{case.name}.mlir"
        ).parse_module()
        verify_located(module)
        stage = "oracle"
        states: dict[str, Any] = {}  # carried from run to run
        for _ in range(case.runs):
            result.expected = evaluate(module, case.inputs, states=states)
        steps = pipeline(case, "")
        planning = next(k for k, step in enumerate(steps) if step.startswith("usmp{"))
        for step in steps[:planning]:
            stage = step
            _apply(module, step)
        stage = "pools"
        result.pools, must_fail = pools_option(module, case)
        steps = pipeline(case, result.pools)
        stage = steps[planning]
        try:
            _apply(module, steps[planning])
        except DiagnosticException as e:
            if not must_fail:
                raise
            message = str(e)
            if not _LOCATION.match(message) or "fits in no candidate" not in message:
                result.failure = Failure(
                    "diagnostic", f"pool too small, but the error is not located:\n{e}"
                )
            result.rejected = message
            return result
        if must_fail:
            result.failure = Failure(
                "usmp", f"pools {result.pools} are too small, yet usmp planned them"
            )
            return result
        for step in steps[planning + 1 :]:
            stage = step
            try:
                _apply(module, step)
            except DiagnosticException as e:
                # usmp-validate refuses a module without any buffer (by design)
                if step != "usmp-validate" or "has no buffers" not in str(e):
                    raise
        stage = "emit-c"
        library = build_library(module)
        result.interface = library.interface
        result.files = {
            k: v for k, v in library.files.items() if k.endswith((".c", ".h"))
        }
    except Exception as e:  # noqa: BLE001 - every exception is a finding
        result.failure = Failure(stage, f"{type(e).__name__}: {e}")
    return result


def _program(compiled: Sequence[Compiled]) -> dict[str, str]:
    from usmp.testing.run_c import harness

    files: dict[str, str] = {}
    mains: list[str] = []
    for k, c in enumerate(compiled):
        for name, text in c.files.items():
            files[f"c{k}/{name}"] = text
        h = harness(c.interface, c.case.runs).replace(
            "int main(int argc, char** argv)",
            f"int fuzz_main_{k}(int argc, char** argv)",
        )
        files[f"c{k}/harness.c"] = f'#include "{header_name(c.interface)}"\n' + h
        mains.append(f"fuzz_main_{k}")
    lines = ["#include <stdlib.h>", ""]
    lines += [f"int {m}(int argc, char** argv);" for m in mains]
    lines += ["", "int main(int argc, char** argv) {", "  if (argc < 2) return 2;"]
    lines.append("  switch (atoi(argv[1])) {")
    lines += [
        f"  case {k}: return {m}(argc - 1, argv + 1);" for k, m in enumerate(mains)
    ]
    lines += ["  default: return 2;", "  }", "}", ""]
    files["main.c"] = "\n".join(lines)
    return files


def build(files: dict[str, str], flags: Sequence[str] = CFLAGS) -> Path:
    """One executable from ``files`` (relative paths), cached by content."""
    digest = hashlib.sha256(repr((tuple(flags), sorted(files.items()))).encode())
    folder = WORK / digest.hexdigest()[:24]
    exe = folder / "fuzz"
    if exe.exists():
        return exe
    WORK.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(dir=WORK))
    for name, text in files.items():
        (work / name).parent.mkdir(parents=True, exist_ok=True)
        (work / name).write_text(text)
    sources = sorted(n for n in files if n.endswith(".c"))
    done = subprocess.run(
        ["gcc", *flags, *sources, "-o", "fuzz", "-lm"],
        cwd=work,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        shutil.rmtree(work, ignore_errors=True)
        raise RuntimeError(done.stderr)
    try:
        work.rename(folder)
    except OSError:  # built concurrently
        shutil.rmtree(work, ignore_errors=True)
    return exe


def _run(exe: Path, k: int, c: Compiled) -> list[npt.NDArray[Any]]:
    from usmp.testing.run_c import dtype_of

    m = c.interface
    with tempfile.TemporaryDirectory(prefix="usmp-fuzz-") as tmp:
        paths = [Path(tmp) / f"{j}.bin" for j in range(len(m.inputs) + len(m.outputs))]
        for path, t, x in zip(paths, m.inputs, c.case.inputs, strict=False):
            path.write_bytes(np.ascontiguousarray(x, dtype=dtype_of(t)).tobytes())
        done = subprocess.run(
            [str(exe), str(k), *map(str, paths)],
            capture_output=True,
            text=True,
            check=False,
            timeout=120,
        )
        if done.returncode != 0:
            raise RuntimeError(f"exit {done.returncode}:\n{done.stderr[-4000:]}")
        return [
            np.frombuffer(p.read_bytes(), dtype=dtype_of(t)).reshape(t.type.get_shape())
            for p, t in zip(paths[len(m.inputs) :], m.outputs, strict=True)
        ]


def compare(
    got: Sequence[npt.NDArray[Any]], expected: Sequence[npt.NDArray[Any]]
) -> str:
    """Why ``got`` differs from the oracle's ``expected`` ('' if it does not)."""
    if len(got) != len(expected):
        return f"{len(got)} outputs, the oracle has {len(expected)}"
    for i, (g, e) in enumerate(zip(got, expected, strict=True)):
        if g.dtype != e.dtype or g.shape != e.shape:
            return (
                f"output {i}: {g.dtype}{list(g.shape)}, oracle {e.dtype}{list(e.shape)}"
            )
        if e.dtype.kind == "f":
            tol = RTOL * max(1.0, float(np.max(np.abs(e), initial=0.0)))
            close = np.abs(g.astype(np.float64) - e) <= tol
            bad = ~(close | (np.isnan(g) & np.isnan(e)))
        else:
            bad = g != e
        if np.any(bad):
            where = np.argwhere(bad)[:5].tolist()
            return (
                f"output {i} differs at {int(bad.sum())} of {e.size} elements, "
                f"e.g. {where}: got {g[bad][:5].tolist()}, oracle {e[bad][:5].tolist()}"
            )
    return ""


def run_batch(cases: Sequence[Case]) -> list[Compiled]:
    """Compile, build (one gcc run), run and compare every case; each
    result's ``failure`` is None when the case passed."""
    results = [compile_case(c) for c in cases]
    runnable = [r for r in results if r.failure is None and not r.rejected]
    if not runnable:
        return results
    try:
        exe = build(_program(runnable))
    except RuntimeError:  # find the culprit(s): build each case alone
        exe = None
        for r in runnable:
            try:
                build(_program([r]))
            except RuntimeError as e:
                r.failure = Failure("gcc", str(e)[-4000:])
        ok = [r for r in runnable if r.failure is None]
        if ok:
            exe = build(_program(ok))
        runnable = ok
    assert exe is not None or not runnable
    for k, r in enumerate(runnable):
        assert exe is not None
        try:
            got = _run(exe, k, r)
        except (RuntimeError, subprocess.TimeoutExpired) as e:
            r.failure = Failure("run", str(e))
            continue
        why = compare(got, r.expected)
        if why:
            r.failure = Failure("compare", why)
    return results


def reproducer(result: Compiled, folder: Path, replay: str = "") -> Path:
    """Write ``<name>.mlir`` (the relay module, its pipeline in a header
    comment) and ``<name>.npz`` (inputs, oracle outputs) into ``folder``."""
    case = result.case
    folder.mkdir(parents=True, exist_ok=True)
    steps = ",".join(pipeline(case, result.pools))
    failure = result.failure or Failure("", "")
    header = [
        f"// fuzz case {case.name}: {failure.stage}",
        *(f"//   {line}" for line in failure.message.splitlines()[:20]),
        "// reproduce:",
        f"//   usmp-opt {case.name}.mlir -p '{steps}' -t c",
        *([f"//   {replay}"] if replay else []),
        f"// operators: {' '.join(case.kinds)}",
        "",
    ]
    path = folder / f"{case.name}.mlir"
    path.write_text("\n".join(header) + case.text)
    arrays = {f"input{k}": x for k, x in enumerate(case.inputs)}
    arrays |= {f"expected{k}": x for k, x in enumerate(result.expected)}
    np.savez(folder / f"{case.name}.npz", **arrays)  # pyright: ignore[reportArgumentType]
    return path
