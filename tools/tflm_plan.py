"""Our memory plan inside TFLite Micro: ``usmp-compile --emit-tflm-plan``.

TFLite Micro (``micro_allocation_info.cc``) reads an offline memory plan
from the model's metadata entry ``OfflineMemoryAllocation``: a buffer of
int32 ``[version=1, subgraph=0, number of tensors, offset of tensor 0, ...]``
whose offsets are bytes from the start of the arena's planned (head) part,
``-1`` meaning "plan this tensor online". This module maps the workspace plan
of ``memory/plan.json`` onto the model's tensors and writes a copy of the
model with that entry, so an application that keeps the TFLM interpreter
gets our (smaller) arena.

* A buffer of main holds the TFLite tensor its location names (the importer
  names the op computing each tensor, ``usmp.frontend.builder``); main's
  inputs and outputs (planned in the workspace with ``--use-workspace-io``)
  are the model's. A RESHAPE output we alias to its input gets the input's
  offset (TFLM's RESHAPE copies nothing when both share an address). A slice
  we alias at an offset (SLICE, STRIDED_SLICE, a SPLIT/SPLIT_V/UNPACK piece:
  the report's ``aliases``) gets its address inside the buffer when that is
  a multiple of 16 bytes: TFLM's kernel then copies each element onto
  itself. The tensors at one buffer's bytes are checked as one.
* When that leaves out a tensor TFLM allocates (a tensor inside a fused
  group, model I/O planned outside the workspace), TFLM's greedy planner
  would place it around the offline ones and the arena could grow; then the
  same planner is run on TFLM's own problem instead (``replan``: every tensor
  TFLM plans, its lifetimes, 16-byte sizes), so every tensor is offline.
  Constants and variables are not in TFLM's plan (``-1``); kernel scratch
  buffers are always planned online by TFLM, after the offline tensors.
* The plan is checked against TFLM's own lifetimes (per TFLite operator, not
  per fused step: inputs and outputs from the start, outputs to the end):
  two tensors TFLM keeps alive together must not share bytes, and offsets
  must be multiples of TFLM's 16-byte buffer alignment. A plan that fails is
  a located error naming both tensors; TFLM has one arena, so a plan with
  several workspace pools is refused too.

The flatbuffer is rewritten with TFLite's generated object API (the schema
module shipped by the ``tflite-micro`` package) and ``flatbuffers``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from usmp.frontend.tflite_reader import Model, Operator, Tensor
from usmp.output_files import write_bytes_atomic

METADATA_NAME = "OfflineMemoryAllocation"
ALIGNMENT = 16
"""TFLite Micro's ``MicroArenaBufferAlignment()``."""
ONLINE = -1
ALIASING_OPERATORS = frozenset({"RESHAPE"})
"""Operators whose output we keep at its input's address."""


class TFLMPlanError(Exception):
    """The plan cannot be given to TFLite Micro (``str()``: the diagnostic)."""


@dataclass(frozen=True)
class _Placed:
    tensors: tuple[int, ...]
    """TFLite tensors at this address (several: an aliasing chain)."""
    offset: int
    size: int
    first: int
    last: int
    """TFLM's lifetime, in its allocation scopes (inclusive)."""


def tensor_bytes(t: Tensor) -> int:
    dtype = t.dtype
    return int(np.prod(t.shape, dtype=np.int64)) * (dtype.itemsize if dtype else 0)


@dataclass(frozen=True)
class TFLMPlan:
    offsets: list[int]
    """One per tensor of the model; ``-1``: planned by TFLM."""
    source: str
    """``compiled``: the compiled library's own workspace offsets;
    ``replanned``: the planner run on TFLM's operator-by-operator lifetimes
    (when fusion leaves tensors TFLM allocates out of the compiled plan)."""
    arena_bytes: int
    """End of the highest offline-planned tensor (16-byte sizes): TFLM's
    planned arena part when every tensor it plans is offline."""


def tflm_plan(
    model: Model, report: dict[str, Any], algorithm: str = "best_fit"
) -> TFLMPlan:
    """The offline plan for ``model``: the compiled workspace offsets when
    they cover every tensor TFLM plans, else our planner (``algorithm``) on
    TFLM's own lifetimes, so tensors inside fused groups are planned too."""
    offsets = tflm_offsets(model, report)
    lifetimes = tflm_lifetimes(model)
    source = "compiled"
    if any(offsets[t] < 0 for t in lifetimes):
        offsets, source = replan(model, algorithm), "replanned"
        _check(model, offsets)
    end = max(
        (
            o + _aligned(tensor_bytes(model.tensors[t]))
            for t, o in enumerate(offsets)
            if o >= 0
        ),
        default=0,
    )
    return TFLMPlan(offsets, source, end)


def replan(model: Model, algorithm: str = "best_fit") -> list[int]:
    """Our planner on TFLM's problem: every tensor TFLM plans, live over its
    operators as TFLM counts them, 16-byte sizes and offsets; a RESHAPE's
    output shares its input's bytes."""
    from usmp.planning.algorithms import get_algorithm
    from usmp.planning.model import Buffer, Pool, Problem

    lifetimes = tflm_lifetimes(model)
    root = {t: t for t in lifetimes}
    for op in model.operators:
        if op.opcode in ALIASING_OPERATORS and op.inputs and op.outputs:
            source, target = op.inputs[0], op.outputs[0]
            if source in root and target in root:
                root[target] = root[source]

    def find(t: int) -> int:
        while root[t] != t:
            t = root[t]
        return t

    chains: dict[int, list[int]] = {}
    for t in lifetimes:
        chains.setdefault(find(t), []).append(t)
    buffers = tuple(
        Buffer(
            str(r),
            max(_aligned(tensor_bytes(model.tensors[t])) for t in members),
            min(lifetimes[t][0] for t in members),
            max(lifetimes[t][1] for t in members) + 1,
            ALIGNMENT,
        )
        for r, members in sorted(chains.items())
    )
    plan = get_algorithm(algorithm)(Problem(buffers, (Pool("arena", None, ALIGNMENT),)))
    offsets = [ONLINE] * len(model.tensors)
    for r, members in chains.items():
        for t in members:
            offsets[t] = plan.placements[str(r)].offset
    return offsets


def tflm_offsets(model: Model, report: dict[str, Any]) -> list[int]:
    """The compiled workspace offsets, one per tensor of the model (``-1``:
    not in the compiled plan)."""
    pools = [p for p in report.get("pools", []) if p.get("kind") == "workspace"]
    if len(pools) > 1:
        raise model.error(
            "--emit-tflm-plan: TFLite Micro has one arena, but the plan uses "
            f"{len(pools)} workspace pools ({', '.join(p['name'] for p in pools)}); "
            "plan with one workspace pool"
        )
    offsets = [ONLINE] * len(model.tensors)
    if not pools:
        return offsets
    pool = pools[0]["name"]
    buffers = {
        b["name"]: b
        for b in report.get("buffers", [])
        if b.get("pool") == pool and b.get("function") == report.get("model")
    }  # not an operator's scratch: TFLM has its own
    holder: dict[str, int] = {}
    """Buffer name -> the tensor it holds."""
    # main's inputs and outputs are the model's, in order
    for role, tensors in (("input", model.inputs), ("output", model.outputs)):
        io = [b for b in buffers.values() if b.get("role") == role]
        if len(io) == len(tensors):
            for b, index in zip(io, tensors, strict=True):
                offsets[index], holder[b["name"]] = int(b["offset"]), index
    for b in buffers.values():
        index = _tensor_of(model, b) if b.get("role") == "allocate" else None
        if index is not None:
            offsets[index], holder[b["name"]] = int(b["offset"]), index
    inside = _offset_aliases(model, report, buffers, holder, offsets)
    if inside:  # TFLM may still refuse them together: then without them
        with_aliases = list(offsets)
        for t, (_, offset) in inside.items():
            with_aliases[t] = offset
        _alias_reshapes(model, with_aliases)
        try:
            _check(model, with_aliases, {t: h for t, (h, _) in inside.items()})
            return with_aliases
        except TFLMPlanError:
            pass
    _alias_reshapes(model, offsets)
    _check(model, offsets)
    return offsets


def _offset_aliases(
    model: Model,
    report: dict[str, Any],
    buffers: dict[str, dict[str, Any]],
    holder: dict[str, int],
    offsets: Sequence[int],
) -> dict[int, tuple[int, int]]:
    """Tensor -> (the tensor whose buffer holds it, its offset) for the
    report's aliases that TFLM can take (16-byte aligned, inside the buffer,
    not placed otherwise)."""
    inside: dict[int, tuple[int, int]] = {}
    for alias in report.get("aliases", []):
        t = _tensor_of(model, alias)
        b = buffers.get(alias.get("buffer", ""))
        if t is None or b is None or b["name"] not in holder:
            continue
        offset = int(b["offset"]) + int(alias["offset"])
        end = int(alias["offset"]) + tensor_bytes(model.tensors[t])
        if offsets[t] < 0 and offset % ALIGNMENT == 0 and end <= int(b["size"]):
            inside[t] = (holder[b["name"]], offset)
    return inside


def _alias_reshapes(model: Model, offsets: list[int]) -> None:
    """A RESHAPE output not placed otherwise gets its input's offset."""
    for op in model.operators:
        if op.opcode in ALIASING_OPERATORS and op.inputs and op.outputs:
            source, target = op.inputs[0], op.outputs[0]
            if source >= 0 and offsets[source] >= 0 and offsets[target] < 0:
                offsets[target] = offsets[source]


def _tensor_of(model: Model, b: dict[str, Any]) -> int | None:
    """The tensor a buffer of main holds: the output of the operator its
    location names, with the name it gives."""
    tensor = b.get("tensor")
    if not tensor:
        return None
    k = tensor.get("operator")
    if k is None or not 0 <= k < len(model.operators):
        return None
    outputs = [
        i for i in model.operators[k].outputs if model.tensors[i].name == tensor["name"]
    ]
    return outputs[0] if len(outputs) == 1 else None


def tflm_lifetimes(model: Model) -> dict[int, tuple[int, int]]:
    """First and last allocation scope of each tensor TFLM plans, as
    ``AllocationInfoBuilder::MarkAllocationLifetimes`` marks them (operator
    ``i`` is scope ``i + 1``; model outputs live to the end)."""
    first: dict[int, int] = {}
    last: dict[int, int] = {}

    def create(t: int, scope: int) -> None:
        first[t] = scope
        last[t] = scope

    for t in (*model.inputs, *model.outputs):
        create(t, 0)
    for i, op in enumerate(model.operators, start=1):
        for t in op.outputs:
            create(t, i)
        for t in op.inputs:
            if t >= 0:
                last[t] = i
        for t in op.outputs:
            last[t] = i
    end = len(model.operators)
    for t in model.outputs:
        last[t] = end
    return {
        t: (first.get(t, last[t]), last[t])
        for t in last
        if _planned_by_tflm(model.tensors[t])
    }


def _planned_by_tflm(t: Tensor) -> bool:
    return not t.is_constant and not t.is_variable and tensor_bytes(t) > 0


def _writer(model: Model, t: int) -> str:
    op = next((op for op in model.operators if t in op.outputs), None)
    return _op_name(op) if op is not None else "a model input"


def _op_name(op: Operator) -> str:
    return f"{op.display_name} #{op.index}"


def _check(
    model: Model, offsets: Sequence[int], inside: dict[int, int] | None = None
) -> None:
    """A located error unless TFLM can use ``offsets``; ``inside``: tensors
    placed within the bytes of another (an aliased slice -> its source)."""
    lifetimes = tflm_lifetimes(model)
    inside = inside or {}
    groups: dict[int, list[int]] = {}
    """Alias root -> the tensors at its bytes."""
    for t, offset in enumerate(offsets):
        if offset < 0:
            continue
        tensor = model.tensors[t]
        if t not in lifetimes:
            raise model.error(
                f"--emit-tflm-plan: tensor '{tensor.name}' (#{t}) has an offset but "
                "TFLite Micro does not plan it (a constant or variable tensor)"
            )
        if offset % ALIGNMENT:
            raise model.error(
                f"--emit-tflm-plan: tensor '{tensor.name}' (#{t}) is at offset "
                f"{offset}, not a multiple of TFLite Micro's {ALIGNMENT}-byte "
                f"alignment; plan with --workspace-byte-alignment {ALIGNMENT}"
            )
        groups.setdefault(_alias_root(model, t, offsets, inside), []).append(t)
    placed: list[_Placed] = []
    for members in groups.values():  # an alias chain shares its bytes
        spans = [lifetimes[t] for t in members]
        spans_at = [(t, offsets[t]) for t in members]
        start = min(o for _, o in spans_at)
        end = max(o + _aligned(tensor_bytes(model.tensors[t])) for t, o in spans_at)
        placed.append(
            _Placed(
                tuple(members),
                start,
                end - start,
                min(s for s, _ in spans),
                max(e for _, e in spans),
            )
        )
    placed.sort(key=lambda p: p.first)
    for i, a in enumerate(placed):
        for b in placed[i + 1 :]:
            if b.first > a.last:
                break
            if a.offset < b.offset + b.size and b.offset < a.offset + a.size:
                _overlap(model, a.tensors[0], b.tensors[0], lifetimes)


def _alias_root(
    model: Model, t: int, offsets: Sequence[int], inside: dict[int, int]
) -> int:
    """Follow aliasing operators and slices placed inside another tensor back
    to the tensor that owns the bytes."""
    while True:
        if t in inside:
            t = inside[t]
            continue
        op = next(
            (
                op
                for op in model.operators
                if op.opcode in ALIASING_OPERATORS and op.outputs[:1] == (t,)
            ),
            None,
        )
        if op is None or not op.inputs or offsets[op.inputs[0]] != offsets[t]:
            return t
        t = op.inputs[0]


def _aligned(n: int) -> int:
    return -(-n // ALIGNMENT) * ALIGNMENT


def _overlap(
    model: Model, a: int, b: int, lifetimes: dict[int, tuple[int, int]]
) -> None:
    ta, tb = model.tensors[a], model.tensors[b]
    (fa, la), (fb, lb) = lifetimes[a], lifetimes[b]
    raise TFLMPlanError(
        f"{model.name}: error: --emit-tflm-plan: TFLite Micro cannot use this plan: "
        f"tensors '{ta.name}' (#{a}, written by {_writer(model, a)}) and "
        f"'{tb.name}' (#{b}, written by {_writer(model, b)}) share bytes but TFLite "
        f"Micro keeps both alive at once (scopes {max(fa, fb)}..{min(la, lb)} of its "
        "operator-by-operator order); the compiled library is unaffected"
    )


def metadata_buffer(offsets: Sequence[int]) -> bytes:
    """``[version 1, subgraph 0, count, offsets...]`` as little-endian int32."""
    return np.array([1, 0, len(offsets), *offsets], dtype="<i4").tobytes()


def _schema() -> Any:
    try:
        from tflite_micro.tensorflow.lite.micro.python import (  # pyright: ignore
            schema_py_generated,
        )
    except ImportError:
        raise TFLMPlanError(
            "usmp-compile: error: --emit-tflm-plan needs the tflite-micro package "
            "(TFLite's flatbuffer schema and object API): pip install "
            "'usmp-opt[tflm]'"
        ) from None
    return schema_py_generated


def with_offline_plan(data: bytes, offsets: Sequence[int]) -> bytes:
    """A copy of the ``.tflite`` ``data`` whose ``OfflineMemoryAllocation``
    metadata holds ``offsets`` (an existing entry is replaced)."""
    import flatbuffers

    schema = _schema()
    model = schema.ModelT.InitFromPackedBuf(bytearray(data), 0)
    buffer = schema.BufferT()
    buffer.data = np.frombuffer(metadata_buffer(offsets), dtype=np.uint8)
    model.buffers = [*(model.buffers or []), buffer]
    entry = schema.MetadataT()
    entry.name = METADATA_NAME
    entry.buffer = len(model.buffers) - 1
    kept = [
        m
        for m in (model.metadata or [])
        if (m.name.decode() if isinstance(m.name, bytes) else m.name) != METADATA_NAME
    ]
    model.metadata = [*kept, entry]
    builder = flatbuffers.Builder(len(data) + 1024)
    builder.Finish(model.Pack(builder), file_identifier=b"TFL3")
    return bytes(builder.Output())


def write_tflm_plan(
    model: Model,
    data: bytes,
    report: dict[str, Any],
    path: str | Path,
    algorithm: str = "best_fit",
) -> TFLMPlan:
    """Write the planned copy of the model to ``path``; the plan."""
    plan = tflm_plan(model, report, algorithm)
    write_bytes_atomic(Path(path), with_offline_plan(data, plan.offsets))
    return plan
