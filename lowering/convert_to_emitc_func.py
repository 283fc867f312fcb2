"""``func`` and ``tir`` to ``emitc``: functions, calls, returns.

``func.func`` -> ``emitc.func``: the signature converted (pool arguments by
their pool's kind, see ``convert_to_emitc_module.py``), the body moved over
with its arguments retyped (a memref argument materialised back to its
memref type for the ops still to convert), argument attribute ``usmp.memref``
keeping each memref argument's type and the ``tir.*`` attributes kept in
builtin form. A declaration becomes an ``extern`` private ``emitc.func``.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects import func
from xdsl.dialects.builtin import (
    ArrayAttr,
    DictionaryAttr,
    FunctionType,
    MemRefType,
    ModuleOp,
    StringAttr,
    i32,
)
from xdsl.ir import Attribute, Operation, Region
from xdsl.pattern_rewriter import (
    PatternRewriter,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint

from usmp.diagnostics import located_error
from usmp.dialects import emitc, tir
from usmp.dialects.tir import POOL_ARGS
from usmp.dialects.tir_custom import RETURNS_STATUS
from usmp.lowering import cmsis_nn, dsp
from usmp.lowering.convert_to_emitc_common import (
    MEMREF_ARG_ATTR,
    TYPES,
    ConversionState,
    EmitcPattern,
    convert_type,
)
from usmp.lowering.convert_to_emitc_devices import (
    DEVICE_CONTEXT,
    DeviceHookLowering,
    add_context_arguments,
    context_argument,
    mark_status,
)
from usmp.lowering.convert_to_emitc_ir import replace_uses
from usmp.lowering.convert_to_emitc_memref import first_element_pointer
from usmp.lowering.convert_to_emitc_module import (
    ModuleInfo,
    builtin_only,
    pool_arg_type,
)
from usmp.lowering.convert_to_emitc_packed import check_status


def _strings(attr: Attribute | None) -> list[str]:
    if isinstance(attr, ArrayAttr):
        return [a.data for a in attr.data if isinstance(a, StringAttr)]
    return []


@dataclass(frozen=True)
class FuncOpLowering(EmitcPattern):
    """``func.func`` -> ``emitc.func``; opens the function whose body the
    walker converts next (``ConversionState.start_function``)."""

    info: ModuleInfo

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: func.FuncOp, rewriter: PatternRewriter) -> None:
        pool_names = _strings(op.attributes.get(POOL_ARGS))
        inputs = list(op.function_type.inputs.data)
        first_pool = len(inputs) - len(pool_names)
        arg_types = [
            pool_arg_type(self.info, op, pool_names[i - first_pool], t)
            if i >= first_pool
            else convert_type(t, op)
            for i, t in enumerate(inputs)
        ]
        # TVM's void* device contexts, last
        arg_types += add_context_arguments(
            op, op.body.block if op.body.blocks else None
        )
        outputs = [convert_type(t, op) for t in op.function_type.outputs.data]
        if len(outputs) > 1:
            raise located_error(op, "a C function returns at most one value")
        ftype = FunctionType.from_lists(arg_types, outputs)
        if len(op.body.blocks) > 1:
            raise located_error(op, "functions with several blocks are not supported")
        if op.body.blocks:
            body = self._body(op, arg_types, rewriter)
            new = emitc.FuncOp(op.sym_name.data, ftype, body)
        else:
            new = emitc.FuncOp(op.sym_name.data, ftype, Region(), ["extern"])
            new.attributes["sym_visibility"] = StringAttr("private")
        new.arg_attrs = ArrayAttr(  # pyright: ignore[reportAttributeAccessIssue]
            DictionaryAttr({MEMREF_ARG_ATTR: t} if isinstance(t, MemRefType) else {})
            for t in [*inputs, *arg_types[len(inputs) :]]
        )
        for name, attr in op.attributes.items():
            if name.startswith("tir.") and (value := builtin_only(attr)) is not None:
                new.attributes[name] = value
        new.location = op.location
        rewriter.replace(op, new)
        if DEVICE_CONTEXT in op.attributes or RETURNS_STATUS in op.attributes:
            mark_status(self.state, new)  # an operator of a device, a user kernel's
        if new.body.blocks:
            self.state.start_function(new)

    def _body(
        self, op: func.FuncOp, arg_types: list[Attribute], rewriter: PatternRewriter
    ) -> Region:
        """The body, its arguments retyped; memref arguments materialised."""
        block = op.body.block
        at = InsertPoint.at_start(block)
        for arg, type_ in zip(block.args, arg_types, strict=True):
            if arg.type == type_:
                continue
            # rewriter.replace_value_with_new_type, with the uses moved once
            new_arg = block.insert_arg(type_, arg.index)
            new_arg.name_hint = arg.name_hint
            target = new_arg
            if isinstance(arg.type, MemRefType):
                cast = TYPES.materialize(new_arg, arg.type)
                rewriter.insert(cast, at)
                at = InsertPoint.after(cast)
                self.state.casts.append(cast)
                (target,) = cast.results
            replace_uses(arg, target)
            block.erase_arg(arg)
        return rewriter.move_region_contents_to_new_regions(op.body)


class ReturnOpLowering(EmitcPattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: func.ReturnOp, rewriter: PatternRewriter) -> None:
        lw = self.lowering(op, rewriter)
        value = lw.value(op.arguments[0]) if op.arguments else None
        lw.emit(emitc.ReturnOp(value))
        lw.replace()


class CallExternLowering(EmitcPattern):
    """``tir.call_extern`` of a CMSIS-NN function: the C that packs its
    scalars into CMSIS-NN's structs and calls it (``cmsis_nn.c_call``), in
    a block of its own; buffers passed as their first element's address."""

    @op_type_rewrite_pattern
    def match_and_rewrite(
        self, op: tir.CallExternOp, rewriter: PatternRewriter
    ) -> None:
        core = op.attributes.get(cmsis_nn.CORE)
        callee = op.callee.data
        if callee not in cmsis_nn.CALLEES or not isinstance(core, StringAttr):
            raise located_error(
                op,
                f"tir.call_extern of '{callee}': no C for it (supported: CMSIS-NN's "
                f"{', '.join(cmsis_nn.CALLEES)}, with a {cmsis_nn.CORE} attribute)",
            )
        lw = self.lowering(op, rewriter)
        lw.include("arm_nnfunctions.h")
        pointers = iter([first_element_pointer(lw, v, op) for v in op.args])
        lines = cmsis_nn.c_call(callee, op.scalars.get_values(), core.data)
        lw.emit(emitc.VerbatimOp("{{"))
        for line in lines:
            count = line.count("{}")
            lw.emit(emitc.VerbatimOp(line, [next(pointers) for _ in range(count)]))
        lw.emit(emitc.VerbatimOp("}"))
        lw.replace()


@dataclass(frozen=True)
class CallOpLowering(EmitcPattern):
    """``func.call`` and unpacked ``tir.call``: ``emitc.call`` of a function
    of the module. A ``tir.call`` passes a view at an offset (a slice
    ``aot-lower-main`` aliases) as the address of its first element."""

    info: ModuleInfo

    @op_type_rewrite_pattern
    def match_and_rewrite(
        self, op: func.CallOp | tir.CallOp, rewriter: PatternRewriter
    ) -> None:
        if isinstance(op, tir.CallOp) and op.call_type.data != "unpacked":
            return  # PackedCallLowering
        callee = op.callee.root_reference.data
        if callee not in self.info.functions:
            raise located_error(op, f"call of unknown function @{callee}")
        lw = self.lowering(op, rewriter)
        args = [
            first_element_pointer(lw, v, op)
            if isinstance(op, tir.CallOp)
            and isinstance(v.type, MemRefType)
            and v.type.get_offset()
            else lw.value(v)
            for v in op.operands
        ]
        results = [convert_type(r.type, op) for r in op.results]
        if callee in self.info.status_functions and not results:
            # an operator calling a user kernel: its status checked
            call = lw.emit(emitc.CallOp(callee, args, [i32]))
            check_status(lw, call.results[0])
            mark_status(self.state, self.state.function)
            lw.replace()
            return
        device = op.attributes.get(DEVICE_CONTEXT)
        if isinstance(device, StringAttr) and not results:
            # an operator of a device: its context last, its status checked
            context = context_argument(self.state.function, device.data)
            if context is None:
                raise located_error(
                    op,
                    f"call on device '{device.data}' outside an entry function "
                    "listing it in tir.device_contexts",
                )
            call = lw.emit(emitc.CallOp(callee, [*args, context], [i32]))
            check_status(lw, call.results[0])
            mark_status(self.state, self.state.function)
            lw.replace()
            return
        call = lw.emit(emitc.CallOp(callee, args, results))
        lw.replace(*call.results)


class UnplannedAllocationLowering(RewritePattern):
    """``tir.allocate``/``tir.allocate_const`` left over: a located error."""

    @op_type_rewrite_pattern
    def match_and_rewrite(
        self, op: tir.AllocateOp | tir.AllocateConstOp, rewriter: PatternRewriter
    ) -> None:
        raise located_error(
            op,
            f"buffer '{op.name_hint.data}' ('{op.name}') is not in a pool: run usmp "
            "before convert-to-emitc (the generated C has no heap and plans every "
            "static buffer into a pool)",
        )


class UnsupportedOpLowering(EmitcPattern):
    """Any other op of the input: a located error (the last pattern). The
    walker never visits the ops patterns create; top-level emitc ops and
    the bodies of functions converted before are kept as they are."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        top = op
        while not isinstance(parent := top.parent_op(), ModuleOp | None):
            top = parent
        if top is op:
            if op.dialect_name() == "emitc":
                return
            raise located_error(
                op,
                f"'{op.name}' at module level cannot be emitted as C (expected "
                "func.func, memref.global or emitc ops)",
            )
        if top is self.state.function:
            if (
                isinstance(op, emitc.CallOpaqueOp)
                and op.callee.data in dsp.PRELUDE_HELPERS
            ):
                self.state.helpers.add(op.callee.data)  # a kernel's arithmetic
                return
            raise located_error(
                op,
                f"'{op.name}' has no lowering to emitc (supported: func, scf.for/if, "
                "arith, math, memref load/store/view/copy/subview/reshapes, tir.call)",
            )


def func_patterns(state: ConversionState, info: ModuleInfo) -> list[RewritePattern]:
    return [
        CallOpLowering(state, info),
        CallExternLowering(state),
        DeviceHookLowering(state),
        FuncOpLowering(state, info),
        ReturnOpLowering(state),
        UnplannedAllocationLowering(),
    ]


def unsupported_op_pattern(state: ConversionState) -> RewritePattern:
    return UnsupportedOpLowering(state)
