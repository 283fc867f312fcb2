"""``usmp-compile --report-html OUT.html [--profile-data PROFILE.txt]``
(``usmp.tools.report_html``), on the sine model (three operators):

* the page is one well-formed HTML file (every element closed in order,
  read with ``html.parser``) with no ``http(s)://`` address anywhere (the
  SVGs are inlined without their ``xmlns``), the pools' pictures inlined;
* one layer row per step, with the buffers each reads and writes at their
  pool offsets and the workspace live;
* with the table the profiled build's example printed, the profile columns
  (per run, share) hold its values; without it they are absent;
* a malformed profile, or one of another model, is an error at the file
  (and line) with exit status 1, and no page is written.
"""

from __future__ import annotations

import json
from html.parser import HTMLParser
from pathlib import Path

import pytest

from usmp.frontend.tflite_reader import read_model_file
from usmp.testing.firmware import make_example, run_example
from usmp.testing.shared_models import MODELS_DIR
from usmp.testing.tflm_reference import random_inputs
from usmp.tools.profile_table import parse_profile
from usmp.tools.usmp_compile import main as usmp_compile

SINE = MODELS_DIR / "tflite_micro/hello_world_int8.tflite"
_VOID = {"meta", "br", "img", "hr", "input", "link"}
# SVG elements written self-closed
_SELF_CLOSED = {"rect", "line", "path", "circle", "polygon", "polyline", "use"}


class _Checker(HTMLParser):
    """Elements closed in order; text of the table cells; every attribute."""

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[str] = []
        self.errors: list[str] = []
        self.cells: list[str] = []
        self.headers: list[str] = []
        self.attributes: list[str] = []
        self.svgs = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.attributes += [v or "" for _, v in attrs]
        if tag == "svg":
            self.svgs += 1
        if tag not in _VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.attributes += [v or "" for _, v in attrs]

    def handle_endtag(self, tag: str) -> None:
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes {self.stack[-1:]}")
            return
        self.stack.pop()

    def handle_data(self, data: str) -> None:
        if self.stack and self.stack[-1] == "td":
            self.cells.append(data.strip())
        if self.stack and self.stack[-1] == "th":
            self.headers.append(data.strip())


def _check(page: str) -> _Checker:
    checker = _Checker()
    checker.feed(page)
    checker.close()
    assert checker.errors == [] and checker.stack == []
    assert "http://" not in page and "https://" not in page
    assert "<script" not in page and "<link" not in page and "@import" not in page
    return checker


@pytest.fixture(scope="module")
def profiled(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """The profile table the sine model's --profile example printed."""
    out = tmp_path_factory.mktemp("html") / "sine"
    argv = [str(SINE), "-o", str(out), "-q", "--module-name", "sine", "--profile"]
    assert usmp_compile(argv) == 0
    inputs = random_inputs(read_model_file(SINE), seed=0)
    _, printed = run_example(make_example(out), out, inputs, runs=5)
    return out, printed


def _page(tmp_path: Path, *flags: str) -> tuple[int, Path, Path]:
    out, page = tmp_path / "out", tmp_path / "report.html"
    argv = [str(SINE), "-o", str(out), "-q", "--module-name", "sine"]
    return usmp_compile([*argv, "--report-html", str(page), *flags]), out, page


def test_page_without_profile(tmp_path: Path) -> None:
    status, out, page = _page(tmp_path)
    assert status == 0
    checker = _check(page.read_text())
    plan = json.loads((out / "memory/plan.json").read_text())
    assert checker.svgs == len(
        [p for p in plan["pools"] if (out / f"memory/plan.{p['name']}.svg").exists()]
    )
    assert checker.svgs >= 1
    assert "share" not in checker.headers
    assert "workspace live B" in checker.headers
    for name in plan["steps"]:
        assert name in checker.cells
    # the buffers each step writes, at their pool offsets
    for step in plan["step_buffers"]:
        for use in step:
            b = next((b for b in plan["buffers"] if b["name"] == use["buffer"]), None)
            if b is not None and use["access"] == "write":
                assert (
                    f"{b['pool']}@{b['offset']:,}, {b['size']:,} B" in page.read_text()
                )


def test_page_with_profile(profiled: tuple[Path, str], tmp_path: Path) -> None:
    _, printed = profiled
    data = tmp_path / "profile.txt"
    data.write_text(printed)
    status, _, page = _page(tmp_path, "--profile-data", str(data))
    assert status == 0
    checker = _check(page.read_text())
    assert {"us per run", "share"} <= set(checker.headers)
    table = parse_profile(printed)
    assert len(table.rows) == 3
    for row in table.rows:
        value = (
            f"{row.value:,.3f}" if not row.value.is_integer() else f"{row.value:,.0f}"
        )
        assert value in checker.cells
        assert row.function in checker.cells


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (
            lambda t: t.replace(" 1  tvmgen_sine", " one  tvmgen_sine"),
            r":\d+: error: malformed row",
        ),
        (
            lambda t: t.replace("model sine", "model kws"),
            r": error: the profile is of model 'kws'",
        ),
        (
            lambda t: t.replace("tvmgen_sine_fused", "tvmgen_sine_other", 1),
            r": error: profile row 0 times",
        ),
        (lambda t: "time: 1.0 us\n", r": error: no profile table"),
    ],
)
def test_bad_profile_is_a_located_error(
    profiled: tuple[Path, str],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    edit,
    message: str,
) -> None:
    data = tmp_path / "profile.txt"
    data.write_text(edit(profiled[1]))
    status, _, page = _page(tmp_path, "--profile-data", str(data))
    assert status == 1
    err = capsys.readouterr().err
    assert err.startswith(str(data)), err
    assert "Traceback" not in err
    import re

    assert re.search(message, err), err
    assert not page.exists()
