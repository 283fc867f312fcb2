"""The symbolic overlap analysis against the enumerating one, kernel by kernel.

``compare_module(module)`` summarises every prim func of a lowered module
from its access functions (``usmp_kernel_symbolic.summarize``, forwards and
backwards; the backward summary also as the compiler gets it, ``mirrored``
from the forward one, which must say the same) and traces it
(``usmp_kernel_trace.trace_kernel_with_counts``, the oracle), then
compares, for every argument pair the overlap analysis may use (one read and
never written, one written), the largest shift below and the smallest
above, and per argument what the analyses rely on (read,
written, every element written exactly once). A kernel the symbolic analysis
does not decide (or whose written arguments it cannot prove written exactly
once) is a *fallback*: the compiler traces it instead.

A difference is *safe* when the symbolic shifts allow a subset of the
oracle's (below no higher, above no lower) and *unsafe* otherwise; so is a
fact the symbolic analysis claims and the trace refutes.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from xdsl.dialects import func
from xdsl.dialects.builtin import MemRefType, ModuleOp

from usmp.passes.usmp_kernel_symbolic import KernelSummary, mirrored, summarize
from usmp.passes.usmp_kernel_trace import (
    TracedFacts,
    decided,
    trace_kernel_with_counts,
    written_arguments,
)


@dataclass(frozen=True)
class Difference:
    kernel: str
    backwards: bool
    what: str
    """``shift a->b`` or the fact, e.g. ``covered 3``."""
    oracle: object
    symbolic: object
    safe: bool


@dataclass(frozen=True)
class Comparison:
    kernels: int
    """Kernels compared (each forwards and backwards)."""
    fallbacks: tuple[str, ...]
    """Kernels (``name`` or ``name (backwards)``) not decided symbolically."""
    pairs: int
    """Shift pairs compared."""
    differences: tuple[Difference, ...]


def kernels(module: ModuleOp) -> list[func.FuncOp]:
    """The prim funcs with a body (main excluded)."""
    return [
        f
        for f in module.walk()
        if isinstance(f, func.FuncOp)
        and f.body.blocks
        and "tir.main" not in f.attributes
        and "tir.prim_func" in f.attributes
    ]


def compare_kernel(
    f: func.FuncOp, backwards: bool
) -> tuple[bool, bool, int, list[Difference]]:
    """(summarised, used by the compiler, pairs compared, differences) for
    ``f``: the facts of a summary the compiler does not use (``decided``: a
    written argument not proven written exactly once) are compared too."""
    args = [i for i, a in enumerate(f.args) if isinstance(a.type, MemRefType)]
    wanted = frozenset(args) | written_arguments(f)
    summary = summarize(f, wanted, backwards)
    traced = trace_kernel_with_counts(f, wanted, reverse=backwards)
    name = f.sym_name.data
    out: list[Difference] = []
    if backwards:  # the compiler mirrors the forward summary where it can
        forward = summarize(f, wanted)
        mirror = None if forward is None else mirrored(forward)
        if mirror is not None and (
            summary is None or normal_form(mirror) != normal_form(summary)
        ):
            out.append(Difference(name, backwards, "mirrored", summary, mirror, False))
    if summary is None:
        return False, False, 0, out
    used = decided(f, wanted, summary)  # else the compiler traces it
    if traced is None:  # the oracle gives up (e.g. its iteration budget)
        return True, used, 0, out
    oracle = TracedFacts(*traced)
    both = sorted(summary.followed & oracle.followed)
    for i in both:
        for what, o, s, safe in (
            ("reads", oracle.reads(i), summary.reads(i), summary.reads(i)),
            ("writes", oracle.writes(i), summary.writes(i), summary.writes(i)),
        ):
            if o != s:
                out.append(Difference(name, backwards, f"{what} {i}", o, s, safe))
        if summary.covered(i) and not oracle.written_once(i):
            out.append(Difference(name, backwards, f"covered {i}", False, True, False))
    pairs = 0
    for s in both:
        if oracle.writes(s) or not oracle.reads(s):
            continue
        for t in both:
            if t == s or not oracle.writes(t):
                continue
            pairs += 1
            o = (oracle.max_shift(s, t), oracle.min_shift(s, t))
            y = (summary.max_shift(s, t), summary.min_shift(s, t))
            if o != y:
                safe = y[0] <= o[0] and y[1] >= o[1]
                out.append(Difference(name, backwards, f"shift {s}->{t}", o, y, safe))
    return True, used, pairs, out


def normal_form(s: KernelSummary) -> tuple[object, ...]:
    """What ``s`` says, its groups in no particular order: two summaries of
    one kernel with equal normal forms give the same facts."""
    groups = sorted(
        (
            g.arg,
            g.write,
            tuple((id(op), kind) for op, kind in g.path),
            tuple(sorted(g.linear.items())),
            tuple(sorted(g.box.items())),
            g.element,
            tuple(sorted(g.members)),
        )
        for g in s.groups
    )
    return (s.sizes, groups, s.exactly_once, s.iterations, s.trips)


def compare_module(module: ModuleOp) -> Comparison:
    """Every kernel of ``module``, forwards and backwards (module doc)."""
    fallbacks: list[str] = []
    differences: list[Difference] = []
    pairs = 0
    fs = kernels(module)
    for f in fs:
        for backwards in (False, True):
            _, used, n, diffs = compare_kernel(f, backwards)
            if not used:
                suffix = " (backwards)" if backwards else ""
                fallbacks.append(f.sym_name.data + suffix)
            pairs += n
            differences.extend(diffs)
    return Comparison(len(fs), tuple(fallbacks), pairs, tuple(differences))


def random_kernel(rng: random.Random) -> str:
    """A small random prim func ``@k(%a, %b)`` (MLIR text): a loop nest of
    depth 1-3 (trip counts 1-4, steps 1-2, some loops written backwards by
    their bounds), loads of ``%a`` and stores to ``%b`` at affine addresses
    (coefficients -3..3 of the loop variables) at random depths, some under
    an ``scf.if`` on one loop variable; element types ``i8`` or ``i32``."""
    depth = rng.randint(1, 3)
    trips = [rng.randint(1, 4) for _ in range(depth)]
    steps = [rng.randint(1, 2) for _ in range(depth)]
    types = [rng.choice(("i8", "i32")) for _ in range(2)]
    accesses: list[tuple[int, bool, list[int], int | None]] = []
    for _ in range(rng.randint(1, 3)):
        for write in (False, True):
            d = rng.randint(1, depth)
            coefs = [rng.randint(-3, 3) for _ in range(d)]
            guard = rng.randrange(d) if rng.random() < 0.3 else None
            accesses.append((d, write, coefs, guard))
    rng.shuffle(accesses)
    sizes = [1, 1]
    offsets: list[int] = []
    for _, write, coefs, _ in accesses:  # every address in range
        ends = [c * s * (t - 1) for c, s, t in zip(coefs, steps, trips, strict=False)]
        lo = sum(min(0, e) for e in ends)
        hi = sum(max(0, e) for e in ends)
        offsets.append(-lo)
        sizes[int(write)] = max(sizes[int(write)], hi - lo + 1 + rng.randint(0, 2))
    lines = [
        f"func.func @k(%a: memref<{sizes[0]}x{types[0]}>, "
        f"%b: memref<{sizes[1]}x{types[1]}>) attributes {{tir.prim_func}} {{"
    ]
    used: set[int] = set()

    def c(n: int) -> str:
        used.add(n)
        return f"%c{n}" if n >= 0 else f"%cm{-n}"

    lines.append(f"  %v = arith.constant 1 : {types[1]}")
    n = 0

    def body(level: int, indent: str) -> None:
        nonlocal n
        for k, (d, write, coefs, guard) in enumerate(accesses):
            if d != level:
                continue
            out = indent
            inner = indent
            if guard is not None:
                bound = c(steps[guard])
                cmp = f"arith.cmpi sge, %i{guard}, {bound} : index"
                lines.append(f"{indent}%g{k} = {cmp}")
                lines.append(f"{indent}scf.if %g{k} {{")
                inner = indent + "  "
            acc = c(offsets[k])
            for q, co in enumerate(coefs):
                lines.append(f"{inner}%m{k}_{q} = arith.muli %i{q}, {c(co)} : index")
                lines.append(f"{inner}%s{k}_{q} = arith.addi {acc}, %m{k}_{q} : index")
                acc = f"%s{k}_{q}"
            if write:
                t = f"memref<{sizes[1]}x{types[1]}>"
                lines.append(f"{inner}memref.store %v, %b[{acc}] : {t}")
            else:
                t = f"memref<{sizes[0]}x{types[0]}>"
                lines.append(f"{inner}%x{k} = memref.load %a[{acc}] : {t}")
            if guard is not None:
                lines.append(f"{out}}}")
        if level < depth:
            lines.append(
                f"{indent}scf.for %i{level} = {c(0)} to "
                f"{c(steps[level] * trips[level])} "
                f"step {c(steps[level])} {{"
            )
            body(level + 1, indent + "  ")
            lines.append(f"{indent}}}")

    body(0, "  ")
    lines[1:1] = [f"  {c(n)} = arith.constant {n} : index" for n in sorted(used)]
    lines.append("  func.return")
    lines.append("}")
    return "\n".join(lines)
