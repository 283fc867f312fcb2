"""Malformed input corpus, MLIR half: every bad input is a located error.

Each case runs ``usmp-opt`` in-process (``usmp.tools.usmp_opt.main``) or, for
the pool flags, ``usmp-compile`` (``usmp.tools.usmp_compile.main``), and
checks exit status 1, a diagnostic of the form ``<file>:<line>:<col>:
error:`` (input errors) or ``usmp-opt: error:`` naming the bad value and
what is accepted (command-line errors), and neither a ``Traceback`` nor an
``internal error`` in the output.

The cases are generated deterministically:

* syntax: the first chunk of each positive FileCheck file and
  ``examples/chain.mlir``, truncated after several tokens (before the last
  ``}``, so a region stays open) and with one closing delimiter deleted (so
  delimiters no longer balance): always a syntax error, at many positions;
* semantics: small modules with unknown ops, wrong types, missing or
  duplicate ``@main``, pass preconditions, limits of the generated C;
* pass pipelines and options, and ``usmp-compile`` pool flags.
"""

from __future__ import annotations

import contextlib
import io
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from usmp.tools import usmp_compile, usmp_opt

REPO = Path(__file__).parent.parent
FILECHECK = REPO / "tests" / "filecheck"
CHAIN = REPO / "examples" / "chain.mlir"
MODEL = REPO / "examples" / "kws_ref_model.tflite"

MUTATED_SOURCES = [
    CHAIN,
    FILECHECK / "dialects" / "relay" / "ops.mlir",
    FILECHECK / "dialects" / "tir" / "ops.mlir",
    FILECHECK / "passes" / "fuse_ops.mlir",
    FILECHECK / "passes" / "lower_ops.mlir",
    FILECHECK / "passes" / "aot_lower_main.mlir",
    FILECHECK / "passes" / "usmp.mlir",
    FILECHECK / "passes" / "plan_devices.mlir",
]
TRUNCATIONS = (0.15, 0.4, 0.65, 0.9)
DELETIONS = (0.1, 0.5, 0.95)

_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|->|[A-Za-z0-9_.$%@#!^-]+|\S')
_CLOSERS = ("}", ")", "]", ">")


@dataclass(frozen=True)
class Case:
    id: str
    source: str | bytes
    argv: tuple[str, ...] = ()
    expect: str = ""
    """A regular expression the diagnostic must match (besides the form)."""
    location: bool = True
    """A ``file:line:col: error:`` diagnostic (else ``usmp-opt: error:``)."""


def _first_chunk(path: Path) -> str:
    text = path.read_text().split("// -----")[0]
    return "\n".join(
        "" if line.lstrip().startswith("//") else line for line in text.splitlines()
    )


def _syntax_cases() -> list[Case]:
    cases: list[Case] = []
    for path in MUTATED_SOURCES:
        text = _first_chunk(path)
        tokens = list(_TOKEN.finditer(text))
        last_brace = max(i for i, t in enumerate(tokens) if t.group() == "}")
        name = path.stem
        depth = [0]
        for t in tokens:
            depth.append(depth[-1] + (t.group() == "{") - (t.group() == "}"))
        for fraction in TRUNCATIONS:
            k = max(1, int(last_brace * fraction))
            while depth[k] == 0:  # cut inside a region, never between ops
                k += 1
            cases.append(
                Case(f"truncate-{name}-{k}", text[: tokens[k - 1].end()] + "\n")
            )
        closers = [t for t in tokens if t.group() in _CLOSERS]
        for fraction in DELETIONS:
            t = closers[min(len(closers) - 1, int(len(closers) * fraction))]
            cases.append(
                Case(
                    f"delete-{name}-{t.start()}",
                    text[: t.start()] + " " + text[t.end() :],
                )
            )
    return cases


RELAY_MAIN = """\
func.func @main(%x: tensor<1x4xi8>) -> tensor<1x4xi8> {
  %0 = relay.relu %x : tensor<1x4xi8> -> tensor<1x4xi8>
  func.return %0 : tensor<1x4xi8>
}
"""
PIPELINE = "plan-devices,fuse-ops,lower-ops,aot-lower-main,usmp,convert-to-emitc"


def _semantic_cases() -> list[Case]:
    deep_ops = "builtin.module {\n" * 5000 + "}\n" * 5000
    deep_type = "i8"
    for _ in range(5000):
        deep_type = f"tuple<{deep_type}>"
    deep_dense = "[" * 5000 + "1" + "]" * 5000
    return [
        Case(
            "unknown-op",
            "func.func @main() {\n  %0 = relay.frobnicate : () -> i8\n  func.return\n}\n",
            expect="relay.frobnicate",
        ),
        Case(
            "undefined-value",
            "func.func @main() -> i8 {\n  func.return %x : i8\n}\n",
            expect="%x",
        ),
        Case(
            "wrong-result-type",
            RELAY_MAIN.replace(
                "relay.relu %x : tensor<1x4xi8> -> tensor<1x4xi8>",
                "relay.relu %x : tensor<1x4xi8> -> tensor<1x4xi32>",
            ),
            expect="tensor<1x4xi32>",
        ),
        Case(
            "return-type-mismatch",
            RELAY_MAIN.replace("-> tensor<1x4xi8> {", "-> tensor<1x4xi32> {"),
        ),
        Case(
            "operand-type-mismatch",
            RELAY_MAIN.replace(
                "relay.relu %x : tensor<1x4xi8>", "relay.relu %x : tensor<2x4xi8>"
            ),
        ),
        Case(
            "f64-elements",
            RELAY_MAIN.replace("i8", "f64"),
            expect="expected f32, i8, i16, i32, i64 or ui8",
        ),
        Case("non-utf8-comment", b"// caf\xe9\n" + RELAY_MAIN.encode(), expect="UTF-8"),
        Case("non-utf8-symbol", b"func.func @m\xffain() {\n  func.return\n}\n"),
        Case("deep-regions", deep_ops, expect="at most 64 levels"),
        Case(
            "deep-type",
            f"func.func @main(%a: {deep_type}) {{\n  func.return\n}}\n",
            expect="at most 64 levels",
        ),
        Case(
            "deep-dense",
            "func.func @main() {\n  %0 = relay.constant dense<"
            + deep_dense
            + "> : tensor<1xi8>\n  func.return\n}\n",
            expect="nested too deeply",
        ),
        Case(
            "huge-splat",
            "func.func @main() {\n  %0 = relay.constant dense<0> : "
            "tensor<100000000000xi8>\n  func.return\n}\n",
            expect="at most 2147483647 bytes",
        ),
        Case(
            "huge-hex-splat",
            'func.func @main() {\n  %0 = relay.constant dense<"0x00"> : '
            "tensor<100000x100000xi8>\n  func.return\n}\n",
            expect="at most 2147483647 bytes",
        ),
        Case(
            "shape-product-overflow",
            "func.func @main(%a: tensor<9223372036854775807x9223372036854775807xi8>) {\n"
            "  func.return\n}\n",
            expect="at most 2147483647 bytes",
        ),
        Case(
            "f32-literal-out-of-range",
            "func.func @main() {\n  %0 = arith.constant 1.0e999 : f32\n  func.return\n}\n",
            expect="out of range for f32",
        ),
        Case(
            "f32-dense-out-of-range",
            "func.func @main() {\n  %0 = relay.constant dense<[1.0, 4.0e38]> : "
            "tensor<2xf32>\n  func.return\n}\n",
            expect="out of range for f32",
        ),
        Case(
            "hex-float-with-minus",
            "func.func @main() {\n  %0 = relay.constant dense<[-0x7FC00000]> : "
            "tensor<1xf32>\n  func.return\n}\n",
            expect="should not have a leading minus",
        ),
        Case(
            "hex-float-too-wide",
            "func.func @main() {\n  %0 = relay.constant dense<[1.0, 0x1FFFFFFFF]> : "
            "tensor<2xf32>\n  func.return\n}\n",
            expect="out of range for type f32",
        ),
        Case(
            "hex-f16-too-wide",
            "func.func @main() {\n  %0 = relay.constant dense<[0x10000]> : "
            "tensor<1xf16>\n  func.return\n}\n",
            expect="out of range for type f16",
        ),
        Case(
            "hex-scalar-signalling-nan",
            "func.func @main() {\n  %0 = arith.constant 0x7F800001 : f32\n"
            "  func.return\n}\n",
            expect="cannot be held exactly",
        ),
        Case(
            "nan-payload-in-c",
            "func.func @f(%o: memref<1xf32>) attributes {tir.prim_func} {\n"
            "  %c0 = arith.constant 0 : index\n"
            "  %n = arith.constant 0x7FC00001 : f32\n"
            "  memref.store %n, %o[%c0] : memref<1xf32>\n  func.return\n}\n",
            argv=("-p", "convert-to-emitc"),
            expect="C99 cannot write",
        ),
        Case(
            "i8-literal-out-of-range",
            "func.func @main() {\n  %0 = arith.constant 300 : i8\n  func.return\n}\n",
            expect="out of range for type i8",
        ),
        Case(
            "i8-dense-out-of-range",
            "func.func @main() {\n  %0 = relay.constant dense<[1, -300]> : "
            "tensor<2xi8>\n  func.return\n}\n",
            expect="out of range for type i8",
        ),
        Case(
            "i8-array-out-of-range",
            "func.func @main() attributes {a = array<i8: 1, 300>} {\n  func.return\n}\n",
        ),
        Case(
            "resource-not-hex",
            "func.func @main() -> tensor<4xi8> {\n"
            "  %0 = relay.constant dense_resource<w> : tensor<4xi8>\n"
            "  func.return %0 : tensor<4xi8>\n}\n"
            '{-# dialect_resources: { builtin: { w: "0xZZ" } } #-}\n',
            expect="resource blob 'w'",
        ),
        Case(
            "two-mains",
            RELAY_MAIN + RELAY_MAIN,
            argv=("-p", PIPELINE),
            expect='"@main" is defined twice',
        ),
        Case(
            "no-main-aot-lower-main",
            RELAY_MAIN.replace("@main", "@model"),
            argv=("-p", "aot-lower-main"),
            expect="no relay @main",
        ),
        Case(
            "no-main-usmp",
            RELAY_MAIN.replace("@main", "@model"),
            argv=("-p", "usmp"),
            expect="exactly one entry function",
        ),
        Case(
            "no-main-usmp-report",
            RELAY_MAIN.replace("@main", "@model"),
            argv=("-p", "usmp-buffer-info"),
        ),
        Case(
            "main-declaration",
            "func.func private @main(tensor<1x4xi8>) -> tensor<1x4xi8>\n",
            argv=("-p", PIPELINE),
        ),
        Case(
            "relay-in-emitc",
            RELAY_MAIN,
            argv=("-p", "convert-to-emitc"),
            expect="no C99 equivalent",
        ),
        Case(
            "dynamic-shape",
            "func.func @main(%x: tensor<?x4xi8>) -> tensor<?x4xi8> {\n"
            "  %0 = relay.relu %x : tensor<?x4xi8> -> tensor<?x4xi8>\n"
            "  func.return %0 : tensor<?x4xi8>\n}\n",
            argv=("-p", PIPELINE),
        ),
        Case(
            "control-flow-in-main",
            "func.func @main(%x: tensor<1x4xi8>, %c: i1) -> tensor<1x4xi8> {\n"
            "  scf.if %c {\n"
            "    %0 = relay.relu %x : tensor<1x4xi8> -> tensor<1x4xi8>\n"
            "  }\n"
            "  func.return %x : tensor<1x4xi8>\n}\n",
            argv=("-p", PIPELINE),
        ),
        Case(
            "call-unknown-function",
            "func.func @main(%x: tensor<1x4xi8>) -> tensor<1x4xi8> {\n"
            "  %0 = relay.call @nowhere(%x) : (tensor<1x4xi8>) -> tensor<1x4xi8>\n"
            "  func.return %0 : tensor<1x4xi8>\n}\n",
            argv=("-p", PIPELINE),
            expect="nowhere",
        ),
        Case(
            "tir-call-unknown-function",
            "func.func @f(%x: memref<4xi8>) attributes {tir.prim_func} {\n"
            "  tir.call @nowhere(%x) : (memref<4xi8>) -> ()\n"
            "  func.return\n}\n",
            argv=("-p", "convert-to-emitc"),
        ),
        Case(
            "pool-too-small",
            CHAIN.read_text(),
            argv=("-p", 'aot-lower-main,usmp{pools="sram:workspace:16"}'),
            expect="sram",
        ),
        Case(
            "shift-out-of-range",
            "func.func @main(%a: tensor<4xi32>) -> tensor<4xi32> {\n"
            "  %0 = relay.fixed_point_multiply %a {multiplier = array<i32: 1073741824>,"
            " shift = array<i32: 32>} : tensor<4xi32> -> tensor<4xi32>\n"
            "  func.return %0 : tensor<4xi32>\n}\n",
            expect="expected -31..30",
        ),
        Case(
            "clip-nan",
            "func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
            "  %0 = relay.clip %a {a_min = 0x7FF8000000000000 : f64, a_max = 1.0 : f64}"
            " : tensor<4xf32> -> tensor<4xf32>\n"
            "  func.return %0 : tensor<4xf32>\n}\n",
            expect="NaN",
        ),
        Case(
            "pool-alignment",
            'builtin.module attributes {tir.pools = [#tir.pool_info<"p", workspace,'
            " alignment = 8192>]} {\n}\n",
            expect="power of two from 1 to 4096",
        ),
        Case(
            "memref-alignment",
            "func.func @f() {\n  %0 = memref.alloc() {alignment = 65536 : i64}"
            " : memref<4xi8>\n  func.return\n}\n",
            expect="power of two from 1 to 4096",
        ),
        Case(
            "multi-block-main",
            RELAY_MAIN.replace(
                "  func.return %0",
                "  func.return %0 : tensor<1x4xi8>\n^bb1:\n  func.return %x",
            ),
            argv=("-p", PIPELINE),
            expect="2 blocks",
        ),
        Case(
            "zero-dimension",
            RELAY_MAIN.replace("1x4", "0x4"),
            expect="zero dimension",
        ),
    ]


def _pipeline_cases() -> list[Case]:
    bad = [
        ("unknown-pass", "no-such-pass", "no-such-pass"),
        ("unknown-option", "usmp{nope=1}", "nope"),
        ("bad-algorithm", "usmp{algorithm=nope}", "nope"),
        ("bad-pool-kind", 'usmp{pools="x:nope"}', "nope"),
        ("negative-pool-size", 'usmp{pools="a:workspace:-5"}', "-5"),
        ("bad-pool-align", 'usmp{pools="a:workspace:align=3"}', "3"),
        ("huge-pool-align", 'usmp{pools="a:workspace:align=8192"}', "8192"),
        ("huge-pool-size", 'usmp{pools="a:workspace:99999999999"}', "99999999999"),
        ("bad-pool-access", 'usmp{pools="a:workspace:access=c/xx"}', "xx"),
        ("empty-pool-name", 'usmp{pools=":workspace"}', "workspace"),
        ("negative-max-depth", "fuse-ops{max_depth=-1}", "-1"),
        ("text-max-depth", "fuse-ops{max_depth=deep}", "deep"),
        ("bad-call-type", "aot-lower-main{call_type=fast}", "fast"),
        ("bad-module-name", 'aot-lower-main{module_name="1x"}', "1x"),
        ("bad-device-id", "plan-devices{default_device_id=-1}", "-1"),
        ("huge-device-id", "plan-devices{default_device_id=4294967296}", "4294967296"),
        ("inf-max-depth", "fuse-ops{max_depth=inf}", "inf"),
        ("float-max-depth", "fuse-ops{max_depth=2.5}", "2.5"),
        ("inf-patch-budget", "patch-stage{budget=inf}", "inf"),
        ("nan-patch-budget", "patch-stage{budget=nan}", "nan"),
        ("text-patch-budget", "patch-stage{budget=lots}", "lots"),
        ("nan-time-limit", "usmp{algorithm=optimal time_limit=nan}", "nan"),
        ("negative-time-limit", "usmp{algorithm=optimal time_limit=-1}", "-1"),
        ("superscript-pool-size", 'usmp{pools="a:workspace:\u00b2"}', "\u00b2"),
        ("unclosed-options", "usmp{algorithm=best_fit", "usmp"),
        ("option-without-value", "usmp{algorithm}", "algorithm"),
        ("empty-pass-name", "fuse-ops,,usmp", ""),
        ("bad-use-workspace-io", "usmp{use_workspace_io=maybe}", "maybe"),
    ]
    return [
        Case(f"pipeline-{name}", RELAY_MAIN, ("-p", spec), re.escape(bad), False)
        for name, spec, bad in bad
    ] + [
        Case("unknown-target", RELAY_MAIN, ("-t", "fortran"), "fortran", False),
        Case("missing-input", "", ("/nonexistent/x.mlir",), "nonexistent", False),
    ]


POOL_FLAGS: list[tuple[str, list[str], str]] = [
    ("no-pools", ["--usmp-workspace-pools="], "workspace-pools"),
    ("bad-pool-name", ["--usmp-workspace-pools=1sram"], "1sram"),
    (
        "bad-item",
        ["--usmp-workspace-pools=sram", "--usmp-workspace-pool-sram=big"],
        "big",
    ),
    (
        "bad-size",
        ["--usmp-workspace-pools=sram", "--usmp-workspace-pool-sram=size=-5"],
        "-5",
    ),
    (
        "bad-align",
        ["--usmp-workspace-pools=sram", "--usmp-workspace-pool-sram=align=3"],
        "3",
    ),
    (
        "huge-align",
        ["--usmp-workspace-pools=sram", "--usmp-workspace-pool-sram=align=8192"],
        "8192",
    ),
    (
        "huge-size",
        ["--usmp-workspace-pools=sram", "--usmp-workspace-pool-sram=size=99999999999"],
        "99999999999",
    ),
    (
        "bad-access",
        ["--usmp-workspace-pools=sram", "--usmp-workspace-pool-sram=target=c:rx"],
        "rx",
    ),
    ("undeclared-pool", ["--usmp-workspace-pool-sram=size=16"], "sram"),
    (
        "superscript-size",
        ["--usmp-workspace-pools=sram", "--usmp-workspace-pool-sram=size=\u00b2"],
        "\u00b2",
    ),
    (
        "superscript-align",
        ["--usmp-workspace-pools=sram", "--usmp-workspace-pool-sram=align=\u00b2"],
        "\u00b2",
    ),
    ("bad-alignment-flag", ["--workspace-byte-alignment=3"], "3"),
    ("huge-alignment-flag", ["--constant-byte-alignment=8192"], "8192"),
]

CASES = _syntax_cases() + _semantic_cases() + _pipeline_cases()
_LOCATED = re.compile(r"^(?P<file>[^\n:]+):(\d+):(\d+): error: ", re.MULTILINE)


def _run(main: object, argv: Sequence[str]) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            status = main(list(argv))  # type: ignore[operator]
        except SystemExit as e:  # argparse
            status = e.code
    return int(status or 0), out.getvalue() + err.getvalue()


def _check_output(status: int, output: str) -> None:
    assert status == 1, output
    assert "Traceback" not in output, output
    assert "internal error" not in output, output


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_malformed_mlir(case: Case, tmp_path: Path) -> None:
    path = tmp_path / "input.mlir"
    if isinstance(case.source, bytes):
        path.write_bytes(case.source)
    else:
        path.write_text(case.source)
    argv = (
        [str(path), *case.argv]
        if case.argv[:1] != ("/nonexistent/x.mlir",)
        else list(case.argv)
    )
    status, output = _run(usmp_opt.main, argv)
    _check_output(status, output)
    if case.location:
        match = _LOCATED.search(output)
        assert match is not None and match.group("file") == str(path), output
    else:
        assert re.search(r"^usmp-opt: error: ", output, re.MULTILINE), output
    assert re.search(case.expect, output), output


@pytest.mark.parametrize("flags", POOL_FLAGS, ids=[f[0] for f in POOL_FLAGS])
def test_malformed_pool_flags(
    flags: tuple[str, list[str], str], tmp_path: Path
) -> None:
    _, argv, bad = flags
    status, output = _run(
        usmp_compile.main, [str(MODEL), "-o", str(tmp_path / "out"), "-q", *argv]
    )
    _check_output(status, output)
    assert output.startswith("usmp-compile: error: "), output
    assert bad in output, output
    assert not (tmp_path / "out").exists()


def test_usmp_compile_non_utf8_is_located(tmp_path: Path) -> None:
    """usmp-compile reads MLIR as usmp-opt does: a byte that is not UTF-8
    is an error at its line and column (it was Python's codec message)."""
    path = tmp_path / "latin1.mlir"
    path.write_bytes(b"// caf\xe9\n" + RELAY_MAIN.encode())
    status, output = _run(
        usmp_compile.main, [str(path), "-o", str(tmp_path / "out"), "-q"]
    )
    _check_output(status, output)
    assert output.startswith(f"{path}:1:7: error: byte 0xe9 is not valid UTF-8"), output


def test_corpus_size() -> None:
    assert len(CASES) + len(POOL_FLAGS) >= 60


def test_dead_operators_are_removed(tmp_path: Path) -> None:
    """Relay operators nobody uses are dead code: erased, never an error."""
    path = tmp_path / "dead.mlir"
    path.write_text(
        "func.func @main(%x: tensor<1x4xi8>) -> tensor<1x4xi8> {\n"
        "  %0 = relay.relu %x : tensor<1x4xi8> -> tensor<1x4xi8>\n"
        "  %1 = relay.add %0, %0 : (tensor<1x4xi8>, tensor<1x4xi8>) -> tensor<1x4xi8>\n"
        "  %2 = relay.relu %x : tensor<1x4xi8> -> tensor<1x4xi8>\n"
        "  func.return %2 : tensor<1x4xi8>\n}\n"
    )
    status, output = _run(usmp_opt.main, [str(path), "-p", PIPELINE, "-t", "c"])
    assert status == 0, output
    assert "relay.add" not in output and "internal error" not in output


def test_disable_verify_does_not_outlive_its_run(tmp_path: Path) -> None:
    """xDSL's ``--disable-verify`` switches attribute verification off for
    the whole process; after such a run (``usmp.testing.reproduce`` makes
    one), ``usmp_opt.main`` in the same process verifies again."""
    path = tmp_path / "input.mlir"
    path.write_text(
        "func.func @main() {\n  %0 = arith.constant 300 : i8\n  func.return\n}\n"
    )
    status, output = _run(usmp_opt.main, [str(path), "--disable-verify"])
    assert status == 0, output
    status, output = _run(usmp_opt.main, [str(path)])
    _check_output(status, output)
    assert "out of range for type i8" in output, output
