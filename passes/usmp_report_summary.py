"""What the memory report says about each step and buffer, for people.

Not a pass: ``usmp-report`` (and ``usmp{report=...}``) use it for the JSON,
the SVGs and the text summary.

* ``step_operators``: per step of main, the TFLite operators it runs
  (``CONV_2D #3``; several when ``fuse-ops`` merged operators), read from the
  locations the TFLite importer stamps (``usmp.diagnostics.operator_location``)
  on the call and on the ops of its callee; else (MLIR input) the callee's
  name.
* ``buffer_tensor``: the TFLite tensor a buffer holds (the importer names the
  op computing each tensor after it and the passes carry that location to the
  tensor's allocation); main's inputs and outputs are named by the model.
* ``summary_text`` / ``summary_csv``: the per-pool table (size, lower bound,
  ratio) and the per-step table (operator, bytes live in the workspace pools,
  buffers live), in the spirit of Vela's and TFLite Micro's memory summaries.
"""

from __future__ import annotations

import csv
import io
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.dialects import func
from xdsl.dialects.builtin import DictionaryAttr, IntegerAttr
from xdsl.ir import Operation

from usmp.diagnostics import operator_location, tensor_location
from usmp.dialects.tir import CALL_ORDER, PoolKind
from usmp.lowering.walk import walk_ops
from usmp.passes.usmp_analysis import BufferInfo, BufferInfoAnalysis
from usmp.passes.usmp_liveness import callee_of
from usmp.passes.usmp_plan_memory import PlannedModule
from usmp.planning.lower_bound import interval_peak, lower_bound
from usmp.planning.model import Buffer, Problem


@dataclass(frozen=True)
class PoolReport:
    name: str
    kind: PoolKind
    size: int
    limit: int | None
    """The size limit the plan was made under (None: unbounded)."""
    alignment: int
    lower_bound: int
    """Workspace: the finer bound (allowed overlaps counted, see
    ``planning.lower_bound``); else the sum of the pool's buffers."""
    buffers: tuple[BufferInfo, ...]
    no_alias_bound: int | None = None
    """Workspace: the peak of live bytes (every conflicting pair disjoint)."""

    @property
    def ratio(self) -> float | None:
        return round(self.size / self.lower_bound, 4) if self.lower_bound else None


def peak_bytes(buffers: Sequence[BufferInfo]) -> int:
    """Peak of the live bytes of ``buffers`` over main's steps (every live
    interval counted: exact for scratch of operators called several times)."""
    return interval_peak(
        Buffer(f"{b.name}@{s}", b.size, s, e) for b in buffers for s, e in b.live
    )


def finer_bound(analysis: BufferInfoAnalysis, names: set[str]) -> int:
    """The lower bound of the workspace buffers ``names`` with the allowed
    overlaps among them (``planning.lower_bound``)."""
    problem = analysis.workspace_problem()
    return lower_bound(
        Problem(
            tuple(b for b in problem.buffers if b.name in names),
            problem.pools,
            tuple(
                o for o in problem.overlaps if o.source in names and o.target in names
            ),
        )
    )


def pool_reports(planned: PlannedModule) -> list[PoolReport]:
    """Every pool that holds a buffer, with its lower bound: for a workspace
    pool the peak of its live bytes, for a constant pool the sum of its
    constants, for a persistent pool the sum of its states (all live at
    once, for the whole program)."""
    reports: list[PoolReport] = []
    for pool in planned.analysis.pools:
        name = pool.pool_name.data
        kind = pool.kind.data
        members = tuple(
            b
            for b in {
                PoolKind.WORKSPACE: planned.analysis.buffers,
                PoolKind.CONSTANT: planned.analysis.constants,
                PoolKind.PERSISTENT: planned.analysis.states,
            }[kind]
            if planned.placements[b.name].pool == name
        )
        if not members:
            continue
        bound = (
            peak_bytes(members)
            if kind == PoolKind.WORKSPACE
            else sum(b.size for b in members)
        )
        no_alias = bound if kind == PoolKind.WORKSPACE else None
        if kind == PoolKind.WORKSPACE and planned.analysis.overlaps:
            bound = finer_bound(planned.analysis, {b.name for b in members})
        reports.append(
            PoolReport(
                name,
                kind,
                planned.sizes.get(name, 0),
                pool.size_limit,
                pool.alignment.data,
                bound,
                members,
                no_alias,
            )
        )
    return reports


@dataclass(frozen=True)
class TensorOrigin:
    """The TFLite tensor a buffer holds: its name, and the operator (opcode,
    index) computing it when the importer recorded it."""

    name: str
    opcode: str | None = None
    operator: int | None = None


def buffer_tensor(b: BufferInfo) -> TensorOrigin | None:
    if b.role in ("input", "output"):
        return TensorOrigin(b.name_hint)
    found = tensor_location(b.anchor.location)
    return None if found is None else TensorOrigin(*found)


def short_name(name: str) -> str:
    """A TFLite tensor name as a label: converters join the names of fused
    ops with ``;``, the first is the op's own."""
    return name.split(";", 1)[0]


def buffer_label(b: BufferInfo) -> str:
    """How pictures and tables name a buffer: its tensor, else its name."""
    tensor = buffer_tensor(b)
    return short_name(tensor.name) if tensor is not None else b.name


def name_prefix(labels: Sequence[str]) -> str:
    """The ``/``-separated prefix all of ``labels`` share (Keras' model name,
    ``functional_1/``), which pictures leave out; '' if they share none or
    there are fewer than two."""
    if len(labels) < 2:
        return ""
    first = labels[0].split("/")[:-1]
    common = 0
    while common < len(first) and all(
        label.split("/")[:-1][common : common + 1] == [first[common]]
        for label in labels
    ):
        common += 1
    return "".join(f"{part}/" for part in first[:common])


def short_labels(labels: Sequence[str], whole: Sequence[bool] = ()) -> list[str]:
    """``labels`` as pictures write them: without their common
    ``name_prefix``, each cut after its first ``/``-separated part that no
    other label starts with (``activation_10/Relu`` -> ``activation_10``
    when no other tensor is ``activation_10/...``); a label equal to or a
    path prefix of another, or marked in ``whole`` (a name the compiler
    made, ``function/allocation``), is not cut."""
    prefix = name_prefix(labels)
    parts = [label.removeprefix(prefix).split("/") for label in labels]
    starts: Counter[tuple[str, ...]] = Counter(
        tuple(p[:k]) for p in parts for k in range(1, len(p) + 1)
    )
    out = []
    for i, p in enumerate(parts):
        keep = i < len(whole) and whole[i]
        k = (
            len(p)
            if keep
            else next(
                (k for k in range(1, len(p)) if starts[tuple(p[:k])] == 1), len(p)
            )
        )
        out.append("/".join(p[:k]))
    return out


_UNREAD = ("", -1)
"""(``step_operators``: a location not read yet.)"""


def step_operators(planned: PlannedModule) -> list[str]:
    """A label per step (see the module doc)."""
    analysis = planned.analysis
    block = analysis.main.parent_block()
    functions = (
        {op.sym_name.data: op for op in block.ops if isinstance(op, func.FuncOp)}
        if block is not None
        else {}
    )
    labels: list[str] = []
    # the ops of a kernel share a few locations: each read once (by
    # identity; the ops, which hold them, outlive the loop)
    located: dict[int, tuple[str, int] | None] = {}
    for index, step in enumerate(analysis.steps):
        top = analysis.step_ops[index] if index < len(analysis.step_ops) else None
        if top is None:
            labels.append(step)
            continue
        found: dict[int, str] = {}
        for op in _step_ops(top, functions):
            loc = op.location
            where = located.get(id(loc), _UNREAD)
            if where is _UNREAD:
                where = located[id(loc)] = operator_location(loc)
            if where is not None:
                found.setdefault(where[1], where[0])
        if found:
            labels.append(" + ".join(f"{found[k]} #{k}" for k in sorted(found)))
        else:
            labels.append(step)
    return labels


def _step_ops(top: Operation, functions: dict[str, func.FuncOp]):
    yield top
    seen: set[str] = set()
    for op in walk_ops(top):
        callee = callee_of(op)
        if callee is not None and callee not in seen and callee in functions:
            seen.add(callee)
            yield from walk_ops(functions[callee])


@dataclass(frozen=True)
class StepRow:
    step: int
    operator: str
    function: str
    live_bytes: int
    buffers: tuple[str, ...]
    sizes: tuple[int, ...]


def step_rows(
    planned: PlannedModule, operators: Sequence[str] | None = None
) -> list[StepRow]:
    """Per step: bytes live in the workspace pools and the buffers live."""
    analysis = planned.analysis
    operators = operators or step_operators(planned)
    live: list[list[BufferInfo]] = [[] for _ in analysis.steps]
    for b in analysis.buffers:
        for s, e in b.live:
            for t in range(s, min(e, len(live))):
                live[t].append(b)
    return [
        StepRow(
            t,
            operators[t],
            analysis.steps[t],
            sum(b.size for b in bs),
            tuple(buffer_label(b) for b in sorted(bs, key=lambda b: -b.size)),
            tuple(sorted((b.size for b in bs), reverse=True)),
        )
        for t, bs in enumerate(live)
    ]


def _pool_rows(planned: PlannedModule) -> list[tuple[str, str, int, int, str, int]]:
    return [
        (
            p.name,
            str(p.kind),
            p.size,
            p.lower_bound,
            f"{p.ratio:.3f}" if p.ratio is not None else "",
            len(p.buffers),
        )
        for p in pool_reports(planned)
    ]


def call_order(main: func.FuncOp) -> dict[str, int | bool] | None:
    """What ``aot-lower-main``'s memory-aware order chose (``tir.call_order``):
    the peak live bytes of the order taken and of the source order, and
    whether no order has a smaller peak; ``None`` when main keeps its source
    order."""
    attr = main.attributes.get(CALL_ORDER)
    if not isinstance(attr, DictionaryAttr):
        return None
    values = attr.data

    def number(key: str) -> int:
        value = values.get(key)
        return value.value.data if isinstance(value, IntegerAttr) else 0

    return {
        "peak": number("peak"),
        "source_peak": number("source_peak"),
        "exact": "exact" in values,
    }


def summary_text(
    planned: PlannedModule, model: str = "", operators: Sequence[str] | None = None
) -> str:
    """The memory summary as a fixed-width text table."""
    pools = _pool_rows(planned)
    rows = step_rows(planned, operators)
    main = planned.analysis.main.sym_name.data
    # TVM's entry point name: tvmgen_<module>___tvm_main__
    module = re.fullmatch(r"tvmgen_(.+)___tvm_main__", main)
    name = model or (f"module '{module[1]}' ({main})" if module else main)
    algorithm = f", planned by {planned.algorithm}" if planned.algorithm else ""
    lines = [f"Memory summary of {name}{algorithm}", ""]
    header = ("pool", "kind", "size B", "lower bound B", "ratio", "buffers")
    table = [
        header,
        *[(n, k, f"{s:,}", f"{lb:,}", r, str(c)) for n, k, s, lb, r, c in pools],
    ]
    lines += _columns(table, right=(2, 3, 4, 5))
    workspace = sum(p[2] for p in pools if p[1] == PoolKind.WORKSPACE)
    peak = max((r.live_bytes for r in rows), default=0)
    lines += ["", f"Workspace: {workspace:,} B planned, peak live {peak:,} B"]
    if peak > workspace:
        lines.append(
            "  (peak live counts each live buffer whole; with overlaps an "
            "operator writes its output over the bytes of an input it has read "
            "for the last time, so the pool is smaller than the peak: hatched "
            "in the picture, total.overlaps in plan.json)"
        )
    order = call_order(planned.analysis.main)
    if order is not None:
        how = "minimal" if order["exact"] else "heuristic"
        lines.append(
            f"Order: calls reordered for memory ({how}): liveness peak "
            f"{order['peak']:,} B, {order['source_peak']:,} B in source order"
        )
    persistent = [p for p in pools if p[1] == PoolKind.PERSISTENT]
    if persistent:
        total = sum(p[2] for p in persistent)
        count = sum(int(p[5]) for p in persistent)
        lines.append(
            f"Persistent: {total:,} B of state kept across runs ({count} "
            "buffer(s), never shared with the workspace)"
        )
    lines.append("")
    steps = [("step", "operator", "live B", "% peak", "buffers live (largest first)")]
    for r in rows:
        share = f"{100 * r.live_bytes / peak:.1f}" if peak else "-"
        steps.append(
            (
                str(r.step),
                r.operator,
                f"{r.live_bytes:,}",
                share,
                ", ".join(
                    f"{n} {s:,}" for n, s in zip(r.buffers, r.sizes, strict=True)
                ),
            )
        )
    lines += _columns(steps, right=(0, 2, 3))
    return "\n".join(line.rstrip() for line in lines) + "\n"


def _columns(rows: Sequence[Sequence[str]], right: Sequence[int]) -> list[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    last = len(widths) - 1
    return [
        "  ".join(
            cell if i == last else cell.rjust(w) if i in right else cell.ljust(w)
            for i, (cell, w) in enumerate(zip(r, widths, strict=True))
        )
        for r in rows
    ]


def summary_csv(planned: PlannedModule, operators: Sequence[str] | None = None) -> str:
    """The same tables as one CSV: ``section`` is ``pool`` or ``step``."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(
        (
            "section",
            "pool",
            "kind",
            "size",
            "lower_bound",
            "ratio",
            "buffers",
            "step",
            "operator",
            "function",
            "live_bytes",
            "buffers_live",
        )
    )
    for row in _pool_rows(planned):
        writer.writerow(("pool", *row, "", "", "", "", ""))
    for r in step_rows(planned, operators):
        writer.writerow(
            (
                "step",
                "",
                "",
                "",
                "",
                "",
                "",
                r.step,
                r.operator,
                r.function,
                r.live_bytes,
                ";".join(r.buffers),
            )
        )
    return out.getvalue()
