"""``usmp-compile --profile`` (``convert-to-emitc{profile}``,
``lowering/profile.py``, the kit's ``example/profile.c``):

* KWS int8 profiled: the kit's example (gcc, ``-Werror -pedantic``) prints a
  table with one row per operator call, named as the library's operator
  table and the entry's calls, and its outputs are TFLite Micro's bit for
  bit, as the unprofiled build's are (``tests/test_firmware_kit.py``; and
  ``test_api_profile`` compares the two builds directly on the sine model);
* without ``--profile`` no generated file mentions a profile symbol;
* an application's own (strong) hooks replace the library's weak ones, and
  without any the library links and runs (its weak hooks do nothing);
* the table reads back (``usmp.tools.profile_table``), and a malformed one
  is an error at its line.

The Cortex-M side (SysTick under QEMU) is ``tests/test_cortex_m.py``.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import numpy as np
import pytest

from usmp.frontend.tflite_reader import read_model_file
from usmp.testing.firmware import make_example, run_example
from usmp.testing.shared_models import MODELS_DIR
from usmp.testing.tflm_reference import random_inputs, run_tflm
from usmp.tools.compile_options import CompileOptions
from usmp.tools.compile_pipeline import compile_passes, pipeline_text
from usmp.tools.profile_table import ProfileError, format_profile, parse_profile
from usmp.tools.usmp_compile import main as usmp_compile

KWS = MODELS_DIR / "mlperf_tiny/kws_ref_model.tflite"
_TABLE_ROW = re.compile(r'^  \{"(\w+)", "(\w*)", (-?\d+)\},$', re.MULTILINE)


@pytest.fixture(scope="module")
def outputs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("profile")
    for name, flags in (("plain", []), ("profiled", ["--profile"])):
        argv = [str(KWS), "-o", str(root / name), "-q", "--module-name", "kws"]
        assert usmp_compile(argv + flags) == 0
    return root / "plain", root / "profiled"


def _operator_table(out: Path) -> list[tuple[str, str, int]]:
    source = (out / "codegen/host/src/tvmgen_kws.c").read_text()
    return [(f, op, int(k)) for f, op, k in _TABLE_ROW.findall(source)]


def test_profiled_example_prints_one_row_per_operator(
    outputs: tuple[Path, Path],
) -> None:
    _, profiled = outputs
    model = read_model_file(KWS)
    inputs = random_inputs(model, seed=3)
    got, printed = run_example(make_example(profiled), profiled, inputs, runs=3)
    # bit for bit TFLite Micro's, as the unprofiled build's (test_firmware_kit)
    want = run_tflm(KWS.read_bytes(), inputs, list(model.outputs))
    assert [g.tobytes() for g in got] == [w.tobytes() for w in want]
    table = parse_profile(printed, "example output")
    operators = _operator_table(profiled)
    header = (profiled / "codegen/host/include/tvmgen_kws.h").read_text()
    assert f"#define TVMGEN_KWS_PROFILE_OPERATORS {len(operators)}" in header
    assert [(r.function, r.tflite_operator, r.tflite_index) for r in table.rows] == (
        operators
    )
    # the entry calls them in that order, each between its hooks
    entry = (profiled / "codegen/host/src/tvmgen_kws_aot_main.c").read_text()
    calls = re.findall(
        r"tvmgen_kws_profile_begin\((\d+)\);\n\s+(\w+)\(.*\);\n"
        r"\s+tvmgen_kws_profile_end\((\d+)\);",
        entry,
    )
    assert [(int(b), f, int(e)) for b, f, e in calls] == [
        (k, f, k) for k, (f, _, _) in enumerate(operators)
    ]
    assert [r.tflite_operator for r in table.rows][:2] == [
        "CONV_2D",
        "DEPTHWISE_CONV_2D",
    ]
    assert table.runs == 3 and table.unit.startswith("us per run (CPU time)")
    assert table.total > 0
    assert parse_profile(format_profile(table)) == table


def test_without_profile_no_profile_symbol(outputs: tuple[Path, Path]) -> None:
    plain, profiled = outputs
    files = [*sorted((plain / "codegen").rglob("*.[ch]")), *plain.glob("example/*")]
    files += [plain / "Makefile", plain / "CMakeLists.txt", plain / "metadata.json"]
    assert len(files) > 5
    for path in files:
        assert "profile" not in path.read_text(), path
    assert not (plain / "example/profile.c").exists()
    assert (profiled / "example/profile.c").exists()


_USER_HOOKS = r"""
#include <stdio.h>
#include "tvmgen_kws.h"
static int8_t input[TVMGEN_KWS_INPUT_1_SIZE], output[TVMGEN_KWS_IDENTITY_SIZE];
#ifdef USER_HOOKS
static int events[2 * TVMGEN_KWS_PROFILE_OPERATORS + 1], n;
void tvmgen_kws_profile_begin(int32_t k) { events[n++] = (int)k; }
void tvmgen_kws_profile_end(int32_t k) { events[n++] = -1 - (int)k; }
#endif
int main(void) {
  TVMInputs_kws in = { input };
  TVMOutputs_kws out = { output };
  int i;
  if (tvmgen_kws_run(&in, &out) != 0) return 1;
#ifdef USER_HOOKS
  for (i = 0; i < n; ++i) printf("%d ", events[i]);
#endif
  (void)i;
  printf("%s\n", tvmgen_kws_profile_operators[0].tflite_operator);
  return 0;
}
"""


def test_user_hooks_override_the_weak_ones(
    outputs: tuple[Path, Path], tmp_path: Path
) -> None:
    _, profiled = outputs
    make_example(profiled)  # builds build/libtvmgen_kws.a
    main = tmp_path / "app.c"
    main.write_text(_USER_HOOKS)
    printed = {}
    for name, defines in (("user", ["-DUSER_HOOKS"]), ("weak", [])):
        exe = tmp_path / name
        subprocess.run(
            ["gcc", "-std=c99", "-O2", "-Wall", "-Wextra", "-Werror", *defines]
            + ["-I", str(profiled / "codegen/host/include"), str(main)]
            + [str(profiled / "build/libtvmgen_kws.a"), "-lm", "-o", str(exe)],
            check=True,
        )
        run = subprocess.run([str(exe)], capture_output=True, text=True, check=True)
        printed[name] = run.stdout.split()
    n = len(_operator_table(profiled))
    events = [int(x) for x in printed["user"][:-1]]
    assert events == [e for k in range(n) for e in (k, -1 - k)]
    assert printed["user"][-1] == printed["weak"][-1] == "CONV_2D"
    assert printed["weak"] == ["CONV_2D"]  # the library's hooks: nothing


def test_profile_option_is_a_pass_option() -> None:
    text = pipeline_text(compile_passes(CompileOptions(profile=True)))
    assert text.endswith("convert-to-emitc{profile=true}")
    assert "profile" not in pipeline_text(compile_passes(CompileOptions()))


_GOOD = """output 0 Identity int8_t[1][12]: 1 2
profile: model m, 2 operators, 1 run, us per run (clock_gettime)
    #  function   TFLite op   index   per run   share
    0  tvmgen_m_a CONV_2D         0    10.000   25.0%
    1  tvmgen_m_b -              -1    30.000   75.0%
       total                           40.000  100.0%
"""


def test_profile_table_reads_back_and_locates_errors() -> None:
    table = parse_profile(_GOOD, "p.txt")
    assert [
        (r.function, r.tflite_operator, r.tflite_index, r.value) for r in table.rows
    ] == [
        ("tvmgen_m_a", "CONV_2D", 0, 10.0),
        ("tvmgen_m_b", "", -1, 30.0),
    ]
    assert table.share(table.rows[1]) == 75.0
    bad_row = _GOOD.replace("    1  tvmgen_m_b -   ", "    1  tvmgen_m_b")
    with pytest.raises(ProfileError, match=r"^p\.txt:5: error: malformed row"):
        parse_profile(bad_row, "p.txt")
    with pytest.raises(
        ProfileError, match=r"^p\.txt:2: error: malformed profile header"
    ):
        parse_profile(_GOOD.replace("2 operators", "two operators"), "p.txt")
    with pytest.raises(ProfileError, match=r"^p\.txt: error: no profile table"):
        parse_profile("time: 1 us\n", "p.txt")
    with pytest.raises(ProfileError, match=r"^p\.txt:4: error: the table ends"):
        parse_profile("\n".join(_GOOD.splitlines()[:4]), "p.txt")
    with pytest.raises(ProfileError, match=r"p\.txt:6: error: expected the 'total"):
        parse_profile(_GOOD.replace("total", "sum"), "p.txt")
    assert np.isclose(table.total, 40.0)


def test_api_profile(tmp_path: Path) -> None:
    """``CompileOptions(profile=True)`` and ``Library.profile``: the sine
    model's three operators, outputs unchanged by the hooks."""
    import usmp

    sine = MODELS_DIR / "tflite_micro/hello_world_int8.tflite"
    x = [np.array([[5]], np.int8)]
    lib = usmp.compile(sine, usmp.CompileOptions(profile=True), module_name="sine")
    table = lib.profile(x, runs=3)
    assert [r.tflite_operator for r in table.rows] == ["FULLY_CONNECTED"] * 3
    assert table.model == "sine" and table.runs == 3
    plain = usmp.compile(sine, module_name="sine")
    assert [a.tobytes() for a in lib.run(x)] == [a.tobytes() for a in plain.run(x)]
    with pytest.raises(usmp.CompileError, match="CompileOptions\\(profile=True\\)"):
        plain.profile(x)
