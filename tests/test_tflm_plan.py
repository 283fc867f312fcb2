"""``usmp-compile --emit-tflm-plan``: a second plan, for TFLite Micro's own
problem, run by TFLite Micro's own interpreter.

* the C library keeps its plan: with the flag its files are byte for byte
  those of the run without (overlaps on, the same workspace);
* the metadata entry has TFLM's format (version 1, subgraph 0, one int32 per
  tensor of every subgraph, -1 for tensors TFLM plans itself);
* TFLM's interpreter uses the exported plan: the arena head it reports
  shrinks (VWW int8: 73,728 -> 55,296 B; alexa, a streaming model with
  resource variables and a CALL_ONCE subgraph: 3,648 -> 3,248 B) or stays
  (ResNet-8; keyword_scrambled, whose SVDF scratch buffers TFLM places in
  the holes the plan leaves), never grows, equals the plan's own end, and
  the outputs are bit for bit those of the original model;
* ``check_offline_plan`` refuses, before anything is written, a plan where
  two tensors TFLM keeps alive at once share bytes (however they are
  disguised), and the other plans TFLM cannot use;
* when the plan cannot beat TFLM's own the reason is one stderr line and in
  metadata.json; when it would grow TFLM's arena the model is written with
  every tensor online.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import tflite

from usmp.frontend.tflite_reader import Model, read_model_file
from usmp.testing.shared_models import MODELS_DIR
from usmp.testing.tflm_reference import random_inputs, tflm_arena_bytes
from usmp.tools import tflm_plan as tp
from usmp.tools.tflm_plan import (
    METADATA_NAME,
    TFLMPlanError,
    check_offline_plan,
    planned_tensors,
    tflm_lifetimes,
    tflm_offsets,
    tflm_tensor_count,
    with_offline_plan,
)
from usmp.tools.usmp_compile import main

VWW = MODELS_DIR / "mlperf_tiny/vww_96_int8.tflite"
RESNET = MODELS_DIR / "mlperf_tiny/pretrainedResnet_quant.tflite"
HELLO = MODELS_DIR / "tflite_micro/hello_world_int8.tflite"
SVDF = MODELS_DIR / "tflite_micro/keyword_scrambled_8bit.tflite"
HYBRID = MODELS_DIR / "mlperf_tiny/kws_ref_model_float32.tflite"


def _alexa() -> Path:
    import pymicro_wakeword

    return Path(pymicro_wakeword.__file__).parent / "models" / "alexa.tflite"


def offline_metadata(data: bytes) -> list[int]:
    """The int32 values of the model's one OfflineMemoryAllocation buffer."""
    model = tflite.Model.GetRootAs(data, 0)
    found: list[list[int]] = []
    for i in range(model.MetadataLength()):
        entry = model.Metadata(i)
        if entry is None or entry.Name() != METADATA_NAME.encode():
            continue
        buffer = model.Buffers(entry.Buffer())
        assert buffer is not None
        raw = np.asarray(buffer.DataAsNumpy(), dtype=np.uint8).tobytes()
        found.append(np.frombuffer(raw, dtype="<i4").tolist())
    assert len(found) == 1
    return found[0]


def outputs(
    data: bytes, inputs: list[list[np.ndarray]], count: int
) -> list[np.ndarray]:
    """TFLM's outputs for each input set, in one interpreter (state kept)."""
    from tflite_micro.python.tflite_micro import runtime

    interpreter = runtime.Interpreter.from_bytes(data, arena_size=1 << 20)
    got = []
    for step in inputs:
        for i, x in enumerate(step):
            interpreter.set_input(x, i)
        interpreter.invoke()
        got += [interpreter.get_output(i).copy() for i in range(count)]
    return got


def emit(model: Path, tmp_path: Path, *extra: str) -> tuple[Path, Path]:
    planned = tmp_path / "planned.tflite"
    status = main(
        [str(model), "-o", str(tmp_path / "out"), "-q", "--emit-tflm-plan",
         str(planned), *extra]
    )  # fmt: skip
    assert status == 0
    return planned, tmp_path / "out"


def _library(out: Path) -> dict[str, bytes]:
    """The C library's files and its memory plan."""
    return {
        str(f.relative_to(out)): f.read_bytes()
        for f in sorted(out.rglob("*"))
        if f.is_file() and f.name != "metadata.json"
    }


@pytest.mark.parametrize(
    ("model", "io", "heads"),
    [
        (VWW, True, (73_728, 55_296)),
        (RESNET, True, (49_152, 49_152)),  # TFLM's own is at the lower bound
        (None, False, (3_648, 3_248)),  # alexa: variables, CALL_ONCE subgraph
        (SVDF, True, (672, 672)),  # SVDF scratch: holes left for TFLM's kernel
    ],
    ids=["vww", "resnet8", "alexa", "svdf"],
)
def test_tflm_uses_the_exported_plan(
    model: Path | None,
    io: bool,
    heads: tuple[int, int],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    model = model or _alexa()
    flags = ["--use-workspace-io"] if io else []
    planned, out = emit(model, tmp_path, *flags)
    original, ours = model.read_bytes(), planned.read_bytes()
    reader = read_model_file(model)
    # TFLM's format: version, subgraph, count, one offset per tensor
    values = offline_metadata(ours)
    assert values[:3] == [1, 0, tflm_tensor_count(reader)]
    offsets = values[3:]
    placed = planned_tensors(reader)
    assert placed and all(offsets[t] >= 0 for t in placed)
    assert all(o == -1 for t, o in enumerate(offsets) if t not in placed)
    check_offline_plan(reader, offsets)
    # TFLM's interpreter reports the arena of the exported plan: smaller or
    # equal, never larger; the persistent tail unchanged
    size = max(1 << 20, 10 * len(ours))  # one arena size: the same tail padding
    before, after = tflm_arena_bytes(original, size), tflm_arena_bytes(ours, size)
    assert (before["head"], after["head"]) == heads
    assert after["head"] <= before["head"] and after["tail"] == before["tail"]
    entry = json.loads((out / "metadata.json").read_text())["tflm_plan"]
    assert entry["offline_plan_used"] is True
    assert (entry["tflm_head_bytes"], entry["head_bytes"]) == heads
    assert (entry["note"] is None) == (heads[1] < heads[0])
    if entry["note"]:  # one line on stderr says why it is not smaller
        line = (
            f"{model.name}: note: --emit-tflm-plan: TFLite Micro's arena head is "
            f"{heads[0]:,} B with its own plan and with ours (both at the "
            f"{heads[0]:,} B its tensors and known scratch buffers need alive at once)"
        )
        assert line == f"{model.name}: note: --emit-tflm-plan: {entry['note']}"
        assert capsys.readouterr().err.splitlines().count(line) == 1
    assert entry["planned_bytes"] == heads[1]  # scratch holes where TFLM puts them
    # bit for bit the same outputs (alexa: 6 steps of its streaming state)
    steps = 6 if model.stem == "alexa" else 1
    for seed in (0, 1):
        x = [random_inputs(reader, 10 * seed + k) for k in range(steps)]
        want = outputs(original, x, len(reader.outputs))
        got = outputs(ours, x, len(reader.outputs))
        for g, w in zip(got, want, strict=True):
            assert g.dtype == w.dtype and np.array_equal(g, w)
    if model == RESNET:  # the C library keeps its own plan, overlaps on
        status = main([str(model), "-o", str(tmp_path / "plain"), "-q", *flags])
        assert status == 0
        assert _library(out) == _library(tmp_path / "plain")
        report = json.loads((out / "memory/plan.json").read_text())
        assert report["total"]["overlaps"]


def _with_offset(offsets: list[int], t: int, offset: int) -> list[int]:
    changed = list(offsets)
    changed[t] = offset
    return changed


def test_a_plan_with_two_live_tensors_sharing_bytes_is_refused() -> None:
    """The checker reads only the model and the offsets: two tensors TFLM
    keeps alive at once at overlapping bytes are refused, also when one
    sits inside the other, when they are a RESHAPE's input and output at
    different addresses, or when the entry is one another subgraph's
    allocated tensor reads too."""
    model = read_model_file(VWW)
    good = tp.replan(model)
    check_offline_plan(model, good)
    lifetimes = tflm_lifetimes(model)
    conv = model.operators[0]
    a, b = conv.inputs[0], conv.outputs[0]  # alive together at operator 0
    assert a in lifetimes and b in lifetimes
    for broken in (
        _with_offset(good, b, good[a]),  # the same address
        _with_offset(good, b, good[a] + 16),  # inside, 16 bytes on
    ):
        with pytest.raises(TFLMPlanError) as error:
            check_offline_plan(model, broken)
        message = str(error.value)
        assert message.startswith("vww_96_int8.tflite: error: --emit-tflm-plan")
        assert "share bytes but TFLite Micro keeps both alive at once" in message
        assert model.tensors[a].name in message or model.tensors[b].name in message
    reshape = next(op for op in model.operators if op.opcode == "RESHAPE")
    r_in, r_out = reshape.inputs[0], reshape.outputs[0]
    assert good[r_out] == good[r_in]  # in place: allowed
    with pytest.raises(TFLMPlanError, match="share bytes"):
        check_offline_plan(model, _with_offset(good, r_out, good[r_in] + 16))
    with pytest.raises(TFLMPlanError, match="not a multiple of TFLite Micro's 16"):
        check_offline_plan(model, _with_offset(good, b, good[b] + 4))
    constant = next(t for t, x in enumerate(model.tensors) if x.is_constant)
    with pytest.raises(TFLMPlanError, match="TFLite Micro does not plan it"):
        check_offline_plan(model, _with_offset(good, constant, 0))
    with pytest.raises(TFLMPlanError, match="expects one per tensor"):
        check_offline_plan(model, good[:-1])


def test_entries_another_subgraph_reads_stay_online() -> None:
    """TFLM gives tensor i of every subgraph entry i: alexa's model input
    (#0) and the init subgraph's first resource handle (#0) would share
    bytes, so entry 0 stays -1 and a plan that sets it is refused."""
    model = read_model_file(_alexa())
    assert model.subgraphs and tflm_tensor_count(model) == 82
    good = tp.replan(model)
    assert 0 in tflm_lifetimes(model) and 0 not in planned_tensors(model)
    assert good[0] == -1
    check_offline_plan(model, good)
    with pytest.raises(TFLMPlanError, match="same entry for tensor #0 of subgraph 1"):
        check_offline_plan(model, _with_offset(good, 0, max(good) + 1024))


def test_a_plan_that_would_grow_tflm_s_arena_is_not_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A valid plan larger than TFLM's own (here: every offset moved 4 KiB
    up) is measured in TFLM's interpreter, written with every tensor
    online, and the reason is one stderr line and in metadata.json."""
    real = tp.tflm_plan

    def wasteful(*args: Any, **kwargs: Any) -> tp.TFLMPlan:
        plan = real(*args, **kwargs)
        moved = [o + 4096 if o >= 0 else o for o in plan.offsets]
        return tp.TFLMPlan(moved, plan.source, plan.arena_bytes + 4096, 0)

    monkeypatch.setattr(tp, "tflm_plan", wasteful)
    planned, out = emit(HELLO, tmp_path)
    notes = [line for line in capsys.readouterr().err.splitlines() if "note" in line]
    assert len(notes) == 1
    assert notes[0].startswith("hello_world_int8.tflite: note: --emit-tflm-plan: ")
    assert "more than the 32 B of its own plan" in notes[0]
    assert all(o == -1 for o in offline_metadata(planned.read_bytes())[3:])
    entry = json.loads((out / "metadata.json").read_text())["tflm_plan"]
    assert entry["offline_plan_used"] is False and entry["note"] in notes[0]
    assert entry["head_bytes"] == entry["tflm_head_bytes"] == 32


def test_a_model_tflm_cannot_run_is_a_located_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    planned = tmp_path / "planned.tflite"
    status = main(
        [str(HYBRID), "-o", str(tmp_path / "out"), "-q", "--emit-tflm-plan",
         str(planned)]
    )  # fmt: skip
    err = capsys.readouterr().err
    assert status == 1 and not planned.exists()
    assert err.startswith(
        "kws_ref_model_float32.tflite: error: --emit-tflm-plan: TFLite Micro cannot "
        "allocate the model with its own plan (tensorflow/lite/micro/kernels/"
        "conv_common.cc Hybrid models are not supported"
    )
    assert "Traceback" not in err and "needs a model TFLite Micro runs" in err


def test_metadata_is_replaced_not_added(tmp_path: Path) -> None:
    data = HELLO.read_bytes()
    n = len(read_model_file(HELLO).tensors)
    once = with_offline_plan(data, [-1] * n)
    twice = with_offline_plan(once, [0] * n)
    assert offline_metadata(twice) == [1, 0, n, *([0] * n)]


def _hello_report(tmp_path: Path) -> tuple[dict[str, Any], Model]:
    status = main([str(HELLO), "-o", str(tmp_path / "out"), "-q", "--use-workspace-io"])
    assert status == 0
    report = json.loads((tmp_path / "out/memory/plan.json").read_text())
    return report, read_model_file(HELLO)


def test_compiled_offsets_map_to_the_tensors_they_hold(tmp_path: Path) -> None:
    report, model = _hello_report(tmp_path)
    offsets = tflm_offsets(model, report)
    by_tensor = {
        b["tensor"]["name"]: b["offset"]
        for b in report["buffers"]
        if b["role"] == "allocate"
    }
    io = [b["offset"] for b in report["buffers"] if b["role"] in ("input", "output")]
    ends = (*model.inputs, *model.outputs)
    for t, offset in enumerate(offsets):
        want = (
            io[ends.index(t)] if t in ends else by_tensor.get(model.tensors[t].name, -1)
        )
        assert offset == want
    # every tensor TFLM plans is in the compiled plan of this model
    assert sum(o >= 0 for o in offsets) == len(tflm_lifetimes(model))
    assert tp.tflm_plan(model, report).source == "compiled"


def test_a_plan_tflm_cannot_use_is_a_located_error(tmp_path: Path) -> None:
    report, model = _hello_report(tmp_path)
    # two tensors TFLM keeps alive together put at the same address
    main_buffers = [b for b in report["buffers"] if b["role"] != "constant"]
    first, second = main_buffers[0], main_buffers[1]
    second["offset"] = first["offset"]
    with pytest.raises(TFLMPlanError) as error:
        tflm_offsets(model, report)
    message = str(error.value)
    assert message.startswith("hello_world_int8.tflite: error: --emit-tflm-plan")
    assert "share bytes" in message


def test_unaligned_offsets_and_several_pools_are_refused(tmp_path: Path) -> None:
    report, model = _hello_report(tmp_path)
    moved = json.loads(json.dumps(report))
    next(b for b in moved["buffers"] if b["role"] != "constant")["offset"] += 4
    with pytest.raises(Exception, match="not a multiple of TFLite Micro's 16-byte"):
        tflm_offsets(model, moved)
    split = json.loads(json.dumps(report))
    split["pools"].append({**split["pools"][0], "name": "dtcm"})
    with pytest.raises(Exception, match="one arena, but the plan uses 2 workspace"):
        tflm_offsets(model, split)


def test_emit_tflm_plan_needs_a_tflite_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    mlir = Path(__file__).parents[1] / "examples" / "chain.mlir"
    status = main(
        [str(mlir), "-o", str(tmp_path / "out"), "--emit-tflm-plan",
         str(tmp_path / "x.tflite")]
    )  # fmt: skip
    assert status == 1
    assert "--emit-tflm-plan needs a .tflite input" in capsys.readouterr().err
    assert not (tmp_path / "x.tflite").exists()
