"""The library around the entry function, in emitc (convert-to-emitc's last
step), so that ``mlir-translate --mlir-to-cpp`` alone gives a complete C
library: what usmp-opt's own printer writes into ``tvmgen_<model>.h`` and
``tvmgen_<model>.c`` (U1: the library defines every pool).

Added at the end of the module, each op marked ``usmp.library``:

* ``emitc.verbatim``: the ``USMP_ALIGNED`` macro (after the includes) and
  the model's interface
  (``usmp.lowering.metadata.metadata_header``: size macros, the
  ``TVMInputs_<m>``/``TVMOutputs_<m>`` structs, the prototypes) -- C
  declarations emitc has no ops for;
* before every global with an alignment (the constant pools' data), an
  ``emitc.verbatim "USMP_ALIGNED(n)"``, which C reads as part of the
  declaration that follows;
* one ``emitc.global static`` byte array per workspace pool, aligned the
  same way;
* ``emitc.func @tvmgen_<m>_run`` reading the I/O pointers from the structs
  (``emitc.member_of_ptr``) and calling the entry function with the pools;
  with I/O in the workspace, ``@tvmgen_<m>_map_inputs``/``_map_outputs``
  returning the structs that point into the pool, and ``run`` takes nothing.

usmp-opt's own C printer skips these ops (``is_library_op``): it prints the
same declarations from the interface itself. Running the step twice changes
nothing. A module without an entry function (``tir.main``) gets nothing.
"""

from __future__ import annotations

from xdsl.dialects.builtin import (
    FunctionType,
    IndexType,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    Signedness,
    StringAttr,
    UnitAttr,
    i32,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue

from usmp.dialects import emitc, tir
from usmp.lowering.convert_to_emitc_common import ALIGNMENT_ATTR, convert_scalar_type

LIBRARY_ATTR = "usmp.library"
_BYTE = IntegerType(8, Signedness.UNSIGNED)


def _bytes(size: int) -> emitc.ArrayType:
    return emitc.ArrayType([max(1, size)], _BYTE)  # pyright: ignore[reportArgumentType]


def is_library_op(op: Operation) -> bool:
    return LIBRARY_ATTR in op.attributes


def _mark(op: Operation) -> Operation:
    op.attributes[LIBRARY_ATTR] = UnitAttr()
    return op


def _verbatim(text: str) -> Operation:
    return _mark(emitc.VerbatimOp(text))


class _Builder:
    """Appends ops to one block."""

    def __init__(self, block: Block):
        self.block = block

    def add(self, op: Operation) -> SSAValue:
        self.block.add_op(op)
        return op.results[0] if op.results else None  # pyright: ignore[reportReturnType]

    def member(self, pointer: SSAValue, name: str, type_: Attribute) -> SSAValue:
        """``pointer->name`` (a struct pointer argument, via a variable: MLIR
        22's ``member_of_ptr`` reads an lvalue)."""
        var = self.add(emitc.VariableOp(emitc.LValueType(pointer.type)))
        self.add(emitc.AssignOp(var, pointer))
        return self.add(emitc.LoadOp(self.add(emitc.MemberOfPtrOp(var, name, type_))))

    def pool_pointer(self, global_: str, size: int, type_: Attribute) -> SSAValue:
        """The pool's array as the pointer type ``type_`` the entry takes."""
        array = self.add(emitc.GetGlobalOp(global_, _bytes(size)))
        pointer = self.add(emitc.CastOp(array, emitc.PointerType(_BYTE)))
        if type_ != pointer.type:
            pointer = self.add(emitc.CastOp(pointer, type_))
        return pointer

    def at_offset(self, pool: SSAValue, offset: int, type_: Attribute) -> SSAValue:
        """``(T*)&pool[offset]``."""
        index = self.add(
            emitc.ConstantOp(IntegerAttr(offset, IndexType()), emitc.PtrDiffT())
        )
        element = self.add(emitc.SubscriptOp(pool, [index]))
        address = self.add(
            emitc.ApplyOp.create(
                operands=[element],
                result_types=[emitc.PointerType(_BYTE)],
                properties={"applicableOperator": StringAttr("&")},
            )
        )
        return self.add(emitc.CastOp(address, type_))


def add_library(module: ModuleOp) -> None:
    """Append the library ops to ``module`` (converted to emitc)."""
    from usmp.lowering.c_printer import ALIGNED_MACRO
    from usmp.lowering.metadata import (
        MAIN_SUFFIX,
        metadata_header,
        model_interface,
        placeholder,
    )

    if any(is_library_op(op) for op in module.ops):
        return
    main = next(
        (
            op
            for op in module.ops
            if isinstance(op, emitc.FuncOp) and tir.MAIN_FUNC in op.attributes
        ),
        None,
    )
    symbol = main.sym_name.data if main is not None else ""
    if (
        main is None
        or not symbol.startswith("tvmgen_")
        or not symbol.endswith(MAIN_SUFFIX)
    ):
        return
    m = model_interface(module, user_pools=())
    block = module.body.block
    first = next(op for op in block.ops if not isinstance(op, emitc.IncludeOp))
    block.insert_op_before(_verbatim(ALIGNED_MACRO.rstrip("\n")), first)
    for op in list(block.ops):
        alignment = op.attributes.get(ALIGNMENT_ATTR)
        if isinstance(op, emitc.GlobalOp) and isinstance(alignment, IntegerAttr):
            block.insert_op_before(
                _verbatim(f"USMP_ALIGNED({alignment.value.data})"), op
            )
    block.add_op(_verbatim(metadata_header(m, banner=False).rstrip("\n")))
    globals_: dict[str, str] = {}
    for p in m.pools:
        if p.data is not None:
            globals_[p.name] = p.data.sym_name.data
            continue
        globals_[p.name] = p.array
        block.add_op(_verbatim(f"USMP_ALIGNED({p.alignment})"))
        array = _bytes(p.size)
        block.add_op(_mark(emitc.GlobalOp(p.array, array, static=True)))
    param_types = list(main.function_type.inputs)
    context_types = param_types[len(param_types) - len(m.devices) :]
    param_types = param_types[: len(param_types) - len(m.devices)]
    n_io = 0 if m.io_in_workspace else len(m.inputs) + len(m.outputs)
    pool_types = dict(zip([p.name for p in m.pools], param_types[n_io:], strict=True))
    sizes = {p.name: max(1, p.size) for p in m.pools}

    if m.io_in_workspace:
        for what, tensors in (("inputs", m.inputs), ("outputs", m.outputs)):
            struct = emitc.OpaqueType(StringAttr(m.typedef(what.capitalize())))
            func = emitc.FuncOp(
                m.symbol(f"map_{what}"), FunctionType.from_lists([], [struct])
            )
            b = _Builder(func.body.block)
            io = b.add(emitc.VariableOp(emitc.LValueType(struct)))
            if not tensors:
                zero = b.add(emitc.ConstantOp(IntegerAttr(0, _BYTE)))
                field = b.add(emitc.MemberOp(io, placeholder(what), _BYTE))
                b.add(emitc.AssignOp(field, zero))
            for t in tensors:
                assert t.pool is not None
                pool = b.pool_pointer(
                    globals_[t.pool], sizes[t.pool], emitc.PointerType(_BYTE)
                )
                element = convert_scalar_type(t.type.get_element_type(), None)  # pyright: ignore
                value = b.at_offset(pool, t.offset, emitc.PointerType(element))
                b.add(
                    emitc.AssignOp(
                        b.add(emitc.MemberOp(io, t.c_name, value.type)), value
                    )
                )
            b.add(emitc.ReturnOp(b.add(emitc.LoadOp(io))))
            block.add_op(_mark(func))

    inputs: list[Attribute] = []
    if not m.io_in_workspace:
        inputs = [
            emitc.PointerType(emitc.OpaqueType(StringAttr(m.typedef(what))))
            for what in ("Inputs", "Outputs")
        ]
    if m.devices:
        inputs.append(
            emitc.PointerType(emitc.OpaqueType(StringAttr(m.typedef("Devices"))))
        )
    run = emitc.FuncOp(m.symbol("run"), FunctionType.from_lists(inputs, [i32]))
    b = _Builder(run.body.block)
    args: list[SSAValue] = []
    if not m.io_in_workspace:
        tensors = [*m.inputs, *m.outputs]
        structs = [run.body.block.args[0]] * len(m.inputs) + [
            run.body.block.args[1]
        ] * len(m.outputs)
        for t, struct, type_ in zip(tensors, structs, param_types, strict=False):
            args.append(b.member(struct, t.c_name, type_))
    for p in m.pools:
        args.append(b.pool_pointer(globals_[p.name], sizes[p.name], pool_types[p.name]))
    devices = run.body.block.args[-1] if m.devices else None
    for d, type_ in zip(m.devices, context_types, strict=True):
        assert devices is not None
        args.append(b.member(devices, d, type_))
    call = emitc.CallOp(symbol, args, main.function_type.outputs.data)
    b.block.add_op(call)
    if call.results:  # packed calls inside: main returns their status
        b.add(emitc.ReturnOp(call.results[0]))
    else:
        b.add(emitc.ReturnOp(b.add(emitc.ConstantOp(IntegerAttr(0, i32)))))
    block.add_op(_mark(run))
