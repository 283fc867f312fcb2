"""TFLite Micro as the reference runtime: seeded inputs, invocation, comparison.

Used by the model tests, the benchmarks and ``usmp-compare-tflm``. Needs the
``tflite-micro`` package (a dev dependency): TFLite Micro's own interpreter
with its reference kernels, whose int8 arithmetic is the one to match bit for
bit.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from usmp.frontend.tflite_reader import Model
from usmp.tools.tflm_plan import TFLMError as TFLMError  # re-exported
from usmp.tools.tflm_plan import tflm_arena_bytes as tflm_arena_bytes

FLOAT_OUTPUT_RTOL = 1e-5
"""Float outputs must agree within this error relative to the output's magnitude."""


def random_inputs(model: Model, seed: int) -> list[np.ndarray]:
    """Seeded inputs covering each input's range: uniform over the integer
    range, or standard normal (x2) for float inputs."""
    rng = np.random.default_rng(seed)
    inputs: list[np.ndarray] = []
    for index in model.inputs:
        t = model.tensors[index]
        assert t.dtype is not None
        if t.dtype.kind in "iu":
            info = np.iinfo(t.dtype)
            values = rng.integers(info.min, info.max, size=t.shape, endpoint=True)
            inputs.append(values.astype(t.dtype))
        else:
            inputs.append((2.0 * rng.standard_normal(size=t.shape)).astype(t.dtype))
    return inputs


def tflm_arena_size(model_data: bytes) -> int:
    """An arena large enough for TFLite Micro to run the model with every
    tensor preserved (``kPreserveAllTensors``: no two tensors share bytes),
    from what the model needs rather than its file size: the bytes of every
    tensor that is not a constant, in every subgraph, 16-byte aligned, twice
    over (kernels' scratch, variables, the planner's own copies), plus the
    interpreter's bookkeeping (256 B a tensor, 2 KiB an operator) and 1 MiB.
    A model of large weights and small activations needs little; one whose
    activations outweigh its file many times over (which a multiple of the
    file size missed: "Failed to resize buffer") gets what it needs."""
    from usmp.frontend.tflite_reader import read_model

    model = read_model(model_data, "model")
    graphs = [(model.tensors, model.operators)] + [
        (g.tensors, g.operators) for g in model.subgraphs
    ]
    tensor_bytes = n_tensors = n_ops = 0
    for tensors, operators in graphs:
        n_tensors += len(tensors)
        n_ops += len(operators)
        for t in tensors:
            if t.data is None:
                size = int(np.prod(t.shape, dtype=np.int64))
                itemsize = t.dtype.itemsize if t.dtype is not None else 8
                tensor_bytes += (size * itemsize + 15) // 16 * 16
    return 2 * tensor_bytes + 256 * n_tensors + 2048 * n_ops + (1 << 20)


def run_tflm(
    model_data: bytes, inputs: Sequence[np.ndarray], tensors: Sequence[int]
) -> list[np.ndarray]:
    """Invoke TFLite Micro on ``inputs``; the values of ``tensors``. Raises
    ``TFLMError`` when TFLite Micro cannot load or run the model."""
    from tflite_micro.python.tflite_micro import runtime

    try:
        interpreter = runtime.Interpreter.from_bytes(
            model_data,
            arena_size=tflm_arena_size(model_data),
            intrepreter_config=runtime.InterpreterConfig.kPreserveAllTensors,
        )
        for i, x in enumerate(inputs):
            interpreter.set_input(x, i)
        interpreter.invoke()
        return [interpreter.GetTensor(t, 0)["tensor_data"] for t in tensors]
    except (RuntimeError, ValueError) as e:
        raise TFLMError(f"TFLite Micro cannot run the model: {e}") from None


def is_hybrid(model: Model) -> bool:
    """Whether an operator of ``model`` has float32 activations and int8
    weights (dynamic-range quantisation), which TFLite Micro refuses."""
    for op in model.operators:
        if op.opcode not in ("FULLY_CONNECTED", "CONV_2D", "DEPTHWISE_CONV_2D"):
            continue
        x, w = (model.tensors[i] if i >= 0 else None for i in op.inputs[:2])
        if (
            x is not None
            and w is not None
            and (x.type_name, w.type_name)
            == (
                "FLOAT32",
                "INT8",
            )
        ):
            return True
    return False


def run_litert(
    model_data: bytes, inputs: Sequence[np.ndarray], tensors: Sequence[int]
) -> list[np.ndarray]:
    """Invoke LiteRT (``ai-edge-litert``) with its reference kernels
    (``BUILTIN_REF``) on ``inputs``; the values of ``tensors``. The reference
    for hybrid models, which TFLite Micro refuses."""
    from ai_edge_litert.interpreter import Interpreter, OpResolverType

    interpreter = Interpreter(
        model_content=model_data,
        experimental_op_resolver_type=OpResolverType.BUILTIN_REF,
        experimental_preserve_all_tensors=True,
    )
    interpreter.allocate_tensors()
    for detail, x in zip(interpreter.get_input_details(), inputs, strict=True):
        interpreter.set_tensor(detail["index"], x)
    interpreter.invoke()
    return [np.array(interpreter.get_tensor(t)) for t in tensors]


def run_reference(
    model_data: bytes, inputs: Sequence[np.ndarray], tensors: Sequence[int]
) -> list[np.ndarray]:
    """``run_tflm``, or ``run_litert`` for a hybrid model (``is_hybrid``)."""
    from usmp.frontend.tflite_reader import read_model

    if is_hybrid(read_model(model_data, "model")):
        return run_litert(model_data, inputs, tensors)
    return run_tflm(model_data, inputs, tensors)


class TFLMSequence:
    """One TFLite Micro interpreter kept across invocations, for models with
    state (variable tensors): ``step(inputs)`` invokes it once and returns the
    outputs (the state carries over), ``reset()`` is TFLM's
    ``ResetVariableTensors``. Several instances are independent models."""

    def __init__(self, model_data: bytes) -> None:
        from tflite_micro.python.tflite_micro import runtime

        from usmp.frontend.tflite_reader import read_model

        self.n_outputs = len(read_model(model_data, "model").outputs)
        try:
            self.interpreter = runtime.Interpreter.from_bytes(
                model_data,
                arena_size=tflm_arena_size(model_data),
                intrepreter_config=runtime.InterpreterConfig.kPreserveAllTensors,
            )
        except (RuntimeError, ValueError) as e:
            raise TFLMError(f"TFLite Micro cannot load the model: {e}") from None

    def step(
        self, inputs: Sequence[np.ndarray], tensors: Sequence[int] | None = None
    ) -> list[np.ndarray]:
        """Invoke once; the outputs, or the values of ``tensors`` (indices)."""
        try:
            for i, x in enumerate(inputs):
                self.interpreter.set_input(x, i)
            self.interpreter.invoke()
            if tensors is not None:
                return [
                    np.array(self.interpreter.GetTensor(t, 0)["tensor_data"])
                    for t in tensors
                ]
            return [
                np.array(self.interpreter.get_output(k)) for k in range(self.n_outputs)
            ]
        except (RuntimeError, ValueError) as e:
            raise TFLMError(f"TFLite Micro cannot run the model: {e}") from None

    def reset(self) -> None:
        self.interpreter.reset()


def run_tflm_sequence(
    model_data: bytes,
    steps: Sequence[Sequence[np.ndarray]],
    resets: Sequence[int] = (),
    tensors: Sequence[int] | None = None,
) -> list[list[np.ndarray]]:
    """TFLite Micro on a sequence of inputs, one invocation per step, the
    state reset before each step in ``resets``: every step's outputs (or the
    values of ``tensors``, state tensors included)."""
    tflm = TFLMSequence(model_data)
    outputs = []
    for k, inputs in enumerate(steps):
        if k in resets:
            tflm.reset()
        outputs.append(tflm.step(inputs, tensors))
    return outputs


def difference(
    got: np.ndarray, want: np.ndarray, rtol: float = FLOAT_OUTPUT_RTOL
) -> str | None:
    """``None`` when ``got`` matches ``want`` (integers bit for bit, floats
    within ``rtol`` of ``want``'s magnitude), else what differs."""
    want = want.reshape(got.shape)
    if got.dtype != want.dtype:
        return f"dtype {got.dtype} instead of {want.dtype}"
    if got.dtype.kind in "iub":
        mismatches = int(np.count_nonzero(got != want))
        return f"{mismatches}/{got.size} values differ" if mismatches else None
    scale = max(float(np.max(np.abs(want))), np.finfo(np.float32).tiny)
    error = float(np.max(np.abs(got.astype(np.float64) - want))) / scale
    return f"relative error {error:.2e} > {rtol:.0e}" if error > rtol else None
