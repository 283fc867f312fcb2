"""C99 spelling of emitc types, literals and expressions.

One small handler per expression op. An expression is rendered as text plus
its C precedence, so operands get parentheses exactly where C needs them and
where ``gcc -Wall`` (``-Wparentheses``) would ask for them (mixed bitwise,
shift, comparison and logical operators).
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from typing import NamedTuple

import numpy as np
from xdsl.dialects.builtin import (
    AnyFloat,
    DenseIntOrFPElementsAttr,
    Float32Type,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    Signedness,
)
from xdsl.ir import Attribute, Operation, SSAValue

from usmp.dialects import emitc
from usmp.dialects.emitc_expressions import CMP_PREDICATES

# C precedence levels (higher binds tighter).
PRIMARY, UNARY, MUL, ADD, SHIFT, REL, EQ, BAND, BXOR, BOR, LAND, LOR, COND = (
    16,
    15,
    13,
    12,
    11,
    10,
    9,
    8,
    7,
    6,
    5,
    4,
    3,
)
_ARITHMETIC = (MUL, ADD)


class Expr(NamedTuple):
    """An expression's C text and its precedence (a tuple: one is built per
    operator printed)."""

    text: str
    prec: int


def c_type(type_: Attribute) -> str:
    """The C spelling of a scalar or pointer emitc type."""
    kind = type(type_)  # the frequent types by their exact class (cheaper
    if kind is IntegerType:  # than ``isinstance`` against attribute ABCs)
        return _integer_c_type(type_)  # pyright: ignore[reportArgumentType]
    if kind is emitc.PtrDiffT:
        return "ptrdiff_t"
    if kind is emitc.PointerType:
        return f"{c_type(type_.pointee_type)}*"  # pyright: ignore[reportAttributeAccessIssue]
    if isinstance(type_, emitc.PointerType):
        return f"{c_type(type_.pointee_type)}*"
    if isinstance(type_, emitc.LValueType):
        return c_type(type_.value_type)
    if isinstance(type_, emitc.OpaqueType):
        return type_.value.data
    if isinstance(type_, emitc.PtrDiffT):
        return "ptrdiff_t"
    if isinstance(type_, emitc.SizeT | IndexType):
        return "size_t"
    if isinstance(type_, emitc.SignedSizeT):
        return "ssize_t"
    if isinstance(type_, IntegerType):
        return _integer_c_type(type_)
    if isinstance(type_, Float32Type):
        return "float"
    if isinstance(type_, AnyFloat):
        return "double"
    raise ValueError(f"no C type for {type_}")


def _integer_c_type(type_: IntegerType) -> str:
    width = type_.width.data
    if width == 1:
        return "bool"
    unsigned = type_.signedness.data == Signedness.UNSIGNED
    return f"{'u' if unsigned else ''}int{width}_t"


def declaration(type_: Attribute, name: str) -> str:
    """``T name`` or, for arrays, ``T name[d0][d1]``."""
    if type(type_) is emitc.ArrayType:  # a final class: no ABC check
        dims = "".join(f"[{d}]" for d in type_.get_shape())
        return f"{c_type(type_.element_type)} {name}{dims}"
    return f"{c_type(type_)} {name}"


def int_literal(value: int, type_: Attribute) -> str:
    """A decimal literal (C picks a type wide enough for its value)."""
    kind = type(type_)
    integer = kind is IntegerType or (
        kind is not emitc.PtrDiffT and isinstance(type_, IntegerType)
    )
    if integer and type_.width.data == 1:  # pyright: ignore[reportAttributeAccessIssue]
        return "true" if value else "false"
    unsigned = (
        integer and type_.signedness.data == Signedness.UNSIGNED  # pyright: ignore[reportAttributeAccessIssue]
    ) or kind is emitc.SizeT  # a final class: no ABC check
    if unsigned:
        return f"{value}u"
    if value == -(2**63):  # 9223372036854775808 has no signed type
        return "(-9223372036854775807 - 1)"
    if value == -(2**31):
        return "(-2147483647 - 1)"
    return str(value)


def float_literal(value: float, type_: Attribute) -> str:
    single = isinstance(type_, Float32Type)
    if math.isnan(value):
        return "NAN" if single else "(double)NAN"
    if math.isinf(value):
        text = "INFINITY" if single else "(double)INFINITY"
        return text if value > 0 else f"-{text}"
    scalar = np.float32(value) if single else np.float64(value)
    text = np.format_float_positional(scalar, unique=True, trim="0")
    if len(text) > 12:
        text = np.format_float_scientific(scalar, unique=True, trim="0")
    if "." not in text and "e" not in text:
        text += ".0"
    if text.endswith("."):
        text += "0"
    return text + ("f" if single else "")


def attribute_literal(value: Attribute, type_: Attribute) -> str:
    if type(value) is IntegerAttr:  # the usual one, by exact class first
        return int_literal(value.value.data, type_)
    if isinstance(value, emitc.OpaqueAttr):
        return value.value.data
    if isinstance(value, IntegerAttr):
        return int_literal(value.value.data, type_)
    if isinstance(value, FloatAttr):
        return float_literal(value.value.data, type_)
    raise ValueError(f"no C literal for {value}")


_SIGNED_BYTES = tuple(str(b - 256 if b > 127 else b) for b in range(256))
_UNSIGNED_BYTES = tuple(f"0x{b:02x}" for b in range(256))


def initializer(value: DenseIntOrFPElementsAttr, per_line: int = 12) -> list[str]:
    """The elements of ``value`` as the lines of a C brace initializer."""
    element = value.get_element_type()
    if isinstance(element, IntegerType) and element.width.data == 8:
        signed = element.signedness.data != Signedness.UNSIGNED
        table = _SIGNED_BYTES if signed else _UNSIGNED_BYTES
        # one C-level lookup per byte (weights are often ~1 MB)
        items = list(map(table.__getitem__, value.data.data))
        per_line = 16
    else:
        items = [attribute_literal(a, element) for a in value.iter_attrs()]
    return [
        ", ".join(items[i : i + per_line]) + "," for i in range(0, len(items), per_line)
    ]


def initializer_body(value: DenseIntOrFPElementsAttr, indent: str = "  ") -> str:
    """``initializer``'s lines, each after ``indent`` and ending in a
    newline, as one text. Bytes (weights are often ~1 MB) are spelled by
    numpy (``_byte_text``), not one Python call per byte."""
    return "".join(initializer_pieces(value, indent))


def initializer_pieces(
    value: DenseIntOrFPElementsAttr, indent: str = "  "
) -> list[str]:
    """``initializer_body``'s text in pieces, for a caller that joins it
    into a larger text: the spelling of megabytes of weights is then copied
    once, into that text."""
    element = value.get_element_type()
    data = value.data.data
    if not (isinstance(element, IntegerType) and element.width.data == 8 and data):
        return [f"{indent}{line}\n" for line in initializer(value)]
    signed = element.signedness.data != Signedness.UNSIGNED
    table = _SIGNED_BYTES if signed else _UNSIGNED_BYTES
    return [indent, *_byte_text(data[:-1], table, indent), f"{table[data[-1]]},\n"]


_BYTES_PER_LINE = 16
_CHUNK = 1 << 16
"""Bytes spelled per numpy step (a multiple of ``_BYTES_PER_LINE``): the
step's temporaries are ``_CHUNK`` times the longest spelling."""


def _byte_text(data: bytes, table: tuple[str, ...], indent: str) -> list[str]:
    """``"b, "`` for every byte ``b`` of ``data`` (spelled by ``table``),
    ``"b,\n" + indent`` for every 16th, in pieces (one per chunk): by
    ``_template_text`` where it applies (the hex bytes of the constant
    pools, with an even indent), else by ``_record_text``. The pieces are
    not joined here: each join of the whole text is one more copy of
    megabytes (and fresh pages)."""
    return _template_text(data, table, indent) or _record_text(data, table, indent)


def _template_text(
    data: bytes, table: tuple[str, ...], indent: str
) -> list[str] | None:
    """``_byte_text`` when the spellings are a common prefix and ``w`` = 1,
    2, 4 or 8 characters that vary (``0x`` and two hex digits), placed at
    multiples of ``w`` in a line whose length is one too: each chunk's full
    lines are copies of one line's text (made once) with the varying
    characters written in, as numbers of ``w`` bytes (one gather, one
    strided store). The bytes
    after the last full line (fewer than 16) are spelled one by one.
    ``None`` where that does not apply."""
    prefix = os.path.commonprefix(list(table))
    width = len(table[0])
    w = width - len(prefix)
    cell = width + 2  # the spelling, ", " (or ",\n" and the indent, last)
    line = ("?" * width + ", ") * (_BYTES_PER_LINE - 1) + "?" * width + ",\n" + indent
    if (
        w not in (1, 2, 4, 8)
        or any(len(t) != width for t in table)
        or len(prefix) % w
        or cell % w
        or len(line) % w
        or not line.isascii()
    ):
        return None
    dtype = np.dtype(f"<u{w}")
    varying = np.frombuffer("".join([t[len(prefix) :] for t in table]).encode(), dtype)
    template = np.frombuffer(
        line.replace("?" * width, prefix + "?" * w).encode(), dtype
    )
    first, step = len(prefix) // w, cell // w
    codes = np.frombuffer(data, np.uint8)
    # one chunk's lines, filled with the template once: each chunk writes
    # only the varying characters, all of them, over the previous chunk's
    page = np.empty((min(len(codes), _CHUNK) // _BYTES_PER_LINE, len(template)), dtype)
    page[:] = template
    stop = first + step * _BYTES_PER_LINE
    chunks: list[str] = []
    for start in range(0, len(codes), _CHUNK):
        part = codes[start : start + _CHUNK]
        lines = len(part) // _BYTES_PER_LINE
        full = lines * _BYTES_PER_LINE
        text = page[:lines]
        text[:, first:stop:step] = varying[part[:full].reshape(lines, _BYTES_PER_LINE)]
        chunks.append(str(text.data, "ascii"))  # (decoded from its buffer)
        if full < len(part):  # the end of the data: no line end
            chunks.append("".join([f"{table[b]}, " for b in part[full:].tolist()]))
    return chunks


def _record_text(data: bytes, table: tuple[str, ...], indent: str) -> list[str]:
    """``_byte_text`` for spellings of several widths: the 512
    spellings as records of 8-byte words padded with NULs; each chunk of
    bytes gathers its records with numpy and drops the padding with
    ``bytes.translate``."""
    spellings = [f"{t}, " for t in table] + [f"{t},\n{indent}" for t in table]
    width = -(-max(len(t) for t in spellings) // 8) * 8
    padded = b"".join(t.encode("ascii").ljust(width, b"\0") for t in spellings)
    records = np.frombuffer(padded, np.uint64).reshape(len(spellings), width // 8)
    codes = np.frombuffer(data, np.uint8)
    line_end = np.zeros(_CHUNK, np.uint16)
    line_end[_BYTES_PER_LINE - 1 :: _BYTES_PER_LINE] = len(table)
    chunks: list[str] = []
    for start in range(0, len(codes), _CHUNK):
        part = codes[start : start + _CHUNK]
        index = part.astype(np.uint16) + line_end[: len(part)]
        text = records.take(index, 0).tobytes().translate(None, b"\0")
        chunks.append(text.decode("ascii"))
    return chunks


def parenthesize(operand: Expr, parent: int, right: bool = False) -> str:
    """``operand``'s text as an operand of an operator of precedence
    ``parent``: in parentheses if C needs them, or if the two operators mix
    families gcc's ``-Wparentheses`` warns about."""
    needs = operand.prec < parent or (right and operand.prec == parent)
    mixed = (
        operand.prec < UNARY
        and operand.prec != parent
        and not (operand.prec in _ARITHMETIC and parent in _ARITHMETIC)
    )
    return f"({operand.text})" if needs or mixed else operand.text


Render = Callable[[Operation, Callable[[SSAValue], Expr]], Expr]


def _binary(symbol: str, prec: int) -> Render:
    def render(op: Operation, operand: Callable[[SSAValue], Expr]) -> Expr:
        a, b = op._operands  # pyright: ignore[reportPrivateUsage]
        lhs, rhs = operand(a), operand(b)
        return Expr(
            f"{parenthesize(lhs, prec)} {symbol} {parenthesize(rhs, prec, right=True)}",
            prec,
        )

    return render


def _unary(symbol: str) -> Render:
    def render(op: Operation, operand: Callable[[SSAValue], Expr]) -> Expr:
        (value,) = op._operands  # pyright: ignore[reportPrivateUsage]
        inner = parenthesize(operand(value), UNARY)
        if inner.startswith(symbol[-1]):  # "- -x", "&&x"
            inner = f"({inner})"
        return Expr(f"{symbol}{inner}", UNARY)

    return render


_CMP = {
    "eq": ("==", EQ),
    "ne": ("!=", EQ),
    "lt": ("<", REL),
    "le": ("<=", REL),
    "gt": (">", REL),
    "ge": (">=", REL),
}


_CMP_RENDERS = tuple(_binary(*_CMP[p]) for p in CMP_PREDICATES if p in _CMP)
"""``_cmp``'s renders by predicate number (one per predicate, not one
closure built per comparison printed)."""


def _cmp(op: Operation, operand: Callable[[SSAValue], Expr]) -> Expr:
    assert isinstance(op, emitc.CmpOp)
    number = op.predicate.value.data
    if not 0 <= number < len(_CMP_RENDERS):
        return _binary(*_CMP[op.predicate_name])(op, operand)  # (its KeyError)
    return _CMP_RENDERS[number](op, operand)


def _cast(op: Operation, operand: Callable[[SSAValue], Expr]) -> Expr:
    (value,), (result,) = op._operands, op.results  # pyright: ignore[reportPrivateUsage]
    return Expr(f"({c_type(result.type)}){parenthesize(operand(value), UNARY)}", UNARY)


def _conditional(op: Operation, operand: Callable[[SSAValue], Expr]) -> Expr:
    c, x, y = op._operands  # pyright: ignore[reportPrivateUsage]
    cond, a, b = operand(c), operand(x), operand(y)
    return Expr(
        f"{parenthesize(cond, COND + 1)} ? {parenthesize(a, COND + 1)} : "
        f"{parenthesize(b, COND + 1)}",
        COND,
    )


def _subscript(op: Operation, operand: Callable[[SSAValue], Expr]) -> Expr:
    base, *indices = [operand(v) for v in op._operands]  # pyright: ignore[reportPrivateUsage]
    subscripts = "".join(f"[{i.text}]" for i in indices)
    return Expr(f"{parenthesize(base, PRIMARY)}{subscripts}", PRIMARY)


_APPLY_RENDERS = {symbol: _unary(symbol) for symbol in ("&", "*")}
"""``_apply``'s renders by operator (``emitc.apply`` takes these two)."""


def _apply(op: Operation, operand: Callable[[SSAValue], Expr]) -> Expr:
    assert isinstance(op, emitc.ApplyOp)
    symbol = op.applicableOperator.data
    render = _APPLY_RENDERS.get(symbol)
    return (_unary(symbol) if render is None else render)(op, operand)


def _call_opaque(op: Operation, operand: Callable[[SSAValue], Expr]) -> Expr:
    assert isinstance(op, emitc.CallOpaqueOp)
    args = ", ".join([operand(v).text for v in op._operands])  # pyright: ignore[reportPrivateUsage]
    return Expr(f"{op.callee.data}({args})", PRIMARY)


def _call(op: Operation, operand: Callable[[SSAValue], Expr]) -> Expr:
    assert isinstance(op, emitc.CallOp)
    args = ", ".join([operand(v).text for v in op._operands])  # pyright: ignore[reportPrivateUsage]
    return Expr(f"{op.callee.root_reference.data}({args})", PRIMARY)


def _member(symbol: str) -> Render:
    def render(op: Operation, operand: Callable[[SSAValue], Expr]) -> Expr:
        (value,) = op._operands  # pyright: ignore[reportPrivateUsage]
        base = parenthesize(operand(value), PRIMARY)
        return Expr(f"{base}{symbol}{op.properties['member'].data}", PRIMARY)  # pyright: ignore

    return render


def _constant(op: Operation, operand: Callable[[SSAValue], Expr]) -> Expr:
    (result,) = op.results
    text = attribute_literal(op.properties["value"], result.type)
    return Expr(text, UNARY if text.startswith("-") else PRIMARY)


def _literal(op: Operation, operand: Callable[[SSAValue], Expr]) -> Expr:
    assert isinstance(op, emitc.LiteralOp)
    return Expr(op.value.data, PRIMARY)


def _get_global(op: Operation, operand: Callable[[SSAValue], Expr]) -> Expr:
    assert isinstance(op, emitc.GetGlobalOp)
    return Expr(op.global_name.root_reference.data, PRIMARY)


def _load(op: Operation, operand: Callable[[SSAValue], Expr]) -> Expr:
    (lvalue,) = op._operands  # pyright: ignore[reportPrivateUsage]
    return operand(lvalue)


_PLUS = _binary("+", ADD)


def _add(op: Operation, operand: Callable[[SSAValue], Expr]) -> Expr:
    """``a + b``, written ``a - n`` when ``b`` is a negative constant ``-n``."""
    first, second = op._operands  # pyright: ignore[reportPrivateUsage]
    rhs = second.owner
    if type(rhs) is emitc.ConstantOp and isinstance(rhs.value, IntegerAttr | FloatAttr):
        value = rhs.value.value.data
        if value < 0 and value not in (-(2**31), -(2**63)):
            type_ = second.type
            if isinstance(value, int):
                negated = int_literal(-value, type_)
            else:
                negated = float_literal(-value, type_)
            lhs = parenthesize(operand(first), ADD)
            return Expr(f"{lhs} - {negated}", ADD)
    return _PLUS(op, operand)


EXPRESSIONS: dict[type[Operation], Render] = {
    emitc.AddOp: _add,
    emitc.SubOp: _binary("-", ADD),
    emitc.MulOp: _binary("*", MUL),
    emitc.DivOp: _binary("/", MUL),
    emitc.RemOp: _binary("%", MUL),
    emitc.BitwiseAndOp: _binary("&", BAND),
    emitc.BitwiseOrOp: _binary("|", BOR),
    emitc.BitwiseXorOp: _binary("^", BXOR),
    emitc.BitwiseLeftShiftOp: _binary("<<", SHIFT),
    emitc.BitwiseRightShiftOp: _binary(">>", SHIFT),
    emitc.LogicalAndOp: _binary("&&", LAND),
    emitc.LogicalOrOp: _binary("||", LOR),
    emitc.LogicalNotOp: _unary("!"),
    emitc.BitwiseNotOp: _unary("~"),
    emitc.UnaryMinusOp: _unary("-"),
    emitc.UnaryPlusOp: _unary("+"),
    emitc.CmpOp: _cmp,
    emitc.CastOp: _cast,
    emitc.ConditionalOp: _conditional,
    emitc.SubscriptOp: _subscript,
    emitc.ApplyOp: _apply,
    emitc.CallOpaqueOp: _call_opaque,
    emitc.CallOp: _call,
    emitc.MemberOp: _member("."),
    emitc.MemberOfPtrOp: _member("->"),
    emitc.ConstantOp: _constant,
    emitc.LiteralOp: _literal,
    emitc.GetGlobalOp: _get_global,
    emitc.LoadOp: _load,
}
"""How each expression op is written, given how its operands are written."""
