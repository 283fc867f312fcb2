"""The memory report's pictures: one SVG per pool (plain SVG text, no library).

* A workspace pool is drawn as time x address: main's steps on x, each named
  by the TFLite operator(s) it runs (rotated labels, thinned out when the
  steps are too narrow; hovering a column gives the step's operator, callee
  and live bytes), addresses on y, a rectangle per buffer live interval
  labelled with its tensor name and size where the label fits *inside* the
  rectangle (cut short on the right with ``…`` otherwise, left out when even
  that does not fit; hovering gives the whole name), so labels never
  overlap: the rectangles of a valid plan do not. The bytes in use at each
  step (the union of the live buffers' ranges) are shaded behind; the pool
  size and the lower bound are lines labelled in the
  right margin. Bytes an allowed overlap shares (``usmp_overlap``) are
  hatched at the step where the target is written over its source.
* A constant pool is drawn per layer: for each step a bar of the constant
  bytes it reads, stacked per constant (weights, bias, requantisation
  tables; hover for name, size and offset), with the bar's total above it.
  A constant read by several steps appears in each of their bars.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence

from usmp.diagnostics import operator_location
from usmp.dialects.tir import PoolKind
from usmp.passes.usmp_analysis import BufferInfo
from usmp.passes.usmp_plan_memory import PlannedModule
from usmp.passes.usmp_report_summary import (
    PoolReport,
    buffer_label,
    buffer_tensor,
    name_prefix,
    short_labels,
    step_operators,
)


def escape(text: str) -> str:
    """``text`` with ``&``, ``<`` and ``>`` as entities (what
    ``xml.sax.saxutils.escape`` does; that module imports ``urllib`` and
    ``http``, 12 ms of every compile's start-up)."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


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
_LEFT, _RIGHT, _TOP = 90, 130, 50
_PLOT_H = 420
_STEP_LABELS = 150
"""Height below the plot for the rotated step labels."""
_CHAR = 0.58
"""Width of a character in em (sans-serif, an upper estimate)."""


def _bytes_label(n: int) -> str:
    if n >= 1 << 20 and n % (1 << 10) == 0:
        return f"{n / (1 << 20):.4g} MiB"
    if n >= 1 << 10:
        return f"{n / (1 << 10):.4g} KiB"
    return f"{n} B"


def _compact(n: int) -> str:
    """``n`` bytes in at most 5 characters: ``816``, ``4.6K``, ``66K``, ``1.2M``."""
    for unit, scale in (("M", 1 << 20), ("K", 1 << 10)):
        if n >= scale:
            value = n / scale
            return f"{value:.1f}{unit}" if value < 10 else f"{value:.0f}{unit}"
    return str(n)


def _nice_step(span: float, ticks: int) -> int:
    raw = max(span / ticks, 1)
    magnitude = 10 ** (len(str(int(raw))) - 1)
    for m in (1, 2, 5, 10):
        if m * magnitude >= raw:
            return m * magnitude
    return 10 * magnitude


def _fit(text: str, width: float, font: float) -> str | None:
    """``text`` cut from the right (read from its start, as a name is; the
    whole name is in the rectangle's hover text) to fit in ``width`` pixels
    at ``font`` px; None if not even 4 characters fit."""
    room = int(width / (font * _CHAR))
    if len(text) <= room:
        return text
    if room < 4:
        return None
    return text[: room - 1] + "…"


def _occupied_profile(
    buffers: Sequence[BufferInfo], planned: PlannedModule, steps: int
) -> list[int]:
    """Bytes in use at each step: the union of the live buffers' address
    ranges (less than their sum where allowed overlaps share bytes)."""
    ranges: list[list[tuple[int, int]]] = [[] for _ in range(max(steps, 1))]
    for b in buffers:
        offset = planned.placements[b.name].offset
        for s, e in b.live:
            for t in range(s, min(e, len(ranges))):
                ranges[t].append((offset, offset + b.size))
    out: list[int] = []
    for step in ranges:
        total, reach = 0, 0
        for lo, hi in sorted(step):
            lo = max(lo, reach)
            if hi > lo:
                total += hi - lo
                reach = hi
        out.append(total)
    return out


class _Canvas:
    """Coordinates and the parts both pictures share (axes, step labels)."""

    def __init__(self, steps: int, top: int, title: str):
        self.steps = max(steps, 1)
        self.top = max(top, 1)
        self.plot_w = min(max(840 - _LEFT - _RIGHT, 16 * self.steps), 4000)
        self.width = _LEFT + self.plot_w + _RIGHT
        self.height = _TOP + _PLOT_H + _STEP_LABELS + 72
        self.out: list[str] = [
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{self.width}" '
            f'height="{self.height}" viewBox="0 0 {self.width} {self.height}" '
            'font-family="sans-serif" font-size="11">',
            f"<title>{escape(title)}</title>",
            f'<rect x="0" y="0" width="{self.width}" height="{self.height}" '
            'fill="white"/>',
            '<defs><pattern id="shared" width="6" height="6" '
            'patternUnits="userSpaceOnUse" patternTransform="rotate(45)">'
            '<line x1="0" y1="0" x2="0" y2="6" stroke="#000" stroke-opacity="0.3" '
            'stroke-width="2"/>'
            "</pattern></defs>",
        ]

    def x(self, t: float) -> float:
        return _LEFT + self.plot_w * t / self.steps

    def y(self, address: float) -> float:
        return _TOP + _PLOT_H * (1 - address / self.top)

    def heading(self, text: str, sub: str) -> None:
        self.out.append(
            f'<text x="{_LEFT}" y="20" font-size="15" font-weight="bold">'
            f"{escape(text)}</text>"
            f'<text x="{_LEFT}" y="38" fill="#444">{escape(sub)}</text>'
        )

    def columns(self, tooltips: Sequence[str]) -> None:
        """An invisible hover target per step, behind everything else."""
        for t, tip in enumerate(tooltips):
            self.out.append(
                f'<rect x="{self.x(t):.1f}" y="{_TOP}" '
                f'width="{self.x(t + 1) - self.x(t):.1f}" height="{_PLOT_H}" '
                f'fill="white" fill-opacity="0"><title>{escape(tip)}</title></rect>'
            )

    def margin_label(self, address: int, lines: Sequence[str], color: str) -> None:
        y = self.y(address)
        x = _LEFT + self.plot_w + 6
        for i, line in enumerate(lines):
            self.out.append(
                f'<text x="{x}" y="{y + 4 + 13 * i:.1f}" fill="{color}">'
                f"{escape(line)}</text>"
            )

    def axes(self, operators: Sequence[str], y_title: str, x_title: str) -> None:
        bottom = _TOP + _PLOT_H
        self.out.append(
            f'<line x1="{_LEFT}" y1="{_TOP}" x2="{_LEFT}" y2="{bottom}" '
            'stroke="black"/>'
            f'<line x1="{_LEFT}" y1="{bottom}" x2="{_LEFT + self.plot_w}" '
            f'y2="{bottom}" stroke="black"/>'
        )
        step = _nice_step(self.top, 8)
        for address in range(0, self.top + 1, step):
            self.out.append(
                f'<line x1="{_LEFT - 4}" x2="{_LEFT}" y1="{self.y(address):.1f}" '
                f'y2="{self.y(address):.1f}" stroke="black"/>'
                f'<text x="{_LEFT - 6}" y="{self.y(address) + 4:.1f}" '
                f'text-anchor="end">{address:,}</text>'
            )
        # one label per step if they fit side by side (12 px), else every k-th
        every = max(1, -(-12 * self.steps // self.plot_w))
        for t in range(0, len(operators), every):
            cx = (self.x(t) + self.x(t + 1)) / 2
            label = _fit(f"{t} {operators[t]}", _STEP_LABELS - 10, 9) or str(t)
            self.out.append(
                f'<line x1="{cx:.1f}" x2="{cx:.1f}" y1="{bottom}" y2="{bottom + 4}" '
                f'stroke="black"/><text x="{cx + 3:.1f}" y="{bottom + 8}" '
                f'font-size="9" transform="rotate(60 {cx + 3:.1f} {bottom + 8})">'
                f"{escape(label)}</text>"
            )
        self.out.append(
            f'<text x="{_LEFT + self.plot_w / 2:.1f}" '
            f'y="{bottom + _STEP_LABELS + 4}" text-anchor="middle">'
            f"{escape(x_title)}</text>"
            f'<text transform="translate(16,{_TOP + _PLOT_H / 2:.1f}) rotate(-90)" '
            f'text-anchor="middle">{escape(y_title)}</text>'
        )

    def legend(self, items: str, prefix: str) -> None:
        """``items`` at ``legend_y``; below them the hover hint and the name
        prefix the labels leave out (all in ``<g class="legend">``)."""
        self.out.append(f'<g class="legend">{items}')
        left_out = f"'{prefix}' and " if prefix else ""
        self.out.append(
            f'<text x="{_LEFT}" y="{self.height - 8}" fill="#444">hover for '
            f"details and whole names; labels omit {escape(left_out)}what "
            "follows the part that sets a name apart</text></g>"
        )

    @property
    def legend_y(self) -> int:
        """Baseline of the legend's first row (a second may follow)."""
        return self.height - 42

    def text(self) -> str:
        return "\n".join([*self.out, "</svg>"]) + "\n"


def _color(name: str) -> str:
    return _PALETTE[zlib.crc32(name.encode()) % len(_PALETTE)]


def _box_label(
    out: list[str], x0: float, x1: float, y0: float, y1: float, name: str, size: int
) -> None:
    """The label of a rectangle, inside it or not at all."""
    w, h = x1 - x0 - 4, y1 - y0
    font = 11 if h >= 14 else 9 if h >= 10 else 0
    if not font:
        return
    cx = (x0 + x1) / 2
    if h >= 2 * font + 6:
        first, size_text = _fit(name, w, font), _bytes_label(size)
        second = size_text if _fit(size_text, w, font) == size_text else None
        if first is None:
            return
        if second is None:  # a size is shown whole or not at all
            out.append(
                f'<text x="{cx:.1f}" y="{(y0 + y1) / 2 + font / 2 - 1:.1f}" '
                f'text-anchor="middle" font-size="{font}">{escape(first)}</text>'
            )
            return
        mid = (y0 + y1) / 2
        out.append(
            f'<text x="{cx:.1f}" y="{mid - 1:.1f}" text-anchor="middle" '
            f'font-size="{font}">{escape(first)}</text>'
            f'<text x="{cx:.1f}" y="{mid + font:.1f}" text-anchor="middle" '
            f'font-size="{font}">{escape(second)}</text>'
        )
        return
    both = f"{name} {_bytes_label(size)}"
    label = both if _fit(both, w, font) == both else _fit(name, w, font)
    if label is not None:
        out.append(
            f'<text x="{cx:.1f}" y="{(y0 + y1) / 2 + font / 2 - 1:.1f}" '
            f'text-anchor="middle" font-size="{font}">{escape(label)}</text>'
        )


def _labels(buffers: Sequence[BufferInfo]) -> dict[str, str]:
    """Buffer name -> its label in a picture (``short_labels``)."""
    labels = short_labels(
        [buffer_label(b) for b in buffers],
        [buffer_tensor(b) is None for b in buffers],
    )
    return dict(zip((b.name for b in buffers), labels, strict=True))


def _tensor_line(b: BufferInfo) -> str:
    tensor = buffer_tensor(b)
    if tensor is None:  # made by the compiler (requantisation tables, ...)
        where = operator_location(b.anchor.location)
        return f"\nfor {where[0]} #{where[1]}" if where is not None else ""
    where = f" ({tensor.opcode} #{tensor.operator})" if tensor.opcode else ""
    return f"\ntensor {tensor.name}{where}"


def pool_svg(
    pool: PoolReport,
    planned: PlannedModule,
    steps: int,
    operators: Sequence[str] | None = None,
) -> str:
    """The pool's picture; ``operators``: ``step_operators(planned)`` if
    already computed."""
    operators = operators or step_operators(planned)
    if pool.kind == PoolKind.WORKSPACE:
        return workspace_svg(pool, planned, steps, operators)
    return constant_svg(pool, planned, steps, operators)


def _shared_bytes(c: _Canvas, pool: PoolReport, planned: PlannedModule) -> None:
    """Hatch the bytes an overlapping pair shares, at the step where the
    target is written over its source (``usmp_overlap``)."""
    members = {b.name: b for b in pool.buffers}
    for o in planned.analysis.overlaps:
        source, target = members.get(o.source), members.get(o.target)
        if source is None or target is None or not source.live or not target.live:
            continue
        a, b = planned.placements[o.source].offset, planned.placements[o.target].offset
        lo, hi = max(a, b), min(a + source.size, b + target.size)
        if lo >= hi:
            continue
        step = target.live[0][0]
        tip = (
            f"{o.source} and {o.target} share {hi - lo:,} B at step {step}: the "
            f"operator writes {o.target} over {o.source} only after reading "
            f"those bytes for the last time (target at most {o.max_shift:+,} B "
            "from the source's start)"
        )
        c.out.append(
            f'<rect x="{c.x(step):.1f}" y="{c.y(hi):.1f}" '
            f'width="{c.x(step + 1) - c.x(step):.1f}" '
            f'height="{max(c.y(lo) - c.y(hi), 0.5):.1f}" fill="url(#shared)" '
            f'stroke="#000" stroke-width="0.8"><title>{escape(tip)}</title></rect>'
        )


def workspace_svg(
    pool: PoolReport, planned: PlannedModule, steps: int, operators: Sequence[str]
) -> str:
    """The pool drawn as time x address, a rectangle per buffer live interval."""
    profile = _occupied_profile(pool.buffers, planned, steps)
    c = _Canvas(steps, max(pool.size, pool.lower_bound), f"usmp plan: pool {pool.name}")
    ratio = f", ratio {pool.ratio:.3f}" if pool.ratio else ""
    algorithm = f" by {planned.algorithm}" if planned.algorithm else ""
    bound = (
        f"lower bound {pool.lower_bound:,} B (peak live bytes)"
        if pool.no_alias_bound in (None, pool.lower_bound)
        else f"lower bound {pool.lower_bound:,} B (overlaps counted; "
        f"{pool.no_alias_bound:,} B without)"
    )
    c.heading(
        f"pool {pool.name} (workspace): {pool.size:,} B = {_bytes_label(pool.size)}",
        f"{bound}{ratio}; {len(pool.buffers)} buffers over {steps} steps{algorithm}",
    )
    c.columns(
        [
            f"step {t}: {operators[t]}\n{planned.analysis.steps[t]}\n"
            f"{profile[t]:,} B in use in this pool"
            for t in range(steps)
        ]
    )
    points = [f"{c.x(0):.1f},{c.y(0):.1f}"]
    for t, live in enumerate(profile):
        points += [f"{c.x(t):.1f},{c.y(live):.1f}", f"{c.x(t + 1):.1f},{c.y(live):.1f}"]
    points.append(f"{c.x(len(profile)):.1f},{c.y(0):.1f}")
    c.out.append(
        f'<polygon points="{" ".join(points)}" fill="#d9d9d9" fill-opacity="0.6" '
        'stroke="none"><title>bytes in use at each step</title></polygon>'
    )
    prefix = name_prefix([buffer_label(b) for b in pool.buffers])
    labels = _labels(pool.buffers)
    sharing = {n for o in planned.analysis.overlaps for n in (o.source, o.target)}
    for b in sorted(pool.buffers, key=lambda b: b.name):
        offset = planned.placements[b.name].offset
        label = labels[b.name]
        for s, e in b.live:
            x0, x1 = c.x(s), c.x(e)
            y0, y1 = c.y(offset + b.size), c.y(offset)
            ops = f"{operators[s]} .. {operators[e - 1]}" if e - 1 > s else operators[s]
            tip = (
                f"{b.name} ({b.role}, {b.function}): {b.size:,} B at offset "
                f"{offset:,}{_tensor_line(b)}\nlive steps [{s}, {e}): {ops}"
            )
            c.out.append(
                f'<g><title>{escape(tip)}</title><rect x="{x0:.1f}" y="{y0:.1f}" '
                f'width="{max(x1 - x0, 0.5):.1f}" height="{max(y1 - y0, 0.5):.1f}" '
                f'fill="{_color(b.name)}" fill-opacity="0.75" stroke="#333" '
                'stroke-width="0.6"/>'
            )
            # a buffer sharing bytes with its neighbour in time is labelled
            # in its own first step, where the neighbour's rectangle is not
            # (when that step is wide enough for a label)
            first = c.x(min(e, s + 1))
            x_end = first if b.name in sharing and first - x0 >= 40 else x1
            _box_label(c.out, x0, x_end, y0, y1, label, b.size)
            c.out.append("</g>")
    _shared_bytes(c, pool, planned)
    _size_lines(c, pool)
    c.axes(
        operators,
        "address (bytes from the pool start)",
        "time: step of main (the TFLite operators it runs)",
    )
    c.legend(_workspace_legend(c.legend_y, c.width, bool(sharing)), prefix)
    return c.text()


def _workspace_legend(y: int, width: int, shared: bool) -> str:
    """One swatch per kind of mark in the workspace picture, left to right,
    on a second row (16 px lower) from the first that would cross ``width``;
    the hatched one only when some bytes are shared."""
    box = 'width="12" height="9"'
    marks = [
        (
            f'<rect {box} fill="{_PALETTE[0]}" fill-opacity="0.75" stroke="#333" '
            'stroke-width="0.6"',
            "a buffer, over the steps it is live",
        ),
        (f'<rect {box} fill="#d9d9d9"', "bytes in use at each step"),
        ('<line stroke="black"', "pool size"),
        ('<line stroke="#d62728" stroke-dasharray="6,3"', "lower bound"),
    ]
    if shared:
        marks.append(
            (
                f'<rect {box} fill="url(#shared)" stroke="#000" stroke-width="0.8"',
                "bytes an operator's output shares with its input (written "
                "after their last read)",
            )
        )
    out, x, base = [], _LEFT, y
    for swatch, text in marks:
        line = swatch.startswith("<line")
        gap = 24 if line else 16
        end = x + gap + len(text) * 11 * _CHAR
        if end > width - 8 and x > _LEFT:
            x, base = _LEFT, base + 16
            end = x + gap + len(text) * 11 * _CHAR
        where = (
            f'x1="{x}" x2="{x + 20}" y1="{base - 4}" y2="{base - 4}"'
            if line
            else f'x="{x}" y="{base - 9}"'
        )
        out.append(f"{swatch} {where}/>")
        out.append(f'<text x="{x + gap}" y="{base}">{escape(text)}</text>')
        x = round(end + 14)
    return "".join(out)


def _size_lines(c: _Canvas, pool: PoolReport) -> None:
    x0, x1 = _LEFT, _LEFT + c.plot_w
    for value, color, dash in (
        (pool.lower_bound, "#d62728", ' stroke-dasharray="6,3"'),
        (pool.size, "black", ""),
    ):
        c.out.append(
            f'<line x1="{x0}" x2="{x1}" y1="{c.y(value):.1f}" y2="{c.y(value):.1f}" '
            f'stroke="{color}"{dash}/>'
        )
    if abs(c.y(pool.lower_bound) - c.y(pool.size)) < 30:
        same = "= lower bound" if pool.size == pool.lower_bound else ""
        lines = (
            ["pool size", f"{pool.size:,} B", same]
            if same
            else [
                f"size {pool.size:,} B",
                f"bound {pool.lower_bound:,} B",
            ]
        )
        c.margin_label(pool.size, [line for line in lines if line], "black")
    else:
        c.margin_label(pool.size, ["pool size", f"{pool.size:,} B"], "black")
        c.margin_label(
            pool.lower_bound, ["lower bound", f"{pool.lower_bound:,} B"], "#d62728"
        )


def constant_svg(
    pool: PoolReport, planned: PlannedModule, steps: int, operators: Sequence[str]
) -> str:
    """Per step (layer), the constant bytes it reads, stacked per constant."""
    per_step: list[list[BufferInfo]] = [[] for _ in range(max(steps, 1))]
    unread: list[BufferInfo] = []
    for b in sorted(pool.buffers, key=lambda b: (-b.size, b.name)):
        read = [t for t in b.read_at if t < len(per_step)]
        for t in read:
            per_step[t].append(b)
        if not read:
            unread.append(b)
    totals = [sum(b.size for b in bs) for bs in per_step]
    prefix = name_prefix([buffer_label(b) for b in pool.buffers])
    labels = _labels(pool.buffers)
    top = max(totals, default=0)
    c = _Canvas(steps, top, f"usmp plan: pool {pool.name}")
    heaviest = max(range(len(totals)), key=lambda t: totals[t], default=0)
    c.heading(
        f"pool {pool.name} (constant): {pool.size:,} B = {_bytes_label(pool.size)}, "
        f"{len(pool.buffers)} constant{'' if len(pool.buffers) == 1 else 's'}",
        f"constant bytes each step reads; largest: step {heaviest} "
        f"({operators[heaviest] if operators else '-'}) {top:,} B"
        + (f"; {len(unread)} constants read by no step" if unread else ""),
    )
    c.columns(
        [
            f"step {t}: {operators[t]}\n{planned.analysis.steps[t]}\n"
            f"reads {totals[t]:,} B of constants ({len(per_step[t])})"
            for t in range(steps)
        ]
    )
    for t, bs in enumerate(per_step[:steps]):
        base = 0
        x0, x1 = c.x(t + 0.1), c.x(t + 0.9)
        for b in bs:
            y0, y1 = c.y(base + b.size), c.y(base)
            offset = planned.placements[b.name].offset
            tip = (
                f"{b.name} ({b.function}): {b.size:,} B at offset {offset:,}"
                f"{_tensor_line(b)}\nread by step(s) {', '.join(map(str, b.read_at))}"
            )
            c.out.append(
                f'<g><title>{escape(tip)}</title><rect x="{x0:.1f}" y="{y0:.1f}" '
                f'width="{x1 - x0:.1f}" height="{max(y1 - y0, 0.5):.1f}" '
                f'fill="{_color(b.name)}" fill-opacity="0.8" stroke="#333" '
                'stroke-width="0.4"/>'
            )
            _box_label(c.out, x0, x1, y0, y1, labels[b.name], b.size)
            c.out.append("</g>")
            base += b.size
        total = _compact(totals[t])
        if totals[t] and _fit(total, x1 - x0 + 8, 9) == total:
            c.out.append(
                f'<text x="{(x0 + x1) / 2:.1f}" y="{c.y(totals[t]) - 3:.1f}" '
                f'text-anchor="middle" font-size="9">{escape(total)}</text>'
            )
    c.axes(
        operators, "constant bytes read", "step of main (the TFLite operators it runs)"
    )
    c.legend(
        f'<text x="{_LEFT}" y="{c.legend_y}">one colour per constant; a constant '
        "read by several steps is counted in each</text>",
        prefix,
    )
    return c.text()
