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
  assignment); of a constant pool, the sum of its constants; ``ratio`` is
  ``size / lower_bound``. ``total`` does the same over all workspace pools.
* ``svg``: per pool, buffers as rectangles in time (main's steps, x) x address
  (bytes, y), labelled with their names and sizes, with both axes, the pool's
  size, its lower bound, and the live-bytes profile. ``svg`` is a path in
  which ``{pool}`` is replaced by the pool name; without ``{pool}`` the pool
  name is inserted before the extension (``plan.svg`` -> ``plan.sram.svg``).

Both files are written deterministically (sorted, fixed formatting). The pass
changes no IR; running it twice writes the same files.
"""

from __future__ import annotations

import json
import os
import re
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import DiagnosticException

from usmp.dialects.tir import PoolKind
from usmp.output_files import write_text_atomic
from usmp.passes.usmp_analysis import BufferInfo
from usmp.passes.usmp_plan_memory import PlannedModule
from usmp.passes.usmp_validate import read_plan
from usmp.planning.lower_bound import interval_peak
from usmp.planning.model import Buffer
from usmp.planning.problem_json import problem_to_json


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


# -- the report's data --------------------------------------------------------


@dataclass(frozen=True)
class PoolReport:
    name: str
    kind: PoolKind
    size: int
    limit: int | None
    """The size limit the plan was made under (None: unbounded)."""
    alignment: int
    lower_bound: int
    buffers: tuple[BufferInfo, ...]

    @property
    def ratio(self) -> float | None:
        return round(self.size / self.lower_bound, 4) if self.lower_bound else None


def _peak(buffers: Sequence[BufferInfo]) -> int:
    """Peak of the live bytes of ``buffers`` over main's steps (every live
    interval counted: exact for scratch of operators called several times)."""
    return interval_peak(
        Buffer(f"{b.name}@{s}", b.size, s, e) for b in buffers for s, e in b.live
    )


def pool_reports(planned: PlannedModule) -> list[PoolReport]:
    reports: list[PoolReport] = []
    for pool in planned.analysis.pools:
        name = pool.pool_name.data
        kind = pool.kind.data
        members = tuple(
            b
            for b in (
                planned.analysis.buffers
                if kind == PoolKind.WORKSPACE
                else planned.analysis.constants
            )
            if planned.placements[b.name].pool == name
        )
        if not members:
            continue
        bound = (
            _peak(members)
            if kind == PoolKind.WORKSPACE
            else sum(b.size for b in members)
        )
        reports.append(
            PoolReport(
                name,
                kind,
                planned.sizes.get(name, 0),
                pool.size_limit,
                pool.alignment.data,
                bound,
                members,
            )
        )
    return reports


def report_json(planned: PlannedModule) -> dict[str, object]:
    analysis = planned.analysis
    pools = pool_reports(planned)
    workspace = [p for p in pools if p.kind == PoolKind.WORKSPACE]
    total_size = sum(p.size for p in workspace)
    total_bound = _peak(analysis.buffers)
    return {
        "model": analysis.main.sym_name.data,
        "algorithm": planned.algorithm or None,
        "steps": list(analysis.steps),
        "pools": [
            {
                "name": p.name,
                "kind": p.kind,
                "size": p.size,
                "limit": p.limit,
                "alignment": p.alignment,
                "lower_bound": p.lower_bound,
                "ratio": p.ratio,
                "buffers": len(p.buffers),
            }
            for p in pools
        ],
        "total": {
            "workspace_size": total_size,
            "workspace_lower_bound": total_bound,
            "ratio": round(total_size / total_bound, 4) if total_bound else None,
            "constant_size": sum(p.size for p in pools if p.kind == PoolKind.CONSTANT),
        },
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
            }
            for b in (*analysis.buffers, *analysis.constants)
        ],
    }


def write_report(
    planned: PlannedModule, json_path: str | None, svg_path: str | None
) -> None:
    if json_path:
        _write(json_path, json.dumps(report_json(planned), indent=2) + "\n")
    if svg_path:
        steps = len(planned.analysis.steps)
        for pool in pool_reports(planned):
            _write(svg_file(svg_path, pool.name), pool_svg(pool, planned, steps))


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


# -- SVG ------------------------------------------------------------------------

_PALETTE = (
    "#4e79a7",
    "#f28e2b",
    "#e15759",
    "#76b7b2",
    "#59a14f",
    "#edc948",
    "#b07aa1",
    "#ff9da7",
    "#9c755f",
    "#bab0ac",
)
_W, _H = 960, 540
_LEFT, _RIGHT, _TOP, _BOTTOM = 90, 30, 50, 70


def _bytes_label(n: int) -> str:
    if n >= 1 << 20 and n % (1 << 10) == 0:
        return f"{n / (1 << 20):.4g} MiB"
    if n >= 1 << 10:
        return f"{n / (1 << 10):.4g} KiB"
    return f"{n} B"


def _nice_step(span: float, ticks: int) -> int:
    raw = max(span / ticks, 1)
    magnitude = 10 ** (len(str(int(raw))) - 1)
    for m in (1, 2, 5, 10):
        if m * magnitude >= raw:
            return m * magnitude
    return 10 * magnitude


def _live_profile(buffers: Sequence[BufferInfo], steps: int) -> list[int]:
    live = [0] * max(steps, 1)
    for b in buffers:
        for s, e in b.live:
            for t in range(s, min(e, len(live))):
                live[t] += b.size
    return live


def pool_svg(pool: PoolReport, planned: PlannedModule, steps: int) -> str:
    """The pool drawn as time x address, a rectangle per buffer live interval."""
    t_max = max(steps, 1)
    top = max(pool.size, pool.lower_bound, 1)
    plot_w, plot_h = _W - _LEFT - _RIGHT, _H - _TOP - _BOTTOM

    def x(t: float) -> float:
        return _LEFT + plot_w * t / t_max

    def y(address: float) -> float:
        return _TOP + plot_h * (1 - address / top)

    out: list[str] = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{_W}" height="{_H}" '
        f'viewBox="0 0 {_W} {_H}" font-family="sans-serif" font-size="11">',
        f"<title>usmp plan: pool {escape(pool.name)}</title>",
        f'<rect x="0" y="0" width="{_W}" height="{_H}" fill="white"/>',
        f'<text x="{_W / 2:.1f}" y="22" text-anchor="middle" font-size="15" '
        f'font-weight="bold">pool {escape(pool.name)} ({pool.kind}): '
        f"{_bytes_label(pool.size)} = {pool.size} B, lower bound "
        f"{pool.lower_bound} B"
        + (f", ratio {pool.ratio:.3f}" if pool.ratio else "")
        + (f", {escape(planned.algorithm)}" if planned.algorithm else "")
        + "</text>",
    ]
    # live bytes at each step, behind the buffers (its peak is the bound)
    if pool.kind == PoolKind.WORKSPACE:
        profile = _live_profile(pool.buffers, steps)
        points = [f"{x(0):.1f},{y(0):.1f}"]
        for t, live in enumerate(profile):
            points += [f"{x(t):.1f},{y(live):.1f}", f"{x(t + 1):.1f},{y(live):.1f}"]
        points.append(f"{x(len(profile)):.1f},{y(0):.1f}")
        out.append(
            f'<polygon points="{" ".join(points)}" fill="#d9d9d9" '
            'fill-opacity="0.6" stroke="none"><title>bytes live at each step'
            "</title></polygon>"
        )
    # buffers
    for b in sorted(pool.buffers, key=lambda b: b.name):
        where = planned.placements[b.name]
        color = _PALETTE[zlib.crc32(b.name.encode()) % len(_PALETTE)]
        spans = b.live if pool.kind == PoolKind.WORKSPACE else ((0, t_max),)
        for s, e in spans:
            x0, x1 = x(s), x(e)
            y0, y1 = y(where.offset + b.size), y(where.offset)
            tooltip = (
                f"{b.name} ({b.function}): {b.size} B at offset {where.offset}, "
                f"live [{s}, {e})"
            )
            out.append(
                f'<g><title>{escape(tooltip)}</title><rect x="{x0:.1f}" y="{y0:.1f}" '
                f'width="{max(x1 - x0, 0.5):.1f}" height="{max(y1 - y0, 0.5):.1f}" '
                f'fill="{color}" fill-opacity="0.75" stroke="#333" stroke-width="0.6"/>'
            )
            label = f"{b.name_hint} {b.size} B"
            if (x1 - x0) > 6 * len(label) * 0.6 and (y1 - y0) > 12:
                out.append(
                    f'<text x="{(x0 + x1) / 2:.1f}" y="{(y0 + y1) / 2 + 4:.1f}" '
                    f'text-anchor="middle" fill="black">{escape(label)}</text>'
                )
            elif (y1 - y0) > 9 and (x1 - x0) > 24:
                out.append(
                    f'<text x="{x0 + 2:.1f}" y="{(y0 + y1) / 2 + 3:.1f}" font-size="8" '
                    f'fill="black">{escape(b.name_hint)}</text>'
                )
            out.append("</g>")
    out.append(
        f'<line x1="{_LEFT}" x2="{_LEFT + plot_w}" y1="{y(pool.lower_bound):.1f}" '
        f'y2="{y(pool.lower_bound):.1f}" stroke="#d62728" stroke-dasharray="6,3"/>'
        f'<text x="{_LEFT + plot_w - 2}" y="{y(pool.lower_bound) - 3:.1f}" '
        f'text-anchor="end" fill="#d62728">lower bound {pool.lower_bound} B</text>'
    )
    out.append(
        f'<line x1="{_LEFT}" x2="{_LEFT + plot_w}" y1="{y(pool.size):.1f}" '
        f'y2="{y(pool.size):.1f}" stroke="black"/>'
        f'<text x="{_LEFT + 2}" y="{y(pool.size) - 3:.1f}">'
        f"pool size {pool.size} B</text>"
    )
    # axes
    out.append(
        f'<line x1="{_LEFT}" y1="{_TOP}" x2="{_LEFT}" y2="{_TOP + plot_h}" '
        'stroke="black"/>'
        f'<line x1="{_LEFT}" y1="{_TOP + plot_h}" x2="{_LEFT + plot_w}" '
        f'y2="{_TOP + plot_h}" stroke="black"/>'
    )
    step = _nice_step(top, 8)
    address = 0
    while address <= top:
        out.append(
            f'<line x1="{_LEFT - 4}" x2="{_LEFT}" y1="{y(address):.1f}" '
            f'y2="{y(address):.1f}" stroke="black"/>'
            f'<text x="{_LEFT - 6}" y="{y(address) + 4:.1f}" text-anchor="end">'
            f"{address}</text>"
        )
        address += step
    t_step = _nice_step(t_max, 20)
    for t in range(0, t_max + 1, t_step):
        label = planned.analysis.steps[t] if t < steps else "end"
        out.append(
            f'<g><title>step {t}: {escape(label)}</title><line x1="{x(t):.1f}" '
            f'x2="{x(t):.1f}" y1="{_TOP + plot_h}" y2="{_TOP + plot_h + 4}" '
            f'stroke="black"/><text x="{x(t):.1f}" y="{_TOP + plot_h + 16}" '
            f'text-anchor="middle">{t}</text></g>'
        )
    out.append(
        f'<text x="{_LEFT + plot_w / 2:.1f}" y="{_H - 22}" text-anchor="middle">'
        "time (step of main: operator call)</text>"
        f'<text transform="translate(18,{_TOP + plot_h / 2:.1f}) rotate(-90)" '
        'text-anchor="middle">address (bytes from the pool start)</text>'
    )
    legend_y = _H - 8
    if pool.kind == PoolKind.WORKSPACE:
        out.append(
            f'<rect x="{_LEFT}" y="{legend_y - 9}" width="12" height="9" '
            'fill="#d9d9d9"/>'
            f'<text x="{_LEFT + 16}" y="{legend_y}">bytes live at each step</text>'
            f'<line x1="{_LEFT + 170}" x2="{_LEFT + 194}" y1="{legend_y - 4}" '
            f'y2="{legend_y - 4}" stroke="#d62728" stroke-dasharray="6,3"/>'
            f'<text x="{_LEFT + 198}" y="{legend_y}">'
            "lower bound (peak live bytes)</text>"
        )
    out.append(
        f'<text x="{_LEFT + plot_w}" y="{legend_y}" text-anchor="end">'
        "hover a rectangle or a step for details</text>"
    )
    out.append("</svg>")
    return "\n".join(out) + "\n"


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
