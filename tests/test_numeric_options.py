"""Every numeric option, given inf, nan, 0, a negative or a huge value, and
incompatible option pairs: a clear error naming the option (exit status 1,
no traceback, nothing written) or a meaningful result, in ``usmp-compile``,
``usmp-tvmc``, ``usmp-opt``'s pass options and ``usmp.compile``.

Where the check lives: ``patch-stage``'s options in its ``__post_init__``
(usmp-compile builds the pass from its flags before reading the model), the
planning time limit in ``usmp.planning.algorithms.get_algorithm``, pool
sizes and alignments in the pool-flag parsers, usmp-opt's typing of numeric
values in ``usmp.passes.options``; I/O in the workspace with the packed
interface is refused by ``usmp`` itself (as TVM's USMP does) and, earlier,
by the command lines.
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import re
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

import usmp
from usmp.tools import tvmc, usmp_compile, usmp_opt

REPO = Path(__file__).parent.parent
MODEL = REPO / "examples" / "kws_ref_model.tflite"
CHAIN = REPO / "examples" / "chain.mlir"
CNN = (REPO / "tests" / "filecheck" / "passes" / "patch_stage.mlir").read_text()
_START = CNN.index("\nfunc.func @cnn(")
CNN_MAIN = CNN[_START : CNN.index("// -----", _START)]
CNN_MAIN = CNN_MAIN.replace("@cnn(", "@main(")


def _run(main: Callable[[list[str]], int], argv: Sequence[str]) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            status = main(list(argv))
        except SystemExit as e:  # argparse
            status = e.code
    return int(status or 0), out.getvalue() + err.getvalue()


REFUSED_BY_USMP_COMPILE: list[tuple[str, list[str]]] = [
    ("--patch-budget inf", ["--patch", "auto", "--patch-budget", "inf"]),
    ("--patch-budget nan", ["--patch", "auto", "--patch-budget", "nan"]),
    ("--patch-budget -1", ["--patch-budget", "-1"]),
    ("--patch-depth -3", ["--patch-depth", "-3"]),
    ("--patch-stripes 1", ["--patch-stripes", "1"]),
    ("--plan-time-limit 0", ["--algorithm", "optimal", "--plan-time-limit", "0"]),
    ("--plan-time-limit nan", ["--algorithm", "optimal", "--plan-time-limit", "nan"]),
    ("--plan-time-limit -1", ["--algorithm", "optimal", "--plan-time-limit", "-1"]),
    ("--plan-time-limit 0", ["--plan-time-limit", "0"]),  # not optimal either
    ("--workspace-byte-alignment", ["--workspace-byte-alignment", "0"]),
    ("--constant-byte-alignment", ["--constant-byte-alignment", "-16"]),
    ("size=", ["--usmp-workspace-pools=sram", "--usmp-workspace-pool-sram=size=1e3"]),
    ("--use-workspace-io", ["--interface-api", "packed", "--use-workspace-io"]),
]


@pytest.mark.parametrize(
    ("flag", "argv"),
    REFUSED_BY_USMP_COMPILE,
    ids=[" ".join(a) for _, a in REFUSED_BY_USMP_COMPILE],
)
def test_usmp_compile_refuses(flag: str, argv: list[str], tmp_path: Path) -> None:
    out = tmp_path / "out"
    status, output = _run(usmp_compile.main, [str(MODEL), "-o", str(out), *argv])
    assert status == 1, output
    assert "Traceback" not in output and "internal error" not in output, output
    assert output.startswith("usmp-compile: error: "), output
    assert flag in output, output
    assert not out.exists()


def test_huge_patch_budget_is_no_limit(tmp_path: Path) -> None:
    """``--patch-budget 1e300``: any grid fits; the decision records the
    budget as what the costliest grid could add, not a 300-digit number."""
    source = tmp_path / "cnn.mlir"
    source.write_text(CNN_MAIN)
    out = tmp_path / "out"
    argv = [str(source), "-o", str(out), "--patch", "auto", "--patch-budget", "1e300"]
    status, output = _run(usmp_compile.main, argv)
    assert status == 0, output
    patch = json.loads((out / "metadata.json").read_text())["patch"]
    assert patch["applied"], patch
    assert patch["extra_macs"] <= patch["budget_macs"] < 2**63, patch
    assert not re.search(r"[0-9]{20}", output), output


def test_more_stripes_than_rows_is_refused(tmp_path: Path) -> None:
    """``--patch-stripes`` beyond every layer's rows: an error at the stage
    (it was "not applied: no grid within a budget", which named the wrong
    cause)."""
    source = tmp_path / "cnn.mlir"
    source.write_text(CNN_MAIN)
    argv = [str(source), "-o", str(tmp_path / "out"), "-q", "--patch", "auto"]
    status, output = _run(usmp_compile.main, [*argv, "--patch-stripes", "10**12"])
    assert status == 1 and "invalid int value" in output, output
    status, output = _run(usmp_compile.main, [*argv, "--patch-stripes", str(10**12)])
    assert status == 1, output
    assert re.match(rf"{re.escape(str(source))}:\d+:\d+: error: ", output), output
    assert "at most 8 output rows" in output, output


def test_unlimited_plan_time_is_accepted(tmp_path: Path) -> None:
    argv = [str(CHAIN), "-o", str(tmp_path / "out"), "-q", "--algorithm", "optimal"]
    status, output = _run(usmp_compile.main, [*argv, "--plan-time-limit", "inf"])
    assert status == 0, output


TVMC = ["compile", str(MODEL), "--executor", "aot", "--runtime", "crt", "-f", "mlf"]
REFUSED_BY_TVMC: list[tuple[str, list[str]]] = [
    ("-workspace-byte-alignment=0", ["--target", "c -workspace-byte-alignment=0"]),
    ("-workspace-byte-alignment=²", ["--target", "c -workspace-byte-alignment=²"]),
    (
        "--executor-aot-constant-byte-alignment=0",
        ["--target", "c", "--executor-aot-constant-byte-alignment=0"],
    ),
    (
        "--executor-aot-workspace-byte-alignment=²",
        ["--target", "c", "--executor-aot-workspace-byte-alignment=²"],
    ),
    ("tir.usmp.enable=²", ["--target", "c", "--pass-config", "tir.usmp.enable=²"]),
    (
        "--workspace-pools-read-latency-cycles=sram:-1",
        ["--workspace-pools-read-latency-cycles=sram:-1"],
    ),
    (
        "--workspace-pools-target-burst-bytes=sram:c:0",
        ["--workspace-pools-target-burst-bytes=sram:c:0"],
    ),
    (
        "--workspace-pools-clock-frequency-hz=sram:0",
        ["--workspace-pools-clock-frequency-hz=sram:0"],
    ),
    (
        "--workspace-pools-write-bandwidth-bytes-per-cycle=sram:9223372036854775808",
        ["--workspace-pools-write-bandwidth-bytes-per-cycle=sram:9223372036854775808"],
    ),
    (
        "tir.usmp.use_workspace_io=1",
        [
            "--target",
            "c",
            "--executor-aot-interface-api=packed",
            "--pass-config",
            "tir.usmp.use_workspace_io=1",
        ],
    ),
]


@pytest.mark.parametrize(
    ("flag", "argv"), REFUSED_BY_TVMC, ids=[f for f, _ in REFUSED_BY_TVMC]
)
def test_usmp_tvmc_refuses(flag: str, argv: list[str], tmp_path: Path) -> None:
    if argv[0].startswith("--workspace-pools-"):
        argv = ["--target", "c", "--workspace-pools=sram"]
        argv += ["--workspace-pools-targets=sram:c", *REFUSED_BY_TVMC_FLAG[flag]]
    out = tmp_path / "m.tar"
    status, output = _run(tvmc.main, [*TVMC, "-o", str(out), *argv])
    assert status == 1, output
    assert "Traceback" not in output, output
    assert re.search(r"^usmp-tvmc: error: ", output, re.MULTILINE), output
    assert flag in output, output
    assert not out.exists()


REFUSED_BY_TVMC_FLAG = {f: a for f, a in REFUSED_BY_TVMC}


@pytest.mark.parametrize(
    ("spec", "bad"),
    [
        ("fuse-ops{max_depth=inf}", "max_depth=inf is not an integer"),
        ("fuse-ops{max_depth=1e3}", "max_depth=1e3 is not an integer"),
        ("plan-devices{default_device_id=2147483648}", "2147483648"),
        ("patch-stage{budget=inf}", "finite"),
        ("patch-stage{budget=nan}", "finite"),
        ("patch-stage{budget=lots}", "budget=lots is not a number"),
        ("aot-lower-main,usmp{algorithm=optimal time_limit=nan}", "> 0"),
        (
            "aot-lower-main{interface_api=packed},usmp{use_workspace_io=true}",
            "only compatible with interface_api c",
        ),
    ],
)
def test_usmp_opt_pass_options_refused(spec: str, bad: str) -> None:
    status, output = _run(usmp_opt.main, [str(CHAIN), "-p", spec])
    assert status == 1, output
    assert "Traceback" not in output and "internal error" not in output, output
    assert bad in output, output


@pytest.mark.parametrize(
    "spec",
    [
        "patch-stage{budget=1}",  # an integer for a float option
        "patch-stage{budget=1e300}",
        "aot-lower-main,usmp{algorithm=optimal time_limit=inf}",
        "aot-lower-main,usmp{algorithm=optimal time_limit=2}",
    ],
)
def test_usmp_opt_pass_options_accepted(spec: str, tmp_path: Path) -> None:
    source = tmp_path / "cnn.mlir"
    source.write_text(CNN_MAIN if spec.startswith("patch") else CHAIN.read_text())
    status, output = _run(usmp_opt.main, [str(source), "-p", spec])
    assert status == 0, output


@pytest.mark.parametrize(
    ("options", "flag"),
    [
        ({"plan_time_limit": 0, "algorithm": "optimal"}, "--plan-time-limit"),
        ({"plan_time_limit": math.nan, "algorithm": "optimal"}, "--plan-time-limit"),
        ({"patch": "auto", "patch_budget": math.inf}, "--patch-budget"),
        ({"interface_api": "packed", "use_workspace_io": True}, "--use-workspace-io"),
        ({"pools": [usmp.Pool("sram", size=-1)]}, "size='-1'"),
        ({"pools": [usmp.Pool("sram", alignment=0)]}, "alignment 0"),
    ],
    ids=["time-0", "time-nan", "budget-inf", "packed-io", "pool-size", "pool-align"],
)
def test_python_api_refuses(options: dict[str, object], flag: str) -> None:
    with pytest.raises(usmp.CompileError, match=re.escape(flag)):
        usmp.compile(CHAIN, **options)  # pyright: ignore[reportArgumentType]
