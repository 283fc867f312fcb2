"""usmp-opt's mlir-opt habits: ``--verify-diagnostics`` with ``expected-*``
annotations, ``--help`` with every pass and its options, ``--version``, and
``-`` (or no file) for standard input."""

from __future__ import annotations

import contextlib
import io
import subprocess
import sys
from pathlib import Path

import pytest

from usmp.passes import get_all_passes
from usmp.tools import usmp_opt

BAD_ALLOCATE = '%0 = tir.allocate {name_hint = "x"} : memref<?xi8>'
MESSAGE = "must have a static shape"


def _run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = usmp_opt.main(argv)
    return status, out.getvalue(), err.getvalue()


def _verify(tmp_path: Path, source: str, *args: str) -> tuple[int, str]:
    path = tmp_path / "case.mlir"
    path.write_text(source)
    status, _, err = _run(
        [str(path), "--split-input-file", "--verify-diagnostics", *args]
    )
    return status, err


def _func(body: str) -> str:
    return f"func.func @f() {{\n{body}\n  func.return\n}}\n"


@pytest.mark.parametrize(
    "body",
    [
        f"  // expected-error@+1 {{{{{MESSAGE}}}}}\n  {BAD_ALLOCATE}",
        f"  {BAD_ALLOCATE} // expected-error {{{{{MESSAGE}}}}}",
        f"  // expected-error@below {{{{{MESSAGE}}}}}\n  {BAD_ALLOCATE}",
        f"  {BAD_ALLOCATE}\n  // expected-error@above {{{{{MESSAGE}}}}}",
        f"  {BAD_ALLOCATE}\n\n  // expected-error@-2 {{{{{MESSAGE}}}}}",
        f"  {BAD_ALLOCATE} // expected-error-re {{{{must {{{{[a-z]+}}}} a static}}}}",
    ],
    ids=["plus", "same-line", "below", "above", "minus", "regex"],
)
def test_expected_diagnostic_passes(tmp_path: Path, body: str) -> None:
    status, err = _verify(tmp_path, _func(body))
    assert (status, err) == (0, "")


@pytest.mark.parametrize(
    ("body", "complaints"),
    [
        (  # the right line, a wrong message
            f"  {BAD_ALLOCATE} // expected-error {{{{static size}}}}",
            [
                "2:3: error: unexpected error: 'tir.allocate' op tir.allocate must",
                '2:57: error: expected error "static size" was not produced',
            ],
        ),
        (  # the right message, a wrong line
            f"  // expected-error@+2 {{{{{MESSAGE}}}}}\n  {BAD_ALLOCATE}",
            [
                "3:3: error: unexpected error:",
                f'2:6: error: expected error "{MESSAGE}" was not produced',
            ],
        ),
        (  # a warning is not an error
            f"  {BAD_ALLOCATE} // expected-warning {{{{{MESSAGE}}}}}",
            ["2:3: error: unexpected error:", "expected warning"],
        ),
        (  # no annotation
            f"  {BAD_ALLOCATE}",
            ["2:3: error: unexpected error: 'tir.allocate' op"],
        ),
        (  # an annotation nothing produces
            "  // expected-error@+1 {{never}}\n  %0 = arith.constant 0 : i32",
            ['2:6: error: expected error "never" was not produced'],
        ),
    ],
    ids=["wrong-message", "wrong-line", "wrong-severity", "unexpected", "missing"],
)
def test_wrong_expectation_fails(
    tmp_path: Path, body: str, complaints: list[str]
) -> None:
    status, err = _verify(tmp_path, _func(body))
    assert status == 1
    for complaint in complaints:
        assert complaint in err, err


def test_each_chunk_has_its_own_expectations(tmp_path: Path) -> None:
    ok = _func(f"  {BAD_ALLOCATE} // expected-error {{{{{MESSAGE}}}}}")
    status, err = _verify(tmp_path, ok + "\n// -----\n\n" + ok)
    assert (status, err) == (0, "")
    # an expectation in the second chunk does not cover the first chunk's error
    first = _func(f"  {BAD_ALLOCATE}")
    status, err = _verify(tmp_path, first + "\n// -----\n\n" + ok)
    assert status == 1 and "case.mlir:2:3: error: unexpected error" in err, err


def test_pass_diagnostics_are_verified(tmp_path: Path) -> None:
    source = (
        "// expected-error@+1 {{usmp needs exactly one entry function}}\n"
        "func.func @op() attributes {tir.prim_func} {\n  func.return\n}\n"
    )
    status, err = _verify(tmp_path, source, "-p", "usmp-buffer-info")
    assert (status, err) == (0, ""), err
    status, err = _verify(tmp_path, source)  # without the pass: no diagnostic
    assert status == 1 and "was not produced" in err


def test_bad_regex_is_a_located_error(tmp_path: Path) -> None:
    status, err = _verify(tmp_path, "// expected-error-re {{a {{[}} b}}\n")
    assert status == 1
    assert "case.mlir:1:4: error: invalid regex in annotation" in err


def test_help_lists_every_pass_with_summary_and_options() -> None:
    status, out, _ = _run(["--help"])
    assert status == 0
    for name in get_all_passes():
        assert f"\n  {name} " in out, name
    assert "Plan every static buffer into pools" in out
    # options with type, documentation, default and accepted values
    assert "algorithm=<str>" in out and "accepted: greedy_by_size," in out
    assert "call_type=<str>" in out and "accepted: unpacked, packed, cpacked" in out
    assert "use_workspace_io=<bool>" in out and "accepted: true, false" in out
    assert "max_depth=<int>" in out and "(default: 256)" in out
    assert "--verify-diagnostics  check the diagnostics against the input's" in out


def test_version_is_the_project_version() -> None:
    from importlib.metadata import version

    status, out, _ = _run(["--version"])
    assert status == 0
    assert out.splitlines()[0] == f"usmp-opt {version('usmp-opt')}"


@pytest.mark.parametrize("args", [["-"], []], ids=["dash", "no-file"])
def test_stdin(args: list[str]) -> None:
    source = "func.func @f() {\n  %0 = arith.constant 1 : i32\n  func.return\n}\n"
    ok = subprocess.run(
        [sys.executable, "-m", "usmp.tools.usmp_opt", *args],
        input=source,
        capture_output=True,
        text=True,
        check=False,
    )
    assert ok.returncode == 0, ok.stderr
    assert "arith.constant 1 : i32" in ok.stdout
    bad = subprocess.run(
        [sys.executable, "-m", "usmp.tools.usmp_opt", *args],
        input=_func(f"  {BAD_ALLOCATE}"),
        capture_output=True,
        text=True,
        check=False,
    )
    assert bad.returncode == 1
    assert bad.stderr.startswith("<stdin>:2:3: error: 'tir.allocate' op"), bad.stderr


def test_diagnostic_located_elsewhere_needs_at_unknown(tmp_path: Path) -> None:
    allocate = f'  {BAD_ALLOCATE} loc("elsewhere.mlir":1:1)'
    source = f"// expected-error@unknown {{{{{MESSAGE}}}}}\n" + _func(allocate)
    assert _verify(tmp_path, source) == (0, "")
    status, err = _verify(tmp_path, source.replace("@unknown", ""))
    assert status == 1
    assert "elsewhere.mlir:1:1: error: unexpected error:" in err, err
