"""JSON form of a planning problem (how real models' buffer sets are dumped).

Either a list of buffers, or an object ``{"pools": [...], "buffers": [...]}``::

    {"pools": [{"name": "sram", "size_limit": 65536, "alignment": 16}],
     "buffers": [{"name": "sid_1", "size": 1024, "start": 0, "end": 2,
                  "alignment": 16, "pools": ["sram"], "conflicts": []}]}

``alignment``/``pools``/``conflicts`` are optional on buffers. An optional
top-level ``"overlaps": [{"source", "target", "max_shift", "min_shift"}]``
lists the allowed overlaps (``model.Overlap``; ``min_shift`` optional). Without
``pools`` at the top level, the pools are those named by the buffers (in
order of first mention; unbounded, alignment 1), or the model's default
``global_workspace`` when none is named.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from usmp.planning.model import Buffer, Overlap, Pool, Problem


def problem_from_json(data: Any, *, source: str = "<json>") -> Problem:
    if isinstance(data, dict):
        raw_buffers, raw_pools = data.get("buffers"), data.get("pools")
    else:
        raw_buffers, raw_pools = data, None
    if not isinstance(raw_buffers, list):
        raise ValueError(
            f"{source}: expected a list of buffers or {{'buffers': [...]}}"
        )
    buffers: list[Buffer] = []
    for k, b in enumerate(raw_buffers):
        try:
            buffers.append(
                Buffer(
                    name=str(b["name"]),
                    size=int(b["size"]),
                    start=int(b["start"]),
                    end=int(b["end"]),
                    alignment=int(b.get("alignment", 1)),
                    pools=tuple(str(p) for p in b.get("pools", ())),
                    conflicts=frozenset(str(c) for c in b.get("conflicts", ())),
                )
            )
        except (KeyError, TypeError, ValueError) as e:
            raise ValueError(f"{source}: buffer #{k}: {e!r}") from None
    if raw_pools is not None:
        pools = tuple(
            Pool(str(p["name"]), p.get("size_limit"), int(p.get("alignment", 16)))
            for p in raw_pools
        )
    else:
        named = list(dict.fromkeys(p for b in buffers for p in b.pools))
        pools = tuple(Pool(n, alignment=1) for n in named) or Problem(()).pools
    overlaps = tuple(
        Overlap(
            str(o["source"]),
            str(o["target"]),
            int(o["max_shift"]),
            None if o.get("min_shift") is None else int(o["min_shift"]),
        )
        for o in (data.get("overlaps", ()) if isinstance(data, dict) else ())
    )
    return Problem(tuple(buffers), pools, overlaps)


def problem_to_json(problem: Problem) -> dict[str, Any]:
    return {
        "pools": [
            {"name": p.name, "size_limit": p.size_limit, "alignment": p.alignment}
            for p in problem.pools
        ],
        "buffers": [
            {
                "name": b.name,
                "size": b.size,
                "start": b.start,
                "end": b.end,
                "alignment": b.alignment,
                "pools": list(b.pools),
                "conflicts": sorted(b.conflicts),
            }
            for b in problem.buffers
        ],
        **(
            {
                "overlaps": [
                    {
                        "source": o.source,
                        "target": o.target,
                        "max_shift": o.max_shift,
                        "min_shift": o.min_shift,
                    }
                    for o in problem.overlaps
                ]
            }
            if problem.overlaps
            else {}
        ),
    }


def read_problem_json(path: str | Path) -> Problem:
    path = Path(path)
    return problem_from_json(json.loads(path.read_text()), source=str(path))


def write_problem_json(path: str | Path, problem: Problem) -> None:
    Path(path).write_text(json.dumps(problem_to_json(problem), indent=1) + "\n")
