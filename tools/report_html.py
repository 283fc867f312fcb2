"""``usmp-compile ... --report-html OUT.html [--profile-data PROFILE.txt]``:
one self-contained HTML page of a compiled model.

Built from what the compile wrote in its output folder (``memory/plan.json``
and the pictures ``memory/plan.<pool>.svg`` of ``usmp{report}``), and
optionally the per-layer table the kit's example printed
(``usmp-compile --profile``; ``usmp.tools.profile_table``):

* the pools (size, liveness lower bound, ratio) and every pool's picture,
  inlined as SVG (the same hover texts);
* a table with one row per step of the entry: operator index, our
  function, its TFLite operator(s), the buffers it reads, writes and uses
  as scratch with their pool, offset and size (hover: the tensor), the
  workspace bytes live at that step; with a profile, the time (or cycles,
  instructions) per run and the share, with a bar.

The page needs no network: no script, no external style sheet, font or
image; the SVGs lose their ``xmlns`` (HTML5 inlines SVG without it) and
their ids are prefixed per pool, so nothing on the page has an
``http(s)://`` address. A profile that does not belong to the compile (its
model, or its operators in call order, differ) is an error naming the file.
"""

from __future__ import annotations

import json
import re
from html import escape
from pathlib import Path
from typing import Any

from usmp.passes.usmp_report_summary import short_labels
from usmp.tools.profile_table import ProfileError, ProfileTable

_CSS = """
body { font-family: sans-serif; font-size: 14px; margin: 1.5em; color: #222; }
h1 { font-size: 1.4em; } h2 { font-size: 1.15em; margin-top: 1.6em; }
table { border-collapse: collapse; margin: 0.5em 0; }
th, td { border: 1px solid #ccc; padding: 3px 6px; vertical-align: top; }
th { background: #f0f0f0; text-align: left; }
td.n { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.f { font-family: monospace; font-size: 12px; }
ul.b { list-style: none; margin: 0; padding: 0; font-size: 12px; }
ul.b li { white-space: nowrap; }
.read { color: #1a5fb4; } .write { color: #a51d2d; } .scratch { color: #6b4f00; }
.bar { background: #e66100; height: 10px; display: inline-block; }
.svg { overflow-x: auto; border: 1px solid #ddd; margin: 0.5em 0; }
.note { color: #555; font-size: 12px; }
"""


def _svg_inline(text: str, prefix: str) -> str:
    """An SVG file as an inline element: no XML declaration, no ``xmlns``,
    ids (and references to them) prefixed with ``prefix``."""
    text = re.sub(r"<\?xml[^>]*\?>\s*", "", text)
    text = re.sub(r'\s+xmlns(:\w+)?="[^"]*"', "", text)
    text = re.sub(r'\bid="([^"]+)"', rf'id="{prefix}\1"', text)
    text = re.sub(r"url\(#([^)]+)\)", rf"url(#{prefix}\1)", text)
    return re.sub(r'href="#([^"]+)"', rf'href="#{prefix}\1"', text)


def _ratio(r: float | None) -> str:
    return "" if r is None else f"{r:.3f}"


def _num(n: float) -> str:
    return f"{n:,.0f}" if float(n).is_integer() else f"{n:,.3f}"


def _match_profile(
    plan: dict[str, Any], profile: ProfileTable, source: str
) -> dict[int, int]:
    """Step -> profile row: the profile's rows are the entry's operator calls
    in order, matched to the steps calling the same functions."""
    model = str(plan["model"]).removeprefix("tvmgen_").removesuffix("___tvm_main__")
    if profile.model != model:
        raise ProfileError(
            f"{source}: error: the profile is of model '{profile.model}', this "
            f"compile's is '{model}' (use the same --module-name and options as "
            "the profiled build)"
        )
    steps: list[str] = list(plan["steps"])
    matched: dict[int, int] = {}
    step = 0
    for row in profile.rows:
        while step < len(steps) and steps[step] != row.function:
            step += 1
        if step == len(steps):
            raise ProfileError(
                f"{source}: error: profile row {row.index} times '{row.function}', "
                "which this compile does not call in that order (its calls: "
                f"{', '.join(steps)}); profile a build with the same options"
            )
        matched[step] = row.index
        step += 1
    return matched


def report_html(
    out: Path, profile: ProfileTable | None = None, profile_source: str = ""
) -> str:
    """The page of the compile in ``out`` (module note)."""
    plan = json.loads((out / "memory/plan.json").read_text())
    pools = {p["name"]: p for p in plan["pools"]}
    buffers = {b["name"]: b for b in plan["buffers"]}
    tensors = {
        b["name"]: (b.get("tensor") or {}).get("name", "") for b in plan["buffers"]
    }
    names = list(tensors)
    short = dict(
        zip(
            names,
            short_labels(
                [tensors[n].split(";")[0] or n for n in names],
                [not tensors[n] for n in names],
            ),
            strict=True,
        )
    )
    steps: list[str] = plan["steps"]
    labels: list[str] = plan.get("step_operators") or steps
    model = str(plan["model"]).removeprefix("tvmgen_").removesuffix("___tvm_main__")
    rows = _match_profile(plan, profile, profile_source) if profile else {}
    total = plan["total"]

    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>usmp report: model {escape(model)}</title>",
        f"<style>{_CSS}</style></head><body>",
        f"<h1>Model {escape(model)}: memory plan and layers</h1>",
        f'<p class="note">Planned by {escape(str(plan.get("algorithm") or ""))}; '
        f"workspace {_num(total['workspace_size'])} B (lower bound "
        f"{_num(total['workspace_lower_bound'] or 0)} B, "
        f"{_num(total['workspace_no_alias_bound'] or 0)} B of buffers live at the "
        f"peak without overlaps), constants {_num(total['constant_size'])} B.</p>",
        "<h2>Pools</h2>",
        "<table><tr><th>pool</th><th>kind</th><th>size B</th><th>lower bound B</th>"
        "<th>ratio</th><th>buffers</th></tr>",
    ]
    for p in plan["pools"]:
        parts.append(
            f"<tr><td>{escape(p['name'])}</td><td>{escape(p['kind'])}</td>"
            f'<td class="n">{_num(p["size"])}</td>'
            f'<td class="n">{_num(p["lower_bound"] or 0)}</td>'
            f'<td class="n">{_ratio(p["ratio"])}</td>'
            f'<td class="n">{p["buffers"]}</td></tr>'
        )
    parts.append("</table>")

    parts.append("<h2>Pictures</h2>")
    for k, name in enumerate(pools):
        svg = out / "memory" / f"plan.{name}.svg"
        if svg.exists():
            parts += [
                f"<h3>{escape(name)}</h3>",
                f'<div class="svg">{_svg_inline(svg.read_text(), f"p{k}-")}</div>',
            ]

    # the per-layer table
    unit = profile.unit if profile else ""
    parts += [
        "<h2>Layers</h2>",
        '<p class="note">One row per step of the entry function, in call order. '
        '<span class="read">read</span>, <span class="write">written</span> and '
        '<span class="scratch">scratch</span> buffers as pool@offset and size '
        "(hover for the tensor); workspace live: the bytes of the workspace "
        "buffers live during the step (with overlaps they can exceed the pool)."
        + (
            f" Profile: {escape(unit)}, {profile.runs} run(s), from "
            f"{escape(profile_source)}."
            if profile
            else ""
        )
        + "</p>",
        "<table><tr><th>step</th><th>TFLite operator</th><th>function</th>"
        "<th>buffers</th><th>workspace live B</th>"
        + (f"<th>{escape(unit.split(' (')[0])}</th><th>share</th>" if profile else "")
        + "</tr>",
    ]
    step_buffers = plan.get("step_buffers") or [[] for _ in steps]
    for s, (function, label) in enumerate(zip(steps, labels, strict=True)):
        live = sum(
            b["size"]
            for b in plan["buffers"]
            if pools.get(b["pool"], {}).get("kind") == "workspace"
            and any(a <= s < e for a, e in b["live"])
        )
        items = []
        for use in step_buffers[s] if s < len(step_buffers) else []:
            name, access = use["buffer"], use["access"]
            b = buffers.get(name)
            where = (
                f"{escape(b['pool'])}@{b['offset']:,}, {b['size']:,} B"
                if b is not None
                else "the application's buffer"
            )
            hover = f"buffer {name}" + (
                f"\ntensor {tensors[name]}" if tensors.get(name) else ""
            )
            items.append(
                f'<li class="{access}" title="{escape(hover)}">{access} '
                f"{escape(short.get(name) or name)}: {where}</li>"
            )
        cells = [
            f'<td class="n">{s}</td>',
            f"<td>{escape(label)}</td>",
            f'<td class="f">{escape(function)}</td>',
            f'<td><ul class="b">{"".join(items)}</ul></td>',
            f'<td class="n">{live:,}</td>',
        ]
        if profile:
            if s in rows:
                row = profile.rows[rows[s]]
                share = profile.share(row)
                cells += [
                    f'<td class="n">{_num(row.value)}</td>',
                    f'<td class="n">{share:.1f}% <span class="bar" '
                    f'style="width:{share:.1f}px"></span></td>',
                ]
            else:
                cells += ["<td></td>", "<td></td>"]
        parts.append("<tr>" + "".join(cells) + "</tr>")
    if profile:
        parts.append(
            f'<tr><td></td><td colspan="4">total</td><td class="n">'
            f'{_num(profile.total)}</td><td class="n">100.0%</td></tr>'
        )
    parts.append("</table>")

    parts += [
        '<p class="note">Generated by usmp-compile --report-html from '
        "memory/plan.json and the pool pictures.</p>",
        "</body></html>",
        "",
    ]
    return "\n".join(parts)
