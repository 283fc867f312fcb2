"""Compile speed, checked without timing anything (the machines are shared):

* the work per operator does not grow with the graph: the Python calls a
  whole ``usmp-compile`` run makes, per relay operator, are the same (within
  a margin) on a generated graph and on one four times larger — a lookup or
  walk over the module per operator would make them grow linearly;
* the parser locates ops without xDSL's ``Span.get_location`` (which counts
  newlines from the start of the file for every op: quadratic);
* ``--time-passes`` prints the step tree on stderr (``usmp-opt``,
  ``usmp-compile``), and progress goes nowhere with ``--quiet`` and as plain
  lines to a pipe (a ``tqdm`` bar only on a terminal).
"""

from __future__ import annotations

import cProfile
import io
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from usmp.testing.fuzz_graphs import print_module
from usmp.testing.scale_graphs import operator_count, scale_graph
from usmp.tools import progress as progress_module
from usmp.tools.progress import Progress
from usmp.tools.usmp_compile import main as usmp_compile
from usmp.tools.usmp_opt import main as usmp_opt

CHAIN = Path(__file__).parent.parent / "examples" / "chain.mlir"


def _calls(run: Callable[[], object]) -> int:
    """Function calls (Python and builtin) made by ``run()``, counted by
    cProfile."""
    profiler = cProfile.Profile()
    profiler.runcall(run)
    return sum(entry.callcount for entry in profiler.getstats())


def _calls_per_operator(tmp_path: Path, n_ops: int) -> float:
    module = scale_graph(n_ops)
    ops = operator_count(module)
    source = tmp_path / f"g{n_ops}.mlir"
    source.write_text(print_module(module))
    out = tmp_path / f"out{n_ops}"
    status: list[int] = []
    calls = _calls(
        lambda: status.append(usmp_compile([str(source), "-o", str(out), "-q"]))
    )
    assert status == [0]
    return calls / ops


def test_work_per_operator_does_not_grow(tmp_path: Path) -> None:
    # warm-up: lazy imports and first-use caches are not per-operator work
    _calls_per_operator(tmp_path, 10)
    small = _calls_per_operator(tmp_path, 50)
    large = _calls_per_operator(tmp_path, 200)
    assert large <= 1.15 * small, (small, large)


def test_parser_does_not_count_lines_from_the_start(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from xdsl.dialects.builtin import FileLineColLoc
    from xdsl.utils.lexer import Span

    from usmp.dialects import new_context
    from usmp.parsing import LocatingParser

    def refuse(self: Span[str]) -> None:
        raise AssertionError("Span.get_location is quadratic over a module")

    text = print_module(scale_graph(30))
    monkeypatch.setattr(Span, "get_location", refuse)
    module = LocatingParser(new_context(), text, "g.mlir").parse_module()
    lines = text.splitlines()
    seen: list[int] = []
    for op in module.walk():  # every op has the line and column of its text
        loc = op.location
        assert isinstance(loc, FileLineColLoc)
        at = lines[loc.line.data - 1][loc.column.data - 1 :]
        assert at.startswith("%" if op.results else op.name), (op.name, at)
        seen.append(loc.line.data)
    assert seen == sorted(seen) and len(seen) > 40


_TREE_ROW = re.compile(
    r"^\s+[0-9.]+ \(\s*[0-9.]+%\)\s+[0-9.]+ \(\s*[0-9.]+%\)  (\s*)(\S.*)$"
)


def _tree(stderr: str) -> list[str]:
    """The names of a --time-passes tree, indented by depth."""
    assert "Execution time report" in stderr
    return [
        m.group(1) + m.group(2)
        for line in stderr.splitlines()
        if (m := _TREE_ROW.match(line))
    ]


def test_usmp_opt_time_passes(capsys: pytest.CaptureFixture[str]) -> None:
    status = usmp_opt([str(CHAIN), "-p", "aot-lower-main,usmp", "--time-passes"])
    out, err = capsys.readouterr()
    assert status == 0
    assert out.startswith("builtin.module") and "took" not in out
    assert _tree(err) == [
        "Parser",
        "Verifier",
        "aot-lower-main",
        "usmp",
        "Output",
        "Rest",
        "Total",
    ]


def test_usmp_compile_time_passes_and_quiet(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    assert (
        usmp_compile([str(CHAIN), "-o", str(tmp_path / "a"), "-q", "--time-passes"])
        == 0
    )
    _, err = capsys.readouterr()
    assert "usmp-compile:" not in err  # --quiet: no progress, the tree only
    names = _tree(err)
    assert names[:9] == [
        "import",
        "plan-devices",
        "fold-explicit-padding",
        "fuse-ops",
        "lower-ops",
        "aot-lower-main",
        "usmp",
        "convert-to-emitc",
        "verify",
    ]
    assert names[-2:] == ["Rest", "Total"]
    assert usmp_compile([str(CHAIN), "-o", str(tmp_path / "b"), "-q"]) == 0
    assert capsys.readouterr().err == ""


def test_final_verification_only_when_asked(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The IR the last pass produced is verified with ``--verify-final`` or
    ``USMP_VERIFY_FINAL=1`` (the suite sets it: conftest.py), not by
    default; ``--verify-each`` verifies every step instead."""
    monkeypatch.delenv("USMP_VERIFY_FINAL", raising=False)

    runs: list[str] = []

    def steps(*flags: str) -> list[str]:
        runs.append(str(tmp_path / f"out{len(runs)}"))
        argv = [str(CHAIN), "-o", runs[-1], "-q", "--time-passes", *flags]
        assert usmp_compile(argv) == 0
        return _tree(capsys.readouterr().err)

    assert "verify" not in steps()
    assert "verify" in steps("--verify-final")
    assert "verify" not in steps("--verify-each")
    monkeypatch.setenv("USMP_VERIFY_FINAL", "1")
    assert "verify" in steps()
    monkeypatch.setenv("USMP_VERIFY_FINAL", "0")
    assert "verify" not in steps()


def test_progress_is_plain_lines_off_a_terminal(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(progress_module, "DELAY", 0.0)  # every run is "long"
    assert usmp_compile([str(CHAIN), "-o", str(tmp_path / "a")]) == 0
    err = capsys.readouterr().err
    assert "\r" not in err  # no bar
    assert re.search(r"^usmp-compile: lower-ops \(3 operators\) \.\.\.$", err, re.M)
    assert re.search(r"^usmp-compile: lower-ops +[0-9.]+ s$", err, re.M)


RELAY = """
func.func @main(%x: tensor<1x4xf32>) -> tensor<1x4xf32> {
  %a = relay.softmax %x : tensor<1x4xf32> -> tensor<1x4xf32>
  %b = relay.softmax %a : tensor<1x4xf32> -> tensor<1x4xf32>
  func.return %b : tensor<1x4xf32>
}
"""


def test_progress_says_which_operator_a_step_is_on(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Inside lower-ops, usmp (its liveness, kernel directions, overlaps
    and replay), convert-to-emitc and the final verification, a line names
    the operator reached (here: every one, no pause between lines); the
    planning says what it plans."""
    monkeypatch.setattr(progress_module, "DELAY", 0.0)
    monkeypatch.setattr(progress_module, "EVERY", 0.0)
    source = tmp_path / "m.mlir"
    source.write_text(RELAY)
    assert usmp_compile([str(source), "-o", str(tmp_path / "a")]) == 0
    err = capsys.readouterr().err
    for step, phase in [
        ("lower-ops", "lowering"),
        ("usmp", "liveness"),
        ("usmp", "kernel directions"),
        ("usmp", "overlaps"),
        ("usmp", "replay"),
    ]:
        for k, name in enumerate(["nn_softmax", "nn_softmax_1"], 1):
            line = (
                f"usmp-compile: {step} (2 operators): {phase} {k}/2 "
                f"tvmgen_default_fused_{name} ..."
            )
            assert line in err.splitlines(), (line, err)
    planning = "usmp-compile: usmp (2 operators): planning 1/1 1 buffer, best_fit ..."
    assert planning in err.splitlines()
    for step, phase in [("convert-to-emitc", "conversion"), ("verify", "verify")]:
        line = f"usmp-compile: {step} (2 operators): {phase} "
        reached = [x for x in err.splitlines() if x.startswith(line)]
        assert any("tvmgen_default_fused_nn_softmax_1 ..." in x for x in reached), err


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_bar_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(progress_module, "DELAY", 0.0)
    stream = _Terminal()
    p = Progress(["a", "b"], stream, quiet=False, prefix="tool")
    p.operators = 1013
    p.begin("a")
    p.end("a", 0.5)
    p.close()
    text = stream.getvalue()
    assert "tool: a (1,013 operators): 0/2 steps |" in text
    assert "tool: a " in text and "0.50 s" in text
    quiet = _Terminal()
    p = Progress(["a"], quiet, quiet=True, prefix="tool")
    p.begin("a")
    p.end("a", 0.5)
    p.close()
    assert quiet.getvalue() == ""
