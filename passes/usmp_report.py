"""``usmp-report``: write the memory plan as JSON and as one SVG per pool.

Reads the plan recorded in the IR -- the placements of ``usmp-plan-memory``,
or after ``usmp-convert-pool-allocations`` the views into pool arguments --
checks it like ``usmp-validate`` does, and writes (the composite
``usmp{report=...}`` calls the same writer)

* ``json``: ``{"model", "algorithm", "steps", "pools": [{name, kind, size,
  limit, alignment, lower_bound, ratio, buffers}], "total": {...}, "buffers":
  [{name, name_hint, function, role, pool, offset, size, alignment, live}]}``
  (``limit``: the size limit planned under, null if unbounded). The
  lower bound of a workspace pool is the peak, over main's steps, of the bytes
  of its buffers live at once (no plan can do better with the same pool
  assignment), less what the allowed overlaps live then can share (the finer
  bound, ``planning.lower_bound``; ``no_alias_bound``: without them; the
  allowed overlaps are listed in ``total.overlaps`` with the bytes each pair
  shares in the plan); of a constant pool, the sum of its constants; ``ratio`` is
  ``size / lower_bound``. ``total`` does the same over all workspace pools.
  The JSON also names each step's TFLite operators (``step_operators``) and
  each buffer's TFLite tensor (``tensor``: name, opcode and index of the
  operator computing it, or null) and, for constants, the steps reading them
  (``read_at``). ``aliases`` lists the tensors that live inside a buffer of
  main without being one (a reshape, or a slice ``aot-lower-main`` aliases at
  an offset): ``{tensor, buffer, offset}``, ``offset`` in bytes from the
  buffer's start. ``step_buffers`` gives, per step, the buffers its op is
  passed and how it uses them (``step_buffers``). Beside it, with
  ``usmp{report=...}``, ``summary.txt`` and ``summary.csv`` (for
  ``plan.json``; else ``<stem>.summary.*``): per pool size, lower bound
  and ratio, per step operator, live bytes and buffers live
  (``usmp_report_summary``).
* ``svg``: per pool, a picture (``usmp_report_svg``): a workspace pool as
  time (steps named by operator) x address with a rectangle per buffer named
  by its tensor; a constant pool as the constant bytes each step reads.
  ``svg`` is a path in which ``{pool}`` is replaced by the pool name; without
  ``{pool}`` the pool name is inserted before the extension (``plan.svg`` ->
  ``plan.sram.svg``).

Both files are written deterministically (sorted, fixed formatting). The pass
changes no IR; running it twice writes the same files.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from xdsl.context import Context
from xdsl.dialects import memref
from xdsl.dialects.builtin import FixedBitwidthType, MemRefType, ModuleOp
from xdsl.ir import Operation, OpResult
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import DiagnosticException

from usmp.diagnostics import tensor_location
from usmp.dialects.tir import PoolKind
from usmp.output_files import write_text_atomic
from usmp.passes.usmp_analysis import BufferInfo
from usmp.passes.usmp_plan_memory import PlannedModule
from usmp.passes.usmp_report_summary import (
    PoolReport,
    buffer_tensor,
    call_order,
    finer_bound,
    peak_bytes,
    pool_reports,
    step_operators,
    summary_csv,
    summary_text,
)
from usmp.passes.usmp_report_svg import pool_svg
from usmp.passes.usmp_validate import read_plan
from usmp.planning.problem_json import problem_to_json

__all__ = [
    "PoolReport",
    "UsmpReportPass",
    "benchmark_case",
    "dump_benchmark_case",
    "pool_reports",
    "report_json",
    "report_paths",
    "summary_paths",
    "write_report",
]


@dataclass(frozen=True)
class UsmpReportPass(ModulePass):
    """Write the recorded memory plan as JSON and SVG (see module doc)."""

    name = "usmp-report"

    json: str = ""
    """Path of the JSON report (empty: none)."""
    svg: str = ""
    """Path template of the per-pool SVGs (``{pool}`` = pool name; empty: none)."""

    def __post_init__(self) -> None:
        if not self.json and not self.svg:
            raise ValueError('usmp-report: give json="path" and/or svg="path"')

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        write_report(read_plan(op), self.json or None, self.svg or None)


def report_paths(report: str) -> tuple[str, str]:
    """``report="out/plan.json"`` -> JSON there, SVGs ``out/plan.<pool>.svg``;
    ``report="out"`` where ``out`` is a directory (or ends with ``/``) ->
    ``out/plan.json`` and ``out/plan.<pool>.svg``."""
    path = Path(report)
    if path.is_dir() or report.endswith(("/", os.sep)):
        path = path / "plan.json"
    stem = path.with_suffix("") if path.suffix == ".json" else path
    return str(stem.with_suffix(".json")), f"{stem}.{{pool}}.svg"


def report_json(
    planned: PlannedModule, operators: Sequence[str] | None = None
) -> dict[str, object]:
    analysis = planned.analysis
    pools = pool_reports(planned)
    workspace = [p for p in pools if p.kind == PoolKind.WORKSPACE]
    total_size = sum(p.size for p in workspace)
    no_alias = peak_bytes(analysis.buffers)
    total_bound = (
        finer_bound(analysis, {b.name for b in analysis.buffers})
        if analysis.overlaps
        else no_alias
    )
    chosen = call_order(analysis.main)
    order = {"call_order": chosen} if chosen is not None else {}
    return {
        "model": analysis.main.sym_name.data,
        "algorithm": planned.algorithm or None,
        "steps": list(analysis.steps),
        "step_operators": list(operators or step_operators(planned)),
        "pools": [
            {
                "name": p.name,
                "kind": p.kind,
                "size": p.size,
                "limit": p.limit,
                "alignment": p.alignment,
                "lower_bound": p.lower_bound,
                "no_alias_bound": p.no_alias_bound,
                "ratio": p.ratio,
                "buffers": len(p.buffers),
            }
            for p in pools
        ],
        "total": {
            "workspace_size": total_size,
            "workspace_lower_bound": total_bound,
            "workspace_no_alias_bound": no_alias,
            "overlaps": [
                {
                    "source": o.source,
                    "target": o.target,
                    "max_shift": o.max_shift,
                    "shared_bytes": _shared(planned, o.source, o.target),
                }
                for o in analysis.overlaps
            ],
            "ratio": round(total_size / total_bound, 4) if total_bound else None,
            "constant_size": sum(p.size for p in pools if p.kind == PoolKind.CONSTANT),
            "persistent_size": sum(
                p.size for p in pools if p.kind == PoolKind.PERSISTENT
            ),
        },
        **order,
        "buffers": [
            {
                "name": b.name,
                "name_hint": b.name_hint,
                "function": b.function,
                "role": b.role,
                "pool": planned.placements[b.name].pool,
                "offset": planned.placements[b.name].offset,
                "size": b.size,
                "alignment": b.alignment,
                "live": [list(i) for i in b.live],
                "read_at": list(b.read_at),
                "tensor": _tensor_json(b),
            }
            for b in analysis.everything
        ],
        "aliases": _aliases_json(planned),
        "step_buffers": step_buffers(planned),
    }


_VIEW_LIKE = (
    memref.SubviewOp,
    memref.ReinterpretCastOp,
    memref.CollapseShapeOp,
    memref.ExpandShapeOp,
    memref.CastOp,
)


def step_buffers(planned: PlannedModule) -> list[list[dict[str, str]]]:
    """Per step of main, the buffers its op is passed (``buffer``) and how
    it uses them (``access``): ``write`` for a buffer it starts (its first
    live step) or a model output, ``read`` for the others, ``scratch`` for
    the operator's own scratch; a model input or output outside the
    workspace is named by the tensor. Views (a reshape, a slice) are
    followed to their buffer."""
    analysis = planned.analysis
    main = analysis.main
    by_value: dict[object, BufferInfo] = {}
    for b in analysis.everything:
        owner = b.owner
        by_value[owner.results[0] if isinstance(owner, Operation) else owner] = b
    names = [
        *_strings_of(main.attributes.get("tir.input_names")),
        *_strings_of(main.attributes.get("tir.output_names")),
    ]
    n_inputs = len(_strings_of(main.attributes.get("tir.input_names")))
    arg_index: dict[object, int] = {a: k for k, a in enumerate(main.body.block.args)}
    rows: list[list[dict[str, str]]] = []
    for step, op in enumerate(analysis.step_ops):
        row: list[dict[str, str]] = []
        seen: set[str] = set()
        for operand in op.operands:
            value: Any = operand
            while value not in by_value and isinstance(value, OpResult):
                owner = value.op
                if not isinstance(owner, _VIEW_LIKE):
                    break
                value = owner.operands[0]
            b = by_value.get(value)
            if b is not None:
                if b.name in seen:
                    continue
                seen.add(b.name)
                write = b.role == "output" or (
                    b.role == "allocate" and b.first_step == step
                )
                row.append({"buffer": b.name, "access": "write" if write else "read"})
            elif (k := arg_index.get(value, len(names))) < len(names):
                name = names[k]
                if name not in seen:
                    seen.add(name)
                    row.append(
                        {"buffer": name, "access": "read" if k < n_inputs else "write"}
                    )
        callee = getattr(op, "callee", None)
        function = callee.root_reference.data if callee is not None else None
        for b in analysis.buffers:
            if function is not None and b.function == function:
                row.append({"buffer": b.name, "access": "scratch"})
        rows.append(row)
    return rows


def _strings_of(attr: object) -> list[str]:
    data = getattr(attr, "data", ())
    return [a.data for a in data if isinstance(getattr(a, "data", None), str)]


def _aliases_json(planned: PlannedModule) -> list[dict[str, object]]:
    """The views of main's buffers that name a TFLite tensor of their own
    (``memref.reinterpret_cast``s located at a reshape or slice)."""
    analysis = planned.analysis
    owners: dict[object, BufferInfo] = {b.owner: b for b in analysis.everything}
    found: list[dict[str, object]] = []
    for op in analysis.main.body.block.ops:
        if not isinstance(op, memref.ReinterpretCastOp):
            continue
        source, type_ = op.source, op.result.type
        buffer = owners.get(source.owner if isinstance(source, OpResult) else source)
        tensor = tensor_location(op.location)
        if buffer is None or tensor is None or not isinstance(type_, MemRefType):
            continue
        offset, element = type_.get_offset(), type_.get_element_type()
        if offset is None or not isinstance(element, FixedBitwidthType):
            continue
        name, opcode, operator = tensor
        found.append(
            {
                "tensor": {"name": name, "opcode": opcode, "operator": operator},
                "buffer": buffer.name,
                "offset": offset * element.size,
            }
        )
    return found


def _shared(planned: PlannedModule, a: str, b: str) -> int:
    """Bytes buffers ``a`` and ``b`` share in the plan."""
    by_name = planned.analysis.by_name()
    pa, pb = planned.placements[a], planned.placements[b]
    if pa.pool != pb.pool:
        return 0
    lo = max(pa.offset, pb.offset)
    hi = min(pa.offset + by_name[a].size, pb.offset + by_name[b].size)
    return max(0, hi - lo)


def _tensor_json(b: Any) -> dict[str, object] | None:
    tensor = buffer_tensor(b)
    if tensor is None:
        return None
    return {"name": tensor.name, "opcode": tensor.opcode, "operator": tensor.operator}


def summary_paths(json_path: str) -> tuple[str, str]:
    """The text and CSV summaries beside the JSON report: ``DIR/summary.txt``
    and ``.csv`` for ``DIR/plan.json``, else ``<stem>.summary.txt``/``.csv``."""
    path = Path(json_path)
    stem = path.parent / "summary" if path.stem == "plan" else path.with_suffix("")
    if stem.name != "summary":
        stem = stem.with_name(f"{stem.name}.summary")
    return f"{stem}.txt", f"{stem}.csv"


def write_report(
    planned: PlannedModule,
    json_path: str | None,
    svg_path: str | None,
    summary: bool = False,
) -> None:
    """The JSON, the SVGs, and with ``summary`` the text and CSV summaries
    beside the JSON (``summary_paths``)."""
    operators = step_operators(planned)  # walks every callee: once
    if json_path:
        report = report_json(planned, operators)
        _write(json_path, json.dumps(report, indent=2) + "\n")
    if json_path and summary:
        text_path, csv_path = summary_paths(json_path)
        _write(text_path, summary_text(planned, operators=operators))
        _write(csv_path, summary_csv(planned, operators))
    if svg_path:
        steps = len(planned.analysis.steps)
        for pool in pool_reports(planned):
            picture = pool_svg(pool, planned, steps, operators)
            _write(svg_file(svg_path, pool.name), picture)


def svg_file(template: str, pool: str) -> str:
    pool = re.sub(r"[^A-Za-z0-9_.-]", "_", pool)  # a file name, never a path
    if "{pool}" in template:
        return template.replace("{pool}", pool)
    path = Path(template)
    return str(path.with_name(f"{path.stem}.{pool}{path.suffix or '.svg'}"))


def _write(path: str, text: str) -> None:
    target = Path(path)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        write_text_atomic(target, text)
    except OSError as e:
        raise DiagnosticException(
            f"usmp: cannot write the report '{path}': {e}"
        ) from None


def benchmark_case(planned: PlannedModule) -> dict[str, Any]:
    """The workspace planning problem of a module, in the planning benchmark's
    JSON form (``usmp.planning.problem_json``): its pools (limits, alignment)
    and buffers ``{name, size, start, end, alignment, pools, conflicts}``
    (``start``/``end``: the first live interval; the buffers an operator's
    scratch meets at its other calls are explicit ``conflicts``, exactly as in
    the problem the planner solved)."""
    return problem_to_json(planned.analysis.workspace_problem())


def dump_benchmark_case(planned: PlannedModule, path: str | Path) -> None:
    """Write ``benchmark_case(planned)`` (e.g. ``benchmarks/cases/<model>.json``)."""
    _write(str(path), json.dumps(benchmark_case(planned), indent=1) + "\n")
