"""Per-operator profiling hooks (``convert-to-emitc{profile=true}``,
``usmp-compile --profile``).

Before the conversion, ``insert_profile_hooks`` wraps every operator call of
the entry function (each ``tir.call`` of its body, in order; ``k`` its
position) in calls of two hooks::

    func.call @tvmgen_<m>_profile_begin(%k) : (i32) -> ()
    tir.call @tvmgen_<m>_fused_nn_conv2d_...(...)
    func.call @tvmgen_<m>_profile_end(%k) : (i32) -> ()

declared as private ``func.func``s, so the conversion lowers them as any
call (``emitc.call``, the prototypes in ``tvmgen_<m>_aot_main.c``). The
entry gets ``tir.profile_operators``: one ``[function, TFLite operators,
first TFLite operator index]`` per call, read from the locations the TFLite
importer stamps (``usmp.diagnostics.operator_location``; ``""`` and ``-1``
for an operator of relay MLIR without them).

The library then has (``profile_header``, ``profile_source``): in the
header the hooks' prototypes, ``TVMGEN_<M>_PROFILE_OPERATORS`` and the table
``tvmgen_<m>_profile_operators[]`` of ``{function, tflite_operator,
tflite_index}``; in ``tvmgen_<m>.c`` the table and *weak* definitions of the
hooks that do nothing, which an application's own (strong) definitions
replace at link time. Without the option nothing changes: no hook, no
table, the C byte-identical. Running the step twice inserts nothing more
(an entry that has ``tir.profile_operators`` is left as it is).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from xdsl.dialects import arith, func
from xdsl.dialects.builtin import (
    ArrayAttr,
    IntegerAttr,
    ModuleOp,
    StringAttr,
    i32,
)
from xdsl.ir import Attribute, Operation
from xdsl.rewriter import InsertPoint, Rewriter

from usmp.diagnostics import operator_location
from usmp.dialects import tir

PROFILE_OPERATORS = "tir.profile_operators"
"""Entry attribute: ``[function, TFLite operators, TFLite index]`` per call."""
MAIN_SUFFIX = "___tvm_main__"
WEAK_MACRO = "TVMGEN_PROFILE_WEAK"


@dataclass(frozen=True)
class ProfileOperator:
    """One profiled call of the entry function."""

    function: str
    """The operator function it calls (our C name)."""
    tflite_operator: str
    """Its TFLite builtins (``CONV_2D``; ``+``-joined when fused), or ``""``."""
    tflite_index: int
    """The first TFLite operator's index in the model, or -1."""


def hook_names(model_prefix: str) -> tuple[str, str]:
    """``tvmgen_<m>_profile_begin``, ``tvmgen_<m>_profile_end``."""
    return f"{model_prefix}profile_begin", f"{model_prefix}profile_end"


def _callee_operators(callee: Operation | None) -> tuple[str, int]:
    found: dict[int, str] = {}
    if callee is not None:
        for op in callee.walk():
            if (where := operator_location(op.location)) is not None:
                found.setdefault(where[1], where[0])
    if not found:
        return "", -1
    return "+".join(found[k] for k in sorted(found)), min(found)


def insert_profile_hooks(module: ModuleOp) -> None:
    """Wrap the entry's operator calls in the profile hooks (module doc)."""
    functions = {
        op.sym_name.data: op for op in module.ops if isinstance(op, func.FuncOp)
    }
    mains = [f for f in functions.values() if tir.MAIN_FUNC in f.attributes]
    if len(mains) != 1 or PROFILE_OPERATORS in mains[0].attributes:
        return
    main = mains[0]
    symbol = main.sym_name.data
    prefix = symbol[: -len(MAIN_SUFFIX)] + "_" if symbol.endswith(MAIN_SUFFIX) else ""
    begin, end = hook_names(prefix)
    table: list[Attribute] = []
    calls = [op for op in main.body.block.ops if isinstance(op, tir.CallOp)]
    for k, call in enumerate(calls):
        callee = call.callee.root_reference.data
        names, index = _callee_operators(functions.get(callee))
        table.append(
            ArrayAttr([StringAttr(callee), StringAttr(names), IntegerAttr(index, 32)])
        )
        for hook, where in ((begin, InsertPoint.before(call)), (end, None)):
            constant = arith.ConstantOp(IntegerAttr(k, i32))
            hook_call = func.CallOp(hook, [constant.result], [])
            constant.location = hook_call.location = call.location
            if where is None:
                Rewriter.insert_op([constant, hook_call], InsertPoint.after(call))
            else:
                Rewriter.insert_op([constant, hook_call], where)
    main.attributes[PROFILE_OPERATORS] = ArrayAttr(table)
    for hook in (begin, end):
        if hook not in functions:
            declaration = func.FuncOp.external(hook, [i32], [])
            Rewriter.insert_op(declaration, InsertPoint.before(main))


def profile_operators(main: Operation) -> tuple[ProfileOperator, ...] | None:
    """The entry's profiled calls (``None``: not profiled)."""
    attr = main.attributes.get(PROFILE_OPERATORS)
    if not isinstance(attr, ArrayAttr):
        return None
    rows: list[ProfileOperator] = []
    for row in attr.data:
        assert isinstance(row, ArrayAttr)
        function, names, index = row.data
        assert isinstance(function, StringAttr) and isinstance(names, StringAttr)
        assert isinstance(index, IntegerAttr)
        rows.append(ProfileOperator(function.data, names.data, index.value.data))
    return tuple(rows)


def _c_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def profile_header(symbol: Callable[[str], str], upper: str, count: int) -> list[str]:
    """The header's part: the hooks, the table's type, size and declaration.
    ``symbol('x')`` is ``tvmgen_<m>_x``; ``upper`` the model in capitals."""
    struct = symbol("profile_operator")
    return [
        "/**",
        " * Profiling (usmp-compile --profile): run calls",
        f" * {symbol('profile_begin')}(k) before and {symbol('profile_end')}(k) after",
        f" * its k-th operator call, k = 0 .. TVMGEN_{upper}_PROFILE_OPERATORS - 1.",
        " * The library defines both as weak functions that do nothing; define",
        " * them in the application (ordinary, strong definitions) to time each",
        " * operator: the linker takes yours. The kit's example/profile.c is one.",
        " */",
        f"void {symbol('profile_begin')}(int32_t op_index);",
        f"void {symbol('profile_end')}(int32_t op_index);",
        "",
        "/* The operator calls, in call order (and a last entry {0, 0, -1}). */",
        f"#define TVMGEN_{upper}_PROFILE_OPERATORS {count}",
        f"typedef struct {struct} {{",
        "  const char* function;        /* the operator function called */",
        '  const char* tflite_operator; /* its TFLite builtin(s), "" if none */',
        "  int32_t tflite_index;        /* the TFLite operator index, -1 if none */",
        f"}} {struct}_t;",
        f"extern const {struct}_t {symbol('profile_operators')}[];",
        "",
    ]


def profile_source(
    symbol: Callable[[str], str],
    operators: tuple[ProfileOperator, ...],
    names: dict[str, str],
) -> list[str]:
    """``tvmgen_<m>.c``'s part: the operator table and the weak hooks;
    ``names`` maps IR symbols to their C names."""
    struct = symbol("profile_operator")
    rows = [
        f"  {{{_c_string(names.get(o.function, o.function))}, "
        f"{_c_string(o.tflite_operator)}, {o.tflite_index}}},"
        for o in operators
    ]
    lines = [
        f"const {struct}_t {symbol('profile_operators')}[] = {{",
        *rows,
        "  {0, 0, -1}",
        "};",
        "",
        f"#ifndef {WEAK_MACRO}",
        "#if defined(__GNUC__) || defined(__clang__)",
        f"#define {WEAK_MACRO} __attribute__((weak))",
        "#else",
        '#error "define TVMGEN_PROFILE_WEAK as the weak attribute of this compiler"',
        "#endif",
        "#endif",
        "/* Do nothing unless the application defines its own (strong) hooks. */",
    ]
    for hook in ("profile_begin", "profile_end"):
        lines += [
            f"{WEAK_MACRO} void {symbol(hook)}(int32_t op_index) {{",
            "  (void)op_index;",
            "}",
        ]
    return [*lines, ""]
