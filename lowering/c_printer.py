"""emitc -> C99 text (usmp-opt's own printer; ``mlir-translate --mlir-to-cpp``
accepts the same IR, this one writes code a person wants to read).

* Names come from the IR: a function's arguments from ``tir.input_names``/
  ``tir.output_names``/``tir.pool_args`` or their SSA names, values from the
  ``usmp.name`` attribute or their SSA names; loop counters are ``i``, ``j``,
  ``k``... when unnamed. Functions and globals are printed under the C names
  ``usmp.lowering.c_names`` chose for the module (``CNames``); parameters and
  locals are made valid, unique, unreserved C (and C++) identifiers by its
  ``Namer`` and never take a file-scope name or macro.
* Expressions are inlined into the statement that uses them when they have a
  single use in the same block, carry no name, and moving them there cannot
  change what they read: a value whose expression reads memory (``load``, a
  non-math call) is not moved across a statement that writes memory. Named
  and multiply used values become ``T name = ...;`` declarations. An
  expression is at most ``MAX_EXPRESSION_DEPTH`` operators deep (C99 promises
  63 levels of nested parentheses, and the printer renders an expression
  recursively): a deeper one is given a name, so a 10,000-operator chain is
  a sequence of short statements. An 8- or 16-bit sum, difference, product,
  quotient, left shift or negation read by another operator is cast to its
  type first (C computes it in ``int``; MLIR's ``i8`` wraps): ``(int32_t)
  (int8_t)(x + 7)``.
* Loops are ``for`` loops, conditionals ``if``; one handler per statement op.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from xdsl.dialects.builtin import ArrayAttr, IntegerType, StringAttr
from xdsl.ir import Attribute, Block, Operation, OpResult, SSAValue

from usmp.dialects import emitc
from usmp.lowering.c_names import CNames, Namer
from usmp.lowering.c_printer_expr import (
    EXPRESSIONS,
    PRIMARY,
    REL,
    UNARY,
    Expr,
    attribute_literal,
    c_type,
    declaration,
    initializer_pieces,
    parenthesize,
)
from usmp.lowering.convert_to_emitc import ALIGNMENT_ATTR, NAME_ATTR
from usmp.lowering.walk import block_ops

PURE_FUNCTIONS = frozenset(
    f"{name}{suffix}"
    for name in """exp exp2 expm1 log log2 log10 log1p sqrt cbrt tanh sinh cosh sin
    cos tan atan asin acos asinh acosh atanh erf floor ceil round trunc fabs pow
    atan2 copysign fma nearbyint fmax fmin""".split()
    for suffix in ("", "f")
)
"""``<math.h>`` functions: no side effects, so calls to them may be inlined."""

_LOOP_NAMES = ("i", "j", "k", "l", "m", "n")
MAX_EXPRESSION_DEPTH = 32
"""Operators nested in one inlined expression (below C99's 63 levels of
parenthesized expressions, 5.2.4.1; each level adds at most one pair)."""
_ALWAYS_INLINE: frozenset[type[Operation]] = frozenset(
    (
        emitc.ConstantOp,
        emitc.LiteralOp,
        emitc.SubscriptOp,
        emitc.GetGlobalOp,
        emitc.MemberOp,
        emitc.MemberOfPtrOp,
    )
)
"""Op classes tested by exact type here and below (``type(op) in ...``): the
ops are final, and ``isinstance`` against these abstract-base classes was a
third of the printer's time."""

_LEAVES: frozenset[type[Operation]] = frozenset(
    (emitc.ConstantOp, emitc.LiteralOp, emitc.GetGlobalOp)
)
"""Always inlined ops without operands: their text does not depend on the
use, so each is rendered once (``FunctionPrinter.leaves``)."""


_WIDENED: frozenset[type[Operation]] = frozenset(
    (
        emitc.AddOp,
        emitc.SubOp,
        emitc.MulOp,
        emitc.DivOp,
        emitc.BitwiseLeftShiftOp,
        emitc.UnaryMinusOp,
        emitc.BitwiseNotOp,
    )
)
"""Operators whose C result on operands narrower than ``int`` (promoted to
``int``) can leave the operands' type: ``int8_t`` 127 + 7 is 134 in C, -122
in MLIR's ``i8``. Where such a value is assigned to a variable of its type
C converts it back; where it is inlined into another expression the printer
casts it (``_narrower_than_int``)."""


def _narrower_than_int(type_: Attribute) -> bool:
    """An integer type C promotes to ``int`` (8 and 16 bits; not ``bool``)."""
    kind = type(type_)
    integer = kind is IntegerType or (
        kind is not emitc.PtrDiffT and isinstance(type_, IntegerType)
    )
    return integer and 1 < type_.width.data < 32  # pyright: ignore[reportAttributeAccessIssue]


def _strings(attr: object) -> list[str]:
    if isinstance(attr, ArrayAttr):
        return [a.data for a in attr.data if isinstance(a, StringAttr)]
    return []


def argument_names(f: emitc.FuncOp) -> list[str | None]:
    """The source-level names of ``f``'s arguments (inputs, outputs, pools,
    device contexts)."""
    own = f.attributes.get("tir.device_context")  # an operator of a device
    devices = (
        [own.data]
        if isinstance(own, StringAttr)
        else _strings(f.attributes.get("tir.device_contexts"))
    )
    contexts = [f"device_context_{d}" for d in devices]
    n = len(f.function_type.inputs) - len(contexts)
    pools = _strings(f.attributes.get("tir.pool_args"))
    io = _strings(f.attributes.get("tir.input_names")) + _strings(
        f.attributes.get("tir.output_names")
    )
    names: list[str | None] = [None] * n
    for i, name in enumerate(io[: n - len(pools)]):
        names[i] = name
    for i, name in enumerate(pools):
        names[n - len(pools) + i] = name
    return names + list[str | None](contexts)


_WRITES: frozenset[type[Operation]] = frozenset(
    (emitc.AssignOp, emitc.CallOp, emitc.VerbatimOp, emitc.ForOp, emitc.IfOp)
)
_READS: frozenset[type[Operation]] = frozenset((emitc.LoadOp, emitc.CallOp))


def _impure_call(op: Operation) -> bool:
    return (
        type(op) is emitc.CallOpaqueOp and op.callee.data not in PURE_FUNCTIONS  # pyright: ignore[reportAttributeAccessIssue]
    )


def _writes_memory(op: Operation) -> bool:
    return type(op) in _WRITES or _impure_call(op)


class FunctionPrinter:
    """Prints one ``emitc.func`` definition."""

    def __init__(self, f: emitc.FuncOp, names: CNames | None):
        self.f = f
        self.symbols = names
        self.namer = Namer(names.file_scope if names is not None else ())
        self.names: dict[int, str] = {}
        """C names by id() of the value."""
        # values and ops by id(): they live as long as the printer, and an
        # IR value's own hash is a Python call
        self.inline: set[int] = set()
        """The values printed as expressions where they are used."""
        self.depth: dict[int, int] = {}
        """Operators nested in the expression of an inlined value."""
        self.reads: set[int] = set()
        """Values whose expression reads memory."""
        self.lines: list[str] = []
        self.ops: dict[int, list[Operation]] = {}
        """Each block's statements (by id() of the block): its ops but those
        of inlined values, listed by the analysis for the printing."""
        self.skip: set[int] = set()
        """Ops already printed (an assignment folded into a declaration)."""
        self.named: dict[int, Expr] = {}
        """The expressions of the named values (by id()), one per value."""
        self.leaves: dict[int, Expr] = {}
        """The expressions of the ``_LEAVES`` values printed so far (a
        constant is read at many places: written once)."""

    # -- analysis -----------------------------------------------------------
    def _decide_inlining(self, block: Block) -> None:
        """Decide, in one pass over ``block`` (and the blocks nested in it),
        which values are inlined where they are used (see the module note).

        A value read from memory may be inlined only if no op between its
        own and its user writes memory: its decision waits in ``pending``
        until the walk reaches the user, then compares the count of writes
        seen with the count when the value was computed (no position table
        of the block, no second pass)."""
        inline, read, depths = self.inline, self.reads, self.depth
        statements: list[Operation] = []
        """The ops printed as statements (an inlined value's op prints at
        its use), and at ``dropped`` those of waiting values inlined after
        all."""
        dropped: set[int] = set()
        pending: dict[int, list[tuple[int, int, int, int]]] = {}
        """User (by id()) -> the values that read memory waiting for it:
        (value by id(), its depth, the writes seen before its op, its place
        in ``statements``)."""
        writes = 0
        """Ops of ``block`` seen so far that write memory."""
        opaque = emitc.CallOpaqueOp
        for op in block_ops(block):
            if pending and (waiting := pending.pop(id(op), None)) is not None:
                for key, depth, before, place in waiting:
                    if writes == before:  # no write since: it may move here
                        inline.add(key)
                        depths[key] = depth
                        dropped.add(place)
            if op.regions:
                for region in op.regions:
                    for inner in region.blocks:
                        self._decide_inlining(inner)
            kind = type(op)
            impure = kind is opaque and _impure_call(op)
            before = writes
            if impure or kind in _WRITES:  # (``_writes_memory``, inlined)
                writes += 1
            results = op.results
            if len(results) != 1:
                statements.append(op)
                continue
            (value,) = results
            key = id(value)
            reads = impure or kind in _READS
            deepest = 0
            # one pass: nesting, and reads through inlining
            for v in op._operands:  # pyright: ignore[reportPrivateUsage]
                k = id(v)
                if (d := depths.get(k, 0)) > deepest:
                    deepest = d
                if not reads and k in inline and k in read:
                    reads = True
            if reads:
                read.add(key)
            depth = 1 + deepest
            if kind in _ALWAYS_INLINE:
                inline.add(key)
                depths[key] = depth
                continue
            # (the fields behind ``name_hint`` and ``get_unique_use``: two
            # Python calls per value; tests/test_convert_to_emitc_ir.py)
            if (
                value._name is None  # pyright: ignore[reportPrivateUsage]
                and NAME_ATTR not in op.attributes
                and kind in EXPRESSIONS
                and kind is not emitc.CallOp
                and (use := value.first_use) is not None
                and use._next_use is None  # pyright: ignore[reportPrivateUsage]
                and (user := use._operation).parent is block  # pyright: ignore[reportPrivateUsage]
                and depth <= MAX_EXPRESSION_DEPTH
            ):
                if not reads:
                    inline.add(key)
                    depths[key] = depth
                    continue
                # a write before the use could change what it reads: decided
                # there (a use by an always inlined op prints later, at its
                # own use: never)
                if type(user) not in _ALWAYS_INLINE:
                    entry = (key, depth, before, len(statements))
                    pending.setdefault(id(user), []).append(entry)
            statements.append(op)
        if dropped:
            statements = [o for k, o in enumerate(statements) if k not in dropped]
        self.ops[id(block)] = statements

    # -- names --------------------------------------------------------------
    def name(self, value: SSAValue, hint: str | None = None) -> str:
        key = id(value)
        if key not in self.names:
            owner = value.owner
            attr = (
                owner.attributes.get(NAME_ATTR) if type(value) is OpResult else None  # pyright: ignore[reportAttributeAccessIssue]
            )
            chosen = (
                attr.data
                if attr is not None and isinstance(attr, StringAttr)
                else value.name_hint
            )
            self.names[key] = self.namer.fresh(chosen or hint or "v")
        return self.names[key]

    def symbol(self, name: str) -> str:
        return self.symbols.symbol(name) if self.symbols is not None else name

    def render(self, op: Operation) -> Expr:
        """``op``'s expression, with symbols under their C names. (No table
        of bound methods on the printer: a printer referring to itself is a
        cycle, kept with all it holds while the compile pauses the cyclic
        collector.)"""
        kind = type(op)
        if kind is emitc.CallOp:
            return self._call(op, self.expr)
        if kind is emitc.GetGlobalOp:
            return self._get_global(op, self.expr)
        return EXPRESSIONS[kind](op, self.expr)

    def _call(self, op: Operation, operand: Callable[[SSAValue], Expr]) -> Expr:
        assert isinstance(op, emitc.CallOp)
        args = ", ".join([operand(v).text for v in op._operands])  # pyright: ignore[reportPrivateUsage]
        return Expr(f"{self.symbol(op.callee.root_reference.data)}({args})", PRIMARY)

    def _get_global(self, op: Operation, operand: Callable[[SSAValue], Expr]) -> Expr:
        assert isinstance(op, emitc.GetGlobalOp)
        return Expr(self.symbol(op.global_name.root_reference.data), PRIMARY)

    def expr(self, value: SSAValue, *, assigned: bool = False) -> Expr:
        """``value``'s expression; ``assigned``: it is assigned to an object
        of its own type, which converts it (no cast needed, see
        ``_WIDENED``)."""
        key = id(value)
        if key in self.inline:  # an op's result
            op: Operation = value.op  # pyright: ignore[reportAttributeAccessIssue]
            if type(op) in _LEAVES:  # the same text at every use
                rendered = self.leaves.get(key)
                if rendered is None:
                    rendered = self.leaves[key] = self.render(op)
                return rendered
            rendered = self.render(op)
            if not assigned and type(op) in _WIDENED and _narrower_than_int(value.type):
                # C computes it in int: wrap it to its type before another
                # operator reads it, as a declaration of that type would
                type_ = c_type(value.type)
                return Expr(f"({type_}){parenthesize(rendered, UNARY)}", UNARY)
            return rendered
        named = self.named.get(key)
        if named is None:
            name = self.names.get(key)  # (``name``'s, for a value named already)
            name = self.name(value) if name is None else name
            named = self.named[key] = Expr(name, PRIMARY)
        return named

    # -- statements ---------------------------------------------------------
    def emit(self, depth: int, text: str) -> None:
        self.lines.append("  " * depth + text)

    def scope(self, block: Block, depth: int) -> None:
        """Print a nested block; names declared in it are free again after."""
        used = set(self.namer.used)
        self.block(block, depth)
        self.namer.used = used

    def block(self, block: Block, depth: int) -> None:
        inline, skip = self.inline, self.skip
        statements = self.ops.get(id(block))  # (None: a block not analysed)
        for op in block_ops(block) if statements is None else statements:
            handler = STATEMENTS.get(type(op))
            if id(op) in skip:
                continue
            if handler is not None:
                handler(self, op, depth)
            elif (first := next(iter(op.results), None)) and id(first) in inline:
                continue
            elif type(op) in EXPRESSIONS:
                self.value_statement(op, depth)
            else:
                raise ValueError(f"the C printer has no rule for '{op.name}'")

    def value_statement(self, op: Operation, depth: int) -> None:
        text = self.render(op).text
        # (the first result and its first use by their fields: ``results[0]``
        # and ``uses`` are Python calls, the latter a new view)
        value = next(iter(op.results), None)
        if value is None or value.first_use is None:
            if _writes_memory(op):  # a call made for its effect
                self.emit(depth, f"{text};")
            return  # an unused pure value or load
        self.emit(depth, f"{declaration(value.type, self.name(value))} = {text};")

    def print(self) -> list[str]:
        f = self.f
        hints = argument_names(f)
        if not f.is_declaration:
            for arg, hint in zip(f.body.block.args, hints, strict=True):
                self.names[id(arg)] = self.namer.fresh(
                    hint or arg.name_hint or f"arg{arg.index}"
                )
            self._decide_inlining(f.body.block)
        self.lines = [self.signature() + (";" if f.is_declaration else " {")]
        if not f.is_declaration:
            self.block(f.body.block, 1)
            self.emit(0, "}")
            body = "\n".join(self.lines[1:])
            names = [self.names[id(a)] for a in f.body.block.args]
            words = "|".join(re.escape(n) for n in names)
            used = set(re.findall(rf"\b(?:{words})\b", body)) if names else set()
            unused = [f"  (void){n};" for n in names if n not in used]
            # -Wunused-parameter
            self.lines[1:1] = unused
        return self.lines

    def signature(self) -> str:
        f = self.f
        outputs = f.function_type.outputs.data
        result = c_type(outputs[0]) if outputs else "void"
        if f.is_declaration:
            params = [c_type(t) for t in f.function_type.inputs]
        else:
            params = [
                f"{c_type(a.type)} {self.names[id(a)]}" for a in f.body.block.args
            ]
        specifiers = [s.data for s in f.specifiers] if f.specifiers is not None else []
        prefix = " ".join([*specifiers, result])
        name = self.symbol(f.sym_name.data)
        return f"{prefix} {name}({', '.join(params) or 'void'})"


Statement = Callable[[FunctionPrinter, Operation, int], None]


def _variable(p: FunctionPrinter, op: Operation, depth: int) -> None:
    assert isinstance(op, emitc.VariableOp)
    type_ = op.result.type
    decl = declaration(
        type_.value_type if isinstance(type_, emitc.LValueType) else type_,
        p.name(op.result, "var"),
    )
    value = op.value
    init = op.next_op
    if (
        isinstance(init, emitc.AssignOp)
        and init.var is op.result
        and isinstance(type_, emitc.LValueType)
    ):  # "T v; v = x;" is written "T v = x;"
        p.skip.add(id(init))
        p.emit(depth, f"{decl} = {p.expr(init.value, assigned=True).text};")
    elif isinstance(value, emitc.OpaqueAttr) and not value.value.data:
        p.emit(depth, f"{decl};")
    else:
        p.emit(depth, f"{decl} = {attribute_literal(value, op.result.type)};")


def _assign(p: FunctionPrinter, op: Operation, depth: int) -> None:
    assert isinstance(op, emitc.AssignOp)
    var, value = op._operands  # (``var`` and ``value``'s fields)  # pyright: ignore[reportPrivateUsage]
    p.emit(depth, f"{p.expr(var).text} = {p.expr(value, assigned=True).text};")


def _for(p: FunctionPrinter, op: Operation, depth: int) -> None:
    assert isinstance(op, emitc.ForOp)
    iv = op.induction_var
    used = set(p.namer.used)
    name = p.name(
        iv, _LOOP_NAMES[depth - 1] if depth <= len(_LOOP_NAMES) else f"i{depth}"
    )
    lower, upper, by = op._operands  # (the descriptors' fields)  # pyright: ignore[reportPrivateUsage]
    lb, step = p.expr(lower).text, p.expr(by).text
    ub = parenthesize(p.expr(upper), REL, right=True)
    increment = f"++{name}" if step == "1" else f"{name} += {step}"
    p.emit(
        depth, f"for ({c_type(iv.type)} {name} = {lb}; {name} < {ub}; {increment}) {{"
    )
    p.scope(op.region.block, depth + 1)
    p.emit(depth, "}")
    p.namer.used = used


def _if(p: FunctionPrinter, op: Operation, depth: int) -> None:
    assert isinstance(op, emitc.IfOp)
    p.emit(depth, f"if ({p.expr(op.condition).text}) {{")
    p.scope(op.thenRegion.block, depth + 1)
    else_block = op.elseRegion.blocks.first
    if else_block is not None and any(
        not isinstance(o, emitc.YieldOp) for o in else_block.ops
    ):
        p.emit(depth, "} else {")
        p.scope(else_block, depth + 1)
    p.emit(depth, "}")


def _return(p: FunctionPrinter, op: Operation, depth: int) -> None:
    assert isinstance(op, emitc.ReturnOp)
    if op.operand is not None:
        p.emit(depth, f"return {p.expr(op.operand, assigned=True).text};")
    elif not (depth == 1 and op.next_op is None):
        p.emit(depth, "return;")


def _verbatim(p: FunctionPrinter, op: Operation, depth: int) -> None:
    assert isinstance(op, emitc.VerbatimOp)
    args = iter(p.expr(v).text for v in op.fmtArgs)
    text = re.sub(
        r"\{\{|\{\}", lambda m: "{" if m.group() == "{{" else next(args), op.value.data
    )
    p.emit(depth, text)


def _nothing(p: FunctionPrinter, op: Operation, depth: int) -> None:
    """Terminators of nested regions print as the closing brace."""


STATEMENTS: dict[type[Operation], Statement] = {
    emitc.VariableOp: _variable,
    emitc.AssignOp: _assign,
    emitc.ForOp: _for,
    emitc.IfOp: _if,
    emitc.ReturnOp: _return,
    emitc.VerbatimOp: _verbatim,
    emitc.YieldOp: _nothing,
    emitc.DeclareFuncOp: _nothing,
}


def print_function(f: emitc.FuncOp, names: CNames | None = None) -> str:
    """``f``'s C definition (or prototype, for a declaration)."""
    return "\n".join(FunctionPrinter(f, names).print()) + "\n"


def print_prototype(f: emitc.FuncOp, names: CNames | None = None) -> str:
    printer = FunctionPrinter(f, names)
    if not f.is_declaration:
        hints = argument_names(f)
        for arg, hint in zip(f.body.block.args, hints, strict=True):
            printer.names[id(arg)] = printer.namer.fresh(
                hint or arg.name_hint or f"arg{arg.index}"
            )
    return printer.signature() + ";\n"


ALIGNED_MACRO = """\
#ifndef USMP_ALIGNED
#if defined(__cplusplus) && __cplusplus >= 201103L
#define USMP_ALIGNED(n) alignas(n)
#elif defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
#define USMP_ALIGNED(n) _Alignas(n)
#elif defined(__GNUC__) || defined(__clang__)
#define USMP_ALIGNED(n) __attribute__((aligned(n)))
#else
#error "USMP_ALIGNED: define it for this compiler (pool buffers need alignment)"
#endif
#endif
"""
"""``USMP_ALIGNED(n)``: the alignment of a pool array in C11, C++11, or GNU C99
(C99 itself cannot say it), placed first in the declaration."""


def alignment_of(op: Operation) -> int:
    attr = op.attributes.get(ALIGNMENT_ATTR)
    return attr.value.data if attr is not None else 0  # pyright: ignore[reportAttributeAccessIssue]


def print_global(
    g: emitc.GlobalOp, *, name: str | None = None, static: bool | None = None
) -> str:
    """``g``'s C definition; ``name``/``static`` override the IR's."""
    return "".join(global_pieces(g, name=name, static=static))


def global_pieces(
    g: emitc.GlobalOp, *, name: str | None = None, static: bool | None = None
) -> list[str]:
    """``print_global``'s text in pieces (``initializer_pieces``), ending
    with the one that ends the definition (``;`` and a newline)."""
    words: list[str] = []
    if (align := alignment_of(g)) > 1:
        words.append(f"USMP_ALIGNED({align})")
    if g.extern_specifier is not None:
        words.append("extern")
    if g.static_specifier is not None if static is None else static:
        words.append("static")
    if g.const_specifier is not None:
        words.append("const")
    words.append(declaration(g.type, name or g.sym_name.data))
    head = " ".join(words)
    value = g.initial_value
    if value is None:
        return [f"{head};\n"]
    if isinstance(g.type, emitc.ArrayType):
        from xdsl.dialects.builtin import DenseIntOrFPElementsAttr

        assert isinstance(value, DenseIntOrFPElementsAttr)
        return [f"{head} = {{\n", *initializer_pieces(value), "};\n"]
    return [f"{head} = {attribute_literal(value, g.type)};\n"]
