"""``CompileOptions``: the typed options at the core (issue 25).

* every check is in the dataclass: the Python API and ``usmp-compile`` give
  the same message for the same mistake, before the model is read;
* ``usmp-compile --help`` is generated from the declarations (every field,
  its flag, its docstring) and ``usmp-tvmc`` shares the help of the options
  both have;
* ``usmp.compile`` takes an options object and/or its fields as keywords;
* the driver runs the steps the pipeline builder lists.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

import usmp
from usmp.testing.shared_models import MODELS_DIR
from usmp.tools.compile_options import (
    STEPS,
    CompileError,
    CompileOptions,
    DriverOptions,
    Pool,
    field_flag,
)
from usmp.tools.compile_pipeline import compile_passes
from usmp.tools.option_flags import option_help
from usmp.tools.pass_help import field_docs
from usmp.tools.usmp_compile import PIPELINE, main, parser

HELLO = MODELS_DIR / "tflite_micro/hello_world_int8.tflite"

BAD = [
    ({"module_name": "my model"}, "--module-name 'my model' is not a C identifier"),
    (
        {"algorithm": "first_fit"},
        "argument --algorithm/--usmp-algorithm: invalid choice: 'first_fit'",
    ),
    ({"target": "c,accel"}, "the last target must be the host target 'c'"),
    (
        {"target": "accel,c", "offload": ("CONV2D=accel",)},
        "'CONV2D' is not a TFLite builtin",
    ),
    ({"offload": ("CONV_2D=accel",)}, "target 'accel' is not one of the offload"),
    (
        {"interface_api": "c", "use_unpacked_api": False},
        "--interface-api c needs --use-unpacked-api 1",
    ),
    (
        {"interface_api": "packed", "use_unpacked_api": False, "call_type": "unpacked"},
        "--call-type unpacked contradicts --use-unpacked-api 0",
    ),
    ({"plan_time_limit": 5.0}, "--plan-time-limit 5.0:"),
    (
        {"constant_byte_alignment": 12},
        "--constant-byte-alignment: alignment 12 is not accepted",
    ),
    (
        {"patch": "auto", "emit_tflm_plan": "x.tflite"},
        "--emit-tflm-plan cannot be combined with --patch",
    ),
    ({"patch": "auto", "patch_stripes": 1}, "stripes must be 0 (choose) or at least 2"),
    ({"pools": (Pool("sram"), Pool("sram"))}, "pool 'sram' is listed twice"),
    ({"pools": (Pool("sram"), Pool("SRAM"))}, "differ only in letter case"),
    ({"pools": (Pool("2sram"),)}, "pool '2sram' is not a valid pool name"),
    ({"pools": (Pool("s", kind="scratch"),)}, "kind 'scratch' is not one of"),
    ({"pools": (Pool("s", alignment=3),)}, "pool 's': alignment 3 is not accepted"),
    ({"pools": (Pool("s", targets=("c:wo",)),)}, "target entry 'c:wo' is not"),
    ({"pools": (Pool("s", size=1 << 40),)}, "larger than the generated C can index"),
]


@pytest.mark.parametrize(("fields", "message"), BAD, ids=[m for _, m in BAD])
def test_every_check_is_in_the_options(fields: dict, message: str) -> None:
    with pytest.raises(CompileError) as error:
        CompileOptions(**fields)
    assert message in str(error.value)
    # the API says the same, as usmp-compile does
    with pytest.raises(usmp.CompileError) as api_error:
        usmp.compile(HELLO, **fields)
    assert f"usmp-compile: error: {error.value}" == str(api_error.value)


def test_the_command_line_gives_the_same_messages(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = [str(HELLO), "-o", str(tmp_path / "out"), "-q"]
    cases = [
        (["--module-name", "my model"], {"module_name": "my model"}),
        (["--target", "accel,c", "--offload", "X=accel"], {"target": "accel,c"}),
        (["--constant-byte-alignment", "12"], {"constant_byte_alignment": 12}),
        (["--use-unpacked-api", "0"], {"use_unpacked_api": False}),
    ]
    for flags, fields in cases:
        assert main([*argv, *flags]) == 1
        err = capsys.readouterr().err
        if "offload" in str(flags):
            fields["offload"] = ("X=accel",)
        with pytest.raises(CompileError) as error:
            CompileOptions(**fields)
        assert err == f"usmp-compile: error: {error.value}\n"
    assert not (tmp_path / "out").exists()


def test_the_patch_defaults_are_valid_patch_stage_options() -> None:
    """``_check_patch`` skips (and does not import ``patch-stage`` for) the
    values that keep their defaults: ``patch-stage`` accepts them."""
    from usmp.passes.patch_stage import PatchStagePass

    o = CompileOptions()
    PatchStagePass(budget=o.patch_budget, depth=o.patch_depth, stripes=o.patch_stripes)


def test_options_are_typed_frozen_and_normalised() -> None:
    options = CompileOptions(pools=[Pool("sram")], offload=[])  # type: ignore[arg-type]
    assert options.pools == (Pool("sram"),) and options.offload == ()
    with pytest.raises(dataclasses.FrozenInstanceError):
        options.module_name = "x"  # type: ignore[misc]
    assert CompileOptions().resolved_call_type == "unpacked"
    assert CompileOptions(interface_api="packed").resolved_call_type == "cpacked"
    assert CompileOptions(emit_tflm_plan="p.tflite").plan_overlap is True
    assert Pool("flash", kind="parameter").pool_kind == "constant"


def test_help_is_generated_from_the_declarations() -> None:
    text = " ".join(parser().format_help().split())
    flat = "".join(text.split())  # argparse wraps at hyphens too
    for cls in (CompileOptions, DriverOptions):
        docs = field_docs(cls)
        for f in dataclasses.fields(cls):
            assert f.name in docs, f"{cls.__name__}.{f.name} has no docstring"
            for name in field_flag(f).names:
                assert name in text, name
            if field_flag(f).kind != "pools":
                assert "".join(docs[f.name].split()) in flat, f.name
    assert "--dump-pipeline" in text
    assert option_help(CompileOptions, "module_name").endswith("(default: default)")


def test_tvmc_shares_the_help_of_the_options_it_has() -> None:
    from usmp.tools.tvmc import _parser  # pyright: ignore[reportPrivateUsage]

    text = "".join(_parser().format_help().split())
    assert "".join(option_help(CompileOptions, "module_name").split()) in text


def test_compile_takes_options_and_fields(tmp_path: Path) -> None:
    options = CompileOptions(module_name="hello", algorithm="greedy_by_size")
    lib = usmp.compile(HELLO, options, output_dir=tmp_path / "a", use_workspace_io=True)
    assert lib.name == "hello" and lib.plan.algorithm == "greedy_by_size"
    assert lib.interface["io_in_workspace"]
    with pytest.raises(TypeError, match="patch_stripe"):
        usmp.compile(HELLO, patch_stripe=2)


def test_steps_are_the_pipelines() -> None:
    """``PIPELINE`` is the default compile's steps; ``STEPS`` (--stop-after)
    every step a compile can have, in pipeline order."""
    from usmp.tools.compile_driver import pipeline_steps

    assert list(PIPELINE) == pipeline_steps(CompileOptions())
    everything = CompileOptions(
        target="accel,c", offload=("CONV_2D=accel",), patch="auto"
    )
    steps = pipeline_steps(everything)
    assert steps == [s for s in STEPS if s in steps]
    assert set(STEPS) == set(steps)
    names = [p.name for p in compile_passes(everything)]
    assert steps == ["import", *names, "emit-c"]


def test_stop_after_a_step_the_compile_does_not_have(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = [str(HELLO), "-o", str(tmp_path / "o"), "-q", "--stop-after", "patch-stage"]
    assert main(argv) == 1
    assert "--stop-after patch-stage: not a step of this compile" in (
        capsys.readouterr().err
    )
