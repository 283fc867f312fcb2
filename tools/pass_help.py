"""The pass list of ``usmp-opt --help``, in the manner of ``mlir-opt --help``.

Every registered pass with the first sentence of its class docstring, and
each of its options (the pass dataclass's fields) with its type, default,
the accepted values and the field's docstring. Accepted values come from the
field's type (``bool``: true/false) or, for a string option with a closed set
of values, from the pass's ``option_choices()`` classmethod (the same tuples
its ``__post_init__`` checks). Field docstrings are read from the source (the
string literal after the field), as Python keeps none at run time.

Nothing here runs on start-up: the pass classes are loaded only when
``--help`` is printed.
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import inspect
import re
import textwrap
from collections.abc import Callable, Mapping
from functools import cache
from types import MappingProxyType

from xdsl.passes import ModulePass

_WIDTH = 100
_INDENT = 6


def summary(doc: str | None) -> str:
    """The first sentence of ``doc`` on one line, without reST markup."""
    if not doc:
        return ""
    paragraph = " ".join(inspect.cleandoc(doc).split("\n\n")[0].split())
    paragraph = paragraph.replace("``", "").replace(" (see module doc)", "")
    sentence = re.match(r"(.+?\.)(\s|$)", paragraph)
    return (sentence.group(1) if sentence else paragraph).rstrip(".")


@cache
def field_docs(cls: type) -> Mapping[str, str]:
    """Field name -> the docstring written after it in ``cls``'s body."""
    docs: dict[str, str] = {}
    for klass in reversed(cls.__mro__):
        try:
            tree = ast.parse(textwrap.dedent(inspect.getsource(klass)))
        except (OSError, TypeError, SyntaxError):
            continue
        node = tree.body[0] if tree.body else None
        body = node.body if isinstance(node, ast.ClassDef) else []
        for stmt, after in zip(body, body[1:], strict=False):
            if (
                isinstance(stmt, ast.AnnAssign)
                and isinstance(stmt.target, ast.Name)
                and isinstance(after, ast.Expr)
                and isinstance(after.value, ast.Constant)
                and isinstance(after.value.value, str)
            ):
                docs[stmt.target.id] = " ".join(
                    inspect.cleandoc(after.value.value).replace("``", "").split()
                )
    return docs


def _type_name(field: dataclasses.Field[object]) -> str:
    t = (
        field.type
        if isinstance(field.type, str)
        else getattr(field.type, "__name__", "")
    )
    return str(t).replace(" ", "")


def _default(field: dataclasses.Field[object]) -> object:
    if field.default is not dataclasses.MISSING:
        return field.default
    if field.default_factory is not dataclasses.MISSING:
        return field.default_factory()
    return dataclasses.MISSING


def _format_value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f'"{value}"' if value == "" or " " in value else value
    if isinstance(value, tuple | list):
        return ",".join(_format_value(v) for v in value)  # pyright: ignore
    return str(value)


def option_lines(cls: type[ModulePass]) -> list[str]:
    """One entry per option: ``name=<type>  doc (default: ..; accepted: ..)``."""
    if not dataclasses.is_dataclass(cls):
        return []
    docs = field_docs(cls)
    choices_of: Callable[[], Mapping[str, tuple[str, ...]]] | None = getattr(
        cls, "option_choices", None
    )
    choices = choices_of() if choices_of is not None else {}
    lines: list[str] = []
    for field in dataclasses.fields(cls):
        if not field.init or field.name.startswith("_"):
            continue
        type_name = _type_name(field)
        notes: list[str] = []
        default = _default(field)
        if default is dataclasses.MISSING:
            notes.append("required")
        else:
            notes.append(f"default: {_format_value(default)}")
        if field.name in choices:
            notes.append(f"accepted: {', '.join(choices[field.name])}")
        elif type_name == "bool":
            notes.append("accepted: true, false")
        doc = docs.get(field.name, "")
        text = f"{doc} ({'; '.join(notes)})" if doc else f"({'; '.join(notes)})"
        lines.append(_entry(f"{field.name}=<{type_name}>", text, _INDENT))
    return lines


def _entry(head: str, text: str, indent: int) -> str:
    """``head`` then ``text`` wrapped in a column (mlir-opt's two-column look)."""
    column = 34
    first = " " * indent + head
    wrapped = textwrap.wrap(text, _WIDTH - column) or [""]
    if len(first) + 2 > column:
        lines = [first, *(" " * column + w for w in wrapped)]
    else:
        lines = [
            first.ljust(column) + wrapped[0],
            *(" " * column + w for w in wrapped[1:]),
        ]
    return "\n".join(lines)


def pass_help(
    passes: Mapping[str, Callable[[], type[ModulePass]]],
    summaries: Mapping[str, str] = MappingProxyType({}),
) -> str:
    """The text listing every pass of ``passes`` (flag -> lazy class factory);
    ``summaries`` stands in for passes without a docstring."""
    out = [
        "passes (-p 'NAME,NAME{OPTION=VALUE OPTION=VALUE},...'; a string value with",
        "spaces or commas is quoted):",
    ]
    for name in sorted(passes):
        cls = passes[name]()
        text = summary(cls.__doc__) or summaries.get(name, "")
        out.append(_entry(name, text, 2))
        out.extend(option_lines(cls))
    return "\n".join(out) + "\n"


class PassListFormatter(argparse.RawDescriptionHelpFormatter):
    """Help formatter that renders ``PASS_LIST`` (the epilog) as the pass list
    only when help is printed (loading every pass costs a second)."""

    passes: Mapping[str, Callable[[], type[ModulePass]]] = MappingProxyType({})
    summaries: Mapping[str, str] = MappingProxyType({})

    def add_text(self, text: str | None) -> None:
        if text == PASS_LIST:
            text = pass_help(self.passes, self.summaries)
        super().add_text(text)


PASS_LIST = "\0usmp-opt pass list\0"
"""Placeholder epilog replaced by ``PassListFormatter``."""


def pass_list_formatter(
    passes: Mapping[str, Callable[[], type[ModulePass]]],
    summaries: Mapping[str, str],
) -> type[PassListFormatter]:
    """A formatter class bound to ``passes`` (argparse takes a class)."""
    fields = {"passes": passes, "summaries": summaries}
    return type("BoundPassListFormatter", (PassListFormatter,), fields)
