"""Read and write MiniMalloc's CSV problems (google/minimalloc ``benchmarks/``).

Header ``id,lower,upper,size[,offset]``, one row per buffer, lifetimes
half-open ``[lower, upper)``. A file is one pool: the problem gets a single
pool ``name`` with byte alignment 1 (the format has no alignment) and the
capacity, if given, as its ``size_limit``. The ``offset`` column, present in
solution files, reads back as a :class:`Plan`.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

from usmp.planning.model import Buffer, Placement, Plan, Pool, Problem

DEFAULT_POOL = "minimalloc"
_REQUIRED = ("id", "lower", "upper", "size")


def parse_minimalloc(
    text: str,
    *,
    capacity: int | None = None,
    pool: str = DEFAULT_POOL,
    source: str = "<csv>",
) -> tuple[Problem, Plan | None]:
    """Parse CSV text; return the problem and, if offsets are given, their plan."""
    reader = csv.DictReader(io.StringIO(text))
    header = [h.strip() for h in reader.fieldnames or ()]
    missing = [c for c in _REQUIRED if c not in header]
    if missing:
        raise ValueError(
            f"{source}: missing column(s) {', '.join(missing)}; "
            f"expected header id,lower,upper,size[,offset]"
        )
    reader.fieldnames = header
    has_offset = "offset" in header
    buffers: list[Buffer] = []
    offsets: dict[str, Placement] = {}
    for line, row in enumerate(reader, start=2):
        try:
            name = row["id"].strip()
            buffers.append(
                Buffer(
                    name=name,
                    size=int(row["size"]),
                    start=int(row["lower"]),
                    end=int(row["upper"]),
                    pools=(pool,),
                )
            )
            if has_offset:
                offsets[name] = Placement(pool, int(row["offset"]))
        except (TypeError, ValueError) as e:
            raise ValueError(f"{source}:{line}: {e}") from None
    problem = Problem(tuple(buffers), (Pool(pool, size_limit=capacity, alignment=1),))
    return problem, (Plan(offsets, algorithm="minimalloc-csv") if has_offset else None)


def read_minimalloc(
    path: str | Path, *, capacity: int | None = None, pool: str = DEFAULT_POOL
) -> Problem:
    """The problem in a MiniMalloc CSV file (offsets, if any, are ignored)."""
    path = Path(path)
    return parse_minimalloc(
        path.read_text(), capacity=capacity, pool=pool, source=str(path)
    )[0]


def capacity_from_name(path: str | Path) -> int | None:
    """The capacity a benchmark file is meant for: ``A.1048576.csv`` -> 1048576."""
    parts = Path(path).name.split(".")
    return int(parts[-2]) if len(parts) >= 3 and parts[-2].isdigit() else None


def format_minimalloc(problem: Problem, plan: Plan | None = None) -> str:
    """CSV text of a problem's buffers (with their offsets when ``plan`` given).

    Only lifetimes and sizes are representable: alignment, candidate pools and
    explicit conflicts are not, so a problem using them is rejected."""
    for b in problem.buffers:
        if b.conflicts or b.alignment > 1:
            raise ValueError(
                f"buffer {b.name}: explicit conflicts / alignment "
                "have no MiniMalloc CSV form"
            )
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["id", "lower", "upper", "size", *(["offset"] if plan else [])])
    for b in problem.buffers:
        row: list[object] = [b.name, b.start, b.end, b.size]
        if plan is not None:
            row.append(plan.placements[b.name].offset)
        writer.writerow(row)
    return out.getvalue()


def write_minimalloc(
    path: str | Path, problem: Problem, plan: Plan | None = None
) -> None:
    Path(path).write_text(format_minimalloc(problem, plan))
