"""Our memory plan inside TFLite Micro: ``usmp-compile --emit-tflm-plan``.

TFLite Micro (``micro_allocation_info.cc``) reads an offline memory plan
from the model's metadata entry ``OfflineMemoryAllocation``: a buffer of
int32 ``[version=1, subgraph=0, number of tensors, offset of tensor 0, ...]``
whose offsets are bytes from the start of the arena's planned (head) part,
``-1`` meaning "plan this tensor online". The number of tensors is the
count over *every* subgraph, and TFLM gives tensor ``i`` of *each* subgraph
the entry ``i`` (``InitializeAllocationInfo``), so an entry whose index is
also a tensor TFLM allocates in another subgraph (the resource handles of a
``CALL_ONCE`` initialisation subgraph) stays ``-1``: the two tensors would
share bytes. This module writes a copy of the model with that entry, so an
application that keeps the TFLM interpreter gets a smaller arena.

The exported plan is a second plan, made in the same run for TFLM's own
problem; the C library keeps its own (with its overlaps, which TFLM's
kernels do not allow):

* every tensor TFLM allocates (not constant, not a variable, not empty; a
  resource handle is its 4-byte id), live over TFLM's allocation scopes
  (``tflm_lifetimes``: per TFLite operator, the scopes of a ``CALL_ONCE``
  subgraph counted, inputs and outputs from the start, outputs to the end),
  16-byte sizes and offsets (``MicroArenaBufferAlignment()``); a RESHAPE's
  output shares its input's bytes (TFLM's kernel copies nothing when both
  share an address);
* candidates: the compiled library's workspace offsets when they map onto
  every tensor TFLM plans and TFLM can use them, and our planner on TFLM's
  problem (``replan``, with several algorithms); the smallest end wins;
* ``check_offline_plan`` checks the chosen offsets from the model alone
  (TFLM's lifetimes, alignment, entries TFLM shares between subgraphs, the
  RESHAPE aliases it proves itself) before anything is written: two tensors
  TFLM keeps alive together must not share bytes;
* constants, variables and kernel scratch buffers stay with TFLM: it plans
  scratch buffers online, after the offline tensors, and keeps variables in
  its persistent tail. ``usmp-compile`` then loads both models in TFLM's
  interpreter and compares the arenas it reports (``tflm_arena_bytes``);
  when ours is not smaller it says why in one line (and in
  ``metadata.json``), and when it is larger the model is written with
  every tensor online (TFLM's own plan).

The flatbuffer is rewritten with TFLite's generated object API (the schema
module shipped by the ``tflite-micro`` package) and ``flatbuffers``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from usmp.frontend.tflite_reader import Model, Operator, Tensor, TFLiteImportError
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
    """TFLite tensors at this address (several: a RESHAPE chain)."""
    offset: int
    size: int
    first: int
    last: int
    """TFLM's lifetime, in its allocation scopes (inclusive)."""


RESOURCE_BYTES = 4
"""A resource tensor holds the variable's int32 id in TFLM's arena."""


def tensor_bytes(t: Tensor) -> int:
    """The bytes TFLM allocates for ``t`` (a resource handle: its id)."""
    if t.type_name == "RESOURCE":
        return RESOURCE_BYTES * int(np.prod(t.shape, dtype=np.int64))
    dtype = t.dtype
    return int(np.prod(t.shape, dtype=np.int64)) * (dtype.itemsize if dtype else 0)


@dataclass(frozen=True)
class TFLMPlan:
    offsets: list[int]
    """One per tensor of every subgraph (TFLM's count); ``-1``: planned by
    TFLM."""
    source: str
    """``compiled``: the compiled library's own workspace offsets;
    ``replanned``: our planner on TFLM's operator-by-operator lifetimes."""
    arena_bytes: int
    """End of the plan (16-byte sizes, the holes left for the scratch
    buffers of ``scratch_requests`` included): TFLM's planned arena part
    when every tensor it plans is offline and its kernels ask for no other
    scratch."""
    lower_bound: int
    """The most 16-byte-sized bytes TFLM keeps alive at once (a RESHAPE
    chain counted once, known scratch buffers included): no plan of these
    buffers is smaller."""
    online: tuple[int, ...] = ()
    """Tensors TFLM allocates that stay online: their entry is also a tensor
    TFLM allocates in another subgraph."""


def tflm_tensor_count(model: Model) -> int:
    """The entries TFLM expects: the tensors of every subgraph."""
    return len(model.tensors) + sum(len(g.tensors) for g in model.subgraphs)


def tflm_plan(
    model: Model, report: dict[str, Any] | None, algorithm: str = "best_fit"
) -> TFLMPlan:
    """The offline plan for ``model``: the smallest of the compiled workspace
    offsets (when they cover every tensor TFLM plans and TFLM can use them)
    and our planner on TFLM's own problem, checked by
    ``check_offline_plan``."""
    lifetimes = planned_tensors(model)
    scratch = any(scratch_requests(model, op) for op in model.operators)
    candidates: list[tuple[str, list[int], int]] = []
    if report is not None and not model.subgraphs and not scratch:
        try:
            compiled = tflm_offsets(model, report)
        except (TFLMPlanError, TFLiteImportError):
            compiled = None  # several pools, an overlap TFLM does not allow...
        if compiled is not None and all(compiled[t] >= 0 for t in lifetimes):
            padded = _padded(model, compiled)
            candidates.append(("compiled", padded, _end(model, padded)))
    for name in dict.fromkeys((algorithm, *REPLAN_ALGORITHMS)):
        candidates.append(("replanned", *_replan(model, name)))
    source, offsets, end = min(candidates, key=lambda c: c[2])
    check_offline_plan(model, offsets)
    return TFLMPlan(
        offsets,
        source,
        end,
        lower_bound(model),
        tuple(sorted(set(tflm_lifetimes(model)) - set(lifetimes))),
    )


REPLAN_ALGORITHMS = ("best_fit", "greedy_by_size", "greedy_by_conflicts")
"""The planners tried on TFLM's problem (the fast ones)."""


def _end(model: Model, offsets: Sequence[int]) -> int:
    return max(
        (
            o + _aligned(tensor_bytes(model.tensors[t]))
            for t, o in enumerate(offsets[: len(model.tensors)])
            if o >= 0
        ),
        default=0,
    )


def _padded(model: Model, offsets: Sequence[int]) -> list[int]:
    """Subgraph 0's offsets, ``-1`` for the entries after them."""
    return [*offsets, *[ONLINE] * (tflm_tensor_count(model) - len(offsets))]


def _chains(
    model: Model,
    tensors: Sequence[int],
    joined: Callable[[int, int], bool] = lambda source, target: True,
) -> dict[int, list[int]]:
    """RESHAPE chains among ``tensors`` (a RESHAPE joins its input and
    output when ``joined``): root -> members (a root alone when it is not
    reshaped)."""
    root = {t: t for t in tensors}
    for op in model.operators:
        if op.opcode in ALIASING_OPERATORS and op.inputs and op.outputs:
            source, target = op.inputs[0], op.outputs[0]
            if source in root and target in root and joined(source, target):
                root[target] = root[source]

    def find(t: int) -> int:
        while root[t] != t:
            t = root[t]
        return t

    chains: dict[int, list[int]] = {}
    for t in tensors:
        chains.setdefault(find(t), []).append(t)
    return chains


def _buffers(model: Model) -> tuple[Any, dict[int, list[int]]]:
    """TFLM's problem as our planner's buffers: one per RESHAPE chain of the
    tensors TFLM plans offline (16-byte sizes, its scopes), and a hole for
    each scratch buffer its kernels ask for (``scratch_requests``), live
    during their operator, which TFLM then plans online into the hole."""
    from usmp.planning.model import Buffer

    lifetimes = planned_tensors(model)
    chains = _chains(model, list(lifetimes))
    buffers = [
        Buffer(
            str(r),
            max(_aligned(tensor_bytes(model.tensors[t])) for t in members),
            min(lifetimes[t][0] for t in members),
            max(lifetimes[t][1] for t in members) + 1,
            ALIGNMENT,
        )
        for r, members in sorted(chains.items())
    ]
    scopes = _scopes(model)[1]
    for op in model.operators:
        first, last = scopes[op.index]
        for j, size in enumerate(scratch_requests(model, op)):
            name = f"scratch {op.index}.{j}"
            buffers.append(Buffer(name, _aligned(size), first, last + 1, ALIGNMENT))
    return tuple(buffers), chains


def scratch_requests(model: Model, op: Operator) -> tuple[int, ...]:
    """The bytes of each scratch buffer TFLM's reference kernel for ``op``
    asks for in its Prepare (``RequestScratchBufferInArena``), for the
    kernels that ask: SVDF (B*F int32 and, when quantised, B*U int32),
    UNIDIRECTIONAL_SEQUENCE_LSTM (four B*S buffers of the cell state's
    type), TRANSPOSE_CONV (the output as int32 for int8, int64 for int16).
    Another kernel's scratch is planned by TFLM around ours; the arena TFLM
    reports is what ``export_tflm_plan`` compares."""
    tensors = model.tensors

    def elements(t: int) -> int:
        return int(np.prod(tensors[t].shape, dtype=np.int64))

    if op.opcode == "SVDF" and len(op.inputs) > 1 and op.outputs:
        batch = tensors[op.inputs[0]].shape[0]
        filters = tensors[op.inputs[1]].shape[0]
        rank = int(op.options.Rank()) if op.options is not None else 1
        if tensors[op.inputs[0]].type_name == "FLOAT32":
            return (batch * filters * 4,)
        return (batch * filters * 4, batch * (filters // max(rank, 1)) * 4)
    if op.opcode == "UNIDIRECTIONAL_SEQUENCE_LSTM" and len(op.inputs) > 19:
        cell = tensors[op.inputs[19]]  # the cell state: B x S
        return (tensor_bytes(cell),) * 4
    if op.opcode == "TRANSPOSE_CONV" and len(op.inputs) > 2 and op.outputs:
        itemsize = {"INT8": 4, "INT16": 8}.get(tensors[op.inputs[2]].type_name)
        return (elements(op.outputs[0]) * itemsize,) if itemsize else ()
    return ()


def lower_bound(model: Model) -> int:
    """The liveness peak of TFLM's problem (``planning.lower_bound``): its
    tensors and the scratch buffers of ``scratch_requests``."""
    from usmp.planning.lower_bound import interval_peak

    return interval_peak(_buffers(model)[0])


def replan(model: Model, algorithm: str = "best_fit") -> list[int]:
    """Our planner on TFLM's problem: every tensor TFLM plans offline, live
    over its operators as TFLM counts them, 16-byte sizes and offsets; a
    RESHAPE's output shares its input's bytes; holes for the scratch
    buffers of ``scratch_requests``."""
    return _replan(model, algorithm)[0]


def _replan(model: Model, algorithm: str) -> tuple[list[int], int]:
    """The offsets and the end of the plan (scratch holes included)."""
    from usmp.planning.algorithms import get_algorithm
    from usmp.planning.model import Pool, Problem

    buffers, chains = _buffers(model)
    plan = get_algorithm(algorithm)(Problem(buffers, (Pool("arena", None, ALIGNMENT),)))
    offsets = [ONLINE] * tflm_tensor_count(model)
    for r, members in chains.items():
        for t in members:
            offsets[t] = plan.placements[str(r)].offset
    end = max((plan.placements[b.name].offset + b.size for b in buffers), default=0)
    return offsets, end


def tflm_offsets(model: Model, report: dict[str, Any]) -> list[int]:
    """The compiled workspace offsets, one per tensor of subgraph 0 (``-1``:
    not in the compiled plan); a located error when TFLM cannot use them."""
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
    # main's inputs and outputs are the model's, in order
    for role, tensors in (("input", model.inputs), ("output", model.outputs)):
        io = [b for b in buffers.values() if b.get("role") == role]
        if len(io) == len(tensors):
            for b, index in zip(io, tensors, strict=True):
                offsets[index] = int(b["offset"])
    for b in buffers.values():
        index = _tensor_of(model, b) if b.get("role") == "allocate" else None
        if index is not None:
            offsets[index] = int(b["offset"])
    _alias_reshapes(model, offsets)
    check_offline_plan(model, _padded(model, offsets))
    return offsets


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


def _all_lifetimes(model: Model) -> dict[tuple[int, int], tuple[int, int]]:
    return _scopes(model)[0]


def _scopes(
    model: Model,
) -> tuple[dict[tuple[int, int], tuple[int, int]], dict[int, tuple[int, int]]]:
    """(subgraph, tensor) -> first and last allocation scope of every tensor
    TFLM allocates, as ``AllocationInfoBuilder::MarkAllocationLifetimes``
    marks them: operator by operator, each a new scope, a ``CALL_ONCE``
    entering its subgraph (one more scope, then its operators) before its
    inputs' last use; a subgraph's inputs and outputs are created at its
    start, its outputs live to its end."""
    graphs = [(model.tensors, model.operators, model.inputs, model.outputs)] + [
        (g.tensors, g.operators, g.inputs, g.outputs) for g in model.subgraphs
    ]
    first: dict[tuple[int, int], int] = {}
    last: dict[tuple[int, int], int] = {}
    op_scopes: dict[int, tuple[int, int]] = {}
    """Operator of subgraph 0 -> its scopes (a scratch buffer's lifetime)."""
    scope = 0

    def mark(k: int, depth: int) -> None:
        nonlocal scope
        if depth > len(graphs):
            raise TFLMPlanError(
                f"{model.name}: error: --emit-tflm-plan: subgraph {k} calls itself"
            )
        _, operators, inputs, outputs = graphs[k]
        for t in (*inputs, *outputs):
            first[k, t] = last[k, t] = scope
        for op in operators:
            scope += 1
            for t in op.outputs:
                first[k, t] = last[k, t] = scope
            start = scope
            for sub in _called_subgraphs(model, op):
                scope += 1
                mark(sub, depth + 1)
            for t in op.inputs:
                if t >= 0:
                    last[k, t] = scope
            for t in op.outputs:
                last[k, t] = scope
            if k == 0:
                op_scopes[op.index] = (start, scope)
        for t in outputs:
            last[k, t] = scope

    mark(0, 0)
    lifetimes = {
        (k, t): (first.get((k, t), end), end)
        for (k, t), end in last.items()
        if _planned_by_tflm(graphs[k][0][t])
    }
    return lifetimes, op_scopes


def _called_subgraphs(model: Model, op: Operator) -> tuple[int, ...]:
    """The subgraphs ``op`` runs (TFLM: CALL_ONCE, IF, WHILE)."""
    if op.opcode not in ("CALL_ONCE", "IF", "WHILE"):
        return ()
    where = f"{model.name}: error: --emit-tflm-plan: operator {op.index}"
    if op.opcode != "CALL_ONCE" or op.options is None:
        raise TFLMPlanError(
            f"{where} ({op.display_name}): control flow other than CALL_ONCE is "
            "not planned"
        )
    sub = int(op.options.InitSubgraphIndex())
    if not 0 < sub <= len(model.subgraphs):
        raise TFLMPlanError(
            f"{where} (CALL_ONCE) runs subgraph {sub}, which is missing"
        )
    return (sub,)


def tflm_lifetimes(model: Model) -> dict[int, tuple[int, int]]:
    """First and last allocation scope of each tensor of subgraph 0 TFLM
    plans (operator ``i`` is scope ``i + 1`` when no subgraph is called;
    model outputs live to the end)."""
    return {t: span for (k, t), span in _all_lifetimes(model).items() if k == 0}


def _shared_entries(model: Model) -> dict[int, int]:
    """Entry -> another subgraph whose tensor at that index TFLM allocates
    (it reads the same entry for it)."""
    shared: dict[int, int] = {}
    for k, t in _all_lifetimes(model):
        if k:
            shared.setdefault(t, k)
    return shared


def planned_tensors(model: Model) -> dict[int, tuple[int, int]]:
    """The tensors of subgraph 0 the exported plan places, with TFLM's
    lifetimes: all TFLM plans but those whose entry another subgraph's
    tensor shares."""
    shared = _shared_entries(model)
    return {t: s for t, s in tflm_lifetimes(model).items() if t not in shared}


def _planned_by_tflm(t: Tensor) -> bool:
    return not t.is_constant and not t.is_variable and tensor_bytes(t) > 0


def _writer(model: Model, t: int) -> str:
    op = next((op for op in model.operators if t in op.outputs), None)
    return _op_name(op) if op is not None else "a model input"


def _op_name(op: Operator) -> str:
    return f"{op.display_name} #{op.index}"


def check_offline_plan(model: Model, offsets: Sequence[int]) -> None:
    """A located ``TFLMPlanError`` unless TFLM can use ``offsets`` (one per
    tensor of every subgraph), from the model alone: every offset is ``-1``
    or a multiple of 16 on a tensor of subgraph 0 TFLM allocates whose entry
    no other subgraph's allocated tensor shares, and two tensors TFLM keeps
    alive at once share no byte unless one is a RESHAPE of the other at the
    same address."""
    where = f"{model.name}: error: --emit-tflm-plan:"
    count = tflm_tensor_count(model)
    if len(offsets) != count:
        raise TFLMPlanError(
            f"{where} the plan has {len(offsets)} entries; TFLite Micro expects one "
            f"per tensor of its {1 + len(model.subgraphs)} subgraph(s), {count}"
        )
    lifetimes = tflm_lifetimes(model)
    shared = _shared_entries(model)
    placed_at: dict[int, int] = {}
    for t, offset in enumerate(offsets):
        if offset == ONLINE:
            continue
        name = f"#{t}"
        if t < len(model.tensors):
            name = f"'{model.tensors[t].name}' (#{t})"
        if offset < 0:
            raise TFLMPlanError(f"{where} entry {t} is {offset}: an offset or -1")
        if t >= len(model.tensors) or t not in lifetimes:
            raise TFLMPlanError(
                f"{where} tensor {name} has an offset but TFLite Micro does not "
                "plan it (a constant, a variable, an empty tensor or no tensor "
                "of subgraph 0)"
            )
        if t in shared:
            raise TFLMPlanError(
                f"{where} tensor {name} has an offset, but TFLite Micro reads the "
                f"same entry for tensor #{t} of subgraph {shared[t]}, which it "
                "allocates too: the entry must be -1"
            )
        if offset % ALIGNMENT:
            raise TFLMPlanError(
                f"{where} tensor {name} is at offset {offset}, not a multiple of "
                f"TFLite Micro's {ALIGNMENT}-byte alignment"
            )
        placed_at[t] = offset

    def in_place(source: int, target: int) -> bool:
        """TFLM's RESHAPE copies nothing when both share an address."""
        return placed_at[source] == placed_at[target] and tensor_bytes(
            model.tensors[source]
        ) == tensor_bytes(model.tensors[target])

    placed = [
        _placed(model, members, placed_at, lifetimes)
        for members in _chains(model, list(placed_at), in_place).values()
    ]
    placed.sort(key=lambda p: p.first)
    for i, a in enumerate(placed):
        for b in placed[i + 1 :]:
            if b.first > a.last:
                break
            if a.offset < b.offset + b.size and b.offset < a.offset + a.size:
                _overlap(model, a.tensors[0], b.tensors[0], lifetimes)


def _placed(
    model: Model,
    members: Sequence[int],
    offsets: dict[int, int],
    lifetimes: dict[int, tuple[int, int]],
) -> _Placed:
    return _Placed(
        tuple(members),
        offsets[members[0]],
        max(_aligned(tensor_bytes(model.tensors[t])) for t in members),
        min(lifetimes[t][0] for t in members),
        max(lifetimes[t][1] for t in members),
    )


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
        "operator-by-operator order)"
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


@dataclass(frozen=True)
class Export:
    """What ``export_tflm_plan`` wrote and what TFLM reports for it."""

    plan: TFLMPlan
    tflm_head: int
    """TFLM's planned arena part with its own plan (bytes)."""
    head: int
    """The same with the exported model."""
    tail: int
    """TFLM's persistent part with the exported model (variables included)."""
    used: bool
    """The exported model carries our offsets (else every tensor online)."""
    reason: str | None
    """Why the exported plan does not beat TFLM's own (one line)."""

    def metadata(self, path: str) -> dict[str, Any]:
        """``metadata.json``'s ``tflm_plan`` entry."""
        return {
            "path": path,
            "source": self.plan.source if self.used else "online",
            "offline_tensors": sum(1 for o in self.plan.offsets if o >= 0)
            if self.used
            else 0,
            "entries": len(self.plan.offsets),
            "online_shared_entries": list(self.plan.online),
            "planned_bytes": self.plan.arena_bytes,
            "lower_bound_bytes": self.plan.lower_bound,
            "tflm_head_bytes": self.tflm_head,
            "head_bytes": self.head,
            "tail_bytes": self.tail,
            "offline_plan_used": self.used,
            "note": self.reason,
        }


def export_tflm_plan(
    model: Model,
    data: bytes,
    report: dict[str, Any] | None,
    path: str | Path,
    algorithm: str = "best_fit",
) -> Export:
    """Plan (``tflm_plan``), load the original and the planned model in
    TFLM's interpreter and write the planned one to ``path``: with our
    offsets unless TFLM's arena would grow with them (its kernels' scratch
    buffers, which it plans after ours), then with every tensor online."""
    plan = tflm_plan(model, report, algorithm)
    planned = with_offline_plan(data, plan.offsets)
    size = max(1 << 20, 10 * len(planned))  # one size: the same tail padding
    own = _arena(model, data, size, "its own")
    ours = _arena(model, planned, size, "our")
    used, reason = True, None
    above = ours["head"] - plan.arena_bytes  # scratch TFLM placed above ours
    if ours["head"] > own["head"]:
        reason = (
            f"TFLite Micro's arena head with our plan would be {ours['head']:,} B "
            f"(our {plan.arena_bytes:,} B, then {above:,} B of scratch buffers its "
            f"kernels ask for placed above), more than the {own['head']:,} B of "
            "its own plan: the model is written with every tensor planned online"
        )
        used, ours = False, own
        planned = with_offline_plan(data, [ONLINE] * len(plan.offsets))
    elif ours["head"] == own["head"]:
        why = (
            f"both at the {plan.lower_bound:,} B its tensors and known scratch "
            "buffers need alive at once"
            if plan.arena_bytes == plan.lower_bound
            else f"our plan ends at {plan.arena_bytes:,} B"
        )
        if above >= ALIGNMENT:
            why += f"; {above:,} B of scratch buffers its kernels ask for above it"
        reason = (
            f"TFLite Micro's arena head is {own['head']:,} B with its own plan and "
            f"with ours ({why})"
        )
    write_bytes_atomic(Path(path), planned)
    return Export(plan, own["head"], ours["head"], ours["tail"], used, reason)


def _arena(model: Model, data: bytes, size: int, which: str) -> dict[str, int]:
    try:
        return tflm_arena_bytes(data, size)
    except TFLMError as e:
        said = str(e).removeprefix("TFLite Micro cannot allocate the model: ")
        raise TFLMPlanError(
            f"{model.name}: error: --emit-tflm-plan: TFLite Micro cannot allocate "
            f"the model with {which} plan ({said}); the exported plan is measured "
            "in TFLite Micro, so it needs a model TFLite Micro runs"
        ) from None


class TFLMError(Exception):
    """TFLite Micro refused or failed to run the model (its message)."""


def tflm_arena_bytes(model_data: bytes, arena_size: int = 0) -> dict[str, int]:
    """What TFLite Micro's recording allocator reports for the model: the
    arena's planned tensor part (``head``), its persistent part (``tail``)
    and their ``total``, in bytes. The interpreter prints them from C in
    its output, so it runs in a child process whose output is read whole. The tail's
    alignment padding depends on where the arena ends: compare two models
    with the same ``arena_size`` (default: 10 x the model, at least 1 MiB)."""
    import re
    import subprocess
    import sys
    import tempfile

    with tempfile.NamedTemporaryFile(suffix=".tflite") as model:
        model.write(model_data)
        model.flush()
        script = (
            "import sys\n"
            "from tflite_micro.python.tflite_micro import runtime\n"
            "data = open(sys.argv[1], 'rb').read()\n"
            "runtime.Interpreter.from_bytes(data, arena_size=int(sys.argv[2]))"
            ".print_allocations()\n"
        )
        size = arena_size or max(1 << 20, 10 * len(model_data))
        done = subprocess.run(
            [sys.executable, "-c", script, model.name, str(size)],
            capture_output=True,
            text=True,
            check=False,
        )
    found = dict(
        re.findall(
            r"Arena allocation (head|tail|total) (\d+) bytes", done.stdout + done.stderr
        )
    )
    if done.returncode != 0 or len(found) != 3:
        # TFLM's own lines, then the child's exception, without its traceback
        said, _, trace = done.stderr.partition("Traceback (most recent call last):")
        lines = [*said.strip().splitlines(), *trace.strip().splitlines()[-1:]]
        raise TFLMError(
            f"TFLite Micro cannot allocate the model: {'; '.join(lines)[-500:]}"
        )
    return {k: int(v) for k, v in found.items()}
