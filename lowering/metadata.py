"""The C interface of a compiled model: ``tvmgen_<m>.h`` and ``tvmgen_<m>.c``
(TVM AOT's interface header and the USMP RFC's metadata).

For model ``m`` (from the entry ``tvmgen_m___tvm_main__``) the header gives,
following the RFC's names (typedefs) and TVM's (struct tags, size macros)::

    #define TVMGEN_M_<TENSOR>_SIZE               n    bytes, one per input/output
    #define TVMGEN_M_WORKSPACE_SIZE              n    all workspace pools
    #define TVMGEN_M_<POOL>_WORKSPACE_POOL_SIZE  n    one per workspace pool
    #define TVMGEN_M_<POOL>_CONSTANT_POOL_SIZE   n    one per constant pool
    #define TVMGEN_M_<POOL>_PERSISTENT_POOL_SIZE n    one per persistent pool
    #define TVM_M_<POOL>_WORKSPACE_BUFFER_SIZE   n    one per workspace pool
    #define TVM_M_<POOL>_PARAMETER_BUFFER_SIZE   n    one per constant pool
    #define TVM_M_<POOL>_PERSISTENT_BUFFER_SIZE  n    one per persistent pool
    #define TVM_M_<POOL>_..._BUFFER_ALIGNMENT    a
    typedef struct tvmgen_m_inputs  { float* x; }            TVMInputs_m;
    typedef struct tvmgen_m_outputs { int8_t* output; }      TVMOutputs_m;
    typedef struct tvmgen_m_workspace_pools { uint8_t* sram; }        TVMWorkspaces_m;
    typedef struct tvmgen_m_parameter_pools { const uint8_t* flash; } TVMParameters_m;
    int32_t tvmgen_m_run(TVMInputs_m* inputs, TVMOutputs_m* outputs,
                         TVMWorkspaces_m* workspaces, TVMParameters_m* parameters);

Which pools the application provides is a choice made when the library is
written (``user_pools``):

* U1 (none): tvmgen_m.c defines every pool as an aligned static array (the
  parameters as ``const`` data); ``run`` takes inputs and outputs only.
* U2/U3 (some or all): those pools are members of ``TVMWorkspaces_m`` /
  ``TVMParameters_m`` and ``run`` takes the struct(s); the application sizes
  its arrays with the ``..._BUFFER_SIZE`` defines, may share one workspace
  between models (run one at a time) and pin each array to a memory. The data
  of an application-provided parameter pool is the initializer macro
  ``TVM_M_<POOL>_PARAMETER_DATA`` (and TVM's ``TVMGEN_M_<POOL>_CONSTANT_POOL_DATA``)
  in ``tvmgen_m_parameters.h``.

A model with state (TFLite variable tensors, ``tir.states`` on the entry)
has persistent pools: they hold what ``run`` keeps from one call to the
next, never shared with anything. ``int32_t tvmgen_m_init(...)`` writes the
states' initial values: call it once before the first ``run`` and again to
reset the model. An application-provided persistent pool is a member of
``TVMWorkspaces_m`` (it is writable memory the application places, as
workspace pools are), and ``init`` takes that struct: two instances of one
model are two persistent arrays (and may share one workspace).

With I/O in the workspace (``usmp{use_workspace_io=true}``) the inputs and
outputs live in a pool: ``tvmgen_m_map_inputs``/``_map_outputs`` return where
to write inputs and read outputs, and ``run`` takes no I/O arguments.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, replace

from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseIntOrFPElementsAttr,
    DictionaryAttr,
    FixedBitwidthType,
    Float32Type,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    MemRefType,
    ModuleOp,
    Signedness,
    StringAttr,
    TensorType,
)
from xdsl.ir import Attribute

from usmp.diagnostics import located_error
from usmp.dialects import emitc, tir
from usmp.lowering.c_names import (
    CNameError,
    CNames,
    QuantNames,
    assign_c_names,
    library_files,
)
from usmp.lowering.c_printer import PURE_FUNCTIONS, print_prototype
from usmp.lowering.c_printer_expr import c_type, float_literal
from usmp.lowering.convert_to_emitc import (
    MEMREF_ARG_ATTR,
    POOL_ATTR,
    POOLS_ATTR,
    convert_scalar_type,
)
from usmp.lowering.convert_to_emitc_common import USER_POOL_KEY
from usmp.lowering.convert_to_emitc_devices import device_contexts
from usmp.lowering.convert_to_emitc_library import is_library_op
from usmp.lowering.function_calls import FunctionCalls
from usmp.lowering.metadata_devices import (
    devices_arguments,
    devices_declarations,
    devices_parameter,
)
from usmp.lowering.profile import (
    ProfileOperator,
    profile_header,
    profile_operators,
    profile_source,
)

MAIN_SUFFIX = "___tvm_main__"


@dataclass(frozen=True)
class Tensor:
    """A model input or output."""

    name: str
    type: MemRefType
    pool: str | None = None
    offset: int = 0
    c_name: str = ""
    """Its field in ``TVMInputs_<m>``/``TVMOutputs_<m>`` (see ``c_names``)."""
    scale: float | None = None
    """Its quantisation (``tir.input_quantization``): ``real = scale * (q -
    zero_point)``, scale a float32 value; None when it is not quantised."""
    zero_point: int = 0
    quant: QuantNames | None = None
    """The names of its quantisation macros and helpers (``c_names``)."""

    @property
    def c_element(self) -> str:
        return c_type(convert_scalar_type(self.type.get_element_type(), None))  # pyright: ignore

    @property
    def shape_comment(self) -> str:
        dims = "".join(f"[{d}]" for d in self.type.get_shape())
        return f"{self.c_element}{dims}, {self.nbytes} bytes"

    @property
    def nbytes(self) -> int:
        return math.prod(self.type.get_shape()) * self.type.get_element_type().size  # pyright: ignore


@dataclass(frozen=True)
class Pool:
    """A memory pool the entry function takes."""

    name: str
    kind: str  # "workspace", "constant" or "persistent"
    size: int
    alignment: int
    user: bool  # provided by the application (U2/U3) or defined by the library (U1)
    data: emitc.GlobalOp | None = None  # a constant pool's bytes
    c_name: str = ""
    """Its field in ``TVMWorkspaces_<m>``/``TVMParameters_<m>``."""
    array: str = ""
    """The array metadata.c defines for it when the library owns it."""
    macro: str = ""
    """Stem of its macros (``<macro>_WORKSPACE_BUFFER_SIZE``, ...)."""
    tvmgen: str = ""
    """Stem of its TVM-style macro (``<tvmgen>_WORKSPACE_POOL_SIZE``, ...)."""

    @property
    def is_workspace(self) -> bool:
        return self.kind == "workspace"

    @property
    def writable(self) -> bool:
        """Workspace or persistent: in ``TVMWorkspaces_<m>`` when provided."""
        return self.kind != "constant"


@dataclass(frozen=True)
class State:
    """A state buffer (``tir.states``): where it is and its initial bytes."""

    name: str
    pool: str
    offset: int
    initial: bytes


@dataclass(frozen=True)
class ModelInterface:
    """Everything the metadata of one model is generated from."""

    model: str
    main: emitc.FuncOp
    inputs: list[Tensor]
    outputs: list[Tensor]
    pools: list[Pool]  # in the entry function's argument order
    io_in_workspace: bool
    names: CNames
    """The C name of everything in the module (``usmp.lowering.c_names``)."""
    states: tuple[State, ...] = ()
    devices: tuple[str, ...] = ()
    """Devices whose hooks the entry calls (``tir.device_contexts``), in order."""
    profile: tuple[ProfileOperator, ...] | None = None
    """The profiled operator calls (``tir.profile_operators``); None: not
    profiled (``lowering/profile.py``)."""

    @property
    def upper(self) -> str:
        return self.names.model.upper()

    def define(self, pool: Pool, what: str) -> str:
        kind = "PARAMETER" if pool.kind == "constant" else pool.kind.upper()
        return f"{pool.macro}_{kind}_BUFFER_{what}"

    def tvmgen_define(self, pool: Pool) -> str:
        """TVM's size macro of the pool (``TVMGEN_<M>_<POOL>_<KIND>_POOL_SIZE``)."""
        return f"{pool.tvmgen}_{pool.kind.upper()}_POOL_SIZE"

    def data_macro(self, pool: Pool) -> str:
        return f"{pool.macro}_PARAMETER_DATA"

    def typedef(self, what: str) -> str:
        return f"TVM{what}_{self.names.model}"

    def symbol(self, what: str) -> str:
        return f"tvmgen_{self.names.model}_{what}"

    @property
    def entry(self) -> str:
        """The entry function's C name."""
        return self.names.symbol(self.main.sym_name.data)

    def user_pools(self, workspace: bool) -> list[Pool]:
        """The application's pools: writable ones (workspace and persistent,
        ``TVMWorkspaces_<m>``) or constant ones (``TVMParameters_<m>``)."""
        return [p for p in self.pools if p.user and p.writable == workspace]

    def pool_table(self) -> list[str]:
        """One comment line per pool: name, kind, bytes, alignment, owner."""
        lines = []
        for p in self.pools:
            kind = "parameters" if p.kind == "constant" else p.kind
            owner = (
                "provided by the application" if p.user else "defined by the library"
            )
            lines.append(
                f"{p.name:<16} {kind:<10} {p.size:>9} bytes, aligned to {p.alignment}, "
                f"{owner}"
            )
        return lines


def _strings(attr: Attribute | None) -> list[str]:
    if isinstance(attr, ArrayAttr):
        return [a.data for a in attr.data if isinstance(a, StringAttr)]
    return []


def _int(attr: Attribute | None) -> int:
    assert isinstance(attr, IntegerAttr)
    return attr.value.data


def model_interface(
    module: ModuleOp,
    user_pools: Collection[str] | None = None,
    calls: FunctionCalls | None = None,
) -> ModelInterface:
    """Read the interface of the converted (emitc) ``module``; ``user_pools``
    names the pools the application provides (None: those ``usmp.pools``
    marks ``user``, see ``convert-to-emitc{user_pools}``); ``calls``: the
    functions' calls, when the caller walks them for more."""
    mains = [
        op
        for op in module.ops
        if isinstance(op, emitc.FuncOp) and tir.MAIN_FUNC in op.attributes
    ]
    if len(mains) != 1:
        raise located_error(
            module,
            "expected one entry function (emitc.func with tir.main), found "
            f"{len(mains)}; "
            "run aot-lower-main, usmp and convert-to-emitc first",
        )
    main = mains[0]
    symbol = main.sym_name.data
    if not (symbol.startswith("tvmgen_") and symbol.endswith(MAIN_SUFFIX)):
        raise located_error(
            main, f"entry function @{symbol} is not named tvmgen_<model>{MAIN_SUFFIX}"
        )
    model = symbol[len("tvmgen_") : -len(MAIN_SUFFIX)]
    infos = {}
    for entry in module.attributes.get(POOLS_ATTR, ArrayAttr([])).data:  # pyright: ignore
        assert isinstance(entry, DictionaryAttr)
        infos[entry.data["name"].data] = entry.data  # pyright: ignore
    globals_ = {
        op.attributes[POOL_ATTR].data: op  # pyright: ignore[reportAttributeAccessIssue]
        for op in module.ops
        if isinstance(op, emitc.GlobalOp) and POOL_ATTR in op.attributes
    }
    pool_names = _strings(main.attributes.get(tir.POOL_ARGS))
    if user_pools is None:
        user_pools = [
            name
            for name, info in infos.items()
            if USER_POOL_KEY in info and name in pool_names
        ]
    unknown = sorted(set(user_pools) - set(pool_names))
    if unknown:
        raise located_error(
            main,
            f"user pools {', '.join(unknown)} are not pools of model '{model}' "
            f"(its pools: {', '.join(pool_names) or 'none'})",
        )
    pools: list[Pool] = []
    for name in pool_names:
        info = infos.get(name)
        if info is None:
            raise located_error(main, f"pool '{name}' is missing from {POOLS_ATTR}")
        kind = info["kind"].data  # pyright: ignore[reportAttributeAccessIssue]
        if kind == "constant" and name not in globals_ and name not in user_pools:
            raise located_error(
                main, f"constant pool '{name}' has no data (emitc.global)"
            )
        pools.append(
            Pool(
                name,
                kind,
                _int(info["size"]),
                _int(info["alignment"]),
                name in user_pools,
                globals_.get(name),
            )
        )
    arg_attrs = main.arg_attrs.data if main.arg_attrs is not None else ()
    types = [a.data.get(MEMREF_ARG_ATTR) for a in arg_attrs]  # pyright: ignore
    input_names = _strings(main.attributes.get(tir.INPUT_NAMES))
    output_names = _strings(main.attributes.get(tir.OUTPUT_NAMES))
    io_in_workspace = tir.INPUT_ALLOCATIONS in main.attributes
    if io_in_workspace:
        inputs = _workspace_io(main, "input", input_names)
        outputs = _workspace_io(main, "output", output_names)
    else:
        n_in = len(input_names)
        inputs = [Tensor(n, t) for n, t in zip(input_names, types[:n_in], strict=True)]  # pyright: ignore
        outputs = [
            Tensor(n, t)  # pyright: ignore[reportArgumentType]
            for n, t in zip(
                output_names, types[n_in : n_in + len(output_names)], strict=True
            )
        ]
    inputs = _quantized(main, tir.INPUT_QUANTIZATION, inputs)
    outputs = _quantized(main, tir.OUTPUT_QUANTIZATION, outputs)
    names = module_c_names(
        module,
        model=model,
        entry=main,
        pools=[(p.name, p.kind) for p in pools],
        inputs=[t.name for t in inputs],
        outputs=[t.name for t in outputs],
        quantized=[t.scale is not None for t in (*inputs, *outputs)],
        calls=calls,
    )
    quant = iter(names.quantization)
    return ModelInterface(
        model,
        main,
        [
            replace(t, c_name=c, quant=next(quant))
            for t, c in zip(inputs, names.inputs, strict=True)
        ],
        [
            replace(t, c_name=c, quant=next(quant))
            for t, c in zip(outputs, names.outputs, strict=True)
        ],
        [
            replace(
                p,
                c_name=names.pools[p.name].field,
                array=names.pools[p.name].array,
                macro=names.pools[p.name].macro,
                tvmgen=names.pools[p.name].tvmgen,
            )
            for p in pools
        ],
        io_in_workspace,
        names,
        _states(main),
        tuple(device_contexts(main)),
        profile_operators(main),
    )


def _quantized(main: emitc.FuncOp, attr: str, tensors: list[Tensor]) -> list[Tensor]:
    """``tensors`` with their scale and zero point from the entry's
    ``attr`` (``tir.input_quantization``/``tir.output_quantization``, checked
    by ``aot-lower-main``): an entry ``{}``, or no attribute, is a tensor
    that is not quantised."""
    value = main.attributes.get(attr)
    if value is None:
        return tensors
    if not isinstance(value, ArrayAttr) or len(value.data) != len(tensors):
        raise located_error(
            main,
            f"'{attr}' must be an array of one dictionary per tensor "
            f"({len(tensors)}), got {value}",
        )
    quantized = []
    for t, entry in zip(tensors, value.data, strict=True):
        d = entry.data if isinstance(entry, DictionaryAttr) else None
        if d == {}:
            quantized.append(t)
            continue
        scale = d.get("scale") if d is not None else None
        zero_point = d.get("zero_point") if d is not None else None
        if not isinstance(scale, FloatAttr) or not isinstance(zero_point, IntegerAttr):
            raise located_error(
                main,
                f"'{attr}': the entry of '{t.name}' must be {{}} or "
                f"{{scale = <f32>, zero_point = <integer>}}, got {entry}",
            )
        quantized.append(
            replace(t, scale=float(scale.value.data), zero_point=zero_point.value.data)
        )
    return quantized


def _dense_bytes(value: DenseIntOrFPElementsAttr) -> bytes:
    """The little-endian bytes of every element of ``value``: xDSL keeps
    them so, one element after the other (a splat's one element, repeated
    here)."""
    t = value.type
    assert isinstance(t, TensorType)
    element = t.get_element_type()
    assert isinstance(element, FixedBitwidthType)
    data = value.data.data
    count = t.element_count()
    if count > 1 and len(data) == element.size:
        return data * count
    return data


def _states(main: emitc.FuncOp) -> tuple[State, ...]:
    """The entry's ``tir.states``: each state's place and initial bytes."""
    attr = main.attributes.get(tir.STATES)
    if not isinstance(attr, ArrayAttr):
        return ()
    states: list[State] = []
    for entry in attr.data:
        assert isinstance(entry, DictionaryAttr)
        d = entry.data
        value = d["value"]
        assert isinstance(value, DenseIntOrFPElementsAttr)
        data = _dense_bytes(value)
        states.append(
            State(
                d["name"].data,  # pyright: ignore[reportAttributeAccessIssue]
                d["pool"].data,  # pyright: ignore[reportAttributeAccessIssue]
                _int(d["offset"]),
                data,
            )
        )
    return tuple(states)


def module_c_names(
    module: ModuleOp,
    *,
    model: str | None = None,
    entry: emitc.FuncOp | None = None,
    pools: Sequence[tuple[str, bool | str]] = (),
    inputs: Sequence[str] = (),
    outputs: Sequence[str] = (),
    quantized: Sequence[bool] = (),
    calls: FunctionCalls | None = None,
) -> CNames:
    """The C names of ``module``'s functions and globals (constant pools'
    data excepted: metadata.c prints it as the pool's array), and of the
    model's interface (``usmp.lowering.c_names.assign_c_names``)."""
    symbols: list[str] = []
    externs: list[str] = []
    called: set[str] = set(PURE_FUNCTIONS)
    calls = FunctionCalls() if calls is None else calls
    for op in module.ops:
        if is_library_op(op):  # the library's own C is printed from the interface
            continue
        if isinstance(op, emitc.FuncOp):
            (externs if op.is_declaration else symbols).append(op.sym_name.data)
            called.update(calls.opaque(op))
        elif isinstance(op, emitc.GlobalOp) and POOL_ATTR not in op.attributes:
            symbols.append(op.sym_name.data)
    try:
        return assign_c_names(
            model=model,
            entry=entry.sym_name.data if entry is not None else None,
            symbols=symbols,
            externs=externs,
            pools=pools,
            inputs=inputs,
            outputs=outputs,
            external=called,
            quantized=quantized,
        )
    except CNameError as e:
        raise located_error(entry or module, str(e)) from None


def _workspace_io(main: emitc.FuncOp, what: str, names: list[str]) -> list[Tensor]:
    allocations = main.attributes[f"tir.{what}_allocations"]
    types = main.attributes[f"tir.{what}_types"]
    assert isinstance(allocations, ArrayAttr) and isinstance(types, ArrayAttr)
    tensors = []
    for name, where, type_ in zip(names, allocations.data, types.data, strict=True):
        assert isinstance(where, DictionaryAttr) and isinstance(type_, MemRefType)
        tensors.append(
            Tensor(name, type_, where.data["pool"].data, _int(where.data["offset"]))  # pyright: ignore
        )
    return tensors


def _struct(tag: str, typedef: str, fields: list[str]) -> list[str]:
    return [
        f"typedef struct {tag} {{",
        *(f"  {f}" for f in fields),
        f"}} {typedef};",
        "",
    ]


def run_parameters(m: ModelInterface) -> list[str]:
    params = []
    if not m.io_in_workspace:
        params += [f"{m.typedef('Inputs')}* inputs", f"{m.typedef('Outputs')}* outputs"]
    if m.user_pools(workspace=True):
        params.append(f"{m.typedef('Workspaces')}* workspaces")
    if m.user_pools(workspace=False):
        params.append(f"{m.typedef('Parameters')}* parameters")
    return params + devices_parameter(m)


def _map_signature(m: ModelInterface, what: str) -> str:
    arg = (
        f"{m.typedef('Workspaces')}* workspaces"
        if m.user_pools(workspace=True)
        else "void"
    )
    return f"{m.typedef(what.capitalize())} {m.symbol('map_' + what)}({arg})"


def io_macros(m: ModelInterface) -> list[tuple[Tensor, str]]:
    """Each input, then each output, with its TVM size macro
    (``TVMGEN_<M>_<TENSOR>_SIZE``, bytes)."""
    return list(zip([*m.inputs, *m.outputs], m.names.io_macros, strict=True))


def c_text(text: str) -> str:
    """``text`` (a tensor name) safe inside a C comment, a string literal and
    a printf format: other characters than printable ASCII, quotes,
    backslashes, ``?`` (trigraphs), ``*``, ``/`` and ``%`` become ``_``."""
    return "".join(
        ch if ch.isascii() and ch.isprintable() and ch not in '"\\?*/%' else "_"
        for ch in text
    )


def header_name(m: ModelInterface) -> str:
    """The interface header's file name, ``tvmgen_<model>.h``."""
    return library_files(m.names.model)["header"]


def call_setup(
    m: ModelInterface, pool_var: Callable[[Pool], str]
) -> tuple[list[str], list[str], list[str]]:
    """How an application sets up a call of ``run``, as C statements: the
    structs of the pools it provides (``pool_var(p)``: its array for pool
    ``p``), the input and output structs, and ``run``'s arguments. Shared by
    the header's usage comment and the kit's example."""
    pool_lines: list[str] = []
    pool_args: list[str] = []
    for workspace, what in ((True, "Workspaces"), (False, "Parameters")):
        pools = m.user_pools(workspace)
        if pools:
            var = what.lower()
            members = ", ".join(pool_var(p) for p in pools)
            pool_lines.append(f"{m.typedef(what)} {var} = {{ {members} }};")
            pool_args.append(f"&{var}")
    if m.devices:
        contexts = ", ".join("0" for _ in m.devices)
        pool_lines.append(f"{m.typedef('Devices')} devices = {{ {contexts} }};")
        pool_args.append("&devices")
    if m.io_in_workspace:
        ws = "&workspaces" if m.user_pools(workspace=True) else ""
        io_lines = [
            f"{m.typedef('Inputs')} in = {m.symbol('map_inputs')}({ws});",
            f"{m.typedef('Outputs')} out = {m.symbol('map_outputs')}({ws});",
        ]
        return pool_lines, io_lines, pool_args
    ins = ", ".join(t.c_name for t in m.inputs) or "0"
    outs = ", ".join(t.c_name for t in m.outputs) or "0"
    io_lines = [
        f"{m.typedef('Inputs')} in = {{ {ins} }};",
        f"{m.typedef('Outputs')} out = {{ {outs} }};",
    ]
    return pool_lines, io_lines, ["&in", "&out", *pool_args]


def _usage(m: ModelInterface) -> list[str]:
    """How an application calls the model: the header's opening comment."""
    lines = [" * Use:", f' *   #include "{header_name(m)}"']
    for p in m.pools:
        if p.user:
            ctype = "uint8_t" if p.writable else "const uint8_t"
            init = "" if p.writable else f" = {m.data_macro(p)}"
            lines.append(
                f" *   static {ctype} my_{p.c_name}[{m.define(p, 'SIZE')}]{init};"
                f"  (aligned to {m.define(p, 'ALIGNMENT')})"
            )
    pool_lines, io_lines, run_args = call_setup(m, lambda p: f"my_{p.c_name}")
    lines += [f" *   {line}" for line in pool_lines]
    if m.states:
        lines.append(
            f" *   {m.symbol('init')}({init_arguments(m)});"
            "  (once, and again to reset the model's state)"
        )
    if m.io_in_workspace:
        lines += [f" *   {line}" for line in io_lines]
        lines += [
            " *   ... write the inputs through in.<input>, then",
            f" *   {m.symbol('run')}({', '.join(run_args)});",
            " *   ... and read the outputs through out.<output>.",
        ]
    else:
        for t, macro in io_macros(m):
            n = f"{macro} / sizeof({t.c_element})"
            lines.append(f" *   static {t.c_element} {t.c_name}[{n}];")
        lines += [f" *   {line}" for line in io_lines]
        lines.append(f" *   {m.symbol('run')}({', '.join(run_args)});")
    quantized = quantized_tensors(m)
    if quantized:
        _, t, names = quantized[0]
        lines += [
            " * Quantised inputs and outputs have TFLite's scale and zero point",
            " * (..._SCALE, ..._ZERO_POINT) and helpers, e.g.",
            f" *   q = {names.quantize}(x);  x = {names.dequantize}(q);",
        ]
    lines += [
        " * Build: the CMakeLists.txt or Makefile next to codegen/ builds the",
        f" * static library libtvmgen_{m.names.model}.a (link it and libm);",
        " * example/ is a host application that reads inputs from files and runs",
        " * the model.",
        " * Nothing here allocates memory: every buffer is at an offset in a pool.",
    ]
    return lines


def _define(lines: list[str], name: str, value: int, doc: str) -> None:
    lines += [f"/** {doc} */", f"#define {name} {value}"]


def metadata_header(
    m: ModelInterface,
    banner: bool = True,
    includes: Sequence[str] = (),
    declarations: Sequence[str] = (),
) -> str:
    """``tvmgen_<model>.h``: the model's whole C interface -- TVM's size
    macros (``TVMGEN_<MODEL>_<TENSOR>_SIZE``, ``..._WORKSPACE_SIZE``,
    ``..._<POOL>_WORKSPACE_POOL_SIZE``, ``..._<POOL>_CONSTANT_POOL_SIZE``),
    the RFC's pool macros, I/O and pool structs, and ``run``; ``includes``
    and ``declarations`` (lines) are added after the standard includes and
    after ``run`` (the packed entry, ``usmp.lowering.metadata_packed``)."""
    guard = f"TVMGEN_{m.upper}_H_"
    lines = (
        [
            "/*",
            f' * {header_name(m)}: interface of model "{m.model}", generated by '
            "usmp-opt",
            " * (TVM AOT's tvmgen_<model>.h and the USMP RFC's U1-U3 interface).",
            " *",
            " * Pools, planned by usmp:",
            *(f" *   {line}" for line in m.pool_table()),
            " *",
            *_usage(m),
            " */",
        ]
        if banner
        else []
    )
    lines += [
        f"#ifndef {guard}",
        f"#define {guard}",
        "",
        "#include <stdbool.h>",
        "#include <stdint.h>",
        *includes,
        "",
        "#ifdef __cplusplus",
        'extern "C" {',
        "#endif",
        "",
    ]
    for k, (t, macro) in enumerate(io_macros(m)):
        what = "Input" if k < len(m.inputs) else "Output"
        _define(
            lines, macro, t.nbytes, f'{what} "{c_text(t.name)}": {t.shape_comment}.'
        )
    lines += quantization_macros(m)
    workspace = sum(p.size for p in m.pools if p.is_workspace)
    _define(
        lines,
        f"TVMGEN_{m.upper}_WORKSPACE_SIZE",
        workspace,
        "Workspace bytes, all workspace pools together.",
    )
    for p in m.pools:
        doc = {
            "constant": "constant (parameter)",
            "persistent": "persistent (state kept across runs)",
        }.get(p.kind, p.kind)
        _define(lines, m.tvmgen_define(p), p.size, f'Pool "{p.name}": {doc} bytes.')
    lines += ["", "/* The same sizes and the pools' alignments (USMP RFC). */"]
    for p in m.pools:
        lines.append(f"#define {m.define(p, 'SIZE')} {p.size}")
        lines.append(f"#define {m.define(p, 'ALIGNMENT')} {p.alignment}")
    lines.append("")
    for what, tensors in (("Inputs", m.inputs), ("Outputs", m.outputs)):
        lines.append(f"/* The model's {what.lower()}, in order. */")
        fields = [
            f"{t.c_element}* {t.c_name}; /* {t.shape_comment} */" for t in tensors
        ] or [f"uint8_t {placeholder(what)}; /* none (C has no empty struct) */"]
        lines += _struct(m.symbol(what.lower()), m.typedef(what), fields)
    for workspace, what, tag in (
        (True, "Workspaces", "workspace_pools"),
        (False, "Parameters", "parameter_pools"),
    ):
        pools = m.user_pools(workspace)
        if not pools:
            continue
        ctype = "uint8_t" if workspace else "const uint8_t"
        lines.append(
            f"/* {what[:-1]} pools the application provides, "
            "aligned as defined above. */"
        )
        fields = [
            f"{ctype}* {p.c_name}; /* {m.define(p, 'SIZE')} bytes */" for p in pools
        ]
        lines += _struct(m.symbol(tag), m.typedef(what), fields)
    lines += quantization_helpers(m)
    lines += devices_declarations(m)
    if m.profile is not None:
        lines += profile_header(m.symbol, m.upper, len(m.profile))
    if m.states:
        lines += [
            "/**",
            " * Writes the initial value of the model's state (its persistent",
            " * pools): call it once before the first run, and again to reset the",
            " * model. run updates the state; returns 0.",
            " */",
            f"{_init_signature(m)};",
            "",
        ]
    if m.io_in_workspace:
        lines.append(
            "/* Inputs and outputs live in the workspace: write inputs and read "
            "outputs here. */"
        )
        lines += [
            _map_signature(m, "inputs") + ";",
            _map_signature(m, "outputs") + ";",
            "",
        ]
    lines += [
        "/**",
        " * Runs the model once: reads the inputs, writes the outputs; returns 0.",
        " * Not reentrant: a run uses its workspace pools whole, so runs that share",
        " * a workspace (or the library-defined one) must not overlap.",
        " */",
    ]
    lines.append(
        f"int32_t {m.symbol('run')}({', '.join(run_parameters(m)) or 'void'});"
    )
    lines += ["", *declarations]
    lines += ["#ifdef __cplusplus", "}", "#endif", "", f"#endif /* {guard} */", ""]
    return "\n".join(lines)


def quantized_tensors(m: ModelInterface) -> list[tuple[str, Tensor, QuantNames]]:
    """The quantised inputs, then outputs: (``Input``/``Output``, tensor, its
    macro and helper names)."""
    return [
        (what, t, t.quant)
        for what, tensors in (("Input", m.inputs), ("Output", m.outputs))
        for t in tensors
        if t.quant is not None
    ]


def quantization_macros(m: ModelInterface) -> list[str]:
    """``TVMGEN_<M>_<TENSOR>_SCALE`` (a float literal that reads back as the
    tensor's float32 scale) and ``..._ZERO_POINT`` of each quantised input and
    output."""
    lines: list[str] = []
    for what, t, names in quantized_tensors(m):
        assert t.scale is not None
        lines += [
            f'/** {what} "{c_text(t.name)}" is quantised: '
            "real = SCALE * (q - ZERO_POINT). */",
            f"#define {names.scale} {float_literal(t.scale, Float32Type())}",
            f"#define {names.zero_point} {int_text(t.zero_point)}",
        ]
    return lines


def quantized_range(t: Tensor) -> tuple[int, int] | None:
    """The range of ``t``'s integer type when the header has quantise /
    dequantise helpers for it (types of 8 and 16 bits, those whose range a
    float holds exactly), else None."""
    element = t.type.get_element_type()
    if not isinstance(element, IntegerType) or element.width.data > 16:
        return None
    bits = element.width.data
    if element.signedness.data == Signedness.UNSIGNED:
        return 0, 2**bits - 1
    return -(2 ** (bits - 1)), 2 ** (bits - 1) - 1


def quantization_helpers(m: ModelInterface) -> list[str]:
    """``static inline`` ``tvmgen_<m>_quantize_<tensor>(float)`` (TFLite's
    QUANTIZE: ``x / scale`` in float, rounded half away from zero as
    ``std::round``, plus the zero point, saturated; NaN gives the lowest
    value) and ``tvmgen_<m>_dequantize_<tensor>(q)`` (DEQUANTIZE: ``scale *
    (q - zero_point)``, the float product TFLite's double one rounds to) for
    each quantised input and output of 8 or 16 bits. Plain C99 (no libm)."""
    lines: list[str] = []
    for what, t, names in quantized_tensors(m):
        ctype = t.c_element
        limits = quantized_range(t)
        if limits is None:
            lines += [
                f'/* {what} "{c_text(t.name)}" ({ctype}): no quantise/dequantise '
                "helpers (8- and 16-bit types only); use its SCALE and ZERO_POINT. */",
                "",
            ]
            continue
        low, high = limits
        # v <= below rounds to a q under the range, v > above to one over it
        below, above = low - t.zero_point - 1, high - t.zero_point + 1
        lines += [
            "/**",
            f' * {what} "{c_text(t.name)}": x quantised as TFLite\'s QUANTIZE does',
            " * (x / scale in float, rounded half away from zero, plus the zero point,",
            f" * saturated to [{low}, {high}]; NaN gives {low}).",
            " */",
            f"static inline {ctype} {names.quantize}(float x) {{",
            f"  float v = x / {names.scale};",
            "  int32_t q;",
            f"  if (!(v > {below}.0f)) return ({ctype}){int_text(low)};",
            f"  if (v > {above}.0f) return ({ctype}){high};",
            "  q = (int32_t)v; /* toward zero, then half away from zero: */",
            "  if (v - (float)q >= 0.5f) q += 1;",
            "  else if ((float)q - v >= 0.5f) q -= 1;",
            f"  q += {names.zero_point};",
            f"  return ({ctype})(q < {int_text(low)} ? {int_text(low)} : "
            f"q > {high} ? {high} : q);",
            "}",
            f'/** {what} "{c_text(t.name)}": q as a real value '
            "(TFLite's DEQUANTIZE). */",
            f"static inline float {names.dequantize}({ctype} q) {{",
            f"  return {names.scale} * (float)((int32_t)q - {names.zero_point});",
            "}",
            "",
        ]
    return lines


def int_text(value: int) -> str:
    """``value`` as a C expression (a negative one parenthesised)."""
    return f"({value})" if value < 0 else str(value)


def _init_signature(m: ModelInterface) -> str:
    persistent = [p for p in m.pools if p.kind == "persistent" and p.user]
    arg = f"{m.typedef('Workspaces')}* workspaces" if persistent else "void"
    return f"int32_t {m.symbol('init')}({arg})"


def init_arguments(m: ModelInterface, workspaces: str = "&workspaces") -> str:
    """The argument of ``tvmgen_<m>_init`` (empty when the library owns the
    persistent pools)."""
    return workspaces if any(p.kind == "persistent" and p.user for p in m.pools) else ""


def _init_function(m: ModelInterface) -> list[str]:
    """``tvmgen_<m>_init``: each state's initial bytes into its pool (a fill
    when they are all equal, else a copy of a constant table)."""
    lines = [f"{_init_signature(m)} {{", "  uint32_t i;"]
    for k, state in enumerate(m.states):
        pool = _pool_pointer(m, state.pool)
        n = len(state.initial)
        where = f"{pool}[{state.offset} + i]"
        lines.append(f"  /* {c_text(state.name)}: {n} bytes at {state.offset} */")
        if len(set(state.initial)) == 1:
            lines.append(f"  for (i = 0; i < {n}; ++i) {where} = {state.initial[0]};")
            continue
        table = f"state_{k}_initial"
        values = ", ".join(str(b) for b in state.initial)
        lines.append(f"  {{ static const uint8_t {table}[{n}] = {{ {values} }};")
        lines.append(f"    for (i = 0; i < {n}; ++i) {where} = {table}[i]; }}")
    lines += ["  return 0;", "}", ""]
    return lines


def placeholder(what: str) -> str:
    """The one member of ``TVMInputs_<m>``/``TVMOutputs_<m>`` of a model
    without inputs/outputs (C has no empty struct)."""
    return f"no_{what.lower()}"


def pool_variable(m: ModelInterface, p: Pool) -> str:
    return p.array


def _pool_pointer(m: ModelInterface, pool: str) -> str:
    p = next(p for p in m.pools if p.name == pool)
    if not p.user:
        return pool_variable(m, p)
    return f"{'workspaces' if p.writable else 'parameters'}->{p.c_name}"


def metadata_source(
    m: ModelInterface, prototype: bool = True, definitions: Sequence[str] = ()
) -> list[str]:
    """The lines of metadata.c (after its includes): library-defined pools,
    the entry function's prototype (unless defined above), ``run`` and
    ``definitions`` (lines)."""
    from usmp.lowering.c_printer import global_pieces

    lines: list[str] = []
    for p in m.pools:
        if p.user:
            continue
        size = m.define(p, "SIZE") if p.size > 0 else "1"
        if p.writable:
            what = "workspace" if p.is_workspace else "persistent state"
            lines.append(
                f"/* {p.name}: {what}, defined here (the application provides none). */"
            )
            lines.append(
                f"USMP_ALIGNED({p.alignment}) static uint8_t "
                f"{pool_variable(m, p)}[{size}];"
            )
        else:
            assert p.data is not None
            lines.append(f"/* {p.name}: the model's parameters. */")
            # the last piece ends the definition: stripping it strips the
            # text (a 3 MB pool's text is copied once, by the join)
            pieces = global_pieces(p.data, name=pool_variable(m, p), static=True)
            pieces[-1] = pieces[-1].rstrip()
            lines.append("".join(pieces))
        lines.append("")
    if prototype:
        lines += [print_prototype(m.main, m.names).rstrip(), ""]
    if m.io_in_workspace:
        for what, tensors in (("inputs", m.inputs), ("outputs", m.outputs)):
            lines.append(_map_signature(m, what) + " {")
            lines.append(f"  {m.typedef(what.capitalize())} io;")
            if not tensors:
                lines.append(f"  io.{placeholder(what)} = 0;")
            for t in tensors:
                assert t.pool is not None
                lines.append(
                    f"  io.{t.c_name} = ({t.c_element}*)"
                    f"&{_pool_pointer(m, t.pool)}[{t.offset}];"
                )
            lines += ["  return io;", "}", ""]
    args = []
    unused = []
    if not m.io_in_workspace:
        args += [f"inputs->{t.c_name}" for t in m.inputs]
        args += [f"outputs->{t.c_name}" for t in m.outputs]
        unused = [
            w for w, ts in (("inputs", m.inputs), ("outputs", m.outputs)) if not ts
        ]
    args += [_pool_pointer(m, p.name) for p in m.pools]
    args += devices_arguments(m)
    lines.append(
        f"int32_t {m.symbol('run')}({', '.join(run_parameters(m)) or 'void'}) {{"
    )
    lines += [f"  (void){name};" for name in unused]
    if m.main.function_type.outputs.data:  # status of the packed calls
        lines += [f"  return {m.entry}({', '.join(args)});", "}", ""]
    else:
        lines.append(f"  {m.entry}({', '.join(args)});")
        lines += ["  return 0;", "}", ""]
    if m.states:
        lines += _init_function(m)
    if m.profile is not None:
        names = {o.function: m.names.symbol(o.function) for o in m.profile}
        lines += profile_source(m.symbol, m.profile, names)
    lines += list(definitions)
    return lines


def parameters_header(m: ModelInterface) -> str | None:
    """``parameters.h``: initializer macros for application-provided parameter
    pools (``const uint8_t p[SIZE] = TVM_M_<POOL>_PARAMETER_DATA;``)."""
    from usmp.lowering.c_printer_expr import initializer

    pools = [p for p in m.user_pools(workspace=False) if p.data is not None]
    if not pools:
        return None
    guard = f"TVMGEN_{m.upper}_PARAMETERS_H_"
    lines = [
        f'/* Parameter data of model "{m.model}" for the pools the application '
        "places itself. */",
        f"#ifndef {guard}",
        f"#define {guard}",
        "",
    ]
    for p in pools:
        value = p.data.initial_value  # pyright: ignore[reportOptionalMemberAccess]
        lines.append(f"#define {m.data_macro(p)} {{ \\")
        lines += [f"  {line} \\" for line in initializer(value)]  # pyright: ignore
        lines += ["}", f"#define {p.tvmgen}_CONSTANT_POOL_DATA {m.data_macro(p)}", ""]
    lines += [f"#endif /* {guard} */", ""]
    return "\n".join(lines)
