"""Operator fusion on a dataflow graph: TVM's ``FuseOps`` partitioner.

Plain Python, no IR: ``fuse-ops`` builds a ``DataflowGraph`` from a relay
function and turns the partition into primitive functions.

The algorithm is TVM's (``src/relay/transforms/fuse_ops.cc``):

1. An *indexed forward graph*: one node per operator in topological order,
   each with its fusion pattern and its output edges. An edge carries the
   consumer's pattern, except that a broadcast consumer whose operand already
   has the result's shape gives an ``ELEMWISE`` edge. A node whose value
   leaves the function (``extern_ref``) has no post-dominator.
2. The *post-dominator tree*: a node's parent is the least common ancestor
   of its consumers, and the parent edge's pattern is the strongest pattern
   on the way there.
3. Union-find over groups, in three passes over the nodes:

   * phase 0: an anchor (``OUT_ELEMWISE_FUSABLE``, here also
     ``COMM_REDUCE``) fuses into its post-dominator when the relation is
     elementwise and every op on the way is at most ``BROADCAST``;
     elementwise/broadcast ops fuse into an injective or reduction
     post-dominator (or one already in an anchor's group) when the ops on
     the way are at most ``INJECTIVE``;
   * phase 1: the same for elementwise/broadcast ops, and injective ops fuse
     into their post-dominator when everything on the way, the sink
     included, is at most ``INJECTIVE``;
   * phase 2 (TVM: fuse injective ops into intermediate tuples) has nothing
     to do here: tuples are opaque.

   A fusion is refused when the group would exceed ``max_depth`` nodes.

Deviations, both for memory: ``COMM_REDUCE`` groups take an elementwise
epilogue like ``OUT_ELEMWISE_FUSABLE`` ones (see ``usmp.dialects.relay_fusion``), and a
group whose trailing elementwise chain widens its output before a join hands
that chain to the consuming group (``narrow_outputs``), so the narrow tensor
is the one materialised. Groups never hold two anchors: a sink's group must
be at most ``BROADCAST`` for an anchor to join it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from usmp.dialects.relay_fusion import ANCHOR_PATTERNS, OpPattern


@dataclass
class GraphNode:
    """One operator of the indexed forward graph."""

    pattern: OpPattern
    outputs: list[tuple[int, OpPattern]] = field(default_factory=list)
    """``(consumer index, edge pattern)`` per use, in use order."""
    extern_ref: bool = False
    """The node's value is used outside the graph (function result, ...)."""
    inputs: list[int] = field(default_factory=list)
    """Producer index per operand computed by another node, in operand order."""
    nbytes: int = 0
    """Size of the node's value (for ``narrow_outputs``)."""


@dataclass
class _DomNode:
    parent: int | None
    depth: int
    pattern: OpPattern


@dataclass(eq=False)
class _Group:
    pattern: OpPattern
    anchor: int | None
    parent: _Group | None = None
    num_nodes: int = 1

    def find_root(self) -> _Group:
        root = self
        while root.parent is not None:
            root = root.parent
        node = self  # path compression
        while node.parent is not None and node.parent is not root:
            node.parent, node = root, node.parent
        return root


def _combine(a: OpPattern, b: OpPattern) -> OpPattern:
    return max(a, b)


def post_dominators(nodes: Sequence[GraphNode]) -> list[_DomNode]:
    """TVM's ``DominatorTree::PostDom`` over nodes in topological order."""
    tree: list[_DomNode | None] = [None] * len(nodes)

    def lca(
        lhs: int | None, rhs: int | None, pattern: OpPattern
    ) -> tuple[int | None, OpPattern]:
        while lhs != rhs:
            if lhs is None or rhs is None:
                return None, pattern
            ln, rn = tree[lhs], tree[rhs]
            assert ln is not None and rn is not None
            if ln.depth < rn.depth:
                pattern = _combine(pattern, rn.pattern)
                rhs = rn.parent
            elif rn.depth < ln.depth:
                pattern = _combine(pattern, ln.pattern)
                lhs = ln.parent
            else:
                pattern = _combine(_combine(pattern, ln.pattern), rn.pattern)
                lhs, rhs = ln.parent, rn.parent
        return lhs, pattern

    for index in reversed(range(len(nodes))):
        node = nodes[index]
        if node.extern_ref or not node.outputs:
            pattern = OpPattern.OPAQUE if node.extern_ref else OpPattern.ELEMWISE
            tree[index] = _DomNode(None, 1, pattern)
            continue
        pattern = OpPattern.ELEMWISE
        parent: int | None = node.outputs[0][0]
        pattern = _combine(pattern, node.outputs[0][1])
        for consumer, edge in node.outputs[1:]:
            parent, pattern = lca(parent, consumer, pattern)
            pattern = _combine(pattern, edge)
        if parent is None:
            tree[index] = _DomNode(None, 1, pattern)
        else:
            parent_node = tree[parent]
            assert parent_node is not None
            tree[index] = _DomNode(parent, parent_node.depth + 1, pattern)
    return [t for t in tree if t is not None]


class _Partitioner:
    def __init__(self, nodes: Sequence[GraphNode], max_depth: int):
        self.nodes = nodes
        self.max_depth = max_depth
        self.groups = [
            _Group(n.pattern, i if n.pattern in ANCHOR_PATTERNS else None)
            for i, n in enumerate(nodes)
        ]

    # -- graph walks (TVM's CheckPath / CommitFuse / CountNodesUptoSink) ----

    def _reachable_before(self, src: int, sink: int) -> list[int]:
        """Nodes on the paths from ``src``'s consumers to ``sink`` (sink
        included, ``src`` excluded), each once."""
        seen: set[int] = set()
        order: list[int] = []
        stack = [c for c, _ in reversed(self.nodes[src].outputs)]
        while stack:
            node = stack.pop()
            if node in seen:
                continue
            seen.add(node)
            order.append(node)
            if node != sink:
                stack.extend(c for c, _ in reversed(self.nodes[node].outputs))
        return order

    def check_path(
        self, src: int, sink: int, fcond: Callable[[OpPattern, bool], bool]
    ) -> bool:
        return all(
            fcond(self.groups[n].find_root().pattern, n == sink)
            for n in self._reachable_before(src, sink)
        )

    def commit_fuse(self, src: int, sink: int) -> None:
        target = self.groups[sink]
        self._merge(self.groups[src], target)
        for node in self._reachable_before(src, sink):
            if node != sink:
                self._merge(self.groups[node], target)

    def count_fused_nodes_with_new_child(self, child: int, dom_parent: int) -> int:
        total = self.groups[dom_parent].find_root().num_nodes
        total += self.groups[child].num_nodes
        for node in self._reachable_before(child, dom_parent):
            if node != dom_parent:
                total += self.groups[node].num_nodes
        return total

    def _merge(self, child: _Group, parent: _Group) -> None:
        child, parent = child.find_root(), parent.find_root()
        if child is parent:
            return
        parent.num_nodes += child.num_nodes
        child.parent = parent
        if child.anchor is not None:
            if parent.anchor is not None:  # excluded by the path conditions
                raise AssertionError("fusion would put two anchors in one group")
            parent.anchor = child.anchor
            parent.pattern = _combine(child.pattern, parent.pattern)

    # -- the phases --------------------------------------------------------

    def run(self, phase: int, tree: Sequence[_DomNode]) -> None:
        for nid, dom in enumerate(tree):
            group = self.groups[nid]
            if group.pattern == OpPattern.OPAQUE or dom.parent is None:
                continue
            parent = dom.parent
            if self.count_fused_nodes_with_new_child(nid, parent) > self.max_depth:
                continue
            if group.find_root() is self.groups[parent].find_root():
                continue
            if self.groups[parent].pattern == OpPattern.TUPLE:
                continue
            if group.pattern in ANCHOR_PATTERNS:
                if phase != 0 or dom.pattern != OpPattern.ELEMWISE:
                    continue
                if self.check_path(nid, parent, lambda k, _: k <= OpPattern.BROADCAST):
                    self.commit_fuse(nid, parent)
            elif group.pattern <= OpPattern.BROADCAST:
                if (
                    dom.pattern <= OpPattern.INJECTIVE
                    or dom.pattern == OpPattern.COMM_REDUCE
                ):
                    if self.check_path(nid, parent, _elemwise_path):
                        self.commit_fuse(nid, parent)
            elif group.pattern == OpPattern.INJECTIVE:
                if phase != 1:
                    continue
                if self.check_path(nid, parent, lambda k, _: k <= OpPattern.INJECTIVE):
                    self.commit_fuse(nid, parent)


def _elemwise_path(kind: OpPattern, is_sink: bool) -> bool:
    """Ops between an elementwise op and its post-dominator: injective ones on
    parallel branches are fine; the sink may already anchor a group."""
    if not is_sink:
        return kind <= OpPattern.INJECTIVE
    return kind <= OpPattern.INJECTIVE or kind in ANCHOR_PATTERNS


def narrow_outputs(
    nodes: Sequence[GraphNode], group_of: list[int], max_depth: int
) -> list[int]:
    """Let a group hand its output over at its narrowest point.

    TVM's phase 0 lets an anchor run greedily through its epilogue. At a join
    of two anchor chains (an int8 residual add: each input is widened to i32
    and rescaled before the add) the first chain takes the join and the
    second ends right before it, so its *widened* tensor (i32, 4x the int8
    one) is materialised. Here, a group whose output feeds one other group
    only through elementwise/broadcast/injective ops hands its trailing
    single-use elementwise chain to that group when an earlier value of the
    chain is smaller: the group then outputs that value and the consumer
    recomputes the chain per element (elementwise ops on a parallel branch of
    an anchor's group, as TVM's rules allow). ``group_of`` maps each node to
    its group's representative; the refined map is returned.
    """
    group_of = list(group_of)
    sizes: dict[int, int] = {}
    for g in group_of:
        sizes[g] = sizes.get(g, 0) + 1
    for root in range(len(nodes)):
        node = nodes[root]
        group = group_of[root]
        if node.extern_ref or node.pattern > OpPattern.BROADCAST or not node.outputs:
            continue
        consumers = {group_of[c] for c, _ in node.outputs}
        if len(consumers) != 1 or group in consumers:
            continue
        (target,) = consumers
        if any(nodes[c].pattern > OpPattern.INJECTIVE for c, _ in node.outputs):
            continue
        chain = [root]  # root and the nodes it would hand over, backwards
        best, best_at = node.nbytes, 0
        current = root
        while True:
            producers = {p for p in nodes[current].inputs if group_of[p] == group}
            if len(producers) != 1:
                break
            (producer,) = producers
            if nodes[producer].nbytes < best:
                best, best_at = nodes[producer].nbytes, len(chain)
            if (
                nodes[producer].pattern > OpPattern.BROADCAST
                or len(nodes[producer].outputs) != 1
            ):
                break
            chain.append(producer)
            current = producer
        moved = chain[:best_at]
        if not moved or sizes[target] + len(moved) > max_depth:
            continue
        for n in moved:
            group_of[n] = target
        sizes[target] += len(moved)
        sizes[group] -= len(moved)
    return group_of


def partition(nodes: Sequence[GraphNode], max_depth: int) -> list[int]:
    """Group the nodes (in topological order); returns, per node, the index
    of a representative node of its group (the same for all members)."""
    tree = post_dominators(nodes)
    partitioner = _Partitioner(nodes, max_depth)
    for phase in (0, 1):
        partitioner.run(phase, tree)
    representative: dict[_Group, int] = {}
    group_of = [
        representative.setdefault(group.find_root(), index)
        for index, group in enumerate(partitioner.groups)
    ]
    return narrow_outputs(nodes, group_of, max_depth)
