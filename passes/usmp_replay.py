"""``usmp-replay``: prove, byte by byte, that a planned program computes what
it computed before planning.

The independent check of a whole memory plan. It reads only the rewritten
module (the output of ``usmp-convert-pool-allocations``: every buffer a
``memref.view`` of a pool argument at its planned offset) and the kernels'
loop nests; it uses nothing the planner computed (no liveness, conflicts,
overlaps or shifts), so a planner bug cannot hide in a shared assumption.

Model. Two memories are simulated side by side:

* the *logical* memory, where every buffer has bytes of its own, as before
  planning: each ``memref.view`` of a pool in the entry function, each view of
  a pool inside an operator (fresh at every call: the operator's scratch), and
  each input or output argument of the entry function. An alias
  (``memref.reinterpret_cast``/``collapse_shape``/``expand_shape`` of a buffer)
  is that buffer's bytes at an offset, as the program says;
* the *physical* memory: the pools (and the caller's input/output buffers)
  with every buffer at its planned address.

Each byte holds the *origin* of its value: the write that produced it (step,
buffer, byte). A write stores a fresh origin in both memories (the logical
memory, where a byte's origin can only name the byte itself, keeps just the
step); a read compares them. A byte whose physical origin is not its logical
one was overwritten by a buffer sharing its bytes, or never written (a pool's
bytes from before the run). Model outputs must still hold their values when
the run ends, and states (persistent pools) when the next run begins.

Order inside a call comes from the kernel's traced loop nest
(``usmp_kernel_trace.trace_all``): per byte, its first and last read and
write. Where two buffers meet at one physical byte during a call and one of
them is written, their accesses there must not interleave (one buffer's last
access before the other's first); they are then replayed in that order. A
kernel, argument or view the tracer cannot follow counts as reading and
writing every byte throughout the call. An operator that writes a constant
pool is a violation.

Each call is first replayed from ``trace_light`` (the same enumeration, with
times only for the arguments whose addresses meet another's): where every
byte one buffer reads and another writes is last read before it is first
written, and no check fails, the reads are checked and then the writes done.
Anything else (two written buffers meeting, a buffer both read and written
meeting another, a failed check) is replayed from ``trace_all`` as above,
which also words the violations. The light trace's accesses at known
addresses are enumerated in C where a compiler is (``usmp_trace_native``,
built on first use; else, or with ``USMP_NATIVE_REPLAY=0``, numpy: the same
bytes and times); so are the origin checks and writes of each step
(``usmp_trace_origins``: one pass, no temporary arrays; a failed check is
decided again, and worded, by the numpy path).

Invocations. Before a run the caller writes every input (fresh origins) and
the workspace pools hold poison (another model may have used them in between,
RFC U2); states carry over from the previous run; the caller's output
buffers hold poison. One run (``invocations=1``, the default) is enough: a
second differs from the first only in the states' values, whose bytes the end
of the first run checks, and the caller's writes of the inputs come before
any read in both; ``invocations=2`` replays a second run anyway.

Requires the output of ``usmp`` (or ``usmp-convert-pool-allocations``).
Changes nothing; a violation is a located error at the entry function listing
(up to 20) violations.
"""

from __future__ import annotations

import itertools
import math
import sys
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt
from xdsl.context import Context
from xdsl.dialects import arith, func, memref
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    DenseArrayBase,
    DictionaryAttr,
    FixedBitwidthType,
    IntegerAttr,
    MemRefType,
    ModuleOp,
    NoneAttr,
    ShapedType,
    StridedLayoutAttr,
    StringAttr,
)
from xdsl.ir import Attribute, Operation, SSAValue

from usmp.diagnostics import located_error
from usmp.dialects.tir import (
    INPUT_ALLOCATIONS,
    INPUT_NAMES,
    INPUT_TYPES,
    OUTPUT_ALLOCATIONS,
    OUTPUT_NAMES,
    OUTPUT_TYPES,
    STATES,
    AllocateOp,
    CallOp,
    PoolAllocationAttr,
    PoolKind,
)
from usmp.passes import usmp_trace_origins as origins
from usmp.passes.options import TypedOptions
from usmp.passes.progress import report
from usmp.passes.usmp_ir import (
    ModuleOps,
    attr_list,
    find_main,
    pool_arguments,
    string_list,
)
from usmp.passes.usmp_kernel_trace import (
    NEVER,
    ByteSets,
    ByteTimes,
    KernelAccesses,
    LightAccesses,
    trace_all,
    trace_light,
    written_arguments,
)
from usmp.passes.usmp_pools import module_pools
from usmp.passes.usmp_statement_liveness import in_parallel_loop

Array = npt.NDArray[np.int64]
Stamps = npt.NDArray[np.int32]
Bytes = Array | slice
"""Indices of bytes: an ascending array, or a range (``slice(lo, hi)``)."""

UNDEFINED = -1
"""Logical: no value yet (reading it is not a plan error)."""
POISON = -2
"""Physical: bytes from before the run (another model's, or garbage)."""
_STAMP = 1 << 32
"""origin = stamp * _STAMP + logical byte index."""
_HALVES = np.dtype([("index", "<u4"), ("stamp", "<i4")])
"""An origin's two 32-bit halves (a little-endian ``np.int64``): its logical
byte index and its stamp (an index below ``_STAMP``, a stamp >= 0; ``POISON``
has stamp -1)."""
_MAX_REPORTED = 20
MAX_INVOCATIONS = 8
"""Runs ``usmp-replay{invocations=N}`` may replay."""
SHARED_WINDOW = 1 << 16
"""Physical addresses replayed together where buffers meet."""


@dataclass(frozen=True)
class _Space:
    """A physical address space: a pool, or one of the caller's buffers."""

    name: str
    kind: str
    """A ``PoolKind``, or ``external``."""
    base: int
    """Index of its byte 0 in the physical memory."""
    size: int


@dataclass
class _Buffer:
    """A logical buffer."""

    name: str
    role: str
    """``buffer``, ``scratch``, ``input``, ``output``, ``state`` or
    ``constant``."""
    space: _Space
    addr: int
    """Planned byte offset in ``space``."""
    size: int
    base: int = -1
    """Index of its byte 0 in the logical memory (-1: constants, not tracked)."""

    def describe(self) -> str:
        what = {"buffer": "buffer", "scratch": "scratch buffer"}.get(
            self.role, self.role
        )
        return f"{what} '{self.name}'"


@dataclass(frozen=True)
class _Ref:
    """A memref value of the entry function: bytes of one buffer."""

    buffer: _Buffer
    offset: int
    size: int


@dataclass(frozen=True)
class _PoolRef:
    """A pool argument passed whole (an operator's scratch and constants)."""

    space: _Space


@dataclass
class _Entry:
    """The touched bytes of one buffer (or alias) in one call."""

    phys: Array
    logical: Array
    first_read: Array
    last_read: Array
    first_write: Array
    last_write: Array

    @property
    def span(self) -> tuple[int, int]:
        """Physical addresses [lo, hi) it touches (the bytes are ascending)."""
        return int(self.phys[0]), int(self.phys[-1]) + 1


@dataclass
class _Light:
    """The touched bytes of one buffer in one call, from ``trace_light``:
    ``mode`` ``r`` (only read: ``last_read``), ``w`` (only written:
    ``first_write``) or ``rw`` (``first_read`` and ``first_write``)."""

    phys: Bytes
    logical: Bytes
    mode: str
    last_read: Array | None
    first_read: Array | None
    first_write: Array | None
    never: int
    """The times' ``never`` (``ByteSets.never``: their type's)."""

    @property
    def span(self) -> tuple[int, int]:
        return _first(self.phys), _last(self.phys) + 1

    @property
    def size(self) -> int:
        return _size(self.phys)

    def checked(self) -> npt.NDArray[np.bool_] | None:
        """The bytes read before the call writes them (None: all)."""
        if self.mode == "r":
            return None
        if self.mode == "w":
            return np.zeros(self.size, np.bool_)
        assert self.first_read is not None and self.first_write is not None
        fr, fw = self.first_read, self.first_write
        return (fr != self.never) & (fr < fw)

    def written(self) -> npt.NDArray[np.bool_] | None:
        """The bytes the call writes (None: all)."""
        if self.mode == "w":
            return None
        if self.mode == "r":
            return np.zeros(self.size, np.bool_)
        assert self.first_write is not None
        return self.first_write != self.never


@dataclass
class _Records:
    """Per touched byte of one call: where it is and when it is accessed."""

    entries: list[_Entry] = field(default_factory=list[_Entry])
    light: list[_Light] = field(default_factory=list[_Light])

    def add_light(self, buffer: _Buffer, offset: int, sets: ByteSets) -> None:
        """``add`` of a buffer traced by ``trace_light``."""
        lr, fr, fw = sets.last_read, sets.first_read, sets.first_write
        n = min(sets.size, buffer.size - offset)
        used = sets.used()[:n]
        phys0, logical0 = buffer.space.base + buffer.addr + offset, buffer.base + offset
        if used.all():  # the common case: ranges, no index arrays
            touched: Array | slice = slice(0, n)
            phys: Bytes = slice(phys0, phys0 + n)
            logical: Bytes = slice(logical0, logical0 + n)
        else:
            touched = np.nonzero(used)[0]
            if touched.size == 0:
                return
            phys, logical = phys0 + touched, logical0 + touched
        lr, fr, fw = (None if a is None else a[touched] for a in (lr, fr, fw))
        self.light.append(_Light(phys, logical, sets.mode, lr, fr, fw, sets.never))

    def add(self, buffer: _Buffer, offset: int, times: ByteTimes) -> None:
        assert times.first_read is not None and times.last_write is not None
        n = min(len(times.last_read), buffer.size - offset)
        used = (times.last_read[:n] >= 0) | (times.first_write[:n] != NEVER)
        if used.all():  # the common case: views, no copies
            touched: Array | slice = slice(0, n)
            start = offset + np.arange(n, dtype=np.int64)
        else:
            touched = np.nonzero(used)[0]
            if touched.size == 0:
                return
            start = offset + touched
        self.entries.append(
            _Entry(
                buffer.space.base + buffer.addr + start,
                buffer.base + start,
                times.first_read[touched],
                times.last_read[touched],
                times.first_write[touched],
                times.last_write[touched],
            )
        )


def _conservative(size: int, writes: bool) -> ByteTimes:
    """Reads every byte (before any write) and, if ``writes``, writes every
    byte, throughout the call."""
    last = NEVER - 1
    return ByteTimes(
        last_read=np.full(size, last, np.int64),
        first_write=np.full(size, 1 if writes else NEVER, np.int64),
        first_read=np.zeros(size, np.int64),
        last_write=np.full(size, last if writes else -1, np.int64),
    )


def _bytes_of(t: MemRefType) -> int:
    element = t.get_element_type()
    size = element.size if isinstance(element, FixedBitwidthType) else 0
    count = 1
    for d in t.get_shape():
        count *= d
    return count * size


def _contiguous(t: MemRefType) -> bool:
    layout = t.layout
    if isinstance(layout, NoneAttr):
        return True
    if not isinstance(layout, StridedLayoutAttr):
        return False
    strides = [s.data if hasattr(s, "data") else s for s in layout.strides.data]  # pyright: ignore
    shape = t.get_shape()
    expected = [s or 0 for s in ShapedType.strides_for_shape(shape)]
    return all(
        a == b or d == 1 for a, b, d in zip(strides, expected, shape, strict=True)
    )


def _constant_index(v: SSAValue) -> int | None:
    op = v.owner
    if isinstance(op, arith.ConstantOp) and isinstance(op.value, IntegerAttr):
        return op.value.value.data
    return None


Refs = dict[SSAValue, "_Ref | _PoolRef"]

_ALIASES = (memref.ReinterpretCastOp, memref.CollapseShapeOp, memref.ExpandShapeOp)
_CALLS = (CallOp, func.CallOp)


def _callee_name(op: Operation) -> str:
    assert isinstance(op, _CALLS)
    return op.callee.string_value()


def _calls_at_top(f: func.FuncOp, calls: Sequence[Operation]) -> bool | None:
    """True if ``f`` calls functions only from its body's top level (a
    straight-line composite the replay walks like main), None if it calls one
    inside a loop or branch, False if it calls none (a kernel to trace).
    ``calls``: its call ops (``ModuleOps.calls``)."""
    if not calls:
        return False
    block = f.body.block
    return True if all(o.parent is block for o in calls) else None


def _is_constant(ref: _Ref | _PoolRef | None) -> bool:
    if isinstance(ref, _PoolRef):
        return ref.space.kind == PoolKind.CONSTANT
    return ref is not None and ref.buffer.role == "constant"


class _Replay:
    def __init__(
        self,
        module: ModuleOp,
        invocations: int,
        ops: ModuleOps | None = None,
        native: bool = True,
    ):
        self.main = find_main(module)
        self.ops = ops or ModuleOps.of(module)
        self.invocations = invocations
        self.functions = {
            op.sym_name.data: op for op in module.ops if isinstance(op, func.FuncOp)
        }
        self.kinds = {p.pool_name.data: p.kind.data for p in module_pools(module)}
        self.violations: list[str] = []
        self.spaces: list[_Space] = []
        self.buffers: list[_Buffer] = []
        self.refs: Refs = {}
        self.scratch: dict[tuple[str, Operation], _Buffer] = {}
        self.traces: dict[tuple[str, frozenset[int]], KernelAccesses | None] = {}
        """Traces of the kernels called more than once (the others are
        dropped after their call: a trace holds four times per byte)."""
        self.light_traces: dict[
            tuple[str, frozenset[int], frozenset[int]], LightAccesses | None
        ] = {}
        self.calls: dict[str, int] = {}
        for called in self.ops.calls.values():
            for op in called:
                name = _callee_name(op)
                self.calls[name] = self.calls.get(name, 0) + 1
        self.written: dict[str, frozenset[int]] = {}
        self.at_top: dict[str, bool | None] = {}
        self.stamps: list[str] = ["the initial value"]
        """What wrote each stamp (stamp 0: ``init``)."""
        self.logical_size = 0
        self.by_base: list[_Buffer] = []
        self.bases: list[int] = []
        self.invocation = 0
        self.steps = [
            o
            for o in self.main.body.block.ops
            if isinstance(o, (*_CALLS, memref.CopyOp))
        ]
        self.logical: Stamps = np.zeros(0, np.int32)
        """Per logical byte, the stamp of its origin (``UNDEFINED``: none)."""
        self.sized = False
        """``logical`` holds every buffer so far (after ``__init__``)."""
        self.halves = sys.byteorder == "little"
        """``check`` compares origins by their halves (``_HALVES``); while
        every logical index is below ``_STAMP`` (``buffer``)."""
        self.state_views: list[tuple[str, str, int]] = []
        self.names: set[str] = set()
        self.native = origins.load() if native else None
        """The C checks and writes (``usmp_trace_origins``), or None: numpy."""
        self._spaces_and_io()
        self.physical: Array = np.full(
            sum(s.size for s in self.spaces if s.kind != PoolKind.CONSTANT),
            POISON,
            np.int64,
        )
        self._resolve_main()
        # sized once main's buffers are known (growing it as they come would
        # hold two copies at once); scratch buffers grow it later
        self.logical = np.full(self.logical_size, UNDEFINED, np.int32)
        self.sized = True

    # -- the two memories -------------------------------------------------------

    def space(self, name: str, kind: str, size: int) -> _Space:
        """A space; a constant pool's bytes are not simulated (they are never
        written: every write to one is reported, no read is checked)."""
        base = sum(s.size for s in self.spaces if s.kind != PoolKind.CONSTANT)
        s = _Space(name, kind, base, size)
        self.spaces.append(s)
        return s

    def buffer(
        self, name: str, role: str, space: _Space, addr: int, size: int
    ) -> _Buffer:
        # distinct names, as the printer makes them (%sid, %sid_1, ...)
        base, n = name, 0
        while name in self.names:
            n += 1
            name = f"{base}_{n}"
        self.names.add(name)
        b = _Buffer(name, role, space, addr, size)
        if role != "constant":
            b.base = self.logical_size
            self.logical_size += size
            if self.logical_size > _STAMP:
                self.halves = False
            if self.sized and self.logical_size > self.logical.size:
                # grown by a quarter (amortised; not two copies of a large one)
                grown = max(self.logical_size, self.logical.size * 5 // 4)
                more = np.full(grown - self.logical.size, UNDEFINED, np.int32)
                self.logical = np.concatenate([self.logical, more])
        self.buffers.append(b)
        return b

    def buffer_at(self, index: int) -> _Buffer:
        """The logical buffer holding logical byte ``index``."""
        if len(self.by_base) != sum(b.base >= 0 for b in self.buffers):
            self.by_base = sorted(
                (b for b in self.buffers if b.base >= 0), key=lambda b: b.base
            )
            self.bases = [b.base for b in self.by_base]
        return self.by_base[bisect_right(self.bases, index) - 1]

    def _spaces_and_io(self) -> None:
        main = self.main
        pools = pool_arguments(main)
        io_args = [a for a in main.args if a not in pools]
        # the inputs and outputs not in the workspace (tir.*_allocations
        # lists those that are, first in name order) are arguments
        external = [
            (role, name)
            for role, names, wheres in (
                ("input", INPUT_NAMES, INPUT_ALLOCATIONS),
                ("output", OUTPUT_NAMES, OUTPUT_ALLOCATIONS),
            )
            for name in string_list(main.attributes.get(names))[
                len(attr_list(main.attributes.get(wheres))) :
            ]
        ]
        for i, arg in enumerate(io_args):
            t = arg.type
            if not isinstance(t, MemRefType):
                continue
            role, name = (
                external[i]
                if i < len(external)
                else ("input", arg.name_hint or f"arg{i}")
            )
            size = _bytes_of(t)  # pyright: ignore[reportUnknownArgumentType]
            space = self.space(name, "external", size)
            self.refs[arg] = _Ref(self.buffer(name, role, space, 0, size), 0, size)
        for arg, name in pools.items():
            t = arg.type
            size = _bytes_of(t) if isinstance(t, MemRefType) else 0  # pyright: ignore
            kind = self.kinds.get(name, PoolKind.WORKSPACE)
            self.refs[arg] = _PoolRef(self.space(name, kind, size))
        # workspace I/O: the first views matching tir.input/output_allocations
        self.io_views: list[tuple[str, str, str, int, Attribute]] = [
            (role, name, where.pool_name.data, where.offset.data, type_)
            for role, names_attr, wheres, types in (
                ("input", INPUT_NAMES, INPUT_ALLOCATIONS, INPUT_TYPES),
                ("output", OUTPUT_NAMES, OUTPUT_ALLOCATIONS, OUTPUT_TYPES),
            )
            for name, where, type_ in zip(
                string_list(main.attributes.get(names_attr)),
                attr_list(main.attributes.get(wheres)),
                attr_list(main.attributes.get(types)),
                strict=False,
            )
            if isinstance(where, PoolAllocationAttr)
        ]
        # states: where tir.states says (whatever the pool's kind)
        for entry in attr_list(main.attributes.get(STATES)):
            if not isinstance(entry, DictionaryAttr):
                continue
            name, pool, offset = (entry.data.get(k) for k in ("name", "pool", "offset"))
            if (
                isinstance(name, StringAttr)
                and isinstance(pool, StringAttr)
                and isinstance(offset, IntegerAttr)
            ):
                self.state_views.append((name.data, pool.data, offset.value.data))

    def _resolve_main(self) -> None:
        """main's buffers: once, they live across runs (states do)."""
        for op in self.main.body.block.ops:
            if isinstance(op, memref.ViewOp):
                ref = self.view(op, self.refs, None)
                if ref is not None:
                    self.refs[op.result] = ref
            elif isinstance(op, _ALIASES):
                self.alias(op, self.refs)
            elif isinstance(op, (memref.AllocOp, memref.AllocaOp)):
                self.allocation(op)
            elif isinstance(op, (*_CALLS, memref.CopyOp, func.ReturnOp)):
                continue
            elif any(isinstance(r.type, MemRefType) for r in op.results):
                self.violations.append(
                    f"cannot replay '{op.name}' in the entry function (only views "
                    "of pools and aliases of them make buffers)"
                )

    def allocation(self, op: memref.AllocOp | memref.AllocaOp) -> None:
        """A buffer the plan leaves alone (heap or stack): memory of its own.
        A dynamic size must be a constant to be replayed."""
        t = op.memref.type
        assert isinstance(t, MemRefType)
        sizes = iter(_constant_index(v) for v in op.dynamic_sizes)
        shape = [next(sizes) if d == DYNAMIC_INDEX else d for d in t.get_shape()]
        known = [d for d in shape if d is not None]
        if len(known) != len(shape):
            return  # a use of it is reported as an unknown buffer
        element = t.get_element_type()
        width = element.size if isinstance(element, FixedBitwidthType) else 0
        size = width * math.prod(known)
        name = op.memref.name_hint or op.name
        space = self.space(name, "external", size)
        self.refs[op.memref] = _Ref(
            self.buffer(name, "buffer", space, 0, size), 0, size
        )

    def view(
        self, op: memref.ViewOp, refs: Refs, owner: func.FuncOp | None
    ) -> _Ref | None:
        """A static view of a pool: a buffer of main (``owner`` None) or a
        scratch buffer of ``owner``, fresh at each call."""
        source = refs.get(op.source)
        shift = _constant_index(op.byte_shift)
        t = op.result.type
        name = op.result.name_hint or f"view@{shift}"
        if not isinstance(source, _PoolRef) or shift is None or op.sizes:
            self.violations.append(
                f"cannot replay view '{name}': not a static view of a pool argument"
            )
            return None
        assert isinstance(t, MemRefType)
        space = source.space
        size = _bytes_of(t)  # pyright: ignore[reportUnknownArgumentType]
        roles: dict[str, str] = {
            PoolKind.CONSTANT: "constant",
            PoolKind.PERSISTENT: "state",
        }
        role = roles.get(space.kind, "buffer")
        if owner is not None:
            if role == "state":
                self.violations.append(
                    f"cannot replay view '{name}' of pool '{space.name}' inside "
                    f"'{owner.sym_name.data}' (states belong to the entry function)"
                )
                return None
            key = (owner.sym_name.data, op)
            if key not in self.scratch:
                hint = f"{owner.sym_name.data}/{name}"
                role = "scratch" if role == "buffer" else role
                self.scratch[key] = self.buffer(hint, role, space, shift, size)
            b = self.scratch[key]
            if b.base >= 0:
                self.logical[b.base : b.base + b.size] = UNDEFINED
            return _Ref(b, 0, size)
        for i, (io_role, io_name, pool, offset, type_) in enumerate(self.io_views):
            if pool == space.name and offset == shift and type_ == t:
                role, name = io_role, io_name
                del self.io_views[i]
                break
        else:
            for i, (state, pool, offset) in enumerate(self.state_views):
                if pool == space.name and offset == shift:
                    role, name = "state", state
                    del self.state_views[i]
                    break
        return _Ref(self.buffer(name, role, space, shift, size), 0, size)

    def alias(self, op: Operation, refs: Refs) -> None:
        """A reshape or an offset view of a buffer: its bytes at an offset."""
        source = refs.get(op.operands[0])
        t = op.results[0].type
        name = op.results[0].name_hint or op.name
        if not isinstance(source, _Ref) or not isinstance(t, MemRefType):
            self.violations.append(f"cannot replay '{name}': not an alias of a buffer")
            return
        offset = source.offset
        if isinstance(op, memref.ReinterpretCastOp):
            offsets = op.static_offsets
            element = t.get_element_type()
            if op.offsets or not isinstance(offsets, DenseArrayBase):
                self.violations.append(f"cannot replay the dynamic cast '{name}'")
                return
            width = element.size if isinstance(element, FixedBitwidthType) else 0
            # the offset counts from the start of the allocation
            offset = int(offsets.get_values()[0]) * width  # pyright: ignore
        if not _contiguous(t):  # pyright: ignore[reportUnknownArgumentType]
            self.violations.append(
                f"cannot replay the non-contiguous alias '{name}' of "
                f"{source.buffer.describe()}"
            )
            return
        size = _bytes_of(t)  # pyright: ignore[reportUnknownArgumentType]
        refs[op.results[0]] = _Ref(source.buffer, offset, size)

    # -- steps --------------------------------------------------------------------

    def call(self, op: Operation, refs: Refs, where: str) -> None:
        """Replay one call: a kernel from its trace, or an operator that calls
        operators by walking its body like main's."""
        name = _callee_name(op)
        where = f"{where}'{name}'"
        callee = self.functions.get(name)
        if callee is None:
            self.violations.append(f"{where}: the callee is not in the module")
            return
        if callee.body.blocks and self.calls_at_top(callee):
            local: Refs = {}
            for param, v in zip(callee.args, op.operands, strict=True):
                if v in refs:
                    local[param] = refs[v]
            self.walk(callee, local, f"{where} -> ")
            return
        light = self.light_records(op, callee, refs)
        if light is not None and self.run_light(light, where):
            return
        self.run_step(self.call_records(op, callee, refs, where), where)

    def step(self, op: Operation, refs: Refs, where: str) -> None:
        if isinstance(op, memref.CopyOp):
            where += "memref.copy"
            self.run_step(self.copy_records(op, refs, where), where)
        else:
            self.call(op, refs, where)

    def walk(self, f: func.FuncOp, refs: Refs, where: str) -> None:
        """The straight-line body of an operator that calls operators."""
        for o in f.body.block.ops:
            if isinstance(o, memref.ViewOp):
                ref = self.view(o, refs, f)
                if ref is not None:
                    refs[o.result] = ref
            elif isinstance(o, _ALIASES):
                self.alias(o, refs)
            elif isinstance(o, (*_CALLS, memref.CopyOp)):
                self.step(o, refs, where)
            elif isinstance(o, (arith.ConstantOp, func.ReturnOp)):
                continue
            else:
                self.violations.append(
                    f"{where}'{f.sym_name.data}': cannot replay '{o.name}' beside its "
                    "calls"
                )

    def calls_at_top(self, f: func.FuncOp) -> bool | None:
        """``_calls_at_top(f)``, once per function (the replay does not
        change the module)."""
        name = f.sym_name.data
        if name not in self.at_top:
            self.at_top[name] = _calls_at_top(f, self.ops.calls.get(name, ()))
        return self.at_top[name]

    def written_of(self, f: func.FuncOp) -> frozenset[int]:
        """The arguments ``f`` may write (all, for a declaration), once."""
        name = f.sym_name.data
        if name not in self.written:
            self.written[name] = (
                written_arguments(f)
                if f.body.blocks
                else frozenset(range(len(f.function_type.inputs)))
            )
        return self.written[name]

    def trace(self, f: func.FuncOp, args: frozenset[int]) -> KernelAccesses | None:
        """The accesses of ``f`` to the arguments ``args`` (constants are
        not traced: nothing may write them, which ``written`` checks)."""
        name = f.sym_name.data
        self.written_of(f)
        key = (name, args)
        if key in self.traces:
            return self.traces[key]
        traced = None if self.calls_at_top(f) is None else trace_all(f, args)
        if self.calls.get(name, 0) * self.invocations > 1:  # for its other calls
            self.traces[key] = traced
        return traced

    def light_trace(
        self, f: func.FuncOp, args: frozenset[int], exact: frozenset[int]
    ) -> LightAccesses | None:
        """``trace_light`` of ``f`` (cached like ``trace``)."""
        name = f.sym_name.data
        key = (name, args, exact)
        if key in self.light_traces:
            return self.light_traces[key]
        traced = None if self.calls_at_top(f) is None else trace_light(f, args, exact)
        if self.calls.get(name, 0) * self.invocations > 1:
            self.light_traces[key] = traced
        return traced

    def light_records(
        self, op: Operation, callee: func.FuncOp, refs: Refs
    ) -> _Records | None:
        """``call_records`` from ``trace_light``, with exact times for the
        arguments whose addresses meet another argument's; None where
        ``call_records`` would report something (it then does)."""
        if not callee.body.blocks:
            return None
        spans: dict[int, tuple[int, int]] = {}
        traced: set[int] = set()
        for j, v in enumerate(op.operands):
            if not isinstance(v.type, MemRefType):
                continue
            ref = refs.get(v)
            if ref is None:
                return None
            if _is_constant(ref):
                continue
            traced.add(j)
            if isinstance(ref, _PoolRef):
                spans[j] = (ref.space.base, ref.space.base + ref.space.size)
            else:
                lo = ref.buffer.space.base + ref.buffer.addr + ref.offset
                spans[j] = (lo, lo + ref.size)
        exact = frozenset(
            j
            for j, (lo, hi) in spans.items()
            if any(k != j and a < hi and lo < b for k, (a, b) in spans.items())
        )
        acc = self.light_trace(callee, frozenset(traced), exact)
        if acc is None:
            return None
        written = self.written_of(callee)
        records = _Records()
        for j, v in enumerate(op.operands):
            if not isinstance(v.type, MemRefType):
                continue
            ref = refs.get(v)
            if isinstance(ref, _PoolRef):
                if ref.space.kind == PoolKind.CONSTANT:
                    if j in written:
                        return None
                elif j in acc.unfollowed or j in acc.sets:
                    return None
                continue
            assert ref is not None
            if ref.buffer.role == "constant":
                if j in written:
                    return None
                continue
            if j in acc.unfollowed:
                size = _bytes_of(v.type)  # pyright: ignore[reportUnknownArgumentType]
                records.add(ref.buffer, ref.offset, _conservative(size, j in written))
            elif j in acc.sets:
                records.add_light(ref.buffer, ref.offset, acc.sets[j])
        for key, view in acc.pool_views.items():
            pool = refs.get(op.operands[view.arg])
            if not isinstance(pool, _PoolRef):
                continue
            ref = self.view(view.op, {view.op.operands[0]: pool}, callee)  # pyright: ignore
            if ref is None:
                return None
            if key in acc.unfollowed:
                records.add(ref.buffer, 0, _conservative(view.size, True))
            elif key in acc.sets:
                records.add_light(ref.buffer, 0, acc.sets[key])
        return records

    def run_light(self, records: _Records, where: str) -> bool:
        """``run_step`` of light records, if their bytes prove the order:
        where entries meet, each is only read or only written, no two
        written ones meet, no logical byte is passed twice, and every byte
        read by one and written by another is last read before it is first
        written; and no check fails. Then every read is checked before any
        write (the order of the meeting bytes) and True; else nothing is
        done and False (``run_step`` on the exact times decides)."""
        light, exact = records.light, records.entries
        spans = [e.span for e in light] + [e.span for e in exact]
        if not spans:
            return True
        meets = _meeting(spans)
        if any(meets[len(light) :]):
            return False  # a conservative record meets another: exact path
        shared = [e for k, e in enumerate(light) if meets[k]]
        if shared and not self.ordered(shared):
            return False
        before = len(self.violations)
        for e in light:
            pre = e.checked()
            if pre is None:
                self.check(e.logical, e.phys, f"{where} reads")
            elif pre.any():
                self.check(e.logical, e.phys, f"{where} reads", pre)
        for x in exact:
            pre = (x.first_read != NEVER) & (x.first_read < x.first_write)
            self.check(x.logical[pre], x.phys[pre], f"{where} reads")
        if len(self.violations) > before:
            del self.violations[before:]
            return False  # reported by the exact path, as it orders them
        stamp = self.new_stamp(where)
        for e in light:
            w = e.written()
            if w is None:
                self.write(e.logical, e.phys, stamp)
            elif w.any():
                self.write(e.logical, e.phys, stamp, w)
        for x in exact:
            w = x.first_write != NEVER
            self.write(x.logical[w], x.phys[w], stamp)
        return True

    @staticmethod
    def ordered(entries: list[_Light]) -> bool:
        """Whether the meeting ``entries`` of one call may be replayed
        reads first (see ``run_light``)."""
        if any(e.mode == "rw" for e in entries):
            return False
        if not _disjoint([(_first(e.logical), _last(e.logical)) for e in entries]):
            return False
        writers = [e for e in entries if e.mode == "w"]
        if not _disjoint([(lo, hi - 1) for lo, hi in (e.span for e in writers)]):
            return False
        for w in writers:
            wlo, whi = w.span
            if w.first_write is None:
                return False  # (asked for where arguments meet)
            for r in entries:
                rlo, rhi = r.span
                if r.mode != "r" or rhi <= wlo or whi <= rlo:
                    continue
                if r.last_read is None:
                    return False
                if r.size == rhi - rlo and w.size == whi - wlo:
                    lo, hi = max(rlo, wlo), min(rhi, whi)
                    last = r.last_read[lo - rlo : hi - rlo]
                    first = w.first_write[lo - wlo : hi - wlo]
                else:
                    _, i, k = np.intersect1d(
                        _values(r.phys),
                        _values(w.phys),
                        assume_unique=True,
                        return_indices=True,
                    )
                    last, first = r.last_read[i], w.first_write[k]
                if not (last < first).all():
                    return False
        return True

    def call_records(
        self, op: Operation, callee: func.FuncOp, refs: Refs, where: str
    ) -> _Records:
        traced = frozenset(
            j
            for j, v in enumerate(op.operands)
            if isinstance(v.type, MemRefType) and not _is_constant(refs.get(v))
        )
        acc = self.trace(callee, traced)
        written = self.written[callee.sym_name.data]
        records = _Records()
        for j, v in enumerate(op.operands):
            if not isinstance(v.type, MemRefType):
                continue
            ref = refs.get(v)
            if ref is None:
                self.violations.append(f"{where}: argument #{j} is not a known buffer")
                continue
            if isinstance(ref, _PoolRef):
                if ref.space.kind == PoolKind.CONSTANT:
                    if j in written:
                        self.violations.append(
                            f"{where}: writes constant pool '{ref.space.name}'"
                        )
                elif acc is None:  # every static view of it: scratch, untraced
                    self.untraced_views(callee, j, ref, records, where)
                elif j in acc.unfollowed or j in acc.times:
                    self.violations.append(
                        f"{where}: cannot follow how the operator uses pool "
                        f"'{ref.space.name}' (only static views of it can be replayed)"
                    )
                continue
            if ref.buffer.role == "constant":
                if j in written:
                    self.violations.append(f"{where}: writes {ref.buffer.describe()}")
                continue
            if acc is None or j in acc.unfollowed:
                size = _bytes_of(v.type)  # pyright: ignore[reportUnknownArgumentType]
                records.add(ref.buffer, ref.offset, _conservative(size, j in written))
            elif j in acc.times:
                records.add(ref.buffer, ref.offset, acc.times[j])
        for key, view in (acc.pool_views if acc is not None else {}).items():
            assert acc is not None
            pool = refs.get(op.operands[view.arg])
            if not isinstance(pool, _PoolRef):
                continue
            ref = self.view(view.op, {view.op.operands[0]: pool}, callee)  # pyright: ignore
            if ref is None:
                continue
            if key in acc.unfollowed:
                records.add(ref.buffer, 0, _conservative(view.size, True))
            elif key in acc.times:
                records.add(ref.buffer, 0, acc.times[key])
        return records

    def untraced_views(
        self, f: func.FuncOp, j: int, pool: _PoolRef, records: _Records, where: str
    ) -> None:
        """A kernel the tracer cannot follow: each static view of its pool
        argument ``j`` is scratch it reads and writes throughout the call."""
        if not f.body.blocks:
            self.violations.append(
                f"{where}: the declaration takes pool '{pool.space.name}' (its "
                "accesses to it cannot be replayed)"
            )
            return
        arg = f.args[j]
        for use in arg.uses:
            o = use.operation
            ref = self.view(o, {arg: pool}, f) if isinstance(o, memref.ViewOp) else None
            if ref is None:
                self.violations.append(
                    f"{where}: cannot follow how the operator uses pool "
                    f"'{pool.space.name}' (only static views of it can be replayed)"
                )
                return
            records.add(ref.buffer, 0, _conservative(ref.size, True))

    def copy_records(self, op: memref.CopyOp, refs: Refs, where: str) -> _Records:
        records = _Records()
        src, dst = refs.get(op.source), refs.get(op.destination)
        if not isinstance(src, _Ref) or not isinstance(dst, _Ref):
            self.violations.append(f"{where}: not between buffers")
            return records
        a = src.buffer.space.base + src.buffer.addr + src.offset
        b = dst.buffer.space.base + dst.buffer.addr + dst.offset
        if src.buffer is not dst.buffer and a < b + dst.size and b < a + src.size:
            self.violations.append(
                f"{where}: {src.buffer.describe()} and "
                f"{dst.buffer.describe()} share bytes (memcpy of overlapping bytes)"
            )
        if src.buffer.role != "constant":
            n = src.size
            never, zero, minus = (np.full(n, x, np.int64) for x in (NEVER, 0, -1))
            records.add(src.buffer, src.offset, ByteTimes(zero, never, zero, minus))
        if dst.buffer.role == "constant":
            self.violations.append(
                f"{where}memref.copy: writes {dst.buffer.describe()}"
            )
            return records
        n = dst.size
        one, never, minus = (np.full(n, x, np.int64) for x in (1, NEVER, -1))
        records.add(dst.buffer, dst.offset, ByteTimes(minus, one, never, one))
        return records

    # -- replaying ------------------------------------------------------------------

    def new_stamp(self, what: str) -> int:
        run = f" in run {self.invocation + 1}"
        self.stamps.append(what + run)
        return len(self.stamps) - 1

    def origin_text(self, origin: int) -> str:
        if origin == POISON:
            return "bytes from before the run (not written in it)"
        stamp, index = divmod(origin, _STAMP)
        writer = self.buffer_at(index).describe()
        if stamp == 0:
            return f"the initial value of {writer}"
        return f"{writer} written by {self.stamps[stamp]}"

    def write(
        self,
        logical: Bytes,
        phys: Bytes,
        stamp: int,
        mask: npt.NDArray[np.bool_] | None = None,
    ) -> None:
        """Record that ``stamp`` wrote the bytes (those ``mask`` picks, if
        given): in C where it is built (``usmp_trace_origins``), else numpy."""
        if self.native is not None and origins.write(
            self.native, self.logical, self.physical, logical, phys, stamp, mask
        ):
            return
        if mask is not None:
            logical, phys = _pick(logical, mask), _pick(phys, mask)
        self.logical[logical] = stamp
        self.physical[phys] = _values(logical, stamp * _STAMP)

    def check(
        self,
        logical: Bytes,
        phys: Bytes,
        when: str,
        mask: npt.NDArray[np.bool_] | None = None,
    ) -> None:
        """Report the bytes (those ``mask`` picks, if given) whose physical
        origin is not their logical one (``when`` says who reads them). The
        C side (``usmp_trace_origins``) passes those that hold; the numpy
        path decides the others, and words the report."""
        if self.native is not None and origins.check(
            self.native, self.logical, self.physical, logical, phys, mask
        ):
            return
        if mask is not None:
            logical, phys = _pick(logical, mask), _pick(phys, mask)
        stamps = self.logical[logical]
        actual = self.physical[phys]
        if self.halves:
            # the origin's halves compared apart: no 64-bit expected origins
            # built (stamps >= 0 and indices < _STAMP: the same verdict)
            halves = actual.view(_HALVES)
            mismatch = halves["stamp"] != stamps
            mismatch |= halves["index"] != _values(logical, dtype=np.uint32)
        else:
            # (in place: one temporary the size of the bytes, not three)
            expected = stamps.astype(np.int64)
            expected *= _STAMP
            expected += _values(logical)
            mismatch = expected != actual
            del expected
        mismatch &= stamps != UNDEFINED
        bad = np.flatnonzero(mismatch)
        if not bad.size:
            return
        indices = _values(logical)
        found: dict[tuple[int, int, int], list[int]] = {}
        for i in bad[:4096].tolist():
            origin = int(actual[i])
            stamp, index = divmod(origin, _STAMP) if origin >= 0 else (origin, 0)
            writer = self.buffer_at(index).base if origin >= 0 else -1
            key = (self.buffer_at(int(indices[i])).base, stamp, writer)
            found.setdefault(key, []).append(i)
        for key, items in found.items():
            b = self.buffer_at(key[0])
            offsets = [int(indices[i]) - b.base for i in items]
            self.violations.append(
                f"{when} {b.describe()} byte(s) {_ranges(offsets)}, which hold "
                f"{self.origin_text(int(actual[items[0]]))} instead"
            )

    def run_step(self, records: _Records, where: str) -> None:
        """One call: every touched byte checked and written, in the kernel's
        order where buffers meet. Entries whose addresses meet no other
        entry's are replayed alone (their order does not matter)."""
        entries = records.entries
        if not entries:
            return
        stamp = self.new_stamp(where)
        meets = _meeting([e.span for e in entries])
        for k, e in enumerate(entries):
            if not meets[k]:
                pre = (e.first_read != NEVER) & (e.first_read < e.first_write)
                self.check(e.logical[pre], e.phys[pre], f"{where} reads")
                w = e.first_write != NEVER
                self.write(e.logical[w], e.phys[w], stamp)
        shared = [e for k, e in enumerate(entries) if meets[k]]
        if shared:
            self.run_shared(shared, where, stamp)

    def run_shared(self, entries: list[_Entry], where: str, stamp: int) -> None:
        """Entries whose addresses meet: per byte, one after the other, in
        windows of ``SHARED_WINDOW`` physical addresses (a byte's accesses
        are all in its address's window; the arrays of one window at a time
        keep the memory small beside large buffers)."""
        done = [0] * len(entries)  # per entry: bytes replayed
        while True:
            left = [k for k, e in enumerate(entries) if done[k] < e.phys.size]
            if not left:
                return
            lo = min(int(entries[k].phys[done[k]]) for k in left)
            parts: list[_Entry] = []
            for k in left:
                e = entries[k]
                a = done[k]
                b = int(np.searchsorted(e.phys, lo + SHARED_WINDOW))
                if b > a:
                    parts.append(
                        _Entry(
                            e.phys[a:b],
                            e.logical[a:b],
                            e.first_read[a:b],
                            e.last_read[a:b],
                            e.first_write[a:b],
                            e.last_write[a:b],
                        )
                    )
                    done[k] = b
            self.run_window(parts, where, stamp)

    def run_window(self, entries: list[_Entry], where: str, stamp: int) -> None:
        """``run_shared`` on the bytes of one window."""
        cat = np.concatenate
        phys, logical = (
            cat([e.phys for e in entries]),
            cat([e.logical for e in entries]),
        )
        fr = cat([e.first_read for e in entries])
        lr = cat([e.last_read for e in entries])
        fw = cat([e.first_write for e in entries])
        lw = cat([e.last_write for e in entries])
        # one logical byte passed twice (two arguments, or a buffer and its
        # alias): one record with the union of its accesses (each entry's
        # logical bytes ascend: none is passed twice where the entries'
        # ranges are disjoint, the common case, and no sort is needed)
        ranges = [(int(e.logical[0]), int(e.logical[-1])) for e in entries]
        unique, inverse = (
            (logical, None)
            if _disjoint(ranges)
            else np.unique(logical, return_inverse=True)
        )
        if inverse is not None and unique.size != logical.size:
            merged = np.zeros(unique.size, np.int64)
            merged[inverse] = phys
            union = [np.full(unique.size, x, np.int64) for x in (NEVER, -1, NEVER, -1)]
            for f, acc, a in zip(
                (np.minimum, np.maximum, np.minimum, np.maximum),
                union,
                (fr, lr, fw, lw),
                strict=True,
            ):
                f.at(acc, inverse, a)
            phys, logical, (fr, lr, fw, lw) = merged, unique, union
        start, end = np.minimum(fr, fw), np.maximum(lr, lw)
        order = np.lexsort((start, phys))
        phys, logical, fr, fw = phys[order], logical[order], fr[order], fw[order]
        start, end = start[order], end[order]
        reads, writes = fr != NEVER, fw != NEVER
        head = np.ones(phys.size, np.bool_)
        head[1:] = phys[1:] != phys[:-1]
        group = np.cumsum(head) - 1
        rank = np.arange(phys.size) - np.nonzero(head)[0][group]
        written = np.zeros(int(group[-1]) + 1, np.bool_)
        written[group[writes]] = True
        latest = np.full(written.size, -1, np.int64)
        for r in range(int(rank.max()) + 1):
            sel = np.nonzero(rank == r)[0]
            g = group[sel]
            # buffers meeting at a written byte: one after the other
            for i in sel[written[g] & (start[sel] <= latest[g])][:3].tolist():
                names = sorted(
                    {
                        self.buffer_at(int(k)).describe()
                        for k in logical[group == group[i]]
                    }
                )
                self.violations.append(
                    f"{where}: the operator's accesses to {' and '.join(names)} "
                    "interleave at a byte they share (one is written before the "
                    "other's last access)"
                )
            latest[g] = np.maximum(latest[g], end[sel])
            pre = sel[reads[sel] & (fr[sel] < fw[sel])]
            self.check(logical[pre], phys[pre], f"{where} reads")
            w = sel[writes[sel]]
            self.write(logical[w], phys[w], stamp)

    def run(self) -> list[str]:
        for invocation in range(self.invocations if not self.violations else 0):
            self.invocation = invocation
            self.begin()
            for step, op in enumerate(self.steps):
                what = _callee_name(op) if isinstance(op, _CALLS) else "memref.copy"
                report("replay", step + 1, len(self.steps), what)
                self.step(op, self.refs, f"step {step} ")
            self.end()
            if self.violations:
                break
        return self.violations

    def _range(self, b: _Buffer) -> tuple[Bytes, Bytes]:
        phys = b.space.base + b.addr
        return slice(b.base, b.base + b.size), slice(phys, phys + b.size)

    def begin(self) -> None:
        """The caller, before a run: workspace and output buffers hold
        poison, inputs fresh values; states keep theirs."""
        for s in self.spaces:
            if s.kind in (PoolKind.WORKSPACE, "external"):
                self.physical[s.base : s.base + s.size] = POISON
        caller = self.new_stamp("the caller before the run")
        for b in self.buffers:
            if b.base < 0 or b.role == "scratch":
                continue
            logical, phys = self._range(b)
            if b.role == "state":
                if self.invocation == 0:
                    self.write(logical, phys, 0)
            elif b.role == "input":
                self.write(logical, phys, caller)
            else:
                self.logical[logical] = UNDEFINED

    def end(self) -> None:
        """The caller reads every output; then, before the next run, the
        workspace holds poison and the caller writes the inputs: every state
        must still hold its value."""
        n = self.invocation + 1
        for b in self.buffers:
            if b.role == "output":
                logical, phys = self._range(b)
                self.check(logical, phys, f"the caller reads, when run {n} ends,")
        self.invocation += 1
        self.begin()
        for b in self.buffers:
            if b.role == "state":
                logical, phys = self._range(b)
                self.check(logical, phys, f"run {n + 1} reads")
        self.invocation -= 1


def _values(x: Bytes, plus: int = 0, dtype: type = np.int64) -> Array:
    """The indices a range or an index array stands for (each ``+ plus``:
    a new array then); a range's as ``dtype``."""
    if isinstance(x, slice):
        return np.arange(x.start + plus, x.stop + plus, dtype=dtype)
    return x + plus if plus else x


def _pick(x: Bytes, mask: npt.NDArray[np.bool_]) -> Array:
    """``_values(x)[mask]`` without the indices of the bytes not picked."""
    if isinstance(x, slice):
        picked = np.flatnonzero(mask)
        picked += x.start
        return picked
    return x[mask]


def _first(x: Bytes) -> int:
    return x.start if isinstance(x, slice) else int(x[0])


def _last(x: Bytes) -> int:
    return x.stop - 1 if isinstance(x, slice) else int(x[-1])


def _size(x: Bytes) -> int:
    return x.stop - x.start if isinstance(x, slice) else x.size


def _meeting(spans: list[tuple[int, int]]) -> list[bool]:
    """Per address range ``[lo, hi)``: whether it is in a cluster of ranges
    that meet (overlap one another, transitively)."""
    meets = [False] * len(spans)
    cluster: list[int] = []
    reach = -1
    for (lo, hi), k in sorted((s, k) for k, s in enumerate(spans)):
        if lo >= reach:
            cluster = []
        cluster.append(k)
        if len(cluster) > 1:
            for c in cluster:
                meets[c] = True
        reach = max(reach, hi)
    return meets


def _disjoint(ranges: list[tuple[int, int]]) -> bool:
    """Whether no two closed ranges ``(lo, hi)`` share a value."""
    ordered = sorted(ranges)
    return all(a[1] < b[0] for a, b in itertools.pairwise(ordered))


def _ranges(offsets: list[int]) -> str:
    """``0-3, 8`` for a sorted list of offsets (at most 4 runs shown)."""
    runs: list[tuple[int, int]] = []
    for o in sorted(set(offsets)):
        if runs and runs[-1][1] == o - 1:
            runs[-1] = (runs[-1][0], o)
        else:
            runs.append((o, o))
    text = [f"{a}-{b}" if a != b else str(a) for a, b in runs[:4]]
    return ", ".join(text) + (", ..." if len(runs) > 4 else "")


def replay_violations(
    module: ModuleOp,
    invocations: int = 1,
    ops: ModuleOps | None = None,
    native: bool = True,
) -> list[str]:
    """Every byte a planned (rewritten) module reads that does not hold the
    value it would hold with every buffer in memory of its own (see module
    doc); empty if the plan is safe. ``ops``: ``ModuleOps.of(module)`` if
    the caller has it; ``native=False``: the origins checked and written in
    numpy only (``usmp_trace_origins``; the same verdicts)."""
    return _Replay(module, invocations, ops, native).run()


@dataclass(frozen=True)
class UsmpReplayPass(TypedOptions):
    """Replay the planned program byte by byte (see module doc)."""

    name = "usmp-replay"

    invocations: int = 1
    """Runs of the entry function to replay (states carry over)."""

    def __post_init__(self) -> None:
        if not 1 <= self.invocations <= MAX_INVOCATIONS:
            raise ValueError(
                f"usmp-replay: invocations must be 1 to {MAX_INVOCATIONS} (one "
                f"run is enough, see the pass's note), not {self.invocations}"
            )

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        ops = ModuleOps.of(op)  # of the rewritten module: the replay's own
        leftover = next(
            (
                o
                for o in ops.allocations
                # (one in a parallel loop is per thread: not in any pool)
                if not (isinstance(o, AllocateOp) and in_parallel_loop(o))
            ),
            None,
        )
        if leftover is not None:
            raise located_error(
                leftover,
                "usmp-replay needs a planned and rewritten module, where every "
                "buffer is a view of a pool (run usmp first)",
            )
        violations = replay_violations(op, self.invocations, ops)
        if violations:
            more = len(violations) - _MAX_REPORTED
            text = "; ".join(violations[:_MAX_REPORTED])
            if more > 0:
                text += f"; and {more} more"
            raise located_error(
                find_main(op), f"usmp-replay: the memory plan is unsafe: {text}"
            )
