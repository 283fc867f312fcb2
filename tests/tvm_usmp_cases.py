"""TVM's USMP analysis and algorithm test modules, in the project's tir form.

From apache/tvm ``tests/python/tir-usmp/test_tir_usmp_analysis_extract_bufferinfo.py``
and ``test_tir_usmp_algo.py``: each TVM prim func is written down as what the
buffer info analysis sees of it -- its buffer parameters in call order, its
scratch (``T.decl_buffer``) with TVM's byte sizes, and, per top-level
statement (a loop nest), the buffers it touches -- and main as its
``T.allocate``s and its calls. ``module_text`` turns a case into a module
of the form ``aot-lower-main`` produces: every statement a one-iteration
``scf.for`` loading and storing one byte of each buffer it touches (the
analysis sees accesses, not values); the scratch is allocated at the top of
the function (TVM declares some inside loops; liveness follows the uses),
except inside a parallel loop, whose allocations are per thread.

Left out, since they do not touch the workspace: TVM's ``T.lookup_param``
arguments (weights, biases) and the byte sizes of parameters (TVM's
``match_buffer`` shapes are not the caller's; the caller's buffer is what is
planned). The expected conflicts, memory pressure and pool sizes are TVM's,
copied from those tests.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Kernel:
    """A TVM prim func as the analysis sees it."""

    params: tuple[str, ...]
    statements: tuple[tuple[str, ...], ...]
    """Per top-level statement, the parameters and scratch it touches."""
    scratch: dict[str, int] = field(default_factory=dict[str, int])
    """Scratch name -> bytes."""
    parallel: bool = False
    """The second statement is a parallel loop (``T.parallel``)."""
    untouched: dict[str, int] = field(default_factory=dict[str, int])
    """Scratch declared in the second statement but never accessed."""


@dataclass(frozen=True)
class Case:
    kernels: dict[str, Kernel]
    allocs: dict[str, int]
    """main's ``T.allocate``s: name -> bytes."""
    calls: tuple[tuple[str, tuple[str, ...]], ...]
    inputs: tuple[str, ...] = ("input",)
    outputs: tuple[str, ...] = ("output",)
    constants: dict[str, int] = field(default_factory=dict[str, int])
    """main's ``T.allocate_const``s: name -> bytes."""
    io_bytes: int = 16


def _conv(padded: str, padded_bytes: int, out: str, out_bytes: int) -> Kernel:
    """TVM's conv2d: pad the input into a scratch, then per output pixel an
    accumulator scratch (declared in the second loop nest)."""
    return Kernel(
        ("in", "out"),
        (("in", padded), (padded, out, "out")),
        {padded: padded_bytes, out: out_bytes},
    )


def _pool(tensor: str, size: int) -> Kernel:
    """TVM's max_pool2d + cast: pool into a scratch, then cast it out."""
    return Kernel(("in", "out"), (("in", tensor), (tensor, "out")), {tensor: size})


_ELEMENTWISE = Kernel(("in", "out"), (("in", "out"),))

LINEAR = Case(
    {
        "cast_subtract": _ELEMENTWISE,
        "conv2d_clip_cast": _conv("PaddedInput_7", 314646, "Conv2dOutput_7", 256),
        "max_pool2d_cast": _pool("tensor_2", 200704),
    },
    {"sid_9": 301056, "sid_8": 802816},
    (
        ("cast_subtract", ("input", "sid_9")),
        ("conv2d_clip_cast", ("sid_9", "sid_8")),
        ("max_pool2d_cast", ("sid_8", "output")),
    ),
)
"""``LinearStructure`` (extract_bufferinfo) = ``MobilenetStructure`` (algo)."""

LINEAR_CONFLICTS = {
    "PaddedInput_7": {"sid_9", "sid_8", "Conv2dOutput_7"},
    "tensor_2": {"sid_8"},
    "sid_9": {"PaddedInput_7"},
    "sid_8": {"PaddedInput_7", "Conv2dOutput_7", "tensor_2"},
    "Conv2dOutput_7": {"sid_8", "PaddedInput_7"},
}
LINEAR_PRESSURE = 1117718


def _serial_or_parallel(parallel: bool) -> Case:
    kernel = Kernel(
        ("in", "out"),
        (("in", "PaddedInput_8"), ("PaddedInput_8", "Conv2dOutput_8", "out")),
        {"PaddedInput_8": 430592, "Conv2dOutput_8": 256},
        parallel=parallel,
        untouched={"dummy_allocate": 4},
    )
    return Case({"conv2d_1": kernel}, {}, (("conv2d_1", ("input", "output")),))


ALL_SERIAL = _serial_or_parallel(False)
"""``AllSerialForLoops``: 3 buffers, memory pressure 430,848 B."""
PARALLEL_SERIAL_MIXED = _serial_or_parallel(True)
"""``ParallelSerialMixedForLoops``: TVM plans 2 buffers (``Conv2dOutput_8``,
inside a serial loop inside the parallel one, counts; ``dummy_allocate``,
right inside the parallel loop, does not)."""


INCEPTION = Case(
    {
        "max_pool2d": _ELEMENTWISE,
        "cast_subtract": _ELEMENTWISE,
        "cast": _ELEMENTWISE,
        "concatenate": Kernel(
            ("a", "b", "c", "d", "out"), (("a", "b", "c", "d", "out"),)
        ),
        "conv2d_cast_cast": _conv("PaddedInput", 401408, "Conv2dOutput", 256),
        "conv2d_cast_cast_1": _conv("PaddedInput_1", 301056, "Conv2dOutput_1", 4),
        "max_pool2d_cast": _pool("tensor_2", 200704),
        "conv2d_2": _conv("PaddedInput_2", 301056, "Conv2dOutput_2", 256),
        "max_pool2d_cast_1": _pool("tensor_3", 150528),
        "conv2d_fpm__2": _conv("PaddedInput_3", 301056, "Conv2dOutput_3", 4),
        "conv2d_cast_cast_2": _conv("PaddedInput_4", 301056, "Conv2dOutput_4", 4),
        "conv2d_fpm__1": _conv("PaddedInput_5", 28800, "Conv2dOutput_5", 4),
        "conv2d_fpm_": _conv("PaddedInput_6", 172800, "Conv2dOutput_6", 256),
        "conv2d_clip_cast": _conv("PaddedInput_7", 314646, "Conv2dOutput_7", 256),
        "conv2d_1": _conv("PaddedInput_8", 430592, "Conv2dOutput_8", 256),
    },
    {
        "sid_32": 301056,
        "sid_20": 150528,
        "sid_6": 401408,
        "sid_9": 301056,
        "sid_7": 401408,
        "sid_8": 802816,
        "sid_2": 50176,
        "sid_3": 301056,
        "sid_19": 100352,
        "sid_4": 150528,
        "sid_5": 602112,
        "sid_25": 25088,
        "sid_26": 25088,
        "sid_31": 25088,
    },
    (
        ("cast_subtract", ("input", "sid_9")),
        ("conv2d_clip_cast", ("sid_9", "sid_8")),
        ("max_pool2d_cast", ("sid_8", "sid_7")),
        ("conv2d_cast_cast", ("sid_7", "sid_6")),
        ("conv2d_1", ("sid_6", "sid_5")),
        ("max_pool2d", ("sid_5", "sid_4")),
        ("cast", ("sid_4", "sid_3")),
        ("conv2d_2", ("sid_3", "sid_2")),
        ("conv2d_cast_cast_1", ("sid_3", "sid_20")),
        ("conv2d_fpm_", ("sid_20", "sid_19")),
        ("conv2d_cast_cast_2", ("sid_3", "sid_26")),
        ("conv2d_fpm__1", ("sid_26", "sid_25")),
        ("max_pool2d_cast_1", ("sid_4", "sid_32")),
        ("conv2d_fpm__2", ("sid_32", "sid_31")),
        ("concatenate", ("sid_2", "sid_19", "sid_25", "sid_31", "output")),
    ),
)
"""``InceptionStructure`` (function names shortened)."""

_SID_3 = {
    "sid_4", "PaddedInput_2", "sid_2", "Conv2dOutput_2", "PaddedInput_1",
    "Conv2dOutput_1", "sid_20", "PaddedInput_6", "Conv2dOutput_6", "sid_19",
    "PaddedInput_4",
}  # fmt: skip
INCEPTION_CONFLICTS: dict[str, set[str]] = {
    "sid_3": _SID_3,
    "Conv2dOutput": {"sid_6", "PaddedInput"},
    "Conv2dOutput_7": {"PaddedInput_7", "sid_8"},
    "sid_4": {
        "sid_5", "sid_3", "PaddedInput_2", "sid_2", "Conv2dOutput_2",
        "PaddedInput_1", "Conv2dOutput_1", "sid_20", "PaddedInput_6",
        "Conv2dOutput_6", "sid_19", "PaddedInput_4", "Conv2dOutput_4", "sid_26",
        "PaddedInput_5", "Conv2dOutput_5", "sid_25", "tensor_3",
    },
    "sid_2": {
        "PaddedInput_2", "sid_3", "sid_4", "Conv2dOutput_2", "PaddedInput_1",
        "Conv2dOutput_1", "sid_20", "PaddedInput_6", "Conv2dOutput_6", "sid_19",
        "PaddedInput_4", "Conv2dOutput_4", "sid_26", "PaddedInput_5",
        "Conv2dOutput_5", "sid_25", "tensor_3", "sid_32", "PaddedInput_3",
        "Conv2dOutput_3", "sid_31",
    },
    "sid_19": {
        "Conv2dOutput_6", "sid_2", "PaddedInput_6", "sid_3", "sid_4",
        "PaddedInput_4", "Conv2dOutput_4", "sid_26", "PaddedInput_5",
        "Conv2dOutput_5", "sid_25", "tensor_3", "sid_32", "PaddedInput_3",
        "Conv2dOutput_3", "sid_31",
    },
    "PaddedInput_2": {"sid_3", "sid_4", "sid_2", "Conv2dOutput_2"},
    "Conv2dOutput_6": {"sid_2", "PaddedInput_6", "sid_3", "sid_4", "sid_19"},
    "sid_9": {"PaddedInput_7"},
    "sid_7": {"tensor_2", "PaddedInput"},
    "PaddedInput_4": {"sid_2", "sid_19", "sid_3", "sid_4", "Conv2dOutput_4", "sid_26"},
    "PaddedInput_3": {"sid_2", "sid_32", "sid_25", "sid_19", "Conv2dOutput_3", "sid_31"},
    "sid_5": {"PaddedInput_8", "Conv2dOutput_8", "sid_4"},
    "sid_31": {"Conv2dOutput_3", "PaddedInput_3", "sid_2", "sid_25", "sid_19"},
    "PaddedInput": {"sid_7", "sid_6", "Conv2dOutput"},
    "Conv2dOutput_2": {"sid_2", "PaddedInput_2", "sid_3", "sid_4"},
    "sid_32": {"tensor_3", "sid_2", "sid_25", "sid_19", "PaddedInput_3"},
    "tensor_2": {"sid_8", "sid_7"},
    "sid_26": {"Conv2dOutput_4", "PaddedInput_4", "sid_2", "sid_19", "sid_4", "PaddedInput_5"},
    "Conv2dOutput_3": {"PaddedInput_3", "sid_2", "sid_25", "sid_19", "sid_31"},
    "PaddedInput_6": {"sid_2", "sid_3", "sid_20", "sid_4", "Conv2dOutput_6", "sid_19"},
    "sid_6": {"PaddedInput", "Conv2dOutput", "PaddedInput_8"},
    "PaddedInput_8": {"sid_6", "sid_5", "Conv2dOutput_8"},
    "Conv2dOutput_5": {"PaddedInput_5", "sid_2", "sid_19", "sid_4", "sid_25"},
    "Conv2dOutput_1": {"PaddedInput_1", "sid_2", "sid_3", "sid_4", "sid_20"},
    "tensor_3": {"sid_2", "sid_25", "sid_19", "sid_4", "sid_32"},
    "sid_8": {"Conv2dOutput_7", "PaddedInput_7", "tensor_2"},
    "sid_20": {"Conv2dOutput_1", "PaddedInput_1", "sid_2", "sid_3", "sid_4", "PaddedInput_6"},
    "Conv2dOutput_8": {"sid_5", "PaddedInput_8"},
    "PaddedInput_1": {"sid_2", "sid_3", "sid_4", "Conv2dOutput_1", "sid_20"},
    "Conv2dOutput_4": {"PaddedInput_4", "sid_2", "sid_19", "sid_4", "sid_26"},
    "sid_25": {
        "PaddedInput_5", "Conv2dOutput_5", "sid_2", "sid_19", "sid_4", "tensor_3",
        "sid_32", "PaddedInput_3", "Conv2dOutput_3", "sid_31",
    },
    "PaddedInput_7": {"sid_9", "Conv2dOutput_7", "sid_8"},
    "PaddedInput_5": {"sid_2", "sid_19", "sid_26", "sid_4", "Conv2dOutput_5", "sid_25"},
}  # fmt: skip
INCEPTION_PRESSURE = 1117718


def _softmax(suffix: str, params: tuple[str, ...]) -> Kernel:
    """TVM's softmax (+ adds): one loop nest with four scratch buffers."""
    names = {
        f"T_softmax_norm{suffix}": 48,
        f"T_softmax_maxelem{suffix}": 4,
        f"T_softmax_exp{suffix}": 48,
        f"T_softmax_expsum{suffix}": 4,
    }
    return Kernel(params, ((*params, *names),), names)


MULTIPLE_CALLS = Case(
    {
        "layout_transform_1": _ELEMENTWISE,
        "conv2d_NCHWc": Kernel(
            ("in", "out"),
            (("in", "data_pad"), ("data_pad", "conv2d_NCHWc_global", "out")),
            {"data_pad": 4368, "conv2d_NCHWc_global": 144},
        ),
        "softmax_add_add_multiply_add": _softmax("", ("a", "b", "out")),
        "dense_pack_relu": Kernel(
            ("in", "out"),
            (("in", "compute", "compute_global", "out"),),
            {"compute": 192, "compute_global": 192},
        ),
        "reshape_1": _ELEMENTWISE,
        "layout_transform": _ELEMENTWISE,
        "reshape": _ELEMENTWISE,
        "softmax_add": _softmax("2", ("a", "b", "out")),
    },
    {
        name: 3456
        for name in (
            "sid_11",
            "sid_5",
            "sid_10",
            "sid_6",
            "sid_8",
            "sid_2",
            "sid_7",
            "sid_3",
            "sid_12",
            "sid_4",
            "sid_18",
            "sid_19",
            "sid_20",
        )
    },  # fmt: skip
    (
        ("layout_transform_1", ("data", "sid_23")),
        ("conv2d_NCHWc", ("sid_8", "sid_7")),
        ("layout_transform", ("sid_7", "sid_6")),
        ("reshape_1", ("data", "sid_12")),
        ("dense_pack_relu", ("sid_12", "sid_11")),
        ("reshape", ("sid_11", "sid_10")),
        ("softmax_add_add_multiply_add", ("sid_6", "sid_10", "sid_5")),
        ("layout_transform_1", ("sid_5", "sid_4")),
        ("conv2d_NCHWc", ("sid_4", "sid_3")),
        ("layout_transform", ("sid_3", "sid_2")),
        ("reshape_1", ("sid_5", "sid_20")),
        ("dense_pack_relu", ("sid_20", "sid_19")),
        ("reshape", ("sid_19", "sid_18")),
        ("softmax_add", ("sid_2", "sid_18", "output")),
    ),
    inputs=("data",),
    constants={"sid_21": 10, "sid_22": 1, "sid_23": 3456},
    io_bytes=3456,
)
"""``MultipleCallsToSamePrimFuncModule`` (``tvm_call_cpacked``; function
names shortened). TVM's main writes into the constant ``sid_23``; here too."""

_SM = ("T_softmax_exp", "T_softmax_maxelem", "T_softmax_norm", "T_softmax_expsum")
_SM2 = tuple(f"{n}2" for n in _SM)
MULTIPLE_CALLS_CONFLICTS: dict[str, set[str]] = {
    "sid_6": {"sid_7", "sid_12", "compute", "compute_global", "sid_11", "sid_10", "sid_5", *_SM},
    "T_softmax_exp": {"sid_10", "sid_6", "sid_5", *_SM} - {"T_softmax_exp"},
    "T_softmax_expsum2": {"sid_18", "sid_2", *_SM2} - {"T_softmax_expsum2"},
    "compute": {"sid_12", "sid_6", "compute_global", "sid_11", "sid_19", "sid_20", "sid_2"},
    "compute_global": {"compute", "sid_12", "sid_6", "sid_11", "sid_19", "sid_20", "sid_2"},
    "sid_10": {"sid_11", "sid_6", "sid_5", *_SM},
    "sid_2": {"sid_3", "sid_5", "sid_20", "sid_19", "compute", "compute_global", "sid_18", *_SM2},
    "sid_5": {
        "sid_10", "sid_6", "sid_4", "data_pad", "sid_3", "conv2d_NCHWc_global",
        "sid_2", "sid_20", *_SM,
    },
    "T_softmax_norm2": {"sid_18", "sid_2", *_SM2} - {"T_softmax_norm2"},
    "sid_20": {"sid_2", "sid_5", "sid_19", "compute", "compute_global"},
    "T_softmax_expsum": {"sid_5", "sid_10", "sid_6", *_SM} - {"T_softmax_expsum"},
    "data_pad": {"sid_8", "conv2d_NCHWc_global", "sid_7", "sid_4", "sid_5", "sid_3"},
    "sid_19": {"sid_20", "sid_2", "compute", "compute_global", "sid_18"},
    "conv2d_NCHWc_global": {"data_pad", "sid_7", "sid_3", "sid_5"},
    "sid_18": {"sid_19", "sid_2", *_SM2},
    "sid_7": {"conv2d_NCHWc_global", "data_pad", "sid_6"},
    "T_softmax_exp2": {"sid_18", "sid_2", *_SM2} - {"T_softmax_exp2"},
    "sid_4": {"sid_5", "data_pad"},
    "T_softmax_maxelem": {"sid_10", "sid_6", "sid_5", *_SM} - {"T_softmax_maxelem"},
    "T_softmax_maxelem2": {"sid_18", "sid_2", *_SM2} - {"T_softmax_maxelem2"},
    "sid_11": {"compute", "sid_12", "compute_global", "sid_6", "sid_10"},
    "sid_12": {"sid_6", "compute", "compute_global", "sid_11"},
    "T_softmax_norm": {"sid_5", "sid_10", "sid_6", *_SM} - {"T_softmax_norm"},
    "sid_8": {"data_pad"},
}  # fmt: skip
MULTIPLE_CALLS_PRESSURE = 11424


RESNET = Case(
    {
        "cast_subtract_fpm_add_clip_cast_cast": _ELEMENTWISE,
        "conv2d_clip_cast_cast": _conv("PaddedInput", 720000, "Conv2dOutput", 256),
        "conv2d_clip_cast_cast_1": _conv(
            "PaddedInput_1", 758912, "Conv2dOutput_1", 256
        ),
        "conv2d_15934180698220515269_": _conv(
            "PaddedInput_2", 720000, "Conv2dOutput_2", 256
        ),
        "conv2d_4200876283395191415_": Kernel(
            ("in", "add", "out"),
            (
                ("in", "PaddedInput_3"),
                ("PaddedInput_3", "Conv2dOutput_3", "add", "out"),
            ),
            {"PaddedInput_3": 720000, "Conv2dOutput_3": 256},
        ),
    },
    {"sid_2": 720000, "sid_6": 5760000, "sid_7": 720000, "sid_8": 720000},
    (
        ("cast_subtract_fpm_add_clip_cast_cast", ("input", "sid_2")),
        ("conv2d_clip_cast_cast", ("sid_2", "sid_8")),
        ("conv2d_clip_cast_cast_1", ("sid_8", "sid_7")),
        ("conv2d_15934180698220515269_", ("sid_7", "sid_6")),
        ("conv2d_4200876283395191415_", ("sid_2", "sid_6", "output")),
    ),
)
"""``ResnetStructure`` (test_tir_usmp_algo.py)."""

RESNET_CONFLICTS: dict[str, set[str]] = {
    "sid_7": {"PaddedInput_1", "sid_2", "Conv2dOutput_1", "PaddedInput_2"},
    "Conv2dOutput_3": {"PaddedInput_3", "sid_6"},
    "sid_6": {"Conv2dOutput_2", "PaddedInput_2", "sid_2", "PaddedInput_3", "Conv2dOutput_3"},
    "Conv2dOutput": {"sid_8", "sid_2", "PaddedInput"},
    "PaddedInput_3": {"sid_6", "sid_2", "Conv2dOutput_3"},
    "Conv2dOutput_2": {"PaddedInput_2", "sid_2", "sid_6"},
    "PaddedInput_1": {"sid_8", "sid_2", "sid_7", "Conv2dOutput_1"},
    "Conv2dOutput_1": {"sid_7", "PaddedInput_1", "sid_2"},
    "PaddedInput": {"sid_2", "sid_8", "Conv2dOutput"},
    "sid_8": {"PaddedInput", "sid_2", "Conv2dOutput", "PaddedInput_1"},
    "sid_2": {
        "PaddedInput", "sid_8", "Conv2dOutput", "PaddedInput_1", "sid_7",
        "Conv2dOutput_1", "PaddedInput_2", "Conv2dOutput_2", "sid_6", "PaddedInput_3",
    },
    "PaddedInput_2": {"sid_7", "sid_2", "Conv2dOutput_2", "sid_6"},
}  # fmt: skip
RESNET_PRESSURE = 7200256
RESNET_WORKSPACE = {
    "greedy_by_size": 7920256,
    "greedy_by_conflicts": 7200256,
    "hill_climb": 7200256,
}
MOBILENET_POOLS = {
    "greedy_by_size": (200704, 1418528),
    "greedy_by_conflicts": (200704, 1418528),
    "hill_climb": (200704, 1117462),
}
"""test_mobilenet_subgraph: (fast_memory, slow_memory) sizes; fast_memory
is limited to 200,704 B."""


def _statement(buffers: list[str], types: dict[str, str], inner: set[str]) -> list[str]:
    lines = ["  scf.for %i = %c0 to %c1 step %c1 {"]
    for name in buffers:
        if name in inner:
            lines.append(
                f'    %{name} = tir.allocate {{name_hint = "{name}"}} : {types[name]}'
            )
    for name in buffers:
        lines.append(f"    %v_{name} = memref.load %{name}[%c0] : {types[name]}")
        lines.append(f"    memref.store %v_{name}, %{name}[%c0] : {types[name]}")
    lines.append("  }")
    return lines


def module_text(case: Case) -> str:
    """The case as a module ``usmp`` reads (see module doc)."""
    sizes = {**case.allocs, **case.constants}
    sizes.update((n, case.io_bytes) for n in (*case.inputs, *case.outputs))
    # one signature per kernel: the caller's buffer types at its first call
    signatures: dict[str, tuple[int, ...]] = {}
    for callee, args in case.calls:
        signatures.setdefault(callee, tuple(sizes[a] for a in args))
    lines: list[str] = []
    for name, kernel in case.kernels.items():
        types = {
            p: f"memref<{n}xi8>"
            for p, n in zip(kernel.params, signatures[name], strict=True)
        }
        types.update((s, f"memref<{n}xi8>") for s, n in kernel.scratch.items())
        params = ", ".join(f"%{p}: {types[p]}" for p in kernel.params)
        lines.append(f"func.func @{name}({params}) attributes {{tir.prim_func}} {{")
        lines += [
            "  %c0 = arith.constant 0 : index",
            "  %c1 = arith.constant 1 : index",
        ]
        used_in = {
            s: [k for k, st in enumerate(kernel.statements) if s in st]
            for s in kernel.scratch
        }
        # only a parallel loop keeps its allocations inside (per thread);
        # everywhere else they sit at the top of the function (liveness
        # follows the uses, not the declaration)
        inner = (
            {s for s, ks in used_in.items() if ks == [1]} if kernel.parallel else set()
        )
        hoisted = {} if kernel.parallel else kernel.untouched
        for s, size in {**kernel.scratch, **hoisted}.items():
            if s not in inner:
                lines.append(
                    f'  %{s} = tir.allocate {{name_hint = "{s}"}} : memref<{size}xi8>'
                )
        for k, statement in enumerate(kernel.statements):
            body = _statement(list(statement), types, inner)
            if k == 1 and kernel.parallel:
                body = _wrapped(body, kernel)
            lines += body
        lines += ["  func.return", "}"]
    text = "\n".join(lines)
    args = ", ".join(
        f"%{n}: memref<{case.io_bytes}xi8>" for n in (*case.inputs, *case.outputs)
    )
    names = ", ".join(f'"{n}"' for n in case.inputs)
    outs = ", ".join(f'"{n}"' for n in case.outputs)
    main = [
        f"func.func @run_model({args}) attributes {{tir.prim_func, tir.main, "
        f"tir.input_names = [{names}], tir.output_names = [{outs}]}} {{"
    ]
    for name, size in case.constants.items():
        main.append(
            f'  %{name} = tir.allocate_const {{name_hint = "{name}", '
            f"value = dense<0> : tensor<{size}xi8>}} : memref<{size}xi8>"
        )
    for name, size in case.allocs.items():
        main.append(
            f'  %{name} = tir.allocate {{name_hint = "{name}"}} : memref<{size}xi8>'
        )
    for callee, call_args in case.calls:
        types = ", ".join(f"memref<{sizes[a]}xi8>" for a in call_args)
        operands = ", ".join(f"%{a}" for a in call_args)
        main.append(f"  tir.call @{callee}({operands}) : ({types}) -> ()")
    main += ["  func.return", "}"]
    return text + "\n" + "\n".join(main) + "\n"


def _wrapped(body: list[str], kernel: Kernel) -> list[str]:
    """The second statement inside a parallel loop (``T.parallel``) that
    declares the never-accessed scratch."""
    # (xDSL prints scf.parallel only in the generic form)
    inner = [
        '  "scf.parallel"(%c0, %c1, %c1) '
        "<{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({",
        "  ^bb0(%p: index):",
    ]
    for name, size in kernel.untouched.items():
        inner.append(
            f'    %{name} = tir.allocate {{name_hint = "{name}"}} : memref<{size}xi8>'
        )
    inner += ["  " + line for line in body]
    inner += ["    scf.reduce", "  }) : (index, index, index) -> ()"]
    return inner


RESNET_OFFSETS = {
    "sid_2": 5760000,
    "sid_6": 0,
    "sid_7": 6480000,
    "sid_8": 6480000,
    "PaddedInput": 7200000,
    "Conv2dOutput": 7920000,
    "PaddedInput_1": 0,
    "Conv2dOutput_1": 7200000,
    "PaddedInput_2": 7200000,
    "Conv2dOutput_2": 7920000,
    "PaddedInput_3": 6480000,
    "Conv2dOutput_3": 7200000,
}
"""``ResnetStructurePlanned`` (test_tir_usmp_transform_convert_pool_allocations
_to_offsets.py::test_resnet_subgraph, greedy_by_size): every buffer's offset
in the 7,920,256 B workspace."""
