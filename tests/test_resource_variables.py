"""Resource variables (VAR_HANDLE, READ_VARIABLE, ASSIGN_VARIABLE, CALL_ONCE
and its init subgraph) against TFLite Micro, every tensor at every step of
sequences with a reset: synthetic int8 streaming models (a ring buffer and a
strided context window built from CONCATENATION + STRIDED_SLICE) and the
streaming wake-word models ``pymicro-wakeword`` ships."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from usmp.frontend.tflite_import import import_model, import_tflite_bytes
from usmp.frontend.tflite_reader import TFLiteImportError, read_model
from usmp.oracle.relay_interpreter import evaluate
from usmp.testing.run_c import run_module_sequence
from usmp.testing.tflite_builder import ModelBuilder
from usmp.testing.tflm_reference import random_inputs, run_tflm_sequence

PIPELINE = "fuse-ops,lower-ops,aot-lower-main,usmp"
STEPS, RESETS = 6, (4,)
SCALE, ZERO = 0.5, -3


def _streaming_model(init: int = ZERO, window: int = 3) -> bytes:
    """x (1, 1, 4) int8 -> window = concat(ring, x) along the time axis; the
    ring keeps the last ``window`` frames (strided slice of the window,
    assigned back); the outputs are the window and every second frame of it
    (a strided context window). The init subgraph fills the ring with
    ``init``."""
    m = ModelBuilder()
    q = dict(scale=SCALE, zero_point=ZERO)
    x = m.tensor((1, 1, 4), "int8", **q)
    res = m.tensor((), "resource")
    prev = m.tensor((1, window, 4), "int8", **q)
    cat = m.tensor((1, window + 1, 4), "int8", **q)
    new = m.tensor((1, window, 4), "int8", **q)
    strided = m.tensor((1, (window + 2) // 2, 4), "int8", **q)

    def ints(*v: int) -> int:
        return m.tensor((len(v),), "int32", np.array(v, np.int32))

    m.op("CALL_ONCE", [], [], ("CallOnceOptions", {"InitSubgraphIndex": 1}))
    m.op("VAR_HANDLE", [], [res], ("VarHandleOptions", {"SharedName": "ring"}))
    m.op("READ_VARIABLE", [res], [prev])
    m.op("CONCATENATION", [prev, x], [cat], ("ConcatenationOptions", {"Axis": 1}))
    m.op(
        "STRIDED_SLICE",
        [cat, ints(0, 1, 0), ints(1, window + 1, 4), ints(1, 1, 1)],
        [new],
        ("StridedSliceOptions", {}),
    )
    m.op("ASSIGN_VARIABLE", [res, new], [])
    m.op(
        "STRIDED_SLICE",
        [cat, ints(0, 0, 0), ints(1, window + 1, 4), ints(1, 2, 1)],
        [strided],
        ("StridedSliceOptions", {}),
    )
    init_graph = m.subgraph()
    handle = init_graph.tensor((), "resource")
    value = init_graph.tensor(
        (1, window, 4), "int8", np.full((1, window, 4), init, np.int8), **q
    )
    init_graph.op(
        "VAR_HANDLE", [], [handle], ("VarHandleOptions", {"SharedName": "ring"})
    )
    init_graph.op("ASSIGN_VARIABLE", [handle, value], [])
    return m.build([x], [cat, strided])


def _every_tensor(data: bytes, name: str, steps: int, resets: tuple[int, ...]) -> None:
    """The oracle and the C equal TFLite Micro on every tensor subgraph 0
    computes, at every step (the state reset before the steps ``resets``)."""
    model = read_model(data, name)
    produced = [
        t
        for op in model.operators
        for t in op.outputs
        if model.tensors[t].type_name != "RESOURCE"
    ]
    sequence = [
        [(x.astype(np.int16) // 4).astype(x.dtype) for x in random_inputs(model, s)]
        for s in range(steps)
    ]
    want = run_tflm_sequence(data, sequence, resets, tensors=produced)
    module = import_model(model, outputs=produced)
    kept: dict[str, np.ndarray] = {}
    for step, x in enumerate(sequence):
        if step in resets:
            kept.clear()
        got = evaluate(module, x, states=kept)
        for k, (g, w) in enumerate(zip(got, want[step], strict=True)):
            np.testing.assert_array_equal(g, w.reshape(g.shape), f"oracle {step} {k}")
    c = run_module_sequence(module, sequence, resets=resets, passes=PIPELINE)
    for step in range(steps):
        for k, (g, w) in enumerate(zip(c[step], want[step], strict=True)):
            np.testing.assert_array_equal(g, w.reshape(g.shape), f"C {step} {k}")


def test_ring_buffer_matches_tflite_micro_with_resets() -> None:
    _every_tensor(_streaming_model(), "ring.tflite", STEPS, RESETS)


def test_state_carries_over() -> None:
    """The window holds the previous frames: step k's window ends with the
    inputs of steps k-3..k (after the initial fill)."""
    data = _streaming_model()
    model = read_model(data, "ring.tflite")
    frames = [[np.full((1, 1, 4), 10 * k, np.int8)] for k in range(5)]
    got = run_module_sequence(import_model(model), frames, passes=PIPELINE)
    assert got[4][0][0, :, 0].tolist() == [10, 20, 30, 40]
    assert got[1][0][0, :, 0].tolist() == [ZERO, ZERO, 0, 10]
    assert got[4][1][0, :, 0].tolist() == [10, 30]


def test_init_subgraph_value_is_the_first_invocations_state() -> None:
    """An init subgraph assigning other values than the default fill: the
    first invocation (no reset) sees them, as in TFLite Micro."""
    _every_tensor(_streaming_model(init=7, window=2), "init7.tflite", 3, ())


def test_state_is_planned_in_the_persistent_pool() -> None:
    import usmp

    lib = usmp.compile(import_tflite_bytes(_streaming_model(), "ring.tflite"))
    assert lib.plan.persistent_bytes == 12  # the ring: 3 frames x 4 int8


def _wake_word_models() -> list[Path]:
    try:
        import pymicro_wakeword
    except ImportError:  # pragma: no cover - a dev dependency
        return []
    return sorted((Path(pymicro_wakeword.__file__).parent / "models").glob("*.tflite"))


@pytest.mark.parametrize(
    "path",
    [p for p in _wake_word_models() if p.stem in ("alexa", "okay_nabu")],
    ids=lambda p: p.stem,
)
def test_wake_word_model_matches_tflite_micro(path: Path) -> None:
    """Real int8 streaming models (6 variables each, init subgraph, SPLIT_V in
    okay_nabu): every tensor of 6 steps with a reset, bit for bit."""
    _every_tensor(path.read_bytes(), path.name, STEPS, RESETS)


def _refused(data: bytes) -> str:
    with pytest.raises(TFLiteImportError) as e:
        import_tflite_bytes(data, "m.tflite")
    return str(e.value)


def test_init_subgraph_with_computation_is_refused() -> None:
    m = ModelBuilder()
    x = m.tensor((1, 4), "int8", scale=SCALE, zero_point=ZERO)
    res = m.tensor((), "resource")
    prev = m.tensor((1, 4), "int8", scale=SCALE, zero_point=ZERO)
    m.op("CALL_ONCE", [], [], ("CallOnceOptions", {"InitSubgraphIndex": 1}))
    m.op("VAR_HANDLE", [], [res], ("VarHandleOptions", {"SharedName": "v"}))
    m.op("READ_VARIABLE", [res], [prev])
    m.op("ASSIGN_VARIABLE", [res, x], [])
    sub = m.subgraph()
    h = sub.tensor((), "resource")
    c = sub.tensor((1, 4), "int8", np.zeros((1, 4), np.int8))
    y = sub.tensor((1, 4), "int8")
    sub.op("VAR_HANDLE", [], [h], ("VarHandleOptions", {"SharedName": "v"}))
    sub.op("RELU", [c], [y])
    sub.op("ASSIGN_VARIABLE", [h, y], [])
    message = _refused(m.build([x], [prev]))
    assert "subgraph 1, operator 1 (RELU)" in message
    assert "may only hold VAR_HANDLE and ASSIGN_VARIABLE of constants" in message


def test_variable_of_two_shapes_is_refused() -> None:
    m = ModelBuilder()
    x = m.tensor((1, 4), "int8")
    res = m.tensor((), "resource")
    prev = m.tensor((1, 8), "int8")
    m.op("VAR_HANDLE", [], [res], ("VarHandleOptions", {"SharedName": "v"}))
    m.op("READ_VARIABLE", [res], [prev])
    m.op("ASSIGN_VARIABLE", [res, x], [])
    message = _refused(m.build([x], [prev]))
    assert "operator 2 (ASSIGN_VARIABLE): variable 'v' is INT8[1, 8]" in message
