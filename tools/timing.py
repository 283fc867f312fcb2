"""Step timing for the drivers: a tree of named steps, each with its process
CPU time and wall time, printed like ``mlir-opt --mlir-timing``.

``usmp-opt --time-passes`` and ``usmp-compile --time-passes`` print the tree
to stderr when the run ends (parsing, every pass, verification, printing);
``benchmarks/compile_time.py`` reads the CPU times of ``usmp-compile``'s
steps from it. A step run several times (one per ``--split-input-file``
chunk) accumulates into one node. A ``Timer`` belongs to one run: nothing
is kept between runs.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

RULE = "===" + "-" * 73 + "==="


@dataclass
class Timer:
    """One timed step and the steps timed inside it."""

    name: str
    cpu: float = 0.0
    wall: float = 0.0
    children: list[Timer] = field(default_factory=list["Timer"])

    def child(self, name: str) -> Timer:
        for c in self.children:
            if c.name == name:
                return c
        c = Timer(name)
        self.children.append(c)
        return c

    @contextmanager
    def step(self, name: str) -> Iterator[Timer]:
        """Time the body as the child step ``name`` (added to its earlier
        runs, if any)."""
        node = self.child(name)
        cpu, wall = time.process_time(), time.perf_counter()
        try:
            yield node
        finally:
            node.add(time.process_time() - cpu, time.perf_counter() - wall)

    def add(self, cpu: float, wall: float) -> None:
        self.cpu += cpu
        self.wall += wall

    def report(self, title: str = "Execution time report") -> str:
        """The tree as text: CPU and wall seconds with their share of the
        root's, children indented under their parent, then ``Rest`` (time
        of the root no child accounts for) and ``Total``."""
        total_cpu, total_wall = self.cpu or 1e-12, self.wall or 1e-12
        lines = [
            RULE,
            f"... {title} ...".center(len(RULE)).rstrip(),
            RULE,
            f"  Total Execution Time: {self.wall:.4f} seconds ({self.cpu:.4f} s CPU)",
            "",
            "  ----CPU Time----  ----Wall Time----  ----Name----",
        ]

        def row(cpu: float, wall: float, name: str, depth: int) -> None:
            lines.append(
                f"  {cpu:7.4f} ({100 * cpu / total_cpu:5.1f}%)"
                f"  {wall:7.4f} ({100 * wall / total_wall:5.1f}%)"
                f"  {'  ' * depth}{name}"
            )

        def visit(node: Timer, depth: int) -> None:
            for c in node.children:
                row(c.cpu, c.wall, c.name, depth)
                visit(c, depth + 1)

        visit(self, 0)
        rest_cpu = max(0.0, self.cpu - sum(c.cpu for c in self.children))
        rest_wall = max(0.0, self.wall - sum(c.wall for c in self.children))
        row(rest_cpu, rest_wall, "Rest", 0)
        row(self.cpu, self.wall, "Total", 0)
        return "\n".join(lines) + "\n"

    def flat(self) -> dict[str, float]:
        """CPU seconds of every top-level step, by name."""
        return {c.name: c.cpu for c in self.children}


@contextmanager
def timed_run(name: str = "Total") -> Iterator[Timer]:
    """A root ``Timer`` whose own times are those of the body."""
    root = Timer(name)
    cpu, wall = time.process_time(), time.perf_counter()
    try:
        yield root
    finally:
        root.add(time.process_time() - cpu, time.perf_counter() - wall)
