"""The whole-plan replay (``usmp-replay``) and the miscompile it was built
after: a model output read by a later operator must survive to the end of
the run, with I/O in the workspace and overlaps on."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation

import usmp
from usmp.dialects import new_context
from usmp.dialects.tir import CallOp
from usmp.parsing import LocatingParser
from usmp.passes import usmp_replay
from usmp.passes.usmp_analysis import analyze
from usmp.passes.usmp_kernel_trace import NEVER
from usmp.passes.usmp_overlap import overlap_violations
from usmp.passes.usmp_pools import resolve_pools
from usmp.passes.usmp_replay import Array, replay_violations
from usmp.planning.model import Placement
from usmp.testing.fuzz_graphs import Case, PoolDraw
from usmp.testing.fuzz_run import run_batch
from usmp.testing.run_c import run_pipeline

OUTPUT_READ_AGAIN = """
func.func @main(%x: tensor<1x4xf32>) -> (tensor<1x4xf32>, tensor<1x4xf32>) {
  %a = relay.relu %x : tensor<1x4xf32> -> tensor<1x4xf32>
  %b = relay.tanh %a : tensor<1x4xf32> -> tensor<1x4xf32>
  func.return %a, %b : tensor<1x4xf32>, tensor<1x4xf32>
}
"""
"""Output 0 came back as tanh(relu x): the overlap analysis took 'a' as
dying at the tanh (its last read in main) and placed 'b' on it."""


@pytest.mark.parametrize("io", [True, False])
def test_an_output_read_again_keeps_its_value(tmp_path: Path, io: bool) -> None:
    source = tmp_path / "m.mlir"
    source.write_text(OUTPUT_READ_AGAIN)
    lib = usmp.compile(source, output_dir=tmp_path / "out", use_workspace_io=io)
    x = np.array([[-1.0, 0.5, 2.0, -3.0]], np.float32)
    a, b = lib.run([x])
    np.testing.assert_array_equal(a, np.maximum(x, 0))
    np.testing.assert_allclose(b, np.tanh(np.maximum(x, 0)), rtol=1e-6)
    # both outputs and the input (dead after the relu) fit in 32 B, not 16
    assert lib.plan.workspace_bytes == (32 if io else 0)


def test_pairwise_check_rejects_an_output_as_the_dying_input() -> None:
    """The pairwise overlap check (usmp-plan-memory's) no longer takes an
    output read at the last step as dying there."""
    module = LocatingParser(new_context(), OUTPUT_READ_AGAIN, "m.mlir").parse_module()
    module = run_pipeline(module, "fuse-ops,lower-ops,aot-lower-main")
    analysis = analyze(module, resolve_pools(module, ""), True)
    assert analysis.functions is not None
    assert [b.name for b in analysis.buffers] == ["x", "output0", "output1"]
    where = {
        "x": Placement("global_workspace", 16),
        "output0": Placement("global_workspace", 0),
        "output1": Placement("global_workspace", 0),
    }
    problems = overlap_violations(analysis, analysis.functions, where)
    assert problems and "'output0' and 'output1' share bytes" in problems[0]


def _kws_planned() -> ModuleOp:
    """KWS planned with overlaps on and I/O in the workspace (its kernels'
    buffers meet), not replayed."""
    from usmp.frontend.tflite_import import import_tflite
    from usmp.testing.shared_models import MODELS_DIR

    module = import_tflite(MODELS_DIR / "mlperf_tiny" / "kws_ref_model.tflite")
    return run_pipeline(
        module,
        "plan-devices,fold-explicit-padding,fuse-ops,lower-ops,aot-lower-main,"
        "usmp{use_workspace_io=true replay=false}",
    )


@pytest.mark.parametrize("window", [None, 7])
def test_replay_of_a_real_plan_then_of_it_broken(
    window: int | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The replay passes KWS's plan (overlaps on, I/O in the workspace) and
    rejects it once the output is moved onto the buffer the last operator
    reads; the same in windows of 7 addresses where buffers meet (as large
    buffers are replayed)."""
    if window is not None:
        monkeypatch.setattr(usmp_replay, "SHARED_WINDOW", window)
    module = _kws_planned()
    assert replay_violations(module) == []
    from xdsl.dialects import memref

    from usmp.passes.usmp_ir import find_main

    # the fully connected layer's output onto its input, which it reads
    # once per output unit: its first output byte overwrites input byte 0
    dense = [o for o in find_main(module).walk() if isinstance(o, CallOp)][-2]
    reshape = dense.operands[0].owner
    assert isinstance(reshape, Operation)
    source = reshape.operands[0].owner  # a reshape of a view
    target = dense.operands[-1].owner
    assert isinstance(source, memref.ViewOp) and isinstance(target, memref.ViewOp)
    target.operands[1] = source.byte_shift
    violations = replay_violations(module)
    assert violations
    assert "step 10 'tvmgen_default_fused_nn_dense" in violations[0], violations
    assert "accesses to buffer 'sid_10' and buffer 'sid_9' interleave" in violations[0]


def test_replay_in_windows_writes_and_checks_the_same_bytes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Replaying where buffers meet in windows of a few addresses writes and
    checks the same bytes (with the same origins) and leaves both memories as
    replaying them whole does, on KWS's plan (overlaps on, I/O in the
    workspace: its kernels' buffers meet)."""
    module = _kws_planned()
    whole = _replay_events(module, monkeypatch, usmp_replay.SHARED_WINDOW)
    windowed = _replay_events(module, monkeypatch, 5)
    assert windowed[0].shape[1] > 10_000  # the kernels' buffers meet
    for a, b in zip(whole, windowed, strict=True):
        np.testing.assert_array_equal(a, b)


def test_the_light_path_replays_as_the_exact_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """On KWS's plan (overlaps on, I/O in the workspace: its kernels'
    buffers meet), replaying each call from ``trace_light`` (reads checked
    before writes where the bytes prove that order) writes and checks the
    same bytes and leaves the same memories as the exact, per-byte ordered
    replay; and it decides the calls whose buffers meet (none is left to the
    exact path)."""
    module = _kws_planned()
    exact = _replay_events(module, monkeypatch, usmp_replay.SHARED_WINDOW)
    proved: list[bool] = []
    ordered = Replay.ordered

    def logged(entries: list[usmp_replay._Light]) -> bool:  # pyright: ignore[reportPrivateUsage]
        proved.append(ordered(entries))
        return proved[-1]

    with monkeypatch.context() as m:
        m.setattr(Replay, "ordered", staticmethod(logged))
        m.setattr(Replay, "run_step", None)  # the exact path is not taken
        light = _replay_events(module, monkeypatch, usmp_replay.SHARED_WINDOW, True)
    assert proved and all(proved), proved
    for a, b in zip(exact, light, strict=True):
        np.testing.assert_array_equal(a, b)


def _light(phys: list[int], mode: str, times: list[int]) -> object:
    a = np.array(phys, np.int64)
    t = np.array(times, np.int64)
    logical = a + 100 * (mode == "w")  # two buffers
    return usmp_replay._Light(  # pyright: ignore[reportPrivateUsage]
        a,
        logical,
        mode,
        t if mode == "r" else None,
        None,
        t if mode == "w" else None,
        NEVER,
    )


@pytest.mark.parametrize(
    ("reader", "writer", "proved"),
    [
        ([3, 4, 5], [6, 6, 6], True),  # every shared byte read, then written
        ([3, 4, 5], [6, 4, 9], False),  # byte 1 written at 4, read at 4
        ([3, 9, 5], [6, 6, 6], False),  # byte 1 read again after the write
    ],
)
def test_light_order_needs_every_shared_byte_read_before_written(
    reader: list[int], writer: list[int], proved: bool
) -> None:
    """``ordered`` accepts meeting buffers only where each byte one reads
    and another writes is last read before it is first written (the bytes
    of a range, and of index arrays); else the exact path decides."""
    for phys in ([0, 1, 2], [0, 2, 4]):
        r = _light(phys, "r", reader)
        w = _light(phys, "w", writer)
        if phys == [0, 1, 2]:  # as ranges
            for e in (r, w):
                e.phys = slice(0, 3)  # type: ignore[attr-defined]
                e.logical = slice(e.logical[0], e.logical[0] + 3)  # type: ignore[attr-defined]
        assert Replay.ordered([r, w]) is proved  # type: ignore[list-item]
    # two buffers written at one byte, or one both read and written: exact
    w2 = _light([2, 3], "w", [1, 1])
    assert not Replay.ordered([_light([0, 1, 2], "w", [1, 1, 1]), w2])  # type: ignore[list-item]
    rw = usmp_replay._Light(  # pyright: ignore[reportPrivateUsage]
        np.arange(3),
        np.arange(3),
        "rw",
        None,
        np.zeros(3, np.int64),
        np.ones(3, np.int64),
        NEVER,
    )
    assert not Replay.ordered([rw, _light([0, 1, 2], "r", [0, 0, 0])])  # type: ignore[list-item]


Replay = usmp_replay._Replay  # pyright: ignore[reportPrivateUsage]


def _replay_events(
    module: ModuleOp, monkeypatch: pytest.MonkeyPatch, window: int, light: bool = False
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int32], npt.NDArray[np.int64]]:
    """Replay ``module`` in windows of ``window`` addresses (by the exact
    path only, unless ``light``): (every byte written or checked as (stamp
    or -1, logical, physical), sorted; the two memories at the end)."""
    write, check = Replay.write, Replay.check
    done: list[npt.NDArray[np.int64]] = []
    values = usmp_replay._values  # pyright: ignore[reportPrivateUsage]

    def logged_write(self: Replay, logical: Array, phys: Array, stamp: int) -> None:
        logical_, phys_ = values(logical), values(phys)
        done.append(np.stack([np.full_like(logical_, stamp), logical_, phys_]))
        write(self, logical, phys, stamp)

    def logged_check(self: Replay, logical: Array, phys: Array, when: str) -> None:
        logical_, phys_ = values(logical), values(phys)
        done.append(np.stack([np.full_like(logical_, -1), logical_, phys_]))
        check(self, logical, phys, when)

    with monkeypatch.context() as m:
        m.setattr(usmp_replay, "SHARED_WINDOW", window)
        m.setattr(Replay, "write", logged_write)
        m.setattr(Replay, "check", logged_check)
        if not light:
            m.setattr(Replay, "light_records", lambda *_: None)
        replay = Replay(module, 1)
        assert replay.run() == []
    events = np.concatenate(done, axis=1)
    return events[:, np.lexsort(events[::-1])], replay.logical, replay.physical


FUZZ_SHAPES = {
    "output_read_again_workspace_io": (
        """
func.func @main(%x: tensor<1x3x3x2xi8>) -> (tensor<1x3x3x2xi8>, tensor<1x3x3x2xi8>, tensor<1x3x3x2xi8>) {
  %c = relay.clip %x {a_min = -100.0 : f64, a_max = 100.0 : f64} : tensor<1x3x3x2xi8> -> tensor<1x3x3x2xi8>
  %d = relay.clip %c {a_min = -50.0 : f64, a_max = 50.0 : f64} : tensor<1x3x3x2xi8> -> tensor<1x3x3x2xi8>
  func.return %c, %d, %c : tensor<1x3x3x2xi8>, tensor<1x3x3x2xi8>, tensor<1x3x3x2xi8>
}
""",
        [np.arange(-9, 9, dtype=np.int8).reshape(1, 3, 3, 2) * 13],
        dict(use_workspace_io=True, max_depth=1),
    ),
    "slice_of_an_output": (
        """
func.func @main(%x: tensor<2x6xf32>) -> (tensor<2x6xf32>, tensor<1x6xf32>) {
  %a = relay.relu %x : tensor<2x6xf32> -> tensor<2x6xf32>
  %s = relay.strided_slice %a {begin = array<i64: 1, 0>, end = array<i64: 2, 6>, strides = array<i64: 1, 1>} : tensor<2x6xf32> -> tensor<1x6xf32>
  func.return %a, %s : tensor<2x6xf32>, tensor<1x6xf32>
}
""",
        [np.linspace(-3, 3, 12, dtype=np.float32).reshape(2, 6)],
        dict(use_workspace_io=True),
    ),
}


@pytest.mark.parametrize("name", sorted(FUZZ_SHAPES))
def test_fuzz_shapes(name: str) -> None:
    """Shapes the fuzzer now generates (an output read again or returned
    twice, a slice of an output), compiled, replayed, run under ASan and
    compared with the oracle."""
    text, inputs, options = FUZZ_SHAPES[name]
    defaults: dict[str, object] = dict(
        algorithm="best_fit",
        use_workspace_io=False,
        max_depth=256,
        pools=PoolDraw("default", 1, (100,), (16,), False),
    )
    defaults.update(options)
    case = Case(name="shape", text=text, inputs=inputs, **defaults)  # type: ignore[arg-type]
    (result,) = run_batch([case])
    assert result.failure is None, result.failure


class _Memories:
    """What ``run_window`` uses of a replay: the two memories, the
    violations, the buffer of a logical byte (one buffer here)."""

    def __init__(self, size: int) -> None:
        self.logical = np.full(size, usmp_replay.UNDEFINED, np.int64)
        self.physical = np.full(size, usmp_replay.POISON, np.int64)
        self.violations: list[str] = []
        self.stamps = ["the initial value", "the test"]
        self.halves = True  # (``check`` compares origins by their halves)

    native = None  # (numpy: ``usmp_trace_origins`` has its own tests)
    write = Replay.write
    check = Replay.check
    origin_text = Replay.origin_text

    def buffer_at(self, index: int) -> object:
        class _Buffer:
            base = 0

            def describe(self) -> str:
                return "buffer 'b'"

        return _Buffer()


def _entry(phys: list[int], logical: list[int], *times: list[int]) -> object:
    a = [np.array(x, np.int64) for x in (phys, logical, *times)]
    return usmp_replay._Entry(*a)  # pyright: ignore[reportPrivateUsage]


@pytest.mark.parametrize("shift", [0, 2])
def test_a_byte_passed_twice_is_replayed_once(shift: int) -> None:
    """Where a call's entries share logical bytes (a buffer passed as two
    arguments: logical ranges that meet), each such byte is one record with
    the union of its accesses; entries whose logical ranges are disjoint
    (the test skips the merge for them) replay as before."""
    never = usmp_replay.NEVER
    # bytes 0-3 read at 1-8 by one argument; the same bytes, as another
    # argument, read at 5-6 and written at 7 (bytes 0+shift-3): as two
    # records, the write would interleave with the first one's reads
    first = _entry([0, 1, 2, 3], [0, 1, 2, 3], [1] * 4, [8] * 4, [never] * 4, [-1] * 4)
    n = 4 - shift
    same = list(range(shift, 4))
    second = _entry(same, same, [5] * n, [6] * n, [7] * n, [7] * n)
    # the bytes of another buffer on the same addresses, written at 9
    other = _entry(
        [0, 1, 2, 3], [8, 9, 10, 11], [never] * 4, [-1] * 4, [9] * 4, [9] * 4
    )
    union_fw = [never] * shift + [7] * n
    union_lw = [-1] * shift + [7] * n
    union = _entry([0, 1, 2, 3], [0, 1, 2, 3], [1] * 4, [8] * 4, union_fw, union_lw)
    results = []
    for entries in ([first, second, other], [union, other]):
        memories = _Memories(16)
        memories.write(np.arange(4), np.arange(4), 1)  # the input's bytes
        Replay.run_window(memories, entries, "call", 1)  # type: ignore[arg-type]
        results.append((memories.logical, memories.physical, memories.violations))
    (a_log, a_phys, a_bad), (b_log, b_phys, b_bad) = results
    np.testing.assert_array_equal(a_log, b_log)
    np.testing.assert_array_equal(a_phys, b_phys)
    assert a_bad == b_bad == []
    assert usmp_replay._disjoint([(0, 3), (4, 7)])  # pyright: ignore[reportPrivateUsage]
    assert not usmp_replay._disjoint([(0, 3), (3, 7)])  # pyright: ignore[reportPrivateUsage]


@pytest.mark.parametrize("narrow", [True, False])
@pytest.mark.parametrize(
    "model", ["mlperf_tiny/kws_ref_model.tflite", "mlperf_tiny/vww_96_int8.tflite"]
)
def test_the_light_trace_is_the_full_trace_reduced(
    model: str, narrow: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``trace_light`` computes only some of the times (a written buffer's
    first writes, a read one's last reads, each mask's box once), in
    ``np.int32`` where they fit (``narrow``; else, as for a kernel spanning
    2**31 or more, ``np.int64``): for every kernel of a model (padded
    windows, free loops between a read's first and last time), with every
    buffer asked for exactly and with none, its byte sets and times are
    those ``trace_all`` gives (``never`` for its ``NEVER``)."""
    from xdsl.dialects import func
    from xdsl.dialects.builtin import MemRefType

    from usmp.frontend.tflite_import import import_tflite
    from usmp.passes import usmp_kernel_trace
    from usmp.passes.usmp_kernel_trace import NEVER, trace_all, trace_light
    from usmp.testing.shared_models import MODELS_DIR

    chosen: list[type] = []
    choose = usmp_kernel_trace._time_dtype  # pyright: ignore[reportPrivateUsage]

    def time_dtype(span: int) -> type:
        chosen.append(choose(span) if narrow else np.int64)
        return chosen[-1]

    monkeypatch.setattr(usmp_kernel_trace, "_time_dtype", time_dtype)

    module = run_pipeline(
        import_tflite(MODELS_DIR / model),
        "plan-devices,fold-explicit-padding,fuse-ops,lower-ops",
    )
    kernels = [
        f
        for f in module.ops
        if isinstance(f, func.FuncOp) and f.body.blocks and f.sym_name.data != "main"
    ]
    assert kernels
    spread = 0  # reads whose last time is not their first
    for f in kernels:
        args = [i for i, a in enumerate(f.args) if isinstance(a.type, MemRefType)]
        full = trace_all(f, args)
        assert full is not None, f.sym_name.data
        for exact in (frozenset[int](), frozenset(args)):
            light = trace_light(f, args, exact)
            assert light is not None
            assert light.sets.keys() == full.times.keys()
            for i, t in full.times.items():
                s = light.sets[i]
                reads, writes = (t.last_read >= 0), (t.first_write != NEVER)
                dtype = chosen[-1]
                assert s.never == np.iinfo(dtype).max
                for times in (s.last_read, s.first_read, s.first_write):
                    assert times is None or times.dtype == dtype
                if reads.any() and writes.any():
                    assert s.mode == "rw"
                    np.testing.assert_array_equal(_wide(s.first_read, s), t.first_read)
                    np.testing.assert_array_equal(
                        _wide(s.first_write, s), t.first_write
                    )
                elif reads.any():
                    assert s.mode == "r"
                    if i in exact:
                        np.testing.assert_array_equal(s.last_read, t.last_read)
                        first = t.first_read
                        assert first is not None
                        spread += int((t.last_read[reads] > first[reads]).any())
                    else:
                        np.testing.assert_array_equal(s.read, reads)
                else:
                    assert s.mode == "w"
                    if i in exact:
                        np.testing.assert_array_equal(
                            _wide(s.first_write, s), t.first_write
                        )
                    else:
                        np.testing.assert_array_equal(s.written, writes)
                assert np.array_equal(s.used(), reads | writes)
    assert spread
    assert set(chosen) == {np.int32 if narrow else np.int64}


def test_times_are_narrow_only_where_every_time_fits() -> None:
    """``light_result`` keeps a kernel's times in ``np.int32`` only if its
    body spans less than that type's largest value (its ``never``)."""
    from usmp.passes import usmp_kernel_trace as kt

    span = int(np.iinfo(np.int32).max)
    assert kt._time_dtype(span - 1) is np.int32  # pyright: ignore[reportPrivateUsage]
    assert kt._time_dtype(span) is np.int64  # pyright: ignore[reportPrivateUsage]
    assert kt._time_dtype(1 << 40) is np.int64  # pyright: ignore[reportPrivateUsage]


def _wide(times: object, sets: object) -> object:
    """Light times as ``trace_all`` spells them (``NEVER`` for ``never``)."""
    from usmp.passes.usmp_kernel_trace import NEVER

    a = np.asarray(times).astype(np.int64)
    a[a == sets.never] = NEVER  # type: ignore[attr-defined]
    return a


def test_addresses_outside_a_buffer_are_no_byte_of_it() -> None:
    """The tracers' filter (``_in_buffer``): addresses below 0 or at or past
    the buffer's ``n`` elements are dropped with the times beside them;
    inside ones are kept in order; a missing time stays missing."""
    from usmp.passes.usmp_kernel_trace import _in_buffer  # pyright: ignore[reportPrivateUsage]

    addr = np.array([-1, 0, 3, 4, 2, 5], np.int64)
    early = np.arange(6, dtype=np.int64)
    kept, (times, none) = _in_buffer(addr, (-1, 5), 4, early, None)
    assert kept.tolist() == [0, 3, 2] and none is None
    assert times is not None and times.tolist() == [1, 2, 4]
    inside = np.array([0, 3, 1], np.int64)
    kept, (times,) = _in_buffer(inside, (0, 3), 4, early[:3])
    assert kept is inside and times is not None and times.tolist() == [0, 1, 2]


_PARTIAL = """
func.func @partial(%a: memref<8xi32>, %b: memref<8xi8>, %c: memref<8xi8>) attributes {tir.prim_func} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c6 = arith.constant 6 : index
  %c8 = arith.constant 8 : index
  %z = arith.constant 0 : i8
  scf.for %i = %c0 to %c8 step %c2 {
    memref.store %z, %b[%i] : memref<8xi8>
  }
  scf.for %i = %c0 to %c6 step %c1 {
    %v = memref.load %c[%i] : memref<8xi8>
  }
  scf.for %i = %c0 to %c8 step %c1 {
    %w = memref.load %a[%i] : memref<8xi32>
  }
  scf.for %i = %c0 to %c4 step %c1 {
    memref.store %z, %c[%i] : memref<8xi8>
  }
  scf.for %i = %c0 to %c4 step %c1 {
    %w = memref.load %a[%i] : memref<8xi32>
    memref.store %w, %a[%i] : memref<8xi32>
  }
  func.return
}
"""


@pytest.mark.parametrize("narrow", [True, False])
def test_light_sets_of_partly_touched_buffers(
    narrow: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Buffers a kernel touches in part (every other byte written; one read
    in its first 6 bytes and written in its first 4; one of 4-byte elements
    read whole and rewritten in its first half), with narrow and wide times: the bytes
    ``ByteSets.used`` and the replay's ``checked`` and ``written`` give, and
    the times, are ``trace_all``'s."""
    from xdsl.dialects import func

    from usmp.passes import usmp_kernel_trace
    from usmp.passes.usmp_kernel_trace import trace_all, trace_light

    if not narrow:
        monkeypatch.setattr(usmp_kernel_trace, "_time_dtype", lambda span: np.int64)
    module = LocatingParser(new_context(), _PARTIAL, "partial.mlir").parse_module()
    f = next(o for o in module.ops if isinstance(o, func.FuncOp))
    full = trace_all(f, [0, 1, 2])
    assert full is not None
    light = trace_light(f, [0, 1, 2], [0, 1, 2])
    assert light is not None
    assert {i: s.mode for i, s in light.sets.items()} == {0: "rw", 1: "w", 2: "rw"}
    for i, t in full.times.items():
        s = light.sets[i]
        assert s.never == (np.iinfo(np.int32).max if narrow else NEVER)
        reads, writes = t.last_read >= 0, t.first_write != NEVER
        np.testing.assert_array_equal(s.used(), reads | writes)
        assert not (reads & writes).all() and (reads | writes).any()
        times = (s.first_read, s.first_write) if s.mode == "rw" else (s.first_write,)
        expected = (t.first_read, t.first_write) if s.mode == "rw" else (t.first_write,)
        for a, b in zip(times, expected, strict=True):
            np.testing.assert_array_equal(_wide(a, s), b)
        used = s.used()
        e = usmp_replay._Light(  # pyright: ignore[reportPrivateUsage]
            np.nonzero(used)[0],
            np.nonzero(used)[0],
            s.mode,
            None,
            None if s.first_read is None else s.first_read[used],
            None if s.first_write is None else s.first_write[used],
            s.never,
        )
        first_read = t.first_read
        assert first_read is not None
        checked, written = e.checked(), e.written()
        if s.mode == "rw":
            assert checked is not None and written is not None
            np.testing.assert_array_equal(
                checked, ((first_read < t.first_write) & reads)[used]
            )
            np.testing.assert_array_equal(written, writes[used])
        else:
            assert written is None and writes[used].all()


class _Checked(_Memories):
    """``_Memories`` with the replay's own memory types (int32 stamps) and
    ``buffer_at`` (one buffer over every logical byte), for ``check``."""

    def __init__(self, size: int, halves: bool) -> None:
        super().__init__(size)
        self.logical = np.full(size, usmp_replay.UNDEFINED, np.int32)
        self.halves = halves

    def buffer_at(self, index: int) -> object:
        class _One:
            base = 0

            def describe(self) -> str:
                return "buffer 'b'"

        return _One()


@pytest.mark.parametrize("seed", range(4))
def test_check_by_halves_finds_what_full_origins_find(seed: int) -> None:
    """``check`` comparing an origin's two 32-bit halves reports exactly the
    bytes comparing the whole 64-bit origin does: right stamp with a wrong
    index, wrong stamp with the right index, poison, and bytes with no
    value yet (not reported), over a range and over an index array."""
    n = 64
    reports: list[list[str]] = []
    for halves in (True, False):
        rng = np.random.default_rng(seed)  # (the same memories both ways)
        m = _Checked(n, halves)
        m.stamps += ["the other write", "a write of another byte"]
        m.write(slice(0, n), np.arange(n), 1)
        m.write(slice(8, 24), np.arange(8, 24), 2)
        m.physical[rng.choice(n, 6, replace=False)] += 1  # wrong index
        m.physical[rng.choice(n, 6, replace=False)] += usmp_replay._STAMP  # pyright: ignore[reportPrivateUsage]
        m.physical[rng.choice(n, 4, replace=False)] = usmp_replay.POISON
        m.logical[rng.choice(n, 5, replace=False)] = usmp_replay.UNDEFINED
        m.check(slice(0, n), slice(0, n), "the range reads")
        picked = np.sort(rng.choice(n, 20, replace=False))
        m.check(picked, picked, "the indices read")
        reports.append(m.violations)
    assert reports[0] == reports[1]
    assert len(reports[0]) > 2  # (each kind of origin reported)
