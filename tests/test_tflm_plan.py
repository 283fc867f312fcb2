"""``usmp-compile --emit-tflm-plan``: our plan as TFLite Micro's offline
memory plan, run by TFLite Micro's own interpreter.

* the metadata entry has TFLM's format (version 1, subgraph 0, one int32 per
  tensor, -1 for tensors TFLM plans itself);
* TFLM's planned arena part shrinks to our plan (VWW int8: 55,296 B instead
  of 73,728 B) and the outputs are bit for bit those of the original model;
* where fusion leaves tensors TFLM allocates out of the compiled plan
  (ResNet-8's residual adds), the planner is run on TFLM's own lifetimes and
  the arena is still no larger than TFLM's;
* plans TFLM cannot use are located errors naming the tensors.
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
from usmp.tools.tflm_plan import (
    METADATA_NAME,
    TFLMPlanError,
    tflm_lifetimes,
    tflm_offsets,
    tflm_plan,
    with_offline_plan,
)
from usmp.tools.usmp_compile import main

VWW = MODELS_DIR / "mlperf_tiny/vww_96_int8.tflite"
RESNET = MODELS_DIR / "mlperf_tiny/pretrainedResnet_quant.tflite"
HELLO = MODELS_DIR / "tflite_micro/hello_world_int8.tflite"


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


def outputs(data: bytes, inputs: list[np.ndarray], count: int) -> list[np.ndarray]:
    from tflite_micro.python.tflite_micro import runtime

    interpreter = runtime.Interpreter.from_bytes(data, arena_size=1 << 20)
    for i, x in enumerate(inputs):
        interpreter.set_input(x, i)
    interpreter.invoke()
    return [interpreter.get_output(i) for i in range(count)]


def emit(model: Path, tmp_path: Path, *extra: str) -> tuple[Path, Path]:
    planned = tmp_path / "planned.tflite"
    status = main(
        [str(model), "-o", str(tmp_path / "out"), "-q", "--emit-tflm-plan",
         str(planned), *extra]
    )  # fmt: skip
    assert status == 0
    return planned, tmp_path / "out"


@pytest.mark.parametrize(
    ("model", "io", "source"),
    [
        (VWW, True, "compiled"),
        (VWW, False, "replanned"),  # I/O outside the compiled workspace
        (RESNET, True, "replanned"),  # fused residual adds
    ],
)
def test_tflm_runs_our_plan_in_a_smaller_arena(
    model: Path, io: bool, source: str, tmp_path: Path
) -> None:
    planned, out = emit(model, tmp_path, *(["--use-workspace-io"] if io else []))
    original, ours = model.read_bytes(), planned.read_bytes()
    reader = read_model_file(model)
    # TFLM's format: version, subgraph, count, one offset per tensor
    values = offline_metadata(ours)
    assert values[:3] == [1, 0, len(reader.tensors)]
    offsets = values[3:]
    planned_by_tflm = tflm_lifetimes(reader)
    assert all(offsets[t] >= 0 for t in planned_by_tflm)  # all offline
    assert all(
        offsets[t] == -1 for t in range(len(offsets)) if t not in planned_by_tflm
    )
    assert all(o % 16 == 0 for o in offsets if o >= 0)
    report = json.loads((out / "memory/plan.json").read_text())
    assert tflm_plan(reader, report).source == source
    # TFLM's planned (head) part shrinks to our plan, the rest is unchanged
    size = max(1 << 20, 10 * len(ours))  # one arena size: the same tail padding
    before, after = tflm_arena_bytes(original, size), tflm_arena_bytes(ours, size)
    assert after["head"] <= before["head"]
    assert after["tail"] == before["tail"]
    if model == VWW:
        assert (before["head"], after["head"]) == (73_728, 55_296)
    if source == "compiled":  # the library's own workspace
        assert after["head"] == report["total"]["workspace_size"]
    # bit for bit the same outputs
    for seed in (0, 1):
        x = random_inputs(reader, seed)
        want = outputs(original, x, len(reader.outputs))
        got = outputs(ours, x, len(reader.outputs))
        for g, w in zip(got, want, strict=True):
            assert g.dtype == w.dtype and np.array_equal(g, w)


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
