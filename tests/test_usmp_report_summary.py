"""The memory report for people: TFLite tensor and operator names carried from
the importer to the report, the text and CSV summaries, and pictures whose
labels stay inside their rectangles."""

from __future__ import annotations

import csv
import io
import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from xdsl.dialects.builtin import FileLineColLoc, IntAttr, NameLoc, StringAttr

from usmp.diagnostics import format_location, operator_location, tensor_location
from usmp.frontend.tflite_reader import read_model_file
from usmp.testing.shared_models import MODELS_DIR
from usmp.tools.usmp_compile import main

KWS = MODELS_DIR / "mlperf_tiny/kws_ref_model.tflite"
VWW = MODELS_DIR / "mlperf_tiny/vww_96_int8.tflite"
SVG = "{http://www.w3.org/2000/svg}"


def test_tensor_locations_keep_diagnostics_as_they_were() -> None:
    op = NameLoc(
        StringAttr("CONV_2D"),
        FileLineColLoc(StringAttr("m.tflite"), IntAttr(12), IntAttr(0)),
    )
    named = NameLoc(StringAttr("conv1/Relu"), op)
    assert format_location(named) == format_location(op) == "m.tflite:12 (CONV_2D)"
    assert tensor_location(named) == ("conv1/Relu", "CONV_2D", 12)
    assert tensor_location(op) is None
    assert operator_location(named) == operator_location(op) == ("CONV_2D", 12)


@pytest.fixture(scope="module")
def kws(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("kws") / "out"
    assert main([str(KWS), "-o", str(out), "-q"]) == 0
    return out


def test_buffers_and_steps_carry_tflite_names(kws: Path) -> None:
    report = json.loads((kws / "memory/plan.json").read_text())
    model = read_model_file(KWS)
    computing = {t: op for op in model.operators for t in op.outputs}
    # every buffer of main holds the TFLite tensor its location names
    allocations = [b for b in report["buffers"] if b["role"] == "allocate"]
    assert allocations
    for b in allocations:
        tensor = b["tensor"]
        op = model.operators[tensor["operator"]]
        assert tensor["opcode"] == op.opcode
        assert tensor["name"] in {model.tensors[t].name for t in op.outputs}
    # weights too (named after their TFLite tensor)
    weights = [b for b in report["buffers"] if b["role"] == "constant" and b["tensor"]]
    assert weights and all(b["read_at"] for b in weights)
    # steps are named by the operators they run, in the model's order
    names = {model.tensors[t].name for t in computing}
    assert names >= {b["tensor"]["name"] for b in allocations}
    operators = report["step_operators"]
    assert len(operators) == len(report["steps"])
    assert operators[0] == "CONV_2D #0"
    indices = [int(k) for label in operators for k in re.findall(r"#(\d+)", label)]
    assert indices == sorted(indices)
    assert {model.operators[k].opcode for k in indices} <= {
        op.opcode for op in model.operators
    }


def test_summary_text_and_csv(kws: Path) -> None:
    report = json.loads((kws / "memory/plan.json").read_text())
    text = (kws / "memory/summary.txt").read_text()
    rows = list(csv.DictReader(io.StringIO((kws / "memory/summary.csv").read_text())))
    pools = [r for r in rows if r["section"] == "pool"]
    steps = [r for r in rows if r["section"] == "step"]
    assert [(p["pool"], int(p["size"]), int(p["lower_bound"])) for p in pools] == [
        (p["name"], p["size"], p["lower_bound"]) for p in report["pools"]
    ]
    assert [s["function"] for s in steps] == report["steps"]
    assert [s["operator"] for s in steps] == report["step_operators"]
    # the live bytes are those of the buffers live at each step
    sizes = {
        b["tensor"]["name"].split(";")[0] if b["tensor"] else b["name"]: b["size"]
        for b in report["buffers"]
        if b["role"] != "constant"
    }
    for s in steps:
        live = s["buffers_live"].split(";") if s["buffers_live"] else []
        assert int(s["live_bytes"]) == sum(sizes[n] for n in live)
    workspace = report["total"]["workspace_size"]
    no_alias = report["total"]["workspace_no_alias_bound"]
    assert max(int(s["live_bytes"]) for s in steps) == no_alias == 16_000
    # overlapping buffers (usmp_overlap): below the no-alias bound
    assert workspace == 8_448
    # the text has the same tables, and says why the peak is above the pool
    assert "global_workspace  workspace   8,448          8,384  1.008" in text
    assert "Workspace: 8,448 B planned, peak live 16,000 B\n  (peak live counts" in text
    for s in steps:
        assert re.search(
            rf"^ *{s['step']}  {re.escape(s['operator'])} +{int(s['live_bytes']):,} ",
            text,
            re.M,
        )


def test_usmp_compile_prints_the_summary_unless_quiet(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    hello = MODELS_DIR / "tflite_micro/hello_world_int8.tflite"
    assert main([str(hello), "-o", str(tmp_path / "a")]) == 0
    err = capsys.readouterr().err
    assert "Memory summary of" in err and "FULLY_CONNECTED #2" in err
    assert main([str(hello), "-o", str(tmp_path / "b"), "-q"]) == 0
    assert capsys.readouterr().err == ""
    assert (tmp_path / "b/memory/summary.txt").is_file()


def _width(text: ET.Element) -> float:
    """An upper estimate of the rendered width (sans-serif, 0.6 em)."""
    font = float(text.get("font-size", "11"))
    return 0.6 * font * len(text.text or "")


@pytest.mark.parametrize("model", [KWS, VWW])
def test_picture_labels_stay_inside_their_rectangles(
    model: Path, tmp_path: Path
) -> None:
    assert main([str(model), "-o", str(tmp_path), "-q"]) == 0
    report = json.loads((tmp_path / "memory/plan.json").read_text())
    for pool in report["pools"]:
        root = ET.parse(tmp_path / f"memory/plan.{pool['name']}.svg").getroot()
        labelled = 0
        for group in root.iter(f"{SVG}g"):
            rect = group.find(f"{SVG}rect")
            if rect is None or group.get("class") == "legend":
                continue
            x, w = float(rect.get("x", 0)), float(rect.get("width", 0))
            y, h = float(rect.get("y", 0)), float(rect.get("height", 0))
            for text in group.findall(f"{SVG}text"):
                labelled += 1
                centre, width = float(text.get("x", 0)), _width(text)
                assert x - 1 <= centre - width / 2 and centre + width / 2 <= x + w + 1
                assert y <= float(text.get("y", 0)) <= y + h
        # workspace buffers are wide enough to name (narrow bars are not)
        assert labelled > 0 or pool["kind"] == "constant"
        if pool["kind"] == "workspace":
            _check_legend(tmp_path / f"memory/plan.{pool['name']}.svg")
        # every step is named on the time axis (KWS and VWW have few steps)
        axis = [
            t.text or ""
            for t in root.iter(f"{SVG}text")
            if (t.get("transform") or "").startswith("rotate(60")
        ]
        assert [a.split(" ", 1)[1] for a in axis] == report["step_operators"]


def test_short_labels_keep_the_part_that_sets_a_name_apart() -> None:
    from usmp.passes.usmp_report_summary import short_labels

    assert short_labels(
        ["model/act_1/Relu", "model/act_10/Relu", "model/conv/BiasAdd", "model/conv"]
    ) == ["act_1", "act_10", "conv/BiasAdd", "conv"]
    assert short_labels(["x/a/b", "x/a/b"]) == ["b", "b"]  # equal: kept whole
    assert short_labels(["input_1"]) == ["input_1"]


def test_labels_cut_on_the_right() -> None:
    from usmp.passes.usmp_report_svg import _fit

    assert _fit("block_13_expand_relu", 60, 11) == "block_13…"
    assert _fit("t12", 60, 11) == "t12"
    assert _fit("block_13_expand_relu", 20, 11) is None


def _check_legend(svg: Path) -> None:
    """Every kind of mark of a workspace picture (hatched shared bytes when
    the plan has them) has a swatch and a text in the legend, and the
    legend's texts stay inside the picture."""
    root = ET.parse(svg).getroot()
    width = float(root.get("width", 0))
    group = root.find(f'{SVG}g[@class="legend"]')
    assert group is not None
    legend = list(group)
    root.remove(group)
    texts = [e.text or "" for e in legend if e.tag == f"{SVG}text"]
    needed = ["a buffer", "bytes in use", "pool size", "lower bound"]
    hatched = any(e.get("fill") == "url(#shared)" for e in root.iter())
    needed += ["shares with its input"] if hatched else []
    for what in needed:
        assert any(what in t for t in texts), (what, texts)
    fills = {e.get("fill") for e in legend if e.tag == f"{SVG}rect"}
    assert ("url(#shared)" in fills) == hatched
    strokes = {e.get("stroke") for e in legend if e.tag == f"{SVG}line"}
    assert {"black", "#d62728"} <= strokes
    for t in legend:
        if t.tag == f"{SVG}text":
            assert float(t.get("x", 0)) + _width(t) <= width, t.text
