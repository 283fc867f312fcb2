"""Memory-aware operator order: the topological order of a dataflow graph
that minimises the peak of live bytes.

Not a pass and no xDSL (``passes/aot_order.py`` builds the problem from the
relay main). The model: ``n`` nodes (operator calls) in source order, which
is a valid topological order; tensors, each written by one node (or present
from the start: a model input, ``producer is None``) and read by
``consumers``; a tensor is live from its producer's step to its last
consumer's step, both included (to the end when ``keep``: a model output).
While node ``v`` runs, the live bytes are those of the tensors live before
it (its inputs among them) plus its outputs; the order's *peak* is the
maximum over its steps. That is the liveness lower bound ``usmp`` reports for
the order (what placement can reach), so minimising it is the proxy for the
workspace. Extra ``edges`` ``(a, b)`` keep ``a`` before ``b`` (operators
touching one state in place keep their relative order).

The search (Serenity, Ahn et al. 2020: dynamic programming over the graph's
*downsets*, the sets of nodes that can have run): the nodes that have run
determine the live bytes, so layer ``k`` holds every downset of ``k`` nodes
with the smallest peak reaching it. A layer with more than ``width`` downsets
keeps the ``width`` best (smallest peak, then fewest live bytes): a beam
search, exact when no layer was cut (``OrderResult.exact``). The width comes
from a budget of transitions, so a 10,000-operator chain costs little and a
wide graph stays bounded (a graph so wide that even one downset per layer
overruns the budget four times keeps its source order). Among the orders
reaching the best peak, the one taken runs at every step the ready node that
comes first in source order (so an order that is already optimal is kept as
it is); an order whose peak is not below the source order's is never chosen
(the source order is returned). Deterministic: no hashing of objects, ties
broken by node index.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

DEFAULT_BUDGET = 200_000
"""Transitions (downset, next node) the search may look at, about 0.3 s."""


@dataclass(frozen=True)
class Tensor:
    size: int
    producer: int | None
    """The node writing it; ``None``: live from the start (a model input)."""
    consumers: tuple[int, ...]
    keep: bool = False
    """Live until the end (a model output)."""


@dataclass(frozen=True)
class OrderResult:
    order: tuple[int, ...]
    """The nodes in the chosen order (the source order if no order is better)."""
    peak: int
    source_peak: int
    exact: bool
    """``peak`` is the minimum over all topological orders (no layer was cut)."""

    @property
    def changed(self) -> bool:
        return self.order != tuple(range(len(self.order)))


@dataclass(frozen=True)
class _Graph:
    n: int
    preds: tuple[int, ...]
    """Bit mask of each node's predecessors."""
    succs: tuple[tuple[int, ...], ...]
    out: tuple[int, ...]
    """Bytes each node writes."""
    dead_out: tuple[int, ...]
    """Bytes each node writes that nobody reads (freed after the node)."""
    reads: tuple[tuple[tuple[int, int], ...], ...]
    """Per node, (consumer mask, size) of each tensor it reads that may die."""
    live0: int

    def step(self, done: int, live: int, v: int) -> tuple[int, int, int]:
        """Run ``v`` after the nodes ``done``: (new done, live bytes during
        ``v``, live bytes after it)."""
        after = done | (1 << v)
        during = live + self.out[v]
        freed = self.dead_out[v]
        for mask, size in self.reads[v]:
            if mask & ~after == 0:
                freed += size
        return after, during, during - freed


def _graph(n: int, tensors: Sequence[Tensor], edges: Sequence[tuple[int, int]]):
    preds = [0] * n
    out = [0] * n
    dead_out = [0] * n
    reads: list[list[tuple[int, int]]] = [[] for _ in range(n)]
    live0 = 0
    pairs = set(edges)
    for t in tensors:
        consumers = sorted(set(t.consumers))
        mask = sum(1 << c for c in consumers)
        if t.producer is None:
            if consumers or t.keep:
                live0 += t.size
        else:
            out[t.producer] += t.size
            if not consumers and not t.keep:
                dead_out[t.producer] += t.size
            pairs.update((t.producer, c) for c in consumers)
        if not t.keep and t.size:
            for c in consumers:
                reads[c].append((mask, t.size))
    succs: list[list[int]] = [[] for _ in range(n)]
    for a, b in sorted(pairs):
        if not (0 <= a < b < n):
            raise ValueError(f"edge {a} -> {b} is not in source order")
        preds[b] |= 1 << a
        succs[a].append(b)
    return _Graph(
        n,
        tuple(preds),
        tuple(tuple(s) for s in succs),
        tuple(out),
        tuple(dead_out),
        tuple(tuple(r) for r in reads),
        live0,
    )


def order_peak(
    n: int,
    tensors: Sequence[Tensor],
    order: Sequence[int],
    edges: Sequence[tuple[int, int]] = (),
) -> int:
    """The peak live bytes of running the nodes in ``order``."""
    g = _graph(n, tensors, edges)
    done, live, peak = 0, g.live0, g.live0
    for v in order:
        if g.preds[v] & ~done:
            raise ValueError(f"node {v} runs before one of its predecessors")
        done, during, live = g.step(done, live, v)
        peak = max(peak, during)
    return peak


def best_order(
    n: int,
    tensors: Sequence[Tensor],
    edges: Sequence[tuple[int, int]] = (),
    budget: int = DEFAULT_BUDGET,
) -> OrderResult:
    """The order of the ``n`` nodes with the smallest peak (see the module)."""
    g = _graph(n, tensors, edges)
    source_peak = order_peak(n, tensors, range(n), edges)
    # layers[k]: downset of k nodes -> (best peak reaching it, live bytes,
    # mask of the nodes ready to run)
    start = sum(1 << v for v in range(n) if g.preds[v] == 0)
    layer: dict[int, tuple[int, int, int]] = {0: (g.live0, g.live0, start)}
    layers = [layer]
    exact = True
    remaining = budget
    for k in range(n):
        nxt: dict[int, tuple[int, int, int]] = {}
        for done, (peak, live, ready) in layer.items():
            for v in _bits(ready):
                after, during, live_after = g.step(done, live, v)
                new_peak = max(peak, during)
                old = nxt.get(after)
                if old is not None:
                    if new_peak < old[0]:
                        nxt[after] = (new_peak, old[1], old[2])
                    continue
                rest = ready & ~(1 << v)
                for w in g.succs[v]:
                    if g.preds[w] & ~after == 0:
                        rest |= 1 << w
                nxt[after] = (new_peak, live_after, rest)
        remaining -= sum(s[2].bit_count() for s in nxt.values())
        if remaining < -3 * budget:  # too wide even for a greedy pass
            return OrderResult(tuple(range(n)), source_peak, source_peak, False)
        width = max(1, remaining // max(1, n - k - 1))
        if len(nxt) > width:
            exact = False
            kept = sorted(nxt.items(), key=lambda kv: (kv[1][0], kv[1][1], kv[0]))
            nxt = dict(kept[:width])
        layer = nxt
        layers.append(layer)
    best = layer[(1 << n) - 1][0]
    if best >= source_peak:
        return OrderResult(tuple(range(n)), source_peak, source_peak, exact)
    return OrderResult(_first_order(g, layers, best), best, source_peak, exact)


def _bits(mask: int) -> list[int]:
    """The set bits of ``mask``, lowest first."""
    found: list[int] = []
    while mask:
        low = mask & -mask
        found.append(low.bit_length() - 1)
        mask ^= low
    return found


def _first_order(
    g: _Graph, layers: list[dict[int, tuple[int, int, int]]], peak: int
) -> tuple[int, ...]:
    """The order within ``peak`` through kept downsets that runs, at every
    step, the ready node first in source order."""
    n = g.n
    good: list[set[int]] = [set() for _ in range(n + 1)]
    good[n] = {(1 << n) - 1}
    for k in range(n - 1, -1, -1):
        for done, (_, live, ready) in layers[k].items():
            if any(
                live + g.out[v] <= peak and done | (1 << v) in good[k + 1]
                for v in _bits(ready)
            ):
                good[k].add(done)
    order: list[int] = []
    done = 0
    for k in range(n):
        _, live, ready = layers[k][done]
        v = next(
            v
            for v in _bits(ready)
            if live + g.out[v] <= peak and done | (1 << v) in good[k + 1]
        )
        order.append(v)
        done |= 1 << v
    return tuple(order)
